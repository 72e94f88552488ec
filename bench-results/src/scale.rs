//! The scale-and-space suite (`scale`, issue 10): a database of [`ScaleConfig::rows`] rows of
//! [`ScaleConfig::row_bytes`] bytes is built in transactions of [`ScaleConfig::batch_rows`]
//! rows on each backend, then reopened, read, written and shrunk, and the bytes the backend's
//! files hold are read at rest. Natively the baseline is SQLite's unix VFS on one file; in the
//! browser it is the one-OPFS-file-per-database pool (`sahpool`).
//!
//! Protocol (the producer's, `bench-sql`'s `scale` module, recorded here): warm-up rounds,
//! then measured rounds; each round runs every selected backend once, from a wiped state, in
//! an order drawn from a seeded shuffle ([`ScaleSection::rounds`]). One turn, in order:
//!
//! 1. open, then **build**: `CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)` and the rows in
//!    transactions ([`ScaleRun::build_ms`]);
//! 2. the backend's explicit sync, then its **checkpoint** where it has one
//!    ([`ScaleRun::checkpoint_ms`]: ours moves the log's pages home); the physical bytes
//!    written since the open are read here ([`ScaleRun::bytes_written`]);
//! 3. close; the bytes of every file the backend keeps are read at rest
//!    ([`ScaleRun::stored_bytes`]; compare [`ScaleRun::logical_bytes`], SQLite's page count
//!    × page size);
//! 4. **reopen** ([`ScaleRun::reopen_ms`]), the **first read** of one row
//!    ([`ScaleRun::first_read_ms`]; Memory buffer mode loads the whole file at the first page
//!    the reopened connection reads, which its pragmas do within the reopen: hence
//!    [`ScaleRun::load_gb_per_s`] over both), a **full scan** twice (cold, warm),
//!    **autocommit INSERTs** at size ([`ScaleRun::autocommit_ms`], per INSERT);
//! 5. `DROP TABLE t; VACUUM` ([`ScaleRun::vacuum_ms`]), close, and the bytes at rest again
//!    ([`ScaleRun::stored_after_vacuum`]: is the space given back?).
//!
//! Summaries ([`ScaleSection::summarize`]): per backend the median and range of each measure;
//! paired ratios to the baseline of the same rounds ([`ScaleSection::ratios`]); and the goal
//! checks of issue 10 ([`SCALE_GOALS`]).

use serde::{Deserialize, Serialize};

use crate::goals::{verdict, Bound, GoalCheck};
use crate::sql::{BackendMeta, Round};
use crate::stats::{paired_ratios, Bootstrap, RatioStat, Stat};
use crate::summary::Metric;

/// The suite's name in configs, progress events and failures.
pub const SUITE: &str = "scale";

/// Space left after `DROP TABLE` + `VACUUM` that the `scale-vacuum` goal allows beyond 5 % of
/// what is left: 1 MiB.
pub const VACUUM_SLACK_BYTES: u64 = 1 << 20;

/// How the suite was run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScaleConfig {
    /// Rows built.
    pub rows: u64,
    /// Bytes of each row's blob.
    pub row_bytes: u32,
    /// Rows per build transaction.
    pub batch_rows: u32,
    /// Autocommit INSERTs timed at size.
    pub autocommits: u32,
    /// Measured rounds.
    pub runs: u32,
    /// Warm-up rounds before them.
    pub warmup: u32,
    /// Seed of the round orders ([`crate::stats::round_orders`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// The backend ratios are taken to (`sqlite-unix-file` natively, `sahpool` in the browser).
    pub baseline: String,
}

/// One backend's turn in one round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleRun {
    /// [`Round::index`].
    pub round: u32,
    /// Building the rows (open excluded).
    pub build_ms: f64,
    /// Checkpoint after the build (`None`: the backend has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_ms: Option<f64>,
    /// Physical bytes written from the open through the checkpoint (`None`: not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<u64>,
    /// SQLite's page count × page size after the build.
    pub logical_bytes: u64,
    /// Bytes of the backend's files at rest after the build (`None`: not readable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<u64>,
    /// Opening the stored database again (mount or install, open the connection, pragmas).
    pub reopen_ms: f64,
    /// The first read after the reopen: one row by key.
    pub first_read_ms: f64,
    /// The first full scan after the reopen.
    pub scan_cold_ms: f64,
    /// The same scan again.
    pub scan_warm_ms: f64,
    /// Per autocommit INSERT at size (the mean of [`ScaleConfig::autocommits`]).
    pub autocommit_ms: f64,
    /// `DROP TABLE t; VACUUM`.
    pub vacuum_ms: f64,
    /// SQLite's page count × page size after the VACUUM.
    pub logical_after_vacuum: u64,
    /// Bytes of the backend's files at rest after the VACUUM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_after_vacuum: Option<u64>,
}

