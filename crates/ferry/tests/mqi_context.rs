//! Message context against a real queue manager process: what the getter's MQMD holds
//! after a put with each MQPMO context option (DEFAULT, NO_CONTEXT, SET_IDENTITY,
//! SET_ALL, over MQPUT and MQPUT1), and the reason codes for a context option the handle
//! was not opened for (2093-2096) or a pass of context, which the protocol cannot name a
//! context handle for yet (2097).

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
    // Passing context needs MQPMO.Context, which the protocol does not carry yet.
    let pass = open(
        &conn,
        "Q",
        OpenOptions::OUTPUT | OpenOptions::PASS_ALL_CONTEXT,
    )
    .await;
    for option in [
        PutOptionFlags::PASS_ALL_CONTEXT,
        PutOptionFlags::PASS_IDENTITY_CONTEXT,
    ] {
        assert_reason(
            put_with(&pass, option).await,
            ReasonCode::ContextHandleError,
        );
    }
    assert_eq!(curdepth(&qm, "Q"), 0, "no refused put left a message");
    conn.disconnect().await.unwrap();
}
