//! Compact encodings of the MQI structures: MQMD, MQOD, MQPMO, MQGMO, MQSD and call
//! status.
//!
//! Layouts are little-endian and field by field (see docs/protocol.md §5): integers are
//! 4 bytes, character fields are a u8 length plus the bytes without trailing blanks, and
//! the four binary identifiers of the MQMD (MsgId, CorrelId, GroupId, AccountingToken)
//! are sent only when not all zeros, announced by a presence byte. A typical descriptor
//! is ~70 bytes instead of MQMD's 364.

use bytes::{BufMut, BytesMut};
use ferry_mqi::{
    CloseOptions, CompCode, GetOptionFlags, GetOptions, InquireValue, MatchOptions,
    MessageDescriptor, MqError, ObjectDescriptor, ObjectType, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode,
};

use ferry_mqi::subscription::{SubscribeOptions, SubscriptionDescriptor, MAX_SUB_STRING_LENGTH};

use crate::cursor::{put_bounded_string, put_fixed, put_string, Reader};
use crate::WireError;

/// How an MQI call completed: MQCC + MQRC, carried by every reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// MQCC_OK, MQCC_WARNING or MQCC_FAILED.
    pub comp: CompCode,
    /// MQRC; `None` with MQCC_OK.
    pub reason: ReasonCode,
}

impl Status {
    /// MQCC_OK, MQRC_NONE.
    pub const OK: Status = Status {
        comp: CompCode::Ok,
        reason: ReasonCode::None,
    };

    /// The status MQ pairs with `reason` (warning or failed; OK for `None`).
    pub fn from_reason(reason: ReasonCode) -> Self {
        Status {
            comp: reason.comp_code(),
            reason,
        }
    }

    /// `Ok(None)` for success, `Ok(Some(reason))` for a warning, `Err` for a failure.
    pub fn into_result(self) -> Result<Option<ReasonCode>, MqError> {
        match self.comp {
            CompCode::Ok => Ok(None),
            CompCode::Warning => Ok(Some(self.reason)),
            CompCode::Failed => Err(MqError {
                comp: self.comp,
                reason: self.reason,
            }),
        }
    }
}

impl From<MqError> for Status {
    fn from(e: MqError) -> Self {
        Status {
            comp: e.comp,
            reason: e.reason,
        }
    }
}

/// Decodes a reason code number. Numbers this build does not know map to
/// 2195 MQRC_UNEXPECTED_ERROR (lossy by design: an old client meeting a newer server's
/// reason still sees a failure with an MQ reason, never a decode error).
pub fn reason_from_wire(n: i32) -> ReasonCode {
    ReasonCode::from_number(n).unwrap_or(ReasonCode::UnexpectedError)
}

pub(crate) fn put_status(out: &mut BytesMut, s: &Status) {
    out.put_i32_le(s.comp.number());
    out.put_i32_le(s.reason.number());
}

pub(crate) fn get_status(r: &mut Reader<'_>) -> Result<Status, WireError> {
    let comp = match r.i32()? {
        0 => CompCode::Ok,
        1 => CompCode::Warning,
        2 => CompCode::Failed,
        v => {
            return Err(WireError::InvalidValue {
                field: "CompCode",
                value: i64::from(v),
            })
        }
    };
    let reason = reason_from_wire(r.i32()?);
    Ok(Status { comp, reason })
}

const HAS_MSG_ID: u8 = 1;
const HAS_CORREL_ID: u8 = 2;
const HAS_GROUP_ID: u8 = 4;
const HAS_ACCOUNTING_TOKEN: u8 = 8;

fn nonzero(b: &[u8]) -> bool {
    b.iter().any(|&c| c != 0)
}

