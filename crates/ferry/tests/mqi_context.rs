//! Message context against a real queue manager process: what the getter's MQMD holds
//! after a put with each MQPMO context option (DEFAULT, NO_CONTEXT, SET_IDENTITY,
//! SET_ALL, PASS_IDENTITY, PASS_ALL, over MQPUT and MQPUT1), the reason codes for a
//! context option the handle was not opened for (2093-2096), for a context handle that
//! cannot pass context (2097) or has none saved (2098), and a client of protocol minor 1,
//! whose PUT carries no MQPMO.Context, served as before.

mod common;

use common::*;
use ferry_mqi::{
    FixedStr, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags, PutOptions,
    ReasonCode,
};

/// A descriptor whose every context field the application filled in.
fn app_context() -> MessageDescriptor {
    MessageDescriptor {
        user_identifier: FixedStr::new("mallory").unwrap(),
        accounting_token: [7; 32],
        appl_identity_data: FixedStr::new("app identity").unwrap(),
        put_appl_type: 25,
        put_appl_name: FixedStr::new("forged name").unwrap(),
        put_date: FixedStr::new("19991231").unwrap(),
        put_time: FixedStr::new("23595900").unwrap(),
        appl_origin_data: FixedStr::new("orig").unwrap(),
        ..Default::default()
    }
}

