//! The time our backends spent inside their storage calls, split from the rest, per SQL case.
//!
//! Computed only for documents whose runs timed the calls (`RunConfig::call_timing`, the
//! runner's `--call-timing`): each case's counters then carry the nanoseconds spent inside the
//! volume's `read`/`write`/`flush`/size calls (OPFS in a browser). A case's time is then
//!
//! ```text
//! case ms = in calls + rest       rest: SQLite, the VFS and the engine, on the CPU
//! ```
//!
//! and the rest, paired per round with the reference's time of the same case, says how far our
//! CPU is from the reference's without the browser's storage prices in the way. The storage
//! share is measured in the same pass, so it is the floor of that pass, not of a separate raw
//! run. Timing costs two clock readings per call, on the measured side: the case is a little
//! slower and its rest a little larger than untimed (not measured apart; small next to an OPFS
//! call of 10–300 µs).

use std::collections::BTreeMap;

use crate::sql::{SqlBackendResult, SqlSection};
use crate::stats::{Bootstrap, RatioStat, Stat};

/// One span's split: median time inside the calls, and the rest ÷ the reference (paired per
/// round, with its interval over rounds, or over page loads then rounds where the section
/// combines several).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Split {
    /// Milliseconds inside storage calls, per round.
    pub in_calls_ms: Option<Stat>,
    /// Per round: (the span's time − its time inside calls) ÷ the reference's time of the span.
    pub rest_ratio: Option<RatioStat>,
    /// Per round: time inside calls ÷ the reference's time of the span (what the storage adds
    /// to the ratio).
    pub calls_ratio: Option<RatioStat>,
}

/// A backend's splits: each case, the 16-case total and tests 2–16.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallSplits {
    /// The backend.
    pub backend: String,
    /// Its reference (the backend its ratios are to).
    pub reference: String,
    /// Per case, in case order.
    pub cases: Vec<Split>,
    /// The 16 cases.
    pub total: Split,
    /// Tests 2–16.
    pub tests_2_to_16: Split,
}

/// Per round, a span's (ms, ms in calls) for one backend.
fn spans(b: &SqlBackendResult, pick: &dyn Fn(usize) -> bool) -> Vec<(u32, f64, f64)> {
    b.runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let s = r.suite.as_ref()?;
            let round = r.round.unwrap_or(u32::try_from(i).unwrap_or(u32::MAX));
            let (mut ms, mut ns) = (0.0, 0u64);
            let picked = s.cases.iter().enumerate().filter(|(k, _)| pick(*k));
            for c in picked.map(|(_, c)| c) {
                ms += c.ms;
                ns += c.counters.map_or(0, |c| c.call_ns());
            }
            Some((round, ms, ns as f64 / 1e6))
        })
        .collect()
}

/// The paired ratios of `ours` to `reference`, by round; grouped by the page load of each
/// round (`load_of`) when the section combines several, so that the interval resamples page
/// loads, then rounds, as the headline ratios do.
fn split(
    ours: &[(u32, f64, f64)],
    reference: &[(u32, f64, f64)],
    load_of: &dyn Fn(u32) -> u32,
    b: &Bootstrap,
    label: &str,
) -> Split {
    let mut rest: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut calls: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (round, ms, in_calls) in ours {
        if let Some((_, r, _)) = reference.iter().find(|(k, _, _)| k == round) {
            if *r > 0.0 {
                let load = load_of(*round);
                rest.entry(load).or_default().push((ms - in_calls) / r);
                calls.entry(load).or_default().push(in_calls / r);
            }
        }
    }
    let groups = |m: BTreeMap<u32, Vec<f64>>| m.into_values().collect::<Vec<_>>();
    let in_calls: Vec<f64> = ours.iter().map(|s| s.2).collect();
    Split {
        in_calls_ms: Stat::of(&in_calls),
        rest_ratio: RatioStat::of_loads(&groups(rest), b, &format!("{label}/rest")),
        calls_ratio: RatioStat::of_loads(&groups(calls), b, &format!("{label}/calls")),
    }
}

