//! Group commit through the real log on real files: 2 KiB records from N producers, reporting
//! records/s and flushes per record. Two shapes:
//!
//! - `threads`: N OS threads, each appends a record then blocks until it is durable (the shape
//!   of the `group-commit` yardstick in `bench/yardsticks`: one wake-up per producer per flush);
//! - `driver`: one thread drives N producers in a closed loop and is woken once per flush (the
//!   shape a single-threaded server runtime has: no wake-up per record).
//!
//! `cargo bench -p ferry-store --bench group_commit`; `FERRY_BENCH_DIR` picks the directory.
//! Each case ends with a `RESULT` line.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferry_store::{
    DurableWait, FileDevice, Log, LogConfig, LogCore, LogError, Lsn, Notice, RecordKind,
};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RECORD: usize = 2048;

fn config() -> LogConfig {
    LogConfig {
        file_pages: 16384,
        extents: 3,
        ..LogConfig::default()
    }
}

fn kind() -> RecordKind {
    RecordKind::user(30)
}

/// Appends, taking a checkpoint when the ring is full (nothing older than the head is needed
/// in this benchmark). Returns `None` when the caller should retry shortly.
fn append(log: &Log<FileDevice>, payload: &[u8], ck: &Mutex<()>) -> Option<Lsn> {
    match log.append(kind(), payload) {
        Ok(l) => Some(l),
        Err(LogError::LogFull { .. }) => {
            if let Ok(_g) = ck.try_lock() {
                let _ = log.checkpoint(b"bench", log.next_lsn());
            }
            None
        }
        Err(LogError::BufferFull { .. }) => None,
        Err(e) => panic!("append: {e}"),
    }
}

struct Totals {
    records: u64,
    flushes: u64,
    elapsed: Duration,
}

fn run_threads(
    log: &Arc<Log<FileDevice>>,
    wait: &Arc<DurableWait>,
    producers: usize,
    records: u64,
) -> Duration {
    let done = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let ck = Arc::new(Mutex::new(()));
    let t0 = Instant::now();
    let hs: Vec<_> = (0..producers)
        .map(|p| {
            let (log, wait, done, stop, ck) = (
                log.clone(),
                wait.clone(),
                done.clone(),
                stop.clone(),
                ck.clone(),
            );
            std::thread::spawn(move || {
                let mut rec = vec![0x33u8; RECORD];
                rec[..8].copy_from_slice(&(p as u64).to_le_bytes());
                while !stop.load(Relaxed) {
                    let Some(l) = append(&log, &rec, &ck) else {
                        std::thread::yield_now();
                        continue;
                    };
                    wait.wait(l, Duration::from_secs(60)).expect("durable");
                    if done.fetch_add(1, Relaxed) + 1 >= records {
                        stop.store(true, Relaxed);
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().expect("producer");
    }
    t0.elapsed()
}

fn run_driver(
    log: &Log<FileDevice>,
    rx: &mpsc::Receiver<Notice>,
    producers: usize,
    records: u64,
) -> Duration {
    let rec = vec![0x44u8; RECORD];
    let ck = Mutex::new(());
    let mut outstanding: VecDeque<Lsn> = VecDeque::new();
    let mut done = 0u64;
    let t0 = Instant::now();
    let mut want = producers;
    while done < records {
        while want > 0 {
            match append(log, &rec, &ck) {
                Some(l) => {
                    outstanding.push_back(l);
                    want -= 1;
                }
                None => break,
            }
        }
        let mut durable = match rx.recv_timeout(Duration::from_secs(60)).expect("notice") {
            Notice::Durable(l) => l,
            Notice::Failed(m) => panic!("log failed: {m}"),
        };
        while let Ok(n) = rx.try_recv() {
            if let Notice::Durable(l) = n {
                durable = durable.max(l);
            }
        }
        while outstanding.front().is_some_and(|&l| l < durable) {
            outstanding.pop_front();
            done += 1;
            want += 1;
        }
    }
    // Let the last flush finish so the next measurement starts clean.
    while outstanding.back().is_some_and(|&l| l >= log.durable_lsn()) {
        let _ = rx.recv_timeout(Duration::from_secs(60));
    }
    while rx.try_recv().is_ok() {}
    t0.elapsed()
}

fn bench(c: &mut Criterion) {
    let base = std::env::var("FERRY_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    let producers: Vec<usize> = std::env::var("FERRY_BENCH_PRODUCERS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 16, 64, 256]);
    let mut g = c.benchmark_group("group_commit_2k");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(6))
        .warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(1));
    for mode in ["driver", "threads"] {
        for &n in &producers {
            let dir = tempfile::tempdir_in(&base).expect("tempdir");
            let core = LogCore::create(
                FileDevice::new(dir.path()).expect("device"),
                &config(),
                "BENCH",
            )
            .expect("create");
            let (tx, rx) = mpsc::channel();
            let wait = DurableWait::new();
            let notify = if mode == "driver" {
                let tx = Mutex::new(tx);
                Box::new(move |n| {
                    let _ = tx.lock().map(|t| t.send(n));
                }) as ferry_store::Notify
            } else {
                wait.notifier()
            };
            let log = Arc::new(Log::start(core, notify).expect("start"));
            let mut totals = Totals {
                records: 0,
                flushes: 0,
                elapsed: Duration::ZERO,
            };
            g.bench_with_input(BenchmarkId::new(mode, n), &n, |b, &n| {
                b.iter_custom(|iters| {
                    let f0 = log.status().flushes;
                    let el = if mode == "driver" {
                        run_driver(&log, &rx, n, iters)
                    } else {
                        run_threads(&log, &wait, n, iters)
                    };
                    totals.records += iters;
                    totals.flushes += log.status().flushes - f0;
                    totals.elapsed += el;
                    el
                })
            });
            let st = log.status();
            println!(
                "RESULT bench=ferry_group_commit mode={mode} record={RECORD} producers={n} rate={:.0} flushes_per_record={:.4} avg_batch={:.1} syncs={} checkpoints={}",
                totals.records as f64 / totals.elapsed.as_secs_f64(),
                totals.flushes as f64 / totals.records.max(1) as f64,
                totals.records as f64 / totals.flushes.max(1) as f64,
                st.syncs,
                st.checkpoints
            );
            drop(log);
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
