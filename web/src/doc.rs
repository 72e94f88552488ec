//! The page's result document and its progress events, as JSON.
//!
//! ```text
//! { schema_version, generated_at, duration_ms, config: RunConfig, environment: PageEnvironment,
//!   sql?:  bench-sql's BenchResult (the 16-case suite and the 10k batch, every sample),
//!   fs?:   bench-fs' FsResult with `lifecycle` (its `raw` moved out, see below),
//!   raw?:  bench-fs' RawSuite (the raw OPFS per-call workloads, every call's time),
//!   verifications: { all_passed, passed: [..], failures: [{suite, backend?, message}] },
//!   notes: [..] }
//! ```
//!
//! `sql`, `fs` and `raw` are kept as JSON values here: this crate passes them through unchanged
//! (they carry their own `schema_version`), and the document types build natively for tests.
//! A suite that failed is absent and has an entry in `verifications.failures`; a suite that was
//! not selected is absent without one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::{RunConfig, SCHEMA_VERSION};

/// The page's result: everything one press of "Start" (or one autorun) measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When the run started, ISO 8601 (UTC).
    pub generated_at: String,
    /// Wall time of the whole run, milliseconds.
    pub duration_ms: f64,
    /// What ran.
    pub config: RunConfig,
    /// Where it ran (the worker's view).
    pub environment: PageEnvironment,
    /// bench-sql's result, if `sql` or `batch` ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<Value>,
    /// bench-fs' result with the lifecycle, if `fs` ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<Value>,
    /// bench-fs' raw OPFS per-call suite, if `raw` ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
    /// What was checked and what failed.
    pub verifications: Verifications,
    /// Plain remarks (a suite that had no backend to run, a scaled-down SQL suite, ...).
    #[serde(default)]
    pub notes: Vec<String>,
}

impl Document {
    /// An empty document for `config`, started at `generated_at`.
    pub fn new(generated_at: String, config: RunConfig, environment: PageEnvironment) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            generated_at,
            duration_ms: 0.0,
            config,
            environment,
            sql: None,
            fs: None,
            raw: None,
            verifications: Verifications::default(),
            notes: Vec::new(),
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }
}

/// The verification outcome of a run.
///
/// Every suite verifies its own work and fails if a check fails: the SQL suite checks after
/// reopen that the dropped tables are gone and `PRAGMA integrity_check` is ok, the batch that
/// all rows are present, the lifecycle every byte it reads and exactly the surviving files
/// after reopen. A check that passed is listed in `passed`; an error of any kind is a failure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Verifications {
    /// No failure, and at least one check passed.
    pub all_passed: bool,
    /// What was verified and passed, one line each.
    pub passed: Vec<String>,
    /// What failed.
    pub failures: Vec<Failure>,
}

/// One failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// `sql`, `batch`, `fs`, `raw` (or `sql+batch` when bench-sql ran both).
    pub suite: String,
    /// The backend, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// The error.
    pub message: String,
}

impl Verifications {
    /// Records a passed check.
    pub fn pass(&mut self, what: impl Into<String>) {
        self.passed.push(what.into());
        self.update();
    }

    /// Records a failure.
    pub fn fail(&mut self, suite: &str, backend: Option<&str>, message: impl Into<String>) {
        self.failures.push(Failure {
            suite: suite.to_owned(),
            backend: backend.map(str::to_owned),
            message: message.into(),
        });
        self.update();
    }

    fn update(&mut self) {
        self.all_passed = self.failures.is_empty() && !self.passed.is_empty();
    }
}

/// The environment as the benchmark worker sees it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PageEnvironment {
    /// `navigator.userAgent`.
    pub user_agent: Option<String>,
    /// Browser name read from the user agent (`Firefox`, `Chrome`, `Chrome Headless`, ...).
    pub browser: Option<String>,
    /// Its version (Chromium: the full version from `userAgentData` where offered).
    pub browser_version: Option<String>,
    /// `navigator.userAgentData.platform`, else `navigator.platform`.
    pub platform: Option<String>,
    /// `navigator.hardwareConcurrency`.
    pub hardware_concurrency: Option<u32>,
    /// `navigator.deviceMemory` (GB, rounded by the browser; Chromium only).
    pub device_memory_gb: Option<f64>,
    /// Smallest `performance.now()` step measured in the worker, microseconds.
    pub timer_resolution_us: Option<f64>,
    /// `crossOriginIsolated` in the worker.
    pub cross_origin_isolated: Option<bool>,
    /// `isSecureContext` in the worker (OPFS needs it).
    pub secure_context: Option<bool>,
    /// `navigator.storage.getDirectory` exists.
    pub opfs_available: bool,
    /// `navigator.storage.estimate().usage` before the run.
    pub storage_usage_bytes: Option<u64>,
    /// `navigator.storage.estimate().quota`.
    pub storage_quota_bytes: Option<u64>,
    /// `navigator.storage.persisted()` (`false`: the browser may evict the origin's storage).
    pub storage_persisted: Option<bool>,
    /// `sqlite3_libversion()` of the SQLite in the wasm.
    pub sqlite_version: Option<String>,
    /// Source commit of the build, as given in the config.
    pub commit: Option<String>,
    /// This crate's version.
    pub page_version: String,
}

