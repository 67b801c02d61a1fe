//! Turns one request frame into an engine call and its reply.
//!
//! MQI is synchronous per conversation: each frame is one call, answered at once, except
//! a GET that waits, whose reply the engine completes later (the socket keeps where it
//! goes; the server routes the completion to the socket, a [`Connection`]).
//! Errors in the payload of a known verb are answered with the verb's failure reply and
//! the reason code; only frames that break the protocol itself end the socket.
//! A reply whose call logged records it depends on is held until they are durable: each
//! engine call returns what its reply waits for ([`ReplyWait`]), and [`reply::send`]
//! holds it.
//!
//! [`Connection`]: crate::runtime::reply_wait::Connection

use super::reply::{self, fail};
use super::socket::{ParkedCall, SocketShared, Transport};
use crate::runtime::command_server;
use crate::runtime::log_driver::LogUse;
use crate::runtime::reply_wait::ReplyWait;
use crate::runtime::server::{LogRoom, Server};
use crate::runtime::{channel_auth, connauth};
use ferry_engine::{ConnId, ConnectionInfo, GetOutcome};
use ferry_mqi::{MqError, ReasonCode};
use ferry_security::chlauth::CheckClient;
use ferry_wire::{Frame, Reply, Request, Status, Verb, WireError, SOCKET_CONVERSATION};
use std::rc::Rc;
use std::time::Instant;

/// Bodies up to this size are copied out of the read buffer so a message that stays on
/// a queue does not pin the whole 64 KiB read chunk it arrived in; larger bodies are
/// kept as slices of it (they fill most of their chunk anyway).
const COPY_BODY_BELOW: usize = 16 * 1024;

fn status_of(r: Result<Option<ReasonCode>, MqError>) -> Status {
    match r {
        Ok(None) => Status::OK,
        Ok(Some(w)) => Status::from_reason(w),
        Err(e) => e.into(),
    }
}

/// Handles one frame; an `Err` is a protocol violation that ends the socket.
pub fn handle_frame(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    frame: Frame,
) -> Result<(), WireError> {
    handle(server, socket, frame, None)
}

/// Tries again a call that waited for log space ([`Server::retry_log_room_waiters`]):
/// it runs if there is room now, waits on otherwise, and is answered 2102
/// MQRC_RESOURCE_PROBLEM once it has waited `Policy::log_full_patience`.
pub(super) fn retry_parked(server: &Rc<Server>, socket: &Rc<SocketShared>, call: ParkedCall) {
    let ParkedCall {
        frame,
        usage,
        since,
        base,
    } = call;
    if server.waited_too_long_for_log_room(since)
        && server.log_room(usage, u64::MAX) != LogRoom::Ready
    {
        let failed = fail(frame.verb, ReasonCode::ResourceProblem);
        socket.send_reply(frame.conversation, frame.request_id, &failed);
        return;
    }
    // It decoded when it arrived, so it decodes again: no protocol error can come of it.
    let _ = handle(server, socket, frame, Some((since, base)));
}

/// What a call will log, for the room check made before the engine runs it: a put of a
/// message that is not explicitly non-persistent (those never wait for or fill the log),
/// and gets and commits, which may log small records.
fn log_use(request: &Request) -> Option<LogUse> {
    match request {
        Request::Put { md, body, .. } | Request::Put1 { md, body, .. } => (md.persistence
            != ferry_mqi::descriptor::persistence::NOT_PERSISTENT)
            .then_some(LogUse::Put(body.len())),
        Request::Get { .. } | Request::Cmit => Some(LogUse::Small),
        _ => None,
    }
}

