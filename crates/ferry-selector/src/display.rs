//! Prints a compiled selector as normalised text: keywords in upper case, single spaces,
//! strings re-quoted, numbers in canonical form, and only the parentheses precedence needs.
//!
//! The text parses back to the same tree (the proptests in `fuzzing.rs` check it), so it
//! is safe to show in DISPLAY output and to store.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::{ArithOp, CmpOp, Expr, Literal, Sign};

/// Binding strength, loosest first; an operand weaker than its slot needs parentheses.
mod prec {
    pub const OR: u8 = 1;
    pub const AND: u8 = 2;
    pub const NOT: u8 = 3;
    pub const PREDICATE: u8 = 4;
    pub const SUM: u8 = 5;
    pub const PRODUCT: u8 = 6;
    pub const UNARY: u8 = 7;
    pub const ATOM: u8 = 8;
}

fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Or(_) => prec::OR,
        Expr::And(_) => prec::AND,
        Expr::Not(_) => prec::NOT,
        Expr::Compare(..)
        | Expr::Between { .. }
        | Expr::In { .. }
        | Expr::Like { .. }
        | Expr::IsNull { .. } => prec::PREDICATE,
        Expr::Arith(ArithOp::Add | ArithOp::Sub, ..) => prec::SUM,
        Expr::Arith(ArithOp::Mul | ArithOp::Div, ..) => prec::PRODUCT,
        Expr::Unary(..) => prec::UNARY,
        Expr::Literal(_) | Expr::Header(_) | Expr::Property(_) => prec::ATOM,
    }
}

