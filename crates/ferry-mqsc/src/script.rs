//! Scripts and interactive input: logical commands from lines, and runmqsc's run loop.
//!
//! [`ScriptReader`] accumulates physical lines into logical commands: a trailing `+`
//! continues on the next line with its leading blanks removed, a trailing `-` continues
//! with them kept; lines whose first non-blank character is `*` are comments and blank
//! lines are skipped (outside a continued command). A command longer than
//! [`MAX_COMMAND_LENGTH`] is read to its end but not kept: its text stops just past the
//! limit (so parsing refuses it) and its echo is cut short, so no input, however long,
//! makes the reader hold more than a few times the limit. [`Session`] feeds lines one at a time
//! (as runmqsc reads a terminal), echoes each command numbered as runmqsc does, runs it
//! and counts; [`Summary`] prints the closing lines and gives the exit status.

use crate::command::Command;
use crate::error::ParseError;
use crate::executor::{execute, CommandResult};
use crate::parser::{parse_command, MAX_COMMAND_LENGTH};
use crate::runmqsc_lines;
use crate::target::AdminTarget;

/// One logical command: its text with continuations joined, and the lines it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogicalCommand {
    /// The command text, continuation characters removed.
    pub text: String,
    /// The physical lines as typed.
    pub lines: Vec<String>,
    /// Line number (1-based) of its first line.
    pub line_number: usize,
}

/// What a line (or the end of input) completed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadItem {
    /// A complete command.
    Command(LogicalCommand),
    /// A comment line, as typed.
    Comment(String),
}

#[derive(Debug)]
struct Pending {
    text: String,
    lines: Vec<String>,
    line_number: usize,
    strip_next: bool,
    /// Bytes of the physical lines read for this command.
    raw: usize,
    /// Past [`MAX_COMMAND_LENGTH`]: the rest is read, not kept.
    too_long: bool,
}

/// Physical bytes a command may span (blanks stripped by `+`, continuation characters)
/// before it counts as too long whatever its text: bounds what the echo keeps.
const MAX_RAW_LENGTH: usize = 2 * MAX_COMMAND_LENGTH;

/// Bytes of an overlong line shown in the echo.
const ECHO_SHOWN: usize = 72;

impl Pending {
    /// Adds `s` to the command's text, up to just past the limit.
    fn keep(&mut self, s: &str) {
        if self.too_long {
            return;
        }
        if self.text.len() + s.len() <= MAX_COMMAND_LENGTH {
            self.text.push_str(s);
            return;
        }
        // Keep enough to be over the limit whatever the character boundaries, no more.
        let mut end = (MAX_COMMAND_LENGTH + 4 - self.text.len()).min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&s[..end]);
        self.cut();
    }

    /// Marks the command too long: nothing more of it is kept.
    fn cut(&mut self) {
        if !self.too_long {
            self.too_long = true;
            self.lines.push(format!(
                "       : ... (longer than {MAX_COMMAND_LENGTH} bytes: the rest is not shown)"
            ));
        }
    }
}

/// The echo of one physical line: itself, or its beginning when it alone is too long.
fn echo_of(line: &str) -> String {
    if line.len() <= MAX_COMMAND_LENGTH {
        return line.to_string();
    }
    let mut end = ECHO_SHOWN;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} ...", &line[..end])
}

/// Turns physical lines into logical commands, one line at a time.
#[derive(Debug, Default)]
pub struct ScriptReader {
    pending: Option<Pending>,
    line_number: usize,
}

impl ScriptReader {
    /// A reader at the first line.
    pub fn new() -> Self {
        Self::default()
    }

    /// True while a command is continued (a prompt would say so).
    pub fn is_continuing(&self) -> bool {
        self.pending.is_some()
    }

