//! Report messages: the MQRO options a message's Report field carries, the MQFB feedback
//! codes, and the descriptor and body of a report the queue manager makes about a message.
//!
//! An application asks for reports by setting MQRO bits in the MQMD's Report field and
//! naming a ReplyToQ. The queue manager then puts a message of type MQMT_REPORT to that
//! queue when the message arrives (COA), is got destructively (COD), is discarded as
//! expired (EXPIRATION) or cannot be delivered (EXCEPTION). PAN and NAN are reports that
//! applications make themselves; the queue manager only carries those bits. This module
//! is pure: it decides what a report looks like, the engine decides when and where it goes.

use crate::dead_letter::APPL_TYPE_QMGR;
use crate::descriptor::{format, msg_type, MessageDescriptor, EXPIRY_UNLIMITED, NONE_ID};
use crate::{FixedStr, ReasonCode};

/// MQRO: report options (bits of the MQMD's Report field).
pub mod options {
    /// MQRO_NONE: no reports.
    pub const NONE: i32 = 0;
    /// MQRO_PAN: the sending application wants a positive action notification.
    pub const PAN: i32 = 1;
    /// MQRO_NAN: the sending application wants a negative action notification.
    pub const NAN: i32 = 2;
    /// MQRO_ACTIVITY: activity reports (trace-route); carried, never generated.
    pub const ACTIVITY: i32 = 4;
    /// MQRO_PASS_CORREL_ID: the report's CorrelId is the original's CorrelId.
    pub const PASS_CORREL_ID: i32 = 64;
    /// MQRO_PASS_MSG_ID: the report's MsgId is the original's MsgId.
    pub const PASS_MSG_ID: i32 = 128;
    /// MQRO_COA: confirm on arrival.
    pub const COA: i32 = 256;
    /// MQRO_COA_WITH_DATA: confirm on arrival with the first 100 bytes of the body.
    pub const COA_WITH_DATA: i32 = 768;
    /// MQRO_COA_WITH_FULL_DATA: confirm on arrival with the whole body.
    pub const COA_WITH_FULL_DATA: i32 = 1792;
    /// MQRO_COD: confirm on delivery.
    pub const COD: i32 = 2048;
    /// MQRO_COD_WITH_DATA: confirm on delivery with the first 100 bytes of the body.
    pub const COD_WITH_DATA: i32 = 6144;
    /// MQRO_COD_WITH_FULL_DATA: confirm on delivery with the whole body.
    pub const COD_WITH_FULL_DATA: i32 = 14336;
    /// MQRO_PASS_DISCARD_AND_EXPIRY: the report inherits DISCARD_MSG and the time left.
    pub const PASS_DISCARD_AND_EXPIRY: i32 = 16384;
    /// MQRO_EXPIRATION: a report when the message is discarded as expired.
    pub const EXPIRATION: i32 = 2_097_152;
    /// MQRO_EXPIRATION_WITH_DATA: with the first 100 bytes of the body.
    pub const EXPIRATION_WITH_DATA: i32 = 6_291_456;
    /// MQRO_EXPIRATION_WITH_FULL_DATA: with the whole body.
    pub const EXPIRATION_WITH_FULL_DATA: i32 = 14_680_064;
    /// MQRO_EXCEPTION: a report when the message cannot be delivered.
    pub const EXCEPTION: i32 = 16_777_216;
    /// MQRO_EXCEPTION_WITH_DATA: with the first 100 bytes of the body.
    pub const EXCEPTION_WITH_DATA: i32 = 50_331_648;
    /// MQRO_EXCEPTION_WITH_FULL_DATA: with the whole body.
    pub const EXCEPTION_WITH_FULL_DATA: i32 = 117_440_512;
    /// MQRO_DISCARD_MSG: an undeliverable message is discarded, not dead-lettered.
    pub const DISCARD_MSG: i32 = 134_217_728;
}

