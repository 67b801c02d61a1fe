//! Channel authentication records at the edges of every kind of connection.
//!
//! Checks whatever the protocol: [`address_blocked`] as soon as a socket is accepted
//! (BLOCKADDR; nothing is read from a blocked partner); once the channel and the partner
//! are known (address, certificate, asserted user id), [`map`] finds the mapping record
//! (or refuses), connection authentication may check a password (`connauth`), and
//! [`finish`] gives the user id the connection runs as, checked against BLOCKUSER. Refusals and WARN(YES)
//! records are written to the error log (FRY9776E, FRY9777E, FRY9778E, FRY9779W) with the
//! record and the partner; the client only learns 2035 MQRC_NOT_AUTHORIZED (AMQP:
//! amqp:unauthorized-access), as MQ tells it no more. With CHLAUTH(DISABLED) only the
//! channel's MCAUSER applies.

use super::server::Server;
use crate::messages;
use ferry_objects::queue::Enablement;
use ferry_security::chlauth::{Block, BlockReason, CheckClient, Mapping, Partner};
use ferry_security::connauth::effective_user;
use ferry_security::DistinguishedName;
use std::net::IpAddr;

/// Whether CHLAUTH(ENABLED).
fn enabled(server: &Server) -> bool {
    server.engine.borrow().qmgr().channel_auth == Enablement::Enabled
}

/// At accept: true when the partner's address is in the BLOCKADDR list (FRY9778E
/// written; the caller closes the socket). A WARN(YES) record only writes FRY9779W.
pub(crate) fn address_blocked(server: &Server, address: IpAddr, port: u16) -> bool {
    if !enabled(server) {
        return false;
    }
    let Some(block) = server.engine.borrow().chlauth().blocked_address(address) else {
        return false;
    };
    let mut log = server.error_log.borrow_mut();
    if block.record.warn {
        log.write(
            &messages::CHLAUTH_WARNING,
            &[&format!("(port {port})"), &address, &"*", &"BLOCKADDR", &""],
        );
        return false;
    }
    log.write(&messages::CHLAUTH_BLOCKED_ADDRESS, &[&address, &port]);
    true
}

/// What is known of a partner when its channel is.
pub(crate) struct Arrival<'a> {
    /// The channel.
    pub channel: &'a str,
    /// The channel's MCAUSER.
    pub channel_mca_user: &'a str,
    /// The partner's address, as CONNAME shows it.
    pub address: &'a str,
    /// The user id it asserts.
    pub client_user: &'a str,
    /// Its certificate's subject and issuer, over TLS with a client certificate.
    pub certificate: Option<(&'a DistinguishedName, &'a DistinguishedName)>,
}

/// What the first step decided for a connection it let in.
pub(crate) struct Admitted {
    /// The mapping (None with CHLAUTH(DISABLED)).
    mapping: Option<Mapping>,
}

impl Admitted {
    /// The mapping record's CHCKCLNT, for connection authentication.
    pub fn check_client(&self) -> CheckClient {
        self.mapping
            .as_ref()
            .map_or(CheckClient::AsQmgr, |m| m.check_client)
    }
}

fn partner<'a>(arrival: &'a Arrival<'a>, address: IpAddr) -> Partner<'a> {
    Partner {
        channel: arrival.channel,
        address,
        client_user: arrival.client_user,
        peer: arrival.certificate.map(|(subject, _)| subject),
        issuer: arrival.certificate.map(|(_, issuer)| issuer),
        remote_qmgr: None,
        channel_mca_user: arrival.channel_mca_user,
    }
}

/// The first step, once the channel and partner are known: BLOCKADDR and the mapping
/// record. `None`: refused (logged).
pub(crate) fn map(server: &Server, arrival: &Arrival<'_>) -> Option<Admitted> {
    if !enabled(server) {
        return Some(Admitted { mapping: None });
    }
    let Ok(address) = arrival.address.parse::<IpAddr>() else {
        // Not an IP partner (no such client channel today): no address rule can match.
        debug_assert!(
            false,
            "client address {} is not an IP address",
            arrival.address
        );
        return Some(Admitted { mapping: None });
    };
    match server
        .engine
        .borrow()
        .chlauth()
        .map(&partner(arrival, address))
    {
        Ok(mapping) => Some(Admitted {
            mapping: Some(mapping),
        }),
        Err(block) => {
            log_block(server, arrival, &block);
            None
        }
    }
}

/// The last step: the user id the connection runs as (the mapping's, the channel's
/// MCAUSER, `adopted` (a user id a password proved, with ADOPTCTX(YES)), or the asserted
/// one), checked against BLOCKUSER. `None`: refused (logged).
pub(crate) fn finish(
    server: &Server,
    arrival: &Arrival<'_>,
    admitted: &Admitted,
    adopted: Option<&str>,
) -> Option<String> {
    let mut user = effective_user(
        admitted.mapping.as_ref().and_then(Mapping::mapped_user),
        arrival.channel_mca_user,
        adopted,
        arrival.client_user,
    );
    if user.is_empty() {
        user = server.administrators.process_user().to_string();
    }
    let Some(mapping) = &admitted.mapping else {
        return Some(user);
    };
    let checked = server
        .engine
        .borrow()
        .chlauth()
        .check_user(arrival.channel, &user, &|u| {
            server.administrators.is_administrator(u)
        });
    match checked {
        Err(block) => {
            log_block(server, arrival, &block);
            None
        }
        Ok(warning) => {
            for w in mapping.warnings.iter().chain(warning.iter()) {
                server.error_log.borrow_mut().write(
                    &messages::CHLAUTH_WARNING,
                    &[
                        &arrival.channel,
                        &arrival.address,
                        &w.record.profile,
                        &w.record.kind.keyword(),
                        &user,
                    ],
                );
            }
            Some(user)
        }
    }
}

/// The CHCKCLNT of the mapping record `arrival` would meet, asked quietly (nothing is
/// logged; the connection meets the records for good once it names all it will, as an
/// AMQP client does in its open after SASL).
pub(crate) fn check_client(server: &Server, arrival: &Arrival<'_>) -> CheckClient {
    if !enabled(server) {
        return CheckClient::AsQmgr;
    }
    let Ok(address) = arrival.address.parse::<IpAddr>() else {
        return CheckClient::AsQmgr;
    };
    server
        .engine
        .borrow()
        .chlauth()
        .map(&partner(arrival, address))
        .map_or(CheckClient::AsQmgr, |m| m.check_client)
}

fn log_block(server: &Server, arrival: &Arrival<'_>, block: &Block) {
    let mut log = server.error_log.borrow_mut();
    match block.reason {
        BlockReason::User => log.write(
            &messages::CHLAUTH_BLOCKED_USER,
            &[
                &arrival.channel,
                &arrival.address,
                &block.user,
                &block.record.profile,
            ],
        ),
        BlockReason::NoAccess => log.write(
            &messages::CHLAUTH_NO_ACCESS,
            &[
                &arrival.channel,
                &arrival.address,
                &block.record.profile,
                &block.record.kind.keyword(),
                &block.user,
            ],
        ),
        BlockReason::Address => log.write(
            &messages::CHLAUTH_BLOCKED_ADDRESS,
            &[&arrival.address, &arrival.channel],
        ),
    };
}
