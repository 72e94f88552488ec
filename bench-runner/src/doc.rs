//! The page's result document, read leniently, and its validation.
//!
//! ```text
//! { schema_version, generated_at, config, environment,
//!   sql?: bench-sql's BenchResult, fs?: bench-fs's FsResult (lifecycle and/or raw),
//!   raw?: bench-fs's RawSuite (or an FsResult holding it),
//!   verifications: { all_passed, failures: [...] } }
//! ```
//!
//! The mirror types below hold only what the report and the checks use; every field has a
//! default, unknown fields are ignored, so result files of other schema versions still load.
//! Statistics are recomputed from the measured runs (the `summary` fields in the files are
//! derived data): median (mean of the middle two for an even count) and observed min–max, as in
//! `bench_sql::result::Stat`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

/// Median and observed range of some samples.
#[derive(Clone, Copy, Debug, PartialEq)]
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

impl Stat {
    /// Over `samples`; `None` if empty.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => return None,
            _ if n % 2 == 1 => v[n / 2],
            _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        Some(Self {
            median,
            min: v[0],
            max: v[n - 1],
            n,
        })
    }

    /// Over the `Some` values `pick` finds in `items`.
    pub fn over<T>(items: &[T], pick: impl Fn(&T) -> Option<f64>) -> Option<Self> {
        let v: Vec<f64> = items.iter().filter_map(pick).collect();
        Self::of(&v)
    }
}

/// Physical calls of our volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// `flush` calls.
    pub flushes: u64,
    /// `write_at` calls.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// `read_at` calls.
    pub reads: u64,
}

/// Per-field lower median (integers stay integers); `None` if empty.
pub fn median_counters(samples: &[Counters]) -> Option<Counters> {
    if samples.is_empty() {
        return None;
    }
    let field = |f: fn(&Counters) -> u64| {
        let mut v: Vec<u64> = samples.iter().map(f).collect();
        v.sort_unstable();
        v[(v.len() - 1) / 2]
    };
    Some(Counters {
        flushes: field(|c| c.flushes),
        writes: field(|c| c.writes),
        bytes_written: field(|c| c.bytes_written),
        reads: field(|c| c.reads),
    })
}

/// The page's whole result.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PageResult {
    /// Version of the page's document layout.
    pub schema_version: Option<u64>,
    /// ISO 8601 time the page finished.
    pub generated_at: Option<String>,
    /// What the page ran (preset, suites, backends, runs, files, commit, ...).
    pub config: Value,
    /// Browser, device, timer, isolation, storage.
    pub environment: Value,
    /// bench-sql's result (the 16 cases and the batch).
    pub sql: Option<SqlResult>,
    /// bench-fs's result (see [`PageResult::lifecycle`]).
    pub fs: Option<Value>,
    /// bench-fs's raw suite (see [`PageResult::raw`]).
    pub raw: Option<Value>,
    /// What the page checked.
    pub verifications: Option<Verifications>,
}

/// The page's checks.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Verifications {
    /// Every check passed.
    pub all_passed: Option<bool>,
    /// What failed (strings or objects).
    pub failures: Vec<Value>,
}

