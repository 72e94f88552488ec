//! The protocol: warm-up runs (excluded from statistics, kept in the result), then R measured
//! runs. Each run index goes through every backend in turn, so slow drift of the machine
//! affects all backends alike; every backend run starts from a wiped state
//! ([`FsBackend::prepare`]) and ends wiped ([`FsBackend::cleanup`]).

use web_time::Instant;

use crate::config::LifecycleConfig;
use crate::lifecycle::{run_once, FsBackend, Workload};
use crate::result::{LifecycleBackend, LifecycleSuite};
use crate::{ms_since, FsError, Progress, SuiteKind};

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

/// Runs the lifecycle `warmup + runs` times on every backend (interleaved) and collects every
/// sample. Stops at the first error (a failed verification included).
pub async fn run_lifecycle_suite<B: FsBackend>(
    backends: &mut [B],
    cfg: &LifecycleConfig,
    runs: u32,
    warmup: u32,
    tally: &mut Tally,
    progress: &mut dyn FnMut(Progress),
) -> Result<LifecycleSuite, FsError> {
    let workload = Workload::generate(cfg);
    let mut results: Vec<LifecycleBackend> = backends
        .iter()
        .map(|b| LifecycleBackend {
            name: b.name(),
            storage: b.storage().to_owned(),
            durability: b.durability().to_owned(),
            buffer_mode: b.buffer_mode(),
            rename_method: None,
            warmup_runs: Vec::new(),
            runs: Vec::new(),
            summary: None,
        })
        .collect();
    for index in 0..warmup + runs {
        for (backend, result) in backends.iter_mut().zip(&mut results) {
            let start = Instant::now();
            let run = run_once(backend, &workload).await?;
            let ms = ms_since(start);
            if index < warmup {
                result.warmup_runs.push(run);
            } else {
                result.runs.push(run);
            }
            result.rename_method = backend.rename_method().map(str::to_owned);
            tally.report(
                progress,
                SuiteKind::Lifecycle,
                &result.name,
                index,
                warmup,
                runs,
                ms,
            );
        }
    }
    for r in &mut results {
        r.summary = Some(r.summarize());
    }
    Ok(LifecycleSuite {
        files: cfg.files,
        file_size_bytes: cfg.file_size_bytes,
        seed: cfg.seed,
        backends: results,
    })
}
