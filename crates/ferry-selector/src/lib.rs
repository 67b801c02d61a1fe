//! JMS 2.0 message selectors for Ferry's AMQP channel (Qpid JMS consumers).
//!
//! A selector is compiled once ([`Selector::parse`]) into a tree with headers resolved
//! and LIKE patterns compiled, then evaluated per message through the [`PropertySource`]
//! trait the caller implements over its own message type. Evaluation follows the JMS
//! spec's three-valued logic (a missing property is NULL, and only a TRUE result
//! selects). [`Selector::correlation_id_lookup`] and [`Selector::message_id_lookup`]
//! expose the id a request/reply selector pins, so the server can use its index.
//!
//! The crate is pure: no I/O, no dependency on the rest of Ferry. Module map:
//! `lexer` (tokens) → `parser` (grammar, static type checks; `equality` reads
//! request/reply's `name = 'literal'` in one pass) → `ast` (the tree) →
//! `eval` (three-valued evaluation), `like` (patterns), `lookup` (index fast paths),
//! `display` (normalised text), `selector` (the public type), `fuzzing` (the fuzz and
//! proptest entry point).
//!
//! ```
//! use ferry_selector::{Header, PropertySource, Selector, Value};
//!
//! struct Msg;
//! impl PropertySource for Msg {
//!     fn header(&self, h: Header) -> Option<Value<'_>> {
//!         (h == Header::Priority).then_some(Value::Long(7))
//!     }
//!     fn property(&self, name: &str) -> Option<Value<'_>> {
//!         (name == "color").then(|| Value::str("red"))
//!     }
//! }
//!
//! let s = Selector::parse("color = 'red' AND JMSPriority > 4").unwrap();
//! assert!(s.matches(&Msg));
//! assert!(!Selector::parse("size > 3").unwrap().matches(&Msg)); // NULL > 3 is UNKNOWN
//! ```

mod ast;
mod display;
mod equality;
mod error;
mod eval;
pub mod fuzzing;
mod header;
mod lexer;
mod like;
mod lookup;
mod parser;
mod selector;
#[cfg(test)]
mod strategy;
mod value;

pub use error::{ErrorKind, SelectorError};
pub use header::Header;
pub use selector::Selector;
pub use value::{NoProperties, PropertySource, Value};
