//! Publish/subscribe over the native protocol (minor 5), against a real queue manager:
//! managed subscriptions receive the publications their topic filter matches, with
//! CorrelId = SubId and the MQTopicString property; each subscriber gets its own copy;
//! durable subscriptions keep their copies across KEEP_SUB, a controlled restart and a
//! kill -9; MQSUB's errors arrive with MQ's reasons; and a client of minor 4 is refused
//! the new verbs but works as before.

mod common;

use bytes::Bytes;
use common::*;
use ferry_client::{Connection, Subscription, Topic};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{
    GetOptionFlags, MessageDescriptor, OpenOptions, PropertyValue, PutOptionFlags, PutOptions,
    ReasonCode, SubscribeOptions, SubscriptionDescriptor,
};
use ferry_wire::{Reply, Request, MINOR_WITH_PUBSUB};

async fn subscribe(conn: &Connection, sd: &SubscriptionDescriptor) -> Subscription {
    within("subscribe", conn.subscribe(sd))
        .await
        .unwrap_or_else(|e| panic!("subscribe {sd:?}: {e}"))
}

async fn open_topic(conn: &Connection, topic: &str) -> Topic {
    within("open topic", conn.open_topic(topic))
        .await
        .unwrap_or_else(|e| panic!("open topic {topic}: {e}"))
}

/// Publishes `body` (persistent or not) outside syncpoint, asking for 2550 when no
/// subscription matched; returns the put's warning.
async fn publish(topic: &Topic, body: &str, persistent: bool) -> Option<ReasonCode> {
    let mut md = MessageDescriptor {
        persistence: if persistent {
            persistence::PERSISTENT
        } else {
            persistence::NOT_PERSISTENT
        },
        ..MessageDescriptor::default()
    };
    let pmo =
        PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::WARN_IF_NO_SUBS_MATCHED);
    within("publish", topic.put(&mut md, &pmo, body.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("publish on {}: {e}", topic.topic_string()))
}

/// The next copy's body on `sub` within `wait_ms`, checked to carry the subscription's
/// SubId as CorrelId; `None` when none came.
async fn next_body(sub: &Subscription, wait_ms: i32) -> Option<String> {
    let copy = within("next publication", sub.next(wait_ms))
        .await
        .expect("get from the subscription's queue")?;
    assert_eq!(copy.md.correl_id, sub.sub_id(), "CorrelId is the SubId");
    Some(String::from_utf8(copy.message.data.to_vec()).expect("utf-8"))
}

fn durable(options: SubscribeOptions, topic: &str, name: &str) -> SubscriptionDescriptor {
    SubscriptionDescriptor {
        options: options | SubscribeOptions::DURABLE | SubscribeOptions::MANAGED,
        object_string: topic.to_string(),
        sub_name: name.to_string(),
        ..SubscriptionDescriptor::default()
    }
}

