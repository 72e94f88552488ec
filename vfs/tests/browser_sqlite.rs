#![cfg(target_arch = "wasm32")]
// Test data is made with small, deliberate narrowing casts (byte patterns, random indices).
#![allow(clippy::cast_possible_truncation)]
//! Browser tests of SQLite on OPFS through the install API, in a dedicated worker: rusqlite
//! round trips in both buffer modes with remounts on new handles, Disk → Memory, the busy
//! error of a second install, export/import, SQL-level fault injection, and the physical call
//! counts of a small SQL workload (printed; run with `-- --nocapture` to see them).

use opfs_vfs::sqlite::rusqlite::{Connection, ErrorCode, OpenFlags};
use opfs_vfs::storage::{FileCounters, PhysicalFileId, Storage};
use opfs_vfs::web::{install, InstallError, InstallOptions, Installed, Sharing};
use opfs_vfs::{BufferMode, Durability};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A directory (and VFS) name no other test or run uses. Every test starts here, so this also
/// undoes any fault an earlier, panicking test left installed.
fn unique(tag: &str) -> String {
    restore_all_faults();
    let r = (js_sys::Math::random() * 1e12) as u64;
    format!("test-sql-{tag}-{r:x}")
}

fn options(dir: &str, mode: BufferMode, durability: Durability) -> InstallOptions {
    InstallOptions {
        // A VFS name per directory: each test registers its own.
        vfs_name: dir.to_owned(),
        directory: dir.to_owned(),
        buffer_mode: mode,
        durability,
        make_default: false,
        // The busy test wants the error at once.
        busy_timeout: std::time::Duration::ZERO,
        ..InstallOptions::default()
    }
}

async fn installed(dir: &str, mode: BufferMode, durability: Durability) -> Installed {
    install(options(dir, mode, durability))
        .await
        .unwrap_or_else(|e| panic!("install({dir:?}): {e}"))
}

fn connect(inst: &Installed, db: &str) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    Connection::open_with_flags_and_vfs(db, flags, inst.vfs_name())
        .unwrap_or_else(|e| panic!("open {db}: {e}"))
}

fn integrity_ok(conn: &Connection) {
    let r: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(r, "ok");
}

fn rows(conn: &Connection) -> Vec<(i64, String)> {
    let mut st = conn.prepare("SELECT id, v FROM t ORDER BY id").unwrap();
    st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn value(i: i64) -> String {
    format!("value {i} {}", "x".repeat((i % 50) as usize))
}

async fn wipe(mut inst: Installed) {
    inst.wipe().await.unwrap();
    assert!(matches!(inst.list(), Err(InstallError::Closed)));
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

async fn round_trip(mode: BufferMode) {
    let dir = unique(&format!("round-trip-{mode:?}"));
    let mut inst = installed(&dir, mode, Durability::Strict).await;
    let conn = connect(&inst, "app.db");
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);
         CREATE INDEX t_v ON t(v);",
    )
    .unwrap();
    for i in 0..50 {
        conn.execute("INSERT INTO t VALUES (?1, ?2)", (i, value(i)))
            .unwrap();
    }
    conn.execute_batch("BEGIN").unwrap();
    for i in 50..2_000 {
        conn.execute("INSERT INTO t VALUES (?1, ?2)", (i, value(i)))
            .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
    conn.execute("DELETE FROM t WHERE id % 7 = 0", []).unwrap();
    conn.execute("UPDATE t SET v = v || '!' WHERE id % 5 = 0", [])
        .unwrap();
    // A rolled-back transaction leaves nothing behind.
    conn.execute_batch("BEGIN; DELETE FROM t; ROLLBACK;")
        .unwrap();
    let expected: Vec<(i64, String)> = (0..2_000)
        .filter(|i| i % 7 != 0)
        .map(|i| (i, if i % 5 == 0 { value(i) + "!" } else { value(i) }))
        .collect();
    assert_eq!(rows(&conn), expected);
    integrity_ok(&conn);
    drop(conn);
    assert!(inst.list().unwrap().iter().any(|m| m.name == "app.db"));

    // Close (unregister, flush, checkpoint, close the OPFS handles), install again: new
    // handles, new mount.
    inst.close().unwrap();
    let inst = installed(&dir, mode, Durability::Strict).await;
    let conn = connect(&inst, "app.db");
    assert_eq!(rows(&conn), expected, "after close and a new install");
    integrity_ok(&conn);
    // And once more without close: the worker "crashes" (the handle is forgotten after
    // dropping the connection; Strict commits are durable).
    conn.execute("INSERT INTO t VALUES (100000, 'after reopen')", [])
        .unwrap();
    drop(conn);
    let other = match mode {
        BufferMode::Disk => BufferMode::Memory,
        BufferMode::Memory => BufferMode::Disk,
    };
    drop(inst); // Drop closes best-effort
    let inst = installed(&dir, other, Durability::Strict).await;
    let conn = connect(&inst, "app.db");
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n as usize, expected.len() + 1, "in the other buffer mode");
    integrity_ok(&conn);
    drop(conn);
    wipe(inst).await;
}