impl ScaleRun {
    /// Bytes at rest ÷ logical bytes after the build.
    pub fn space_ratio(&self) -> Option<f64> {
        let stored = self.stored_bytes? as f64;
        (self.logical_bytes > 0).then(|| stored / self.logical_bytes as f64)
    }

    /// Bytes at rest after the VACUUM ÷ what the `scale-vacuum` goal allows
    /// ([`VACUUM_SLACK_BYTES`] + 1.05 × the logical bytes left): ≤ 1 keeps the goal.
    pub fn vacuum_ratio(&self) -> Option<f64> {
        let stored = self.stored_after_vacuum? as f64;
        Some(stored / (VACUUM_SLACK_BYTES as f64 + 1.05 * self.logical_after_vacuum as f64))
    }

    /// The logical bytes per second of the reopen and the first read together, in GB/s. A
    /// Memory-mode backend loads the whole file there: at the first page the reopened
    /// connection reads, which its pragmas read within [`ScaleRun::reopen_ms`] (natively the
    /// first read alone then takes 0.02 ms of a 20 MB load). For a backend that reads pages on
    /// demand the figure is not the rate of anything.
    pub fn load_gb_per_s(&self) -> Option<f64> {
        let ms = self.reopen_ms + self.first_read_ms;
        (ms > 0.0).then(|| self.logical_bytes as f64 / (ms * 1e6))
    }
}

/// Medians and ranges of one backend's measured runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleBackendSummary {
    /// [`ScaleRun::build_ms`].
    pub build_ms: Option<Stat>,
    /// [`ScaleRun::checkpoint_ms`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_ms: Option<Stat>,
    /// [`ScaleRun::bytes_written`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<Stat>,
    /// [`ScaleRun::logical_bytes`].
    pub logical_bytes: Option<Stat>,
    /// [`ScaleRun::stored_bytes`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_bytes: Option<Stat>,
    /// [`ScaleRun::space_ratio`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space_ratio: Option<Stat>,
    /// [`ScaleRun::reopen_ms`].
    pub reopen_ms: Option<Stat>,
    /// [`ScaleRun::first_read_ms`].
    pub first_read_ms: Option<Stat>,
    /// [`ScaleRun::scan_cold_ms`].
    pub scan_cold_ms: Option<Stat>,
    /// [`ScaleRun::scan_warm_ms`].
    pub scan_warm_ms: Option<Stat>,
    /// [`ScaleRun::autocommit_ms`].
    pub autocommit_ms: Option<Stat>,
    /// [`ScaleRun::vacuum_ms`].
    pub vacuum_ms: Option<Stat>,
    /// [`ScaleRun::stored_after_vacuum`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_after_vacuum: Option<Stat>,
    /// [`ScaleRun::vacuum_ratio`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vacuum_ratio: Option<Stat>,
}

/// Everything measured on one backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleBackend {
    /// What the backend is.
    #[serde(flatten)]
    pub meta: BackendMeta,
    /// Why it stopped, if it failed: the runs before are kept; it ran in no later round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Excluded from statistics.
    #[serde(default)]
    pub warmup_runs: Vec<ScaleRun>,
    /// The measured runs.
    #[serde(default)]
    pub runs: Vec<ScaleRun>,
    /// Set by [`ScaleSection::summarize`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<ScaleBackendSummary>,
}

/// A measure that is paired with the baseline, round by round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleMeasure {
    /// [`ScaleRun::build_ms`].
    Build,
    /// [`ScaleRun::bytes_written`].
    BytesWritten,
    /// [`ScaleRun::reopen_ms`] + [`ScaleRun::first_read_ms`].
    ReopenAndFirstRead,
    /// [`ScaleRun::scan_warm_ms`].
    ScanWarm,
    /// [`ScaleRun::autocommit_ms`].
    Autocommit,
}

impl ScaleMeasure {
    /// Every paired measure, in report order.
    pub const ALL: [ScaleMeasure; 5] = [
        ScaleMeasure::Build,
        ScaleMeasure::BytesWritten,
        ScaleMeasure::ReopenAndFirstRead,
        ScaleMeasure::ScanWarm,
        ScaleMeasure::Autocommit,
    ];

