//! Proptest strategies that build well-typed selector trees directly (not via text), so
//! the round-trip test can check that `Display` prints every shape the parser accepts,
//! including ones the parser itself never builds (right-nested chains, nested ANDs).

use proptest::prelude::*;

use crate::ast::{ArithOp, CmpOp, Expr, Literal, Sign};
use crate::lexer::Keyword;
use crate::like::LikePattern;
use crate::Header;

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

/// A header or a property name that lexes back as the same identifier.
fn identifier() -> impl Strategy<Value = Expr> {
    prop_oneof![
        proptest::sample::select(Header::ALL.to_vec()).prop_map(Expr::Header),
        "[a-zA-Z_$][a-zA-Z0-9_$]{0,6}"
            .prop_filter("not a keyword or header", |s| {
                Keyword::from_word(s).is_none() && Header::from_name(s).is_none()
            })
            .prop_map(|s| Expr::Property(s.into())),
    ]
}

fn string_literal() -> impl Strategy<Value = String> {
    "[a-z' %_!é]{0,6}"
}

/// Operands of kind "string or unknown".
fn string_value() -> impl Strategy<Value = Expr> {
    prop_oneof![
        string_literal().prop_map(|s| Expr::Literal(Literal::String(s.into()))),
        identifier(),
        Just(Expr::Literal(Literal::Null)),
    ]
}

/// Operands of kind "number or unknown".
pub(crate) fn number() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(|v| Expr::Literal(Literal::Long(v))),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| Expr::Literal(Literal::Double(v))),
        identifier(),
        Just(Expr::Literal(Literal::Null)),
    ];
    leaf.prop_recursive(3, 12, 2, |inner| {
        prop_oneof![
            (
                proptest::sample::select(vec![
                    ArithOp::Add,
                    ArithOp::Sub,
                    ArithOp::Mul,
                    ArithOp::Div
                ]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, l, r)| Expr::Arith(op, boxed(l), boxed(r))),
            // The parser folds a sign over a number literal; keep to that normal form.
            (prop_oneof![Just(Sign::Plus), Just(Sign::Minus)], inner)
                .prop_filter("no sign over a number literal", |(_, e)| !matches!(
                    e,
                    Expr::Literal(Literal::Long(_) | Literal::Double(_))
                ))
                .prop_map(|(s, e)| Expr::Unary(s, boxed(e))),
        ]
    })
}

fn like() -> impl Strategy<Value = Expr> {
    (
        any::<bool>(),
        string_value(),
        "[a-z%_!']{0,6}",
        proptest::option::of(prop_oneof![Just('!'), Just('%'), Just('\'')]),
    )
        .prop_filter_map("valid pattern", |(negated, value, p, escape)| {
            let pattern = LikePattern::new(&p, escape).ok()?;
            Some(Expr::Like {
                negated,
                value: boxed(value),
                pattern,
            })
        })
}

fn compare_op() -> impl Strategy<Value = CmpOp> {
    proptest::sample::select(vec![
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ])
}

fn equality_op() -> impl Strategy<Value = CmpOp> {
    prop_oneof![Just(CmpOp::Eq), Just(CmpOp::Ne)]
}

/// Well-typed conditions: any tree the parser accepts as a whole selector.
pub(crate) fn condition() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        any::<bool>().prop_map(|b| Expr::Literal(Literal::Bool(b))),
        identifier(),
        (compare_op(), number(), number()).prop_map(|(op, l, r)| Expr::Compare(
            op,
            boxed(l),
            boxed(r)
        )),
        (
            equality_op(),
            string_value(),
            prop_oneof![string_value(), number()]
        )
            .prop_map(|(op, l, r)| Expr::Compare(op, boxed(l), boxed(r))),
        (any::<bool>(), number(), number(), number()).prop_map(|(negated, v, lo, hi)| {
            Expr::Between {
                negated,
                value: boxed(v),
                low: boxed(lo),
                high: boxed(hi),
            }
        }),
        (
            any::<bool>(),
            string_value(),
            proptest::collection::vec(string_literal(), 1..4)
        )
            .prop_map(|(negated, v, list)| Expr::In {
                negated,
                value: boxed(v),
                list: list.into_iter().map(String::into_boxed_str).collect(),
            }),
        like(),
        (any::<bool>(), prop_oneof![number(), string_value()]).prop_map(|(negated, v)| {
            Expr::IsNull {
                negated,
                value: boxed(v),
            }
        }),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            inner.clone().prop_map(|e| Expr::Not(boxed(e))),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
            proptest::collection::vec(inner.clone(), 2..4).prop_map(Expr::Or),
            (equality_op(), inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Compare(
                op,
                boxed(l),
                boxed(r)
            )),
            (any::<bool>(), inner).prop_map(|(negated, v)| Expr::IsNull {
                negated,
                value: boxed(v),
            }),
        ]
    })
}
