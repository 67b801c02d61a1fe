//! DEFINE, ALTER, DELETE and DISPLAY PROCESS: process definitions, whose attributes are
//! the `ferry-objects` PROCESS table's. APPLTYPE takes MQ's keywords; DEF is stored as
//! the platform's default (UNIX), as MQ does; a user-defined number (65536 to
//! 999999999) answers FRY9002E.

use super::display::table_vocab;
use super::{NameRule, Param, Parser};
use crate::command::{Command, Setting};
use crate::error::ParseError;
use ferry_objects::process::{ApplType, PROCESS};
use ferry_objects::{AttrValue, ProcessAttributes};

impl Parser<'_> {
    /// APPLTYPE, when given, taken out of `rest` as a setting (DEF resolved to UNIX), or
    /// the FRY9002E answer for a user-defined number.
    fn appl_type(
        &self,
        rest: &mut Vec<&Param>,
    ) -> Result<Result<Option<Setting>, Command>, ParseError> {
        let Some((value, pos)) = self.take_option(rest, "APPLTYPE")? else {
            return Ok(Ok(None));
        };
        let t = if value == ApplType::DEFAULT_WORD {
            Some(ApplType::Unix)
        } else {
            ApplType::from_keyword(&value)
        };
        if let Some(t) = t {
            return Ok(Ok(Some(Setting {
                keyword: "APPLTYPE",
                value: AttrValue::Keyword(t.keyword()),
            })));
        }
        if value
            .parse::<i64>()
            .is_ok_and(|n| (65_536..=999_999_999).contains(&n))
        {
            return Ok(Err(Command::Unsupported {
                what: format!("PROCESS APPLTYPE({value}) (user-defined application types)"),
            }));
        }
        let mut allowed = ApplType::KEYWORDS.to_vec();
        allowed.push(ApplType::DEFAULT_WORD);
        Err(self.bad_option("APPLTYPE", value, &allowed, pos))
    }

    pub(super) fn define_process(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "PROCESS", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let appl_type = match self.appl_type(&mut rest)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let (like, replace, mut settings) =
            self.define_params::<ProcessAttributes>(&rest, PROCESS, "PROCESS", NameRule::Object)?;
        settings.extend(appl_type);
        Ok(Command::DefineProcess {
            name,
            like,
            replace,
            settings,
        })
    }

    pub(super) fn alter_process(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "PROCESS", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let appl_type = match self.appl_type(&mut rest)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let mut seen = Vec::new();
        let mut settings: Vec<Setting> = rest
            .iter()
            .map(|p| self.setting::<ProcessAttributes>(p, PROCESS, "PROCESS", &mut seen))
            .collect::<Result<_, _>>()?;
        settings.extend(appl_type);
        Ok(Command::AlterProcess { name, settings })
    }

    pub(super) fn display_process(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "PROCESS", NameRule::Object, true)?;
        let vocab = |kw: &str| table_vocab::<ProcessAttributes>(kw, u32::MAX);
        let selection = self.selection(name, rest, "PROCESS", &vocab, false)?;
        Ok(Command::DisplayProcess { selection })
    }
}
