//! What a SQLite commit means on this VFS, off the configuration the benchmarks use: every
//! journal mode × `synchronous` × durability level; failures and what a remount shows; two
//! registrations over one volume. Each test names the finding of issue 9 it covers.
#![cfg(not(target_arch = "wasm32"))]

mod sqlite_common;

use std::cell::RefCell;
use std::rc::Rc;

use opfs_vfs::sqlite::rusqlite::{self, Connection, ErrorCode};
use opfs_vfs::sqlite::{self, VfsOptions};
use opfs_vfs::storage::{MemoryStorage, StorageError};
use opfs_vfs::testing::{CrashMode, CrashStorage, Fault, FaultEffect, FaultOp};
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};
use sqlite_common::*;

const SYNCS: [&str; 3] = ["off", "normal", "full"];
const LEVELS: [Durability; 3] = [
    Durability::Strict,
    Durability::Relaxed,
    Durability::Balanced,
];

fn fresh() -> CrashStorage {
    let st = CrashStorage::new();
    let v = Volume::mount(st.clone(), VolumeOptions::default()).expect("create");
    drop(v.close().expect("close"));
    CrashStorage::from_image(&st.current_image())
}

fn count(c: &Connection) -> i64 {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

/// Opens `img` as a fresh process would and returns (row count or error text, integrity).
fn reopen(img: opfs_vfs::storage::MemoryStorage, jm: &str) -> (Result<i64, String>, String) {
    let h = register(mount(img, opts(BufferMode::Memory, Durability::Strict)));
    let c = open(&h, "app.db");
    c.execute_batch(reopen_sql(jm)).unwrap();
    let n = c
        .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .map_err(|e| e.to_string());
    let ok = integrity(&c);
    (n, ok)
}

/// Finding 1: with `synchronous=OFF` (any rollback journal) or WAL + `NORMAL`, SQLite never
/// syncs; commits must reach the volume anyway. After 300 acknowledged autocommit INSERTs and
/// a transaction that spills the page cache, the process dies (every written byte survives):
/// Strict and Relaxed keep all of them; Balanced keeps a prefix of them (its promise: the
/// commits of the last delay may be lost). A power loss keeps at least what was flushed.
#[test]
fn commits_reach_the_volume_under_every_synchronous_setting() {
    for jm in JOURNAL_MODES {
        for sync in SYNCS {
            for level in LEVELS {
                let st = fresh();
                let h = register(mount(st.clone(), opts(BufferMode::Disk, level)));
                let c = open(&h, "app.db");
                c.execute_batch(&format!(
                    "{} PRAGMA synchronous={sync}; PRAGMA cache_size=10; \
                     CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);",
                    setup_sql(jm)
                ))
                .unwrap();
                // The VFS answers the pragma itself (as text, like every VFS-answered pragma).
                let got_sync: String = c.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
                let want_sync = match sync {
                    "off" => "0",
                    "normal" => "1",
                    _ => "2",
                };
                assert_eq!(
                    got_sync, want_sync,
                    "PRAGMA synchronous reads back what was set"
                );
                for i in 0..300 {
                    c.execute("INSERT INTO t(v) VALUES (?1)", [format!("row {i}")])
                        .unwrap();
                }
                // A transaction larger than the 10-page cache: SQLite spills mid-transaction.
                c.execute_batch(
                    "BEGIN; INSERT INTO t(v) SELECT printf('%0500d', id) FROM t; COMMIT;",
                )
                .unwrap();
                let acknowledged = 600;
                let ctx = format!("{jm} synchronous={sync} {level:?}");
                // The process dies: nothing is closed, every written byte is kept.
                let (n, ok) = reopen(st.crash(1, CrashMode::KeepAll), jm);
                let n = n.unwrap_or_else(|e| panic!("{ctx}: after a process crash: {e}"));
                assert_eq!(ok, "ok", "{ctx}");
                match level {
                    Durability::Strict | Durability::Relaxed => {
                        assert_eq!(n, acknowledged, "{ctx}: a process crash lost commits")
                    }
                    Durability::Balanced => assert!(n <= acknowledged, "{ctx}"),
                }
                // Power loss: consistent, and (Strict with synchronous=FULL) nothing lost.
                let (n, ok) = reopen(st.crash(2, CrashMode::DropAll), jm);
                assert_eq!(ok, "ok", "{ctx}: power loss");
                if let Ok(n) = n {
                    assert!(n <= acknowledged, "{ctx}");
                    if level == Durability::Strict && sync == "full" {
                        assert_eq!(n, acknowledged, "{ctx}: power loss lost a flushed commit");
                    }
                } else {
                    assert!(
                        level != Durability::Strict || sync != "full",
                        "{ctx}: the table is missing after a power loss"
                    );
                }
                drop(c);
            }
        }
    }
}

/// Issue 14 item 1 and the DESIGN table: one flush per Strict commit in every journal mode,
/// with and without batch-atomic writes (a build without `SQLITE_ENABLE_BATCH_ATOMIC_WRITE`
/// never batches, which `batch_atomic: false` reproduces here).
#[test]
fn one_flush_per_strict_commit_without_batch_atomic() {
    for batch_atomic in [true, false] {
        for jm in JOURNAL_MODES {
            let volume = mount(
                MemoryStorage::new(),
                opts(BufferMode::Memory, Durability::Strict),
            );
            let h = sqlite::register_with(
                &unique_name("nb"),
                volume,
                VfsOptions {
                    batch_atomic,
                    ..VfsOptions::default()
                },
            )
            .unwrap();
            let c = open(&h, "a.db");
            c.execute_batch(&format!(
                "{} CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);",
                setup_sql(jm)
            ))
            .unwrap();
            let before = h.volume().borrow().counters().total();
            for i in 0..100 {
                c.execute("INSERT INTO t(v) VALUES (?1)", [format!("v{i}")])
                    .unwrap();
            }
            let d = h.volume().borrow().counters().total();
            assert_eq!(
                d.flushes - before.flushes,
                100,
                "{jm}, batch atomic {batch_atomic}: flushes for 100 commits"
            );
            assert_eq!(
                d.writes - before.writes,
                100,
                "{jm}: writes for 100 commits"
            );
        }
    }
}

/// Findings 2 and 3: a commit whose log write fails for space is reported as SQLITE_FULL and is
/// absent, live and after a remount; reads keep working; once space is there again (a delete,
/// or a larger quota) the next write succeeds without remounting. A checkpoint that fails for
/// space after a durable commit never turns that commit into a failure.
#[test]
fn full_quota_is_reported_truthfully_and_recovers() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let st = fresh();
        let o = VolumeOptions {
            checkpoint_bytes: 256 << 10,
            ..opts(mode, Durability::Strict)
        };
        let h = register(mount(st.clone(), o));
        let c = open(&h, "app.db");
        c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);")
            .unwrap();
        st.set_quota(Some(st.total_len() + (3 << 20)));
        let mut acknowledged = 0i64;
        let mut full = None;
        for i in 0..10_000 {
            match c.execute("INSERT INTO t(v) VALUES (randomblob(2000))", []) {
                Ok(_) => acknowledged += 1,
                Err(e) => {
                    full = Some((i, e));
                    break;
                }
            }
        }
        let (_, e) = full.expect("the quota was never reached");
        assert_eq!(
            e.sqlite_error_code(),
            Some(ErrorCode::DiskFull),
            "{mode:?}: {e}"
        );
        // Live: the failed INSERT is absent, reads work.
        assert_eq!(
            count(&c),
            acknowledged,
            "{mode:?}: live count after SQLITE_FULL"
        );
        assert_eq!(integrity(&c), "ok");
        assert!(
            h.volume().borrow().poisoned().is_none(),
            "{mode:?}: poisoned by a full disk"
        );
        // A remount of the storage as it is (the process restarts) shows the same rows.
        let (n, ok) = reopen(st.crash(3, CrashMode::KeepAll), "delete");
        assert_eq!(
            (n, ok.as_str()),
            (Ok(acknowledged), "ok"),
            "{mode:?}: after remount"
        );
        // Space comes back: the next write works, without reinstalling.
        st.set_quota(None);
        c.execute("INSERT INTO t(v) VALUES (randomblob(2000))", [])
            .unwrap_or_else(|e| panic!("{mode:?}: insert after the quota was raised: {e}"));
        assert_eq!(count(&c), acknowledged + 1);
        let (n, _) = reopen(st.crash(4, CrashMode::DropAll), "delete");
        assert_eq!(
            n,
            Ok(acknowledged + 1),
            "{mode:?}: Strict commit after recovery lost"
        );
    }
}

