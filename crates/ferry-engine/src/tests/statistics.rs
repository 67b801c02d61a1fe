//! Statistics: the MQI and per-queue counters count each verb once, where it is
//! decided (a put handed to a waiting getter counts one put and one get).

use super::*;
use ferry_monitoring::prometheus::NameFilter;
use ferry_mqi::SubscriptionDescriptor;

#[test]
fn puts_gets_browses_and_handles_are_counted_once() {
    let mut h = Harness::new();
    h.local("APP.Q");
    h.local("SYSTEM.X");
    let c = h.conn();
    let o = h.open(c, "APP.Q", IO | OpenOptions::BROWSE);
    h.put(c, o, b"12345");
    h.put(c, o, b"123");
    assert_eq!(h.get_body(c, o).unwrap(), b"12345");
    // A browse, then a failed get on an empty queue after the last get.
    let browsed = h.get_now(c, o, GetOptionFlags::BROWSE_FIRST);
    assert!(browsed.is_ok());
    assert!(h.get_body(c, o).is_ok());
    assert_eq!(h.get_body(c, o), Err(ReasonCode::NoMsgAvailable));

    let m = h.qm.mqi_counters();
    assert_eq!(m.conns, 1);
    assert_eq!(m.opens, 1);
    assert_eq!(m.put_count(), 2);
    assert_eq!(m.put_bytes(), 8);
    assert_eq!((m.get_count(), m.get_bytes()), (2, 8));
    assert_eq!(m.gets_failed, 1);
    assert_eq!(m.browses_non_persistent, 1);
    let q = h.qm.queue_sample("APP.Q").expect("a local queue");
    assert_eq!((q.counters.put_count(), q.counters.get_count()), (2, 2));
    assert_eq!((q.counters.opens, q.depth, q.open_input), (1, 0, 1));

    // MQPUT1: one put1, its own open and close not counted as MQOPEN/MQCLOSE.
    let od = ObjectDescriptor::queue("APP.Q").unwrap();
    let mut md = MessageDescriptor::default();
    let t = h.t();
    h.qm.put1(
        c,
        &od,
        &mut md,
        &PutOptions::new(PutOptionFlags::empty()),
        Bytes::from_static(b"x"),
        t,
        &mut h.fx,
    )
    .unwrap();
    let m = h.qm.mqi_counters();
    assert_eq!((m.put1s_non_persistent, m.opens, m.closes), (1, 1, 0));
    assert_eq!(
        h.qm.queue_sample("APP.Q")
            .unwrap()
            .counters
            .put1s_non_persistent,
        1
    );

    // Prometheus: SYSTEM.* left out by default.
    let t = h.t();
    let queues = h.qm.queue_metrics(&NameFilter::default(), t);
    assert_eq!(queues.len(), 1);
    assert_eq!(
        (queues[0].name.as_str(), queues[0].sample.depth),
        ("APP.Q", 1)
    );
}

#[test]
fn a_put_to_a_waiting_getter_counts_one_get() {
    let mut h = Harness::new();
    h.local("Q");
    let (a, b) = (h.conn(), h.conn());
    let g = h.open(a, "Q", IO);
    let p = h.open(b, "Q", IO);
    let r = h.get_with(
        a,
        g,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        -1,
        100,
    );
    assert_eq!(r, GetOutcome::Waiting);
    h.put(b, p, b"hello");
    let m = h.qm.mqi_counters();
    assert_eq!((m.put_count(), m.get_count(), m.gets_failed), (1, 1, 0));
    assert_eq!(h.qm.queue_sample("Q").unwrap().counters.get_bytes(), 5);
}

#[test]
fn subscriptions_name_the_watched_monitoring_topics() {
    let mut h = Harness::new();
    let c = h.conn();
    let root = "$SYS/MQ/INFO/QMGR/QM1/Monitor";
    assert!(!h.qm.has_subscribers(&format!("{root}/STATMQI/PUT")));
    let t = h.t();
    for topic in ["STATMQI/PUT", "STATQ/APP.Q/GET", "STATQ/#"] {
        let sd = SubscriptionDescriptor::managed(&format!("{root}/{topic}"));
        h.qm.subscribe(c, &sd, None, None, t, &mut h.fx).unwrap();
    }
    assert!(h.qm.has_subscribers(&format!("{root}/STATMQI/PUT")));
    assert!(!h.qm.has_subscribers(&format!("{root}/STATMQI/GET")));
    assert_eq!(
        h.qm.subscribed_under(&format!("{root}/STATQ/")),
        ["APP.Q/GET"]
    );
}

