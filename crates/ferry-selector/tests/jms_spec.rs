//! The JMS 2.0 selector rules (section 3.8.1) as a table: each selector, evaluated against
//! one message, and the three-valued result a JMS provider must give.

use std::collections::HashMap;

use ferry_selector::{Header, NoProperties, PropertySource, Selector, Value};

/// A message with headers and properties in maps.
#[derive(Default)]
struct Message {
    headers: HashMap<Header, Value<'static>>,
    properties: HashMap<&'static str, Value<'static>>,
}

impl PropertySource for Message {
    fn header(&self, header: Header) -> Option<Value<'_>> {
        self.headers.get(&header).cloned()
    }

    fn property(&self, name: &str) -> Option<Value<'_>> {
        self.properties.get(name).cloned()
    }
}

fn message() -> Message {
    let mut m = Message::default();
    for (h, v) in [
        (Header::DeliveryMode, Value::str("PERSISTENT")),
        (Header::Priority, Value::Long(4)),
        (Header::MessageId, Value::str("ID:1")),
        (Header::CorrelationId, Value::str("corr-1")),
        (Header::Type, Value::str("car")),
        (Header::Timestamp, Value::Long(1000)),
        (Header::Redelivered, Value::Bool(false)),
        (Header::DeliveryCount, Value::Long(1)),
    ] {
        m.headers.insert(h, v);
    }
    for (n, v) in [
        ("color", Value::str("red")),
        ("weight", Value::Double(3.75)),
        ("size", Value::Long(42)),
        ("fragile", Value::Bool(false)),
        ("yes", Value::Bool(true)),
        ("phone", Value::str("12993")),
        ("word", Value::str("lose")),
        ("under", Value::str("_foo")),
        ("Country", Value::str("UK")),
        ("age", Value::Long(17)),
        ("quote", Value::str("it's")),
        ("empty", Value::str("")),
        ("big", Value::Long(i64::MAX)),
        ("nan", Value::Double(f64::NAN)),
    ] {
        m.properties.insert(n, v);
    }
    m
}

const T: Option<bool> = Some(true);
const F: Option<bool> = Some(false);
const U: Option<bool> = None;

