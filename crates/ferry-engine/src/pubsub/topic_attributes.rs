//! The topic attributes in force at a topic string: MQ's ASPARENT resolved over the
//! administrative nodes (topic objects) on the string's path, nearest first, and which
//! of those nodes block wildcard subscriptions made above them (WILDCARD(BLOCK)).

use crate::qmgr::QueueManager;
use ferry_objects::topic::{ResolvedTopicAttributes, TopicAttributes, WildcardOperation};

/// Most topic strings whose path is remembered: a publisher on ever new strings costs
/// memory up to this, then the cache starts again.
const MAX_CACHED_PATHS: usize = 4096;

/// What the path of a topic string says.
#[derive(Debug)]
pub(crate) struct TopicPath {
    /// The topic string.
    pub topic: std::rc::Rc<str>,
    /// The attributes in force.
    pub attributes: ResolvedTopicAttributes,
    /// The number of levels of the shallowest WILDCARD(BLOCK) node on the path: wildcard
    /// subscriptions filed above it (fewer literal levels) do not see the publication.
    pub blocked_above: Option<usize>,
    /// The encoded properties a copy of a publication without properties of its own
    /// carries (MQTopicString, MQPubLevel).
    pub copy_properties: bytes::Bytes,
}

/// The root of the queue manager's administrative topics (MQ's SYSTEM.ADMIN.TOPIC).
pub const ADMIN_TOPIC: &str = "$SYS/MQ";
/// Its levels: wildcard subscriptions with fewer literal levels do not see below it.
pub(crate) const ADMIN_TOPIC_LEVELS: usize = 2;

/// True for `$SYS/MQ` and the topics below it, which wildcard subscriptions made above
/// it do not match (as MQ blocks them: its SYSTEM.ADMIN.TOPIC is WILDCARD(BLOCK)).
pub fn is_admin_topic(topic: &str) -> bool {
    topic
        .strip_prefix(ADMIN_TOPIC)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// True when a subscription to `filter` may receive publications on `topic`'s
/// administrative branch: its topic string names `$SYS/MQ` literally.
pub(crate) fn admin_topic_visible(topic: &str, filter: &str) -> bool {
    !is_admin_topic(topic) || filter == ADMIN_TOPIC || filter.starts_with("$SYS/MQ/")
}

impl QueueManager {
    /// [`QueueManager::topic_path`], remembered per topic string until a topic object
    /// changes (at most [`MAX_CACHED_PATHS`] strings: then it starts again), for the
    /// publish path.
    pub(crate) fn cached_topic_path(&self, topic: &str) -> std::rc::Rc<TopicPath> {
        if let Some(p) = self.topic_paths.borrow().get(topic) {
            return p.clone();
        }
        let path = std::rc::Rc::new(self.topic_path(topic));
        let mut cache = self.topic_paths.borrow_mut();
        if cache.len() >= MAX_CACHED_PATHS {
            cache.clear();
        }
        cache.insert(topic.to_string(), path.clone());
        path
    }

    /// The attributes in force at `topic`.
    pub(crate) fn topic_attributes(&self, topic: &str) -> ResolvedTopicAttributes {
        self.topic_path(topic).attributes
    }

    /// The topic objects on `topic`'s path with the number of levels of their node,
    /// nearest first: the prefixes of `topic` made of whole levels, the string itself
    /// first, then the root (the empty string, SYSTEM.BASE.TOPIC's).
    pub(crate) fn topic_objects_on_path<'a>(
        &'a self,
        topic: &str,
    ) -> Vec<(usize, &'a ferry_objects::TopicDefinition)> {
        let ends = topic
            .match_indices('/')
            .map(|(i, _)| i)
            .chain(std::iter::once(topic.len()));
        let prefixes: Vec<(usize, &str)> = ends
            .enumerate()
            .map(|(level, end)| (level + 1, &topic[..end]))
            .collect();
        let root_seen = prefixes.iter().any(|(_, p)| p.is_empty());
        let root = (!root_seen).then_some((0, ""));
        prefixes
            .into_iter()
            .rev()
            .chain(root)
            .filter_map(|(levels, prefix)| {
                let name = self.topic_strings.get(prefix)?;
                Some((levels, self.topics.get(name)?))
            })
            .collect()
    }

    /// The attributes in force at `topic` and its blocking nodes.
    pub(crate) fn topic_path(&self, topic: &str) -> TopicPath {
        let mut nearest_first: Vec<&TopicAttributes> = Vec::new();
        let mut blocked_above = None;
        for (levels, def) in self.topic_objects_on_path(topic) {
            if def.attributes.wildcard == WildcardOperation::Block {
                blocked_above = Some(levels);
            }
            nearest_first.push(&def.attributes);
        }
        if is_admin_topic(topic) {
            // MQ's SYSTEM.ADMIN.TOPIC ($SYS/MQ) is WILDCARD(BLOCK), always.
            blocked_above =
                Some(blocked_above.map_or(ADMIN_TOPIC_LEVELS, |b| b.min(ADMIN_TOPIC_LEVELS)));
        }
        TopicPath {
            topic: topic.into(),
            attributes: ResolvedTopicAttributes::resolve(nearest_first),
            blocked_above,
            copy_properties: crate::pubsub::publish::publication_properties(topic, &[])
                .map(|p| p.encode())
                .unwrap_or_default(),
        }
    }
}