/// Appends an MQMD.
pub(crate) fn put_md(out: &mut BytesMut, md: &MessageDescriptor) {
    for v in [
        md.report,
        md.msg_type,
        md.expiry,
        md.feedback,
        md.encoding,
        md.ccsid,
        md.priority,
        md.persistence,
        md.backout_count,
        md.put_appl_type,
        md.msg_seq_number,
        md.offset,
        md.msg_flags,
        md.original_length,
    ] {
        out.put_i32_le(v);
    }
    let mut present = 0u8;
    if nonzero(&md.msg_id) {
        present |= HAS_MSG_ID;
    }
    if nonzero(&md.correl_id) {
        present |= HAS_CORREL_ID;
    }
    if nonzero(&md.group_id) {
        present |= HAS_GROUP_ID;
    }
    if nonzero(&md.accounting_token) {
        present |= HAS_ACCOUNTING_TOKEN;
    }
    out.put_u8(present);
    if present & HAS_MSG_ID != 0 {
        out.put_slice(&md.msg_id);
    }
    if present & HAS_CORREL_ID != 0 {
        out.put_slice(&md.correl_id);
    }
    if present & HAS_GROUP_ID != 0 {
        out.put_slice(&md.group_id);
    }
    if present & HAS_ACCOUNTING_TOKEN != 0 {
        out.put_slice(&md.accounting_token);
    }
    put_fixed(out, &md.format);
    put_fixed(out, &md.reply_to_q);
    put_fixed(out, &md.reply_to_qmgr);
    put_fixed(out, &md.user_identifier);
    put_fixed(out, &md.appl_identity_data);
    put_fixed(out, &md.put_appl_name);
    put_fixed(out, &md.put_date);
    put_fixed(out, &md.put_time);
    put_fixed(out, &md.appl_origin_data);
}

/// Decodes an MQMD (no heap allocation).
pub(crate) fn get_md(r: &mut Reader<'_>) -> Result<MessageDescriptor, WireError> {
    let mut md = MessageDescriptor {
        report: r.i32()?,
        msg_type: r.i32()?,
        expiry: r.i32()?,
        feedback: r.i32()?,
        encoding: r.i32()?,
        ccsid: r.i32()?,
        priority: r.i32()?,
        persistence: r.i32()?,
        backout_count: r.i32()?,
        put_appl_type: r.i32()?,
        msg_seq_number: r.i32()?,
        offset: r.i32()?,
        msg_flags: r.i32()?,
        original_length: r.i32()?,
        ..MessageDescriptor::default()
    };
    let present = r.u8()?;
    if present & !(HAS_MSG_ID | HAS_CORREL_ID | HAS_GROUP_ID | HAS_ACCOUNTING_TOKEN) != 0 {
        return Err(WireError::ReservedBits {
            field: "MQMD presence byte",
            bits: u32::from(present),
        });
    }
    md.msg_id = if present & HAS_MSG_ID != 0 {
        r.array()?
    } else {
        [0; 24]
    };
    md.correl_id = if present & HAS_CORREL_ID != 0 {
        r.array()?
    } else {
        [0; 24]
    };
    md.group_id = if present & HAS_GROUP_ID != 0 {
        r.array()?
    } else {
        [0; 24]
    };
    md.accounting_token = if present & HAS_ACCOUNTING_TOKEN != 0 {
        r.array()?
    } else {
        [0; 32]
    };
    md.format = r.fixed("MQMD.Format")?;
    md.reply_to_q = r.fixed("MQMD.ReplyToQ")?;
    md.reply_to_qmgr = r.fixed("MQMD.ReplyToQMgr")?;
    md.user_identifier = r.fixed("MQMD.UserIdentifier")?;
    md.appl_identity_data = r.fixed("MQMD.ApplIdentityData")?;
    md.put_appl_name = r.fixed("MQMD.PutApplName")?;
    md.put_date = r.fixed("MQMD.PutDate")?;
    md.put_time = r.fixed("MQMD.PutTime")?;
    md.appl_origin_data = r.fixed("MQMD.ApplOriginData")?;
    Ok(md)
}

