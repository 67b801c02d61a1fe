//! IBM MQ's statistics messages: the PCF messages a queue manager puts to
//! SYSTEM.ADMIN.STATISTICS.QUEUE at the end of each STATINT interval, one
//! MQCMD_STATISTICS_MQI message when STATMQI(ON) and one MQCMD_STATISTICS_Q message
//! (a QStatisticsData group per queue) when queues have statistics on.
//!
//! Layout as IBM documents it ("MQI statistics message data" and "Queue statistics
//! message data" in IBM MQ's monitoring reference; the parameter ids are cmqcfc.h's, in
//! [`crate::parameters`]): MQCFH Type MQCFT_STATISTICS, then QueueManager
//! (MQCA_Q_MGR_NAME), IntervalStartDate/Time and IntervalEndDate/Time (MQCAMO_*,
//! `yyyy-mm-dd`, `hh.mm.ss`), CommandLevel (MQIA_COMMAND_LEVEL), then the counts of the
//! interval. Counts split by persistence are MQCFIL (or MQCFIL64 for bytes) of two
//! values, non-persistent first, as MQ's are.
//!
//! [`statistics_lines`] prints one as MQ's amqsmon does (`ferry amqsmon`).
//!
//! Only what Ferry counts is written (MQ marks most fields "when available"): not the
//! per-object-type lists (OpenCount, CloseCount, InqCount, SetCount), ConnsMax, expiry,
//! purge and queue-time figures, which Ferry does not count that way. Counts cover one interval:
//! the caller passes the difference between two readings of the engine's counters.

use crate::counters::{MqiCounters, QueueCounters};
use crate::parameters::*;
use ferry_mqi::pcf::{PcfHeader, PcfMessage, PcfParameter, MQCFT_STATISTICS};

/// The interval a statistics message covers, as MQ writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Start date, `yyyy-mm-dd`.
    pub start_date: String,
    /// Start time, `hh.mm.ss`.
    pub start_time: String,
    /// End date, `yyyy-mm-dd`.
    pub end_date: String,
    /// End time, `hh.mm.ss`.
    pub end_time: String,
}

/// One queue's part of a queue statistics message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueStatistics {
    /// The queue's name.
    pub name: String,
    /// Its CRDATE and CRTIME.
    pub created: (String, String),
    /// MQQDT_*: 1 predefined, 2 permanent dynamic, 3 temporary dynamic.
    pub definition_type: i32,
    /// The lowest depth in the interval.
    pub min_depth: u64,
    /// The highest depth in the interval.
    pub max_depth: u64,
    /// What happened on it in the interval.
    pub counts: QueueCounters,
}

/// MQQT_LOCAL.
const QUEUE_TYPE_LOCAL: i32 = 1;

fn int(parameter: i32, value: u64) -> PcfParameter {
    PcfParameter::Integer {
        parameter,
        value: i32::try_from(value).unwrap_or(i32::MAX),
    }
}

fn ints(parameter: i32, values: [u64; 2]) -> PcfParameter {
    PcfParameter::IntegerList {
        parameter,
        values: values
            .iter()
            .map(|v| i32::try_from(*v).unwrap_or(i32::MAX))
            .collect(),
    }
}

fn int64s(parameter: i32, values: [u64; 2]) -> PcfParameter {
    PcfParameter::Integer64List {
        parameter,
        values: values
            .iter()
            .map(|v| i64::try_from(*v).unwrap_or(i64::MAX))
            .collect(),
    }
}

/// The parameters every statistics message starts with.
fn heading(command: i32, qmgr: &str, interval: &Interval, command_level: i32) -> PcfMessage {
    let mut m = PcfMessage::new(PcfHeader::new(MQCFT_STATISTICS, command));
    m.push(PcfParameter::string(MQCA_Q_MGR_NAME, qmgr));
    m.push(PcfParameter::string(
        MQCAMO_START_DATE,
        &interval.start_date,
    ));
    m.push(PcfParameter::string(
        MQCAMO_START_TIME,
        &interval.start_time,
    ));
    m.push(PcfParameter::string(MQCAMO_END_DATE, &interval.end_date));
    m.push(PcfParameter::string(MQCAMO_END_TIME, &interval.end_time));
    m.push(PcfParameter::Integer {
        parameter: MQIA_COMMAND_LEVEL,
        value: command_level,
    });
    m
}

