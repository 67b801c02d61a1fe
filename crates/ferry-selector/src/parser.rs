//! Recursive-descent parser for the JMS 2.0 selector grammar, with its static type checks.
//!
//! Precedence, loosest first (JMS 2.0 section 3.8.1.1, SQL-92):
//! `OR` < `AND` < `NOT` < comparisons and predicates (`= <> < <= > >=`, `[NOT] BETWEEN`,
//! `[NOT] IN`, `[NOT] LIKE`, `IS [NOT] NULL`; these do not chain) < `+ -` < `* /` <
//! unary `+ -` < literals, identifiers and parentheses. Binary arithmetic is
//! left-associative.
//!
//! Static checks: where the text alone shows an operand has the wrong type (a string or
//! condition in arithmetic, ordering or BETWEEN; a number or condition before LIKE or IN;
//! a number or string where a condition belongs) the selector is rejected, rather than
//! compiled into something that can never be TRUE. Identifiers are typed only at
//! evaluation time. Nesting is capped ([`MAX_NESTING`], [`MAX_HEIGHT`]) so no input can
//! exhaust the stack.

use crate::ast::{ArithOp, CmpOp, Expr, Kind, Literal, Sign};
use crate::error::{ErrorKind, SelectorError};
use crate::lexer::{tokenize, Keyword, Tok, Token};
use crate::like::LikePattern;
use crate::Header;

/// How deep parentheses, NOT and signs may nest. Each level costs the recursive parser
/// about ten stack frames (~25 KiB in a debug build), so this keeps any input well inside
/// a 2 MiB thread stack.
pub(crate) const MAX_NESTING: usize = 32;

/// How tall the compiled tree may be (operator chains such as `a + b + c` add a level per
/// operator; AND / OR chains are flat and add one). Bounds evaluation and printing depth.
pub(crate) const MAX_HEIGHT: usize = 64;

/// Parses a whole selector into its expression tree: `name = 'literal'` (request/reply's
/// selector) by the one-pass reader in `equality`, everything else by the grammar.
pub(crate) fn parse(text: &str) -> Result<Expr, SelectorError> {
    match crate::equality::parse(text) {
        Some(expr) => Ok(expr),
        None => parse_general(text),
    }
}

/// Parses a selector by the full grammar.
pub(crate) fn parse_general(text: &str) -> Result<Expr, SelectorError> {
    let tokens = tokenize(text)?;
    if tokens.first().is_none_or(|t| t.tok == Tok::End) {
        return Err(SelectorError::new(1, ErrorKind::Empty));
    }
    let mut parser = Parser {
        text,
        tokens,
        pos: 0,
        depth: 0,
    };
    let top = parser.or()?;
    if parser.peek().tok != Tok::End {
        let expected = if top.expr.kind() == Kind::Condition {
            "AND, OR or the end of the selector"
        } else {
            "an operator or the end of the selector"
        };
        return Err(parser.expected(expected));
    }
    require(&top, Kind::Condition)?;
    Ok(top.expr)
}

/// A parsed subexpression with the facts the parser needs about it.
struct Parsed {
    expr: Expr,
    /// Height of the tree (a leaf is 1).
    height: usize,
    /// Column where it starts, for type errors.
    column: usize,
}

/// Fails unless `p` can be of `kind` (an identifier or NULL can be anything).
fn require(p: &Parsed, kind: Kind) -> Result<(), SelectorError> {
    let found = p.expr.kind();
    if found == kind || found == Kind::Unknown {
        Ok(())
    } else {
        Err(SelectorError::new(
            p.column,
            ErrorKind::WrongType {
                expected: kind.describe(),
                found: found.describe(),
            },
        ))
    }
}

fn node(expr: Expr, height: usize, column: usize) -> Result<Parsed, SelectorError> {
    if height > MAX_HEIGHT {
        return Err(SelectorError::new(column, ErrorKind::TooDeep(MAX_HEIGHT)));
    }
    Ok(Parsed {
        expr,
        height,
        column,
    })
}

fn compare_op(tok: &Tok) -> Option<CmpOp> {
    Some(match tok {
        Tok::Eq => CmpOp::Eq,
        Tok::Ne => CmpOp::Ne,
        Tok::Lt => CmpOp::Lt,
        Tok::Le => CmpOp::Le,
        Tok::Gt => CmpOp::Gt,
        Tok::Ge => CmpOp::Ge,
        _ => return None,
    })
}

