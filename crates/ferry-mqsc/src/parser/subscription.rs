//! DEFINE, ALTER, DELETE and DISPLAY SUB, DISPLAY SBSTATUS, TPSTATUS and PUBSUB, and
//! CLEAR TOPICSTR. SUB's attributes are the `ferry-objects` SUB table's; status fields
//! are the tables of [`crate::display`].
//!
//! Subscription names may hold any character (quote them to keep case and blanks) and
//! be up to 10240 long. DEFINE needs TOPICSTR or TOPICOBJ (or LIKE); ALTER refuses, as
//! a syntax error, the attributes fixed when a subscription is made.

use super::display::{field_vocab, table_vocab, FilterKind};
use super::{NameRule, Param, Parser};
use crate::command::{
    Command, NamePattern, SubTypeFilter, SubscriptionFilter, SubscriptionRef, TopicStatusType,
};
use crate::display::{
    PUBSUB_FIELDS, SBSTATUS_FIELDS, TPSTATUS_PUB_FIELDS, TPSTATUS_SUB_FIELDS, TPSTATUS_TOPIC_FIELDS,
};
use crate::error::{ParseError, ParseErrorKind as K};
use ferry_objects::subscription::{ALTERABLE, SUB};
use ferry_objects::topic::MAX_TOPIC_STRING;
use ferry_objects::{AttributeSet, SubscriptionAttributes};