/// The splits of every backend whose cases carry timed calls, against its reference; empty if
/// no run timed its calls.
pub fn call_splits(sql: &SqlSection) -> Vec<CallSplits> {
    let b = sql.bootstrap.clone().unwrap_or_default();
    let cases = sql.suite.cases.len();
    // The page load of each round (0 where the section has one).
    let load_of = |round: u32| {
        sql.rounds
            .iter()
            .find(|r| r.index == round)
            .and_then(|r| r.load)
            .unwrap_or(0)
    };
    let mut out = Vec::new();
    for ours in &sql.backends {
        let timed = ours.runs.iter().any(|r| {
            r.suite.as_ref().is_some_and(|s| {
                s.cases
                    .iter()
                    .any(|c| c.counters.is_some_and(|c| c.call_ns() > 0))
            })
        });
        let Some(reference) = ours.meta.reference.as_deref() else {
            continue;
        };
        let Some(refb) = sql.backends.iter().find(|r| r.meta.name == reference) else {
            continue;
        };
        if !timed || refb.meta.name == ours.meta.name {
            continue;
        }
        let label = format!("calls/{}", ours.meta.name);
        let pair = |pick: &dyn Fn(usize) -> bool, what: &str| {
            split(
                &spans(ours, pick),
                &spans(refb, pick),
                &load_of,
                &b,
                &format!("{label}/{what}"),
            )
        };
        out.push(CallSplits {
            backend: ours.meta.name.clone(),
            reference: reference.to_owned(),
            cases: (0..cases)
                .map(|k| pair(&|i| i == k, &format!("case{}", k + 1)))
                .collect(),
            total: pair(&|_| true, "total"),
            tests_2_to_16: pair(&|i| i > 0, "tests2-16"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{BackendMeta, CaseInfo, CaseSample, PhysicalCounters, RunSample, SuiteRun};

    fn backend(
        name: &str,
        reference: Option<&str>,
        cases: &[(f64, u64)],
        rounds: u32,
    ) -> SqlBackendResult {
        SqlBackendResult {
            meta: BackendMeta {
                name: name.to_owned(),
                reference: reference.map(str::to_owned),
                ..BackendMeta::default()
            },
            runs: (0..rounds)
                .map(|round| RunSample {
                    round: Some(round),
                    suite: Some(SuiteRun {
                        cases: cases
                            .iter()
                            .zip(1..)
                            .map(|(&(ms, ns), number)| CaseSample {
                                number,
                                // The rounds differ a little, so that medians are of something.
                                ms: ms + f64::from(round) * 0.01,
                                counters: Some(PhysicalCounters {
                                    flush_ns: ns,
                                    ..PhysicalCounters::default()
                                }),
                            })
                            .collect(),
                        ..SuiteRun::default()
                    }),
                    batch: None,
                })
                .collect(),
            ..SqlBackendResult::default()
        }
    }

    /// The rest is the time outside the calls, over the reference's time of the same span and
    /// round; backends whose calls were not timed (and the reference) get no split.
    #[test]
    fn the_rest_is_the_time_outside_the_calls_over_the_reference() {
        let mut sql = SqlSection::default();
        sql.suite.cases = (1..=2)
            .map(|number| CaseInfo {
                number,
                title: String::new(),
            })
            .collect();
        sql.backends = vec![
            backend("memvfs", Some("memvfs"), &[(10.0, 0), (100.0, 0)], 8),
            // Case 1: 30 ms, 18 of them in calls; case 2: 110 ms, 5 in calls.
            backend(
                "ours",
                Some("memvfs"),
                &[(30.0, 18_000_000), (110.0, 5_000_000)],
                8,
            ),
            backend("untimed", Some("memvfs"), &[(30.0, 0), (110.0, 0)], 8),
        ];
        let s = call_splits(&sql);
        assert_eq!(s.len(), 1, "only the timed backend: {s:?}");
        let s = &s[0];
        assert_eq!(
            (s.backend.as_str(), s.reference.as_str()),
            ("ours", "memvfs")
        );
        let near = |x: f64, y: f64| (x - y).abs() < 0.01;
        let c1 = &s.cases[0];
        assert!(near(c1.in_calls_ms.unwrap().median, 18.0), "{c1:?}");
        assert!(near(c1.rest_ratio.as_ref().unwrap().median, 1.2), "{c1:?}");
        assert!(near(c1.calls_ratio.as_ref().unwrap().median, 1.8), "{c1:?}");
        let c2 = &s.cases[1];
        assert!(near(c2.rest_ratio.as_ref().unwrap().median, 1.05), "{c2:?}");
        // Total: (140 − 23) ÷ 110; tests 2–16: case 2 alone.
        assert!(near(
            s.total.rest_ratio.as_ref().unwrap().median,
            117.0 / 110.0
        ));
        assert!(near(s.total.in_calls_ms.unwrap().median, 23.0));
        assert!(near(
            s.tests_2_to_16.rest_ratio.as_ref().unwrap().median,
            1.05
        ));
    }
}
