//! Report messages made by the queue manager: COA at put, COD at destructive get, in the
//! unit of work of the operation; expiration when an expired message is discarded;
//! exception at the backout threshold; undeliverable reports to DEADQ or discarded; and
//! a persistent report logged with its cause, so a restart keeps both or neither.

use super::persistence::{restart, take_log, view_of};
use super::*;
use crate::LogRecord;
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::report::{feedback, options};
use ferry_mqi::FixedStr;

/// Q (the application's queue), REPLY (its ReplyToQ) and DLQ, with DEADQ set to `deadq`.
fn report_harness(deadq: &str, logging: bool) -> Harness {
    let mut h = Harness::new();
    for q in ["Q", "REPLY", "DLQ"] {
        h.local(q);
    }
    h.qm.qmgr.dead_letter_q = deadq.to_string();
    h.qm.set_logging(logging);
    h
}

/// A descriptor asking for `report`, replies to REPLY.
fn asking(report: i32) -> MessageDescriptor {
    MessageDescriptor {
        report,
        reply_to_q: FixedStr::truncating("REPLY"),
        correl_id: id(9),
        ..MessageDescriptor::default()
    }
}

fn put_asking(h: &mut Harness, c: ConnId, o: Hobj, report: i32, sync: bool) -> MessageDescriptor {
    let mut md = asking(report);
    let f = if sync {
        PutOptionFlags::SYNCPOINT
    } else {
        PutOptionFlags::NO_SYNCPOINT
    };
    h.put_md(c, o, &mut md, f, &[7u8; 300]).unwrap();
    md
}

/// Every message on REPLY, got destructively.
fn reports(h: &mut Harness, c: ConnId) -> Vec<GotMessage> {
    let r = h.open(c, "REPLY", IO);
    let mut out = Vec::new();
    while let Ok(g) = h.get_now(c, r, GetOptionFlags::NO_SYNCPOINT) {
        out.push(g);
    }
    out
}

use crate::GotMessage;

#[test]
fn coa_is_made_at_put_with_mqs_ids_and_no_data() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let md = put_asking(&mut h, c, o, options::COA, false);
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(r.md.msg_type, msg_type::REPORT);
    assert_eq!(r.md.feedback, feedback::COA);
    assert_ne!(r.md.msg_id, md.msg_id, "MQRO_NEW_MSG_ID: a new MsgId");
    assert_ne!(r.md.msg_id, [0; 24]);
    assert_eq!(r.md.correl_id, md.msg_id, "MQRO_COPY_MSG_ID_TO_CORREL_ID");
    assert!(r.data.is_empty(), "no data asked");
    assert_eq!(r.md.reply_to_qmgr.as_str(), "QM1");
    assert_eq!(
        r.md.user_identifier.as_str(),
        "alice",
        "identity of the original"
    );
    assert_eq!(h.depth("Q"), 1, "the message itself is untouched");
}

#[test]
fn with_data_carries_100_bytes_and_full_data_all() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_asking(&mut h, c, o, options::COA_WITH_DATA, false);
    put_asking(&mut h, c, o, options::COA_WITH_FULL_DATA, false);
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].data.len(), 100);
    assert_eq!(got[1].data.len(), 300);
}

#[test]
fn each_id_option_sets_the_reports_msg_id_and_correl_id() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for (pass_msg_id, pass_correl_id) in
        [(false, false), (true, false), (false, true), (true, true)]
    {
        let mut r = options::COA;
        if pass_msg_id {
            r |= options::PASS_MSG_ID;
        }
        if pass_correl_id {
            r |= options::PASS_CORREL_ID;
        }
        let md = put_asking(&mut h, c, o, r, false);
        let got = reports(&mut h, c);
        let what = format!("PASS_MSG_ID {pass_msg_id}, PASS_CORREL_ID {pass_correl_id}");
        assert_eq!(got[0].md.msg_id == md.msg_id, pass_msg_id, "{what}");
        let correl = if pass_correl_id { id(9) } else { md.msg_id };
        assert_eq!(got[0].md.correl_id, correl, "{what}");
    }
}

#[test]
fn cod_is_made_by_a_destructive_get_never_by_browse() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO.union(OpenOptions::BROWSE));
    put_asking(&mut h, c, o, options::COD, false);
    h.get_now(c, o, GetOptionFlags::BROWSE_FIRST).unwrap();
    assert_eq!(h.depth("REPLY"), 0, "browse makes no COD");
    h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].md.feedback, feedback::COD);
}

#[test]
fn a_waiting_getter_makes_the_cod_too() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let getter = h.conn();
    let o = h.open(c, "Q", IO);
    let g = h.open(getter, "Q", IO);
    let waiting = h.get_with(
        getter,
        g,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
        -1,
        1 << 20,
    );
    assert_eq!(waiting, GetOutcome::Waiting);
    put_asking(&mut h, c, o, options::COD, false);
    assert_eq!(h.completions().len(), 1);
    assert_eq!(reports(&mut h, c)[0].md.feedback, feedback::COD);
}

