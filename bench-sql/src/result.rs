//! The versioned JSON result.
//!
//! Every sample is kept: warm-up runs (excluded from statistics) and measured runs, each with
//! its lifecycle phases, every case and the batch. Timings carry their unit in the field name
//! (`_ms`); an absent phase (`null`) means "not applicable" (a non-persistent backend has no
//! sync or reopen). `summary` is derived from `runs` by [`BackendResult::summarize`] and can be
//! recomputed from them; it is there for readers of the file.
//!
//! Statistics: the median of an even number of samples is the mean of the middle two; min–max
//! is the observed range, not a confidence interval.
//!
//! Schema changes bump [`SCHEMA_VERSION`]; fields added later are `Option` with
//! `#[serde(default)]` so that older files still load.

use serde::{Deserialize, Serialize};

/// Version of this layout. 1: first version. 2: browser environment fields (`browser`,
/// `browser_version`, `storage_usage_bytes`, `storage_quota_bytes`); version 1 files still load.
pub const SCHEMA_VERSION: u32 = 2;

/// One complete benchmark invocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchResult {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// What was executed.
    pub suite: SuiteInfo,
    /// How it was repeated.
    pub config: Config,
    /// Where it ran.
    pub environment: Environment,
    /// One entry per backend, in the order they ran.
    pub backends: Vec<BackendResult>,
}

/// Identifies the generated workloads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// PRNG seed of the suite and the batch.
    pub seed: u64,
    /// [`crate::sql::Suite::sha256`] of the 16 cases.
    pub sha256: String,
    /// Every count divided by this (1 = full size; anything else is a smoke run, not a result).
    pub scale_divisor: u32,
    /// Case numbers and titles, in order.
    pub cases: Vec<CaseInfo>,
    /// Rows in the batch transaction.
    pub batch_rows: u32,
    /// [`crate::batch::Batch::sha256`].
    pub batch_sha256: String,
}

/// Number and title of one case.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseInfo {
    /// 1 to 16.
    pub number: u32,
    /// As printed in reports.
    pub title: String,
}

/// Repetition protocol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Measured runs per backend.
    pub runs: u32,
    /// Warm-up runs per backend, excluded from statistics (kept in `warmup_runs`).
    pub warmup: u32,
    /// Where the backends kept their files: a native directory, or `opfs:<directory>` in the
    /// browser.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
}

/// The machine and software. Optional fields are filled where the platform can tell.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `"native"` or `"browser"`.
    pub platform: String,
    /// Operating system (`std::env::consts::OS` natively).
    pub os: String,
    /// CPU architecture.
    pub arch: String,
    /// Logical CPUs (`available_parallelism` natively, `hardwareConcurrency` in a browser).
    #[serde(default)]
    pub cpu_count: Option<u32>,
    /// CPU model name, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// SQLite library version (`sqlite3_libversion`).
    pub sqlite_version: String,
    /// `rustc -V` (natively: the one on PATH when the run started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// Source commit, with `-dirty` if the work tree had changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Browser user agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Browser name parsed from the user agent (`Chrome`, `Firefox`, `Safari`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    /// Browser version: the full version where the browser tells it
    /// (`navigator.userAgentData`), else the one in the user agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_version: Option<String>,
    /// Smallest observed timer step, in microseconds (browsers coarsen `performance.now()`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_resolution_us: Option<f64>,
    /// `crossOriginIsolated` in the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_origin_isolated: Option<bool>,
    /// `navigator.storage.estimate()` when the run started: bytes the origin uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_usage_bytes: Option<u64>,
    /// `navigator.storage.estimate()` when the run started: bytes the origin may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_quota_bytes: Option<u64>,
    /// Seconds since the Unix epoch when the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<u64>,
}

/// Everything measured on one backend.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendResult {
    /// [`crate::backend::SqlBackend::name`].
    pub name: String,
    /// [`crate::backend::SqlBackend::durability`].
    pub durability: String,
    /// Whether the database outlives the connection (reopen and sync apply).
    pub persistent: bool,
    /// Excluded from statistics.
    pub warmup_runs: Vec<RunSample>,
    /// The measured runs.
    pub runs: Vec<RunSample>,
    /// Medians and ranges over `runs` ([`BackendResult::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<BackendSummary>,
}

