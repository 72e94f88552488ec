//! Summaries of the SQL section: per backend the medians and ranges of the measured runs
//! ([`BackendSummary`]) and the paired ratios to its memory reference with bootstrap
//! intervals ([`RatioSummary`]); ranks among the persistent backends.
//!
//! Computed by [`SqlSection::summarize`], once, by whoever produced the section (the page's
//! worker, a native runner) or, for documents older than these fields, when they are loaded
//! ([`crate::Document::from_json`]). Readers only display them.

use serde::{Deserialize, Serialize};

use crate::sql::{Phases, PhysicalCounters, RoundLoads, RunSample, SqlBackendResult, SqlSection};
use crate::stats::{paired_ratios_keyed, Bootstrap, RatioStat, Stat};

/// A quantity measured once per run, that summaries, ratios and goals are about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// The 16-case total.
    Total,
    /// Case 1 alone (1,000 autocommit INSERTs: the commit cost).
    Test1,
    /// Cases 2 to 16 (the total minus case 1, per run).
    Tests2To16,
    /// The batch transaction.
    Batch,
    /// One case (its number beside it).
    Case,
    /// Ms per hand-off of the hand-off suite ([`crate::handoff`]; not a quantity of a SQL run).
    Handoff,
    /// A measure of the scale suite ([`crate::scale`]; not a quantity of a SQL run).
    Scale,
}

impl Metric {
    /// The value of this metric (case `case` for [`Metric::Case`]) in one run.
    pub fn of(self, run: &RunSample, case: Option<u32>) -> Option<f64> {
        let s = run.suite.as_ref();
        match self {
            Metric::Total => s.map(|s| s.total_ms),
            Metric::Test1 => s.map(|s| s.test1_ms),
            Metric::Tests2To16 => s.map(|s| s.total_ms - s.test1_ms),
            Metric::Batch => run.batch.as_ref().map(|b| b.ms),
            Metric::Case => s.and_then(|s| s.case_ms(case?)),
            Metric::Handoff | Metric::Scale => None,
        }
    }

    /// As printed: `16-case total`, `test 1`, `tests 2–16`, `batch`, `case N`.
    pub fn label(self, case: Option<u32>) -> String {
        match self {
            Metric::Total => "16-case total".to_owned(),
            Metric::Test1 => "test 1".to_owned(),
            Metric::Tests2To16 => "tests 2–16".to_owned(),
            Metric::Batch => "batch".to_owned(),
            Metric::Case => format!("case {}", case.unwrap_or(0)),
            Metric::Handoff => "ms per hand-off".to_owned(),
            Metric::Scale => "scale".to_owned(),
        }
    }
}

/// Statistics of one backend's measured runs (warm-up excluded).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Per-field lower median of the batch's physical calls, where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_counters: Option<PhysicalCounters>,
    /// Rank by median among the persistent backends that ran (1 = lowest; ties share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Ranks>,
}

/// Statistics of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseStat {
    /// 1 to 16.
    pub number: u32,
    /// Its times.
    pub ms: Option<Stat>,
    /// Per-field lower median of its physical calls, where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

/// Statistics of each phase (`None`: not applicable in any run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Preparation.
    pub prepare_ms: Option<Stat>,
    /// Initialization.
    pub init_ms: Option<Stat>,
    /// The later explicit sync.
    pub sync_ms: Option<Stat>,
    /// Close.
    pub close_ms: Option<Stat>,
    /// Reopen.
    pub reopen_ms: Option<Stat>,
    /// Verification.
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

/// Ranks of one backend's medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ranks {
    /// Of the 16-case total.
    pub total: Option<u32>,
    /// Of test 1.
    pub test1: Option<u32>,
    /// Of tests 2–16.
    pub tests_2_to_16: Option<u32>,
    /// Of the batch.
    pub batch: Option<u32>,
}

