//! `ferry mqsc QM1` (runmqsc): MQSC from a file, stdin or a terminal, run by the
//! queue manager's command server over the bindings socket.
//!
//! Lines are assembled into commands and checked for syntax here (so `-v` needs no
//! running queue manager); each valid command is sent to the queue manager, which parses
//! and executes it against its live objects. Echo, numbering, the closing summary and the
//! exit status (0 all processed, 10 some failed, 20 could not run) are runmqsc's.
//!
//! Commands read from a file or a pipe are **pipelined** ([`Pipeline`]): up to
//! [`PIPELINE_DEPTH`] are on their way at once, each on a conversation of its own over
//! the one bindings socket. The queue manager handles a socket's frames in the order they
//! arrive, so commands still run one after the other, in order; but the changes of those
//! that arrive together share the definitions journal's disk writes, so 100,000 DEFINEs
//! take seconds instead of one sync each. Output is printed in order. A terminal session
//! sends one command at a time.
//!
//! Lines are read with a bound ([`read_line`]): a line longer than any MQSC command
//! ([`MAX_COMMAND_LENGTH`]) is read to its end but only its beginning is kept, and the
//! command it belongs to is refused as too long, so a 100 MB line costs no more memory
//! than a short one.

use ferry_client::{ConnectOptions, Connection, MqscOutput};
use ferry_messages as messages;
use ferry_mqi::MqError;
use ferry_mqsc::{CommandResult, RunOptions, Session, Step, EXIT_ERROR, MAX_COMMAND_LENGTH};
use ferry_server::home::FerryHome;
use ferry_server::lifecycle;
use std::collections::VecDeque;
use std::future::Future;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::pin::Pin;
use std::process::ExitCode;
use std::task::{Context, Poll, Waker};

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
            .application_name("ferry mqsc")
            .sharecnv(PIPELINE_DEPTH as u32);
        Some((
            runtime.block_on(Connection::connect(&opts)).map_err(|e| {
                format!(
                    "{}: {}",
                    messages::QMGR_NOT_RUNNING.format(&[&name]),
                    e.reason
                )
            })?,
            opts,
        ))
    };
    let depth = if interactive { 1 } else { PIPELINE_DEPTH };
    let mut pipeline = Pipeline::new(connection, depth, name);

    let mut session = Session::new(RunOptions {
        echo: echo && !interactive,
        verify_only: verify,
    });
    let mut stdout = crate::output::Stdout::lock();
    let _ = writeln!(stdout, "{}", Session::banner(name));
    let mut buf = Vec::new();
    while let Some(line) = read_line(&mut input, &mut buf).map_err(|e| e.to_string())? {
        if let Some(step) = session.feed_line_deferred(line) {
            pipeline.push(step, &runtime, &mut session, &mut stdout);
        }
        if session.ended() {
            break;
        }
    }
    if let Some(step) = session.finish_deferred() {
        pipeline.push(step, &runtime, &mut session, &mut stdout);
    }
    let connections = pipeline.drain(&runtime, &mut session, &mut stdout);
    for out in session.summary().lines() {
        let _ = writeln!(stdout, "{out}");
    }
    let _ = stdout.flush();
    for conn in connections {
        let _ = runtime.block_on(conn.disconnect());
    }
    Ok(session.summary().exit_code())
}

/// Commands on their way to the queue manager at once (conversations on the bindings
/// socket): enough for their changes to share the definitions journal's syncs.
pub const PIPELINE_DEPTH: usize = 32;

/// A command's answer on its way.
type Answer = Pin<Box<dyn Future<Output = Result<MqscOutput, MqError>>>>;

/// What waits to be printed, in order.
enum Pending {
    /// Lines ready now.
    Print(Vec<String>),
    /// A command sent: its echo, then its answer once it comes.
    Sent { echo: Vec<String>, answer: Answer },
}

/// Sends commands ahead of their answers and prints everything in order (see the module
/// documentation): at most `depth` commands on their way, each on its own conversation.
struct Pipeline<'n> {
    /// The first connection and the options that make more (None: verify only).
    first: Option<(Connection, ConnectOptions)>,
    /// One connection per command on its way, reused in turn (a conversation carries one
    /// call at a time).
    connections: Vec<std::rc::Rc<Connection>>,
    next: usize,
    depth: usize,
    pending: VecDeque<Pending>,
    in_flight: usize,
    qmgr: &'n str,
    /// The options more conversations are made with.
    spare_opts: Option<ConnectOptions>,
}

