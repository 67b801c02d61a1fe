//! The simulated device: in-memory files with seeded crashes, torn writes and injected faults.
//!
//! Every file keeps a *durable* image (what survives a crash) and a *current* image (what reads
//! see), plus the list of writes made since the last successful `sync_data`. [`SimDevice::crash`]
//! resolves each pending write chunk by chunk (512-byte sectors, or whole 4 KiB pages under
//! [`CrashModel::atomic_pages`]): a chunk is kept, lost, or — without atomic pages — torn at a
//! random byte (a prefix of the new bytes over the old ones). Then the current image becomes the
//! durable one, and every handle opened before the crash stops working, as a dead process's would.
//!
//! A failed `sync_data` behaves as Linux does after a writeback error: the pending writes are
//! resolved as a crash would resolve them, but reads keep seeing the new bytes and a later sync
//! succeeds — so a caller that retries fsync would wrongly believe the data durable.
//!
//! All randomness comes from one seed, so a failing test replays exactly.

use super::{LogDevice, LogFile};
use crate::format::page::PAGE_SIZE;
use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

/// What survives a crash.
///
/// With `atomic_pages` the device also never splits a 4 KiB page across two writes (a short
/// write ends on a page boundary): that is what "atomic 4 KiB writes" means to SingleWrite.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CrashModel {
    /// 4 KiB-aligned page writes are atomic (all or nothing); otherwise 512-byte sectors
    /// survive independently and a sector can be torn at any byte.
    pub atomic_pages: bool,
    /// Percent chance that an unsynced chunk survives a crash (the rest are lost or torn).
    pub survive_percent: u32,
}

impl Default for CrashModel {
    fn default() -> Self {
        CrashModel {
            atomic_pages: false,
            survive_percent: 50,
        }
    }
}

/// Faults to inject from now on (counters restart when a plan is set).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Writes randomly return short counts.
    pub short_writes: bool,
    /// After this many more successful syncs, syncs fail with EIO.
    pub fail_sync_after: Option<u64>,
    /// After this many more successful writes, writes fail with ENOSPC.
    pub enospc_write_after: Option<u64>,
    /// Total bytes all files may occupy; a `create` beyond fails with ENOSPC.
    pub capacity: Option<u64>,
    /// After this many more writes and syncs the power is cut: every later write and sync
    /// fails and changes nothing, as if the process died there. Call [`SimDevice::crash`] next.
    pub power_cut_after: Option<u64>,
}

#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // SplitMix64.
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        self.next() % n
    }
}

#[derive(Debug, Default, Clone)]
struct SimFileData {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<(u64, Vec<u8>)>,
}

#[derive(Debug)]
struct Disk {
    files: BTreeMap<String, SimFileData>,
    rng: Rng,
    boot: u64,
    model: CrashModel,
    faults: FaultPlan,
    writes: u64,
    syncs: u64,
    ops: u64,
    failed_syncs: u64,
    crashes: u64,
}

impl Disk {
    /// Counts a write or sync; `Err` once the power is cut.
    fn power(&mut self) -> io::Result<()> {
        if let Some(n) = self.faults.power_cut_after {
            if self.ops >= n {
                return Err(err(io::ErrorKind::Other, "simulated power cut"));
            }
        }
        self.ops += 1;
        Ok(())
    }

    /// Applies the pending writes of `f` to its durable image at random. With atomic pages each
    /// touched 4 KiB page ends up wholly new (its current content) or wholly old; otherwise each
    /// written 512-byte sector is kept, lost or torn at a random byte.
    fn resolve(rng: &mut Rng, model: CrashModel, f: &mut SimFileData) {
        let pending = std::mem::take(&mut f.pending);
        if model.atomic_pages {
            let page = PAGE_SIZE as u64;
            let mut pages: Vec<u64> = Vec::new();
            for (off, data) in &pending {
                let mut p = off / page;
                while p * page < off + data.len() as u64 {
                    pages.push(p);
                    p += 1;
                }
            }
            pages.sort_unstable();
            pages.dedup();
            for p in pages {
                if (rng.below(100) as u32) < model.survive_percent {
                    let (a, b) = ((p * page) as usize, ((p + 1) * page) as usize);
                    let b = b.min(f.current.len());
                    f.durable[a..b].copy_from_slice(&f.current[a..b]);
                }
            }
            return;
        }
        for (off, data) in pending {
            let end = off + data.len() as u64;
            let mut at = off;
            while at < end {
                let next = ((at / 512) + 1) * 512;
                let stop = next.min(end);
                let src = &data[(at - off) as usize..(stop - off) as usize];
                let roll = rng.below(100) as u32;
                let keep = if roll < model.survive_percent {
                    src.len()
                } else if roll.is_multiple_of(3) {
                    rng.below(src.len() as u64) as usize // torn at a random byte
                } else {
                    0
                };
                f.durable[at as usize..at as usize + keep].copy_from_slice(&src[..keep]);
                at = stop;
            }
        }
    }
}