/// Appends an MQOD.
pub(crate) fn put_od(out: &mut BytesMut, od: &ObjectDescriptor) {
    out.put_i32_le(od.object_type.number());
    put_fixed(out, &od.object_name);
    put_fixed(out, &od.object_qmgr_name);
    put_fixed(out, &od.dynamic_q_name);
    put_fixed(out, &od.alternate_user_id);
}

/// Decodes an MQOD.
pub(crate) fn get_od(r: &mut Reader<'_>) -> Result<ObjectDescriptor, WireError> {
    let t = r.i32()?;
    let object_type = ObjectType::from_number(t).ok_or(WireError::InvalidValue {
        field: "MQOD.ObjectType",
        value: i64::from(t),
    })?;
    Ok(ObjectDescriptor {
        object_type,
        object_name: r.fixed("MQOD.ObjectName")?,
        object_qmgr_name: r.fixed("MQOD.ObjectQMgrName")?,
        dynamic_q_name: r.fixed("MQOD.DynamicQName")?,
        alternate_user_id: r.fixed("MQOD.AlternateUserId")?,
    })
}

/// Appends MQOO options.
pub(crate) fn put_open_options(out: &mut BytesMut, o: OpenOptions) {
    out.put_u32_le(o.bits());
}

/// Decodes MQOO options (every bit is kept; the engine judges them).
pub(crate) fn get_open_options(r: &mut Reader<'_>) -> Result<OpenOptions, WireError> {
    Ok(OpenOptions::from_bits_retain(r.u32()?))
}

/// Appends MQCO options.
pub(crate) fn put_close_options(out: &mut BytesMut, o: CloseOptions) {
    out.put_u32_le(o.bits());
}

/// Decodes MQCO options.
pub(crate) fn get_close_options(r: &mut Reader<'_>) -> Result<CloseOptions, WireError> {
    Ok(CloseOptions::from_bits_retain(r.u32()?))
}

/// Appends an MQPMO as protocol minor `minor` lays it out: Options, then Context from
/// minor 2 ([`crate::MINOR_WITH_CONTEXT`]).
pub(crate) fn put_pmo(out: &mut BytesMut, pmo: &PutOptions, minor: u16) {
    out.put_u32_le(pmo.options.bits());
    if minor >= crate::MINOR_WITH_CONTEXT {
        out.put_i32_le(pmo.context);
    }
}

/// Decodes an MQPMO laid out for protocol minor `minor` (Context 0 before minor 2).
pub(crate) fn get_pmo(r: &mut Reader<'_>, minor: u16) -> Result<PutOptions, WireError> {
    let options = PutOptionFlags::from_bits_retain(r.u32()?);
    let context = if minor >= crate::MINOR_WITH_CONTEXT {
        r.i32()?
    } else {
        0
    };
    Ok(PutOptions { options, context })
}

/// Appends an MQGMO.
pub(crate) fn put_gmo(out: &mut BytesMut, gmo: &GetOptions) {
    out.put_u32_le(gmo.options.bits());
    out.put_i32_le(gmo.wait_interval);
    out.put_u32_le(gmo.match_options.bits());
}

/// Decodes an MQGMO.
pub(crate) fn get_gmo(r: &mut Reader<'_>) -> Result<GetOptions, WireError> {
    Ok(GetOptions {
        options: GetOptionFlags::from_bits_retain(r.u32()?),
        wait_interval: r.i32()?,
        match_options: MatchOptions::from_bits_retain(r.u32()?),
    })
}

const ATTR_INT: u8 = 0;
const ATTR_STR: u8 = 1;

/// Reads one attribute value (MQINQ's answers, MQSET's values): tag u8 (0 int, 1 char),
/// then an i32 or a string.
pub(crate) fn get_attr_value(r: &mut Reader<'_>) -> Result<InquireValue, WireError> {
    match r.u8()? {
        ATTR_INT => Ok(InquireValue::Int(r.i32()?)),
        ATTR_STR => Ok(InquireValue::Str(r.string("character attribute")?)),
        t => Err(WireError::InvalidValue {
            field: "attribute value tag",
            value: i64::from(t),
        }),
    }
}

