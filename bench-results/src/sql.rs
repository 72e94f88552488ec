//! The SQL section: the 16-case suite and the 10,000-row batch over every SQL backend (ours,
//! the Rust-side baselines, and peers implemented in JavaScript), round by round.
//!
//! Protocol (the producer's, recorded here): warm-up rounds, then measured rounds; each round
//! runs every selected backend once, in an order drawn from a seeded shuffle ([`Round::order`]);
//! a backend's turn is the suite, then the batch, each from a wiped state. Every sample is kept
//! (warm-up included). Timings carry their unit in the field name (`_ms`); an absent phase
//! (`null`) means "not applicable" (a non-persistent backend has no sync or reopen).

use serde::{Deserialize, Serialize};

use crate::goals::GoalCheck;
use crate::stats::{Bootstrap, RatioStat};
use crate::summary::{BackendSummary, RatioSummary};

/// The SQL engine a backend runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// SQLite (ours, sahpool, the memory VFS, the SQLite peers). Version 1 documents, which
    /// had only SQLite backends, default to it.
    #[default]
    Sqlite,
    /// PGlite (Postgres compiled to wasm).
    Pglite,
}

/// What a backend is: the same record for our backends, the Rust-side baselines and the
/// JavaScript peers (`peerBackends()` returns these fields).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BackendMeta {
    /// Stable identifier used in results, tables and `--backends` filters
    /// (`ours-disk-strict`, `sahpool`, `sqlite-memvfs`, a peer's name).
    pub name: String,
    /// The engine.
    #[serde(default)]
    pub engine: Engine,
    /// Name of the backend that is this engine's memory reference (`sqlite-memvfs` for
    /// SQLite backends, `pglite-memory` for PGlite); the reference names itself. Ratios
    /// "÷ memory" divide by it, round by round. `None`: the engine's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The package that implements it (`opfs-vfs`, `sqlite-wasm-vfs`, `@journeyapps/wa-sqlite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// What a returned `COMMIT` guarantees, as a label.
    pub durability: String,
    /// The settings behind that label, free text (`journal_mode=delete, synchronous=full`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability_settings: Option<String>,
    /// Whether the database outlives its connection (sync, reopen and verification apply).
    pub persistent: bool,
    /// Why this backend did not run at all (not available here); `None`: it was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl BackendMeta {
    /// One of ours (`ours-<mode>-<level>`).
    pub fn is_ours(&self) -> bool {
        self.name.starts_with("ours-")
    }

    /// This engine's memory reference itself.
    pub fn is_reference(&self) -> bool {
        self.reference.as_deref() == Some(self.name.as_str())
            || (self.reference.is_none() && !self.persistent)
    }

    /// Neither ours nor a reference: a peer we compare against (sahpool, the JavaScript
    /// backends).
    pub fn is_peer(&self) -> bool {
        !self.is_ours() && !self.is_reference()
    }
}

/// Identifies the generated workloads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteInfo {
    /// PRNG seed of the suite and the batch.
    pub seed: u64,
    /// SHA-256 of the 16 cases' SQL (each case's text followed by a NUL byte).
    pub sha256: String,
    /// Every count divided by this (1 = full size; anything else is a smoke run, not a result).
    pub scale_divisor: u32,
    /// Case numbers and titles, in order.
    pub cases: Vec<CaseInfo>,
    /// Rows in the batch transaction.
    pub batch_rows: u32,
    /// SHA-256 of the batch workload.
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

/// Repetition, as the SQL runner saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlRunInfo {
    /// Measured rounds.
    pub runs: u32,
    /// Warm-up rounds.
    pub warmup: u32,
    /// Where the backends kept their files (`opfs:<directory>` in the browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
    /// Seed of the round orders ([`crate::stats::round_orders`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// The page loads this section combines ([`crate::combine`]), in order; empty: one page
    /// load. `runs` and `warmup` are then the sums over them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<PageLoad>,
}

