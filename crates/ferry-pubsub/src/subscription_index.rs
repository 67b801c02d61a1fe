//! Which subscriptions a publication reaches, found without testing every subscription.
//!
//! A subscription without a wildcard is filed under its topic string: a publication finds
//! those with one hash lookup. A subscription with a wildcard is filed under the literal
//! levels in front of its first wildcard ([`TopicFilter::literal_levels`]): `Price/+/Apple`
//! under `Price`, `#` and `*` at the root. A publication on `Price/Fruit/Apple` then tests
//! only the wildcard subscriptions filed at the root, `Price`, `Price/Fruit` and
//! `Price/Fruit/Apple`, the prefixes of its own topic string, each with one lookup (the
//! prefixes are slices of the topic string: nothing is allocated).
//!
//! The walk also tells how deep each wildcard subscription was filed, which is what MQ's
//! WILDCARD(BLOCK) needs: a wildcard made above a blocking topic node does not see its
//! publications.
//!
//! Matches come out in a fixed order (exact subscriptions in the order they were added,
//! then wildcard ones from the root down, each bucket in the order added), so the same
//! history fans out the same way, which the deterministic simulation relies on.

use crate::wildcard::TopicFilter;
use std::collections::HashMap;
use std::hash::Hash;

/// A subscription a publication reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match<K> {
    /// The subscription.
    pub key: K,
    /// For a wildcard subscription, how many literal levels precede its first wildcard
    /// (0: a wildcard in the first level); `None` for an exact subscription.
    pub wildcard_depth: Option<usize>,
}

/// One wildcard subscription in its bucket.
#[derive(Clone, Debug)]
struct Filed<K> {
    key: K,
    filter: TopicFilter,
}

/// Where a subscription is filed, to find it again on removal.
#[derive(Clone, Debug)]
enum Place {
    /// Under its topic string.
    Exact(Box<str>),
    /// A wildcard one, under its literal levels (`depth` of them; 0 is the root).
    Generic { prefix: Box<str>, depth: usize },
}

/// The subscriptions of a queue manager by what they match. `K` identifies a subscription
/// (the engine's subscription number).
#[derive(Clone, Debug)]
pub struct SubscriptionIndex<K> {
    exact: HashMap<Box<str>, Vec<K>>,
    /// Wildcard subscriptions with at least one literal level, by their literal levels.
    generic: HashMap<Box<str>, Vec<Filed<K>>>,
    /// Wildcard subscriptions whose first level holds a wildcard.
    root: Vec<Filed<K>>,
    places: HashMap<K, Place>,
}

impl<K> Default for SubscriptionIndex<K> {
    fn default() -> Self {
        SubscriptionIndex {
            exact: HashMap::new(),
            generic: HashMap::new(),
            root: Vec::new(),
            places: HashMap::new(),
        }
    }
}

impl<K: Copy + Eq + Hash> SubscriptionIndex<K> {
    /// Files subscription `key` with its filter. False (and nothing changes) when `key`
    /// is already filed.
    pub fn insert(&mut self, key: K, filter: TopicFilter) -> bool {
        if self.places.contains_key(&key) {
            return false;
        }
        let place = match filter.literal_levels() {
            None => {
                let topic: Box<str> = filter.exact_topic().unwrap_or_default().into();
                self.exact.entry(topic.clone()).or_default().push(key);
                Place::Exact(topic)
            }
            Some((prefix, depth)) => {
                let prefix: Box<str> = prefix.into();
                let filed = Filed { key, filter };
                if depth == 0 {
                    self.root.push(filed);
                } else {
                    self.generic.entry(prefix.clone()).or_default().push(filed);
                }
                Place::Generic { prefix, depth }
            }
        };
        self.places.insert(key, place);
        debug_assert!(self.places.contains_key(&key));
        true
    }

    /// Removes subscription `key`. False when it was not filed.
    pub fn remove(&mut self, key: K) -> bool {
        let Some(place) = self.places.remove(&key) else {
            return false;
        };
        match place {
            Place::Exact(topic) => {
                if let Some(keys) = self.exact.get_mut(&topic) {
                    keys.retain(|k| *k != key);
                    if keys.is_empty() {
                        self.exact.remove(&topic);
                    }
                }
            }
            Place::Generic { depth: 0, .. } => self.root.retain(|f| f.key != key),
            Place::Generic { prefix, .. } => {
                if let Some(filed) = self.generic.get_mut(&prefix) {
                    filed.retain(|f| f.key != key);
                    if filed.is_empty() {
                        self.generic.remove(&prefix);
                    }
                }
            }
        }
        debug_assert!(!self.places.contains_key(&key));
        true
    }

