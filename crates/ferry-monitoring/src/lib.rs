//! Ferry's monitoring vocabulary, without I/O: what the queue manager counts, how it
//! publishes it on `$SYS` topics as IBM MQ does, and how Prometheus sees it.
//!
//! - [`counters`]: the statistics the engine keeps inline ([`MqiCounters`] for the
//!   queue manager, [`QueueCounters`] per queue): plain integers, only growing.
//! - [`table`]: the one table of MQ's monitor classes, types and elements (ids,
//!   descriptions, datatypes, Prometheus names, where each value comes from).
//! - [`publication`]: the METADATA and data publications (PCF, [`ferry_mqi::pcf`]) made
//!   from the table, their topics, and reading them back as amqsrua does.
//! - [`prometheus`]: the text exposition with mq-metric-samples' names and labels, and
//!   the generic-name filter choosing which queues and channels a scrape shows.

pub mod counters;
pub mod parameters;
pub mod prometheus;
pub mod publication;
pub mod statistics_message;
pub mod table;

pub use counters::{MqiCounters, QueueCounters};
pub use prometheus::{render, NameFilter, Snapshot};
pub use table::{
    find_class, Datatype, MonitorClass, MonitorType, QueueSample, ResourceSample, CLASSES,
};
