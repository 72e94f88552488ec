//! One fresh run of a workload over a backend, phase by phase.
//!
//! Each function starts with [`SqlBackend::prepare`] (a wiped state) and ends with
//! [`SqlBackend::cleanup`], which also runs, untimed, when anything in between fails.
//! Verification after reopen:
//! - suite: none of the suite's tables or indexes exist (test 16 dropped them, and the drop
//!   must have reached storage), and `PRAGMA integrity_check` is ok;
//! - batch: every row is present ([`Batch::verify`]).
//!
//! A clean reopen shows that the data was stored; it says nothing about surviving a crash.
//!
//! [`run_rounds`] is the protocol around those runs: warm-up rounds, then measured rounds;
//! each round runs every [`Contestant`]'s suite once, in an order drawn from a seeded shuffle
//! ([`bench_results::stats::round_orders`]), then [`Plan::batch_repeats`] passes of the batch in
//! the same order (the round's batch sample is the fastest pass); the order of every round is
//! recorded. The batches of a round run back to back, so that a ratio pairs runs taken
//! milliseconds apart rather than a suite's seconds apart. A capped contestant
//! ([`Contestant::capped`]: the web crate's JavaScript peers) runs only in the warm-up rounds
//! and the first [`Plan::peer_runs`] measured rounds, still in their shuffled order
//! ([`round_plan`]); its ratios pair by round, so they use the rounds in
//! which it and its reference both ran. A contestant that fails keeps the runs it finished,
//! gets its `error`, and sits out the later rounds; the others go on.
//!
//! With a precision target ([`Plan::precision`]) the measured rounds stop early, at a round
//! boundary, once every contestant that runs in every round has a paired 16-case total ratio
//! to its memory reference whose 95 % interval is within ± the target of its median
//! ([`widest_half_width`]); [`Plan::runs`] is then the most rounds it may take. The rule looks
//! at the intervals' width only, never at which side of a goal they lie.

use bench_results::sql::{
    reference_in, BackendMeta, BatchRun, CaseInfo, CaseSample, Phases, Round, RoundLoads,
    RunSample, SqlBackendResult, SqlRunInfo, SqlSection, SuiteInfo, SuiteRun,
};
use bench_results::stats::{round_orders, Bootstrap};
use bench_results::summary::{pair, Metric};
use rusqlite::Connection;
use web_time::Instant;

use crate::backend::SqlBackend;
use crate::batch::{integrity_check, Batch};
use crate::sql::Suite;
use crate::{execute_script, ms_since, BenchError};

/// Runs the 16 cases once, from a fresh state.
pub async fn run_suite<B: SqlBackend>(
    backend: &mut B,
    suite: &Suite,
) -> Result<SuiteRun, BenchError> {
    let out = suite_phases(backend, suite).await;
    finish(backend, out).await
}

/// Runs the batch once, from a fresh state.
pub async fn run_batch<B: SqlBackend>(
    backend: &mut B,
    batch: &Batch,
) -> Result<BatchRun, BenchError> {
    let out = batch_phases(backend, batch).await;
    finish(backend, out).await
}

/// Cleans up whatever happened; the workload's error wins over a cleanup error.
async fn finish<B: SqlBackend, T>(
    backend: &mut B,
    out: Result<T, BenchError>,
) -> Result<T, BenchError> {
    let cleaned = backend.cleanup().await;
    let value = out?;
    cleaned?;
    Ok(value)
}

async fn suite_phases<B: SqlBackend>(
    backend: &mut B,
    suite: &Suite,
) -> Result<SuiteRun, BenchError> {
    let mut phases = Phases::default();
    let conn = open_fresh(backend, &mut phases).await?;

    let mut cases = Vec::with_capacity(suite.cases.len());
    for case in &suite.cases {
        let before = backend.counters();
        let start = Instant::now();
        let result = execute_script(&conn, &case.sql);
        let ms = ms_since(start);
        if let Err(e) = result {
            let _ = backend.close(conn).await;
            return Err(BenchError::Lifecycle {
                backend: backend.name(),
                message: format!("case {} ({}): {e}", case.number, case.title),
            });
        }
        let counters = match (before, backend.counters()) {
            (Some(b), Some(a)) => Some(a.since(&b)),
            _ => None,
        };
        cases.push(CaseSample {
            number: case.number,
            ms,
            counters,
        });
    }

    let verify = |conn: &Connection| verify_suite_dropped(conn);
    sync_close_reopen(backend, conn, &mut phases, verify).await?;
    Ok(SuiteRun::from_cases(phases, cases))
}