impl PageResult {
    /// Parses a document.
    pub fn from_json(text: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// The filesystem lifecycle: `fs.lifecycle`, or `fs` itself when it is the lifecycle suite.
    pub fn lifecycle(&self) -> Option<LifecycleSuite> {
        let fs = self.fs.as_ref()?;
        let v = match fs.get("lifecycle") {
            Some(l) => l,
            None if fs.get("backends").is_some() => fs,
            None => return None,
        };
        serde_json::from_value(v.clone()).ok()
    }

    /// The raw OPFS workloads: top-level `raw` (the suite, or an object holding `raw`), else
    /// `fs.raw`.
    pub fn raw(&self) -> Option<RawSuite> {
        let pick = |v: &Value| -> Option<RawSuite> {
            let v = if v.get("runs").is_some() {
                v
            } else {
                v.get("raw")?
            };
            serde_json::from_value(v.clone()).ok()
        };
        self.raw
            .as_ref()
            .and_then(pick)
            .or_else(|| self.fs.as_ref().and_then(pick))
    }

    /// A string field of `environment`, else of `sql.environment` (the suites record their
    /// own environment too).
    pub fn env_str(&self, key: &str) -> Option<String> {
        let from = |v: &Value| v.get(key).and_then(scalar_text);
        from(&self.environment).or_else(|| self.sql.as_ref().and_then(|s| from(&s.environment)))
    }
}

/// A verification failure as one line: `suite/backend: message` for the page's
/// `{suite, backend?, message}` objects, else the value itself.
pub fn failure_text(v: &Value) -> String {
    if let Some(m) = v.get("message").and_then(Value::as_str) {
        let mut at: Vec<&str> = Vec::new();
        for k in ["suite", "backend"] {
            if let Some(s) = v.get(k).and_then(Value::as_str) {
                at.push(s);
            }
        }
        return if at.is_empty() {
            m.to_owned()
        } else {
            format!("{}: {m}", at.join("/"))
        };
    }
    scalar_text(v).unwrap_or_else(|| v.to_string())
}

/// A scalar JSON value as text (`None` for null, arrays and objects).
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// SQL (bench-sql)
// ---------------------------------------------------------------------------------------------

/// bench-sql's result.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SqlResult {
    /// bench-sql's own layout version.
    pub schema_version: Option<u64>,
    /// Seed, hashes, case titles.
    pub suite: SqlSuiteInfo,
    /// Runs and warm-up.
    pub config: SqlConfig,
    /// As bench-sql recorded it.
    pub environment: Value,
    /// In the order they ran.
    pub backends: Vec<SqlBackend>,
}

/// What was executed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SqlSuiteInfo {
    /// PRNG seed.
    pub seed: Option<u64>,
    /// SHA-256 of the 16 cases' SQL.
    pub sha256: Option<String>,
    /// 1 = full size; anything else is a smoke run.
    pub scale_divisor: Option<u32>,
    /// Numbers and titles.
    pub cases: Vec<CaseInfo>,
    /// Rows of the batch.
    pub batch_rows: Option<u32>,
    /// SHA-256 of the batch.
    pub batch_sha256: Option<String>,
}

/// One case's number and title.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CaseInfo {
    /// 1 to 16.
    pub number: u32,
    /// As printed.
    pub title: String,
}

/// Repetition protocol.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SqlConfig {
    /// Measured runs.
    pub runs: Option<u32>,
    /// Warm-up runs.
    pub warmup: Option<u32>,
}

/// One backend's runs.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SqlBackend {
    /// e.g. `ours-memory-strict`, `sahpool`, `memory`.
    pub name: String,
    /// What a commit guarantees.
    pub durability: String,
    /// Whether the database outlives the connection.
    pub persistent: Option<bool>,
    /// Excluded from statistics.
    pub warmup_runs: Vec<SqlRun>,
    /// Measured.
    pub runs: Vec<SqlRun>,
}

/// One fresh run: the suite and/or the batch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SqlRun {
    /// The 16 cases.
    pub suite: Option<SuiteRun>,
    /// The batch transaction.
    pub batch: Option<BatchRun>,
}

/// Lifecycle phases: `prepare_ms`, `init_ms`, `sync_ms`, `close_ms`, `reopen_ms`, `verify_ms`
/// (`null`: not applicable).
pub type Phases = BTreeMap<String, Option<f64>>;

/// The suite in one run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct SuiteRun {
    /// Around the cases.
    pub phases: Phases,
    /// In order.
    pub cases: Vec<CaseSample>,
    /// Sum of the cases.
    pub total_ms: Option<f64>,
    /// Case 1.
    pub test1_ms: Option<f64>,
}

impl SuiteRun {
    /// The sum of the case times (or the recorded total).
    pub fn total(&self) -> Option<f64> {
        self.total_ms
            .or_else(|| (!self.cases.is_empty()).then(|| self.cases.iter().map(|c| c.ms).sum()))
    }

    /// Case 1's time.
    pub fn test1(&self) -> Option<f64> {
        self.test1_ms
            .or_else(|| self.cases.iter().find(|c| c.number == 1).map(|c| c.ms))
    }
}

