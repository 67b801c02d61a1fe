//! Generic names in channel authentication records: the channel profile (`SET
//! CHLAUTH('APP.*')`) and QMNAME patterns, where `*` stands for any run of characters
//! (none included) and may appear anywhere, any number of times.
//!
//! When several profiles match one channel, the most specific one applies. Ferry ranks
//! them as MQ describes it, by how much of the name they fix: a name without `*` first,
//! then the one with more fixed characters, then the one whose first `*` comes later
//! (`APP.SVR*` before `APP.*SVR`). `DISPLAY CHLAUTH(name) MATCH(RUNCHECK)` shows which
//! record a connection would meet.

use std::cmp::Ordering;

/// A channel profile or queue manager name pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericName {
    text: String,
}

/// How specific a generic name is; greater is more specific.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Specificity {
    exact: bool,
    fixed: usize,
    first_star: usize,
}

impl GenericName {
    /// The pattern as written (case kept: channel names are case sensitive).
    pub fn new(text: &str) -> Self {
        GenericName {
            text: text.to_string(),
        }
    }

    /// The pattern text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when the pattern holds a `*`.
    pub fn is_generic(&self) -> bool {
        self.text.contains('*')
    }

    /// True when `name` is one of the names the pattern stands for.
    pub fn matches(&self, name: &str) -> bool {
        crate::wildcard::matches(self.text.as_bytes(), name.as_bytes(), None)
    }

    /// How specific the pattern is, to rank the patterns matching one name.
    pub fn specificity(&self) -> Specificity {
        let fixed = self.text.chars().filter(|c| *c != '*').count();
        Specificity {
            exact: !self.is_generic(),
            fixed,
            first_star: self.text.find('*').unwrap_or(self.text.len()),
        }
    }

    /// Orders two patterns, most specific first.
    pub fn most_specific_first(a: &GenericName, b: &GenericName) -> Ordering {
        b.specificity().cmp(&a.specificity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_any_run() {
        let g = GenericName::new("SYSTEM.*");
        assert!(g.matches("SYSTEM.DEF.SVRCONN"));
        assert!(g.matches("SYSTEM."));
        assert!(!g.matches("APP.SVRCONN"));
        assert!(GenericName::new("*").matches(""));
        assert!(GenericName::new("*.SVRCONN").matches("APP.SVRCONN"));
        assert!(GenericName::new("A*B*C").matches("AxxBxxC"));
        assert!(!GenericName::new("A*B*C").matches("AxxCxxB"));
        assert!(GenericName::new("APP.SVRCONN").matches("APP.SVRCONN"));
        assert!(!GenericName::new("APP.SVRCONN").matches("app.svrconn"));
    }

    #[test]
    fn exact_names_outrank_generic_ones() {
        let mut v = [
            GenericName::new("*"),
            GenericName::new("SYSTEM.ADMIN.SVRCONN"),
            GenericName::new("SYSTEM.*"),
            GenericName::new("SYSTEM.ADMIN.*"),
        ];
        v.sort_by(GenericName::most_specific_first);
        let order: Vec<&str> = v.iter().map(GenericName::as_str).collect();
        assert_eq!(
            order,
            ["SYSTEM.ADMIN.SVRCONN", "SYSTEM.ADMIN.*", "SYSTEM.*", "*"]
        );
    }
}