    /// The value in one run.
    pub fn of(self, run: &ScaleRun) -> Option<f64> {
        match self {
            ScaleMeasure::Build => Some(run.build_ms),
            ScaleMeasure::BytesWritten => run.bytes_written.map(|b| b as f64),
            ScaleMeasure::ReopenAndFirstRead => Some(run.reopen_ms + run.first_read_ms),
            ScaleMeasure::ScanWarm => Some(run.scan_warm_ms),
            ScaleMeasure::Autocommit => Some(run.autocommit_ms),
        }
    }

    /// As printed.
    pub fn label(self) -> &'static str {
        match self {
            ScaleMeasure::Build => "build",
            ScaleMeasure::BytesWritten => "bytes written to build",
            ScaleMeasure::ReopenAndFirstRead => "reopen + first read",
            ScaleMeasure::ScanWarm => "full scan, warm",
            ScaleMeasure::Autocommit => "autocommit INSERT at size",
        }
    }
}

/// One backend's paired ratio to the baseline on one measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleRatio {
    /// The numerator backend.
    pub backend: String,
    /// What is compared.
    pub measure: ScaleMeasure,
    /// Per-round ratio to the baseline, summarized.
    pub ratio: RatioStat,
}

/// One scale goal: a per-run quantity of ours against a threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleGoal {
    /// Stable identifier.
    pub id: &'static str,
    /// Applies to our backends whose name contains this (`-disk-`; empty: all of ours).
    pub ours: &'static str,
    /// The quantity (`None`: per-run own ratio; `Some`: the paired ratio to the baseline).
    pub versus_baseline: Option<ScaleMeasure>,
    /// `Bound::AtMost` for every scale goal.
    pub threshold: f64,
}

/// Issue 10's goals that one scale run decides: bytes at rest ≤ 1.10 × logical; after DROP +
/// VACUUM at most 1 MiB + 5 % of what is left; bytes written to build ≤ 1.3 × the baseline's;
/// Disk-mode warm full scan ≤ 1.2 × the baseline's.
pub const SCALE_GOALS: [ScaleGoal; 4] = [
    ScaleGoal {
        id: "scale-space",
        ours: "",
        versus_baseline: None,
        threshold: 1.10,
    },
    ScaleGoal {
        id: "scale-vacuum",
        ours: "",
        versus_baseline: None,
        threshold: 1.00,
    },
    ScaleGoal {
        id: "scale-bytes-written",
        ours: "",
        versus_baseline: Some(ScaleMeasure::BytesWritten),
        threshold: 1.30,
    },
    ScaleGoal {
        id: "scale-scan-disk",
        ours: "-disk-",
        versus_baseline: Some(ScaleMeasure::ScanWarm),
        threshold: 1.20,
    },
];

/// A per-run ratio of one backend ([`ScaleRun::space_ratio`], [`ScaleRun::vacuum_ratio`]).
type RunRatio = fn(&ScaleRun) -> Option<f64>;

/// The scale section of a document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScaleSection {
    /// How it ran.
    pub config: ScaleConfig,
    /// Every round's order, warm-up first.
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// One entry per backend, in the order they were listed.
    pub backends: Vec<ScaleBackend>,
    /// Paired ratios to [`ScaleConfig::baseline`] (set by [`ScaleSection::summarize`]).
    #[serde(default)]
    pub ratios: Vec<ScaleRatio>,
    /// Whether the summaries were computed.
    #[serde(default)]
    pub summarized: bool,
    /// Goal checks ([`SCALE_GOALS`]).
    #[serde(default)]
    pub goals: Vec<GoalCheck>,
}

impl ScaleSection {
    /// The backend named `name`.
    pub fn backend(&self, name: &str) -> Option<&ScaleBackend> {
        self.backends.iter().find(|b| b.meta.name == name)
    }