/// One case of one run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CaseSample {
    /// 1 to 16.
    pub number: u32,
    /// Wall time.
    pub ms: f64,
    /// Physical calls (our VFS).
    pub counters: Option<Counters>,
}

/// The batch in one run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct BatchRun {
    /// Around the transaction.
    pub phases: Phases,
    /// Rows inserted.
    pub rows: Option<u32>,
    /// Wall time of the transaction.
    pub ms: Option<f64>,
    /// Physical calls (our VFS).
    pub counters: Option<Counters>,
}

impl SqlBackend {
    /// Measured runs that ran the suite.
    fn suites(&self) -> Vec<&SuiteRun> {
        self.runs.iter().filter_map(|r| r.suite.as_ref()).collect()
    }

    /// Measured runs that ran the batch.
    fn batches(&self) -> Vec<&BatchRun> {
        self.runs.iter().filter_map(|r| r.batch.as_ref()).collect()
    }

    /// 16-case total.
    pub fn total(&self) -> Option<Stat> {
        Stat::over(&self.suites(), |s| s.total())
    }

    /// Case 1.
    pub fn test1(&self) -> Option<Stat> {
        Stat::over(&self.suites(), |s| s.test1())
    }

    /// Cases 2 to 16 (total minus case 1, per run).
    pub fn tests_2_to_16(&self) -> Option<Stat> {
        Stat::over(&self.suites(), |s| Some(s.total()? - s.test1()?))
    }

    /// One case.
    pub fn case(&self, number: u32) -> Option<Stat> {
        Stat::over(&self.suites(), |s| {
            s.cases.iter().find(|c| c.number == number).map(|c| c.ms)
        })
    }

    /// Median counters of one case.
    pub fn case_counters(&self, number: u32) -> Option<Counters> {
        let v: Vec<Counters> = self
            .suites()
            .iter()
            .filter_map(|s| s.cases.iter().find(|c| c.number == number)?.counters)
            .collect();
        median_counters(&v)
    }

    /// The batch transaction.
    pub fn batch(&self) -> Option<Stat> {
        Stat::over(&self.batches(), |b| b.ms)
    }

    /// Median counters of the batch.
    pub fn batch_counters(&self) -> Option<Counters> {
        let v: Vec<Counters> = self.batches().iter().filter_map(|b| b.counters).collect();
        median_counters(&v)
    }

    /// A suite phase (`"init_ms"`, ...).
    pub fn suite_phase(&self, key: &str) -> Option<Stat> {
        Stat::over(&self.suites(), |s| s.phases.get(key).copied().flatten())
    }

    /// A batch phase.
    pub fn batch_phase(&self, key: &str) -> Option<Stat> {
        Stat::over(&self.batches(), |b| b.phases.get(key).copied().flatten())
    }

    /// Whether any run counted physical calls.
    pub fn has_counters(&self) -> bool {
        self.suites()
            .iter()
            .any(|s| s.cases.iter().any(|c| c.counters.is_some()))
            || self.batches().iter().any(|b| b.counters.is_some())
    }
}

// ---------------------------------------------------------------------------------------------
// Filesystem lifecycle and raw OPFS (bench-fs)
// ---------------------------------------------------------------------------------------------

/// The lifecycle suite.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LifecycleSuite {
    /// Files created.
    pub files: Option<u32>,
    /// Bytes per file.
    pub file_size_bytes: Option<u32>,
    /// Backends in the order they ran.
    pub backends: Vec<LifecycleBackend>,
}

/// One lifecycle backend.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LifecycleBackend {
    /// e.g. `ours-disk-strict`, `files-opfs`.
    pub name: String,
    /// What holds the bytes.
    pub storage: String,
    /// What a finished phase guarantees.
    pub durability: String,
    /// Our volume's mode (`None` for a baseline).
    pub buffer_mode: Option<String>,
    /// The baseline's rename method.
    pub rename_method: Option<String>,
    /// Excluded from statistics.
    pub warmup_runs: Vec<LifecycleRun>,
    /// Measured.
    pub runs: Vec<LifecycleRun>,
}

/// One lifecycle run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct LifecycleRun {
    /// In execution order.
    pub phases: Vec<PhaseSample>,
    /// Sum of the phases.
    pub total_ms: Option<f64>,
}

