//! Parses one logical MQSC command into a [`Command`].
//!
//! The command is tokenized ([`crate::lexer`]), grouped into parameters
//! (`KEYWORD` or `KEYWORD(value ...)`), then read as verb, object type and name, and the
//! rest. Attribute keywords and values are looked up and checked in the ferry-objects
//! attribute tables ([`AttributeSet::lookup`], [`AttrDef::check`]); status keywords in the
//! tables of [`crate::display`]. No attribute list is written here.

use crate::command::{Command, NamePattern, SecurityRefresh, Setting};
use crate::display::LSSTATUS_FIELDS;
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::{tokenize, Token, TokenKind};

mod authinfo;
mod authrec;
mod chlauth;
mod display;
mod namelist;
mod process;
mod subscription;
mod topic;

use display::{field_vocab, table_vocab};
use ferry_objects::channel::{self, ChannelOperation, ChannelType, ResolveAction, StopMode};
use ferry_objects::queue::{DefinitionType, QueueType};
use ferry_objects::{
    AttrDef, AttrError, AttrKind, AttrValue, AttributeSet, ChannelAttributes, ListenerAttributes,
    QmgrAttributes, QueueAttributes,
};

/// One parameter: `KEYWORD` or `KEYWORD(tokens)`.
#[derive(Debug)]
struct Param {
    keyword: String,
    /// End of the keyword.
    end: usize,
    /// Tokens between the parentheses, if there were parentheses.
    value: Option<Vec<Token>>,
    /// End of the closing parenthesis (or of the keyword).
    value_end: usize,
}

/// The object types MQSC commands name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Obj {
    Queue(QueueType),
    AnyQueue,
    Channel,
    Listener,
    Qmgr,
    QStatus,
    Conn,
    LsStatus,
    ChStatus,
    ClusQmgr,
    QCluster,
    QmStatus,
    AuthInfo,
    Process,
    Namelist,
    Topic,
    Sub,
    SbStatus,
    TpStatus,
    PubSub,
    TopicStr,
    /// Valid MQSC object types Ferry does not implement yet.
    Other(&'static str),
}

/// Abbreviations and full names of the object types.
const OBJECTS: &[(&str, Obj)] = &[
    ("QLOCAL", Obj::Queue(QueueType::Local)),
    ("QL", Obj::Queue(QueueType::Local)),
    ("QALIAS", Obj::Queue(QueueType::Alias)),
    ("QA", Obj::Queue(QueueType::Alias)),
    ("QMODEL", Obj::Queue(QueueType::Model)),
    ("QM", Obj::Queue(QueueType::Model)),
    ("QREMOTE", Obj::Queue(QueueType::Remote)),
    ("QR", Obj::Queue(QueueType::Remote)),
    ("QUEUE", Obj::AnyQueue),
    ("Q", Obj::AnyQueue),
    ("CHANNEL", Obj::Channel),
    ("CHL", Obj::Channel),
    ("LISTENER", Obj::Listener),
    ("LSTR", Obj::Listener),
    ("QMGR", Obj::Qmgr),
    ("QSTATUS", Obj::QStatus),
    ("QS", Obj::QStatus),
    ("CONN", Obj::Conn),
    ("LSSTATUS", Obj::LsStatus),
    ("TOPIC", Obj::Topic),
    ("SUB", Obj::Sub),
    ("TOPICSTR", Obj::TopicStr),
    ("AUTHINFO", Obj::AuthInfo),
    ("NAMELIST", Obj::Namelist),
    ("NL", Obj::Namelist),
    ("PROCESS", Obj::Process),
    ("PRO", Obj::Process),
    ("SERVICE", Obj::Other("SERVICE")),
    ("COMMINFO", Obj::Other("COMMINFO")),
    ("CHLAUTH", Obj::Other("CHLAUTH")),
    ("AUTHREC", Obj::Other("AUTHREC")),
    ("ENTAUTH", Obj::Other("ENTAUTH")),
    ("CHSTATUS", Obj::ChStatus),
    ("CHS", Obj::ChStatus),
    ("QMSTATUS", Obj::QmStatus),
    ("SVSTATUS", Obj::Other("SVSTATUS")),
    ("SBSTATUS", Obj::SbStatus),
    ("TPSTATUS", Obj::TpStatus),
    ("PUBSUB", Obj::PubSub),
    ("CLUSQMGR", Obj::ClusQmgr),
    ("QCLUSTER", Obj::QCluster),
    ("POLICY", Obj::Other("POLICY")),
    ("SECURITY", Obj::Other("SECURITY")),
    ("CLUSTER", Obj::Other("CLUSTER")),
    ("QSTATS", Obj::Other("QSTATS")),
];

/// Command words: full names and abbreviations; `None` marks valid MQSC verbs Ferry does
/// not implement yet.
const VERBS: &[(&str, Option<&str>)] = &[
    ("DEFINE", Some("DEFINE")),
    ("DEF", Some("DEFINE")),
    ("ALTER", Some("ALTER")),
    ("DELETE", Some("DELETE")),
    ("DISPLAY", Some("DISPLAY")),
    ("DIS", Some("DISPLAY")),
    ("CLEAR", Some("CLEAR")),
    ("START", Some("START")),
    ("STOP", Some("STOP")),
    ("END", Some("END")),
    ("SET", Some("SET")),
    ("PING", Some("PING")),
    ("RESET", Some("RESET")),
    ("RESOLVE", Some("RESOLVE")),
    ("REFRESH", Some("REFRESH")),
    ("SUSPEND", Some("SUSPEND")),
    ("RESUME", Some("RESUME")),
];