/// One page load of a section that combines several: its own rounds and seed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageLoad {
    /// 0-based, as in [`Round::load`].
    pub load: u32,
    /// Measured rounds of this load.
    pub runs: u32,
    /// Its warm-up rounds.
    pub warmup: u32,
    /// Its round orders' seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// When the load's run started (its document's `generated_at`).
    #[serde(default)]
    pub generated_at: String,
}

/// One round: which backends ran, in which order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Round {
    /// 0-based over all rounds, warm-up first (the `round` of each sample).
    pub index: u32,
    /// A warm-up round (excluded from statistics).
    pub warmup: bool,
    /// Backend names in running order (backends that had failed earlier are left out).
    pub order: Vec<String>,
    /// The page load the round ran in, in a section that combines several
    /// ([`SqlRunInfo::loads`]); absent: the only one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<u32>,
}

/// The SQL section of a document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlSection {
    /// What was executed.
    pub suite: SuiteInfo,
    /// How it was repeated.
    #[serde(default)]
    pub config: SqlRunInfo,
    /// Every round's order (absent in version 1 documents: one fixed order).
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// One entry per backend (also those skipped), in the order they were listed.
    pub backends: Vec<SqlBackendResult>,
    /// How the intervals were computed (set by [`SqlSection::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<Bootstrap>,
    /// The goal checks ([`crate::goals`]), derived from the paired ratios.
    #[serde(default)]
    pub goals: Vec<GoalCheck>,
}

/// Everything measured on one backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SqlBackendResult {
    /// What the backend is.
    #[serde(flatten)]
    pub meta: BackendMeta,
    /// Why it stopped, if it failed: the runs before the failure are kept, and it ran in no
    /// later round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Excluded from statistics.
    #[serde(default)]
    pub warmup_runs: Vec<RunSample>,
    /// The measured runs.
    #[serde(default)]
    pub runs: Vec<RunSample>,
    /// Medians and ranges of the measured runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<BackendSummary>,
    /// Paired ratios to the memory reference, with intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratios: Option<RatioSummary>,
}

/// One backend's turn in one round: the suite, then the batch (each from a wiped state).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSample {
    /// [`Round::index`] (absent in version 1 documents: pair by position).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The 16 cases, if the suite was selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<SuiteRun>,
    /// The batch transaction, if the batch was selected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchRun>,
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
    #[serde(default)]
    pub sync_ms: Option<f64>,
    /// Closing the connection and whatever holds the database.
    pub close_ms: f64,
    /// Opening the persisted database again (`None`: not persistent).
    #[serde(default)]
    pub reopen_ms: Option<f64>,
    /// Checking, after reopen, what the workload left (`None`: not persistent).
    #[serde(default)]
    pub verify_ms: Option<f64>,
}