/// One phase of one run.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct PhaseSample {
    /// `mount`, `create`, `write`, `read`, `rename`, `delete`, `flush`, `reopen`, `verify`.
    pub phase: String,
    /// Wall time.
    pub ms: f64,
    /// Physical calls (our volume).
    pub counters: Option<Counters>,
}

impl LifecycleBackend {
    /// Phase names in the order of the first run.
    pub fn phase_names(&self) -> Vec<String> {
        self.runs
            .first()
            .map(|r| r.phases.iter().map(|p| p.phase.clone()).collect())
            .unwrap_or_default()
    }

    /// One phase over the measured runs.
    pub fn phase(&self, name: &str) -> Option<Stat> {
        Stat::over(&self.runs, |r| {
            r.phases.iter().find(|p| p.phase == name).map(|p| p.ms)
        })
    }

    /// Median counters of one phase.
    pub fn phase_counters(&self, name: &str) -> Option<Counters> {
        let v: Vec<Counters> = self
            .runs
            .iter()
            .filter_map(|r| r.phases.iter().find(|p| p.phase == name)?.counters)
            .collect();
        median_counters(&v)
    }

    /// Sum of the phases.
    pub fn total(&self) -> Option<Stat> {
        Stat::over(&self.runs, |r| {
            r.total_ms
                .or_else(|| Some(r.phases.iter().map(|p| p.ms).sum()))
        })
    }
}

/// The raw per-call workloads.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawSuite {
    /// Excluded from statistics.
    pub warmup_runs: Vec<RawRun>,
    /// Measured.
    pub runs: Vec<RawRun>,
}

/// One run of every raw workload.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct RawRun {
    /// One series per timed call kind.
    pub series: Vec<CallSeries>,
}

/// The calls of one kind in one run (every sample is in the file; only the statistics are read
/// here).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CallSeries {
    /// `small-append`, `new-file: close`, ...
    pub name: String,
    /// Timed calls.
    pub calls: u32,
    /// Bytes per call.
    pub bytes_per_call: u32,
    /// Bytes of all calls.
    pub total_bytes: u64,
    /// Per-call statistics in this run.
    pub stats: CallStats,
}

/// Per-call statistics of one series in one run, microseconds.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CallStats {
    /// Sum of all calls.
    pub total_us: f64,
    /// Mean per call.
    pub mean_us: f64,
    /// Nearest-rank 50th percentile.
    pub p50_us: f64,
    /// Nearest-rank 90th percentile.
    pub p90_us: f64,
    /// Nearest-rank 99th percentile.
    pub p99_us: f64,
    /// Slowest call.
    pub max_us: f64,
    /// First call.
    pub first_us: f64,
}

/// One series across the measured runs.
#[derive(Clone, Debug)]
pub struct SeriesSummary {
    /// Its name.
    pub name: String,
    /// Calls per run.
    pub calls: u32,
    /// Bytes per call.
    pub bytes_per_call: u32,
    /// Across runs: total time of the run's calls.
    pub total_us: Option<Stat>,
    /// Across runs: mean per call.
    pub mean_us: Option<Stat>,
    /// Across runs: p50.
    pub p50_us: Option<Stat>,
    /// Across runs: p99.
    pub p99_us: Option<Stat>,
    /// Across runs: the first call.
    pub first_us: Option<Stat>,
}

impl RawSuite {
    /// Per series (in the first run's order), statistics across the measured runs.
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
                    total_us: stat(|c| c.total_us),
                    mean_us: stat(|c| c.mean_us),
                    p50_us: stat(|c| c.p50_us),
                    p99_us: stat(|c| c.p99_us),
                    first_us: stat(|c| c.first_us),
                }
            })
            .collect()
    }

    /// Median across runs of the mean per call of the series named `name`, in microseconds.
    pub fn mean_us(&self, name: &str) -> Option<f64> {
        self.summarize()
            .into_iter()
            .find(|s| s.name == name)?
            .mean_us
            .map(|s| s.median)
    }
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// Highest page schema version this runner was written against (newer documents are read
/// leniently, with a warning from [`validate`]).
pub const KNOWN_SCHEMA_VERSION: u64 = 1;