/// MQ channel types Ferry does not serve yet (DEFINE answers FRY9002E, not a syntax error).
const LATER_CHANNEL_TYPES: &[&str] = &["CLNTCONN", "MQTT"];

/// How a name is checked.
#[derive(Clone, Copy)]
enum NameRule {
    Object,
    Channel,
    /// Subscription names: any characters, up to 10240 of them.
    Subscription,
}

/// The longest MQSC command, in bytes, as MQ's command processor takes it: a longer one
/// is refused before it is read any further (MQ answers MQRCCF_COMMAND_LENGTH_ERROR,
/// 3230). `ferry mqsc` and the command server both stop there, so a 100 MB command costs
/// neither of them more than this.
pub const MAX_COMMAND_LENGTH: usize = 32_762;

/// Parses one logical command.
pub fn parse_command(text: &str) -> Result<Command, ParseError> {
    if text.len() > MAX_COMMAND_LENGTH {
        return Err(ParseError::too_long(text));
    }
    Parser { text }.command()
}

struct Parser<'t> {
    text: &'t str,
}

impl Parser<'_> {
    fn err(&self, kind: K, pos: usize) -> ParseError {
        ParseError::new(kind, self.text, pos)
    }

    fn params(&self) -> Result<Vec<Param>, ParseError> {
        let tokens = tokenize(self.text)?;
        let mut params: Vec<Param> = Vec::new();
        let mut iter = tokens.into_iter().peekable();
        while let Some(tok) = iter.next() {
            match tok.kind {
                TokenKind::Word(keyword) => {
                    let mut param = Param {
                        keyword,
                        end: tok.end,
                        value: None,
                        value_end: tok.end,
                    };
                    if matches!(iter.peek(), Some(t) if t.kind == TokenKind::Open) {
                        iter.next();
                        let mut inner = Vec::new();
                        loop {
                            match iter.next() {
                                None => return Err(self.err(K::UnclosedParen, self.text.len())),
                                Some(t) if t.kind == TokenKind::Close => {
                                    param.value_end = t.end;
                                    break;
                                }
                                Some(t) if t.kind == TokenKind::Open => {
                                    return Err(self.err(K::Unexpected("(".into()), t.end))
                                }
                                Some(t) => inner.push(t),
                            }
                        }
                        param.value = Some(inner);
                    }
                    params.push(param);
                }
                TokenKind::Quoted(_) => {
                    return Err(self.err(K::Unexpected("quoted value".into()), tok.end))
                }
                TokenKind::Open => return Err(self.err(K::Unexpected("(".into()), tok.end)),
                TokenKind::Close => return Err(self.err(K::Unexpected(")".into()), tok.end)),
            }
        }
        Ok(params)
    }

    fn command(&self) -> Result<Command, ParseError> {
        let params = self.params()?;
        self.no_repeats(&params)?;
        let Some(verb_param) = params.first() else {
            return Err(self.err(K::Empty, 0));
        };
        if verb_param.value.is_some() {
            return Err(self.err(K::Unexpected("(".into()), verb_param.end + 1));
        }
        let verb = VERBS
            .iter()
            .find(|(k, _)| *k == verb_param.keyword)
            .map(|(_, v)| *v)
            .ok_or_else(|| {
                self.err(
                    K::UnknownCommand(verb_param.keyword.clone()),
                    verb_param.end,
                )
            })?;
        let Some(verb) = verb else {
            return Ok(Command::Unsupported {
                what: verb_param.keyword.clone(),
            });
        };
        if verb == "END" {
            if let Some(p) = params.get(1) {
                return Err(self.err(K::Unexpected(p.keyword.clone()), p.end));
            }
            return Ok(Command::End);
        }
        let Some(obj_param) = params.get(1) else {
            return Err(self.err(
                K::MissingObject {
                    verb: verb.to_string(),
                },
                verb_param.end,
            ));
        };
        let obj = OBJECTS
            .iter()
            .find(|(k, _)| *k == obj_param.keyword)
            .map(|(_, o)| *o)
            .ok_or_else(|| self.unknown_object(verb, obj_param))?;
        let rest: Vec<&Param> = params[2..].iter().collect();
        match (verb, obj) {
            ("REFRESH", Obj::Other("SECURITY")) => self.refresh_security(obj_param, &rest),
            ("DISPLAY", Obj::ClusQmgr) => {
                let vocab = |kw: &str| field_vocab(crate::display::CLUSQMGR_FIELDS, kw);
                let name = self.name(obj_param, "CLUSQMGR", NameRule::Object, true)?;
                let mut rest = rest.clone();
                let cluster = self.take_option(&mut rest, "CLUSTER")?;
                let selection = self.selection(name, &rest, "CLUSQMGR", &vocab, true)?;
                Ok(Command::DisplayClusterQmgr {
                    selection,
                    cluster: cluster.map(|(c, _)| c),
                })
            }
            ("DISPLAY", Obj::QCluster) => {
                let vocab = |kw: &str| field_vocab(crate::display::QCLUSTER_FIELDS, kw);
                let name = self.name(obj_param, "QCLUSTER", NameRule::Object, true)?;
                let selection = self.selection(name, &rest, "QCLUSTER", &vocab, true)?;
                Ok(Command::DisplayQueueCluster { selection })
            }
            ("SUSPEND" | "RESUME", Obj::Qmgr) => {
                self.bare(obj_param)?;
                let mut rest = rest.clone();
                let cluster = self.take_option(&mut rest, "CLUSTER")?;
                let namelist = self.take_option(&mut rest, "CLUSNL")?;
                let (cluster, namelist) = match (cluster, namelist) {
                    (Some((c, _)), None) => (c, false),
                    (None, Some((nl, _))) => (nl, true),
                    (Some(_), Some(_)) => {
                        return Err(self.err(
                            K::Conflict {
                                first: "CLUSTER".into(),
                                second: "CLUSNL".into(),
                            },
                            self.text.len(),
                        ))
                    }
                    (None, None) => {
                        return Err(self.err(
                            K::Missing {
                                command: format!("{verb} QMGR"),
                                keyword: "CLUSTER".into(),
                            },
                            self.text.len(),
                        ))
                    }
                };
                // MODE(QUIESCE|FORCE) is accepted; Ferry treats both alike.
                let _ = self.take_option(&mut rest, "MODE")?;
                self.no_more(&rest)?;
                Ok(Command::SuspendQmgr {
                    cluster,
                    namelist,
                    suspend: verb == "SUSPEND",
                })
            }
            ("REFRESH", Obj::Other("CLUSTER")) => {
                let cluster = self.exact_name(obj_param, "CLUSTER", NameRule::Object)?;
                let mut rest = rest.clone();
                match self.take_option(&mut rest, "REPOS")? {
                    None => {}
                    Some((v, _)) if v == "NO" => {}
                    Some((v, _)) if v == "YES" => {
                        return Ok(Command::Unsupported {
                            what: "REFRESH CLUSTER REPOS(YES) (not yet: use REPOS(NO))".into(),
                        })
                    }
                    Some((v, pos)) => return Err(self.bad_option("REPOS", v, &["NO", "YES"], pos)),
                }
                self.no_more(&rest)?;
                Ok(Command::RefreshCluster { cluster })
            }
            ("RESET", Obj::Other("CLUSTER")) => {
                let cluster = self.exact_name(obj_param, "CLUSTER", NameRule::Object)?;
                let mut rest = rest.clone();
                match self.take_option(&mut rest, "ACTION")? {
                    Some((v, _)) if v == "FORCEREMOVE" => {}
                    Some((v, pos)) => {
                        return Err(self.bad_option("ACTION", v, &["FORCEREMOVE"], pos))
                    }
                    None => {
                        return Err(self.err(
                            K::Missing {
                                command: "RESET CLUSTER".into(),
                                keyword: "ACTION".into(),
                            },
                            self.text.len(),
                        ))
                    }
                }
                let Some((qmgr, _)) = self.take_option(&mut rest, "QMNAME")? else {
                    return Ok(Command::Unsupported {
                        what: "RESET CLUSTER QMID (not yet: name the queue manager with QMNAME)"
                            .into(),
                    });
                };
                // QUEUES(YES|NO): Ferry withdraws the queue manager's queues either way.
                let _ = self.take_option(&mut rest, "QUEUES")?;
                self.no_more(&rest)?;
                Ok(Command::ResetCluster { cluster, qmgr })
            }
            ("SET", Obj::Other("CHLAUTH")) => self.set_chlauth(obj_param, &rest),
            ("DEFINE", Obj::AuthInfo) => self.define_authinfo(obj_param, &rest),
            ("ALTER", Obj::AuthInfo) => self.alter_authinfo(obj_param, &rest),
            ("DELETE", Obj::AuthInfo) => {
                let name = self.exact_name(obj_param, "AUTHINFO", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteAuthInfo { name })
            }
            ("DISPLAY", Obj::AuthInfo) => self.display_authinfo(obj_param, &rest),
            ("DEFINE", Obj::Process) => self.define_process(obj_param, &rest),
            ("ALTER", Obj::Process) => self.alter_process(obj_param, &rest),
            ("DELETE", Obj::Process) => {
                let name = self.exact_name(obj_param, "PROCESS", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteProcess { name })
            }
            ("DISPLAY", Obj::Process) => self.display_process(obj_param, &rest),
            ("DEFINE", Obj::Namelist) => self.define_namelist(obj_param, &rest),
            ("ALTER", Obj::Namelist) => self.alter_namelist(obj_param, &rest),
            ("DELETE", Obj::Namelist) => {
                let name = self.exact_name(obj_param, "NAMELIST", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteNamelist { name })
            }
            ("DISPLAY", Obj::Namelist) => self.display_namelist(obj_param, &rest),
            ("DEFINE", Obj::Topic) => self.define_topic(obj_param, &rest),
            ("ALTER", Obj::Topic) => self.alter_topic(obj_param, &rest),
            ("DELETE", Obj::Topic) => {
                let name = self.exact_name(obj_param, "TOPIC", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteTopic { name })
            }
            ("DISPLAY", Obj::Topic) => self.display_topic(obj_param, &rest),
            ("DEFINE", Obj::Sub) => self.define_sub(obj_param, &rest),
            ("ALTER", Obj::Sub) => self.alter_sub(obj_param, &rest),
            ("DELETE", Obj::Sub) => self.delete_sub(obj_param, &rest),
            ("DISPLAY", Obj::Sub) => self.display_sub(obj_param, &rest, false),
            ("DISPLAY", Obj::SbStatus) => self.display_sub(obj_param, &rest, true),
            ("DISPLAY", Obj::TpStatus) => self.display_tpstatus(obj_param, &rest),
            ("DISPLAY", Obj::PubSub) => self.display_pubsub(obj_param, &rest),
            ("CLEAR", Obj::TopicStr) => self.clear_topic_string(obj_param, &rest),
            ("DISPLAY", Obj::Other("CHLAUTH")) => self.display_chlauth(obj_param, &rest),
            ("SET", Obj::Other("AUTHREC")) => self.set_authrec(obj_param, &rest),
            ("DELETE", Obj::Other("AUTHREC")) => self.delete_authrec(obj_param, &rest),
            ("DISPLAY", Obj::Other("AUTHREC")) => self.display_authrec(obj_param, &rest),
            ("DISPLAY", Obj::Other("ENTAUTH")) => self.display_entauth(obj_param, &rest),
            (_, Obj::Other(name)) => Ok(Command::Unsupported {
                what: format!("{verb} {name}"),
            }),
            ("STOP", Obj::Conn) => Ok(Command::Unsupported {
                what: "STOP CONN".into(),
            }),
            ("DEFINE", Obj::Queue(qt)) => self.define_queue(qt, obj_param, &rest),
            ("ALTER", Obj::Queue(qt)) => self.alter_queue(qt, obj_param, &rest),
            ("DELETE", Obj::Queue(qt)) => self.delete_queue(qt, obj_param, &rest),
            ("DISPLAY", Obj::Queue(qt)) => self.display_queue(Some(qt), obj_param, &rest),
            ("DISPLAY", Obj::AnyQueue) => self.display_queue(None, obj_param, &rest),
            ("CLEAR", Obj::Queue(QueueType::Local)) => {
                let name = self.exact_name(obj_param, "QLOCAL", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::ClearQueue { name })
            }
            ("DISPLAY", Obj::QStatus) => self.display_qstatus(obj_param, &rest),
            ("DEFINE", Obj::Channel) => self.define_channel(obj_param, &rest),
            ("ALTER", Obj::Channel) => self.alter_channel(obj_param, &rest),
            ("DELETE", Obj::Channel) => {
                let name = self.exact_name(obj_param, "CHANNEL", NameRule::Channel)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteChannel { name })
            }
            ("DISPLAY", Obj::Channel) => self.display_channel(obj_param, &rest),
            ("START", Obj::Channel) => {
                let name = self.exact_name(obj_param, "CHANNEL", NameRule::Channel)?;
                self.no_more(&rest)?;
                Ok(Command::StartChannel { name })
            }
            ("STOP", Obj::Channel) => self.stop_channel(obj_param, &rest),
            ("DISPLAY", Obj::ChStatus) => self.display_chstatus(obj_param, &rest),
            ("DEFINE", Obj::Listener) => {
                let name = self.exact_name(obj_param, "LISTENER", NameRule::Object)?;
                let (like, replace, settings) = self.define_params::<ListenerAttributes>(
                    &rest,
                    ferry_objects::listener::TCP,
                    "LISTENER",
                    NameRule::Object,
                )?;
                Ok(Command::DefineListener {
                    name,
                    like,
                    replace,
                    settings,
                })
            }
            ("ALTER", Obj::Listener) => {
                let name = self.exact_name(obj_param, "LISTENER", NameRule::Object)?;
                let mut seen = Vec::new();
                let settings = rest
                    .iter()
                    .map(|p| {
                        self.setting::<ListenerAttributes>(
                            p,
                            ferry_objects::listener::TCP,
                            "LISTENER",
                            &mut seen,
                        )
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Command::AlterListener { name, settings })
            }
            ("DELETE", Obj::Listener) => {
                let name = self.exact_name(obj_param, "LISTENER", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(Command::DeleteListener { name })
            }
            ("DISPLAY", Obj::Listener) => {
                let vocab = |kw: &str| table_vocab::<ListenerAttributes>(kw, u32::MAX);
                let name = self.name(obj_param, "LISTENER", NameRule::Object, true)?;
                let selection = self.selection(name, &rest, "LISTENER", &vocab, false)?;
                Ok(Command::DisplayListener { selection })
            }
            ("START" | "STOP", Obj::Listener) => {
                let name = self.exact_name(obj_param, "LISTENER", NameRule::Object)?;
                self.no_more(&rest)?;
                Ok(if verb == "START" {
                    Command::StartListener { name }
                } else {
                    Command::StopListener { name }
                })
            }
            ("DISPLAY", Obj::LsStatus) => {
                let vocab = |kw: &str| field_vocab(LSSTATUS_FIELDS, kw);
                let name = self.name(obj_param, "LSSTATUS", NameRule::Object, true)?;
                let selection = self.selection(name, &rest, "LSSTATUS", &vocab, true)?;
                Ok(Command::DisplayListenerStatus { selection })
            }
            ("ALTER", Obj::Qmgr) => self.alter_qmgr(obj_param, &rest),
            ("DISPLAY", Obj::Qmgr) => self.display_qmgr(obj_param, &rest),
            ("DISPLAY", Obj::QmStatus) => self.display_qmstatus(obj_param, &rest),
            ("DISPLAY", Obj::Conn) => self.display_conn(obj_param, &rest),
            ("PING", Obj::Qmgr) => {
                self.bare(obj_param)?;
                self.no_more(&rest)?;
                Ok(Command::PingQmgr)
            }
            ("PING" | "RESET" | "RESOLVE", Obj::Channel) => {
                self.operate_channel(verb, obj_param, &rest)
            }
            ("RESET", Obj::Qmgr) => {
                self.bare(obj_param)?;
                let mut rest = rest.clone();
                match self.take_option(&mut rest, "TYPE")? {
                    Some((v, _)) if v == "STATISTICS" => {
                        self.no_more(&rest)?;
                        Ok(Command::ResetQmgrStatistics)
                    }
                    Some((v, _)) => Ok(Command::Unsupported {
                        what: format!("RESET QMGR TYPE({v}) (Ferry resets STATISTICS only)"),
                    }),
                    None => Err(self.err(
                        K::Missing {
                            command: "RESET QMGR".into(),
                            keyword: "TYPE".into(),
                        },
                        self.text.len(),
                    )),
                }
            }
            // RESET QSTATS and the like.
            ("RESET", _) => Ok(Command::Unsupported {
                what: format!("RESET {}", obj_param.keyword),
            }),
            _ => Err(self.unknown_object(verb, obj_param)),
        }
    }

    /// MQ: "Repeated parameters are not allowed." Every parameter after the object is
    /// checked here, whatever the command, so no command forgets to (a keyword and its NO
    /// form, or two keywords for one attribute, are caught where the keyword is read).
    /// One pass with a set: a command of thousands of keywords costs no more than it reads.
    fn no_repeats(&self, params: &[Param]) -> Result<(), ParseError> {
        let mut seen = std::collections::HashSet::with_capacity(params.len());
        for p in params.iter().skip(2) {
            if !seen.insert(p.keyword.as_str()) {
                return Err(self.err(
                    K::Duplicate {
                        keyword: p.keyword.clone(),
                    },
                    p.end,
                ));
            }
        }
        Ok(())
    }

    fn unknown_object(&self, verb: &str, p: &Param) -> ParseError {
        self.err(
            K::UnknownObject {
                verb: verb.to_string(),
                object: p.keyword.clone(),
            },
            p.end,
        )
    }

    fn no_more(&self, rest: &[&Param]) -> Result<(), ParseError> {
        match rest.first() {
            Some(p) => Err(self.err(K::Unexpected(p.keyword.clone()), p.end)),
            None => Ok(()),
        }
    }

    /// The single token inside a parameter's parentheses; `None` for `()`.
    fn value_token<'p>(&self, p: &'p Param) -> Result<Option<&'p Token>, ParseError> {
        let Some(tokens) = &p.value else {
            return Err(self.err(
                K::ValueRequired {
                    keyword: p.keyword.clone(),
                },
                p.end,
            ));
        };
        match tokens.as_slice() {
            [] => Ok(None),
            [t] => Ok(Some(t)),
            [_, second, ..] => Err(self.err(
                K::SingleValue {
                    keyword: p.keyword.clone(),
                },
                second.end,
            )),
        }
    }

    fn value_text(&self, p: &Param) -> Result<Option<String>, ParseError> {
        Ok(self.value_token(p)?.map(|t| match &t.kind {
            TokenKind::Word(s) | TokenKind::Quoted(s) => s.clone(),
            TokenKind::Open => "(".into(),
            TokenKind::Close => ")".into(),
        }))
    }

    fn bare(&self, p: &Param) -> Result<(), ParseError> {
        if p.value.is_some() {
            return Err(self.err(
                K::ValueNotAllowed {
                    keyword: p.keyword.clone(),
                },
                p.value_end,
            ));
        }
        Ok(())
    }

    /// The object name in `p`'s parentheses; generic names only when `generic`.
    fn name(
        &self,
        p: &Param,
        object: &str,
        rule: NameRule,
        generic: bool,
    ) -> Result<NamePattern, ParseError> {
        let missing = || {
            self.err(
                K::MissingName {
                    object: object.to_string(),
                },
                p.value_end,
            )
        };
        let text = match &p.value {
            None => return Err(missing()),
            Some(_) => self.value_text(p)?.ok_or_else(missing)?,
        };
        let (core, pattern) = match text.strip_suffix('*') {
            Some(prefix) => (prefix.to_string(), NamePattern::Prefix(prefix.to_string())),
            None => (text.clone(), NamePattern::Exact(text.clone())),
        };
        if core.contains('*') || (pattern.is_generic() && !generic) {
            return Err(self.err(K::Generic(text), p.value_end));
        }
        if core.is_empty() && pattern.is_generic() {
            return Ok(pattern);
        }
        let checked = match rule {
            NameRule::Object => ferry_mqi::validate_object_name(&core).map_err(|e| e.to_string()),
            NameRule::Channel => ferry_mqi::validate_channel_name(&core).map_err(|e| e.to_string()),
            NameRule::Subscription => {
                let max = ferry_objects::subscription::MAX_SUB_STRING;
                if core.len() > max {
                    Err(format!(
                        "it is {} characters long; at most {max} are allowed",
                        core.len()
                    ))
                } else if core.trim().is_empty() && !pattern.is_generic() {
                    Err("it is blank".to_string())
                } else {
                    Ok(())
                }
            }
        };
        checked.map_err(|e| {
            self.err(
                K::BadName {
                    object: object.to_string(),
                    name: text.clone(),
                    reason: e.to_string(),
                },
                p.value_end,
            )
        })?;
        Ok(pattern)
    }

    fn exact_name(&self, p: &Param, object: &str, rule: NameRule) -> Result<String, ParseError> {
        match self.name(p, object, rule, false)? {
            NamePattern::Exact(n) => Ok(n),
            NamePattern::Prefix(n) => Err(self.err(K::Generic(format!("{n}*")), p.value_end)),
        }
    }

    /// One attribute setting checked against table `D` for object subtype `mask`.
    fn setting<D: AttributeSet>(
        &self,
        p: &Param,
        mask: u32,
        object: &'static str,
        seen: &mut Vec<&'static str>,
    ) -> Result<Setting, ParseError> {
        let (row, flag) = D::lookup(&p.keyword).ok_or_else(|| {
            self.err(
                K::UnknownKeyword {
                    keyword: p.keyword.clone(),
                    object: object.to_string(),
                },
                p.end,
            )
        })?;
        let keyword = row.keyword;
        if row.read_only {
            return Err(self.err(AttrError::ReadOnly { keyword }.into(), p.end));
        }
        if !row.applies_to(mask) {
            return Err(self.err(AttrError::NotApplicable { keyword, object }.into(), p.end));
        }
        if seen.contains(&keyword) {
            return Err(self.err(
                K::Duplicate {
                    keyword: p.keyword.clone(),
                },
                p.end,
            ));
        }
        seen.push(keyword);
        let value = match flag {
            Some(on) => {
                self.bare(p)?;
                AttrValue::Flag(on)
            }
            None => self.attr_value(row, p)?,
        };
        let value = row
            .check(value)
            .map_err(|e| self.err(e.into(), p.value_end))?;
        Ok(Setting { keyword, value })
    }

    fn attr_value<D>(&self, row: &AttrDef<D>, p: &Param) -> Result<AttrValue, ParseError> {
        if let (AttrKind::KeywordList { .. } | AttrKind::NameList { .. }, Some(tokens)) =
            (row.kind, &p.value)
        {
            // COMPMSG(LZ4FAST,ZLIBFAST), NAMES(CLUS1,CLUS2): every word between the
            // parentheses, in order.
            let words: Vec<String> = tokens
                .iter()
                .map(|t| match &t.kind {
                    TokenKind::Word(s) | TokenKind::Quoted(s) => s.clone(),
                    TokenKind::Open => "(".into(),
                    TokenKind::Close => ")".into(),
                })
                .collect();
            return Ok(AttrValue::Text(words.join(",")));
        }
        let text = self.value_text(p)?;
        match (row.kind, text) {
            (AttrKind::Text { .. } | AttrKind::Checked { .. } | AttrKind::Name { .. }, None) => {
                Ok(AttrValue::Text(String::new()))
            }
            (_, None) => Err(self.err(
                K::ValueRequired {
                    keyword: p.keyword.clone(),
                },
                p.value_end,
            )),
            (AttrKind::Int { min, max } | AttrKind::IntOrWord { min, max, .. }, Some(s)) => {
                match s.trim().parse::<i64>() {
                    Ok(n) => match i32::try_from(n) {
                        Ok(n) => Ok(AttrValue::Int(n)),
                        Err(_) => Err(self.err(
                            AttrError::OutOfRange {
                                keyword: row.keyword,
                                value: n,
                                min,
                                max,
                            }
                            .into(),
                            p.value_end,
                        )),
                    },
                    Err(_) if looks_numeric(&s) => Err(self.err(
                        K::NumberTooLarge {
                            keyword: row.keyword.to_string(),
                            value: s,
                        },
                        p.value_end,
                    )),
                    Err(_) => Ok(AttrValue::Text(s)),
                }
            }
            (_, Some(s)) => Ok(AttrValue::Text(s)),
        }
    }

    /// REPLACE/NOREPLACE, LIKE and attributes of a DEFINE.
    fn define_params<D: AttributeSet>(
        &self,
        rest: &[&Param],
        mask: u32,
        object: &'static str,
        rule: NameRule,
    ) -> Result<(Option<String>, bool, Vec<Setting>), ParseError> {
        let mut like = None;
        let mut replace: Option<&str> = None;
        let mut settings = Vec::new();
        let mut seen = Vec::new();
        for p in rest {
            match p.keyword.as_str() {
                "REPLACE" | "NOREPLACE" => {
                    self.bare(p)?;
                    if let Some(first) = replace {
                        return Err(self.err(
                            K::Conflict {
                                first: first.to_string(),
                                second: p.keyword.clone(),
                            },
                            p.end,
                        ));
                    }
                    replace = Some(if p.keyword == "REPLACE" {
                        "REPLACE"
                    } else {
                        "NOREPLACE"
                    });
                }
                "LIKE" => {
                    if like.is_some() {
                        return Err(self.err(
                            K::Duplicate {
                                keyword: "LIKE".into(),
                            },
                            p.end,
                        ));
                    }
                    like = Some(self.exact_name(p, object, rule)?);
                }
                _ => settings.push(self.setting::<D>(p, mask, object, &mut seen)?),
            }
        }
        Ok((like, replace == Some("REPLACE"), settings))
    }

    /// Rules the table cannot say: DEFTYPE is set only on model queues, and only to a
    /// dynamic kind (PREDEFINED is what defined queues report).
    fn check_deftype(
        &self,
        qt: QueueType,
        rest: &[&Param],
        settings: &[Setting],
    ) -> Result<(), ParseError> {
        let Some(s) = settings.iter().find(|s| s.keyword == "DEFTYPE") else {
            return Ok(());
        };
        let pos = rest
            .iter()
            .find(|p| p.keyword == "DEFTYPE")
            .map(|p| p.value_end)
            .unwrap_or(self.text.len());
        if qt != QueueType::Model {
            return Err(self.err(
                AttrError::NotApplicable {
                    keyword: "DEFTYPE",
                    object: qt.keyword(),
                }
                .into(),
                pos,
            ));
        }
        if s.value == AttrValue::Keyword(DefinitionType::Predefined.keyword()) {
            return Err(self.err(
                AttrError::BadKeyword {
                    keyword: "DEFTYPE",
                    value: DefinitionType::Predefined.keyword().into(),
                    allowed: format!(
                        "{}, {}",
                        DefinitionType::TemporaryDynamic.keyword(),
                        DefinitionType::PermanentDynamic.keyword()
                    ),
                }
                .into(),
                pos,
            ));
        }
        Ok(())
    }

    fn define_queue(
        &self,
        qt: QueueType,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, qt.keyword(), NameRule::Object)?;
        let (like, replace, settings) =
            self.define_params::<QueueAttributes>(rest, qt.mask(), qt.keyword(), NameRule::Object)?;
        self.check_deftype(qt, rest, &settings)?;
        Ok(Command::DefineQueue {
            queue_type: qt,
            name,
            like,
            replace,
            settings,
        })
    }

    fn alter_queue(
        &self,
        qt: QueueType,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, qt.keyword(), NameRule::Object)?;
        let mut force = false;
        let mut settings = Vec::new();
        let mut seen = Vec::new();
        for p in rest {
            if p.keyword == "FORCE" {
                self.bare(p)?;
                force = true;
            } else {
                settings.push(self.setting::<QueueAttributes>(
                    p,
                    qt.mask(),
                    qt.keyword(),
                    &mut seen,
                )?);
            }
        }
        self.check_deftype(qt, rest, &settings)?;
        Ok(Command::AlterQueue {
            queue_type: qt,
            name,
            force,
            settings,
        })
    }

    fn delete_queue(
        &self,
        qt: QueueType,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, qt.keyword(), NameRule::Object)?;
        let mut purge: Option<&str> = None;
        for p in rest {
            let kw = p.keyword.as_str();
            if qt == QueueType::Local && (kw == "PURGE" || kw == "NOPURGE") {
                self.bare(p)?;
                if let Some(first) = purge {
                    return Err(self.err(
                        K::Conflict {
                            first: first.into(),
                            second: kw.into(),
                        },
                        p.end,
                    ));
                }
                purge = Some(if kw == "PURGE" { "PURGE" } else { "NOPURGE" });
            } else {
                return Err(self.err(
                    K::UnknownKeyword {
                        keyword: kw.into(),
                        object: format!("DELETE {}", qt.keyword()),
                    },
                    p.end,
                ));
            }
        }
        Ok(Command::DeleteQueue {
            queue_type: qt,
            name,
            purge: purge == Some("PURGE"),
        })
    }

    /// Removes the option `kw` (TYPE, CHLTYPE) from `rest` and returns its value.
    fn channel_type(
        &self,
        value: String,
        pos: usize,
    ) -> Result<Result<ChannelType, Command>, ParseError> {
        if let Some(t) = ChannelType::from_keyword(&value) {
            return Ok(Ok(t));
        }
        if LATER_CHANNEL_TYPES.contains(&value.as_str()) {
            return Ok(Err(Command::Unsupported {
                what: format!("CHANNEL CHLTYPE({value})"),
            }));
        }
        let mut allowed = ChannelType::KEYWORDS.to_vec();
        allowed.extend_from_slice(LATER_CHANNEL_TYPES);
        Err(self.bad_option("CHLTYPE", value, &allowed, pos))
    }

    fn define_channel(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "CHANNEL", NameRule::Channel)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let Some((value, pos)) = self.take_option(&mut rest, "CHLTYPE")? else {
            return Err(self.err(
                K::Missing {
                    command: "DEFINE CHANNEL".into(),
                    keyword: "CHLTYPE".into(),
                },
                self.text.len(),
            ));
        };
        let channel_type = match self.channel_type(value, pos)? {
            Ok(t) => t,
            Err(unsupported) => return Ok(unsupported),
        };
        let (like, replace, settings) = self.define_params::<ChannelAttributes>(
            &rest,
            channel_type.mask(),
            channel_type.object(),
            NameRule::Channel,
        )?;
        Ok(Command::DefineChannel {
            channel_type,
            name,
            like,
            replace,
            settings,
        })
    }

    fn alter_channel(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "CHANNEL", NameRule::Channel)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let channel_type = match self.take_option(&mut rest, "CHLTYPE")? {
            None => None,
            Some((value, pos)) => match self.channel_type(value, pos)? {
                Ok(t) => Some(t),
                Err(unsupported) => return Ok(unsupported),
            },
        };
        // Without CHLTYPE the executor checks the attributes against the channel's type.
        let mask = channel_type.map(ChannelType::mask).unwrap_or(u32::MAX);
        let object = channel_type.map(ChannelType::object).unwrap_or("CHANNEL");
        let mut seen = Vec::new();
        let settings = rest
            .iter()
            .map(|p| self.setting::<ChannelAttributes>(p, mask, object, &mut seen))
            .collect::<Result<_, _>>()?;
        Ok(Command::AlterChannel {
            channel_type,
            name,
            settings,
        })
    }

    /// REFRESH SECURITY [TYPE(AUTHSERV|CONNAUTH|SSL|ALL)]: AUTHSERV (MQ's default) forgets
    /// remembered group memberships, CONNAUTH reads the AUTHINFO object and user
    /// repository again, SSL the key repository, ALL each.
    fn refresh_security(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        self.bare(obj)?;
        const TYPES: &[&str] = &["SSL", "AUTHSERV", "CONNAUTH", "ALL"];
        let mut rest: Vec<&Param> = rest.to_vec();
        let kind = match self.take_option(&mut rest, "TYPE")? {
            None => "AUTHSERV".to_string(),
            Some((value, pos)) => {
                let upper = value.to_ascii_uppercase();
                if !TYPES.contains(&upper.as_str()) {
                    return Err(self.bad_option("TYPE", value, TYPES, pos));
                }
                upper
            }
        };
        if let Some(p) = rest.first() {
            return Err(self.err(
                K::UnknownKeyword {
                    keyword: p.keyword.clone(),
                    object: "REFRESH SECURITY".into(),
                },
                p.end,
            ));
        }
        Ok(Command::RefreshSecurity(match kind.as_str() {
            "SSL" => SecurityRefresh::Ssl,
            "CONNAUTH" => SecurityRefresh::ConnAuth,
            "ALL" => SecurityRefresh::All,
            _ => SecurityRefresh::AuthServ,
        }))
    }

    /// STOP CHANNEL(name) [MODE(QUIESCE|FORCE)].
    fn stop_channel(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "CHANNEL", NameRule::Channel)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let mode = match self.take_option(&mut rest, "MODE")? {
            None => StopMode::Quiesce,
            Some((value, pos)) => StopMode::from_keyword(&value)
                .ok_or_else(|| self.bad_option("MODE", value, StopMode::KEYWORDS, pos))?,
        };
        if let Some(p) = rest.first() {
            let kind = if p.keyword == "MODE" {
                K::ValueRequired {
                    keyword: "MODE".into(),
                }
            } else {
                K::UnknownKeyword {
                    keyword: p.keyword.clone(),
                    object: "STOP CHANNEL".into(),
                }
            };
            return Err(self.err(kind, p.end));
        }
        Ok(Command::StopChannel { name, mode })
    }

    /// PING CHANNEL(name) [DATALEN(16-32768)], RESET CHANNEL(name) [SEQNUM(n)] and
    /// RESOLVE CHANNEL(name) ACTION(COMMIT|BACKOUT).
    fn operate_channel(
        &self,
        verb: &str,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "CHANNEL", NameRule::Channel)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let (keyword, object) = match verb {
            "PING" => ("DATALEN", "PING CHANNEL"),
            "RESET" => ("SEQNUM", "RESET CHANNEL"),
            _ => ("ACTION", "RESOLVE CHANNEL"),
        };
        let value = self.take_option(&mut rest, keyword)?;
        if let Some(p) = rest.first() {
            let kind = if p.keyword == keyword {
                K::ValueRequired {
                    keyword: keyword.into(),
                }
            } else {
                K::UnknownKeyword {
                    keyword: p.keyword.clone(),
                    object: object.into(),
                }
            };
            return Err(self.err(kind, p.end));
        }
        let number = |value: Option<(String, usize)>, default: u32, min: u32, max: u32| {
            let Some((text, pos)) = value else {
                return Ok(default);
            };
            let out_of_range = |n: i64| {
                self.err(
                    AttrError::OutOfRange {
                        keyword,
                        value: n,
                        min: min as i32,
                        max: max as i32,
                    }
                    .into(),
                    pos,
                )
            };
            match text.trim().parse::<i64>() {
                Ok(n) if n >= i64::from(min) && n <= i64::from(max) => Ok(n as u32),
                Ok(n) => Err(out_of_range(n)),
                Err(_) => Err(self.err(
                    K::NumberTooLarge {
                        keyword: keyword.to_string(),
                        value: text,
                    },
                    pos,
                )),
            }
        };
        let operation = match verb {
            "PING" => ChannelOperation::Ping {
                data_length: number(
                    value,
                    channel::PING_DATA_LEN_MIN,
                    channel::PING_DATA_LEN_MIN,
                    channel::PING_DATA_LEN_MAX,
                )?,
            },
            "RESET" => ChannelOperation::Reset {
                seqnum: number(value, 1, 1, channel::RESET_SEQNUM_MAX)?,
            },
            _ => {
                let Some((text, pos)) = value else {
                    return Err(self.err(
                        K::ValueRequired {
                            keyword: "ACTION".into(),
                        },
                        obj.value_end,
                    ));
                };
                let action = ResolveAction::from_keyword(&text)
                    .ok_or_else(|| self.bad_option("ACTION", text, ResolveAction::KEYWORDS, pos))?;
                ChannelOperation::Resolve { action }
            }
        };
        Ok(Command::OperateChannel { name, operation })
    }

    fn alter_qmgr(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut force = false;
        let mut settings = Vec::new();
        let mut seen = Vec::new();
        for p in rest {
            if p.keyword == "FORCE" {
                self.bare(p)?;
                force = true;
            } else {
                settings.push(self.setting::<QmgrAttributes>(
                    p,
                    ferry_objects::qmgr::QMGR,
                    "QMGR",
                    &mut seen,
                )?);
            }
        }
        Ok(Command::AlterQmgr { force, settings })
    }
}

fn looks_numeric(s: &str) -> bool {
    let digits = s.trim().trim_start_matches(['-', '+']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}
