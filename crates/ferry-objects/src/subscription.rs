//! Subscriptions: the SUB attribute table (DEFINE, ALTER and DISPLAY SUB) and the durable
//! subscription as the catalogue keeps it.
//!
//! **One record, one table.** [`DurableSubscription`] stays the catalogue record (what
//! MQSUB has always saved; records written before the table existed still read). The
//! attributes it did not carry (TOPICOBJ, DESTQMGR, EXPIRY, PSPROP, PUBACCT, PUBAPPID,
//! SUBSCOPE and when it was last altered) are in its `details`
//! ([`SubscriptionDetails`]), which reads as SYSTEM.DEFAULT.SUB's values from an older
//! record. MQSC sees every subscription through [`SubscriptionAttributes`], the typed
//! struct of the table: [`DurableSubscription::definition`] converts a record to it and
//! [`DurableSubscription::set_attributes`] writes the settable attributes back. The
//! defaults exist once, in the table rows below (SYSTEM.DEFAULT.SUB's values, as MQ
//! documents them; DESTCLAS(PROVIDED), PSPROP(MSGPROP), VARUSER(ANY) and WSCHEMA(TOPIC)
//! are *unverified*); [`SubscriptionDetails::default`] takes its values from them.
//!
//! Ferry has no SYSTEM.DEFAULT.SUB object: DEFINE SUB without LIKE (or with
//! LIKE(SYSTEM.DEFAULT.SUB)) starts from the table defaults. Non-durable subscriptions
//! are never saved; DISPLAY SUB shows them through the same conversion (DURABLE(NO)).

use crate::attribute::AttrKind::{Checked, IntOrWord, Keyword, Name, Text};
use crate::attribute::{TextRule, WORD_VALUE};
use crate::topic::MAX_TOPIC_STRING;
use crate::{attribute_table, keyword_enum};

/// Applies to every subscription (the table has one subtype).
pub const SUB: u32 = 1;

/// The longest subscription name, user data and selector (MQ's 10240).
pub const MAX_SUB_STRING: usize = 10_240;

/// The name DEFINE SUB's LIKE may give for the table defaults (MQ's template object).
pub const SYSTEM_DEFAULT_SUB: &str = "SYSTEM.DEFAULT.SUB";

/// PUBPRTY(ASPUB) as MQSD PubPriority holds it (MQPRI_PRIORITY_AS_PUBLISHED).
pub const PRIORITY_AS_PUBLISHED: i32 = -3;
/// PUBPRTY(ASQDEF) as MQSD PubPriority holds it (MQPRI_PRIORITY_AS_Q_DEF).
pub const PRIORITY_AS_QUEUE_DEFAULT: i32 = -1;

keyword_enum! {
    /// DESTCLAS: who provides the queue copies go to.
    DestinationClass {
        /// DEST names a queue the administrator or application provides.
        Provided = "PROVIDED",
        /// The queue manager makes the queue from the topic's MDURMDL and deletes it,
        /// with its messages, with the subscription.
        Managed = "MANAGED"
    }
}

keyword_enum! {
    /// PSPROP: how publish/subscribe properties travel with each copy.
    PublishSubscribeProperties {
        /// None added.
        None = "NONE",
        /// Version 6 style (MQRFH1/PCF).
        Compat = "COMPAT",
        /// In an MQRFH2 header.
        Rfh2 = "RFH2",
        /// As message properties.
        MsgProp = "MSGPROP"
    }
}

keyword_enum! {
    /// PUBPRTY: the priority of the copies.
    PublishPriority {
        /// The publication's own.
        AsPublished = "ASPUB",
        /// The destination queue's DEFPRTY.
        AsQueueDefault = "ASQDEF",
        /// 0.
        P0 = "0",
        /// 1.
        P1 = "1",
        /// 2.
        P2 = "2",
        /// 3.
        P3 = "3",
        /// 4.
        P4 = "4",
        /// 5.
        P5 = "5",
        /// 6.
        P6 = "6",
        /// 7.
        P7 = "7",
        /// 8.
        P8 = "8",
        /// 9.
        P9 = "9"
    }
}

keyword_enum! {
    /// REQONLY: whether copies come only when the subscriber asks (MQSUBRQ).
    RequestOnly {
        /// Every publication.
        No = "NO",
        /// Only on MQSUBRQ (retained publications).
        Yes = "YES"
    }
}

