//! The SASL layer, both roles: the server offers mechanisms and lets its caller decide
//! on the client's `sasl-init`; the client picks PLAIN or ANONYMOUS and waits for the
//! outcome. After a successful outcome both sides restart with the AMQP header.
//!
//! Only single-step mechanisms are spoken (no challenges): PLAIN and ANONYMOUS are what
//! Qpid JMS and proton clients use against a broker.

use bytes::{BufMut, Bytes, BytesMut};

use super::{ClientSasl, Connection, ConnectionError, Event, Phase, Side};
use crate::condition;
use crate::frame::ProtocolHeader;
use crate::performative::{Performative, SaslCode, SaslInit, SaslMechanisms, SaslOutcome};
use crate::value::Symbol;

/// Splits a PLAIN initial response (`authzid \0 user \0 password`) into
/// `(authzid, user, password)`; `None` if it is not three UTF-8 parts.
pub fn parse_plain(response: &[u8]) -> Option<(&str, &str, &str)> {
    let mut parts = response.split(|b| *b == 0);
    let authzid = std::str::from_utf8(parts.next()?).ok()?;
    let user = std::str::from_utf8(parts.next()?).ok()?;
    let password = std::str::from_utf8(parts.next()?).ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some((authzid, user, password))
}

impl Connection {
    /// Server role: answers the SASL header with ours and the mechanisms.
    pub(super) fn start_sasl(&mut self) {
        self.output.header(ProtocolHeader::Sasl);
        let mechanisms = SaslMechanisms {
            mechanisms: self.sasl_server.mechanisms.clone(),
        };
        self.output.sasl(&Performative::SaslMechanisms(mechanisms));
        self.phase = Phase::Sasl;
    }

    /// Server role: the caller's verdict on [`Event::SaslInit`]. Sends `sasl-outcome`;
    /// on success the AMQP header is expected next (call `receive` again), otherwise the
    /// connection is finished.
    pub fn sasl_outcome(&mut self, ok: bool) -> Result<(), ConnectionError> {
        if self.side != Side::Server || !self.awaiting_sasl {
            return Err(ConnectionError::IllegalState("no sasl-init to answer"));
        }
        self.awaiting_sasl = false;
        let code = if ok { SaslCode::Ok } else { SaslCode::Auth };
        self.output.sasl(&Performative::SaslOutcome(SaslOutcome {
            code,
            additional_data: None,
        }));
        if ok {
            self.sasl_done = true;
            self.phase = Phase::Header;
        } else {
            self.finished = true;
            self.phase = Phase::Done;
        }
        Ok(())
    }

    pub(super) fn on_sasl_frame(&mut self, p: Performative, events: &mut Vec<Event>) {
        match (self.side, p) {
            (Side::Server, Performative::SaslInit(init)) => {
                self.awaiting_sasl = true;
                events.push(Event::SaslInit {
                    mechanism: init.mechanism,
                    initial_response: init.initial_response,
                    hostname: init.hostname,
                });
            }
            (Side::Client, Performative::SaslMechanisms(m)) => self.choose_mechanism(m, events),
            (Side::Client, Performative::SaslOutcome(o)) => {
                events.push(Event::SaslOutcome(o.code));
                if o.code == SaslCode::Ok {
                    self.sasl_done = true;
                    self.phase = Phase::Header;
                    self.output.header(ProtocolHeader::Amqp);
                } else {
                    self.fail(
                        condition::UNAUTHORIZED_ACCESS,
                        format!("SASL outcome {:?}", o.code),
                        events,
                    );
                }
            }
            (_, p) => self.fail(
                condition::FRAMING_ERROR,
                format!("unexpected {} in the SASL exchange", p.name()),
                events,
            ),
        }
    }

    fn choose_mechanism(&mut self, offered: SaslMechanisms, events: &mut Vec<Event>) {
        let has = |name: &str| offered.mechanisms.iter().any(|m| m == name);
        let init = match &self.client_sasl {
            ClientSasl::Plain { user, password } if has("PLAIN") => {
                let mut response = BytesMut::with_capacity(user.len() + password.len() + 2);
                response.put_u8(0);
                response.put_slice(user.as_bytes());
                response.put_u8(0);
                response.put_slice(password.as_bytes());
                Some(("PLAIN", Some(response.freeze())))
            }
            ClientSasl::Anonymous if has("ANONYMOUS") => Some(("ANONYMOUS", Some(Bytes::new()))),
            _ => None,
        };
        let Some((mechanism, initial_response)) = init else {
            self.fail(
                condition::UNAUTHORIZED_ACCESS,
                format!("no usable SASL mechanism in {:?}", offered.mechanisms),
                events,
            );
            return;
        };
        self.output.sasl(&Performative::SaslInit(SaslInit {
            mechanism: Symbol::from_static(mechanism),
            initial_response,
            hostname: None,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::parse_plain;

    #[test]
    fn plain_responses_split_into_three_parts() {
        assert_eq!(parse_plain(b"\0app\0secret"), Some(("", "app", "secret")));
        assert_eq!(parse_plain(b"admin\0app\0pw"), Some(("admin", "app", "pw")));
        assert_eq!(parse_plain(b"app\0secret"), None);
        assert_eq!(parse_plain(b"\0a\0b\0c"), None);
        assert_eq!(parse_plain(b"\0\xff\0b"), None);
    }
}
