//! Message context on MQPUT and MQPUT1: which MQMD context fields the queue manager sets
//! and which the application supplies, per MQPMO context option, and the open options
//! each needs (MQ's hierarchy: SET_ALL implies PASS_ALL and SET_IDENTITY, each of which
//! implies PASS_IDENTITY).
//!
//! Identity context is UserIdentifier, AccountingToken and ApplIdentityData; origin
//! context is PutApplType, PutApplName, PutDate, PutTime and ApplOriginData.
//!
//! PASS_IDENTITY_CONTEXT and PASS_ALL_CONTEXT copy the context saved by an input handle
//! opened with MQOO_SAVE_ALL_CONTEXT and named in MQPMO.Context: each successful
//! destructive get on such a handle saves the message's context ([`SavedContext`]), a
//! successful browse forgets it (MQ's rule). A context handle that is not a queue
//! handle of the connection opened with SAVE_ALL_CONTEXT fails the put with 2097
//! MQRC_CONTEXT_HANDLE_ERROR; one with nothing saved, 2098 MQRC_CONTEXT_NOT_AVAILABLE.

use crate::connection::{Connection, Handle, HandleTarget, Hobj};
use ferry_mqi::{
    FixedStr, MessageDescriptor, MqError, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};

/// MQAT_UNIX: the PutApplType the queue manager records for applications.
pub const APPL_TYPE_UNIX: i32 = 6;

/// The MQPMO context options; at most one may be given (else 2046).
const CONTEXT_OPTIONS: [PutOptionFlags; 6] = [
    PutOptionFlags::DEFAULT_CONTEXT,
    PutOptionFlags::NO_CONTEXT,
    PutOptionFlags::PASS_IDENTITY_CONTEXT,
    PutOptionFlags::PASS_ALL_CONTEXT,
    PutOptionFlags::SET_IDENTITY_CONTEXT,
    PutOptionFlags::SET_ALL_CONTEXT,
];

/// Checks the put's context option against the handle's open options, in MQ's terms:
/// more than one context option 2046; SET_ALL without MQOO_SET_ALL_CONTEXT 2095;
/// SET_IDENTITY without MQOO_SET_IDENTITY_CONTEXT (or SET_ALL) 2096; PASS_ALL without
/// MQOO_PASS_ALL_CONTEXT (or SET_ALL) 2093; PASS_IDENTITY without any context open option
/// 2094; then a pass, which needs a context handle the protocol cannot name yet, 2097.
pub(crate) fn check_put_context(put: PutOptionFlags, open: OpenOptions) -> Result<(), MqError> {
    if CONTEXT_OPTIONS.iter().filter(|f| put.contains(**f)).count() > 1 {
        return Err(ReasonCode::OptionsError.into());
    }
    let pass_identity = OpenOptions::PASS_IDENTITY_CONTEXT
        | OpenOptions::PASS_ALL_CONTEXT
        | OpenOptions::SET_IDENTITY_CONTEXT
        | OpenOptions::SET_ALL_CONTEXT;
    let needed = [
        (
            PutOptionFlags::SET_ALL_CONTEXT,
            OpenOptions::SET_ALL_CONTEXT,
            ReasonCode::NotOpenForSetAll,
        ),
        (
            PutOptionFlags::SET_IDENTITY_CONTEXT,
            OpenOptions::SET_IDENTITY_CONTEXT | OpenOptions::SET_ALL_CONTEXT,
            ReasonCode::NotOpenForSetIdent,
        ),
        (
            PutOptionFlags::PASS_ALL_CONTEXT,
            OpenOptions::PASS_ALL_CONTEXT | OpenOptions::SET_ALL_CONTEXT,
            ReasonCode::NotOpenForPassAll,
        ),
        (
            PutOptionFlags::PASS_IDENTITY_CONTEXT,
            pass_identity,
            ReasonCode::NotOpenForPassIdent,
        ),
    ];
    for (option, any_of, reason) in needed {
        if put.contains(option) && !open.intersects(any_of) {
            return Err(reason.into());
        }
    }
    Ok(())
}

/// The context fields of a message, saved by an input handle opened with
/// MQOO_SAVE_ALL_CONTEXT for a later put that passes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SavedContext {
    pub user_identifier: FixedStr<12>,
    pub accounting_token: [u8; 32],
    pub appl_identity_data: FixedStr<32>,
    pub put_appl_type: i32,
    pub put_appl_name: FixedStr<28>,
    pub put_date: FixedStr<8>,
    pub put_time: FixedStr<8>,
    pub appl_origin_data: FixedStr<4>,
}

