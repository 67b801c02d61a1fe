//! The machine's facts a result is only meaningful with: CPUs and their model, memory,
//! kernel, the compiler that built the harness and the Ferry commit (of the working
//! directory's git checkout, `+dirty` when it has uncommitted changes).

use serde::{Deserialize, Serialize};

/// Facts about the machine and the build a run was measured on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Online CPUs (`nproc`).
    pub nproc: usize,
    /// CPU model (`/proc/cpuinfo` model name).
    pub cpu_model: String,
    /// Total memory in GiB (`/proc/meminfo` MemTotal).
    pub memory_gib: f64,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// `rustc --version` of the toolchain that built the harness.
    pub rustc: String,
    /// Ferry's git commit (`git rev-parse HEAD` here), `+dirty` with local changes.
    pub ferry_commit: String,
    /// Version of the ferry-perf crate.
    pub harness_version: String,
}

/// The value of `key` in a `key : value` text such as `/proc/cpuinfo`.
pub fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// MemTotal of a `/proc/meminfo` text, in GiB.
pub fn mem_total_gib(meminfo: &str) -> Option<f64> {
    let kb: f64 = field(meminfo, "MemTotal")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kb / 1024.0 / 1024.0)
}

fn git(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

impl Machine {
    /// Reads the facts of this machine.
    pub fn current() -> Machine {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let commit = match git(&["rev-parse", "HEAD"]) {
            Some(c) => {
                let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                    .is_some_and(|s| !s.is_empty());
                if dirty {
                    format!("{c}+dirty")
                } else {
                    c
                }
            }
            None => "unknown".into(),
        };
        Machine {
            nproc: crate::measure::online_cpus(),
            cpu_model: field(&cpuinfo, "model name")
                .unwrap_or("unknown")
                .to_string(),
            memory_gib: mem_total_gib(&read("/proc/meminfo")).unwrap_or(0.0),
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            rustc: env!("FERRY_PERF_RUSTC_VERSION").to_string(),
            ferry_commit: commit,
            harness_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// One line: `2 CPUs (model), 23.4 GiB, Linux 6.1, rustc 1.x, Ferry abc123`.
    pub fn one_line(&self) -> String {
        format!(
            "{} CPUs ({}), {:.1} GiB memory, Linux {}, {}, Ferry commit {}",
            self.nproc, self.cpu_model, self.memory_gib, self.kernel, self.rustc, self.ferry_commit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_files_parse() {
        let cpu = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n";
        assert_eq!(field(cpu, "model name"), Some("AMD EPYC 7B13"));
        assert_eq!(field(cpu, "nothing"), None);
        let mem = "MemTotal:       24576000 kB\nMemFree: 1 kB\n";
        let gib = mem_total_gib(mem).expect("MemTotal");
        assert!((gib - 23.4375).abs() < 1e-6, "{gib}");
        let m = Machine::current();
        assert!(m.nproc >= 1);
        assert!(m.one_line().contains("CPUs"));
    }
}
