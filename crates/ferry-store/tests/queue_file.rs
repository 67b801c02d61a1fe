//! Queue files: round trips, reopen, crashes with unsynced appends, torn tails, damage in an
//! earlier segment, compaction interrupted at every step, a model check against random
//! operations and crashes, and real files.

use ferry_store::queue_file::format::segment_name;
use ferry_store::queue_file::manifest::{self, Manifest, MANIFEST_NAME};
use ferry_store::{
    CrashModel, FaultPlan, FileDevice, QueueFile, QueueFileConfig, QueueFileError, SimDevice,
};
use std::collections::BTreeMap;

fn small() -> QueueFileConfig {
    QueueFileConfig {
        segment_size: 4096,
        compact_min_dead_bytes: 0,
    }
}

fn payload(seq: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (seq as usize * 31 + i * 7) as u8)
        .collect()
}

fn contents<D: ferry_store::LogDevice>(qf: &mut QueueFile<D>) -> BTreeMap<u64, Vec<u8>> {
    qf.iter().map(|r| r.unwrap()).collect()
}

fn sim() -> SimDevice {
    SimDevice::new(7, CrashModel::default())
}

#[test]
fn round_trip_reads_iterates_and_counts() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    let mut model = BTreeMap::new();
    for seq in 1..=60u64 {
        let p = payload(seq, (seq as usize * 97) % 1500);
        qf.append_put(seq, &p).unwrap();
        model.insert(seq, p);
    }
    let batch: Vec<(u64, Vec<u8>)> = (61..=70).map(|s| (s, payload(s, 300))).collect();
    qf.append_puts(&batch).unwrap();
    model.extend(batch);
    let gone: Vec<u64> = (1..=70).filter(|s| s % 3 == 0).collect();
    qf.append_removes(&gone).unwrap();
    qf.append_remove(1).unwrap();
    for s in gone.iter().chain([&1]) {
        model.remove(s);
    }
    for (seq, p) in &model {
        assert_eq!(&qf.read(*seq).unwrap(), p);
    }
    assert_eq!(contents(&mut qf), model);
    let st = qf.status();
    assert_eq!(st.live_messages, model.len() as u64);
    assert!(st.segments > 5, "small segments roll: {st:?}");
    assert!(st.dead_bytes > 0 && st.live_bytes > 0);
    assert_eq!(qf.len(), model.len());
    assert!(qf.contains(2) && !qf.contains(3));

    // Misuse is refused without appending anything.
    assert!(matches!(
        qf.append_put(2, b"x"),
        Err(QueueFileError::DuplicateSeq(2))
    ));
    assert!(matches!(
        qf.append_puts(&[(500, b"a"), (500, b"b")]),
        Err(QueueFileError::DuplicateSeq(500))
    ));
    assert!(matches!(
        qf.append_removes(&[2, 3]),
        Err(QueueFileError::UnknownSeq(3))
    ));
    assert!(matches!(qf.read(3), Err(QueueFileError::UnknownSeq(3))));
    assert!(qf.contains(2) && !qf.contains(500));

    // Clean close and reopen.
    qf.sync().unwrap();
    drop(qf);
    let (mut qf, rec) = QueueFile::open(dev.clone(), small()).unwrap();
    assert_eq!(rec.dropped_bytes, 0);
    assert_eq!(rec.leftovers_removed, 0);
    assert_eq!(contents(&mut qf), model);
    assert_eq!(qf.status().live_bytes, st.live_bytes);
    assert_eq!(qf.status().dead_bytes, st.dead_bytes);
    // And it keeps working.
    qf.append_put(1000, b"after reopen").unwrap();
    assert_eq!(qf.read(1000).unwrap(), b"after reopen");
}

