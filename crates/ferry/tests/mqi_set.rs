//! MQSET against a real queue manager process, through the Rust client: InhibitPut and
//! InhibitGet take effect at once for every application (and end a waiting get with 2016),
//! the trigger attributes are set and read back with MQINQ and shown by DISPLAY, the
//! change survives a restart, and refusals carry MQ's reason codes (2040, 2067, 2068,
//! 2074-2078, 2006) and change nothing.

mod common;

use common::*;
use ferry_mqi::inquire::selector;
use ferry_mqi::{GetOptionFlags, InquireValue, OpenOptions, ReasonCode};

const SET_INQ: OpenOptions = OpenOptions::SET.union(OpenOptions::INQUIRE);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inhibit_put_and_get_take_effect_for_every_application() {
    let qm = start("MQI.SET.INHIBIT");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let admin = connect(&qm.client()).await;
    let app = connect(&qm.bindings()).await;
    let setter = open(&admin, "Q", SET_INQ).await;
    let q = open(&app, "Q", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED).await;

    // A get waiting on the queue ends with 2016 when gets are inhibited.
    let waiting = tokio::spawn(async move {
        let r = get_with(&q, gmo(GetOptionFlags::WAIT, 30_000)).await;
        (q, r)
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    setter
        .set(&[(selector::INHIBIT_GET, InquireValue::Int(1))])
        .await
        .unwrap();
    let (q, r) = within("waiting get", waiting).await.unwrap();
    assert_reason(r, ReasonCode::GetInhibited);

    setter
        .set(&[(selector::INHIBIT_PUT, InquireValue::Int(1))])
        .await
        .unwrap();
    assert_reason(
        q.put(&mut Default::default(), &Default::default(), "x")
            .await,
        ReasonCode::PutInhibited,
    );
    assert_eq!(
        attr(&mqsc_ok(&qm, "DISPLAY QLOCAL(Q) PUT GET"), "PUT").as_deref(),
        Some("DISABLED")
    );

    setter
        .set(&[
            (selector::INHIBIT_PUT, InquireValue::Int(0)),
            (selector::INHIBIT_GET, InquireValue::Int(0)),
        ])
        .await
        .unwrap();
    put(&q, "allowed again").await;
    assert_eq!(get_text(&q).await, "allowed again");
    app.disconnect().await.unwrap();
    admin.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trigger_attributes_are_set_read_back_and_survive_a_restart() {
    let mut qm = start("MQI.SET.TRIGGER");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", SET_INQ).await;
    let wanted = [
        (selector::TRIGGER_CONTROL, InquireValue::Int(1)),
        (selector::TRIGGER_TYPE, InquireValue::Int(3)),
        (selector::TRIGGER_DEPTH, InquireValue::Int(42)),
        (selector::TRIGGER_MSG_PRIORITY, InquireValue::Int(4)),
        (
            selector::TRIGGER_DATA,
            InquireValue::Str("start the app".into()),
        ),
    ];
    q.set(&wanted).await.unwrap();
    let selectors: Vec<_> = wanted.iter().map(|(s, _)| *s).collect();
    let values: Vec<_> = wanted.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(q.inquire(&selectors).await.unwrap(), values);
    let shown = mqsc_ok(&qm, "DISPLAY QLOCAL(Q) TRIGGER TRIGTYPE TRIGDPTH TRIGMPRI");
    assert_eq!(attr(&shown, "TRIGTYPE").as_deref(), Some("DEPTH"));
    assert_eq!(attr(&shown, "TRIGDPTH").as_deref(), Some("42"));
    conn.disconnect().await.unwrap();

    stop_qm(&mut qm);
    qm.launch();
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", OpenOptions::INQUIRE).await;
    assert_eq!(
        q.inquire(&selectors).await.unwrap(),
        values,
        "after restart"
    );
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_carry_mq_reasons_and_change_nothing() {
    let qm = start("MQI.SET.REFUSE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)\nDEFINE QALIAS(A) TARGET(Q)");
    let conn = connect(&qm.client()).await;

    let inq_only = open(&conn, "Q", OpenOptions::INQUIRE).await;
    assert_reason(
        inq_only
            .set(&[(selector::INHIBIT_PUT, InquireValue::Int(1))])
            .await,
        ReasonCode::NotOpenForSet,
    );

    let q = open(&conn, "Q", SET_INQ).await;
    let cases = [
        (
            selector::MAX_Q_DEPTH,
            InquireValue::Int(1),
            ReasonCode::SelectorError,
        ),
        (
            selector::DIST_LISTS,
            InquireValue::Int(1),
            ReasonCode::SelectorError,
        ),
        (
            selector::INHIBIT_PUT,
            InquireValue::Int(7),
            ReasonCode::InhibitValueError,
        ),
        (
            selector::TRIGGER_CONTROL,
            InquireValue::Int(2),
            ReasonCode::TriggerControlError,
        ),
        (
            selector::TRIGGER_TYPE,
            InquireValue::Int(9),
            ReasonCode::TriggerTypeError,
        ),
        (
            selector::TRIGGER_MSG_PRIORITY,
            InquireValue::Int(10),
            ReasonCode::TriggerMsgPriorityErr,
        ),
        (
            selector::TRIGGER_DEPTH,
            InquireValue::Int(0),
            ReasonCode::TriggerDepthError,
        ),
        (
            selector::TRIGGER_DATA,
            InquireValue::Str("x".repeat(65)),
            ReasonCode::CharAttrLengthError,
        ),
    ];
    for (s, v, want) in cases {
        // A valid first value: the refusal of the second must leave it unapplied too.
        assert_reason(
            q.set(&[(selector::INHIBIT_GET, InquireValue::Int(1)), (s, v)])
                .await,
            want,
        );
    }
    assert_reason(
        q.set(&[
            (selector::INHIBIT_PUT, InquireValue::Int(1)),
            (selector::INHIBIT_PUT, InquireValue::Int(0)),
        ])
        .await,
        ReasonCode::SelectorError,
    );
    assert_eq!(
        q.inquire(&[selector::INHIBIT_GET, selector::INHIBIT_PUT])
            .await
            .unwrap(),
        [InquireValue::Int(0), InquireValue::Int(0)],
        "nothing was applied"
    );

    // An alias has InhibitPut/InhibitGet of its own but no trigger attributes.
    let alias = open(&conn, "A", SET_INQ).await;
    assert_reason(
        alias
            .set(&[(selector::TRIGGER_DEPTH, InquireValue::Int(5))])
            .await,
        ReasonCode::SelectorNotForType,
    );
    alias
        .set(&[(selector::INHIBIT_PUT, InquireValue::Int(1))])
        .await
        .unwrap();
    assert_eq!(
        attr(&mqsc_ok(&qm, "DISPLAY QALIAS(A) PUT"), "PUT").as_deref(),
        Some("DISABLED")
    );
    assert_eq!(
        q.inquire(&[selector::INHIBIT_PUT]).await.unwrap(),
        [InquireValue::Int(0)],
        "the target queue is untouched"
    );
    conn.disconnect().await.unwrap();
}