#[wasm_bindgen_test]
async fn rusqlite_round_trip_memory_mode() {
    round_trip(BufferMode::Memory).await;
}

#[wasm_bindgen_test]
async fn rusqlite_round_trip_disk_mode() {
    round_trip(BufferMode::Disk).await;
}

#[wasm_bindgen_test]
async fn database_written_in_disk_mode_opens_in_memory_mode() {
    let dir = unique("disk-to-memory");
    let mut inst = installed(&dir, BufferMode::Disk, Durability::Relaxed).await;
    let conn = connect(&inst, "d.db");
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);
         WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 5000)
         INSERT INTO t SELECT i, 'row ' || i FROM c;",
    )
    .unwrap();
    drop(conn);
    inst.close().unwrap();
    let inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let conn = connect(&inst, "d.db");
    let (n, s): (i64, i64) = conn
        .query_row("SELECT count(*), sum(id) FROM t", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((n, s), (5_000, 5_000 * 5_001 / 2));
    integrity_ok(&conn);
    drop(conn);
    wipe(inst).await;
}

// ---------------------------------------------------------------------------------------------
// Busy, export/import, the filesystem API
// ---------------------------------------------------------------------------------------------

#[wasm_bindgen_test]
async fn second_install_on_the_same_directory_is_busy() {
    // Exclusive volumes: one holder. (Shared ones, the default, take turns: browser_share.rs.)
    let dir = unique("busy");
    let mut first = install(InstallOptions {
        sharing: Sharing::Exclusive,
        ..options(&dir, BufferMode::Memory, Durability::Strict)
    })
    .await
    .unwrap();
    let mut second = InstallOptions {
        sharing: Sharing::Exclusive,
        ..options(&dir, BufferMode::Memory, Durability::Strict)
    };
    second.vfs_name = format!("{dir}-second");
    match install(second.clone()).await {
        Err(InstallError::Busy { message }) => {
            assert!(
                message.contains("open in another tab or worker"),
                "{message}"
            );
        }
        other => panic!("expected InstallError::Busy, got {other:?}"),
    }
    // The same VFS name twice is refused by SQLite's registration (after the volume opened).
    first.close().unwrap();
    let again = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let mut clash = options(
        &unique("busy-other"),
        BufferMode::Memory,
        Durability::Strict,
    );
    clash.vfs_name = again.vfs_name().to_owned();
    let clash_dir = clash.directory.clone();
    assert!(matches!(
        install(clash).await,
        Err(InstallError::Register(_))
    ));
    opfs_vfs::storage::OpfsStorage::remove_dir(&clash_dir)
        .await
        .unwrap();
    // Closed handles refuse further use.
    assert!(matches!(first.export("x"), Err(InstallError::Closed)));
    wipe(again).await;
}

