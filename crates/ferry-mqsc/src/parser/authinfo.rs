//! DEFINE, ALTER, DELETE and DISPLAY AUTHINFO: authentication information objects, whose
//! attributes are the `ferry-objects` AUTHINFO table's. DEFINE needs AUTHTYPE; the types
//! MQ has and Ferry does not yet (IDPWLDAP, CRLLDAP, OCSP) answer FRY9002E.

use super::display::{table_vocab, FilterKind};
use super::{NameRule, Param, Parser};
use crate::command::Command;
use crate::error::{ParseError, ParseErrorKind as K};
use ferry_objects::{AuthInfoAttributes, AuthInfoType};

impl Parser<'_> {
    /// AUTHTYPE's value: a type Ferry has, or the FRY9002E answer for one it has not yet.
    fn auth_type(
        &self,
        value: String,
        pos: usize,
    ) -> Result<Result<AuthInfoType, Command>, ParseError> {
        if let Some(t) = AuthInfoType::from_keyword(&value) {
            return Ok(Ok(t));
        }
        if AuthInfoType::LATER.contains(&value.as_str()) {
            return Ok(Err(Command::Unsupported {
                what: format!("AUTHINFO AUTHTYPE({value})"),
            }));
        }
        let mut allowed = AuthInfoType::KEYWORDS.to_vec();
        allowed.extend_from_slice(AuthInfoType::LATER);
        Err(self.bad_option("AUTHTYPE", value, &allowed, pos))
    }

    /// AUTHTYPE when given (ALTER and DISPLAY), taken out of `rest`.
    fn optional_auth_type(
        &self,
        rest: &mut Vec<&Param>,
    ) -> Result<Result<Option<AuthInfoType>, Command>, ParseError> {
        Ok(match self.take_option(rest, "AUTHTYPE")? {
            None => Ok(None),
            Some((value, pos)) => self.auth_type(value, pos)?.map(Some),
        })
    }

    pub(super) fn define_authinfo(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "AUTHINFO", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let Some((value, pos)) = self.take_option(&mut rest, "AUTHTYPE")? else {
            return Err(self.err(
                K::Missing {
                    command: "DEFINE AUTHINFO".into(),
                    keyword: "AUTHTYPE".into(),
                },
                self.text.len(),
            ));
        };
        let auth_type = match self.auth_type(value, pos)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let (like, replace, settings) = self.define_params::<AuthInfoAttributes>(
            &rest,
            auth_type.mask(),
            "AUTHINFO",
            NameRule::Object,
        )?;
        Ok(Command::DefineAuthInfo {
            auth_type,
            name,
            like,
            replace,
            settings,
        })
    }

    pub(super) fn alter_authinfo(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "AUTHINFO", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let auth_type = match self.optional_auth_type(&mut rest)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let mask = auth_type.map(AuthInfoType::mask).unwrap_or(u32::MAX);
        let mut seen = Vec::new();
        let settings = rest
            .iter()
            .map(|p| self.setting::<AuthInfoAttributes>(p, mask, "AUTHINFO", &mut seen))
            .collect::<Result<_, _>>()?;
        Ok(Command::AlterAuthInfo {
            auth_type,
            name,
            settings,
        })
    }

    pub(super) fn display_authinfo(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "AUTHINFO", NameRule::Object, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let auth_type = match self.optional_auth_type(&mut rest)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let vocab = |kw: &str| {
            if kw == "AUTHTYPE" {
                return Some(("AUTHTYPE", FilterKind::Keyword(AuthInfoType::KEYWORDS)));
            }
            table_vocab::<AuthInfoAttributes>(kw, u32::MAX)
        };
        let selection = self.selection(name, &rest, "AUTHINFO", &vocab, false)?;
        Ok(Command::DisplayAuthInfo {
            auth_type,
            selection,
        })
    }
}