async fn put_with(
    q: &ferry_client::Queue,
    options: PutOptionFlags,
) -> Result<(), ferry_mqi::MqError> {
    let mut md = app_context();
    put_md(
        q,
        &mut md,
        PutOptions::new(options | PutOptionFlags::NO_SYNCPOINT),
        "m",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_context_option_sets_what_mq_says_in_the_getters_descriptor() {
    let qm = start("MQI.CONTEXT");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client().application_name("context putter")).await;
    let q = open(
        &conn,
        "Q",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED | OpenOptions::SET_ALL_CONTEXT,
    )
    .await;

    // DEFAULT: the queue manager sets identity and origin, whatever the application gave.
    put_with(&q, PutOptionFlags::DEFAULT_CONTEXT).await.unwrap();
    let (md, _) = get(&q).await.unwrap();
    assert_ne!(md.user_identifier.as_str(), "mallory");
    assert!(!md.user_identifier.is_blank(), "the connection's user");
    assert_eq!(md.accounting_token, [0; 32]);
    assert!(md.appl_identity_data.is_blank());
    assert_eq!(md.put_appl_type, 6, "MQAT_UNIX");
    assert_eq!(md.put_appl_name.as_str(), "context putter");
    assert_ne!(md.put_date.as_str(), "19991231");
    assert!(md.appl_origin_data.is_blank());
    let default_user = md.user_identifier;

    // NO_CONTEXT: every context field blank.
    put_with(&q, PutOptionFlags::NO_CONTEXT).await.unwrap();
    let (md, _) = get(&q).await.unwrap();
    assert!(md.user_identifier.is_blank() && md.put_appl_name.is_blank());
    assert!(md.put_date.is_blank() && md.put_time.is_blank());
    assert_eq!((md.put_appl_type, md.accounting_token), (0, [0; 32]));

    // SET_IDENTITY: identity as the application gave it, origin from the queue manager.
    put_with(&q, PutOptionFlags::SET_IDENTITY_CONTEXT)
        .await
        .unwrap();
    let (md, _) = get(&q).await.unwrap();
    assert_eq!(md.user_identifier.as_str(), "mallory");
    assert_eq!(md.accounting_token, [7; 32]);
    assert_eq!(md.appl_identity_data.as_str(), "app identity");
    assert_eq!(md.put_appl_name.as_str(), "context putter");
    assert_eq!(md.put_appl_type, 6);
    assert_ne!(md.put_date.as_str(), "19991231");
    assert!(md.appl_origin_data.is_blank());

    // SET_ALL: every context field as the application gave it.
    put_with(&q, PutOptionFlags::SET_ALL_CONTEXT).await.unwrap();
    let (md, _) = get(&q).await.unwrap();
    let want = app_context();
    assert_eq!(md.user_identifier, want.user_identifier);
    assert_eq!(md.accounting_token, want.accounting_token);
    assert_eq!(md.appl_identity_data, want.appl_identity_data);
    assert_eq!(md.put_appl_type, 25);
    assert_eq!(md.put_appl_name, want.put_appl_name);
    assert_eq!((md.put_date, md.put_time), (want.put_date, want.put_time));
    assert_eq!(md.appl_origin_data, want.appl_origin_data);

    // MQPUT1 opens with the context option its put needs.
    let mut md = app_context();
    let pmo = PutOptions::new(PutOptionFlags::SET_ALL_CONTEXT);
    conn.put1(&ObjectDescriptor::queue("Q").unwrap(), &mut md, &pmo, "one")
        .await
        .unwrap();
    let (md, _) = get(&q).await.unwrap();
    assert_eq!(md.put_appl_name.as_str(), "forged name");
    assert_ne!(md.user_identifier, default_user);
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_options_need_their_open_options() {
    let qm = start("MQI.CONTEXT.REFUSE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let plain = open(&conn, "Q", OpenOptions::OUTPUT).await;
    for (option, want) in [
        (
            PutOptionFlags::SET_ALL_CONTEXT,
            ReasonCode::NotOpenForSetAll,
        ),
        (
            PutOptionFlags::SET_IDENTITY_CONTEXT,
            ReasonCode::NotOpenForSetIdent,
        ),
        (
            PutOptionFlags::PASS_ALL_CONTEXT,
            ReasonCode::NotOpenForPassAll,
        ),
        (
            PutOptionFlags::PASS_IDENTITY_CONTEXT,
            ReasonCode::NotOpenForPassIdent,
        ),
    ] {
        assert_reason(put_with(&plain, option).await, want);
    }
    let set_identity = open(
        &conn,
        "Q",
        OpenOptions::OUTPUT | OpenOptions::SET_IDENTITY_CONTEXT,
    )
    .await;
    assert_reason(
        put_with(&set_identity, PutOptionFlags::SET_ALL_CONTEXT).await,
        ReasonCode::NotOpenForSetAll,
    );
    // Passing context names the input handle to copy from in MQPMO.Context.
    let pass = open(
        &conn,
        "Q",
        OpenOptions::OUTPUT | OpenOptions::PASS_ALL_CONTEXT,
    )
    .await;
    let no_save = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    let save = open(
        &conn,
        "Q",
        OpenOptions::INPUT_SHARED | OpenOptions::BROWSE | OpenOptions::SAVE_ALL_CONTEXT,
    )
    .await;
    let pass_from = |hobj: i32, option: PutOptionFlags| {
        PutOptions::new(option | PutOptionFlags::NO_SYNCPOINT).with_context(hobj)
    };
    for option in [
        PutOptionFlags::PASS_ALL_CONTEXT,
        PutOptionFlags::PASS_IDENTITY_CONTEXT,
    ] {
        // No handle, one not opened with SAVE_ALL_CONTEXT, an output handle, none such.
        for hobj in [0, no_save.hobj(), pass.hobj(), 9999] {
            let mut md = MessageDescriptor::default();
            assert_reason(
                put_md(&pass, &mut md, pass_from(hobj, option), "m").await,
                ReasonCode::ContextHandleError,
            );
        }
        let mut md = MessageDescriptor::default();
        assert_reason(
            put_md(&pass, &mut md, pass_from(save.hobj(), option), "m").await,
            ReasonCode::ContextNotAvailable,
        );
    }
    assert_eq!(curdepth(&qm, "Q"), 0, "no refused put left a message");
    // A browse is not a get: it leaves nothing to pass (2098 after it too).
    put_with(&pass, PutOptionFlags::empty()).await.unwrap();
    get_with(&save, gmo(ferry_mqi::GetOptionFlags::BROWSE_FIRST, 0))
        .await
        .expect("browse");
    let mut md = MessageDescriptor::default();
    assert_reason(
        put_md(
            &pass,
            &mut md,
            pass_from(save.hobj(), PutOptionFlags::PASS_ALL_CONTEXT),
            "m",
        )
        .await,
        ReasonCode::ContextNotAvailable,
    );
    conn.disconnect().await.unwrap();
}

/// A relay: it gets each request from its input queue (opened with SAVE_ALL_CONTEXT) and
/// forwards it passing the request's context, all of it or identity only, by MQPUT and
/// MQPUT1; the final getter sees the original putter's context, and a later get replaces
/// what is passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_passes_the_context_of_the_message_it_got() {
    let qm = start("MQI.CONTEXT.PASS");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(IN)
DEFINE QLOCAL(OUT)",
    );
    let origin = connect(&qm.client().application_name("origin app")).await;
    let origin_in = open(
        &origin,
        "IN",
        OpenOptions::OUTPUT | OpenOptions::SET_ALL_CONTEXT,
    )
    .await;
    for _ in 0..4 {
        put_with(&origin_in, PutOptionFlags::SET_ALL_CONTEXT)
            .await
            .unwrap();
    }
    let relay = connect(&qm.client().application_name("relay")).await;
    let input = open(
        &relay,
        "IN",
        OpenOptions::INPUT_SHARED | OpenOptions::SAVE_ALL_CONTEXT,
    )
    .await;
    let out = open(
        &relay,
        "OUT",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED | OpenOptions::PASS_ALL_CONTEXT,
    )
    .await;
    let want = app_context();

    // PASS_ALL over MQPUT: identity and origin, PutDate/PutTime included.
    get(&input).await.expect("request");
    let mut md = MessageDescriptor::default();
    let pmo = PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT).with_context(input.hobj());
    put_md(&out, &mut md, pmo, "fwd").await.unwrap();
    let (md, _) = get(&out).await.unwrap();
    assert_eq!(md.user_identifier, want.user_identifier);
    assert_eq!(md.accounting_token, want.accounting_token);
    assert_eq!(md.appl_identity_data, want.appl_identity_data);
    assert_eq!(md.put_appl_type, 25);
    assert_eq!(md.put_appl_name, want.put_appl_name);
    assert_eq!((md.put_date, md.put_time), (want.put_date, want.put_time));
    assert_eq!(md.appl_origin_data, want.appl_origin_data);

    // PASS_IDENTITY over MQPUT: identity passed, origin is the relay's.
    let mut md = MessageDescriptor::default();
    let pmo = PutOptions::new(PutOptionFlags::PASS_IDENTITY_CONTEXT).with_context(input.hobj());
    put_md(&out, &mut md, pmo, "fwd").await.unwrap();
    let (md, _) = get(&out).await.unwrap();
    assert_eq!(md.user_identifier, want.user_identifier);
    assert_eq!(md.appl_identity_data, want.appl_identity_data);
    assert_eq!(md.put_appl_name.as_str(), "relay");
    assert_eq!(md.put_appl_type, 6);
    assert_ne!(md.put_date, want.put_date);
    assert!(md.appl_origin_data.is_blank());

    // MQPUT1 passes too (it opens with the PASS option its put names).
    let mut md = MessageDescriptor::default();
    let pmo = PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT).with_context(input.hobj());
    relay
        .put1(
            &ObjectDescriptor::queue("OUT").unwrap(),
            &mut md,
            &pmo,
            "one",
        )
        .await
        .unwrap();
    let (md, _) = get(&out).await.unwrap();
    assert_eq!(md.put_appl_name, want.put_appl_name);
    assert_eq!(md.user_identifier, want.user_identifier);

    // The next get saves the next message's context: put one with default context.
    drop(input);
    let origin_plain = open(&origin, "IN", OpenOptions::OUTPUT).await;
    let input = open(
        &relay,
        "IN",
        OpenOptions::INPUT_SHARED | OpenOptions::SAVE_ALL_CONTEXT,
    )
    .await;
    // Drain the SET_ALL ones left, then get the default-context one.
    for _ in 0..3 {
        get(&input).await.expect("left over");
    }
    put_with(&origin_plain, PutOptionFlags::empty())
        .await
        .unwrap();
    get(&input).await.expect("the default-context message");
    let mut md = MessageDescriptor::default();
    let pmo = PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT).with_context(input.hobj());
    put_md(&out, &mut md, pmo, "fwd").await.unwrap();
    let (md, _) = get(&out).await.unwrap();
    assert_eq!(
        md.put_appl_name.as_str(),
        "origin app",
        "the last get's context"
    );
    relay.disconnect().await.unwrap();
    origin.disconnect().await.unwrap();
}

