//! # bench-fs: the filesystem benchmark harness
//!
//! What is measured (issue 5):
//! - [`lifecycle`]: N files × S bytes (default 1,000 × 1 KiB; phones: 100) through mount,
//!   create, write, read (every byte verified), rename, delete half, flush, reopen and verify
//!   the survivors, each phase timed, and for our volume the physical calls per phase. Backends
//!   behind one small async trait, [`lifecycle::FsBackend`]: our [`opfs_vfs::Volume`] in both buffer
//!   modes (at each durability level asked for, labelled), and the hand-made baseline of one
//!   file per logical file (OPFS in the browser, `std::fs` natively).
//! - `raw` (browser only): the raw OPFS per-call workloads of the seed page on one sync access
//!   handle: 4 KiB append and overwrite, 64 KiB and 1 MiB chunked append, append+flush and the
//!   new-file cycle, with per-call mean, p50, p90, p99, max and first-call figures. They
//!   measure the physical floor on the same device in the same run.
//!
//! How: [`runner`] runs warm-up rounds (excluded) and R measured rounds, each round every
//! backend once in a seeded shuffled order, each run from a wiped state; a failing backend
//! keeps its earlier runs and sits out the rest. Results are `bench_results` types ([`result`]
//! re-exports them): every sample kept, summaries computed by `bench_results`.
//! [`config::Config`] says what to run. Natively `native::run_native` drives it (the `bench-fs-native` binary); in a dedicated
//! worker `browser::run_browser` does.

pub mod config;
pub mod lifecycle;
pub mod result;
pub mod runner;

#[cfg(target_arch = "wasm32")]
pub mod browser;
#[cfg(target_arch = "wasm32")]
mod js;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
#[cfg(target_arch = "wasm32")]
pub mod raw;

pub use config::Config;
pub use result::{FsResult, Phase};

/// Errors of the harness and its backends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// Our volume failed.
    #[error("volume: {0}")]
    Volume(#[from] opfs_vfs::Error),
    /// Our physical storage failed to open or to be removed.
    #[error("storage: {0}")]
    Storage(#[from] opfs_vfs::storage::StorageError),
    /// A native file operation failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// A browser call failed; `name` and `message` are the JavaScript error's.
    #[error("{op} failed: {name}: {message}")]
    Js {
        /// The operation (`getFileHandle`, `createSyncAccessHandle`, `write`, `move`, ...).
        op: &'static str,
        /// JavaScript error name (`NotFoundError`, `NoModificationAllowedError`, ...).
        name: String,
        /// Its message.
        message: String,
    },
    /// A read-back found other bytes, another length, or other files than were written.
    #[error("verification failed: {0}")]
    Verify(String),
    /// Something the environment cannot do (no dedicated worker, no `move()` when forced, ...).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An error during one phase of one backend.
    #[error("{backend}: {phase}: {source}")]
    InPhase {
        /// Backend name.
        backend: String,
        /// Phase (or `prepare` / `cleanup`).
        phase: String,
        /// What failed.
        source: Box<FsError>,
    },
}

impl FsError {
    /// Wraps `self` with the backend and phase it happened in.
    pub fn in_phase(self, backend: &str, phase: impl std::fmt::Display) -> Self {
        FsError::InPhase {
            backend: backend.to_owned(),
            phase: phase.to_string(),
            source: Box::new(self),
        }
    }
}

/// Which suite a [`Progress`] report is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SuiteKind {
    /// The filesystem lifecycle.
    Lifecycle,
    /// The raw OPFS per-call workloads.
    Raw,
}

/// Reported after each finished unit of work (one backend's lifecycle run, or one raw workload
/// in one run), for a progress display.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Which suite.
    pub suite: SuiteKind,
    /// Backend name (lifecycle) or workload name (raw).
    pub item: String,
    /// Whether this was a warm-up run.
    pub warmup: bool,
    /// Run number within its kind (warm-up or measured), from 1.
    pub run: u32,
    /// Runs of that kind.
    pub runs: u32,
    /// Wall time of the unit, milliseconds.
    pub ms: f64,
    /// Units finished so far, over all suites.
    pub done: u32,
    /// Units in the whole invocation.
    pub total: u32,
}

/// Milliseconds elapsed since `start`.
pub(crate) fn ms_since(start: web_time::Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}
