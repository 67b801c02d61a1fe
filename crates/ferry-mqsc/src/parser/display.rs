//! DISPLAY commands: requested attributes, ALL, WHERE, and the TYPE/CHLTYPE options.
//!
//! Which keywords a DISPLAY understands comes from the ferry-objects tables (definition
//! attributes) and the status field tables of [`crate::display`]; a WHERE is checked
//! against the kind of its attribute (numbers, text, keywords, flags).

use super::{NameRule, Param, Parser};
use crate::command::{
    Command, ConnType, Filter, FilterValue, NamePattern, Op, QueueStatusType, Request, Selection,
};
use crate::display::{
    FieldKind, StatusField, CHSTATUS_CLIENT_FIELDS, CHSTATUS_FIELDS, CHSTATUS_MESSAGE_FIELDS,
    CHSTATUS_STATUSES, CHSTATUS_SVRCONN_FIELDS, CONN_FIELDS, CONN_HANDLE_FIELDS, QMSTATUS_FIELDS,
    QSTATUS_HANDLE_FIELDS, QSTATUS_QUEUE_FIELDS, QUEUE_LIVE_FIELDS,
};
use crate::error::{ParseError, ParseErrorKind as K};
use crate::lexer::TokenKind;
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::QueueType;
use ferry_objects::{AttrKind, AttributeSet, ChannelAttributes, QmgrAttributes, QueueAttributes};

/// How a WHERE value is read and compared.
#[derive(Clone, Copy, Debug)]
pub(super) enum FilterKind {
    Int,
    Text,
    Keyword(&'static [&'static str]),
    Flag { on: &'static str, off: &'static str },
}

impl FilterKind {
    pub(super) fn of_attr(kind: AttrKind) -> Self {
        match kind {
            AttrKind::Int { .. } | AttrKind::IntOrWord { .. } => FilterKind::Int,
            AttrKind::Text { .. }
            | AttrKind::Checked { .. }
            | AttrKind::Name { .. }
            | AttrKind::KeywordList { .. }
            | AttrKind::NameList { .. } => FilterKind::Text,
            AttrKind::Keyword { values } => FilterKind::Keyword(values),
            AttrKind::Flag { on, off } => FilterKind::Flag { on, off },
        }
    }

    pub(super) fn of_field(kind: FieldKind) -> Self {
        match kind {
            FieldKind::Int => FilterKind::Int,
            FieldKind::Text => FilterKind::Text,
            FieldKind::Keyword(v) => FilterKind::Keyword(v),
        }
    }

    pub(super) fn ops(self) -> &'static [Op] {
        match self {
            FilterKind::Int => &[Op::Lt, Op::Gt, Op::Eq, Op::Ne, Op::Le, Op::Ge],
            FilterKind::Text => &[
                Op::Lt,
                Op::Gt,
                Op::Eq,
                Op::Ne,
                Op::Le,
                Op::Ge,
                Op::Lk,
                Op::Nl,
                Op::Ct,
                Op::Ex,
            ],
            FilterKind::Keyword(_) | FilterKind::Flag { .. } => &[Op::Eq, Op::Ne],
        }
    }
}

