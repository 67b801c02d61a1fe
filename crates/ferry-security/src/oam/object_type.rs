//! The object types an authority record names (OBJTYPE, `setmqaut -t`), and which
//! authorities apply to each.

use super::authority::{Authorities, Authority};
use std::fmt;

/// OBJTYPE of an authority record.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum ProfileObjectType {
    /// Authentication information objects.
    AuthInfo,
    /// Channels.
    Channel,
    /// Client-connection channels.
    ClntConn,
    /// Communication information objects.
    CommInfo,
    /// Listeners.
    Listener,
    /// Namelists.
    Namelist,
    /// Processes.
    Process,
    /// The queue manager.
    Qmgr,
    /// Queues.
    Queue,
    /// Remote queue managers (distributed queuing).
    RqmName,
    /// Services.
    Service,
    /// Topics.
    Topic,
}

/// One row of the object-type table.
#[derive(Clone, Copy, Debug)]
pub struct ObjectTypeRow {
    /// The type.
    pub object_type: ProfileObjectType,
    /// Its OBJTYPE keyword.
    pub mqsc: &'static str,
    /// The names `setmqaut -t` takes for it (the first is what `dmpmqaut` prints).
    pub flags: &'static [&'static str],
    /// The authorities that apply to it (besides CRT, which applies on `@class`).
    pub valid: &'static [Authority],
}

use Authority::*;

impl ProfileObjectType {
    /// Every object type: the one table.
    pub const ALL: &'static [ObjectTypeRow] = &[
        ObjectTypeRow {
            object_type: ProfileObjectType::AuthInfo,
            mqsc: "AUTHINFO",
            flags: &["authinfo"],
            valid: &[Chg, Dlt, Dsp, Inq],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Channel,
            mqsc: "CHANNEL",
            flags: &["channel", "chl"],
            valid: &[Chg, Ctrl, Ctrlx, Dlt, Dsp],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::ClntConn,
            mqsc: "CLNTCONN",
            flags: &["clntconn", "clcn"],
            valid: &[Chg, Dlt, Dsp],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::CommInfo,
            mqsc: "COMMINFO",
            flags: &["comminfo"],
            valid: &[Chg, Dlt, Dsp],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Listener,
            mqsc: "LISTENER",
            flags: &["listener", "lstr"],
            valid: &[Chg, Ctrl, Dlt, Dsp],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Namelist,
            mqsc: "NAMELIST",
            flags: &["namelist", "nl"],
            valid: &[Chg, Dlt, Dsp, Inq],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Process,
            mqsc: "PROCESS",
            flags: &["process", "prcs"],
            valid: &[Chg, Dlt, Dsp, Inq],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Qmgr,
            mqsc: "QMGR",
            flags: &["qmgr", "qm"],
            valid: &[
                AltUsr, Chg, Connect, Dlt, Dsp, Inq, Set, SetAll, SetId, Ctrl, System,
            ],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Queue,
            mqsc: "QUEUE",
            flags: &["queue", "q"],
            valid: &[
                Browse, Chg, Clr, Dlt, Dsp, Get, Inq, PassAll, PassId, Put, Set, SetAll, SetId,
            ],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::RqmName,
            mqsc: "RQMNAME",
            flags: &["rqmname"],
            valid: &[Put, PassAll, PassId, SetAll, SetId],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Service,
            mqsc: "SERVICE",
            flags: &["service", "srvc"],
            valid: &[Chg, Ctrl, Dlt, Dsp],
        },
        ObjectTypeRow {
            object_type: ProfileObjectType::Topic,
            mqsc: "TOPIC",
            flags: &["topic", "top"],
            valid: &[
                Chg, Clr, Ctrl, Dlt, Dsp, PassAll, PassId, Pub, Resume, SetAll, SetId, Sub,
            ],
        },
    ];

    /// Its row in the table.
    pub fn row(self) -> &'static ObjectTypeRow {
        // The table lists every variant once, in declaration order.
        &Self::ALL[self as usize]
    }

    /// Its OBJTYPE keyword.
    pub fn mqsc_name(self) -> &'static str {
        self.row().mqsc
    }

    /// Its `dmpmqaut` name.
    pub fn flag(self) -> &'static str {
        self.row().flags[0]
    }

    /// The type an OBJTYPE keyword names.
    pub fn from_mqsc(keyword: &str) -> Option<Self> {
        let upper = keyword.to_ascii_uppercase();
        Self::ALL
            .iter()
            .find(|r| r.mqsc == upper)
            .map(|r| r.object_type)
    }

    /// The type a `setmqaut -t` value names.
    pub fn from_flag(value: &str) -> Option<Self> {
        let lower = value.to_ascii_lowercase();
        Self::ALL
            .iter()
            .find(|r| r.flags.contains(&lower.as_str()))
            .map(|r| r.object_type)
    }

    /// The authorities a record for `profile` of this type may hold: CRT only, and the
    /// type's own authorities never, on the `@class` profile.
    pub fn valid_for(self, profile: &str) -> Authorities {
        if profile == super::CLASS_PROFILE {
            Authorities::of(&[Crt])
        } else {
            Authorities::of(self.row().valid)
        }
    }
}

impl fmt::Display for ProfileObjectType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mqsc_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_every_type_in_declaration_order() {
        for (i, row) in ProfileObjectType::ALL.iter().enumerate() {
            assert_eq!(row.object_type as usize, i, "{}", row.mqsc);
            assert_eq!(
                ProfileObjectType::from_mqsc(row.mqsc),
                Some(row.object_type)
            );
            for f in row.flags {
                assert_eq!(ProfileObjectType::from_flag(f), Some(row.object_type));
            }
            assert!(
                !row.valid.contains(&Authority::Crt),
                "CRT is on @class only"
            );
        }
    }
}
