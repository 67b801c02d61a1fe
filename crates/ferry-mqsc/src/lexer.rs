//! Splits one logical MQSC command into tokens.
//!
//! Separators are blanks and commas. Unquoted words are folded to upper case; quoted
//! values (`'...'`, with `''` standing for one quote) keep their case and blanks.
//! Parentheses are tokens of their own, so `KEYWORD(value)` and `KEYWORD (value)` lex the
//! same. Positions are byte offsets into the command text, for error messages.

use crate::error::{ParseError, ParseErrorKind};

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An unquoted word, folded to upper case.
    Word(String),
    /// A quoted string, quotes removed, `''` turned into `'`.
    Quoted(String),
    /// `(`
    Open,
    /// `)`
    Close,
}

/// A token and where it stands in the command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
}

fn is_separator(c: char) -> bool {
    c.is_whitespace() || c == ','
}

/// Tokenizes a logical command (continuations already joined).
pub fn tokenize(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_separator(c) {
            chars.next();
            continue;
        }
        match c {
            '(' | ')' => {
                chars.next();
                let kind = if c == '(' {
                    TokenKind::Open
                } else {
                    TokenKind::Close
                };
                tokens.push(Token {
                    kind,
                    start,
                    end: start + 1,
                });
            }
            '\'' => {
                chars.next();
                let mut value = String::new();
                let mut end = None;
                while let Some((i, ch)) = chars.next() {
                    if ch == '\'' {
                        if let Some(&(_, '\'')) = chars.peek() {
                            chars.next();
                            value.push('\'');
                        } else {
                            end = Some(i + 1);
                            break;
                        }
                    } else {
                        value.push(ch);
                    }
                }
                let end = end.ok_or_else(|| {
                    ParseError::new(ParseErrorKind::UnclosedQuote, text, text.len())
                })?;
                tokens.push(Token {
                    kind: TokenKind::Quoted(value),
                    start,
                    end,
                });
            }
            _ => {
                let mut end = start;
                let mut word = String::new();
                while let Some(&(i, ch)) = chars.peek() {
                    if is_separator(ch) || matches!(ch, '(' | ')' | '\'') {
                        break;
                    }
                    word.push(ch.to_ascii_uppercase());
                    end = i + ch.len_utf8();
                    chars.next();
                }
                tokens.push(Token {
                    kind: TokenKind::Word(word),
                    start,
                    end,
                });
            }
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        tokenize(text)
            .expect("lexes")
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    fn w(s: &str) -> TokenKind {
        TokenKind::Word(s.into())
    }

    #[test]
    fn folds_unquoted_words_to_upper_case() {
        assert_eq!(
            kinds("define qlocal(app.q)"),
            vec![
                w("DEFINE"),
                w("QLOCAL"),
                TokenKind::Open,
                w("APP.Q"),
                TokenKind::Close
            ]
        );
    }

    #[test]
    fn quoted_values_keep_case_and_doubled_quotes() {
        assert_eq!(
            kinds("DESCR('it''s Mine')"),
            vec![
                w("DESCR"),
                TokenKind::Open,
                TokenKind::Quoted("it's Mine".into()),
                TokenKind::Close
            ]
        );
        assert_eq!(kinds("''"), vec![TokenKind::Quoted(String::new())]);
    }

    #[test]
    fn commas_and_blanks_separate() {
        assert_eq!(kinds("A,B  C"), vec![w("A"), w("B"), w("C")]);
        assert_eq!(kinds("K (V)"), kinds("K(V)"));
    }

    #[test]
    fn unclosed_quote_is_an_error() {
        let err = tokenize("DESCR('abc").unwrap_err();
        assert_eq!(err.kind, ParseErrorKind::UnclosedQuote);
    }

    #[test]
    fn positions_are_byte_offsets() {
        let t = tokenize("DIS QL(X)").expect("lexes");
        assert_eq!((t[1].start, t[1].end), (4, 6));
        assert_eq!((t[3].start, t[3].end), (7, 8));
    }
}