/// (a) A managed non-durable subscription to `Price/Fruit/#` (over the bindings socket)
/// gets a publication on `Price/Fruit/Apple` made by another connection (over TCP), with
/// CorrelId = SubId and MQTopicString; one on `Price/Veg` does not arrive. When the
/// subscription is closed, nothing matches any more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_subscription_gets_the_publications_its_filter_matches() {
    let qm = start("PS.MANAGED");
    let subscriber = connect(&qm.bindings()).await;
    let publisher = connect(&qm.client()).await;
    let sub = subscribe(
        &subscriber,
        &SubscriptionDescriptor::managed("Price/Fruit/#"),
    )
    .await;
    assert_eq!(sub.topic_string(), "Price/Fruit/#");
    assert_ne!(sub.sub_id(), [0; 24]);
    assert!(
        sub.destination().starts_with("SYSTEM.MANAGED.NDURABLE."),
        "{}",
        sub.destination()
    );
    let queue = sub.queue().expect("a managed queue");
    assert_eq!(queue.resolved_name(), sub.destination());

    let apple = open_topic(&publisher, "Price/Fruit/Apple").await;
    assert_eq!(apple.topic_string(), "Price/Fruit/Apple");
    assert_eq!(publish(&apple, "1.20", false).await, None, "one subscriber");
    let copy = within("next", sub.next(5_000))
        .await
        .expect("get")
        .expect("the publication arrived");
    assert_eq!(&copy.message.data[..], b"1.20");
    assert_eq!(copy.md.correl_id, sub.sub_id(), "CorrelId is the SubId");
    assert_eq!(
        copy.message.property("MQTopicString"),
        Some(PropertyValue::String("Price/Fruit/Apple".into()))
    );
    assert_eq!(copy.topic_string().as_deref(), Some("Price/Fruit/Apple"));

    let veg = open_topic(&publisher, "Price/Veg").await;
    assert_eq!(
        publish(&veg, "0.40", false).await,
        Some(ReasonCode::NoSubsMatched),
        "Price/Veg matches no subscription"
    );
    // A later Apple publication comes next: the Veg one was never queued before it.
    assert_eq!(publish(&apple, "1.25", false).await, None);
    assert_eq!(next_body(&sub, 5_000).await.as_deref(), Some("1.25"));
    assert_eq!(next_body(&sub, 200).await, None);

    // A non-durable subscription cannot be kept; removing it ends the matches.
    let dest = sub.destination().to_string();
    within("close", sub.close(false)).await.expect("close");
    assert_eq!(
        publish(&apple, "1.30", false).await,
        Some(ReasonCode::NoSubsMatched)
    );
    let shown = stdout(&qm.mqsc(&format!("DISPLAY QLOCAL({dest})")));
    assert!(
        !attrs(&shown, "QUEUE").contains(&dest),
        "the managed queue went with the subscription: {shown}"
    );
    within("close topic", apple.close()).await.expect("close");
    subscriber.disconnect().await.expect("disconnect");
    publisher.disconnect().await.expect("disconnect");
}

/// (b) Two subscribers (a wildcard and an exact topic) get one copy each of one
/// publication, each marked with its own SubId.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_subscriber_gets_one_copy() {
    let qm = start("PS.FANOUT");
    let c1 = connect(&qm.client()).await;
    let c2 = connect(&qm.client()).await;
    let publisher = connect(&qm.client()).await;
    let s1 = subscribe(&c1, &SubscriptionDescriptor::managed("News/#")).await;
    let s2 = subscribe(&c2, &SubscriptionDescriptor::managed("News/Sport")).await;
    assert_ne!(s1.sub_id(), s2.sub_id());
    assert_ne!(s1.destination(), s2.destination());
    let topic = open_topic(&publisher, "News/Sport").await;
    within("publish", topic.publish("goal"))
        .await
        .expect("publish");
    for sub in [&s1, &s2] {
        let copy = within("next", sub.next(5_000))
            .await
            .expect("get")
            .expect("a copy");
        assert_eq!(&copy.message.data[..], b"goal");
        assert_eq!(copy.md.correl_id, sub.sub_id());
        assert_eq!(next_body(sub, 200).await, None, "one copy only");
    }
}

/// (c) A durable managed subscription closed with KEEP_SUB keeps what is published
/// meanwhile across a controlled restart: RESUME finds the subscription (same SubId,
/// topic and queue) and the message. After REMOVE_SUB, RESUME fails 2428.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_durable_subscription_resumes_after_a_restart() {
    let mut qm = start("PS.DURABLE");
    let conn = connect(&qm.client()).await;
    let sub = subscribe(
        &conn,
        &durable(SubscribeOptions::CREATE, "Orders/EU", "ORDERS.EU"),
    )
    .await;
    let (sub_id, dest) = (sub.sub_id(), sub.destination().to_string());
    assert!(dest.starts_with("SYSTEM.MANAGED.DURABLE."), "{dest}");
    within("keep", sub.close(true)).await.expect("KEEP_SUB");

    let topic = open_topic(&conn, "Orders/EU").await;
    assert_eq!(
        publish(&topic, "order 1", true).await,
        None,
        "the kept subscription matches while closed"
    );
    within("close topic", topic.close()).await.expect("close");
    within("disconnect", conn.disconnect())
        .await
        .expect("disconnect");
    stop_qm(&mut qm);
    qm.launch();

    let conn = connect(&qm.client()).await;
    let resume = durable(SubscribeOptions::RESUME, "", "ORDERS.EU");
    let sub = subscribe(&conn, &resume).await;
    assert_eq!(sub.sub_id(), sub_id, "the same subscription");
    assert_eq!(sub.topic_string(), "Orders/EU");
    assert_eq!(sub.destination(), dest);
    assert_eq!(next_body(&sub, 5_000).await.as_deref(), Some("order 1"));
    assert_eq!(next_body(&sub, 100).await, None);

    within("remove", sub.close(false))
        .await
        .expect("REMOVE_SUB");
    assert_reason(
        within("resume removed", conn.subscribe(&resume)).await,
        ReasonCode::NoSubscription,
    );
    conn.disconnect().await.expect("disconnect");
}