#[test]
fn create_and_open_refuse_the_wrong_state() {
    let dev = sim();
    assert!(matches!(
        QueueFile::open(dev.clone(), small()),
        Err(QueueFileError::NotFound(_))
    ));
    let qf = QueueFile::create(dev.clone(), small()).unwrap();
    drop(qf);
    assert!(matches!(
        QueueFile::create(dev.clone(), small()),
        Err(QueueFileError::AlreadyExists(_))
    ));
    let bad = QueueFileConfig {
        segment_size: 100,
        ..small()
    };
    assert!(matches!(
        QueueFile::open(dev, bad),
        Err(QueueFileError::Config(_))
    ));
}

#[test]
fn a_record_larger_than_a_segment_gets_its_own() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    let big = payload(9, 20_000);
    qf.append_put(1, b"small").unwrap();
    qf.append_put(9, &big).unwrap();
    qf.append_put(10, b"after").unwrap();
    qf.sync().unwrap();
    dev.crash();
    let (mut qf, _) = QueueFile::open(dev, small()).unwrap();
    assert_eq!(qf.read(9).unwrap(), big);
    assert_eq!(qf.read(10).unwrap(), b"after");
}

#[test]
fn crash_keeps_synced_records_and_never_resurrects_synced_removes() {
    for seed in 0..200u64 {
        let dev = SimDevice::new(seed, CrashModel::default());
        let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
        let mut synced = BTreeMap::new();
        for seq in 0..40u64 {
            let p = payload(seq, 200 + (seq as usize * 13) % 700);
            qf.append_put(seq, &p).unwrap();
            synced.insert(seq, p);
        }
        let removed: Vec<u64> = (0..40).step_by(4).collect();
        qf.append_removes(&removed).unwrap();
        for s in &removed {
            synced.remove(s);
        }
        qf.sync().unwrap();
        // Unsynced: more puts and removes.
        let mut after = synced.clone();
        for seq in 100..110u64 {
            let p = payload(seq, 500);
            qf.append_put(seq, &p).unwrap();
            after.insert(seq, p);
        }
        qf.append_removes(&[1, 2]).unwrap();
        after.remove(&1);
        after.remove(&2);
        dev.crash();
        let (mut qf, _) = QueueFile::open(dev.clone(), small()).unwrap();
        let got = contents(&mut qf);
        for s in &removed {
            assert!(!got.contains_key(s), "seed {seed}: removed {s} came back");
        }
        for (s, p) in &synced {
            if *s != 1 && *s != 2 {
                assert_eq!(got.get(s), Some(p), "seed {seed}: synced {s} lost");
            }
        }
        for (s, p) in &got {
            assert!(
                synced.get(s) == Some(p) || after.get(s) == Some(p),
                "seed {seed}: {s} appeared with content never written"
            );
        }
        // Usable after recovery, and what recovery kept stays.
        qf.append_put(999, b"x").unwrap();
        qf.sync().unwrap();
        dev.crash();
        let (mut qf2, rec) = QueueFile::open(dev.clone(), small()).unwrap();
        assert_eq!(rec.dropped_bytes, 0, "seed {seed}");
        let mut expect = got.clone();
        expect.insert(999, b"x".to_vec());
        assert_eq!(contents(&mut qf2), expect, "seed {seed}");
    }
}

#[test]
fn torn_tail_is_truncated_and_reported() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    qf.append_put(1, b"first").unwrap();
    qf.append_put(2, &payload(2, 400)).unwrap();
    qf.append_put(3, b"third").unwrap();
    qf.sync().unwrap();
    drop(qf);
    // Record 2 starts at 64 + 24 + 5 = 93; damage its payload: 2 and 3 are the torn tail.
    dev.corrupt(&segment_name(1), 93 + 24 + 10, &[0xEE]);
    let (mut qf, rec) = QueueFile::open(dev.clone(), small()).unwrap();
    assert_eq!(rec.dropped_bytes, (24 + 400) + (24 + 5));
    assert_eq!(rec.torn_reason.as_deref(), Some("record checksum mismatch"));
    assert_eq!(qf.seqs().collect::<Vec<_>>(), [1]);
    // A new, shorter record goes where the tail was; the stale record 3 never returns.
    qf.append_put(4, b"four").unwrap();
    qf.sync().unwrap();
    drop(qf);
    let (mut qf, rec) = QueueFile::open(dev, small()).unwrap();
    assert_eq!(rec.dropped_bytes, 0);
    assert_eq!(
        contents(&mut qf),
        BTreeMap::from([(1, b"first".to_vec()), (4, b"four".to_vec())])
    );
}

