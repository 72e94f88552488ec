//! # bench-runner: the benchmark page, headless, in Chromium and Firefox
//!
//! The page (`web/`, built by `web/build.sh`, served by `web`'s `serve` binary) runs every
//! benchmark itself, in a dedicated worker. This crate only automates it:
//!
//! 1. [`child::start_serve`] starts the serve binary on a free port and reads the address from
//!    its first stdout line (`listening on http://127.0.0.1:PORT/`);
//! 2. [`child::start_driver`] starts chromedriver or geckodriver on a free port;
//! 3. [`drive::run_browser`] opens `?preset=…&autorun=1&…` in a headless browser over WebDriver
//!    (fantoccini), polls `window.__bench` and prints progress until the page reports `done` or
//!    `error`, then reads `window.__bench.result` and `consoleErrors` and takes a screenshot;
//! 4. [`doc::validate`] checks the result document; the JSON is written to
//!    `results/<date>-<browser>.json` and [`report::markdown`] renders
//!    `results/<date>-report.md` from every result file of that date.
//!
//! ## The page's automation contract
//!
//! - URL parameters: `preset=quick|full|phone`, `autorun=1`, `suites=sql,batch,fs,raw,handoff`,
//!   `backends=<comma list>|all`, `runs=N`, `fs_runs=N`, `peer_runs=N`, `files=N`,
//!   `warmup=N`, `sql_scale=N`, `batch_repeats=N`, `fs_repeats=N`, `order_seed=N`,
//!   `commit=<sha>`.
//! - `--page-loads N` runs the page N times per browser, each in a new session with the round
//!   orders' seed + load, and combines the documents ([`bench_results::combine`]);
//!   `bench-runner combine` does the same with the files of several such runs of one build
//!   (sittings: [`sittings::combine_files`]).
//! - `window.__bench = { state: 'idle'|'running'|'done'|'error', progress, result, error,
//!   consoleErrors: [], calibrate() }`.
//! - `result` is one `bench_results::Document` (schema version 2), every summary computed.
//!
//! This crate reads documents as `bench_results` types (the one schema; nothing mirrored): a
//! report can be regenerated from result files of older schema versions (converted on load),
//! and the runner builds without SQLite (it links `bench-results`, not bench-sql or bench-fs).

pub mod child;
pub mod doc;
pub mod drive;
pub mod options;
pub mod report;
pub mod run;
pub mod sittings;
pub mod util;

use std::fmt;

/// Every failure of the runner: a message with its context (the runner reports and exits; no
/// caller matches on kinds).
#[derive(Debug)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&str> for Error {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

/// Result of the runner's operations.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds what was being done to an error.
pub trait Context<T> {
    /// `Err(e)` becomes `Err("{what}: {e}")`.
    fn context(self, what: impl fmt::Display) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl fmt::Display) -> Result<T> {
        self.map_err(|e| Error(format!("{what}: {e}")))
    }
}
