//! Injected storage faults: ENOSPC at preallocation and on write, fsync errors (never retried,
//! never reported durable), short writes, slow I/O reports.

use ferry_store::{
    CrashModel, DurableWait, FaultPlan, IoOp, Log, LogConfig, LogCore, LogDevice, LogError, Notice,
    RecordKind, SimDevice, WriteIntegrity,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn cfg() -> LogConfig {
    LogConfig {
        file_pages: 16,
        extents: 3,
        primary_extents: 3,
        buffer_pages: 32,
        write_integrity: WriteIntegrity::TripleWrite,
        slow_io_threshold: Duration::from_secs(60),
    }
}

fn k() -> RecordKind {
    RecordKind::user(16)
}

fn recovered(dev: &SimDevice) -> Vec<Vec<u8>> {
    let mut r = LogCore::open(dev.clone(), &cfg()).expect("open");
    let mut v = Vec::new();
    while let Some(x) = r.next_record().expect("recovery") {
        v.push(x.payload);
    }
    r.finish().expect("finish");
    v
}

#[test]
fn enospc_during_preallocation_is_clear_and_leaves_nothing_behind() {
    let mut dev = SimDevice::new(1, CrashModel::default());
    dev.set_faults(FaultPlan {
        capacity: Some(2 * 18 * 4096 + 100),
        ..Default::default()
    });
    let e = LogCore::create(dev.clone(), &cfg(), "QM1")
        .err()
        .expect("creation must fail");
    assert!(e.is_no_space(), "{e}");
    assert!(matches!(e, LogError::Io { .. }), "{e}");
    assert!(
        dev.file_names().is_empty(),
        "left behind: {:?}",
        dev.file_names()
    );
    assert!(!dev.exists("ferrylog.ctl").unwrap());
    // With room, creation then works.
    dev.set_faults(FaultPlan::default());
    LogCore::create(dev.clone(), &cfg(), "QM1").unwrap();
}

#[test]
fn enospc_on_write_fails_the_log_without_reporting_durable() {
    let dev = SimDevice::new(2, CrashModel::default());
    let mut log = LogCore::create(dev.clone(), &cfg(), "QM1").unwrap();
    log.append(k(), b"one").unwrap();
    log.flush().unwrap();
    let durable = log.durable_lsn();
    dev.set_faults(FaultPlan {
        enospc_write_after: Some(0),
        ..Default::default()
    });
    log.append(k(), b"two").unwrap();
    let e = log.flush().unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert_eq!(log.durable_lsn(), durable);
    let e = log.append(k(), b"three").unwrap_err();
    assert!(matches!(e, LogError::Failed(_)), "{e}");
    drop(log);
    dev.crash();
    let got = recovered(&dev);
    assert_eq!(got[0], b"one");
    assert!(got.len() <= 2);
}

#[test]
fn fsync_error_is_never_retried_and_never_reported_durable() {
    let dev = SimDevice::new(3, CrashModel::default());
    let mut log = LogCore::create(dev.clone(), &cfg(), "QM1").unwrap();
    log.append(k(), b"acked").unwrap();
    log.flush().unwrap();
    let durable = log.durable_lsn();
    dev.set_faults(FaultPlan {
        fail_sync_after: Some(0),
        ..Default::default()
    });
    log.append(k(), b"lost?").unwrap();
    assert!(matches!(log.flush(), Err(LogError::Io { op: "sync", .. })));
    assert_eq!(log.durable_lsn(), durable);
    assert!(log.failure().is_some());
    // The device would now report success (Linux marks the pages clean): the log must not try.
    dev.set_faults(FaultPlan::default());
    assert!(matches!(log.append(k(), b"x"), Err(LogError::Failed(_))));
    assert!(
        matches!(log.flush(), Ok(None)),
        "nothing new may be taken once failed"
    );
    assert_eq!(dev.failed_syncs(), 1);
    assert_eq!(log.durable_lsn(), durable);
    drop(log);
    dev.crash();
    assert_eq!(recovered(&dev)[0], b"acked");
}

#[test]
fn fsync_error_reaches_the_threaded_log_as_one_failed_notice() {
    let dev = SimDevice::new(4, CrashModel::default());
    let core = LogCore::create(dev.clone(), &cfg(), "QM1").unwrap();
    let notices = Arc::new(Mutex::new(Vec::new()));
    let n2 = notices.clone();
    let wait = DurableWait::new();
    let wn = wait.notifier();
    let log = Log::start(
        core,
        Box::new(move |n| {
            n2.lock().unwrap().push(n.clone());
            wn(n);
        }),
    )
    .unwrap();
    let a = log.append(k(), b"a").unwrap();
    wait.wait(a, Duration::from_secs(10)).unwrap();
    dev.set_faults(FaultPlan {
        fail_sync_after: Some(0),
        ..Default::default()
    });
    let b = log.append(k(), b"b").unwrap();
    assert!(wait.wait(b, Duration::from_secs(10)).is_err());
    assert!(!log.is_durable(b));
    assert!(log.failure().is_some());
    assert!(matches!(log.append(k(), b"c"), Err(LogError::Failed(_))));
    assert!(log.close().is_err());
    let n = notices.lock().unwrap();
    assert!(matches!(n.last(), Some(Notice::Failed(_))), "{n:?}");
    assert_eq!(
        n.iter().filter(|x| matches!(x, Notice::Failed(_))).count(),
        1
    );
}

#[test]
fn short_writes_are_completed() {
    let dev = SimDevice::new(5, CrashModel::default());
    let mut log = LogCore::create(dev.clone(), &cfg(), "QM1").unwrap();
    dev.set_faults(FaultPlan {
        short_writes: true,
        ..Default::default()
    });
    let mut expect = Vec::new();
    for i in 0..40u32 {
        let p = vec![i as u8; (i as usize * 331) % 3000];
        log.append(k(), &p).unwrap();
        expect.push(p);
        log.flush().unwrap();
    }
    drop(log);
    dev.crash();
    assert_eq!(recovered(&dev), expect);
}

#[test]
fn slow_operations_are_reported_as_data() {
    let dev = SimDevice::new(6, CrashModel::default());
    let c = LogConfig {
        slow_io_threshold: Duration::ZERO,
        ..cfg()
    };
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    log.take_slow_ops();
    log.append(k(), &[0u8; 5000]).unwrap();
    log.flush().unwrap();
    let slow = log.take_slow_ops();
    assert!(
        slow.iter()
            .any(|s| s.op == IoOp::Write && s.bytes >= 4096 && s.file == "S0000000.LOG"),
        "{slow:?}"
    );
    assert!(slow
        .iter()
        .any(|s| s.op == IoOp::Sync && s.op.letter() == 'W'));
    assert!(slow.iter().all(|s| s.threshold == Duration::ZERO));
    assert!(log.status().last_slow.is_some());
    assert!(log.take_slow_ops().is_empty());
}

#[test]
fn buffer_full_is_transient_and_never_blocks() {
    let dev = SimDevice::new(7, CrashModel::default());
    let c = LogConfig {
        buffer_pages: 2,
        ..cfg()
    };
    let mut log = LogCore::create(dev, &c, "QM1").unwrap();
    let mut n = 0;
    let e = loop {
        match log.append(k(), &[0u8; 1000]) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
    };
    assert!(
        e.is_transient() && matches!(e, LogError::BufferFull { .. }),
        "{e}"
    );
    assert_eq!(n, 8);
    log.flush().unwrap();
    log.append(k(), &[0u8; 1000]).unwrap();
    // A record bigger than the whole buffer is admitted alone.
    log.flush().unwrap();
    log.append(k(), &[0u8; 20_000]).unwrap();
    assert!(log.append(k(), b"x").unwrap_err().is_transient());
    log.flush().unwrap();
    let e = log.append(k(), &vec![0u8; 200_000]).unwrap_err();
    assert!(matches!(e, LogError::RecordTooLarge { .. }), "{e}");
}