keyword_enum! {
    /// SUBSCOPE of a subscription: whether it is sent to connected queue managers.
    SubscriptionScope {
        /// Connected queue managers too.
        All = "ALL",
        /// This queue manager only.
        QMgr = "QMGR"
    }
}

keyword_enum! {
    /// VARUSER: whether another user may take the subscription over.
    VariableUser {
        /// Any authorized user (MQSO_ANY_USERID).
        Any = "ANY",
        /// Only SUBUSER (MQSO_FIXED_USERID).
        Fixed = "FIXED"
    }
}

keyword_enum! {
    /// WSCHEMA: how wildcards in TOPICSTR are read.
    WildcardSchema {
        /// Topic-level wildcards: `#` and `+` filling a whole level.
        Topic = "TOPIC",
        /// Character wildcards: `*` and `?` anywhere.
        Char = "CHAR"
    }
}

keyword_enum! {
    /// SUBTYPE: who made the subscription (MQSUBTYPE).
    SubscriptionKind {
        /// MQSUB (or an AMQP or JMS subscriber).
        Api = "API",
        /// DEFINE SUB.
        Admin = "ADMIN",
        /// Sent by another queue manager (none until Ferry has hierarchies or clusters).
        Proxy = "PROXY"
    }
}

keyword_enum! {
    /// DURABLE and other read-only YES/NO values.
    YesNo {
        /// Yes.
        Yes = "YES",
        /// No.
        No = "NO"
    }
}

keyword_enum! {
    /// SELTYPE: what kind of selector the subscription has.
    SelectorType {
        /// No selector.
        None = "NONE",
        /// A selector the queue manager evaluates (message properties).
        Standard = "STANDARD",
        /// One on the message's content (Ferry has none).
        Extended = "EXTENDED"
    }
}

impl PublishPriority {
    /// As MQSD PubPriority holds it: -3 as published, -1 as the queue's default, 0-9.
    pub fn value(self) -> i32 {
        match self {
            PublishPriority::AsPublished => PRIORITY_AS_PUBLISHED,
            PublishPriority::AsQueueDefault => PRIORITY_AS_QUEUE_DEFAULT,
            other => other.keyword().parse().unwrap_or(0),
        }
    }

    /// The value for an MQSD PubPriority (anything out of range reads as ASPUB).
    pub fn of(value: i32) -> Self {
        match value {
            PRIORITY_AS_QUEUE_DEFAULT => PublishPriority::AsQueueDefault,
            0..=9 => {
                let kw = Self::KEYWORDS[2 + value as usize];
                Self::from_keyword(kw).unwrap_or(PublishPriority::AsPublished)
            }
            _ => PublishPriority::AsPublished,
        }
    }
}

