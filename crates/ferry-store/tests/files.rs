//! Real files in temporary directories: create, append, sync, reopen, recover; extents reused
//! after checkpoints; the threaded log under concurrent producers.

use ferry_store::{
    DurableWait, FileDevice, FileSync, Log, LogConfig, LogCore, LogError, Lsn, RecordKind,
};
use std::sync::Arc;
use std::time::Duration;

fn cfg() -> LogConfig {
    LogConfig {
        file_pages: 64,
        extents: 3,
        ..LogConfig::default()
    }
}

#[test]
fn create_append_sync_reopen_recover() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = LogCore::create(FileDevice::new(dir.path()).unwrap(), &cfg(), "QM1").unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "S0000000.LOG",
            "S0000001.LOG",
            "S0000002.LOG",
            "ferrylog.ctl"
        ]
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("S0000001.LOG"))
            .unwrap()
            .len(),
        (64 + 2) * 4096
    );
    let mut lsns = Vec::new();
    for i in 0..100u32 {
        lsns.push(
            log.append(RecordKind::user(17), format!("message {i}").as_bytes())
                .unwrap(),
        );
        if i % 10 == 9 {
            log.flush().unwrap();
        }
    }
    drop(log);
    let mut r = LogCore::open(FileDevice::new(dir.path()).unwrap(), &cfg()).unwrap();
    for (i, l) in lsns.iter().enumerate() {
        let rec = r.next_record().unwrap().unwrap();
        assert_eq!(
            (rec.lsn, rec.payload),
            (*l, format!("message {i}").into_bytes())
        );
    }
    assert!(r.next_record().unwrap().is_none());
    let mut log = r.finish().unwrap();
    let more = log.append(RecordKind::user(17), b"after restart").unwrap();
    log.flush().unwrap();
    drop(log);
    let mut r = LogCore::open(FileDevice::new(dir.path()).unwrap(), &cfg()).unwrap();
    let n = std::iter::from_fn(|| r.next_record().unwrap())
        .filter(|x| x.lsn == more)
        .count();
    assert_eq!(n, 1);
}

#[test]
fn extents_are_reused_after_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let c = LogConfig {
        file_pages: 16,
        extents: 2,
        ..LogConfig::default()
    };
    let mut log = LogCore::create(FileDevice::new(dir.path()).unwrap(), &c, "QM1").unwrap();
    let mut last = Lsn::FIRST;
    for i in 0..2000u32 {
        let r = log.append(RecordKind::user(17), &[i as u8; 700]);
        last = match r {
            Ok(l) => l,
            Err(LogError::LogFull { .. }) | Err(LogError::BufferFull { .. }) => {
                log.flush().unwrap();
                let head = log.next_lsn();
                log.checkpoint(b"", head).unwrap();
                log.flush().unwrap();
                log.append(RecordKind::user(17), &[i as u8; 700]).unwrap()
            }
            Err(e) => panic!("{e}"),
        };
        if i % 5 == 0 {
            log.flush().unwrap();
        }
    }
    log.flush().unwrap();
    let st = log.status();
    assert!(
        st.head_lsn.page_no() > 5 * 32,
        "wrapped the 32-page ring several times: {st:?}"
    );
    assert!(st.checkpoints > 5);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        3,
        "no files added"
    );
    drop(log);
    let mut r = LogCore::open(FileDevice::new(dir.path()).unwrap(), &c).unwrap();
    let recs: Vec<_> = std::iter::from_fn(|| r.next_record().unwrap()).collect();
    assert_eq!(recs[0].kind, RecordKind::CHECKPOINT);
    assert_eq!(recs.last().unwrap().lsn, last);
}

#[test]
fn threaded_log_group_commits_concurrent_producers() {
    for sync in [FileSync::Fdatasync, FileSync::ODsync] {
        let dir = tempfile::tempdir().unwrap();
        let c = LogConfig {
            file_pages: 1024,
            extents: 3,
            ..LogConfig::default()
        };
        let core =
            LogCore::create(FileDevice::with_sync(dir.path(), sync).unwrap(), &c, "QM1").unwrap();
        let wait = DurableWait::new();
        let log = Arc::new(Log::start(core, wait.notifier()).unwrap());
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let (log, wait) = (log.clone(), wait.clone());
                std::thread::spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..50u32 {
                        let l = log
                            .append(RecordKind::user(18), format!("{t}:{i}").as_bytes())
                            .unwrap();
                        wait.wait(l, Duration::from_secs(30)).unwrap();
                        assert!(log.is_durable(l));
                        mine.push(l);
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<Lsn> = threads
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort();
        let st = log.status();
        assert_eq!(st.records, 800);
        assert!(
            st.flushes < 800,
            "16 concurrent producers must share flushes: {st:?}"
        );
        assert!(st.flushes_per_record < 1.0);
        let log = Arc::try_unwrap(log).ok().unwrap();
        drop(log.close().unwrap());
        let mut r = LogCore::open(FileDevice::new(dir.path()).unwrap(), &c).unwrap();
        let got: Vec<Lsn> = std::iter::from_fn(|| r.next_record().unwrap())
            .map(|x| x.lsn)
            .collect();
        assert_eq!(got, all, "{sync:?}");
    }
}

#[test]
fn deferred_appends_wait_for_a_kick_and_share_one_flush() {
    let dir = tempfile::tempdir().unwrap();
    let core = LogCore::create(FileDevice::new(dir.path()).unwrap(), &cfg(), "QM1").unwrap();
    let wait = DurableWait::new();
    let log = Log::start(core, wait.notifier()).unwrap();
    let first = log.append(RecordKind::user(16), b"first").unwrap();
    wait.wait(first, Duration::from_secs(10)).unwrap();
    // Give the writer ample time to go idle again after that flush.
    std::thread::sleep(Duration::from_millis(100));
    let flushes = log.status().flushes;
    let a = log
        .append_parts_deferred(RecordKind::user(16), &[b"a"])
        .unwrap();
    let b = log
        .append_parts_deferred(RecordKind::user(17), &[b"b", b"c"])
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !log.is_durable(a),
        "a deferred append must not wake an idle writer"
    );
    log.kick();
    wait.wait(b, Duration::from_secs(10)).unwrap();
    assert!(log.is_durable(a));
    assert_eq!(
        log.status().flushes,
        flushes + 1,
        "both records in one flush"
    );
    // A kick with nothing waiting is harmless.
    log.kick();
    let core = log.close().unwrap();
    drop(core);
    let mut r = LogCore::open(FileDevice::new(dir.path()).unwrap(), &cfg()).unwrap();
    let mut payloads = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        payloads.push(rec.payload.to_vec());
    }
    assert_eq!(payloads, [b"first".to_vec(), b"a".to_vec(), b"bc".to_vec()]);
}
