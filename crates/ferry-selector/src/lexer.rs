//! Splits selector text into tokens, each with its 1-based character column.
//!
//! Literal syntax follows the JMS spec, which borrows Java's: strings in single quotes with
//! `''` for a quote; exact numbers are Java integer literals (decimal, `0x` hex, octal with
//! a leading `0`, optional `L`); approximate numbers are Java floating-point literals (a
//! `.`, an exponent, or an `f`/`d` suffix). Keywords are case-insensitive; identifiers
//! follow Java's rules and are case-sensitive. Numbers are never signed here: the parser
//! folds a leading `-` so that `-9223372036854775808` is in range.

use crate::error::{ErrorKind, SelectorError};

/// The reserved words of the selector grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyword {
    And,
    Or,
    Not,
    Between,
    Like,
    In,
    Is,
    Null,
    Escape,
    True,
    False,
}

impl Keyword {
    const ALL: [(Keyword, &'static str); 11] = [
        (Keyword::And, "AND"),
        (Keyword::Or, "OR"),
        (Keyword::Not, "NOT"),
        (Keyword::Between, "BETWEEN"),
        (Keyword::Like, "LIKE"),
        (Keyword::In, "IN"),
        (Keyword::Is, "IS"),
        (Keyword::Null, "NULL"),
        (Keyword::Escape, "ESCAPE"),
        (Keyword::True, "TRUE"),
        (Keyword::False, "FALSE"),
    ];

    /// The keyword a word spells, ignoring ASCII case.
    pub(crate) fn from_word(word: &str) -> Option<Keyword> {
        Keyword::ALL
            .iter()
            .find(|(_, w)| w.eq_ignore_ascii_case(word))
            .map(|(k, _)| *k)
    }
}

/// One token's kind and payload.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    /// An identifier (header or property name); its text is the token's source slice.
    Ident,
    /// A string literal, unescaped.
    Str(String),
    /// An exact numeric literal without sign. `decimal` is false for hex and octal, whose
    /// 64 bits are reinterpreted as a signed long, as Java does.
    Integer {
        magnitude: u64,
        decimal: bool,
    },
    /// An approximate numeric literal without sign (always finite).
    Double(f64),
    Keyword(Keyword),
    LParen,
    RParen,
    Comma,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    /// End of the selector.
    End,
}

/// A token and where it is in the text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    /// Byte range in the source text.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// 1-based character column of the first character.
    pub(crate) column: usize,
}

