//! The numbered messages of control commands and the error log, in one table.
//!
//! Ids follow IBM MQ's numbers with a FRY prefix (AMQ8003I "queue manager started" is
//! FRY8003I here), so administrators find their way and can grep logs the way they do
//! today. A message's text takes positional inserts `{0}`, `{1}`, ...

/// How serious a message is: the letter after the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// I: information.
    Info,
    /// W: something to look at.
    Warning,
    /// E: an error.
    Error,
}

impl Severity {
    fn letter(self) -> char {
        match self {
            Severity::Info => 'I',
            Severity::Warning => 'W',
            Severity::Error => 'E',
        }
    }
}

/// One message of the catalogue.
#[derive(Debug)]
pub struct Message {
    /// The number, e.g. 8003.
    pub number: u32,
    /// Its severity.
    pub severity: Severity,
    /// The text with `{n}` inserts.
    pub text: &'static str,
    /// What happened, for the error log.
    pub explanation: &'static str,
    /// What to do, for the error log.
    pub action: &'static str,
}

macro_rules! catalogue {
    ($( $name:ident = $num:literal $sev:ident $text:literal, $expl:literal, $action:literal; )*) => {
        $(
            #[doc = $text]
            pub const $name: Message = Message {
                number: $num, severity: Severity::$sev, text: $text, explanation: $expl, action: $action,
            };
        )*
        /// Every message, for docs and tests.
        pub const ALL: &[&Message] = &[ $( &$name, )* ];
    };
}

