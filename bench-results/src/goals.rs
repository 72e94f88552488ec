//! The project's speed goals and the rule that decides them, in one place so that the page,
//! the runner's report and the JSON agree.
//!
//! A goal is a bound on a paired ratio (per round, one backend's time ÷ another's in the same
//! round). It is decided only by the ratio's bootstrap interval ([`crate::stats::RatioStat`]):
//!
//! - `≤ t`: **met** if the interval's upper end is ≤ t; **not met** if its lower end is > t;
//!   otherwise (the interval contains t) **undecided**.
//! - `> t`: **met** if the lower end is > t; **not met** if the upper end is ≤ t; otherwise
//!   **undecided**.
//! - No interval (too few rounds, or a backend missing): **undecided**.
//!
//! The goals ([`GOALS`]):
//!
//! | id | backends | ratio | bound |
//! |---|---|---|---|
//! | `total-balanced` | `ours-*-balanced` | 16-case total ÷ memory reference | ≤ 1.05 |
//! | `total-strict` | `ours-*-strict` | 16-case total ÷ memory reference | ≤ 1.25 |
//! | `tests-2-16` | every `ours-*` | tests 2–16 ÷ memory reference | ≤ 1.02 |
//! | `batch` | every `ours-*` | batch ÷ memory reference | ≤ 1.10 |
//! | `memory-vs-disk` | `ours-memory-X` for each level X | 16-case total ÷ `ours-disk-X` | ≤ 1.00 |
//! | `sharing-single-tab` | `ours-X` that has an `ours-X-exclusive` reference | 16-case total ÷ the reference's | ≤ 1.02 |
//! | `patches` | `ours-X` that has an `ours-X-whole-pages` reference | test 1 ÷ the reference's | ≤ 1.00 |
//! | `flush-ahead` | `ours-X` that has an `ours-X-no-flush-ahead` reference | 16-case total ÷ the reference's | ≤ 1.00 |
//! | `peer-per-case` | every persistent peer P, versus each `ours-*-strict` S | case c of P ÷ case c of S, each of the 16 cases | > 1 |
//! | `handoff-floor` | each hand-off workload (`two-writers`, `writer-reader`) | ms per hand-off ÷ ms to close and reopen the two access handles, same round | ≤ 2.00 |
//!
//! "Memory reference" is the backend's [`crate::sql::BackendMeta::reference`]. The peer goal
//! compares with our strictest level (a commit flushed before it returns), the least
//! favourable of ours: any peer that loses to it loses to every level of ours.
//!
//! ## The physical floor
//!
//! Every check of ours against its memory reference (`total-balanced`, `total-strict`,
//! `tests-2-16`, `batch`) also carries, where the document holds the raw OPFS workloads of the
//! same run, the **physical floor** of its ratio ([`PhysicalFloor`]): what this run's OPFS
//! charges for the physical work the backend did in the span the ratio times (the 16 cases,
//! cases 2–16, or the batch), with everything else priced at zero. Two terms, each from the
//! backend's counters (the sum over those cases of its median counter per case, or the
//! batch's median) and the raw workloads' prices (medians across the raw runs):
//!
//! - its F flushes, each priced as a 4 KiB write + flush (c = the cheaper of `append+flush`
//!   and `overwrite+flush`, mean µs per call): each durable commit costs at least that;
//! - its B bytes written, beyond the 4 KiB of each of those F pairs, each MiB priced as
//!   written in 1 MiB calls (w, [`BULK_SERIES`]), and the D bytes its flushes carried (the
//!   bytes written to a file since its previous flush, counted at each flush), beyond those
//!   pairs' too, each MiB priced as flushed (f: the flush right after those appends,
//!   [`BULK_FLUSH_SERIES`], less a small flush, per MiB it carried) — since 2026-12-05;
//!   documents before have no byte term.
//!
//! With R the reference's median of the same quantity:
//!
//! ```text
//! floor_ms = (F × c + max(0, B − F × 4 KiB) / MiB × w
//!                   + max(0, D − F × 4 KiB) / MiB × f) / 1000
//! floor ratio = (R + floor_ms) ÷ R
//! ```
//!
//! It is the ratio the backend would have if everything but its writes and flushes cost
//! exactly what the memory reference's work costs, and those only what the raw workloads paid.
//! It is a lower bound at this run's prices, not a result: it does not change the verdict
//! (still decided by the interval alone), it is a ratio of medians with no interval of its
//! own, and F and B are what *our* design flushes and writes (≈ one flush per Strict commit;
//! every page logged, and written home again at a checkpoint; the log's growth steps of
//! zeros; D leaves out what a deferred level flushes after the span). The flush price is
//! linear in the bytes, from one flush of ~8 MB: a flush in the SQL run can cost more or less
//! than that (a small flush's fixed part, another moment of the run). When the floor is above
//! the threshold ([`GoalCheck::floor_out_of_reach`]) the goal cannot be met at the prices this
//! run measured, whatever the engine does besides writing and flushing what it did. A
//! document without the raw suite has no floor.

use serde::{Deserialize, Serialize};

use crate::handoff::HandoffSummary;
use crate::raw::RawSuite;
use crate::sql::{PhysicalCounters, SqlBackendResult, SqlSection};
use crate::stats::{Bootstrap, RatioStat};
use crate::summary::{pair, Metric};

/// Which side of the threshold the ratio must be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// `ratio ≤ threshold`.
    AtMost,
    /// `ratio > threshold`.
    Above,
}

/// The outcome of a goal check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is on the right side.
    Met,
    /// The whole interval is on the wrong side.
    NotMet,
    /// The interval contains the threshold, or there is no interval.
    Undecided,
}