/// (d) A persistent publication to a durable subscription survives kill -9 of the
/// queue manager (its reply came after the copy was logged); one published under
/// syncpoint and not committed does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persistent_publication_survives_kill_9() {
    let mut qm = start("PS.CRASH");
    let conn = connect(&qm.client()).await;
    let sub = subscribe(
        &conn,
        &durable(SubscribeOptions::CREATE, "Crash/Test", "CRASH.SUB"),
    )
    .await;
    let publisher = connect(&qm.client()).await;
    let topic = open_topic(&publisher, "Crash/Test").await;
    assert_eq!(publish(&topic, "kept", true).await, None);
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    within(
        "publish in a unit of work",
        topic.put(
            &mut md,
            &PutOptions::new(PutOptionFlags::SYNCPOINT),
            "uncommitted",
        ),
    )
    .await
    .expect("publish under syncpoint");

    qm.kill9();
    drop((sub, topic));
    drop((conn, publisher));
    qm.launch();

    let conn = connect(&qm.client()).await;
    let sub = subscribe(&conn, &durable(SubscribeOptions::RESUME, "", "CRASH.SUB")).await;
    assert_eq!(next_body(&sub, 5_000).await.as_deref(), Some("kept"));
    assert_eq!(
        next_body(&sub, 200).await,
        None,
        "the uncommitted publication was backed out"
    );
    within("remove", sub.close(false))
        .await
        .expect("REMOVE_SUB");
}

/// (e) MQSUB's errors arrive with MQ's reasons, and the connection carries on: a
/// durable subscription without SubName (2440), a CREATE of a name in use (2432), a
/// selector that does not compile (2459), an ObjectString over 10,240 bytes (2441,
/// refused by the client). A selector that compiles selects.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscription_errors_have_mqs_reasons() {
    let qm = start("PS.ERRORS");
    let conn = connect(&qm.client()).await;
    assert_reason(
        within(
            "durable without name",
            conn.subscribe(&durable(SubscribeOptions::CREATE, "A/B", "")),
        )
        .await,
        ReasonCode::SubNameError,
    );
    let first = subscribe(&conn, &durable(SubscribeOptions::CREATE, "A/B", "DUP")).await;
    let other = connect(&qm.client()).await;
    assert_reason(
        within(
            "create again",
            other.subscribe(&durable(SubscribeOptions::CREATE, "A/C", "DUP")),
        )
        .await,
        ReasonCode::SubAlreadyExists,
    );
    let bad = SubscriptionDescriptor {
        selection_string: "JMSPriority >= ".into(),
        ..SubscriptionDescriptor::managed("A/B")
    };
    assert_reason(
        within("bad selector", conn.subscribe(&bad)).await,
        ReasonCode::SelectorSyntaxError,
    );
    let long = SubscriptionDescriptor::managed(&"x".repeat(10_241));
    assert_reason(
        within("long topic", conn.subscribe(&long)).await,
        ReasonCode::ObjectStringError,
    );
    assert_reason(
        within("long topic", conn.open_topic(&"x".repeat(10_241))).await,
        ReasonCode::ObjectStringError,
    );

    // The connection works on: a selector that compiles takes only what it selects.
    let selective = SubscriptionDescriptor {
        selection_string: "JMSPriority >= 5".into(),
        ..SubscriptionDescriptor::managed("Sel/Topic")
    };
    let sub = subscribe(&conn, &selective).await;
    let topic = open_topic(&other, "Sel/Topic").await;
    for (priority, body) in [(1, "low"), (7, "high")] {
        let mut md = MessageDescriptor {
            priority,
            ..MessageDescriptor::default()
        };
        within(
            "publish",
            topic.put(
                &mut md,
                &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
                body,
            ),
        )
        .await
        .expect("publish");
    }
    assert_eq!(next_body(&sub, 5_000).await.as_deref(), Some("high"));
    assert_eq!(
        next_body(&sub, 200).await,
        None,
        "the low one was not selected"
    );
    within("remove", first.close(false)).await.expect("remove");
}

