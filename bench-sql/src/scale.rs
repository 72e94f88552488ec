//! The scale-and-space suite (issue 10): a database of many rows built, reopened, read,
//! written and shrunk on each backend, with the bytes its files hold at rest. What one turn
//! does, and how the figures are summarized: `bench_results::scale`.
//!
//! Natively it runs on our VFS over `StdStorage` files and on SQLite's unix VFS (the
//! baseline); in the browser on our VFS over OPFS and on `sahpool` (one OPFS file per
//! database, the baseline). Every backend is a [`SqlBackend`]; the suite needs three of its
//! optional methods: [`SqlBackend::stored_bytes`], [`SqlBackend::checkpoint`] and
//! [`SqlBackend::bytes_written`].
//!
//! The build's rows are 1 KiB blobs of one repeated byte (like the native `scale` example):
//! what is measured is how the bytes are laid out and moved, not the data's entropy.

use bench_results::scale::{ScaleBackend, ScaleConfig, ScaleRun, ScaleSection};
use bench_results::sql::Round;
use bench_results::stats::round_orders;
use rusqlite::{params, Connection};
use web_time::Instant;

use crate::backend::SqlBackend;
use crate::{ms_since, BenchError};

/// Rows per build transaction.
pub const BATCH_ROWS: u32 = 10_000;
/// Bytes of each row's blob.
pub const ROW_BYTES: u32 = 1000;
/// Autocommit INSERTs timed at size.
pub const AUTOCOMMITS: u32 = 20;

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalePlan {
    /// Rows to build (at least 1).
    pub rows: u64,
    /// Measured rounds (at least 1).
    pub runs: u32,
    /// Warm-up rounds before them.
    pub warmup: u32,
    /// Seed of the round orders.
    pub order_seed: u64,
    /// Name of the backend ratios are taken to.
    pub baseline: String,
}

/// Reported before and after each turn of [`run_scale`].
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleProgress {
    /// Turns finished so far.
    pub done: u32,
    /// Turns planned (failures shorten the run).
    pub total: u32,
    /// The backend.
    pub backend: String,
    /// 0-based round.
    pub round: u32,
    /// A warm-up round.
    pub warmup: bool,
    /// `None`: starting. `Some(Ok(ms))`: finished (the build's time). `Some(Err)`: failed.
    pub outcome: Option<Result<f64, String>>,
}

impl std::fmt::Display for ScaleProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.warmup { "warm-up" } else { "run" };
        write!(
            f,
            "[{}/{}] scale {} round {} ({kind})",
            self.done,
            self.total,
            self.backend,
            self.round + 1
        )?;
        match &self.outcome {
            Some(Ok(ms)) => write!(f, ": built in {ms:.1} ms"),
            Some(Err(e)) => write!(f, ": FAILED: {e}"),
            None => write!(f, "…"),
        }
    }
}

/// Runs every backend once per round, in each round's seeded shuffled order, warm-up rounds
/// first. A backend that fails keeps its earlier runs, gets the error, and runs in no later
/// round. Returns the section, not yet summarized.
pub async fn run_scale<B: SqlBackend>(
    backends: &mut [B],
    plan: &ScalePlan,
    progress: &mut dyn FnMut(&ScaleProgress),
) -> ScaleSection {
    let runs = plan.runs.max(1);
    let rounds = plan.warmup + runs;
    let mut results: Vec<ScaleBackend> = backends
        .iter()
        .map(|b| ScaleBackend {
            meta: b.meta(),
            ..ScaleBackend::default()
        })
        .collect();
    let total = rounds.saturating_mul(u32::try_from(backends.len()).unwrap_or(u32::MAX));
    let mut done = 0;
    let mut round_log = Vec::new();
    for (round, order) in (0..).zip(round_orders(plan.order_seed, backends.len(), rounds)) {
        let warmup = round < plan.warmup;
        let mut ran = Vec::new();
        for i in order {
            let result = &mut results[i];
            if result.error.is_some() {
                continue;
            }
            ran.push(result.meta.name.clone());
            let mut report = |done, outcome| {
                progress(&ScaleProgress {
                    done,
                    total,
                    backend: result.meta.name.clone(),
                    round,
                    warmup,
                    outcome,
                });
            };
            report(done, None);
            let out = run_once(&mut backends[i], plan.rows, round).await;
            done += 1;
            report(
                done,
                Some(out.as_ref().map(|r| r.build_ms).map_err(|e| e.to_string())),
            );
            match out {
                Ok(r) if warmup => result.warmup_runs.push(r),
                Ok(r) => result.runs.push(r),
                Err(e) => result.error = Some(format!("round {}: {e}", round + 1)),
            }
        }
        round_log.push(Round {
            index: round,
            warmup,
            order: ran,
            load: None,
        });
    }
    ScaleSection {
        config: ScaleConfig {
            rows: plan.rows,
            row_bytes: ROW_BYTES,
            batch_rows: BATCH_ROWS,
            autocommits: AUTOCOMMITS,
            runs,
            warmup: plan.warmup,
            order_seed: Some(plan.order_seed),
            baseline: plan.baseline.clone(),
        },
        rounds: round_log,
        backends: results,
        ..ScaleSection::default()
    }
}