fn check(table: &[(&str, Option<bool>)]) {
    let m = message();
    let mut failures = Vec::new();
    for (text, want) in table {
        match Selector::parse(text) {
            Ok(s) => {
                let got = s.evaluate(&m);
                if got != *want {
                    failures.push(format!("{text}: got {got:?}, want {want:?}"));
                }
                assert_eq!(s.matches(&m), got == T, "{text}");
            }
            Err(e) => failures.push(format!("{text}: {e}")),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn three_valued_logic_truth_tables() {
    // `missing = 1` is UNKNOWN: comparing NULL gives UNKNOWN.
    let values = [("TRUE", T), ("FALSE", F), ("missing = 1", U)];
    let m = message();
    for (a, va) in values {
        let not = Selector::parse(&format!("NOT ({a})")).expect("parses");
        assert_eq!(not.evaluate(&m), va.map(|b| !b), "NOT {a}");
        for (b, vb) in values {
            let and = match (va, vb) {
                (F, _) | (_, F) => F,
                (T, T) => T,
                _ => U,
            };
            let or = match (va, vb) {
                (T, _) | (_, T) => T,
                (F, F) => F,
                _ => U,
            };
            let s = Selector::parse(&format!("({a}) AND ({b})")).expect("parses");
            assert_eq!(s.evaluate(&m), and, "{a} AND {b}");
            let s = Selector::parse(&format!("({a}) OR ({b})")).expect("parses");
            assert_eq!(s.evaluate(&m), or, "{a} OR {b}");
        }
    }
}

#[test]
fn spec_examples() {
    check(&[
        ("JMSType = 'car' AND color = 'blue' AND weight > 2500", F),
        ("JMSType = 'car' AND color = 'red' AND weight > 2.5", T),
        ("Country IN (' UK', 'US', 'France')", F),
        ("Country IN ('UK', 'US', 'France')", T),
        ("Country NOT IN ('UK', 'US', 'France')", F),
        ("Country NOT IN ('US')", T),
        ("phone LIKE '12%3'", T),
        ("word LIKE 'l_se'", T),
        ("word LIKE 'l_ose'", F),
        ("under LIKE '\\_%' ESCAPE '\\'", T),
        ("phone NOT LIKE '12%3'", F),
        ("age BETWEEN 15 AND 19", T),
        ("age >= 15 AND age <= 19", T),
        ("age NOT BETWEEN 15 AND 19", F),
        ("age BETWEEN 18 AND 19", F),
        ("prop_name IS NULL", T),
        ("color IS NULL", F),
        ("color IS NOT NULL", T),
        ("prop_name IS NOT NULL", F),
    ]);
}

#[test]
fn null_handling() {
    check(&[
        ("missing = 'x'", U),
        ("missing <> 'x'", U),
        ("NOT missing = 'x'", U),
        ("missing > 1", U),
        ("missing + 1 > 0", U),
        ("-missing < 0", U),
        ("missing IN ('x')", U),
        ("missing NOT IN ('x')", U),
        ("missing LIKE '%'", U),
        ("missing NOT LIKE '%'", U),
        ("missing BETWEEN 1 AND 2", U),
        ("age BETWEEN missing AND 16", F),
        ("age BETWEEN missing AND 20", U),
        ("missing", U),
        ("NULL = NULL", U),
        ("NULL IS NULL", T),
        ("(missing = 1) IS NULL", T), // an UNKNOWN condition is a NULL value
        ("JMSExpiration IS NULL", T),
        ("missing = 1 OR color = 'red'", T),
        ("missing = 1 AND color = 'blue'", F),
    ]);
    // On a message with nothing at all every comparison is UNKNOWN, never TRUE.
    let s = Selector::parse("JMSCorrelationID = 'x' OR JMSPriority > 1").expect("parses");
    assert_eq!(s.evaluate(&NoProperties), U);
}

#[test]
fn numeric_promotion_and_arithmetic() {
    check(&[
        ("size = 42.0", T),
        ("size = 42.000000001", F),
        ("weight > 3", T),
        ("weight = 3.75f", T),
        ("weight = 375e-2", T),
        ("size = 0x2A", T),
        ("size = 052", T),
        ("size = 42L", T),
        // Division is floating point, as in ActiveMQ and Artemis.
        ("size / 5 = 8", F),
        ("size / 5 = 8.4", T),
        ("size / 5.0 = 8.4", T),
        ("size * 1.5 > 62", T),
        ("size / 0 = 1", F),
        ("size / 0 > 1000000", T),
        ("size / 0.0 > 1000000", T),
        ("1 + 2 * 3 = 7", T),
        ("(1 + 2) * 3 = 9", T),
        ("10 - 4 - 3 = 3", T),
        ("2 * 3 / 4 = 1.5", T),
        ("-2 * -3 = 6", T),
        ("- size = -42", T),
        ("-(-size) = 42", T),
        ("+size = 42", T),
        ("big = 9223372036854775807", T),
        ("big + 1 < 0", T),
        ("-9223372036854775808 < 0", T),
        ("nan = nan", F),
        ("nan <> nan", T),
        ("nan < 1", F),
        ("weight BETWEEN 3.5 AND 4", T),
        ("size BETWEEN 41.5 AND 42.5", T),
        ("JMSPriority BETWEEN 0 AND 4", T),
    ]);
}

#[test]
fn types_strings_and_booleans() {
    check(&[
        ("color = 'red'", T),
        ("color <> 'red'", F),
        ("color = 'Red'", F),
        ("quote = 'it''s'", T),
        ("empty = ''", T),
        // Unlike types compare as FALSE (JMS 2.0 3.8.1.2), even with <>.
        ("color = 1", F),
        ("color <> 1", F),
        ("size = '42'", F),
        ("fragile = 0", F),
        ("NOT color = 1", T),
        // Strings and booleans have no order.
        ("color < other_color OR TRUE", T),
        ("NOT (color < quote)", T),
        // A string where a number belongs is NULL in arithmetic, UNKNOWN in LIKE.
        ("color + 1 > 0", U),
        ("size LIKE '4%'", U),
        // IN and BETWEEN mean their spec equivalents, so another type gives FALSE.
        ("size IN ('42')", F),
        ("size NOT IN ('42')", T),
        ("color BETWEEN 1 AND 2", F),
        // Booleans.
        ("fragile = FALSE", T),
        ("fragile", F),
        ("yes", T),
        ("NOT fragile", T),
        ("yes AND NOT fragile", T),
        ("yes = (size > 40)", T),
        ("size", U),
        ("color", U),
    ]);
}

#[test]
fn headers() {
    check(&[
        ("JMSDeliveryMode = 'PERSISTENT'", T),
        ("JMSDeliveryMode = 'NON_PERSISTENT'", F),
        ("JMSPriority > 3", T),
        ("JMSMessageID = 'ID:1'", T),
        ("JMSCorrelationID = 'corr-1'", T),
        ("'corr-1' = JMSCorrelationID", T),
        ("JMSType = 'car'", T),
        ("JMSTimestamp < 2000", T),
        ("JMSRedelivered = FALSE", T),
        ("JMSRedelivered", F),
        ("JMSXDeliveryCount = 1", T),
        ("JMSXGroupID IS NULL", T),
        // Identifiers are case-sensitive: this is a (missing) property.
        ("jmspriority IS NULL", T),
    ]);
    // The JMS DeliveryMode constants are accepted from the message too.
    let mut m = Message::default();
    m.headers.insert(Header::DeliveryMode, Value::Long(1));
    let s = Selector::parse("JMSDeliveryMode = 'NON_PERSISTENT'").expect("parses");
    assert!(s.matches(&m));
    m.headers.insert(Header::DeliveryMode, Value::Long(2));
    assert!(!s.matches(&m));
}

#[test]
fn keywords_are_case_insensitive() {
    check(&[
        ("color = 'red' and size > 1 oR fragile", T),
        ("age between 15 AnD 19", T),
        ("age not Between 15 and 19", F),
        ("Country in ('UK')", T),
        ("Country nOt In ('UK')", F),
        ("word like 'l%' escape '!'", T),
        ("missing is null", T),
        ("color Is Not Null", T),
        ("TrUe", T),
        ("fragile = false", T),
        ("not fragile", T),
        ("Null is NULL", T),
    ]);
}

#[test]
fn precedence_and_parentheses() {
    check(&[
        // a OR b AND c is a OR (b AND c).
        ("TRUE OR TRUE AND FALSE", T),
        ("(TRUE OR TRUE) AND FALSE", F),
        ("FALSE AND TRUE OR TRUE", T),
        ("FALSE AND (TRUE OR TRUE)", F),
        // NOT binds tighter than AND, looser than comparisons.
        ("NOT FALSE AND FALSE", F),
        ("NOT (FALSE AND FALSE)", T),
        ("NOT size = 1", T),
        ("NOT NOT yes", T),
        // Arithmetic binds tighter than comparisons, comparisons tighter than AND.
        ("size + 1 = 43 AND size - 1 = 41", T),
        ("age BETWEEN 10 + 5 AND 20 - 1 AND yes", T),
        // Nested parentheses.
        ("((((color = 'red'))))", T),
        ("(((size > 40) AND ((weight < 4))))", T),
        ("((size) = (42))", T),
        ("(((1 + 2) * (3 - 1)) / 2) = 3", T),
        (
            "((color = 'red') = (size > 1)) AND (yes OR (fragile AND missing = 1))",
            T,
        ),
    ]);
}
