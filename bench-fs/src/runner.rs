//! The protocol: warm-up rounds (excluded from statistics, kept in the result), then R measured
//! rounds. Each round runs every backend once, in an order drawn from a seeded shuffle
//! ([`bench_results::stats::round_orders`], the same protocol as the SQL rounds), recorded in
//! the result, so drift of the machine and the position in a round affect all backends alike;
//! every backend run starts from a wiped state ([`FsBackend::prepare`]) and ends wiped
//! ([`FsBackend::cleanup`]). A backend that fails keeps its earlier runs, gets its `error`,
//! and sits out the later rounds.

use bench_results::sql::Round;
use bench_results::stats::round_orders;
use web_time::Instant;

use crate::config::LifecycleConfig;
use crate::lifecycle::{run_once, FsBackend, Workload};
use crate::result::{LifecycleBackend, LifecycleRun, LifecycleSuite};
use crate::{ms_since, Progress, SuiteKind};

/// Counts finished units for [`Progress`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Units finished.
    pub done: u32,
    /// Units planned (lifecycle passes a backend skips for its length come off as they
    /// become known).
    pub total: u32,
}

impl Tally {
    /// Reports one finished unit.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn report(
        &mut self,
        progress: &mut dyn FnMut(Progress),
        suite: SuiteKind,
        item: &str,
        index: u32,
        warmup: u32,
        runs: u32,
        ms: f64,
    ) {
        self.done += 1;
        let warm = index < warmup;
        progress(Progress {
            suite,
            item: item.to_owned(),
            warmup: warm,
            run: if warm { index + 1 } else { index - warmup + 1 },
            runs: if warm { warmup } else { runs },
            ms,
            done: self.done,
            total: self.total,
        });
    }
}

/// A backend whose whole lifecycle call (prepare and cleanup included) takes at least this long
/// runs once per round whatever [`LifecycleConfig::repeats`] says (the one-file-per-file
/// baselines: seconds); the bound the SQL batch uses too.
pub use bench_results::stats::REPEAT_BELOW_MS;

/// The fastest run by total, carrying every run's total in [`LifecycleRun::repeats_ms`] (in
/// running order); `None` if there is none ([`bench_results::stats::fastest_repetition`] says
/// why the fastest).
pub fn fastest_run(runs: Vec<LifecycleRun>) -> Option<LifecycleRun> {
    bench_results::stats::fastest_repetition(runs, |r| r.total_ms, |r, t| r.repeats_ms = t)
}

/// One backend's turn in a round of [`run_lifecycle_suite`], while the round runs.
#[derive(Default)]
struct Turn {
    /// Its runs so far, in running order.
    runs: Vec<LifecycleRun>,
    /// Its call took at least [`REPEAT_BELOW_MS`]: no more passes this round.
    done: bool,
}

