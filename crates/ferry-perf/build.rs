//! Records the compiler's version for the machine facts a run writes next to its
//! results (`rustc --version` of the toolchain that built the harness).

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=FERRY_PERF_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
}
