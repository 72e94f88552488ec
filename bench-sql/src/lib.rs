//! # bench-sql: the SQL benchmark harness
//!
//! What is measured (issue 5):
//! - [`sql::Suite`]: SQLite's 16 speed-comparison cases in the shape pinned by wa-sqlite and
//!   PGlite, generated from a fixed seed; every result records the seed and the SHA-256 of the
//!   generated SQL.
//! - [`batch::Batch`]: one transaction inserting 10,000 rows, verified after a reopen.
//!
//! How: each storage is a [`backend::SqlBackend`] (one small trait, async so that browser
//! backends can await OPFS); [`runner`] drives one fresh run through the lifecycle phases
//! (preparation, initialization, workload, explicit sync, close, reopen, verification, with
//! cleanup outside the timings), and [`runner::run_rounds`] runs every backend once per round
//! in a seeded shuffled order (warm-up rounds first). Results are `bench_results` types (the
//! one result schema): [`runner::run_rounds`] returns a `bench_results::SqlSection`, whose
//! `summarize` computes the medians, paired ratios and goal checks. Backends written in
//! JavaScript join the same rounds through [`runner::Contestant`] (the web crate does that).
//!
//! Natively, [`native`] has SQLite's `:memory:`, SQLite's unix VFS on a file, and our VFS over
//! `opfs_vfs::storage::StdStorage` in both buffer modes at every durability level; the
//! `bench-sql-native` binary runs them.
//!
//! In the browser (wasm32, a dedicated worker), `browser` has our VFS on OPFS in both buffer
//! modes at every durability level, sqlite-wasm-vfs `sahpool` on OPFS, and the sqlite-wasm-rs
//! memory VFS, the environment capture, and `browser::run_browser`, the entry point of the
//! benchmark page; `handoff`, the multi-tab hand-off suite (two installs of one shared volume
//! taking turns, beside the floor of reopening two access handles).
//!
//! [`scale`], natively and in the browser: a database of many rows built, reopened, scanned,
//! written and shrunk on each backend, with the bytes its files hold at rest (issue 10).

pub mod backend;
pub mod batch;
#[cfg(target_arch = "wasm32")]
pub mod browser;
#[cfg(target_arch = "wasm32")]
pub mod handoff;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
pub mod runner;
pub mod scale;
pub mod sql;

use rusqlite::fallible_iterator::FallibleIterator as _;
use rusqlite::Connection;

/// Errors of the harness and its backends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// SQLite reported an error.
    #[error("SQLite: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A native file operation failed.
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// Our volume failed (mount, flush, close).
    #[error("volume: {0}")]
    Volume(#[from] opfs_vfs::Error),
    /// Our physical storage failed to open.
    #[error("storage: {0}")]
    Storage(#[from] opfs_vfs::storage::StorageError),
    /// Registering or unregistering our SQLite VFS failed.
    #[error("VFS registration: {0}")]
    Register(#[from] opfs_vfs::sqlite::RegisterError),
    /// Installing our volume in the browser (`opfs_vfs::web::install`), or closing it, failed.
    #[cfg(target_arch = "wasm32")]
    #[error("install: {0}")]
    Install(#[from] opfs_vfs::web::InstallError),
    /// A browser facility failed (a JavaScript exception, or the sahpool VFS), with its message.
    #[error("browser: {0}")]
    Browser(String),
    /// A verification after reopen found something other than what the workload left.
    #[error("verification failed: {0}")]
    Verify(String),
    /// A backend was driven out of order (e.g. `open` before `prepare`), or cannot do what was
    /// asked (e.g. reopen a non-persistent database).
    #[error("backend {backend}: {message}")]
    Lifecycle {
        /// The backend's name.
        backend: String,
        /// What went wrong.
        message: String,
    },
}

/// The suite and the batch from `seed`, every count divided by `scale` (1: full size).
pub fn workloads(seed: u64, scale: u32) -> (sql::Suite, batch::Batch) {
    let scale = scale.max(1);
    (
        sql::Suite::generate_scaled(seed, scale),
        batch::Batch::generate(seed, (batch::BATCH_ROWS / scale).max(1)),
    )
}

/// Runs `sql` the way `sqlite3_exec` does without a callback: every statement is prepared in
/// turn and stepped until it has no more rows. Returns the number of rows the statements
/// produced (a sanity figure; the suite's SELECTs produce one row each).
///
/// The script is handed to SQLite in chunks that end at a line ending in `;` (so a line that
/// ends in `;` must end a statement, which holds for everything this crate generates). Why:
/// rusqlite passes SQLite the length of the remaining text, which is not NUL-terminated, and
/// `sqlite3_prepare` then copies all of it before parsing one statement. On a 25,000-statement
/// script that is quadratic (gigabytes of copying, seconds of CPU) and would swamp what is
/// measured; wa-sqlite and `sqlite3_exec` pass NUL-terminated text and copy nothing. With
/// chunks, each copy is one statement long, which costs next to nothing next to parsing it.
pub fn execute_script(conn: &Connection, sql: &str) -> Result<u64, rusqlite::Error> {
    let mut produced = 0;
    let mut start = 0;
    for (newline, _) in sql.match_indices('\n') {
        if sql[start..newline].trim_end().ends_with(';') {
            produced += execute_chunk(conn, &sql[start..=newline])?;
            start = newline + 1;
        }
    }
    produced += execute_chunk(conn, &sql[start..])?;
    Ok(produced)
}

/// Every statement of `sql`, stepped to completion.
fn execute_chunk(conn: &Connection, sql: &str) -> Result<u64, rusqlite::Error> {
    let mut produced = 0;
    let mut statements = rusqlite::Batch::new(conn, sql);
    while let Some(mut stmt) = statements.next()? {
        let mut rows = stmt.raw_query();
        while rows.next()?.is_some() {
            produced += 1;
        }
    }
    Ok(produced)
}

/// Drives a future to completion on the current thread. Native backends never wait on
/// anything, so their futures are ready at the first poll; this parks the thread otherwise.
#[cfg(not(target_arch = "wasm32"))]
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }

    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(out) => return out,
            Poll::Pending => std::thread::park(),
        }
    }
}

/// Milliseconds elapsed since `start`, as `f64`.
pub(crate) fn ms_since(start: web_time::Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execute_script_steps_every_row() {
        let conn = Connection::open_in_memory().unwrap();
        let n = execute_script(
            &conn,
            "CREATE TABLE t(x); INSERT INTO t VALUES (1),(2),(3);\n\
             SELECT x FROM t; SELECT count(*) FROM t;",
        )
        .unwrap();
        assert_eq!(n, 4);
        assert!(execute_script(&conn, "SELECT * FROM missing;").is_err());
        // A statement over several lines, several statements on one line, no final newline.
        let n = execute_script(
            &conn,
            "INSERT INTO t\nVALUES (4);\n\nSELECT 1; SELECT 2;\n  \nSELECT x\nFROM t WHERE x = 4",
        )
        .unwrap();
        assert_eq!(n, 3);
    }

    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn block_on_ready_future() {
        assert_eq!(block_on(async { 7 }), 7);
    }
}
