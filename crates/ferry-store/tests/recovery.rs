//! Targeted recovery scenarios on the simulated device: stale pages, torn tails, checkpoints,
//! ring wrap, damaged control files, unknown versions.

use ferry_store::control::{self, CONTROL_NAME};
use ferry_store::format::page::{PAGE_DATA_LEN, PAGE_SIZE};
use ferry_store::{
    CrashModel, Geometry, LogConfig, LogCore, LogDevice, LogError, Lsn, Record, RecordKind,
    SimDevice, WriteIntegrity,
};
use std::time::Duration;

fn cfg(integrity: WriteIntegrity) -> LogConfig {
    LogConfig {
        file_pages: 8,
        extents: 3,
        primary_extents: 3,
        buffer_pages: 64,
        write_integrity: integrity,
        slow_io_threshold: Duration::from_secs(60),
    }
}

fn user() -> RecordKind {
    RecordKind::user(20)
}

fn read_all(dev: &SimDevice, c: &LogConfig) -> (Vec<Record>, LogCore<SimDevice>) {
    let mut r = LogCore::open(dev.clone(), c).expect("open");
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().expect("recovery") {
        out.push(rec);
    }
    (out, r.finish().expect("finish"))
}

fn lsns(rs: &[Record]) -> Vec<Lsn> {
    rs.iter().map(|r| r.lsn).collect()
}

#[test]
fn create_append_flush_recover_round_trip() {
    for integrity in [
        WriteIntegrity::SingleWrite,
        WriteIntegrity::DoubleWrite,
        WriteIntegrity::TripleWrite,
    ] {
        let dev = SimDevice::new(1, CrashModel::default());
        let c = LogConfig {
            file_pages: 64,
            ..cfg(integrity)
        };
        let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
        let mut expect = Vec::new();
        for i in 0..50u32 {
            let p = vec![i as u8; (i as usize * 97) % 5000];
            let lsn = log.append(user(), &p).unwrap();
            expect.push((lsn, p));
            if i % 7 == 0 {
                log.flush().unwrap();
            }
        }
        log.flush().unwrap();
        drop(log);
        dev.crash();
        let (got, mut log) = read_all(&dev, &c);
        assert_eq!(got.len(), 50, "{integrity:?}");
        for (g, (l, p)) in got.iter().zip(&expect) {
            assert_eq!((g.lsn, &g.payload, g.kind), (*l, p, user()));
        }
        // And it keeps going.
        let l = log.append(user(), b"after").unwrap();
        assert_eq!(log.flush().unwrap(), Some(l.advance(24 + 5)));
    }
}

#[test]
fn unsynced_records_may_vanish_but_synced_ones_stay() {
    let dev = SimDevice::new(
        7,
        CrashModel {
            atomic_pages: false,
            survive_percent: 0,
        },
    );
    let c = cfg(WriteIntegrity::TripleWrite);
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), b"durable").unwrap();
    log.flush().unwrap();
    let _b = log.append(user(), b"never flushed").unwrap();
    drop(log);
    dev.crash();
    let (got, _) = read_all(&dev, &c);
    assert_eq!(lsns(&got), vec![a]);
}