attribute_table! {
    /// The attributes of a subscription, as DEFINE, ALTER and DISPLAY SUB name them.
    /// Defaults are SYSTEM.DEFAULT.SUB's (see the module comment).
    pub struct SubscriptionAttributes;
    pub static SUBSCRIPTION_ATTRIBUTES;
    sub_id: String = "SUBID", Text { max_len: 48 }, default String::new(),
        applies SUB, inq None, ro, "The subscription's identifier: 24 bytes as 48 hex digits, unique in the queue manager and fixed for the subscription's life (DELETE SUB and DISPLAY SUB take it too).";
    topic_string: String = "TOPICSTR", Text { max_len: MAX_TOPIC_STRING }, default String::new(),
        applies SUB, inq None, rw, "The topic string, wildcards included (WSCHEMA says how they are read). With TOPICOBJ it is added below the object's TOPICSTR with a '/' between; DISPLAY shows the result. Fixed at DEFINE.";
    topic_object: String = "TOPICOBJ", Name { max_len: 48 }, default String::new(),
        applies SUB, inq None, rw, "A topic object whose TOPICSTR starts the topic string. Fixed at DEFINE.";
    destination: String = "DEST", Name { max_len: 48 }, default String::new(),
        applies SUB, inq None, rw, "The queue copies are put on: a local queue, or an alias of one (DESTCLAS(PROVIDED)); the queue the queue manager made (DESTCLAS(MANAGED)).";
    dest_qmgr: String = "DESTQMGR", Name { max_len: 48 }, default String::new(),
        applies SUB, inq None, rw, "The queue manager of DEST: blank or this one (another needs channels between queue managers, which Ferry does not have yet).";
    dest_correl_id: String = "DESTCORL", Checked { max_len: 48, rule: TextRule::Hex { bytes: 24 } }, default String::new(),
        applies SUB, inq None, rw, "CorrelId of the copies, 48 hex digits (blank: the SUBID).";
    dest_class: DestinationClass = "DESTCLAS", Keyword { values: DestinationClass::KEYWORDS }, default DestinationClass::Provided,
        applies SUB, inq None, rw, "PROVIDED: DEST names the queue; MANAGED: the queue manager makes a permanent dynamic queue from the topic's MDURMDL and deletes it with the subscription. Fixed at DEFINE.";
    durable: YesNo = "DURABLE", Keyword { values: YesNo::KEYWORDS }, default YesNo::Yes,
        applies SUB, inq None, ro, "Whether the subscription outlives its application and the queue manager's restart (DEFINE SUB's always do).";
    sub_type: SubscriptionKind = "SUBTYPE", Keyword { values: SubscriptionKind::KEYWORDS }, default SubscriptionKind::Admin,
        applies SUB, inq None, ro, "Who made it: ADMIN (DEFINE SUB), API (MQSUB, AMQP and JMS subscribers), PROXY (another queue manager; none yet).";
    sub_user: String = "SUBUSER", Text { max_len: 64 }, default String::new(),
        applies SUB, inq None, rw, "The user the subscription belongs to; copies carry it as UserIdentifier. DEFINE SUB without it: the user who issued the command.";
    expiry: i32 = "EXPIRY", IntOrWord { min: 1, max: 999_999_999, word: "UNLIMITED" }, default WORD_VALUE,
        applies SUB, inq None, rw, "How long the subscription lives, in tenths of a second from its creation, or UNLIMITED (MQSD SubExpiry). Once expired it receives no copies and is removed, with a managed queue, when no application has it open.";
    ps_prop: PublishSubscribeProperties = "PSPROP", Keyword { values: PublishSubscribeProperties::KEYWORDS }, default PublishSubscribeProperties::MsgProp,
        applies SUB, inq None, rw, "How MQTopicString, MQSubUserData and the other publication properties travel with each copy. Kept and shown; copies carry them as message properties (MSGPROP) whatever the value, for now.";
    pub_accounting_token: String = "PUBACCT", Checked { max_len: 64, rule: TextRule::Hex { bytes: 32 } }, default String::new(),
        applies SUB, inq None, rw, "Accounting token for the copies, 64 hex digits. Kept and shown; copies keep the publication's for now.";
    pub_appl_id: String = "PUBAPPID", Text { max_len: 32 }, default String::new(),
        applies SUB, inq None, rw, "Application identity data for the copies. Kept and shown; copies keep the publication's for now.";
    pub_priority: PublishPriority = "PUBPRTY", Keyword { values: PublishPriority::KEYWORDS }, default PublishPriority::AsPublished,
        applies SUB, inq None, rw, "Priority of the copies: ASPUB (the publication's), ASQDEF (the destination's DEFPRTY) or 0-9.";
    request_only: RequestOnly = "REQONLY", Keyword { values: RequestOnly::KEYWORDS }, default RequestOnly::No,
        applies SUB, inq None, rw, "YES: copies only when the subscriber asks (MQSUBRQ sends the retained publications).";
    selector: String = "SELECTOR", Text { max_len: MAX_SUB_STRING }, default String::new(),
        applies SUB, inq None, rw, "A JMS/SQL-92 selector on the publications' properties; only those it accepts are copied. Fixed at DEFINE.";
    selector_type: SelectorType = "SELTYPE", Keyword { values: SelectorType::KEYWORDS }, default SelectorType::None,
        applies SUB, inq None, ro, "NONE (no SELECTOR) or STANDARD.";
    sub_level: i32 = "SUBLEVEL", crate::attribute::AttrKind::Int { min: 0, max: 9 }, default 1,
        applies SUB, inq None, rw, "The subscription's level, 0-9: a publication reaches the subscriptions of the highest level at or below its PubLevel. Fixed at DEFINE.";
    sub_scope: SubscriptionScope = "SUBSCOPE", Keyword { values: SubscriptionScope::KEYWORDS }, default SubscriptionScope::All,
        applies SUB, inq None, rw, "Whether the subscription is sent to connected queue managers; Ferry has none, so both mean this queue manager. Fixed at DEFINE.";
    user_data: String = "USERDATA", Text { max_len: MAX_SUB_STRING }, default String::new(),
        applies SUB, inq None, rw, "Given to every copy as the MQSubUserData property.";
    var_user: VariableUser = "VARUSER", Keyword { values: VariableUser::KEYWORDS }, default VariableUser::Any,
        applies SUB, inq None, rw, "ANY: another user may resume the subscription (and becomes SUBUSER); FIXED: only SUBUSER.";
    wildcard_schema: WildcardSchema = "WSCHEMA", Keyword { values: WildcardSchema::KEYWORDS }, default WildcardSchema::Topic,
        applies SUB, inq None, rw, "How wildcards in TOPICSTR are read: TOPIC (# and + fill a level) or CHAR (* and ? anywhere). Fixed at DEFINE.";
    creation_date: String = "CRDATE", Text { max_len: 10 }, default String::new(),
        applies SUB, inq None, ro, "Date it was made (yyyy-mm-dd).";
    creation_time: String = "CRTIME", Text { max_len: 8 }, default String::new(),
        applies SUB, inq None, ro, "Time it was made (hh.mm.ss).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies SUB, inq None, ro, "Date of the last change (ALTER SUB, or MQSUB with MQSO_ALTER).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies SUB, inq None, ro, "Time of the last change.";
}

