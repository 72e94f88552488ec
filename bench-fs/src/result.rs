//! The versioned JSON result of both suites.
//!
//! Every sample is kept: warm-up runs (excluded from statistics) and measured runs; for the
//! raw workloads every single call's time. Timings carry their unit in the field name (`_ms`
//! for lifecycle phases, `_us` for raw per-call figures). The `summary` fields are derived from
//! the runs ([`FsResult::summarize`]) and can be recomputed from them; they are there for
//! readers of the file.
//!
//! Statistics across runs use [`bench_sql::result::Stat`]: the median (mean of the middle two
//! for an even count) and the observed min–max, not a confidence interval. Per-call percentiles
//! within one run are nearest-rank ([`CallStats::of`]).
//!
//! Schema changes bump [`SCHEMA_VERSION`]; fields added later are `Option` with
//! `#[serde(default)]` so that older files still load.

use serde::{Deserialize, Serialize};

pub use bench_sql::result::{PhysicalCounters, Stat};

use crate::config::{Config, Mode};

/// Version of this layout. 1: first version.
pub const SCHEMA_VERSION: u32 = 1;

/// One complete benchmark invocation (native or browser).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FsResult {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// What was asked for (suites, sizes, repetitions).
    pub config: Config,
    /// Where it ran.
    pub environment: Environment,
    /// The filesystem lifecycle, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<LifecycleSuite>,
    /// The raw OPFS per-call workloads, if they ran (browser only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawSuite>,
}

/// The machine and software. Optional fields are filled where the platform can tell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `"native"` or `"browser"`.
    pub platform: String,
    /// Operating system (`std::env::consts::OS` natively; `navigator.platform` in a browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// CPU architecture (native).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Logical CPUs (`available_parallelism` natively, `hardwareConcurrency` in a browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_count: Option<u32>,
    /// CPU model name (native, from `/proc/cpuinfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// `rustc -V` on PATH when a native run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// Source commit, with `-dirty` if the work tree had changes (natively from git; in the
    /// browser from [`Config::commit`] or the `BENCH_COMMIT` variable at build time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Seconds since the Unix epoch when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<u64>,
    /// `navigator.userAgent` in the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Browser and version as read from the user agent (e.g. `"Firefox 153.0"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    /// `crossOriginIsolated` in the worker (it decides the timer resolution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_origin_isolated: Option<bool>,
    /// `isSecureContext` in the worker (OPFS needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secure_context: Option<bool>,
    /// Smallest positive difference between two `performance.now()` readings in the worker,
    /// in microseconds, over many samples: the timer step every browser figure is rounded to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_resolution_us: Option<f64>,
    /// `navigator.storage.estimate().usage` when the run started (the whole origin, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_usage_bytes: Option<u64>,
    /// `navigator.storage.estimate().quota` when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_quota_bytes: Option<u64>,
}

/// Browser and version from a user agent (`"Firefox 153.0"`, `"HeadlessChrome 156.0.0.0"`, ...).
pub fn browser_from_user_agent(ua: &str) -> Option<String> {
    let version_after = |token: &str| {
        ua.split(token)
            .nth(1)
            .map(|rest| rest.split([' ', ';', ')']).next().unwrap_or("").to_owned())
    };
    for (token, name) in [
        ("Firefox/", "Firefox"),
        ("Edg/", "Edge"),
        ("HeadlessChrome/", "HeadlessChrome"),
        ("Chrome/", "Chrome"),
    ] {
        if let Some(v) = version_after(token) {
            return Some(format!("{name} {v}"));
        }
    }
    if ua.contains("Safari/") {
        return Some(format!(
            "Safari {}",
            version_after("Version/").unwrap_or_default()
        ));
    }
    None
}

// -------------------------------------------------------------------------------------------
// Lifecycle
// -------------------------------------------------------------------------------------------