catalogue! {
    QMGR_CREATED = 8001 Info "Ferry queue manager '{0}' created.",
        "The queue manager, its directory, qm.ini and system objects were created.",
        "Start it with 'ferry start {0}'.";
    QMGR_DELETED = 8002 Info "Ferry queue manager '{0}' deleted.",
        "The queue manager and all its data were removed.", "None.";
    QMGR_STARTED = 8003 Info "Ferry queue manager '{0}' started using Ferry {1}.",
        "The queue manager is running and accepts connections.", "None.";
    QMGR_ENDED = 8004 Info "Ferry queue manager '{0}' ended.",
        "The queue manager stopped.", "None.";
    QMGR_STARTING = 8024 Info "Ferry queue manager '{0}' starting.",
        "The queue manager is restoring its objects and opening its listeners.", "None.";
    QMGR_QUIESCE_ACCEPTED = 8005 Info "Quiesce request accepted. Ferry queue manager '{0}' will end when all applications have disconnected.",
        "A controlled stop was requested: new connections are refused, connected applications may finish.",
        "Use 'ferry stop --immediate {0}' to end connected applications now.";
    QMGR_ENDING_IMMEDIATE = 8006 Info "Ferry queue manager '{0}' ending immediately.",
        "An immediate stop was requested: applications are disconnected and uncommitted work backed out.", "None.";
    QMGR_EXISTS = 8110 Error "Ferry queue manager '{0}' already exists.",
        "A queue manager of that name is already in this data root.", "Choose another name or delete it first.";
    QMGR_UNKNOWN = 8118 Error "Ferry queue manager '{0}' does not exist.",
        "No queue manager of that name was found under {1}.", "Check the name and FERRY_HOME, or create it with 'ferry create {0}'.";
    QMGR_NOT_RUNNING = 8146 Error "Ferry queue manager '{0}' is not available.",
        "The queue manager is not running.", "Start it with 'ferry start {0}'.";
    QMGR_RUNNING = 8041 Error "Ferry queue manager '{0}' is running (pid {1}).",
        "The request needs the queue manager to be stopped, or it is already running.", "Stop it with 'ferry stop {0}' first.";
    QMGR_START_FAILED = 8101 Error "Ferry queue manager '{0}' could not start: {1}",
        "The queue manager process ended during start-up.", "Correct the problem named and start it again; its console output is in {2}.";
    QMGR_NAME_INVALID = 8117 Error "'{0}' is not a valid queue manager name: {1}",
        "Queue manager names are 1 to 48 characters from A-Z a-z 0-9 . / _ %.", "Choose a valid name.";
    LISTENER_STARTED = 5026 Info "The listener '{0}' has started. Port {1}.",
        "The listener accepts client connections.", "None.";
    LISTENER_ENDED = 5027 Info "The listener '{0}' has ended.",
        "The listener no longer accepts connections; existing ones continue.", "None.";
    LISTENER_FAILED = 9212 Error "The listener '{0}' could not listen on port {1}: {2}",
        "The TCP port could not be bound (in use, or not allowed).", "Free the port or change PORT with ALTER LISTENER, then START LISTENER.";
    AMQP_CHANNEL_STARTED = 5041 Info "The AMQP channel '{0}' has started. Port {1}.",
        "AMQP 1.0 clients (Qpid JMS, proton, any AMQP 1.0 client) can connect to the port.",
        "None.";
    AMQP_CHANNEL_ENDED = 5042 Info "The AMQP channel '{0}' has ended.",
        "STOP CHANNEL or the end of the queue manager stopped the channel; its connections were closed.",
        "START CHANNEL restarts it.";
    AMQP_CHANNEL_FAILED = 9213 Error "The AMQP channel '{0}' could not start: {1}",
        "The channel's port could not be bound, or the channel asks for something Ferry cannot do yet.",
        "Free the port or ALTER CHANNEL(...) CHLTYPE(AMQP) PORT(n), then START CHANNEL.";
    AMQP_PROTOCOL_ERROR = 9505 Error "An AMQP protocol error ended the connection from {0} on channel '{1}': {2}",
        "The client sent something AMQP 1.0 does not allow; the connection was closed with that error condition. Other connections are not affected.",
        "Correct the client.";
    AMQP_NOT_PUT = 9544 Warning "A pre-settled message from {0} on AMQP channel '{1}' could not be put on queue '{2}' ({3}); it was {4}.",
        "The AMQP client sent the message settled in advance (at most once), so no outcome could tell it the message was not put (a full queue, an unknown queue, a message too large...). As MQ's channel agents do, it went to the queue manager's dead-letter queue (DEADQ) with an MQDLH giving the reason, or was discarded when there is no dead-letter queue or it could not take the message. Repeats are counted per QMErrorLog/SuppressInterval; DISPLAY CHSTATUS counts them all.",
        "Look at the reason, make room on the queue or correct the application's destination, and process the dead-letter queue.";
    BINDINGS_STARTED = 5028 Info "Local (bindings) connections are accepted at {0}.",
        "Applications on this host can connect through the Unix socket.", "None.";
    CONFIG_ERROR = 7028 Error "The configuration of queue manager '{0}' is not valid: {1}",
        "qm.ini or the object definitions could not be used.", "Correct the file named and start again.";
    CHANNEL_UNKNOWN = 9519 Error "Channel '{0}' not found (from {1}).",
        "A client asked for a channel that is not defined: 2540 MQRC_UNKNOWN_CHANNEL_NAME.", "Define the channel or correct the client's channel name.";
    PROTOCOL_ERROR = 9504 Error "A protocol error was detected for the connection from {0}: {1}",
        "The peer sent data that breaks the Ferry protocol; only this connection was closed.", "Check the client program and its Ferry client library version.";
    CONNECTION_LOST = 9208 Warning "Error on receive from host {0}: {1}",
        "The connection ended without a disconnect; uncommitted work was backed out.", "None, if the application ended on purpose.";
    CHANNEL_TIMED_OUT = 9271 Error "The connection from {0} timed out: {1}.",
        "The client did not complete a stage of its connection in the time the queue manager allows (qm.ini Limits stanza: HandshakeTimeout from accept to the first MQCONN, PartialFrameTimeout for the rest of a frame it started); only this connection was closed, and its uncommitted work backed out.",
        "Check the client and the network. A client that connects and then sends nothing, or stops in the middle of a frame, may be hostile; raise the limit only if legitimate clients are that slow.";
    HEARTBEAT_TIMEOUT = 9259 Warning "The connection from {0} sent nothing for {1} seconds and was ended.",
        "No data or heartbeat arrived within twice the negotiated heartbeat interval.", "Check the network and the client.";
    MAX_CHANNELS = 9513 Error "Connection from {0} refused: MaxChannels ({1}) reached.",
        "The qm.ini Channels/MaxChannels limit of concurrent client connections is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE.", "Raise MaxChannels in qm.ini or reduce connections.";
    MAX_CONNECTIONS = 9780 Warning "Connection from {0} to port {1} refused: {2} client sockets are open, the most this queue manager admits.",
        "The queue manager admits at most qm.ini Limits/MaxConnections client sockets at once on all its listeners and AMQP channels (fewer when the process's open-file limit is lower; FRY9781I at start says so). The socket was closed as soon as it was accepted; handshakes count, so clients that connect and send nothing hold places until HandshakeTimeout closes them.",
        "Find out who holds the connections (DISPLAY CHSTATUS, DISPLAY CONN); raise MaxConnections, or the open-file limit (ulimit -n) if FRY9781I says it lowered the limit.";
    MAX_CONNECTIONS_LOWERED = 9781 Info "Limits/MaxConnections is {0}, but this process may open only {1} files: at most {2} client sockets are admitted.",
        "The queue manager keeps Limits/ReservedFileDescriptors ({3}) file descriptors for itself (the bindings socket for local applications and ferry mqsc, log and queue files), and the open-file limit leaves room for fewer client sockets than MaxConnections.",
        "Raise the open-file limit of the process that starts the queue manager (ulimit -n, LimitNOFILE= in a systemd unit), or lower MaxConnections to match.";
    ACCEPT_FAILED = 9782 Error "Accepting a connection on {0} failed: {1}",
        "The operating system refused to hand over a waiting connection. When it ran out of file descriptors, the waiting connection was closed so the listener does not spin; the listener pauses briefly (up to a second) and accepts again.",
        "If the reason is 'Too many open files', find what holds them (DISPLAY CHSTATUS, ls /proc/PID/fd) and lower Limits/MaxConnections or raise the open-file limit.";
    MAX_INSTANCES = 9489 Error "Connection from {0} refused: channel '{1}' has reached MAXINST({2}) instances.",
        "The SVRCONN channel's MAXINST limit of simultaneous instances (client sockets whose hello was accepted) is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE.",
        "Raise MAXINST with ALTER CHANNEL, or find the clients holding instances with DISPLAY CHSTATUS.";
    MAX_INSTANCES_PER_CLIENT = 9490 Error "Connection from {0} refused: channel '{1}' has reached MAXINSTC({2}) instances from that address.",
        "The SVRCONN channel's MAXINSTC limit of simultaneous instances from one client address is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE. Other addresses can still connect.",
        "Raise MAXINSTC with ALTER CHANNEL, or find what holds the instances from that address with DISPLAY CHSTATUS.";
    LOG_SLOW_IO = 6729 Warning "A log {0} operation of {1} bytes on {2} took {3} microseconds, longer than the threshold of {4} microseconds ({5} slow operations since the last warning).",
        "A read (R) or write/sync (W) of the recovery log was slower than AMQ_IODELAY (microseconds; milliseconds with AMQ_IODELAY_INMS=YES). Persistent messaging waits for the log, so it slows down too. Warnings are written at most once a minute.",
        "Check the storage under LogPath: other load, a failing device, or a throttled volume.";
    LOG_FAILED = 7466 Error "The recovery log of queue manager '{0}' failed: {1}",
        "A log write or sync failed; nothing more can be made durable. Persistent work fails with 2102 MQRC_RESOURCE_PROBLEM; non-persistent work continues.",
        "Correct the storage problem (space, permissions, device errors), then restart the queue manager: restart recovery replays the log as it is on disk.";
    LOG_FULL = 7463 Warning "The log for queue manager '{0}' is full: {1}",
        "A persistent operation could not be logged because the circular log has no free space; it failed with 2102 MQRC_RESOURCE_PROBLEM.",
        "Commit or back out long-running units of work, get messages off deep queues, or make the log bigger (LogPrimaryFiles, LogFilePages) with a new queue manager.";
    LOG_RECOVERED = 7233 Info "Queue manager '{0}' recovered from its log: {1} records replayed, {2} persistent messages restored, {3} in-flight units of work backed out.",
        "Restart recovery replayed the recovery log from the last checkpoint.", "None.";
    LOG_OPEN_FAILED = 7467 Error "The recovery log of queue manager '{0}' could not be used: {1}",
        "The log under LogPath could not be created, opened or recovered; the queue manager does not start, so no persistent message is lost or duplicated.",
        "Correct the problem named (space, permissions, a damaged log) and start again.";
    QUEUE_FILES_LOADED = 7234 Info "Queue manager '{0}' loaded {1} persistent messages from its queue files ({2} queues).",
        "At restart the messages that stayed on queues are read back from their queue files before the recovery log is replayed.", "None.";
    QUEUE_FILE_FAILED = 7468 Error "A queue file of queue manager '{0}' could not be written: {1}",
        "A checkpoint could not write or sync a queue file (disk full, permissions, device error). Checkpoints stop until restart, so the recovery log fills and persistent puts then fail with 2102 MQRC_RESOURCE_PROBLEM. Nothing acknowledged is lost: the log still holds it.",
        "Correct the storage problem, then restart the queue manager: recovery rebuilds the queue files from the log.";
    QUEUE_FILE_TORN = 7469 Warning "The queue file of queue '{0}' ended in an unfinished write: {1} bytes of changes not yet synced were dropped ({2}).",
        "The queue manager stopped while a checkpoint was writing the file; the recovery log still holds those changes and replays them.", "None.";
    QUEUE_FILE_READ_FAILED = 7470 Error "A message on queue '{0}' could not be read back from its queue file: {1}",
        "The body of a message kept on disk beyond the queue's buffer (DefaultPQBufferSize, DefaultQBufferSize) could not be read, or failed its checks. The get failed with 2102 MQRC_RESOURCE_PROBLEM (a read error) or 2195 MQRC_UNEXPECTED_ERROR (damage) and the message stays on the queue: nothing damaged is delivered. Each message is reported once.",
        "Check the device and the file named. Messages past it can still be got by MsgId or CorrelId. A restart checks every queue file before serving.";
    UOW_BACKED_OUT_FOR_LOG_SPACE = 7471 Warning "Queue manager '{0}' backed out the unit of work of connection {1} ({2} bytes of persistent messages) to release log space.",
        "The recovery log was full and the oldest unit of work in flight held a large part of it: every checkpoint carries its records, so only ending it frees them. Its messages were released as by MQBACK; the application's next MQCMIT fails with 2003 MQRC_BACKED_OUT. (MQ reports this as AMQ7469.)",
        "Commit units of work sooner or make them smaller, or give the log more space (LogPrimaryFiles, LogFilePages).";
    OBJECTS_SAVE_FAILED = 7075 Error "Object definitions could not be saved: {0}",
        "A change to the definitions could not be written to objects.journal (or a background compaction could not write a new objects.json). The command that made the change was told it failed (2102 MQRC_RESOURCE_PROBLEM); the change is in effect in memory, and the writer retries once a second by writing a whole new objects.json.", "Free disk space or fix permissions in the queue manager's directory.";
    MESSAGES_SUPPRESSED = 7185 Warning "{0} repeated {1} in the last {2} s ({3}).",
        "Message {0} is suppressed: after its first entry, repeats with the same cause within QMErrorLog/SuppressInterval are counted instead of written, so that a flood (often one client sending bad data or connecting again and again) cannot push the history out of the error log or fill the console log. This entry closes the interval with the count. The channel and connection messages (FRY9xxx) are suppressed by default; QMErrorLog/SuppressMessage adds others. (MQ suppresses without a count; it has no such message.)",
        "Read the first {0} entry before this one for the details, and correct or stop the client that causes it.";
    OBJECTS_DAMAGED = 7472 Error "The object definitions of queue manager '{0}' cannot be used: {1}",
        "objects.json (the snapshot of the definitions) or objects.journal (the changes since) is damaged, missing or does not match the other; the queue manager does not start rather than start with definitions lost. See docs/internals/catalogue.md.", "Restore both files from a backup taken together. To start from objects.json alone, accepting the loss of the changes in the journal, remove its \"generation\" line and objects.journal.";
    OBJECTS_CONVERTED = 7473 Info "The object definitions of queue manager '{0}' were converted to a snapshot and a journal ({1} queues).",
        "objects.json was in the format of earlier Ferry releases (rewritten whole on every change); it now holds a generation and changes go to objects.journal.", "None.";
    OBJECTS_TORN = 7474 Warning "The definitions journal of queue manager '{0}' ended in an unfinished write: {1} bytes dropped ({2}).",
        "The queue manager stopped while a change to the definitions was being written; that change was never acknowledged, so the command that made it was not told it succeeded.", "None; check with DISPLAY that the definitions are as expected.";
}

