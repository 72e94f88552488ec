//! # bench-results: the benchmark result document
//!
//! One owner for everything a benchmark result holds: the page's worker produces a
//! [`Document`], the native runners produce one too, `bench-runner` reads them (validation,
//! the Markdown report), and the page draws them. Every summary — medians, min–max, paired
//! ratios with bootstrap intervals, goal verdicts, ranks, raw floors — is computed here, in
//! [`Document::summarize`], once, and stored in the document; readers display what it says.
//!
//! ```text
//! Document (schema_version 2)
//! ├─ schema_version, upgraded_from?, generated_at, duration_ms
//! ├─ config: RunConfig        preset, suites, backend filters, runs, warmup, seeds, sizes, commit
//! ├─ environment: Environment the one environment record (browser or native)
//! ├─ sql?: SqlSection         the 16-case suite and the batch, round by round
//! │    ├─ suite (seed, SHA-256s, scale, case titles), config (runs, warmup, order seed)
//! │    ├─ rounds: [{index, warmup, order: [backend names], load? (crate::combine)}]
//! │    ├─ backends: [{BackendMeta (name, engine, reference, package, version, durability,
//! │    │              durability_settings, persistent, skipped?), error?, warmup_runs, runs,
//! │    │              summary (medians, min–max, counters, ranks), ratios (paired, intervals)}]
//! │    ├─ bootstrap (seed, resamples, confidence)
//! │    └─ goals: [GoalCheck]  verdicts from the intervals, physical floors from raw (crate::goals)
//! ├─ fs?: LifecycleSuite      the filesystem lifecycle, rounds, summaries, ratios to the baseline,
//! │                           raw floors
//! ├─ raw?: RawSuite           every raw OPFS call, per-series summaries, derived figures
//! ├─ handoff?: HandoffSection two installs of one shared volume taking turns, the floor
//! │                           (close and reopen two access handles) in the same rounds,
//! │                           per-round samples, summary, ratio to the floor, goal checks
//! ├─ scale?: ScaleSection     a database of N rows built, reopened, scanned and shrunk per
//! │                           backend; bytes at rest ÷ logical, ratios to the one-file
//! │                           baseline, goal checks
//! ├─ verifications: {all_passed, passed, failures}
//! ├─ notes: [..]
//! └─ runner?: RunnerRecord    added by bench-runner (browser version, query, wall time, emulation)
//! ```
//!
//! Versions: 1 was the first page document (the `sql`/`fs` sections were bench-sql's and
//! bench-fs' own results, each with its own version and environment). Version 1 documents
//! still load: [`Document::from_json`] converts them (see [`upgrade`]) and computes the
//! summaries they lack. Fields added later are optional with serde defaults.

pub mod calls;
pub mod combine;
pub mod config;
pub mod env;
pub mod fs;
pub mod goals;
pub mod handoff;
pub mod progress;
pub mod raw;
pub mod runner;
pub mod scale;
pub mod sql;
pub mod stats;
pub mod summary;
pub mod upgrade;
pub mod verify;

use serde::{Deserialize, Serialize};

pub use config::{RunConfig, Suite};
pub use env::Environment;
pub use fs::LifecycleSuite;
pub use handoff::HandoffSection;
pub use raw::RawSuite;
pub use runner::RunnerRecord;
pub use scale::ScaleSection;
pub use sql::SqlSection;
pub use stats::{Bootstrap, RatioStat, Stat};
pub use verify::{Failure, Verifications};

/// Version of the document layout this crate writes. 2: one schema crate; rounds in a
/// shuffled order; paired ratios with intervals; goal checks; per-backend metadata for peers.
pub const SCHEMA_VERSION: u32 = 2;

/// One benchmark invocation: everything one press of "Start" (or one native run) measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// [`SCHEMA_VERSION`] of the layout.
    pub schema_version: u32,
    /// The version this document was converted from when it was loaded, if older.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgraded_from: Option<u32>,
    /// When the run started, ISO 8601 (UTC).
    #[serde(default)]
    pub generated_at: String,
    /// Wall time of the whole run, milliseconds.
    #[serde(default)]
    pub duration_ms: f64,
    /// What ran.
    pub config: RunConfig,
    /// Where it ran.
    pub environment: Environment,
    /// The SQL suite and the batch, if either ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<SqlSection>,
    /// The filesystem lifecycle, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<LifecycleSuite>,
    /// The raw OPFS per-call workloads, if they ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawSuite>,
    /// The multi-tab hand-off suite, if it ran (added within version 2: optional, so older
    /// version 2 documents load unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandoffSection>,
    /// The scale-and-space suite, if it ran (added within version 2: optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<ScaleSection>,
    /// What was checked and what failed.
    #[serde(default)]
    pub verifications: Verifications,
    /// Plain remarks (a suite that had no backend to run, a scaled-down SQL suite, ...).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Added by `bench-runner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<RunnerRecord>,
}