/// MQFB: feedback codes of reports (an exception report carries an MQRC instead).
pub mod feedback {
    /// MQFB_NONE.
    pub const NONE: i32 = 0;
    /// MQFB_EXPIRATION: the message expired and was discarded.
    pub const EXPIRATION: i32 = 258;
    /// MQFB_COA: the message arrived on its queue.
    pub const COA: i32 = 259;
    /// MQFB_COD: the message was got destructively.
    pub const COD: i32 = 260;
    /// MQFB_PAN: positive action notification (made by applications).
    pub const PAN: i32 = 275;
    /// MQFB_NAN: negative action notification (made by applications).
    pub const NAN: i32 = 276;
}

/// The MQMF bits that make a message a segment: its reports are segments too.
const SEGMENT_FLAGS: i32 = 2 | 4;

/// How many bytes of the body a `_WITH_DATA` report carries.
pub const WITH_DATA_LEN: usize = 100;

/// The kinds of report the queue manager makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// Confirm on arrival: the message was put to its queue.
    Coa,
    /// Confirm on delivery: the message was got destructively.
    Cod,
    /// The message expired and was discarded.
    Expiration,
    /// The message could not be delivered, for this reason.
    Exception(ReasonCode),
}

/// How much of the original body a report carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportData {
    /// None of it.
    None,
    /// The first [`WITH_DATA_LEN`] bytes.
    First100,
    /// All of it.
    Full,
}

impl ReportKind {
    /// The three Report bits of this kind: (plain, with data, with full data).
    fn bits(self) -> (i32, i32, i32) {
        match self {
            ReportKind::Coa => (
                options::COA,
                options::COA_WITH_DATA,
                options::COA_WITH_FULL_DATA,
            ),
            ReportKind::Cod => (
                options::COD,
                options::COD_WITH_DATA,
                options::COD_WITH_FULL_DATA,
            ),
            ReportKind::Expiration => (
                options::EXPIRATION,
                options::EXPIRATION_WITH_DATA,
                options::EXPIRATION_WITH_FULL_DATA,
            ),
            ReportKind::Exception(_) => (
                options::EXCEPTION,
                options::EXCEPTION_WITH_DATA,
                options::EXCEPTION_WITH_FULL_DATA,
            ),
        }
    }

    /// Whether `report` (an MQMD Report field) asks for this kind, and with how much
    /// data; `None` when it does not ask.
    pub fn requested(self, report: i32) -> Option<ReportData> {
        let (plain, with, full) = self.bits();
        if report & full == full {
            Some(ReportData::Full)
        } else if report & with == with {
            Some(ReportData::First100)
        } else if report & plain == plain {
            Some(ReportData::None)
        } else {
            None
        }
    }

    /// The report's Feedback: an MQFB code, or the reason of an exception.
    pub fn feedback(self) -> i32 {
        match self {
            ReportKind::Coa => feedback::COA,
            ReportKind::Cod => feedback::COD,
            ReportKind::Expiration => feedback::EXPIRATION,
            ReportKind::Exception(reason) => reason.number(),
        }
    }
}

/// True when the queue manager would make a report of `kind` about a message with `md`:
/// it asks for one and names a ReplyToQ (MQ makes no report without one).
pub fn wanted(kind: ReportKind, md: &MessageDescriptor) -> bool {
    md.report != options::NONE && !md.reply_to_q.is_blank() && kind.requested(md.report).is_some()
}

/// True when an undeliverable message with `md` is to be discarded (MQRO_DISCARD_MSG)
/// rather than put on the dead-letter queue.
pub fn discard_when_undeliverable(md: &MessageDescriptor) -> bool {
    md.report & options::DISCARD_MSG != 0
}

/// The part of `body` a report of `data` carries.
pub fn report_data(data: ReportData, body: &[u8]) -> std::ops::Range<usize> {
    match data {
        ReportData::None => 0..0,
        ReportData::First100 => 0..body.len().min(WITH_DATA_LEN),
        ReportData::Full => 0..body.len(),
    }
}

