//! SET CHLAUTH and DISPLAY CHLAUTH: the channel authentication record commands.
//!
//! Each record type takes its own parameters (TYPE(USERMAP) takes CLNTUSER, not
//! USERLIST); a parameter the type does not take is refused here, naming the type. The
//! values themselves (address patterns, SSLPEER filters, profiles) are checked by
//! `ferry-security` when the record is set, with the same rules the queue manager uses
//! when it loads its records.

use super::{Param, Parser};
use crate::command::{ChlauthMatch, ChlauthQuery, Command};
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::TokenKind;
use ferry_security::chlauth::{CheckClient, ChlauthRecord, ChlauthType, SetAction, UserSource};

/// The parameters each type takes (besides TYPE, ACTION, DESCR, CUSTOM and WARN).
fn type_params(kind: ChlauthType) -> &'static [&'static str] {
    match kind {
        ChlauthType::BlockUser => &["USERLIST"],
        ChlauthType::BlockAddr => &["ADDRLIST"],
        ChlauthType::SslPeerMap => &[
            "SSLPEER", "SSLCERTI", "ADDRESS", "USERSRC", "MCAUSER", "CHCKCLNT",
        ],
        ChlauthType::AddressMap => &["ADDRESS", "USERSRC", "MCAUSER", "CHCKCLNT"],
        ChlauthType::UserMap => &["CLNTUSER", "ADDRESS", "USERSRC", "MCAUSER", "CHCKCLNT"],
        ChlauthType::QmgrMap => &["QMNAME", "ADDRESS", "USERSRC", "MCAUSER"],
    }
}

/// The parameters that identify a record of each type (what ACTION(REMOVE) takes).
fn key_params(kind: ChlauthType) -> &'static [&'static str] {
    match kind {
        ChlauthType::BlockUser | ChlauthType::BlockAddr => &[],
        ChlauthType::SslPeerMap => &["SSLPEER", "SSLCERTI"],
        ChlauthType::AddressMap => &["ADDRESS"],
        ChlauthType::UserMap => &["CLNTUSER"],
        ChlauthType::QmgrMap => &["QMNAME"],
    }
}

const TYPE_WORDS: &[&str] = &[
    "BLOCKUSER",
    "BLOCKADDR",
    "SSLPEERMAP",
    "ADDRESSMAP",
    "USERMAP",
    "QMGRMAP",
];

/// The fields DISPLAY CHLAUTH knows (to show with ALL or by name).
pub(crate) const CHLAUTH_FIELDS: &[&str] = &[
    "DESCR", "CUSTOM", "ADDRESS", "CLNTUSER", "MCAUSER", "USERSRC", "CHCKCLNT", "SSLPEER",
    "SSLCERTI", "QMNAME", "USERLIST", "ADDRLIST", "WARN", "ALTDATE", "ALTTIME",
];