impl Verdict {
    /// `met`, `not met`, `undecided`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Met => "met",
            Verdict::NotMet => "not met",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The rule (module docs): a verdict from a ratio's interval.
pub fn verdict(ratio: Option<&RatioStat>, bound: Bound, threshold: f64) -> Verdict {
    let Some((lo, hi)) = ratio.and_then(|r| Some((r.lo?, r.hi?))) else {
        return Verdict::Undecided;
    };
    match bound {
        Bound::AtMost if hi <= threshold => Verdict::Met,
        Bound::AtMost if lo > threshold => Verdict::NotMet,
        Bound::Above if lo > threshold => Verdict::Met,
        Bound::Above if hi <= threshold => Verdict::NotMet,
        _ => Verdict::Undecided,
    }
}

/// Whom a goal applies to, and what it is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    /// Our backends whose name ends with this (`-balanced`; empty: all of ours), versus
    /// their memory reference.
    OursVsReference(&'static str),
    /// `ours-memory-X` versus `ours-disk-X`.
    MemoryVsDisk,
    /// Every persistent peer versus every `ours-*-strict`, per case.
    PeersVsOursStrict,
    /// `ours-X` (shared: what users get) versus its `ours-X-exclusive` reference (one tab,
    /// exclusive access handles, no Web Lock): what sharing costs a tab that is alone.
    SharedVsExclusive,
    /// `ours-X` (small page changes logged as patches: what users get) versus its
    /// `ours-X-whole-pages` reference (every changed page logged whole): what patches save.
    PatchesVsWholePages,
    /// `ours-X` (a helper worker flushes ahead where the browser allows: what users get)
    /// versus its `ours-X-no-flush-ahead` reference (every flush made inline): what flushing
    /// ahead saves.
    AheadVsInline,
    /// Each workload of the hand-off suite versus the floor of the same rounds
    /// ([`crate::handoff`]; decided by [`check_handoff`], not [`check_sql`]).
    HandoffVsFloor,
}

/// One goal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Goal {
    /// Stable identifier.
    pub id: &'static str,
    /// To whom it applies.
    pub subject: Subject,
    /// The ratio's quantity ([`Metric::Case`]: every case).
    pub metric: Metric,
    /// Side.
    pub bound: Bound,
    /// Threshold.
    pub threshold: f64,
}

/// Every goal (see the module docs).
pub const GOALS: [Goal; 10] = [
    Goal {
        id: "total-balanced",
        subject: Subject::OursVsReference("-balanced"),
        metric: Metric::Total,
        bound: Bound::AtMost,
        threshold: 1.05,
    },
    Goal {
        id: "total-strict",
        subject: Subject::OursVsReference("-strict"),
        metric: Metric::Total,
        bound: Bound::AtMost,
        threshold: 1.25,
    },
    Goal {
        id: "tests-2-16",
        subject: Subject::OursVsReference(""),
        metric: Metric::Tests2To16,
        bound: Bound::AtMost,
        threshold: 1.02,
    },
    Goal {
        id: "batch",
        subject: Subject::OursVsReference(""),
        metric: Metric::Batch,
        bound: Bound::AtMost,
        threshold: 1.10,
    },
    Goal {
        id: "memory-vs-disk",
        subject: Subject::MemoryVsDisk,
        metric: Metric::Total,
        bound: Bound::AtMost,
        threshold: 1.00,
    },
    Goal {
        id: "sharing-single-tab",
        subject: Subject::SharedVsExclusive,
        metric: Metric::Total,
        bound: Bound::AtMost,
        threshold: 1.02,
    },
    Goal {
        id: "patches",
        subject: Subject::PatchesVsWholePages,
        // Test 1's 1,000 autocommit INSERTs are where patches act; tests 2–16 are big
        // transactions, whose pages change wholesale.
        metric: Metric::Test1,
        bound: Bound::AtMost,
        threshold: 1.00,
    },
    Goal {
        id: "flush-ahead",
        subject: Subject::AheadVsInline,
        // Balanced is the level that defers its flushes (the only one that hints).
        metric: Metric::Total,
        bound: Bound::AtMost,
        threshold: 1.00,
    },
    Goal {
        id: "peer-per-case",
        subject: Subject::PeersVsOursStrict,
        metric: Metric::Case,
        bound: Bound::Above,
        threshold: 1.00,
    },
    Goal {
        id: "handoff-floor",
        subject: Subject::HandoffVsFloor,
        metric: Metric::Handoff,
        bound: Bound::AtMost,
        threshold: 2.00,
    },
];

/// Suffix of the single-tab references of sharing (`ours-memory-strict-exclusive`: installed
/// with `Sharing::Exclusive`), for the `sharing-single-tab` goal.
pub const EXCLUSIVE_SUFFIX: &str = "-exclusive";

/// Suffix of the references that log every changed page whole (`ours-memory-strict-whole-pages`:
/// installed with `log_patches: false`), for the `patches` goal.
pub const WHOLE_PAGES_SUFFIX: &str = "-whole-pages";

/// Suffix of the memory reference's twin (`sqlite-memvfs-twin`: the reference run a second
/// time in every round), the A/A control: its ratio to the reference is what the method
/// reports when there is no difference to find.
pub const TWIN_SUFFIX: &str = "-twin";

/// Suffix of the references whose storage makes every flush inline
/// (`ours-memory-balanced-no-flush-ahead`: installed with `flush_ahead: false`), for the
/// `flush-ahead` goal.
pub const NO_FLUSH_AHEAD_SUFFIX: &str = "-no-flush-ahead";

/// A backend that runs only when asked for, or in every unfiltered run: one of our references
/// that exists to price one design choice, or the A/A control
/// ([`crate::config::RunConfig::selects_backend`]).
#[derive(Clone, Copy, Debug)]
pub struct LeverReference {
    /// The suffix of its name (after the configuration it is the reference of).
    pub suffix: &'static str,
    /// A backend filter selects it only if it contains this word.
    pub word: &'static str,
    /// Whether a run without filters runs it.
    pub by_default: bool,
}

/// The lever references: sharing (`-exclusive`, in every unfiltered run) and patches
/// (`-whole-pages`, only when asked for: two more backends would lengthen every full run); and
/// the A/A control (`-twin`, only when asked for); flushing ahead (`-no-flush-ahead`, only when
/// asked for).
pub const LEVER_REFERENCES: [LeverReference; 4] = [
    LeverReference {
        suffix: EXCLUSIVE_SUFFIX,
        word: "exclusive",
        by_default: true,
    },
    LeverReference {
        suffix: WHOLE_PAGES_SUFFIX,
        word: "whole-pages",
        by_default: false,
    },
    LeverReference {
        suffix: TWIN_SUFFIX,
        word: "twin",
        by_default: false,
    },
    LeverReference {
        suffix: NO_FLUSH_AHEAD_SUFFIX,
        word: "no-flush-ahead",
        by_default: false,
    },
];