/// Tokenises `text`; the last token is always [`Tok::End`].
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, SelectorError> {
    let mut lexer = Lexer {
        text,
        pos: 0,
        column: 1,
    };
    let mut out = Vec::new();
    loop {
        let token = lexer.next_token()?;
        let end = token.tok == Tok::End;
        out.push(token);
        if end {
            return Ok(out);
        }
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || c == '$'
}

fn is_ident_part(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

struct Lexer<'t> {
    text: &'t str,
    pos: usize,
    column: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.pos..].chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        self.column += 1;
        Some(c)
    }

    fn bump_if(&mut self, pred: impl Fn(char) -> bool) -> bool {
        match self.peek() {
            Some(c) if pred(c) => {
                self.bump();
                true
            }
            _ => false,
        }
    }

    fn bump_while(&mut self, pred: impl Fn(char) -> bool) -> usize {
        let mut n = 0;
        while self.bump_if(&pred) {
            n += 1;
        }
        n
    }

    fn next_token(&mut self) -> Result<Token, SelectorError> {
        self.bump_while(char::is_whitespace);
        let (start, column) = (self.pos, self.column);
        let tok = match self.peek() {
            None => Tok::End,
            Some(c) if is_ident_start(c) => {
                self.bump_while(is_ident_part);
                match Keyword::from_word(&self.text[start..self.pos]) {
                    Some(k) => Tok::Keyword(k),
                    None => Tok::Ident,
                }
            }
            Some('\'') => self.string(column)?,
            Some(c) if c.is_ascii_digit() => self.number(start, column)?,
            Some('.') if self.peek_second().is_some_and(|d| d.is_ascii_digit()) => {
                self.number(start, column)?
            }
            Some(c) => {
                self.bump();
                match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    ',' => Tok::Comma,
                    '=' => Tok::Eq,
                    '+' => Tok::Plus,
                    '-' => Tok::Minus,
                    '*' => Tok::Star,
                    '/' => Tok::Slash,
                    '<' if self.bump_if(|c| c == '=') => Tok::Le,
                    '<' if self.bump_if(|c| c == '>') => Tok::Ne,
                    '<' => Tok::Lt,
                    '>' if self.bump_if(|c| c == '=') => Tok::Ge,
                    '>' => Tok::Gt,
                    other => {
                        return Err(SelectorError::new(column, ErrorKind::UnexpectedChar(other)))
                    }
                }
            }
        };
        Ok(Token {
            tok,
            start,
            end: self.pos,
            column,
        })
    }

    fn string(&mut self, column: usize) -> Result<Tok, SelectorError> {
        self.bump();
        let mut s = String::new();
        loop {
            match self.bump() {
                None => return Err(SelectorError::new(column, ErrorKind::UnterminatedString)),
                Some('\'') if self.bump_if(|c| c == '\'') => s.push('\''),
                Some('\'') => return Ok(Tok::Str(s)),
                Some(c) => s.push(c),
            }
        }
    }

    fn number(&mut self, start: usize, column: usize) -> Result<Tok, SelectorError> {
        let invalid = |lexer: &mut Self| {
            lexer.bump_while(|c| is_ident_part(c) || c == '.');
            let text = lexer.text[start..lexer.pos].to_string();
            SelectorError::new(column, ErrorKind::InvalidNumber(text))
        };
        if self.peek() == Some('0') && matches!(self.peek_second(), Some('x' | 'X')) {
            self.bump();
            self.bump();
            let digits_start = self.pos;
            if self.bump_while(|c| c.is_ascii_hexdigit()) == 0 {
                return Err(invalid(self));
            }
            let digits_end = self.pos;
            self.bump_if(|c| c == 'l' || c == 'L');
            if self.peek().is_some_and(|c| is_ident_part(c) || c == '.') {
                return Err(invalid(self));
            }
            let text = &self.text[digits_start..digits_end];
            let magnitude = u64::from_str_radix(text, 16).map_err(|_| {
                let all = self.text[start..self.pos].to_string();
                SelectorError::new(column, ErrorKind::NumberOutOfRange(all))
            })?;
            return Ok(Tok::Integer {
                magnitude,
                decimal: false,
            });
        }
        self.bump_while(|c| c.is_ascii_digit());
        let mut float = false;
        if self.bump_if(|c| c == '.') {
            float = true;
            self.bump_while(|c| c.is_ascii_digit());
        }
        if self.bump_if(|c| c == 'e' || c == 'E') {
            float = true;
            self.bump_if(|c| c == '+' || c == '-');
            if self.bump_while(|c| c.is_ascii_digit()) == 0 {
                return Err(invalid(self));
            }
        }
        let body_end = self.pos;
        if self.bump_if(|c| matches!(c, 'f' | 'F' | 'd' | 'D')) {
            float = true;
        } else if !float && self.bump_if(|c| c == 'l' || c == 'L') {
            // Long suffix: the value is the same.
        }
        if self.peek().is_some_and(|c| is_ident_part(c) || c == '.') {
            return Err(invalid(self));
        }
        let body = &self.text[start..body_end];
        let out_of_range =
            |text: &str| SelectorError::new(column, ErrorKind::NumberOutOfRange(text.to_string()));
        if float {
            match body.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Tok::Double(v)),
                Ok(_) => Err(out_of_range(&self.text[start..self.pos])),
                Err(_) => Err(invalid(self)),
            }
        } else if body.len() > 1 && body.starts_with('0') {
            if !body.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(invalid(self));
            }
            let magnitude = u64::from_str_radix(&body[1..], 8)
                .map_err(|_| out_of_range(&self.text[start..self.pos]))?;
            Ok(Tok::Integer {
                magnitude,
                decimal: false,
            })
        } else {
            match body.parse::<u64>() {
                Ok(m) if m <= 1u64 << 63 => Ok(Tok::Integer {
                    magnitude: m,
                    decimal: true,
                }),
                _ => Err(out_of_range(&self.text[start..self.pos])),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        tokenize(text)
            .expect("lexes")
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn one(text: &str) -> Tok {
        let t = toks(text);
        assert_eq!(t.len(), 2, "{text}: {t:?}");
        t[0].clone()
    }

    fn err(text: &str) -> SelectorError {
        tokenize(text).expect_err("should not lex")
    }

    fn int(magnitude: u64, decimal: bool) -> Tok {
        Tok::Integer { magnitude, decimal }
    }

    #[test]
    fn exact_numerics_follow_java() {
        assert_eq!(one("57"), int(57, true));
        assert_eq!(one("57L"), int(57, true));
        assert_eq!(one("57l"), int(57, true));
        assert_eq!(one("0"), int(0, true));
        assert_eq!(one("0x1F"), int(31, false));
        assert_eq!(one("0XffL"), int(255, false));
        assert_eq!(one("0xFFFFFFFFFFFFFFFF"), int(u64::MAX, false));
        assert_eq!(one("010"), int(8, false));
        assert_eq!(one("9223372036854775808"), int(1 << 63, true));
    }

    #[test]
    fn approximate_numerics_follow_java() {
        assert_eq!(one("7E3"), Tok::Double(7000.0));
        assert_eq!(one("57.9e-2"), Tok::Double(0.579));
        assert_eq!(one("7."), Tok::Double(7.0));
        assert_eq!(one(".5"), Tok::Double(0.5));
        assert_eq!(one("2.5f"), Tok::Double(2.5));
        assert_eq!(one("3d"), Tok::Double(3.0));
        assert_eq!(one("1.e2"), Tok::Double(100.0));
        assert_eq!(one("09.5"), Tok::Double(9.5));
    }

    #[test]
    fn bad_numbers_are_rejected_with_their_text() {
        for (text, shown) in [
            ("0x", "0x"),
            ("0xZ", "0xZ"),
            ("1e", "1e"),
            ("1e+", "1e+"),
            ("09", "09"),
            ("12abc", "12abc"),
            ("1.5L", "1.5L"),
            ("1.2.3", "1.2.3"),
        ] {
            assert_eq!(
                err(text).kind,
                ErrorKind::InvalidNumber(shown.into()),
                "{text}"
            );
        }
        assert!(matches!(
            err("9223372036854775809").kind,
            ErrorKind::NumberOutOfRange(_)
        ));
        assert!(matches!(
            err("0x1FFFFFFFFFFFFFFFF").kind,
            ErrorKind::NumberOutOfRange(_)
        ));
        assert!(matches!(err("1e999").kind, ErrorKind::NumberOutOfRange(_)));
    }

    #[test]
    fn strings_unescape_doubled_quotes() {
        assert_eq!(one("'it''s'"), Tok::Str("it's".into()));
        assert_eq!(one("''"), Tok::Str(String::new()));
        assert_eq!(one("'é ü'"), Tok::Str("é ü".into()));
        let e = err("a = 'open");
        assert_eq!((e.column, e.kind), (5, ErrorKind::UnterminatedString));
    }

    #[test]
    fn keywords_are_case_insensitive_identifiers_are_not() {
        assert_eq!(
            toks("and Or NOT between"),
            vec![
                Tok::Keyword(Keyword::And),
                Tok::Keyword(Keyword::Or),
                Tok::Keyword(Keyword::Not),
                Tok::Keyword(Keyword::Between),
                Tok::End
            ]
        );
        assert_eq!(one("$foo_1"), Tok::Ident);
        assert_eq!(one("ändern"), Tok::Ident);
        assert_eq!(one("Android"), Tok::Ident);
    }

    #[test]
    fn operators() {
        assert_eq!(
            toks("= <> < <= > >= + - * / ( ) ,"),
            vec![
                Tok::Eq,
                Tok::Ne,
                Tok::Lt,
                Tok::Le,
                Tok::Gt,
                Tok::Ge,
                Tok::Plus,
                Tok::Minus,
                Tok::Star,
                Tok::Slash,
                Tok::LParen,
                Tok::RParen,
                Tok::Comma,
                Tok::End
            ]
        );
    }

    #[test]
    fn columns_count_characters() {
        let t = tokenize("'é' = x").expect("lexes");
        assert_eq!(
            t.iter().map(|t| t.column).collect::<Vec<_>>(),
            vec![1, 5, 7, 8]
        );
        let e = err("ü = #");
        assert_eq!((e.column, e.kind), (5, ErrorKind::UnexpectedChar('#')));
    }
}
