//! The CSV of a run: one row per step of every series, with the series' parameters on
//! each row so the file stands alone in a spreadsheet. Empty cells are unknown values.

use std::path::Path;

use serde::Serialize;

use super::Document;

/// One row of the CSV.
#[derive(Debug, Serialize)]
pub struct Row<'a> {
    /// Workload, e.g. `RR-CC`.
    pub workload: &'a str,
    /// The reports' test name.
    pub test: &'a str,
    /// Message size in bytes.
    pub size_bytes: usize,
    /// Persistent messages.
    pub persistent: bool,
    /// Syncpoint.
    pub syncpoint: bool,
    /// Rated mode: messages/s per requester.
    pub rate_per_requester: Option<f64>,
    /// SHARECNV.
    pub sharecnv: u32,
    /// Requesters (senders, clients).
    pub clients: usize,
    /// Responders (receivers).
    pub responders: usize,
    /// Measured seconds.
    pub elapsed_secs: f64,
    /// Operations in the window.
    pub operations: u64,
    /// Operations per second.
    pub rate: f64,
    /// What an operation is.
    pub rate_unit: &'a str,
    /// Server CPU, % of the machine.
    pub server_cpu_pct: Option<f64>,
    /// Server CPU µs per operation.
    pub server_us_per_op: Option<f64>,
    /// Harness CPU, % of the machine.
    pub harness_cpu_pct: Option<f64>,
    /// Harness CPU µs per operation.
    pub harness_us_per_op: Option<f64>,
    /// Share of the machine's time stolen by the hypervisor, %.
    pub steal_pct: Option<f64>,
    /// Latency percentiles, µs.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest.
    pub max_us: f64,
    /// Errors.
    pub errors: u64,
    /// Mismatches.
    pub mismatches: u64,
    /// SR-CC: messages put in the window.
    pub sent: Option<u64>,
    /// SR-CC: CURDEPTH total at the end of the window (PS-CC: copies due and not yet
    /// received, counted).
    pub queue_depth_end: Option<u64>,
    /// PS-CC: deliveries per second per subscriber.
    pub per_subscriber_rate: Option<f64>,
    /// PS-CC: copies never received.
    pub lost: Option<u64>,
    /// Relay yardstick's rate.
    pub relay_rate: Option<f64>,
    /// Ferry's rate as % of the relay's.
    pub ferry_vs_relay_pct: Option<f64>,
    /// Recovery log flushes per message moved in the window (RR: 2 per round trip).
    pub log_flushes_per_msg: Option<f64>,
    /// Recovery log records per flush.
    pub log_records_per_flush: Option<f64>,
    /// Recovery log MB (10^6 bytes) written per second.
    pub log_mb_per_sec: Option<f64>,
    /// Recovery log flushes in the window.
    pub log_flushes: Option<u64>,
    /// Recovery log records in the window.
    pub log_records: Option<u64>,
    /// Recovery log bytes in the window.
    pub log_bytes: Option<u64>,
    /// Step valid.
    pub valid: bool,
    /// Problems, `; `-separated.
    pub problems: String,
}

/// The CSV text of `doc`.
pub fn render(doc: &Document) -> Result<String, String> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for s in &doc.series {
        for st in &s.steps {
            let f = &st.ferry;
            w.serialize(Row {
                workload: &s.workload,
                test: &s.test,
                size_bytes: s.size,
                persistent: s.persistent,
                syncpoint: s.syncpoint,
                rate_per_requester: s.rate_per_requester,
                sharecnv: s.sharecnv,
                clients: f.clients,
                responders: f.responders,
                elapsed_secs: f.window.elapsed_secs,
                operations: f.window.round_trips,
                rate: f.window.rate,
                rate_unit: &s.rate_unit,
                server_cpu_pct: f.window.server_cpu_pct,
                server_us_per_op: f.window.server_us_per_rt,
                harness_cpu_pct: f.window.harness_cpu_pct,
                harness_us_per_op: f.window.harness_us_per_rt,
                steal_pct: f.window.steal_pct,
                p50_us: f.latency.p50_us,
                p95_us: f.latency.p95_us,
                p99_us: f.latency.p99_us,
                p999_us: f.latency.p999_us,
                max_us: f.latency.max_us,
                errors: f.errors,
                mismatches: f.mismatches,
                sent: f.sent,
                queue_depth_end: f.queue_depth_end,
                per_subscriber_rate: crate::report::is_pubsub(s)
                    .then(|| crate::report::per_subscriber(f)),
                lost: f.lost,
                relay_rate: st.relay.as_ref().map(|r| r.rate),
                ferry_vs_relay_pct: st.ferry_vs_relay_pct,
                log_flushes_per_msg: f.log.and_then(|l| l.flushes_per_msg),
                log_records_per_flush: f.log.and_then(|l| l.records_per_flush),
                log_mb_per_sec: f.log.and_then(|l| l.mb_per_sec),
                log_flushes: f.log.map(|l| l.flushes),
                log_records: f.log.map(|l| l.records),
                log_bytes: f.log.map(|l| l.bytes),
                valid: f.valid,
                problems: f.problems.join("; "),
            })
            .map_err(|e| format!("cannot encode CSV: {e}"))?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| format!("cannot encode CSV: {e}"))?;
    String::from_utf8(bytes).map_err(|e| format!("cannot encode CSV: {e}"))
}

/// Writes the CSV of `doc` to `path`.
pub fn write(doc: &Document, path: &Path) -> Result<(), String> {
    std::fs::write(path, render(doc)?).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testdata;

    #[test]
    fn one_row_per_step_with_a_header() {
        let text = render(&testdata::document()).expect("renders");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 7, "{text}");
        assert!(
            lines[0].starts_with("workload,test,size_bytes,persistent,syncpoint,"),
            "{}",
            lines[0]
        );
        assert!(lines[1].starts_with("RR-CC,RR-CC (2KB Non-persistent),2048,false,false,,10,1,10,5.0,40000,8000.0,Round trips/s,0.5,20.0,30.0,9.5,0.5,150.0"), "{}", lines[1]);
        assert!(
            lines[6].ends_with(",,,,,,,false,CorruptBody"),
            "{}",
            lines[6]
        );
        assert!(
            lines[0].ends_with(
                ",log_flushes_per_msg,log_records_per_flush,log_mb_per_sec,log_flushes,\
                 log_records,log_bytes,valid,problems"
            ),
            "{}",
            lines[0]
        );
    }
}
