//! Opening a socket: TCP or Unix connect, the hello exchange, and the process-wide pool
//! that lets connections share sockets (SHARECNV).
//!
//! Connections of one process to the same target, channel, queue manager and user, with
//! the same SHARECNV request, join an existing socket while it has room for another
//! conversation; otherwise a new socket is opened and added to the pool. Sockets that
//! broke or closed are skipped and forgotten.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use bytes::BytesMut;
use ferry_mqi::compression::{MAX_HEADER_COMPRESSION_LIST, MAX_MESSAGE_COMPRESSION_LIST};
use ferry_mqi::{FixedStr, HeaderCompression, MessageCompression, MqError, ReasonCode};
use ferry_wire::{
    ClientHello, HelloFlags, Negotiated, ServerHello, MINOR_WITH_COMPRESSION, PROTOCOL_MAJOR,
    PROTOCOL_MINOR,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::conname::parse_conname;
use crate::driver;
use crate::options::{ConnectOptions, Target};
use crate::socket::Socket;
use crate::tls::TlsOptions;

#[derive(Clone, PartialEq, Eq, Hash)]
struct PoolKey {
    target: Target,
    channel: String,
    qmgr: String,
    user_id: String,
    sharecnv: u32,
    tls: Option<TlsOptions>,
    compress_header: Vec<HeaderCompression>,
    compress_message: Vec<MessageCompression>,
}

static POOL: LazyLock<Mutex<HashMap<PoolKey, Vec<Weak<Socket>>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn err(reason: ReasonCode) -> MqError {
    MqError::from(reason)
}

/// A conversation slot on some socket: `(socket, conversation id, generation)`.
pub(crate) async fn reserve_conversation(
    opts: &ConnectOptions,
) -> Result<(Arc<Socket>, u32, u32), MqError> {
    let key = PoolKey {
        target: opts.target.clone(),
        channel: opts.channel.clone(),
        qmgr: opts.qmgr.clone(),
        user_id: opts.user_id.clone(),
        sharecnv: opts.sharecnv,
        tls: opts.tls.clone(),
        compress_header: opts.compress_header.clone(),
        compress_message: opts.compress_message.clone(),
    };
    if opts.sharecnv > 1 {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = pool.get_mut(&key) {
            list.retain(|w| w.upgrade().is_some_and(|s| !s.is_closing()));
            for weak in list.iter() {
                if let Some(socket) = weak.upgrade() {
                    if let Some((id, generation)) = socket.try_reserve() {
                        return Ok((socket, id, generation));
                    }
                }
            }
        }
    }
    let socket = open_socket(opts).await?;
    let (id, generation) = socket
        .try_reserve()
        .ok_or_else(|| err(ReasonCode::ConnectionBroken))?;
    if opts.sharecnv > 1 && socket.capacity() > 1 {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        pool.entry(key).or_default().push(Arc::downgrade(&socket));
    }
    Ok((socket, id, generation))
}

fn client_hello(opts: &ConnectOptions) -> Result<ClientHello, MqError> {
    let compress = !opts.compress_header.is_empty() || !opts.compress_message.is_empty();
    // ANY belongs to the receiving end; MQ's lists are at most 2 and 16 long.
    if opts.compress_message.contains(&MessageCompression::Any)
        || opts.compress_header.len() > MAX_HEADER_COMPRESSION_LIST
        || opts.compress_message.len() > MAX_MESSAGE_COMPRESSION_LIST
    {
        tracing::warn!(
            "COMPMSG may not hold ANY on a client, nor more than {MAX_MESSAGE_COMPRESSION_LIST} \
             values (COMPHDR {MAX_HEADER_COMPRESSION_LIST})"
        );
        return Err(err(ReasonCode::ChannelConfigError));
    }
    Ok(ClientHello {
        major: PROTOCOL_MAJOR,
        minor: PROTOCOL_MINOR,
        flags: if compress {
            HelloFlags::COMPRESSION
        } else {
            HelloFlags::empty()
        },
        compress_header: opts.compress_header.clone(),
        compress_message: opts.compress_message.clone(),
        channel: FixedStr::new(&opts.channel).map_err(|_| err(ReasonCode::UnknownChannelName))?,
        qmgr_name: FixedStr::new(&opts.qmgr).map_err(|_| err(ReasonCode::QMgrNameError))?,
        max_msg_length: opts.max_msg_length,
        heartbeat_interval: opts.heartbeat_secs,
        sharecnv: opts.sharecnv,
        appl_name: FixedStr::truncating(&opts.appl_name),
        user_id: FixedStr::truncating(&opts.user_id),
    })
}

/// Why a socket could not be started.
enum StartError {
    /// The queue manager refused, or the connection failed.
    Mq(MqError),
    /// The queue manager speaks a protocol older than channel compression and refused a
    /// hello with compression lists: connect again without them.
    NoCompression,
}

impl From<MqError> for StartError {
    fn from(e: MqError) -> Self {
        StartError::Mq(e)
    }
}

async fn open_socket(opts: &ConnectOptions) -> Result<Arc<Socket>, MqError> {
    let hello = client_hello(opts)?;
    match open_socket_with(opts, &hello).await {
        Ok(socket) => Ok(socket),
        Err(StartError::Mq(e)) => Err(e),
        Err(StartError::NoCompression) => {
            // A minor-2 queue manager never compresses: the same hello without the lists.
            tracing::info!("the queue manager has no channel compression; connecting without");
            let plain = ClientHello {
                flags: hello.flags - HelloFlags::COMPRESSION,
                compress_header: Vec::new(),
                compress_message: Vec::new(),
                ..hello
            };
            match open_socket_with(opts, &plain).await {
                Ok(socket) => Ok(socket),
                Err(StartError::Mq(e)) => Err(e),
                Err(StartError::NoCompression) => Err(err(ReasonCode::ChannelConfigError)),
            }
        }
    }
}

async fn open_socket_with(
    opts: &ConnectOptions,
    hello: &ClientHello,
) -> Result<Arc<Socket>, StartError> {
    let deadline = tokio::time::Instant::now() + opts.connect_timeout;
    match &opts.target {
        Target::Client { conn_name } => {
            let hosts = parse_conname(conn_name)?;
            let mut last = err(ReasonCode::HostNotAvailable);
            for hp in hosts {
                let connect = TcpStream::connect((hp.host.as_str(), hp.port));
                let stream = match tokio::time::timeout_at(deadline, connect).await {
                    Ok(Ok(s)) => s,
                    Ok(Err(e)) => {
                        tracing::debug!(host = %hp.host, port = hp.port, error = %e, "connect failed");
                        continue;
                    }
                    Err(_) => break,
                };
                let _ = stream.set_nodelay(true);
                let started = match &opts.tls {
                    None => start(stream, hello, deadline)
                        .await
                        .map(|(stream, socket, rbuf)| {
                            let (r, w) = stream.into_split();
                            driver::spawn(socket.clone(), r, w, rbuf);
                            socket
                        }),
                    Some(tls) => {
                        let handshake = tls.connect(stream, &hp.host, &opts.channel, &opts.user_id);
                        let stream = match tokio::time::timeout_at(deadline, handshake).await {
                            Ok(r) => r?,
                            Err(_) => return Err(err(ReasonCode::HostNotAvailable).into()),
                        };
                        start(stream, hello, deadline)
                            .await
                            .map(|(stream, socket, rbuf)| {
                                let (r, w) = tokio::io::split(stream);
                                driver::spawn(socket.clone(), r, w, rbuf);
                                socket
                            })
                    }
                };
                match started {
                    Ok(socket) => return Ok(socket),
                    Err(StartError::NoCompression) => return Err(StartError::NoCompression),
                    // A refusal from the queue manager is final; a broken handshake
                    // lets the next address have a go.
                    Err(StartError::Mq(e)) if e.reason != ReasonCode::ConnectionBroken => {
                        return Err(e.into())
                    }
                    Err(StartError::Mq(e)) => last = e,
                }
            }
            Err(last.into())
        }
        Target::Bindings { path } => bindings(path, hello, deadline).await,
    }
}

#[cfg(unix)]
async fn bindings(
    path: &std::path::Path,
    hello: &ClientHello,
    deadline: tokio::time::Instant,
) -> Result<Arc<Socket>, StartError> {
    let stream =
        match tokio::time::timeout_at(deadline, tokio::net::UnixStream::connect(path)).await {
            Ok(Ok(s)) => s,
            _ => return Err(err(ReasonCode::QMgrNotAvailable).into()),
        };
    let (stream, socket, rbuf) = start(stream, hello, deadline).await?;
    let (r, w) = stream.into_split();
    driver::spawn(socket.clone(), r, w, rbuf);
    Ok(socket)
}

#[cfg(not(unix))]
async fn bindings(
    _path: &std::path::Path,
    _hello: &ClientHello,
    _deadline: tokio::time::Instant,
) -> Result<Arc<Socket>, StartError> {
    Err(err(ReasonCode::EnvironmentError).into())
}

/// Why reading the server's hello failed: a TLS alert (in TLS 1.3 the server refuses a
/// client certificate after the client's side of the handshake is done) is 2393
/// MQRC_SSL_INITIALIZATION_ERROR; anything else a broken connection.
fn read_failure(e: &std::io::Error) -> ReasonCode {
    let tls = e
        .get_ref()
        .is_some_and(|inner| inner.is::<ferry_tls::tokio_rustls::rustls::Error>());
    if tls {
        tracing::warn!(error = %e, "the queue manager ended the TLS handshake");
        ReasonCode::SslInitializationError
    } else {
        ReasonCode::ConnectionBroken
    }
}

/// Sends the hello and waits for the server's; returns the stream, the socket state and
/// any bytes read past the server hello.
async fn start<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    hello: &ClientHello,
    deadline: tokio::time::Instant,
) -> Result<(S, Arc<Socket>, BytesMut), StartError> {
    let exchange = async {
        let mut out = BytesMut::new();
        hello
            .encode(&mut out)
            .map_err(|_| err(ReasonCode::ChannelConfigError))?;
        stream
            .write_all(&out)
            .await
            .map_err(|_| err(ReasonCode::ConnectionBroken))?;
        // A TLS stream holds records until flushed; a TCP flush does nothing.
        stream
            .flush()
            .await
            .map_err(|_| err(ReasonCode::ConnectionBroken))?;
        let mut rbuf = BytesMut::with_capacity(64 * 1024);
        loop {
            match ServerHello::decode(&mut rbuf) {
                Ok(Some(h)) => return Ok((h, rbuf)),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "bad server hello");
                    return Err(err(ReasonCode::ChannelConfigError));
                }
            }
            match stream.read_buf(&mut rbuf).await {
                Ok(0) => return Err(err(ReasonCode::ConnectionBroken)),
                Err(e) => return Err(err(read_failure(&e))),
                Ok(_) => {}
            }
        }
    };
    let (server, rbuf) = match tokio::time::timeout_at(deadline, exchange).await {
        Ok(r) => r?,
        Err(_) => return Err(err(ReasonCode::HostNotAvailable).into()),
    };
    if let Err(e) = server.status.into_result() {
        tracing::debug!(reason = %e.reason, message = %server.message, "connection refused");
        // A queue manager older than minor 4 reads the compression lists as bytes after
        // the end of the hello and refuses it.
        if hello.flags.contains(HelloFlags::COMPRESSION) && server.minor < MINOR_WITH_COMPRESSION {
            return Err(StartError::NoCompression);
        }
        return Err(e.into());
    }
    if server.major != PROTOCOL_MAJOR {
        return Err(err(ReasonCode::ChannelConfigError).into());
    }
    let negotiated = Negotiated {
        minor: server.minor,
        flags: server.flags,
        max_msg_length: server.max_msg_length,
        heartbeat_interval: server.heartbeat_interval,
        sharecnv: server.sharecnv,
        compression: server.compression,
    };
    Ok((
        stream,
        Arc::new(Socket::new(negotiated, server.qmgr_name)),
        rbuf,
    ))
}
