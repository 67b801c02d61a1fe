//! Endpoints: the listeners and channels connections arrive through, as the command
//! server and the queue manager's start and stop control them.
//!
//! Each protocol implements [`ListenerEndpoints`] (LISTENER objects: the native
//! protocol's TCP listeners) or [`ChannelEndpoints`] (channels of the types it serves:
//! AMQP channels listen on their own port, SVRCONN channels are the native protocol's
//! client sockets) and is registered once, where the runtime builds its [`Server`]
//! (`runtime/mod.rs`). START/STOP LISTENER and CHANNEL, PING/RESET/RESOLVE CHANNEL, DISPLAY
//! LSSTATUS and CHSTATUS go through [`Endpoints`], so the command server knows no protocol: adding one means adding
//! its module and one registration line, not editing the command server.
//!
//! The implementations hold a weak reference to the server; this module names no other
//! runtime module, so the server can hold the handle without an import circle.
//!
//! [`Server`]: super::server::Server

use crate::lifecycle::PublishedListener;
use ferry_objects::channel::{ChannelOperation, ChannelType};
use ferry_objects::status::{ChannelStatus, ListenerStatus};
use ferry_objects::{AdminError, StopMode};
use std::future::Future;
use std::pin::Pin;

/// PING, RESET or RESOLVE CHANNEL in progress: it runs on the queue manager's thread
/// (a conversation with the partner, or durable engine calls) and ends with the
/// command's outcome.
pub type ChannelWork = Pin<Box<dyn Future<Output = Result<(), AdminError>>>>;

/// The LISTENER objects of one protocol: what START/STOP LISTENER and DISPLAY LSSTATUS do.
pub trait ListenerEndpoints {
    /// Starts listener `name` (its definition must exist and it must not be running).
    fn start(&self, name: &str) -> Result<(), AdminError>;
    /// Stops listener `name`; its connections carry on.
    fn stop(&self, name: &str) -> Result<(), AdminError>;
    /// True while listener `name` runs (a running listener cannot be replaced or deleted).
    fn is_running(&self, name: &str) -> bool;
    /// DISPLAY LSSTATUS of listener `name`, if it is defined.
    fn status(&self, name: &str) -> Option<ListenerStatus>;
    /// The listeners running now, for run/status.json.
    fn published(&self) -> Vec<PublishedListener>;
    /// Starts the listeners that start with the queue manager; returns the lines of those
    /// that could not (`ferry start` shows them).
    fn start_all(&self) -> Vec<String>;
    /// Stops every running listener (queue manager end).
    fn stop_all(&self);
}

/// The channels of the types one protocol serves: what START/STOP CHANNEL and DISPLAY
/// CHSTATUS do for them.
pub trait ChannelEndpoints {
    /// True if this protocol serves channels of type `kind`.
    fn serves(&self, kind: ChannelType) -> bool;
    /// START CHANNEL `name` (a defined channel of a type this protocol serves).
    fn start(&self, name: &str) -> Result<(), AdminError>;
    /// STOP CHANNEL `name`.
    fn stop(&self, name: &str, mode: StopMode) -> Result<(), AdminError>;
    /// DISPLAY CHSTATUS of the channels whose name `matches`.
    fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus>;
    /// Ports this protocol's running channels listen on, for run/status.json.
    fn listening_ports(&self) -> Vec<u16>;
    /// Starts the channels that start with the queue manager; returns the lines of those
    /// that could not.
    fn start_all(&self) -> Vec<String>;
    /// Stops every running channel and closes its connections, saying `why`.
    fn stop_all(&self, why: &str);
    /// PING, RESET or RESOLVE CHANNEL `name` (a sending channel): the work, which the
    /// command server awaits before it answers. Protocols without message channels
    /// refuse.
    fn operate(&self, name: &str, operation: ChannelOperation) -> ChannelWork {
        let refused = AdminError::Invalid(format!(
            "{} CHANNEL does not apply to channel {name}",
            operation.verb()
        ));
        Box::pin(std::future::ready(Err(refused)))
    }
}