/// Writes `e`, in parentheses if it binds more loosely than `min`.
fn operand(f: &mut Formatter<'_>, e: &Expr, min: u8) -> fmt::Result {
    if precedence(e) < min {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

fn quoted(f: &mut Formatter<'_>, s: &str) -> fmt::Result {
    f.write_char('\'')?;
    for c in s.chars() {
        if c == '\'' {
            f.write_char('\'')?;
        }
        f.write_char(c)?;
    }
    f.write_char('\'')
}

fn not_if(negated: bool) -> &'static str {
    if negated {
        "NOT "
    } else {
        ""
    }
}

impl Display for Literal {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("NULL"),
            Literal::Bool(true) => f.write_str("TRUE"),
            Literal::Bool(false) => f.write_str("FALSE"),
            Literal::Long(v) => write!(f, "{v}"),
            // Debug is the shortest text that reads back to the same bits, and always has a
            // '.' or an exponent, so it lexes as an approximate numeric again.
            Literal::Double(v) => write!(f, "{v:?}"),
            Literal::String(s) => quoted(f, s),
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Literal(l) => write!(f, "{l}"),
            Expr::Header(h) => f.write_str(h.name()),
            Expr::Property(name) => f.write_str(name),
            Expr::Unary(sign, inner) => {
                f.write_char(match sign {
                    Sign::Plus => '+',
                    Sign::Minus => '-',
                })?;
                // The parser folds signs into number literals; a tree built otherwise
                // still prints text that means the same (`-(5)`).
                let unsigned_number = match &**inner {
                    Expr::Literal(Literal::Long(v)) => *v >= 0,
                    Expr::Literal(Literal::Double(v)) => v.is_sign_positive(),
                    _ => false,
                };
                if unsigned_number {
                    write!(f, "({inner})")
                } else {
                    operand(f, inner, prec::UNARY)
                }
            }
            Expr::Arith(op, l, r) => {
                let (p, symbol) = match op {
                    ArithOp::Add => (prec::SUM, "+"),
                    ArithOp::Sub => (prec::SUM, "-"),
                    ArithOp::Mul => (prec::PRODUCT, "*"),
                    ArithOp::Div => (prec::PRODUCT, "/"),
                };
                operand(f, l, p)?;
                write!(f, " {symbol} ")?;
                operand(f, r, p + 1)
            }
            Expr::Compare(op, l, r) => {
                let symbol = match op {
                    CmpOp::Eq => "=",
                    CmpOp::Ne => "<>",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                };
                operand(f, l, prec::SUM)?;
                write!(f, " {symbol} ")?;
                operand(f, r, prec::SUM)
            }
            Expr::Not(inner) => {
                f.write_str("NOT ")?;
                operand(f, inner, prec::NOT)
            }
            Expr::And(items) | Expr::Or(items) => {
                let (min, joiner) = match self {
                    Expr::And(_) => (prec::NOT, " AND "),
                    _ => (prec::AND, " OR "),
                };
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(joiner)?;
                    }
                    operand(f, item, min)?;
                }
                Ok(())
            }
            Expr::Between {
                negated,
                value,
                low,
                high,
            } => {
                operand(f, value, prec::SUM)?;
                write!(f, " {}BETWEEN ", not_if(*negated))?;
                operand(f, low, prec::SUM)?;
                f.write_str(" AND ")?;
                operand(f, high, prec::SUM)
            }
            Expr::In {
                negated,
                value,
                list,
            } => {
                operand(f, value, prec::SUM)?;
                write!(f, " {}IN (", not_if(*negated))?;
                for (i, s) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    quoted(f, s)?;
                }
                f.write_char(')')
            }
            Expr::Like {
                negated,
                value,
                pattern,
            } => {
                operand(f, value, prec::SUM)?;
                write!(f, " {}LIKE ", not_if(*negated))?;
                quoted(f, pattern.source())?;
                if let Some(c) = pattern.escape() {
                    f.write_str(" ESCAPE ")?;
                    quoted(f, c.encode_utf8(&mut [0; 4]))?;
                }
                Ok(())
            }
            Expr::IsNull { negated, value } => {
                operand(f, value, prec::SUM)?;
                write!(f, " IS {}NULL", not_if(*negated))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parser::parse;

    fn normal(text: &str) -> String {
        parse(text).expect("parses").to_string()
    }

    #[test]
    fn normalises_case_spacing_and_literals() {
        assert_eq!(
            normal("color='red'and   weight>2.5e0"),
            "color = 'red' AND weight > 2.5"
        );
        assert_eq!(normal("x in('a','it''s')"), "x IN ('a', 'it''s')");
        assert_eq!(
            normal("n = 0x10 or n = 010 or n = 5L"),
            "n = 16 OR n = 8 OR n = 5"
        );
        assert_eq!(
            normal("s not like '!%%' escape '!'"),
            "s NOT LIKE '!%%' ESCAPE '!'"
        );
        assert_eq!(normal("a is not null"), "a IS NOT NULL");
        assert_eq!(normal("a not between -1 and +1"), "a NOT BETWEEN -1 AND 1");
        assert_eq!(normal("flag = true"), "flag = TRUE");
    }

    #[test]
    fn keeps_only_needed_parentheses() {
        assert_eq!(normal("((a = 1))"), "a = 1");
        assert_eq!(normal("(a OR b) AND c"), "(a OR b) AND c");
        assert_eq!(normal("a OR (b AND c)"), "a OR b AND c");
        assert_eq!(normal("(a * b) + c = 0"), "a * b + c = 0");
        assert_eq!(normal("a * (b + c) > 0"), "a * (b + c) > 0");
        assert_eq!(normal("a - (b - c) = 0"), "a - (b - c) = 0");
        assert_eq!(normal("NOT (a = 1)"), "NOT a = 1");
        assert_eq!(normal("(a = 1) = (b = 2)"), "(a = 1) = (b = 2)");
        assert_eq!(normal("-(x) = - - 5"), "-x = 5");
        assert_eq!(normal("- -x = -(-(-x))"), "--x = ---x");
        assert_eq!(normal("(a AND b) AND c"), "(a AND b) AND c");
    }
}