impl Message {
    /// The id, e.g. `FRY8003I`.
    pub fn id(&self) -> String {
        format!("FRY{:04}{}", self.number, self.severity.letter())
    }

    /// `FRY8003I: Ferry queue manager 'QM1' started using Ferry 0.1.0.` with inserts filled.
    pub fn format(&self, inserts: &[&dyn std::fmt::Display]) -> String {
        format!("{}: {}", self.id(), fill(self.text, inserts))
    }

    /// The explanation and action with inserts filled, for the error log.
    pub fn detail(&self, inserts: &[&dyn std::fmt::Display]) -> (String, String) {
        (fill(self.explanation, inserts), fill(self.action, inserts))
    }
}

fn fill(template: &str, inserts: &[&dyn std::fmt::Display]) -> String {
    let mut out = template.to_string();
    for (i, v) in inserts.iter().enumerate() {
        out = out.replace(&format!("{{{i}}}"), &v.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_formatted() {
        let mut seen = std::collections::HashSet::new();
        for m in ALL {
            assert!(seen.insert(m.number), "duplicate {}", m.number);
        }
        assert_eq!(
            QMGR_STARTED.format(&[&"QM1", &"0.1.0"]),
            "FRY8003I: Ferry queue manager 'QM1' started using Ferry 0.1.0."
        );
        assert_eq!(QMGR_UNKNOWN.id(), "FRY8118E");
    }
}