/// The MQI statistics message (MQCMD_STATISTICS_MQI) of an interval with counts `m`.
pub fn mqi_statistics(
    qmgr: &str,
    interval: &Interval,
    command_level: i32,
    m: &MqiCounters,
) -> PcfMessage {
    let mut msg = heading(MQCMD_STATISTICS_MQI, qmgr, interval, command_level);
    for p in [
        int(MQIAMO_CONNS, m.conns),
        int(MQIAMO_CONNS_FAILED, m.conns_failed),
        // DiscCount: normal, implicit, queue manager; Ferry counts MQDISC as normal.
        PcfParameter::IntegerList {
            parameter: MQIAMO_DISCS,
            values: vec![i32::try_from(m.discs).unwrap_or(i32::MAX), 0, 0],
        },
        int(MQIAMO_OPENS_FAILED, m.opens_failed),
        int(MQIAMO_CLOSES_FAILED, m.closes_failed),
        int(MQIAMO_INQS_FAILED, m.inqs_failed),
        int(MQIAMO_SETS_FAILED, m.sets_failed),
        ints(MQIAMO_PUTS, [m.puts_non_persistent, m.puts_persistent]),
        int(MQIAMO_PUTS_FAILED, m.puts_failed),
        ints(MQIAMO_PUT1S, [m.put1s_non_persistent, m.put1s_persistent]),
        int(MQIAMO_PUT1S_FAILED, m.put1s_failed),
        int64s(
            MQIAMO64_PUT_BYTES,
            [m.put_bytes_non_persistent, m.put_bytes_persistent],
        ),
        ints(MQIAMO_GETS, [m.gets_non_persistent, m.gets_persistent]),
        int64s(
            MQIAMO64_GET_BYTES,
            [m.get_bytes_non_persistent, m.get_bytes_persistent],
        ),
        int(MQIAMO_GETS_FAILED, m.gets_failed),
        ints(
            MQIAMO_BROWSES,
            [m.browses_non_persistent, m.browses_persistent],
        ),
        int64s(
            MQIAMO64_BROWSE_BYTES,
            [m.browse_bytes_non_persistent, m.browse_bytes_persistent],
        ),
        int(MQIAMO_BROWSES_FAILED, m.browses_failed),
        int(MQIAMO_COMMITS, m.commits),
        int(MQIAMO_BACKOUTS, m.backouts),
    ] {
        msg.push(p);
    }
    msg
}

/// The queue statistics message (MQCMD_STATISTICS_Q) of an interval: ObjectCount, then
/// one QStatisticsData group (MQGACF_Q_STATISTICS_DATA) per queue.
pub fn queue_statistics(
    qmgr: &str,
    interval: &Interval,
    command_level: i32,
    queues: &[QueueStatistics],
) -> PcfMessage {
    let mut msg = heading(MQCMD_STATISTICS_Q, qmgr, interval, command_level);
    msg.push(int(MQIAMO_OBJECT_COUNT, queues.len() as u64));
    for q in queues {
        let c = &q.counts;
        msg.push(PcfParameter::Group {
            parameter: MQGACF_Q_STATISTICS_DATA,
            parameters: vec![
                PcfParameter::string(MQCA_Q_NAME, &q.name),
                PcfParameter::string(MQCA_CREATION_DATE, &q.created.0),
                PcfParameter::string(MQCA_CREATION_TIME, &q.created.1),
                PcfParameter::Integer {
                    parameter: MQIA_Q_TYPE,
                    value: QUEUE_TYPE_LOCAL,
                },
                PcfParameter::Integer {
                    parameter: MQIA_DEFINITION_TYPE,
                    value: q.definition_type,
                },
                int(MQIAMO_Q_MIN_DEPTH, q.min_depth),
                int(MQIAMO_Q_MAX_DEPTH, q.max_depth),
                ints(MQIAMO_PUTS, [c.puts_non_persistent, c.puts_persistent]),
                ints(MQIAMO_PUT1S, [c.put1s_non_persistent, c.put1s_persistent]),
                int64s(
                    MQIAMO64_PUT_BYTES,
                    [c.put_bytes_non_persistent, c.put_bytes_persistent],
                ),
                ints(MQIAMO_GETS, [c.gets_non_persistent, c.gets_persistent]),
                int64s(
                    MQIAMO64_GET_BYTES,
                    [c.get_bytes_non_persistent, c.get_bytes_persistent],
                ),
            ],
        });
    }
    msg
}

