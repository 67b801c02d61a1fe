//! SET, DELETE and DISPLAY AUTHREC and DISPLAY ENTAUTH: the object authority commands.
//!
//! `PRINCIPAL('app')` and `GROUP('apps')` keep their case when quoted (user and group
//! names are case sensitive on Unix); authority names in AUTHADD and AUTHRMV are MQ's
//! (ferry_security::oam's table). Whether the profile and the entity are valid is checked
//! by the queue manager, which knows its name, users and groups.

use super::{Param, Parser};
use crate::command::{AuthRecKey, AuthRecMatch, Command};
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::TokenKind;
use ferry_security::oam::{AuthorityName, EntityType, ProfileObjectType, QMGR_PROFILE};

fn object_type_words() -> Vec<&'static str> {
    ProfileObjectType::ALL.iter().map(|r| r.mqsc).collect()
}

impl Parser<'_> {
    fn authrec_text(&self, p: &Param) -> Result<String, ParseError> {
        Ok(self.value_text(p)?.unwrap_or_default())
    }

    fn take_object_type(
        &self,
        rest: &mut Vec<&Param>,
    ) -> Result<Option<ProfileObjectType>, ParseError> {
        match self.take_option(rest, "OBJTYPE")? {
            None => Ok(None),
            Some((v, pos)) => ProfileObjectType::from_mqsc(&v)
                .map(Some)
                .ok_or_else(|| self.bad_option("OBJTYPE", v, &object_type_words(), pos)),
        }
    }

    /// PRINCIPAL(..) or GROUP(..), at most one of them.
    fn take_entity(
        &self,
        rest: &mut Vec<&Param>,
    ) -> Result<Option<(EntityType, String)>, ParseError> {
        let mut found = None;
        for (kw, kind) in [
            ("PRINCIPAL", EntityType::Principal),
            ("GROUP", EntityType::Group),
        ] {
            if let Some(i) = rest.iter().position(|p| p.keyword == kw) {
                let p = rest.remove(i);
                let name = self.authrec_text(p)?;
                if name.is_empty() {
                    return Err(self.err(K::ValueRequired { keyword: kw.into() }, p.value_end));
                }
                if found.is_some() {
                    return Err(self.err(
                        K::Conflict {
                            first: "PRINCIPAL".into(),
                            second: "GROUP".into(),
                        },
                        p.end,
                    ));
                }
                found = Some((kind, name));
            }
        }
        Ok(found)
    }

    fn take_profile(&self, rest: &mut Vec<&Param>) -> Result<Option<String>, ParseError> {
        match rest.iter().position(|p| p.keyword == "PROFILE") {
            None => Ok(None),
            Some(i) => {
                let p = rest.remove(i);
                let text = self.authrec_text(p)?;
                Ok((!text.is_empty()).then_some(text))
            }
        }
    }

    /// The authority names in AUTHADD(..) or AUTHRMV(..).
    fn authority_list(&self, p: &Param) -> Result<Vec<AuthorityName>, ParseError> {
        let Some(tokens) = &p.value else {
            return Err(self.err(
                K::ValueRequired {
                    keyword: p.keyword.clone(),
                },
                p.end,
            ));
        };
        let mut names = Vec::new();
        for t in tokens {
            let text = match &t.kind {
                TokenKind::Word(s) | TokenKind::Quoted(s) => s,
                _ => return Err(self.err(K::Unexpected("parenthesis".into()), t.end)),
            };
            let name = AuthorityName::parse(text).ok_or_else(|| {
                let mut allowed: Vec<&str> = ferry_security::oam::Authority::ALL
                    .iter()
                    .map(|r| r.mqsc)
                    .collect();
                allowed.extend(AuthorityName::GROUPS);
                self.bad_option(&p.keyword, text.clone(), &allowed, t.end)
            })?;
            names.push(name);
        }
        Ok(names)
    }

    fn missing(&self, command: &str, keyword: &str) -> ParseError {
        self.err(
            K::Missing {
                command: command.into(),
                keyword: keyword.into(),
            },
            self.text.len(),
        )
    }

    fn unknown_in(&self, p: &Param, command: &str) -> ParseError {
        self.err(
            K::UnknownKeyword {
                keyword: p.keyword.clone(),
                object: command.into(),
            },
            p.end,
        )
    }

    /// PROFILE, OBJTYPE and PRINCIPAL or GROUP, as SET and DELETE need them.
    fn authrec_key(&self, rest: &mut Vec<&Param>, command: &str) -> Result<AuthRecKey, ParseError> {
        let object_type = self
            .take_object_type(rest)?
            .ok_or_else(|| self.missing(command, "OBJTYPE"))?;
        let profile = match (self.take_profile(rest)?, object_type) {
            // The queue manager's records are its `self` profile, whatever name is given.
            (_, ProfileObjectType::Qmgr) => QMGR_PROFILE.to_string(),
            (Some(p), _) => p,
            (None, _) => return Err(self.missing(command, "PROFILE")),
        };
        let (entity_type, entity) = self
            .take_entity(rest)?
            .ok_or_else(|| self.missing(command, "PRINCIPAL or GROUP"))?;
        Ok(AuthRecKey {
            profile,
            object_type,
            entity_type,
            entity,
        })
    }

    /// SET AUTHREC PROFILE(..) OBJTYPE(..) PRINCIPAL(..)|GROUP(..) AUTHADD(..) AUTHRMV(..).
    pub(super) fn set_authrec(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let key = self.authrec_key(&mut rest, "SET AUTHREC")?;
        let (mut add, mut remove) = (None, None);
        for p in rest {
            match p.keyword.as_str() {
                "AUTHADD" => add = Some(self.authority_list(p)?),
                "AUTHRMV" => remove = Some(self.authority_list(p)?),
                // One service component, the OAM: accepted and ignored, as MQ's default.
                "SERVCOMP" => {}
                _ => return Err(self.unknown_in(p, "SET AUTHREC")),
            }
        }
        if add.is_none() && remove.is_none() {
            return Err(self.missing("SET AUTHREC", "AUTHADD or AUTHRMV"));
        }
        Ok(Command::SetAuthRec {
            key,
            add: add.unwrap_or_default(),
            remove: remove.unwrap_or_default(),
        })
    }

    /// DELETE AUTHREC PROFILE(..) OBJTYPE(..) PRINCIPAL(..)|GROUP(..).
    pub(super) fn delete_authrec(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let key = self.authrec_key(&mut rest, "DELETE AUTHREC")?;
        for p in rest {
            if p.keyword != "SERVCOMP" {
                return Err(self.unknown_in(p, "DELETE AUTHREC"));
            }
        }
        Ok(Command::DeleteAuthRec { key })
    }

    /// DISPLAY AUTHREC [PROFILE(..)] [OBJTYPE(..)] [PRINCIPAL(..)|GROUP(..)] [MATCH(..)]
    /// [ALL | AUTHLIST | ENTITY | ENTTYPE].
    pub(super) fn display_authrec(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let object_type = self.take_object_type(&mut rest)?;
        let profile = self.take_profile(&mut rest)?;
        let entity = self.take_entity(&mut rest)?;
        const MATCHES: &[&str] = &["PROFILE", "EXACT", "MEMBERSHIP"];
        let matching = match self.take_option(&mut rest, "MATCH")? {
            None => AuthRecMatch::Profile,
            Some((v, pos)) => match v.as_str() {
                "PROFILE" => AuthRecMatch::Profile,
                "EXACT" => AuthRecMatch::Exact,
                "MEMBERSHIP" => AuthRecMatch::Membership,
                _ => return Err(self.bad_option("MATCH", v, MATCHES, pos)),
            },
        };
        if matching == AuthRecMatch::Membership
            && !matches!(entity, Some((EntityType::Principal, _)))
        {
            return Err(self.missing("DISPLAY AUTHREC MATCH(MEMBERSHIP)", "PRINCIPAL"));
        }
        for p in rest {
            match (p.keyword.as_str(), p.value.is_some()) {
                ("ALL" | "AUTHLIST" | "ENTITY" | "ENTTYPE", false) | ("SERVCOMP", true) => {}
                _ => return Err(self.unknown_in(p, "DISPLAY AUTHREC")),
            }
        }
        Ok(Command::DisplayAuthRec {
            profile,
            object_type,
            entity,
            matching,
        })
    }

    /// DISPLAY ENTAUTH PRINCIPAL(..)|GROUP(..) OBJNAME(..) OBJTYPE(..) [ALL | AUTHLIST ...].
    pub(super) fn display_entauth(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let object_type = self
            .take_object_type(&mut rest)?
            .ok_or_else(|| self.missing("DISPLAY ENTAUTH", "OBJTYPE"))?;
        let entity = self
            .take_entity(&mut rest)?
            .ok_or_else(|| self.missing("DISPLAY ENTAUTH", "PRINCIPAL or GROUP"))?;
        let object_name = match rest.iter().position(|p| p.keyword == "OBJNAME") {
            Some(i) => {
                let p = rest.remove(i);
                self.authrec_text(p)?
            }
            None => String::new(),
        };
        if object_name.is_empty() && object_type != ProfileObjectType::Qmgr {
            return Err(self.missing("DISPLAY ENTAUTH", "OBJNAME"));
        }
        for p in rest {
            match (p.keyword.as_str(), p.value.is_some()) {
                ("ALL" | "AUTHLIST" | "ENTITY" | "ENTTYPE" | "OBJTYPE", false)
                | ("SERVCOMP", true) => {}
                _ => return Err(self.unknown_in(p, "DISPLAY ENTAUTH")),
            }
        }
        Ok(Command::DisplayEntAuth {
            entity,
            object_name,
            object_type,
        })
    }
}
