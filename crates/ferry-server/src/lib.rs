//! The Ferry queue manager process: everything at the edge of the engine.
//!
//! The engine (`ferry-engine`) decides; this crate does the I/O around it:
//! - [`administrators`]: who administers the queue manager (BLOCKUSER's `*MQADMIN`);
//! - [`authentication`]: the AUTHINFO object and user repository connections are checked with;
//! - [`amqp_mapping`]: AMQP 1.0 messages to and from MQ messages, and JMS selectors;
//! - [`ldap_users`]: users of an LDAP directory (AUTHINFO IDPWLDAP);
//! - [`host_users`]: host users' passwords through PAM (loaded at run time);
//! - [`home`] and [`qm_ini`]: where a queue manager lives on disk and its qm.ini stanzas;
//! - [`catalogue_store`]: the object definitions on disk (snapshot, journal, writer thread);
//! - [`limits`]: every bound on what a client can make the server hold or wait for;
//! - [`error_log`]: the FRYERR01.LOG error log; its messages are the ferry-messages table,
//!   re-exported as [`messages`] for the runtime and the `ferry` command;
//! - [`developer_config`]: what `ferry start --create` adds for developers (DEV.* objects);
//! - [`console_log`]: run/console.log of a background queue manager, rotated by size;
//! - [`user_repository`]: the queue manager's users and password hashes on disk;
//! - [`store_errors`]: the one mapping from the store's errors to MQ reason codes;
//! - [`lifecycle`]: create, start, stop, status and delete (crtmqm, strmqm, endmqm, dspmq, dltmqm);
//! - [`installation`]: what this installation is (dspmqver, dspmq -o installation);
//! - [`rest_mqsc`]: MQSC of the administrative REST API (one command, runCommandJSON, responses);
//! - `runtime`: the running process: listeners, conversations, the command server, the web
//!   server.

pub mod administrators;
pub mod amqp_mapping;
pub mod authentication;
pub mod catalogue_store;
pub mod console_log;
pub mod developer_config;
pub mod error_log;
pub mod home;
pub mod host_users;
pub mod installation;
pub mod ldap_users;
pub mod lifecycle;
pub mod limits;
pub mod principals;
pub mod qm_ini;
pub mod rest_mqsc;
mod runtime;
pub mod store_errors;
pub mod user_repository;

pub use ferry_messages as messages;

pub use runtime::{
    create_queue_manager, run_foreground, set_allocator_trim, CreateOptions, DEFAULT_AMQP_CHANNEL,
    DEFAULT_LISTENER,
};