#[test]
fn damage_in_an_earlier_segment_is_refused() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    for seq in 0..30u64 {
        qf.append_put(seq, &payload(seq, 600)).unwrap();
    }
    qf.sync().unwrap();
    assert!(qf.status().segments >= 3);
    drop(qf);
    dev.corrupt(&segment_name(1), 64 + 24 + 3, &[0x55]);
    match QueueFile::open(dev.clone(), small()) {
        Err(e @ QueueFileError::Corrupt { .. }) => {
            assert!(e.to_string().contains("Q0000001.SEG"), "{e}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // A damaged header of a segment in the manifest's range is refused too.
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    for seq in 0..30u64 {
        qf.append_put(seq, &payload(seq, 600)).unwrap();
    }
    qf.sync().unwrap();
    drop(qf);
    dev.corrupt(&segment_name(2), 20, &[0x55]);
    assert!(matches!(
        QueueFile::open(dev, small()),
        Err(QueueFileError::Corrupt { .. })
    ));
}

#[test]
fn sync_failure_fails_the_queue_file_for_good() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    qf.append_put(1, b"one").unwrap();
    dev.set_faults(FaultPlan {
        fail_sync_after: Some(0),
        ..FaultPlan::default()
    });
    let e = qf.sync().unwrap_err();
    assert!(matches!(e, QueueFileError::Io { .. }), "{e}");
    dev.set_faults(FaultPlan::default());
    assert!(matches!(qf.sync(), Err(QueueFileError::Failed(_))));
    assert!(matches!(
        qf.append_put(2, b"two"),
        Err(QueueFileError::Failed(_))
    ));
    assert!(qf.failure().is_some());
}

/// The files a queue file with `segments` should consist of, exactly.
fn expect_files(dev: &SimDevice, qf_segments: std::ops::RangeInclusive<u64>) {
    let mut want: Vec<String> = qf_segments.map(segment_name).collect();
    want.push(MANIFEST_NAME.to_string());
    want.sort();
    assert_eq!(dev.file_names(), want);
}

#[test]
fn compaction_survives_a_crash_at_every_step() {
    let build = || {
        let dev = SimDevice::new(3, CrashModel::default());
        let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
        let mut model = BTreeMap::new();
        for seq in 0..40u64 {
            let p = payload(seq, 300);
            qf.append_put(seq, &p).unwrap();
            model.insert(seq, p);
        }
        let gone: Vec<u64> = (0..40).filter(|s| s % 4 != 0).collect();
        qf.append_removes(&gone).unwrap();
        for s in gone {
            model.remove(&s);
        }
        qf.sync().unwrap();
        (dev, qf, model)
    };
    let (_, qf, _) = build();
    let before = qf.status();
    assert!(qf.needs_compaction());
    drop(qf);
    let mut completed = false;
    let (mut saw_old, mut saw_new) = (0, 0);
    for cut in 0..200u64 {
        let (dev, mut qf, model) = build();
        dev.set_faults(FaultPlan {
            power_cut_after: Some(cut),
            ..FaultPlan::default()
        });
        let done = qf.compact().is_ok();
        drop(qf);
        dev.crash();
        let (mut qf, _) = QueueFile::open(dev.clone(), small()).unwrap();
        assert_eq!(contents(&mut qf), model, "cut after {cut} ops");
        let st = qf.status();
        // Either the old set or the new one, and no other file.
        let first = before.segments + 1;
        if st.generation == 1 {
            saw_old += 1;
            assert_eq!(st.segments, before.segments, "cut {cut}");
            expect_files(&dev, 1..=before.segments);
        } else {
            saw_new += 1;
            assert_eq!(st.generation, 2, "cut {cut}");
            assert_eq!(st.dead_bytes, 0, "cut {cut}");
            expect_files(&dev, first..=first + st.segments - 1);
        }
        // It still works: append, compact, reopen.
        qf.append_put(1000, b"later").unwrap();
        qf.compact().unwrap();
        drop(qf);
        let (mut qf, _) = QueueFile::open(dev.clone(), small()).unwrap();
        let mut expect = model.clone();
        expect.insert(1000, b"later".to_vec());
        assert_eq!(contents(&mut qf), expect, "cut {cut}");
        if done {
            completed = true;
            assert!(cut > 3, "compaction takes several writes and syncs");
            break;
        }
    }
    assert!(completed, "compaction never completed");
    assert!(saw_old > 3 && saw_new >= 1, "old {saw_old}, new {saw_new}");
}

#[test]
fn a_queue_drained_in_order_gives_back_its_leading_segments_crash_or_not() {
    // 40 messages of 300 bytes in 4 KiB segments (about a dozen per segment), then the
    // oldest 25 removed, as a queue is drained: the leading segments hold nothing live.
    let build = || {
        let dev = SimDevice::new(5, CrashModel::default());
        let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
        let mut model = BTreeMap::new();
        for seq in 0..40u64 {
            let p = payload(seq, 300);
            qf.append_put(seq, &p).unwrap();
            model.insert(seq, p);
        }
        qf.sync().unwrap();
        let gone: Vec<u64> = (0..25).collect();
        qf.append_removes(&gone).unwrap();
        for s in gone {
            model.remove(&s);
        }
        (dev, qf, model)
    };
    let (_, qf, _) = build();
    let before = qf.status();
    drop(qf);
    let mut completed = false;
    for cut in 0..100u64 {
        let (dev, mut qf, model) = build();
        dev.set_faults(FaultPlan {
            power_cut_after: Some(cut),
            ..FaultPlan::default()
        });
        // The sync makes the removes durable, then trims.
        let done = qf.sync().is_ok();
        drop(qf);
        dev.crash();
        let (mut qf, _) = QueueFile::open(dev.clone(), small()).unwrap();
        let st = qf.status();
        if done {
            // Trimmed: fewer segments, nothing rewritten (same generation), removes whose
            // puts went with the dropped segments are accepted at open.
            assert_eq!(contents(&mut qf), model, "cut {cut}");
            assert_eq!(st.generation, 1);
            assert!(
                st.segments < before.segments,
                "{} segments, {} before",
                st.segments,
                before.segments
            );
            assert!(st.dead_bytes < before.dead_bytes, "{st:?} / {before:?}");
        } else {
            // The sync may not have happened: the removes are then lost or kept whole,
            // never half applied to a trimmed set.
            let got = contents(&mut qf);
            let all: BTreeMap<u64, Vec<u8>> = (0..40u64).map(|s| (s, payload(s, 300))).collect();
            assert!(got == model || got == all, "cut {cut}: {:?}", got.keys());
        }
        // Still usable: append, drain, reopen.
        qf.append_put(1000, b"later").unwrap();
        let live: Vec<u64> = qf.seqs().filter(|s| *s != 1000).collect();
        qf.append_removes(&live).unwrap();
        qf.sync().unwrap();
        drop(qf);
        let (mut qf, _) = QueueFile::open(dev.clone(), small()).unwrap();
        let expect: BTreeMap<u64, Vec<u8>> = [(1000, b"later".to_vec())].into();
        assert_eq!(contents(&mut qf), expect, "cut {cut}");
        assert_eq!(qf.status().segments, 1, "only the last segment is left");
        if done {
            completed = true;
            break;
        }
    }
    assert!(completed, "the trimming sync never completed");
}

#[test]
fn compaction_shrinks_and_keeps_order() {
    let dev = sim();
    let mut qf = QueueFile::create(dev.clone(), small()).unwrap();
    for seq in 0..100u64 {
        qf.append_put(seq, &payload(seq, 250)).unwrap();
    }
    qf.append_removes(&(0..90).collect::<Vec<_>>()).unwrap();
    let before = qf.status();
    assert!(qf.maybe_compact().unwrap());
    let after = qf.status();
    assert!(after.segments < before.segments);
    assert_eq!(after.live_messages, 10);
    assert_eq!(after.live_bytes, before.live_bytes);
    assert_eq!(after.dead_bytes, 0);
    assert_eq!(after.compactions, 1);
    assert!(!qf.maybe_compact().unwrap());
    assert_eq!(qf.seqs().collect::<Vec<_>>(), (90..100).collect::<Vec<_>>());
    // Compaction is a sync: a crash right after keeps everything.
    dev.crash();
    let (mut qf, _) = QueueFile::open(dev, small()).unwrap();
    for seq in 90..100 {
        assert_eq!(qf.read(seq).unwrap(), payload(seq, 250));
    }
}

#[test]
fn real_files_ten_thousand_messages() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = QueueFileConfig {
        segment_size: 4 << 20,
        compact_min_dead_bytes: 1 << 20,
    };
    let mut qf = QueueFile::create(FileDevice::new(dir.path()).unwrap(), cfg.clone()).unwrap();
    for chunk in (0..10_000u64).collect::<Vec<_>>().chunks(100) {
        let batch: Vec<(u64, Vec<u8>)> = chunk.iter().map(|&s| (s, payload(s, 2048))).collect();
        qf.append_puts(&batch).unwrap();
    }
    qf.sync().unwrap();
    let segs_before = qf.status().segments;
    assert!(segs_before >= 5);
    let odd: Vec<u64> = (0..10_000).filter(|s| s % 2 == 1).collect();
    qf.append_removes(&odd).unwrap();
    qf.append_remove(0).unwrap();
    assert!(qf.maybe_compact().unwrap());
    let st = qf.status();
    assert_eq!(st.live_messages, 4_999);
    assert!(st.segments < segs_before, "{st:?}");
    drop(qf);
    let files = std::fs::read_dir(dir.path()).unwrap().count() as u64;
    assert_eq!(files, st.segments + 1, "segments plus the manifest");
    let (mut qf, rec) = QueueFile::open(FileDevice::new(dir.path()).unwrap(), cfg).unwrap();
    assert_eq!(rec.dropped_bytes, 0);
    assert_eq!(rec.records, 4_999);
    let mut n = 0;
    for item in qf.iter() {
        let (seq, p) = item.unwrap();
        assert!(seq % 2 == 0 && seq != 0);
        assert_eq!(p, payload(seq, 2048));
        n += 1;
    }
    assert_eq!(n, 4_999);
}