/// The suites a document should contain: `config.suites` if the page recorded it (a list or a
/// comma string), else `requested`.
pub fn suites_in(doc: &Value, requested: &[String]) -> Vec<String> {
    match doc.pointer("/config/suites") {
        Some(Value::Array(a)) => a.iter().filter_map(scalar_text).collect(),
        Some(Value::String(s)) => s.split(',').map(|x| x.trim().to_owned()).collect(),
        _ => requested.to_vec(),
    }
}

/// Checks a result document: the envelope, that every verification passed, and that every
/// suite in `suites` produced results. Returns the problems (empty: valid), and warnings.
pub fn validate(text: &str, suites: &[String]) -> (Vec<String>, Vec<String>) {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let raw: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (vec![format!("not JSON: {e}")], warnings),
    };
    match raw.get("schema_version").and_then(Value::as_u64) {
        Some(0) | None => problems.push("schema_version missing or not a positive integer".into()),
        Some(v) if v > KNOWN_SCHEMA_VERSION => warnings.push(format!(
            "schema_version {v} is newer than this runner knows ({KNOWN_SCHEMA_VERSION})"
        )),
        Some(_) => {}
    }
    if raw
        .get("generated_at")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        problems.push("generated_at missing".into());
    }
    for key in ["config", "environment"] {
        if !raw.get(key).is_some_and(Value::is_object) {
            problems.push(format!("{key} missing or not an object"));
        }
    }
    let doc: PageResult = match serde_json::from_value(raw.clone()) {
        Ok(d) => d,
        Err(e) => {
            problems.push(format!("layout: {e}"));
            return (problems, warnings);
        }
    };
    match &doc.verifications {
        None => problems.push("verifications missing".into()),
        Some(v) => {
            if v.all_passed != Some(true) {
                problems.push(format!(
                    "verifications.all_passed is {:?}",
                    v.all_passed.map_or("missing".to_owned(), |b| b.to_string())
                ));
            }
            for f in &v.failures {
                problems.push(format!("verification failed: {}", failure_text(f)));
            }
        }
    }
    let wants = |s: &str| suites.iter().any(|x| x == s);
    if wants("sql") || wants("batch") {
        check_sql(&doc, wants("sql"), wants("batch"), &mut problems);
    }
    if wants("fs") {
        check_lifecycle(&doc, &mut problems);
    }
    if wants("raw") {
        check_raw(&doc, &mut problems);
    }
    (problems, warnings)
}