/// Physical calls made by our storage (our VFS and volume only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysicalCounters {
    /// `flush` calls (durable points).
    pub flushes: u64,
    /// `write_at` calls.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes the flushes made durable (at each flush, the bytes written to that file since its
    /// previous one). 0 in documents before 2026-12-05, which did not count it (and 0 is not
    /// written).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flushed_bytes: u64,
    /// `read_at` calls.
    pub reads: u64,
    /// Nanoseconds inside the `read_at` calls, where the run timed them (the page's
    /// `call_timing`); 0, and not written, where it did not.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read_ns: u64,
    /// Nanoseconds inside the `write_at` calls, where timed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub write_ns: u64,
    /// Nanoseconds inside the `flush` calls, where timed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_ns: u64,
    /// Nanoseconds inside the other calls (size, truncate), where timed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_ns: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PhysicalCounters {
    /// `self - earlier`, saturating (a remount restarts the counters at zero).
    pub fn since(&self, earlier: &Self) -> Self {
        Self {
            flushes: self.flushes.saturating_sub(earlier.flushes),
            writes: self.writes.saturating_sub(earlier.writes),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
            flushed_bytes: self.flushed_bytes.saturating_sub(earlier.flushed_bytes),
            reads: self.reads.saturating_sub(earlier.reads),
            read_ns: self.read_ns.saturating_sub(earlier.read_ns),
            write_ns: self.write_ns.saturating_sub(earlier.write_ns),
            flush_ns: self.flush_ns.saturating_sub(earlier.flush_ns),
            other_ns: self.other_ns.saturating_sub(earlier.other_ns),
        }
    }

    /// Nanoseconds inside calls of every kind (0 where the run did not time them).
    pub fn call_ns(&self) -> u64 {
        self.read_ns + self.write_ns + self.flush_ns + self.other_ns
    }

    /// Per-field lower median (counters stay integers); `None` if empty.
    pub fn median_of(samples: &[Self]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let field = |f: fn(&Self) -> u64| {
            let mut v: Vec<u64> = samples.iter().map(f).collect();
            v.sort_unstable();
            v[(v.len() - 1) / 2]
        };
        Some(Self {
            flushes: field(|c| c.flushes),
            writes: field(|c| c.writes),
            bytes_written: field(|c| c.bytes_written),
            flushed_bytes: field(|c| c.flushed_bytes),
            reads: field(|c| c.reads),
            read_ns: field(|c| c.read_ns),
            write_ns: field(|c| c.write_ns),
            flush_ns: field(|c| c.flush_ns),
            other_ns: field(|c| c.other_ns),
        })
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

/// The suite in one run. This is also the shape a JavaScript peer's `runPeerSuite` returns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

impl SuiteRun {
    /// Total and test 1 from the cases (what a producer stores; checked for peers).
    pub fn from_cases(phases: Phases, cases: Vec<CaseSample>) -> Self {
        let total_ms = cases.iter().map(|c| c.ms).sum();
        let test1_ms = cases.iter().find(|c| c.number == 1).map_or(0.0, |c| c.ms);
        Self {
            phases,
            cases,
            total_ms,
            test1_ms,
        }
    }

    /// Time of case `number`, if it ran.
    pub fn case_ms(&self, number: u32) -> Option<f64> {
        self.cases.iter().find(|c| c.number == number).map(|c| c.ms)
    }
}

/// The batch in one run. Also the shape of a peer's `runPeerBatch` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Where the batch ran more than once in the round: every run's `ms`, in running order;
    /// this record is the fastest run (bench-sql's `fastest_repetition`). Empty:
    /// one run (and in documents before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats_ms: Vec<f64>,
}

impl SqlSection {
    /// The backend named `name`.
    pub fn backend(&self, name: &str) -> Option<&SqlBackendResult> {
        self.backends.iter().find(|b| b.meta.name == name)
    }

    /// The memory reference of `b` among this section's backends ([`reference_in`]).
    pub fn reference_of(&self, b: &BackendMeta) -> Option<&SqlBackendResult> {
        reference_in(&self.backends, b)
    }

