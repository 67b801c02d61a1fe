//! One AMQP connection over a tokio TCP socket, shared by the applications (sessions)
//! packed onto it: what a Qpid JMS `Connection` is to the broker.
//!
//! The protocol state is a sans-I/O [`ferry_amqp::connection::Connection`] held in
//! [`Shared`] with what the reader filed ([`super::demux`]), used by two tasks and the
//! applications:
//! - the reader reads into one reused buffer, feeds [`Connection::receive`] and files
//!   each event with the session or link it concerns, waking only its waiter;
//! - the writer waits to be woken, runs [`Connection::tick`] (heartbeats, idle
//!   timeout) and writes out everything queued by every session since it last ran in
//!   one write, so many applications' frames go out in one syscall; no task is spawned
//!   per message.
//!
//! Callers never hold a borrow across an await.

use std::rc::Rc;
use std::time::Duration;

use bytes::BytesMut;
use ferry_amqp::connection::{ClientSasl, Config, Connection as Protocol};
use ferry_amqp::Open;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use super::demux::Shared;
use super::error::{AmqpError, Condition};
use super::url::AmqpUrl;

/// How long connecting (TCP, SASL, open) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Bytes the reader asks the socket for at a time (the buffer is reused).
const READ_CHUNK: usize = 64 * 1024;

/// One socket with its reader and writer. Must be used inside a tokio `LocalSet`.
pub struct Connection {
    pub(super) shared: Rc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

impl Connection {
    /// Connects to `url`: TCP (no Nagle), SASL (PLAIN with the URL's user, else
    /// ANONYMOUS) and open, within [`CONNECT_TIMEOUT`]. No session yet.
    pub async fn connect(url: &AmqpUrl, container_id: &str) -> Result<Connection, AmqpError> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(url.authority()))
            .await
            .map_err(|_| AmqpError::Timeout(format!("connecting to {url}")))?
            .map_err(|e| AmqpError::Io(format!("connect to {url}"), e))?;
        let _ = stream.set_nodelay(true);
        let sasl = match &url.user {
            Some(user) => ClientSasl::Plain {
                user: user.clone(),
                password: url.password.clone().unwrap_or_default(),
            },
            None => ClientSasl::Anonymous,
        };
        let mut conn = Protocol::client(Config::default(), sasl);
        let mut open = Open::new(container_id);
        open.hostname = Some(url.host.as_str().into());
        conn.open(open)?;
        let shared = Rc::new(Shared::new(conn));
        let (rd, wr) = stream.into_split();
        let tasks = vec![
            tokio::task::spawn_local(read_loop(shared.clone(), rd)),
            tokio::task::spawn_local(write_loop(shared.clone(), wr)),
        ];
        let connection = Connection { shared, tasks };
        let shared = &connection.shared;
        let opened = async {
            loop {
                if let Some(e) = shared.dead_error() {
                    return Err(e);
                }
                if shared.state.borrow().opened {
                    return Ok(());
                }
                shared.wake_conn.notified().await;
            }
        };
        tokio::time::timeout(CONNECT_TIMEOUT, opened)
            .await
            .map_err(|_| {
                AmqpError::Timeout(format!("waiting for {url} to open the connection"))
            })??;
        Ok(connection)
    }

    /// The connection's error, if it is gone.
    pub fn error(&self) -> Option<AmqpError> {
        self.shared.dead_error()
    }

    /// Closes the connection (the broker releases what was delivered and not
    /// accepted) and waits up to 2 s for the broker's close.
    pub async fn close(&self) {
        let closed = self.shared.conn.borrow_mut().close(None).is_ok();
        self.shared.wake_writer.notify_one();
        if closed {
            let wait = async {
                while self.shared.state.borrow().dead.is_none() {
                    self.shared.wake_conn.notified().await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), wait).await;
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shared.kill(AmqpError::Closed(Condition {
            condition: String::new(),
            description: "closed by the harness".into(),
        }));
        for t in &self.tasks {
            // The writer ends by itself once the close is written; the reader may sit
            // in a read of a socket the broker keeps open.
            if !t.is_finished() {
                t.abort();
            }
        }
    }
}

async fn read_loop(shared: Rc<Shared>, mut rd: OwnedReadHalf) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let mut events = Vec::new();
    loop {
        buf.reserve(READ_CHUNK);
        match rd.read_buf(&mut buf).await {
            Ok(0) => {
                shared.kill(AmqpError::Closed(Condition {
                    condition: String::new(),
                    description: "the broker closed the socket".into(),
                }));
                return;
            }
            Err(e) => return shared.kill(AmqpError::Io("read".into(), e)),
            Ok(_) => {}
        }
        let now = shared.now_ms();
        let (finished, wants_write) = {
            let mut c = shared.conn.borrow_mut();
            c.receive(&mut buf, now, &mut events);
            (c.is_finished(), c.wants_write())
        };
        shared.dispatch(&mut events);
        if wants_write || finished {
            shared.wake_writer.notify_one();
        }
        if finished {
            return;
        }
    }
}

async fn write_loop(shared: Rc<Shared>, mut wr: OwnedWriteHalf) {
    let mut events = Vec::new();
    // One timer for the heartbeat deadline, moved rather than made anew per wake-up.
    let timer = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(timer);
    loop {
        let now = shared.now_ms();
        let (out, next, finished) = {
            let mut c = shared.conn.borrow_mut();
            let next = c.tick(now, &mut events);
            let out = c.wants_write().then(|| c.take_output());
            (out, next, c.is_finished())
        };
        shared.dispatch(&mut events);
        if let Some(out) = out {
            if let Err(e) = wr.write_all(&out).await {
                return shared.kill(AmqpError::Io("write".into(), e));
            }
            continue;
        }
        if finished || shared.state.borrow().dead.is_some() {
            let _ = wr.shutdown().await;
            return;
        }
        let deadline = next.map_or(Duration::from_secs(3600), |t| {
            Duration::from_millis(t.saturating_sub(now))
        });
        let at = shared.instant_at(now) + deadline;
        if timer.deadline() != at {
            timer.as_mut().reset(at);
        }
        tokio::select! {
            biased;
            _ = shared.wake_writer.notified() => {}
            _ = &mut timer => {}
        }
    }
}