/// One fresh run: the suite, then the batch (each from a wiped state).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSample {
    /// The 16 cases.
    pub suite: SuiteRun,
    /// The 10,000-row transaction.
    pub batch: BatchRun,
}

/// Lifecycle phases around one workload. Preparation and close are outside the workload
/// timing; cleanup is not timed at all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Bring the backend to a fresh, empty state (wipe files, create directories).
    pub prepare_ms: f64,
    /// Initialization: mount or install, register, open the connection, set pragmas.
    pub init_ms: f64,
    /// A later explicit sync after the workload (`None`: not persistent).
    pub sync_ms: Option<f64>,
    /// Closing the connection and whatever holds the database.
    pub close_ms: f64,
    /// Opening the persisted database again (`None`: not persistent).
    pub reopen_ms: Option<f64>,
    /// Checking, after reopen, what the workload left (`None`: not persistent).
    pub verify_ms: Option<f64>,
}

/// Physical calls made by the storage during one case (our VFS only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysicalCounters {
    /// `flush` calls (durable points).
    pub flushes: u64,
    /// `write_at` calls.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// `read_at` calls.
    pub reads: u64,
}

impl PhysicalCounters {
    /// `self - earlier`, saturating (a remount restarts the counters at zero).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            flushes: self.flushes.saturating_sub(earlier.flushes),
            writes: self.writes.saturating_sub(earlier.writes),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
            reads: self.reads.saturating_sub(earlier.reads),
        }
    }
}

/// One case of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseSample {
    /// 1 to 16.
    pub number: u32,
    /// Wall time of the case's script.
    pub ms: f64,
    /// Physical calls during the case, where the backend counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

/// The suite in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteRun {
    /// Lifecycle around the 16 cases.
    pub phases: Phases,
    /// The cases in order.
    pub cases: Vec<CaseSample>,
    /// Sum of the case times.
    pub total_ms: f64,
    /// Case 1 alone (commit cost).
    pub test1_ms: f64,
}

/// The batch in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchRun {
    /// Lifecycle around the transaction.
    pub phases: Phases,
    /// Rows inserted.
    pub rows: u32,
    /// Wall time of `BEGIN`, the inserts and `COMMIT`.
    pub ms: f64,
    /// Physical calls during the transaction, where the backend counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

/// Median and observed range of some samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Middle sample (mean of the middle two for an even count).
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Number of samples.
    pub n: usize,
}

/// Median of `samples`; `None` if empty. NaN samples are ordered last (`total_cmp`).
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Smallest and largest sample; `None` if empty.
pub fn min_max(samples: &[f64]) -> Option<(f64, f64)> {
    let first = *samples.first()?;
    Some(
        samples
            .iter()
            .fold((first, first), |(lo, hi), &x| (lo.min(x), hi.max(x))),
    )
}

impl Stat {
    /// Median and range of `samples`; `None` if empty.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let (min, max) = min_max(samples)?;
        Some(Self {
            median: median(samples)?,
            min,
            max,
            n: samples.len(),
        })
    }

    /// Over the `Some` values that `pick` finds in `runs`; `None` if there are none.
    pub fn over<T>(runs: &[T], pick: impl Fn(&T) -> Option<f64>) -> Option<Self> {
        let v: Vec<f64> = runs.iter().filter_map(pick).collect();
        Self::of(&v)
    }
}

/// Statistics of one backend's measured runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackendSummary {
    /// Per case, in order.
    pub cases_ms: Vec<CaseStat>,
    /// 16-case total.
    pub total_ms: Option<Stat>,
    /// Case 1.
    pub test1_ms: Option<Stat>,
    /// Cases 2 to 16 (mostly CPU).
    pub tests_2_to_16_ms: Option<Stat>,
    /// The batch transaction.
    pub batch_ms: Option<Stat>,
    /// Lifecycle around the suite.
    pub suite_phases: PhaseStats,
    /// Lifecycle around the batch.
    pub batch_phases: PhaseStats,
}