async fn batch_phases<B: SqlBackend>(
    backend: &mut B,
    batch: &Batch,
) -> Result<BatchRun, BenchError> {
    let mut phases = Phases::default();
    let conn = open_fresh(backend, &mut phases).await?;

    let workload = (|| {
        batch.setup(&conn)?;
        let before = backend.counters();
        let start = Instant::now();
        batch.run(&conn)?;
        let ms = ms_since(start);
        let counters = match (before, backend.counters()) {
            (Some(b), Some(a)) => Some(a.since(&b)),
            _ => None,
        };
        Ok::<_, BenchError>((ms, counters))
    })();
    let (ms, counters) = match workload {
        Ok(v) => v,
        Err(e) => {
            let _ = backend.close(conn).await;
            return Err(e);
        }
    };

    sync_close_reopen(backend, conn, &mut phases, |c| batch.verify(c)).await?;
    Ok(BatchRun {
        phases,
        rows: batch.len(),
        ms,
        counters,
        repeats_ms: Vec::new(),
    })
}

/// Timed `prepare` and `open`.
async fn open_fresh<B: SqlBackend>(
    backend: &mut B,
    phases: &mut Phases,
) -> Result<Connection, BenchError> {
    let start = Instant::now();
    backend.prepare().await?;
    phases.prepare_ms = ms_since(start);

    let start = Instant::now();
    let conn = backend.open().await?;
    phases.init_ms = ms_since(start);
    Ok(conn)
}

/// Timed `sync`, `close`, `reopen` and verification (the last three where persistent), then an
/// untimed close of the reopened connection.
async fn sync_close_reopen<B: SqlBackend>(
    backend: &mut B,
    conn: Connection,
    phases: &mut Phases,
    verify: impl FnOnce(&Connection) -> Result<(), BenchError>,
) -> Result<(), BenchError> {
    let persistent = backend.persistent();
    if persistent {
        let start = Instant::now();
        let synced = backend.sync(&conn).await;
        phases.sync_ms = Some(ms_since(start));
        if let Err(e) = synced {
            let _ = backend.close(conn).await;
            return Err(e);
        }
    }

    let start = Instant::now();
    backend.close(conn).await?;
    phases.close_ms = ms_since(start);

    if !persistent {
        return Ok(());
    }
    let start = Instant::now();
    let conn = backend.reopen().await?;
    phases.reopen_ms = Some(ms_since(start));

    let start = Instant::now();
    let verified = verify(&conn);
    phases.verify_ms = Some(ms_since(start));
    let closed = backend.close(conn).await;
    verified?;
    closed
}

/// After the suite: no table or index of it exists, and the database is intact.
pub fn verify_suite_dropped(conn: &Connection) -> Result<(), BenchError> {
    let left: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_schema WHERE name IN ('t1','t2','t3','i2a','i2b','i3')")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if !left.is_empty() {
        return Err(BenchError::Verify(format!(
            "after reopen these dropped tables/indexes still exist: {left:?}"
        )));
    }
    integrity_check(conn)
}

// ------------------------------------------------------------------------------------------
// Rounds
// ------------------------------------------------------------------------------------------

/// Where a run sits in the protocol, for a contestant that wants to know (a JavaScript peer
/// gets it as `options`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// 0-based round over all rounds (warm-up first).
    pub round: u32,
    /// A warm-up round.
    pub warmup: bool,
}

/// Anything the round loop can run: one of our backends or a baseline ([`Ours`]), or a backend
/// implemented elsewhere (the web crate's JavaScript peers). Errors are messages: the loop
/// records them and goes on.
#[allow(async_fn_in_trait)] // single-threaded by design, like SqlBackend
pub trait Contestant {
    /// What it is (its `skipped` set: listed, never run).
    fn meta(&self) -> BackendMeta;

    /// The 16 cases once, from a fresh state.
    async fn suite(&mut self, suite: &Suite, turn: Turn) -> Result<SuiteRun, String>;

    /// The batch once, from a fresh state.
    async fn batch(&mut self, batch: &Batch, turn: Turn) -> Result<BatchRun, String>;

    /// Whether [`Plan::peer_runs`] caps its measured rounds. The web crate's JavaScript peers
    /// say yes (some take a minute per turn at full size); our backends and the Rust-side
    /// baselines, whose intervals the goals are about, keep the default: every round.
    fn capped(&self) -> bool {
        false
    }
}

/// A [`SqlBackend`] as a [`Contestant`].
#[derive(Debug)]
pub struct Ours<B>(pub B);

impl<B: SqlBackend> Contestant for Ours<B> {
    fn meta(&self) -> BackendMeta {
        self.0.meta()
    }

