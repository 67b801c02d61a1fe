//! How to make a log write durable on this machine: pwrite + fdatasync, O_DSYNC, or
//! O_DIRECT|O_DSYNC, for 4, 16 and 64 KiB appends into a zero-filled preallocated file
//! (what the log's extents are). Run alone: `cargo bench -p ferry-store --bench device_sync`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Duration;

const FILE_LEN: u64 = 64 << 20;

struct Aligned {
    ptr: *mut u8,
    layout: Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, 4096).expect("layout");
        // SAFETY: the layout has a non-zero size; the memory is freed in Drop with the same layout.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        Aligned { ptr, layout }
    }
    fn slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr points to layout.size() initialised (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

fn bench(c: &mut Criterion) {
    let dir = std::env::var("FERRY_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir());
    let path = dir.join("ferry_device_sync.dat");
    let _ = std::fs::remove_file(&path);
    {
        let mut f = std::fs::File::create(&path).expect("create");
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..(FILE_LEN >> 20) {
            f.write_all(&zeros).expect("zero-fill");
        }
        f.sync_all().expect("sync");
    }
    let mut g = c.benchmark_group("device_sync");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for block in [4096usize, 16384, 65536] {
        g.throughput(Throughput::Bytes(block as u64));
        for mode in ["fdatasync", "odsync", "odirect_odsync"] {
            let flags = match mode {
                "odsync" => libc::O_DSYNC,
                "odirect_odsync" => libc::O_DIRECT | libc::O_DSYNC,
                _ => 0,
            };
            let f = OpenOptions::new()
                .write(true)
                .custom_flags(flags)
                .open(&path)
                .expect("open");
            let mut buf = Aligned::new(block);
            let mut off = 0u64;
            g.bench_with_input(BenchmarkId::new(mode, block), &block, |b, &block| {
                b.iter(|| {
                    buf.slice()[..8].copy_from_slice(&off.to_le_bytes());
                    f.write_all_at(buf.slice(), off).expect("write");
                    if flags == 0 {
                        f.sync_data().expect("fdatasync");
                    }
                    off = (off + block as u64) % FILE_LEN;
                })
            });
        }
    }
    g.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, bench);
criterion_main!(benches);