/// A page left behind by an abandoned run, after the point where the next run resumed, is
/// never read as part of the log (the epoch rule), even when it is valid and well placed.
#[test]
fn stale_full_page_after_resume_point_is_never_returned() {
    let dev = SimDevice::new(3, CrashModel::default());
    let c = cfg(WriteIntegrity::TripleWrite);
    let full = PAGE_DATA_LEN - 24;
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), &vec![1u8; full]).unwrap(); // fills page 0 exactly
    let b = log.append(user(), &[2u8; 100]).unwrap(); // page 1, partial
    log.flush().unwrap(); // page 1's partial copy goes to a slot
    let c_len = PAGE_DATA_LEN - (124) - 24;
    let _c = log.append(user(), &vec![3u8; c_len]).unwrap(); // fills page 1 exactly
    let e = log.append(user(), &vec![4u8; full]).unwrap(); // fills page 2 exactly
    log.flush().unwrap(); // home pages 1 and 2, both full
    assert_eq!(e.page_no(), 2);
    drop(log);
    // Page 1's home copy is damaged: the log now ends after B (page 1's slot copy).
    let home1 = Geometry {
        file_pages: 8,
        extents: 3,
    }
    .home_offset(1);
    dev.corrupt(&Geometry::extent_name(0), home1 + 100, &[0xEE; 16]);
    let (got, mut log) = read_all(&dev, &c);
    assert_eq!(lsns(&got), vec![a, b]);
    // The next run fills page 1 exactly with a record of the same length as C: the log now
    // ends at a page boundary, right before the stale (but valid) page 2 holding E.
    let d = log.append(user(), &vec![5u8; c_len]).unwrap();
    log.flush().unwrap();
    assert_eq!(log.next_lsn(), Lsn::from_stream(2 * PAGE_DATA_LEN as u64));
    drop(log);
    let (got, _) = read_all(&dev, &c);
    assert_eq!(
        lsns(&got),
        vec![a, b, d],
        "the stale page holding E must not be read"
    );
    assert_eq!(got[2].payload, vec![5u8; c_len]);
}

#[test]
fn torn_tail_rewrite_keeps_the_previous_copy_under_triple_write() {
    // Survive nothing that was not synced: the rewrite of the partial page is lost or torn.
    let dev = SimDevice::new(
        11,
        CrashModel {
            atomic_pages: false,
            survive_percent: 30,
        },
    );
    let c = cfg(WriteIntegrity::TripleWrite);
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), &[1u8; 1000]).unwrap();
    log.flush().unwrap();
    let b = log.append(user(), &[2u8; 1000]).unwrap();
    log.flush().unwrap();
    // A third flush rewrites page 0 (partial) again, and the power fails during it.
    dev.set_faults(ferry_store::FaultPlan {
        power_cut_after: Some(1),
        ..Default::default()
    });
    let _c = log.append(user(), &[3u8; 1000]).unwrap();
    assert!(log.flush().is_err());
    drop(log);
    dev.crash();
    let (got, _) = read_all(&dev, &c);
    assert!(
        got.len() >= 2 && lsns(&got)[..2] == [a, b],
        "{:?}",
        lsns(&got)
    );
}

#[test]
fn checkpoint_moves_restart_and_space_is_reused_across_the_ring() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = LogConfig {
        file_pages: 4,
        extents: 2,
        ..cfg(WriteIntegrity::TripleWrite)
    };
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let mut full_errors = 0;
    let mut last_ck = None;
    for i in 0..200u32 {
        match log.append(user(), &[i as u8; 1500]) {
            Ok(_) => {}
            Err(e @ LogError::LogFull { .. }) => {
                assert!(e.to_string().contains("full"), "{e}");
                full_errors += 1;
                log.flush().unwrap();
                let head = log.next_lsn();
                last_ck = Some(log.checkpoint(b"ck", head).unwrap());
                log.flush().unwrap();
                assert_eq!(log.restart_lsn(), head);
                log.append(user(), &[i as u8; 1500]).unwrap();
            }
            Err(e) => panic!("{e}"),
        }
        log.flush().unwrap();
    }
    assert!(full_errors > 5, "the ring never filled");
    let st = log.status();
    assert!(
        st.head_lsn.page_no() > 3 * 8,
        "the log did not wrap several times"
    );
    assert!(st.checkpoints as usize >= full_errors);
    assert!(st.space_in_use <= st.space_total);
    let ck = last_ck.unwrap();
    drop(log);
    dev.crash();
    let mut r = LogCore::open(dev.clone(), &c).unwrap();
    assert_eq!(r.checkpoint_lsn(), Some(ck));
    let first = r.next_record().unwrap().unwrap();
    assert_eq!(first.kind, RecordKind::CHECKPOINT);
    assert_eq!(first.lsn, ck);
}