    async fn suite(&mut self, suite: &Suite, _turn: Turn) -> Result<SuiteRun, String> {
        run_suite(&mut self.0, suite)
            .await
            .map_err(|e| e.to_string())
    }

    async fn batch(&mut self, batch: &Batch, _turn: Turn) -> Result<BatchRun, String> {
        run_batch(&mut self.0, batch)
            .await
            .map_err(|e| e.to_string())
    }
}

/// What [`run_rounds`] runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Measured rounds (at least 1).
    pub runs: u32,
    /// Warm-up rounds before them.
    pub warmup: u32,
    /// Measured rounds a capped contestant ([`Contestant::capped`]) runs in: the first
    /// `peer_runs` (and every warm-up round). `None`: every round.
    pub peer_runs: Option<u32>,
    /// Seed of the round orders.
    pub order_seed: u64,
    /// Run the 16 cases.
    pub suite: bool,
    /// Run the batch.
    pub batch: bool,
    /// Runs of the batch per contestant and round (at least 1); the round's sample is the
    /// fastest ([`fastest_repetition`]). The batch takes a few milliseconds, shorter than the
    /// machine's slow spells (milliseconds to a second, in which all code runs up to half as
    /// fast: `methodology.md`, "The batch"), so one run per round measures the spells as much
    /// as the batch. The repetitions run back to back, every contestant once per pass.
    pub batch_repeats: u32,
    /// Recorded as `config.data_dir`.
    pub data_dir: Option<String>,
    /// Stop before `runs` measured rounds once the intervals are this narrow (module docs).
    pub precision: Option<Precision>,
}

/// A precision target for the measured rounds ([`Plan::precision`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Precision {
    /// Relative half-width to reach: 0.03 stops once every interval is within ±3 % of its
    /// median.
    pub half_width: f64,
    /// Measured rounds before the first check.
    pub min_runs: u32,
    /// Measured rounds between checks (each check bootstraps every ratio once).
    pub every: u32,
    /// The intervals' bootstrap: the one the summary will use, so that the check and the
    /// published intervals are the same computation.
    pub bootstrap: Bootstrap,
}

impl Precision {
    /// Whether the check runs after `measured` measured rounds.
    fn checks_at(&self, measured: u32) -> bool {
        measured >= self.min_runs && (measured - self.min_runs).is_multiple_of(self.every.max(1))
    }
}

/// The widest relative half-width of the 95 % intervals of the paired 16-case total ratios of
/// `results` to their memory references ([`reference_in`]), over the contestants that run in
/// every round (not `capped`, not skipped, not failed, with runs) and have a reference; `None`
/// if one of them has no interval yet, or if none has a reference. (The same intervals the
/// summary computes, before there is a summary: [`SqlSection::widest_total_interval`] reads
/// them afterwards.)
pub fn widest_half_width(
    results: &[SqlBackendResult],
    capped: &[bool],
    boot: &Bootstrap,
) -> Option<f64> {
    let mut widest: Option<f64> = None;
    for (b, &cap) in results.iter().zip(capped) {
        if cap || b.meta.skipped.is_some() || b.error.is_some() || b.runs.is_empty() {
            continue;
        }
        let Some(r) = reference_in(results, &b.meta) else {
            continue;
        };
        let w =
            pair(b, r, Metric::Total, None, &RoundLoads::default(), boot)?.relative_half_width()?;
        widest = Some(widest.map_or(w, |x: f64| x.max(w)));
    }
    widest
}

impl Plan {
    /// Warm-up plus measured rounds.
    pub fn rounds(&self) -> u32 {
        self.warmup + self.runs.max(1)
    }

    /// Whether a capped contestant runs in round `round` (0-based over all rounds): in every
    /// warm-up round and the first `peer_runs` measured ones.
    pub fn peers_run_in(&self, round: u32) -> bool {
        self.peer_runs
            .is_none_or(|k| round < self.warmup.saturating_add(k))
    }
}

/// Which contestants run in each round, in running order: every round's seeded shuffle of all
/// of them ([`round_orders`] over `capped.len()`), less the capped ones (`capped[i]`) in the
/// rounds they sit out ([`Plan::peers_run_in`]). The shuffle is drawn over every contestant
/// whatever the cap, so the others' orders are those of an uncapped run with the same seed.
/// [`run_rounds`] further leaves out skipped contestants and those that failed earlier.
pub fn round_plan(plan: &Plan, capped: &[bool]) -> Vec<Vec<usize>> {
    (0..plan.rounds())
        .zip(round_orders(plan.order_seed, capped.len(), plan.rounds()))
        .map(|(round, order)| {
            order
                .into_iter()
                .filter(|&i| !capped[i] || plan.peers_run_in(round))
                .collect()
        })
        .collect()
}

