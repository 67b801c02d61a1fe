//! The rows of the message table, in number order.
//!
//! Families, as in MQ: 5xxx listener and channel events, 6xxx and 7xxx the queue
//! manager's storage (recovery log, queue files, object definitions) and configuration,
//! 8xxx control commands and MQSC responses, 9xxx channels and connections (and MQSC
//! responses MQ has no number for, FRY9002-FRY9006). The error log suppresses repeats of
//! the 9xxx family by default (ferry-server's `error_log::suppression`).
//!
//! To add a message: take MQ's number if MQ has the message, else a free number in its
//! family; insert the row in order (a compile-time check refuses a number out of order or
//! used twice); run `FERRY_BLESS=1 cargo test -p ferry-messages` to regenerate
//! docs/messages.md.

use crate::{Message, Severity};

macro_rules! catalogue {
    ($(
        $name:ident = $num:literal $sev:ident $text:literal,
            $expl:literal,
            $response:literal;
    )*) => {
        $(
            #[doc = $text]
            pub const $name: Message = Message {
                number: $num,
                severity: Severity::$sev,
                text: $text,
                explanation: $expl,
                response: $response,
            };
        )*
        /// Every message, in number order: for the docs, the checks and lookups by number.
        pub const ALL: &[&Message] = &[ $( &$name, )* ];
    };
}

