//! [`Environment`]: where a result was measured, recorded once per document.
//!
//! One record for every producer: the page's worker fills the browser fields, the native
//! runners the machine fields. Every field is optional (`None`: the platform cannot tell, or
//! the producer did not ask); absent fields are left out of the JSON.
//!
//! Version 1 page documents called the OS field `platform` and the CPU count
//! `hardware_concurrency`; both still load (serde aliases).

use serde::{Deserialize, Serialize};

/// The machine and software a result was measured on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// `browser` (a dedicated worker in a page) or `native`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Operating system: `navigator.userAgentData.platform` / `navigator.platform` in a
    /// browser, `std::env::consts::OS` natively.
    #[serde(alias = "platform", skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// CPU architecture of the code (`wasm32` in a browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Logical CPUs (`hardwareConcurrency`, `available_parallelism`).
    #[serde(
        alias = "hardware_concurrency",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_count: Option<u32>,
    /// CPU model (native, `/proc/cpuinfo`; a page cannot see it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// `navigator.deviceMemory`, GB, rounded by the browser (Chromium only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_memory_gb: Option<f64>,
    /// `navigator.userAgent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Browser name (`Firefox`, `Chromium Headless`, ...), from the user agent and, in
    /// Chromium, the brand list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    /// Browser version (Chromium: the full version from `userAgentData`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_version: Option<String>,
    /// Smallest `performance.now()` step measured in the worker, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer_resolution_us: Option<f64>,
    /// `crossOriginIsolated` in the worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_origin_isolated: Option<bool>,
    /// `isSecureContext` in the worker (OPFS needs it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_context: Option<bool>,
    /// `navigator.storage.getDirectory` exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opfs_available: Option<bool>,
    /// `navigator.storage.estimate().usage` before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_usage_bytes: Option<u64>,
    /// `navigator.storage.estimate().quota`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_quota_bytes: Option<u64>,
    /// `navigator.storage.persisted()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_persisted: Option<bool>,
    /// `sqlite3_libversion()` of our SQLite (the one in the wasm, or the bundled one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlite_version: Option<String>,
    /// `rustc -V` (native runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// Source commit, `-dirty` if the work tree had changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Version of the page (the `web` crate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_version: Option<String>,
    /// Seconds since the Unix epoch when the run started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<u64>,
}

/// `YYYY-MM-DD` (UTC) of a Unix time in seconds (Howard Hinnant's `civil_from_days`).
pub fn civil_date(unix_s: u64) -> String {
    let z = i64::try_from(unix_s / 86_400).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let month = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// ISO 8601 UTC (`2026-11-30T18:09:42Z`) of a Unix time in seconds.
pub fn iso_utc(unix_s: u64) -> String {
    let s = unix_s % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        civil_date(unix_s),
        s / 3600,
        (s / 60) % 60,
        s % 60
    )
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::path::Path;
    use std::process::Command;

    use super::Environment;

    fn output(program: &str, args: &[&str], dir: Option<&Path>) -> Option<String> {
        let mut cmd = Command::new(program);
        cmd.args(args);
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        let out = cmd.output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// The source commit of the git work tree at `dir` (12 hex digits, `-dirty` if
    /// `git status` shows changes), or `None` outside a checkout.
    pub fn source_commit(dir: &Path) -> Option<String> {
        let commit = output("git", &["rev-parse", "--short=12", "HEAD"], Some(dir))?;
        let dirty =
            output("git", &["status", "--porcelain"], Some(dir)).is_some_and(|s| !s.is_empty());
        Some(if dirty {
            format!("{commit}-dirty")
        } else {
            commit
        })
    }

    /// Seconds since the Unix epoch.
    pub fn unix_now() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// This machine: OS, architecture, CPU count and model, `rustc -V`, the commit of the work
    /// tree at the current directory, and now as the start time. The caller adds what only it
    /// knows (the SQLite version).
    pub fn native() -> Environment {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        });
        Environment {
            runtime: Some("native".to_owned()),
            os: Some(std::env::consts::OS.to_owned()),
            arch: Some(std::env::consts::ARCH.to_owned()),
            cpu_count: std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok()),
            cpu_model,
            rustc: output("rustc", &["-V"], None),
            commit: std::env::current_dir().ok().and_then(|d| source_commit(&d)),
            started_unix_s: Some(unix_now()),
            ..Environment::default()
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use native::{native, source_commit, unix_now};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(951_782_400), "2000-02-29");
        assert_eq!(civil_date(1_796_056_923), "2026-11-30");
        assert_eq!(civil_date(1_735_689_599), "2024-12-31");
        assert_eq!(iso_utc(1_735_689_599), "2024-12-31T23:59:59Z");
    }

    #[test]
    fn version_1_field_names_load() {
        let e: Environment =
            serde_json::from_str(r#"{"platform":"Linux","hardware_concurrency":2}"#).unwrap();
        assert_eq!((e.os.as_deref(), e.cpu_count), (Some("Linux"), Some(2)));
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(
            text, r#"{"os":"Linux","cpu_count":2}"#,
            "absent fields left out"
        );
    }
}