/// The attributes ALTER SUB may change (as MQ's ALTER SUB and MQSO_ALTER allow); the
/// others are fixed when the subscription is made.
pub const ALTERABLE: &[&str] = &[
    "DEST", "DESTQMGR", "DESTCORL", "EXPIRY", "PSPROP", "PUBACCT", "PUBAPPID", "PUBPRTY",
    "REQONLY", "SUBUSER", "USERDATA", "VARUSER",
];

/// The MQ reason code an attempt to change a fixed attribute fails with (those MQSUB's
/// ALTER has a code for), else 2435 MQRC_ALTER_SUB_ERROR.
pub fn not_alterable_reason(keyword: &str) -> ferry_mqi::ReasonCode {
    use ferry_mqi::ReasonCode as R;
    match keyword {
        "TOPICSTR" | "TOPICOBJ" => R::TopicNotAlterable,
        "SELECTOR" => R::SelectorNotAlterable,
        "SUBLEVEL" => R::SublevelNotAlterable,
        "DESTCLAS" => R::DestClassNotAlterable,
        _ => R::AlterSubError,
    }
}

/// A subscription as MQSC sees it: its name (SUB; blank for an unnamed non-durable one)
/// and every attribute of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct SubscriptionDefinition {
    /// SUB.
    pub name: String,
    /// The attributes.
    pub attributes: SubscriptionAttributes,
}

/// The attributes a [`DurableSubscription`] keeps besides those MQSUB always saved: the
/// rest of the SUB table. A record written before they existed reads as
/// SYSTEM.DEFAULT.SUB's values (the table defaults).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SubscriptionDetails {
    /// TOPICOBJ.
    pub topic_object: String,
    /// DESTQMGR (blank or this queue manager).
    pub dest_qmgr: String,
    /// EXPIRY in tenths of a second; -1 UNLIMITED.
    pub expiry: i32,
    /// PSPROP.
    pub ps_prop: PublishSubscribeProperties,
    /// PUBACCT, as hex digits (blank: none).
    pub pub_accounting_token: String,
    /// PUBAPPID.
    pub pub_appl_id: String,
    /// SUBSCOPE.
    pub sub_scope: SubscriptionScope,
    /// ALTDATE/ALTTIME, ms since the epoch; 0: never altered (CRDATE/CRTIME).
    pub altered_ms: u64,
}

impl Default for SubscriptionDetails {
    /// SYSTEM.DEFAULT.SUB's, from the table defaults.
    fn default() -> Self {
        let d = SubscriptionAttributes::default();
        SubscriptionDetails {
            topic_object: d.topic_object,
            dest_qmgr: d.dest_qmgr,
            expiry: d.expiry,
            ps_prop: d.ps_prop,
            pub_accounting_token: d.pub_accounting_token,
            pub_appl_id: d.pub_appl_id,
            sub_scope: d.sub_scope,
            altered_ms: 0,
        }
    }
}