/// The names amqsmon prints for the parameters of statistics messages.
const FIELD_NAMES: &[(i32, &str)] = &[
    (MQCA_Q_MGR_NAME, "QueueManager"),
    (MQCAMO_START_DATE, "IntervalStartDate"),
    (MQCAMO_START_TIME, "IntervalStartTime"),
    (MQCAMO_END_DATE, "IntervalEndDate"),
    (MQCAMO_END_TIME, "IntervalEndTime"),
    (MQIA_COMMAND_LEVEL, "CommandLevel"),
    (MQIAMO_CONNS, "ConnCount"),
    (MQIAMO_CONNS_FAILED, "ConnFailCount"),
    (MQIAMO_DISCS, "DiscCount"),
    (MQIAMO_OPENS_FAILED, "OpenFailCount"),
    (MQIAMO_CLOSES_FAILED, "CloseFailCount"),
    (MQIAMO_INQS_FAILED, "InqFailCount"),
    (MQIAMO_SETS_FAILED, "SetFailCount"),
    (MQIAMO_PUTS, "PutCount"),
    (MQIAMO_PUTS_FAILED, "PutFailCount"),
    (MQIAMO_PUT1S, "Put1Count"),
    (MQIAMO_PUT1S_FAILED, "Put1FailCount"),
    (MQIAMO64_PUT_BYTES, "PutBytes"),
    (MQIAMO_GETS, "GetCount"),
    (MQIAMO64_GET_BYTES, "GetBytes"),
    (MQIAMO_GETS_FAILED, "GetFailCount"),
    (MQIAMO_BROWSES, "BrowseCount"),
    (MQIAMO64_BROWSE_BYTES, "BrowseBytes"),
    (MQIAMO_BROWSES_FAILED, "BrowseFailCount"),
    (MQIAMO_COMMITS, "CommitCount"),
    (MQIAMO_BACKOUTS, "BackCount"),
    (MQIAMO_OBJECT_COUNT, "ObjectCount"),
    (MQGACF_Q_STATISTICS_DATA, "QueueStatistics"),
    (MQCA_Q_NAME, "QueueName"),
    (MQCA_CREATION_DATE, "CreateDate"),
    (MQCA_CREATION_TIME, "CreateTime"),
    (MQIA_Q_TYPE, "QueueType"),
    (MQIA_DEFINITION_TYPE, "QueueDefinitionType"),
    (MQIAMO_Q_MIN_DEPTH, "QMinDepth"),
    (MQIAMO_Q_MAX_DEPTH, "QMaxDepth"),
];

/// A statistics message as MQ's amqsmon prints it: `MonitoringType: ...`, then one
/// `Name: value` line per parameter (strings quoted, lists in brackets), a group's
/// parameters indented under `QueueStatistics: <index>`. `None` when `msg` is not a
/// statistics message.
pub fn statistics_lines(msg: &PcfMessage) -> Option<Vec<String>> {
    let kind = match (msg.header.kind, msg.header.command) {
        (MQCFT_STATISTICS, MQCMD_STATISTICS_MQI) => "MQIStatistics",
        (MQCFT_STATISTICS, MQCMD_STATISTICS_Q) => "QueueStatistics",
        (MQCFT_STATISTICS, MQCMD_STATISTICS_CHANNEL) => "ChannelStatistics",
        _ => return None,
    };
    let mut lines = vec![format!("MonitoringType: {kind}")];
    let mut groups = 0;
    for p in &msg.parameters {
        parameter_lines(p, "", &mut groups, &mut lines);
    }
    Some(lines)
}