/// The phases of one lifecycle run, in order. See `crate::lifecycle` for what each does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Make the (empty) store usable: open the physical files and mount / open the directory.
    Mount,
    /// Create every file, empty.
    Create,
    /// Write each file's bytes (one call per file).
    Write,
    /// Read each file back and compare every byte.
    Read,
    /// Rename every file.
    Rename,
    /// Delete every other file (half of them).
    Delete,
    /// Make everything durable.
    Flush,
    /// Unmount (close everything), then mount again from what is stored.
    Reopen,
    /// After the reopen: exactly the survivors are listed, each read back byte for byte.
    Verify,
}

impl Phase {
    /// Every phase, in execution order.
    pub const ALL: [Phase; 9] = [
        Phase::Mount,
        Phase::Create,
        Phase::Write,
        Phase::Read,
        Phase::Rename,
        Phase::Delete,
        Phase::Flush,
        Phase::Reopen,
        Phase::Verify,
    ];

    /// Lower-case name, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Mount => "mount",
            Phase::Create => "create",
            Phase::Write => "write",
            Phase::Read => "read",
            Phase::Rename => "rename",
            Phase::Delete => "delete",
            Phase::Flush => "flush",
            Phase::Reopen => "reopen",
            Phase::Verify => "verify",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The lifecycle suite: its workload and every backend's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifecycleSuite {
    /// Logical files created.
    pub files: u32,
    /// Bytes per file.
    pub file_size_bytes: u32,
    /// Seed of the file contents.
    pub seed: u64,
    /// One entry per backend, in the order they ran.
    pub backends: Vec<LifecycleBackend>,
}

/// Everything measured on one lifecycle backend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifecycleBackend {
    /// Stable identifier (e.g. `ours-disk-strict`, `files-opfs`).
    pub name: String,
    /// What holds the bytes: `opfs`, `std-file` (our volume), `opfs-file-per-file`,
    /// `std-file-per-file` (the baselines).
    pub storage: String,
    /// What a finished phase guarantees (see `crate::lifecycle::durability`).
    pub durability: String,
    /// Our volume's buffer mode (`None` for a baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_mode: Option<Mode>,
    /// How the baseline renamed (`move` or `copy+removeEntry`, feature-detected in the
    /// browser; `rename(2)` natively).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_method: Option<String>,
    /// Excluded from statistics.
    pub warmup_runs: Vec<LifecycleRun>,
    /// The measured runs.
    pub runs: Vec<LifecycleRun>,
    /// Medians and ranges over `runs` ([`LifecycleBackend::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<LifecycleSummary>,
}

/// One fresh lifecycle run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifecycleRun {
    /// Every phase in [`Phase::ALL`] order.
    pub phases: Vec<PhaseSample>,
    /// Sum of the phase times.
    pub total_ms: f64,
}

impl LifecycleRun {
    /// The sample of `phase`, if recorded.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseSample> {
        self.phases.iter().find(|p| p.phase == phase)
    }
}

/// One phase of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSample {
    /// Which phase.
    pub phase: Phase,
    /// Wall time of the phase.
    pub ms: f64,
    /// Physical calls during the phase (our volume only: `Volume::counters()` deltas, summed
    /// over both physical files; the reopen phase adds the unmount's calls to the new mount's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

/// Statistics of one backend's measured runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifecycleSummary {
    /// Per phase, in [`Phase::ALL`] order.
    pub phases: Vec<PhaseStat>,
    /// Sum of the phases.
    pub total_ms: Option<Stat>,
}

/// Statistics of one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseStat {
    /// Which phase.
    pub phase: Phase,
    /// Its times.
    pub ms: Option<Stat>,
    /// Per-field lower median of its counters, where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

impl LifecycleBackend {
    /// Statistics over the measured runs (warm-up excluded).
    pub fn summarize(&self) -> LifecycleSummary {
        let runs = &self.runs;
        LifecycleSummary {
            phases: Phase::ALL
                .iter()
                .map(|&phase| PhaseStat {
                    phase,
                    ms: Stat::over(runs, |r| r.phase(phase).map(|p| p.ms)),
                    counters: median_counters(
                        &runs
                            .iter()
                            .filter_map(|r| r.phase(phase)?.counters)
                            .collect::<Vec<_>>(),
                    ),
                })
                .collect(),
            total_ms: Stat::over(runs, |r| Some(r.total_ms)),
        }
    }
}