    /// The widest relative half-width of the backends' 16-case total ratio intervals, with
    /// the backend's name (summarized sections; `None` if no ratio has an interval).
    pub fn widest_total_interval(&self) -> Option<(f64, &str)> {
        self.backends
            .iter()
            .filter_map(|b| {
                let w = b.ratios.as_ref()?.total?.relative_half_width()?;
                Some((w, b.meta.name.as_str()))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// What the A/A control measured (summarized sections; `None` if no backend named
    /// `…`[`crate::goals::TWIN_SUFFIX`] ran with ratios): the reference again, paired with it,
    /// so every difference it shows is the method's bias or noise.
    pub fn aa_control(&self) -> Option<AaControl<'_>> {
        let b = self
            .backends
            .iter()
            .find(|b| b.meta.name.ends_with(crate::goals::TWIN_SUFFIX))?;
        let r = b.ratios.as_ref()?;
        let cases: Vec<_> = r.cases.iter().filter_map(|c| c.ratio).collect();
        let medians = cases.iter().map(|c| c.median);
        Some(AaControl {
            name: &b.meta.name,
            total: r.total,
            case_medians: medians
                .clone()
                .reduce(f64::min)
                .zip(medians.reduce(f64::max)),
            cases_with_interval: cases.iter().filter(|c| c.lo.is_some()).count(),
            cases_excluding_one: cases
                .iter()
                .filter(|c| match (c.lo, c.hi) {
                    (Some(lo), Some(hi)) => lo > 1.0 || hi < 1.0,
                    _ => false,
                })
                .count(),
        })
    }
}

/// The A/A control's ratios to the reference ([`SqlSection::aa_control`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AaControl<'a> {
    /// Its name (`sqlite-memvfs-twin`).
    pub name: &'a str,
    /// Its 16-case total ratio.
    pub total: Option<RatioStat>,
    /// The smallest and largest median of its per-case ratios.
    pub case_medians: Option<(f64, f64)>,
    /// Cases whose ratio has an interval.
    pub cases_with_interval: usize,
    /// Of those, the cases whose interval lies wholly above or below 1.00: what the method
    /// would call a difference where there is none.
    pub cases_excluding_one: usize,
}

/// The memory reference of `b` among `backends`: its `reference` if that backend is there,
/// else the first non-persistent backend of the same engine that is its own reference (or
/// names none). `None` if there is none, or `b` is the reference itself. (A slice, so that the
/// round loop can ask it of the results it is still collecting.)
pub fn reference_in<'a>(
    backends: &'a [SqlBackendResult],
    b: &BackendMeta,
) -> Option<&'a SqlBackendResult> {
    let named = |n: &str| backends.iter().find(|x| x.meta.name == n);
    let r = match b.reference.as_deref().and_then(named) {
        Some(r) => r,
        None => backends.iter().find(|x| {
            x.meta.engine == b.engine
                && !x.meta.persistent
                && x.meta.reference.as_deref().is_none_or(|r| r == x.meta.name)
        })?,
    };
    (r.meta.name != b.name).then_some(r)
}

impl SqlSection {
    /// Which page load each round ran in ([`Round::load`]): what the paired ratios are grouped
    /// by for their intervals. Rounds without a load are load 0.
    pub fn loads(&self) -> RoundLoads {
        RoundLoads::of_rounds(&self.rounds)
    }
}

/// Round index → page load, for [`crate::summary::pair`]. Empty (the default): one load.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoundLoads(pub std::collections::BTreeMap<u32, u32>);

impl RoundLoads {
    /// From rounds that carry their load ([`Round::load`]).
    pub fn of_rounds(rounds: &[Round]) -> Self {
        Self(
            rounds
                .iter()
                .filter_map(|r| Some((r.index, r.load?)))
                .collect(),
        )
    }

    /// The load of `round` (0 if it has none).
    pub fn of(&self, round: u32) -> u32 {
        self.0.get(&round).copied().unwrap_or(0)
    }

    /// `(round, value)` pairs grouped by load, in load order (empty loads left out).
    pub fn group(&self, keyed: &[(u32, f64)]) -> Vec<Vec<f64>> {
        let mut groups: std::collections::BTreeMap<u32, Vec<f64>> = Default::default();
        for &(round, v) in keyed {
            groups.entry(self.of(round)).or_default().push(v);
        }
        groups.into_values().collect()
    }
}

impl SqlBackendResult {
    /// Measured `(pairing key, value)` samples of `pick`: the key is the run's round, or for
    /// version 1 runs (no round) its position among the measured runs.
    pub fn keyed(&self, pick: impl Fn(&RunSample) -> Option<f64>) -> Vec<(u32, f64)> {
        self.runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let key = r
                    .round
                    .unwrap_or_else(|| LEGACY_KEY + u32::try_from(i).unwrap_or(u32::MAX));
                pick(r).map(|v| (key, v))
            })
            .collect()
    }
}

/// Pairing keys of version 1 runs start here, far above any real round index.
const LEGACY_KEY: u32 = 1 << 30;