struct Parser<'t> {
    text: &'t str,
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        // The last token is End and is never consumed, so `pos` stays in bounds.
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    /// Consumes the current token, handing back its kind (End is never consumed).
    fn advance(&mut self) -> Tok {
        let last = self.tokens.len() - 1;
        let token = &mut self.tokens[self.pos.min(last)];
        if token.tok == Tok::End {
            return Tok::End;
        }
        self.pos += 1;
        std::mem::replace(&mut token.tok, Tok::End)
    }

    fn at_keyword(&self, k: Keyword) -> bool {
        self.peek().tok == Tok::Keyword(k)
    }

    fn eat_keyword(&mut self, k: Keyword) -> bool {
        let hit = self.at_keyword(k);
        if hit {
            self.advance();
        }
        hit
    }

    fn source_of(&self, token: &Token) -> String {
        let s = &self.text[token.start..token.end];
        if s.chars().count() > 40 {
            let cut: String = s.chars().take(37).collect();
            format!("{cut}...")
        } else {
            s.to_string()
        }
    }

    /// An "expected X after Y, found Z" error at the current token.
    fn expected(&self, expected: &'static str) -> SelectorError {
        let token = self.peek();
        let found = match token.tok {
            Tok::End => "the end of the selector".to_string(),
            Tok::Str(_) => format!("the string {}", self.source_of(token)),
            _ => format!("'{}'", self.source_of(token)),
        };
        let after = self
            .pos
            .checked_sub(1)
            .map(|i| self.source_of(&self.tokens[i]));
        SelectorError::new(
            token.column,
            ErrorKind::Expected {
                expected,
                after,
                found,
            },
        )
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(
        &mut self,
        column: usize,
        f: impl FnOnce(&mut Self) -> Result<T, SelectorError>,
    ) -> Result<T, SelectorError> {
        if self.depth >= MAX_NESTING {
            return Err(SelectorError::new(column, ErrorKind::TooDeep(MAX_NESTING)));
        }
        self.depth += 1;
        let out = f(self);
        self.depth -= 1;
        out
    }

    fn or(&mut self) -> Result<Parsed, SelectorError> {
        self.chain(Keyword::Or, Self::and, Expr::Or)
    }

    fn and(&mut self) -> Result<Parsed, SelectorError> {
        self.chain(Keyword::And, Self::not, Expr::And)
    }

    /// `operand (KEYWORD operand)*` as one flat node when there are two or more.
    fn chain(
        &mut self,
        keyword: Keyword,
        operand: fn(&mut Self) -> Result<Parsed, SelectorError>,
        build: fn(Vec<Expr>) -> Expr,
    ) -> Result<Parsed, SelectorError> {
        let first = operand(self)?;
        if !self.at_keyword(keyword) {
            return Ok(first);
        }
        require(&first, Kind::Condition)?;
        let (column, mut height) = (first.column, first.height);
        let mut items = vec![first.expr];
        while self.eat_keyword(keyword) {
            let next = operand(self)?;
            require(&next, Kind::Condition)?;
            height = height.max(next.height);
            items.push(next.expr);
        }
        node(build(items), height + 1, column)
    }

    fn not(&mut self) -> Result<Parsed, SelectorError> {
        if !self.at_keyword(Keyword::Not) {
            return self.predicate();
        }
        let column = self.peek().column;
        self.advance();
        let inner = self.nested(column, Self::not)?;
        require(&inner, Kind::Condition)?;
        node(Expr::Not(Box::new(inner.expr)), inner.height + 1, column)
    }

    fn predicate(&mut self) -> Result<Parsed, SelectorError> {
        let left = self.sum()?;
        if let Some(op) = compare_op(&self.peek().tok) {
            self.advance();
            let right = self.sum()?;
            if !matches!(op, CmpOp::Eq | CmpOp::Ne) {
                require(&left, Kind::Number)?;
                require(&right, Kind::Number)?;
            }
            let height = left.height.max(right.height) + 1;
            let expr = Expr::Compare(op, Box::new(left.expr), Box::new(right.expr));
            return node(expr, height, left.column);
        }
        let negated = self.eat_keyword(Keyword::Not);
        match self.peek().tok {
            Tok::Keyword(Keyword::Between) => self.between(left, negated),
            Tok::Keyword(Keyword::In) => self.in_list(left, negated),
            Tok::Keyword(Keyword::Like) => self.like(left, negated),
            Tok::Keyword(Keyword::Is) if !negated => self.is_null(left),
            _ if negated => Err(self.expected("BETWEEN, IN or LIKE")),
            _ => Ok(left),
        }
    }

    fn between(&mut self, value: Parsed, negated: bool) -> Result<Parsed, SelectorError> {
        self.advance();
        let low = self.sum()?;
        if !self.eat_keyword(Keyword::And) {
            return Err(self.expected("AND"));
        }
        let high = self.sum()?;
        for p in [&value, &low, &high] {
            require(p, Kind::Number)?;
        }
        let height = value.height.max(low.height).max(high.height) + 1;
        let expr = Expr::Between {
            negated,
            value: Box::new(value.expr),
            low: Box::new(low.expr),
            high: Box::new(high.expr),
        };
        node(expr, height, value.column)
    }

    fn string_literal(&mut self) -> Result<(String, usize), SelectorError> {
        let column = self.peek().column;
        match self.peek().tok {
            Tok::Str(_) => match self.advance() {
                Tok::Str(s) => Ok((s, column)),
                _ => Err(self.expected("a string literal")),
            },
            _ => Err(self.expected("a string literal")),
        }
    }

    fn in_list(&mut self, value: Parsed, negated: bool) -> Result<Parsed, SelectorError> {
        self.advance();
        require(&value, Kind::String)?;
        if self.peek().tok != Tok::LParen {
            return Err(self.expected("'('"));
        }
        self.advance();
        let mut list = Vec::new();
        loop {
            let (s, _) = self.string_literal()?;
            list.push(s.into_boxed_str());
            match self.peek().tok {
                Tok::Comma => {
                    self.advance();
                }
                Tok::RParen => {
                    self.advance();
                    break;
                }
                _ => return Err(self.expected("',' or ')'")),
            }
        }
        let expr = Expr::In {
            negated,
            value: Box::new(value.expr),
            list,
        };
        node(expr, value.height + 1, value.column)
    }

    fn like(&mut self, value: Parsed, negated: bool) -> Result<Parsed, SelectorError> {
        self.advance();
        require(&value, Kind::String)?;
        let (pattern, pattern_column) = self.string_literal()?;
        let escape = if self.eat_keyword(Keyword::Escape) {
            let (e, column) = self.string_literal()?;
            let mut chars = e.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Some(c),
                _ => return Err(SelectorError::new(column, ErrorKind::EscapeLength)),
            }
        } else {
            None
        };
        let pattern = LikePattern::new(&pattern, escape)
            .map_err(|_| SelectorError::new(pattern_column, ErrorKind::DanglingEscape))?;
        let expr = Expr::Like {
            negated,
            value: Box::new(value.expr),
            pattern,
        };
        node(expr, value.height + 1, value.column)
    }

    fn is_null(&mut self, value: Parsed) -> Result<Parsed, SelectorError> {
        self.advance();
        let negated = self.eat_keyword(Keyword::Not);
        if !self.eat_keyword(Keyword::Null) {
            return Err(self.expected("NULL"));
        }
        let expr = Expr::IsNull {
            negated,
            value: Box::new(value.expr),
        };
        node(expr, value.height + 1, value.column)
    }

    /// Left-associative `operand (op operand)*` for the arithmetic levels.
    fn arithmetic(
        &mut self,
        op_of: fn(&Tok) -> Option<ArithOp>,
        operand: fn(&mut Self) -> Result<Parsed, SelectorError>,
    ) -> Result<Parsed, SelectorError> {
        let mut left = operand(self)?;
        while let Some(op) = op_of(&self.peek().tok) {
            self.advance();
            let right = operand(self)?;
            require(&left, Kind::Number)?;
            require(&right, Kind::Number)?;
            let height = left.height.max(right.height) + 1;
            let expr = Expr::Arith(op, Box::new(left.expr), Box::new(right.expr));
            left = node(expr, height, left.column)?;
        }
        Ok(left)
    }

    fn sum(&mut self) -> Result<Parsed, SelectorError> {
        self.arithmetic(
            |t| match t {
                Tok::Plus => Some(ArithOp::Add),
                Tok::Minus => Some(ArithOp::Sub),
                _ => None,
            },
            Self::product,
        )
    }

    fn product(&mut self) -> Result<Parsed, SelectorError> {
        self.arithmetic(
            |t| match t {
                Tok::Star => Some(ArithOp::Mul),
                Tok::Slash => Some(ArithOp::Div),
                _ => None,
            },
            Self::unary,
        )
    }

    fn unary(&mut self) -> Result<Parsed, SelectorError> {
        let sign = match self.peek().tok {
            Tok::Plus => Sign::Plus,
            Tok::Minus => Sign::Minus,
            _ => return self.primary(),
        };
        let column = self.peek().column;
        self.advance();
        // A sign directly on a number is part of the literal (so -9223372036854775808 fits).
        if matches!(self.peek().tok, Tok::Integer { .. } | Tok::Double(_)) {
            let literal = self.number(sign == Sign::Minus)?;
            return node(Expr::Literal(literal), 1, column);
        }
        let inner = self.nested(column, Self::unary)?;
        require(&inner, Kind::Number)?;
        // Signs on a (signed or parenthesised) number fold too, with Java's wrapping
        // negation, so the tree never holds a sign over a number literal.
        let folded = match (sign, &inner.expr) {
            (Sign::Plus, Expr::Literal(l @ (Literal::Long(_) | Literal::Double(_)))) => {
                Some(l.clone())
            }
            (Sign::Minus, Expr::Literal(Literal::Long(v))) => Some(Literal::Long(v.wrapping_neg())),
            (Sign::Minus, Expr::Literal(Literal::Double(v))) => Some(Literal::Double(-v)),
            _ => None,
        };
        if let Some(literal) = folded {
            return node(Expr::Literal(literal), 1, column);
        }
        node(
            Expr::Unary(sign, Box::new(inner.expr)),
            inner.height + 1,
            column,
        )
    }

    /// The numeric literal at the current token, negated if `negative`.
    fn number(&mut self, negative: bool) -> Result<Literal, SelectorError> {
        let token = self.peek().clone();
        let out_of_range = || {
            let mut text = self.text[token.start..token.end].to_string();
            if negative {
                text.insert(0, '-');
            }
            SelectorError::new(token.column, ErrorKind::NumberOutOfRange(text))
        };
        let literal = match token.tok {
            Tok::Double(v) => Literal::Double(if negative { -v } else { v }),
            Tok::Integer {
                magnitude,
                decimal: false,
            } => {
                let v = magnitude as i64;
                Literal::Long(if negative { v.wrapping_neg() } else { v })
            }
            Tok::Integer {
                magnitude,
                decimal: true,
            } => match (i64::try_from(magnitude), negative) {
                (Ok(v), false) => Literal::Long(v),
                (Ok(v), true) => Literal::Long(-v),
                (Err(_), true) if magnitude == 1 << 63 => Literal::Long(i64::MIN),
                (Err(_), _) => return Err(out_of_range()),
            },
            _ => return Err(self.expected("a number")),
        };
        self.advance();
        Ok(literal)
    }

    fn primary(&mut self) -> Result<Parsed, SelectorError> {
        let token = self.peek().clone();
        let leaf = |expr| node(expr, 1, token.column);
        match &token.tok {
            Tok::Ident => {
                self.advance();
                let name = &self.text[token.start..token.end];
                leaf(match Header::from_name(name) {
                    Some(h) => Expr::Header(h),
                    None => Expr::Property(name.into()),
                })
            }
            Tok::Str(_) => match self.advance() {
                Tok::Str(s) => leaf(Expr::Literal(Literal::String(s.into_boxed_str()))),
                _ => Err(self.expected("a value")),
            },
            Tok::Integer { .. } | Tok::Double(_) => {
                let literal = self.number(false)?;
                leaf(Expr::Literal(literal))
            }
            Tok::Keyword(k @ (Keyword::True | Keyword::False | Keyword::Null)) => {
                self.advance();
                leaf(Expr::Literal(match k {
                    Keyword::True => Literal::Bool(true),
                    Keyword::False => Literal::Bool(false),
                    _ => Literal::Null,
                }))
            }
            Tok::LParen => {
                self.advance();
                let mut inner = self.nested(token.column, Self::or)?;
                if self.peek().tok != Tok::RParen {
                    return Err(self.expected(if inner.expr.kind() == Kind::Condition {
                        "AND, OR or ')'"
                    } else {
                        "an operator or ')'"
                    }));
                }
                self.advance();
                inner.column = token.column;
                Ok(inner)
            }
            _ => Err(self.expected("a value")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        match parse(text) {
            Ok(e) => panic!("{text:?} parsed as {e}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn syntax_errors_say_where_and_what_was_expected() {
        let at = |col: usize, msg: &str| format!("invalid selector at column {col}: {msg}");
        for (text, want) in [
            (
                "a =",
                at(
                    4,
                    "expected a value after '=', found the end of the selector",
                ),
            ),
            (
                "a = 1 b",
                at(
                    7,
                    "expected AND, OR or the end of the selector after '1', found 'b'",
                ),
            ),
            (
                "a b",
                at(
                    3,
                    "expected an operator or the end of the selector after 'a', found 'b'",
                ),
            ),
            (
                "(a = 1",
                at(
                    7,
                    "expected AND, OR or ')' after '1', found the end of the selector",
                ),
            ),
            (
                "(a + 1",
                at(
                    7,
                    "expected an operator or ')' after '1', found the end of the selector",
                ),
            ),
            (
                "a = 1)",
                at(
                    6,
                    "expected AND, OR or the end of the selector after '1', found ')'",
                ),
            ),
            (
                "a = 1 = 2",
                at(
                    7,
                    "expected AND, OR or the end of the selector after '1', found '='",
                ),
            ),
            ("AND = 1", at(1, "expected a value, found 'AND'")),
            (
                "a BETWEEN 1 OR 2",
                at(13, "expected AND after '1', found 'OR'"),
            ),
            (
                "a IN ('x', 1)",
                at(12, "expected a string literal after ',', found '1'"),
            ),
            (
                "a IN ('x' 'y')",
                at(11, "expected ',' or ')' after ''x'', found the string 'y'"),
            ),
            (
                "a IN 'x'",
                at(6, "expected '(' after 'IN', found the string 'x'"),
            ),
            (
                "a IN ()",
                at(7, "expected a string literal after '(', found ')'"),
            ),
            (
                "a LIKE 5",
                at(8, "expected a string literal after 'LIKE', found '5'"),
            ),
            ("a IS 5", at(6, "expected NULL after 'IS', found '5'")),
            (
                "a NOT = 1",
                at(7, "expected BETWEEN, IN or LIKE after 'NOT', found '='"),
            ),
            (
                "a = ",
                at(
                    5,
                    "expected a value after '=', found the end of the selector",
                ),
            ),
        ] {
            assert_eq!(error(text), want, "{text}");
        }
    }

    #[test]
    fn lexical_errors_have_positions() {
        let kind = |text: &str| parse(text).map(|_| ()).map_err(|e| (e.column, e.kind));
        assert_eq!(kind(""), Err((1, ErrorKind::Empty)));
        assert_eq!(kind(" \t\n"), Err((1, ErrorKind::Empty)));
        assert_eq!(kind("a = #"), Err((5, ErrorKind::UnexpectedChar('#'))));
        assert_eq!(kind("a = 'x"), Err((5, ErrorKind::UnterminatedString)));
        assert_eq!(
            kind("a = 9223372036854775808"),
            Err((5, ErrorKind::NumberOutOfRange("9223372036854775808".into())))
        );
        assert_eq!(kind("a = -9223372036854775808"), Ok(()));
        assert_eq!(
            kind("a LIKE 'x' ESCAPE 'ab'"),
            Err((19, ErrorKind::EscapeLength))
        );
        assert_eq!(
            kind("a LIKE 'x' ESCAPE ''"),
            Err((19, ErrorKind::EscapeLength))
        );
        assert_eq!(
            kind("a LIKE 'x!' ESCAPE '!'"),
            Err((8, ErrorKind::DanglingEscape))
        );
    }

    #[test]
    fn statically_mistyped_operands_are_rejected() {
        let wrong = |text: &str, column: usize, expected: &'static str, found: &'static str| {
            assert_eq!(
                parse(text).map(|_| ()),
                Err(SelectorError::new(
                    column,
                    ErrorKind::WrongType { expected, found }
                )),
                "{text}"
            );
        };
        wrong("'a' + 1 = 2", 1, "a number", "a string");
        wrong("a + 'b' = 2", 5, "a number", "a string");
        wrong("-'b' = 2", 2, "a number", "a string");
        wrong("(a = 1) * 2 = 2", 1, "a number", "a condition");
        wrong("'a' < 'b'", 1, "a number", "a string");
        wrong("a < TRUE", 5, "a number", "a condition");
        wrong("a BETWEEN 'x' AND 2", 11, "a number", "a string");
        wrong("5 LIKE 'x'", 1, "a string", "a number");
        wrong("(a = 1) IN ('x')", 1, "a string", "a condition");
        wrong("NOT 5", 5, "a condition", "a number");
        wrong("a = 1 AND 'x'", 11, "a condition", "a string");
        wrong("a + 1 OR b", 1, "a condition", "a number");
        wrong("5", 1, "a condition", "a number");
        // Identifiers are typed only at evaluation time.
        assert!(parse("size").is_ok());
        assert!(parse("a + b < c AND d LIKE 'x'").is_ok());
        assert!(
            parse("'a' = 1").is_ok(),
            "unlike types compare as FALSE, not an error"
        );
    }

    #[test]
    fn nesting_is_capped() {
        let parens = |n: usize| format!("{}a{}", "(".repeat(n), ")".repeat(n));
        assert!(parse(&parens(MAX_NESTING)).is_ok());
        assert_eq!(
            parse(&parens(MAX_NESTING + 1)).map(|_| ()),
            Err(SelectorError::new(
                MAX_NESTING + 1,
                ErrorKind::TooDeep(MAX_NESTING)
            ))
        );
        let nots = |n: usize| format!("{}a", "NOT ".repeat(n));
        assert!(parse(&nots(MAX_NESTING)).is_ok());
        assert!(parse(&nots(MAX_NESTING + 1)).is_err());
        // `a = 1 + 1 ...`: the comparison adds one level above the chain.
        let chain = |n: usize| format!("a = 1{}", " + 1".repeat(n));
        assert!(parse(&chain(MAX_HEIGHT - 2)).is_ok());
        assert_eq!(
            parse(&chain(MAX_HEIGHT)).map_err(|e| e.kind),
            Err(ErrorKind::TooDeep(MAX_HEIGHT))
        );
    }

    #[test]
    fn signs_fold_into_number_literals() {
        assert_eq!(
            parse("a = -9223372036854775808").map(|e| e.to_string()),
            Ok("a = -9223372036854775808".to_string())
        );
        assert_eq!(
            parse("a = -0x1").map(|e| e.to_string()),
            Ok("a = -1".to_string())
        );
        assert_eq!(
            parse("a = +5").map(|e| e.to_string()),
            Ok("a = 5".to_string())
        );
        assert_eq!(
            parse("a = - -5").map(|e| e.to_string()),
            Ok("a = 5".to_string())
        );
        assert_eq!(
            parse("a = -(+(-(2.5)))").map(|e| e.to_string()),
            Ok("a = 2.5".to_string())
        );
        assert_eq!(
            parse("a = --9223372036854775808").map(|e| e.to_string()),
            Ok("a = -9223372036854775808".to_string()),
            "Java's -Long.MIN_VALUE wraps"
        );
    }

    #[test]
    fn identifiers_resolve_to_headers_or_properties() {
        assert_eq!(
            parse("JMSPriority > 4").map(
                |e| matches!(e, Expr::Compare(_, l, _) if *l == Expr::Header(Header::Priority))
            ),
            Ok(true)
        );
        assert_eq!(
            parse("jmsPriority > 4")
                .map(|e| matches!(e, Expr::Compare(_, l, _) if matches!(*l, Expr::Property(_)))),
            Ok(true)
        );
    }
}