/// A protocol's channels shared with the rest of its module (the message channels,
/// which the native listeners hand their partners' conversations).
impl<T: ChannelEndpoints> ChannelEndpoints for std::rc::Rc<T> {
    fn serves(&self, kind: ChannelType) -> bool {
        (**self).serves(kind)
    }
    fn start(&self, name: &str) -> Result<(), AdminError> {
        (**self).start(name)
    }
    fn stop(&self, name: &str, mode: StopMode) -> Result<(), AdminError> {
        (**self).stop(name, mode)
    }
    fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
        (**self).status(matches)
    }
    fn listening_ports(&self) -> Vec<u16> {
        (**self).listening_ports()
    }
    fn start_all(&self) -> Vec<String> {
        (**self).start_all()
    }
    fn stop_all(&self, why: &str) {
        (**self).stop_all(why)
    }
    fn operate(&self, name: &str, operation: ChannelOperation) -> ChannelWork {
        (**self).operate(name, operation)
    }
}

/// Every protocol's listeners and channels, one handle.
pub struct Endpoints {
    listeners: Box<dyn ListenerEndpoints>,
    channels: Vec<Box<dyn ChannelEndpoints>>,
}

impl Endpoints {
    /// The handle over the protocol that owns LISTENER objects and those serving channels.
    pub fn new(
        listeners: Box<dyn ListenerEndpoints>,
        channels: Vec<Box<dyn ChannelEndpoints>>,
    ) -> Self {
        Endpoints {
            listeners,
            channels,
        }
    }

    /// The LISTENER objects.
    pub fn listeners(&self) -> &dyn ListenerEndpoints {
        &*self.listeners
    }

    /// The protocol serving channels of type `kind`, if any.
    fn channel_protocol(&self, kind: ChannelType) -> Option<&dyn ChannelEndpoints> {
        self.channels.iter().find(|c| c.serves(kind)).map(|c| &**c)
    }

    /// START CHANNEL `name` of type `kind`, by the protocol that serves that type.
    pub fn start_channel(&self, name: &str, kind: ChannelType) -> Result<(), AdminError> {
        self.channel_protocol(kind)
            .ok_or_else(|| not_served(name, kind))?
            .start(name)
    }

    /// STOP CHANNEL `name` of type `kind`, by the protocol that serves that type.
    pub fn stop_channel(
        &self,
        name: &str,
        kind: ChannelType,
        mode: StopMode,
    ) -> Result<(), AdminError> {
        self.channel_protocol(kind)
            .ok_or_else(|| not_served(name, kind))?
            .stop(name, mode)
    }

    /// PING, RESET or RESOLVE CHANNEL `name` of type `kind`, by the protocol that
    /// serves that type: the work to await.
    pub fn operate_channel(
        &self,
        name: &str,
        kind: ChannelType,
        operation: ChannelOperation,
    ) -> ChannelWork {
        match self.channel_protocol(kind) {
            Some(protocol) => protocol.operate(name, operation),
            None => Box::pin(std::future::ready(Err(not_served(name, kind)))),
        }
    }

    /// DISPLAY CHSTATUS over every protocol, in registration order.
    pub fn channel_status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
        self.channels
            .iter()
            .flat_map(|c| c.status(matches))
            .collect()
    }

    /// Ports the running channels of every protocol listen on.
    pub fn channel_ports(&self) -> Vec<u16> {
        self.channels
            .iter()
            .flat_map(|c| c.listening_ports())
            .collect()
    }

    /// Starts the listeners, then the channels, that start with the queue manager;
    /// returns the lines of those that could not.
    pub fn start_all(&self) -> Vec<String> {
        let mut failures = self.listeners.start_all();
        for c in &self.channels {
            failures.extend(c.start_all());
        }
        failures
    }

    /// Stops every channel, closing its connections (saying `why`).
    pub fn stop_channels(&self, why: &str) {
        for c in &self.channels {
            c.stop_all(why);
        }
    }
}

