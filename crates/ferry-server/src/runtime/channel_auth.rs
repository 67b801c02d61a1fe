//! Channel authentication records at the edges of every kind of connection.
//!
//! Two checks, whatever the protocol: [`address_blocked`] as soon as a socket is
//! accepted (BLOCKADDR; nothing is read from a blocked partner), and [`admit`] once the
//! channel and the partner are known (address, certificate, asserted user id), which
//! gives the user id the connection runs as or refuses it. Refusals and WARN(YES)
//! records are written to the error log (FRY9776E, FRY9777E, FRY9778E, FRY9779W) with the
//! record and the partner; the client only learns 2035 MQRC_NOT_AUTHORIZED (AMQP:
//! amqp:unauthorized-access), as MQ tells it no more. With CHLAUTH(DISABLED) only the
//! channel's MCAUSER applies.

use super::server::Server;
use crate::messages;
use ferry_objects::queue::Enablement;
use ferry_security::chlauth::{Block, BlockReason, Partner, Verdict};
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

/// The user id the connection runs as, or `None` when a record refuses it (logged).
pub(crate) fn admit(server: &Server, arrival: &Arrival<'_>) -> Option<String> {
    let flowed = || {
        if arrival.channel_mca_user.is_empty() {
            arrival.client_user.to_string()
        } else {
            arrival.channel_mca_user.to_string()
        }
    };
    if !enabled(server) {
        return Some(flowed());
    }
    let Ok(address) = arrival.address.parse::<IpAddr>() else {
        // Not an IP partner (no such client channel today): no address rule can match.
        debug_assert!(
            false,
            "client address {} is not an IP address",
            arrival.address
        );
        return Some(flowed());
    };
    let partner = Partner {
        channel: arrival.channel,
        address,
        client_user: arrival.client_user,
        peer: arrival.certificate.map(|(subject, _)| subject),
        issuer: arrival.certificate.map(|(_, issuer)| issuer),
        remote_qmgr: None,
        channel_mca_user: arrival.channel_mca_user,
    };
    let verdict = server
        .engine
        .borrow()
        .chlauth()
        .check(&partner, &|u| server.administrators.is_administrator(u));
    match verdict {
        Verdict::Blocked(block) => {
            log_block(server, arrival, &block);
            None
        }
        Verdict::Allowed { user, warnings, .. } => {
            for w in &warnings {
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