#[wasm_bindgen_test]
async fn export_then_import_is_byte_identical_and_opens() {
    let dir = unique("export");
    let inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let conn = connect(&inst, "src.db");
    conn.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
         WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000)
         INSERT INTO t SELECT i, hex(randomblob(20)) FROM c;",
    )
    .unwrap();
    let sum: String = conn
        .query_row("SELECT group_concat(v) FROM t", [], |r| r.get(0))
        .unwrap();
    drop(conn);
    let bytes = inst.export("src.db").unwrap();
    assert!(bytes.starts_with(b"SQLite format 3\0"));

    // Into the same volume under another name, with a stale journal that must not be
    // replayed over it.
    inst.with_volume(|v| {
        let id = v.create("copy.db-journal")?;
        v.write(id, 0, &[0xFFu8; 4096])?;
        v.commit()
    })
    .unwrap();
    inst.import("copy.db", &bytes).unwrap();
    assert!(!inst
        .list()
        .unwrap()
        .iter()
        .any(|m| m.name == "copy.db-journal"));
    assert!(inst.export("copy.db").unwrap() == bytes, "byte-identical");
    let conn = connect(&inst, "copy.db");
    integrity_ok(&conn);
    let sum2: String = conn
        .query_row("SELECT group_concat(v) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sum, sum2);
    drop(conn);

    // Into a different volume (another directory), read back after a fresh install.
    let dir2 = unique("import");
    let mut inst2 = installed(&dir2, BufferMode::Disk, Durability::Strict).await;
    inst2.import("imported.db", &bytes).unwrap();
    inst2.close().unwrap();
    let inst2 = installed(&dir2, BufferMode::Disk, Durability::Strict).await;
    assert!(inst2.export("imported.db").unwrap() == bytes);
    let conn = connect(&inst2, "imported.db");
    integrity_ok(&conn);
    drop(conn);

    // delete removes the file; usage reports the volume and the origin.
    inst.delete("copy.db").unwrap();
    assert!(!inst.list().unwrap().iter().any(|m| m.name == "copy.db"));
    let usage = inst.usage().await.unwrap();
    assert_eq!(usage.files, 1);
    assert_eq!(usage.file_bytes, bytes.len() as u64);
    assert!(usage.origin.quota_bytes.unwrap_or(0) > 0, "{usage:?}");
    wipe(inst).await;
    wipe(inst2).await;
}

#[wasm_bindgen_test]
async fn filesystem_api_beside_sqlite() {
    let dir = unique("fs-api");
    let mut inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let conn = connect(&inst, "a.db");
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (42);")
        .unwrap();
    inst.with_volume(|v| {
        let id = v.create("notes/readme.txt")?;
        v.write(id, 0, b"hello from the filesystem API")?;
        v.commit()
    })
    .unwrap();
    drop(conn);
    inst.close().unwrap();
    let inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let names: Vec<String> = inst.list().unwrap().into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["a.db", "notes/readme.txt"]);
    assert_eq!(
        inst.export("notes/readme.txt").unwrap(),
        b"hello from the filesystem API"
    );
    wipe(inst).await;
}

#[wasm_bindgen_test]
async fn close_with_open_connections_is_refused() {
    let dir = unique("close-open");
    let mut inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let conn = connect(&inst, "a.db");
    conn.execute_batch("CREATE TABLE t(x);").unwrap();
    assert!(matches!(inst.close(), Err(InstallError::FilesOpen(_))));
    // Still usable.
    conn.execute("INSERT INTO t VALUES (1)", []).unwrap();
    drop(conn);
    wipe(inst).await;
}

#[wasm_bindgen_test]
async fn corrupt_volume_fails_install_naming_the_damage() {
    let dir = unique("corrupt");
    let mut inst = installed(&dir, BufferMode::Memory, Durability::Strict).await;
    let conn = connect(&inst, "c.db");
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(conn);
    inst.close().unwrap();
    {
        // Garbage over both superblocks, through a raw handle.
        let mut st = opfs_vfs::storage::OpfsStorage::open(&dir).await.unwrap();
        st.file(PhysicalFileId::Data)
            .write_at(0, &[0x5Au8; 8192])
            .unwrap();
    }
    match install(options(&dir, BufferMode::Memory, Durability::Strict)).await {
        Err(InstallError::Volume(e @ opfs_vfs::Error::Corrupt { .. })) => {
            web_sys::console::log_1(&format!("corrupt volume: {e}").into());
        }
        other => panic!("expected a Corrupt error, got {other:?}"),
    }
    opfs_vfs::storage::OpfsStorage::remove_dir(&dir)
        .await
        .unwrap();
}