/// Paired ratios of one backend to its memory reference: per round, this backend's time ÷ the
/// reference's time in the same round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatioSummary {
    /// The reference's name.
    pub reference: String,
    /// The 16-case total.
    pub total: Option<RatioStat>,
    /// Test 1.
    pub test1: Option<RatioStat>,
    /// Tests 2–16.
    pub tests_2_to_16: Option<RatioStat>,
    /// The batch.
    pub batch: Option<RatioStat>,
    /// Per case, in order.
    pub cases: Vec<CaseRatio>,
}

/// One case's paired ratio.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseRatio {
    /// 1 to 16.
    pub number: u32,
    /// Its ratio.
    pub ratio: Option<RatioStat>,
}

impl RatioSummary {
    /// The ratio of `metric` (of case `case`).
    pub fn get(&self, metric: Metric, case: Option<u32>) -> Option<&RatioStat> {
        match metric {
            Metric::Total => self.total.as_ref(),
            Metric::Test1 => self.test1.as_ref(),
            Metric::Tests2To16 => self.tests_2_to_16.as_ref(),
            Metric::Batch => self.batch.as_ref(),
            Metric::Case => self
                .cases
                .iter()
                .find(|c| Some(c.number) == case)?
                .ratio
                .as_ref(),
            // A SQL backend has no hand-off ratio (the hand-off section has its own).
            Metric::Handoff | Metric::Scale => None,
        }
    }
}

/// Paired ratio of `a ÷ b` for `metric` over the rounds both ran, labelled for its bootstrap
/// stream; its interval resamples page loads, then rounds, when the rounds came from more than
/// one load (`loads`, [`SqlSection::loads`]).
pub fn pair(
    a: &SqlBackendResult,
    b: &SqlBackendResult,
    metric: Metric,
    case: Option<u32>,
    loads: &RoundLoads,
    boot: &Bootstrap,
) -> Option<RatioStat> {
    let va = a.keyed(|r| metric.of(r, case));
    let vb = b.keyed(|r| metric.of(r, case));
    let label = format!("{} / {} / {}", a.meta.name, b.meta.name, metric.label(case));
    RatioStat::of_loads(&loads.group(&paired_ratios_keyed(&va, &vb)), boot, &label)
}

impl SqlBackendResult {
    /// Statistics over the measured runs (warm-up excluded).
    pub fn summarize(&self, numbers: &[u32]) -> BackendSummary {
        let runs = &self.runs;
        let suites: Vec<_> = runs.iter().filter_map(|r| r.suite.as_ref()).collect();
        let batches: Vec<_> = runs.iter().filter_map(|r| r.batch.as_ref()).collect();
        let suite_phases: Vec<&Phases> = suites.iter().map(|s| &s.phases).collect();
        let batch_phases: Vec<&Phases> = batches.iter().map(|b| &b.phases).collect();
        let counters = |n: u32| {
            let v: Vec<PhysicalCounters> = suites
                .iter()
                .filter_map(|s| s.cases.iter().find(|c| c.number == n)?.counters)
                .collect();
            PhysicalCounters::median_of(&v)
        };
        let stat = |m: Metric, case: Option<u32>| Stat::over(runs, |r| m.of(r, case));
        BackendSummary {
            cases_ms: numbers
                .iter()
                .map(|&number| CaseStat {
                    number,
                    ms: stat(Metric::Case, Some(number)),
                    counters: counters(number),
                })
                .collect(),
            total_ms: stat(Metric::Total, None),
            test1_ms: stat(Metric::Test1, None),
            tests_2_to_16_ms: stat(Metric::Tests2To16, None),
            batch_ms: stat(Metric::Batch, None),
            suite_phases: PhaseStats::over(&suite_phases),
            batch_phases: PhaseStats::over(&batch_phases),
            batch_counters: PhysicalCounters::median_of(
                &batches
                    .iter()
                    .filter_map(|b| b.counters)
                    .collect::<Vec<_>>(),
            ),
            ranks: None,
        }
    }
}

/// Ranks (1-based) of `values` by ascending value; ties share a rank; `None` stays `None`.
pub fn ranks(values: &[Option<f64>]) -> Vec<Option<u32>> {
    values
        .iter()
        .map(|v| {
            let v = (*v)?;
            let below = values.iter().flatten().filter(|&&x| x < v).count();
            Some(u32::try_from(below).unwrap_or(u32::MAX).saturating_add(1))
        })
        .collect()
}

