//! rusqlite round trips over the SQLite VFS: every buffer mode × durability × journal mode,
//! reopened from a fresh mount (in the *other* buffer mode) after a clean close and after a
//! crash; the rsqlite-vfs conformance suite; compile flags.
#![cfg(not(target_arch = "wasm32"))]

mod sqlite_common;

use opfs_vfs::sqlite::rusqlite::{params, Connection};
use opfs_vfs::sqlite::{self, TempFiles};
use opfs_vfs::storage::{MemoryStorage, StdStorage};
use opfs_vfs::{BufferMode, Durability};
use sqlite_common::*;

type Rows = Vec<(i64, String, Vec<u8>)>;

fn rows(c: &Connection) -> Rows {
    let mut st = c.prepare("SELECT id, v, b FROM t ORDER BY id").unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Autocommit inserts, a multi-statement transaction bigger than the page cache, updates,
/// deletes, an index, a rolled-back transaction.
fn workload(c: &Connection) {
    c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, b BLOB);")
        .unwrap();
    for i in 0..50i64 {
        c.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3)",
            params![
                i,
                format!("row {i}"),
                vec![u8::try_from(i).expect("small"); 100]
            ],
        )
        .unwrap();
    }
    c.execute_batch("PRAGMA cache_size=5; BEGIN;").unwrap();
    for i in 50..400i64 {
        c.execute(
            "INSERT INTO t VALUES (?1, ?2, ?3)",
            params![
                i,
                format!("bulk {i}"),
                vec![u8::try_from(i % 251).expect("small"); 700]
            ],
        )
        .unwrap();
    }
    c.execute_batch(
        "COMMIT; PRAGMA cache_size=-2000;
         UPDATE t SET v = v || ' updated' WHERE id % 7 = 0;
         DELETE FROM t WHERE id % 11 = 0;
         CREATE INDEX t_v ON t(v);
         BEGIN; DELETE FROM t; ROLLBACK;",
    )
    .unwrap();
}

fn round_trip(mode: BufferMode, durability: Durability, jm: &str) {
    let other = match mode {
        BufferMode::Disk => BufferMode::Memory,
        BufferMode::Memory => BufferMode::Disk,
    };
    let ctx = format!("{mode:?} {durability:?} {jm}");
    let h = register(mount(MemoryStorage::new(), opts(mode, durability)));
    let c = open(&h, "main.db");
    c.execute_batch(&setup_sql(jm)).unwrap();
    let got: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(got, jm, "{ctx}");
    workload(&c);
    let expect = rows(&c);
    assert_eq!(expect.len(), 400 - 37, "{ctx}");
    assert_eq!(integrity(&c), "ok", "{ctx}");
    // Crash image: the storage as it is now, before the connection closes.
    let crashed = h.volume().borrow().storage().clone();
    c.close().unwrap();
    let storage = take_volume(h).close().unwrap();

    for (what, st) in [("clean close", storage), ("crash", crashed)] {
        if what == "crash" && durability != Durability::Strict {
            // Relaxed: unflushed commits may be lost; nothing to compare exactly.
            continue;
        }
        let h = register(mount(st, opts(other, durability)));
        let c = open(&h, "main.db");
        c.execute_batch(reopen_sql(jm)).unwrap();
        assert_eq!(integrity(&c), "ok", "{ctx} after {what}");
        assert_eq!(rows(&c), expect, "{ctx} after {what}");
        // Still writable after reopening.
        c.execute("INSERT INTO t VALUES (1000, 'again', x'00')", [])
            .unwrap();
        c.close().unwrap();
        drop(take_volume(h));
    }
}

#[test]
fn round_trips_all_modes_and_journal_modes() {
    for mode in [BufferMode::Disk, BufferMode::Memory] {
        for durability in [Durability::Strict, Durability::Relaxed] {
            for jm in JOURNAL_MODES {
                round_trip(mode, durability, jm);
            }
        }
    }
}

