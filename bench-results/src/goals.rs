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
//! | `peer-per-case` | every persistent peer P, versus each `ours-*-strict` S | case c of P ÷ case c of S, each of the 16 cases | > 1 |
//! | `handoff-floor` | each hand-off workload (`two-writers`, `writer-reader`) | ms per hand-off ÷ ms to close and reopen the two access handles, same round | ≤ 2.00 |
//!
//! "Memory reference" is the backend's [`crate::sql::BackendMeta::reference`]. The peer goal
//! compares with our strictest level (a commit flushed before it returns), the least
//! favourable of ours: any peer that loses to it loses to every level of ours.

use serde::{Deserialize, Serialize};

use crate::handoff::HandoffSummary;
use crate::sql::{SqlBackendResult, SqlSection};
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
pub const GOALS: [Goal; 7] = [
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
    }
}

/// Every goal that applies to the backends of `sql` that ran, in [`GOALS`] order. Ratios to
/// the memory reference are taken from each backend's `ratios` (so [`SqlSection::summarize`]
/// must have filled them); the others are paired here.
pub fn check_sql(sql: &SqlSection, boot: &Bootstrap) -> Vec<GoalCheck> {
    let ran = |b: &&SqlBackendResult| !b.runs.is_empty();
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
                    let ratio = pair(m, d, goal.metric, None, boot);
                    out.push(check(goal, m, d, None, ratio));
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
                            let ratio = pair(p, s, Metric::Case, Some(n), boot);
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
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(lo: f64, hi: f64) -> RatioStat {
        RatioStat {
            median: (lo + hi) / 2.0,
            lo: Some(lo),
            hi: Some(hi),
            min: lo,
            max: hi,
            n: 10,
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
}