/// One turn from a wiped state (module docs of `bench_results::scale`); cleans up whatever
/// happened, and the turn's error wins over a cleanup error.
pub async fn run_once<B: SqlBackend>(
    backend: &mut B,
    rows: u64,
    round: u32,
) -> Result<ScaleRun, BenchError> {
    let out = turn(backend, rows.max(1), round).await;
    let cleaned = backend.cleanup().await;
    let run = out?;
    cleaned?;
    Ok(run)
}

async fn turn<B: SqlBackend>(
    backend: &mut B,
    rows: u64,
    round: u32,
) -> Result<ScaleRun, BenchError> {
    let mut run = ScaleRun {
        round,
        ..ScaleRun::default()
    };
    backend.prepare().await?;
    let conn = backend.open().await?;
    let built = (|| {
        let start = Instant::now();
        build(&conn, rows)?;
        run.build_ms = ms_since(start);
        run.logical_bytes = logical_bytes(&conn)?;
        Ok::<_, BenchError>(())
    })();
    if let Err(e) = built {
        let _ = backend.close(conn).await;
        return Err(e);
    }
    if let Err(e) = checkpointed(backend, &conn, &mut run).await {
        let _ = backend.close(conn).await;
        return Err(e);
    }
    backend.close(conn).await?;
    run.stored_bytes = backend.stored_bytes().await?;

    let start = Instant::now();
    let conn = backend.reopen().await?;
    run.reopen_ms = ms_since(start);
    if let Err(e) = at_size(&conn, rows, &mut run) {
        let _ = backend.close(conn).await;
        return Err(e);
    }
    backend.close(conn).await?;
    run.stored_after_vacuum = backend.stored_bytes().await?;
    Ok(run)
}

/// The explicit sync, then the checkpoint (timed) where the backend has one, then the bytes
/// written since the open.
async fn checkpointed<B: SqlBackend>(
    backend: &mut B,
    conn: &Connection,
    run: &mut ScaleRun,
) -> Result<(), BenchError> {
    backend.sync(conn).await?;
    let start = Instant::now();
    if backend.checkpoint(conn).await? {
        run.checkpoint_ms = Some(ms_since(start));
    }
    run.bytes_written = backend.bytes_written();
    Ok(())
}

/// `CREATE TABLE t` and `rows` rows in transactions of [`BATCH_ROWS`].
fn build(conn: &Connection, rows: u64) -> Result<(), BenchError> {
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)")?;
    let blob = vec![0x5A_u8; ROW_BYTES as usize];
    let mut done = 0;
    while done < rows {
        let n = (rows - done).min(u64::from(BATCH_ROWS));
        conn.execute_batch("BEGIN")?;
        {
            let mut st = conn.prepare("INSERT INTO t(v) VALUES (?1)")?;
            for _ in 0..n {
                st.execute(params![blob])?;
            }
        }
        conn.execute_batch("COMMIT")?;
        done += n;
    }
    Ok(())
}

/// SQLite's page count × page size.
fn logical_bytes(conn: &Connection) -> Result<u64, BenchError> {
    let pages: i64 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    Ok(u64::try_from(pages.saturating_mul(size)).unwrap_or(0))
}