impl SavedContext {
    /// The context fields of `md`.
    fn of(md: &MessageDescriptor) -> SavedContext {
        SavedContext {
            user_identifier: md.user_identifier,
            accounting_token: md.accounting_token,
            appl_identity_data: md.appl_identity_data,
            put_appl_type: md.put_appl_type,
            put_appl_name: md.put_appl_name,
            put_date: md.put_date,
            put_time: md.put_time,
            appl_origin_data: md.appl_origin_data,
        }
    }
}

impl Handle {
    /// Records a successful get of a message with descriptor `md` on this handle: a
    /// destructive one saves its context (with MQOO_SAVE_ALL_CONTEXT), a browse forgets
    /// what was saved.
    pub(crate) fn note_got(&mut self, browse: bool, md: &MessageDescriptor) {
        if !self.options.contains(OpenOptions::SAVE_ALL_CONTEXT) {
            return;
        }
        if browse {
            self.saved_context = None;
            return;
        }
        match self.saved_context.as_deref_mut() {
            // Overwritten in place: a relay's every get does not allocate.
            Some(saved) => *saved = SavedContext::of(md),
            None => self.saved_context = Some(Box::new(SavedContext::of(md))),
        }
        debug_assert!(self.saved_context.is_some());
    }
}

impl crate::qmgr::QueueManager {
    /// [`Handle::note_got`] for handle `hobj` of connection `conn`.
    pub(crate) fn note_got(
        &mut self,
        conn: crate::connection::ConnId,
        hobj: Hobj,
        browse: bool,
        md: &MessageDescriptor,
    ) {
        if let Some(h) = self.conns.get_mut(&conn).and_then(|c| c.handle_mut(hobj)) {
            h.note_got(browse, md);
        }
    }
}

/// The context a put with options `pmo` passes, copied from the handle its
/// MQPMO.Context names on connection `c`: `None` when the put passes none; 2097 when
/// that is not a queue handle opened with MQOO_SAVE_ALL_CONTEXT; 2098 when it has
/// nothing saved.
pub(crate) fn passed_context(
    c: &Connection,
    pmo: &PutOptions,
) -> Result<Option<SavedContext>, MqError> {
    let pass = PutOptionFlags::PASS_IDENTITY_CONTEXT | PutOptionFlags::PASS_ALL_CONTEXT;
    if !pmo.options.intersects(pass) {
        return Ok(None);
    }
    let h = c
        .handle(Hobj(pmo.context))
        .filter(|h| matches!(h.target, HandleTarget::Queue { .. }))
        .filter(|h| h.options.contains(OpenOptions::SAVE_ALL_CONTEXT))
        .ok_or(ReasonCode::ContextHandleError)?;
    let saved = h
        .saved_context
        .as_deref()
        .ok_or(ReasonCode::ContextNotAvailable)?;
    Ok(Some(saved.clone()))
}

/// The context the queue manager generates for a put: who put it and when.
pub(crate) struct GeneratedContext<'a> {
    /// The connection's user (UserIdentifier).
    pub user_id: &'a str,
    /// The connection's application name (PutApplName).
    pub appl_name: &'a str,
    /// PutDate and PutTime for `now`.
    pub put_date_time: (FixedStr<8>, FixedStr<8>),
}