/// A subscription made with a queue of the application's own (MQSO_MANAGED not set)
/// puts its copies there; the subscription handle has no queue of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_to_a_provided_queue_fills_that_queue() {
    let qm = start("PS.PROVIDED");
    mqsc_ok(&qm, "DEFINE QLOCAL(MY.COPIES)");
    let conn = connect(&qm.client()).await;
    let q = open(
        &conn,
        "MY.COPIES",
        OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT,
    )
    .await;
    let sd = SubscriptionDescriptor {
        options: SubscribeOptions::CREATE,
        object_string: "Mine/Only".into(),
        ..SubscriptionDescriptor::default()
    };
    let sub = within("subscribe_to", conn.subscribe_to(&sd, &q))
        .await
        .expect("subscribe to a provided queue");
    assert!(sub.queue().is_none());
    assert_eq!(sub.destination(), "MY.COPIES");
    let topic = open_topic(&conn, "Mine/Only").await;
    assert_eq!(publish(&topic, "copy", false).await, None);
    let (md, got) = get(&q).await.expect("the copy is on the provided queue");
    assert_eq!(&got.data[..], b"copy");
    assert_eq!(md.correl_id, sub.sub_id());
    assert_reason(
        sub.get(
            &mut MessageDescriptor::default(),
            &gmo(GetOptionFlags::NO_SYNCPOINT, 0),
            100,
        )
        .await,
        ReasonCode::HobjError,
    );
    // A queue of another connection is not this connection's to give.
    let other = connect(&qm.client()).await;
    assert_reason(
        within("foreign queue", other.subscribe_to(&sd, &q)).await,
        ReasonCode::HobjError,
    );
}

/// A client of protocol minor 4 (before publish/subscribe) is refused SUB and OPENTOPIC
/// with 2298 on a socket that carries on, and its GET replies keep the layout it knows
/// (no properties), also for a publication's copy, which has some.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minor_4_client_is_refused_the_new_verbs_and_works_as_before() {
    let qm = start("PS.OLD");
    mqsc_ok(&qm, "DEFINE QLOCAL(OLD.COPIES)");
    let old = MINOR_WITH_PUBSUB - 1;
    let mut raw = Raw::tcp(&qm);
    assert_eq!(raw.hello_at_minor("SYSTEM.DEF.SVRCONN", old).minor, old);
    raw.open_conversation(1);
    let refused = raw.call_at(
        1,
        2,
        &Request::Sub {
            sd: SubscriptionDescriptor::managed("Old/Topic"),
            hobj: 0,
        },
        MINOR_WITH_PUBSUB,
    );
    assert_eq!(refused.status().reason, ReasonCode::FunctionNotSupported);
    let refused = raw.call_at(
        1,
        3,
        &Request::OpenTopic {
            object_name: ferry_mqi::FixedStr::BLANK,
            object_string: "Old/Topic".into(),
            options: OpenOptions::OUTPUT,
        },
        MINOR_WITH_PUBSUB,
    );
    assert_eq!(refused.status().reason, ReasonCode::FunctionNotSupported);

    // A copy (with MQTopicString) on a queue the old client reads.
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "OLD.COPIES", OpenOptions::OUTPUT).await;
    let sd = SubscriptionDescriptor {
        options: SubscribeOptions::CREATE,
        object_string: "Old/Topic".into(),
        ..SubscriptionDescriptor::default()
    };
    let _sub = within("subscribe", conn.subscribe_to(&sd, &q))
        .await
        .expect("subscribe");
    let topic = open_topic(&conn, "Old/Topic").await;
    assert_eq!(publish(&topic, "for the old client", false).await, None);

    let opened = raw.call(
        1,
        4,
        &Request::Open {
            od: ferry_mqi::ObjectDescriptor::queue("OLD.COPIES").unwrap(),
            options: OpenOptions::INPUT_SHARED,
        },
    );
    let Reply::Open { hobj, .. } = opened else {
        panic!("{opened:?}");
    };
    raw.send(
        1,
        5,
        &Request::Get {
            hobj,
            md: MessageDescriptor::default(),
            gmo: gmo(GetOptionFlags::NO_SYNCPOINT, 0),
            max_len: 1000,
        },
    );
    let frame = raw.read_frame().expect("the GET reply");
    assert_eq!(frame.request_id, 5);
    match Reply::decode_at(&frame, old).expect("a minor-4 GET reply") {
        Reply::Get {
            status,
            properties,
            body,
            ..
        } => {
            assert_eq!(status.reason, ReasonCode::None);
            assert!(properties.is_empty());
            assert_eq!(body, Bytes::from_static(b"for the old client"));
        }
        other => panic!("{other:?}"),
    }
}

