//! Engine tests: one module per area, sharing the [`Harness`] below.

mod admin;
mod authorization;
mod backout_threshold;
mod body;
mod browse;
mod consumer;
mod consumer_persistence;
mod context;
mod inquire;
mod model;
mod mqi;
mod open;
mod persistence;
mod pubsub;
mod pubsub_admin;
mod redelivery_delay;
mod report;
mod statistics;
mod syncpoint;
mod trigger;
mod wait;

use crate::{
    ConnId, ConnectionInfo, Effect, Effects, GetOutcome, GetResult, Hobj, QueueManager, Timestamp,
};
use bytes::Bytes;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, MqError, ObjectDescriptor, OpenOptions,
    PutOptionFlags, PutOptions, ReasonCode,
};
use ferry_objects::{QmgrAttributes, QueueAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
pub const T0: u64 = 1_704_067_200_000;

/// A queue manager with its effects buffer and a settable clock.
pub struct Harness {
    pub qm: QueueManager,
    pub fx: Effects,
    pub now: u64,
}

pub fn id(b: u8) -> [u8; 24] {
    let mut x = [0; 24];
    x[0] = b;
    x[23] = b;
    x
}

impl Harness {
    pub fn new() -> Self {
        let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), Timestamp(T0));
        qm.define_system_objects(Timestamp(T0));
        Harness {
            qm,
            fx: Effects::new(),
            now: T0,
        }
    }

    pub fn t(&self) -> Timestamp {
        Timestamp(self.now)
    }

    pub fn conn(&mut self) -> ConnId {
        self.qm
            .connect(
                ConnectionInfo {
                    application_name: "test-app".into(),
                    channel: "SYSTEM.DEF.SVRCONN".into(),
                    connection_name: "127.0.0.1".into(),
                    user_id: "alice".into(),
                    pid: None,
                },
                self.t(),
                &mut Effects::new(),
            )
            .unwrap()
    }

    pub fn define(&mut self, name: &str, qt: QueueType, f: impl FnOnce(&mut QueueAttributes)) {
        let mut d = QueueDefinition::new(name, qt);
        f(&mut d.attributes);
        let t = self.t();
        self.qm.define_queue(d, false, t, &mut self.fx).unwrap();
        // Tests look at the effects of the calls under test only.
        self.fx.clear();
    }

    pub fn local(&mut self, name: &str) {
        self.define(name, QueueType::Local, |_| {});
    }

    pub fn try_open(
        &mut self,
        c: ConnId,
        name: &str,
        o: OpenOptions,
    ) -> Result<crate::Opened, MqError> {
        let t = self.t();
        self.qm.open(
            c,
            &ObjectDescriptor::queue(name).unwrap(),
            o,
            t,
            &mut self.fx,
        )
    }

    pub fn open(&mut self, c: ConnId, name: &str, o: OpenOptions) -> Hobj {
        self.try_open(c, name, o).unwrap().hobj
    }

    pub fn put_md(
        &mut self,
        c: ConnId,
        h: Hobj,
        md: &mut MessageDescriptor,
        pmo: PutOptionFlags,
        body: &[u8],
    ) -> Result<Option<ReasonCode>, MqError> {
        let t = self.t();
        self.qm.put(
            c,
            h,
            md,
            &PutOptions::new(pmo),
            Bytes::copy_from_slice(body),
            t,
            &mut self.fx,
        )
    }

    /// Puts `body` with a default descriptor; returns the descriptor as completed.
    pub fn put(&mut self, c: ConnId, h: Hobj, body: &[u8]) -> MessageDescriptor {
        let mut md = MessageDescriptor::default();
        self.put_md(c, h, &mut md, PutOptionFlags::empty(), body)
            .unwrap();
        md
    }

    pub fn put_sync(&mut self, c: ConnId, h: Hobj, body: &[u8]) -> MessageDescriptor {
        let mut md = MessageDescriptor::default();
        self.put_md(c, h, &mut md, PutOptionFlags::SYNCPOINT, body)
            .unwrap();
        md
    }

    pub fn get_with(
        &mut self,
        c: ConnId,
        h: Hobj,
        md: &MessageDescriptor,
        options: GetOptionFlags,
        wait: i32,
        max_len: usize,
    ) -> GetOutcome {
        let t = self.t();
        let gmo = GetOptions {
            options,
            wait_interval: wait,
            ..GetOptions::default()
        };
        self.qm.get(c, h, md, &gmo, max_len, t, &mut self.fx)
    }

    /// A get that must finish now.
    pub fn get_now(&mut self, c: ConnId, h: Hobj, options: GetOptionFlags) -> GetResult {
        self.get_with(c, h, &MessageDescriptor::default(), options, 0, 1 << 20)
            .done()
            .expect("get finished")
    }

    /// The body of the next message (no syncpoint), or the reason code.
    pub fn get_body(&mut self, c: ConnId, h: Hobj) -> Result<Vec<u8>, ReasonCode> {
        self.get_now(c, h, GetOptionFlags::NO_SYNCPOINT)
            .map(|g| g.data.to_vec())
            .map_err(|e| e.reason())
    }

    pub fn depth(&self, q: &str) -> u64 {
        self.qm.queue_status(q, self.t()).unwrap().current_depth
    }

    /// The GET completions pushed so far (and clears the buffer).
    pub fn completions(&mut self) -> Vec<(ConnId, Result<Vec<u8>, ReasonCode>)> {
        self.fx
            .drain()
            .filter_map(|e| match e {
                Effect::GetCompleted { conn, result, .. } => Some((
                    conn,
                    result.map(|g| g.data.to_vec()).map_err(|e| e.reason()),
                )),
                _ => None,
            })
            .collect()
    }
}

pub fn rc<T: std::fmt::Debug>(r: Result<T, MqError>) -> ReasonCode {
    r.unwrap_err().reason
}

pub const IO: OpenOptions = OpenOptions::INPUT_SHARED.union(OpenOptions::OUTPUT);
