//! What a subscription's topic string matches.
//!
//! - **Topic-based** (MQSO_WILDCARD_TOPIC, the default; WSCHEMA(TOPIC)): a level that is
//!   exactly `#` matches any number of whole levels, none included, and a level that is
//!   exactly `+` matches one level; elsewhere they are ordinary characters (`a#` is
//!   literal). `Price/#` matches `Price` and `Price/Fruit/Apple`; `Price/+/Apple` matches
//!   `Price/Fruit/Apple` only.
//! - **Character-based** (MQSO_WILDCARD_CHAR; WSCHEMA(CHAR), MQ version 6's): `*` matches
//!   any run of characters, `/` included, `?` one character, and `%` makes the character
//!   after it ordinary (`%*`, `%?`, `%%`).
//!
//! Both match in one pass with a single backtrack point (the classic glob algorithm, over
//! levels or over characters), so a hostile pattern costs O(pattern × topic) at worst.

/// Which wildcard characters a subscription uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WildcardScheme {
    /// `#` and `+`, whole levels only (MQSO_WILDCARD_TOPIC).
    Topic,
    /// `*`, `?` and `%` escapes, anywhere (MQSO_WILDCARD_CHAR).
    Character,
}

/// One element of a pattern, for the glob algorithm.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Element<T> {
    /// Matches exactly this.
    Literal(T),
    /// Matches any one unit.
    One,
    /// Matches any run of units, none included.
    Any,
}

/// A subscription's topic string, read under its wildcard scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopicFilter {
    text: String,
    scheme: WildcardScheme,
    /// The pattern over levels (topic-based) or characters (character-based).
    levels: Vec<Element<String>>,
    chars: Vec<Element<char>>,
}

impl TopicFilter {
    /// `text` read under `scheme`.
    pub fn new(text: &str, scheme: WildcardScheme) -> Self {
        let (levels, chars) = match scheme {
            WildcardScheme::Topic => (
                text.split('/')
                    .map(|level| match level {
                        "#" => Element::Any,
                        "+" => Element::One,
                        other => Element::Literal(other.to_string()),
                    })
                    .collect(),
                Vec::new(),
            ),
            WildcardScheme::Character => {
                let mut out = Vec::new();
                let mut it = text.chars();
                while let Some(c) = it.next() {
                    out.push(match c {
                        '*' => Element::Any,
                        '?' => Element::One,
                        // A trailing `%` stands for itself.
                        '%' => Element::Literal(it.next().unwrap_or('%')),
                        other => Element::Literal(other),
                    });
                }
                (Vec::new(), out)
            }
        };
        TopicFilter {
            text: text.to_string(),
            scheme,
            levels,
            chars,
        }
    }

    /// The subscription's topic string, as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its scheme.
    pub fn scheme(&self) -> WildcardScheme {
        self.scheme
    }

    /// True when it holds a wildcard (it may match more than one topic).
    pub fn is_generic(&self) -> bool {
        match self.scheme {
            WildcardScheme::Topic => self
                .levels
                .iter()
                .any(|e| !matches!(e, Element::Literal(_))),
            WildcardScheme::Character => {
                self.chars.iter().any(|e| !matches!(e, Element::Literal(_)))
            }
        }
    }

    /// For a filter without a wildcard, the one topic string it matches (the text with
    /// `%` escapes removed under the character scheme); `None` for a filter with one.
    pub fn exact_topic(&self) -> Option<String> {
        if self.is_generic() {
            return None;
        }
        Some(match self.scheme {
            WildcardScheme::Topic => self.text.clone(),
            WildcardScheme::Character => self
                .chars
                .iter()
                .filter_map(|e| match e {
                    Element::Literal(c) => Some(*c),
                    _ => None,
                })
                .collect(),
        })
    }

    /// For a filter with a wildcard: the literal text of its whole levels before the level
    /// holding the first wildcard, and how many levels that is (0: the wildcard is in the
    /// first level, and any topic may match). Every topic the filter matches starts with
    /// those levels, which is what lets [`crate::SubscriptionIndex`] file it there. `None`
    /// for a filter without a wildcard.
    pub fn literal_levels(&self) -> Option<(String, usize)> {
        if !self.is_generic() {
            return None;
        }
        match self.scheme {
            WildcardScheme::Topic => {
                let literal: Vec<&str> = self
                    .levels
                    .iter()
                    .map_while(|e| match e {
                        Element::Literal(l) => Some(l.as_str()),
                        _ => None,
                    })
                    .collect();
                Some((literal.join("/"), literal.len()))
            }
            WildcardScheme::Character => {
                let literal: String = self
                    .chars
                    .iter()
                    .map_while(|e| match e {
                        Element::Literal(c) => Some(*c),
                        _ => None,
                    })
                    .collect();
                Some(match literal.rfind('/') {
                    Some(end) => (literal[..end].to_string(), literal.matches('/').count()),
                    None => (String::new(), 0),
                })
            }
        }
    }