/// Per-field lower median (counters stay integers); `None` if empty.
pub fn median_counters(samples: &[PhysicalCounters]) -> Option<PhysicalCounters> {
    if samples.is_empty() {
        return None;
    }
    let field = |f: fn(&PhysicalCounters) -> u64| {
        let mut v: Vec<u64> = samples.iter().map(f).collect();
        v.sort_unstable();
        v[(v.len() - 1) / 2]
    };
    Some(PhysicalCounters {
        flushes: field(|c| c.flushes),
        writes: field(|c| c.writes),
        bytes_written: field(|c| c.bytes_written),
        reads: field(|c| c.reads),
    })
}

// -------------------------------------------------------------------------------------------
// Raw OPFS per-call workloads
// -------------------------------------------------------------------------------------------

/// The raw per-call workloads: every run, every call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawSuite {
    /// Excluded from statistics.
    pub warmup_runs: Vec<RawRun>,
    /// The measured runs.
    pub runs: Vec<RawRun>,
    /// Per series, medians and ranges over `runs` ([`RawSuite::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<SeriesSummary>>,
}

/// One run of every raw workload, each from a fresh file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawRun {
    /// One series per timed call kind, in a fixed order (see `crate::raw`).
    pub series: Vec<CallSeries>,
}

/// The calls of one kind in one run (e.g. every `write()` of small-append, or every
/// `close()` of the new-file cycle).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallSeries {
    /// As in the seed's tables: `small-append`, `chunked-append (64 KiB)`,
    /// `new-file: create+open`, ...
    pub name: String,
    /// Number of timed calls.
    pub calls: u32,
    /// Bytes per call (0 where no data moves; the last chunk of a chunked append may be
    /// shorter, see `total_bytes`).
    pub bytes_per_call: u32,
    /// Bytes moved by all calls of the series.
    pub total_bytes: u64,
    /// Statistics of `samples_us`.
    pub stats: CallStats,
    /// Every call's time in call order.
    pub samples_us: Vec<f64>,
}

/// Per-call statistics of one series in one run, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallStats {
    /// Sum of all calls.
    pub total_us: f64,
    /// `total_us / calls`.
    pub mean_us: f64,
    /// Nearest-rank 50th percentile.
    pub p50_us: f64,
    /// Nearest-rank 90th percentile.
    pub p90_us: f64,
    /// Nearest-rank 99th percentile.
    pub p99_us: f64,
    /// Slowest call.
    pub max_us: f64,
    /// Call number 1 (for the append workloads: the first write into the fresh file).
    pub first_us: f64,
}

/// Nearest-rank percentile of sorted samples: the smallest sample with at least `p`% of the
/// samples at or below it. `sorted` must be non-empty.
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    // ceil(p/100 · n) is in 1..=n for 0 < p <= 100; the cast is of a small positive integer.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

impl CallStats {
    /// Statistics of `samples` (in call order); `None` if empty.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let first_us = *samples.first()?;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let total_us: f64 = samples.iter().sum();
        Some(Self {
            total_us,
            mean_us: total_us / samples.len() as f64,
            p50_us: nearest_rank(&sorted, 50.0),
            p90_us: nearest_rank(&sorted, 90.0),
            p99_us: nearest_rank(&sorted, 99.0),
            max_us: sorted[sorted.len() - 1],
            first_us,
        })
    }
}

impl CallSeries {
    /// A series from its samples (statistics computed here). `None` if there are none.
    pub fn new(
        name: &str,
        bytes_per_call: u32,
        total_bytes: u64,
        samples_us: Vec<f64>,
    ) -> Option<Self> {
        Some(Self {
            name: name.to_owned(),
            calls: u32::try_from(samples_us.len()).unwrap_or(u32::MAX),
            bytes_per_call,
            total_bytes,
            stats: CallStats::of(&samples_us)?,
            samples_us,
        })
    }
}

