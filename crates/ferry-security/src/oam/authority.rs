//! MQ's authorities: what an entity may do to an object (`+put`, `AUTHADD(PUT)`).
//!
//! One table, [`Authority::ALL`], holds each authority's MQSC name, its `setmqaut` flag
//! and its MQAUTH_ value: SET AUTHREC's parser, `setmqaut`, DISPLAY AUTHREC and the docs
//! all read it. The groups ALLADM, ALLMQI, ALL and NONE stand for sets of these, and
//! which of them apply depends on the object type ([`super::ProfileObjectType`]).

use std::fmt;

/// One authority.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Authority {
    /// Use another user's authority (MQOO_ALTERNATE_USER_AUTHORITY).
    AltUsr,
    /// Browse messages (MQOO_BROWSE).
    Browse,
    /// Change the object's attributes (ALTER, ALTER QMGR, SET AUTHREC/CHLAUTH).
    Chg,
    /// Clear a queue or a topic string's retained publication.
    Clr,
    /// Connect to the queue manager (MQCONN).
    Connect,
    /// Create objects of this type (on the `@class` profile).
    Crt,
    /// Start, stop and ping channels, listeners and services.
    Ctrl,
    /// Reset and resolve channels.
    Ctrlx,
    /// Delete the object.
    Dlt,
    /// Display the object and its status.
    Dsp,
    /// Get messages (MQOO_INPUT_*).
    Get,
    /// Inquire on the object (MQOO_INQUIRE).
    Inq,
    /// Pass all context (MQOO_PASS_ALL_CONTEXT).
    PassAll,
    /// Pass identity context (MQOO_PASS_IDENTITY_CONTEXT).
    PassId,
    /// Publish to a topic.
    Pub,
    /// Put messages (MQOO_OUTPUT).
    Put,
    /// Resume a subscription.
    Resume,
    /// Set attributes with MQSET (MQOO_SET).
    Set,
    /// Set all context (MQOO_SET_ALL_CONTEXT).
    SetAll,
    /// Set identity context (MQOO_SET_IDENTITY_CONTEXT).
    SetId,
    /// Subscribe to a topic.
    Sub,
    /// The queue manager's own internal operations.
    System,
}

/// One row of the authority table.
#[derive(Clone, Copy, Debug)]
pub struct AuthorityRow {
    /// The authority.
    pub authority: Authority,
    /// Its MQSC name (AUTHADD, AUTHLIST).
    pub mqsc: &'static str,
    /// Its `setmqaut` flag, without the `+` or `-`.
    pub flag: &'static str,
    /// MQ's MQAUTH_ value.
    pub mqauth: i32,
    /// What it allows, for the docs.
    pub allows: &'static str,
}

macro_rules! authority_table {
    ($($variant:ident $mqsc:literal $flag:literal $value:literal $allows:literal;)*) => {
        impl Authority {
            /// Every authority, in MQSC name order: the one table.
            pub const ALL: &'static [AuthorityRow] = &[
                $(AuthorityRow {
                    authority: Authority::$variant,
                    mqsc: $mqsc,
                    flag: $flag,
                    mqauth: $value,
                    allows: $allows,
                },)*
            ];
        }
    };
}

authority_table! {
    AltUsr "ALTUSR" "altusr" 1 "open or put with another user's authority";
    Browse "BROWSE" "browse" 2 "browse messages";
    Chg "CHG" "chg" 3 "ALTER the object, SET AUTHREC and SET CHLAUTH on the queue manager";
    Clr "CLR" "clr" 4 "CLEAR QLOCAL";
    Connect "CONNECT" "connect" 5 "connect to the queue manager";
    Crt "CRT" "crt" 6 "DEFINE objects of the type (on the @class profile)";
    Ctrl "CTRL" "ctrl" 23 "START, STOP and PING channels and listeners";
    Ctrlx "CTRLX" "ctrlx" 24 "RESET and RESOLVE channels";
    Dlt "DLT" "dlt" 7 "DELETE the object";
    Dsp "DSP" "dsp" 8 "DISPLAY the object and its status";
    Get "GET" "get" 9 "get messages";
    Inq "INQ" "inq" 11 "inquire on the object";
    PassAll "PASSALL" "passall" 12 "pass all context";
    PassId "PASSID" "passid" 13 "pass identity context";
    Pub "PUB" "pub" 22 "publish to the topic";
    Put "PUT" "put" 10 "put messages";
    Resume "RESUME" "resume" 26 "resume a subscription";
    Set "SET" "set" 14 "MQSET the object";
    SetAll "SETALL" "setall" 15 "set all context";
    SetId "SETID" "setid" 16 "set identity context";
    Sub "SUB" "sub" 25 "subscribe to the topic";
    System "SYSTEM" "system" 27 "the queue manager's internal operations";
}

impl Authority {
    /// Its row in the table.
    pub fn row(self) -> &'static AuthorityRow {
        // The table lists every variant once, in declaration order.
        &Self::ALL[self as usize]
    }

    /// Its MQSC name.
    pub fn mqsc_name(self) -> &'static str {
        self.row().mqsc
    }

    /// Its `setmqaut` flag.
    pub fn flag(self) -> &'static str {
        self.row().flag
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

impl fmt::Display for Authority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mqsc_name())
    }
}

/// A set of authorities.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Authorities(u32);

impl Authorities {
    /// No authority.
    pub const NONE: Authorities = Authorities(0);

    /// The set holding `list`.
    pub fn of(list: &[Authority]) -> Self {
        Authorities(list.iter().fold(0, |bits, a| bits | a.bit()))
    }

