//! Authority profiles: an object name, or a generic profile that stands for many.
//!
//! Names are split into qualifiers at `.`. In a generic profile `?` stands for one
//! character and `*` for any run of characters, both within one qualifier; `**`, a
//! whole qualifier of its own and at most once, stands for any number of qualifiers,
//! none included (`APP.**` covers `APP`, `APP.IN` and `APP.IN.1`).
//!
//! When several profiles of one entity cover an object, only the most specific one
//! applies. As MQ ranks them, profiles are compared from the left; where they first
//! differ, an ordinary character is more specific than `?`, which is more specific than
//! `*`, which is more specific than `**` (`AB.C*` before `AB.*`).

use std::cmp::Ordering;

/// The longest profile: an object name's 48 characters.
pub const MAX_PROFILE_LENGTH: usize = 48;

/// The profile that holds CRT: who may create objects of a type.
pub const CLASS_PROFILE: &str = "@class";

/// The profile of the queue manager object's records.
pub const QMGR_PROFILE: &str = "self";

/// Why a profile is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// Empty or longer than [`MAX_PROFILE_LENGTH`].
    #[error("a profile is 1 to {MAX_PROFILE_LENGTH} characters long")]
    Length,
    /// A character object names cannot hold.
    #[error("'{0}' cannot appear in a profile")]
    Character(char),
    /// `**` that is not a whole qualifier, or more than one of them.
    #[error("'**' must be a whole qualifier and may appear once")]
    DoubleStar,
}

/// A profile: an object name or a generic pattern.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Profile {
    text: String,
}

/// One element of a profile, for ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Char(u8),
    One,
    Run,
    Qualifiers,
}

impl Token {
    fn rank(self) -> u8 {
        match self {
            Token::Char(_) => 3,
            Token::One => 2,
            Token::Run => 1,
            Token::Qualifiers => 0,
        }
    }
}

impl Profile {
    /// Checks `text` as a profile (case kept: object names are case sensitive).
    pub fn parse(text: &str) -> Result<Self, ProfileError> {
        if text == CLASS_PROFILE || text == QMGR_PROFILE {
            return Ok(Profile { text: text.into() });
        }
        if text.is_empty() || text.chars().count() > MAX_PROFILE_LENGTH {
            return Err(ProfileError::Length);
        }
        if let Some(c) = text
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "._/%?*".contains(*c)))
        {
            return Err(ProfileError::Character(c));
        }
        let mut double = 0;
        for q in text.split('.') {
            if q.contains("**") {
                if q != "**" {
                    return Err(ProfileError::DoubleStar);
                }
                double += 1;
            }
        }
        if double > 1 {
            return Err(ProfileError::DoubleStar);
        }
        Ok(Profile { text: text.into() })
    }

    /// A profile taken as it is, for keys that are never matched against.
    pub(super) fn parse_unchecked(text: &str) -> Self {
        Profile { text: text.into() }
    }

    /// The profile as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// True when it holds a wildcard.
    pub fn is_generic(&self) -> bool {
        self.text.contains(['*', '?'])
    }

    /// True when the profile covers object `name`.
    pub fn matches(&self, name: &str) -> bool {
        if !self.is_generic() {
            return self.text == name;
        }
        let pattern: Vec<&str> = self.text.split('.').collect();
        let name: Vec<&str> = name.split('.').collect();
        match pattern.iter().position(|q| *q == "**") {
            None => qualifiers_match(&pattern, &name),
            Some(at) => {
                let (head, tail) = (&pattern[..at], &pattern[at + 1..]);
                name.len() >= head.len() + tail.len()
                    && qualifiers_match(head, &name[..head.len()])
                    && qualifiers_match(tail, &name[name.len() - tail.len()..])
            }
        }
    }

    fn tokens(&self) -> Vec<Token> {
        let bytes = self.text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'*' if bytes.get(i + 1) == Some(&b'*') => {
                    out.push(Token::Qualifiers);
                    i += 2;
                    continue;
                }
                b'*' => out.push(Token::Run),
                b'?' => out.push(Token::One),
                b => out.push(Token::Char(b)),
            }
            i += 1;
        }
        out
    }

    /// Orders two profiles, most specific first (ties: by text, so the order is total).
    pub fn most_specific_first(a: &Profile, b: &Profile) -> Ordering {
        let (ta, tb) = (a.tokens(), b.tokens());
        for (x, y) in ta.iter().zip(tb.iter()) {
            if x.rank() != y.rank() {
                return y.rank().cmp(&x.rank());
            }
        }
        tb.len().cmp(&ta.len()).then_with(|| a.text.cmp(&b.text))
    }
}

fn qualifiers_match(pattern: &[&str], name: &[&str]) -> bool {
    pattern.len() == name.len()
        && pattern
            .iter()
            .zip(name)
            .all(|(p, n)| qualifier_match(p.as_bytes(), n.as_bytes()))
}

/// `*` matches any run within the qualifier, `?` one character.
fn qualifier_match(pattern: &[u8], name: &[u8]) -> bool {
    crate::wildcard::matches(pattern, name, Some(b'?'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Profile {
        Profile::parse(text).unwrap()
    }

    #[test]
    fn wildcards_stay_within_qualifiers_and_double_stars_cross_them() {
        assert!(p("APP.*").matches("APP.IN"));
        assert!(!p("APP.*").matches("APP.IN.1"));
        assert!(p("APP.**").matches("APP.IN.1"));
        assert!(p("APP.**").matches("APP"));
        assert!(p("**").matches("ANYTHING.AT.ALL"));
        assert!(p("**.REPLY").matches("A.B.REPLY"));
        assert!(!p("**.REPLY").matches("A.B.REPLY.X"));
        assert!(p("A.**.Z").matches("A.Z"));
        assert!(p("A.**.Z").matches("A.B.C.Z"));
        assert!(p("AB.?D").matches("AB.CD"));
        assert!(!p("AB.?D").matches("AB.CCD"));
        assert!(p("AB.C*").matches("AB.C"));
        assert!(!p("APP.IN").matches("app.in"));
        assert!(p("APP.IN").matches("APP.IN"));
    }

    #[test]
    fn bad_profiles_are_refused() {
        assert_eq!(Profile::parse(""), Err(ProfileError::Length));
        assert_eq!(Profile::parse(&"A".repeat(49)), Err(ProfileError::Length));
        assert_eq!(Profile::parse("A B"), Err(ProfileError::Character(' ')));
        assert_eq!(Profile::parse("APP**"), Err(ProfileError::DoubleStar));
        assert_eq!(Profile::parse("**.A.**"), Err(ProfileError::DoubleStar));
        assert!(Profile::parse("@class").is_ok());
    }

    #[test]
    fn the_most_specific_profile_comes_first() {
        let mut v = [
            p("**"),
            p("AB.*"),
            p("AB.CD"),
            p("AB.C*"),
            p("AB.?D"),
            p("AB.**"),
        ];
        v.sort_by(Profile::most_specific_first);
        let order: Vec<&str> = v.iter().map(Profile::as_str).collect();
        assert_eq!(order, ["AB.CD", "AB.C*", "AB.?D", "AB.*", "AB.**", "**"]);
    }
}