/// Appends one attribute value in the layout [`get_attr_value`] reads.
pub(crate) fn put_attr_value(out: &mut BytesMut, v: &InquireValue) -> Result<(), WireError> {
    match v {
        InquireValue::Int(i) => {
            out.put_u8(ATTR_INT);
            out.put_i32_le(*i);
        }
        InquireValue::Str(s) => {
            out.put_u8(ATTR_STR);
            put_string(out, s)?;
        }
    }
    Ok(())
}

/// The longest MQSD ObjectName (MQCHAR48).
const SD_OBJECT_NAME_LEN: usize = 48;
/// The longest MQSD AlternateUserId (MQCHAR12).
const SD_ALTERNATE_USER_ID_LEN: usize = 12;

/// Appends an MQSD (protocol minor 5): Options, ObjectName, ObjectString,
/// AlternateUserId, SubName, SubUserData, SubCorrelId, PubPriority, SelectionString,
/// SubLevel, SubExpiry. The texts are strings (u32 length + UTF-8), each bounded as MQ
/// bounds it: 48 and 12 bytes for the names, 10,240 for the others. A longer one is
/// refused here as the decoder refuses it.
pub(crate) fn put_sd(out: &mut BytesMut, sd: &SubscriptionDescriptor) -> Result<(), WireError> {
    out.put_u32_le(sd.options.bits());
    put_bounded_string(out, &sd.object_name, "MQSD.ObjectName", SD_OBJECT_NAME_LEN)?;
    put_bounded_string(
        out,
        &sd.object_string,
        "MQSD.ObjectString",
        MAX_SUB_STRING_LENGTH,
    )?;
    put_bounded_string(
        out,
        &sd.alternate_user_id,
        "MQSD.AlternateUserId",
        SD_ALTERNATE_USER_ID_LEN,
    )?;
    put_bounded_string(out, &sd.sub_name, "MQSD.SubName", MAX_SUB_STRING_LENGTH)?;
    put_bounded_string(
        out,
        &sd.sub_user_data,
        "MQSD.SubUserData",
        MAX_SUB_STRING_LENGTH,
    )?;
    out.put_slice(&sd.sub_correl_id);
    out.put_i32_le(sd.pub_priority);
    put_bounded_string(
        out,
        &sd.selection_string,
        "MQSD.SelectionString",
        MAX_SUB_STRING_LENGTH,
    )?;
    out.put_i32_le(sd.sub_level);
    out.put_i32_le(sd.sub_expiry);
    Ok(())
}

/// Decodes an MQSD laid out as [`put_sd`] writes it. Option bits and numbers are carried
/// unchanged (the queue manager judges them); a text over its bound is refused before
/// its bytes are read.
pub(crate) fn get_sd(r: &mut Reader<'_>) -> Result<SubscriptionDescriptor, WireError> {
    Ok(SubscriptionDescriptor {
        options: SubscribeOptions::from_bits_retain(r.u32()?),
        object_name: r.bounded_string("MQSD.ObjectName", SD_OBJECT_NAME_LEN)?,
        object_string: r.bounded_string("MQSD.ObjectString", MAX_SUB_STRING_LENGTH)?,
        alternate_user_id: r.bounded_string("MQSD.AlternateUserId", SD_ALTERNATE_USER_ID_LEN)?,
        sub_name: r.bounded_string("MQSD.SubName", MAX_SUB_STRING_LENGTH)?,
        sub_user_data: r.bounded_string("MQSD.SubUserData", MAX_SUB_STRING_LENGTH)?,
        sub_correl_id: r.array()?,
        pub_priority: r.i32()?,
        selection_string: r.bounded_string("MQSD.SelectionString", MAX_SUB_STRING_LENGTH)?,
        sub_level: r.i32()?,
        sub_expiry: r.i32()?,
    })
}