/// One durable subscription, saved in the catalogue.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DurableSubscription {
    /// SUB: the subscription's name, unique in the queue manager.
    pub name: String,
    /// SUBID: 24 bytes, fixed for the subscription's life.
    pub id: [u8; 24],
    /// TOPICSTR: the resolved topic string, wildcards included.
    pub topic_string: String,
    /// WSCHEMA(CHAR): character-based wildcards (else topic-based).
    pub character_wildcards: bool,
    /// DEST: the queue copies go to.
    pub destination: String,
    /// DESTCLAS(MANAGED): the queue manager made DEST and deletes it with the
    /// subscription.
    pub managed: bool,
    /// SELECTOR: the selector's text (empty: none).
    pub selector: String,
    /// USERDATA: given to copies as the MQSubUserData property.
    pub user_data: String,
    /// DESTCORL: the copies' CorrelId when set (otherwise the SUBID).
    pub correl_id: Option<[u8; 24]>,
    /// PUBPRTY: -3 as published, -1 as the queue's default, or 0-9.
    pub pub_priority: i32,
    /// SUBLEVEL.
    pub sub_level: i32,
    /// REQONLY(YES): copies only on MQSUBRQ.
    pub on_request: bool,
    /// VARUSER(ANY): another user may resume it.
    pub any_user: bool,
    /// SUBUSER.
    pub user_id: String,
    /// SUBTYPE(ADMIN): made by DEFINE SUB (else by MQSUB).
    pub administrative: bool,
    /// CRDATE/CRTIME, ms since the epoch.
    pub created_ms: u64,
    /// Shared by several consumers at once (JMS 2.0's shared durable subscriptions).
    #[serde(default)]
    pub shared: bool,
    /// JMS noLocal: no copies of publications from a connection that has it open.
    #[serde(default)]
    pub no_local: bool,
    /// The other attributes of the SUB table (added with DEFINE SUB; absent from older
    /// records, which read as SYSTEM.DEFAULT.SUB's values).
    #[serde(default)]
    pub details: SubscriptionDetails,
}

