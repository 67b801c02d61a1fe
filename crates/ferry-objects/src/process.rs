//! Process definitions (DEFINE PROCESS): the application a trigger monitor starts when
//! a trigger message names the process.
//!
//! A process is data for the trigger monitor: APPLTYPE says what kind of program
//! APPLICID names, USERDATA and ENVRDATA go to it in the trigger message (MQTM) and in
//! its argument (MQTMC2). As on MQ, DEFINE takes every APPLTYPE MQ has, stores DEF as the
//! platform's default (UNIX), and the trigger monitor decides what it can start: Ferry's
//! (`ferry trigmon`, `runmqtrm`) starts APPLTYPE(UNIX) programs.

use crate::attribute::AttrKind::{Keyword, Text};
use crate::{attribute_table, keyword_enum};
use ferry_mqi::inquire::selector as sel;

/// Process definitions are one kind; every row applies.
pub const PROCESS: u32 = 1;

/// SYSTEM.DEFAULT.PROCESS: the template DEFINE PROCESS starts from, on every queue
/// manager.
pub const DEFAULT_PROCESS: &str = "SYSTEM.DEFAULT.PROCESS";

keyword_enum! {
    /// APPLTYPE: the kind of application APPLICID names (MQAT_*).
    ApplType {
        /// A program on Unix or Linux (MQAT_UNIX, 6): what Ferry's trigger monitor starts.
        Unix = "UNIX",
        /// CICS transaction (MQAT_CICS, 1).
        Cics = "CICS",
        /// z/OS batch or TSO (MQAT_MVS, 2).
        Mvs = "MVS",
        /// IMS transaction (MQAT_IMS, 3).
        Ims = "IMS",
        /// DOS client (MQAT_DOS, 5).
        Dos = "DOS",
        /// IBM i program (MQAT_OS400, 8).
        Os400 = "OS400",
        /// Windows program (MQAT_WINDOWS, 9).
        Windows = "WINDOWS",
        /// Windows NT program (MQAT_WINDOWS_NT, 11).
        WindowsNt = "WINDOWSNT",
        /// HP Integrity NonStop Server (MQAT_NSK, 13).
        Nsk = "NSK",
        /// Lotus Notes agent (MQAT_NOTES_AGENT, 22).
        NotesAgent = "NOTESAGENT",
        /// z/OS workload manager (MQAT_WLM, 31).
        Wlm = "WLM",
    }
}

impl ApplType {
    /// The MQAT_* number the trigger message (MQTM ApplType) carries.
    pub fn mqat(self) -> i32 {
        match self {
            ApplType::Cics => 1,
            ApplType::Mvs => 2,
            ApplType::Ims => 3,
            ApplType::Dos => 5,
            ApplType::Unix => 6,
            ApplType::Os400 => 8,
            ApplType::Windows => 9,
            ApplType::WindowsNt => 11,
            ApplType::Nsk => 13,
            ApplType::NotesAgent => 22,
            ApplType::Wlm => 31,
        }
    }

    /// APPLTYPE(DEF): MQ stores the platform's default type in its place.
    pub const DEFAULT_WORD: &'static str = "DEF";
}

attribute_table! {
    /// The attributes of a process definition.
    pub struct ProcessAttributes;
    pub static PROCESS_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies PROCESS, inq Some(sel::PROCESS_DESC), rw, "Description for operators.";
    appl_type: ApplType = "APPLTYPE", Keyword { values: ApplType::KEYWORDS }, default ApplType::Unix,
        applies PROCESS, inq Some(sel::APPL_TYPE), rw, "Kind of application APPLICID names (DEF: the platform's, UNIX). Ferry's trigger monitor starts UNIX programs; it reports and drops trigger messages of other types (MQ's dead-letters them with MQFB_APPL_TYPE_ERROR).";
    appl_id: String = "APPLICID", Text { max_len: 256 }, default String::new(),
        applies PROCESS, inq Some(sel::APPL_ID), rw, "The application to start: for UNIX, a command line the trigger monitor runs with the MQTMC2 structure as its argument.";
    user_data: String = "USERDATA", Text { max_len: 128 }, default String::new(),
        applies PROCESS, inq Some(sel::USER_DATA), rw, "Data for the application, passed in the trigger message (UserData).";
    env_data: String = "ENVRDATA", Text { max_len: 128 }, default String::new(),
        applies PROCESS, inq Some(sel::ENV_DATA), rw, "Environment data, passed in the trigger message (EnvData); the trigger monitor appends it to the command line.";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies PROCESS, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies PROCESS, inq None, ro, "Time of the last change (hh.mm.ss).";
}

/// A process definition: name and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProcessDefinition {
    /// Process name (MQ name rules, up to 48 characters).
    pub name: String,
    /// Every attribute of the table.
    pub attributes: ProcessAttributes,
}

impl ProcessDefinition {
    /// A definition with MQ's defaults (those of SYSTEM.DEFAULT.PROCESS).
    pub fn new(name: impl Into<String>) -> Self {
        ProcessDefinition {
            name: name.into(),
            attributes: ProcessAttributes::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrValue, AttributeSet};

    #[test]
    fn defaults_are_mqs() {
        let d = ProcessAttributes::default();
        assert_eq!(d.appl_type, ApplType::Unix);
        assert_eq!(d.appl_type.mqat(), 6);
        assert!(d.appl_id.is_empty());
        for row in PROCESS_ATTRIBUTES {
            assert_eq!((row.get)(&d), (row.default)(), "{}", row.keyword);
        }
    }

    #[test]
    fn appltype_takes_mqs_keywords_only() {
        let (row, _) = ProcessAttributes::lookup("APPLTYPE").unwrap();
        assert_eq!(
            row.check(AttrValue::Text("windowsnt".into())),
            Ok(AttrValue::Keyword("WINDOWSNT"))
        );
        assert!(row.check(AttrValue::Text("SOLARIS".into())).is_err());
        let (row, _) = ProcessAttributes::lookup("APPLICID").unwrap();
        assert!(row.check(AttrValue::Text("x".repeat(257))).is_err());
        assert!(row.check(AttrValue::Text("x".repeat(256))).is_ok());
    }

    #[test]
    fn mqat_numbers_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for kw in ApplType::KEYWORDS {
            let t = ApplType::from_keyword(kw).unwrap();
            assert!(seen.insert(t.mqat()), "{kw}");
        }
    }
}
