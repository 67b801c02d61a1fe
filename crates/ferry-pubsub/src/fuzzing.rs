//! What the fuzz target and the property tests drive: any text as a topic string, as the
//! two halves of an object and an object string, and as a subscription pattern under
//! both wildcard schemes (alone and in a [`SubscriptionIndex`]), with the invariants that must hold whatever the input.

use crate::{combine, SubscriptionIndex, TopicFilter, TopicString, WildcardScheme};

/// Decodes `text` every way; panics only when an invariant breaks.
pub fn check_text(text: &str) {
    if let Ok(t) = TopicString::new(text) {
        assert_eq!(t.levels().count(), text.matches('/').count() + 1);
    }
    let half = text.len() / 2;
    if let (Some(a), Some(b)) = (text.get(..half), text.get(half..)) {
        if let Ok(t) = combine(Some(a), b) {
            assert!(t.as_str().starts_with(a), "the object's string comes first");
        }
        for scheme in [WildcardScheme::Topic, WildcardScheme::Character] {
            let f = TopicFilter::new(text, scheme);
            let _ = f.matches(a);
            let _ = f.matches(b);
            let _ = f.matches(text);
            if !f.is_generic() && scheme == WildcardScheme::Topic {
                assert!(
                    f.matches(text),
                    "a pattern without wildcards matches itself"
                );
            }
            // The index finds the filter exactly when the filter matches.
            let mut index = SubscriptionIndex::default();
            index.insert(0u8, f.clone());
            for topic in [a, b, text] {
                let mut out = Vec::new();
                index.matching(topic, &mut out);
                assert_eq!(!out.is_empty(), f.matches(topic), "index and filter agree");
            }
        }
    }
}
