//! `ConnectOptions`: where and how to connect (MQCONNX's MQCNO + MQCD, as a builder).

use std::path::PathBuf;

use crate::tls::TlsOptions;
use std::time::Duration;

use ferry_mqi::{HeaderCompression, MessageCompression};
use ferry_wire::handshake::{DEFAULT_HEARTBEAT_SECS, DEFAULT_MAX_MSG_LENGTH, DEFAULT_SHARECNV};

/// Where the queue manager listens.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A client connection over TCP to a CONNAME (`host(port)`, list allowed).
    Client {
        /// The CONNAME.
        conn_name: String,
    },
    /// A local "bindings" connection over the queue manager's Unix socket.
    Bindings {
        /// Path of the socket.
        path: PathBuf,
    },
}

/// How to connect: target, channel, queue manager and the values to negotiate.
///
/// ```
/// use ferry_client::ConnectOptions;
/// let opts = ConnectOptions::client("localhost(1414)", "SYSTEM.DEF.SVRCONN")
///     .queue_manager("QM1")
///     .application_name("requester");
/// let local = ConnectOptions::bindings("/var/ferry/qmgrs/QM1/qm.sock");
/// # let _ = (opts, local);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    pub(crate) target: Target,
    pub(crate) channel: String,
    pub(crate) qmgr: String,
    pub(crate) appl_name: String,
    pub(crate) user_id: String,
    pub(crate) sharecnv: u32,
    pub(crate) heartbeat_secs: u32,
    pub(crate) max_msg_length: u32,
    pub(crate) connect_timeout: Duration,
    pub(crate) tls: Option<TlsOptions>,
    pub(crate) credentials: Option<ferry_wire::Credentials>,
    pub(crate) compress_header: Vec<HeaderCompression>,
    pub(crate) compress_message: Vec<MessageCompression>,
}