impl Parser<'_> {
    /// The text in a parameter's parentheses, case kept when quoted (blank for `()`).
    fn chlauth_text(&self, p: &Param) -> Result<String, ParseError> {
        Ok(self.value_text(p)?.unwrap_or_default())
    }

    /// Every value in a list parameter's parentheses: `USERLIST('a','b')`.
    fn chlauth_list(&self, p: &Param) -> Result<Vec<String>, ParseError> {
        let Some(tokens) = &p.value else {
            return Err(self.err(
                K::ValueRequired {
                    keyword: p.keyword.clone(),
                },
                p.end,
            ));
        };
        tokens
            .iter()
            .map(|t| match &t.kind {
                TokenKind::Word(s) | TokenKind::Quoted(s) => Ok(s.clone()),
                _ => Err(self.err(K::Unexpected("parenthesis".into()), t.end)),
            })
            .collect()
    }

    /// The profile in CHLAUTH(profile), case kept when quoted.
    fn chlauth_profile(&self, obj: &Param) -> Result<String, ParseError> {
        let missing = || {
            self.err(
                K::MissingName {
                    object: "CHLAUTH".into(),
                },
                obj.value_end,
            )
        };
        if obj.value.is_none() {
            return Err(missing());
        }
        let text = self.chlauth_text(obj)?;
        if text.is_empty() {
            return Err(missing());
        }
        Ok(text)
    }

    fn chlauth_keyword<T>(
        &self,
        p: &Param,
        allowed: &[&str],
        from: impl Fn(&str) -> Option<T>,
    ) -> Result<T, ParseError> {
        let v = self.chlauth_text(p)?.to_ascii_uppercase();
        from(&v).ok_or_else(|| self.bad_option(&p.keyword, v, allowed, p.value_end))
    }

    /// SET CHLAUTH(profile) TYPE(..) [ACTION(..)] and the type's parameters.
    pub(super) fn set_chlauth(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let profile = self.chlauth_profile(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let kind = match self.take_option(&mut rest, "TYPE")? {
            None => {
                return Err(self.err(
                    K::Missing {
                        command: "SET CHLAUTH".into(),
                        keyword: "TYPE".into(),
                    },
                    self.text.len(),
                ))
            }
            Some((v, pos)) => ChlauthType::from_keyword(&v)
                .ok_or_else(|| self.bad_option("TYPE", v, TYPE_WORDS, pos))?,
        };
        let action = match self.take_option(&mut rest, "ACTION")? {
            None => SetAction::Add,
            Some((v, pos)) => SetAction::from_keyword(&v)
                .ok_or_else(|| self.bad_option("ACTION", v, SetAction::KEYWORDS, pos))?,
        };
        let mut record = ChlauthRecord::new(&profile, kind);
        for p in rest {
            let kw = p.keyword.as_str();
            let allowed = match action {
                SetAction::Add | SetAction::Replace => {
                    type_params(kind).contains(&kw) || matches!(kw, "DESCR" | "CUSTOM" | "WARN")
                }
                SetAction::Remove => key_params(kind).contains(&kw),
                SetAction::RemoveAll => false,
            };
            if !allowed {
                return Err(self.err(
                    K::UnknownKeyword {
                        keyword: p.keyword.clone(),
                        object: format!(
                            "SET CHLAUTH TYPE({}) ACTION({})",
                            kind.keyword(),
                            SetAction::KEYWORDS[action as usize]
                        ),
                    },
                    p.end,
                ));
            }
            match kw {
                "USERLIST" => record.user_list = self.chlauth_list(p)?,
                "ADDRLIST" => record.address_list = self.chlauth_list(p)?,
                "ADDRESS" => record.address = self.chlauth_text(p)?,
                "CLNTUSER" => record.client_user = self.chlauth_text(p)?,
                "MCAUSER" => record.mca_user = self.chlauth_text(p)?,
                "SSLPEER" => record.ssl_peer = self.chlauth_text(p)?,
                "SSLCERTI" => record.ssl_cert_issuer = self.chlauth_text(p)?,
                "QMNAME" => record.qmgr_name = self.chlauth_text(p)?,
                "DESCR" => record.description = self.chlauth_text(p)?,
                "CUSTOM" => {
                    if !self.chlauth_text(p)?.trim().is_empty() {
                        return Err(self.err(
                            K::Unexpected("a CUSTOM value (CUSTOM takes none yet)".into()),
                            p.value_end,
                        ));
                    }
                }
                "USERSRC" => {
                    record.user_source =
                        self.chlauth_keyword(p, UserSource::KEYWORDS, UserSource::from_keyword)?
                }
                "CHCKCLNT" => {
                    record.check_client =
                        self.chlauth_keyword(p, CheckClient::KEYWORDS, CheckClient::from_keyword)?
                }
                "WARN" => {
                    record.warn = self.chlauth_keyword(p, &["YES", "NO"], |v| match v {
                        "YES" => Some(true),
                        "NO" => Some(false),
                        _ => None,
                    })?
                }
                _ => unreachable!("every allowed keyword is handled"),
            }
        }
        Ok(Command::SetChlauth {
            record: Box::new(record),
            action,
        })
    }

    /// DISPLAY CHLAUTH(profile) [TYPE(..)] [MATCH(..)] [ADDRESS(..) CLNTUSER(..) SSLPEER(..)
    /// SSLCERTI(..) QMNAME(..)] [ALL | field ...].
    pub(super) fn display_chlauth(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let profile = self.chlauth_profile(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let kind = match self.take_option(&mut rest, "TYPE")? {
            None => None,
            Some((v, _)) if v == "ALL" => None,
            Some((v, pos)) => Some(ChlauthType::from_keyword(&v).ok_or_else(|| {
                let mut words = TYPE_WORDS.to_vec();
                words.push("ALL");
                self.bad_option("TYPE", v, &words, pos)
            })?),
        };
        const MATCHES: &[&str] = &["GENERIC", "EXACT", "ALL", "RUNCHECK"];
        let matching = match self.take_option(&mut rest, "MATCH")? {
            None => ChlauthMatch::Generic,
            Some((v, pos)) => match v.as_str() {
                "GENERIC" => ChlauthMatch::Generic,
                "EXACT" => ChlauthMatch::Exact,
                "ALL" => ChlauthMatch::All,
                "RUNCHECK" => ChlauthMatch::RunCheck,
                _ => return Err(self.bad_option("MATCH", v, MATCHES, pos)),
            },
        };
        let mut query = ChlauthQuery::default();
        let mut all = false;
        let mut fields = Vec::new();
        for p in rest {
            match (p.keyword.as_str(), p.value.is_some()) {
                ("ADDRESS", true) => query.address = self.chlauth_text(p)?,
                ("CLNTUSER", true) => query.client_user = self.chlauth_text(p)?,
                ("SSLPEER", true) => query.ssl_peer = self.chlauth_text(p)?,
                ("SSLCERTI", true) => query.ssl_cert_issuer = self.chlauth_text(p)?,
                ("QMNAME", true) => query.qmgr_name = self.chlauth_text(p)?,
                ("ALL", false) => all = true,
                (kw, false) if CHLAUTH_FIELDS.contains(&kw) => fields.push(
                    CHLAUTH_FIELDS[CHLAUTH_FIELDS.iter().position(|f| *f == kw).unwrap_or(0)],
                ),
                _ => {
                    return Err(self.err(
                        K::UnknownKeyword {
                            keyword: p.keyword.clone(),
                            object: "DISPLAY CHLAUTH".into(),
                        },
                        p.end,
                    ))
                }
            }
        }
        let runcheck = matching == ChlauthMatch::RunCheck;
        if runcheck {
            if profile.contains('*') {
                return Err(self.err(K::Generic(profile), obj.value_end));
            }
            if query.address.is_empty() {
                return Err(self.err(
                    K::Missing {
                        command: "DISPLAY CHLAUTH MATCH(RUNCHECK)".into(),
                        keyword: "ADDRESS".into(),
                    },
                    self.text.len(),
                ));
            }
        } else if let Some(kw) = query.given() {
            return Err(self.err(
                K::UnknownKeyword {
                    keyword: kw.into(),
                    object: "DISPLAY CHLAUTH without MATCH(RUNCHECK)".into(),
                },
                self.text.len(),
            ));
        }
        Ok(Command::DisplayChlauth {
            profile,
            kind,
            matching,
            query: Box::new(query),
            all,
            fields,
        })
    }
}