fn finite_nonneg(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

fn check_sql(doc: &PageResult, suite: bool, batch: bool, problems: &mut Vec<String>) {
    let Some(sql) = &doc.sql else {
        problems.push("sql missing".into());
        return;
    };
    if sql.backends.is_empty() {
        problems.push("sql.backends is empty".into());
    }
    let expected_cases = if sql.suite.cases.is_empty() {
        16
    } else {
        sql.suite.cases.len()
    };
    for b in &sql.backends {
        if b.runs.is_empty() {
            problems.push(format!("sql backend {}: no measured runs", b.name));
        }
        for (i, r) in b.runs.iter().enumerate() {
            let at = format!("sql backend {} run {}", b.name, i + 1);
            if suite {
                match &r.suite {
                    None => problems.push(format!("{at}: no suite")),
                    Some(s) => {
                        if s.cases.len() != expected_cases {
                            problems.push(format!(
                                "{at}: {} cases, expected {expected_cases}",
                                s.cases.len()
                            ));
                        }
                        if let Some(c) = s.cases.iter().find(|c| !finite_nonneg(c.ms)) {
                            problems.push(format!("{at}: case {} has time {}", c.number, c.ms));
                        }
                        if !s.total().is_some_and(|t| t > 0.0 && t.is_finite()) {
                            problems.push(format!("{at}: no positive total"));
                        }
                    }
                }
            }
            if batch {
                match &r.batch {
                    None => problems.push(format!("{at}: no batch")),
                    Some(b) => {
                        if !b.ms.is_some_and(|t| t > 0.0 && t.is_finite()) {
                            problems.push(format!("{at}: batch has no positive time"));
                        }
                        if b.rows == Some(0) {
                            problems.push(format!("{at}: batch inserted no rows"));
                        }
                    }
                }
            }
        }
    }
}

fn check_lifecycle(doc: &PageResult, problems: &mut Vec<String>) {
    let Some(l) = doc.lifecycle() else {
        problems.push("fs lifecycle missing".into());
        return;
    };
    if l.backends.is_empty() {
        problems.push("fs lifecycle: no backends".into());
    }
    for b in &l.backends {
        if b.runs.is_empty() {
            problems.push(format!("fs backend {}: no measured runs", b.name));
        }
        for (i, r) in b.runs.iter().enumerate() {
            if r.phases.is_empty() {
                problems.push(format!("fs backend {} run {}: no phases", b.name, i + 1));
            }
            if let Some(p) = r.phases.iter().find(|p| !finite_nonneg(p.ms)) {
                problems.push(format!(
                    "fs backend {} run {}: phase {} has time {}",
                    b.name,
                    i + 1,
                    p.phase,
                    p.ms
                ));
            }
        }
    }
}

fn check_raw(doc: &PageResult, problems: &mut Vec<String>) {
    let Some(raw) = doc.raw() else {
        problems.push("raw OPFS workloads missing".into());
        return;
    };
    if raw.runs.is_empty() {
        problems.push("raw: no measured runs".into());
    }
    for (i, r) in raw.runs.iter().enumerate() {
        if r.series.is_empty() {
            problems.push(format!("raw run {}: no series", i + 1));
        }
        for s in &r.series {
            if s.calls == 0 || !finite_nonneg(s.stats.total_us) {
                problems.push(format!(
                    "raw run {} series {}: {} calls, total {} µs",
                    i + 1,
                    s.name,
                    s.calls,
                    s.stats.total_us
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_median_and_range() {
        assert!(Stat::of(&[]).is_none());
        let s = Stat::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.n), (2.5, 1.0, 4.0, 4));
        assert_eq!(Stat::of(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
    }

    #[test]
    fn counters_lower_median() {
        let c = |w| Counters {
            writes: w,
            ..Counters::default()
        };
        assert_eq!(median_counters(&[c(5), c(1), c(3)]), Some(c(3)));
        assert_eq!(median_counters(&[c(5), c(1)]), Some(c(1)));
        assert_eq!(median_counters(&[]), None);
    }

    #[test]
    fn validation_reports_problems() {
        let all: Vec<String> = ["sql", "batch", "fs", "raw"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let (p, _) = validate("{", &all);
        assert!(p[0].starts_with("not JSON"));
        let (p, _) = validate(
            r#"{"schema_version":1,"generated_at":"x","config":{},"environment":{},
                "verifications":{"all_passed":false,"failures":[{"suite":"sql","backend":"sahpool",
                "message":"reopen: rows differ"}]}}"#,
            &all,
        );
        let text = p.join("\n");
        assert!(text.contains("all_passed"), "{text}");
        assert!(text.contains("sql/sahpool: reopen: rows differ"), "{text}");
        assert!(text.contains("sql missing"), "{text}");
        assert!(text.contains("fs lifecycle missing"), "{text}");
        assert!(text.contains("raw OPFS workloads missing"), "{text}");
    }

    #[test]
    fn raw_and_lifecycle_found_in_either_place() {
        let doc = PageResult::from_json(
            r#"{"fs":{"lifecycle":{"files":10,"backends":[{"name":"a","runs":[]}]},
                      "raw":{"runs":[{"series":[{"name":"small-append","calls":2,
                             "stats":{"mean_us":5.0,"total_us":10.0}}]}]}}}"#,
        )
        .unwrap();
        assert_eq!(doc.lifecycle().unwrap().backends[0].name, "a");
        assert_eq!(doc.raw().unwrap().mean_us("small-append"), Some(5.0));
        let doc = PageResult::from_json(
            r#"{"fs":{"backends":[{"name":"b"}]},
                "raw":{"runs":[{"series":[{"name":"x","calls":1,"stats":{"mean_us":1.0}}]}]}}"#,
        )
        .unwrap();
        assert_eq!(doc.lifecycle().unwrap().backends[0].name, "b");
        assert_eq!(doc.raw().unwrap().runs.len(), 1);
    }
}