/// Statistics of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseStat {
    /// 1 to 16.
    pub number: u32,
    /// Its times.
    pub ms: Option<Stat>,
}

/// Statistics of each phase (`None`: not applicable in any run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// See [`Phases::prepare_ms`].
    pub prepare_ms: Option<Stat>,
    /// See [`Phases::init_ms`].
    pub init_ms: Option<Stat>,
    /// See [`Phases::sync_ms`].
    pub sync_ms: Option<Stat>,
    /// See [`Phases::close_ms`].
    pub close_ms: Option<Stat>,
    /// See [`Phases::reopen_ms`].
    pub reopen_ms: Option<Stat>,
    /// See [`Phases::verify_ms`].
    pub verify_ms: Option<Stat>,
}

impl PhaseStats {
    fn over(phases: &[&Phases]) -> Self {
        Self {
            prepare_ms: Stat::over(phases, |p| Some(p.prepare_ms)),
            init_ms: Stat::over(phases, |p| Some(p.init_ms)),
            sync_ms: Stat::over(phases, |p| p.sync_ms),
            close_ms: Stat::over(phases, |p| Some(p.close_ms)),
            reopen_ms: Stat::over(phases, |p| p.reopen_ms),
            verify_ms: Stat::over(phases, |p| p.verify_ms),
        }
    }
}

impl BackendResult {
    /// Statistics over the measured runs (warm-up excluded).
    pub fn summarize(&self) -> BackendSummary {
        let runs = &self.runs;
        let numbers: Vec<u32> = runs
            .first()
            .map(|r| r.suite.cases.iter().map(|c| c.number).collect())
            .unwrap_or_default();
        let case_ms =
            |r: &RunSample, n: u32| r.suite.cases.iter().find(|c| c.number == n).map(|c| c.ms);
        let suite_phases: Vec<&Phases> = runs.iter().map(|r| &r.suite.phases).collect();
        let batch_phases: Vec<&Phases> = runs.iter().map(|r| &r.batch.phases).collect();
        BackendSummary {
            cases_ms: numbers
                .iter()
                .map(|&number| CaseStat {
                    number,
                    ms: Stat::over(runs, |r| case_ms(r, number)),
                })
                .collect(),
            total_ms: Stat::over(runs, |r| Some(r.suite.total_ms)),
            test1_ms: Stat::over(runs, |r| Some(r.suite.test1_ms)),
            tests_2_to_16_ms: Stat::over(runs, |r| Some(r.suite.total_ms - r.suite.test1_ms)),
            batch_ms: Stat::over(runs, |r| Some(r.batch.ms)),
            suite_phases: PhaseStats::over(&suite_phases),
            batch_phases: PhaseStats::over(&batch_phases),
        }
    }

    /// Median of each counter over the measured runs, per case (`None` where no run counted).
    pub fn median_counters(&self, number: u32) -> Option<PhysicalCounters> {
        let samples: Vec<PhysicalCounters> = self
            .runs
            .iter()
            .filter_map(|r| r.suite.cases.iter().find(|c| c.number == number)?.counters)
            .collect();
        median_counters(&samples)
    }

    /// Median of each counter of the batch over the measured runs.
    pub fn median_batch_counters(&self) -> Option<PhysicalCounters> {
        let samples: Vec<PhysicalCounters> =
            self.runs.iter().filter_map(|r| r.batch.counters).collect();
        median_counters(&samples)
    }
}