    /// Every authority there is.
    pub fn everything() -> Self {
        Self::of(
            &Authority::ALL
                .iter()
                .map(|r| r.authority)
                .collect::<Vec<_>>(),
        )
    }

    /// True when `a` is in the set.
    pub fn contains(self, a: Authority) -> bool {
        self.0 & a.bit() != 0
    }

    /// True when every authority of `other` is in the set.
    pub fn contains_all(self, other: Authorities) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The union.
    pub fn union(self, other: Authorities) -> Self {
        Authorities(self.0 | other.0)
    }

    /// What is in `self` and not in `other`.
    pub fn without(self, other: Authorities) -> Self {
        Authorities(self.0 & !other.0)
    }

    /// What is in both.
    pub fn intersection(self, other: Authorities) -> Self {
        Authorities(self.0 & other.0)
    }

    /// Adds `a`.
    pub fn insert(&mut self, a: Authority) {
        self.0 |= a.bit();
    }

    /// The authorities, in table (MQSC name) order.
    pub fn iter(self) -> impl Iterator<Item = Authority> {
        Authority::ALL
            .iter()
            .map(|r| r.authority)
            .filter(move |a| self.contains(*a))
    }

    /// The MQSC names, as AUTHLIST shows them (`NONE` for the empty set).
    pub fn mqsc_names(self) -> Vec<&'static str> {
        if self.is_empty() {
            return vec!["NONE"];
        }
        self.iter().map(Authority::mqsc_name).collect()
    }
}

impl fmt::Debug for Authorities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// An authority name as written in AUTHADD/AUTHRMV or after `+`/`-` in `setmqaut`: one
/// authority, or one of the groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthorityName {
    /// One authority.
    One(Authority),
    /// ALLADM: every administration authority of the object type.
    AllAdm,
    /// ALLMQI: every MQI authority of the object type.
    AllMqi,
    /// ALL: every authority of the object type.
    All,
    /// NONE: no authority (AUTHADD(NONE) makes a record that grants nothing).
    None,
}

/// The administration authorities (ALLADM).
pub fn administration() -> Authorities {
    use Authority::*;
    Authorities::of(&[Chg, Clr, Dlt, Dsp, Ctrl, Ctrlx])
}

/// The MQI authorities (ALLMQI).
pub fn mqi() -> Authorities {
    use Authority::*;
    Authorities::of(&[
        AltUsr, Browse, Connect, Get, Inq, PassAll, PassId, Put, Set, SetAll, SetId, Pub, Sub,
        Resume,
    ])
}

impl AuthorityName {
    /// The group names, after the single authorities.
    pub const GROUPS: &'static [&'static str] = &["ALLADM", "ALLMQI", "ALL", "NONE"];

    /// Parses an MQSC name or a `setmqaut` flag (either case).
    pub fn parse(text: &str) -> Option<Self> {
        let upper = text.to_ascii_uppercase();
        match upper.as_str() {
            "ALLADM" => return Some(AuthorityName::AllAdm),
            "ALLMQI" => return Some(AuthorityName::AllMqi),
            "ALL" => return Some(AuthorityName::All),
            "NONE" => return Some(AuthorityName::None),
            _ => {}
        }
        Authority::ALL
            .iter()
            .find(|r| r.mqsc == upper)
            .map(|r| AuthorityName::One(r.authority))
    }

    /// The authorities it stands for on an object whose valid authorities are `valid`;
    /// `Err` names a single authority that does not apply to the type.
    pub fn expand(self, valid: Authorities) -> Result<Authorities, Authority> {
        Ok(match self {
            AuthorityName::One(a) if valid.contains(a) => Authorities::of(&[a]),
            AuthorityName::One(a) => return Err(a),
            AuthorityName::AllAdm => administration().intersection(valid),
            AuthorityName::AllMqi => mqi().intersection(valid),
            AuthorityName::All => valid,
            AuthorityName::None => Authorities::NONE,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_authority_in_declaration_order() {
        for (i, row) in Authority::ALL.iter().enumerate() {
            assert_eq!(row.authority as usize, i, "{}", row.mqsc);
            assert_eq!(row.flag.to_ascii_uppercase(), row.mqsc);
            assert_eq!(
                AuthorityName::parse(row.flag),
                Some(AuthorityName::One(row.authority))
            );
        }
        let mut names: Vec<&str> = Authority::ALL.iter().map(|r| r.mqsc).collect();
        let sorted = {
            let mut s = names.clone();
            s.sort_unstable();
            s
        };
        assert_eq!(names, sorted, "MQSC name order");
        names.dedup();
        assert_eq!(names.len(), Authority::ALL.len());
    }

    #[test]
    fn groups_expand_within_the_valid_set() {
        use Authority::*;
        let queue = Authorities::of(&[Browse, Get, Put, Inq, Dsp, Chg, Dlt, Clr]);
        assert_eq!(
            AuthorityName::AllMqi.expand(queue),
            Ok(Authorities::of(&[Browse, Get, Put, Inq]))
        );
        assert_eq!(
            AuthorityName::AllAdm.expand(queue),
            Ok(Authorities::of(&[Dsp, Chg, Dlt, Clr]))
        );
        assert_eq!(AuthorityName::All.expand(queue), Ok(queue));
        assert_eq!(AuthorityName::One(Connect).expand(queue), Err(Connect));
        assert_eq!(Authorities::NONE.mqsc_names(), ["NONE"]);
        assert_eq!(
            Authorities::of(&[Put, Get, Browse]).mqsc_names(),
            ["BROWSE", "GET", "PUT"]
        );
    }
}
