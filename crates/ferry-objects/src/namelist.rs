//! Namelist objects (DEFINE NAMELIST): a named list of names. MQ's clusters read them: a
//! queue's or cluster channel's CLUSNL names the clusters it belongs to, QMGR REPOSNL the
//! clusters this queue manager is a full repository for.
//!
//! NLTYPE is z/OS only in MQ, so a namelist here holds names of no particular type, as on
//! MQ's other platforms.

use crate::attribute::AttrKind::{NameList, Text};
use crate::attribute_table;
use ferry_mqi::inquire::selector as sel;

/// The one subtype of namelist.
pub const NAMELIST: u32 = 1;

/// The most names one namelist holds (MQ's MQNC_MAX_NAMELIST_NAME_COUNT).
pub const MAX_NAMES: usize = 256;

/// The namelist whose attributes DEFINE NAMELIST starts from.
pub const DEFAULT_NAMELIST: &str = "SYSTEM.DEFAULT.NAMELIST";

attribute_table! {
    /// The attributes of a namelist.
    pub struct NamelistAttributes;
    pub static NAMELIST_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies NAMELIST, inq Some(sel::NAMELIST_DESC), rw, "Description for operators.";
    names: Vec<String> = "NAMES", NameList { max_len: 48, max: MAX_NAMES }, default Vec::new(),
        applies NAMELIST, inq Some(sel::NAMES), rw, "The names, in order, separated by commas (up to 256, each up to 48 characters; NAMES() for none).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies NAMELIST, inq Some(sel::ALTERATION_DATE), ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies NAMELIST, inq Some(sel::ALTERATION_TIME), ro, "Time of the last change (hh.mm.ss).";
}

/// A namelist: its name and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NamelistDefinition {
    /// Its name.
    pub name: String,
    /// Every attribute of the table.
    pub attributes: NamelistAttributes,
}

impl NamelistDefinition {
    /// A namelist with MQ's defaults (no names).
    pub fn new(name: impl Into<String>) -> Self {
        NamelistDefinition {
            name: name.into(),
            attributes: NamelistAttributes::default(),
        }
    }

    /// NAMCOUNT: how many names it holds.
    pub fn name_count(&self) -> usize {
        debug_assert!(self.attributes.names.len() <= MAX_NAMES);
        self.attributes.names.len()
    }

    /// The namelists MQ ships on a new queue manager: SYSTEM.DEFAULT.NAMELIST, and the
    /// queued publish/subscribe interface's stream and subscription-point namelists.
    pub fn shipped() -> Vec<NamelistDefinition> {
        let with = |name: &str, names: &[&str], descr: &str| {
            let mut nl = NamelistDefinition::new(name);
            nl.attributes.names = names.iter().map(|n| n.to_string()).collect();
            nl.attributes.descr = descr.to_string();
            nl
        };
        vec![
            NamelistDefinition::new(DEFAULT_NAMELIST),
            with(
                "SYSTEM.QPUBSUB.QUEUE.NAMELIST",
                &["SYSTEM.BROKER.DEFAULT.STREAM", "SYSTEM.BROKER.ADMIN.STREAM"],
                "Queued publish/subscribe stream queues",
            ),
            with(
                "SYSTEM.QPUBSUB.SUBPOINT.NAMELIST",
                &["SYSTEM.BROKER.DEFAULT.SUBPOINT"],
                "Queued publish/subscribe subscription points",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrError, AttrValue, AttributeSet};

    fn check(text: &str) -> Result<AttrValue, AttrError> {
        let (row, _) = NamelistAttributes::lookup("NAMES").expect("NAMES row");
        row.check(AttrValue::Text(text.to_string()))
    }

    #[test]
    fn names_are_checked_and_kept_in_order() {
        assert_eq!(
            check("CLUS2, CLUS1").unwrap(),
            AttrValue::Text("CLUS2,CLUS1".into())
        );
        assert_eq!(check("").unwrap(), AttrValue::Text(String::new()));
        assert!(matches!(check("BAD NAME!"), Err(AttrError::BadName { .. })));
        assert!(matches!(
            check(&"A".repeat(49)),
            Err(AttrError::TooLong { .. })
        ));
        let many = vec!["N"; MAX_NAMES + 1].join(",");
        assert!(matches!(check(&many), Err(AttrError::Refused { .. })));
        let mut a = NamelistAttributes::default();
        let (row, _) = NamelistAttributes::lookup("NAMES").expect("NAMES row");
        (row.set)(&mut a, check("X,Y").unwrap());
        assert_eq!(a.names, vec!["X", "Y"]);
        assert_eq!((row.get)(&a), AttrValue::Text("X,Y".into()));
    }

    #[test]
    fn shipped_namelists_start_with_the_default() {
        let shipped = NamelistDefinition::shipped();
        assert_eq!(shipped[0].name, DEFAULT_NAMELIST);
        assert_eq!(shipped[0].name_count(), 0);
        assert!(shipped.iter().all(|n| n.name.starts_with("SYSTEM.")));
    }
}
