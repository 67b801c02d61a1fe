//! MQ's resource-monitoring publications: their `$SYS` topic strings, the PCF messages
//! the queue manager publishes (METADATA and data, made from [`crate::table::CLASSES`]),
//! and reading them back as a monitoring application does (amqsrua, `ferry monitor`).
//!
//! Topics (`<qm>` the queue manager's name):
//!
//! | topic | content |
//! |---|---|
//! | `$SYS/MQ/INFO/QMGR/<qm>/Monitor/METADATA/CLASSES` | one MQGACF_MONITOR_CLASS group per class: id, flags, name, description, the topic of its types |
//! | `.../METADATA/<CLASS>/TYPES` | the class id and flags, one MQGACF_MONITOR_TYPE group per type: id, name, description, the topic of its elements |
//! | `.../METADATA/<CLASS>/<TYPE>` | class and type ids, the data topic (`%s` for the object), one MQGACF_MONITOR_ELEMENT group per element: id, datatype, description |
//! | `.../Monitor/<CLASS>/<TYPE>`, `.../Monitor/STATQ/<queue>/<TYPE>` | MQCA_Q_MGR_NAME, (MQCA_Q_NAME,) class, type, MQIAMO64_MONITOR_INTERVAL (microseconds), then one MQCFIN64 per element whose parameter id is the element id |
//!
//! METADATA publications are retained (published once at start); data publications
//! are published every monitoring interval while someone subscribes. A `/` inside an
//! object name is written `&` in topic strings, as MQ 9.3 does.

use crate::table::{Datatype, MonitorClass, MonitorType, CLASSES};
use ferry_mqi::pcf::{PcfHeader, PcfMessage, PcfParameter, MQCFT_STATISTICS};

pub use crate::parameters::{
    MQCAMO_MONITOR_CLASS, MQCAMO_MONITOR_DESC, MQCAMO_MONITOR_TYPE, MQCA_Q_MGR_NAME, MQCA_Q_NAME,
    MQCA_TOPIC_STRING, MQGACF_MONITOR_CLASS, MQGACF_MONITOR_ELEMENT, MQGACF_MONITOR_TYPE,
    MQIAMO64_MONITOR_INTERVAL, MQIAMO_MONITOR_CLASS, MQIAMO_MONITOR_DATATYPE,
    MQIAMO_MONITOR_ELEMENT, MQIAMO_MONITOR_FLAGS, MQIAMO_MONITOR_FLAGS_OBJNAME,
    MQIAMO_MONITOR_TYPE,
};

/// The root of a queue manager's monitoring topics.
pub fn monitor_root(qmgr: &str) -> String {
    format!("$SYS/MQ/INFO/QMGR/{qmgr}/Monitor")
}

/// `$SYS/MQ/INFO/QMGR/<qm>/Monitor/METADATA/CLASSES`.
pub fn classes_topic(qmgr: &str) -> String {
    format!("{}/METADATA/CLASSES", monitor_root(qmgr))
}

/// `.../METADATA/<CLASS>/TYPES`.
pub fn types_topic(qmgr: &str, class: &str) -> String {
    format!("{}/METADATA/{class}/TYPES", monitor_root(qmgr))
}

/// `.../METADATA/<CLASS>/<TYPE>`: the elements of a type.
pub fn elements_topic(qmgr: &str, class: &str, ty: &str) -> String {
    format!("{}/METADATA/{class}/{ty}", monitor_root(qmgr))
}

/// An object name as it stands in a topic string (`/` written `&`).
pub fn topic_object(object: &str) -> String {
    object.replace('/', "&")
}

/// The data topic of `class`/`ty`, for `object` when the class is per object (`%s`
/// when `object` is `None` and the class is per object: the METADATA form).
pub fn data_topic(
    qmgr: &str,
    class: &MonitorClass,
    ty: &MonitorType,
    object: Option<&str>,
) -> String {
    let root = monitor_root(qmgr);
    if class.per_object {
        let object = object.map_or_else(|| "%s".to_string(), topic_object);
        format!("{root}/{}/{object}/{}", class.name, ty.name)
    } else {
        format!("{root}/{}/{}", class.name, ty.name)
    }
}

fn header() -> PcfHeader {
    PcfHeader::new(MQCFT_STATISTICS, 0)
}