#[test]
fn log_refuses_appends_that_would_overwrite_needed_data() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = LogConfig {
        file_pages: 4,
        extents: 2,
        ..cfg(WriteIntegrity::TripleWrite)
    };
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let first = log.append(user(), b"pinned").unwrap();
    let mut n = 0;
    let err = loop {
        // `room` predicts exactly whether a record fits (header included).
        let fits = log.room() >= 24 + 1000;
        match log.append(user(), &[0u8; 1000]) {
            Ok(_) => {
                assert!(fits, "room() said no but the append fitted");
                n += 1
            }
            Err(e) => {
                assert!(!fits, "room() said yes but the append failed: {e}");
                break e;
            }
        }
        log.flush().unwrap();
    };
    assert!(log.room() < 24 + 1000);
    assert!(
        matches!(err, LogError::LogFull { pinned, .. } if pinned == Lsn::FIRST),
        "{err}"
    );
    assert!(n > 10);
    log.flush().unwrap();
    // A checkpoint still fits (reserved space), and the first record is still there.
    log.checkpoint(b"", first).unwrap();
    log.flush().unwrap();
    drop(log);
    let (got, _) = read_all(&dev, &c);
    assert_eq!(got[0].lsn, first);
    assert_eq!(got[0].payload, b"pinned");
    assert_eq!(got.len(), n + 2);
}

#[test]
fn damaged_checkpointed_data_is_an_error_not_silence() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = cfg(WriteIntegrity::TripleWrite);
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    log.append(user(), &[1u8; 5000]).unwrap();
    let head = log.next_lsn();
    log.checkpoint(b"ck", Lsn::FIRST).unwrap();
    log.flush().unwrap();
    drop(log);
    assert!(head.page_no() >= 1);
    // Damage page 0 (home, full): records between restart and checkpoint are gone.
    let g = Geometry {
        file_pages: 8,
        extents: 3,
    };
    dev.corrupt(
        &Geometry::extent_name(0),
        g.home_offset(0) + 2000,
        &[0xAA; 8],
    );
    let mut r = LogCore::open(dev.clone(), &c).unwrap();
    let e = loop {
        match r.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("damage went unnoticed"),
            Err(e) => break e,
        }
    };
    assert!(matches!(e, LogError::Corrupt(_)), "{e}");
}

#[test]
fn unknown_control_version_and_missing_log_are_clear_errors() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = cfg(WriteIntegrity::TripleWrite);
    assert!(matches!(
        LogCore::open(dev.clone(), &c).err(),
        Some(LogError::NotFound(_))
    ));
    drop(LogCore::create(dev.clone(), &c, "QM1").unwrap());
    assert!(matches!(
        LogCore::create(dev.clone(), &c, "QM1").err(),
        Some(LogError::AlreadyExists(_))
    ));
    // Rewrite both control slots with version 2 (valid checksums).
    for slot in 0..2u64 {
        let mut s = vec![0u8; PAGE_SIZE];
        s[0..4].copy_from_slice(b"FRYC");
        s[4..8].copy_from_slice(&2u32.to_le_bytes());
        let crc = crc32c::crc32c(&s);
        s[8..12].copy_from_slice(&crc.to_le_bytes());
        dev.corrupt(CONTROL_NAME, slot * PAGE_SIZE as u64, &s);
    }
    let e = LogCore::open(dev.clone(), &c).err().unwrap();
    assert!(e.to_string().contains("format version 2"), "{e}");
}

/// A control file whose extent count is huge (a valid slot, as damage or a hostile file
/// could make one) is refused with a typed error when an extent is missing, without first
/// allocating room for that many files. Found by the `log_recovery` fuzz target.
#[test]
fn huge_extent_count_in_the_control_file_is_refused_without_allocating() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = cfg(WriteIntegrity::TripleWrite);
    drop(LogCore::create(dev.clone(), &c, "QM1").unwrap());
    let mut dev2 = dev.clone();
    let mut f = dev2.open(CONTROL_NAME).unwrap();
    let mut b = control::read(&mut f).unwrap();
    b.seq += 1;
    b.geometry.extents = u32::MAX;
    control::write(&mut f, &b).unwrap();
    let e = LogCore::open(dev.clone(), &c).err().unwrap();
    assert!(e.to_string().contains(&Geometry::extent_name(3)), "{e}");
}