/// A contestant whose batch takes at least this long, or whose whole batch call (set-up, close,
/// reopen and cleanup included) does, runs it once per round whatever [`Plan::batch_repeats`]
/// says (the shared bound, [`bench_results::stats::REPEAT_BELOW_MS`]).
pub use bench_results::stats::REPEAT_BELOW_MS;

/// The fastest repetition, carrying every repetition's time in [`BatchRun::repeats_ms`] (in
/// running order); `None` if there is none ([`bench_results::stats::fastest_repetition`] says
/// why the fastest).
pub fn fastest_repetition(runs: Vec<BatchRun>) -> Option<BatchRun> {
    bench_results::stats::fastest_repetition(runs, |r| r.ms, |r, t| r.repeats_ms = t)
}

/// One contestant's turn in a round of [`run_rounds`], while the round runs.
#[derive(Default)]
struct TurnState {
    /// Its suite run.
    suite: Option<SuiteRun>,
    /// Its batch passes so far, in running order.
    batches: Vec<BatchRun>,
    /// Its batch (or the whole batch call) took at least [`REPEAT_BELOW_MS`]: no more passes.
    batch_done: bool,
    /// The failure that ended its turn (it sits out the rest of the round and the run).
    failed: Option<String>,
}

/// The suite or the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The 16 cases.
    Suite,
    /// The batch transaction.
    Batch,
}

/// Reported before and after each workload run of [`run_rounds`].
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Workload runs finished so far (this one included once `outcome` is set).
    pub done: u32,
    /// Workload runs planned: the turns of [`round_plan`] × workloads, the batch counted
    /// [`Plan::batch_repeats`] times (failures, and batches run once for their length
    /// ([`REPEAT_BELOW_MS`]), shorten the run).
    pub total: u32,
    /// The contestant.
    pub backend: String,
    /// 0-based round.
    pub round: u32,
    /// A warm-up round.
    pub warmup: bool,
    /// 1-based among the warm-up or among the measured rounds.
    pub run: u32,
    /// Which workload.
    pub workload: Workload,
    /// `None`: starting. `Some(Ok(ms))`: finished (suite: the 16-case total). `Some(Err)`:
    /// failed with this message.
    pub outcome: Option<Result<f64, String>>,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.warmup { "warm-up" } else { "run" };
        let workload = match self.workload {
            Workload::Suite => "suite",
            Workload::Batch => "batch",
        };
        write!(
            f,
            "[{}/{}] {} {kind} {} {workload}",
            self.done, self.total, self.backend, self.run
        )?;
        match &self.outcome {
            Some(Ok(ms)) => write!(f, ": {ms:.1} ms"),
            Some(Err(e)) => write!(f, ": FAILED: {e}"),
            None => write!(f, "…"),
        }
    }
}

/// The workloads' identity: seed, hashes, scale, case titles, batch size.
pub fn suite_info(suite: &Suite, batch: &Batch) -> SuiteInfo {
    SuiteInfo {
        seed: suite.seed,
        sha256: suite.sha256(),
        scale_divisor: suite.scale_divisor,
        cases: suite
            .cases
            .iter()
            .map(|c| CaseInfo {
                number: c.number,
                title: c.title.clone(),
            })
            .collect(),
        batch_rows: batch.len(),
        batch_sha256: batch.sha256(),
    }
}

