//! Evaluates a compiled selector against a message with SQL's three-valued logic.
//!
//! A condition is `Some(true)`, `Some(false)` or `None` (UNKNOWN); a value is
//! `Some(Value)` or `None` (NULL). The rules, from JMS 2.0 section 3.8.1.2:
//! - a missing header or property is NULL; comparing or computing with NULL gives
//!   UNKNOWN / NULL; `IS [NOT] NULL` is always TRUE or FALSE;
//! - AND, OR and NOT follow the SQL truth tables (FALSE AND UNKNOWN is FALSE, TRUE OR
//!   UNKNOWN is TRUE, NOT UNKNOWN is UNKNOWN);
//! - longs and doubles compare and compute with Java numeric promotion; long +, - and *
//!   wrap as Java's do; `/` is always floating point (5 / 4 = 1.25), as in ActiveMQ and
//!   Artemis, so a selector selects the same messages after a move from them;
//! - comparing values of unlike types (a string with a number, a boolean with a string)
//!   is FALSE, as is ordering (`<` etc.) strings or booleans, which JMS does not define;
//! - arithmetic on a non-number is NULL; LIKE on a non-string is UNKNOWN;
//! - `BETWEEN` and `IN` mean exactly their spec equivalents (`low <= v AND v <= high`,
//!   `v = 'a' OR v = 'b'`), so on a value of another type they are FALSE;
//! - a bare identifier used as a condition must hold a boolean, anything else is UNKNOWN.
//!
//! Strings are borrowed from the selector and from the message: comparing a header with
//! a literal allocates nothing.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::ast::{ArithOp, CmpOp, Expr, Literal, Sign};
use crate::{Header, PropertySource, Value};

