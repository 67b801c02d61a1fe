//! Message context on MQPUT and MQPUT1: which MQMD context fields the queue manager sets
//! and which the application supplies, per MQPMO context option, and the open options
//! each needs (MQ's hierarchy: SET_ALL implies PASS_ALL and SET_IDENTITY, each of which
//! implies PASS_IDENTITY).
//!
//! Identity context is UserIdentifier, AccountingToken and ApplIdentityData; origin
//! context is PutApplType, PutApplName, PutDate, PutTime and ApplOriginData.
//!
//! PASS_IDENTITY_CONTEXT and PASS_ALL_CONTEXT copy the context saved by an input handle
//! opened with MQOO_SAVE_ALL_CONTEXT and named in MQPMO.Context. The native protocol does
//! not carry MQPMO.Context yet, so no put can name such a handle: a put that passes
//! context is refused with 2097 MQRC_CONTEXT_HANDLE_ERROR rather than silently given
//! default context.

use ferry_mqi::{FixedStr, MessageDescriptor, MqError, OpenOptions, PutOptionFlags, ReasonCode};

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
    if put.intersects(PutOptionFlags::PASS_IDENTITY_CONTEXT | PutOptionFlags::PASS_ALL_CONTEXT) {
        return Err(ReasonCode::ContextHandleError.into());
    }
    Ok(())
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
/// application gave them; SET_IDENTITY keeps identity and generates origin; DEFAULT (or
/// no option) generates both.
pub(crate) fn complete_put_context(
    md: &mut MessageDescriptor,
    put: PutOptionFlags,
    generated: &GeneratedContext<'_>,
) {
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
        assert_eq!(
            reason(
                PutOptionFlags::PASS_IDENTITY_CONTEXT,
                o | OpenOptions::SET_IDENTITY_CONTEXT
            ),
            ReasonCode::ContextHandleError
        );
        assert_eq!(
            reason(
                PutOptionFlags::NO_CONTEXT | PutOptionFlags::DEFAULT_CONTEXT,
                o | OpenOptions::SET_ALL_CONTEXT
            ),
            ReasonCode::OptionsError
        );
    }
}