fn int(parameter: i32, value: i32) -> PcfParameter {
    PcfParameter::Integer { parameter, value }
}

fn flags(class: &MonitorClass) -> i32 {
    if class.per_object {
        MQIAMO_MONITOR_FLAGS_OBJNAME
    } else {
        0
    }
}

/// The METADATA/CLASSES publication.
pub fn classes_message(qmgr: &str) -> PcfMessage {
    let mut m = PcfMessage::new(header());
    for c in CLASSES {
        m.push(PcfParameter::Group {
            parameter: MQGACF_MONITOR_CLASS,
            parameters: vec![
                int(MQIAMO_MONITOR_CLASS, c.id),
                int(MQIAMO_MONITOR_FLAGS, flags(c)),
                PcfParameter::string(MQCAMO_MONITOR_CLASS, c.name),
                PcfParameter::string(MQCAMO_MONITOR_DESC, c.description),
                PcfParameter::string(MQCA_TOPIC_STRING, types_topic(qmgr, c.name)),
            ],
        });
    }
    m
}

/// The METADATA/<CLASS>/TYPES publication of `class`.
pub fn types_message(qmgr: &str, class: &MonitorClass) -> PcfMessage {
    let mut m = PcfMessage::new(header());
    m.push(int(MQIAMO_MONITOR_CLASS, class.id))
        .push(int(MQIAMO_MONITOR_FLAGS, flags(class)));
    for t in class.types {
        m.push(PcfParameter::Group {
            parameter: MQGACF_MONITOR_TYPE,
            parameters: vec![
                int(MQIAMO_MONITOR_TYPE, t.id),
                PcfParameter::string(MQCAMO_MONITOR_TYPE, t.name),
                PcfParameter::string(MQCAMO_MONITOR_DESC, t.description),
                PcfParameter::string(MQCA_TOPIC_STRING, elements_topic(qmgr, class.name, t.name)),
            ],
        });
    }
    m
}

/// The METADATA/<CLASS>/<TYPE> publication: the elements of `ty`.
pub fn elements_message(qmgr: &str, class: &MonitorClass, ty: &MonitorType) -> PcfMessage {
    let mut m = PcfMessage::new(header());
    m.push(int(MQIAMO_MONITOR_CLASS, class.id))
        .push(int(MQIAMO_MONITOR_TYPE, ty.id))
        .push(PcfParameter::string(
            MQCA_TOPIC_STRING,
            data_topic(qmgr, class, ty, None),
        ));
    for e in ty.elements {
        m.push(PcfParameter::Group {
            parameter: MQGACF_MONITOR_ELEMENT,
            parameters: vec![
                int(MQIAMO_MONITOR_ELEMENT, e.id),
                int(MQIAMO_MONITOR_DATATYPE, e.datatype.code()),
                PcfParameter::string(MQCAMO_MONITOR_DESC, e.description),
            ],
        });
    }
    m
}

/// Every METADATA publication: (topic, message), CLASSES first.
pub fn metadata(qmgr: &str) -> Vec<(String, PcfMessage)> {
    let mut out = vec![(classes_topic(qmgr), classes_message(qmgr))];
    for c in CLASSES {
        out.push((types_topic(qmgr, c.name), types_message(qmgr, c)));
        for t in c.types {
            out.push((
                elements_topic(qmgr, c.name, t.name),
                elements_message(qmgr, c, t),
            ));
        }
    }
    out
}

/// A data publication of `ty` over an interval of `interval_us` microseconds, for
/// `object` (a queue) when the class is per object; `values` are (element id, value)
/// pairs, elements not measured left out.
pub fn data_message(
    qmgr: &str,
    class: &MonitorClass,
    ty: &MonitorType,
    object: Option<&str>,
    interval_us: i64,
    values: impl IntoIterator<Item = (i32, i64)>,
) -> PcfMessage {
    let mut m = PcfMessage::new(header());
    m.push(PcfParameter::string(MQCA_Q_MGR_NAME, qmgr));
    if let Some(object) = object {
        m.push(PcfParameter::string(MQCA_Q_NAME, object));
    }
    m.push(int(MQIAMO_MONITOR_CLASS, class.id))
        .push(int(MQIAMO_MONITOR_TYPE, ty.id))
        .push(PcfParameter::Integer64 {
            parameter: MQIAMO64_MONITOR_INTERVAL,
            value: interval_us,
        });
    for (id, value) in values {
        m.push(PcfParameter::Integer64 {
            parameter: id,
            value,
        });
    }
    m
}

