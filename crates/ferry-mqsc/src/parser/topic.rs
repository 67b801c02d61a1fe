//! DEFINE, ALTER and DISPLAY TOPIC: topic objects, whose attributes are the
//! `ferry-objects` TOPIC table's. DEFINE needs TOPICSTR; ALTER cannot change it. TYPE is
//! LOCAL (TYPE(CLUSTER), and a CLUSTER other than blank, answer FRY9002E until Ferry has
//! clusters).

use super::display::{table_vocab, FilterKind};
use super::{NameRule, Param, Parser};
use crate::command::{Command, Setting};
use crate::error::{ParseError, ParseErrorKind as K};
use ferry_objects::topic::LOCAL;
use ferry_objects::{AttrValue, TopicAttributes, TopicType};

/// DISPLAY TOPIC's TYPE: LOCAL, or ALL (every topic object Ferry has is local).
const DISPLAY_TYPES: &[&str] = &["LOCAL", "ALL"];

impl Parser<'_> {
    /// TYPE's value on DEFINE and ALTER: LOCAL, or the FRY9002E answer for CLUSTER.
    fn topic_type(&self, rest: &mut Vec<&Param>) -> Result<Result<(), Command>, ParseError> {
        let Some((value, pos)) = self.take_option(rest, "TYPE")? else {
            return Ok(Ok(()));
        };
        if TopicType::from_keyword(&value).is_some() {
            return Ok(Ok(()));
        }
        if TopicType::LATER.contains(&value.as_str()) {
            return Ok(Err(Command::Unsupported {
                what: format!("TOPIC TYPE({value})"),
            }));
        }
        let mut allowed = TopicType::KEYWORDS.to_vec();
        allowed.extend_from_slice(TopicType::LATER);
        Err(self.bad_option("TYPE", value, &allowed, pos))
    }

    /// CLUSTER other than blank: the FRY9002E answer (clusters come later).
    fn topic_cluster(settings: &[Setting]) -> Option<Command> {
        let cluster = settings.iter().find(|s| s.keyword == "CLUSTER")?;
        match &cluster.value {
            AttrValue::Text(c) if !c.trim().is_empty() => Some(Command::Unsupported {
                what: format!("TOPIC CLUSTER({}) (clusters)", c.trim()),
            }),
            _ => None,
        }
    }

    pub(super) fn define_topic(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "TOPIC", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        if let Err(unsupported) = self.topic_type(&mut rest)? {
            return Ok(unsupported);
        }
        if !rest.iter().any(|p| p.keyword == "TOPICSTR") {
            return Err(self.err(
                K::Missing {
                    command: "DEFINE TOPIC".into(),
                    keyword: "TOPICSTR".into(),
                },
                self.text.len(),
            ));
        }
        let (like, replace, settings) =
            self.define_params::<TopicAttributes>(&rest, LOCAL, "TOPIC", NameRule::Object)?;
        if let Some(unsupported) = Self::topic_cluster(&settings) {
            return Ok(unsupported);
        }
        Ok(Command::DefineTopic {
            name,
            like,
            replace,
            settings,
        })
    }

    pub(super) fn alter_topic(&self, obj: &Param, rest: &[&Param]) -> Result<Command, ParseError> {
        let name = self.exact_name(obj, "TOPIC", NameRule::Object)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        if let Err(unsupported) = self.topic_type(&mut rest)? {
            return Ok(unsupported);
        }
        if let Some(p) = rest.iter().find(|p| p.keyword == "TOPICSTR") {
            return Err(self.err(
                K::Fixed {
                    keyword: "TOPICSTR".into(),
                    object: "topic object".into(),
                },
                p.value_end,
            ));
        }
        let mut seen = Vec::new();
        let settings: Vec<Setting> = rest
            .iter()
            .map(|p| self.setting::<TopicAttributes>(p, LOCAL, "TOPIC", &mut seen))
            .collect::<Result<_, _>>()?;
        if let Some(unsupported) = Self::topic_cluster(&settings) {
            return Ok(unsupported);
        }
        Ok(Command::AlterTopic { name, settings })
    }

    pub(super) fn display_topic(
        &self,
        obj: &Param,
        rest: &[&Param],
    ) -> Result<Command, ParseError> {
        let name = self.name(obj, "TOPIC", NameRule::Object, true)?;
        let mut rest: Vec<&Param> = rest.to_vec();
        if let Some((value, pos)) = self.take_option(&mut rest, "TYPE")? {
            if TopicType::LATER.contains(&value.as_str()) {
                return Ok(Command::Unsupported {
                    what: format!("DISPLAY TOPIC TYPE({value})"),
                });
            }
            if !DISPLAY_TYPES.contains(&value.as_str()) {
                let mut allowed = DISPLAY_TYPES.to_vec();
                allowed.extend_from_slice(TopicType::LATER);
                return Err(self.bad_option("TYPE", value, &allowed, pos));
            }
        }
        let vocab = |kw: &str| {
            if kw == "TYPE" {
                return Some(("TYPE", FilterKind::Keyword(TopicType::KEYWORDS)));
            }
            table_vocab::<TopicAttributes>(kw, LOCAL)
        };
        let selection = self.selection(name, &rest, "TOPIC", &vocab, false)?;
        Ok(Command::DisplayTopic { selection })
    }
}