// ---------------------------------------------------------------------------------------------
// SQL-level fault injection
// ---------------------------------------------------------------------------------------------

#[wasm_bindgen(inline_js = r#"
export function install_fault(method, mode) {
    const proto = FileSystemSyncAccessHandle.prototype;
    // Remember the original globally too: a panicking test aborts without running Drop, and
    // the next test's restore_all_faults() must be able to undo what it left behind.
    const saved = (globalThis.__savedSyncHandleMethods ??= {});
    if (!(method in saved)) saved[method] = proto[method];
    const original = saved[method];
    proto[method] = function (...args) {
        // A quota needs no new space for a write within the file's length (the engine's repair
        // of a failed write relies on that): quota and short-write faults hit growing writes.
        if ((mode === "quota" || mode === "short") && method === "write") {
            const at = (args[1] && args[1].at) || 0;
            if (at + args[0].byteLength <= this.getSize()) return original.apply(this, args);
        }
        switch (mode) {
            case "quota":
                throw new DOMException("injected: quota exhausted", "QuotaExceededError");
            case "invalid-state":
                throw new DOMException("injected: handle failed", "InvalidStateError");
            case "short": {
                const buf = args[0];
                return original.call(this, buf.subarray(0, buf.length >> 1), args[1]);
            }
            default:
                throw new Error("unknown fault mode " + mode);
        }
    };
    return original;
}

export function restore_method(method, original) {
    FileSystemSyncAccessHandle.prototype[method] = original;
    delete (globalThis.__savedSyncHandleMethods ?? {})[method];
}

export function restore_all_faults() {
    const saved = globalThis.__savedSyncHandleMethods ?? {};
    for (const [method, original] of Object.entries(saved)) {
        FileSystemSyncAccessHandle.prototype[method] = original;
    }
    globalThis.__savedSyncHandleMethods = {};
}
"#)]
extern "C" {
    fn install_fault(method: &str, mode: &str) -> JsValue;
    fn restore_method(method: &str, original: &JsValue);
    fn restore_all_faults();
}

/// Replaces `FileSystemSyncAccessHandle.prototype[method]` until dropped.
struct Fault {
    method: &'static str,
    original: JsValue,
}

impl Fault {
    fn new(method: &'static str, mode: &str) -> Self {
        let original = install_fault(method, mode);
        Self { method, original }
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        restore_method(self.method, &self.original);
    }
}

