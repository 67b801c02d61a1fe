//! The selector request/reply runs on, `name = 'literal'`, read without the tokenizer.
//!
//! A JMS requester waiting on a shared reply queue attaches a consumer per request with
//! `JMSCorrelationID = 'ID:...'`, so the queue manager compiles one such selector per
//! round trip. The general lexer and parser cost ~6,000 instructions for it (a token
//! vector, ten precedence levels); this reads the same text in one pass over its bytes.
//! It only accepts text whose meaning is plain (an ASCII identifier that is no keyword,
//! one `=`, a string literal without `''` escapes, whitespace around them); anything else
//! returns `None` and goes to the full parser, which must build the very same tree for
//! every text accepted here (a property test checks it).

use crate::ast::{CmpOp, Expr, Literal};
use crate::lexer::Keyword;
use crate::Header;

/// The tree of `name = 'literal'`, or `None` when the text is anything else.
pub(crate) fn parse(text: &str) -> Option<Expr> {
    let rest = text.trim_start_matches(char::is_whitespace);
    let bytes = rest.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
        return None;
    }
    let name_len = bytes
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'$'))?;
    if !bytes[name_len].is_ascii() {
        // A non-ASCII letter may continue a Java identifier: leave it to the lexer.
        return None;
    }
    let (name, rest) = rest.split_at(name_len);
    if Keyword::from_word(name).is_some() {
        return None;
    }
    let rest = rest
        .trim_start_matches(char::is_whitespace)
        .strip_prefix('=')?
        .trim_start_matches(char::is_whitespace)
        .strip_prefix('\'')?;
    let close = rest.find('\'')?;
    let (literal, rest) = (&rest[..close], &rest[close + 1..]);
    if rest.starts_with('\'') || !rest.chars().all(char::is_whitespace) {
        return None;
    }
    let operand = match Header::from_name(name) {
        Some(header) => Expr::Header(header),
        None => Expr::Property(name.into()),
    };
    Some(Expr::Compare(
        CmpOp::Eq,
        Box::new(operand),
        Box::new(Expr::Literal(Literal::String(literal.into()))),
    ))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::parser;

    #[test]
    fn reads_request_reply_selectors() {
        let text = "JMSCorrelationID='ID:0d1c-4:1:1:1-7'";
        let expected = Expr::Compare(
            CmpOp::Eq,
            Box::new(Expr::Header(Header::CorrelationId)),
            Box::new(Expr::Literal(Literal::String("ID:0d1c-4:1:1:1-7".into()))),
        );
        assert_eq!(parse(text), Some(expected.clone()));
        assert_eq!(
            parse(" \tJMSCorrelationID = 'ID:0d1c-4:1:1:1-7'\n"),
            Some(expected)
        );
        assert!(matches!(
            parse("color = ''"),
            Some(Expr::Compare(CmpOp::Eq, l, _)) if *l == Expr::Property("color".into())
        ));
    }

    #[test]
    fn leaves_everything_else_to_the_parser() {
        for text in [
            "",
            "color",
            "color = 'it''s'",
            "color = 'red' AND size = 'L'",
            "color <= 'red'",
            "color = 'red",
            "color = red",
            "NULL = 'x'",
            "and = 'x'",
            "colör = 'x'",
            "color = 'x' ''",
            "'x' = color",
        ] {
            assert_eq!(parse(text), None, "{text:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Whatever this reads, the full parser reads alike.
        #[test]
        fn agrees_with_the_parser(
            text in r"[ \t\n\u{b}\u{a0}]{0,2}(JMSCorrelationID|JMSMessageID|JMSType|JMSPriority|JMSDeliveryMode|JMSTimestamp|JMSExpiration|JMSRedelivered|JMSXDeliveryCount|JMSXGroupID|JMSXGroupSeq|JMSXUserID|color|_x\$1|AND|Null|é|a1é|9a|[a-zA-Z_$é]{1,4})[ \t\u{a0}]{0,2}(=|<=|<>|==|= =)?[ \t]{0,2}('[a-zA-Z0-9:'é -]{0,8}'|'[a-z]{0,3}|[a-z]{1,3}|'')?[ \t\u{3000}]{0,2}('|x|AND a = 'b')?"
        ) {
            if let Some(quick) = parse(&text) {
                prop_assert_eq!(Ok(quick), parser::parse_general(&text), "text {:?}", text);
            }
        }
    }
}
