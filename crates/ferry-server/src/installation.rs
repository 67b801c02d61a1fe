//! What this installation of Ferry is: `ferry dspmqver` and the installation fields of
//! `dspmq -o installation|all`.
//!
//! MQ's dspmqver names the product, its version, platform, where it is installed and
//! where its data lives; Ferry's answers the same questions under the same labels so
//! that scripts reading them carry over. Ferry has one installation per binary, named
//! `Ferry`, at the directory of the `ferry` binary.

use crate::home::FerryHome;
use std::path::PathBuf;

/// The installation name (MQ's INSTNAME): one installation per binary.
pub const INSTALLATION_NAME: &str = "Ferry";

/// The directory of the running `ferry` binary (MQ's INSTPATH); empty when it cannot be
/// found.
pub fn installation_path() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(PathBuf::from))
        .unwrap_or_default()
}

/// Ferry's version (MQ's INSTVER and dspmqver's Version).
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The operating system's name and release, as `uname -sr` prints them.
fn operating_system() -> String {
    // SAFETY: uname fills the struct we own; on failure its fields stay zeroed.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut name) } != 0 {
        return std::env::consts::OS.to_string();
    }
    let field = |chars: &[libc::c_char]| {
        let bytes: Vec<u8> = chars
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!("{} {}", field(&name.sysname), field(&name.release))
}

/// dspmqver's lines: `Name:`, `Version:`, `Platform:`, `Mode:`, `O/S:`, `InstName:`,
/// `InstPath:`, `DataPath:`, `LicenseType:`, with MQ's labels and alignment.
pub fn version_lines(home: &FerryHome) -> Vec<String> {
    let rows = [
        ("Name", "Ferry".to_string()),
        ("Version", version().to_string()),
        (
            "Platform",
            format!(
                "Ferry for {} ({})",
                std::env::consts::OS,
                std::env::consts::ARCH
            ),
        ),
        ("Mode", format!("{}-bit", usize::BITS)),
        ("O/S", operating_system()),
        ("InstName", INSTALLATION_NAME.to_string()),
        ("InstPath", installation_path().display().to_string()),
        ("DataPath", home.root().display().to_string()),
        ("LicenseType", "Apache-2.0".to_string()),
    ];
    rows.iter()
        .map(|(label, value)| format!("{:<13}{value}", format!("{label}:")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_lines_use_mq_labels_aligned() {
        let lines = version_lines(&FerryHome::at("/data/ferry"));
        assert_eq!(lines[0], "Name:        Ferry");
        assert_eq!(lines[1], format!("Version:     {}", version()));
        assert!(lines.contains(&"DataPath:    /data/ferry".to_string()));
        assert!(lines.iter().any(|l| l.starts_with("O/S:         ")));
    }
}
