//! One entry point that pushes arbitrary text through the whole selector pipeline.
//!
//! The cargo-fuzz target `selector_parser` (crates/ferry-selector/fuzz) calls
//! [`parse_everything`], and the proptests below call it too, so stable CI covers the same
//! path. Besides "never panics", it checks that whatever parses prints normalised text
//! that parses back to an equal selector, that the one-pass reader of `name = 'literal'`
//! builds what the full grammar builds, and that the id fast paths never disagree with
//! full evaluation.

use std::borrow::Cow;

use crate::{Header, NoProperties, PropertySource, Selector, Value};

/// A message with a little of everything, for evaluating fuzzed selectors.
struct SampleMessage;

impl PropertySource for SampleMessage {
    fn header(&self, header: Header) -> Option<Value<'_>> {
        Some(match header {
            Header::DeliveryMode => Value::Long(2),
            Header::Priority => Value::Long(4),
            Header::CorrelationId => Value::str("a"),
            Header::MessageId => Value::str("ID:1"),
            Header::Redelivered => Value::Bool(false),
            Header::Timestamp => Value::Long(1_704_067_200_000),
            _ => return None,
        })
    }

    fn property(&self, name: &str) -> Option<Value<'_>> {
        Some(match name.chars().next()? {
            'a' | 'A' => Value::str("a"),
            'b' | 'B' => Value::Bool(true),
            'c' | 'C' => Value::Long(-3),
            'd' | 'D' => Value::Double(2.5),
            'e' | 'E' => Value::String(Cow::Owned(name.to_string())),
            _ => return None,
        })
    }
}

/// Parses `text`; if it is a selector, checks the Display round trip and evaluates it.
/// Panics only on a bug (a round-trip mismatch or an inconsistent fast path).
pub fn parse_everything(text: &str) {
    if let Some(quick) = crate::equality::parse(text) {
        assert_eq!(
            Ok(quick),
            crate::parser::parse_general(text),
            "{text:?} reads differently in one pass"
        );
    }
    let Ok(selector) = Selector::parse(text) else {
        return;
    };
    let shown = selector.to_string();
    match Selector::parse(&shown) {
        Ok(again) => {
            assert_eq!(again, selector, "{text:?} printed as {shown:?}");
            assert_eq!(
                again.to_string(),
                shown,
                "normal form of {text:?} is not stable"
            );
        }
        Err(e) => panic!("{text:?} printed as {shown:?}, which does not parse: {e}"),
    }
    let _ = selector.evaluate(&NoProperties);
    let matched = selector.matches(&SampleMessage);
    if selector.only_correlation_id() == Some("a") {
        assert!(
            matched,
            "{text:?} is the sample's correlation id alone, yet no match"
        );
    }
    if matched {
        if let Some(id) = selector.correlation_id_lookup() {
            assert_eq!(id, "a", "{text:?} matched another correlation id");
        }
        if let Some(id) = selector.only_correlation_id() {
            assert_eq!(id, "a", "{text:?} matched another correlation id");
        }
        if let Some(id) = selector.message_id_lookup() {
            assert_eq!(id, "ID:1", "{text:?} matched another message id");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            parse_everything(&text);
        }

        #[test]
        fn selector_like_text_never_panics(
            text in r"([ a-eA-E0-9'().,=<>+*/%_-]|AND |OR |NOT |IN |LIKE |BETWEEN |IS |NULL |ESCAPE |TRUE |0x|1e|JMSCorrelationID ){0,24}"
        ) {
            parse_everything(&text);
        }

        #[test]
        fn generated_trees_round_trip(expr in strategy::condition()) {
            let selector = Selector::from_expr(expr);
            let shown = selector.to_string();
            let again = Selector::parse(&shown);
            prop_assert_eq!(again.as_ref(), Ok(&selector), "text {}", shown);
            parse_everything(&shown);
        }
    }

    #[test]
    fn fuzzer_findings_stay_fixed() {
        // Sign chains once printed as `+(6)`, one nesting level more than the input.
        let signs = format!("1 = {}6 - 1", "+".repeat(33));
        for text in ["+++++++++++++++++++++++++++++++++66=3", signs.as_str()] {
            parse_everything(text);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        for text in [
            format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000)),
            format!("{}a", "NOT ".repeat(100_000)),
            format!("{}1 = a", "-".repeat(100_000)),
            format!("a = 1{}", " + 1".repeat(100_000)),
            format!("a = 1{}", " OR a = 1".repeat(100_000)),
        ] {
            parse_everything(&text);
        }
        let or_chain = format!("a = 1{}", " OR a = 1".repeat(10_000));
        assert!(
            Selector::parse(&or_chain).is_ok(),
            "flat OR chains are not nesting"
        );
    }
}