/// After the reopen: the first read, two full scans, the autocommit INSERTs, DROP + VACUUM.
/// Each scan must see every row built.
fn at_size(conn: &Connection, rows: u64, run: &mut ScaleRun) -> Result<(), BenchError> {
    let start = Instant::now();
    let len: i64 = conn.query_row("SELECT length(v) FROM t WHERE id = 1", [], |r| r.get(0))?;
    run.first_read_ms = ms_since(start);
    if len != i64::from(ROW_BYTES) {
        return Err(BenchError::Verify(format!(
            "row 1 has {len} bytes, not {ROW_BYTES}"
        )));
    }
    for warm in [false, true] {
        let start = Instant::now();
        let (n, bytes): (i64, i64) =
            conn.query_row("SELECT count(*), sum(length(v)) FROM t", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let ms = ms_since(start);
        if u64::try_from(n).ok() != Some(rows) || bytes != n * i64::from(ROW_BYTES) {
            return Err(BenchError::Verify(format!(
                "the scan found {n} rows of {bytes} bytes, not {rows} of {ROW_BYTES} each"
            )));
        }
        if warm {
            run.scan_warm_ms = ms;
        } else {
            run.scan_cold_ms = ms;
        }
    }
    let start = Instant::now();
    {
        let mut st = conn.prepare("INSERT INTO t(v) VALUES (zeroblob(?1))")?;
        for _ in 0..AUTOCOMMITS {
            st.execute(params![ROW_BYTES])?;
        }
    }
    run.autocommit_ms = ms_since(start) / f64::from(AUTOCOMMITS);
    let start = Instant::now();
    conn.execute_batch("DROP TABLE t; VACUUM")?;
    run.vacuum_ms = ms_since(start);
    run.logical_after_vacuum = logical_bytes(conn)?;
    Ok(())
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::native::{NativeBackend, OursBackend, UnixFileBackend};
    use bench_results::goals::Verdict;
    use bench_results::Bootstrap;
    use opfs_vfs::{BufferMode, Durability};

    /// Two rounds of 3,000 rows on the unix VFS and ours in both modes: every measure is
    /// filled where the backend has it, the data survives the reopen (the scans check it),
    /// the space comes back after DROP + VACUUM, and ours keeps its space goals.
    #[test]
    fn native_scale_runs_and_measures() {
        let base = tempfile::tempdir().unwrap();
        let mut backends = vec![
            NativeBackend::UnixFile(UnixFileBackend::new(base.path())),
            NativeBackend::Ours(OursBackend::new(
                base.path(),
                BufferMode::Disk,
                Durability::Strict,
            )),
            NativeBackend::Ours(OursBackend::new(
                base.path(),
                BufferMode::Memory,
                Durability::Strict,
            )),
        ];
        let plan = ScalePlan {
            rows: 3000,
            runs: 2,
            warmup: 0,
            order_seed: 7,
            baseline: "sqlite-unix-file".to_owned(),
        };
        let mut seen = 0;
        let mut s = crate::block_on(run_scale(&mut backends, &plan, &mut |p| {
            if p.outcome.is_some() {
                seen += 1;
            }
        }));
        assert_eq!(seen, 6);
        s.summarize(&Bootstrap::default());
        for b in &s.backends {
            assert_eq!(b.error, None, "{}", b.meta.name);
            assert_eq!(b.runs.len(), 2, "{}", b.meta.name);
            for r in &b.runs {
                // 3,000 rows of 1,000 bytes: at least 3 MB of pages.
                assert!(r.logical_bytes >= 3_000_000, "{}: {r:?}", b.meta.name);
                assert!(
                    r.bytes_written.unwrap() >= r.logical_bytes,
                    "{}: {r:?}",
                    b.meta.name
                );
                let stored = r.stored_bytes.unwrap();
                assert!(stored >= r.logical_bytes, "{}: {r:?}", b.meta.name);
                assert!(
                    r.stored_after_vacuum.unwrap() < stored / 2,
                    "{}: {r:?}",
                    b.meta.name
                );
                assert!(r.logical_after_vacuum < r.logical_bytes / 10);
                let ours = b.meta.name.starts_with("ours-");
                assert_eq!(r.checkpoint_ms.is_some(), ours, "{}", b.meta.name);
            }
        }
        for goal in ["scale-space", "scale-vacuum"] {
            for b in ["ours-disk-strict", "ours-memory-strict"] {
                let c = s.goals.iter().find(|c| c.goal == goal && c.backend == b);
                let c = c.unwrap_or_else(|| panic!("{goal} {b}: no check"));
                assert!(c.ratio.unwrap().max <= c.threshold, "{goal} {b}: {c:?}");
                assert_ne!(c.verdict, Verdict::NotMet);
            }
        }
        assert_eq!(s.rounds.len(), 2);
        assert!(s.ratios.iter().any(|r| r.backend == "ours-disk-strict"));
    }
}