/// Runs the lifecycle in `warmup + runs` rounds over every backend (shuffled per round with
/// `order_seed`) and collects every sample, unsummarized. A round runs every backend once in
/// its order, then `cfg.repeats - 1` more passes in the same order, back to back, over the
/// backends whose call took under [`REPEAT_BELOW_MS`]; the round's sample of a backend is its
/// fastest run ([`fastest_run`]). Ours takes 5–60 ms per lifecycle of 1,000 files, as short as
/// the machine's slow spells, so one run per round measures the spells as much as the engine.
/// A failure (a failed verification included) ends that backend's runs (its earlier runs of
/// the round are dropped with it); it is recorded in its `error` and reported once to
/// `progress` with `ms` NaN.
pub async fn run_lifecycle_suite<B: FsBackend>(
    backends: &mut [B],
    cfg: &LifecycleConfig,
    runs: u32,
    warmup: u32,
    order_seed: u64,
    tally: &mut Tally,
    progress: &mut dyn FnMut(Progress),
) -> LifecycleSuite {
    let workload = Workload::generate(cfg);
    let mut results: Vec<LifecycleBackend> = backends
        .iter()
        .map(|b| LifecycleBackend {
            name: b.name(),
            storage: b.storage().to_owned(),
            durability: b.durability().to_owned(),
            buffer_mode: b.buffer_mode(),
            ..LifecycleBackend::default()
        })
        .collect();
    let rounds = warmup + runs;
    let passes = cfg.repeats.max(1);
    let mut log = Vec::new();
    for (index, order) in (0..rounds).zip(round_orders(order_seed, backends.len(), rounds)) {
        let mut ran = Vec::new();
        let mut turns: Vec<Turn> = (0..backends.len()).map(|_| Turn::default()).collect();
        for pass in 0..passes {
            for &i in &order {
                let (backend, result) = (&mut backends[i], &mut results[i]);
                let turn = &mut turns[i];
                if result.error.is_some() || turn.done {
                    continue;
                }
                if pass == 0 {
                    ran.push(result.name.clone());
                }
                let start = Instant::now();
                let out = run_once(backend, &workload).await;
                let ms = ms_since(start);
                match out {
                    Ok(mut run) => {
                        run.round = Some(index);
                        if ms >= REPEAT_BELOW_MS {
                            // No more passes this round: neither are they planned.
                            turn.done = true;
                            tally.total = tally.total.saturating_sub(passes - 1 - pass);
                        }
                        turn.runs.push(run);
                        result.rename_method = backend.rename_method().map(str::to_owned);
                    }
                    Err(e) => {
                        result.error = Some(format!("round {}: {e}", index + 1));
                    }
                }
                tally.report(
                    progress,
                    SuiteKind::Lifecycle,
                    &result.name,
                    index,
                    warmup,
                    runs,
                    if result.error.is_some() { f64::NAN } else { ms },
                );
            }
        }
        for (result, turn) in results.iter_mut().zip(turns) {
            if result.error.is_some() {
                continue;
            }
            if let Some(run) = fastest_run(turn.runs) {
                if index < warmup {
                    result.warmup_runs.push(run);
                } else {
                    result.runs.push(run);
                }
            }
        }
        log.push(Round {
            index,
            warmup: index < warmup,
            order: ran,
            load: None,
        });
    }
    LifecycleSuite {
        files: cfg.files,
        file_size_bytes: cfg.file_size_bytes,
        seed: cfg.seed,
        rounds: log,
        backends: results,
        floors: Vec::new(),
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;
    use std::time::Duration;

    use super::*;
    use crate::config::{Level, Mode};
    use crate::lifecycle::{MemoryFactory, VolumeBackend};
    use crate::FsError;

    /// Our volume on memory, with a pause of `mount_pause(n)` ms in the timed mount of its
    /// n-th run (0-based, over the whole suite) and `prepare_ms` in the untimed prepare;
    /// every run's start goes to `log`.
    struct Paced {
        inner: VolumeBackend<MemoryFactory>,
        name: &'static str,
        runs: u32,
        /// Prepared and not mounted yet: the next mount is the run's first (timed) one.
        fresh: bool,
        mount_pause: fn(u32) -> u64,
        prepare_ms: u64,
        log: Rc<RefCell<Vec<&'static str>>>,
    }

    impl Paced {
        fn new(
            name: &'static str,
            mount_pause: fn(u32) -> u64,
            prepare_ms: u64,
            log: &Rc<RefCell<Vec<&'static str>>>,
        ) -> Self {
            Paced {
                inner: VolumeBackend::new(MemoryFactory::default(), Mode::Memory, Level::Balanced),
                name,
                runs: 0,
                fresh: false,
                mount_pause,
                prepare_ms,
                log: Rc::clone(log),
            }
        }
    }

    impl FsBackend for Paced {
        fn name(&self) -> String {
            self.name.to_owned()
        }
        fn storage(&self) -> &'static str {
            self.inner.storage()
        }
        fn durability(&self) -> &'static str {
            self.inner.durability()
        }
        async fn prepare(&mut self) -> Result<(), FsError> {
            self.log.borrow_mut().push(self.name);
            std::thread::sleep(Duration::from_millis(self.prepare_ms));
            self.fresh = true;
            self.inner.prepare().await
        }
        async fn mount(&mut self) -> Result<(), FsError> {
            // The first mount of a run (the reopen phase mounts again).
            if self.fresh {
                self.fresh = false;
                std::thread::sleep(Duration::from_millis((self.mount_pause)(self.runs)));
                self.runs += 1;
            }
            self.inner.mount().await
        }
        async fn create(&mut self, name: &str) -> Result<(), FsError> {
            self.inner.create(name).await
        }
        async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
            self.inner.write(name, data).await
        }
        async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
            self.inner.read(name, buf).await
        }
        async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
            self.inner.rename(from, to).await
        }
        async fn delete(&mut self, name: &str) -> Result<(), FsError> {
            self.inner.delete(name).await
        }
        async fn commit(&mut self) -> Result<(), FsError> {
            self.inner.commit().await
        }
        async fn flush(&mut self) -> Result<(), FsError> {
            self.inner.flush().await
        }
        async fn unmount(&mut self) -> Result<(), FsError> {
            self.inner.unmount().await
        }
        async fn list(&mut self) -> Result<Vec<String>, FsError> {
            self.inner.list().await
        }
        async fn cleanup(&mut self) -> Result<(), FsError> {
            self.inner.cleanup().await
        }
    }

    fn suite(backends: &mut [Paced], runs: u32, repeats: u32) -> (LifecycleSuite, Tally, u32) {
        let cfg = LifecycleConfig {
            files: 20,
            repeats,
            ..LifecycleConfig::default()
        };
        let mut tally = Tally {
            done: 0,
            total: runs * u32::try_from(backends.len()).unwrap() * repeats,
        };
        let mut reports = 0;
        let out = bench_sql::block_on(run_lifecycle_suite(
            backends,
            &cfg,
            runs,
            0,
            7,
            &mut tally,
            &mut |_| reports += 1,
        ));
        (out, tally, reports)
    }

    #[test]
    fn a_round_runs_every_backend_then_the_passes_and_keeps_each_fastest() {
        let log = Rc::new(RefCell::new(Vec::new()));
        // a is slow on the first run of each round (runs 0, 3), b on the second (1, 4).
        let mut backends = [
            Paced::new("a", |n| if n % 3 == 0 { 40 } else { 0 }, 0, &log),
            Paced::new("b", |n| if n % 3 == 1 { 40 } else { 0 }, 0, &log),
        ];
        let (out, tally, reports) = suite(&mut backends, 2, 3);
        assert_eq!((tally.done, tally.total, reports), (12, 12, 12));
        // Each round: its order, three times over.
        let log = log.borrow();
        for (round, calls) in out.rounds.iter().zip(log.chunks(6)) {
            let order: Vec<&str> = round.order.iter().map(String::as_str).collect();
            assert_eq!(order.len(), 2);
            assert_eq!(
                calls,
                [&order[..], &order[..], &order[..]].concat(),
                "{log:?}"
            );
        }
        for (b, slow_pass) in out.backends.iter().zip([0, 1]) {
            assert_eq!(b.runs.len(), 2, "{}: one record per round", b.name);
            for (round, r) in b.runs.iter().enumerate() {
                assert_eq!(r.round, Some(u32::try_from(round).unwrap()));
                assert_eq!(r.repeats_ms.len(), 3, "{}: {:?}", b.name, r.repeats_ms);
                assert!(r.repeats_ms[slow_pass] >= 40.0, "{:?}", r.repeats_ms);
                assert!(r.total_ms < 40.0, "{}: kept {} ms", b.name, r.total_ms);
                assert!(r.repeats_ms.contains(&r.total_ms));
                assert!(r.repeats_ms.iter().all(|&t| t >= r.total_ms));
            }
        }
    }

    #[test]
    fn a_long_call_runs_once_per_round_and_leaves_the_plan() {
        let log = Rc::new(RefCell::new(Vec::new()));
        // The long one's time is in its untimed prepare: the whole call decides.
        let mut backends = [
            // 260 ms: just over REPEAT_BELOW_MS (250).
            Paced::new("long", |_| 0, 260, &log),
            Paced::new("short", |_| 0, 0, &log),
        ];
        let (out, tally, _) = suite(&mut backends, 2, 3);
        assert_eq!((tally.done, tally.total), (8, 8));
        let long = &out.backends[0];
        assert_eq!(long.runs.len(), 2);
        assert!(long.runs.iter().all(|r| r.repeats_ms.is_empty()));
        assert!(out.backends[1].runs.iter().all(|r| r.repeats_ms.len() == 3));
        assert_eq!(log.borrow().iter().filter(|n| **n == "long").count(), 2);
    }

    #[test]
    fn the_fastest_run_carries_every_total() {
        let run = |t: f64| LifecycleRun {
            round: Some(0),
            phases: Vec::new(),
            total_ms: t,
            repeats_ms: Vec::new(),
        };
        assert_eq!(fastest_run(Vec::new()), None);
        assert!(fastest_run(vec![run(3.0)]).unwrap().repeats_ms.is_empty());
        let f = fastest_run(vec![run(3.0), run(1.5), run(2.0)]).unwrap();
        assert_eq!(f.total_ms, 1.5);
        assert_eq!(f.repeats_ms, [3.0, 1.5, 2.0]);
    }
}
