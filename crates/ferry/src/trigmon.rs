//! `ferry trigmon QM1 [--initq NAME]` (MQ's `runmqtrm -m QM1 -q NAME`): the trigger
//! monitor.
//!
//! It connects over the bindings socket, opens the initiation queue for input (by
//! default SYSTEM.DEFAULT.INITIATION.QUEUE; opening it is what lets the queue manager
//! make trigger messages for the queues it serves, and makes those already holding
//! messages trigger at once), and gets trigger messages (MQTM) one after the other. For
//! a process of APPLTYPE(UNIX) it runs, through `/bin/sh -c`, the command line MQ's
//! trigger monitor runs: APPLICID, then the MQTMC2 structure (732 characters: queue,
//! process, trigger data, application, environment and user data, queue manager) as one
//! quoted argument, then ENVRDATA. As on MQ, the monitor waits for the application to end
//! unless the command line puts it in the background (ENVRDATA `&`). Each start is
//! printed (FRY5032I). A message that is not a trigger message, or one for an
//! application type it cannot start, is reported and dropped. The monitor ends when the
//! queue manager quiesces or stops, or on SIGTERM or SIGINT.

use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_messages as messages;
use ferry_mqi::trigger::{
    TriggerMessage, TriggerMessageChars, FORMAT_TRIGGER, TRIGGER_MESSAGE_LEN,
};
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    ReasonCode,
};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle;
use std::io::Write;
use std::process::ExitCode;

/// MQ's MQAT_UNIX: the application type this monitor starts.
const APPL_TYPE_UNIX: i32 = 6;
/// A trigger message is 684 bytes; a little more is read so a longer message shows.
const MAX_MESSAGE: usize = 4 * 1024;
/// The longest one get waits before the monitor looks whether a signal asked it to end
/// (a get is never abandoned half-way, so the monitor always disconnects cleanly).
const WAIT_SLICE_MS: i32 = 1000;

/// Runs the trigger monitor for queue manager `name` on `initq` until the queue manager
/// ends or a signal stops it. Exit 0 then; 20 when it cannot start.
pub fn run(home: &FerryHome, name: &str, initq: &str) -> ExitCode {
    match serve(home, name, initq) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(20)
        }
    }
}

fn serve(home: &FerryHome, name: &str, initq: &str) -> Result<(), String> {
    let paths = lifecycle::existing(home, name).map_err(|e| e.message)?;
    if lifecycle::running_pid(&paths).is_none() {
        return Err(messages::QMGR_NOT_RUNNING.format(&[&name]));
    }
    let od = ObjectDescriptor::queue(initq).map_err(|e| format!("{initq}: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let opts = ConnectOptions::bindings(paths.bindings_socket())
            .queue_manager(name)
            .application_name("ferry trigmon");
        let conn = Connection::connect(&opts).await.map_err(|e| {
            format!(
                "{}: {}",
                messages::QMGR_NOT_RUNNING.format(&[&name]),
                e.reason
            )
        })?;
        let queue = conn
            .open(
                &od,
                OpenOptions::INPUT_AS_Q_DEF | OpenOptions::FAIL_IF_QUIESCING,
            )
            .await
            .map_err(|e| messages::TRIGGER_MONITOR_FAILED.format(&[&initq, &e.reason]))?;
        say(messages::TRIGGER_MONITOR_STARTED.format(&[&name, &initq]));
        let why = monitor(&queue, conn.queue_manager_name()).await;
        say(messages::TRIGGER_MONITOR_ENDED.format(&[&initq, &why]));
        drop(queue);
        let _ = conn.disconnect().await;
        Ok(())
    })
}