    /// Reads one physical line (without or with its line ending).
    pub fn push_line(&mut self, line: &str) -> Option<ReadItem> {
        self.line_number += 1;
        let line = line.trim_end_matches(['\n', '\r']);
        let mut pending = match self.pending.take() {
            Some(p) => p,
            None => {
                let trimmed = line.trim();
                if trimmed.is_empty() {
                    return None;
                }
                if trimmed.starts_with('*') {
                    return Some(ReadItem::Comment(echo_of(line)));
                }
                Pending {
                    text: String::new(),
                    lines: Vec::new(),
                    line_number: self.line_number,
                    strip_next: false,
                    raw: 0,
                    too_long: false,
                }
            }
        };
        pending.raw = pending.raw.saturating_add(line.len() + 1);
        if !pending.too_long {
            pending.lines.push(echo_of(line));
        }
        if pending.raw > MAX_RAW_LENGTH {
            pending.cut();
        }
        let content = if pending.strip_next {
            line.trim_start()
        } else {
            line
        };
        let body = content.trim_end();
        if line.len() > MAX_COMMAND_LENGTH {
            // A line longer than any command ends the command it is in, whatever its
            // last character (the caller may have cut it short).
            pending.keep(body);
            pending.cut();
            return Some(ReadItem::Command(finish(pending)));
        }
        if let Some(head) = body.strip_suffix('+') {
            pending.keep(head);
            pending.strip_next = true;
            self.pending = Some(pending);
            None
        } else if let Some(head) = body.strip_suffix('-') {
            pending.keep(head);
            pending.strip_next = false;
            self.pending = Some(pending);
            None
        } else {
            pending.keep(body);
            Some(ReadItem::Command(finish(pending)))
        }
    }

    /// At the end of input: the command still being continued, if any.
    pub fn finish(&mut self) -> Option<LogicalCommand> {
        self.pending.take().map(finish)
    }
}

fn finish(p: Pending) -> LogicalCommand {
    let text = if p.too_long {
        // Its beginning, made longer than the limit whatever was kept, so that parsing
        // refuses it as too long (and shows that beginning).
        let mut t = p.text.trim_start().to_string();
        if t.len() <= MAX_COMMAND_LENGTH {
            t.extend(std::iter::repeat_n(' ', MAX_COMMAND_LENGTH + 1 - t.len()));
        }
        t
    } else {
        p.text.trim().to_string()
    };
    debug_assert!(p.too_long == (text.len() > MAX_COMMAND_LENGTH));
    LogicalCommand {
        text,
        lines: p.lines,
        line_number: p.line_number,
    }
}

/// The logical commands of a whole script, comments and blank lines dropped.
pub fn logical_commands(script: &str) -> Vec<LogicalCommand> {
    let mut reader = ScriptReader::new();
    let mut out: Vec<LogicalCommand> = script
        .lines()
        .filter_map(|l| match reader.push_line(l) {
            Some(ReadItem::Command(c)) => Some(c),
            _ => None,
        })
        .collect();
    out.extend(reader.finish());
    out
}

/// Parses a whole script, up to and including END if there is one.
pub fn parse_script(script: &str) -> Vec<Result<Command, ParseError>> {
    let mut out = Vec::new();
    for cmd in logical_commands(script) {
        let parsed = parse_command(&cmd.text);
        let end = parsed == Ok(Command::End);
        out.push(parsed);
        if end {
            break;
        }
    }
    out
}

/// runmqsc's exit status when all commands ran.
pub const EXIT_OK: i32 = 0;
/// Exit status when some commands had syntax errors or failed.
pub const EXIT_SOME_FAILED: i32 = 10;
/// Exit status when the commands could not be run at all (no queue manager, bad input).
pub const EXIT_ERROR: i32 = 20;

/// Counts kept while running a script.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Commands read (END not counted).
    pub read: usize,
    /// Commands with a syntax error.
    pub syntax_errors: usize,
    /// Valid commands that could not be processed.
    pub failed: usize,
}