/// The refusal of START/STOP CHANNEL for a channel of a type that is not started or
/// stopped by command (a SVRCONN channel runs while its clients are connected).
pub fn not_served(name: &str, kind: ChannelType) -> AdminError {
    AdminError::Invalid(format!(
        "channel {name} is a {} channel, which is not started or stopped by command",
        kind.keyword()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A protocol that records what it was asked.
    struct Recording {
        kind: ChannelType,
        calls: Rc<RefCell<Vec<String>>>,
    }

    impl ChannelEndpoints for Recording {
        fn serves(&self, kind: ChannelType) -> bool {
            kind == self.kind
        }
        fn start(&self, name: &str) -> Result<(), AdminError> {
            self.calls.borrow_mut().push(format!("start {name}"));
            Ok(())
        }
        fn stop(&self, name: &str, _mode: StopMode) -> Result<(), AdminError> {
            self.calls.borrow_mut().push(format!("stop {name}"));
            Ok(())
        }
        fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
            let name = format!("{}.CHL", self.kind.keyword());
            if matches(&name) {
                vec![ChannelStatus::new(name, self.kind, true, 0)]
            } else {
                Vec::new()
            }
        }
        fn listening_ports(&self) -> Vec<u16> {
            vec![1]
        }
        fn start_all(&self) -> Vec<String> {
            vec![format!("{} failed", self.kind.keyword())]
        }
        fn stop_all(&self, why: &str) {
            self.calls.borrow_mut().push(format!("stop all: {why}"));
        }
    }

    struct NoListeners;

    impl ListenerEndpoints for NoListeners {
        fn start(&self, _: &str) -> Result<(), AdminError> {
            Ok(())
        }
        fn stop(&self, _: &str) -> Result<(), AdminError> {
            Ok(())
        }
        fn is_running(&self, _: &str) -> bool {
            false
        }
        fn status(&self, _: &str) -> Option<ListenerStatus> {
            None
        }
        fn published(&self) -> Vec<PublishedListener> {
            Vec::new()
        }
        fn start_all(&self) -> Vec<String> {
            vec!["listener failed".to_string()]
        }
        fn stop_all(&self) {}
    }

    #[test]
    fn a_channel_goes_to_the_protocol_serving_its_type() {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let endpoints = Endpoints::new(
            Box::new(NoListeners),
            vec![Box::new(Recording {
                kind: ChannelType::Amqp,
                calls: calls.clone(),
            })],
        );
        endpoints
            .start_channel("A", ChannelType::Amqp)
            .expect("AMQP is served");
        endpoints
            .stop_channel("A", ChannelType::Amqp, StopMode::Quiesce)
            .expect("AMQP is served");
        assert_eq!(*calls.borrow(), ["start A", "stop A"]);
        let refused = endpoints.start_channel("S", ChannelType::Svrconn);
        assert!(
            matches!(&refused, Err(AdminError::Invalid(text)) if text.contains("S is a SVRCONN channel")),
            "{refused:?}"
        );
        assert_eq!(calls.borrow().len(), 2, "no protocol was asked for SVRCONN");
    }

    #[test]
    fn status_start_and_end_cover_every_protocol_in_order() {
        let calls = Rc::new(RefCell::new(Vec::new()));
        let endpoints = Endpoints::new(
            Box::new(NoListeners),
            vec![
                Box::new(Recording {
                    kind: ChannelType::Amqp,
                    calls: calls.clone(),
                }),
                Box::new(Recording {
                    kind: ChannelType::Svrconn,
                    calls: calls.clone(),
                }),
            ],
        );
        let all: Vec<String> = endpoints
            .channel_status(&|_| true)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(all, ["AMQP.CHL", "SVRCONN.CHL"]);
        let one = endpoints.channel_status(&|n| n.starts_with("SVR"));
        assert_eq!(one.len(), 1);
        assert_eq!(endpoints.channel_ports(), [1, 1]);
        assert_eq!(
            endpoints.start_all(),
            ["listener failed", "AMQP failed", "SVRCONN failed"]
        );
        endpoints.stop_channels("ending");
        assert_eq!(*calls.borrow(), ["stop all: ending", "stop all: ending"]);
    }
}
