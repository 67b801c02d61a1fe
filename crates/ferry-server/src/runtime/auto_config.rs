//! qm.ini AutoConfig/MQSCConfig (`ferry create --ic`, MQ's `crtmqm -ic`): MQSC scripts
//! run at every start, before the listeners and channels start.
//!
//! The path is one script or a directory whose `*.mqsc` files run in name order, or
//! several of these separated by commas (each in turn). Each
//! command goes through the command server as `ferry mqsc` would send it; one that fails
//! is written to the error log with its output (FRY8951E) and the rest carry on, as MQ
//! does: the queue manager starts with what the scripts could do. FRY8950I counts them.

use super::command_server;
use super::reply_wait::ReplyWait;
use super::server::Server;
use crate::messages;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Runs the scripts qm.ini names, if any.
pub(crate) fn apply(server: &Rc<Server>) {
    let configured = server.ini.auto_config.mqsc_config.trim().to_string();
    if configured.is_empty() {
        return;
    }
    // Several paths, separated by commas (Ferry's extension: the container entry point
    // names the developer configuration and the mounted directories together).
    let mut all = Vec::new();
    for path in configured
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let path = PathBuf::from(path);
        match scripts(&path) {
            Ok(s) => all.extend(s),
            Err(e) => {
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::AUTO_CONFIG_UNREADABLE, &[&path.display(), &e]);
            }
        }
    }
    let (mut run, mut failed) = (0usize, 0usize);
    for script in all {
        let text = match std::fs::read_to_string(&script) {
            Ok(t) => t,
            Err(e) => {
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::AUTO_CONFIG_UNREADABLE, &[&script.display(), &e]);
                continue;
            }
        };
        for command in ferry_mqsc::script::logical_commands(&text) {
            if command.text.trim().eq_ignore_ascii_case("END") {
                break;
            }
            // Nothing waits for the replies: the definitions writer saves the changes.
            let mut wait = ReplyWait::default();
            let place = format!("{}:{}", script.display(), command.line_number);
            run += 1;
            match command_server::run(server, &command.text, None, &mut wait) {
                command_server::Answer::Now(output) => {
                    if output.failed {
                        failed += 1;
                        command_failed(server, &place, &command.text, &output.lines);
                    }
                }
                command_server::Answer::Later(work) => {
                    // PING, RESET, RESOLVE CHANNEL: the script goes on; a failure is
                    // logged when the work ends.
                    let server = server.clone();
                    let text = command.text.clone();
                    tokio::task::spawn_local(async move {
                        let output = work.await;
                        if output.failed {
                            command_failed(&server, &place, &text, &output.lines);
                        }
                    });
                }
            }
        }
    }
    server.error_log.borrow_mut().write(
        &messages::AUTO_CONFIG_APPLIED,
        &[&configured, &run, &failed],
    );
}

/// Logs an AutoConfig command at `place` that failed, with its output.
fn command_failed(server: &Server, place: &str, text: &str, lines: &[String]) {
    server.error_log.borrow_mut().write(
        &messages::AUTO_CONFIG_COMMAND_FAILED,
        &[&place, &text, &lines.join(" ")],
    );
}

/// The scripts `path` stands for: itself, or a directory's `*.mqsc` files by name.
fn scripts(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        std::fs::metadata(path)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("mqsc"))
        })
        .collect();
    out.sort();
    Ok(out)
}