/// Autocommit INSERTs under Strict (each acknowledged), then the fault: the next INSERT must
/// fail with `expected`. A full quota (or a short write) is rolled back and does not poison:
/// the rows are exactly the acknowledged ones, live and after reinstalling, and once the fault
/// is gone the next INSERT works without reinstalling. A failed flush leaves the outcome
/// unknown: writes are refused until the volume is installed again, which shows either state.
async fn sql_fault(mode: BufferMode, method: &'static str, fault: &str, expected: &[ErrorCode]) {
    let dir = unique(&format!("sql-fault-{method}-{fault}-{mode:?}"));
    let mut inst = installed(&dir, mode, Durability::Strict).await;
    let conn = connect(&inst, "f.db");
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);")
        .unwrap();
    let mut acknowledged = Vec::new();
    for i in 0..20 {
        conn.execute("INSERT INTO t VALUES (?1, ?2)", (i, value(i)))
            .unwrap();
        acknowledged.push((i, value(i)));
    }
    {
        let _fault = Fault::new(method, fault);
        // A transaction big enough to reach the storage in Disk mode too.
        let r = conn.execute_batch(
            "BEGIN;
             WITH RECURSIVE c(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM c WHERE i < 3000)
             INSERT INTO t SELECT i, printf('%.500c', 'y') FROM c;
             COMMIT;",
        );
        let e = r.expect_err("the injected fault must fail the commit");
        web_sys::console::log_1(
            &format!(
                "{method}/{fault} ({mode:?}): SQLite saw {:?}: {e}; VFS: {:?}",
                e.sqlite_error_code(),
                inst.vfs().unwrap().last_error()
            )
            .into(),
        );
        let code = e.sqlite_error_code().expect("a SQLite error");
        assert!(expected.contains(&code), "{code:?}: {e}");
        let detail = inst.vfs().unwrap().last_error().unwrap_or_default();
        assert!(
            detail.contains("injected") || detail.contains("short write"),
            "the VFS keeps the browser's cause: {detail}"
        );
        let poisoned = inst.with_volume(|v| Ok(v.poisoned().is_some())).unwrap();
        let full = code == ErrorCode::DiskFull;
        assert_eq!(poisoned, !full, "poisoned only when the outcome is unknown");
        if full {
            // Rolled back: live, the failed transaction is absent and reads work.
            assert!(
                rows(&conn) == acknowledged,
                "a failed commit left rows behind"
            );
        }
    }
    // The fault is gone.
    let after = conn.execute("INSERT INTO t VALUES (99999, 'x')", []);
    let full = after.is_ok();
    if full {
        acknowledged.push((99999, "x".to_owned()));
    }
    drop(conn);
    // Close reports the earlier failure but releases the handles.
    let _ = inst.close();

    let inst = installed(&dir, mode, Durability::Strict).await;
    let conn = connect(&inst, "f.db");
    integrity_ok(&conn);
    let got = rows(&conn);
    if full {
        assert!(
            got == acknowledged,
            "after a full quota: {} rows; acknowledged {}",
            got.len(),
            acknowledged.len()
        );
    } else {
        assert!(
            got == acknowledged || got.len() == acknowledged.len() + 2_001,
            "after the fault: {} rows; acknowledged {}",
            got.len(),
            acknowledged.len()
        );
        assert!(got[..acknowledged.len()] == acknowledged[..]);
    }
    // Works again.
    conn.execute("INSERT INTO t VALUES (-1, 'after')", [])
        .unwrap();
    drop(conn);
    wipe(inst).await;
}

#[wasm_bindgen_test]
async fn quota_fault_is_sqlite_full_and_loses_nothing() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        sql_fault(mode, "write", "quota", &[ErrorCode::DiskFull]).await;
    }
}

#[wasm_bindgen_test]
async fn short_write_is_sqlite_full_and_loses_nothing() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        sql_fault(mode, "write", "short", &[ErrorCode::DiskFull]).await;
    }
}

#[wasm_bindgen_test]
async fn flush_fault_is_sqlite_ioerr_and_loses_nothing() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        // The commit is written but its flush failed (SQLITE_IOERR_FSYNC: outcome unknown).
        // SQLite answers a failed batch commit by retrying with a rollback journal; on the
        // poisoned volume that fails too (an I/O error, or SQLITE_CANTOPEN opening the
        // journal). Either way the VFS message names the flush failure.
        let codes = [ErrorCode::SystemIoFailure, ErrorCode::CannotOpen];
        sql_fault(mode, "flush", "invalid-state", &codes).await;
    }
}

// ---------------------------------------------------------------------------------------------
// Physical calls per SQL operation
// ---------------------------------------------------------------------------------------------

fn calls(d: &FileCounters) -> String {
    format!(
        "writes {:>3} ({:>7} B)  flushes {:>2}  reads {:>3}  len {}  set_len {}",
        d.writes, d.written_bytes, d.flushes, d.reads, d.len_calls, d.set_len_calls
    )
}

