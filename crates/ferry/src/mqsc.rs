//! `ferry mqsc QM1` (runmqsc): MQSC from a file, stdin or a terminal, run by the
//! queue manager's command server over the bindings socket.
//!
//! Lines are assembled into commands and checked for syntax here (so `-v` needs no
//! running queue manager); each valid command is sent to the queue manager, which parses
//! and executes it against its live objects. Echo, numbering, the closing summary and the
//! exit status (0 all processed, 10 some failed, 20 could not run) are runmqsc's.
//!
//! Lines are read with a bound ([`read_line`]): a line longer than any MQSC command
//! ([`MAX_COMMAND_LENGTH`]) is read to its end but only its beginning is kept, and the
//! command it belongs to is refused as too long, so a 100 MB line costs no more memory
//! than a short one.

use ferry_client::{ConnectOptions, Connection};
use ferry_mqsc::{CommandResult, RunOptions, Session, EXIT_ERROR, MAX_COMMAND_LENGTH};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle;
use ferry_server::messages;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

/// Reads the next line into `buf`, without its line ending; `None` at the end of input.
/// Keeps at most one byte more than [`MAX_COMMAND_LENGTH`] of it (the rest is read and
/// dropped: the session then refuses the command as too long). A line that is kept whole
/// must be UTF-8, as `BufRead::lines` requires.
fn read_line<'b>(
    input: &mut dyn BufRead,
    buf: &'b mut Vec<u8>,
) -> std::io::Result<Option<&'b str>> {
    const KEEP: usize = MAX_COMMAND_LENGTH + 1;
    buf.clear();
    let mut read_any = false;
    let mut cut = false;
    loop {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        read_any = true;
        let (take, line_end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let data = &chunk[..take - usize::from(line_end)];
        let room = KEEP.saturating_sub(buf.len());
        cut |= data.len() > room;
        buf.extend_from_slice(&data[..data.len().min(room)]);
        input.consume(take);
        if line_end {
            break;
        }
    }
    if !read_any {
        return Ok(None);
    }
    if buf.last() == Some(&b'\r') && !cut {
        buf.pop();
    }
    if cut {
        // Cut inside a character perhaps: keep what decodes.
        let valid = match std::str::from_utf8(buf) {
            Ok(_) => buf.len(),
            Err(e) => e.valid_up_to(),
        };
        buf.truncate(valid);
        // Still longer than a command: the session refuses it as too long.
        while buf.len() <= MAX_COMMAND_LENGTH {
            buf.push(b' ');
        }
    }
    std::str::from_utf8(buf)
        .map(Some)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Runs an MQSC session against queue manager `name`.
pub fn run(
    home: &FerryHome,
    name: &str,
    file: Option<&Path>,
    echo: bool,
    verify: bool,
) -> ExitCode {
    let code = match session(home, name, file, echo, verify) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("{message}");
            EXIT_ERROR
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(20))
}

fn session(
    home: &FerryHome,
    name: &str,
    file: Option<&Path>,
    echo: bool,
    verify: bool,
) -> Result<i32, String> {
    let paths = lifecycle::existing(home, name).map_err(|e| e.message)?;
    let mut input: Box<dyn BufRead> = match file {
        Some(path) => Box::new(std::io::BufReader::new(
            std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let interactive = file.is_none() && std::io::stdin().is_terminal();

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let connection = if verify {
        None
    } else {
        if lifecycle::running_pid(&paths).is_none() {
            return Err(messages::QMGR_NOT_RUNNING.format(&[&name]));
        }
        let opts = ConnectOptions::bindings(paths.bindings_socket())
            .queue_manager(name)
            .application_name("ferry mqsc");
        Some(runtime.block_on(Connection::connect(&opts)).map_err(|e| {
            format!(
                "{}: {}",
                messages::QMGR_NOT_RUNNING.format(&[&name]),
                e.reason
            )
        })?)
    };

    let mut session = Session::new(RunOptions {
        echo: echo && !interactive,
        verify_only: verify,
    });
    let mut runner = |text: &str, _: &ferry_mqsc::Command| -> CommandResult {
        let Some(conn) = connection.as_ref() else {
            return CommandResult {
                ok: true,
                lines: Vec::new(),
            };
        };
        match runtime.block_on(conn.mqsc(text)) {
            Ok(out) => CommandResult {
                ok: !out.failed,
                lines: out.lines,
            },
            Err(e) => CommandResult {
                ok: false,
                lines: vec![format!(
                    "The command could not be sent to queue manager '{name}': {}",
                    e.reason
                )],
            },
        }
    };
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", Session::banner(name));
    let mut buf = Vec::new();
    while let Some(line) = read_line(&mut input, &mut buf).map_err(|e| e.to_string())? {
        for out in session.feed_line_with(line, &mut runner) {
            let _ = writeln!(stdout, "{out}");
        }
        if session.ended() {
            break;
        }
    }
    for out in session.finish_with(&mut runner) {
        let _ = writeln!(stdout, "{out}");
    }
    let _ = stdout.flush();
    if let Some(conn) = connection {
        let _ = runtime.block_on(conn.disconnect());
    }
    Ok(session.summary().exit_code())
}