/// One series' statistics across the measured runs: the median of each per-run figure with its
/// observed min–max.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// [`CallSeries::name`].
    pub name: String,
    /// Calls per run.
    pub calls: u32,
    /// Bytes per call.
    pub bytes_per_call: u32,
    /// Bytes per run.
    pub total_bytes: u64,
    /// Across runs: [`CallStats::total_us`].
    pub total_us: Option<Stat>,
    /// Across runs: [`CallStats::mean_us`].
    pub mean_us: Option<Stat>,
    /// Across runs: [`CallStats::p50_us`].
    pub p50_us: Option<Stat>,
    /// Across runs: [`CallStats::p90_us`].
    pub p90_us: Option<Stat>,
    /// Across runs: [`CallStats::p99_us`].
    pub p99_us: Option<Stat>,
    /// Across runs: [`CallStats::max_us`].
    pub max_us: Option<Stat>,
    /// Across runs: [`CallStats::first_us`].
    pub first_us: Option<Stat>,
}

impl RawSuite {
    /// Statistics per series over the measured runs (warm-up excluded), in the order of the
    /// first run.
    pub fn summarize(&self) -> Vec<SeriesSummary> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        first
            .series
            .iter()
            .map(|s| {
                let per_run: Vec<CallStats> = self
                    .runs
                    .iter()
                    .filter_map(|r| r.series.iter().find(|x| x.name == s.name))
                    .map(|x| x.stats)
                    .collect();
                let stat = |f: fn(&CallStats) -> f64| Stat::over(&per_run, |c| Some(f(c)));
                SeriesSummary {
                    name: s.name.clone(),
                    calls: s.calls,
                    bytes_per_call: s.bytes_per_call,
                    total_bytes: s.total_bytes,
                    total_us: stat(|c| c.total_us),
                    mean_us: stat(|c| c.mean_us),
                    p50_us: stat(|c| c.p50_us),
                    p90_us: stat(|c| c.p90_us),
                    p99_us: stat(|c| c.p99_us),
                    max_us: stat(|c| c.max_us),
                    first_us: stat(|c| c.first_us),
                }
            })
            .collect()
    }
}

impl FsResult {
    /// Fills every `summary` from the runs.
    pub fn summarize(&mut self) {
        if let Some(l) = &mut self.lifecycle {
            for b in &mut l.backends {
                b.summary = Some(b.summarize());
            }
        }
        if let Some(r) = &mut self.raw {
            r.summary = Some(r.summarize());
        }
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// Parses a result; refuses a newer schema than this reader knows.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let r: Self = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if r.schema_version > SCHEMA_VERSION {
            return Err(format!(
                "result has schema_version {}, this reader knows up to {SCHEMA_VERSION}",
                r.schema_version
            ));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agents() {
        assert_eq!(
            browser_from_user_agent(
                "Mozilla/5.0 (X11; Linux x86_64; rv:155.0) Gecko/20100101 Firefox/155.0"
            )
            .as_deref(),
            Some("Firefox 155.0")
        );
        assert_eq!(
            browser_from_user_agent(
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                 HeadlessChrome/152.0.0.0 Safari/537.36"
            )
            .as_deref(),
            Some("HeadlessChrome 152.0.0.0")
        );
        assert_eq!(
            browser_from_user_agent(
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, \
                 like Gecko) Version/26.6 Safari/605.1.15"
            )
            .as_deref(),
            Some("Safari 26.6")
        );
        assert_eq!(browser_from_user_agent("curl/8"), None);
    }