/// Handles one frame, `waited` (since when, and the checkpoints completed then) when it
/// waited for log space already. Inlined into [`handle_frame`], the hot path: out of line,
/// moving the decoded request (descriptors and all) cost ~2% more instructions per round
/// trip.
#[inline(always)]
fn handle(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    frame: Frame,
    waited: Option<(Instant, u64)>,
) -> Result<(), WireError> {
    if frame.is_reply() {
        // Only heartbeat answers travel client → server as replies.
        return match frame.verb {
            Verb::Heartbeat => Ok(()),
            _ => Err(WireError::UnexpectedVerb {
                verb: frame.verb.code(),
                expected: "a request",
            }),
        };
    }
    let request = match Request::decode_at(&frame, socket.negotiated.minor) {
        Ok(request) => request,
        // A well-formed call of a verb the connection's minor lacks (SUB from a client
        // that agreed minor 4): refused, the socket carries on.
        Err(WireError::VerbNotNegotiated { .. }) if frame.conversation != SOCKET_CONVERSATION => {
            let refused = fail(frame.verb, ReasonCode::FunctionNotSupported);
            socket.send_reply(frame.conversation, frame.request_id, &refused);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let conv = frame.conversation;
    let rid = frame.request_id;
    if conv == SOCKET_CONVERSATION {
        return match request {
            Request::Heartbeat => {
                socket.send_reply(conv, rid, &Reply::Heartbeat);
                Ok(())
            }
            _ => Err(WireError::UnexpectedVerb {
                verb: frame.verb.code(),
                expected: "a heartbeat on conversation 0",
            }),
        };
    }
    if let Request::Conn(c) = &request {
        if let Some(reply) = connect(server, socket, conv, rid, c) {
            socket.send_reply(conv, rid, &reply);
        }
        return Ok(());
    }
    let Some(conn) = socket.conversations.borrow().get(&conv).copied() else {
        let reply = fail(request.verb(), ReasonCode::HconnError);
        socket.send_reply(conv, rid, &reply);
        return Ok(());
    };
    // A call waits for log space aside (below): the conversation's next request while it
    // does is a call in progress (2219), as MQ answers one made while another runs on the
    // same connection, except MQDISC, which drops the waiting call (it is never made).
    if socket.waits_for_log_room(conv) {
        if let Request::Disc { .. } = request {
            socket.forget_log_room_call(server, conv);
        } else {
            socket.send_reply(conv, rid, &fail(request.verb(), ReasonCode::CallInProgress));
            return Ok(());
        }
    }
    // A call that logs runs only when the log has room for it; while a checkpoint frees
    // space it waits aside, so the thread (and every other conversation) carries on. A put
    // also waits behind puts already waiting: first come, first served.
    if let Some(usage) = log_use(&request) {
        let room = if matches!(usage, LogUse::Put(_)) && server.has_put_waiters() {
            LogRoom::Wait
        } else {
            let checkpoints = waited.map_or(0, |(_, base)| {
                server.checkpoints_completed().saturating_sub(base)
            });
            server.log_room(usage, checkpoints)
        };
        match room {
            LogRoom::Ready => {}
            LogRoom::Wait => {
                let (since, base) =
                    waited.unwrap_or_else(|| (Instant::now(), server.checkpoints_completed()));
                socket.park_for_log_room(
                    server,
                    ParkedCall {
                        frame,
                        usage,
                        since,
                        base,
                    },
                );
                return Ok(());
            }
            LogRoom::Refused => {
                socket.send_reply(
                    conv,
                    rid,
                    &fail(request.verb(), ReasonCode::ResourceProblem),
                );
                return Ok(());
            }
        }
    }
    // What the reply waits for: every engine call of the request adds to it. (An out
    // parameter, not a returned tuple: the reply is built in place, not moved.)
    let mut wait = ReplyWait::default();
    let reply = match request {
        Request::Conn(_) | Request::Heartbeat => fail(request.verb(), ReasonCode::CallInProgress),
        Request::Disc { backout } => {
            socket.conversations.borrow_mut().remove(&conv);
            wait = end_conversation(server, socket, conn, !backout);
            Reply::Disc { status: Status::OK }
        }
        Request::Open { od, options } => {
            match server.call(&mut wait, |e, now, fx| e.open(conn, &od, options, now, fx)) {
                Ok(opened) => Reply::Open {
                    status: Status::OK,
                    hobj: opened.hobj.0,
                    resolved_q_name: ferry_mqi::FixedStr::truncating(&opened.resolved_q_name),
                    resolved_qmgr_name: ferry_mqi::FixedStr::truncating(&opened.resolved_qmgr_name),
                },
                Err(e) if super::cluster_wait::asked(server, &od, e.reason) => {
                    // A partial repository asked its full repositories: answered later.
                    super::cluster_wait::open_later(server, socket, (conv, rid), conn, od, options);
                    return Ok(());
                }
                Err(e) => fail(Verb::Open, e.reason),
            }
        }
        Request::OpenTopic {
            object_name,
            object_string,
            options,
        } => match server.call(&mut wait, |e, _now, fx| {
            e.open_topic(conn, object_name.as_str(), &object_string, options, fx)
        }) {
            Ok(opened) => Reply::OpenTopic {
                status: Status::OK,
                hobj: opened.hobj.0,
                topic_string: res_object_string(opened.object_name),
            },
            Err(e) => fail(Verb::OpenTopic, e.reason),
        },
        Request::Sub { sd, hobj } => subscribe(server, &mut wait, conn, &sd, hobj),
        Request::SubRq { hsub, action } => {
            if action != ferry_mqi::subscription::ACTION_PUBLICATION {
                fail(Verb::SubRq, ferry_mqi::ReasonCode::ActionError)
            } else {
                match server.call(&mut wait, |e, now, fx| {
                    e.subscription_request(conn, ferry_engine::Hobj(hsub), now, fx)
                }) {
                    Ok(n) => Reply::SubRq {
                        status: Status::OK,
                        num_pubs: i32::try_from(n).unwrap_or(i32::MAX),
                    },
                    Err(e) => fail(Verb::SubRq, e.reason),
                }
            }
        }
        Request::Close { hobj, options } => {
            let r = server.call(&mut wait, |e, now, fx| {
                e.close(conn, ferry_engine::Hobj(hobj), options, now, fx)
            });
            Reply::Close {
                status: status_of(r),
            }
        }
        Request::Put {
            hobj,
            mut md,
            pmo,
            properties,
            body,
        } => {
            let body = own_body(body);
            let h = ferry_engine::Hobj(hobj);
            let r = match application_properties(properties) {
                Ok(properties) if server.telemetry.is_on() => {
                    super::traced::put(server, &mut wait, conn, h, &mut md, &pmo, body, properties)
                }
                Ok(properties) => server.call(&mut wait, |e, now, fx| {
                    e.put_with_properties(conn, h, &mut md, &pmo, body, properties, now, fx)
                }),
                Err(e) => Err(e),
            };
            Reply::Put {
                status: status_of(r),
                md,
            }
        }
        Request::Put1 {
            od,
            mut md,
            pmo,
            properties,
            body,
        } => {
            let body = own_body(body);
            let r = match application_properties(properties) {
                Err(e) => Err(e),
                Ok(properties) => {
                    // Kept for a put made again once a partial repository's question
                    // about the queue is answered (`cluster_wait`); clones of shared
                    // buffers.
                    let retry = (md, properties.clone(), body.clone());
                    let r = if server.telemetry.is_on() {
                        super::traced::put1(
                            server, &mut wait, conn, &od, &mut md, &pmo, body, properties,
                        )
                    } else {
                        server.call(&mut wait, |e, now, fx| {
                            e.put1_with_properties(
                                conn, &od, &mut md, &pmo, body, properties, now, fx,
                            )
                        })
                    };
                    if let Err(e) = &r {
                        if super::cluster_wait::asked(server, &od, e.reason) {
                            let (md, properties, body) = retry;
                            let call = super::cluster_wait::Put1Call {
                                od,
                                md,
                                pmo,
                                properties,
                                body,
                            };
                            super::cluster_wait::put1_later(
                                server,
                                socket,
                                (conv, rid),
                                conn,
                                call,
                            );
                            return Ok(());
                        }
                    }
                    r
                }
            };
            Reply::Put1 {
                status: status_of(r),
                md,
            }
        }
        Request::Get {
            hobj,
            md,
            gmo,
            max_len,
        } => {
            let max_len = (max_len as usize).min(socket.negotiated.max_msg_length as usize);
            let outcome = server.call(&mut wait, |e, now, fx| {
                e.get(conn, ferry_engine::Hobj(hobj), &md, &gmo, max_len, now, fx)
            });
            match outcome {
                GetOutcome::Done(result) => {
                    if server.telemetry.is_on() {
                        super::traced::got(server, conn, ferry_engine::Hobj(hobj), &gmo, &result);
                    }
                    reply::get_reply(result)
                }
                GetOutcome::Waiting => {
                    socket.get_waits(conn, conv, rid, hobj, gmo.options);
                    server.get_waits();
                    return Ok(());
                }
            }
        }
        // MQ's bound on SelectorCount, checked before any work: the count is the client's.
        Request::Inq { selectors, .. } if selectors.len() > ferry_mqi::inquire::MAX_SELECTORS => {
            fail(Verb::Inq, ReasonCode::SelectorLimitExceeded)
        }
        Request::Inq { hobj, selectors } => {
            match server.call(&mut wait, |e, _now, _fx| {
                e.inquire(conn, ferry_engine::Hobj(hobj), &selectors)
            }) {
                Ok(values) => Reply::Inq {
                    status: Status::OK,
                    values,
                },
                Err(e) => fail(Verb::Inq, e.reason),
            }
        }
        Request::Set { attrs, .. } if attrs.len() > ferry_mqi::inquire::MAX_SELECTORS => {
            fail(Verb::Set, ReasonCode::SelectorLimitExceeded)
        }
        Request::Set { hobj, attrs } => Reply::Set {
            status: status_of(
                server
                    .call(&mut wait, |e, now, fx| {
                        e.set(conn, ferry_engine::Hobj(hobj), &attrs, now, fx)
                    })
                    .map(|()| None),
            ),
        },
        Request::Cmit => {
            let r = server.call(&mut wait, |e, now, fx| e.commit(conn, now, fx));
            if server.telemetry.is_on() {
                let outcome = r.as_ref().map(drop).map_err(|e| e.reason);
                server.telemetry.settled("MQCMIT", conn, outcome);
            }
            Reply::Cmit {
                status: status_of(r.map(|()| None)),
            }
        }
        Request::Back => {
            let r = server.call(&mut wait, |e, now, fx| e.backout(conn, now, fx));
            if server.telemetry.is_on() {
                let outcome = r.as_ref().map(drop).map_err(|e| e.reason);
                server.telemetry.settled("MQBACK", conn, outcome);
            }
            Reply::Back {
                status: status_of(r.map(|()| None)),
            }
        }
        Request::Mqsc { command } => {
            let issuer = server.engine.borrow().connection_principal(conn);
            // The status is the transport's outcome (protocol.md, `Reply::Mqsc`): a
            // command that failed is reported by `output.failed` and its lines (e.g.
            // FRY8147E), which a FAILED status would make the client discard.
            match command_server::run(server, &command, issuer.as_deref(), &mut wait) {
                command_server::Answer::Now(output) => Reply::Mqsc {
                    status: Status::OK,
                    output,
                },
                command_server::Answer::Later(work) => {
                    // PING, RESET, RESOLVE CHANNEL: answered when the work ends; the
                    // socket's other conversations carry on meanwhile.
                    let socket = socket.clone();
                    tokio::task::spawn_local(async move {
                        let output = work.await;
                        let reply = Reply::Mqsc {
                            status: Status::OK,
                            output,
                        };
                        socket.send_reply(conv, rid, &reply);
                    });
                    return Ok(());
                }
            }
        }
    };
    // Held until the log is durable when the call logged records its reply depends on.
    reply::send(server, socket, conv, rid, &reply, wait);
    Ok(())
}

/// MQSUB: the selection string compiled as JMS selectors are (2459
/// MQRC_SELECTOR_SYNTAX_ERROR when it does not compile), then the engine's subscribe.
/// Its effects (a durable subscription saved, a managed queue made) reach the reply's
/// wait as every call's do.
fn subscribe(
    server: &Server,
    wait: &mut ReplyWait,
    conn: ConnId,
    sd: &ferry_mqi::SubscriptionDescriptor,
    hobj: i32,
) -> Reply {
    let selection = match crate::amqp_mapping::JmsSelection::parse(&sd.selection_string) {
        Ok(s) => s.map(|s| Rc::new(s) as Rc<dyn ferry_engine::MessageFilter>),
        Err(_) => return fail(Verb::Sub, ReasonCode::SelectorSyntaxError),
    };
    let provided = (hobj != 0).then_some(ferry_engine::Hobj(hobj));
    match server.call(wait, |e, now, fx| {
        e.subscribe(conn, sd, provided, selection, now, fx)
    }) {
        Ok(s) => Reply::Sub {
            status: Status::OK,
            hsub: s.hsub.0,
            hobj: s.hobj.map_or(0, |h| h.0),
            sub_id: s.sub_id.0,
            topic_string: res_object_string(s.topic_string),
            destination: ferry_mqi::FixedStr::truncating(&s.destination),
        },
        Err(e) => fail(Verb::Sub, e.reason),
    }
}

/// A resolved topic string as the wire carries it: at most 10,240 bytes. The engine
/// bounds topic strings in characters, so one of multi-byte characters can be longer in
/// bytes; it is cut at a character boundary rather than leave the call unanswered (the
/// handle is whole, only the ResObjectString shown is cut).
fn res_object_string(mut topic: String) -> String {
    let max = ferry_wire::MAX_OBJECT_STRING_LEN;
    if topic.len() > max {
        let cut = (0..=max)
            .rev()
            .find(|&i| topic.is_char_boundary(i))
            .unwrap_or(0);
        topic.truncate(cut);
    }
    topic
}

/// The properties a PUT or PUT1 carried, copied out of the read buffer, once checked: a
/// malformed encoding fails with 2110 MQRC_FORMAT_ERROR, a name in the queue manager's
/// namespaces (`mq…`, `JMS…`) with 2442 MQRC_PROPERTY_NAME_ERROR.
fn application_properties(properties: bytes::Bytes) -> Result<bytes::Bytes, ferry_mqi::MqError> {
    if properties.is_empty() {
        return Ok(properties);
    }
    ferry_mqi::MessageProperties::check_application_encoding(&properties)
        .map_err(|e| ferry_mqi::MqError::from(e.reason()))?;
    Ok(bytes::Bytes::copy_from_slice(&properties))
}

fn own_body(body: bytes::Bytes) -> bytes::Bytes {
    if body.len() < COPY_BODY_BELOW {
        bytes::Bytes::copy_from_slice(&body)
    } else {
        body
    }
}

fn conn_failed(reason: ReasonCode) -> Reply {
    Reply::Conn {
        status: Status::from_reason(reason),
        qmgr_name: ferry_mqi::FixedStr::BLANK,
    }
}

/// MQCONN: the checks (channel authentication records, then connection authentication),
/// then the engine connection. `None`: a password is being checked, or the user's groups
/// read from an LDAP directory (AUTHINFO AUTHORMD other than OS); the reply is sent when
/// that is done.
fn connect(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    conv: u32,
    rid: u32,
    c: &ferry_wire::ConnRequest,
) -> Option<Reply> {
    let failed = |reason| Some(conn_failed(reason));
    if socket.conversations.borrow().contains_key(&conv)
        || socket.authenticating.borrow().contains(&conv)
    {
        return failed(ReasonCode::AlreadyConnected);
    }
    let open = socket.conversations.borrow().len() + socket.authenticating.borrow().len();
    if open >= socket.negotiated.sharecnv as usize {
        return failed(ReasonCode::ChannelNotAvailable);
    }
    let wanted = c.qmgr_name.as_str();
    if !wanted.is_empty() && wanted != server.name && wanted != "*" {
        return failed(ReasonCode::QMgrNameError);
    }
    if server.state.get() != crate::lifecycle::QmgrState::Running {
        return failed(ReasonCode::QMgrQuiescing);
    }
    // Who connects, in owned form: a password check finishes in a task of its own.
    let (local, address, certificate) = match &socket.transport {
        Transport::Bindings { .. } => (true, String::new(), None),
        Transport::Tcp { peer, tls } => (
            false,
            peer.clone(),
            tls.as_deref()
                .and_then(crate::runtime::tls::TlsSession::peer_names)
                .map(|(s, i)| (s.clone(), i.clone())),
        ),
    };
    let mca_user = if local {
        String::new()
    } else {
        server
            .engine
            .borrow()
            .channel(&socket.channel)
            .map(|ch| ch.attributes.mca_user)
            .unwrap_or_default()
    };
    // A local application is who the kernel says it runs as; a client, who it says.
    let flowed = match &socket.transport {
        Transport::Bindings {
            user: Some(user), ..
        } => user.clone(),
        _ => c.user_id.as_str().to_string(),
    };
    let who = Who {
        local,
        address,
        certificate,
        mca_user,
        flowed,
        application: c.appl_name.as_str().to_string(),
    };
    let admitted = if local {
        None
    } else {
        match channel_auth::map(server, &who.arrival(&socket.channel)) {
            Some(a) => Some(a),
            None => return failed(ReasonCode::NotAuthorized),
        }
    };
    let credentials = c.credentials.as_ref();
    let claimant = connauth::Claimant {
        local,
        record: admitted
            .as_ref()
            .map_or(CheckClient::AsQmgr, channel_auth::Admitted::check_client),
        asserted: credentials.map_or(who.flowed.as_str(), |cr| cr.user.as_str()),
        credentials: credentials.map(|cr| (cr.user.as_str(), cr.password.as_str())),
        channel: &socket.channel,
        address: if local { "(bindings)" } else { &who.address },
        application: &who.application,
    };
    match connauth::plan(server, &claimant) {
        connauth::Plan::Skip => {
            let Some(user_id) = final_user(server, socket, &who, admitted.as_ref(), None) else {
                return failed(ReasonCode::NotAuthorized);
            };
            // The hot case: nothing to wait for, the connection is made now.
            let Some(directory) = connauth::groups_to_read(server, &user_id) else {
                return Some(connect_as(server, socket, conv, &who, user_id));
            };
            // Its groups come from an LDAP directory: read aside, like a password check,
            // so the socket's other conversations carry on.
            socket.authenticating.borrow_mut().push(conv);
            let (server, socket) = (server.clone(), socket.clone());
            tokio::task::spawn_local(async move {
                let reply =
                    read_groups_then_connect(&server, &socket, conv, &who, user_id, directory)
                        .await;
                socket.authenticating.borrow_mut().retain(|c| *c != conv);
                if let Some(reply) = reply {
                    socket.send_reply(conv, rid, &reply);
                }
            });
            None
        }
        connauth::Plan::Refuse { fail_delay } => {
            socket.authenticating.borrow_mut().push(conv);
            let socket = socket.clone();
            tokio::task::spawn_local(async move {
                connauth::refuse_later(fail_delay).await;
                socket.authenticating.borrow_mut().retain(|c| *c != conv);
                socket.send_reply(conv, rid, &conn_failed(ReasonCode::NotAuthorized));
            });
            None
        }
        connauth::Plan::Verify {
            user,
            password,
            adopt,
            fail_delay,
        } => {
            socket.authenticating.borrow_mut().push(conv);
            let (server, socket) = (server.clone(), socket.clone());
            tokio::task::spawn_local(async move {
                let proved = connauth::verify(
                    &server,
                    &socket.channel,
                    who.shown(),
                    user,
                    password,
                    fail_delay,
                )
                .await;
                let reply = match proved {
                    None => Some(conn_failed(ReasonCode::NotAuthorized)),
                    Some(_) if socket.is_closing() => None,
                    Some(id) => {
                        let adopted = adopt.then_some(id.as_str());
                        match final_user(&server, &socket, &who, admitted.as_ref(), adopted) {
                            None => Some(conn_failed(ReasonCode::NotAuthorized)),
                            Some(user_id) => match connauth::groups_to_read(&server, &user_id) {
                                None => Some(connect_as(&server, &socket, conv, &who, user_id)),
                                Some(directory) => {
                                    read_groups_then_connect(
                                        &server, &socket, conv, &who, user_id, directory,
                                    )
                                    .await
                                }
                            },
                        }
                    }
                };
                socket.authenticating.borrow_mut().retain(|c| *c != conv);
                if let Some(reply) = reply {
                    socket.send_reply(conv, rid, &reply);
                }
            });
            None
        }
    }
}

/// Reads `user_id`'s groups from the LDAP directory, then makes the engine connection;
/// refused (2035, FRY5531E logged) when the groups cannot be read. `None`: the socket
/// closed meanwhile, nothing to answer.
async fn read_groups_then_connect(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    conv: u32,
    who: &Who,
    user_id: String,
    directory: crate::ldap_users::LdapSettings,
) -> Option<Reply> {
    let read =
        connauth::read_groups(server, directory, &user_id, &socket.channel, who.shown()).await;
    if socket.is_closing() {
        return None;
    }
    Some(if read {
        connect_as(server, socket, conv, who, user_id)
    } else {
        conn_failed(ReasonCode::NotAuthorized)
    })
}

/// Who an MQCONN comes from, owned so that a password check can finish later.
struct Who {
    local: bool,
    address: String,
    certificate: Option<(
        ferry_security::DistinguishedName,
        ferry_security::DistinguishedName,
    )>,
    mca_user: String,
    flowed: String,
    application: String,
}

impl Who {
    /// The partner, for the error log.
    fn shown(&self) -> &str {
        if self.local {
            "(bindings)"
        } else {
            &self.address
        }
    }

    fn arrival<'a>(&'a self, channel: &'a str) -> channel_auth::Arrival<'a> {
        channel_auth::Arrival {
            channel,
            channel_mca_user: &self.mca_user,
            address: &self.address,
            client_user: &self.flowed,
            certificate: self.certificate.as_ref().map(|(s, i)| (s, i)),
        }
    }
}

/// The user id the conversation runs as (BLOCKUSER checked for clients); `None`: refused.
fn final_user(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    who: &Who,
    admitted: Option<&channel_auth::Admitted>,
    adopted: Option<&str>,
) -> Option<String> {
    match admitted {
        None => Some(ferry_security::connauth::effective_user(
            None,
            "",
            adopted,
            &who.flowed,
        )),
        Some(a) => channel_auth::finish(server, &who.arrival(&socket.channel), a, adopted),
    }
}

/// The engine connection, as `user_id`.
fn connect_as(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    conv: u32,
    who: &Who,
    user_id: String,
) -> Reply {
    let info = ConnectionInfo {
        application_name: who.application.clone(),
        channel: socket.channel.clone(),
        connection_name: socket.connection_name(),
        user_id,
        pid: socket.pid(),
    };
    match server.with_engine(|e, now, fx| e.connect(info, now, fx)) {
        Ok(conn) => {
            socket.conversations.borrow_mut().insert(conv, conn);
            server.begin_conversation(conn, socket.clone());
            socket.mark_connected();
            Reply::Conn {
                status: Status::OK,
                qmgr_name: ferry_mqi::FixedStr::truncating(&server.name),
            }
        }
        Err(e) => conn_failed(e.reason),
    }
}

/// Ends conversation `conn` of `socket`: `normal` commits its unit of work, otherwise it
/// is backed out. Returns what a reply to its MQDISC waits for (the commit's records).
pub(super) fn end_conversation(
    server: &Server,
    socket: &SocketShared,
    conn: ConnId,
    normal: bool,
) -> ReplyWait {
    socket.forget_waiting_get(conn);
    server.end_conversation(conn, normal)
}