/// The goal of the strict levels' 16-case total (the report's headline floor notes).
pub const TOTAL_STRICT: &str = "total-strict";

/// The raw workloads that price one durable commit: a 4 KiB write followed by `flush()`, timed
/// together (`bench-fs/src/raw.rs`), appending or overwriting; the floor takes the cheaper one
/// the run measured (our log mostly overwrites its file's spare bytes). Runs before the
/// overwrite series existed have only the first.
pub const COMMIT_SERIES: &str = "append+flush";
/// See [`COMMIT_SERIES`].
pub const COMMIT_SERIES_OVERWRITE: &str = "overwrite+flush";

/// The raw series that price bulk bytes (`bench-fs/src/raw.rs`): appends of 1 MiB, and the one
/// flush right after them. Runs before 2026-12-05 did not time that flush: their floors have
/// no byte term.
pub const BULK_SERIES: &str = "chunked-append (1 MiB)";
/// See [`BULK_SERIES`].
pub const BULK_FLUSH_SERIES: &str = "chunked-append (1 MiB): flush";
/// The flushes of little data, subtracted from [`BULK_FLUSH_SERIES`] to price a flushed byte
/// (the cheaper one the run measured).
const SMALL_FLUSH_SERIES: [&str; 2] = ["append+flush: flush", "overwrite+flush: flush"];
/// Bytes per MiB.
const MIB: f64 = 1_048_576.0;

/// The physical floor of a ratio of ours to its memory reference, from the same run's raw
/// workloads (module docs, "The physical floor"). A lower bound at this run's prices, not a
/// result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhysicalFloor {
    /// F: the backend's flushes in the ratio's span (the sum over its cases of the median
    /// `flushes` per case, or the batch's median).
    pub flushes: u64,
    /// The raw series that prices one flush ([`COMMIT_SERIES`]).
    pub series: String,
    /// Its cost: median across the raw runs of the series' mean µs per call.
    pub call_us: f64,
    /// B: the bytes the backend wrote in the span (summed like F from `bytes_written`). With
    /// the prices below; absent when the raw suite lacks [`BULK_FLUSH_SERIES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// D: the bytes its flushes in the span carried (summed like F from `flushed_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flushed_bytes: Option<u64>,
    /// µs to write a MiB in 1 MiB calls ([`BULK_SERIES`]: median total ÷ its MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_us_per_mib: Option<f64>,
    /// µs to flush a written MiB: ([`BULK_FLUSH_SERIES`] − the cheaper small flush) ÷ the MiB
    /// that flush carried, at least 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_us_per_mib: Option<f64>,
    /// `flushes × call_us / 1000`, plus, with a byte term, the bytes written beyond the 4 KiB
    /// each of the F pairs already wrote × `write_us_per_mib`, and the bytes flushed beyond
    /// those pairs' × `flush_us_per_mib` (÷ 1000).
    pub floor_ms: f64,
    /// The memory reference's median of the same quantity (written `reference_total_ms`
    /// before the floor covered more than the 16-case total).
    #[serde(alias = "reference_total_ms")]
    pub reference_ms: f64,
    /// `(reference_ms + floor_ms) ÷ reference_ms`.
    pub ratio: f64,
}

/// µs per MiB to write bulk bytes and to flush them, from the raw suite's [`BULK_SERIES`] and
/// [`BULK_FLUSH_SERIES`]; `None` without either (or without a small flush to subtract).
fn bulk_prices(raw: &RawSuite) -> Option<(f64, f64)> {
    let bulk = raw.series_summary(BULK_SERIES)?;
    // Test-sized runs write under a MiB; the price is per byte all the same.
    let mib = bulk.total_bytes as f64 / MIB;
    let write = bulk.total_us?.median / mib;
    let small = SMALL_FLUSH_SERIES
        .into_iter()
        .filter_map(|n| raw.mean_us(n))
        .min_by(f64::total_cmp)?;
    let flush = (raw.mean_us(BULK_FLUSH_SERIES)? - small).max(0.0) / mib;
    (mib > 0.0 && write.is_finite() && write >= 0.0 && flush.is_finite()).then_some((write, flush))
}

impl PhysicalFloor {
    /// The floor of backend `backend` of `sql` (summarized) on `metric` (the 16-case total,
    /// tests 2–16 or the batch) at the prices `raw` measured; `None` for another metric, or if
    /// the backend, its reference or a summary is missing, a timed case (or the batch) has no
    /// counters, or the raw suite has neither commit series. Without the bulk series the
    /// floor has no byte term (flushes only, as before 2026-12-05).
    pub fn of(sql: &SqlSection, raw: &RawSuite, backend: &str, metric: Metric) -> Option<Self> {
        let b = sql.backend(backend)?;
        let summary = b.summary.as_ref()?;
        let reference = sql.reference_of(&b.meta)?.summary.as_ref()?;
        // Every case timed must have been counted: a case without counters is unknown, not 0.
        let cases = |first: u32, field: fn(&PhysicalCounters) -> u64| {
            let cases: Vec<_> = summary
                .cases_ms
                .iter()
                .filter(|c| c.number >= first)
                .collect();
            if cases.is_empty() {
                return None;
            }
            cases
                .iter()
                .map(|c| c.counters.as_ref().map(field))
                .sum::<Option<u64>>()
        };
        let flushes = |k: &PhysicalCounters| k.flushes;
        let bytes = |k: &PhysicalCounters| k.bytes_written;
        let flushed = |k: &PhysicalCounters| k.flushed_bytes;
        let (flushes, bytes, flushed, reference_ms) = match metric {
            Metric::Total => (
                cases(1, flushes)?,
                cases(1, bytes),
                cases(1, flushed),
                reference.total_ms?.median,
            ),
            Metric::Tests2To16 => (
                cases(2, flushes)?,
                cases(2, bytes),
                cases(2, flushed),
                reference.tests_2_to_16_ms?.median,
            ),
            Metric::Batch => {
                let k = summary.batch_counters?;
                (
                    k.flushes,
                    Some(k.bytes_written),
                    Some(k.flushed_bytes),
                    reference.batch_ms?.median,
                )
            }
            _ => return None,
        };
        let (series, call_us, pair_bytes) = [COMMIT_SERIES, COMMIT_SERIES_OVERWRITE]
            .into_iter()
            .filter_map(|name| {
                let s = raw.series_summary(name)?;
                Some((name, s.mean_us?.median, s.bytes_per_call))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))?;
        if !(reference_ms > 0.0 && call_us.is_finite() && call_us >= 0.0) {
            return None;
        }
        // Counts stay far below 2^53: exact as f64.
        let mut floor_ms = flushes as f64 * call_us / 1000.0;
        let (bytes, flushed_bytes, write_us_per_mib, flush_us_per_mib) =
            match (bytes, flushed, bulk_prices(raw)) {
                (Some(b), Some(d), Some((w, f))) => {
                    // The F pairs priced above wrote and flushed their bytes already.
                    let paid = flushes.saturating_mul(u64::from(pair_bytes));
                    floor_ms += b.saturating_sub(paid) as f64 / MIB * w / 1000.0;
                    floor_ms += d.saturating_sub(paid) as f64 / MIB * f / 1000.0;
                    (Some(b), Some(d), Some(w), Some(f))
                }
                _ => (None, None, None, None),
            };
        Some(Self {
            flushes,
            series: series.to_owned(),
            call_us,
            bytes,
            flushed_bytes,
            write_us_per_mib,
            flush_us_per_mib,
            floor_ms,
            reference_ms,
            ratio: (reference_ms + floor_ms) / reference_ms,
        })
    }
}