#[test]
fn shape_comes_from_the_control_file() {
    let dev = SimDevice::new(5, CrashModel::default());
    let c = cfg(WriteIntegrity::TripleWrite);
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), b"x").unwrap();
    log.flush().unwrap();
    drop(log);
    let other = LogConfig {
        file_pages: 64,
        extents: 5,
        ..c
    };
    let mut r = LogCore::open(dev.clone(), &other).unwrap();
    assert_eq!(
        r.control().geometry,
        Geometry {
            file_pages: 8,
            extents: 3
        }
    );
    assert_eq!(r.next_record().unwrap().unwrap().lsn, a);
}

#[test]
fn write_integrity_can_change_between_runs() {
    let dev = SimDevice::new(
        9,
        CrashModel {
            atomic_pages: true,
            survive_percent: 50,
        },
    );
    let mut expect = Vec::new();
    let modes = [
        WriteIntegrity::SingleWrite,
        WriteIntegrity::TripleWrite,
        WriteIntegrity::SingleWrite,
        WriteIntegrity::DoubleWrite,
    ];
    let mut log = LogCore::create(dev.clone(), &cfg(modes[0]), "QM1").unwrap();
    for (round, m) in modes.iter().enumerate() {
        for i in 0..5 {
            expect.push(log.append(user(), &vec![round as u8; 300 * i + 7]).unwrap());
            log.flush().unwrap();
        }
        drop(log);
        dev.crash();
        let next = modes[(round + 1) % modes.len()];
        let (got, l) = read_all(&dev, &cfg(next));
        assert_eq!(lsns(&got), expect, "after {m:?}");
        log = l;
    }
}

/// The durable bytes of `len` bytes at `offset` of log file `name`.
fn read_bytes(dev: &SimDevice, name: &str, offset: u64, len: usize) -> Vec<u8> {
    let mut f = dev.clone().open(name).expect("open");
    let mut buf = vec![0u8; len];
    ferry_store::device::read_exact_at(&mut f, offset, &mut buf).expect("read");
    buf
}

fn geo8() -> Geometry {
    Geometry {
        file_pages: 8,
        extents: 3,
    }
}

/// SingleWrite on atomic pages: a restart ends the log inside a full page whose last record
/// lost its continuation. The next run's first flush rewrites that page in place and writes
/// the next page; a power cut keeps the next page but not the rewrite. Nothing past the last
/// sync was acknowledged, so the restart after must end the log where the first one did — not
/// read the old page's incomplete record on into the new page and call that corruption.
#[test]
fn lost_rewrite_of_the_end_page_under_single_write_is_a_torn_tail() {
    lost_rewrite_of_the_end_page(false);
}

/// The same crash on a log whose restart did not seal the end it recovered (as Ferry did
/// before it wrote the recovered end under the new epoch): recovery itself sees that the next
/// page was written by a flush whose copy of the end page is not on disk — so that flush never
/// completed — and ends the log there instead of refusing.
#[test]
fn lost_rewrite_of_an_unsealed_end_page_is_a_torn_tail() {
    lost_rewrite_of_the_end_page(true);
}

