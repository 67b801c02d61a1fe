//! Connection authentication (CONNAUTH): when a connection must prove its user id with a
//! password ([`policy`]), and the queue manager's own user repository that checks them
//! ([`user_file`]). Pure: the queue manager reads the file and runs the (slow, on
//! purpose) checks off the thread that serves connections.

pub mod policy;
pub mod user_file;

pub use policy::{credential_check, effective_user, CheckLevel, CredentialCheck};
pub use user_file::{hash_password, UserEntry, UserFile, UserFileError, Verification};