impl Summary {
    /// runmqsc's closing lines.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![runmqsc_lines::COMMANDS_READ.format(&[&self.read.to_string()])];
        lines.push(match self.syntax_errors {
            0 => runmqsc_lines::NO_SYNTAX_ERRORS.format(&[]),
            1 => runmqsc_lines::ONE_SYNTAX_ERROR.format(&[]),
            n => runmqsc_lines::SYNTAX_ERRORS.format(&[&n.to_string()]),
        });
        lines.push(match self.failed {
            0 => runmqsc_lines::ALL_PROCESSED.format(&[]),
            1 => runmqsc_lines::ONE_NOT_PROCESSED.format(&[]),
            n => runmqsc_lines::NOT_PROCESSED.format(&[&n.to_string()]),
        });
        lines
    }

    /// 0 when every command was valid and processed, else 10.
    pub fn exit_code(&self) -> i32 {
        if self.syntax_errors == 0 && self.failed == 0 {
            EXIT_OK
        } else {
            EXIT_SOME_FAILED
        }
    }
}

/// The exit status of a run: its summary's, or 20 when it could not run (`None`).
pub fn exit_status(summary: Option<&Summary>) -> i32 {
    summary.map_or(EXIT_ERROR, Summary::exit_code)
}

/// How a session runs commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Echo each command before its response (runmqsc without `-e`).
    pub echo: bool,
    /// Check syntax only, run nothing (runmqsc `-v`).
    pub verify_only: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            echo: true,
            verify_only: false,
        }
    }
}

/// An MQSC session: lines in, response lines out, counts kept.
#[derive(Debug, Default)]
pub struct Session {
    reader: ScriptReader,
    options: RunOptions,
    summary: Summary,
    ended: bool,
}

impl Session {
    /// A new session.
    pub fn new(options: RunOptions) -> Self {
        Session {
            options,
            ..Self::default()
        }
    }

    /// The banner runmqsc prints first.
    pub fn banner(qmgr_name: &str) -> String {
        runmqsc_lines::STARTING.format(&[&qmgr_name])
    }

    /// True once END was read; further lines are ignored.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// True while a command is continued.
    pub fn is_continuing(&self) -> bool {
        self.reader.is_continuing()
    }

    /// Counts so far.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Reads one line; returns what to print (echo and responses).
    pub fn feed_line(&mut self, line: &str, target: &mut dyn AdminTarget) -> Vec<String> {
        self.feed_line_with(line, &mut |_, cmd| execute(cmd, target))
    }

    /// As [`Session::feed_line`], with commands run by `runner` (e.g. sent to a running
    /// queue manager); `runner` gets the command's text and its parsed form.
    pub fn feed_line_with(&mut self, line: &str, runner: &mut dyn CommandRunner) -> Vec<String> {
        if self.ended {
            return Vec::new();
        }
        match self.reader.push_line(line) {
            None => Vec::new(),
            Some(ReadItem::Comment(text)) => {
                if self.options.echo {
                    vec![format!("       : {text}")]
                } else {
                    Vec::new()
                }
            }
            Some(ReadItem::Command(cmd)) => self.run_with(&cmd, runner),
        }
    }

    /// Ends input: runs a command left continued, then prints the summary.
    pub fn finish(&mut self, target: &mut dyn AdminTarget) -> Vec<String> {
        self.finish_with(&mut |_, cmd| execute(cmd, target))
    }

