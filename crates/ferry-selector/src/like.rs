//! LIKE patterns: compiled once at parse time, matched without allocating.
//!
//! `_` matches exactly one character, `%` any run of characters (even none); the optional
//! ESCAPE character makes the character after it literal. Matching is the classic
//! two-pointer wildcard walk with backtracking to the last `%`, so it is linear for the
//! usual patterns and never worse than pattern length times text length.

/// One element of a compiled pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    /// This exact character.
    Char(char),
    /// `_`: any one character.
    One,
    /// `%`: any sequence of characters.
    Any,
}

/// A LIKE pattern with its optional escape character.
#[derive(Debug, Clone)]
pub(crate) struct LikePattern {
    source: Box<str>,
    escape: Option<char>,
    elems: Vec<Elem>,
}

/// Why a pattern cannot be compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DanglingEscape;

impl PartialEq for LikePattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.escape == other.escape
    }
}

impl LikePattern {
    /// Compiles `pattern`; fails only when it ends with the escape character.
    pub(crate) fn new(pattern: &str, escape: Option<char>) -> Result<Self, DanglingEscape> {
        let mut elems = Vec::with_capacity(pattern.len());
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            let elem = if Some(c) == escape {
                Elem::Char(chars.next().ok_or(DanglingEscape)?)
            } else {
                match c {
                    '_' => Elem::One,
                    // Consecutive `%` mean the same as one.
                    '%' if elems.last() == Some(&Elem::Any) => continue,
                    '%' => Elem::Any,
                    c => Elem::Char(c),
                }
            };
            elems.push(elem);
        }
        Ok(LikePattern {
            source: pattern.into(),
            escape,
            elems,
        })
    }

    /// The pattern as written (unescaped string literal contents).
    pub(crate) fn source(&self) -> &str {
        &self.source
    }

    /// The ESCAPE character, if one was given.
    pub(crate) fn escape(&self) -> Option<char> {
        self.escape
    }

    /// Whether the whole of `text` matches the pattern.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let pat = &self.elems;
        let (mut p, mut t) = (0usize, 0usize);
        // After a `%`: the pattern index after it and the text offset it was tried from.
        let mut star: Option<(usize, usize)> = None;
        loop {
            if pat.get(p) == Some(&Elem::Any) {
                p += 1;
                star = Some((p, t));
                continue;
            }
            let next = text[t..].chars().next();
            match (pat.get(p), next) {
                (None, None) => return true,
                (Some(Elem::One), Some(c)) => {
                    p += 1;
                    t += c.len_utf8();
                    continue;
                }
                (Some(Elem::Char(x)), Some(c)) if *x == c => {
                    p += 1;
                    t += c.len_utf8();
                    continue;
                }
                _ => {}
            }
            // Mismatch: let the last `%` swallow one more character and retry.
            let Some((sp, st)) = star else {
                return false;
            };
            if sp == pat.len() {
                return true; // trailing `%` matches the rest
            }
            let Some(c) = text[st..].chars().next() else {
                return false;
            };
            star = Some((sp, st + c.len_utf8()));
            p = sp;
            t = st + c.len_utf8();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn like(pattern: &str, escape: Option<char>, text: &str) -> bool {
        LikePattern::new(pattern, escape)
            .expect("compiles")
            .matches(text)
    }

    #[test]
    fn jms_spec_examples() {
        // phone LIKE '12%3' is true for '123', '12993' and false for '1234'.
        assert!(like("12%3", None, "123"));
        assert!(like("12%3", None, "12993"));
        assert!(!like("12%3", None, "1234"));
        // word LIKE 'l_se' is true for 'lose' and false for 'loose'.
        assert!(like("l_se", None, "lose"));
        assert!(!like("l_se", None, "loose"));
        // underscored LIKE '\_%' ESCAPE '\' is true for '_foo' and false for 'bar'.
        assert!(like("\\_%", Some('\\'), "_foo"));
        assert!(!like("\\_%", Some('\\'), "bar"));
    }

    #[test]
    fn wildcards() {
        assert!(like("%", None, ""));
        assert!(like("%%", None, "abc"));
        assert!(!like("_", None, ""));
        assert!(like("_", None, "é"));
        assert!(like("a%b%c", None, "aXXbYYc"));
        assert!(!like("a%b%c", None, "aXXbYY"));
        assert!(like("%abc", None, "ababc"));
        assert!(like("%a_c%", None, "xxabcxx"));
        assert!(!like("abc", None, "abcd"));
        assert!(!like("abc", None, "ab"));
        assert!(like("", None, ""));
        assert!(!like("", None, "a"));
    }

    #[test]
    fn escape_makes_wildcards_and_itself_literal() {
        assert!(like("100!%", Some('!'), "100%"));
        assert!(!like("100!%", Some('!'), "1000"));
        assert!(like("a!!b", Some('!'), "a!b"));
        assert!(like("a!xb", Some('!'), "axb"));
        assert_eq!(
            LikePattern::new("ab!", Some('!')).err(),
            Some(DanglingEscape)
        );
        // Without ESCAPE, a backslash is an ordinary character.
        assert!(like("\\_", None, "\\x"));
    }

    /// A reference matcher: plain recursion over chars.
    fn reference(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('%', rest)) => (0..=t.len()).any(|i| reference(rest, &t[i..])),
            Some(('_', rest)) => !t.is_empty() && reference(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && reference(rest, &t[1..]),
        }
    }

    proptest! {
        #[test]
        fn agrees_with_reference(p in "[ab_%]{0,8}", t in "[abc]{0,10}") {
            let pc: Vec<char> = p.chars().collect();
            let tc: Vec<char> = t.chars().collect();
            prop_assert_eq!(like(&p, None, &t), reference(&pc, &tc));
        }
    }
}
