//! Runs SET CHLAUTH and DISPLAY CHLAUTH against an [`AdminTarget`] and words the answer.
//!
//! DISPLAY shows, for each record, CHLAUTH and TYPE and the fields MQ always returns for
//! that type (USERLIST, ADDRESS and USERSRC...); ALL adds the rest (DESCR, WARN,
//! ALTDATE...). MATCH(RUNCHECK) asks the same rules the queue manager applies to a
//! connection which record it would meet.

use crate::command::{ChlauthMatch, ChlauthQuery};
use crate::display::{date_time, render_block, Field, FieldValue};
use crate::executor::CommandResult;
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_mqi::ReasonCode;
use ferry_objects::AdminError;
use ferry_security::chlauth::{
    ChlauthRecord, ChlauthType, GenericName, Partner, SetAction, UserSource,
};
use ferry_security::DistinguishedName;

/// SET CHLAUTH.
pub fn set(
    target: &mut dyn AdminTarget,
    record: &ChlauthRecord,
    action: SetAction,
) -> CommandResult {
    match target.set_chlauth(record.clone(), action) {
        Ok(()) => CommandResult {
            ok: true,
            lines: vec![messages::CHLAUTH_SET.line()],
        },
        Err(e) => failure(e),
    }
}

fn failure(e: AdminError) -> CommandResult {
    let line = match e {
        AdminError::Failed {
            reason: ReasonCode::UnknownObjectName,
            ..
        } => messages::CHLAUTH_NOT_FOUND.line(),
        AdminError::Failed {
            reason: ReasonCode::ObjectAlreadyExists,
            ..
        } => messages::CHLAUTH_EXISTS.line(),
        other => messages::CHLAUTH_INVALID.format(&[&other]),
    };
    CommandResult {
        ok: false,
        lines: vec![line],
    }
}

fn not_found() -> CommandResult {
    CommandResult {
        ok: false,
        lines: vec![messages::CHLAUTH_NOT_FOUND.line()],
    }
}

/// DISPLAY CHLAUTH.
pub fn display(
    target: &dyn AdminTarget,
    profile: &str,
    kind: Option<ChlauthType>,
    matching: ChlauthMatch,
    query: &ChlauthQuery,
    all: bool,
    fields: &[&'static str],
) -> CommandResult {
    let rules = target.chlauth();
    let records: Vec<ChlauthRecord> = match matching {
        ChlauthMatch::RunCheck => match runcheck(target, profile, query) {
            Ok(Some(r)) => vec![r],
            Ok(None) => return not_found(),
            Err(text) => {
                return CommandResult {
                    ok: false,
                    lines: vec![messages::CHLAUTH_INVALID.format(&[&text])],
                }
            }
        },
        ChlauthMatch::Generic => {
            let g = GenericName::new(profile);
            rules
                .records()
                .filter(|r| g.matches(&r.profile))
                .cloned()
                .collect()
        }
        ChlauthMatch::Exact => rules
            .records()
            .filter(|r| r.profile == profile)
            .cloned()
            .collect(),
        ChlauthMatch::All => rules
            .records()
            .filter(|r| GenericName::new(&r.profile).matches(profile))
            .cloned()
            .collect(),
    };
    let records: Vec<&ChlauthRecord> = records
        .iter()
        .filter(|r| kind.is_none_or(|k| r.kind == k))
        .collect();
    if records.is_empty() {
        return not_found();
    }
    let mut lines = Vec::new();
    for r in records {
        lines.extend(render_block(
            &messages::DISPLAY_CHLAUTH,
            &record_fields(r, all, fields),
        ));
    }
    CommandResult { ok: true, lines }
}

/// The record a connection with `query`'s details to channel `channel` would meet.
fn runcheck(
    target: &dyn AdminTarget,
    channel: &str,
    query: &ChlauthQuery,
) -> Result<Option<ChlauthRecord>, String> {
    let address = query
        .address
        .parse()
        .map_err(|_| format!("ADDRESS({}) is not an IP address", query.address))?;
    let dn = |text: &str, what: &str| -> Result<Option<DistinguishedName>, String> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        DistinguishedName::parse(text)
            .map(Some)
            .map_err(|e| format!("{what}({text}): {e}"))
    };
    let peer = dn(&query.ssl_peer, "SSLPEER")?;
    let issuer = dn(&query.ssl_cert_issuer, "SSLCERTI")?;
    let mca_user = target
        .channel(channel)
        .map(|c| c.attributes.mca_user)
        .unwrap_or_default();
    let partner = Partner {
        channel,
        address,
        client_user: &query.client_user,
        peer: peer.as_ref(),
        issuer: issuer.as_ref(),
        remote_qmgr: (!query.qmgr_name.is_empty()).then_some(query.qmgr_name.as_str()),
        channel_mca_user: &mca_user,
    };
    Ok(target
        .chlauth()
        .runcheck(&partner, &|u| target.is_privileged(u)))
}

/// The fields shown for `r`: the ones MQ always returns for its type, then with `all`
/// (or by name) the others.
fn record_fields(r: &ChlauthRecord, all: bool, named: &[&'static str]) -> Vec<Field> {
    let text = |s: &str| FieldValue::Text(s.to_string());
    let mut out = vec![
        Field::new("CHLAUTH", text(&r.profile)),
        Field::new("TYPE", FieldValue::Keyword(r.kind.keyword())),
    ];
    let wants = |kw: &str| all || named.contains(&kw);
    let mapping = r.kind.is_mapping();
    let mut push = |kw: &'static str, v: FieldValue, always: bool| {
        if always || wants(kw) {
            out.push(Field::new(kw, v));
        }
    };
    push("DESCR", text(&r.description), false);
    push("CUSTOM", text(""), false);
    match r.kind {
        ChlauthType::BlockUser => push("USERLIST", text(&r.user_list.join(",")), true),
        ChlauthType::BlockAddr => push("ADDRLIST", text(&r.address_list.join(",")), true),
        ChlauthType::SslPeerMap => {
            push("SSLPEER", text(&r.ssl_peer), true);
            push(
                "SSLCERTI",
                text(&r.ssl_cert_issuer),
                !r.ssl_cert_issuer.is_empty(),
            );
        }
        ChlauthType::AddressMap => {}
        ChlauthType::UserMap => push("CLNTUSER", text(&r.client_user), true),
        ChlauthType::QmgrMap => push("QMNAME", text(&r.qmgr_name), true),
    }
    if mapping {
        let address_always = r.kind == ChlauthType::AddressMap || !r.address.is_empty();
        push("ADDRESS", text(&r.address), address_always);
        push(
            "USERSRC",
            FieldValue::Keyword(r.user_source.keyword()),
            true,
        );
        push(
            "MCAUSER",
            text(&r.mca_user),
            r.user_source == UserSource::Map && !r.mca_user.is_empty(),
        );
        if r.kind != ChlauthType::QmgrMap {
            push(
                "CHCKCLNT",
                FieldValue::Keyword(r.check_client.keyword()),
                false,
            );
        }
    }
    push(
        "WARN",
        FieldValue::Keyword(if r.warn { "YES" } else { "NO" }),
        r.warn,
    );
    let (date, time) = if r.altered_ms == 0 {
        (String::new(), String::new())
    } else {
        date_time(r.altered_ms)
    };
    push("ALTDATE", text(&date), false);
    push("ALTTIME", text(&time), false);
    out
}