/// The keywords a DISPLAY understands: canonical keyword and WHERE kind, or None.
pub(super) type Vocabulary<'a> = &'a dyn Fn(&str) -> Option<(&'static str, FilterKind)>;

impl Parser<'_> {
    pub(super) fn take_option(
        &self,
        rest: &mut Vec<&Param>,
        kw: &str,
    ) -> Result<Option<(String, usize)>, ParseError> {
        let Some(i) = rest
            .iter()
            .position(|p| p.keyword == kw && p.value.is_some())
        else {
            return Ok(None);
        };
        let p = rest.remove(i);
        if let Some(dup) = rest.iter().find(|q| q.keyword == kw && q.value.is_some()) {
            return Err(self.err(K::Duplicate { keyword: kw.into() }, dup.end));
        }
        let value = self.value_text(p)?.unwrap_or_default().to_ascii_uppercase();
        Ok(Some((value, p.value_end)))
    }

    pub(super) fn bad_option(
        &self,
        kw: &str,
        value: String,
        allowed: &[&str],
        pos: usize,
    ) -> ParseError {
        self.err(
            K::BadOption {
                keyword: kw.into(),
                value,
                allowed: allowed.join(", "),
            },
            pos,
        )
    }

    /// ALL, WHERE and requested keywords of a DISPLAY.
    pub(super) fn selection(
        &self,
        name: NamePattern,
        rest: &[&Param],
        object: &str,
        vocab: Vocabulary<'_>,
        status: bool,
    ) -> Result<Selection, ParseError> {
        let mut request = Request::default();
        let mut filter = None;
        for p in rest {
            match p.keyword.as_str() {
                "ALL" => {
                    self.bare(p)?;
                    request.all = true;
                }
                "WHERE" => {
                    if filter.is_some() {
                        return Err(self.err(
                            K::Duplicate {
                                keyword: "WHERE".into(),
                            },
                            p.end,
                        ));
                    }
                    filter = Some(self.filter(p, object, vocab)?);
                }
                kw => {
                    let (canonical, _) = vocab(kw).ok_or_else(|| {
                        self.err(
                            K::UnknownKeyword {
                                keyword: kw.into(),
                                object: object.into(),
                            },
                            p.end,
                        )
                    })?;
                    self.bare(p)?;
                    if request.keywords.contains(&canonical) {
                        return Err(self.err(K::Duplicate { keyword: kw.into() }, p.end));
                    }
                    request.keywords.push(canonical);
                }
            }
        }
        // As MQ: a specific name without requested attributes shows them all; status
        // displays show every field unless some are asked for.
        if request.keywords.is_empty() && (status || !name.is_generic()) {
            request.all = true;
        }
        Ok(Selection {
            name,
            request,
            filter,
        })
    }

    pub(super) fn filter(
        &self,
        p: &Param,
        object: &str,
        vocab: Vocabulary<'_>,
    ) -> Result<Filter, ParseError> {
        let Some(tokens) = &p.value else {
            return Err(self.err(
                K::ValueRequired {
                    keyword: "WHERE".into(),
                },
                p.end,
            ));
        };
        let (kw_tok, op_tok, val_tok) = match tokens.as_slice() {
            [a, b, c] => (a, b, c),
            [.., last] if tokens.len() > 3 => {
                return Err(self.err(K::Where("too many words".into()), last.end))
            }
            _ => return Err(self.err(K::Where("too few words".into()), p.value_end)),
        };
        let TokenKind::Word(kw) = &kw_tok.kind else {
            return Err(self.err(K::Where("the keyword must come first".into()), kw_tok.end));
        };
        let (keyword, kind) = vocab(kw).ok_or_else(|| {
            self.err(
                K::UnknownKeyword {
                    keyword: kw.clone(),
                    object: object.into(),
                },
                kw_tok.end,
            )
        })?;
        let op_word = match &op_tok.kind {
            TokenKind::Word(w) => w.clone(),
            _ => String::new(),
        };
        let op = Op::from_keyword(&op_word).ok_or_else(|| {
            self.err(
                K::Where(format!(
                    "'{op_word}' is not an operator (LT GT EQ NE LE GE LK NL CT EX)"
                )),
                op_tok.end,
            )
        })?;
        if !kind.ops().contains(&op) {
            return Err(self.err(
                K::Operator {
                    op: op_word,
                    keyword: keyword.into(),
                    allowed: kind
                        .ops()
                        .iter()
                        .map(|o| o.keyword())
                        .collect::<Vec<_>>()
                        .join(" "),
                },
                op_tok.end,
            ));
        }
        let text = match &val_tok.kind {
            TokenKind::Word(s) | TokenKind::Quoted(s) => s.clone(),
            _ => String::new(),
        };
        let value = match kind {
            FilterKind::Int => FilterValue::Int(text.trim().parse::<i64>().map_err(|_| {
                self.err(
                    K::Where(format!("{keyword} is compared with a number")),
                    val_tok.end,
                )
            })?),
            FilterKind::Text => FilterValue::Text(text),
            FilterKind::Keyword(values) => {
                let upper = text.to_ascii_uppercase();
                if !values.contains(&upper.as_str()) {
                    return Err(self.bad_option(keyword, text, values, val_tok.end));
                }
                FilterValue::Text(upper)
            }
            FilterKind::Flag { on, off } => {
                let upper = text.to_ascii_uppercase();
                if upper == on || upper == "YES" {
                    FilterValue::Flag(true)
                } else if upper == off || upper == "NO" {
                    FilterValue::Flag(false)
                } else {
                    return Err(self.bad_option(keyword, text, &[on, off], val_tok.end));
                }
            }
        };
        Ok(Filter { keyword, op, value })
    }

    pub(super) fn display_queue(
        &self,
        qt: Option<QueueType>,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let object = qt.map(QueueType::keyword).unwrap_or("QUEUE");
        let name = self.name(obj, object, NameRule::Object, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let mut type_filter = None;
        if let Some((value, pos)) = self.take_option(&mut rest, "TYPE")? {
            if qt.is_some() {
                return Err(self.err(
                    K::ValueNotAllowed {
                        keyword: "TYPE".into(),
                    },
                    pos,
                ));
            }
            let alias = match value.as_str() {
                "QL" => "QLOCAL",
                "QA" => "QALIAS",
                "QM" => "QMODEL",
                "QR" => "QREMOTE",
                v => v,
            };
            if alias != "ALL" {
                type_filter = Some(QueueType::from_keyword(alias).ok_or_else(|| {
                    let mut allowed = QueueType::KEYWORDS.to_vec();
                    allowed.push("ALL");
                    self.bad_option("TYPE", value.clone(), &allowed, pos)
                })?);
            }
        }
        let mask = qt.map(QueueType::mask).unwrap_or(u32::MAX);
        let live = qt.is_none() || qt == Some(QueueType::Local);
        let vocab = move |kw: &str| {
            if kw == "TYPE" {
                return Some(("TYPE", FilterKind::Keyword(QueueType::KEYWORDS)));
            }
            if live {
                if let Some(v) = field_vocab(QUEUE_LIVE_FIELDS, kw) {
                    return Some(v);
                }
            }
            table_vocab::<QueueAttributes>(kw, mask)
        };
        let selection = self.selection(name, &rest, object, &vocab, false)?;
        Ok(Command::DisplayQueue {
            queue_type: qt,
            type_filter,
            selection,
        })
    }

    pub(super) fn display_qstatus(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "QSTATUS", NameRule::Object, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let status_type = match self.take_option(&mut rest, "TYPE")? {
            None => QueueStatusType::Queue,
            Some((v, _)) if v == "QUEUE" => QueueStatusType::Queue,
            Some((v, _)) if v == "HANDLE" => QueueStatusType::Handle,
            Some((v, pos)) => return Err(self.bad_option("TYPE", v, &["QUEUE", "HANDLE"], pos)),
        };
        let selection = match status_type {
            QueueStatusType::Queue => {
                let vocab = |kw: &str| field_vocab(QSTATUS_QUEUE_FIELDS, kw);
                self.selection(name, &rest, "QSTATUS TYPE(QUEUE)", &vocab, true)?
            }
            QueueStatusType::Handle => {
                let vocab = |kw: &str| field_vocab(QSTATUS_HANDLE_FIELDS, kw);
                self.selection(name, &rest, "QSTATUS TYPE(HANDLE)", &vocab, true)?
            }
        };
        Ok(Command::DisplayQueueStatus {
            status_type,
            selection,
        })
    }

    pub(super) fn display_conn(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.name(obj, "CONN", NameRule::Object, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let conn_type = match self.take_option(&mut rest, "TYPE")? {
            None => ConnType::Conn,
            Some((v, pos)) => match v.as_str() {
                "CONN" => ConnType::Conn,
                "HANDLE" => ConnType::Handle,
                "ALL" => ConnType::All,
                _ => return Err(self.bad_option("TYPE", v, &["CONN", "HANDLE", "ALL"], pos)),
            },
        };
        let vocab = move |kw: &str| match conn_type {
            ConnType::Conn => field_vocab(CONN_FIELDS, kw),
            ConnType::Handle => field_vocab(CONN_HANDLE_FIELDS, kw),
            ConnType::All => {
                field_vocab(CONN_FIELDS, kw).or_else(|| field_vocab(CONN_HANDLE_FIELDS, kw))
            }
        };
        let selection = self.selection(name, &rest, "CONN", &vocab, true)?;
        Ok(Command::DisplayConnection {
            conn_type,
            selection,
        })
    }

    pub(super) fn display_channel(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "CHANNEL", NameRule::Channel, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let channel_type = match self.take_option(&mut rest, "CHLTYPE")? {
            None => None,
            Some((value, pos)) => match self.channel_type(value, pos)? {
                Ok(t) => Some(t),
                Err(unsupported) => return Ok(unsupported),
            },
        };
        let mask = channel_type.map(ChannelType::mask).unwrap_or(u32::MAX);
        let vocab = move |kw: &str| {
            if kw == "CHLTYPE" {
                return Some(("CHLTYPE", FilterKind::Keyword(ChannelType::KEYWORDS)));
            }
            table_vocab::<ChannelAttributes>(kw, mask)
        };
        let selection = self.selection(name, &rest, "CHANNEL", &vocab, false)?;
        Ok(Command::DisplayChannel {
            channel_type,
            selection,
        })
    }

    /// DISPLAY CHSTATUS(generic) [CHLTYPE(AMQP | SVRCONN)] [CLIENTID(generic)]
    /// [ALL | fields] [WHERE]. Without CHLTYPE the fields of both types are understood.
    pub(super) fn display_chstatus(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "CHSTATUS", NameRule::Channel, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let channel_type = match self.take_option(&mut rest, "CHLTYPE")? {
            None => None,
            Some((value, pos)) => match self.channel_type(value, pos)? {
                Ok(t) => Some(t),
                Err(unsupported) => return Ok(unsupported),
            },
        };
        let client_id = self.client_id(&mut rest)?;
        let detail = client_id.is_some();
        let vocab = move |kw: &str| {
            if kw == "CHLTYPE" {
                return Some(("CHLTYPE", FilterKind::Keyword(ChannelType::KEYWORDS)));
            }
            // CLIENTID records are AMQP clients'.
            if detail {
                return field_vocab(CHSTATUS_CLIENT_FIELDS, kw);
            }
            match channel_type {
                Some(ChannelType::Amqp) => field_vocab(CHSTATUS_FIELDS, kw),
                Some(ChannelType::Svrconn) => field_vocab(CHSTATUS_SVRCONN_FIELDS, kw),
                Some(_) => field_vocab(CHSTATUS_MESSAGE_FIELDS, kw),
                None if kw == "STATUS" => Some(("STATUS", FilterKind::Keyword(CHSTATUS_STATUSES))),
                None => field_vocab(CHSTATUS_FIELDS, kw)
                    .or_else(|| field_vocab(CHSTATUS_SVRCONN_FIELDS, kw))
                    .or_else(|| field_vocab(CHSTATUS_MESSAGE_FIELDS, kw)),
            }
        };
        let selection = self.selection(name, &rest, "CHSTATUS", &vocab, true)?;
        Ok(Command::DisplayChannelStatus {
            channel_type,
            client_id,
            selection,
        })
    }

    /// Removes CLIENTID(value) from `rest`: the client's container id, generic with a
    /// trailing `*`. Case is kept when quoted (unquoted words are upper case).
    fn client_id(&self, rest: &mut Vec<&Param>) -> Result<Option<NamePattern>, ParseError> {
        let Some(i) = rest.iter().position(|p| p.keyword == "CLIENTID") else {
            return Ok(None);
        };
        let p = rest.remove(i);
        if let Some(dup) = rest.iter().find(|q| q.keyword == "CLIENTID") {
            return Err(self.err(
                K::Duplicate {
                    keyword: "CLIENTID".into(),
                },
                dup.end,
            ));
        }
        let text = self.value_text(p)?.ok_or_else(|| {
            self.err(
                K::ValueRequired {
                    keyword: "CLIENTID".into(),
                },
                p.value_end,
            )
        })?;
        let (core, pattern) = match text.strip_suffix('*') {
            Some(prefix) => (prefix, NamePattern::Prefix(prefix.to_string())),
            None => (text.as_str(), NamePattern::Exact(text.clone())),
        };
        if core.contains('*') {
            return Err(self.err(K::Generic(text.clone()), p.value_end));
        }
        Ok(Some(pattern))
    }

    /// DISPLAY QMSTATUS [ALL] [fields]: no name, no WHERE (as DISPLAY QMGR).
    pub(super) fn display_qmstatus(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let vocab = |kw: &str| {
            if kw == "QMNAME" {
                return Some(("QMNAME", FilterKind::Text));
            }
            field_vocab(QMSTATUS_FIELDS, kw)
        };
        if let Some(p) = rest.iter().find(|p| p.keyword == "WHERE") {
            return Err(self.err(
                K::UnknownKeyword {
                    keyword: "WHERE".into(),
                    object: "QMSTATUS".into(),
                },
                p.end,
            ));
        }
        let selection = self.selection(
            NamePattern::Exact(String::new()),
            rest,
            "QMSTATUS",
            &vocab,
            false,
        )?;
        Ok(Command::DisplayQmgrStatus {
            request: selection.request,
        })
    }

    pub(super) fn display_qmgr(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let vocab = |kw: &str| {
            if kw == "QMNAME" {
                return Some(("QMNAME", FilterKind::Text));
            }
            table_vocab::<QmgrAttributes>(kw, u32::MAX)
        };
        for p in rest {
            if p.keyword == "WHERE" {
                return Err(self.err(
                    K::UnknownKeyword {
                        keyword: "WHERE".into(),
                        object: "QMGR".into(),
                    },
                    p.end,
                ));
            }
        }
        let selection = self.selection(
            NamePattern::Exact(String::new()),
            rest,
            "QMGR",
            &vocab,
            false,
        )?;
        Ok(Command::DisplayQmgr {
            request: selection.request,
        })
    }
}

/// A table row as a DISPLAY keyword: its canonical keyword and WHERE kind, if it applies
/// to any subtype in `mask`.
pub(super) fn table_vocab<D: AttributeSet>(
    kw: &str,
    mask: u32,
) -> Option<(&'static str, FilterKind)> {
    let (row, _) = D::lookup(kw)?;
    row.applies_to(mask)
        .then(|| (row.keyword, FilterKind::of_attr(row.kind)))
}

pub(super) fn field_vocab<S>(
    fields: &'static [StatusField<S>],
    kw: &str,
) -> Option<(&'static str, FilterKind)> {
    fields
        .iter()
        .find(|f| f.keyword == kw)
        .map(|f| (f.keyword, FilterKind::of_field(f.kind)))
}