#[test]
fn iteration_reads_ahead_in_file_order_and_still_finds_scattered_records() {
    // 3,000 messages of 2 KiB in 4 MiB segments: sequential read-ahead across segment
    // boundaries; some messages re-filed (removed and put again at the end) and some
    // put out of sequence order, so the iterator also jumps back and forth.
    let dir = tempfile::tempdir().unwrap();
    let cfg = QueueFileConfig {
        segment_size: 4 << 20,
        compact_min_dead_bytes: u64::MAX,
    };
    let mut qf = QueueFile::create(FileDevice::new(dir.path()).unwrap(), cfg.clone()).unwrap();
    let order: Vec<u64> = (0..3_000u64).rev().filter(|s| s % 500 == 7).collect();
    for chunk in (0..3_000u64)
        .filter(|s| s % 500 != 7)
        .collect::<Vec<_>>()
        .chunks(64)
    {
        let batch: Vec<(u64, Vec<u8>)> = chunk.iter().map(|&s| (s, payload(s, 2048))).collect();
        qf.append_puts(&batch).unwrap();
    }
    for &s in &order {
        qf.append_put(s, &payload(s, 2048)).unwrap();
    }
    for s in [3u64, 1_000, 2_999] {
        qf.append_remove(s).unwrap();
        qf.append_put(s, &payload(s, 100 + s as usize % 7)).unwrap();
    }
    qf.sync().unwrap();
    assert!(qf.status().segments >= 2);
    let check = |qf: &mut QueueFile<FileDevice>| {
        let got: Vec<(u64, Vec<u8>)> = qf.iter().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 3_000);
        for (i, (seq, p)) in got.iter().enumerate() {
            assert_eq!(*seq, i as u64);
            let want = if [3, 1_000, 2_999].contains(seq) {
                payload(*seq, 100 + *seq as usize % 7)
            } else {
                payload(*seq, 2048)
            };
            assert_eq!(p, &want, "message {seq}");
        }
    };
    check(&mut qf);
    drop(qf);
    let (mut qf, _) = QueueFile::open(FileDevice::new(dir.path()).unwrap(), cfg).unwrap();
    check(&mut qf);
}