    /// As [`Session::finish`], with commands run by `runner`.
    pub fn finish_with(&mut self, runner: &mut dyn CommandRunner) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.ended {
            if let Some(cmd) = self.reader.finish() {
                lines = self.run_with(&cmd, runner);
            }
        }
        lines.extend(self.summary.lines());
        lines
    }

    /// Echoes, parses, runs and counts one logical command.
    pub fn run(&mut self, cmd: &LogicalCommand, target: &mut dyn AdminTarget) -> Vec<String> {
        self.run_with(cmd, &mut |_, c| execute(c, target))
    }

    /// As [`Session::run`], with the command run by `runner`.
    pub fn run_with(
        &mut self,
        cmd: &LogicalCommand,
        runner: &mut dyn CommandRunner,
    ) -> Vec<String> {
        match self.prepare(cmd) {
            Step::Print(lines) => lines,
            Step::Run {
                mut echo,
                text,
                command,
            } => {
                let result = runner(&text, &command);
                self.finished(&result);
                echo.extend(result.lines);
                echo
            }
        }
    }

    /// As [`Session::feed_line_with`], for a caller that runs commands elsewhere and gets
    /// their results later (`ferry mqsc` keeps several on their way to the queue manager,
    /// so their changes share its disk writes): what to print, or a command to run.
    /// Results must be handed to [`Session::finished`], and steps printed, in order.
    pub fn feed_line_deferred(&mut self, line: &str) -> Option<Step> {
        if self.ended {
            return None;
        }
        match self.reader.push_line(line)? {
            ReadItem::Comment(text) => Some(Step::Print(if self.options.echo {
                vec![format!("       : {text}")]
            } else {
                Vec::new()
            })),
            ReadItem::Command(cmd) => Some(self.prepare(&cmd)),
        }
    }

    /// As [`Session::finish_with`], deferred: the command left continued, if any. Print
    /// [`Session::summary`]'s lines once every result is in.
    pub fn finish_deferred(&mut self) -> Option<Step> {
        if self.ended {
            return None;
        }
        let cmd = self.reader.finish()?;
        Some(self.prepare(&cmd))
    }

    /// Counts the result of a command a [`Step::Run`] asked for.
    pub fn finished(&mut self, result: &CommandResult) {
        if !result.ok {
            self.summary.failed += 1;
        }
    }

    /// Echoes, parses and counts one logical command: what to print, or what to run.
    fn prepare(&mut self, cmd: &LogicalCommand) -> Step {
        let parsed = parse_command(&cmd.text);
        if parsed == Ok(Command::End) {
            self.ended = true;
            return Step::Print(Vec::new());
        }
        self.summary.read += 1;
        let mut lines = Vec::new();
        if self.options.echo {
            for (i, l) in cmd.lines.iter().enumerate() {
                lines.push(if i == 0 {
                    format!("{:>6} : {l}", self.summary.read)
                } else {
                    format!("       : {l}")
                });
            }
        }
        match parsed {
            Err(e) => {
                self.summary.syntax_errors += 1;
                lines.extend(CommandResult::syntax_error(&e).lines);
                Step::Print(lines)
            }
            Ok(_) if self.options.verify_only => Step::Print(lines),
            Ok(command) => Step::Run {
                echo: lines,
                text: cmd.text.clone(),
                command,
            },
        }
    }
}

/// What a session asks of a caller that runs commands elsewhere
/// ([`Session::feed_line_deferred`]).
#[derive(Debug)]
pub enum Step {
    /// Print these lines.
    Print(Vec<String>),
    /// Print `echo`, run `text` (parsed: `command`), print its result's lines and hand
    /// the result to [`Session::finished`].
    Run {
        /// The command as echoed.
        echo: Vec<String>,
        /// Its text, continuation lines joined.
        text: String,
        /// Its parsed form.
        command: Command,
    },
}

/// Runs one parsed command and answers with its result: a local target, or a running
/// queue manager reached over a connection.
pub trait CommandRunner: FnMut(&str, &Command) -> CommandResult {}
impl<F: FnMut(&str, &Command) -> CommandResult> CommandRunner for F {}

/// What a whole script printed and its counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptOutput {
    /// Echoes, responses and the summary.
    pub lines: Vec<String>,
    /// Counts.
    pub summary: Summary,
}

impl ScriptOutput {
    /// The exit status runmqsc would give.
    pub fn exit_code(&self) -> i32 {
        self.summary.exit_code()
    }
}

/// Runs a whole script as `runmqsc QM < file` does.
pub fn run_script(script: &str, target: &mut dyn AdminTarget, options: RunOptions) -> ScriptOutput {
    let mut session = Session::new(options);
    let mut lines = Vec::new();
    for line in script.lines() {
        lines.extend(session.feed_line(line, target));
        if session.ended() {
            break;
        }
    }
    lines.extend(session.finish(target));
    ScriptOutput {
        lines,
        summary: session.summary(),
    }
}
