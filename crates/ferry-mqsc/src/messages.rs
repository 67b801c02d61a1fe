//! Every text MQSC prints, in one table: message id, severity and text.
//!
//! Ferry numbers its messages after IBM MQ's AMQ messages (`AMQ8006I` becomes
//! `FRY8006I`) so an administrator's searches carry over; messages MQ has no counterpart
//! for live in the FRY9xxx range. Texts take positional arguments `{0}`, `{1}`. The
//! runmqsc summary lines have no number and print without a prefix. docs/mqsc.md shows
//! this table, generated from [`MESSAGES`].

use std::fmt;

/// How serious a message is: the letter after the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Information (`I`).
    Info,
    /// Warning (`W`).
    Warning,
    /// Error (`E`).
    Error,
    /// Severe error (`S`).
    Severe,
}

impl Severity {
    /// The letter printed after the message number.
    pub fn letter(self) -> char {
        match self {
            Severity::Info => 'I',
            Severity::Warning => 'W',
            Severity::Error => 'E',
            Severity::Severe => 'S',
        }
    }
}

/// One row of the message table.
#[derive(Debug)]
pub struct Message {
    /// Which message.
    pub id: MsgId,
    /// The number (MQ's AMQ number where there is one); `None` for unnumbered lines.
    pub number: Option<u16>,
    /// Severity letter.
    pub severity: Severity,
    /// The text, with `{0}`, `{1}` ... for arguments.
    pub text: &'static str,
}

impl Message {
    /// `FRY8006I`, or an empty string for unnumbered lines.
    pub fn code(&self) -> String {
        match self.number {
            Some(n) => format!("FRY{n:04}{}", self.severity.letter()),
            None => String::new(),
        }
    }

    /// The printed line: `FRY8006I: Ferry queue created.` with arguments filled in.
    pub fn render(&self, args: &[&str]) -> String {
        let mut text = self.text.to_string();
        for (i, arg) in args.iter().enumerate() {
            text = text.replace(&format!("{{{i}}}"), arg);
        }
        match self.number {
            Some(_) => format!("{}: {text}", self.code()),
            None => text,
        }
    }
}