#[test]
fn std_storage_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(BufferMode::Disk, Durability::Strict);
    let h = register(mount(StdStorage::open(dir.path()).unwrap(), o));
    let c = open(&h, "app.db");
    workload(&c);
    let expect = rows(&c);
    c.close().unwrap();
    drop(take_volume(h).close().unwrap());
    let h = register(mount(
        StdStorage::open(dir.path()).unwrap(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let c = open(&h, "app.db");
    assert_eq!(integrity(&c), "ok");
    assert_eq!(rows(&c), expect);
}

#[test]
fn wal_without_exclusive_locking_is_refused_clearly() {
    let h = register(mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let c = open(&h, "w.db");
    let err = c
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .unwrap_err();
    assert!(
        err.to_string().contains("locking_mode=EXCLUSIVE"),
        "unexpected error: {err}"
    );
    // The database still works in its old mode.
    c.execute_batch("CREATE TABLE x(a); INSERT INTO x VALUES (1);")
        .unwrap();
    let jm: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(jm, "delete");
}

#[test]
fn temp_tables_and_vacuum_in_both_temp_file_modes() {
    for temp_files in [TempFiles::Memory, TempFiles::Volume] {
        let vol = mount(
            MemoryStorage::new(),
            opts(BufferMode::Memory, Durability::Strict),
        );
        let opts = sqlite::VfsOptions {
            temp_files,
            ..Default::default()
        };
        let h = sqlite::register_with(&unique_name("tmp"), vol.clone(), opts).unwrap();
        let c = open(&h, "t.db");
        c.execute_batch(
            "PRAGMA temp_store=FILE;
             CREATE TABLE a(x); CREATE TEMP TABLE tt(y);
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<3000)
             INSERT INTO tt SELECT randomblob(200) FROM n;
             INSERT INTO a SELECT y FROM tt ORDER BY y;
             DELETE FROM a WHERE rowid % 2 = 0;
             VACUUM;",
        )
        .unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM a", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1500);
        assert_eq!(integrity(&c), "ok");
        c.close().unwrap();
        // Nothing but the database is left in the volume.
        let names: Vec<String> = vol.borrow().list().into_iter().map(|m| m.name).collect();
        assert_eq!(names, ["t.db"], "{temp_files:?}");
    }
}

#[test]
fn compile_options_include_batch_atomic_write() {
    let c = Connection::open_in_memory().unwrap();
    let mut st = c.prepare("PRAGMA compile_options").unwrap();
    let opts: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        opts.iter().any(|o| o == "ENABLE_BATCH_ATOMIC_WRITE"),
        "SQLite was built without SQLITE_ENABLE_BATCH_ATOMIC_WRITE (LIBSQLITE3_FLAGS in \
         .cargo/config.toml): {opts:?}"
    );
}

#[test]
fn rsqlite_vfs_test_suite() {
    for mode in [BufferMode::Disk, BufferMode::Memory] {
        for temp_files in [TempFiles::Memory, TempFiles::Volume] {
            let vol = mount(MemoryStorage::new(), opts(mode, Durability::Strict));
            sqlite::run_rsqlite_test_suite(vol.clone(), temp_files)
                .unwrap_or_else(|e| panic!("{mode:?} {temp_files:?}: {e}"));
            assert!(vol.borrow().list().is_empty(), "suite left files behind");
        }
    }
}

/// Memory mode, transactions bigger than the spill threshold (16 × `write_buffer_bytes`; 64 KiB
/// here, so 1 MiB): the first one creates the database, a later one rewrites it. Every row
/// reads back in the same connection right after each COMMIT, and after a checkpoint and a
/// remount. Before the fix in `Volume::apply` (found by fuzz/, see
/// `tests/fuzz_regressions.rs`), pages spilled to the log were missing from the resident copy:
/// the first transaction's database read as zeros ("file is not a database"), and a checkpoint
/// made that permanent.
#[test]
fn memory_mode_transactions_beyond_the_spill_threshold() {
    for jm in JOURNAL_MODES {
        let o = opfs_vfs::VolumeOptions {
            write_buffer_bytes: 64 << 10,
            ..opts(BufferMode::Memory, Durability::Strict)
        };
        let h = register(mount(MemoryStorage::new(), o.clone()));
        let c = open(&h, "big.db");
        c.execute_batch(&setup_sql(jm)).unwrap();
        // Every row holds its id (plus `shift`) as 1,000 digits: a zero or stale page shows.
        let check = |c: &Connection, shift: i64, when: &str| {
            let (count, right): (i64, i64) = c
                .query_row(
                    "SELECT count(*), sum(b = CAST(printf('%01000d', id + ?1) AS BLOB)) FROM t",
                    [shift],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap_or_else(|e| panic!("{jm}, {when}: {e}"));
            assert_eq!(count, 3000, "{jm}, {when}: rows");
            assert_eq!(right, 3000, "{jm}, {when}: rows with the bytes written");
            assert_eq!(integrity(c), "ok", "{jm}, {when}");
        };
        c.execute_batch("BEGIN; CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB);")
            .unwrap();
        for i in 0..3000i64 {
            c.execute(
                "INSERT INTO t VALUES (?1, CAST(printf('%01000d', ?1) AS BLOB))",
                [i],
            )
            .unwrap();
        }
        c.execute_batch("COMMIT").unwrap();
        check(&c, 0, "after the first transaction");
        c.execute_batch("BEGIN; UPDATE t SET b = CAST(printf('%01000d', id + 7) AS BLOB); COMMIT;")
            .unwrap();
        check(&c, 7, "after the rewrite");
        drop(c);
        let mut v = take_volume(h);
        v.checkpoint().unwrap();
        let h = register(mount(v.close().unwrap(), o));
        let c = open(&h, "big.db");
        c.execute_batch(reopen_sql(jm)).unwrap();
        check(&c, 7, "after a checkpoint and a remount");
    }
}