/// Whether checks of goal `id` carry a [`PhysicalFloor`]: the goals of ours against the memory
/// reference.
pub fn has_floor(id: &str) -> bool {
    GOALS
        .iter()
        .any(|g| g.id == id && matches!(g.subject, Subject::OursVsReference(_)))
}

/// Sets the floor of every check of `sql` that should have one ([`has_floor`]) and has none,
/// from `raw` (the same document's raw suite). Checks that already carry one keep it
/// (computed once).
pub fn fill_floors(sql: &mut SqlSection, raw: &RawSuite) {
    let floors: Vec<Option<PhysicalFloor>> = sql
        .goals
        .iter()
        .map(|g| match &g.floor {
            None if has_floor(&g.goal) => PhysicalFloor::of(sql, raw, &g.backend, g.metric),
            f => f.clone(),
        })
        .collect();
    for (g, f) in sql.goals.iter_mut().zip(floors) {
        g.floor = f;
    }
}

/// One goal checked on one pair of backends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalCheck {
    /// [`Goal::id`].
    pub goal: String,
    /// The numerator backend.
    pub backend: String,
    /// The denominator backend.
    pub versus: String,
    /// The quantity.
    pub metric: Metric,
    /// The case, for [`Metric::Case`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case: Option<u32>,
    /// Side.
    pub bound: Bound,
    /// Threshold.
    pub threshold: f64,
    /// In words: `ours-disk-balanced ÷ sqlite-memvfs, 16-case total ≤ 1.05`.
    pub statement: String,
    /// The paired ratio (`None`: no round in which both ran).
    pub ratio: Option<RatioStat>,
    /// [`verdict`] of it.
    pub verdict: Verdict,
    /// The physical floor of the ratio (goals of ours against the memory reference, where the
    /// document has the raw suite; [`PhysicalFloor`]). Added within version 2: absent in older documents, filled
    /// when they are loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<PhysicalFloor>,
}

impl GoalCheck {
    /// Whether the floor alone is on the wrong side of a `≤` threshold: the goal is out of
    /// reach at the flush cost this run measured. Says nothing about the verdict, which the
    /// interval decides.
    pub fn floor_out_of_reach(&self) -> bool {
        self.bound == Bound::AtMost
            && self
                .floor
                .as_ref()
                .is_some_and(|f| f.ratio > self.threshold)
    }
}

fn check(
    goal: &Goal,
    a: &SqlBackendResult,
    b: &SqlBackendResult,
    case: Option<u32>,
    ratio: Option<RatioStat>,
) -> GoalCheck {
    let sign = match goal.bound {
        Bound::AtMost => "≤",
        Bound::Above => ">",
    };
    GoalCheck {
        goal: goal.id.to_owned(),
        backend: a.meta.name.clone(),
        versus: b.meta.name.clone(),
        metric: goal.metric,
        case,
        bound: goal.bound,
        threshold: goal.threshold,
        statement: format!(
            "{} ÷ {}, {} {sign} {:.2}",
            a.meta.name,
            b.meta.name,
            goal.metric.label(case),
            goal.threshold
        ),
        verdict: verdict(ratio.as_ref(), goal.bound, goal.threshold),
        ratio,
        floor: None,
    }
}