/// A progress event, sent to the page as JSON before and after each unit of work.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgressEvent {
    /// `sql`, `batch`, `fs` or `raw`.
    pub suite: String,
    /// Backend name (`opfs` for the raw workloads, which have none).
    pub backend: String,
    /// What runs: `16 cases`, `10k batch`, `lifecycle`, or the raw workload's name.
    pub case: String,
    /// 1-based run number among the warm-up or the measured runs.
    pub run: u32,
    /// Whether this is a warm-up run (excluded from statistics).
    pub warmup: bool,
    /// `start` (about to run) or `end` (finished, `ms` set).
    pub status: String,
    /// Time of the finished unit, milliseconds (suite: the 16-case total; raw: the workload's
    /// total); `None` at `start`.
    pub ms: Option<f64>,
    /// Units finished over the whole run.
    pub done_steps: u32,
    /// Units in the whole run (an estimate until each suite reports its own count).
    pub total_steps: u32,
    /// Since the run started, milliseconds.
    pub elapsed_ms: f64,
}

/// Step accounting across suites that count their own units: the overall count is the sum of
/// each part's count, an estimate until the part reports its own total.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Steps {
    parts: Vec<(u32, u32)>,
}

impl Steps {
    /// Parts with these estimated totals, in running order.
    pub fn new(estimates: &[u32]) -> Self {
        Self {
            parts: estimates.iter().map(|&t| (0, t)).collect(),
        }
    }

    /// Part `i` reports `done` of `total` units.
    pub fn report(&mut self, i: usize, done: u32, total: u32) {
        if let Some(p) = self.parts.get_mut(i) {
            *p = (done.min(total), total);
        }
    }

    /// Part `i` is over (finished or failed): all its units count as done.
    pub fn finish(&mut self, i: usize) {
        if let Some(p) = self.parts.get_mut(i) {
            p.0 = p.1;
        }
    }

    /// Units done over all parts.
    pub fn done(&self) -> u32 {
        self.parts.iter().map(|p| p.0).sum()
    }

    /// Units over all parts.
    pub fn total(&self) -> u32 {
        self.parts.iter().map(|p| p.1).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Preset;

    #[test]
    fn verifications_need_a_pass_and_no_failure() {
        let mut v = Verifications::default();
        assert!(!v.all_passed, "nothing checked is not a pass");
        v.pass("sql: ok");
        assert!(v.all_passed);
        v.fail("fs", Some("files-opfs"), "boom");
        assert!(!v.all_passed);
        assert_eq!(v.failures[0].backend.as_deref(), Some("files-opfs"));
    }

    #[test]
    fn steps_sum_parts() {
        let mut s = Steps::new(&[10, 5]);
        assert_eq!((s.done(), s.total()), (0, 15));
        s.report(0, 3, 12);
        assert_eq!((s.done(), s.total()), (3, 17));
        s.finish(0);
        s.report(1, 9, 4);
        assert_eq!((s.done(), s.total()), (16, 16), "done never exceeds total");
        s.report(7, 1, 1);
        assert_eq!(s.total(), 16, "unknown part ignored");
    }

    #[test]
    fn document_json_shape() {
        let mut d = Document::new(
            "2026-01-01T00:00:00.000Z".into(),
            Preset::Quick.config(),
            PageEnvironment::default(),
        );
        d.sql = Some(serde_json::json!({"schema_version": 1}));
        d.verifications.pass("sql");
        let v: Value = serde_json::from_str(&d.to_json().unwrap()).unwrap();
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["config"]["preset"], "quick");
        assert_eq!(v["verifications"]["all_passed"], true);
        assert!(v.get("fs").is_none(), "absent suites are omitted");
        assert_eq!(serde_json::from_value::<Document>(v).unwrap(), d);
    }
}