impl ConnectOptions {
    fn new(target: Target, channel: &str) -> Self {
        let user_id = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .ok()
            .filter(|u| !u.is_empty())
            .or_else(os_user_name)
            .unwrap_or_default();
        let appl_name = std::env::args()
            .next()
            .and_then(|a| {
                std::path::Path::new(&a)
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        ConnectOptions {
            target,
            channel: channel.to_owned(),
            qmgr: String::new(),
            appl_name,
            user_id,
            sharecnv: DEFAULT_SHARECNV,
            heartbeat_secs: DEFAULT_HEARTBEAT_SECS,
            max_msg_length: DEFAULT_MAX_MSG_LENGTH,
            connect_timeout: Duration::from_secs(30),
            tls: None,
            credentials: None,
            compress_header: Vec::new(),
            compress_message: Vec::new(),
        }
    }

    /// A client connection to `conn_name` (MQ CONNAME syntax: `host(port)`, bare `host`
    /// for port 1414, or a comma-separated list tried in order) on SVRCONN `channel`.
    pub fn client(conn_name: &str, channel: &str) -> Self {
        Self::new(
            Target::Client {
                conn_name: conn_name.to_owned(),
            },
            channel,
        )
    }

    /// A local bindings connection over the queue manager's Unix socket at `path`.
    /// No channel is involved (the hello carries a blank channel name).
    pub fn bindings(path: impl Into<PathBuf>) -> Self {
        Self::new(Target::Bindings { path: path.into() }, "")
    }

    /// The queue manager to connect to; blank (the default) accepts whichever owns the
    /// listener. A different name fails with 2058 MQRC_Q_MGR_NAME_ERROR.
    pub fn queue_manager(mut self, name: &str) -> Self {
        self.qmgr = name.to_owned();
        self
    }

    /// The application name shown by DISPLAY CONN (MQCNO ApplName, cut at 28 bytes).
    /// Defaults to the program's file name.
    pub fn application_name(mut self, name: &str) -> Self {
        self.appl_name = name.to_owned();
        self
    }

    /// The user id to present (cut at 12 bytes). Defaults to `$USER`.
    pub fn user_id(mut self, user: &str) -> Self {
        self.user_id = user.to_owned();
        self
    }

    /// A user id and password for the queue manager to check (MQCSP, as MQCONNX's
    /// MQCNO.SecurityParmsPtr carries them). Sent inside MQCONN; use TLS when the network
    /// is not trusted, as MQ advises. A queue manager too old to check them (protocol minor
    /// below 3) is refused with 2539 MQRC_CHANNEL_CONFIG_ERROR rather than sent nothing.
    pub fn credentials(mut self, user: &str, password: &str) -> Self {
        self.credentials = Some(ferry_wire::Credentials {
            user: user.to_owned(),
            password: password.to_owned(),
        });
        self
    }

    /// Conversations wanted per socket (SHARECNV). Connections of this process to the
    /// same target, channel and queue manager share a socket up to the negotiated value;
    /// 0 or 1 gives each connection its own socket. Default 10.
    pub fn sharecnv(mut self, conversations: u32) -> Self {
        self.sharecnv = conversations;
        self
    }

    /// Heartbeat interval to propose, in seconds. The queue manager's channel HBINT is the
    /// longest it grants: 0 or a longer proposal gets HBINT, a shorter one is kept
    /// (docs/protocol.md §3); the client keeps whatever was granted. Default 300.
    pub fn heartbeat_interval(mut self, secs: u32) -> Self {
        self.heartbeat_secs = secs;
        self
    }

    /// Largest message this application handles (0 = the server's limit). Default 4 MiB.
    pub fn max_message_length(mut self, bytes: u32) -> Self {
        self.max_msg_length = bytes;
        self
    }

    /// How long to wait for the socket and handshake before failing with 2538
    /// MQRC_HOST_NOT_AVAILABLE. Default 30 s.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Connect over TLS (the client channel's SSLCIPH and key repository). The channel
    /// must have a matching SSLCIPH; a channel with SSLCIPH refuses connections without.
    pub fn tls(mut self, tls: TlsOptions) -> Self {
        self.tls = Some(tls);
        self
    }

    /// COMPMSG of the client channel: the message data compression techniques wanted, in
    /// order of preference (at most 16; ANY is for the receiving end and is refused). The
    /// queue manager uses the first one its SVRCONN's COMPMSG also lists, NONE when there
    /// is none; [`crate::Connection::compression`] tells which. Default: none asked for.
    ///
    /// ```
    /// use ferry_client::ConnectOptions;
    /// use ferry_mqi::MessageCompression;
    /// let opts = ConnectOptions::client("localhost(1414)", "APP.SVRCONN")
    ///     .message_compression(&[MessageCompression::Lz4Fast, MessageCompression::ZlibFast]);
    /// # let _ = opts;
    /// ```
    pub fn message_compression(mut self, techniques: &[MessageCompression]) -> Self {
        self.compress_message = techniques.to_vec();
        self
    }

    /// COMPHDR of the client channel: header compression wanted, in order of preference
    /// (at most 2). Default: none asked for.
    pub fn header_compression(mut self, techniques: &[HeaderCompression]) -> Self {
        self.compress_header = techniques.to_vec();
        self
    }

    /// The target.
    pub fn target(&self) -> &Target {
        &self.target
    }
}

/// The name of the process's effective user from the user database: the user id a client
/// presents when the environment names none (containers and services often set no
/// `USER`), as MQ's clients present their operating-system user.
fn os_user_name() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: an all-zero passwd is a valid value for getpwuid_r to overwrite.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into `entry` and `buf`, both ours and alive for the call;
    // `buf.len()` is its real size. The name it points at lives in `buf`.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::geteuid(),
            &mut entry,
            buf.as_mut_ptr(),
            buf.len(),
            &mut found,
        )
    };
    if rc != 0 || found.is_null() || entry.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success pw_name is a NUL-terminated string inside `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(entry.pw_name) };
    Some(name.to_string_lossy().into_owned()).filter(|n| !n.is_empty())
}