/// Storage full, then deletes (issue 10; found by `bench-runner/tests/quota_e2e.rs` in both
/// browsers): at a full quota, the commits that delete rows must still succeed (they free
/// space instead of taking it), and afterwards new rows fit again, without remounting.
/// Notes of 100 KB (as the e2e test), 8 MiB quota, the limit known at mount (as
/// `web::install` passes the origin's quota from `navigator.storage.estimate()`), in both
/// buffer modes and at every durability level.
///
/// Before the first `SQLITE_FULL` the database must hold at least 80 % of what one file could
/// take under the same quota (issue 10's goal). Under this wrapper that is the whole 8 MiB:
/// it counts bytes, with no allocation step (in the browsers the floor is measured by
/// `quota_e2e.rs`).
///
/// After the deletes and new rows: a power loss keeps them all under Strict, a process crash
/// under Relaxed (written before acknowledged); Balanced, which may lose its last 100 ms to
/// either, must come back intact (its loss window is the crash suite's to test).
///
/// Not covered, and not promised: a limit the volume learns only from the first failure. By
/// then the log may hold the whole quota, and giving it back needs a checkpoint that needs
/// as much space again (DESIGN.md, "Storage full").
#[test]
fn deletes_succeed_at_a_full_quota_and_make_room() {
    const HEADROOM: u64 = 8 << 20;
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        for durability in [
            Durability::Strict,
            Durability::Relaxed,
            Durability::Balanced,
        ] {
            let st = fresh();
            let quota = st.total_len() + HEADROOM;
            let o = VolumeOptions {
                space_limit: Some(quota),
                ..opts(mode, durability)
            };
            let h = register(mount(st.clone(), o));
            let c = open(&h, "app.db");
            c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);")
                .unwrap();
            st.set_quota(Some(quota));
            let what = format!("{mode:?} {durability:?}");
            let mut ids = Vec::new();
            loop {
                match c.execute("INSERT INTO t(v) VALUES (randomblob(100000))", []) {
                    Ok(_) => ids.push(c.last_insert_rowid()),
                    Err(e) => {
                        assert_eq!(
                            e.sqlite_error_code(),
                            Some(ErrorCode::DiskFull),
                            "{what}: {e}"
                        );
                        break;
                    }
                }
                assert!(ids.len() < 1000, "{what}: the quota was never reached");
            }
            let pragma = |sql: &str| -> u64 {
                c.query_row(sql, [], |r| r.get::<_, i64>(0))
                    .unwrap()
                    .try_into()
                    .unwrap()
            };
            let logical = pragma("PRAGMA page_count") * pragma("PRAGMA page_size");
            assert!(
                logical * 10 >= HEADROOM * 8,
                "{what}: {logical} bytes of database ({} rows of 100 KB) at the first \
                 SQLITE_FULL, under 80 % of the {HEADROOM} bytes the quota left",
                ids.len()
            );
            let mut failed = Vec::new();
            for id in ids.iter().step_by(2) {
                if let Err(e) = c.execute("DELETE FROM t WHERE id = ?1", [id]) {
                    failed.push(format!("{id}: {e}"));
                }
            }
            assert!(
                failed.is_empty(),
                "{what}: deletes failed at a full quota: {failed:?}"
            );
            let kept = ids.len() - ids.len().div_ceil(2);
            for i in 0..5 {
                c.execute("INSERT INTO t(v) VALUES (randomblob(100000))", [])
                    .unwrap_or_else(|e| panic!("{what}: insert {i} after the deletes: {e}"));
            }
            let want = i64::try_from(kept + 5).unwrap();
            assert_eq!(count(&c), want, "{what}");
            assert_eq!(integrity(&c), "ok", "{what}");
            let (image, crash) = match durability {
                Durability::Strict => (st.crash(3, CrashMode::DropAll), "a power loss"),
                _ => (st.crash(3, CrashMode::KeepAll), "a process crash"),
            };
            let (n, ok) = reopen(image, "delete");
            assert_eq!(ok, "ok", "{what}: after {crash}");
            if durability != Durability::Balanced {
                assert_eq!(n, Ok(want), "{what}: after {crash}");
            }
        }
    }
}