#[test]
fn wildcards_above_sys_mq_see_nothing_of_it_retained_or_not() {
    let mut h = Harness::new();
    let c = h.conn();
    let topic = "$SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/CLASSES";
    let subscribe = |h: &mut Harness, filter: &str| {
        let sd = SubscriptionDescriptor::managed(filter);
        let t = h.t();
        h.qm.subscribe(c, &sd, None, None, t, &mut h.fx)
            .unwrap()
            .destination
    };
    let everything = subscribe(&mut h, "#");
    let sys = subscribe(&mut h, "$SYS/#");
    assert!(!h.qm.has_subscribers(topic), "# and $SYS/# are blocked");
    // A retained publication, then new subscriptions.
    // Applications may not publish there (MQ's 2598); the queue manager's own may.
    let refused =
        h.qm.open_topic(c, "", topic, OpenOptions::OUTPUT, &mut h.fx);
    assert_eq!(
        refused.map(|o| o.hobj).map_err(|e| e.reason),
        Err(ReasonCode::AdminTopicStringError)
    );
    assert!(h.qm.set_system_connection(c));
    let p =
        h.qm.open_topic(c, "", topic, OpenOptions::OUTPUT, &mut h.fx)
            .unwrap()
            .hobj;
    let mut md = MessageDescriptor::default();
    h.put_md(c, p, &mut md, PutOptionFlags::RETAIN, b"meta")
        .unwrap();
    let late_everything = subscribe(&mut h, "#");
    let admin = subscribe(&mut h, "$SYS/MQ/#");
    let exact = subscribe(&mut h, topic);
    assert!(h.qm.has_subscribers(topic));
    for (q, want) in [
        (everything, 0),
        (sys, 0),
        (late_everything, 0),
        (admin, 1),
        (exact, 1),
    ] {
        assert_eq!(h.depth(&q), want, "{q}");
    }
}

#[test]
fn statistics_queues_follow_statq_and_give_each_intervals_depth_range() {
    use ferry_objects::qmgr::StatisticsSwitch;
    use ferry_objects::queue::QueueStatistics as Switch;
    let mut h = Harness::new();
    h.local("ON.Q");
    h.local("OFF.Q");
    h.local("AS.QMGR");
    for (name, switch) in [("ON.Q", Switch::On), ("OFF.Q", Switch::Off)] {
        let mut def = h.qm.queue(name).expect("defined");
        def.attributes.statistics = switch;
        h.qm.queues
            .get_mut(h.qm.queues.lookup(name).unwrap())
            .unwrap()
            .def = def;
    }
    let names = |h: &mut Harness| -> Vec<String> {
        h.qm.statistics_queues()
            .into_iter()
            .map(|q| q.name)
            .filter(|n| !n.starts_with("SYSTEM."))
            .collect()
    };
    // The queue manager's STATQ(OFF): only STATQ(ON) queues; ON: those of QMGR too;
    // NONE: none.
    assert_eq!(names(&mut h), ["ON.Q"]);
    h.qm.qmgr.statistics_q = StatisticsSwitch::On;
    assert_eq!(names(&mut h), ["AS.QMGR", "ON.Q"]);
    h.qm.qmgr.statistics_q = StatisticsSwitch::None;
    assert!(names(&mut h).is_empty());
    h.qm.qmgr.statistics_q = StatisticsSwitch::Off;

    // Depth 0, up to 3, down to 1: the range since the last reading; the next range
    // starts from the depth then.
    let c = h.conn();
    let o = h.open(c, "ON.Q", IO);
    let _ = h.qm.statistics_queues();
    for body in [b"a", b"b", b"c"] {
        h.put(c, o, body);
    }
    assert!(h.get_body(c, o).is_ok());
    assert!(h.get_body(c, o).is_ok());
    let on_q = |h: &mut Harness| {
        h.qm.statistics_queues()
            .into_iter()
            .find(|q| q.name == "ON.Q")
            .expect("ON.Q")
    };
    let on = on_q(&mut h);
    assert_eq!((on.min_depth, on.max_depth), (0, 3));
    assert_eq!((on.counts.put_count(), on.counts.get_count()), (3, 2));
    let on = on_q(&mut h);
    assert_eq!((on.min_depth, on.max_depth), (1, 1));
}
