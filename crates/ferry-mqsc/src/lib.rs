//! MQSC for Ferry: the command language of IBM MQ, parsed, executed and answered.
//!
//! * [`lexer`] and [`parser`] turn one logical command into a [`Command`]; attribute
//!   keywords and values are checked against the ferry-objects attribute tables.
//! * [`script`] joins continuation lines, skips comments, and runs scripts or
//!   interactive input as runmqsc does ([`Session`], [`run_script`], [`Summary`]).
//! * [`executor`] runs a command against an [`AdminTarget`] (the queue manager as MQSC
//!   sees it) and answers in MQ's layout with FRY messages (the ferry-messages table,
//!   [`display`]); [`runmqsc_lines`] holds runmqsc's few unnumbered lines.
//! * [`authinfo`] runs DEFINE, ALTER, DELETE and DISPLAY AUTHINFO.
//! * [`process`] runs DEFINE, ALTER, DELETE and DISPLAY PROCESS.
//! * [`namelist`] runs DEFINE, ALTER, DELETE and DISPLAY NAMELIST.
//! * [`topic`] runs DEFINE, ALTER, DELETE and DISPLAY TOPIC.
//! * [`subscription`] runs DEFINE, ALTER, DELETE and DISPLAY SUB, DISPLAY SBSTATUS,
//!   TPSTATUS and PUBSUB, and CLEAR TOPICSTR.
//! * [`chlauth`] runs SET CHLAUTH and DISPLAY CHLAUTH (MATCH(RUNCHECK) included).
//! * [`docs`] renders the message and attribute tables for docs/mqsc.md.
//! * [`testing`] holds an in-memory [`AdminTarget`] for tests and the fuzzer.
//!
//! Everything here is pure: no I/O, no clock (the target tells the time).

pub mod authinfo;
pub mod authrec;
pub mod chlauth;
pub mod command;
pub mod command_authority;
pub mod display;
pub mod docs;
pub mod error;
pub mod executor;
pub mod lexer;
pub mod namelist;
pub mod parser;
pub(crate) mod plain_object;
pub mod process;
pub mod runmqsc_lines;
pub mod script;
pub mod subscription;
pub mod target;
pub mod testing;
pub mod topic;

pub use command::Command;
pub use error::{ParseError, ParseErrorKind};
pub use executor::{
    channel_operation_result, check_channel_operation, execute, CommandResult, MAX_COMMAND_OUTPUT,
};
pub use parser::{parse_command, MAX_COMMAND_LENGTH};
pub use script::{
    exit_status, parse_script, run_script, CommandRunner, LogicalCommand, ReadItem, RunOptions,
    ScriptOutput, ScriptReader, Session, Step, Summary, EXIT_ERROR, EXIT_OK, EXIT_SOME_FAILED,
};
pub use target::AdminTarget;
