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
use crate::result::{LifecycleBackend, LifecycleSuite};
use crate::{ms_since, Progress, SuiteKind};

/// Counts finished units for [`Progress`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    /// Units finished.
    pub done: u32,
    /// Units planned.
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

/// Runs the lifecycle in `warmup + runs` rounds over every backend (shuffled per round with
/// `order_seed`) and collects every sample, unsummarized. A failure (a failed verification
/// included) ends that backend's runs; it is recorded in its `error` and reported once to
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
    let mut log = Vec::new();
    for (index, order) in (0..rounds).zip(round_orders(order_seed, backends.len(), rounds)) {
        let mut ran = Vec::new();
        for i in order {
            let (backend, result) = (&mut backends[i], &mut results[i]);
            if result.error.is_some() {
                continue;
            }
            ran.push(result.name.clone());
            let start = Instant::now();
            let out = run_once(backend, &workload).await;
            let ms = ms_since(start);
            match out {
                Ok(mut run) => {
                    run.round = Some(index);
                    if index < warmup {
                        result.warmup_runs.push(run);
                    } else {
                        result.runs.push(run);
                    }
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
        log.push(Round {
            index,
            warmup: index < warmup,
            order: ran,
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
