//! A scrape's cost with the queues a filter leaves out: selecting and rendering the
//! 10 exported queues among 10 or 100,000 `SYSTEM.*` ones should cost the same (the
//! filter steps over an excluded prefix in one look-up).

use criterion::{criterion_group, criterion_main, Criterion};
use ferry_monitoring::prometheus::{render, NameFilter, QueueMetrics, Snapshot};
use std::collections::BTreeMap;

fn queues(excluded: usize) -> BTreeMap<String, u64> {
    let mut map = BTreeMap::new();
    for i in 0..10 {
        map.insert(format!("APP.Q{i}"), i);
    }
    for i in 0..excluded {
        map.insert(format!("SYSTEM.Q{i:06}"), i as u64);
    }
    map
}

fn scrape(map: &BTreeMap<String, u64>, filter: &NameFilter) -> String {
    let queues = filter
        .select(map)
        .into_iter()
        .map(|(name, depth)| QueueMetrics {
            name: name.to_string(),
            usage: "NORMAL",
            sample: ferry_monitoring::QueueSample {
                depth: *depth,
                ..Default::default()
            },
            ..Default::default()
        })
        .collect();
    render(&Snapshot {
        qmgr: "QM1".into(),
        platform: "UNIX".into(),
        queues,
        ..Default::default()
    })
}

fn bench(c: &mut Criterion) {
    let filter = NameFilter::default();
    for excluded in [10, 100_000] {
        let map = queues(excluded);
        c.bench_function(&format!("scrape 10 queues, {excluded} excluded"), |b| {
            b.iter(|| scrape(&map, &filter))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