/// 48 (or 64) upper-case hex digits.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// The bytes of `hex` when it is exactly `N` bytes' worth of hex digits.
pub fn from_hex<const N: usize>(hex: &str) -> Option<[u8; N]> {
    let hex = hex.trim();
    if hex.len() != 2 * N || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl DurableSubscription {
    /// The subscription as MQSC shows it: every attribute of the table (DURABLE(YES);
    /// the engine says NO for a non-durable one).
    pub fn definition(&self) -> SubscriptionDefinition {
        let (cr_date, cr_time) = crate::status::date_time(self.created_ms);
        let altered = if self.details.altered_ms == 0 {
            self.created_ms
        } else {
            self.details.altered_ms
        };
        let (alt_date, alt_time) = crate::status::date_time(altered);
        let d = &self.details;
        SubscriptionDefinition {
            name: self.name.clone(),
            attributes: SubscriptionAttributes {
                sub_id: to_hex(&self.id),
                topic_string: self.topic_string.clone(),
                topic_object: d.topic_object.clone(),
                destination: self.destination.clone(),
                dest_qmgr: d.dest_qmgr.clone(),
                dest_correl_id: self.correl_id.map(|c| to_hex(&c)).unwrap_or_default(),
                dest_class: if self.managed {
                    DestinationClass::Managed
                } else {
                    DestinationClass::Provided
                },
                durable: YesNo::Yes,
                sub_type: if self.administrative {
                    SubscriptionKind::Admin
                } else {
                    SubscriptionKind::Api
                },
                sub_user: self.user_id.clone(),
                expiry: d.expiry,
                ps_prop: d.ps_prop,
                pub_accounting_token: d.pub_accounting_token.clone(),
                pub_appl_id: d.pub_appl_id.clone(),
                pub_priority: PublishPriority::of(self.pub_priority),
                request_only: if self.on_request {
                    RequestOnly::Yes
                } else {
                    RequestOnly::No
                },
                selector: self.selector.clone(),
                selector_type: if self.selector.is_empty() {
                    SelectorType::None
                } else {
                    SelectorType::Standard
                },
                sub_level: self.sub_level,
                sub_scope: d.sub_scope,
                user_data: self.user_data.clone(),
                var_user: if self.any_user {
                    VariableUser::Any
                } else {
                    VariableUser::Fixed
                },
                wildcard_schema: if self.character_wildcards {
                    WildcardSchema::Char
                } else {
                    WildcardSchema::Topic
                },
                creation_date: cr_date,
                creation_time: cr_time,
                alteration_date: alt_date,
                alteration_time: alt_time,
            },
        }
    }

    /// Writes the attributes a definition sets (everything but the read-only ones, the
    /// resolved TOPICSTR and DESTCLAS, which the queue manager decides) into the record.
    /// DESTCORL that is not 48 hex digits reads as blank (the table's check refuses it
    /// before it gets here).
    pub fn set_attributes(&mut self, a: &SubscriptionAttributes) {
        self.character_wildcards = a.wildcard_schema == WildcardSchema::Char;
        self.destination = a.destination.clone();
        self.selector = a.selector.clone();
        self.user_data = a.user_data.clone();
        self.correl_id = from_hex::<24>(&a.dest_correl_id);
        self.pub_priority = a.pub_priority.value();
        self.sub_level = a.sub_level;
        self.on_request = a.request_only == RequestOnly::Yes;
        self.any_user = a.var_user == VariableUser::Any;
        self.user_id = a.sub_user.clone();
        self.details.topic_object = a.topic_object.clone();
        self.details.dest_qmgr = a.dest_qmgr.clone();
        self.details.expiry = a.expiry;
        self.details.ps_prop = a.ps_prop;
        self.details.pub_accounting_token = a.pub_accounting_token.clone();
        self.details.pub_appl_id = a.pub_appl_id.clone();
        self.details.sub_scope = a.sub_scope;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrValue, AttributeSet};

    fn record() -> DurableSubscription {
        DurableSubscription {
            name: "APP.SUB".into(),
            id: [0xAB; 24],
            topic_string: "Prices/EUR/+".into(),
            character_wildcards: false,
            destination: "APP.Q".into(),
            managed: false,
            selector: "Venue = 'LSE'".into(),
            user_data: "desk=fx".into(),
            correl_id: None,
            pub_priority: -3,
            sub_level: 1,
            on_request: false,
            any_user: true,
            user_id: "app".into(),
            administrative: true,
            created_ms: 1_709_212_455_000,
            shared: false,
            no_local: false,
            details: SubscriptionDetails::default(),
        }
    }

    #[test]
    fn defaults_are_system_default_sub() {
        let d = SubscriptionAttributes::default();
        assert_eq!(d.dest_class, DestinationClass::Provided);
        assert_eq!(d.ps_prop, PublishSubscribeProperties::MsgProp);
        assert_eq!(d.pub_priority, PublishPriority::AsPublished);
        assert_eq!(d.expiry, WORD_VALUE);
        assert_eq!(d.sub_level, 1);
        assert_eq!(d.var_user, VariableUser::Any);
        assert_eq!(d.wildcard_schema, WildcardSchema::Topic);
        assert_eq!(d.sub_scope, SubscriptionScope::All);
        assert_eq!(d.request_only, RequestOnly::No);
        for row in SUBSCRIPTION_ATTRIBUTES {
            assert_eq!((row.get)(&d), (row.default)(), "{}", row.keyword);
        }
        let mut seen = std::collections::HashSet::new();
        for row in SUBSCRIPTION_ATTRIBUTES {
            assert!(seen.insert(row.keyword), "{}", row.keyword);
        }
        for kw in ALTERABLE {
            let (row, _) = SubscriptionAttributes::lookup(kw).expect("a row");
            assert!(!row.read_only, "{kw}");
        }
    }

    #[test]
    fn values_are_checked_by_the_table() {
        let check = |kw: &str, v: AttrValue| {
            let (row, _) = SubscriptionAttributes::lookup(kw).unwrap();
            row.check(v)
        };
        assert_eq!(
            check("PUBPRTY", AttrValue::Text("7".into())),
            Ok(AttrValue::Keyword("7"))
        );
        assert_eq!(
            check("PUBPRTY", AttrValue::Text("asqdef".into())),
            Ok(AttrValue::Keyword("ASQDEF"))
        );
        assert!(check("PUBPRTY", AttrValue::Text("10".into())).is_err());
        assert_eq!(
            check("EXPIRY", AttrValue::Text("unlimited".into())),
            Ok(AttrValue::Int(WORD_VALUE))
        );
        assert!(check("EXPIRY", AttrValue::Int(0)).is_err());
        assert!(check("DESTCORL", AttrValue::Text("AB".repeat(24))).is_ok());
        assert!(check("DESTCORL", AttrValue::Text(String::new())).is_ok());
        assert!(check("DESTCORL", AttrValue::Text("XY".repeat(24))).is_err());
        assert!(check("DESTCORL", AttrValue::Text("AB".repeat(23))).is_err());
        assert!(check("PUBACCT", AttrValue::Text("0f".repeat(32))).is_ok());
        assert!(check("SUBLEVEL", AttrValue::Int(10)).is_err());
        let (row, _) = SubscriptionAttributes::lookup("SUBID").unwrap();
        assert!(row.read_only);
    }

    #[test]
    fn priorities_convert_both_ways() {
        for v in [-3, -1, 0, 5, 9] {
            assert_eq!(PublishPriority::of(v).value(), v);
        }
        assert_eq!(PublishPriority::of(42), PublishPriority::AsPublished);
    }

    #[test]
    fn a_record_shows_as_a_definition_and_takes_its_attributes_back() {
        let r = record();
        let def = r.definition();
        let a = &def.attributes;
        assert_eq!(def.name, "APP.SUB");
        assert_eq!(a.sub_id, "AB".repeat(24));
        assert_eq!(a.sub_type, SubscriptionKind::Admin);
        assert_eq!(a.selector_type, SelectorType::Standard);
        assert_eq!(a.creation_date, "2024-02-29");
        assert_eq!(a.creation_time, "13.14.15");
        assert_eq!(a.alteration_date, "2024-02-29", "never altered: created");
        let mut changed = a.clone();
        changed.user_data = "desk=rates".into();
        changed.pub_priority = PublishPriority::P5;
        changed.dest_correl_id = "01".repeat(24);
        changed.expiry = 600;
        changed.ps_prop = PublishSubscribeProperties::Rfh2;
        let mut r2 = r.clone();
        r2.set_attributes(&changed);
        assert_eq!(r2.user_data, "desk=rates");
        assert_eq!(r2.pub_priority, 5);
        assert_eq!(r2.correl_id, Some([1; 24]));
        assert_eq!(r2.details.expiry, 600);
        assert_eq!(r2.definition().attributes.ps_prop, changed.ps_prop);
        // Setting what it shows changes nothing.
        let mut r3 = r.clone();
        r3.set_attributes(a);
        assert_eq!(r3, r);
    }

    #[test]
    fn records_written_before_the_table_read_as_system_default_sub() {
        let mut v = serde_json::to_value(record()).unwrap();
        v.as_object_mut().unwrap().remove("details").unwrap();
        let old: DurableSubscription = serde_json::from_value(v).unwrap();
        assert_eq!(old.details, SubscriptionDetails::default());
        assert_eq!(old.details.expiry, WORD_VALUE);
        assert_eq!(old.details.ps_prop, PublishSubscribeProperties::MsgProp);
        let s = serde_json::to_string(&record()).unwrap();
        assert_eq!(
            serde_json::from_str::<DurableSubscription>(&s).unwrap(),
            record()
        );
        // A details object missing fields added later reads their defaults too.
        let mut v = serde_json::to_value(record()).unwrap();
        v["details"] = serde_json::json!({"topic_object": "PRICES"});
        let partial: DurableSubscription = serde_json::from_value(v).unwrap();
        assert_eq!(partial.details.topic_object, "PRICES");
        assert_eq!(partial.details.sub_scope, SubscriptionScope::All);
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(from_hex::<2>("0aFF"), Some([0x0A, 0xFF]));
        assert_eq!(from_hex::<2>("0aF"), None);
        assert_eq!(from_hex::<2>("zz00"), None);
        assert_eq!(to_hex(&[0x0A, 0xFF]), "0AFF");
    }
}