/// A client of protocol minor 1 sends MQPMO without Context: its PUT still decodes and
/// works, and a pass of context is refused 2097 as before minor 2.
#[test]
fn a_minor_1_client_puts_as_before() {
    use ferry_wire::{Reply, Request};
    let qm = start("MQI.CONTEXT.OLD");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut raw = Raw::tcp(&qm);
    let hello = raw.hello_at_minor("SYSTEM.DEF.SVRCONN", 1);
    assert_eq!(hello.minor, 1, "the server speaks the client's minor");
    raw.open_conversation(1);
    let opened = raw.call_at(
        1,
        2,
        &Request::Open {
            od: ObjectDescriptor::queue("Q").unwrap(),
            options: OpenOptions::OUTPUT | OpenOptions::PASS_ALL_CONTEXT,
        },
        1,
    );
    let Reply::Open { hobj, .. } = opened else {
        panic!("{opened:?}");
    };
    let put = |pmo: PutOptions| Request::Put {
        properties: bytes::Bytes::new(),
        hobj,
        md: MessageDescriptor::default(),
        pmo,
        body: bytes::Bytes::from_static(b"old client"),
    };
    let reply = raw.call_at(1, 3, &put(PutOptions::new(PutOptionFlags::NO_SYNCPOINT)), 1);
    assert_eq!(reply.status().reason, ReasonCode::None, "{reply:?}");
    let reply = raw.call_at(
        1,
        4,
        &put(PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT)),
        1,
    );
    assert_eq!(reply.status().reason, ReasonCode::ContextHandleError);
    assert_eq!(curdepth(&qm, "Q"), 1, "the body arrived whole: one message");
}