/// Why a document could not be loaded.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON, but not a document of a version this crate reads.
    Version(String),
    /// A document whose fields do not fit the layout.
    Layout(serde_json::Error),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Json(e) => write!(f, "not JSON: {e}"),
            LoadError::Version(m) => f.write_str(m),
            LoadError::Layout(e) => write!(f, "layout: {e}"),
        }
    }
}

impl std::error::Error for LoadError {}

impl Document {
    /// An empty document for `config`, started at `generated_at`.
    pub fn new(generated_at: String, config: RunConfig, environment: Environment) -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            upgraded_from: None,
            generated_at,
            duration_ms: 0.0,
            config,
            environment,
            sql: None,
            fs: None,
            raw: None,
            handoff: None,
            scale: None,
            verifications: Verifications::default(),
            notes: Vec::new(),
            runner: None,
        }
    }

    /// Computes every summary from the samples: the SQL section's medians, ratios and goal
    /// checks (intervals from `boot`; the strict goals' floors from the raw suite), the raw
    /// suite's series and derived figures, and the lifecycle's summaries, ratios to the
    /// baseline and raw floors, and the hand-off suite's summary, ratios to its floor and goal
    /// checks, and the scale suite's summaries, ratios to its baseline and goal checks.
    pub fn summarize(&mut self, boot: &Bootstrap) {
        if let Some(sql) = &mut self.sql {
            sql.summarize(boot);
        }
        if let Some(raw) = &mut self.raw {
            raw.summarize();
        }
        self.fill_floors();
        if let Some(fs) = &mut self.fs {
            fs.summarize(self.raw.as_ref(), boot);
        }
        if let Some(h) = &mut self.handoff {
            h.summarize(boot);
        }
        if let Some(s) = &mut self.scale {
            s.summarize(boot);
        }
    }

    /// Gives every goal check of ours against its memory reference that has no floor the
    /// floor of the same run's raw suite ([`goals::PhysicalFloor`]); nothing without a SQL section or a raw suite. Run
    /// by [`Document::summarize`], and on load for documents summarized before the floor
    /// existed (it only reads summaries already there, so it needs no resummarizing).
    pub fn fill_floors(&mut self) {
        if let (Some(sql), Some(raw)) = (&mut self.sql, &self.raw) {
            goals::fill_floors(sql, raw);
        }
    }

    /// Whether any section lacks its summaries (a producer that did not summarize, or an
    /// older version).
    pub fn needs_summary(&self) -> bool {
        let sql = self.sql.as_ref().is_some_and(|s| {
            s.bootstrap.is_none() || s.backends.iter().any(|b| b.summary.is_none())
        });
        let fs = self
            .fs
            .as_ref()
            .is_some_and(|f| f.backends.iter().any(|b| b.summary.is_none()));
        let raw = self
            .raw
            .as_ref()
            .is_some_and(|r| r.summary.is_none() || r.derived.is_none());
        let handoff = self.handoff.as_ref().is_some_and(|h| h.summary.is_none());
        let scale = self.scale.as_ref().is_some_and(|s| !s.summarized);
        sql || fs || raw || handoff || scale
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// Loads a document of any version this crate reads: older versions are converted
    /// ([`upgrade`]); missing summaries are computed (with the recorded bootstrap, else the
    /// default one), and missing physical floors filled ([`Document::fill_floors`]).
    /// Refuses a newer version.
    pub fn from_json(text: &str) -> Result<Self, LoadError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(LoadError::Json)?;
        Self::from_value(value)
    }

    /// [`Document::from_json`] from parsed JSON.
    pub fn from_value(mut value: serde_json::Value) -> Result<Self, LoadError> {
        let version = value
            .get("schema_version")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| {
                LoadError::Version(
                    "no schema_version: not a benchmark result document (a bare bench-sql or \
                     bench-fs result of before version 2 is not one)"
                        .to_owned(),
                )
            })?;
        let version = u32::try_from(version).unwrap_or(u32::MAX);
        if version == 0 || version > SCHEMA_VERSION {
            return Err(LoadError::Version(format!(
                "schema_version {version}: this reader knows 1 to {SCHEMA_VERSION}"
            )));
        }
        if version == 1 {
            upgrade::v1_to_v2(&mut value);
        }
        let mut doc: Self = serde_json::from_value(value).map_err(LoadError::Layout)?;
        if version < SCHEMA_VERSION {
            doc.upgraded_from = Some(version);
        }
        if doc.needs_summary() {
            let boot = doc
                .sql
                .as_ref()
                .and_then(|s| s.bootstrap.clone())
                .unwrap_or_default();
            doc.summarize(&boot);
        }
        doc.fill_floors();
        Ok(doc)
    }
}

/// `12345` → `"12,345"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