/// Retained publications over the native protocol: a new subscription gets the newest one
/// marked MQIsRetained; a subscription taking publications on request gets it only with
/// MQSUBRQ (2437 when there is none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retained_publications_reach_new_subscriptions_and_mqsubrq() {
    let qm = start("PS.RETAINED");
    let conn = connect(&qm.client()).await;
    let status = open_topic(&conn, "Status/Plant").await;
    for body in ["starting", "running"] {
        let mut md = MessageDescriptor::default();
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::RETAIN);
        within("retain", status.put(&mut md, &pmo, body.to_owned()))
            .await
            .expect("retained put");
    }
    let sub = subscribe(&conn, &SubscriptionDescriptor::managed("Status/#")).await;
    let copy = within("next", sub.next(5_000))
        .await
        .expect("get")
        .expect("the retained publication arrived");
    assert_eq!(&copy.message.data[..], b"running", "the newest only");
    assert_eq!(
        copy.message.property("MQIsRetained"),
        Some(PropertyValue::Boolean(true))
    );
    assert_eq!(next_body(&sub, 200).await, None);

    let on_request = SubscriptionDescriptor {
        options: SubscribeOptions::CREATE
            | SubscribeOptions::MANAGED
            | SubscribeOptions::PUBLICATIONS_ON_REQUEST,
        ..SubscriptionDescriptor::managed("Status/Plant")
    };
    let req = subscribe(&conn, &on_request).await;
    assert_eq!(next_body(&req, 200).await, None, "nothing until asked");
    assert_eq!(within("MQSUBRQ", req.request_publications()).await, Ok(1));
    assert_eq!(next_body(&req, 5_000).await.as_deref(), Some("running"));
    let none = SubscriptionDescriptor {
        options: on_request.options,
        ..SubscriptionDescriptor::managed("Status/Other")
    };
    let empty = subscribe(&conn, &none).await;
    let r = within("MQSUBRQ", empty.request_publications()).await;
    assert_eq!(r.map_err(|e| e.reason), Err(ReasonCode::NoRetainedMsg));
    drop((sub, req, empty, status));
    let _ = conn.disconnect().await;
}

/// Publishes persistent messages `{tag}-{n}` on `topic` until the queue manager dies:
/// every other one under syncpoint (MQPUT, then MQCMIT). Records each before its call and
/// as acknowledged once MQPUT (or MQCMIT) answered.
async fn audit_publisher(
    opts: ferry_client::ConnectOptions,
    topic: &'static str,
    tag: String,
    attempted: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
    acked: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
) {
    let Ok(conn) = Connection::connect(&opts).await else {
        return;
    };
    let Ok(t) = conn.open_topic(topic).await else {
        return;
    };
    for n in 0u64.. {
        let body = format!("{tag}-{n}");
        let sync = n % 2 == 1;
        attempted.lock().expect("lock").insert(body.clone());
        let mut md = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        let pmo = PutOptions::new(if sync {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        });
        let r: Result<(), ferry_mqi::MqError> = async {
            t.put(&mut md, &pmo, body.clone()).await?;
            if sync {
                conn.commit().await?;
            }
            Ok(())
        }
        .await;
        match r {
            Ok(()) => {
                acked.lock().expect("lock").insert(body);
            }
            Err(_) => return,
        }
    }
}

