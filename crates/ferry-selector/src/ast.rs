//! The compiled form of a selector: a tree with identifiers already resolved.
//!
//! Header names become [`Header`] values and LIKE patterns are compiled, so evaluation does
//! no string work beyond the comparisons the selector asks for. AND and OR chains are flat
//! lists (a long `a = 1 OR a = 2 OR ...` stays shallow). Parentheses leave no node: the
//! tree's shape is the grouping, and `Display` (display.rs) puts back only the parentheses
//! the precedence rules need.

use crate::like::LikePattern;
use crate::Header;

/// A literal value written in the selector.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    /// `NULL` (accepted as a value, as ActiveMQ-derived parsers do; compares as UNKNOWN).
    Null,
    Bool(bool),
    Long(i64),
    Double(f64),
    String(Box<str>),
}

/// `+` and `-` as prefix operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sign {
    Plus,
    Minus,
}

/// Binary arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A selector expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Literal(Literal),
    Header(Header),
    Property(Box<str>),
    Unary(Sign, Box<Expr>),
    Arith(ArithOp, Box<Expr>, Box<Expr>),
    Compare(CmpOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    /// Two or more operands.
    And(Vec<Expr>),
    /// Two or more operands.
    Or(Vec<Expr>),
    Between {
        negated: bool,
        value: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
    },
    In {
        negated: bool,
        value: Box<Expr>,
        list: Vec<Box<str>>,
    },
    Like {
        negated: bool,
        value: Box<Expr>,
        pattern: LikePattern,
    },
    IsNull {
        negated: bool,
        value: Box<Expr>,
    },
}

/// What the text alone says about an expression's type, for the static checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Number,
    String,
    Condition,
    /// An identifier or NULL: only known when a message is at hand.
    Unknown,
}

impl Kind {
    /// The kind in words, for error messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Condition => "a condition",
            Kind::Unknown => "a value",
        }
    }
}

impl Expr {
    /// The statically known kind of this expression (not recursive).
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Expr::Literal(Literal::Null) | Expr::Header(_) | Expr::Property(_) => Kind::Unknown,
            Expr::Literal(Literal::Bool(_)) => Kind::Condition,
            Expr::Literal(Literal::Long(_) | Literal::Double(_)) => Kind::Number,
            Expr::Literal(Literal::String(_)) => Kind::String,
            Expr::Unary(..) | Expr::Arith(..) => Kind::Number,
            Expr::Compare(..)
            | Expr::Not(_)
            | Expr::And(_)
            | Expr::Or(_)
            | Expr::Between { .. }
            | Expr::In { .. }
            | Expr::Like { .. }
            | Expr::IsNull { .. } => Kind::Condition,
        }
    }
}