#[test]
fn iteration_detects_a_damaged_record_inside_a_read_ahead_window() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = QueueFileConfig {
        segment_size: 4 << 20,
        compact_min_dead_bytes: u64::MAX,
    };
    let mut qf = QueueFile::create(FileDevice::new(dir.path()).unwrap(), cfg.clone()).unwrap();
    let batch: Vec<(u64, Vec<u8>)> = (0..100u64).map(|s| (s, payload(s, 2048))).collect();
    qf.append_puts(&batch).unwrap();
    qf.sync().unwrap();
    let (mut qf2, _) = QueueFile::open(FileDevice::new(dir.path()).unwrap(), cfg).unwrap();
    drop(qf);
    // Flip a payload byte of message 50 behind the open queue file's back (the scan at
    // open saw it intact): the iterator, reading it from a read-ahead window, refuses it.
    let seg = dir.path().join(segment_name(1));
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = 64 + 50 * (24 + 2048) + 24 + 100;
    bytes[at] ^= 0xff;
    std::fs::write(&seg, bytes).unwrap();
    let results: Vec<_> = qf2.iter().collect();
    assert_eq!(results.len(), 100);
    assert!(results[..50].iter().all(|r| r.is_ok()));
    assert!(
        matches!(&results[50], Err(QueueFileError::Corrupt { .. })),
        "{:?}",
        results[50].as_ref().err()
    );
    assert!(results[51..].iter().all(|r| r.is_ok()));
}

/// A manifest whose last segment number is the largest possible (a valid checksum, as
/// damage or a hostile file could make) is refused as damaged. It used to overflow while
/// looking for leftover segments above it (a panic; in a release build the count wrapped
/// and segment files from 0 up were removed). Found by the `queue_file_open` fuzz target.
#[test]
fn manifest_naming_the_last_possible_segment_is_refused() {
    let mut dev = sim();
    drop(QueueFile::create(dev.clone(), small()).unwrap());
    let top = Manifest {
        generation: 1,
        first: u64::MAX - 1,
        base: u64::MAX - 1,
        last: u64::MAX,
        segment_size: 4096,
    };
    manifest::write(&mut dev, &top).unwrap();
    match QueueFile::open(dev.clone(), small()) {
        Err(QueueFileError::Corrupt { file, reason, .. }) => {
            assert_eq!(file, MANIFEST_NAME);
            assert!(reason.contains("segment range"), "{reason}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(
        dev.file_names().contains(&segment_name(1)),
        "nothing removed"
    );
}
