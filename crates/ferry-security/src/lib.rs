//! Ferry's security rules, as pure data and functions that do no I/O.
//!
//! - [`chlauth`]: channel authentication records (SET CHLAUTH): the patterns they match
//!   with and the decision they make for an inbound connection.
//! - [`connauth`]: when a connection must give a password (CHCKCLNT), and the queue
//!   manager's own user repository (salted Argon2id hashes).
//! - [`oam`]: object authorities (SET AUTHREC): profiles, authority records and what
//!   they let a principal do to an object.
//! - [`cipherspec`]: MQ's CipherSpec names (SSLCIPH), the TLS suites they stand for, and
//!   which of them Ferry offers; one table that MQSC validation, the TLS layer and the
//!   docs all read.
//! - [`peer_name`]: SSLPEER distinguished-name filters: their syntax and how a
//!   certificate's subject is matched against them.
//! - [`sni`]: the channel name a client puts in TLS SNI, as MQ encodes it, so the server
//!   knows the channel (and its CipherSpec and certificate) before the handshake ends.
//!
//! The TLS layer that uses them (rustls, key repositories) lives in `ferry-tls`.

pub mod chlauth;
pub mod cipherspec;
pub mod connauth;
pub mod fuzzing;
pub mod oam;
pub mod peer_name;
pub mod sni;
mod wildcard;

pub use cipherspec::{CipherSpec, CipherSpecChoice, CipherSpecError, CipherSpecPolicy, TlsVersion};
pub use peer_name::{DistinguishedName, PeerNameError, PeerNameFilter};

/// MQ's default certificate label: `ibmwebspheremq` and the owner's name in lower case
/// (the queue manager's name on a server, the user's on a client).
pub fn default_certificate_label(owner: &str) -> String {
    format!("ibmwebspheremq{}", owner.to_lowercase())
}
