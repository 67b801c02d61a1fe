//! DEFINE, ALTER, DELETE and DISPLAY NAMELIST, whose attributes are the `ferry-objects`
//! namelist table's. NLTYPE is z/OS only in MQ and is refused here, as MQ's other
//! platforms refuse it.

use super::display::{table_vocab, FilterKind};
use super::{NameRule, Param, Parser};
use crate::command::Command;
use crate::error::{ParseError, ParseErrorKind as K};
use ferry_objects::namelist::NAMELIST;
use ferry_objects::NamelistAttributes;

impl Parser<'_> {
    /// NLTYPE is accepted by MQ on z/OS only.
    fn refuse_nltype(&self, rest: &[&Param]) -> Result<(), ParseError> {
        match rest.iter().find(|p| p.keyword == "NLTYPE") {
            Some(p) => Err(self.err(
                K::Generic("NLTYPE applies to z/OS only: a namelist here holds names of no particular type".into()),
                p.end,
            )),
            None => Ok(()),
        }
    }

    pub(super) fn define_namelist(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "NAMELIST", NameRule::Object)?;
        self.refuse_nltype(rest)?;
        let (like, replace, settings) =
            self.define_params::<NamelistAttributes>(rest, NAMELIST, "NAMELIST", NameRule::Object)?;
        Ok(Command::DefineNamelist {
            name,
            like,
            replace,
            settings,
        })
    }

    pub(super) fn alter_namelist(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "NAMELIST", NameRule::Object)?;
        self.refuse_nltype(rest)?;
        let mut seen = Vec::new();
        let settings = rest
            .iter()
            .map(|p| self.setting::<NamelistAttributes>(p, NAMELIST, "NAMELIST", &mut seen))
            .collect::<Result<_, _>>()?;
        Ok(Command::AlterNamelist { name, settings })
    }

    pub(super) fn display_namelist(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "NAMELIST", NameRule::Object, true)?;
        let vocab = |kw: &str| {
            if kw == "NAMCOUNT" {
                return Some(("NAMCOUNT", FilterKind::Int));
            }
            table_vocab::<NamelistAttributes>(kw, u32::MAX)
        };
        let selection = self.selection(name, rest, "NAMELIST", &vocab, false)?;
        Ok(Command::DisplayNamelist { selection })
    }
}
