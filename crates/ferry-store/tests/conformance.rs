//! The device conformance suite: the same contract checks against the real file device and the
//! simulated one, then the same log round trip on both.

use ferry_store::device::{read_exact_at, write_all_at};
use ferry_store::{
    CrashModel, FileDevice, LogConfig, LogCore, LogDevice, LogFile, RecordKind, SimDevice,
    WriteIntegrity,
};
use std::io::ErrorKind;
use std::time::Duration;

fn device_contract<D: LogDevice>(mut dev: D) {
    assert!(!dev.exists("a.dat").unwrap());
    assert_eq!(
        dev.open("a.dat").err().map(|e| e.kind()),
        Some(ErrorKind::NotFound)
    );
    let mut f = dev.create("a.dat", 3 * 4096).unwrap();
    assert!(dev.exists("a.dat").unwrap());
    assert_eq!(f.size().unwrap(), 3 * 4096);
    let mut buf = vec![1u8; 3 * 4096];
    read_exact_at(&mut f, 0, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 0), "created files are zero-filled");
    assert_eq!(
        dev.create("a.dat", 4096).err().map(|e| e.kind()),
        Some(ErrorKind::AlreadyExists)
    );
    write_all_at(&mut f, 4000, b"hello across a page boundary").unwrap();
    f.sync_data().unwrap();
    let mut back = vec![0u8; 28];
    read_exact_at(&mut f, 4000, &mut back).unwrap();
    assert_eq!(&back, b"hello across a page boundary");
    assert_eq!(
        f.size().unwrap(),
        3 * 4096,
        "writes inside the file never grow it"
    );
    // Reads past the end are short.
    let mut tail = vec![0u8; 100];
    assert_eq!(f.read_at(3 * 4096 - 10, &mut tail).unwrap(), 10);
    drop(f);
    let mut f = dev.open("a.dat").unwrap();
    read_exact_at(&mut f, 4000, &mut back).unwrap();
    assert_eq!(&back, b"hello across a page boundary");
    let mut g = dev.create("b.tmp", 4096).unwrap();
    write_all_at(&mut g, 0, b"new").unwrap();
    g.sync_data().unwrap();
    drop(g);
    dev.rename("b.tmp", "a.dat").unwrap();
    assert!(!dev.exists("b.tmp").unwrap());
    let mut f = dev.open("a.dat").unwrap();
    assert_eq!(f.size().unwrap(), 4096);
    let mut three = [0u8; 3];
    read_exact_at(&mut f, 0, &mut three).unwrap();
    assert_eq!(&three, b"new");
    dev.remove("a.dat").unwrap();
    dev.remove("a.dat").unwrap();
    assert!(!dev.exists("a.dat").unwrap());
}

fn log_round_trip<D: LogDevice>(mk: impl Fn() -> D) {
    for integrity in [WriteIntegrity::SingleWrite, WriteIntegrity::TripleWrite] {
        let c = LogConfig {
            file_pages: 16,
            extents: 2,
            primary_extents: 2,
            buffer_pages: 32,
            write_integrity: integrity,
            slow_io_threshold: Duration::from_secs(60),
        };
        let mut log = LogCore::create(mk(), &c, "QM.CONFORMANCE").unwrap();
        let mut lsns = Vec::new();
        for i in 0..30u32 {
            lsns.push(
                log.append(RecordKind::user(99), &vec![i as u8; i as usize * 211])
                    .unwrap(),
            );
            if i % 4 == 0 {
                log.flush().unwrap();
            }
        }
        log.flush().unwrap();
        let dev = log.into_device();
        let mut r = LogCore::open(dev, &c).unwrap();
        assert_eq!(r.control().qm_name, "QM.CONFORMANCE");
        let mut got = Vec::new();
        while let Some(x) = r.next_record().unwrap() {
            assert_eq!(x.payload, vec![got.len() as u8; got.len() * 211]);
            got.push(x.lsn);
        }
        assert_eq!(got, lsns);
        let mut log = r.finish().unwrap();
        log.append(RecordKind::user(99), b"more").unwrap();
        log.flush().unwrap();
        let mut dev = log.into_device();
        for name in ["S0000000.LOG", "S0000001.LOG", "ferrylog.ctl"] {
            dev.remove(name).unwrap();
        }
    }
}

#[test]
fn file_device_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    device_contract(FileDevice::new(dir.path()).unwrap());
}

#[test]
fn sim_device_keeps_the_contract() {
    device_contract(SimDevice::new(1, CrashModel::default()));
}

#[test]
fn log_round_trip_on_file_device() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_path_buf();
    log_round_trip(move || FileDevice::new(&p).unwrap());
}

#[test]
fn log_round_trip_on_sim_device() {
    let dev = SimDevice::new(2, CrashModel::default());
    log_round_trip(move || dev.clone());
}