fn parameter_lines(p: &PcfParameter, indent: &str, groups: &mut usize, out: &mut Vec<String>) {
    let id = p.parameter();
    let name = FIELD_NAMES
        .iter()
        .find(|(i, _)| *i == id)
        .map_or_else(|| id.to_string(), |(_, n)| (*n).to_string());
    let list = |values: Vec<String>| format!("[{}]", values.join(", "));
    let value = match p {
        PcfParameter::Integer { value, .. } => value.to_string(),
        PcfParameter::Integer64 { value, .. } => value.to_string(),
        PcfParameter::String { .. } => format!("'{}'", p.as_str().unwrap_or("")),
        PcfParameter::IntegerList { values, .. } => {
            list(values.iter().map(ToString::to_string).collect())
        }
        PcfParameter::Integer64List { values, .. } => {
            list(values.iter().map(ToString::to_string).collect())
        }
        PcfParameter::ByteString { value, .. } => {
            value.iter().map(|b| format!("{b:02X}")).collect()
        }
        PcfParameter::Group { parameters, .. } => {
            out.push(format!("{indent}{name}: {groups}"));
            *groups += 1;
            let inner = format!("{indent}  ");
            let mut nested = 0;
            for q in parameters {
                parameter_lines(q, &inner, &mut nested, out);
            }
            return;
        }
    };
    out.push(format!("{indent}{name}: {value}"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::pcf::Encoding;

    fn interval() -> Interval {
        Interval {
            start_date: "2026-11-29".into(),
            start_time: "14.00.00".into(),
            end_date: "2026-11-29".into(),
            end_time: "14.30.00".into(),
        }
    }

    #[test]
    fn an_mqi_message_has_mqs_heading_and_counts() {
        let mut m = MqiCounters::default();
        m.note_put(false, true, 100);
        m.note_put(true, false, 5);
        m.conns = 3;
        let msg = mqi_statistics("QM1", &interval(), 940, &m);
        let back =
            PcfMessage::decode(&msg.encode(Encoding::Normal), Encoding::Normal).expect("decodes");
        assert_eq!(back.header.command, MQCMD_STATISTICS_MQI);
        assert_eq!(back.header.kind, MQCFT_STATISTICS);
        assert_eq!(
            back.find(MQCA_Q_MGR_NAME).and_then(|p| p.as_str()),
            Some("QM1")
        );
        assert_eq!(
            back.find(MQCAMO_END_TIME).and_then(|p| p.as_str()),
            Some("14.30.00")
        );
        assert_eq!(back.find(MQIAMO_CONNS).and_then(|p| p.as_i64()), Some(3));
        assert_eq!(
            back.find(MQIAMO_PUTS),
            Some(&PcfParameter::IntegerList {
                parameter: MQIAMO_PUTS,
                values: vec![0, 1]
            })
        );
        assert_eq!(
            back.find(MQIAMO64_PUT_BYTES),
            Some(&PcfParameter::Integer64List {
                parameter: MQIAMO64_PUT_BYTES,
                values: vec![5, 100]
            })
        );
    }

    #[test]
    fn a_queue_message_has_a_group_per_queue() {
        let mut counts = QueueCounters::default();
        counts.note_put(false, false, 7);
        counts.note_get(false, 7, 3);
        let queues = [
            QueueStatistics {
                name: "A".into(),
                created: ("2026-01-01".into(), "00.00.00".into()),
                definition_type: 1,
                min_depth: 0,
                max_depth: 1,
                counts,
            },
            QueueStatistics {
                name: "B".into(),
                created: ("2026-01-01".into(), "00.00.00".into()),
                definition_type: 1,
                min_depth: 0,
                max_depth: 0,
                counts: QueueCounters::default(),
            },
        ];
        let msg = queue_statistics("QM1", &interval(), 940, &queues);
        let back =
            PcfMessage::decode(&msg.encode(Encoding::Native), Encoding::Native).expect("decodes");
        assert_eq!(back.header.command, MQCMD_STATISTICS_Q);
        assert_eq!(
            back.find(MQIAMO_OBJECT_COUNT).and_then(|p| p.as_i64()),
            Some(2)
        );
        let groups: Vec<&[PcfParameter]> = back
            .parameters
            .iter()
            .filter(|p| p.parameter() == MQGACF_Q_STATISTICS_DATA)
            .filter_map(|p| p.group())
            .collect();
        assert_eq!(groups.len(), 2);
        let a = groups[0];
        assert_eq!(a[0].as_str(), Some("A"));
        assert!(a.contains(&PcfParameter::IntegerList {
            parameter: MQIAMO_GETS,
            values: vec![1, 0]
        }));
        assert!(a.contains(&PcfParameter::Integer {
            parameter: MQIAMO_Q_MAX_DEPTH,
            value: 1
        }));
        let lines = statistics_lines(&back).expect("a statistics message");
        assert_eq!(lines[0], "MonitoringType: QueueStatistics");
        assert!(
            lines.contains(&"QueueManager: 'QM1'".to_string()),
            "{lines:?}"
        );
        assert!(
            lines.contains(&"QueueStatistics: 1".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"  QueueName: 'A'".to_string()), "{lines:?}");
        assert!(
            lines.contains(&"  GetCount: [1, 0]".to_string()),
            "{lines:?}"
        );
        assert!(lines.contains(&"  QMaxDepth: 1".to_string()), "{lines:?}");
        let other = PcfMessage::new(PcfHeader::new(MQCFT_STATISTICS, 1));
        assert_eq!(statistics_lines(&other), None);
    }
}
