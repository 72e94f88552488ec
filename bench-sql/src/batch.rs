//! The 10,000-row transaction batch: one transaction inserting 10,000 rows through one prepared
//! statement (the way an application loads data), and the verification run after a reopen.
//!
//! The table is created by [`Batch::setup`] before the timed workload. Rows are
//! `(a, b, name of b)` with `a` = 1, 2, … and `b` drawn like the suite's, from the stream of
//! `seed ^ BATCH_STREAM` so that the batch and the suite never share numbers.

use rusqlite::{params, Connection};
use sha2::{Digest, Sha256};

use crate::sql::{number_name, SplitMix64, B_RANGE};
use crate::BenchError;

/// Rows inserted by the full-size batch.
pub const BATCH_ROWS: u32 = 10_000;

/// XORed into the seed to give the batch its own random stream.
pub const BATCH_STREAM: u64 = 0xBA7C_4000_0000_0000;

/// The table, created by [`Batch::setup`].
pub const CREATE_SQL: &str = "CREATE TABLE batch(a INTEGER, b INTEGER, c VARCHAR(100))";

/// The statement prepared once and run for every row.
pub const INSERT_SQL: &str = "INSERT INTO batch VALUES(?1, ?2, ?3)";

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// 1-based row number.
    pub a: u32,
    /// Random in `[0, B_RANGE)`.
    pub b: u32,
    /// English name of `b`.
    pub c: String,
}

/// The batch generated from one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The seed (the suite's; the stream is `seed ^ BATCH_STREAM`).
    pub seed: u64,
    /// The rows, in insertion order.
    pub rows: Vec<Row>,
}

impl Batch {
    /// `rows` rows from `seed` ([`BATCH_ROWS`] for the full-size batch).
    pub fn generate(seed: u64, rows: u32) -> Self {
        let mut rng = SplitMix64::new(seed ^ BATCH_STREAM);
        let rows = (1..=rows)
            .map(|a| {
                // below(B_RANGE) < 100,000 fits in a u32.
                let b = u32::try_from(rng.below(B_RANGE)).unwrap_or(0);
                Row {
                    a,
                    b,
                    c: number_name(b),
                }
            })
            .collect();
        Self { seed, rows }
    }

    /// Row count as `u32` (it was generated from one).
    pub fn len(&self) -> u32 {
        u32::try_from(self.rows.len()).unwrap_or(u32::MAX)
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Creates the table (untimed, before the workload).
    pub fn setup(&self, conn: &Connection) -> Result<(), BenchError> {
        conn.execute_batch(CREATE_SQL)?;
        Ok(())
    }

    /// The timed workload: `BEGIN`, every row through one prepared statement, `COMMIT`.
    pub fn run(&self, conn: &Connection) -> Result<(), BenchError> {
        conn.execute_batch("BEGIN")?;
        let inserted = (|| -> Result<(), rusqlite::Error> {
            let mut stmt = conn.prepare(INSERT_SQL)?;
            for row in &self.rows {
                stmt.execute(params![row.a, row.b, row.c])?;
            }
            Ok(())
        })();
        match inserted {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e.into());
            }
        }
        Ok(())
    }

    /// After reopen: every row is present (count, `sum(a)`, `sum(b)` and the total length of
    /// `c` match what was inserted) and `PRAGMA integrity_check` says ok.
    pub fn verify(&self, conn: &Connection) -> Result<(), BenchError> {
        let got: (i64, i64, i64, i64) = conn.query_row(
            "SELECT count(*), coalesce(sum(a), 0), coalesce(sum(b), 0), \
             coalesce(sum(length(c)), 0) FROM batch",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let sum = |f: &dyn Fn(&Row) -> i64| self.rows.iter().map(f).sum::<i64>();
        let want = (
            sum(&|_| 1),
            sum(&|r| i64::from(r.a)),
            sum(&|r| i64::from(r.b)),
            sum(&|r| i64::try_from(r.c.len()).unwrap_or(i64::MAX)),
        );
        if got != want {
            return Err(BenchError::Verify(format!(
                "batch after reopen: (rows, sum a, sum b, total length c) = \
                 {got:?}, expected {want:?}"
            )));
        }
        integrity_check(conn)
    }

    /// Lower-case hex SHA-256 of the workload: the two statements, then each row as
    /// `a,b,c\n`.
    pub fn sha256(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(CREATE_SQL.as_bytes());
        hasher.update([0]);
        hasher.update(INSERT_SQL.as_bytes());
        hasher.update([0]);
        for row in &self.rows {
            hasher.update(format!("{},{},{}\n", row.a, row.b, row.c).as_bytes());
        }
        crate::sql::hex(&hasher.finalize())
    }
}

/// `PRAGMA integrity_check` must return the single row `ok`.
pub fn integrity_check(conn: &Connection) -> Result<(), BenchError> {
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let rows: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if rows != ["ok"] {
        return Err(BenchError::Verify(format!("integrity_check: {rows:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_distinct_from_suite() {
        let a = Batch::generate(7, 100);
        assert_eq!(a, Batch::generate(7, 100));
        assert_eq!(a.sha256(), Batch::generate(7, 100).sha256());
        assert_ne!(a.sha256(), Batch::generate(8, 100).sha256());
        assert_eq!(a.len(), 100);
        assert_eq!(a.rows[99].a, 100);
        assert!(a.rows.iter().all(|r| u64::from(r.b) < B_RANGE));
    }

    #[test]
    fn run_then_verify_in_memory() {
        let batch = Batch::generate(1, BATCH_ROWS);
        let conn = Connection::open_in_memory().unwrap();
        batch.setup(&conn).unwrap();
        batch.run(&conn).unwrap();
        batch.verify(&conn).unwrap();
        // A missing row is caught.
        conn.execute("DELETE FROM batch WHERE a = 5000", [])
            .unwrap();
        assert!(matches!(batch.verify(&conn), Err(BenchError::Verify(_))));
    }
}