catalogue! {
    // ---- 5xxx: listeners and channels start and end --------------------------------------
    LISTENER_STARTED = 5026 Info "The listener '{0}' has started. Port {1}.",
        "The listener accepts client connections.",
        "None.";
    LISTENER_ENDED = 5027 Info "The listener '{0}' has ended.",
        "The listener no longer accepts connections; existing ones continue.",
        "None.";
    BINDINGS_STARTED = 5028 Info "Local (bindings) connections are accepted at {0}.",
        "Applications on this host can connect through the Unix socket.",
        "None.";
    TRIGGER_MONITOR_STARTED = 5030 Info "Ferry trigger monitor started for queue manager '{0}' on initiation queue '{1}'.",
        "ferry trigmon (runmqtrm) has the initiation queue open for input: the queue manager makes trigger messages for the queues whose INITQ names it, and the monitor starts the applications their processes name.",
        "None.";
    TRIGGER_MONITOR_ENDED = 5031 Info "Ferry trigger monitor on initiation queue '{0}' ended ({1}).",
        "The trigger monitor stopped getting trigger messages: the queue manager is quiescing or stopping (2161, 2162), the connection ended, or it was sent SIGTERM or SIGINT.",
        "Start it again (ferry trigmon) when the queue manager runs again; trigger messages made meanwhile wait on the initiation queue, and queues holding messages trigger when it opens the queue.";
    TRIGGER_APPL_STARTED = 5032 Info "Trigger monitor starting application '{0}' for queue '{1}' (process '{2}').",
        "A trigger message arrived; the monitor runs APPLICID with the MQTMC2 structure as its argument, followed by ENVRDATA, through /bin/sh. It waits for the application unless ENVRDATA ends the command line with '&'.",
        "None.";
    TRIGGER_APPL_FAILED = 5033 Error "Trigger monitor could not start application '{0}' for queue '{1}': {2}.",
        "The shell could not run the command line made of the process's APPLICID, the MQTMC2 argument and ENVRDATA (the program does not exist or may not be run), as MQ's MQFB_APPL_CANNOT_BE_STARTED.",
        "Check the process's APPLICID (DISPLAY PROCESS) and that the user running the trigger monitor may run it.";
    TRIGGER_APPL_TYPE_UNSUPPORTED = 5034 Warning "Trigger monitor cannot start applications of type {0} (process '{1}', queue '{2}'); the trigger message was dropped.",
        "Ferry's trigger monitor starts processes of APPLTYPE(UNIX) (6). The process names another type, which another trigger monitor serves on MQ (MQFB_APPL_TYPE_ERROR).",
        "ALTER PROCESS(name) APPLTYPE(UNIX), or serve the initiation queue with a monitor for that type.";
    TRIGGER_MONITOR_FAILED = 5035 Error "Trigger monitor cannot open initiation queue '{0}' for input ({1}).",
        "ferry trigmon opens its initiation queue for input; the queue manager refused (2085: no such queue; 2035: not authorized; 2042: another application has it open exclusively).",
        "Name an existing local queue with --initq (runmqtrm -q), or define it: DEFINE QLOCAL(name) LIKE(SYSTEM.DEFAULT.INITIATION.QUEUE).";
    AMQP_CHANNEL_STARTED = 5041 Info "The AMQP channel '{0}' has started. Port {1}.",
        "AMQP 1.0 clients (Qpid JMS, proton, any AMQP 1.0 client) can connect to the port.",
        "None.";
    AMQP_CHANNEL_ENDED = 5042 Info "The AMQP channel '{0}' has ended.",
        "STOP CHANNEL or the end of the queue manager stopped the channel; its connections were closed.",
        "START CHANNEL restarts it.";
    LDAP_GROUPS_FAILED = 5531 Error "The groups of user id '{0}' from {1} on channel '{2}' cannot be read from the LDAP directory of AUTHINFO '{3}': {4}.",
        "QMGR CONNAUTH names an IDPWLDAP object with AUTHORMD other than OS, so users' groups for object authorities come from the directory, read when a user connects and remembered until REFRESH SECURITY. They could not be read, so the connection was refused with 2035 MQRC_NOT_AUTHORIZED (AMQP: amqp:unauthorized-access) rather than checked without them.",
        "Check that the directory answers at CONNAME, that LDAPUSER may search BASEDNU and BASEDNG, and that the user id names one entry; DISPLAY AUTHINFO shows the settings. Administrators connect without the directory.";
    LDAP_TLS_UNUSABLE = 5532 Error "TLS to the LDAP directory of AUTHINFO '{0}' (SECCOMM) cannot be set up: {1}",
        "SECCOMM(YES) or SECCOMM(ANON) asks for LDAP over TLS, and the key repository does not give what it needs: trust.pem with the CA of the directory's certificate (and, for YES, the queue manager's certificate, presented when the directory asks). Until it does, the directory is never asked, rather than asked in clear text: passwords and LDAP groups cannot be checked and such connections are refused.",
        "Put the directory's CA in trust.pem in the key repository (DISPLAY QMGR SSLKEYR), then REFRESH SECURITY TYPE(CONNAUTH).";
    CONNAUTH_FAILED = 5534 Error "User id '{0}' from {1} on channel '{2}' failed authentication: {3}.",
        "The connection gave a user id and password (MQCSP, or AMQP SASL PLAIN) and the check failed; it was refused with 2035 MQRC_NOT_AUTHORIZED (AMQP: amqp:unauthorized-access) after the AUTHINFO's FAILDLAY. The password is never written anywhere.",
        "Check the user id and password the application uses; ferry user list QM shows the users of the repository.";
    CONNAUTH_MISSING = 5540 Error "Application '{0}' from {1} on channel '{2}' gave no user id and password, which CHCKCLNT({4}) requires for user id '{5}' (AUTHINFO '{3}', tightened by the CHLAUTH record that admitted it).",
        "CHCKCLNT(REQUIRED), or REQDADM for an administrator (or the CHLAUTH record's CHCKCLNT), demands credentials; the connection was refused with 2035 MQRC_NOT_AUTHORIZED after FAILDLAY.",
        "Have the application give a user id and password (MQCSP; JMS createConnection(user, password)), or relax CHCKCLNT if that is intended.";

    WEB_SERVER_STARTED = 5541 Info "The web server of queue manager '{0}' has started: {1} on {2}.",
        "qm.ini WebServer/Port names a port: the health endpoints (/healthz, /readyz) and the REST API (/ibmmq/rest/v2/...) are served there, over HTTPS when WebServer/SSL=YES.",
        "None.";
    STATISTICS_RESET = 5570 Info "Reset Queue Manager accepted.",
        "RESET QMGR TYPE(STATISTICS): the statistics interval ends within a second; its statistics messages (those STATMQI and STATQ ask for) are put to SYSTEM.ADMIN.STATISTICS.QUEUE and the next interval starts from zero.",
        "None.";
    TRACING_STARTED = 5590 Info "Queue manager '{0}' exports trace spans over OTLP to {1} (sampler {2}).",
        "qm.ini Tracing/Endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT) names an OpenTelemetry collector: the queue manager makes spans for puts, gets, commits and channel transfers of the messages its sampler chooses and sends them over OTLP/HTTP from a thread of its own (docs/operations.md, Tracing).",
        "None.";
    TRACING_EXPORT_FAILED = 5591 Warning "Trace spans of queue manager '{0}' could not be exported to {1}: {2} ({3} exports failed since the last warning).",
        "The OpenTelemetry collector did not take a batch of spans (it is not running, not reachable, or refused them). Messaging is not affected: spans wait in a bounded queue and are dropped when it is full. This warning is written at most once a minute.",
        "Start or reach the collector at Tracing/Endpoint, or set Tracing/Sampler=off (or empty the Endpoint) to stop tracing at the next start.";
    TRACING_NOT_STARTED = 5592 Error "Tracing for queue manager '{0}' could not be set up: {1}. Messaging carries on without it.",
        "The OTLP exporter refused its configuration, most often an Endpoint that is not a URL.",
        "Correct Tracing/Endpoint in qm.ini (e.g. http://localhost:4318) and restart the queue manager.";
    // ---- 6xxx, 7xxx: storage and configuration -------------------------------------------
    LOG_SLOW_IO = 6729 Warning "A log {0} operation of {1} bytes on {2} took {3} microseconds, longer than the threshold of {4} microseconds ({5} slow operations since the last warning).",
        "A read (R) or write/sync (W) of the recovery log was slower than AMQ_IODELAY (microseconds; milliseconds with AMQ_IODELAY_INMS=YES). Persistent messaging waits for the log, so it slows down too. Warnings are written at most once a minute.",
        "Check the storage under LogPath: other load, a failing device, or a throttled volume.";
    CONFIG_ERROR = 7028 Error "The configuration of queue manager '{0}' is not valid: {1}",
        "qm.ini or the object definitions could not be used.",
        "Correct the file named and start again.";
    OBJECTS_SAVE_FAILED = 7075 Error "Object definitions could not be saved: {0}",
        "A change to the definitions could not be written to objects.journal (or a background compaction could not write a new objects.json). The command that made the change was told it failed (2102 MQRC_RESOURCE_PROBLEM); the change is in effect in memory, and the writer retries once a second by writing a whole new objects.json.",
        "Free disk space or fix permissions in the queue manager's directory.";
    MESSAGES_SUPPRESSED = 7185 Warning "{0} repeated {1} in the last {2} s ({3}).",
        "Message {0} is suppressed: after its first entry, repeats with the same cause within QMErrorLog/SuppressInterval are counted instead of written, so that a flood (often one client sending bad data or connecting again and again) cannot push the history out of the error log or fill the console log. This entry closes the interval with the count. The channel and connection messages (FRY9xxx) are suppressed by default; QMErrorLog/SuppressMessage adds others. (MQ suppresses without a count; it has no such message.)",
        "Read the first {0} entry before this one for the details, and correct or stop the client that causes it.";
    LOG_RECOVERED = 7233 Info "Queue manager '{0}' recovered from its log: {1} records replayed, {2} persistent messages restored, {3} in-flight units of work backed out.",
        "Restart recovery replayed the recovery log from the last checkpoint.",
        "None.";
    QUEUE_FILES_LOADED = 7234 Info "Queue manager '{0}' loaded {1} persistent messages from its queue files ({2} queues).",
        "At restart the messages that stayed on queues are read back from their queue files before the recovery log is replayed.",
        "None.";
    CLUSTER_XMITQ_SWITCHED = 7341 Info "The transmission queue for channel '{0}' is '{1}': {2} waiting messages were moved from '{3}'.",
        "The cluster-sender channel started with the transmission queue QMGR DEFCLXQ asks for (CHANNEL: SYSTEM.CLUSTER.TRANSMIT.<channel>, made from SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE; SCTQ: SYSTEM.CLUSTER.TRANSMIT.QUEUE), and the messages waiting for it on the other were moved to it.",
        "None.";
    LOG_FULL = 7463 Warning "The log for queue manager '{0}' is full: {1}",
        "A persistent operation could not be logged because the circular log has no free space; it failed with 2102 MQRC_RESOURCE_PROBLEM.",
        "Commit or back out long-running units of work, get messages off deep queues, or make the log bigger (LogPrimaryFiles, LogFilePages) with a new queue manager.";
    LOG_FAILED = 7466 Error "The recovery log of queue manager '{0}' failed: {1}",
        "A log write or sync failed; nothing more can be made durable. Persistent work fails with 2102 MQRC_RESOURCE_PROBLEM; non-persistent work continues.",
        "Correct the storage problem (space, permissions, device errors), then restart the queue manager: restart recovery replays the log as it is on disk.";
    LOG_OPEN_FAILED = 7467 Error "The recovery log of queue manager '{0}' could not be used: {1}",
        "The log under LogPath could not be created, opened or recovered; the queue manager does not start, so no persistent message is lost or duplicated.",
        "Correct the problem named (space, permissions, a damaged log) and start again.";
    QUEUE_FILE_FAILED = 7468 Error "A queue file of queue manager '{0}' could not be written: {1}",
        "A checkpoint could not write or sync a queue file (disk full, permissions, device error). Checkpoints stop until restart, so the recovery log fills and persistent puts then fail with 2102 MQRC_RESOURCE_PROBLEM. Nothing acknowledged is lost: the log still holds it.",
        "Correct the storage problem, then restart the queue manager: recovery rebuilds the queue files from the log.";
    QUEUE_FILE_TORN = 7469 Warning "The queue file of queue '{0}' ended in an unfinished write: {1} bytes of changes not yet synced were dropped ({2}).",
        "The queue manager stopped while a checkpoint was writing the file; the recovery log still holds those changes and replays them.",
        "None.";
    QUEUE_FILE_READ_FAILED = 7470 Error "A message on queue '{0}' could not be read back from its queue file: {1}",
        "The body of a message kept on disk beyond the queue's buffer (DefaultPQBufferSize, DefaultQBufferSize) could not be read, or failed its checks. The get failed with 2102 MQRC_RESOURCE_PROBLEM (a read error) or 2195 MQRC_UNEXPECTED_ERROR (damage) and the message stays on the queue: nothing damaged is delivered. Each message is reported once.",
        "Check the device and the file named. Messages past it can still be got by MsgId or CorrelId. A restart checks every queue file before serving.";
    UOW_BACKED_OUT_FOR_LOG_SPACE = 7471 Warning "Queue manager '{0}' backed out the unit of work of connection {1} ({2} bytes of persistent messages) to release log space.",
        "The recovery log was full and the oldest unit of work in flight held a large part of it: every checkpoint carries its records, so only ending it frees them. Its messages were released as by MQBACK; the application's next MQCMIT fails with 2003 MQRC_BACKED_OUT. (MQ reports this as AMQ7469.)",
        "Commit units of work sooner or make them smaller, or give the log more space (LogPrimaryFiles, LogFilePages).";
    OBJECTS_DAMAGED = 7472 Error "The object definitions of queue manager '{0}' cannot be used: {1}",
        "objects.json (the snapshot of the definitions) or objects.journal (the changes since) is damaged, missing or does not match the other; the queue manager does not start rather than start with definitions lost. See docs/internals/catalogue.md.",
        "Restore both files from a backup taken together. To start from objects.json alone, accepting the loss of the changes in the journal, remove its \"generation\" line and objects.journal.";
    OBJECTS_CONVERTED = 7473 Info "The object definitions of queue manager '{0}' were converted to a snapshot and a journal ({1} queues).",
        "objects.json was in the format of earlier Ferry releases (rewritten whole on every change); it now holds a generation and changes go to objects.journal.",
        "None.";
    OBJECTS_TORN = 7474 Warning "The definitions journal of queue manager '{0}' ended in an unfinished write: {1} bytes dropped ({2}).",
        "The queue manager stopped while a change to the definitions was being written; that change was never acknowledged, so the command that made it was not told it succeeded.",
        "None; check with DISPLAY that the definitions are as expected.";
    BACKOUT_REQUEUE_FAILED = 7475 Warning "A message on queue '{0}' reached its backout threshold (BOTHRESH) but could be moved neither to its backout queue nor to the dead-letter queue ({1}); it stays on '{0}'.",
        "The queue manager moves a message backed out BOTHRESH times to the queue's BOQNAME, or to the dead-letter queue (DEADQ) with a dead-letter header when that is not possible, for every protocol. Neither was possible: the message stays on its queue, where it will be offered again. Reported once per queue while the queue manager runs.",
        "Define BOQNAME on the queue or DEADQ on the queue manager, and check that the queue named can take the message (PUT(ENABLED), MAXDEPTH, MAXMSGL). Then remove or process the message.";
    REPORT_DISCARDED = 7476 Warning "A report message (feedback {2}) for reply-to queue '{0}' on queue manager '{1}' could be put neither there nor to the dead-letter queue ({3}); it was discarded.",
        "The queue manager makes the report messages a message asks for in its Report field (confirm on arrival, confirm on delivery, expiration, exception) and puts them to the message's ReplyToQ. That queue could not take the report (it does not exist, is put-inhibited or full, or is on another queue manager, which Ferry cannot reach), and the dead-letter queue (DEADQ) was not defined or could not take it either. The message the report is about was not affected.",
        "Check the ReplyToQ the sending application names, define it, or define DEADQ on the queue manager so that undeliverable reports are kept.";
    SCHEDULING_NOT_SET = 7477 Warning "The connection thread of queue manager '{0}' could not be given the scheduling policy {1} (qm.ini TuningParameters RuntimeScheduling): {2}. It runs with the system's default policy.",
        "The operating system refused to change the thread's scheduling policy (a seccomp profile or a platform without it). Messaging works as before; the queue manager may use more CPU per message when applications keep the CPUs busy.",
        "Allow sched_setscheduler for the process, or set RuntimeScheduling=NORMAL to stop the attempt.";
    CHLAUTH_ADDED = 7478 Warning "The definitions of queue manager '{0}' predate channel authentication records: MQ's default records were added, and CHLAUTH is DISABLED so that the queue manager admits what it admitted before.",
        "A queue manager created by an earlier Ferry had no CHLAUTH records. As MQ does for a migrated queue manager, the default records (no remote access to SYSTEM.* channels, privileged user ids blocked on every channel) were added but are not enforced.",
        "Review the records (DISPLAY CHLAUTH(*)), add the ones your applications need, then ALTER QMGR CHLAUTH(ENABLED).";
    CONNAUTH_ADDED = 7479 Warning "The definitions of queue manager '{0}' predate connection authentication: AUTHINFO SYSTEM.DEFAULT.AUTHINFO.IDPWOS was added, and CONNAUTH is blank, so that no connection is asked for a password it was not asked for before.",
        "A queue manager created by an earlier Ferry had no AUTHINFO objects. As MQ does for a migrated queue manager, the default object exists but is not used.",
        "Add users (ferry user add), then ALTER QMGR CONNAUTH(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) and REFRESH SECURITY TYPE(CONNAUTH).";
    USER_REPOSITORY_ERROR = 7480 Error "The user repository {0} cannot be used: {1}",
        "The file of user ids and password hashes (written by ferry user) does not read; at start the queue manager has no users (every password check fails), at REFRESH SECURITY TYPE(CONNAUTH) the repository in use stays.",
        "Correct or rewrite the file with ferry user, then REFRESH SECURITY TYPE(CONNAUTH).";
    CONNAUTH_OBJECT_MISSING = 7481 Warning "QMGR CONNAUTH names '{0}', which is not an AUTHINFO object: user ids and passwords are not checked.",
        "CONNAUTH must name an AUTHINFO AUTHTYPE(IDPWOS) object for passwords to be checked; until it does, connections are let in without a check.",
        "DEFINE the object or ALTER QMGR CONNAUTH to an existing one, then REFRESH SECURITY TYPE(CONNAUTH).";
    AUTHORITY_CHECKS_OFF = 7482 Warning "Object authority checks are off for queue manager '{0}': its qm.ini has no AuthorizationService.",
        "Without the qm.ini Service stanza that names the AuthorizationService (a queue manager created with MQSNOAUT=yes, or by a Ferry from before authority records), every user that connects may open every object, as with MQ's MQSNOAUT. Authority records are kept and shown but not enforced.",
        "Grant what applications need (SET AUTHREC, ferry setmqaut), then add the stanza that ferry create writes (Service: Name=AuthorizationService) to qm.ini and restart the queue manager.";
    TOPICS_ADDED = 7483 Info "The definitions of queue manager '{0}' predate topic objects: SYSTEM.BASE.TOPIC and SYSTEM.DEFAULT.TOPIC were added, and the model queues SYSTEM.DURABLE.MODEL.QUEUE and SYSTEM.NDURABLE.MODEL.QUEUE where they were missing.",
        "A queue manager created by an earlier Ferry had no topic objects. The objects a new queue manager has were added once, with MQ's shipped values: SYSTEM.BASE.TOPIC is the root of the topic tree, where ASPARENT ends, and SYSTEM.DEFAULT.TOPIC the template DEFINE TOPIC starts from.",
        "None. DISPLAY TOPIC(*) ALL shows them.";
    SUBSCRIPTION_NOT_RESTORED = 7484 Error "Durable subscription '{0}' of queue manager '{1}' was not restored: {2}.",
        "A durable subscription saved in the catalogue could not be made again at start: its selector no longer compiles, or another subscription has its name. It receives no publications; its queue and the messages on it are kept.",
        "Delete the subscription's queue if it is no longer wanted, and make the subscription again with MQSUB or DEFINE SUB.";
    TRIGGER_MESSAGE_DISCARDED = 7485 Warning "A trigger message for queue '{0}' could be put neither on its initiation queue '{1}' nor on the dead-letter queue ({2}); it was discarded.",
        "A trigger event happened on the queue, but its initiation queue (INITQ) could not take the trigger message (it is full, put-inhibited or was deleted), and the dead-letter queue (DEADQ) was not defined or could not take it either. The application or channel the trigger message would have started was not started.",
        "Make room on the initiation queue or enable puts on it, or define DEADQ. The queue triggers again at its next trigger event (for TRIGTYPE(FIRST): when the trigger monitor opens the initiation queue again, or when TRIGGER is set on again).";

    // ---- 8xxx: control commands and MQSC responses ---------------------------------------
    QMGR_CREATED = 8001 Info "Ferry queue manager '{0}' created.",
        "The queue manager, its directory, qm.ini and system objects were created.",
        "Start it with 'ferry start {0}'.";
    QMGR_DELETED = 8002 Info "Ferry queue manager '{0}' deleted.",
        "The queue manager and all its data were removed.",
        "None.";
    QMGR_STARTED = 8003 Info "Ferry queue manager '{0}' started using Ferry {1}.",
        "The queue manager is running and accepts connections.",
        "None.";
    QMGR_ENDED = 8004 Info "Ferry queue manager '{0}' ended.",
        "The queue manager stopped.",
        "None.";
    QMGR_CHANGED = 8005 Info "Ferry queue manager changed.",
        "ALTER QMGR changed the queue manager's attributes.",
        "None.";
    QUEUE_CREATED = 8006 Info "Ferry queue created.",
        "DEFINE QLOCAL, QALIAS or QMODEL created the queue (or replaced it, with REPLACE).",
        "None.";
    QUEUE_DELETED = 8007 Info "Ferry queue deleted.",
        "DELETE of a queue removed it (with its messages, if PURGE was given).",
        "None.";
    QUEUE_CHANGED = 8008 Info "Ferry queue changed.",
        "ALTER of a queue changed its attributes.",
        "None.";
    PROCESS_CREATED = 8010 Info "Ferry process created.",
        "DEFINE PROCESS stored the process definition. Queues whose PROCESS names it put its APPLTYPE, APPLICID, ENVRDATA and USERDATA in their trigger messages.",
        "None.";
    PROCESS_CHANGED = 8011 Info "Ferry process changed.",
        "ALTER PROCESS stored the change; the next trigger message of a queue naming the process carries it.",
        "None.";
    CHANNEL_RESOLVED = 8012 Info "Ferry channel resolved.",
        "RESOLVE CHANNEL settled the sending end's in-doubt batch: COMMIT removed its messages from the transmission queue, BACKOUT left them to be sent again. The error log (FRY9548I) says how many messages the batch had.",
        "None. START CHANNEL sends what the transmission queue holds.";
    PROCESS_DELETED = 8013 Info "Ferry process deleted.",
        "DELETE PROCESS removed the process definition. A queue whose PROCESS still names it makes no trigger messages (unless it is a transmission queue) until the process is defined again.",
        "None.";
    CHANNEL_CREATED = 8014 Info "Ferry channel created.",
        "DEFINE CHANNEL created the channel (or replaced it, with REPLACE).",
        "None.";
    CHANNEL_DELETED = 8015 Info "Ferry channel deleted.",
        "DELETE CHANNEL removed the channel definition.",
        "None.";
    CHANNEL_CHANGED = 8016 Info "Ferry channel changed.",
        "ALTER CHANNEL changed the channel's attributes; running instances keep the old ones until they end.",
        "None.";
    START_CHANNEL_ACCEPTED = 8018 Info "Start Ferry channel accepted.",
        "START CHANNEL was accepted: the channel opens its port; FRY5041I or FRY9213E in the error log says whether it could.",
        "Check the channel with DISPLAY CHSTATUS.";
    STOP_CHANNEL_ACCEPTED = 8019 Info "Stop Ferry channel accepted.",
        "STOP CHANNEL was accepted: the channel closes its port and its connections.",
        "None.";
    PING_CHANNEL_COMPLETE = 8020 Info "Ping Ferry channel complete.",
        "PING CHANNEL reached the partner queue manager, which has a receiving channel of that name and echoed the data sent. No message moved and neither end's synchronisation record changed.",
        "None.";
    START_LISTENER_ACCEPTED = 8021 Info "Request to start Ferry listener accepted.",
        "START LISTENER was accepted: the listener binds its port; FRY5026I or FRY9212E in the error log says whether it could.",
        "Check the listener with DISPLAY LSSTATUS.";
    QUEUE_CLEARED = 8022 Info "Ferry queue cleared.",
        "CLEAR QLOCAL removed every message from the queue.",
        "None.";
    CHANNEL_RESET = 8023 Info "Ferry channel reset.",
        "RESET CHANNEL took the sequence number: the next start of the sending channel tells the partner, and both ends take it as the last committed sequence number.",
        "START CHANNEL (or the next trigger) starts the channel with it.";
    QMGR_STARTING = 8024 Info "Ferry queue manager '{0}' starting.",
        "The queue manager is restoring its objects and opening its listeners.",
        "None.";
    QMGR_QUIESCE_ACCEPTED = 8025 Info "Quiesce request accepted. Ferry queue manager '{0}' will end when all applications have disconnected.",
        "A controlled stop was requested: new connections are refused, connected applications may finish.",
        "Use 'ferry stop --immediate {0}' to end connected applications now.";
    QMGR_ENDING_IMMEDIATE = 8026 Info "Ferry queue manager '{0}' ending immediately.",
        "An immediate stop was requested: applications are disconnected and uncommitted work backed out.",
        "None.";
    QMGR_RUNNING = 8041 Error "Ferry queue manager '{0}' is running (pid {1}).",
        "The request needs the queue manager to be stopped, or it is already running.",
        "Stop it with 'ferry stop {0}' first.";
    NOT_AUTHORIZED_OBJECT = 8077 Warning "Entity '{0}' has insufficient authority to access object '{1}' of type {2}: it lacks {3}.",
        "An MQCONN, MQOPEN or MQPUT1 was refused with 2035 MQRC_NOT_AUTHORIZED: no authority record of the user or of its groups grants what the call asked for (for MQCONN, CONNECT on the queue manager; for an open, what its options ask for on the object as named). Administrators (root, the queue manager's owner, the mqm group) hold every authority.",
        "If the application should have it, grant it: SET AUTHREC PROFILE('{1}') OBJTYPE({2}) PRINCIPAL('{0}') AUTHADD(...), or ferry setmqaut; DISPLAY ENTAUTH shows what the user holds.";
    SUB_CREATED = 8094 Info "Ferry subscription created.",
        "DEFINE SUB made the administrative subscription (SUBTYPE(ADMIN)), durable and saved with the queue manager's definitions; publications it matches are copied to its DEST from now on, and the retained ones it matches were put there already (unless REQONLY(YES)).",
        "None.";
    SUB_CHANGED = 8095 Info "Ferry subscription changed.",
        "ALTER SUB (or DEFINE SUB REPLACE of an existing subscription) stored the change; copies of the publications that follow use it.",
        "None.";
    DISPLAY_SUB = 8096 Info "Display subscription details.",
        "DISPLAY SUB: one block per subscription (MQ: subscription inquired).",
        "None.";
    SUB_DELETED = 8097 Info "Ferry subscription deleted.",
        "DELETE SUB removed the subscription; a managed one's queue went with it, messages included.",
        "None.";
    DISPLAY_SBSTATUS = 8099 Info "Display subscription status details.",
        "DISPLAY SBSTATUS: one block per subscription, with what it has received since the queue manager started.",
        "None.";
    GENERAL_ERROR = 8101 Severe "Ferry error ({0}) has occurred: {1}.",
        "A command failed with MQ reason code {0}, for the reason given.",
        "Look up the reason code, correct the cause, and run the command again. For 2102 MQRC_RESOURCE_PROBLEM, read the error log (FRYERR01.LOG) for the storage problem behind it.";
    QMGR_START_FAILED = 8102 Error "Ferry queue manager '{0}' could not start: {1}",
        "The queue manager process ended during start-up.",
        "Correct the problem named and start it again; its console output is in {2}.";
    QMGR_EXISTS = 8110 Error "Ferry queue manager '{0}' already exists.",
        "A queue manager of that name is already in this data root.",
        "Choose another name or delete it first.";
    QMGR_NAME_INVALID = 8117 Error "'{0}' is not a valid queue manager name: {1}",
        "Queue manager names are 1 to 48 characters from A-Z a-z 0-9 . / _ %.",
        "Choose a valid name.";
    QMGR_UNKNOWN = 8118 Error "Ferry queue manager '{0}' does not exist.",
        "No queue manager of that name was found under {1}.",
        "Check the name and FERRY_HOME, or create it with 'ferry create {0}'.";
    NOT_AUTHORIZED_COMMAND = 8135 Error "Not authorized.",
        "The user running the command lacks the authority it needs on the object (DSP to display, CHG to alter, CRT on @class to define, DLT to delete, CLR to clear, CTRL or CTRLX to control channels and listeners); the error log has an FRY8077W entry naming it.",
        "Run it as an administrator, or grant the authority with SET AUTHREC.";
    QUEUE_NOT_EMPTY = 8143 Error "Ferry queue {0} not empty.",
        "DELETE of a local queue that holds messages was refused: deleting it would discard them.",
        "Get or clear the messages first (CLEAR QLOCAL), or delete with PURGE.";
    QMGR_NOT_RUNNING = 8146 Error "Ferry queue manager '{0}' is not available.",
        "The queue manager is not running.",
        "Start it with 'ferry start {0}'.";
    OBJECT_NOT_FOUND = 8147 Error "Ferry object {0} not found.",
        "No object of that name and type is defined (or the generic name matched none).",
        "Check the name and the object type, or DEFINE the object.";
    OBJECT_IN_USE = 8148 Error "Ferry object {0} in use.",
        "The object is open by an application, or running, so the command cannot change or delete it now.",
        "Wait until the applications close it (DISPLAY QSTATUS TYPE(HANDLE) shows who has it open), stop it, or use FORCE where the command allows it.";
    OBJECT_EXISTS = 8150 Error "Ferry object {0} already exists.",
        "DEFINE named an object that exists (without REPLACE), or one of another type of the same name.",
        "Use REPLACE, ALTER the object, or choose another name.";
    CHANNEL_PING_FAILED = 8161 Error "Ping of channel '{0}' failed: {1}",
        "PING CHANNEL could not complete its exchange with the partner: the reason says whether the partner could not be reached, refused the channel (no receiving channel of that name, stopped, TLS settings), or did not echo the data.",
        "Correct what the reason names (CONNAME, the partner's listener and channel definition, SSLCIPH at both ends) and ping again.";
    CHANNEL_RESET_REFUSED = 8162 Error "Channel '{0}' cannot be reset: {1}",
        "RESET CHANNEL applies to a sending channel that is not running and has no batch in doubt: a batch in doubt must be resolved first, or its messages could be lost or sent twice.",
        "Stop the channel first; with a batch in doubt, RESOLVE CHANNEL it (compare the partner's LSTLUWID with this end's CURLUWID), then reset.";
    CHANNEL_RESOLVE_REFUSED = 8163 Error "Channel '{0}' cannot be resolved: {1}",
        "RESOLVE CHANNEL applies to a sending channel that is not running and whose synchronisation record names a batch in doubt.",
        "Stop the channel first; when nothing is in doubt there is nothing to resolve: START CHANNEL resynchronises with the partner by itself.";
    DISPLAY_CONNECTION = 8276 Info "Display Connection details.",
        "The header of each connection DISPLAY CONN shows.",
        "None.";
    SYNTAX_ERROR = 8405 Info "Syntax error detected at or near end of command segment below:-",
        "The MQSC command could not be parsed; the command up to the word in error follows, then FRY9405E with the reason.",
        "Correct the command (docs/mqsc.md lists the commands and attributes) and run it again.";
    DISPLAY_PROCESS = 8407 Info "Display process details.",
        "DISPLAY PROCESS: one block per process definition.",
        "None.";
    DISPLAY_QMGR = 8408 Info "Display Queue Manager details.",
        "The header of DISPLAY QMGR's answer.",
        "None.";
    DISPLAY_QUEUE = 8409 Info "Display Queue details.",
        "The header of each queue DISPLAY QUEUE (QLOCAL, QALIAS, QMODEL) shows.",
        "None.";
    DISPLAY_CHANNEL = 8414 Info "Display Channel details.",
        "The header of each channel DISPLAY CHANNEL shows.",
        "None.";
    PING_COMPLETE = 8415 Info "Ping Ferry queue manager command complete.",
        "PING QMGR: the queue manager's command server answered.",
        "None.";
    DISPLAY_CHANNEL_STATUS = 8417 Info "Display Channel Status details.",
        "The header of each channel instance DISPLAY CHSTATUS shows.",
        "None.";
    STATUS_NOT_FOUND = 8420 Info "{0} Status not found.",
        "DISPLAY QSTATUS or DISPLAY CHSTATUS found no status to show: the queue is not open, or the channel has no running instance.",
        "None, if that is expected.";
    DISPLAY_CLUSTER_QMGR = 8441 Info "Display Cluster Queue Manager details.",
        "The header of each cluster queue manager DISPLAY CLUSQMGR shows: those this queue manager knows of its clusters (a full repository knows every member), its own CLUSRCVR entry, and its manual CLUSSDRs.",
        "None.";
    CLUSTER_SUSPENDED = 8445 Info "Suspend Queue Manager Cluster accepted.",
        "SUSPEND QMGR CLUSTER changed this queue manager's record in the cluster; the other members hear of it through the full repositories and send to it only when no other instance will do.",
        "RESUME QMGR CLUSTER to take a full share again.";
    CLUSTER_RESUMED = 8446 Info "Resume Queue Manager Cluster accepted.",
        "RESUME QMGR CLUSTER changed this queue manager's record in the cluster; the other members hear of it through the full repositories.",
        "None.";
    CLUSTER_REFRESHED = 8447 Info "Refresh Cluster accepted.",
        "REFRESH CLUSTER REPOS(NO): this queue manager forgot what other members told it of the cluster, but for the full repositories, and asked them for everything again; it is learnt again within seconds while the channels run.",
        "None.";
    CLUSTER_RESET = 8448 Info "Reset Cluster accepted.",
        "RESET CLUSTER ACTION(FORCEREMOVE): this full repository withdrew the queue manager and its queues from the cluster and tells every member. The queue manager is back when it next publishes a change of its own.",
        "Delete or correct the removed queue manager's cluster channels so it does not publish again.";
    DISPLAY_QUEUE_STATUS = 8450 Info "Display queue status details.",
        "The header of each record DISPLAY QSTATUS shows.",
        "None.";
    DISPLAY_NAMELIST = 8550 Info "Display namelist details.",
        "DISPLAY NAMELIST: one block per namelist, NAMCOUNT the number of names.",
        "None.";
    NAMELIST_CHANGED = 8551 Info "Ferry namelist changed.",
        "ALTER NAMELIST stored the change. Cluster objects that name it (QMGR REPOSNL, CLUSNL of queues and cluster channels) follow it from the cluster repository's next round.",
        "None.";
    NAMELIST_CREATED = 8552 Info "Ferry namelist created.",
        "DEFINE NAMELIST stored the namelist (or replaced it, with REPLACE).",
        "None.";
    NAMELIST_DELETED = 8553 Info "Ferry namelist deleted.",
        "DELETE NAMELIST removed the namelist.",
        "None.";
    SECURITY_REFRESHED = 8560 Info "Security refreshed: {0}.",
        "REFRESH SECURITY reloaded what it names. TYPE(SSL): the key repository was read again; new TLS handshakes use its certificates and CAs, and conversations already connected carry on with the keys they agreed. TYPE(CONNAUTH): the AUTHINFO object QMGR CONNAUTH names and the user repository were read again, for the connections that follow. TYPE(AUTHSERV): group memberships remembered were forgotten.",
        "None.";
    AUTHINFO_CREATED = 8563 Info "Ferry authentication information object created.",
        "DEFINE AUTHINFO stored the object; QMGR CONNAUTH names the one that checks passwords.",
        "None.";
    AUTHINFO_CHANGED = 8564 Info "Ferry authentication information object changed.",
        "ALTER AUTHINFO stored the change. The object QMGR CONNAUTH names is read again at REFRESH SECURITY TYPE(CONNAUTH), as in MQ.",
        "REFRESH SECURITY TYPE(CONNAUTH) to use it.";
    AUTHINFO_DELETED = 8565 Info "Ferry authentication information object deleted.",
        "DELETE AUTHINFO removed the object.",
        "None.";
    DISPLAY_AUTHINFO = 8566 Info "Display authentication information details.",
        "DISPLAY AUTHINFO: one block per object.",
        "None.";
    LISTENER_CREATED = 8626 Info "Ferry listener object created.",
        "DEFINE LISTENER created the listener (or replaced it, with REPLACE).",
        "Start it with START LISTENER, or set CONTROL(QMGR) to start it with the queue manager.";
    LISTENER_CHANGED = 8627 Info "Ferry listener object changed.",
        "ALTER LISTENER changed the listener's attributes; a running listener keeps its port until it is restarted.",
        "None.";
    LISTENER_DELETED = 8628 Info "Ferry listener object deleted.",
        "DELETE LISTENER removed the listener definition.",
        "None.";
    DISPLAY_LISTENER = 8630 Info "Display listener information details.",
        "The header of each listener DISPLAY LISTENER shows.",
        "None.";
    DISPLAY_LISTENER_STATUS = 8631 Info "Display listener status details.",
        "The header of each running listener DISPLAY LSSTATUS shows.",
        "None.";
    DISPLAY_TOPIC = 8633 Info "Display topic details.",
        "DISPLAY TOPIC: one block per topic object, with its attributes as defined (ASPARENT as ASPARENT, not the value it resolves to).",
        "None.";
    TOPIC_CREATED = 8690 Info "Ferry topic object created.",
        "DEFINE TOPIC stored the object (or replaced it, with REPLACE): the node of its TOPICSTR is now administrative, and ASPARENT below it resolves through it.",
        "None.";
    TOPIC_CHANGED = 8691 Info "Ferry topic object changed.",
        "ALTER TOPIC stored the change; publications and subscriptions from now on use it.",
        "None.";
    TOPIC_DELETED = 8692 Info "Ferry topic object deleted.",
        "DELETE TOPIC removed the object; its node resolves ASPARENT through its ancestors again (through SYSTEM.BASE.TOPIC's shipped values when that object was the one deleted).",
        "None.";
    DISPLAY_QMGR_STATUS = 8705 Info "Display Queue Manager Status Details.",
        "The header of DISPLAY QMSTATUS's answer.",
        "None.";
    DISPLAY_PUBSUB = 8723 Info "Display pub/sub status details.",
        "DISPLAY PUBSUB: the publish/subscribe engine of this queue manager (Ferry has no hierarchies, so TYPE(LOCAL) is the only one there is).",
        "None.";
    LISTENER_NOT_ACTIVE = 8730 Info "Listener {0} not active.",
        "DISPLAY LSSTATUS or STOP LISTENER named a listener that is not running.",
        "None, or start it with START LISTENER.";
    STOP_LISTENER_ACCEPTED = 8731 Info "Request to stop Ferry listener accepted.",
        "STOP LISTENER was accepted: the listener frees its port; existing connections continue.",
        "None.";
    DISPLAY_TPSTATUS = 8754 Info "Display topic status details.",
        "DISPLAY TPSTATUS: one block per node of the topic tree (TYPE(TOPIC)), per subscription on one (TYPE(SUB)) or per handle open for publishing on one (TYPE(PUB)).",
        "None.";
    TOPIC_STRING_CLEARED = 8770 Info "Topic string '{0}' cleared: {1}.",
        "CLEAR TOPICSTR CLRTYPE(RETAINED) removed the retained publication of that topic string; it succeeds when there was none, as in MQ. Subscriptions made from now on get no retained copy of it.",
        "None.";
    AUTHREC_SET = 8862 Info "Authority record set.",
        "SET AUTHREC (or ferry setmqaut) changed the record; MQCONN and MQOPEN from now on meet it (handles already open keep what they were granted).",
        "None.";
    AUTHREC_DELETED = 8863 Info "Authority record deleted.",
        "DELETE AUTHREC removed the record.",
        "None.";
    DISPLAY_AUTHREC = 8864 Info "Display authority record details.",
        "DISPLAY AUTHREC: one block per record.",
        "None.";
    AUTHREC_NOT_FOUND = 8865 Error "Authority record not found.",
        "DELETE AUTHREC names a record that does not exist, or DISPLAY AUTHREC matches none.",
        "DISPLAY AUTHREC lists every record.";
    DISPLAY_ENTAUTH = 8866 Info "Display entity authority details.",
        "DISPLAY ENTAUTH: what the entity may do to the object, from its own records and those of its groups.",
        "None.";
    AUTHREC_INVALID = 8867 Error "The authority record is not valid: {0}.",
        "SET, DELETE or DISPLAY AUTHREC (or a control command) was refused for the reason given; nothing was changed.",
        "Correct the command and issue it again.";
    UNKNOWN_ENTITY = 8868 Error "Entity '{0}' is not known: there is no such {1}.",
        "An authority record names a user that is neither in the queue manager's user repository nor on the host, or a group no user of either belongs to (MQRC_UNKNOWN_ENTITY, 2292). With groups from an LDAP directory (AUTHINFO AUTHORMD other than OS) any name is taken and this is not answered.",
        "Add the user (ferry user add, useradd) or the group first, or correct the name.";
    CHLAUTH_SET = 8877 Info "Channel authentication record set.",
        "SET CHLAUTH added, replaced or removed the record; connections from now on meet it.",
        "None.";
    DISPLAY_CHLAUTH = 8878 Info "Display channel authentication record details.",
        "DISPLAY CHLAUTH: one block per record.",
        "None.";
    CHLAUTH_NOT_FOUND = 8884 Error "Channel authentication record not found.",
        "No record matches: SET CHLAUTH ACTION(REMOVE) names none that exists, DISPLAY CHLAUTH names no profile that has records, or MATCH(RUNCHECK) finds none that a connection with those details would meet (it would be let in as the channel's MCAUSER or its own user id).",
        "DISPLAY CHLAUTH(*) lists every record.";
    CHLAUTH_EXISTS = 8885 Error "Channel authentication record already exists.",
        "SET CHLAUTH ACTION(ADD) names a record that exists (same profile, TYPE and ADDRESS, CLNTUSER, SSLPEER or QMNAME).",
        "Use ACTION(REPLACE) to change it.";
    CHLAUTH_INVALID = 8886 Error "The channel authentication record is not valid: {0}.",
        "SET CHLAUTH refused the record for the reason given; nothing was changed.",
        "Correct the command and issue it again.";
    AUTO_CONFIG_APPLIED = 8950 Info "The MQSC configuration {0} was applied at start: {1} commands, {2} failed.",
        "qm.ini AutoConfig/MQSCConfig (ferry create --ic) names scripts that run at every start, before the listeners and channels start. Commands that failed are in FRY8951E entries before this one.",
        "None, unless commands failed: correct them (DEFINE needs REPLACE and SET CHLAUTH ACTION(REPLACE) to run again at the next start).";
    AUTO_CONFIG_COMMAND_FAILED = 8951 Error "A command of the MQSC configuration failed at {0}: {1} answered: {2}",
        "The command ran at start as ferry mqsc would run it, and failed; the other commands carried on and the queue manager started.",
        "Correct the script; ferry mqsc runs the command by hand meanwhile.";
    AUTO_CONFIG_UNREADABLE = 8952 Error "The MQSC configuration {0} cannot be read: {1}",
        "qm.ini AutoConfig/MQSCConfig names a file or directory that is not there or cannot be read; its commands were not run, and the queue manager started without them.",
        "Correct MQSCConfig in qm.ini or the file's permissions, then restart the queue manager, or run the script with ferry mqsc.";
    CONTAINER_INI_INVALID = 8953 Error "The qm.ini override {0} cannot be applied to queue manager '{1}': {2}",
        "ferry runmqserver (the container entry point) merges every *.ini file of its configuration directories into qm.ini at each start, in name order, as MQ's container applies IniConfig; this file is not in qm.ini's format at the line given, or sets a value the queue manager cannot honour. Nothing of it was merged and the queue manager was not started.",
        "Correct the file (the line named; a ConfigMap in Kubernetes) and start the container again.";
    CONTAINER_INI_APPLIED = 8954 Info "The qm.ini override {0} was merged into the qm.ini of queue manager '{1}': {2} keys.",
        "ferry runmqserver merged the file's stanzas and keys into qm.ini before starting the queue manager; the other keys of qm.ini are unchanged.",
        "None.";
    CONTAINER_STOP_REQUESTED = 8955 Info "{0} received: ending queue manager '{1}' (controlled; immediate if applications are still connected after {2} s).",
        "ferry runmqserver was asked to stop (docker stop, Kubernetes ending the pod) and passed it on as a controlled stop (endmqm -w), as MQ's container does, and an immediate one once the grace period (FERRY_GRACE_PERIOD or MQ_GRACE_PERIOD) has passed.",
        "None. Keep the grace period shorter than the platform's (terminationGracePeriodSeconds) so the queue manager ends before it is killed.";

    // ---- 9xxx: channels and connections; MQSC responses without an MQ number -------------
    NOT_SUPPORTED = 9002 Error "{0} is valid MQSC but Ferry does not support it yet.",
        "The command is MQ's, but Ferry does not implement it; nothing was changed.",
        "See docs/mqsc.md for the commands Ferry runs.";
    REQUEST_REFUSED = 9003 Error "The request was refused: {0}.",
        "The queue manager refused the command for the reason given (an attribute value it cannot honour, or a combination it does not allow).",
        "Correct the command as the reason says.";
    CHANNEL_NOT_STARTABLE = 9004 Error "Channel {0} is a {1} channel: it runs when a client connects through a listener, so it cannot be started or stopped.",
        "START CHANNEL and STOP CHANNEL apply to channels that own a port (AMQP); a SVRCONN channel runs an instance per client connection.",
        "Start or stop the listener instead (START LISTENER, STOP LISTENER).";
    OUTPUT_CUT = 9006 Error "The output was cut after {0} of {1} objects: one command answers at most {2} bytes. Name fewer objects (a more specific generic name) or fewer attributes.",
        "The answer to one command is limited in size; the DISPLAY stopped there and counts as failed.",
        "Use a more specific generic name, a WHERE clause, or fewer attributes.";
    CHANNEL_CONNECT_FAILED = 9202 Error "Channel '{0}' could not connect to {1}: {2}",
        "The sending end of a message channel could not open a TCP connection to any address of its CONNAME: the partner queue manager or its listener is not running, or the network refused. The channel retries after SHORTTMR (SHORTRTY times), then LONGTMR.",
        "Start the partner queue manager and its listener, or correct CONNAME with ALTER CHANNEL; DISPLAY CHSTATUS shows the retries left.";
    CONNECTION_LOST = 9208 Warning "Error on receive from host {0}: {1}",
        "The connection ended without a disconnect; uncommitted work was backed out.",
        "None, if the application ended on purpose.";
    LISTENER_FAILED = 9212 Error "The listener '{0}' could not listen on port {1}: {2}",
        "The TCP port could not be bound (in use, or not allowed).",
        "Free the port or change PORT with ALTER LISTENER, then START LISTENER.";
    AMQP_CHANNEL_FAILED = 9213 Error "The AMQP channel '{0}' could not start: {1}",
        "The channel's port could not be bound, or the channel asks for something Ferry cannot do yet.",
        "Free the port or ALTER CHANNEL(...) CHLTYPE(AMQP) PORT(n), then START CHANNEL.";
    QMGR_START_INCOMPLETE = 9214 Warning "Ferry queue manager '{0}' started, but {1} of its listeners and AMQP channels could not start (above); applications cannot reach it through them.",
        "The queue manager runs (local bindings connections and the listeners that did start work), as MQ's does when a listener cannot start; 'ferry start' exits with status 10 so that scripts notice.",
        "Free the port, or give the object another one (ALTER LISTENER(...) PORT(n), ALTER CHANNEL(...) CHLTYPE(AMQP) PORT(n)) with 'ferry mqsc {0}', then START LISTENER or START CHANNEL; or stop it with 'ferry stop {0}'.";
    HEARTBEAT_TIMEOUT = 9259 Warning "The connection from {0} sent nothing for {1} seconds and was ended.",
        "No data or heartbeat arrived within twice the negotiated heartbeat interval.",
        "Check the network and the client.";
    CHANNEL_TIMED_OUT = 9271 Error "The connection from {0} timed out: {1}.",
        "The client did not complete a stage of its connection in the time the queue manager allows (qm.ini Limits stanza: HandshakeTimeout from accept to the first MQCONN, PartialFrameTimeout for the rest of a frame it started); only this connection was closed, and its uncommitted work backed out.",
        "Check the client and the network. A client that connects and then sends nothing, or stops in the middle of a frame, may be hostile; raise the limit only if legitimate clients are that slow.";
    SYNTAX_DETAIL = 9405 Error "{0}.",
        "Why the command shown after FRY8405I could not be parsed.",
        "Correct the command as the reason says.";
    MAX_INSTANCES = 9489 Error "Connection from {0} refused: channel '{1}' has reached MAXINST({2}) instances.",
        "The SVRCONN channel's MAXINST limit of simultaneous instances (client sockets whose hello was accepted) is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE.",
        "Raise MAXINST with ALTER CHANNEL, or find the clients holding instances with DISPLAY CHSTATUS.";
    MAX_INSTANCES_PER_CLIENT = 9490 Error "Connection from {0} refused: channel '{1}' has reached MAXINSTC({2}) instances from that address.",
        "The SVRCONN channel's MAXINSTC limit of simultaneous instances from one client address is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE. Other addresses can still connect.",
        "Raise MAXINSTC with ALTER CHANNEL, or find what holds the instances from that address with DISPLAY CHSTATUS.";
    CHANNEL_NEGOTIATION_FAILED = 9503 Error "Channel '{0}' with {1} could not start: {2}",
        "The two ends of a message channel could not agree: the partner has no channel of that name, or one of a type that does not pair (SDR with RCVR, SVR with RCVR or RQSTR, RQSTR with SVR or SDR), or their SEQWRAP values differ, or the partner is stopped, or it is not a Ferry queue manager.",
        "Define matching channels at both ends (the same name), or START CHANNEL at the partner; the partner's error log names its side of the refusal.";
    PROTOCOL_ERROR = 9504 Error "A protocol error was detected for the connection from {0}: {1}",
        "The peer sent data that breaks the Ferry protocol; only this connection was closed.",
        "Check the client program and its Ferry client library version.";
    AMQP_PROTOCOL_ERROR = 9505 Error "An AMQP protocol error ended the connection from {0} on channel '{1}': {2}",
        "The client sent something AMQP 1.0 does not allow; the connection was closed with that error condition. Other connections are not affected.",
        "Correct the client.";
    MAX_CHANNELS = 9513 Error "Connection from {0} refused: MaxChannels ({1}) reached.",
        "The qm.ini Channels/MaxChannels limit of concurrent client connections is reached: 2537 MQRC_CHANNEL_NOT_AVAILABLE.",
        "Raise MaxChannels in qm.ini or reduce connections.";
    CHANNEL_UNKNOWN = 9519 Error "Channel '{0}' not found (from {1}).",
        "A client asked for a channel that is not defined: 2540 MQRC_UNKNOWN_CHANNEL_NAME.",
        "Define the channel or correct the client's channel name.";
    TRIGGERED_CHANNEL_UNKNOWN = 9520 Warning "Channel '{0}', which a trigger message of transmission queue '{1}' names, is not a sender or server channel with a CONNAME: the channel initiator did not start it.",
        "The channel initiator got a trigger message from SYSTEM.CHANNEL.INITQ. The transmission queue's TRIGDATA names the channel to start (blank: the sender or server channel whose XMITQ is the queue), and no such channel is defined, or it is of another type, or it has no CONNAME to call.",
        "Set the transmission queue's TRIGDATA to the sender channel's name (ALTER QLOCAL(xmitq) TRIGDATA(channel)), or define the channel. Messages stay on the transmission queue; START CHANNEL sends them.";
    TRIGGER_MESSAGE_INVALID = 9521 Warning "A message on initiation queue '{0}' is not a trigger message ({1}); it was discarded.",
        "An application put a message on the initiation queue that is not an MQTM of format MQTRIG, so the channel initiator (or trigger monitor) cannot act on it.",
        "Put only trigger messages on initiation queues; the queue manager makes them itself.";
    CHANNEL_INITIATOR_FAILED = 9522 Error "The channel initiator could not open initiation queue '{0}' ({1}): channels whose transmission queues are triggered are not started.",
        "The queue manager runs a channel initiator that reads SYSTEM.CHANNEL.INITQ. It could not open the queue for input, so no trigger message starts a channel.",
        "Check that SYSTEM.CHANNEL.INITQ is a local queue with GET(ENABLED) (DISPLAY QLOCAL(SYSTEM.CHANNEL.INITQ)), then restart the queue manager. START CHANNEL still starts channels.";
    CHANNEL_SEQUENCE_ERROR = 9526 Error "Message sequence number error for channel '{0}' with {1}: the sender's last committed batch ends at {2}, the receiver's at {3}.",
        "The two ends of a message channel remember different last committed batches, which happens when one end was deleted and defined again, or its queue manager was recreated. Starting anyway could lose or repeat persistent messages, so the channel stops.",
        "Check that no message is in doubt (DISPLAY CHSTATUS SAVED at both ends), then RESET CHANNEL at the sending end (it tells the receiver at the next start) and START CHANNEL.";
    CHANNEL_RUNNING = 9530 Info "Channel '{0}' is running with queue manager {1} at {2}: batch size {3}, NPMSPEED({4}).",
        "The two ends agreed on the channel's values; messages flow.",
        "None.";
    CHANNEL_NOT_ACTIVE = 9533 Error "Channel {0} is not currently active.",
        "STOP CHANNEL named a channel that is not running.",
        "None, if that is expected; DISPLAY CHSTATUS shows the running channels.";
    AMQP_NOT_PUT = 9544 Warning "A pre-settled message from {0} on AMQP channel '{1}' could not be put on queue '{2}' ({3}); it was {4}.",
        "The AMQP client sent the message settled in advance (at most once), so no outcome could tell it the message was not put (a full queue, an unknown queue, a message too large...). As MQ's channel agents do, it went to the queue manager's dead-letter queue (DEADQ) with an MQDLH giving the reason, or was discarded when there is no dead-letter queue or it could not take the message. Repeats are counted per QMErrorLog/SuppressInterval; DISPLAY CHSTATUS counts them all.",
        "Look at the reason, make room on the queue or correct the application's destination, and process the dead-letter queue.";
    CHANNEL_DISCONNECTED = 9545 Info "Channel '{0}' ended normally: nothing to send for DISCINT({1}) seconds.",
        "A sending channel whose transmission queue stayed empty for its disconnect interval closes its conversation, as MQ's do. A message arriving on a triggered transmission queue starts it again.",
        "None. Set DISCINT(0) to keep the conversation open.";
    CHANNEL_ENDED = 9546 Info "Channel '{0}' ended: {1}.",
        "The channel agent stopped (STOP CHANNEL, or the queue manager ending).",
        "START CHANNEL to start it again.";
    CHANNEL_RETRYING = 9547 Warning "Channel '{0}' will try again in {1} seconds ({2} {3} retries left).",
        "The channel failed to start or its conversation broke; it keeps its messages on the transmission queue and tries again, first SHORTRTY times every SHORTTMR seconds, then LONGRTY times every LONGTMR seconds, then it stops.",
        "Look at the error above this one; STOP CHANNEL ends the retries.";
    CHANNEL_INDOUBT_RESOLVED = 9548 Info "Channel '{0}' resolved batch {1} ({2} persistent messages) by {3}: {4}.",
        "The sending end found a batch it had asked its partner to confirm without hearing back. The partner's last committed batch says whether it arrived: committed, its messages leave the transmission queue; backed out, they are sent again. Either way each persistent message arrives once.",
        "None.";
    CHANNEL_RETRIES_EXHAUSTED = 9549 Error "Channel '{0}' stopped: its retries are exhausted.",
        "The channel failed SHORTRTY + LONGRTY times in a row and is STOPPED; messages wait on its transmission queue.",
        "Correct the cause in the messages above, then START CHANNEL.";
    MESSAGE_DEAD_LETTERED = 9561 Warning "A message for queue '{0}' at '{1}' that arrived on channel '{2}' could not be put ({3}); it was put on the dead-letter queue '{4}'.",
        "The receiving end of a message channel puts each message to the queue its transmission header names. When that fails (an unknown queue, a full or put-inhibited queue, a message too long, no authority), the message goes to the dead-letter queue with an MQDLH giving the reason and the destination, as MQ's channel agents do, so the channel keeps running.",
        "Correct the destination (define the queue, make room) and process the dead-letter queue.";
    NO_DEAD_LETTER_QUEUE = 9565 Error "A message for queue '{0}' at '{1}' that arrived on channel '{2}' could not be put ({3}) and could not go to a dead-letter queue ({4}); the channel stopped.",
        "The message could not be put and the queue manager has no usable dead-letter queue (DEADQ blank, missing or full), or the channel says USEDLQ(NO). Its batch was backed out and stays on the sending queue manager's transmission queue, so nothing is lost; the channel stops until the cause is corrected.",
        "Define the destination queue or a dead-letter queue (ALTER QMGR DEADQ), then START CHANNEL at the sending end.";
    TLS_CIPHERSPEC_MISMATCH = 9631 Error "The CipherSpec negotiated with {0} ({1}) does not match SSLCIPH({2}) of channel '{3}'.",
        "The TLS handshake agreed a CipherSpec the channel's SSLCIPH does not allow; the connection was refused with 2393 MQRC_SSL_INITIALIZATION_ERROR. A client that sends no MQ-style SNI cannot be offered only the channel's CipherSpecs, so its choice is checked once it names the channel.",
        "Give the client channel the same SSLCIPH as the server channel, or alias CipherSpecs (ANY_TLS12_OR_HIGHER) on both ends.";
    TLS_PEER_NAME_MISMATCH = 9636 Error "The certificate of {0} ({1}) does not match SSLPEER({2}) of channel '{3}'.",
        "The partner's certificate is valid, but its subject is not one the channel accepts; the connection was refused with 2398 MQRC_SSL_PEER_NAME_MISMATCH.",
        "Correct SSLPEER, or give the client a certificate with the expected subject.";
    TLS_NO_CERTIFICATE = 9637 Error "{0} presented no certificate on channel '{1}', which has SSLCAUTH(REQUIRED).",
        "The channel demands a client certificate signed by a CA in the key repository's trust.pem; the client sent none, so the connection was refused with 2393 MQRC_SSL_INITIALIZATION_ERROR.",
        "Give the client a certificate (its key repository's <label>.crt and .key), or set SSLCAUTH(OPTIONAL) on the channel.";
    TLS_REQUIRED = 9639 Error "{0} connected to channel '{1}' without TLS, but the channel has SSLCIPH({2}).",
        "A channel with SSLCIPH accepts only TLS conversations; the connection was refused with 2393 MQRC_SSL_INITIALIZATION_ERROR.",
        "Connect with TLS and a CipherSpec the channel allows (AMQP: amqps:// on the channel's port).";
    TLS_NOT_EXPECTED = 9640 Error "{0} connected to channel '{1}' with TLS, but the channel has no SSLCIPH.",
        "The client asked for TLS on a channel that does not use it; as MQ does, the ends must agree, and the connection was refused with 2393 MQRC_SSL_INITIALIZATION_ERROR.",
        "Set SSLCIPH on the channel, or connect without TLS.";
    TLS_HANDSHAKE_FAILED = 9641 Error "The TLS handshake with {0} failed: {1}",
        "The partner and the queue manager could not agree TLS (no common CipherSpec or protocol, a certificate that is unknown, expired or not trusted, or a partner that is not speaking TLS); the connection was closed. Other connections carry on.",
        "Look at the reason; check both ends' CipherSpecs and that each trusts the other's CA.";
    TLS_SETUP_FAILED = 9642 Error "TLS cannot be set up for {0}: {1}",
        "The key repository lacks what the channel needs (the certificate named by CERTLABL, or trust.pem when client certificates must be checked); the connection was closed with 2381 MQRC_KEY_REPOSITORY_ERROR.",
        "Put the files in the key repository (DISPLAY QMGR SSLKEYR CERTLABL) and run REFRESH SECURITY TYPE(SSL).";
    PLAIN_REFUSED = 9643 Error "{0} connected to channel '{1}' without TLS, and qm.ini TCP SecureCommsOnly=YES refuses every conversation without TLS.",
        "The queue manager is configured to accept only TLS conversations (MQ 9.3's SecureCommsOnly). The conversation was refused (2393 MQRC_SSL_INITIALIZATION_ERROR for native clients, amqp:unauthorized-access for AMQP); other conversations carry on.",
        "Give the channel an SSLCIPH and connect with TLS, or set SecureCommsOnly=NO in qm.ini's TCP stanza and restart.";
    KEY_REPOSITORY_ERROR = 9660 Error "The key repository {0} cannot be used: {1}",
        "A file of the key repository could not be read or does not hold what its name says; until it is corrected, TLS connections cannot be accepted (plain channels are not affected).",
        "Correct the file and run REFRESH SECURITY TYPE(SSL).";
    CHLAUTH_BLOCKED_USER = 9776 Error "Channel '{0}' from {1} was blocked: user id '{2}' is in the BLOCKUSER list of CHLAUTH('{3}').",
        "The user id the connection would run as (the channel's MCAUSER, the one a CHLAUTH mapping gave, or the one the client asserted) is listed, or is privileged and the list holds *MQADMIN. The client was refused with 2035 MQRC_NOT_AUTHORIZED (AMQP: amqp:unauthorized-access).",
        "Connect as a user id that is not privileged, map the connection to one (SET CHLAUTH TYPE(USERMAP|ADDRESSMAP|SSLPEERMAP) USERSRC(MAP) MCAUSER(..)), or set a more specific BLOCKUSER record for the channel.";
    CHLAUTH_NO_ACCESS = 9777 Error "Channel '{0}' from {1} was blocked by CHLAUTH('{2}') TYPE({3}) USERSRC(NOACCESS) (user id '{4}').",
        "The channel authentication record that matches the connection most specifically refuses it; by default that is the record closing SYSTEM.* channels to remote connections. The client was refused with 2035 MQRC_NOT_AUTHORIZED (AMQP: amqp:unauthorized-access).",
        "Use a channel of your own, or set a more specific record that lets the connection in (USERSRC(CHANNEL) or USERSRC(MAP)); DISPLAY CHLAUTH(channel) MATCH(RUNCHECK) ADDRESS(..) CLNTUSER(..) shows the record a connection meets.";
    CHLAUTH_BLOCKED_ADDRESS = 9778 Error "A connection from {0} to port {1} was blocked: the address is in the BLOCKADDR list of CHLAUTH('*').",
        "The partner's address matches the BLOCKADDR record; the socket was closed as soon as it was accepted, before anything was read from it.",
        "Remove the address from the record's ADDRLIST (SET CHLAUTH('*') TYPE(BLOCKADDR) ... ACTION(REPLACE)) if the partner should connect.";
    CHLAUTH_WARNING = 9779 Warning "Channel '{0}' from {1} would have been blocked by CHLAUTH('{2}') TYPE({3}), which has WARN(YES); it was let in as '{4}'.",
        "The record only warns: the connection carries on. WARN(YES) lets an administrator see what a new record would refuse before enforcing it.",
        "When the record refuses only what it should, set it again with WARN(NO).";
    MAX_CONNECTIONS = 9780 Warning "Connection from {0} to port {1} refused: {2} client sockets are open, the most this queue manager admits.",
        "The queue manager admits at most qm.ini Limits/MaxConnections client sockets at once on all its listeners and AMQP channels (fewer when the process's open-file limit is lower; FRY9781I at start says so). The socket was closed as soon as it was accepted; handshakes count, so clients that connect and send nothing hold places until HandshakeTimeout closes them.",
        "Find out who holds the connections (DISPLAY CHSTATUS, DISPLAY CONN); raise MaxConnections, or the open-file limit (ulimit -n) if FRY9781I says it lowered the limit.";
    MAX_CONNECTIONS_LOWERED = 9781 Info "Limits/MaxConnections is {0}, but this process may open only {1} files: at most {2} client sockets are admitted.",
        "The queue manager keeps Limits/ReservedFileDescriptors ({3}) file descriptors for itself (the bindings socket for local applications and ferry mqsc, log and queue files), and the open-file limit leaves room for fewer client sockets than MaxConnections.",
        "Raise the open-file limit of the process that starts the queue manager (ulimit -n, LimitNOFILE= in a systemd unit), or lower MaxConnections to match.";
    ACCEPT_FAILED = 9782 Error "Accepting a connection on {0} failed: {1}",
        "The operating system refused to hand over a waiting connection. When it ran out of file descriptors, the waiting connection was closed so the listener does not spin; the listener pauses briefly (up to a second) and accepts again.",
        "If the reason is 'Too many open files', find what holds them (DISPLAY CHSTATUS, ls /proc/PID/fd) and lower Limits/MaxConnections or raise the open-file limit.";
    WEB_SERVER_FAILED = 9783 Error "The web server of queue manager '{0}' could not start on {1}: {2}",
        "The port of qm.ini WebServer/Port could not be bound (in use, or not allowed), or WebServer/SSL=YES and the key repository has no usable certificate for the queue manager. The queue manager runs on without its health endpoints and REST API; messaging is not affected.",
        "Free the port or change WebServer/Port (or give the key repository the queue manager's certificate), then restart the queue manager.";
    CHANNEL_ENDED_ABNORMALLY = 9999 Error "Channel '{0}' with {1} ended abnormally: {2}",
        "The conversation of a message channel broke (the partner went, the network failed, a protocol error). A batch in progress was backed out at the receiving end; the sending end resolves it when the channel starts again, so no persistent message is lost or repeated.",
        "Look at the reason; the sending end retries by itself (SHORTRTY, LONGRTY).";
}