/// The truth of condition `e` for message `src`; `None` is UNKNOWN.
pub(crate) fn truth<S: PropertySource + ?Sized>(e: &Expr, src: &S) -> Option<bool> {
    match e {
        Expr::Literal(Literal::Bool(b)) => Some(*b),
        Expr::Not(inner) => truth(inner, src).map(|b| !b),
        Expr::And(items) => {
            let mut unknown = false;
            for item in items {
                match truth(item, src) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            (!unknown).then_some(true)
        }
        Expr::Or(items) => {
            let mut unknown = false;
            for item in items {
                match truth(item, src) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            (!unknown).then_some(false)
        }
        Expr::Compare(op, l, r) => compare(*op, &value(l, src)?, &value(r, src)?),
        Expr::Between {
            negated,
            value: v,
            low,
            high,
        } => {
            let v = value(v, src);
            let low_ok = compare_opt(CmpOp::Le, &value(low, src), &v);
            let high_ok = compare_opt(CmpOp::Le, &v, &value(high, src));
            and(low_ok, high_ok).map(|b| b != *negated)
        }
        Expr::In {
            negated,
            value: v,
            list,
        } => match value(v, src)? {
            Value::String(s) => Some(list.iter().any(|item| **item == *s) != *negated),
            _ => Some(*negated),
        },
        Expr::Like {
            negated,
            value: v,
            pattern,
        } => match value(v, src)? {
            Value::String(s) => Some(pattern.matches(&s) != *negated),
            _ => None,
        },
        Expr::IsNull { negated, value: v } => Some(value(v, src).is_none() != *negated),
        Expr::Literal(_)
        | Expr::Header(_)
        | Expr::Property(_)
        | Expr::Unary(..)
        | Expr::Arith(..) => match value(e, src)? {
            Value::Bool(b) => Some(b),
            _ => None,
        },
    }
}

/// SQL AND of two truth values.
fn and(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// The value of `e` for message `src`; `None` is NULL.
pub(crate) fn value<'a, S: PropertySource + ?Sized>(e: &'a Expr, src: &'a S) -> Option<Value<'a>> {
    match e {
        Expr::Literal(l) => match l {
            Literal::Null => None,
            Literal::Bool(b) => Some(Value::Bool(*b)),
            Literal::Long(v) => Some(Value::Long(*v)),
            Literal::Double(v) => Some(Value::Double(*v)),
            Literal::String(s) => Some(Value::String(Cow::Borrowed(s))),
        },
        Expr::Header(Header::DeliveryMode) => match src.header(Header::DeliveryMode)? {
            Value::Long(1) => Some(Value::str("NON_PERSISTENT")),
            Value::Long(2) => Some(Value::str("PERSISTENT")),
            other => Some(other),
        },
        Expr::Header(h) => src.header(*h),
        Expr::Property(name) => src.property(name),
        Expr::Unary(sign, inner) => match (sign, value(inner, src)?) {
            (Sign::Plus, v @ (Value::Long(_) | Value::Double(_))) => Some(v),
            (Sign::Minus, Value::Long(v)) => Some(Value::Long(v.wrapping_neg())),
            (Sign::Minus, Value::Double(v)) => Some(Value::Double(-v)),
            _ => None,
        },
        Expr::Arith(op, l, r) => arith(*op, value(l, src)?, value(r, src)?),
        _ => truth(e, src).map(Value::Bool),
    }
}

fn arith(op: ArithOp, l: Value<'_>, r: Value<'_>) -> Option<Value<'static>> {
    match (l, r) {
        (Value::Long(a), Value::Long(b)) => Some(Value::Long(match op {
            ArithOp::Add => a.wrapping_add(b),
            ArithOp::Sub => a.wrapping_sub(b),
            ArithOp::Mul => a.wrapping_mul(b),
            // Division is done in floating point even for two integers, as ActiveMQ
            // and Artemis do (5 / 4 is 1.25, not 1): selectors written for those brokers
            // select the same messages here.
            ArithOp::Div => return Some(Value::Double(a as f64 / b as f64)),
        })),
        (l, r) => {
            let (a, b) = (as_double(&l)?, as_double(&r)?);
            Some(Value::Double(match op {
                ArithOp::Add => a + b,
                ArithOp::Sub => a - b,
                ArithOp::Mul => a * b,
                ArithOp::Div => a / b,
            }))
        }
    }
}

fn as_double(v: &Value<'_>) -> Option<f64> {
    match v {
        Value::Long(v) => Some(*v as f64),
        Value::Double(v) => Some(*v),
        _ => None,
    }
}

fn compare_opt(op: CmpOp, l: &Option<Value<'_>>, r: &Option<Value<'_>>) -> Option<bool> {
    compare(op, l.as_ref()?, r.as_ref()?)
}

/// A comparison of two non-NULL values (never UNKNOWN, but `Option` for the callers).
fn compare(op: CmpOp, l: &Value<'_>, r: &Value<'_>) -> Option<bool> {
    let ordering = match (l, r) {
        (Value::Long(a), Value::Long(b)) => Some(a.cmp(b)),
        (Value::Long(_) | Value::Double(_), Value::Long(_) | Value::Double(_)) => {
            // NaN is unordered: only <> holds.
            match as_double(l)?.partial_cmp(&as_double(r)?) {
                Some(o) => Some(o),
                None => return Some(op == CmpOp::Ne),
            }
        }
        (Value::String(a), Value::String(b)) => equality_only(op, a == b),
        (Value::Bool(a), Value::Bool(b)) => equality_only(op, a == b),
        _ => return Some(false),
    };
    Some(match ordering {
        None => false,
        Some(o) => match op {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
        },
    })
}

/// For types with only = and <>: the ordering that makes `op` come out right, or `None`
/// (FALSE) for an ordering operator.
fn equality_only(op: CmpOp, equal: bool) -> Option<Ordering> {
    match op {
        CmpOp::Eq | CmpOp::Ne if equal => Some(Ordering::Equal),
        CmpOp::Eq | CmpOp::Ne => Some(Ordering::Less),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn and_truth_table() {
        let (t, f, u) = (Some(true), Some(false), None);
        assert_eq!(and(t, t), t);
        assert_eq!(and(t, f), f);
        assert_eq!(and(t, u), u);
        assert_eq!(and(f, u), f);
        assert_eq!(and(u, f), f);
        assert_eq!(and(u, u), u);
    }

    #[test]
    fn comparisons_of_unlike_types_are_false() {
        let s = Value::str("1");
        assert_eq!(compare(CmpOp::Eq, &s, &Value::Long(1)), Some(false));
        assert_eq!(compare(CmpOp::Ne, &s, &Value::Long(1)), Some(false));
        assert_eq!(
            compare(CmpOp::Eq, &Value::Bool(true), &Value::Long(1)),
            Some(false)
        );
        assert_eq!(compare(CmpOp::Lt, &s, &Value::str("2")), Some(false));
        assert_eq!(compare(CmpOp::Ne, &s, &Value::str("2")), Some(true));
    }

    #[test]
    fn nan_is_unordered() {
        let nan = Value::Double(f64::NAN);
        assert_eq!(compare(CmpOp::Eq, &nan, &nan), Some(false));
        assert_eq!(compare(CmpOp::Ne, &nan, &nan), Some(true));
        assert_eq!(compare(CmpOp::Lt, &nan, &Value::Long(1)), Some(false));
    }

    #[test]
    fn long_arithmetic_wraps_and_division_is_floating_point() {
        let max = Value::Long(i64::MAX);
        assert_eq!(
            arith(ArithOp::Add, max, Value::Long(1)),
            Some(Value::Long(i64::MIN))
        );
        assert_eq!(
            arith(ArithOp::Div, Value::Long(1), Value::Long(0)),
            Some(Value::Double(f64::INFINITY))
        );
        assert_eq!(
            arith(ArithOp::Div, Value::Long(7), Value::Long(2)),
            Some(Value::Double(3.5))
        );
        assert_eq!(
            arith(ArithOp::Div, Value::Long(7), Value::Double(2.0)),
            Some(Value::Double(3.5))
        );
        assert_eq!(
            arith(ArithOp::Div, Value::Double(1.0), Value::Long(0)),
            Some(Value::Double(f64::INFINITY))
        );
        assert_eq!(arith(ArithOp::Add, Value::str("1"), Value::Long(1)), None);
    }
}
