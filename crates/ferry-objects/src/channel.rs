//! Channel definitions. This issue serves client connections (SVRCONN); message channels
//! (SDR/RCVR), cluster channels and AMQP channels join the same table in later issues.

use crate::attribute::AttrKind::{Int, Keyword, Name, Text};
use crate::{attribute_table, keyword_enum};

/// Applies to server-connection channels.
pub const SVRCONN: u32 = 1;

keyword_enum! {
    /// CHLTYPE: the role of a channel.
    ChannelType {
        /// Server end of client connections.
        Svrconn = "SVRCONN",
    }
}

impl ChannelType {
    /// The bit used in the attribute table's `applies` masks.
    pub fn mask(self) -> u32 {
        match self {
            ChannelType::Svrconn => SVRCONN,
        }
    }
}

keyword_enum! {
    /// TRPTYPE: transport.
    TransportType { Tcp = "TCP" }
}

attribute_table! {
    /// The attributes of a channel.
    pub struct ChannelAttributes;
    pub static CHANNEL_ATTRIBUTES;
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies SVRCONN, inq None, rw, "Description for operators.";
    transport_type: TransportType = "TRPTYPE", Keyword { values: TransportType::KEYWORDS }, default TransportType::Tcp,
        applies SVRCONN, inq None, rw, "Transport the channel uses.";
    max_msg_length: i32 = "MAXMSGL", Int { min: 0, max: 104_857_600 }, default 4_194_304,
        applies SVRCONN, inq None, rw, "Longest message on the channel; the lower of both ends is used (2218).";
    heartbeat_interval: i32 = "HBINT", Int { min: 0, max: 999_999 }, default 300,
        applies SVRCONN, inq None, rw, "Seconds of silence before a heartbeat; the larger of both ends is used; 0 off.";
    share_conversations: i32 = "SHARECNV", Int { min: 0, max: 999_999_999 }, default 10,
        applies SVRCONN, inq None, rw, "Conversations one TCP connection may carry (0 and 1: no sharing).";
    max_instances: i32 = "MAXINST", Int { min: 0, max: 999_999_999 }, default 999_999_999,
        applies SVRCONN, inq None, rw, "Most simultaneous instances of the channel.";
    max_instances_per_client: i32 = "MAXINSTC", Int { min: 0, max: 999_999_999 }, default 999_999_999,
        applies SVRCONN, inq None, rw, "Most simultaneous instances from one client address.";
    disconnect_interval: i32 = "DISCINT", Int { min: 0, max: 999_999 }, default 0,
        applies SVRCONN, inq None, rw, "Seconds an idle client may stay connected (0: forever).";
    mca_user: String = "MCAUSER", Name { max_len: 12 }, default String::new(),
        applies SVRCONN, inq None, rw, "User id for authorization (blank: the flowed user).";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies SVRCONN, inq None, ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies SVRCONN, inq None, ro, "Time of the last change (hh.mm.ss).";
}

/// A channel: name (up to 20 characters), type and attributes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ChannelDefinition {
    /// Channel name.
    pub name: String,
    /// Role.
    pub channel_type: ChannelType,
    /// Every attribute of the table.
    pub attributes: ChannelAttributes,
}

impl ChannelDefinition {
    /// A definition with MQ's defaults.
    pub fn new(name: impl Into<String>, channel_type: ChannelType) -> Self {
        ChannelDefinition {
            name: name.into(),
            channel_type,
            attributes: ChannelAttributes::default(),
        }
    }
}
