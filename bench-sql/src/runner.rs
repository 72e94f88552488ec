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

use rusqlite::Connection;
use web_time::Instant;

use crate::backend::SqlBackend;
use crate::batch::{integrity_check, Batch};
use crate::result::{BatchRun, CaseSample, Phases, SuiteRun};
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

    let total_ms = cases.iter().map(|c| c.ms).sum();
    let test1_ms = cases.iter().find(|c| c.number == 1).map_or(0.0, |c| c.ms);
    Ok(SuiteRun {
        phases,
        cases,
        total_ms,
        test1_ms,
    })
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
