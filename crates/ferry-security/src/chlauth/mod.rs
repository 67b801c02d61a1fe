//! Channel authentication records (CHLAUTH): who may use which channel, from where, and
//! as which user id.
//!
//! - [`record`]: one record (`SET CHLAUTH`), its types and the checks SET makes;
//! - [`rules`]: the set of records and the decisions they make for a connection;
//! - [`address`] and [`generic_name`]: the patterns records match with.
//!
//! Pure: the queue manager stores the records in its catalogue and asks
//! [`ChlauthRules::check`] when a connection arrives.

pub mod address;
pub mod generic_name;
pub mod record;
pub mod rules;

pub use address::{AddressError, AddressPattern};
pub use generic_name::GenericName;
pub use record::{
    CheckClient, ChlauthError, ChlauthRecord, ChlauthType, RecordKey, UserSource, ANY_ADMIN,
};
pub use rules::{Block, BlockReason, ChlauthRules, Mapping, Partner, SetAction, Verdict};
