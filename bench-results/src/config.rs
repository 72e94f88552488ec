//! [`RunConfig`]: what ran, recorded as `config` in every document; [`Suite`], the six suites.

use serde::{Deserialize, Serialize};

/// One of the six suites.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Suite {
    /// bench-sql: the 16-case SQL suite.
    Sql,
    /// bench-sql: the 10,000-row transaction.
    Batch,
    /// bench-fs: the filesystem lifecycle.
    Fs,
    /// bench-fs: the raw OPFS per-call workloads (the physical floor).
    Raw,
    /// bench-sql: two installs of one shared volume taking turns, beside the floor of closing
    /// and reopening two access handles ([`crate::handoff`]).
    Handoff,
    /// bench-sql: a database of many rows built, reopened, scanned and shrunk
    /// ([`crate::scale`]).
    Scale,
}

impl Suite {
    /// All six, in the order they run.
    pub const ALL: [Suite; 6] = [
        Suite::Sql,
        Suite::Batch,
        Suite::Fs,
        Suite::Raw,
        Suite::Handoff,
        Suite::Scale,
    ];

    /// The name used in URLs, configs and progress events.
    pub fn as_str(self) -> &'static str {
        match self {
            Suite::Sql => "sql",
            Suite::Batch => "batch",
            Suite::Fs => "fs",
            Suite::Raw => "raw",
            Suite::Handoff => crate::handoff::SUITE,
            Suite::Scale => crate::scale::SUITE,
        }
    }

    /// Parses [`Suite::as_str`] names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// What ran: a preset with its overrides applied (the page), or a native runner's options.
/// `Default` (an empty preset name, no suite, zero counts) is for tests that fill in what they
/// need; producers start from a preset or from their options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// The preset the values started from (`full`, `phone`, `quick`; `native` for the native
    /// runners).
    pub preset: String,
    /// Selected suites, in running order.
    pub suites: Vec<Suite>,
    /// Backend filters (substrings of names); empty: every backend.
    pub backends: Vec<String>,
    /// Measured rounds (each runs every selected backend once); with
    /// [`RunConfig::target_half_width`], the most the SQL suite may take (its section's
    /// `config.runs` says how many it took).
    pub runs: u32,
    /// Precision target of the SQL rounds: they stop, at a round boundary, once the 95 %
    /// interval of every paired 16-case total ratio to a memory reference (backends that run
    /// in every round) is within ± this fraction of its median (`bench_sql::runner::Precision`;
    /// `methodology.md`, "How many rounds"). `None` (and documents from before it): exactly
    /// `runs` rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_half_width: Option<f64>,
    /// Warm-up rounds before them (excluded from statistics, kept in the result).
    pub warmup: u32,
    /// Measured rounds of the filesystem lifecycle and the raw workloads, when they differ
    /// from `runs` (the full preset spends its many rounds on the SQL suite, whose intervals
    /// its goals are about). `None`: `runs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_runs: Option<u32>,
    /// Measured SQL rounds the JavaScript peers take part in: the first `peer_runs` (they take
    /// part in every warm-up round); our backends and the Rust-side baselines run in every
    /// round. The full preset caps them because a slow peer's turn takes up to a minute and
    /// would stretch its many rounds into days (`methodology.md`, "How many rounds"). `None`
    /// (and documents from before the cap): every round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_runs: Option<u32>,
    /// Seed of the generated SQL and file contents.
    pub seed: u64,
    /// SQL counts divided by this (1: full size, anything else is a smoke run).
    pub sql_scale: u32,
    /// Files in the lifecycle.
    pub files: u32,
    /// Bytes per file.
    pub file_size_bytes: u32,
    /// Raw `N`: calls of the 4 KiB workloads.
    pub raw_small_calls: u32,
    /// Raw `M`: append+flush pairs and new-file cycles.
    pub raw_cycle_calls: u32,
    /// Hand-offs per workload per round of the hand-off suite (`None`: the suite did not run,
    /// or a document from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoffs: Option<u32>,
    /// Rows the scale suite builds (`None`: the suite did not run, or a document from before
    /// it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_rows: Option<u64>,
    /// Measured rounds of the scale suite, when they differ from
    /// [`RunConfig::fs_rounds`] (a turn builds a whole database: the full preset runs few).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_runs: Option<u32>,
    /// Runs of the batch per backend and SQL round, back to back after the round's suites; the
    /// round's sample is the fastest run (`bench_sql::runner::Plan::batch_repeats`). `None` (and
    /// documents from before it): one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_repeats: Option<u32>,
    /// Runs of the filesystem lifecycle per backend and round, back to back after the round's
    /// runs; the round's sample is the fastest run (bench-fs's `LifecycleConfig::repeats`;
    /// backends whose lifecycle takes 250 ms or more, the one-file-per-file baselines, run
    /// once). `None` (and documents from before it): one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_repeats: Option<u32>,
    /// Seed of the shuffle that orders the backends in each round (absent in version 1
    /// documents, whose rounds ran in one fixed order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Whether our backends timed their storage calls (`opfs_vfs::Volume::time_calls`): the
    /// SQL cases' counters then carry the time spent inside the browser's calls, and every
    /// call paid two clock readings. `false` (not written) in the headline runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub call_timing: bool,
    /// Source commit of the build, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

impl RunConfig {
    /// Measured rounds of the lifecycle and the raw workloads.
    pub fn fs_rounds(&self) -> u32 {
        self.fs_runs.unwrap_or(self.runs)
    }

    /// Measured rounds of the scale suite.
    pub fn scale_rounds(&self) -> u32 {
        self.scale_runs.unwrap_or_else(|| self.fs_rounds())
    }

    /// Runs of the batch per backend and SQL round (at least 1).
    pub fn batch_runs_per_round(&self) -> u32 {
        self.batch_repeats.unwrap_or(1).max(1)
    }

    /// Runs of the lifecycle per backend and round (at least 1).
    pub fn fs_runs_per_round(&self) -> u32 {
        self.fs_repeats.unwrap_or(1).max(1)
    }

    /// Measured SQL rounds of a JavaScript peer (at most `runs`).
    pub fn peer_rounds(&self) -> u32 {
        self.peer_runs.map_or(self.runs, |k| k.min(self.runs))
    }

    /// Whether `suite` was selected.
    pub fn runs_suite(&self, suite: Suite) -> bool {
        self.suites.contains(&suite)
    }

    /// Whether the backend `name` passes the filters (empty: every backend but the
    /// `-whole-pages` and `-no-flush-ahead` references and the `-twin` control). A filter
    /// selects the names that contain it; the references that price one design choice and the
    /// A/A control ([`crate::goals::LEVER_REFERENCES`]: `-exclusive`, `-whole-pages`,
    /// `-no-flush-ahead`, `-twin`) only by a filter that says so (`exclusive`, `whole-pages`,
    /// `no-flush-ahead`, `twin`), so that `ours-memory-balanced` and `sqlite-memvfs` each
    /// select one backend.
    pub fn selects_backend(&self, name: &str) -> bool {
        backend_selected(&self.backends, name)
    }
}

/// Whether the backend `name` passes the backend filters `filters` (the rule of
/// [`RunConfig::selects_backend`], also for runs configured without a `RunConfig`).
pub fn backend_selected(filters: &[String], name: &str) -> bool {
    let lever = crate::goals::LEVER_REFERENCES
        .iter()
        .find(|l| name.ends_with(l.suffix));
    if filters.is_empty() {
        return lever.is_none_or(|l| l.by_default);
    }
    filters
        .iter()
        .any(|f| name.contains(f.as_str()) && lever.is_none_or(|l| f.contains(l.word)))
}
