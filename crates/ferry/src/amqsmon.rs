//! `ferry amqsmon -m QM1 -t statistics`: MQ's amqsmon for statistics messages. An
//! application like any other: it connects (over the bindings socket, or as a client
//! with `--connname`), gets the messages on SYSTEM.ADMIN.STATISTICS.QUEUE (browses them
//! with `-b`) and prints each as amqsmon does
//! ([`ferry_monitoring::statistics_message::statistics_lines`]), a blank line between
//! them. It ends when the queue has no more, or, with `-w SECS`, when none has come for
//! that long.

use crate::sample_connection;
use ferry_monitoring::statistics_message::statistics_lines;
use ferry_mqi::pcf::{Encoding, PcfMessage};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, ReasonCode,
};
use ferry_server::home::FerryHome;
use std::io::Write;
use std::process::ExitCode;

/// The queue statistics messages are on.
const STATISTICS_QUEUE: &str = "SYSTEM.ADMIN.STATISTICS.QUEUE";
/// The largest statistics message read.
const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// What `ferry amqsmon` was asked.
#[derive(Clone, Debug)]
pub struct AmqsmonArgs {
    /// Queue manager name.
    pub qmgr: String,
    /// Browse rather than remove the messages (amqsmon -b).
    pub browse: bool,
    /// Seconds to wait for a message when the queue is empty (amqsmon -w); none: end.
    pub wait_secs: Option<u64>,
    /// Connect as a client to this CONNAME (`host(port)`) rather than over bindings.
    pub connname: Option<String>,
    /// The SVRCONN channel for `connname`.
    pub channel: String,
}

/// Prints the statistics messages. Exit 0 when done, 20 when it cannot connect or open
/// the queue.
pub fn run(home: &FerryHome, args: &AmqsmonArgs) -> ExitCode {
    sample_connection::run_to_exit(async {
        match print_messages(home, args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("ferry amqsmon: {e}");
                ExitCode::from(20)
            }
        }
    })
}

async fn print_messages(home: &FerryHome, args: &AmqsmonArgs) -> Result<(), String> {
    let conn = sample_connection::connect(
        home,
        &args.qmgr,
        args.connname.as_deref(),
        &args.channel,
        "ferry amqsmon",
    )
    .await?;
    let od = ObjectDescriptor::queue(STATISTICS_QUEUE).map_err(|e| e.to_string())?;
    let access = if args.browse {
        OpenOptions::BROWSE
    } else {
        OpenOptions::INPUT_SHARED
    };
    let queue = conn
        .open(&od, access | OpenOptions::FAIL_IF_QUIESCING)
        .await
        .map_err(|e| format!("cannot open {STATISTICS_QUEUE}: {}", e.reason))?;
    let wait_ms = args.wait_secs.map_or(0, |s| {
        i32::try_from(s.saturating_mul(1000)).unwrap_or(i32::MAX)
    });
    let mut first = true;
    loop {
        let mut options = GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::FAIL_IF_QUIESCING;
        options |= match (args.browse, first) {
            (true, true) => GetOptionFlags::BROWSE_FIRST,
            (true, false) => GetOptionFlags::BROWSE_NEXT,
            (false, _) => GetOptionFlags::empty(),
        };
        if wait_ms > 0 {
            options |= GetOptionFlags::WAIT;
        }
        let gmo = GetOptions {
            options,
            wait_interval: wait_ms,
            ..Default::default()
        };
        let mut md = MessageDescriptor::default();
        let got = match queue.get(&mut md, &gmo, MAX_MESSAGE).await {
            Ok(got) => got,
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
            Err(e) => return Err(format!("get from {STATISTICS_QUEUE}: {}", e.reason)),
        };
        first = false;
        let decoded = PcfMessage::decode(&got.data, Encoding::from_mqmd(md.encoding)).ok();
        let lines = decoded
            .as_ref()
            .and_then(statistics_lines)
            .unwrap_or_else(|| {
                vec!["(a message that is not a statistics message, skipped)".to_string()]
            });
        let mut out = std::io::stdout().lock();
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out);
        let _ = out.flush();
    }
    let _ = queue.close(ferry_mqi::CloseOptions::empty()).await;
    let _ = conn.disconnect().await;
    Ok(())
}