/// Every goal that applies to the backends of `sql` that ran, in [`GOALS`] order. Ratios to
/// the memory reference are taken from each backend's `ratios` (so [`SqlSection::summarize`]
/// must have filled them); the others are paired here. No floors: they need the raw suite
/// ([`fill_floors`], run by [`crate::Document::summarize`]).
pub fn check_sql(sql: &SqlSection, boot: &Bootstrap) -> Vec<GoalCheck> {
    let ran = |b: &&SqlBackendResult| !b.runs.is_empty();
    let loads = sql.loads();
    let mut out = Vec::new();
    for goal in &GOALS {
        match goal.subject {
            Subject::OursVsReference(suffix) => {
                for b in sql.backends.iter().filter(ran) {
                    if !b.meta.is_ours() || !b.meta.name.ends_with(suffix) {
                        continue;
                    }
                    let Some(r) = sql.reference_of(&b.meta) else {
                        continue;
                    };
                    let ratio = b
                        .ratios
                        .as_ref()
                        .and_then(|x| x.get(goal.metric, None))
                        .copied();
                    out.push(check(goal, b, r, None, ratio));
                }
            }
            Subject::MemoryVsDisk => {
                for m in sql.backends.iter().filter(ran) {
                    let Some(level) = m.meta.name.strip_prefix("ours-memory-") else {
                        continue;
                    };
                    let Some(d) = sql.backend(&format!("ours-disk-{level}")).filter(ran) else {
                        continue;
                    };
                    let ratio = pair(m, d, goal.metric, None, &loads, boot);
                    out.push(check(goal, m, d, None, ratio));
                }
            }
            Subject::SharedVsExclusive | Subject::PatchesVsWholePages | Subject::AheadVsInline => {
                let suffix = match goal.subject {
                    Subject::SharedVsExclusive => EXCLUSIVE_SUFFIX,
                    Subject::PatchesVsWholePages => WHOLE_PAGES_SUFFIX,
                    _ => NO_FLUSH_AHEAD_SUFFIX,
                };
                for x in sql.backends.iter().filter(ran) {
                    let Some(base) = x.meta.name.strip_suffix(suffix) else {
                        continue;
                    };
                    if !x.meta.is_ours() {
                        continue;
                    }
                    let Some(b) = sql.backend(base).filter(ran) else {
                        continue;
                    };
                    let ratio = pair(b, x, goal.metric, None, &loads, boot);
                    out.push(check(goal, b, x, None, ratio));
                }
            }
            // Not about the SQL section: see check_handoff.
            Subject::HandoffVsFloor => {}
            Subject::PeersVsOursStrict => {
                let strict: Vec<&SqlBackendResult> = sql
                    .backends
                    .iter()
                    .filter(ran)
                    .filter(|b| b.meta.is_ours() && b.meta.name.ends_with("-strict"))
                    .collect();
                for p in sql.backends.iter().filter(ran) {
                    if !p.meta.is_peer() || !p.meta.persistent {
                        continue;
                    }
                    for s in &strict {
                        for n in sql.case_numbers() {
                            let ratio = pair(p, s, Metric::Case, Some(n), &loads, boot);
                            out.push(check(goal, p, s, Some(n), ratio));
                        }
                    }
                }
            }
        }
    }
    out
}