/// A class as its METADATA describes it (read by a monitoring application).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassInfo {
    /// MQIAMO_MONITOR_CLASS.
    pub id: i32,
    /// MQCAMO_MONITOR_CLASS.
    pub name: String,
    /// MQCAMO_MONITOR_DESC.
    pub description: String,
    /// MQIAMO_MONITOR_FLAGS.
    pub flags: i32,
    /// Where its types are described.
    pub topic: String,
}

/// A type as its class's TYPES publication describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeInfo {
    /// MQIAMO_MONITOR_TYPE.
    pub id: i32,
    /// MQCAMO_MONITOR_TYPE.
    pub name: String,
    /// MQCAMO_MONITOR_DESC.
    pub description: String,
    /// Where its elements are described.
    pub topic: String,
}

/// An element as its type's METADATA describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementInfo {
    /// MQIAMO_MONITOR_ELEMENT.
    pub id: i32,
    /// MQIAMO_MONITOR_DATATYPE.
    pub datatype: i32,
    /// MQCAMO_MONITOR_DESC.
    pub description: String,
}

/// A type's elements and data topic, from its METADATA publication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeElements {
    /// MQIAMO_MONITOR_CLASS.
    pub class: i32,
    /// MQIAMO_MONITOR_TYPE.
    pub ty: i32,
    /// The data topic (`%s` for the object of a per-object class).
    pub topic: String,
    /// The elements.
    pub elements: Vec<ElementInfo>,
}

fn group_int(g: &[PcfParameter], id: i32) -> Option<i32> {
    g.iter()
        .find(|p| p.parameter() == id)
        .and_then(PcfParameter::as_i64)
        .and_then(|v| i32::try_from(v).ok())
}

fn group_str(g: &[PcfParameter], id: i32) -> String {
    g.iter()
        .find(|p| p.parameter() == id)
        .and_then(PcfParameter::as_str)
        .unwrap_or_default()
        .to_string()
}

fn groups(m: &PcfMessage, id: i32) -> impl Iterator<Item = &[PcfParameter]> {
    m.parameters
        .iter()
        .filter(move |p| p.parameter() == id)
        .filter_map(PcfParameter::group)
}

/// The classes of a METADATA/CLASSES publication.
pub fn read_classes(m: &PcfMessage) -> Vec<ClassInfo> {
    groups(m, MQGACF_MONITOR_CLASS)
        .filter_map(|g| {
            Some(ClassInfo {
                id: group_int(g, MQIAMO_MONITOR_CLASS)?,
                name: group_str(g, MQCAMO_MONITOR_CLASS),
                description: group_str(g, MQCAMO_MONITOR_DESC),
                flags: group_int(g, MQIAMO_MONITOR_FLAGS).unwrap_or(0),
                topic: group_str(g, MQCA_TOPIC_STRING),
            })
        })
        .collect()
}

/// The types of a METADATA/<CLASS>/TYPES publication.
pub fn read_types(m: &PcfMessage) -> Vec<TypeInfo> {
    groups(m, MQGACF_MONITOR_TYPE)
        .filter_map(|g| {
            Some(TypeInfo {
                id: group_int(g, MQIAMO_MONITOR_TYPE)?,
                name: group_str(g, MQCAMO_MONITOR_TYPE),
                description: group_str(g, MQCAMO_MONITOR_DESC),
                topic: group_str(g, MQCA_TOPIC_STRING),
            })
        })
        .collect()
}

/// The elements of a METADATA/<CLASS>/<TYPE> publication (`None` without class and
/// type ids).
pub fn read_elements(m: &PcfMessage) -> Option<TypeElements> {
    let top = |id| {
        m.find(id)
            .and_then(PcfParameter::as_i64)
            .and_then(|v| i32::try_from(v).ok())
    };
    Some(TypeElements {
        class: top(MQIAMO_MONITOR_CLASS)?,
        ty: top(MQIAMO_MONITOR_TYPE)?,
        topic: m
            .find(MQCA_TOPIC_STRING)
            .and_then(PcfParameter::as_str)
            .unwrap_or_default()
            .to_string(),
        elements: groups(m, MQGACF_MONITOR_ELEMENT)
            .filter_map(|g| {
                Some(ElementInfo {
                    id: group_int(g, MQIAMO_MONITOR_ELEMENT)?,
                    datatype: group_int(g, MQIAMO_MONITOR_DATATYPE).unwrap_or(1),
                    description: group_str(g, MQCAMO_MONITOR_DESC),
                })
            })
            .collect(),
    })
}