/// Completes `md`'s context fields for a put with options `put` (already checked by
/// [`check_put_context`]): NO_CONTEXT blanks all of them; SET_ALL keeps all as the
/// application gave them; SET_IDENTITY keeps identity and generates origin; PASS_ALL
/// copies all from `passed`; PASS_IDENTITY copies identity from `passed` and generates
/// origin; DEFAULT (or no option) generates both.
pub(crate) fn complete_put_context(
    md: &mut MessageDescriptor,
    put: PutOptionFlags,
    passed: Option<&SavedContext>,
    generated: &GeneratedContext<'_>,
) {
    if let Some(p) = passed {
        md.user_identifier = p.user_identifier;
        md.accounting_token = p.accounting_token;
        md.appl_identity_data = p.appl_identity_data;
        if put.contains(PutOptionFlags::PASS_ALL_CONTEXT) {
            md.put_appl_type = p.put_appl_type;
            md.put_appl_name = p.put_appl_name;
            md.put_date = p.put_date;
            md.put_time = p.put_time;
            md.appl_origin_data = p.appl_origin_data;
            return;
        }
        md.put_appl_type = APPL_TYPE_UNIX;
        md.put_appl_name = FixedStr::truncating(generated.appl_name);
        (md.put_date, md.put_time) = generated.put_date_time;
        md.appl_origin_data = FixedStr::BLANK;
        return;
    }
    if put.contains(PutOptionFlags::NO_CONTEXT) {
        md.user_identifier = FixedStr::BLANK;
        md.accounting_token = [0; 32];
        md.appl_identity_data = FixedStr::BLANK;
        md.put_appl_type = 0;
        md.put_appl_name = FixedStr::BLANK;
        md.put_date = FixedStr::BLANK;
        md.put_time = FixedStr::BLANK;
        md.appl_origin_data = FixedStr::BLANK;
        return;
    }
    if put.contains(PutOptionFlags::SET_ALL_CONTEXT) {
        return;
    }
    if !put.contains(PutOptionFlags::SET_IDENTITY_CONTEXT) {
        md.user_identifier = FixedStr::truncating(generated.user_id);
        md.accounting_token = [0; 32];
        md.appl_identity_data = FixedStr::BLANK;
    }
    md.put_appl_type = APPL_TYPE_UNIX;
    md.put_appl_name = FixedStr::truncating(generated.appl_name);
    (md.put_date, md.put_time) = generated.put_date_time;
    md.appl_origin_data = FixedStr::BLANK;
}

/// The open options an MQPUT1 with these put options opens its queue with: OUTPUT plus
/// the context option the put needs.
pub(crate) fn put1_open_options(put: PutOptionFlags) -> OpenOptions {
    let mut oo = OpenOptions::OUTPUT;
    for (p, o) in [
        (
            PutOptionFlags::FAIL_IF_QUIESCING,
            OpenOptions::FAIL_IF_QUIESCING,
        ),
        (
            PutOptionFlags::SET_ALL_CONTEXT,
            OpenOptions::SET_ALL_CONTEXT,
        ),
        (
            PutOptionFlags::SET_IDENTITY_CONTEXT,
            OpenOptions::SET_IDENTITY_CONTEXT,
        ),
        (
            PutOptionFlags::PASS_ALL_CONTEXT,
            OpenOptions::PASS_ALL_CONTEXT,
        ),
        (
            PutOptionFlags::PASS_IDENTITY_CONTEXT,
            OpenOptions::PASS_IDENTITY_CONTEXT,
        ),
    ] {
        if put.contains(p) {
            oo |= o;
        }
    }
    oo
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(put: PutOptionFlags, open: OpenOptions) -> ReasonCode {
        check_put_context(put, open).unwrap_err().reason
    }

    #[test]
    fn each_context_option_needs_its_open_option_or_one_that_implies_it() {
        let o = OpenOptions::OUTPUT;
        assert_eq!(
            reason(PutOptionFlags::SET_ALL_CONTEXT, o),
            ReasonCode::NotOpenForSetAll
        );
        assert_eq!(
            reason(
                PutOptionFlags::SET_ALL_CONTEXT,
                o | OpenOptions::SET_IDENTITY_CONTEXT
            ),
            ReasonCode::NotOpenForSetAll
        );
        assert_eq!(
            reason(PutOptionFlags::SET_IDENTITY_CONTEXT, o),
            ReasonCode::NotOpenForSetIdent
        );
        check_put_context(
            PutOptionFlags::SET_IDENTITY_CONTEXT,
            o | OpenOptions::SET_ALL_CONTEXT,
        )
        .unwrap();
        assert_eq!(
            reason(PutOptionFlags::PASS_ALL_CONTEXT, o),
            ReasonCode::NotOpenForPassAll
        );
        assert_eq!(
            reason(
                PutOptionFlags::PASS_ALL_CONTEXT,
                o | OpenOptions::PASS_IDENTITY_CONTEXT
            ),
            ReasonCode::NotOpenForPassAll
        );
        assert_eq!(
            reason(PutOptionFlags::PASS_IDENTITY_CONTEXT, o),
            ReasonCode::NotOpenForPassIdent
        );
        check_put_context(
            PutOptionFlags::PASS_IDENTITY_CONTEXT,
            o | OpenOptions::SET_IDENTITY_CONTEXT,
        )
        .unwrap();
        assert_eq!(
            reason(
                PutOptionFlags::NO_CONTEXT | PutOptionFlags::DEFAULT_CONTEXT,
                o | OpenOptions::SET_ALL_CONTEXT
            ),
            ReasonCode::OptionsError
        );
    }
}