/// The `handoff-floor` goal on each workload of a hand-off summary that has a ratio to the
/// floor, in the summary's order.
pub fn check_handoff(summary: &HandoffSummary) -> Vec<GoalCheck> {
    let mut out = Vec::new();
    for goal in GOALS
        .iter()
        .filter(|g| g.subject == Subject::HandoffVsFloor)
    {
        for w in &summary.workloads {
            let ratio = w.ratio_to_floor;
            out.push(GoalCheck {
                goal: goal.id.to_owned(),
                backend: w.workload.clone(),
                versus: crate::handoff::FLOOR.to_owned(),
                metric: goal.metric,
                case: None,
                bound: goal.bound,
                threshold: goal.threshold,
                statement: format!(
                    "{} hand-off ÷ closing and reopening two access handles ≤ {:.2}",
                    w.workload, goal.threshold
                ),
                verdict: verdict(ratio.as_ref(), goal.bound, goal.threshold),
                ratio,
                floor: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::{CallSeries, RawRun};
    use crate::sql::{BackendMeta, BatchRun, CaseSample, RunSample, SuiteRun};

    fn r(lo: f64, hi: f64) -> RatioStat {
        RatioStat {
            median: (lo + hi) / 2.0,
            lo: Some(lo),
            hi: Some(hi),
            min: lo,
            max: hi,
            n: 10,
            loads: None,
        }
    }

    #[test]
    fn verdicts_need_the_whole_interval() {
        use Bound::*;
        use Verdict::*;
        assert_eq!(verdict(Some(&r(0.98, 1.04)), AtMost, 1.05), Met);
        assert_eq!(
            verdict(Some(&r(0.98, 1.05)), AtMost, 1.05),
            Met,
            "≤ includes t"
        );
        assert_eq!(verdict(Some(&r(1.01, 1.07)), AtMost, 1.05), Undecided);
        assert_eq!(verdict(Some(&r(1.06, 1.09)), AtMost, 1.05), NotMet);
        assert_eq!(verdict(Some(&r(1.05, 1.09)), AtMost, 1.05), Undecided);
        assert_eq!(verdict(Some(&r(1.2, 3.0)), Above, 1.0), Met);
        assert_eq!(verdict(Some(&r(0.9, 1.1)), Above, 1.0), Undecided);
        assert_eq!(verdict(Some(&r(0.5, 1.0)), Above, 1.0), NotMet);
        let no_interval = RatioStat {
            lo: None,
            hi: None,
            ..r(1.0, 1.0)
        };
        assert_eq!(verdict(Some(&no_interval), AtMost, 2.0), Undecided);
        assert_eq!(verdict(None, AtMost, 2.0), Undecided);
    }

    /// A SQL backend whose runs have two cases: `ms[i]` per run (case 1 takes all of it,
    /// case 2 nothing) and, if given, `flushes[i]` = (case 1, case 2) per run.
    fn backend(
        name: &str,
        persistent: bool,
        ms: &[f64],
        flushes: &[(u64, u64)],
    ) -> SqlBackendResult {
        let runs = ms
            .iter()
            .enumerate()
            .map(|(i, &ms)| {
                let counted = |n: usize| {
                    flushes.get(i).map(|f| PhysicalCounters {
                        flushes: [f.0, f.1][n],
                        ..PhysicalCounters::default()
                    })
                };
                let cases = vec![
                    CaseSample {
                        number: 1,
                        ms,
                        counters: counted(0),
                    },
                    CaseSample {
                        number: 2,
                        ms: 0.0,
                        counters: counted(1),
                    },
                ];
                RunSample {
                    round: Some(u32::try_from(i).unwrap()),
                    suite: Some(SuiteRun::from_cases(Default::default(), cases)),
                    batch: None,
                }
            })
            .collect();
        SqlBackendResult {
            meta: BackendMeta {
                name: name.to_owned(),
                reference: Some("sqlite-memvfs".to_owned()),
                durability: String::new(),
                persistent,
                ..BackendMeta::default()
            },
            runs,
            ..SqlBackendResult::default()
        }
    }

    /// Three raw runs whose `append+flush` means are 400, 600 and 500 µs per call.
    fn raw() -> RawSuite {
        let run = |us: f64| RawRun {
            series: vec![CallSeries::new(
                COMMIT_SERIES,
                4096,
                2 * 4096,
                vec![us - 100.0, us + 100.0],
            )
            .unwrap()],
        };
        RawSuite {
            warmup_runs: vec![run(9000.0)],
            runs: vec![run(400.0), run(600.0), run(500.0)],
            ..RawSuite::default()
        }
    }

    fn section() -> SqlSection {
        let mut sql = SqlSection {
            backends: vec![
                backend("sqlite-memvfs", false, &[1900.0, 2100.0, 2000.0], &[]),
                backend(
                    "ours-disk-strict",
                    true,
                    &[2600.0, 2700.0, 2800.0],
                    &[(1000, 3), (1002, 1), (1001, 2)],
                ),
                // Counted in runs 1 and 2 only: its case medians still exist.
                backend(
                    "ours-memory-strict",
                    true,
                    &[2600.0, 2700.0, 2800.0],
                    &[(1001, 0), (1001, 0)],
                ),
                // Not counted at all: no floor.
                backend("ours-disk-balanced", true, &[2000.0, 2000.0, 2000.0], &[]),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        sql
    }

    #[test]
    fn the_strict_floor_from_a_hand_built_run() {
        let mut sql = section();
        let raw = raw();
        fill_floors(&mut sql, &raw);
        let strict: Vec<&GoalCheck> = sql
            .goals
            .iter()
            .filter(|g| g.goal == TOTAL_STRICT)
            .collect();
        assert_eq!(strict.len(), 2);
        // F: case 1's lower median of 1000, 1002, 1001 is 1001, case 2's of 3, 1, 2 is 2.
        // c: the median of the runs' means 400, 600, 500 µs (warm-up excluded).
        // R: the reference's median total of 1900, 2100, 2000 ms.
        // floor = 1003 × 500 µs = 501.5 ms; ratio = (2000 + 501.5) / 2000 = 1.25075.
        let disk = strict[0].floor.as_ref().unwrap();
        assert_eq!(strict[0].backend, "ours-disk-strict");
        assert_eq!(
            (disk.flushes, disk.call_us, disk.reference_ms),
            (1003, 500.0, 2000.0)
        );
        assert_eq!(disk.series, "append+flush");
        assert!((disk.floor_ms - 501.5).abs() < 1e-9, "{disk:?}");
        assert!((disk.ratio - 1.25075).abs() < 1e-12, "{disk:?}");
        assert!(strict[0].floor_out_of_reach(), "1.25075 > 1.25");
        // ours-memory-strict: lower median of (1001, 1001) and (0, 0): F = 1001;
        // (2000 + 500.5) / 2000 = 1.25025, also above 1.25.
        let memory = strict[1].floor.as_ref().unwrap();
        assert_eq!(memory.flushes, 1001);
        assert!((memory.ratio - 1.25025).abs() < 1e-12, "{memory:?}");
        // Only total-strict checks get one here (case 2 takes 0 ms: tests 2–16 have no
        // reference time; no batch ran), and the verdict stays the interval's (three rounds: no
        // interval, undecided).
        for g in &sql.goals {
            assert_eq!(g.floor.is_some(), g.goal == TOTAL_STRICT, "{}", g.statement);
            assert_eq!(g.verdict, verdict(g.ratio.as_ref(), g.bound, g.threshold));
        }
        assert_eq!(strict[0].verdict, Verdict::Undecided);
        // A backend without counters has none; nor has a raw suite without the series.
        assert_eq!(
            PhysicalFloor::of(&sql, &raw, "ours-disk-balanced", Metric::Total),
            None
        );
        assert_eq!(
            PhysicalFloor::of(
                &sql,
                &RawSuite::default(),
                "ours-disk-strict",
                Metric::Total
            ),
            None
        );
        // Nor has a metric outside the spans of ours against the reference.
        assert_eq!(
            PhysicalFloor::of(&sql, &raw, "ours-disk-strict", Metric::Test1),
            None
        );

        // A cheaper flush brings the floor under the threshold.
        let mut cheap = raw.clone();
        for r in &mut cheap.runs {
            r.series[0] = CallSeries::new(COMMIT_SERIES, 4096, 4096, vec![250.0]).unwrap();
        }
        let mut sql = section();
        fill_floors(&mut sql, &cheap);
        let g = sql.goals.iter().find(|g| g.goal == TOTAL_STRICT).unwrap();
        // (2000 + 1003 × 0.25) / 2000 = 1.125375.
        assert!((g.floor.as_ref().unwrap().ratio - 1.125375).abs() < 1e-12);
        assert!(!g.floor_out_of_reach());
        // Filling again keeps what is there.
        let before = g.floor.clone();
        fill_floors(&mut sql, &raw);
        let again = sql.goals.iter().find(|g| g.goal == TOTAL_STRICT).unwrap();
        assert_eq!(again.floor, before);
    }

    /// The byte term: where the raw suite timed the flush after its 1 MiB appends, the bytes a
    /// backend wrote beyond the 4 KiB of each flush pair are priced at the 1 MiB write and the
    /// flush of what it wrote; without that series the floor is the flushes alone.
    #[test]
    fn the_byte_term_prices_the_bytes_beyond_the_pairs() {
        const MIB_U: u64 = 1 << 20;
        let with_bytes = |mut b: SqlBackendResult, bytes: [u64; 2]| {
            for r in &mut b.runs {
                let s = r.suite.as_mut().unwrap();
                for (c, n) in s.cases.iter_mut().zip(bytes) {
                    let k = c.counters.as_mut().unwrap();
                    (k.bytes_written, k.flushed_bytes) = (n, n);
                }
            }
            b
        };
        let mut sql = SqlSection {
            backends: vec![
                backend("sqlite-memvfs", false, &[2000.0; 3], &[]),
                with_bytes(
                    backend("ours-disk-strict", true, &[2600.0; 3], &[(1000, 2); 3]),
                    [1000 * 4096 + 3 * MIB_U, MIB_U],
                ),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        let bulk = |us: f64| RawRun {
            series: vec![
                CallSeries::new(COMMIT_SERIES, 4096, 2 * 4096, vec![us - 100.0, us + 100.0])
                    .unwrap(),
                // 8 MiB in 8 calls of 400 µs: 400 µs per MiB written.
                CallSeries::new(BULK_SERIES, 1 << 20, 8 * MIB_U, vec![400.0; 8]).unwrap(),
                // Their flush, 2,600 µs, less a small flush of 200 µs: 300 µs per MiB.
                CallSeries::new(BULK_FLUSH_SERIES, 0, 0, vec![2600.0]).unwrap(),
                CallSeries::new("append+flush: flush", 0, 0, vec![200.0; 2]).unwrap(),
            ],
        };
        let raw = RawSuite {
            runs: vec![bulk(400.0), bulk(600.0), bulk(500.0)],
            ..RawSuite::default()
        };
        let f = PhysicalFloor::of(&sql, &raw, "ours-disk-strict", Metric::Total).unwrap();
        // F = 1,002 flushes × 500 µs = 501 ms. B = 1,000 × 4 KiB + 4 MiB; beyond the pairs'
        // 1,002 × 4 KiB: 4 MiB − 8 KiB = 3.9921875 MiB × (400 + 300) µs = 2.79453125 ms.
        assert_eq!(f.flushes, 1002);
        assert_eq!(f.bytes, Some(1000 * 4096 + 4 * MIB_U));
        assert_eq!(f.flushed_bytes, Some(1000 * 4096 + 4 * MIB_U));
        assert_eq!(f.write_us_per_mib, Some(400.0));
        assert_eq!(f.flush_us_per_mib, Some(300.0));
        assert!((f.floor_ms - 503.794_531_25).abs() < 1e-9, "{f:?}");
        assert!((f.ratio - 2_503.794_531_25 / 2000.0).abs() < 1e-12, "{f:?}");
        // Without the flush after the bulk appends: the flushes alone, no byte fields.
        let mut old = raw.clone();
        for r in &mut old.runs {
            r.series.retain(|s| s.name != BULK_FLUSH_SERIES);
        }
        let f = PhysicalFloor::of(&sql, &old, "ours-disk-strict", Metric::Total).unwrap();
        assert_eq!(
            (
                f.bytes,
                f.flushed_bytes,
                f.write_us_per_mib,
                f.flush_us_per_mib
            ),
            (None, None, None, None)
        );
        assert!((f.floor_ms - 501.0).abs() < 1e-9, "{f:?}");
        // And a document without the byte fields still loads.
        let json = serde_json::to_string(&f).unwrap();
        assert!(!json.contains("bytes"), "{json}");
        assert_eq!(serde_json::from_str::<PhysicalFloor>(&json).unwrap(), f);
    }

    /// The batch and tests 2–16 get floors of their own span: the batch's one flush against
    /// the reference's batch, case 2's flushes against the reference's cases 2–16.
    #[test]
    fn the_batch_and_tests_2_to_16_floors_count_their_own_flushes() {
        let with_batch = |mut b: SqlBackendResult, ms: f64, flushes: Option<u64>| {
            for r in &mut b.runs {
                let s = r.suite.as_mut().unwrap();
                s.cases[1].ms = 100.0;
                s.total_ms += 100.0;
                r.batch = Some(BatchRun {
                    ms,
                    counters: flushes.map(|f| PhysicalCounters {
                        flushes: f,
                        ..PhysicalCounters::default()
                    }),
                    ..BatchRun::default()
                });
            }
            b
        };
        let mut sql = SqlSection {
            backends: vec![
                with_batch(
                    backend("sqlite-memvfs", false, &[2000.0; 3], &[]),
                    4.0,
                    None,
                ),
                with_batch(
                    backend("ours-disk-strict", true, &[2600.0; 3], &[(1000, 16); 3]),
                    4.5,
                    Some(1),
                ),
                // Batch not counted: no batch floor; cases counted: the others.
                with_batch(
                    backend("ours-disk-balanced", true, &[2000.0; 3], &[(2, 1); 3]),
                    4.0,
                    None,
                ),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        fill_floors(&mut sql, &raw());
        let floor = |goal: &str, backend: &str| {
            let g = sql
                .goals
                .iter()
                .find(|g| g.goal == goal && g.backend == backend)
                .unwrap_or_else(|| panic!("{goal} {backend}"));
            (g.floor.clone(), g.floor_out_of_reach())
        };
        // Batch: 1 flush × 500 µs on a 4 ms reference batch: 1.125 > 1.10.
        let (b, out) = floor("batch", "ours-disk-strict");
        let b = b.unwrap();
        assert_eq!((b.flushes, b.reference_ms), (1, 4.0));
        assert!((b.ratio - 1.125).abs() < 1e-12, "{b:?}");
        assert!(out);
        // Tests 2–16: case 2's 16 flushes × 500 µs = 8 ms on 100 ms: 1.08 > 1.02.
        let (t, out) = floor("tests-2-16", "ours-disk-strict");
        let t = t.unwrap();
        assert_eq!((t.flushes, t.reference_ms), (16, 100.0));
        assert!((t.ratio - 1.08).abs() < 1e-12, "{t:?}");
        assert!(out);
        // The 16-case total: 1,016 flushes on 2,100 ms.
        let (s, _) = floor("total-strict", "ours-disk-strict");
        assert_eq!(s.unwrap().flushes, 1016);
        // Balanced: 3 flushes in the total, 1 in cases 2–16; its batch is not counted.
        let (bt, out) = floor("total-balanced", "ours-disk-balanced");
        assert_eq!(bt.unwrap().flushes, 3);
        assert!(!out, "(2100 + 1.5) / 2100 < 1.05");
        assert_eq!(
            floor("tests-2-16", "ours-disk-balanced").0.unwrap().flushes,
            1
        );
        assert_eq!(floor("batch", "ours-disk-balanced").0, None);
        // No floor outside ours-versus-reference goals.
        assert!(sql
            .goals
            .iter()
            .filter(|g| !has_floor(&g.goal))
            .all(|g| g.floor.is_none()));
    }

    /// `sharing-single-tab`: each `ours-X-exclusive` pairs with its `ours-X`, in that order;
    /// nothing else does, and the exclusive references are outside the strict and peer goals.
    #[test]
    fn the_sharing_goal_pairs_each_exclusive_reference_with_its_base() {
        let shared = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0, 1002.0, 998.0];
        let excl = [990.0, 1000.0, 985.0, 1000.0, 990.0, 995.0, 1000.0, 990.0];
        let mut sql = SqlSection {
            backends: vec![
                backend("sqlite-memvfs", false, &shared, &[]),
                backend("ours-memory-strict", true, &shared, &[]),
                backend("ours-memory-strict-exclusive", true, &excl, &[]),
                // No base: no check.
                backend("ours-disk-relaxed-exclusive", true, &excl, &[]),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        let sharing: Vec<&GoalCheck> = sql
            .goals
            .iter()
            .filter(|g| g.goal == "sharing-single-tab")
            .collect();
        assert_eq!(sharing.len(), 1, "{sharing:?}");
        let g = sharing[0];
        assert_eq!(
            (g.backend.as_str(), g.versus.as_str()),
            ("ours-memory-strict", "ours-memory-strict-exclusive")
        );
        let ratio = g.ratio.as_ref().expect("paired over 8 rounds");
        assert!(ratio.median > 1.0 && ratio.median < 1.02, "{ratio:?}");
        assert!(sql
            .goals
            .iter()
            .filter(|g| g.goal == TOTAL_STRICT)
            .all(|g| !g.backend.ends_with(EXCLUSIVE_SUFFIX)));
    }

    /// `patches`: each `ours-X-whole-pages` pairs with its `ours-X`, in that order; the
    /// references stay outside the strict total and peer goals.
    #[test]
    fn the_patches_goal_pairs_each_whole_pages_reference_with_its_base() {
        let patched = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0, 1002.0, 998.0];
        let whole = [
            1040.0, 1050.0, 1035.0, 1040.0, 1030.0, 1045.0, 1040.0, 1040.0,
        ];
        let mut sql = SqlSection {
            backends: vec![
                backend("sqlite-memvfs", false, &patched, &[]),
                backend("ours-disk-strict", true, &patched, &[]),
                backend("ours-disk-strict-whole-pages", true, &whole, &[]),
                backend("ours-memory-strict-exclusive", true, &whole, &[]),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        let patches: Vec<&GoalCheck> = sql.goals.iter().filter(|g| g.goal == "patches").collect();
        assert_eq!(patches.len(), 1, "{patches:?}");
        let g = patches[0];
        assert_eq!(
            (g.backend.as_str(), g.versus.as_str()),
            ("ours-disk-strict", "ours-disk-strict-whole-pages")
        );
        let ratio = g.ratio.as_ref().expect("paired over 8 rounds");
        assert!(ratio.median > 0.95 && ratio.median < 0.97, "{ratio:?}");
        assert_eq!(g.verdict, Verdict::Met);
        assert!(sql
            .goals
            .iter()
            .filter(|g| g.goal == TOTAL_STRICT || g.goal == "peer-per-case")
            .all(|g| !g.backend.ends_with(WHOLE_PAGES_SUFFIX)));
    }

    /// `flush-ahead`: each `ours-X-no-flush-ahead` pairs with its `ours-X`, in that order, on
    /// the 16-case total; a reference without its base has no check, and the references stay
    /// outside the Balanced total goal.
    #[test]
    fn the_flush_ahead_goal_pairs_each_inline_reference_with_its_base() {
        let ahead = [1000.0, 1010.0, 990.0, 1005.0, 995.0, 1000.0, 1002.0, 998.0];
        let inline = [
            1020.0, 1032.0, 1008.0, 1026.0, 1016.0, 1018.0, 1024.0, 1020.0,
        ];
        let mut sql = SqlSection {
            backends: vec![
                backend("sqlite-memvfs", false, &ahead, &[]),
                backend("ours-memory-balanced", true, &ahead, &[]),
                backend("ours-memory-balanced-no-flush-ahead", true, &inline, &[]),
                // No base: no check.
                backend("ours-disk-balanced-no-flush-ahead", true, &inline, &[]),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        let ahead: Vec<&GoalCheck> = sql
            .goals
            .iter()
            .filter(|g| g.goal == "flush-ahead")
            .collect();
        assert_eq!(ahead.len(), 1, "{ahead:?}");
        let g = ahead[0];
        assert_eq!(
            (g.backend.as_str(), g.versus.as_str()),
            (
                "ours-memory-balanced",
                "ours-memory-balanced-no-flush-ahead"
            )
        );
        let ratio = g.ratio.as_ref().expect("paired over 8 rounds");
        assert!(ratio.median > 0.97 && ratio.median < 0.99, "{ratio:?}");
        assert_eq!(g.verdict, Verdict::Met);
        assert!(sql
            .goals
            .iter()
            .filter(|g| g.goal == "total-balanced")
            .all(|g| !g.backend.ends_with(NO_FLUSH_AHEAD_SUFFIX)));
    }

    #[test]
    fn no_raw_suite_no_floor() {
        use crate::config::{RunConfig, Suite};
        let config = RunConfig {
            preset: "test".to_owned(),
            suites: vec![Suite::Sql],
            runs: 3,
            seed: 1,
            sql_scale: 1,
            ..RunConfig::default()
        };
        let mut doc = crate::Document::new(String::new(), config, crate::Environment::default());
        doc.sql = Some(section());
        doc.summarize(&Bootstrap::default());
        let sql = doc.sql.as_ref().unwrap();
        assert!(sql.goals.iter().any(|g| g.goal == TOTAL_STRICT));
        assert!(sql
            .goals
            .iter()
            .all(|g| g.floor.is_none() && !g.floor_out_of_reach()));

        // With the raw suite: summarizing gives the floor, and a document saved without it
        // (an older summary) gets it on load.
        doc.raw = Some(raw());
        doc.summarize(&Bootstrap::default());
        let with = doc.sql.as_ref().unwrap().goals.clone();
        assert_eq!(with.iter().filter(|g| g.floor.is_some()).count(), 2);
        let mut old = serde_json::to_value(&doc).unwrap();
        for g in old["sql"]["goals"].as_array_mut().unwrap() {
            g.as_object_mut().unwrap().remove("floor");
        }
        let loaded = crate::Document::from_value(old).unwrap();
        assert_eq!(loaded.sql.unwrap().goals, with);
    }
}