#[test]
fn coa_and_cod_under_syncpoint_follow_their_unit_of_work() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_asking(&mut h, c, o, options::COA | options::COD, true);
    assert_eq!(
        h.depth("REPLY"),
        1,
        "the uncommitted COA counts in CURDEPTH"
    );
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!(
        (h.depth("Q"), h.depth("REPLY")),
        (0, 0),
        "backed out: no COA"
    );

    put_asking(&mut h, c, o, options::COA | options::COD, true);
    h.qm.commit(c, t, &mut h.fx).unwrap();
    assert_eq!(reports(&mut h, c)[0].md.feedback, feedback::COA);

    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!(
        (h.depth("Q"), h.depth("REPLY")),
        (1, 0),
        "backed-out get: no COD"
    );
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].md.feedback, feedback::COD);
}

#[test]
fn an_expired_message_met_by_a_get_makes_an_expiration_report() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = asking(options::EXPIRATION_WITH_DATA);
    md.expiry = 1;
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"short-lived")
        .unwrap();
    h.now += 200;
    assert_eq!(
        h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT)
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgAvailable
    );
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].md.feedback, feedback::EXPIRATION);
    assert_eq!(&got[0].data[..], b"short-lived");
    assert_eq!(got[0].md.correl_id, md.msg_id);
}

#[test]
fn no_reply_to_queue_no_report_and_pan_nan_pass_through() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = MessageDescriptor {
        report: options::COA | options::COD,
        ..MessageDescriptor::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!((h.depth("REPLY"), h.depth("DLQ")), (0, 0));
    // An application's own PAN: a report message like any other.
    let mut pan = MessageDescriptor {
        msg_type: msg_type::REPORT,
        feedback: feedback::PAN,
        report: options::PAN | options::NAN,
        ..MessageDescriptor::default()
    };
    h.put_md(c, o, &mut pan, PutOptionFlags::NO_SYNCPOINT, b"done")
        .unwrap();
    let g = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(
        (g.md.msg_type, g.md.feedback, g.md.report),
        (msg_type::REPORT, feedback::PAN, options::PAN | options::NAN)
    );
}

#[test]
fn an_undeliverable_report_goes_to_deadq_or_is_discarded_and_said() {
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = asking(options::COA);
    md.reply_to_q = FixedStr::truncating("NO.SUCH.Q");
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    let mut remote = asking(options::COA);
    remote.reply_to_qmgr = FixedStr::truncating("OTHER.QM");
    h.put_md(c, o, &mut remote, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    let d = h.open(c, "DLQ", IO);
    let reasons: Vec<i32> = (0..2)
        .map(|_| {
            let g = h.get_now(c, d, GetOptionFlags::NO_SYNCPOINT).unwrap();
            assert_eq!(g.md.format.as_bytes(), b"MQDEAD  ");
            assert_eq!(g.md.msg_type, msg_type::REPORT);
            i32::from_le_bytes([g.data[8], g.data[9], g.data[10], g.data[11]])
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ReasonCode::UnknownObjectName.number(),
            ReasonCode::UnknownRemoteQMgr.number()
        ]
    );

    h.qm.qmgr.dead_letter_q.clear();
    h.fx.clear();
    let mut md = asking(options::COA);
    md.reply_to_q = FixedStr::truncating("NO.SUCH.Q");
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    let said: Vec<_> =
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::ReportDiscarded {
                    reply_to_q,
                    feedback,
                    ..
                } => Some((reply_to_q, feedback)),
                _ => None,
            })
            .collect();
    assert_eq!(said, [("NO.SUCH.Q".to_string(), feedback::COA)]);
}

#[test]
fn at_the_backout_threshold_discard_msg_discards_with_an_exception_report() {
    let mut h = report_harness("DLQ", false);
    h.define("POISON", QueueType::Local, |a| a.backout_threshold = 1);
    let c = h.conn();
    let o = h.open(c, "POISON", IO);
    let mut md = asking(options::EXCEPTION_WITH_FULL_DATA | options::DISCARD_MSG);
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"poison")
        .unwrap();
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!((h.depth("POISON"), h.depth("DLQ")), (0, 0), "discarded");
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].md.feedback,
        ReasonCode::BackoutThresholdReached.number()
    );
    assert_eq!(&got[0].data[..], b"poison");

    // Without DISCARD_MSG it is dead-lettered, with the same report.
    let mut md = asking(options::EXCEPTION);
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"poison")
        .unwrap();
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!(h.depth("DLQ"), 1);
    assert_eq!(reports(&mut h, c).len(), 1);
}