macro_rules! messages {
    ($( $(#[$doc:meta])* $id:ident = $num:expr, $sev:ident, $text:literal; )*) => {
        /// Names of the messages in [`MESSAGES`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum MsgId { $( $(#[$doc])* $id, )* }

        /// The message table: every text MQSC prints comes from here.
        pub static MESSAGES: &[Message] = &[
            $( Message { id: MsgId::$id, number: $num, severity: Severity::$sev, text: $text }, )*
        ];
    };
}

messages! {
    /// ALTER QMGR done.
    QmgrChanged = Some(8005), Info, "Ferry queue manager changed.";
    /// DEFINE QLOCAL/QALIAS/QMODEL done.
    QueueCreated = Some(8006), Info, "Ferry queue created.";
    /// DELETE of a queue done.
    QueueDeleted = Some(8007), Info, "Ferry queue deleted.";
    /// ALTER of a queue done.
    QueueChanged = Some(8008), Info, "Ferry queue changed.";
    /// DEFINE CHANNEL done.
    ChannelCreated = Some(8014), Info, "Ferry channel created.";
    /// DELETE CHANNEL done.
    ChannelDeleted = Some(8015), Info, "Ferry channel deleted.";
    /// ALTER CHANNEL done.
    ChannelChanged = Some(8016), Info, "Ferry channel changed.";
    /// START CHANNEL accepted (AMQP channels).
    ChannelStarted = Some(8018), Info, "Start Ferry channel accepted.";
    /// STOP CHANNEL accepted (AMQP channels).
    ChannelStopped = Some(8019), Info, "Stop Ferry channel accepted.";
    /// START LISTENER accepted.
    ListenerStarted = Some(8021), Info, "Request to start Ferry listener accepted.";
    /// CLEAR QLOCAL done.
    QueueCleared = Some(8022), Info, "Ferry queue cleared.";
    /// A failure with an MQ reason code.
    GeneralError = Some(8101), Severe, "Ferry error ({0}) has occurred: {1}.";
    /// DELETE of a queue holding messages without PURGE.
    QueueNotEmpty = Some(8143), Error, "Ferry queue {0} not empty.";
    /// No object of that name and type.
    ObjectNotFound = Some(8147), Error, "Ferry object {0} not found.";
    /// The object is open or otherwise busy.
    ObjectInUse = Some(8148), Error, "Ferry object {0} in use.";
    /// DEFINE of an existing name without REPLACE (or of another type).
    ObjectExists = Some(8150), Error, "Ferry object {0} already exists.";
    /// Connection details header.
    DisplayConnection = Some(8276), Info, "Display Connection details.";
    /// Syntax error, followed by the command up to the offending word.
    SyntaxError = Some(8405), Info, "Syntax error detected at or near end of command segment below:-";
    /// DISPLAY QMGR header.
    DisplayQmgr = Some(8408), Info, "Display Queue Manager details.";
    DisplayQmgrStatus = Some(8705), Info, "Display Queue Manager Status Details.";
    /// DISPLAY QUEUE header.
    DisplayQueue = Some(8409), Info, "Display Queue details.";
    /// DISPLAY CHANNEL header.
    DisplayChannel = Some(8414), Info, "Display Channel details.";
    /// DISPLAY CHSTATUS header.
    DisplayChannelStatus = Some(8417), Info, "Display Channel Status details.";
    /// DISPLAY QSTATUS or CHSTATUS found no status to show; {0} is Queue or Channel.
    StatusNotFound = Some(8420), Info, "{0} Status not found.";
    /// DISPLAY QSTATUS header.
    DisplayQueueStatus = Some(8450), Info, "Display queue status details.";
    /// DEFINE LISTENER done.
    ListenerCreated = Some(8626), Info, "Ferry listener object created.";
    /// ALTER LISTENER done.
    ListenerChanged = Some(8627), Info, "Ferry listener object changed.";
    /// DELETE LISTENER done.
    ListenerDeleted = Some(8628), Info, "Ferry listener object deleted.";
    /// DISPLAY LISTENER header.
    DisplayListener = Some(8630), Info, "Display listener information details.";
    /// DISPLAY LSSTATUS header.
    DisplayListenerStatus = Some(8631), Info, "Display listener status details.";
    /// DISPLAY LSSTATUS or STOP LISTENER of a listener that is not running.
    ListenerNotActive = Some(8730), Info, "Listener {0} not active.";
    /// STOP LISTENER accepted.
    ListenerStopped = Some(8731), Info, "Request to stop Ferry listener accepted.";
    /// QREMOTE commands: remote queues arrive with message channels.
    RemoteQueuesLater = Some(9001), Error, "Remote queue definitions (QREMOTE) come with message channels, which Ferry does not support yet; {0} was not processed.";
    /// Valid MQSC that Ferry does not implement.
    NotSupported = Some(9002), Error, "{0} is valid MQSC but Ferry does not support it yet.";
    /// The queue manager refused a request, with its reason.
    RequestRefused = Some(9003), Error, "The request was refused: {0}.";
    /// START/STOP CHANNEL of a channel type that is not started by command (SVRCONN).
    ChannelNotStartable = Some(9004), Error, "Channel {0} is a {1} channel: it runs when a client connects through a listener, so it cannot be started or stopped.";
    /// START CHANNEL of a channel with SSLCIPH set: Ferry has no TLS yet.
    TlsNotSupported = Some(9005), Error, "Channel {0} has SSLCIPH({1}) but Ferry does not support TLS yet; set SSLCIPH(' ') to start it without TLS.";
    /// A DISPLAY whose answer would pass MAX_COMMAND_OUTPUT: what was shown, and why not more.
    OutputCut = Some(9006), Error, "The output was cut after {0} of {1} objects: one command answers at most {2} bytes. Name fewer objects (a more specific generic name) or fewer attributes.";
    /// The reason for a syntax error (follows FRY8405I and the segment).
    SyntaxDetail = Some(9405), Error, "{0}.";
    /// STOP CHANNEL of a channel that is not running.
    ChannelNotActive = Some(9533), Error, "Channel {0} is not currently active.";
    /// runmqsc banner.
    Starting = None, Info, "Starting MQSC for queue manager {0}.";
    /// Summary: commands read.
    CommandsRead = None, Info, "{0} MQSC commands read.";
    /// Summary: no syntax errors.
    NoSyntaxErrors = None, Info, "No commands have a syntax error.";
    /// Summary: one syntax error.
    OneSyntaxError = None, Info, "One command has a syntax error.";
    /// Summary: several syntax errors.
    SyntaxErrors = None, Info, "{0} commands have a syntax error.";
    /// Summary: everything processed.
    AllProcessed = None, Info, "All valid MQSC commands were processed.";
    /// Summary: one failure.
    OneNotProcessed = None, Info, "One valid MQSC command could not be processed.";
    /// Summary: several failures.
    NotProcessed = None, Info, "{0} valid MQSC commands could not be processed.";
}

impl MsgId {
    /// The table row of this message.
    pub fn message(self) -> &'static Message {
        // Every MsgId variant has a row: the macro makes both from the same list.
        MESSAGES
            .iter()
            .find(|m| m.id == self)
            .unwrap_or(&MESSAGES[0])
    }

    /// The printed line with arguments filled in.
    pub fn render(self, args: &[&str]) -> String {
        self.message().render(args)
    }

    /// The printed line of a message without arguments.
    pub fn line(self) -> String {
        self.render(&[])
    }
}

impl fmt::Display for MsgId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message().code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for m in MESSAGES {
            if let Some(n) = m.number {
                assert!(seen.insert(n), "FRY{n} twice");
            }
        }
    }

    #[test]
    fn every_id_finds_its_own_row() {
        for m in MESSAGES {
            assert_eq!(m.id.message().id, m.id);
        }
    }

    #[test]
    fn renders_with_prefix_and_arguments() {
        assert_eq!(MsgId::QueueCreated.line(), "FRY8006I: Ferry queue created.");
        assert_eq!(
            MsgId::ObjectNotFound.render(&["APP.Q"]),
            "FRY8147E: Ferry object APP.Q not found."
        );
        assert_eq!(MsgId::CommandsRead.render(&["3"]), "3 MQSC commands read.");
        assert_eq!(MsgId::SyntaxError.to_string(), "FRY8405I");
    }
}