/// Runs a small SQL workload and prints the physical calls of each step (total over both
/// physical files; the log/data split in brackets).
async fn count_calls(mode: BufferMode, durability: Durability) -> Vec<(String, FileCounters)> {
    let dir = unique("counters");
    let inst = installed(&dir, mode, durability).await;
    let counters = || inst.with_volume(|v| Ok(v.counters())).unwrap();
    let mut out = Vec::new();
    let mut step =
        |name: &str, before: opfs_vfs::storage::Counters, after: opfs_vfs::storage::Counters| {
            let d = after.since(&before);
            let log = d.file(PhysicalFileId::Log);
            let data = d.file(PhysicalFileId::Data);
            web_sys::console::log_1(
                &format!(
                    "{mode:?}/{durability:?} {name:<36} {}   [log w{} f{} r{} | data w{} f{} r{}]",
                    calls(&d.total()),
                    log.writes,
                    log.flushes,
                    log.reads,
                    data.writes,
                    data.flushes,
                    data.reads
                )
                .into(),
            );
            out.push((name.to_owned(), d.total()));
        };

    let c0 = counters();
    step("install (mount a new volume)", Default::default(), c0);
    let conn = connect(&inst, "bench.db");
    conn.execute_batch("PRAGMA user_version").unwrap();
    let c1 = counters();
    step("open connection", c0, c1);
    conn.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        .unwrap();
    let c2 = counters();
    step("CREATE TABLE", c1, c2);
    conn.execute("INSERT INTO t(v) VALUES ('first')", [])
        .unwrap();
    let c3 = counters();
    step("INSERT (autocommit, 1st)", c2, c3);
    for i in 0..10 {
        conn.execute("INSERT INTO t(v) VALUES (?1)", [value(i)])
            .unwrap();
    }
    let c4 = counters();
    step("INSERT x10 (autocommit) total", c3, c4);
    conn.execute_batch("BEGIN").unwrap();
    for i in 0..1_000 {
        conn.execute("INSERT INTO t(v) VALUES (?1)", [value(i)])
            .unwrap();
    }
    conn.execute_batch("COMMIT").unwrap();
    let c5 = counters();
    step("1,000 INSERTs in one transaction", c4, c5);
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t WHERE v LIKE '%5%'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(n > 0);
    let c6 = counters();
    step("SELECT (scan)", c5, c6);
    conn.execute("UPDATE t SET v = 'u' WHERE id = 7", [])
        .unwrap();
    let c7 = counters();
    step("UPDATE one row (autocommit)", c6, c7);
    conn.execute("DELETE FROM t WHERE id > 500", []).unwrap();
    let c8 = counters();
    step("DELETE 500 rows (autocommit)", c7, c8);
    drop(conn);
    let c9 = counters();
    step("close connection", c8, c9);
    wipe(inst).await;
    out
}

#[wasm_bindgen_test]
async fn physical_calls_per_sql_operation() {
    let ua = js_sys::Reflect::get(&js_sys::global(), &"navigator".into())
        .and_then(|n| js_sys::Reflect::get(&n, &"userAgent".into()))
        .ok()
        .and_then(|u| u.as_string())
        .unwrap_or_default();
    web_sys::console::log_1(&format!("physical calls per SQL operation, {ua}").into());
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        for durability in [Durability::Strict, Durability::Relaxed] {
            let steps = count_calls(mode, durability).await;
            let get = |name: &str| steps.iter().find(|(n, _)| n == name).unwrap().1;
            let insert = get("INSERT (autocommit, 1st)");
            match durability {
                // The product's promise: one flush per autocommit INSERT under Strict, none
                // under Relaxed; one log write either way.
                Durability::Strict => assert_eq!(insert.flushes, 1, "{mode:?}: {insert:?}"),
                _ => assert_eq!(insert.flushes, 0, "{mode:?}: {insert:?}"),
            }
            assert!(insert.writes <= 1, "{mode:?}/{durability:?}: {insert:?}");
            let ten = get("INSERT x10 (autocommit) total");
            assert!(ten.flushes <= 10 && ten.writes <= 10, "{ten:?}");
            let select = get("SELECT (scan)");
            assert_eq!(select.writes + select.flushes, 0, "{select:?}");
            if mode == BufferMode::Memory {
                assert_eq!(select.reads, 0, "Memory mode reads from memory: {select:?}");
            }
        }
    }
}
