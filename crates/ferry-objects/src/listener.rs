//! Listener definitions: where the queue manager accepts client connections.

use crate::attribute::AttrKind::{Int, Keyword, Text};
use crate::channel::TransportType;
use crate::{attribute_table, keyword_enum};

/// Applies to TCP listeners (the only kind).
pub const TCP: u32 = 1;

/// The port a listener with PORT(0) uses, as in MQ.
pub const DEFAULT_PORT: u16 = 1414;

keyword_enum! {
    /// CONTROL: whether the listener starts and stops with the queue manager.
    ListenerControl { Manual = "MANUAL", QMgr = "QMGR", StartOnly = "STARTONLY" }
}

attribute_table! {
    /// The attributes of a listener.
    pub struct ListenerAttributes;
    pub static LISTENER_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies TCP, inq None, rw, "Description for operators.";
    transport_type: TransportType = "TRPTYPE", Keyword { values: TransportType::KEYWORDS }, default TransportType::Tcp,
        applies TCP, inq None, rw, "Transport.";
    port: i32 = "PORT", Int { min: 0, max: 65535 }, default 0,
        applies TCP, inq None, rw, "TCP port (0: 1414).";
    ip_address: String = "IPADDR", Text { max_len: 48 }, default String::new(),
        applies TCP, inq None, rw, "Address to listen on (blank: all).";
    backlog: i32 = "BACKLOG", Int { min: 0, max: 999_999_999 }, default 0,
        applies TCP, inq None, rw, "Pending connection requests (0: system default).";
    control: ListenerControl = "CONTROL", Keyword { values: ListenerControl::KEYWORDS }, default ListenerControl::Manual,
        applies TCP, inq None, rw, "QMGR: start and stop with the queue manager.";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies TCP, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies TCP, inq None, ro, "Time of the last change (hh.mm.ss).";
}

/// A listener: name and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ListenerDefinition {
    /// Listener name.
    pub name: String,
    /// Every attribute of the table.
    pub attributes: ListenerAttributes,
}

impl ListenerDefinition {
    /// A definition with MQ's defaults.
    pub fn new(name: impl Into<String>) -> Self {
        ListenerDefinition {
            name: name.into(),
            attributes: ListenerAttributes::default(),
        }
    }

    /// The port actually used (PORT(0) means 1414).
    pub fn effective_port(&self) -> u16 {
        match u16::try_from(self.attributes.port) {
            Ok(0) | Err(_) => DEFAULT_PORT,
            Ok(p) => p,
        }
    }
}