/// Prints one line at once (the monitor's output is its log).
fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Gets and acts on trigger messages until the queue manager or a signal ends it;
/// returns why it ended.
async fn monitor(queue: &Queue, qmgr: &str) -> String {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return "signals cannot be caught".into();
    };
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT
            | GetOptionFlags::NO_SYNCPOINT
            | GetOptionFlags::ACCEPT_TRUNCATED_MSG
            | GetOptionFlags::FAIL_IF_QUIESCING,
        wait_interval: WAIT_SLICE_MS,
        ..GetOptions::default()
    };
    let signalled = |term: &mut tokio::signal::unix::Signal,
                     int: &mut tokio::signal::unix::Signal| {
        let waker = futures_noop_waker();
        let mut cx = std::task::Context::from_waker(&waker);
        if term.poll_recv(&mut cx).is_ready() {
            return Some("SIGTERM");
        }
        if int.poll_recv(&mut cx).is_ready() {
            return Some("SIGINT");
        }
        None
    };
    loop {
        if let Some(why) = signalled(&mut term, &mut int) {
            return why.into();
        }
        let mut md = MessageDescriptor::default();
        let got = queue.get(&mut md, &gmo, MAX_MESSAGE).await;
        let data = match got {
            Ok(g) => g.data,
            Err(e) if e.reason == ReasonCode::TruncatedMsgAccepted => {
                say(messages::TRIGGER_MESSAGE_INVALID
                    .format(&[&queue.name(), &"it is longer than a trigger message"]));
                continue;
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => continue,
            Err(e) => return e.reason.to_string(),
        };
        if md.format != FORMAT_TRIGGER || data.len() < TRIGGER_MESSAGE_LEN {
            say(messages::TRIGGER_MESSAGE_INVALID.format(&[
                &queue.name(),
                &format!("format '{}', {} bytes", md.format.as_str(), data.len()),
            ]));
            continue;
        }
        let tm = match TriggerMessage::decode(&data, md.encoding) {
            Ok(tm) => tm,
            Err(e) => {
                say(messages::TRIGGER_MESSAGE_INVALID.format(&[&queue.name(), &e]));
                continue;
            }
        };
        start_application(&tm, qmgr).await;
    }
}

/// A waker that does nothing: the signal streams are only polled between gets.
fn futures_noop_waker() -> std::task::Waker {
    std::task::Waker::noop().clone()
}

/// Starts the application trigger message `tm` names, and waits for the shell that
/// runs it.
async fn start_application(tm: &TriggerMessage, qmgr: &str) {
    let queue = tm.q_name.as_str();
    let process = tm.process_name.as_str();
    if tm.appl_type != APPL_TYPE_UNIX {
        say(messages::TRIGGER_APPL_TYPE_UNSUPPORTED.format(&[&tm.appl_type, &process, &queue]));
        return;
    }
    let line = command_line(tm, qmgr);
    say(messages::TRIGGER_APPL_STARTED.format(&[&tm.appl_id.as_str(), &queue, &process]));
    let status = tokio::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(&line)
        .kill_on_drop(false)
        .status()
        .await;
    match status {
        Ok(s) if s.code() == Some(127) || s.code() == Some(126) => {
            say(messages::TRIGGER_APPL_FAILED.format(&[
                &tm.appl_id.as_str(),
                &queue,
                &format!("the shell could not run it ({s})"),
            ]));
        }
        Ok(_) => {}
        Err(e) => say(messages::TRIGGER_APPL_FAILED.format(&[&tm.appl_id.as_str(), &queue, &e])),
    }
}

/// The command line MQ's trigger monitor runs on Unix: APPLICID, the MQTMC2 as one
/// quoted argument, ENVRDATA.
pub fn command_line(tm: &TriggerMessage, qmgr: &str) -> String {
    let chars = TriggerMessageChars {
        message: tm.clone(),
        qmgr_name: FixedStr::truncating(qmgr),
    }
    .encode();
    let arg = String::from_utf8_lossy(&chars);
    let mut line = format!("{} {}", tm.appl_id.as_str(), shell_quoted(&arg));
    let env = tm.env_data.as_str();
    if !env.is_empty() {
        line.push(' ');
        line.push_str(env);
    }
    line
}

/// `s` as one shell word: in single quotes, a quote inside written `'\''`.
fn shell_quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tm(env: &str, user: &str) -> TriggerMessage {
        TriggerMessage {
            q_name: FixedStr::truncating("APP.Q"),
            process_name: FixedStr::truncating("APP.PROC"),
            trigger_data: FixedStr::truncating("td"),
            appl_type: APPL_TYPE_UNIX,
            appl_id: FixedStr::truncating("/opt/app/serve"),
            env_data: FixedStr::truncating(env),
            user_data: FixedStr::truncating(user),
        }
    }

    #[test]
    fn the_command_line_is_mqs() {
        let line = command_line(&tm("&", "it's"), "QM1");
        assert!(line.starts_with("/opt/app/serve 'TMC    2APP.Q"), "{line}");
        assert!(line.ends_with(" &"), "{line}");
        assert!(
            line.contains(r"it'\''s"),
            "a quote in the data is escaped: {line}"
        );
        // The argument is the 732-character MQTMC2 once the shell unquotes it.
        let quoted = &line["/opt/app/serve ".len()..line.len() - 2];
        let unquoted = quoted[1..quoted.len() - 1].replace(r"'\''", "'");
        assert_eq!(unquoted.len(), 732);
        assert_eq!(&unquoted[684..687], "QM1");
    }

    #[test]
    fn no_envrdata_adds_nothing() {
        let line = command_line(&tm("", ""), "QM1");
        assert!(line.ends_with('\''), "{line}");
    }
}