/// amqsrua's rendering of an interval: `1.234 seconds`, with minutes, hours and days
/// in front when there are any.
fn interval_text(us: i64) -> String {
    let ms = (us % 1_000_000) / 1000;
    let mut secs = us / 1_000_000;
    let mut out = String::new();
    if secs >= 60 {
        let mut mins = secs / 60;
        secs %= 60;
        if mins >= 60 {
            let mut hours = mins / 60;
            mins %= 60;
            if hours >= 24 {
                out.push_str(&format!("{} days,", hours / 24));
                hours %= 24;
            }
            out.push_str(&format!("{hours} hours,"));
        }
        out.push_str(&format!("{mins} minutes,"));
    }
    out.push_str(&format!("{secs}.{ms:03} seconds"));
    out
}

/// One element's line as amqsrua prints it: the description, then the value in its
/// datatype's form (a percentage, hundredths, KB/MB/GB, microseconds, or for a delta
/// the count and its rate per second over `interval_us`). `object` (a queue name)
/// leads the line, padded to 48 characters, when given.
pub fn element_line(e: &ElementInfo, value: i64, interval_us: i64, object: Option<&str>) -> String {
    let lead = object.map_or_else(String::new, |o| format!("{o:<48.48} "));
    let d = &e.description;
    let body = match Datatype::from_code(e.datatype) {
        Some(Datatype::Percent) => format!("{d} {:.2}%", value as f64 / 100.0),
        Some(Datatype::Hundredths) => format!("{d} {:.2}", value as f64 / 100.0),
        Some(Datatype::Kb) => format!("{d} {value}KB"),
        Some(Datatype::Mb) => format!("{d} {value}MB"),
        Some(Datatype::Gb) => format!("{d} {value}GB"),
        Some(Datatype::Microsec) => format!("{d} {value} uSec"),
        Some(Datatype::Delta) => {
            let rate = if interval_us < 10_000 {
                0
            } else {
                (i128::from(value) * 1_000_000 + i128::from(interval_us) / 2)
                    / i128::from(interval_us)
            };
            if rate == 0 {
                format!("{d} {value} ")
            } else {
                format!("{d} {value} {rate}/sec")
            }
        }
        _ => format!("{d} {value}"),
    };
    format!("{lead}{body}")
}

/// Why a publication cannot be shown.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    /// It names no class or type.
    #[error("the publication names no monitoring class or type")]
    NoClassOrType,
    /// Its class and type are not those of the elements given.
    #[error("publication of class {class} type {ty} does not match the metadata")]
    Mismatch {
        /// Its class id.
        class: i32,
        /// Its type id.
        ty: i32,
    },
}