    #[test]
    fn call_stats_nearest_rank() {
        assert_eq!(CallStats::of(&[]), None);
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = CallStats::of(&samples).unwrap();
        assert_eq!(s.first_us, 100.0);
        assert_eq!(s.total_us, 5050.0);
        assert_eq!(s.mean_us, 50.5);
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p90_us, 90.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 100.0);
        let one = CallStats::of(&[7.0]).unwrap();
        assert_eq!(
            (one.p50_us, one.p99_us, one.max_us, one.first_us),
            (7.0, 7.0, 7.0, 7.0)
        );
        // 10 samples: p99 is the largest, p90 the 9th.
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = CallStats::of(&ten).unwrap();
        assert_eq!((s.p50_us, s.p90_us, s.p99_us), (5.0, 9.0, 10.0));
    }

    fn lifecycle_run(scale: f64, counted: bool) -> LifecycleRun {
        let phases: Vec<PhaseSample> = Phase::ALL
            .iter()
            .enumerate()
            .map(|(i, &phase)| PhaseSample {
                phase,
                ms: scale * (i + 1) as f64,
                counters: counted.then_some(PhysicalCounters {
                    flushes: 1,
                    writes: i as u64,
                    bytes_written: 4096,
                    reads: 0,
                }),
            })
            .collect();
        let total_ms = phases.iter().map(|p| p.ms).sum();
        LifecycleRun { phases, total_ms }
    }

    #[test]
    fn summary_and_json_round_trip() {
        let series = |scale: f64| {
            CallSeries::new(
                "small-append",
                4096,
                3 * 4096,
                vec![scale, 2.0 * scale, scale],
            )
            .unwrap()
        };
        let mut result = FsResult {
            schema_version: SCHEMA_VERSION,
            config: Config::default(),
            environment: Environment {
                platform: "native".into(),
                ..Default::default()
            },
            lifecycle: Some(LifecycleSuite {
                files: 10,
                file_size_bytes: 1024,
                seed: 1,
                backends: vec![LifecycleBackend {
                    name: "ours-disk-strict".into(),
                    storage: "std-file".into(),
                    durability: "x".into(),
                    buffer_mode: Some(Mode::Disk),
                    rename_method: None,
                    warmup_runs: vec![lifecycle_run(100.0, true)],
                    runs: vec![
                        lifecycle_run(1.0, true),
                        lifecycle_run(3.0, true),
                        lifecycle_run(2.0, true),
                    ],
                    summary: None,
                }],
            }),
            raw: Some(RawSuite {
                warmup_runs: vec![RawRun {
                    series: vec![series(1000.0)],
                }],
                runs: vec![
                    RawRun {
                        series: vec![series(1.0)],
                    },
                    RawRun {
                        series: vec![series(3.0)],
                    },
                ],
                summary: None,
            }),
        };
        result.summarize();
        let s = result.lifecycle.as_ref().unwrap().backends[0]
            .summary
            .clone()
            .unwrap();
        assert_eq!(s.phases.len(), Phase::ALL.len());
        assert_eq!(s.phases[0].phase, Phase::Mount);
        let mount = s.phases[0].ms.unwrap();
        assert_eq!(
            (mount.median, mount.min, mount.max, mount.n),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(s.total_ms.unwrap().max, 45.0 * 3.0, "warm-up excluded");
        assert_eq!(s.phases[2].counters.unwrap().writes, 2);
        let raw = result.raw.as_ref().unwrap().summary.clone().unwrap();
        assert_eq!(raw.len(), 1);
        assert_eq!(raw[0].total_us.unwrap().median, 8.0);
        assert_eq!(raw[0].first_us.unwrap().max, 3.0);

        let text = result.to_json().unwrap();
        assert!(text.contains("\"schema_version\": 1"));
        assert!(text.contains("\"phase\": \"reopen\""));
        assert!(text.contains("\"p99_us\""));
        assert!(text.contains("\"samples_us\""));
        assert_eq!(FsResult::from_json(&text).unwrap(), result);
        let newer = text.replace("\"schema_version\": 1", "\"schema_version\": 99");
        assert!(FsResult::from_json(&newer).is_err());
    }

    #[test]
    fn counters_median() {
        let c = |w| PhysicalCounters {
            flushes: 1,
            writes: w,
            bytes_written: w * 10,
            reads: 0,
        };
        assert_eq!(median_counters(&[]), None);
        assert_eq!(median_counters(&[c(5), c(1), c(3)]), Some(c(3)));
        assert_eq!(median_counters(&[c(5), c(1)]), Some(c(1)));
    }
}
