//! Passing context: a handle opened with MQOO_SAVE_ALL_CONTEXT saves the context of each
//! message it gets destructively (immediately or after a wait) and forgets it on a
//! browse; PASS_IDENTITY_CONTEXT and PASS_ALL_CONTEXT copy it, naming that handle in
//! MQPMO.Context (2097 for a handle that cannot pass context, 2098 with nothing saved).

use super::*;
use ferry_mqi::FixedStr;

const SAVE: OpenOptions = OpenOptions::INPUT_SHARED
    .union(OpenOptions::BROWSE)
    .union(OpenOptions::SAVE_ALL_CONTEXT);

/// Puts a message with every context field set by the application.
fn put_original(h: &mut Harness, c: ConnId, o: Hobj) {
    let mut md = MessageDescriptor {
        user_identifier: FixedStr::truncating("alice"),
        accounting_token: [3; 32],
        appl_identity_data: FixedStr::truncating("id data"),
        put_appl_type: 25,
        put_appl_name: FixedStr::truncating("first app"),
        put_date: FixedStr::truncating("20200101"),
        put_time: FixedStr::truncating("12000000"),
        appl_origin_data: FixedStr::truncating("orig"),
        ..MessageDescriptor::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::SET_ALL_CONTEXT, b"m")
        .unwrap();
}

/// Puts on `o` passing context from `from` with `option`; returns the completed MQMD.
fn put_passing(
    h: &mut Harness,
    c: ConnId,
    o: Hobj,
    from: Hobj,
    option: PutOptionFlags,
) -> Result<MessageDescriptor, MqError> {
    let mut md = MessageDescriptor::default();
    let t = h.t();
    let pmo = PutOptions::new(option).with_context(from.0);
    h.qm.put(
        c,
        o,
        &mut md,
        &pmo,
        Bytes::from_static(b"fwd"),
        t,
        &mut h.fx,
    )
    .map(|_| md)
}

fn harness() -> (Harness, ConnId, Hobj, Hobj, Hobj) {
    let mut h = Harness::new();
    h.local("IN");
    h.local("OUT");
    let c = h.conn();
    let src = h.open(c, "IN", OpenOptions::OUTPUT | OpenOptions::SET_ALL_CONTEXT);
    let input = h.open(c, "IN", SAVE);
    let out = h.open(
        c,
        "OUT",
        OpenOptions::OUTPUT | OpenOptions::PASS_ALL_CONTEXT,
    );
    (h, c, src, input, out)
}

#[test]
fn pass_all_copies_identity_and_origin_pass_identity_only_identity() {
    let (mut h, c, src, input, out) = harness();
    put_original(&mut h, c, src);
    h.get_now(c, input, GetOptionFlags::NO_SYNCPOINT).unwrap();
    let all = put_passing(&mut h, c, out, input, PutOptionFlags::PASS_ALL_CONTEXT).unwrap();
    assert_eq!(all.user_identifier.as_str(), "alice");
    assert_eq!(all.accounting_token, [3; 32]);
    assert_eq!(all.put_appl_name.as_str(), "first app");
    assert_eq!(all.put_appl_type, 25);
    assert_eq!(
        (all.put_date.as_str(), all.put_time.as_str()),
        ("20200101", "12000000")
    );
    assert_eq!(all.appl_origin_data.as_str(), "orig");
    let ident = put_passing(&mut h, c, out, input, PutOptionFlags::PASS_IDENTITY_CONTEXT).unwrap();
    assert_eq!(ident.user_identifier.as_str(), "alice");
    assert_eq!(ident.appl_identity_data.as_str(), "id data");
    assert_eq!(ident.put_appl_type, crate::put::APPL_TYPE_UNIX);
    assert_ne!(ident.put_appl_name.as_str(), "first app");
    assert_ne!(ident.put_date.as_str(), "20200101");
}

#[test]
fn a_waiting_get_saves_the_context_of_the_message_it_is_handed() {
    let (mut h, c, _src, input, out) = harness();
    let r = h.get_with(
        c,
        input,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        -1,
        1024,
    );
    assert_eq!(r, GetOutcome::Waiting);
    let other = h.conn();
    let src2 = h.open(
        other,
        "IN",
        OpenOptions::OUTPUT | OpenOptions::SET_ALL_CONTEXT,
    );
    put_original(&mut h, other, src2);
    assert_eq!(h.completions().len(), 1);
    let md = put_passing(&mut h, c, out, input, PutOptionFlags::PASS_ALL_CONTEXT).unwrap();
    assert_eq!(md.put_appl_name.as_str(), "first app");
}

#[test]
fn a_handle_that_cannot_pass_is_2097_and_one_with_nothing_saved_2098() {
    let (mut h, c, src, input, out) = harness();
    let plain = h.open(c, "IN", OpenOptions::INPUT_SHARED);
    for from in [Hobj(0), plain, out, Hobj(99)] {
        assert_eq!(
            rc(put_passing(
                &mut h,
                c,
                out,
                from,
                PutOptionFlags::PASS_ALL_CONTEXT
            )),
            ReasonCode::ContextHandleError,
            "{from:?}"
        );
    }
    assert_eq!(
        rc(put_passing(
            &mut h,
            c,
            out,
            input,
            PutOptionFlags::PASS_IDENTITY_CONTEXT
        )),
        ReasonCode::ContextNotAvailable,
        "nothing got yet"
    );
    put_original(&mut h, c, src);
    put_original(&mut h, c, src);
    h.get_now(c, input, GetOptionFlags::NO_SYNCPOINT).unwrap();
    put_passing(&mut h, c, out, input, PutOptionFlags::PASS_ALL_CONTEXT).unwrap();
    h.get_now(c, input, GetOptionFlags::BROWSE_FIRST).unwrap();
    assert_eq!(
        rc(put_passing(
            &mut h,
            c,
            out,
            input,
            PutOptionFlags::PASS_ALL_CONTEXT
        )),
        ReasonCode::ContextNotAvailable,
        "a browse forgets the saved context"
    );
    // Another connection cannot name this connection's handle.
    let other = h.conn();
    let other_out = h.open(
        other,
        "OUT",
        OpenOptions::OUTPUT | OpenOptions::PASS_ALL_CONTEXT,
    );
    h.get_now(c, input, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_ne!(
        input, other_out,
        "the other connection has no handle numbered so"
    );
    let r = put_passing(
        &mut h,
        other,
        other_out,
        input,
        PutOptionFlags::PASS_ALL_CONTEXT,
    );
    assert_eq!(rc(r), ReasonCode::ContextHandleError);
}
