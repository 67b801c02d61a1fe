//! Index fast paths: the literal a selector requires a header to equal, when it has one.
//!
//! If the selector is `H = 'x'` (either operand order, any parentheses), or an AND chain
//! with such a term anywhere in it, no message whose header H differs from `'x'` can
//! match. The server can then look candidates up by that id in its index and still
//! evaluate the full selector on each.

use crate::ast::{CmpOp, Expr, Literal};
use crate::Header;

/// The string `header` must equal for `e` to be TRUE, if the shape of `e` says so.
pub(crate) fn required_literal(e: &Expr, header: Header) -> Option<&str> {
    match e {
        Expr::Compare(CmpOp::Eq, l, r) => match (&**l, &**r) {
            (Expr::Header(h), Expr::Literal(Literal::String(s)))
            | (Expr::Literal(Literal::String(s)), Expr::Header(h))
                if *h == header =>
            {
                Some(s)
            }
            _ => None,
        },
        Expr::And(items) => items.iter().find_map(|i| required_literal(i, header)),
        _ => None,
    }
}

/// The string `header` must equal when `e` is nothing but `H = 'x'` (either operand
/// order; the parser keeps no parentheses): then a message matches exactly when its
/// header H is `'x'`.
pub(crate) fn sole_literal(e: &Expr, header: Header) -> Option<&str> {
    match e {
        Expr::Compare(CmpOp::Eq, ..) => required_literal(e, header),
        _ => None,
    }
}