impl SqlSection {
    /// Case numbers: the suite's, else those of the first run that has a suite.
    pub fn case_numbers(&self) -> Vec<u32> {
        if !self.suite.cases.is_empty() {
            return self.suite.cases.iter().map(|c| c.number).collect();
        }
        self.backends
            .iter()
            .flat_map(|b| &b.runs)
            .find_map(|r| r.suite.as_ref())
            .map(|s| s.cases.iter().map(|c| c.number).collect())
            .unwrap_or_default()
    }

    /// Fills every backend's `summary` and `ratios`, and the goal checks, with intervals
    /// from `boot` (recorded as `bootstrap`).
    pub fn summarize(&mut self, boot: &Bootstrap) {
        let numbers = self.case_numbers();
        let loads = self.loads();
        let summaries: Vec<BackendSummary> = self
            .backends
            .iter()
            .map(|b| b.summarize(&numbers))
            .collect();
        let ratios: Vec<Option<RatioSummary>> = self
            .backends
            .iter()
            .map(|b| {
                let r = self.reference_of(&b.meta)?;
                if b.runs.is_empty() {
                    return None;
                }
                let p = |m: Metric, case: Option<u32>| pair(b, r, m, case, &loads, boot);
                Some(RatioSummary {
                    reference: r.meta.name.clone(),
                    total: p(Metric::Total, None),
                    test1: p(Metric::Test1, None),
                    tests_2_to_16: p(Metric::Tests2To16, None),
                    batch: p(Metric::Batch, None),
                    cases: numbers
                        .iter()
                        .map(|&n| CaseRatio {
                            number: n,
                            ratio: p(Metric::Case, Some(n)),
                        })
                        .collect(),
                })
            })
            .collect();
        // Ranks among persistent backends.
        let rank_of = |pick: fn(&BackendSummary) -> Option<Stat>| {
            let v: Vec<Option<f64>> = self
                .backends
                .iter()
                .zip(&summaries)
                .map(|(b, s)| {
                    b.meta
                        .persistent
                        .then(|| pick(s).map(|s| s.median))
                        .flatten()
                })
                .collect();
            ranks(&v)
        };
        let total = rank_of(|s| s.total_ms);
        let test1 = rank_of(|s| s.test1_ms);
        let rest = rank_of(|s| s.tests_2_to_16_ms);
        let batch = rank_of(|s| s.batch_ms);
        for (i, (b, (mut s, r))) in self
            .backends
            .iter_mut()
            .zip(summaries.into_iter().zip(ratios))
            .enumerate()
        {
            let ranked = Ranks {
                total: total[i],
                test1: test1[i],
                tests_2_to_16: rest[i],
                batch: batch[i],
            };
            s.ranks = (ranked != Ranks::default()).then_some(ranked);
            b.summary = Some(s);
            b.ratios = r;
        }
        self.bootstrap = Some(boot.clone());
        self.goals = crate::goals::check_sql(self, boot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{BackendMeta, CaseSample, SuiteRun};
    use crate::Bootstrap;

    /// A measured run in `round` whose 16-case total (one case) and batch take `ms`.
    fn run(round: u32, ms: f64) -> RunSample {
        RunSample {
            round: Some(round),
            suite: Some(SuiteRun::from_cases(
                Phases::default(),
                vec![CaseSample {
                    number: 1,
                    ms,
                    counters: None,
                }],
            )),
            batch: Some(crate::sql::BatchRun {
                ms,
                ..Default::default()
            }),
        }
    }

    fn backend(name: &str, runs: Vec<RunSample>) -> SqlBackendResult {
        SqlBackendResult {
            meta: BackendMeta {
                name: name.to_owned(),
                reference: Some("ref".to_owned()),
                durability: "none".to_owned(),
                persistent: name != "ref",
                ..BackendMeta::default()
            },
            runs,
            ..SqlBackendResult::default()
        }
    }

    /// A backend with fewer rounds than its reference (a JavaScript peer capped by
    /// `peer_runs`, or one that ran in scattered rounds) pairs each of its runs with the
    /// reference's run of the same round, not the one at the same position.
    #[test]
    fn ratios_pair_by_round_when_a_backend_has_fewer_rounds() {
        // The reference ran rounds 1..=10 (round 0 was the warm-up), each round slower than the
        // last; each backend takes exactly twice the reference's time of the rounds it ran in.
        let reference = |r: u32| 100.0 + 10.0 * f64::from(r);
        let twice = |rounds: &[u32]| rounds.iter().map(|&r| run(r, 2.0 * reference(r))).collect();
        let mut sql = SqlSection {
            backends: vec![
                backend("ref", (1..=10).map(|r| run(r, reference(r))).collect()),
                // The first six measured rounds, as `peer_runs = 6` gives.
                backend("capped", twice(&[1, 2, 3, 4, 5, 6])),
                // Not a prefix: position pairing would divide round 5's time by round 1's.
                backend("scattered", twice(&[5, 6, 7, 8, 9, 10])),
                // Listed out of order.
                backend("shuffled", twice(&[9, 2, 7, 4, 10, 6])),
            ],
            ..SqlSection::default()
        };
        sql.summarize(&Bootstrap::default());
        for name in ["capped", "scattered", "shuffled"] {
            let r = sql.backend(name).unwrap().ratios.clone().unwrap();
            assert_eq!(r.reference, "ref");
            for (what, stat) in [("total", r.total), ("batch", r.batch), ("test 1", r.test1)] {
                let stat = stat.unwrap();
                assert_eq!(stat.n, 6, "{name} {what}: one pair per round it ran");
                assert_eq!(
                    (stat.median, stat.min, stat.max, stat.lo, stat.hi),
                    (2.0, 2.0, 2.0, Some(2.0), Some(2.0)),
                    "{name} {what}"
                );
            }
        }
        // The same pairing in a direct comparison of two backends (as the goals use it).
        let (a, b) = (
            sql.backend("capped").unwrap(),
            sql.backend("scattered").unwrap(),
        );
        let both = pair(
            a,
            b,
            Metric::Total,
            None,
            &RoundLoads::default(),
            &Bootstrap::default(),
        )
        .unwrap();
        assert_eq!(both.n, 2, "rounds 5 and 6 only");
        assert_eq!(both.median, 1.0);
    }

    /// The A/A control is found by its suffix; a case whose interval lies off 1.00 counts
    /// as a false difference, one whose interval holds 1.00 does not.
    #[test]
    fn aa_control_counts_the_intervals_that_exclude_one() {
        let reference = |r: u32| 100.0 + 10.0 * f64::from(r);
        let times = |f: f64| (1..=12).map(|r| run(r, f * reference(r))).collect();
        let mut sql = SqlSection {
            backends: vec![backend("ref", times(1.0)), backend("ref-twin", times(1.0))],
            ..SqlSection::default()
        };
        assert_eq!(sql.aa_control(), None, "not summarized: no ratios");
        sql.summarize(&Bootstrap::default());
        let aa = sql.aa_control().unwrap();
        assert_eq!(aa.name, "ref-twin");
        assert_eq!(aa.total.unwrap().median, 1.0);
        assert_eq!(aa.case_medians, Some((1.0, 1.0)));
        assert_eq!((aa.cases_with_interval, aa.cases_excluding_one), (1, 0));
        // A twin 3 % slower in every round: its one case's interval lies above 1.00.
        sql.backends[1] = backend("ref-twin", times(1.03));
        sql.summarize(&Bootstrap::default());
        let aa = sql.aa_control().unwrap();
        assert_eq!((aa.cases_with_interval, aa.cases_excluding_one), (1, 1));
        // Without a twin there is no control.
        sql.backends.pop();
        assert_eq!(sql.aa_control(), None);
    }

    #[test]
    fn ranks_share_ties() {
        assert_eq!(
            ranks(&[Some(3.0), None, Some(1.0), Some(3.0), Some(2.0)]),
            vec![Some(3), None, Some(1), Some(3), Some(2)]
        );
        assert!(ranks(&[]).is_empty());
    }
}