/// Finding 2, exactly: the log write and flush of a commit succeed and the checkpoint that
/// follows fails for space: the commit is reported as done, and is there after a power loss.
#[test]
fn failed_checkpoint_after_a_durable_commit_is_not_the_commits_failure() {
    let st = fresh();
    let o = VolumeOptions {
        checkpoint_bytes: 64 << 10,
        ..opts(BufferMode::Memory, Durability::Strict)
    };
    let h = register(mount(st.clone(), o));
    let c = open(&h, "app.db");
    c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB);")
        .unwrap();
    // Every growing write of the data file fails from now on: checkpoints cannot complete, the
    // log (which grows too) may: only data-file growth is refused.
    st.inject(Fault {
        op: FaultOp::Grow,
        file: Some(opfs_vfs::storage::PhysicalFileId::Data),
        skip: 0,
        effect: FaultEffect::Fail(StorageError::QuotaExceeded {
            message: "injected".into(),
        }),
        sticky: true,
    });
    for _ in 0..100 {
        c.execute("INSERT INTO t(v) VALUES (randomblob(3000))", [])
            .expect("a commit whose log write and flush succeeded is reported as done");
    }
    let stats = h.volume().borrow().stats();
    assert!(
        stats.failed_checkpoints > 0,
        "no checkpoint was attempted: {stats:?}"
    );
    assert!(h.volume().borrow().last_checkpoint_error().is_some());
    let (n, ok) = reopen(st.crash(5, CrashMode::DropAll), "delete");
    assert_eq!((n, ok.as_str()), (Ok(100), "ok"));
}

