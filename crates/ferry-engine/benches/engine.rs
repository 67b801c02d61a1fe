//! Hot-path benchmarks of the engine: a put handed straight to a waiting getter, a
//! put + get by CorrelId on a 100k-deep queue, and a 2 KB put handed to an unsettled
//! consumer with credit then accepted (the AMQP path). Reported, never asserted.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use ferry_engine::{
    ConnectionInfo, ConsumeMode, ConsumeSpec, Effect, Effects, GetOutcome, QueueManager,
    Settlement, Timestamp,
};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions,
};
use ferry_objects::{QmgrAttributes, QueueDefinition, QueueType};
use std::hint::black_box;

const T0: Timestamp = Timestamp(1_704_067_200_000);

fn setup(max_depth: i32) -> (QueueManager, Effects) {
    let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), T0);
    let mut fx = Effects::new();
    let mut d = QueueDefinition::new("Q", QueueType::Local);
    d.attributes.max_depth = max_depth;
    qm.define_queue(d, false, T0, &mut fx).expect("define");
    fx.clear();
    (qm, fx)
}

fn handoff(c: &mut Criterion) {
    let (mut qm, mut fx) = setup(5000);
    let getter = qm
        .connect(ConnectionInfo::default(), T0, &mut Effects::new())
        .expect("connect");
    let putter = qm
        .connect(ConnectionInfo::default(), T0, &mut Effects::new())
        .expect("connect");
    let od = ObjectDescriptor::queue("Q").expect("name");
    let hg = qm
        .open(getter, &od, OpenOptions::INPUT_SHARED, T0, &mut fx)
        .expect("open")
        .hobj;
    let hp = qm
        .open(putter, &od, OpenOptions::OUTPUT, T0, &mut fx)
        .expect("open")
        .hobj;
    let body = Bytes::from_static(&[7u8; 256]);
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT,
        wait_interval: 60_000,
        ..GetOptions::default()
    };
    let mut corr = 0u64;
    c.bench_function("put_to_waiting_get_by_correlid", |b| {
        b.iter(|| {
            corr += 1;
            let mut want = MessageDescriptor::default();
            want.correl_id[..8].copy_from_slice(&corr.to_be_bytes());
            let r = qm.get(getter, hg, &want, &gmo, 4096, T0, &mut fx);
            debug_assert_eq!(r, GetOutcome::Waiting);
            let mut md = want;
            qm.put(
                putter,
                hp,
                &mut md,
                &PutOptions::default(),
                body.clone(),
                T0,
                &mut fx,
            )
            .expect("put");
            black_box(fx.drain().count());
        })
    });
}

fn deep_correl(c: &mut Criterion) {
    let (mut qm, mut fx) = setup(200_000);
    let conn = qm
        .connect(ConnectionInfo::default(), T0, &mut Effects::new())
        .expect("connect");
    let od = ObjectDescriptor::queue("Q").expect("name");
    let h = qm
        .open(
            conn,
            &od,
            OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT,
            T0,
            &mut fx,
        )
        .expect("open")
        .hobj;
    let body = Bytes::from_static(&[1u8; 256]);
    for i in 0..100_000u64 {
        let mut md = MessageDescriptor::default();
        md.correl_id[..8].copy_from_slice(&i.to_be_bytes());
        md.correl_id[8] = 1;
        qm.put(
            conn,
            h,
            &mut md,
            &PutOptions::default(),
            body.clone(),
            T0,
            &mut fx,
        )
        .expect("fill");
    }
    let gmo = GetOptions::default();
    let mut n = 1_000_000u64;
    c.bench_function("put_then_get_by_correlid_100k_deep", |b| {
        b.iter(|| {
            n += 1;
            let mut md = MessageDescriptor::default();
            md.correl_id[..8].copy_from_slice(&n.to_be_bytes());
            qm.put(
                conn,
                h,
                &mut md,
                &PutOptions::default(),
                body.clone(),
                T0,
                &mut fx,
            )
            .expect("put");
            let want = MessageDescriptor {
                correl_id: md.correl_id,
                ..MessageDescriptor::default()
            };
            let r = qm.get(conn, h, &want, &gmo, 4096, T0, &mut fx);
            black_box(r);
        })
    });
}

fn consumer_accept(c: &mut Criterion) {
    let (mut qm, mut fx) = setup(5000);
    let consumer_conn = qm
        .connect(ConnectionInfo::default(), T0, &mut Effects::new())
        .expect("connect");
    let putter = qm
        .connect(ConnectionInfo::default(), T0, &mut Effects::new())
        .expect("connect");
    let od = ObjectDescriptor::queue("Q").expect("name");
    let hc = qm
        .open(consumer_conn, &od, OpenOptions::INPUT_SHARED, T0, &mut fx)
        .expect("open")
        .hobj;
    let hp = qm
        .open(putter, &od, OpenOptions::OUTPUT, T0, &mut fx)
        .expect("open")
        .hobj;
    let consumer = qm
        .consume(consumer_conn, hc, ConsumeSpec::new(ConsumeMode::Unsettled))
        .expect("consume");
    qm.add_credit(consumer_conn, consumer, u32::MAX, T0, &mut fx)
        .expect("credit");
    let body = Bytes::from_static(&[7u8; 2048]);
    let mut tokens = Vec::with_capacity(1);
    c.bench_function("put_to_consumer_then_accept_2k", |b| {
        b.iter(|| {
            let mut md = MessageDescriptor::default();
            qm.put(
                putter,
                hp,
                &mut md,
                &PutOptions::default(),
                body.clone(),
                T0,
                &mut fx,
            )
            .expect("put");
            tokens.extend(fx.drain().filter_map(|e| match e {
                Effect::Delivered { delivery, .. } => delivery,
                _ => None,
            }));
            for t in tokens.drain(..) {
                qm.settle(consumer_conn, t, Settlement::Accepted, T0, &mut fx)
                    .expect("settle");
            }
            black_box(fx.drain().count());
        })
    });
}

criterion_group!(benches, handoff, deep_correl, consumer_accept);
criterion_main!(benches);