    /// True when a publication on `topic` reaches the subscription.
    pub fn matches(&self, topic: &str) -> bool {
        match self.scheme {
            WildcardScheme::Topic => {
                let levels: Vec<&str> = topic.split('/').collect();
                glob(&self.levels, &levels, |p, l| p == l)
            }
            WildcardScheme::Character => {
                let chars: Vec<char> = topic.chars().collect();
                glob(&self.chars, &chars, |p, c| p == c)
            }
        }
    }
}

/// The glob algorithm over any units: `Any` matches a run, `One` a unit, `Literal` an
/// equal unit. One backtrack point (the last `Any`) suffices.
fn glob<P, U>(pattern: &[Element<P>], units: &[U], equal: impl Fn(&P, &U) -> bool) -> bool {
    let (mut p, mut u) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while u < units.len() {
        match pattern.get(p) {
            Some(Element::Any) => {
                star = Some((p, u));
                p += 1;
            }
            Some(Element::One) => {
                p += 1;
                u += 1;
            }
            Some(Element::Literal(x)) if equal(x, &units[u]) => {
                p += 1;
                u += 1;
            }
            _ => match star {
                Some((sp, su)) => {
                    p = sp + 1;
                    u = su + 1;
                    star = Some((sp, su + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|e| matches!(e, Element::Any))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn topic(p: &str) -> TopicFilter {
        TopicFilter::new(p, WildcardScheme::Topic)
    }

    fn chars(p: &str) -> TopicFilter {
        TopicFilter::new(p, WildcardScheme::Character)
    }

    #[test]
    fn topic_wildcards_fill_whole_levels() {
        assert!(topic("Price/#").matches("Price"));
        assert!(topic("Price/#").matches("Price/Fruit/Apple"));
        assert!(!topic("Price/#").matches("Prices/Fruit"));
        assert!(topic("Price/+/Apple").matches("Price/Fruit/Apple"));
        assert!(!topic("Price/+/Apple").matches("Price/Fruit/Red/Apple"));
        assert!(!topic("Price/+").matches("Price"));
        assert!(topic("#").matches("") && topic("#").matches("a/b/c"));
        assert!(topic("a/#/z").matches("a/z") && topic("a/#/z").matches("a/b/c/z"));
        assert!(topic("+/+").matches("/a"), "an empty level is a level");
        // Not a whole level: ordinary characters.
        assert!(topic("a#").matches("a#") && !topic("a#").matches("ab"));
        assert!(topic("Price/Fruit").matches("Price/Fruit"));
        assert!(
            !topic("Price/Fruit").matches("price/fruit"),
            "case sensitive"
        );
        assert!(topic("Price/#").is_generic() && !topic("a#/b").is_generic());
    }

    #[test]
    fn character_wildcards_cross_levels_and_escape() {
        assert!(chars("Price/*").matches("Price/Fruit/Apple"));
        assert!(chars("Pri?e").matches("Price"));
        assert!(!chars("Pri?e").matches("Prie"));
        assert!(chars("*").matches(""));
        assert!(chars("a%*b").matches("a*b") && !chars("a%*b").matches("axb"));
        assert!(chars("100%%").matches("100%"));
        assert!(!chars("a%*b").is_generic() && chars("a*").is_generic());
    }

    proptest! {
        /// A topic without wildcard characters matches itself, under both schemes, and
        /// `#` and `*` match every topic.
        #[test]
        fn literal_topics_match_themselves(t in "[a-zA-Z0-9/]{0,40}") {
            prop_assert!(topic(&t).matches(&t));
            prop_assert!(chars(&t).matches(&t));
            prop_assert!(topic("#").matches(&t));
            prop_assert!(chars("*").matches(&t));
        }

        /// Any pattern and topic: matching ends (no panic, bounded work).
        #[test]
        fn any_pattern_is_total(p in "[a#+*?%/]{0,30}", t in "[a/]{0,30}") {
            let _ = topic(&p).matches(&t);
            let _ = chars(&p).matches(&t);
            crate::fuzzing::check_text(&p);
        }
    }
}