impl Parser<'_> {
    /// SUBID(hex) removed from `rest`: 48 hex digits, upper-cased.
    fn sub_id(&self, rest: &mut Vec<&Param>) -> Result<Option<String>, ParseError> {
        let Some(i) = rest.iter().position(|p| p.keyword == "SUBID") else {
            return Ok(None);
        };
        let p = rest.remove(i);
        let text = self.value_text(p)?.unwrap_or_default();
        let ok = text.len() == 48 && text.chars().all(|c| c.is_ascii_hexdigit());
        if !ok {
            return Err(self.err(
                K::BadName {
                    object: "SUBID".into(),
                    name: text,
                    reason: "a SUBID is 48 hexadecimal digits".into(),
                },
                p.value_end,
            ));
        }
        Ok(Some(text.to_ascii_uppercase()))
    }

    /// SUB(name) and/or SUBID(hex) of ALTER and DELETE SUB.
    fn sub_ref(&self, obj: &Param, rest: &mut Vec<&Param>) -> Result<SubscriptionRef, ParseError> {
        let id = self.sub_id(rest)?;
        let name = match (&obj.value, &id) {
            (None, Some(_)) => None,
            _ => Some(self.exact_name(obj, "SUB", NameRule::Subscription)?),
        };
        Ok(SubscriptionRef { name, id })
    }

    pub(super) fn define_sub(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "SUB", NameRule::Subscription)?;
        let topic_given = rest
            .iter()
            .any(|p| matches!(p.keyword.as_str(), "TOPICSTR" | "TOPICOBJ" | "LIKE"));
        if !topic_given {
            return Err(self.err(
                K::Missing {
                    command: "DEFINE SUB".into(),
                    keyword: "TOPICSTR or TOPICOBJ".into(),
                },
                self.text.len(),
            ));
        }
        let (like, replace, settings) =
            self.define_params::<SubscriptionAttributes>(rest, SUB, "SUB", NameRule::Subscription)?;
        Ok(Command::DefineSubscription {
            name,
            like,
            replace,
            settings,
        })
    }

    pub(super) fn alter_sub(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let mut rest: Vec<&Param> = rest.to_vec();
        let sub = self.sub_ref(obj, &mut rest)?;
        let mut seen = Vec::new();
        let mut settings = Vec::new();
        for p in &rest {
            if let Some((row, _)) = SubscriptionAttributes::lookup(&p.keyword) {
                if !row.read_only && !ALTERABLE.contains(&row.keyword) {
                    return Err(self.err(
                        K::Fixed {
                            keyword: row.keyword.into(),
                            object: "subscription".into(),
                        },
                        p.end,
                    ));
                }
            }
            settings.push(self.setting::<SubscriptionAttributes>(p, SUB, "SUB", &mut seen)?);
        }
        Ok(Command::AlterSubscription { sub, settings })
    }

    pub(super) fn delete_sub(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let mut rest: Vec<&Param> = rest.to_vec();
        let sub = self.sub_ref(obj, &mut rest)?;
        self.no_more(&rest)?;
        Ok(Command::DeleteSubscription { sub })
    }

    /// DISPLAY SUB (`status` false) or SBSTATUS (true): SUB(generic) or SUBID(hex),
    /// DURABLE(ALL|YES|NO), SUBTYPE(USER|PROXY|ADMIN|API|ALL), DISTYPE, ALL, fields,
    /// WHERE. DISPLAY SUB without ALL shows MQ's summary attributes only.
    pub(super) fn display_sub(
        &self,
        obj: &Param,
        rest: &[&Param],
        status: bool,
    ) -> Result<Command, ParseError> {
        let object = if status { "SBSTATUS" } else { "SUB" };
        let mut rest: Vec<&Param> = rest.to_vec();
        let id = self.sub_id(&mut rest)?;
        let name = match (&obj.value, &id) {
            (None, Some(_)) => NamePattern::Prefix(String::new()),
            _ => self.name(obj, object, NameRule::Subscription, true)?,
        };
        let durable = match self.take_option(&mut rest, "DURABLE")? {
            None => None,
            Some((v, pos)) => match v.as_str() {
                "ALL" => None,
                "YES" => Some(true),
                "NO" => Some(false),
                _ => return Err(self.bad_option("DURABLE", v, &["ALL", "YES", "NO"], pos)),
            },
        };
        let sub_type = match self.take_option(&mut rest, "SUBTYPE")? {
            None => SubTypeFilter::User,
            Some((v, pos)) => SubTypeFilter::from_keyword(&v)
                .ok_or_else(|| self.bad_option("SUBTYPE", v, SubTypeFilter::KEYWORDS, pos))?,
        };
        if !status {
            // DISTYPE(RESOLVED|DEFINED): Ferry shows the resolved topic string either way
            // (TOPICOBJ is shown beside it).
            if let Some((v, pos)) = self.take_option(&mut rest, "DISTYPE")? {
                if v != "RESOLVED" && v != "DEFINED" {
                    return Err(self.bad_option("DISTYPE", v, &["RESOLVED", "DEFINED"], pos));
                }
            }
        }
        let asked_all = rest.iter().any(|p| p.keyword == "ALL");
        let vocab = move |kw: &str| {
            if status {
                if kw == "SUB" || kw == "SUBID" {
                    return Some((if kw == "SUB" { "SUB" } else { "SUBID" }, FilterKind::Text));
                }
                field_vocab(SBSTATUS_FIELDS, kw)
            } else {
                if kw == "SUB" {
                    return Some(("SUB", FilterKind::Text));
                }
                table_vocab::<SubscriptionAttributes>(kw, SUB)
            }
        };
        let mut selection = self.selection(name, &rest, object, &vocab, status)?;
        if !status && !asked_all {
            // MQ: DISPLAY SUB(name) shows the summary unless ALL is asked for.
            selection.request.all = false;
        }
        let filter = SubscriptionFilter {
            id,
            durable,
            sub_type,
        };
        Ok(if status {
            Command::DisplaySubscriptionStatus { selection, filter }
        } else {
            Command::DisplaySubscription { selection, filter }
        })
    }

    /// The topic string in `p`'s parentheses (TPSTATUS, TOPICSTR): as typed (quote it to
    /// keep case), at most 10240 characters.
    fn topic_string_value(&self, p: &Param, object: &str) -> Result<String, ParseError> {
        let missing = || {
            self.err(
                K::MissingName {
                    object: object.to_string(),
                },
                p.value_end,
            )
        };
        if p.value.is_none() {
            return Err(missing());
        }
        let text = self.value_text(p)?.unwrap_or_default();
        if text.len() > MAX_TOPIC_STRING {
            return Err(self.err(
                K::BadName {
                    object: object.to_string(),
                    name: format!("{}...", text.chars().take(32).collect::<String>()),
                    reason: format!("a topic string is at most {MAX_TOPIC_STRING} characters"),
                },
                p.value_end,
            ));
        }
        Ok(text)
    }

    /// DISPLAY TPSTATUS(topic) [TYPE(TOPIC|SUB|PUB)] [ALL | fields] [WHERE].
    pub(super) fn display_tpstatus(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let topic = self.topic_string_value(obj, "TPSTATUS")?;
        let mut rest: Vec<&Param> = rest.to_vec();
        let status_type = match self.take_option(&mut rest, "TYPE")? {
            None => TopicStatusType::Topic,
            Some((v, pos)) => match v.as_str() {
                "TOPIC" => TopicStatusType::Topic,
                "SUB" => TopicStatusType::Sub,
                "PUB" => TopicStatusType::Pub,
                _ => return Err(self.bad_option("TYPE", v, &["TOPIC", "SUB", "PUB"], pos)),
            },
        };
        let vocab = move |kw: &str| {
            if kw == "TOPICSTR" {
                return Some(("TOPICSTR", FilterKind::Text));
            }
            match status_type {
                TopicStatusType::Topic => field_vocab(TPSTATUS_TOPIC_FIELDS, kw),
                TopicStatusType::Sub => field_vocab(TPSTATUS_SUB_FIELDS, kw),
                TopicStatusType::Pub => field_vocab(TPSTATUS_PUB_FIELDS, kw),
            }
        };
        let selection = self.selection(
            NamePattern::Exact(topic.clone()),
            &rest,
            "TPSTATUS",
            &vocab,
            true,
        )?;
        Ok(Command::DisplayTopicStatus {
            topic,
            status_type,
            selection,
        })
    }

    /// DISPLAY PUBSUB [TYPE(LOCAL|ALL)] [ALL | fields]: PARENT and CHILD need hierarchies
    /// (FRY9002E).
    pub(super) fn display_pubsub(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        self.bare(obj)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        if let Some((v, pos)) = self.take_option(&mut rest, "TYPE")? {
            match v.as_str() {
                "LOCAL" | "ALL" => {}
                "PARENT" | "CHILD" => {
                    return Ok(Command::Unsupported {
                        what: format!("DISPLAY PUBSUB TYPE({v}) (publish/subscribe hierarchies)"),
                    })
                }
                _ => {
                    return Err(self.bad_option(
                        "TYPE",
                        v,
                        &["LOCAL", "PARENT", "CHILD", "ALL"],
                        pos,
                    ))
                }
            }
        }
        if let Some(p) = rest.iter().find(|p| p.keyword == "WHERE") {
            return Err(self.err(
                K::UnknownKeyword {
                    keyword: "WHERE".into(),
                    object: "PUBSUB".into(),
                },
                p.end,
            ));
        }
        let vocab = |kw: &str| {
            if kw == "QMNAME" {
                return Some(("QMNAME", FilterKind::Text));
            }
            field_vocab(PUBSUB_FIELDS, kw)
        };
        let selection = self.selection(
            NamePattern::Exact(String::new()),
            &rest,
            "PUBSUB",
            &vocab,
            true,
        )?;
        Ok(Command::DisplayPubSub {
            request: selection.request,
        })
    }

    /// CLEAR TOPICSTR(string) CLRTYPE(RETAINED) [SCOPE(LOCAL)]: SCOPE(GLOBAL) needs
    /// hierarchies (FRY9002E).
    pub(super) fn clear_topic_string(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let topic = self.topic_string_value(obj, "TOPICSTR")?;
        let mut rest: Vec<&Param> = rest.to_vec();
        match self.take_option(&mut rest, "CLRTYPE")? {
            Some((v, _)) if v == "RETAINED" => {}
            Some((v, pos)) => return Err(self.bad_option("CLRTYPE", v, &["RETAINED"], pos)),
            None => {
                return Err(self.err(
                    K::Missing {
                        command: "CLEAR TOPICSTR".into(),
                        keyword: "CLRTYPE(RETAINED)".into(),
                    },
                    self.text.len(),
                ))
            }
        }
        if let Some((v, pos)) = self.take_option(&mut rest, "SCOPE")? {
            match v.as_str() {
                "LOCAL" => {}
                "GLOBAL" => {
                    return Ok(Command::Unsupported {
                        what: "CLEAR TOPICSTR SCOPE(GLOBAL) (publish/subscribe hierarchies)".into(),
                    })
                }
                _ => return Err(self.bad_option("SCOPE", v, &["LOCAL", "GLOBAL"], pos)),
            }
        }
        self.no_more(&rest)?;
        Ok(Command::ClearTopicString { topic })
    }
}