/// Finding 4: two VFS registrations over one volume share its lock table: a second writer
/// gets SQLITE_BUSY instead of silently losing its row.
#[test]
fn two_registrations_over_one_volume_share_locks() {
    let volume = Rc::new(RefCell::new(
        Volume::mount(
            MemoryStorage::new(),
            opts(BufferMode::Memory, Durability::Strict),
        )
        .unwrap(),
    ));
    let h1 = sqlite::register(&unique_name("r1"), volume.clone(), false).unwrap();
    let h2 = sqlite::register(&unique_name("r2"), volume.clone(), false).unwrap();
    let a = open(&h1, "app.db");
    a.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    let b = open(&h2, "app.db");
    a.execute_batch("BEGIN IMMEDIATE; INSERT INTO t VALUES (2);")
        .unwrap();
    let e = b.execute("INSERT INTO t VALUES (3)", []).unwrap_err();
    assert_eq!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy), "{e}");
    a.execute_batch("COMMIT;").unwrap();
    b.execute("INSERT INTO t VALUES (3)", []).unwrap();
    for c in [&a, &b] {
        let rows: Vec<i64> = c
            .prepare("SELECT v FROM t ORDER BY v")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(rows, [1, 2, 3]);
        assert_eq!(integrity(c), "ok");
    }
}