    /// Computes every backend's summary, the paired ratios to the baseline and the goal
    /// checks (intervals from `boot`).
    pub fn summarize(&mut self, boot: &Bootstrap) {
        for b in &mut self.backends {
            let r = &b.runs;
            let u = |f: fn(&ScaleRun) -> Option<u64>| Stat::over(r, |x| f(x).map(|v| v as f64));
            b.summary = Some(ScaleBackendSummary {
                build_ms: Stat::over(r, |x| Some(x.build_ms)),
                checkpoint_ms: Stat::over(r, |x| x.checkpoint_ms),
                bytes_written: u(|x| x.bytes_written),
                logical_bytes: u(|x| Some(x.logical_bytes)),
                stored_bytes: u(|x| x.stored_bytes),
                space_ratio: Stat::over(r, ScaleRun::space_ratio),
                reopen_ms: Stat::over(r, |x| Some(x.reopen_ms)),
                first_read_ms: Stat::over(r, |x| Some(x.first_read_ms)),
                scan_cold_ms: Stat::over(r, |x| Some(x.scan_cold_ms)),
                scan_warm_ms: Stat::over(r, |x| Some(x.scan_warm_ms)),
                autocommit_ms: Stat::over(r, |x| Some(x.autocommit_ms)),
                vacuum_ms: Stat::over(r, |x| Some(x.vacuum_ms)),
                stored_after_vacuum: u(|x| x.stored_after_vacuum),
                vacuum_ratio: Stat::over(r, ScaleRun::vacuum_ratio),
            });
        }
        self.ratios = self.paired(boot);
        self.goals = self.check(boot);
        self.summarized = true;
    }

    fn paired(&self, boot: &Bootstrap) -> Vec<ScaleRatio> {
        let Some(base) = self.backend(&self.config.baseline) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for b in self
            .backends
            .iter()
            .filter(|b| b.meta.name != base.meta.name)
        {
            for m in ScaleMeasure::ALL {
                let pick = |x: &ScaleBackend| -> Vec<(u32, f64)> {
                    x.runs
                        .iter()
                        .filter_map(|r| Some((r.round, m.of(r)?)))
                        .collect()
                };
                let label = format!("scale:{}:{m:?}", b.meta.name);
                let ratios = paired_ratios(&pick(b), &pick(base));
                if let Some(ratio) = RatioStat::of(&ratios, boot, &label) {
                    out.push(ScaleRatio {
                        backend: b.meta.name.clone(),
                        measure: m,
                        ratio,
                    });
                }
            }
        }
        out
    }