fn lost_rewrite_of_the_end_page(unsealed: bool) {
    let dev = SimDevice::new(
        21,
        CrashModel {
            atomic_pages: true,
            survive_percent: 100,
        },
    );
    let c = cfg(WriteIntegrity::SingleWrite);
    let ext0 = Geometry::extent_name(0);
    let (home0, home1) = (geo8().home_offset(0), geo8().home_offset(1));
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), &[1u8; 1000]).unwrap();
    let b = log.append(user(), &[2u8; 5000]).unwrap(); // page 0 into page 1
    log.flush().unwrap();
    drop(log);
    // The crash kept page 0 of that flush but not page 1: B is incomplete.
    dev.corrupt(&ext0, home1, &[0u8; PAGE_SIZE]);
    dev.crash();
    let left = read_bytes(&dev, &ext0, home0, PAGE_SIZE);
    let (got, mut log) = read_all(&dev, &c);
    assert_eq!(lsns(&got), vec![a]);
    assert_eq!(log.next_lsn(), b);
    if unsealed {
        // Page 0 as the crashed run left it: full, B's start at its end.
        dev.corrupt(&ext0, home0, &left);
    }
    // What is durable of page 0 before the next run's first flush.
    let before = read_bytes(&dev, &ext0, home0, PAGE_SIZE);
    let c2 = log.append(user(), &[3u8; 5000]).unwrap(); // at B's LSN, into page 1 again
    assert_eq!(c2, b);
    log.flush().unwrap();
    drop(log);
    // Power cut during that flush: page 1 reached the disk, page 0's rewrite did not.
    dev.corrupt(&ext0, home0, &before);
    dev.crash();
    let mut r = LogCore::open(dev.clone(), &c).expect("open");
    let mut got = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => got.push(rec.lsn),
            Ok(None) => break,
            Err(e) => panic!("an unacknowledged torn tail was taken for damage: {e}"),
        }
    }
    assert_eq!(got, vec![a]);
    let log = r.finish().expect("finish");
    assert_eq!(log.next_lsn(), b);
}

/// TripleWrite: a flush's home write of a full page is torn by a power cut, so the restart
/// ends the log before the records it held (their page's slot copy is older) and the next
/// run writes other records there. If that run's rewrite of the page reaches the disk only
/// in the sectors it shares with the torn copy (the records before the end, the same in
/// both), the torn copy is whole again. The records the first restart discarded must not
/// come back: the queue manager ran on without them.
#[test]
fn records_a_restart_discarded_never_come_back() {
    let dev = SimDevice::new(
        22,
        CrashModel {
            atomic_pages: false,
            survive_percent: 100,
        },
    );
    let c = cfg(WriteIntegrity::TripleWrite);
    let ext0 = Geometry::extent_name(0);
    let home0 = geo8().home_offset(0);
    // Page bytes 1024..1536: data inside A, the same in every copy of page 0.
    let sector = 1024..1536;
    let mut log = LogCore::create(dev.clone(), &c, "QM1").unwrap();
    let a = log.append(user(), &[1u8; 3000]).unwrap();
    log.flush().unwrap(); // page 0 partial, in a slot
    let b = log.append(user(), &[2u8; 500]).unwrap();
    let _d = log.append(user(), &[4u8; 2000]).unwrap(); // into page 1
    log.flush().unwrap(); // page 0 home (full), page 1 in a slot
    drop(log);
    let torn_away = read_bytes(&dev, &ext0, home0, PAGE_SIZE);
    // The crash tore page 0's home write: one sector kept its old (zero) bytes.
    dev.corrupt(&ext0, home0 + sector.start as u64, &[0u8; 512]);
    dev.crash();
    let (got, mut log) = read_all(&dev, &c);
    assert_eq!(lsns(&got), vec![a]);
    assert_eq!(log.next_lsn(), b);
    let before = read_bytes(&dev, &ext0, home0, PAGE_SIZE);
    // The next run fills page 0 with other records; the power is cut during the flush.
    let e = log
        .append(user(), &[5u8; PAGE_DATA_LEN - 3024 - 24])
        .unwrap();
    assert_eq!(e, b);
    log.flush().unwrap(); // page 0 home only (it ends full)
    drop(log);
    let rewrite = read_bytes(&dev, &ext0, home0, PAGE_SIZE);
    assert_eq!(rewrite[sector.clone()], torn_away[sector.clone()]);
    // Only the shared sector of the rewrite reached the disk: page 0 is the torn-away copy.
    let mut now = before;
    now[sector.clone()].copy_from_slice(&rewrite[sector]);
    assert_eq!(now, torn_away);
    dev.corrupt(&ext0, home0, &now);
    dev.crash();
    let (got, log) = read_all(&dev, &c);
    assert_eq!(
        lsns(&got),
        vec![a],
        "records discarded by a restart came back"
    );
    assert_eq!(log.next_lsn(), b);
}