impl<'n> Pipeline<'n> {
    fn new(first: Option<(Connection, ConnectOptions)>, depth: usize, qmgr: &'n str) -> Self {
        Pipeline {
            first,
            connections: Vec::new(),
            next: 0,
            depth,
            pending: VecDeque::new(),
            in_flight: 0,
            qmgr,
            spare_opts: None,
        }
    }

    /// Queues what `step` prints or sends; prints what is ready and makes room.
    fn push(
        &mut self,
        step: Step,
        runtime: &tokio::runtime::Runtime,
        session: &mut Session,
        out: &mut dyn Write,
    ) {
        match step {
            Step::Print(lines) => self.pending.push_back(Pending::Print(lines)),
            Step::Run { echo, text, .. } => {
                while self.in_flight >= self.depth {
                    self.print_front(runtime, session, out);
                }
                match self.connection(runtime) {
                    Some(conn) => {
                        let mut answer: Answer = Box::pin(async move { conn.mqsc(&text).await });
                        // Polled once now, so the request is written in the order the
                        // commands were read; its answer is awaited in turn later.
                        let mut cx = Context::from_waker(Waker::noop());
                        let answer = match answer.as_mut().poll(&mut cx) {
                            Poll::Ready(r) => Box::pin(std::future::ready(r)),
                            Poll::Pending => answer,
                        };
                        self.in_flight += 1;
                        self.pending.push_back(Pending::Sent { echo, answer });
                    }
                    None => {
                        // Verify only: nothing is sent.
                        session.finished(&CommandResult {
                            ok: true,
                            lines: Vec::new(),
                        });
                        self.pending.push_back(Pending::Print(echo));
                    }
                }
            }
        }
        // What is ready at the front goes out now (a terminal session sees each answer
        // before typing the next command).
        while let Some(Pending::Print(_)) = self.pending.front() {
            self.print_front(runtime, session, out);
        }
        if self.depth == 1 {
            while !self.pending.is_empty() {
                self.print_front(runtime, session, out);
            }
        }
    }

    /// The connection for the next command (made on first use, up to `depth`).
    fn connection(&mut self, runtime: &tokio::runtime::Runtime) -> Option<std::rc::Rc<Connection>> {
        if let Some((conn, opts)) = self.first.take() {
            self.connections.push(std::rc::Rc::new(conn));
            self.first = None;
            self.spare_opts = Some(opts);
        }
        if self.connections.is_empty() {
            return None;
        }
        if self.next >= self.connections.len() && self.connections.len() < self.depth {
            if let Some(opts) = &self.spare_opts {
                // Another conversation on the same socket; if none can be had, the
                // commands share the ones there are.
                match runtime.block_on(Connection::connect(opts)) {
                    Ok(c) => self.connections.push(std::rc::Rc::new(c)),
                    // Fewer on their way then: a conversation carries one call at a time.
                    Err(_) => self.depth = self.connections.len(),
                }
            }
        }
        self.next %= self.depth;
        let conn = self.connections[self.next].clone();
        self.next += 1;
        Some(conn)
    }

    /// Prints the oldest pending item, waiting for its answer if it is a command.
    fn print_front(
        &mut self,
        runtime: &tokio::runtime::Runtime,
        session: &mut Session,
        out: &mut dyn Write,
    ) {
        let Some(item) = self.pending.pop_front() else {
            return;
        };
        let lines = match item {
            Pending::Print(lines) => lines,
            Pending::Sent { mut echo, answer } => {
                self.in_flight -= 1;
                let result = match runtime.block_on(answer) {
                    Ok(out) => CommandResult {
                        ok: !out.failed,
                        lines: out.lines,
                    },
                    Err(e) => CommandResult {
                        ok: false,
                        lines: vec![format!(
                            "The command could not be sent to queue manager '{}': {}",
                            self.qmgr, e.reason
                        )],
                    },
                };
                session.finished(&result);
                echo.extend(result.lines);
                echo
            }
        };
        for line in lines {
            let _ = writeln!(out, "{line}");
        }
    }

    /// Prints everything still pending; returns the connections to disconnect.
    fn drain(
        mut self,
        runtime: &tokio::runtime::Runtime,
        session: &mut Session,
        out: &mut dyn Write,
    ) -> Vec<Connection> {
        while !self.pending.is_empty() {
            self.print_front(runtime, session, out);
        }
        let mut conns: Vec<Connection> = self
            .connections
            .drain(..)
            .filter_map(|c| std::rc::Rc::try_unwrap(c).ok())
            .collect();
        conns.extend(self.first.take().map(|(c, _)| c));
        conns
    }
}