    fn check(&self, boot: &Bootstrap) -> Vec<GoalCheck> {
        let mut out = Vec::new();
        for goal in SCALE_GOALS {
            let ours = self
                .backends
                .iter()
                .filter(|b| b.meta.name.starts_with("ours-") && b.meta.name.contains(goal.ours));
            for b in ours {
                let (versus, what, ratio) = match goal.versus_baseline {
                    Some(m) => (
                        self.config.baseline.clone(),
                        m.label().to_owned(),
                        self.ratios
                            .iter()
                            .find(|r| r.backend == b.meta.name && r.measure == m)
                            .map(|r| r.ratio),
                    ),
                    None => {
                        let (versus, what, f): (&str, &str, RunRatio) = if goal.id == "scale-space"
                        {
                            ("logical bytes", "bytes at rest", ScaleRun::space_ratio)
                        } else {
                            (
                                "1 MiB + 1.05 × logical bytes left",
                                "bytes at rest after DROP + VACUUM",
                                ScaleRun::vacuum_ratio,
                            )
                        };
                        let v: Vec<f64> = b.runs.iter().filter_map(f).collect();
                        let label = format!("{}:{}", goal.id, b.meta.name);
                        (
                            versus.to_owned(),
                            what.to_owned(),
                            RatioStat::of(&v, boot, &label),
                        )
                    }
                };
                if goal.versus_baseline.is_some() && ratio.is_none() {
                    // Not measured against this baseline (its bytes written are not counted).
                    continue;
                }
                out.push(GoalCheck {
                    goal: goal.id.to_owned(),
                    backend: b.meta.name.clone(),
                    versus: versus.clone(),
                    metric: Metric::Scale,
                    case: None,
                    bound: Bound::AtMost,
                    threshold: goal.threshold,
                    statement: format!("{} {what} ÷ {versus} ≤ {:.2}", b.meta.name, goal.threshold),
                    verdict: verdict(ratio.as_ref(), Bound::AtMost, goal.threshold),
                    ratio,
                    floor: None,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goals::Verdict;

    fn run(round: u32, scan: f64, written: Option<u64>, stored: u64) -> ScaleRun {
        ScaleRun {
            round,
            build_ms: 100.0,
            bytes_written: written,
            logical_bytes: 1_000_000,
            stored_bytes: Some(stored),
            reopen_ms: 1.0,
            first_read_ms: 1.0,
            scan_cold_ms: scan,
            scan_warm_ms: scan,
            autocommit_ms: 0.5,
            vacuum_ms: 3.0,
            logical_after_vacuum: 8192,
            stored_after_vacuum: Some(20_000),
            ..ScaleRun::default()
        }
    }

    fn backend(name: &str, runs: Vec<ScaleRun>) -> ScaleBackend {
        ScaleBackend {
            meta: BackendMeta {
                name: name.to_owned(),
                ..BackendMeta::default()
            },
            runs,
            ..ScaleBackend::default()
        }
    }

    #[test]
    fn ratios_pair_rounds_and_goals_follow_the_intervals() {
        let rounds = 0..8;
        let base: Vec<_> = rounds
            .clone()
            .map(|i| run(i, 100.0 + f64::from(i), Some(1_000_000), 1_000_000))
            .collect();
        // Disk: scan 1.5× the baseline in every round, 2× the bytes written, space 1.004.
        let disk: Vec<_> = rounds
            .clone()
            .map(|i| run(i, 1.5 * (100.0 + f64::from(i)), Some(2_000_000), 1_004_000))
            .collect();
        // Memory: scan 0.5×, space 1.5 (not met), no bytes written counted.
        let memory: Vec<_> = rounds
            .map(|i| run(i, 0.5 * (100.0 + f64::from(i)), None, 1_500_000))
            .collect();
        let mut s = ScaleSection {
            config: ScaleConfig {
                baseline: "sqlite-unix-file".to_owned(),
                ..ScaleConfig::default()
            },
            backends: vec![
                backend("sqlite-unix-file", base),
                backend("ours-disk-strict", disk),
                backend("ours-memory-strict", memory),
            ],
            ..ScaleSection::default()
        };
        s.summarize(&Bootstrap::default());
        let ratio = |b: &str, m| {
            s.ratios
                .iter()
                .find(|r| r.backend == b && r.measure == m)
                .map(|r| r.ratio.median)
        };
        assert!((ratio("ours-disk-strict", ScaleMeasure::ScanWarm).unwrap() - 1.5).abs() < 1e-9);
        assert!(
            (ratio("ours-disk-strict", ScaleMeasure::BytesWritten).unwrap() - 2.0).abs() < 1e-9
        );
        assert_eq!(
            ratio("ours-memory-strict", ScaleMeasure::BytesWritten),
            None
        );
        let verdict = |g: &str, b: &str| {
            s.goals
                .iter()
                .find(|c| c.goal == g && c.backend == b)
                .map(|c| c.verdict)
        };
        assert_eq!(
            verdict("scale-space", "ours-disk-strict"),
            Some(Verdict::Met)
        );
        assert_eq!(
            verdict("scale-space", "ours-memory-strict"),
            Some(Verdict::NotMet)
        );
        assert_eq!(
            verdict("scale-vacuum", "ours-disk-strict"),
            Some(Verdict::Met)
        );
        assert_eq!(
            verdict("scale-scan-disk", "ours-disk-strict"),
            Some(Verdict::NotMet)
        );
        assert_eq!(
            verdict("scale-scan-disk", "ours-memory-strict"),
            None,
            "Disk mode only"
        );
        assert_eq!(
            verdict("scale-bytes-written", "ours-disk-strict"),
            Some(Verdict::NotMet)
        );
        assert_eq!(
            verdict("scale-bytes-written", "ours-memory-strict"),
            None,
            "not counted: no check"
        );
        assert!(s.goals.iter().all(|c| c.backend.starts_with("ours-")));
        let sum = s.backends[1].summary.as_ref().unwrap();
        assert!((sum.space_ratio.unwrap().median - 1.004).abs() < 1e-9);
    }

    #[test]
    fn load_rate_spans_the_reopen_and_the_first_read() {
        let mut r = run(0, 1.0, None, 1);
        r.logical_bytes = 2_000_000_000;
        (r.reopen_ms, r.first_read_ms) = (1500.0, 500.0);
        assert!((r.load_gb_per_s().unwrap() - 1.0).abs() < 1e-12);
        (r.reopen_ms, r.first_read_ms) = (0.0, 0.0);
        assert_eq!(r.load_gb_per_s(), None);
    }

    #[test]
    fn vacuum_ratio_allows_one_mib_and_five_percent() {
        let mut r = run(0, 1.0, None, 1);
        r.logical_after_vacuum = 10 << 20;
        r.stored_after_vacuum = Some((1 << 20) + (10 << 20) * 105 / 100);
        assert!((r.vacuum_ratio().unwrap() - 1.0).abs() < 1e-9);
        r.stored_after_vacuum = None;
        assert_eq!(r.vacuum_ratio(), None);
    }
}