/// What the queue manager knows when it makes a report, beyond the original message.
#[derive(Clone, Copy, Debug)]
pub struct ReportOrigin<'a> {
    /// The queue manager's name: the report's ReplyToQMgr and PutApplName.
    pub qmgr_name: &'a str,
    /// The report's PutDate and PutTime.
    pub put_date_time: (FixedStr<8>, FixedStr<8>),
    /// The original's time left in tenths of a second (-1 unlimited), passed on with
    /// MQRO_PASS_DISCARD_AND_EXPIRY.
    pub expiry_left: i32,
    /// The length of the original body (the report's OriginalLength for a segment).
    pub original_length: usize,
}

/// The descriptor of a report of `kind` about the message with `original`, as MQ sets
/// it: MsgType REPORT, Feedback, MsgId (MQMI_NONE, for the queue manager to generate,
/// unless MQRO_PASS_MSG_ID) and CorrelId (the original's MsgId unless
/// MQRO_PASS_CORREL_ID), the original's Priority and Persistence, unlimited Expiry and
/// Report MQRO_NONE unless MQRO_PASS_DISCARD_AND_EXPIRY, the original's identity
/// context, the queue manager as origin, and for a segment its group fields. `data`
/// says whether the body carries original data (then Format, Encoding and CCSID are
/// the original's; else Format is MQFMT_NONE).
pub fn report_descriptor(
    kind: ReportKind,
    original: &MessageDescriptor,
    data: ReportData,
    origin: &ReportOrigin<'_>,
) -> MessageDescriptor {
    let r = original.report;
    let pass_discard = r & options::PASS_DISCARD_AND_EXPIRY != 0;
    let segment = original.msg_flags & SEGMENT_FLAGS != 0;
    let mut md = MessageDescriptor {
        report: if pass_discard {
            r & options::DISCARD_MSG
        } else {
            options::NONE
        },
        msg_type: msg_type::REPORT,
        expiry: if pass_discard {
            origin.expiry_left
        } else {
            EXPIRY_UNLIMITED
        },
        feedback: kind.feedback(),
        encoding: original.encoding,
        ccsid: original.ccsid,
        format: if data == ReportData::None {
            format::NONE
        } else {
            original.format
        },
        priority: original.priority,
        persistence: original.persistence,
        msg_id: if r & options::PASS_MSG_ID != 0 {
            original.msg_id
        } else {
            NONE_ID
        },
        correl_id: if r & options::PASS_CORREL_ID != 0 {
            original.correl_id
        } else {
            original.msg_id
        },
        backout_count: 0,
        reply_to_q: FixedStr::BLANK,
        reply_to_qmgr: FixedStr::truncating(origin.qmgr_name),
        user_identifier: original.user_identifier,
        accounting_token: original.accounting_token,
        appl_identity_data: original.appl_identity_data,
        put_appl_type: APPL_TYPE_QMGR,
        put_appl_name: FixedStr::truncating(origin.qmgr_name),
        put_date: origin.put_date_time.0,
        put_time: origin.put_date_time.1,
        appl_origin_data: FixedStr::BLANK,
        ..MessageDescriptor::default()
    };
    if segment {
        md.group_id = original.group_id;
        md.msg_seq_number = original.msg_seq_number;
        md.offset = original.offset;
        md.msg_flags = original.msg_flags;
        md.original_length = i32::try_from(origin.original_length).unwrap_or(i32::MAX);
    }
    debug_assert_eq!(md.msg_type, msg_type::REPORT);
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> ReportOrigin<'static> {
        ReportOrigin {
            qmgr_name: "QM1",
            put_date_time: (
                FixedStr::truncating("20260101"),
                FixedStr::truncating("12000000"),
            ),
            expiry_left: 42,
            original_length: 300,
        }
    }

    fn original(report: i32) -> MessageDescriptor {
        MessageDescriptor {
            report,
            msg_id: [1; 24],
            correl_id: [2; 24],
            priority: 7,
            persistence: crate::descriptor::persistence::PERSISTENT,
            format: format::STRING,
            reply_to_q: FixedStr::truncating("REPLY.Q"),
            user_identifier: FixedStr::truncating("alice"),
            ..MessageDescriptor::default()
        }
    }

    #[test]
    fn with_data_and_full_data_are_told_apart() {
        assert_eq!(
            ReportKind::Coa.requested(options::COA),
            Some(ReportData::None)
        );
        assert_eq!(
            ReportKind::Coa.requested(options::COA_WITH_DATA),
            Some(ReportData::First100)
        );
        assert_eq!(
            ReportKind::Coa.requested(options::COA_WITH_FULL_DATA),
            Some(ReportData::Full)
        );
        assert_eq!(ReportKind::Cod.requested(options::COA_WITH_FULL_DATA), None);
        assert_eq!(
            ReportKind::Exception(ReasonCode::QFull).requested(options::EXCEPTION_WITH_DATA),
            Some(ReportData::First100)
        );
        assert_eq!(
            ReportKind::Expiration.requested(options::EXPIRATION | options::COD),
            Some(ReportData::None)
        );
        assert_eq!(report_data(ReportData::First100, &[0; 300]), 0..100);
        assert_eq!(report_data(ReportData::First100, &[0; 30]), 0..30);
        assert_eq!(report_data(ReportData::Full, &[0; 300]), 0..300);
    }

    #[test]
    fn no_reply_to_queue_no_report() {
        let mut md = original(options::COA);
        assert!(wanted(ReportKind::Coa, &md));
        md.reply_to_q = FixedStr::BLANK;
        assert!(!wanted(ReportKind::Coa, &md));
        assert!(!wanted(
            ReportKind::Cod,
            &original(options::PAN | options::NAN)
        ));
    }

    #[test]
    fn default_ids_new_msg_id_and_msg_id_as_correl_id() {
        let md = report_descriptor(
            ReportKind::Cod,
            &original(options::COD),
            ReportData::None,
            &origin(),
        );
        assert_eq!(md.msg_type, msg_type::REPORT);
        assert_eq!(md.feedback, feedback::COD);
        assert_eq!(md.msg_id, NONE_ID);
        assert_eq!(md.correl_id, [1; 24]);
        assert_eq!(md.report, options::NONE);
        assert_eq!(md.expiry, EXPIRY_UNLIMITED);
        assert_eq!(md.priority, 7);
        assert!(md.is_persistent());
        assert_eq!(md.format, format::NONE);
        assert_eq!(md.reply_to_qmgr.as_str(), "QM1");
        assert_eq!(md.put_appl_type, APPL_TYPE_QMGR);
        assert_eq!(md.user_identifier.as_str(), "alice");
    }

    #[test]
    fn pass_options_are_honoured() {
        let r = options::COA_WITH_DATA
            | options::PASS_MSG_ID
            | options::PASS_CORREL_ID
            | options::PASS_DISCARD_AND_EXPIRY
            | options::DISCARD_MSG;
        let md = report_descriptor(
            ReportKind::Coa,
            &original(r),
            ReportData::First100,
            &origin(),
        );
        assert_eq!(md.msg_id, [1; 24]);
        assert_eq!(md.correl_id, [2; 24]);
        assert_eq!(md.report, options::DISCARD_MSG);
        assert_eq!(md.expiry, 42);
        assert_eq!(md.format, format::STRING);
    }

    #[test]
    fn an_exception_carries_the_reason() {
        let kind = ReportKind::Exception(ReasonCode::BackoutThresholdReached);
        assert_eq!(kind.feedback(), 2362);
        let mut o = original(options::EXCEPTION);
        o.msg_flags = 2;
        o.offset = 1000;
        let md = report_descriptor(kind, &o, ReportData::None, &origin());
        assert_eq!(md.offset, 1000);
        assert_eq!(md.original_length, 300);
    }
}