#[test]
fn a_persistent_put_and_its_coa_survive_a_restart_together_wherever_the_log_ends() {
    let mut h = report_harness("DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = asking(options::COA);
    md.persistence = persistence::PERSISTENT;
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"p")
        .unwrap();
    assert!(h.fx.reply_needs_durable());
    let log: Vec<LogRecord> = take_log(&mut h);
    assert_eq!(log.len(), 3, "the put, its report, the commit");
    for cut in 0..=log.len() {
        let (qm, _) = restart(&h, &log[..cut]);
        let v = view_of(&qm);
        let on = |q: &str| v.get(q).map_or(0, |m| m.len());
        let both = cut == log.len();
        assert_eq!(
            (on("Q"), on("REPLY")),
            if both { (1, 1) } else { (0, 0) },
            "cut after {cut} records"
        );
    }
}

#[test]
fn a_persistent_get_and_its_cod_survive_a_restart_together_wherever_the_log_ends() {
    let mut h = report_harness("DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = asking(options::COD);
    md.persistence = persistence::PERSISTENT;
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"p")
        .unwrap();
    let before: Vec<LogRecord> = take_log(&mut h);
    h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert!(h.fx.reply_needs_durable());
    let getting: Vec<LogRecord> = take_log(&mut h);
    assert_eq!(getting.len(), 3, "the get, its report, the commit");
    for cut in 0..=getting.len() {
        let log: Vec<&LogRecord> = before.iter().chain(&getting[..cut]).collect();
        let (qm, _) = restart(&h, log);
        let v = view_of(&qm);
        let on = |q: &str| v.get(q).map_or(0, |m| m.len());
        let done = cut == getting.len();
        assert_eq!(
            (on("Q"), on("REPLY")),
            if done { (0, 1) } else { (1, 0) },
            "cut after {cut} records"
        );
    }
}

#[test]
fn an_accepted_consumer_delivery_makes_the_cod_and_a_released_one_none() {
    use crate::{ConsumeMode, ConsumeSpec, Settlement};
    let mut h = report_harness("DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_asking(&mut h, c, o, options::COD | options::EXPIRATION, false);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 10, t, &mut h.fx).unwrap();
    let tokens = |h: &mut Harness| -> Vec<crate::DeliveryToken> {
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::Delivered { delivery, .. } => delivery,
                _ => None,
            })
            .collect()
    };
    let first = tokens(&mut h);
    assert_eq!(first.len(), 1);
    h.qm.settle(c, first[0], Settlement::Released, t, &mut h.fx)
        .unwrap();
    assert_eq!(h.depth("REPLY"), 0, "released: not delivered");
    let again = tokens(&mut h);
    assert_eq!(again.len(), 1, "offered again");
    h.qm.settle(c, again[0], Settlement::Accepted, t, &mut h.fx)
        .unwrap();
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].md.feedback, feedback::COD);

    // An expired message a consumer meets is reported too.
    h.qm.cancel_consumer(c, k, Settlement::Released, t, &mut h.fx)
        .unwrap();
    let mut md = asking(options::EXPIRATION);
    md.expiry = 1;
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    h.now += 200;
    let t = h.t();
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Settled))
            .unwrap();
    h.qm.add_credit(c, k, 10, t, &mut h.fx).unwrap();
    let got = reports(&mut h, c);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].md.feedback, feedback::EXPIRATION);
}

#[test]
fn a_cod_under_syncpoint_at_maxumsgs_is_still_made() {
    let mut h = report_harness("DLQ", false);
    h.qm.qmgr.max_uncommitted_msgs = 1;
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_asking(&mut h, c, o, options::COD, false);
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    let t = h.t();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    assert_eq!((h.depth("REPLY"), h.depth("DLQ")), (1, 0));
}

#[test]
fn a_settled_consumer_delivery_of_a_persistent_message_logs_its_cod_with_the_get() {
    use crate::{ConsumeMode, ConsumeSpec};
    let mut h = report_harness("DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = asking(options::COD);
    md.persistence = persistence::PERSISTENT;
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"p")
        .unwrap();
    let before: Vec<LogRecord> = take_log(&mut h);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Settled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 10, t, &mut h.fx).unwrap();
    let delivered: Vec<bool> =
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::Delivered { needs_durable, .. } => Some(needs_durable),
                _ => None,
            })
            .collect();
    assert_eq!(delivered, [true], "held until its get and COD are durable");
    let delivering: Vec<LogRecord> = take_log(&mut h);
    assert_eq!(delivering.len(), 3, "the get, its report, the commit");
    for cut in 0..=delivering.len() {
        let log: Vec<&LogRecord> = before.iter().chain(&delivering[..cut]).collect();
        let (qm, _) = restart(&h, log);
        let v = view_of(&qm);
        let on = |q: &str| v.get(q).map_or(0, |m| m.len());
        let done = cut == delivering.len();
        assert_eq!(
            (on("Q"), on("REPLY")),
            if done { (0, 1) } else { (1, 0) },
            "cut after {cut} records"
        );
    }
}