/// An in-memory device (cheap to clone: clones share the same disk).
#[derive(Clone, Debug)]
pub struct SimDevice {
    disk: Arc<Mutex<Disk>>,
}

impl SimDevice {
    /// A new empty disk whose randomness comes from `seed`.
    pub fn new(seed: u64, model: CrashModel) -> SimDevice {
        SimDevice {
            disk: Arc::new(Mutex::new(Disk {
                files: BTreeMap::new(),
                rng: Rng(seed ^ 0x5EED_F00D),
                boot: 0,
                model,
                faults: FaultPlan::default(),
                writes: 0,
                syncs: 0,
                ops: 0,
                failed_syncs: 0,
                crashes: 0,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Disk> {
        // A panic while holding the lock is a test failure already; keep the data usable.
        self.disk.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Simulates power loss: unsynced writes survive only in part, open handles die.
    pub fn crash(&self) {
        let mut d = self.lock();
        let d = &mut *d;
        for f in d.files.values_mut() {
            Disk::resolve(&mut d.rng, d.model, f);
            f.current = f.durable.clone();
        }
        d.boot += 1;
        d.crashes += 1;
        d.faults = FaultPlan::default();
    }

    /// Sets the faults to inject from now on.
    pub fn set_faults(&self, plan: FaultPlan) {
        let mut d = self.lock();
        d.faults = plan;
        d.writes = 0;
        d.syncs = 0;
        d.ops = 0;
    }

    /// Changes the crash model (e.g. atomic pages for SingleWrite).
    pub fn set_model(&self, model: CrashModel) {
        self.lock().model = model;
    }

    /// Names of the files on the disk.
    pub fn file_names(&self) -> Vec<String> {
        self.lock().files.keys().cloned().collect()
    }

    /// Overwrites bytes of a file's current and durable images (bit rot, test set-up).
    pub fn corrupt(&self, name: &str, offset: u64, bytes: &[u8]) {
        let mut d = self.lock();
        let f = d.files.get_mut(name).expect("no such sim file");
        let o = offset as usize;
        f.current[o..o + bytes.len()].copy_from_slice(bytes);
        f.durable[o..o + bytes.len()].copy_from_slice(bytes);
    }

    /// Syncs that failed because of an injected fault.
    pub fn failed_syncs(&self) -> u64 {
        self.lock().failed_syncs
    }
}

fn err(kind: io::ErrorKind, msg: &str) -> io::Error {
    io::Error::new(kind, msg.to_string())
}

impl LogDevice for SimDevice {
    type File = SimFile;

    fn create(&mut self, name: &str, len: u64) -> io::Result<SimFile> {
        let mut d = self.lock();
        if d.files.contains_key(name) {
            return Err(err(io::ErrorKind::AlreadyExists, "file exists"));
        }
        if let Some(cap) = d.faults.capacity {
            let used: u64 = d.files.values().map(|f| f.current.len() as u64).sum();
            if used + len > cap {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
        }
        let data = vec![0u8; len as usize];
        d.files.insert(
            name.to_string(),
            SimFileData {
                durable: data.clone(),
                current: data,
                pending: Vec::new(),
            },
        );
        Ok(SimFile {
            disk: self.disk.clone(),
            name: name.to_string(),
            boot: d.boot,
        })
    }

    fn open(&mut self, name: &str) -> io::Result<SimFile> {
        let d = self.lock();
        if !d.files.contains_key(name) {
            return Err(err(io::ErrorKind::NotFound, "no such file"));
        }
        Ok(SimFile {
            disk: self.disk.clone(),
            name: name.to_string(),
            boot: d.boot,
        })
    }

    fn exists(&mut self, name: &str) -> io::Result<bool> {
        Ok(self.lock().files.contains_key(name))
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let mut d = self.lock();
        let f = d
            .files
            .remove(from)
            .ok_or_else(|| err(io::ErrorKind::NotFound, "no such file"))?;
        d.files.insert(to.to_string(), f);
        Ok(())
    }

    fn remove(&mut self, name: &str) -> io::Result<()> {
        self.lock().files.remove(name);
        Ok(())
    }
}

/// An open file of a [`SimDevice`].
#[derive(Debug)]
pub struct SimFile {
    disk: Arc<Mutex<Disk>>,
    name: String,
    boot: u64,
}

impl SimFile {
    fn with<T>(&self, f: impl FnOnce(&mut Disk, &str) -> io::Result<T>) -> io::Result<T> {
        let mut d = self.disk.lock().unwrap_or_else(|p| p.into_inner());
        if d.boot != self.boot {
            return Err(err(
                io::ErrorKind::Other,
                "handle from before a simulated crash",
            ));
        }
        if !d.files.contains_key(&self.name) {
            return Err(err(io::ErrorKind::NotFound, "file removed"));
        }
        f(&mut d, &self.name)
    }
}

impl LogFile for SimFile {
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<usize> {
        self.with(|d, name| {
            d.power()?;
            if let Some(n) = d.faults.enospc_write_after {
                if d.writes >= n {
                    return Err(io::Error::from_raw_os_error(libc::ENOSPC));
                }
            }
            let mut n = buf.len();
            if d.faults.short_writes && n > 1 && d.rng.below(4) == 0 {
                n = 1 + d.rng.below(n as u64 - 1) as usize;
                if d.model.atomic_pages {
                    // Storage with atomic page writes never splits a page: short counts end on
                    // a page boundary (or the write is whole).
                    let end = (offset + n as u64) / PAGE_SIZE as u64 * PAGE_SIZE as u64;
                    n = if end > offset {
                        (end - offset) as usize
                    } else {
                        buf.len()
                    };
                }
            }
            let f = d
                .files
                .get_mut(name)
                .ok_or_else(|| err(io::ErrorKind::NotFound, "gone"))?;
            let end = offset as usize + n;
            if end > f.current.len() {
                // Log files never grow after preallocation; growing one is a bug.
                return Err(err(io::ErrorKind::InvalidInput, "sim files do not grow"));
            }
            f.current[offset as usize..end].copy_from_slice(&buf[..n]);
            f.pending.push((offset, buf[..n].to_vec()));
            d.writes += 1;
            Ok(n)
        })
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.with(|d, name| {
            let f = &d.files[name];
            let start = (offset as usize).min(f.current.len());
            let n = buf.len().min(f.current.len() - start);
            buf[..n].copy_from_slice(&f.current[start..start + n]);
            Ok(n)
        })
    }

    fn sync_data(&mut self) -> io::Result<()> {
        self.with(|d, name| {
            d.power()?;
            if let Some(n) = d.faults.fail_sync_after {
                if d.syncs >= n {
                    d.failed_syncs += 1;
                    let (rng, model) = (&mut d.rng, d.model);
                    let f = d
                        .files
                        .get_mut(name)
                        .ok_or_else(|| err(io::ErrorKind::NotFound, "gone"))?;
                    Disk::resolve(rng, model, f);
                    return Err(io::Error::from_raw_os_error(libc::EIO));
                }
            }
            d.syncs += 1;
            let f = d
                .files
                .get_mut(name)
                .ok_or_else(|| err(io::ErrorKind::NotFound, "gone"))?;
            for (off, data) in std::mem::take(&mut f.pending) {
                f.durable[off as usize..off as usize + data.len()].copy_from_slice(&data);
            }
            Ok(())
        })
    }

    fn size(&mut self) -> io::Result<u64> {
        self.with(|d, name| Ok(d.files[name].current.len() as u64))
    }
}