/// Crash audit for publications: four publishers publish persistent messages (in and out
/// of syncpoint) on a topic with three durable subscriptions, each on its own queue; the
/// queue manager is killed with SIGKILL at a random moment, restarted, and every queue
/// drained. Every acknowledged publication is on every subscription's queue exactly once;
/// nothing unknown is; and the three queues hold the same publications (a publication's
/// copies are one unit of work: all of them or none survive).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_audit_acknowledged_publications_reach_every_durable_subscription_once() {
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::{Arc, Mutex};
    const TOPIC: &str = "Audit/Publications";
    let mut qm = start("PS.AUDIT");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(AUDIT.SUB.1) MAXDEPTH(999999999)\n\
         DEFINE QLOCAL(AUDIT.SUB.2) MAXDEPTH(999999999)\n\
         DEFINE QLOCAL(AUDIT.SUB.3) MAXDEPTH(999999999)",
    );
    let conn = connect(&qm.client()).await;
    for i in 1..=3 {
        let q = open(&conn, &format!("AUDIT.SUB.{i}"), OpenOptions::OUTPUT).await;
        let sd = SubscriptionDescriptor {
            options: SubscribeOptions::CREATE | SubscribeOptions::DURABLE,
            object_string: TOPIC.into(),
            sub_name: format!("AUDIT.{i}"),
            ..SubscriptionDescriptor::default()
        };
        let s = within("subscribe", conn.subscribe_to(&sd, &q))
            .await
            .expect("durable subscription");
        within("keep", s.close(true)).await.expect("KEEP_SUB");
    }
    conn.disconnect().await.expect("disconnect");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rng::new(seed);
    eprintln!("publication crash audit seed {seed}");
    let mut earlier: BTreeSet<String> = BTreeSet::new();
    for round in 0..2 {
        let attempted = Arc::new(Mutex::new(BTreeSet::new()));
        let acked = Arc::new(Mutex::new(BTreeSet::new()));
        let publishers: Vec<_> = (0..4)
            .map(|p| {
                tokio::spawn(audit_publisher(
                    qm.client(),
                    TOPIC,
                    format!("r{round}p{p}"),
                    attempted.clone(),
                    acked.clone(),
                ))
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(
            150 + rng.below(400) as u64,
        ))
        .await;
        qm.kill9();
        for p in publishers {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(30), p).await;
        }
        qm.launch();
        let conn = connect(&qm.client()).await;
        let attempted = attempted.lock().expect("lock").clone();
        let acked = acked.lock().expect("lock").clone();
        let mut sets = Vec::new();
        for i in 1..=3 {
            let q = open(
                &conn,
                &format!("AUDIT.SUB.{i}"),
                OpenOptions::INPUT_AS_Q_DEF,
            )
            .await;
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            loop {
                match get(&q).await {
                    Ok((_, got)) => {
                        let body = String::from_utf8_lossy(&got.data).into_owned();
                        *counts.entry(body).or_default() += 1;
                    }
                    Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
                    Err(e) => panic!("get: {e}"),
                }
            }
            for (body, n) in &counts {
                assert_eq!(
                    *n, 1,
                    "round {round} (seed {seed}): {body} {n} times on queue {i}"
                );
                assert!(
                    attempted.contains(body) && !earlier.contains(body),
                    "round {round} (seed {seed}): unknown publication {body} on queue {i}"
                );
            }
            let lost: Vec<_> = acked.iter().filter(|b| !counts.contains_key(*b)).collect();
            assert!(
                lost.is_empty(),
                "round {round} (seed {seed}): acknowledged publications lost on queue {i}: {lost:?}"
            );
            sets.push(counts.into_keys().collect::<BTreeSet<String>>());
        }
        assert!(
            sets.windows(2).all(|w| w[0] == w[1]),
            "round {round} (seed {seed}): the subscriptions hold different publications"
        );
        assert!(
            !acked.is_empty(),
            "round {round}: some publications were acknowledged"
        );
        eprintln!(
            "round {round}: {} publications attempted, {} acknowledged, {} on each queue",
            attempted.len(),
            acked.len(),
            sets[0].len()
        );
        earlier.extend(attempted);
        conn.disconnect().await.expect("disconnect");
    }
}