    /// How many subscriptions are filed.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Appends to `out` every subscription a publication on `topic` reaches (see the
    /// module comment for the order).
    pub fn matching(&self, topic: &str, out: &mut Vec<Match<K>>) {
        if let Some(keys) = self.exact.get(topic) {
            out.extend(keys.iter().map(|&key| Match {
                key,
                wildcard_depth: None,
            }));
        }
        let test = |filed: &[Filed<K>], depth: usize, out: &mut Vec<Match<K>>| {
            for f in filed {
                if f.filter.matches(topic) {
                    out.push(Match {
                        key: f.key,
                        wildcard_depth: Some(depth),
                    });
                }
            }
        };
        test(&self.root, 0, out);
        if self.generic.is_empty() {
            return;
        }
        // The prefixes of `topic` made of whole levels: up to each `/`, then all of it.
        let ends = topic
            .match_indices('/')
            .map(|(i, _)| i)
            .chain(std::iter::once(topic.len()));
        for (level, end) in ends.enumerate() {
            if let Some(filed) = self.generic.get(&topic[..end]) {
                test(filed, level + 1, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WildcardScheme::{Character, Topic};

    fn index(subs: &[(u32, &str, crate::WildcardScheme)]) -> SubscriptionIndex<u32> {
        let mut ix = SubscriptionIndex::default();
        for &(k, text, scheme) in subs {
            assert!(ix.insert(k, TopicFilter::new(text, scheme)));
        }
        ix
    }

    fn keys(ix: &SubscriptionIndex<u32>, topic: &str) -> Vec<u32> {
        let mut out = Vec::new();
        ix.matching(topic, &mut out);
        out.iter().map(|m| m.key).collect()
    }

    #[test]
    fn exact_and_wildcard_subscriptions_are_found_in_a_fixed_order() {
        let ix = index(&[
            (1, "Price/Fruit/Apple", Topic),
            (2, "#", Topic),
            (3, "Price/+/Apple", Topic),
            (4, "Price/#", Topic),
            (5, "Price/Fruit/Pear", Topic),
            (6, "Price/Fruit/Apple", Topic),
            (7, "Price/Fr*", Character),
            (8, "*", Character),
        ]);
        assert_eq!(keys(&ix, "Price/Fruit/Apple"), vec![1, 6, 2, 8, 3, 4, 7]);
        assert_eq!(keys(&ix, "Price"), vec![2, 8, 4]);
        assert_eq!(keys(&ix, "Other"), vec![2, 8]);
        assert_eq!(keys(&ix, "/Price/Fruit/Apple"), vec![2, 8]);
    }

    #[test]
    fn wildcard_depth_counts_the_literal_levels() {
        let ix = index(&[
            (1, "a/b/#", Topic),
            (2, "+/b/c", Topic),
            (3, "a/b/c", Topic),
        ]);
        let mut out = Vec::new();
        ix.matching("a/b/c", &mut out);
        assert_eq!(
            out,
            vec![
                Match {
                    key: 3,
                    wildcard_depth: None
                },
                Match {
                    key: 2,
                    wildcard_depth: Some(0)
                },
                Match {
                    key: 1,
                    wildcard_depth: Some(2)
                },
            ]
        );
    }

    #[test]
    fn a_leading_empty_level_is_a_level_of_its_own() {
        let ix = index(&[(1, "/#", Topic), (2, "/a*", Character), (3, "#", Topic)]);
        assert_eq!(keys(&ix, "/ab"), vec![3, 1, 2]);
        assert_eq!(keys(&ix, "ab"), vec![3]);
    }

    #[test]
    fn removal_forgets_the_subscription_and_nothing_else() {
        let mut ix = index(&[(1, "a/#", Topic), (2, "a/#", Topic), (3, "a/b", Topic)]);
        assert!(!ix.insert(1, TopicFilter::new("x", Topic)));
        assert!(ix.remove(1));
        assert!(!ix.remove(1));
        assert_eq!(keys(&ix, "a/b"), vec![3, 2]);
        assert!(ix.remove(2) && ix.remove(3));
        assert!(ix.is_empty());
        assert!(ix.generic.is_empty() && ix.exact.is_empty() && ix.root.is_empty());
    }

    #[test]
    fn escaped_characters_file_an_exact_subscription_under_the_topic_it_matches() {
        let ix = index(&[(1, "a%*%/b", Character)]);
        assert_eq!(keys(&ix, "a*/b"), vec![1]);
        assert_eq!(keys(&ix, "a%*%/b"), Vec::<u32>::new());
    }

    proptest::proptest! {
        /// The index finds exactly the subscriptions whose filter matches.
        #[test]
        fn the_index_agrees_with_testing_every_filter(
            filters in proptest::collection::vec("[ab#+*?/]{0,6}", 0..12),
            char_scheme in proptest::collection::vec(proptest::bool::ANY, 12),
            topic in "[ab#/]{0,6}",
        ) {
            let mut ix = SubscriptionIndex::default();
            let mut all = Vec::new();
            for (k, text) in filters.iter().enumerate() {
                let scheme = if char_scheme[k] { Character } else { Topic };
                let f = TopicFilter::new(text, scheme);
                all.push(f.clone());
                ix.insert(k, f);
            }
            let mut out = Vec::new();
            ix.matching(&topic, &mut out);
            let mut found: Vec<usize> = out.iter().map(|m| m.key).collect();
            found.sort_unstable();
            let expected: Vec<usize> = (0..all.len()).filter(|&k| all[k].matches(&topic)).collect();
            proptest::prop_assert_eq!(found, expected);
        }
    }
}