/// Finding 5: a failure inside a transaction (a Disk-mode read of a partly overwritten page, a
/// failed batch commit) leaves nothing half-applied: SQLite rolls back, the volume holds the
/// last commit, and the next transaction works.
#[test]
fn failures_inside_a_transaction_leave_nothing_half_applied() {
    for (what, fault) in [
        (
            "read",
            Fault {
                op: FaultOp::Read,
                file: None,
                skip: 0,
                effect: FaultEffect::Fail(StorageError::Platform {
                    op: "read",
                    name: "NotReadableError".into(),
                    message: "injected".into(),
                }),
                sticky: false,
            },
        ),
        (
            "write",
            Fault {
                op: FaultOp::Write,
                file: None,
                skip: 0,
                effect: FaultEffect::Fail(StorageError::Platform {
                    op: "write",
                    name: "InvalidStateError".into(),
                    message: "injected".into(),
                }),
                sticky: true, // SQLite retries a failed batch commit with a journal: a one-off fault would pass.
            },
        ),
    ] {
        let st = fresh();
        let o = VolumeOptions {
            disk_cache_bytes: 0,
            ..opts(BufferMode::Disk, Durability::Strict)
        };
        let h = register(mount(st.clone(), o));
        let c = open(&h, "app.db");
        c.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); \
             INSERT INTO t(v) SELECT printf('%0100d', value) FROM generate_series(1, 500);",
        )
        .unwrap_or_else(|_| {
            // generate_series may be absent: a recursive CTE does the same.
            c.execute_batch(
                "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v TEXT); \
                 WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<500) \
                 INSERT INTO t(v) SELECT printf('%0100d', x) FROM s;",
            )
            .unwrap()
        });
        h.volume().borrow_mut().checkpoint().unwrap();
        st.inject(fault);
        let before = h.volume().borrow().stats();
        let r = c.execute_batch("UPDATE t SET v = 'changed' WHERE id % 7 = 0;");
        assert!(
            r.is_err(),
            "{what}: the injected fault did not surface: {:?} -> {:?}, {:?}",
            before,
            h.volume().borrow().stats(),
            h.volume().borrow().counters()
        );
        st.clear_faults();
        let changed: i64 = c
            .query_row("SELECT count(*) FROM t WHERE v = 'changed'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(changed, 0, "{what}: a failed transaction left changes");
        assert_eq!(count(&c), 500);
        assert_eq!(integrity(&c), "ok");
        c.execute_batch("UPDATE t SET v = 'later' WHERE id = 1;")
            .unwrap_or_else(|e| panic!("{what}: next transaction: {e}"));
        let (n, ok) = reopen(st.crash(6, CrashMode::DropAll), "delete");
        assert_eq!((n, ok.as_str()), (Ok(500), "ok"), "{what}");
    }
}

/// Finding 7: reopening a WAL database without exclusive locking fails with SQLITE_CANTOPEN,
/// and the VFS says why.
#[test]
fn wal_reopen_without_exclusive_locking_says_why() {
    let st = fresh();
    let h = register(mount(
        st.clone(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let c = open(&h, "w.db");
    c.execute_batch(
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; CREATE TABLE t(v); \
         INSERT INTO t VALUES (1);",
    )
    .unwrap();
    // The process dies with the WAL in place; the next one opens without exclusive locking.
    let h2 = register(mount(
        st.crash(9, CrashMode::KeepAll),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    drop(c);
    let c2 = open(&h2, "w.db");
    let e = c2
        .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .unwrap_err();
    assert_eq!(e.sqlite_error_code(), Some(ErrorCode::CannotOpen), "{e}");
    let why = h2.last_error().unwrap_or_default();
    assert!(
        why.contains("locking_mode=EXCLUSIVE"),
        "last error: {why:?}"
    );
}