/// Per-field lower median (counters stay integers); `None` if empty.
fn median_counters(samples: &[PhysicalCounters]) -> Option<PhysicalCounters> {
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

impl BenchResult {
    /// Fills every backend's `summary` from its runs.
    pub fn summarize(&mut self) {
        for b in &mut self.backends {
            b.summary = Some(b.summarize());
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
    fn median_odd_even_empty() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[5.0]), Some(5.0));
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[1.0, 1.0, 9.0]), Some(1.0));
    }

    #[test]
    fn min_max_and_stat() {
        assert_eq!(min_max(&[]), None);
        assert_eq!(min_max(&[2.0, -1.0, 7.5, 3.0]), Some((-1.0, 7.5)));
        let s = Stat::of(&[10.0, 30.0, 20.0]).unwrap();
        assert_eq!(
            s,
            Stat {
                median: 20.0,
                min: 10.0,
                max: 30.0,
                n: 3
            }
        );
        assert_eq!(
            Stat::over(&[Some(1.0), None, Some(3.0)], |x| *x).unwrap().n,
            2
        );
        assert_eq!(Stat::over(&[None::<f64>], |x| *x), None);
    }

    #[test]
    fn counters_since_and_median() {
        let a = PhysicalCounters {
            flushes: 5,
            writes: 10,
            bytes_written: 4096,
            reads: 3,
        };
        let b = PhysicalCounters {
            flushes: 7,
            writes: 12,
            bytes_written: 8192,
            reads: 3,
        };
        assert_eq!(
            b.since(&a),
            PhysicalCounters {
                flushes: 2,
                writes: 2,
                bytes_written: 4096,
                reads: 0
            }
        );
        assert_eq!(a.since(&b), PhysicalCounters::default());
        assert_eq!(median_counters(&[a, b, b]), Some(b));
        assert_eq!(median_counters(&[a, b]), Some(a));
        assert_eq!(median_counters(&[]), None);
    }

    fn run(total: f64, test1: f64, batch: f64) -> RunSample {
        RunSample {
            suite: SuiteRun {
                phases: Phases {
                    prepare_ms: 1.0,
                    init_ms: 2.0,
                    sync_ms: None,
                    close_ms: 0.5,
                    reopen_ms: None,
                    verify_ms: None,
                },
                cases: vec![
                    CaseSample {
                        number: 1,
                        ms: test1,
                        counters: None,
                    },
                    CaseSample {
                        number: 2,
                        ms: total - test1,
                        counters: None,
                    },
                ],
                total_ms: total,
                test1_ms: test1,
            },
            batch: BatchRun {
                phases: Phases::default(),
                rows: 10,
                ms: batch,
                counters: None,
            },
        }
    }

    #[test]
    fn summary_and_json_round_trip() {
        let mut result = BenchResult {
            schema_version: SCHEMA_VERSION,
            suite: SuiteInfo {
                seed: 1,
                sha256: "00".into(),
                scale_divisor: 1,
                cases: vec![],
                batch_rows: 10,
                batch_sha256: "11".into(),
            },
            config: Config {
                runs: 3,
                warmup: 1,
                data_dir: None,
            },
            environment: Environment::default(),
            backends: vec![BackendResult {
                name: "x".into(),
                durability: "none".into(),
                persistent: false,
                warmup_runs: vec![run(1000.0, 900.0, 1000.0)],
                runs: vec![
                    run(10.0, 4.0, 1.0),
                    run(30.0, 6.0, 3.0),
                    run(20.0, 5.0, 2.0),
                ],
                summary: None,
            }],
        };
        result.summarize();
        let s = result.backends[0].summary.as_ref().unwrap();
        assert_eq!(s.total_ms.unwrap().median, 20.0);
        assert_eq!(s.total_ms.unwrap().max, 30.0, "warm-up excluded");
        assert_eq!(s.test1_ms.unwrap().median, 5.0);
        assert_eq!(s.tests_2_to_16_ms.unwrap().median, 15.0);
        assert_eq!(s.batch_ms.unwrap().min, 1.0);
        assert_eq!(s.cases_ms.len(), 2);
        assert_eq!(s.cases_ms[1].ms.unwrap().median, 15.0);
        assert_eq!(s.suite_phases.sync_ms, None);
        assert_eq!(s.suite_phases.init_ms.unwrap().n, 3);

        let text = result.to_json().unwrap();
        assert!(text.contains("\"schema_version\": 2"));
        assert!(text.contains("\"prepare_ms\""));
        assert_eq!(BenchResult::from_json(&text).unwrap(), result);
        // A version 1 file (no browser fields) still loads.
        let older = text.replace("\"schema_version\": 2", "\"schema_version\": 1");
        assert_eq!(BenchResult::from_json(&older).unwrap().schema_version, 1);
        let newer = text.replace("\"schema_version\": 2", "\"schema_version\": 99");
        assert!(BenchResult::from_json(&newer).is_err());
    }
}