/// The lines amqsrua prints for a data publication put at `put_date`/`put_time` (the
/// MQMD's), described by `meta`: the heading, then one line per known element in the
/// order of the publication (parameters it does not describe are listed as amqsrua
/// lists them: "Parameter(id) Value(v) not recognised").
pub fn publication_lines(
    m: &PcfMessage,
    meta: &TypeElements,
    put_date: &str,
    put_time: &str,
) -> Result<Vec<String>, ReadError> {
    let top = |id| m.find(id).and_then(PcfParameter::as_i64);
    let (class, ty) = match (top(MQIAMO_MONITOR_CLASS), top(MQIAMO_MONITOR_TYPE)) {
        (Some(c), Some(t)) => (c, t),
        _ => return Err(ReadError::NoClassOrType),
    };
    if class != i64::from(meta.class) || ty != i64::from(meta.ty) {
        return Err(ReadError::Mismatch {
            class: i32::try_from(class).unwrap_or(-1),
            ty: i32::try_from(ty).unwrap_or(-1),
        });
    }
    let interval = top(MQIAMO64_MONITOR_INTERVAL).unwrap_or(0);
    let object = m.find(MQCA_Q_NAME).and_then(PcfParameter::as_str);
    let mut lines = vec![format!(
        "Publication received PutDate:{put_date:.8} PutTime:{put_time:.8} Interval:{}",
        interval_text(interval)
    )];
    for p in &m.parameters {
        let id = p.parameter();
        if matches!(
            id,
            MQIAMO_MONITOR_CLASS | MQIAMO_MONITOR_TYPE | MQIAMO64_MONITOR_INTERVAL
        ) {
            continue;
        }
        let Some(value) = p.as_i64() else { continue };
        match meta.elements.iter().find(|e| e.id == id) {
            Some(e) => lines.push(element_line(e, value, interval, object)),
            None => lines.push(format!("Parameter({id}) Value({value}) not recognised")),
        }
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::find_class;
    use ferry_mqi::pcf::Encoding;

    fn round_trip(m: &PcfMessage) -> PcfMessage {
        PcfMessage::decode(&m.encode(Encoding::Native), Encoding::Native).expect("decodes")
    }

    #[test]
    fn metadata_chain_describes_the_table() {
        let all = metadata("QM1");
        assert_eq!(all[0].0, "$SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/CLASSES");
        let classes = read_classes(&round_trip(&all[0].1));
        assert_eq!(
            classes.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["CPU", "DISK", "STATMQI", "STATQ"]
        );
        let statq = &classes[3];
        assert_eq!((statq.id, statq.flags), (3, 1));
        assert_eq!(
            statq.topic,
            "$SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/STATQ/TYPES"
        );
        let (_, types) = all.iter().find(|(t, _)| *t == statq.topic).expect("TYPES");
        let types = read_types(&round_trip(types));
        let put = types.iter().find(|t| t.name == "PUT").expect("PUT");
        assert_eq!(
            put.topic,
            "$SYS/MQ/INFO/QMGR/QM1/Monitor/METADATA/STATQ/PUT"
        );
        let (_, elements) = all.iter().find(|(t, _)| *t == put.topic).expect("elements");
        let elements = read_elements(&round_trip(elements)).expect("elements");
        assert_eq!(elements.topic, "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/%s/PUT");
        assert_eq!(elements.elements[0].description, "MQPUT/MQPUT1 count");
        assert_eq!(elements.elements[0].datatype, 2);
    }

    #[test]
    fn data_publications_read_as_amqsrua_prints_them() {
        let class = find_class("STATQ").expect("STATQ");
        let ty = class.find_type("PUT").expect("PUT");
        assert_eq!(
            data_topic("QM1", class, ty, Some("APP/IN")),
            "$SYS/MQ/INFO/QMGR/QM1/Monitor/STATQ/APP&IN/PUT"
        );
        let m = data_message(
            "QM1",
            class,
            ty,
            Some("APP.IN"),
            10_000_000,
            [(0, 25), (1, 2500), (99, 7)],
        );
        let meta = read_elements(&elements_message("QM1", class, ty)).expect("meta");
        let lines =
            publication_lines(&round_trip(&m), &meta, "2026-11-29", "11.50.00").expect("lines");
        assert_eq!(
            lines[0],
            "Publication received PutDate:2026-11- PutTime:11.50.00 Interval:10.000 seconds"
        );
        assert_eq!(
            lines[1],
            format!("{:<48} MQPUT/MQPUT1 count 25 3/sec", "APP.IN")
        );
        assert_eq!(
            lines[2],
            format!("{:<48} MQPUT byte count 2500 250/sec", "APP.IN")
        );
        assert_eq!(lines[3], "Parameter(99) Value(7) not recognised");
        let cpu = find_class("CPU").expect("CPU");
        let other = read_elements(&elements_message("QM1", cpu, &cpu.types[0])).expect("meta");
        assert!(matches!(
            publication_lines(&m, &other, "", ""),
            Err(ReadError::Mismatch { class: 3, ty: 2 })
        ));
        assert_eq!(
            interval_text(3_723_004_000),
            "1 hours,2 minutes,3.004 seconds"
        );
        let pct = ElementInfo {
            id: 0,
            datatype: 10000,
            description: "RAM free percentage".into(),
        };
        assert_eq!(
            element_line(&pct, 4217, 0, None),
            "RAM free percentage 42.17%"
        );
    }
}