/// Runs `plan` over `contestants` (see the module docs) and returns every sample, unsummarized
/// (call [`SqlSection::summarize`]). Contestants whose meta says `skipped` are listed and never
/// run.
pub async fn run_rounds<C: Contestant>(
    contestants: &mut [C],
    plan: &Plan,
    suite: &Suite,
    batch: &Batch,
    progress: &mut dyn FnMut(&Progress),
) -> SqlSection {
    let runs = plan.runs.max(1);
    let mut results: Vec<SqlBackendResult> = contestants
        .iter()
        .map(|c| SqlBackendResult {
            meta: c.meta(),
            ..SqlBackendResult::default()
        })
        .collect();
    let repeats = plan.batch_repeats.max(1);
    let workloads = u32::from(plan.suite) + if plan.batch { repeats } else { 0 };
    let capped: Vec<bool> = contestants.iter().map(Contestant::capped).collect();
    let rounds = round_plan(plan, &capped);
    let turns = rounds
        .iter()
        .flatten()
        .filter(|&&i| results[i].meta.skipped.is_none())
        .count();
    let total = u32::try_from(turns)
        .unwrap_or(u32::MAX)
        .saturating_mul(workloads);
    let mut done = 0;
    let mut round_log = Vec::new();
    // Measured rounds run (fewer than `runs` if the precision target stopped them).
    let mut measured = runs;
    for (round, order) in (0..).zip(rounds) {
        let warmup = round < plan.warmup;
        let run = if warmup {
            round + 1
        } else {
            round - plan.warmup + 1
        };
        let turn = Turn { round, warmup };
        // This round's turns: those not skipped and not failed in an earlier round.
        let order: Vec<usize> = order
            .into_iter()
            .filter(|&i| results[i].meta.skipped.is_none() && results[i].error.is_none())
            .collect();
        let ran: Vec<String> = order
            .iter()
            .map(|&i| results[i].meta.name.clone())
            .collect();
        let mut turns: Vec<TurnState> = order.iter().map(|_| TurnState::default()).collect();
        // The suites in the round's order, then the batch repetitions, each pass in that order.
        let passes = std::iter::once(Workload::Suite)
            .filter(|_| plan.suite)
            .chain((0..repeats).map(|_| Workload::Batch).filter(|_| plan.batch));
        for workload in passes {
            for (t, &i) in turns.iter_mut().zip(&order) {
                if t.failed.is_some() || (workload == Workload::Batch && t.batch_done) {
                    continue;
                }
                let contestant = &mut contestants[i];
                let name = &results[i].meta.name;
                let mut report = |done, outcome| {
                    progress(&Progress {
                        done,
                        total,
                        backend: name.clone(),
                        round,
                        warmup,
                        run,
                        workload,
                        outcome,
                    });
                };
                report(done, None);
                match workload {
                    Workload::Suite => {
                        let out = contestant.suite(suite, turn).await;
                        done += 1;
                        report(
                            done,
                            Some(out.as_ref().map(|s| s.total_ms).map_err(Clone::clone)),
                        );
                        match out {
                            Ok(s) => t.suite = Some(s),
                            Err(e) => t.failed = Some(format!("suite, round {}: {e}", round + 1)),
                        }
                    }
                    Workload::Batch => {
                        let started = Instant::now();
                        let out = contestant.batch(batch, turn).await;
                        // The whole call: set-up, close, reopen and cleanup included.
                        let call_ms = ms_since(started);
                        done += 1;
                        report(done, Some(out.as_ref().map(|b| b.ms).map_err(Clone::clone)));
                        match out {
                            Ok(b) => {
                                // A run this long spans the spells the repetitions are for,
                                // or a pass of it costs too much to repeat.
                                if b.ms.max(call_ms) >= REPEAT_BELOW_MS {
                                    t.batch_done = true;
                                }
                                t.batches.push(b);
                            }
                            Err(e) => t.failed = Some(format!("batch, round {}: {e}", round + 1)),
                        }
                    }
                }
            }
        }
        for (t, &i) in turns.into_iter().zip(&order) {
            let result = &mut results[i];
            let sample = RunSample {
                round: Some(round),
                suite: t.suite,
                batch: fastest_repetition(t.batches),
            };
            match t.failed {
                // A failed turn's half-done sample would pair with nothing: dropped, and the
                // contestant sits out the rest.
                Some(e) => result.error = Some(e),
                None if warmup => result.warmup_runs.push(sample),
                None => result.runs.push(sample),
            }
        }
        round_log.push(Round {
            index: round,
            warmup,
            order: ran,
            load: None,
        });
        if let Some(p) = plan
            .precision
            .as_ref()
            .filter(|p| !warmup && p.checks_at(run))
        {
            if run < runs
                && widest_half_width(&results, &capped, &p.bootstrap)
                    .is_some_and(|w| w <= p.half_width)
            {
                measured = run;
                break;
            }
        }
    }
    SqlSection {
        suite: suite_info(suite, batch),
        config: SqlRunInfo {
            runs: measured,
            warmup: plan.warmup,
            data_dir: plan.data_dir.clone(),
            order_seed: Some(plan.order_seed),
            loads: Vec::new(),
        },
        rounds: round_log,
        backends: results,
        bootstrap: None,
        goals: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(runs: u32, warmup: u32, peer_runs: Option<u32>) -> Plan {
        Plan {
            runs,
            warmup,
            peer_runs,
            order_seed: 7,
            suite: true,
            batch: true,
            batch_repeats: 1,
            data_dir: None,
            precision: None,
        }
    }

    /// Rounds in which contestant `i` runs.
    fn rounds_of(p: &[Vec<usize>], i: usize) -> Vec<u32> {
        (0..)
            .zip(p)
            .filter(|(_, o)| o.contains(&i))
            .map(|(r, _)| r)
            .collect()
    }

    #[test]
    fn capped_contestants_run_in_the_warmup_and_the_first_peer_runs_rounds() {
        // Contestants 1 and 3 are capped (JavaScript peers); 0, 2 and 4 are not.
        let capped = [false, true, false, true, false];
        let uncapped = round_plan(&plan(6, 1, None), &capped);
        assert_eq!(uncapped, round_orders(7, 5, 7), "no cap: the plain shuffle");

        let p = round_plan(&plan(6, 1, Some(2)), &capped);
        assert_eq!(p.len(), 7);
        for i in [0, 2, 4] {
            assert_eq!(rounds_of(&p, i), [0, 1, 2, 3, 4, 5, 6], "contestant {i}");
        }
        for i in [1, 3] {
            assert_eq!(rounds_of(&p, i), [0, 1, 2], "warm-up + 2 measured: {i}");
        }
        // Inside every round the order is the uncapped round's, less the capped ones.
        for (round, (o, full)) in p.iter().zip(&uncapped).enumerate() {
            let kept: Vec<usize> = full
                .iter()
                .copied()
                .filter(|&i| round < 3 || !capped[i])
                .collect();
            assert_eq!(o, &kept, "round {round}");
        }
        // Not one fixed position for the peers in the rounds they run.
        let firsts: std::collections::BTreeSet<usize> = p[..3].iter().map(|o| o[0]).collect();
        assert!(firsts.len() > 1, "{p:?}");

        // A cap at or above the measured rounds is no cap; 0 leaves the warm-up only.
        assert_eq!(round_plan(&plan(6, 1, Some(6)), &capped), uncapped);
        assert_eq!(round_plan(&plan(6, 1, Some(50)), &capped), uncapped);
        let none = round_plan(&plan(3, 2, Some(0)), &capped);
        assert_eq!(rounds_of(&none, 1), [0, 1]);
        assert_eq!(rounds_of(&none, 0), [0, 1, 2, 3, 4]);
        // No warm-up: the first measured rounds.
        let cold = round_plan(&plan(4, 0, Some(1)), &capped);
        assert_eq!(rounds_of(&cold, 3), [0]);
        assert!(plan(4, 0, Some(1)).peers_run_in(0) && !plan(4, 0, Some(1)).peers_run_in(1));
    }

    /// The precision target (natively: `block_on` is not built for wasm32).
    #[cfg(not(target_arch = "wasm32"))]
    mod precision {
        use super::*;

        /// A contestant whose 16-case total is `ms(round)`: one case, no SQL.
        struct Fixed {
            name: &'static str,
            reference: Option<&'static str>,
            ms: fn(u32) -> f64,
            turns: u32,
        }

        impl Contestant for Fixed {
            fn meta(&self) -> BackendMeta {
                BackendMeta {
                    name: self.name.into(),
                    reference: self.reference.map(Into::into),
                    durability: "none".into(),
                    persistent: self.reference.is_some(),
                    ..BackendMeta::default()
                }
            }
            async fn suite(&mut self, _suite: &Suite, turn: Turn) -> Result<SuiteRun, String> {
                self.turns += 1;
                let cases = vec![CaseSample {
                    number: 1,
                    ms: (self.ms)(turn.round),
                    counters: None,
                }];
                Ok(SuiteRun::from_cases(Phases::default(), cases))
            }
            async fn batch(&mut self, _batch: &Batch, _turn: Turn) -> Result<BatchRun, String> {
                Ok(BatchRun::default())
            }
        }

        fn contestants(noisy: fn(u32) -> f64) -> Vec<Fixed> {
            vec![
                Fixed {
                    name: "reference",
                    reference: None,
                    ms: |_| 100.0,
                    turns: 0,
                },
                Fixed {
                    name: "steady",
                    reference: Some("reference"),
                    ms: |r| 103.0 + f64::from(r % 3) * 0.1,
                    turns: 0,
                },
                Fixed {
                    name: "noisy",
                    reference: Some("reference"),
                    ms: noisy,
                    turns: 0,
                },
            ]
        }

        /// The precision target stops the rounds at the first check where every interval is
        /// narrow enough, and not before `min_runs`; a contestant that stays wide keeps them going
        /// to `runs`; the section records the rounds taken.
        #[test]
        fn a_precision_target_stops_the_rounds_once_every_interval_is_narrow() {
            let suite = Suite::generate_scaled(crate::sql::DEFAULT_SEED, 100);
            let batch = Batch::generate(crate::sql::DEFAULT_SEED, 10);
            let precise = Plan {
                batch: false,
                batch_repeats: 1,
                precision: Some(Precision {
                    half_width: 0.03,
                    min_runs: 8,
                    every: 4,
                    bootstrap: Bootstrap::default(),
                }),
                ..plan(40, 1, None)
            };
            let run = |noisy: fn(u32) -> f64, plan: &Plan| {
                let mut c = contestants(noisy);
                let sql = crate::block_on(run_rounds(&mut c, plan, &suite, &batch, &mut |_| {}));
                (sql, c.iter().map(|c| c.turns).collect::<Vec<_>>())
            };
            // Every ratio within ±1 % of its median: stops at the first check (8 rounds).
            let (sql, turns) = run(|r| 110.0 + f64::from(r % 2), &precise);
            assert_eq!(sql.config.runs, 8);
            assert_eq!(sql.rounds.len(), 9, "1 warm-up + 8");
            assert_eq!(turns, [9, 9, 9]);
            assert!(sql.backends.iter().all(|b| b.runs.len() == 8));
            let widest = widest_half_width(&sql.backends, &[false; 3], &Bootstrap::default());
            assert!(widest.is_some_and(|w| w <= 0.03), "{widest:?}");
            // One contestant that swings ±50 % keeps every round going: no early stop.
            let (sql, turns) = run(|r| if r % 2 == 0 { 60.0 } else { 150.0 }, &precise);
            assert_eq!((sql.config.runs, sql.rounds.len()), (40, 41));
            assert_eq!(turns, [41, 41, 41]);
            // Wide until round 12, then steady: the check after 12 measured rounds still sees the
            // early swings, so the stop comes at a later check, on a 4-round boundary.
            let (sql, _) = run(
                |r| {
                    if r <= 6 {
                        if r % 2 == 0 {
                            60.0
                        } else {
                            150.0
                        }
                    } else {
                        110.0
                    }
                },
                &precise,
            );
            assert!(
                sql.config.runs > 8 && sql.config.runs < 40,
                "{}",
                sql.config.runs
            );
            assert_eq!((sql.config.runs - 8) % 4, 0, "{}", sql.config.runs);
            // A capped contestant's width does not count (it runs in few rounds by design).
            let mut c = contestants(|r| if r % 2 == 0 { 60.0 } else { 150.0 });
            let capped = [false, false, true];
            let wide = widest_half_width(
                &crate::block_on(run_rounds(
                    &mut c,
                    &plan(12, 0, None),
                    &suite,
                    &batch,
                    &mut |_| {},
                ))
                .backends,
                &capped,
                &Bootstrap::default(),
            );
            assert!(wide.is_some_and(|w| w <= 0.03), "{wide:?}");
            // Without a target: exactly `runs`.
            let (sql, _) = run(|_| 110.0, &plan(10, 1, None));
            assert_eq!(sql.config.runs, 10);
        }
    }

    /// The batch repetitions (natively: `block_on` is not built for wasm32).
    #[cfg(not(target_arch = "wasm32"))]
    mod repeats {
        use super::*;
        use std::cell::RefCell;
        use std::rc::Rc;

        /// Every call, in running order: (contestant, workload, round).
        type Log = Rc<RefCell<Vec<(&'static str, Workload, u32)>>>;

        /// A contestant whose `n`-th batch call (0-based, over the whole run) takes `ms(n)`, or
        /// fails where `ms` gives a negative number.
        struct Logged {
            name: &'static str,
            ms: fn(u32) -> f64,
            /// Time the call takes besides its `ms` (a slow set-up).
            setup: std::time::Duration,
            batches: u32,
            log: Log,
        }

        impl Contestant for Logged {
            fn meta(&self) -> BackendMeta {
                BackendMeta {
                    name: self.name.into(),
                    durability: "none".into(),
                    ..BackendMeta::default()
                }
            }
            async fn suite(&mut self, _suite: &Suite, turn: Turn) -> Result<SuiteRun, String> {
                self.log
                    .borrow_mut()
                    .push((self.name, Workload::Suite, turn.round));
                let cases = vec![CaseSample {
                    number: 1,
                    ms: 10.0,
                    counters: None,
                }];
                Ok(SuiteRun::from_cases(Phases::default(), cases))
            }
            async fn batch(&mut self, _batch: &Batch, turn: Turn) -> Result<BatchRun, String> {
                self.log
                    .borrow_mut()
                    .push((self.name, Workload::Batch, turn.round));
                std::thread::sleep(self.setup);
                let ms = (self.ms)(self.batches);
                self.batches += 1;
                if ms < 0.0 {
                    return Err("broken".into());
                }
                Ok(BatchRun {
                    ms,
                    rows: self.batches,
                    ..BatchRun::default()
                })
            }
        }

        #[test]
        fn a_round_runs_the_suites_then_the_batch_passes_and_keeps_the_fastest() {
            let suite = Suite::generate_scaled(crate::sql::DEFAULT_SEED, 100);
            let batch = Batch::generate(crate::sql::DEFAULT_SEED, 10);
            let log = Log::default();
            let logged = |name, ms| Logged {
                name,
                ms,
                setup: std::time::Duration::ZERO,
                batches: 0,
                log: log.clone(),
            };
            let mut c = vec![
                // 5, 1, 4, 2, 3 in every round (calls 5 per round).
                logged("a", |n| [5.0, 1.0, 4.0, 2.0, 3.0][(n % 5) as usize]),
                // Long: one run per round.
                logged("long", |n| REPEAT_BELOW_MS + f64::from(n)),
                // Fails on its second batch call: sits out from there.
                logged("fails", |n| if n == 1 { -1.0 } else { 7.0 }),
                // A quick batch behind a slow set-up: one run per round too.
                Logged {
                    setup: std::time::Duration::from_millis(260),
                    ..logged("slow-setup", |_| 2.0)
                },
            ];
            let plan = Plan {
                batch_repeats: 5,
                ..plan(2, 1, None)
            };
            let sql = crate::block_on(run_rounds(&mut c, &plan, &suite, &batch, &mut |_| {}));
            let log = log.borrow();
            for (round, order) in sql.rounds.iter().enumerate() {
                let round = u32::try_from(round).unwrap();
                let calls: Vec<(&str, Workload)> = log
                    .iter()
                    .filter(|(_, _, r)| *r == round)
                    .map(|&(n, w, _)| (n, w))
                    .collect();
                // The suites in the round's order, then the batch passes in the same order.
                let names: Vec<&str> = order.order.iter().map(String::as_str).collect();
                let suites: Vec<(&str, Workload)> =
                    names.iter().map(|&n| (n, Workload::Suite)).collect();
                assert_eq!(calls[..names.len()], suites[..], "round {round}");
                let batches: Vec<&str> = calls[names.len()..]
                    .iter()
                    .map(|&(n, w)| {
                        assert_eq!(w, Workload::Batch);
                        n
                    })
                    .collect();
                let mut want = Vec::new();
                for pass in 0..5 {
                    for &n in &names {
                        // "long" and "slow-setup" run once; "fails" runs twice in round 0
                        // (the second fails), then sits out.
                        let passes = match n {
                            "long" | "slow-setup" => 1,
                            "fails" => 2,
                            _ => 5,
                        };
                        if pass < passes {
                            want.push(n);
                        }
                    }
                }
                assert_eq!(batches, want, "round {round}");
            }
            let a = sql.backend("a").unwrap();
            assert_eq!(a.runs.len(), 2);
            for r in a.runs.iter().chain(&a.warmup_runs) {
                let b = r.batch.as_ref().unwrap();
                assert_eq!(b.repeats_ms, [5.0, 1.0, 4.0, 2.0, 3.0]);
                assert_eq!(b.ms, 1.0, "the fastest run");
                // The fastest run's own record (its call number), not a copy of another.
                assert_eq!(b.rows % 5, 2);
            }
            let slow = sql.backend("slow-setup").unwrap();
            assert_eq!(slow.runs.len(), 2);
            assert!(slow.runs.iter().all(|r| {
                let b = r.batch.as_ref().unwrap();
                b.repeats_ms.is_empty() && b.ms == 2.0
            }));
            let long = sql.backend("long").unwrap();
            assert_eq!(long.runs.len(), 2);
            assert!(long.runs.iter().all(|r| {
                let b = r.batch.as_ref().unwrap();
                b.repeats_ms.is_empty() && b.ms >= REPEAT_BELOW_MS
            }));
            let fails = sql.backend("fails").unwrap();
            assert!(fails.error.as_deref().unwrap().contains("broken"));
            assert!(fails.runs.is_empty() && fails.warmup_runs.is_empty());
            assert!(!sql.rounds[1].order.contains(&"fails".to_owned()));
        }

        #[test]
        fn the_fastest_repetition_is_a_run_with_every_time_beside_it() {
            let run = |ms, rows| BatchRun {
                ms,
                rows,
                ..BatchRun::default()
            };
            assert_eq!(fastest_repetition(Vec::new()), None);
            let one = fastest_repetition(vec![run(4.0, 1)]).unwrap();
            assert_eq!((one.ms, one.repeats_ms.len()), (4.0, 0));
            let three = vec![run(9.0, 1), run(2.0, 2), run(5.0, 3)];
            let fastest = fastest_repetition(three).unwrap();
            assert_eq!((fastest.rows, fastest.repeats_ms), (2, vec![9.0, 2.0, 5.0]));
        }
    }
}
