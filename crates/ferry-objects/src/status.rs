//! Status records: what DISPLAY QSTATUS, DISPLAY CONN and DISPLAY LSSTATUS answer.
//!
//! The engine fills these from counters it keeps as it works (never by scanning on
//! request); MQSC prints them. Times are milliseconds since the Unix epoch, UTC.

/// DISPLAY QSTATUS TYPE(QUEUE): one queue's live state.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct QueueStatus {
    /// Queue name.
    pub name: String,
    /// CURDEPTH: messages on the queue, including uncommitted puts and gets.
    pub current_depth: u64,
    /// IPPROCS: handles open for input.
    pub open_input_count: u32,
    /// OPPROCS: handles open for output.
    pub open_output_count: u32,
    /// UNCOM: uncommitted puts and gets on the queue.
    pub uncommitted: u64,
    /// LPUTDATE/LPUTTIME: last put, ms since epoch.
    pub last_put_ms: Option<u64>,
    /// LGETDATE/LGETTIME: last destructive get, ms since epoch.
    pub last_get_ms: Option<u64>,
    /// MSGAGE: age in seconds of the oldest message.
    pub oldest_msg_age_secs: Option<u64>,
}

/// DISPLAY QSTATUS TYPE(HANDLE): one open handle on a queue.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HandleStatus {
    /// Queue name.
    pub queue: String,
    /// CONN: the connection id (hex, as MQ prints it).
    pub connection_id: String,
    /// APPLTAG: the application's name.
    pub application_tag: String,
    /// CHANNEL: channel the connection came in on (blank for bindings).
    pub channel: String,
    /// CONNAME: the client's address.
    pub connection_name: String,
    /// USERID.
    pub user_id: String,
    /// PID of a bindings application, when known.
    pub pid: Option<u32>,
    /// OPENOPTS: the MQOO value.
    pub open_options: u32,
    /// INPUT: SHARED, EXCL or NO.
    pub input: String,
    /// OUTPUT: opened for output.
    pub output: bool,
    /// BROWSE: opened for browse.
    pub browse: bool,
    /// INQUIRE: opened for inquire.
    pub inquire: bool,
    /// SET: opened for set.
    pub set: bool,
}

/// DISPLAY CONN: one application connection.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnectionStatus {
    /// CONN: the connection id (hex).
    pub connection_id: String,
    /// APPLTAG.
    pub application_tag: String,
    /// CHANNEL (blank for bindings).
    pub channel: String,
    /// CONNAME.
    pub connection_name: String,
    /// USERID.
    pub user_id: String,
    /// PID of a bindings application, when known.
    pub pid: Option<u32>,
    /// UOWSTATE: NONE or ACTIVE.
    pub uow_active: bool,
    /// Messages in the current unit of work.
    pub uow_messages: u64,
    /// Names of the objects it has open.
    pub open_objects: Vec<String>,
    /// When it connected, ms since epoch.
    pub connected_ms: u64,
}

/// DISPLAY LSSTATUS: one running listener.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListenerStatus {
    /// Listener name.
    pub name: String,
    /// STATUS: RUNNING, STOPPED.
    pub running: bool,
    /// PORT actually bound.
    pub port: u16,
    /// IPADDR bound.
    pub ip_address: String,
    /// STARTDA/STARTTI, ms since epoch.
    pub started_ms: Option<u64>,
}
