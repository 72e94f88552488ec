//! Commit cost, locking and error codes of the SQLite VFS.
#![cfg(not(target_arch = "wasm32"))]

mod sqlite_common;

use std::cell::RefCell;
use std::rc::Rc;

use opfs_vfs::sqlite::rusqlite::{self, Connection, ErrorCode};
use opfs_vfs::sqlite::VfsHandle;
use opfs_vfs::storage::{
    MemoryFile, MemoryStorage, PhysicalFile, PhysicalFileId, Storage, StorageError, StorageResult,
};
use opfs_vfs::{BufferMode, Durability};
use sqlite_common::*;

fn insert_100(c: &Connection) {
    for i in 0..100 {
        c.execute("INSERT INTO t(v) VALUES (?1)", [format!("value {i}")])
            .unwrap();
    }
}

#[test]
fn strict_autocommit_insert_costs_at_most_one_flush() {
    for mode in [BufferMode::Disk, BufferMode::Memory] {
        for jm in ["delete", "truncate", "persist", "memory"] {
            let h = register(mount(MemoryStorage::new(), opts(mode, Durability::Strict)));
            let c = open(&h, "a.db");
            c.execute_batch(&format!(
                "PRAGMA journal_mode={jm}; CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
            ))
            .unwrap();
            let before = h.volume().borrow().counters().total();
            let stats_before = h.stats();
            insert_100(&c);
            let d = h.volume().borrow().counters().total();
            let flushes = d.flushes - before.flushes;
            let writes = d.writes - before.writes;
            let atomic = h.stats().atomic_commits - stats_before.atomic_commits;
            assert!(
                flushes <= 100,
                "{mode:?} {jm}: {flushes} flushes for 100 inserts"
            );
            assert!(
                writes <= 100,
                "{mode:?} {jm}: {writes} writes for 100 inserts"
            );
            assert_eq!(atomic, 100, "{mode:?} {jm}: batch-atomic commits");
            assert_eq!(integrity(&c), "ok");
        }
    }
}

#[test]
fn strict_flushes_for_every_journal_mode_stay_bounded() {
    // Modes without batches (OFF: no journal to keep in memory; WAL) still cost one flush each.
    for (jm, max) in [("off", 100), ("wal", 100)] {
        let h = register(mount(
            MemoryStorage::new(),
            opts(BufferMode::Memory, Durability::Strict),
        ));
        let c = open(&h, "a.db");
        c.execute_batch(&setup_sql(jm)).unwrap();
        c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);")
            .unwrap();
        let before = h.volume().borrow().counters().total().flushes;
        insert_100(&c);
        let flushes = h.volume().borrow().counters().total().flushes - before;
        assert!(flushes <= max, "{jm}: {flushes} flushes for 100 inserts");
    }
}

#[test]
fn relaxed_autocommit_inserts_flush_nothing_before_close() {
    for mode in [BufferMode::Disk, BufferMode::Memory] {
        let h = register(mount(MemoryStorage::new(), opts(mode, Durability::Relaxed)));
        let c = open(&h, "a.db");
        c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);")
            .unwrap();
        let before = h.volume().borrow().counters().total();
        insert_100(&c);
        let after = h.volume().borrow().counters().total();
        assert_eq!(after.flushes - before.flushes, 0, "{mode:?}");
        assert!(after.writes - before.writes <= 100, "{mode:?}");
        c.close().unwrap();
        // Closing the connection makes its commits durable (VfsOptions::flush_on_close).
        let closed = h.volume().borrow().counters().total();
        assert!(
            closed.flushes > after.flushes,
            "{mode:?}: no flush at close"
        );
    }
}

#[test]
fn second_writer_gets_busy_and_nothing_is_corrupted() {
    let h = register(mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let a = open(&h, "shared.db");
    a.execute_batch(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a');",
    )
    .unwrap();
    let b = open(&h, "shared.db");
    // A holds RESERVED: B may read but not write.
    a.execute_batch("BEGIN IMMEDIATE; INSERT INTO t(v) VALUES ('a2');")
        .unwrap();
    let n: i64 = b
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "B sees only committed rows");
    let err = b.execute("INSERT INTO t(v) VALUES ('b')", []).unwrap_err();
    assert_eq!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy),
        "{err}"
    );
    let msg = h.last_error().unwrap_or_default();
    assert!(msg.contains("locked"), "no lock message: {msg:?}");
    a.execute_batch("COMMIT").unwrap();
    // Now B can write, and sees A's commit.
    b.execute("INSERT INTO t(v) VALUES ('b')", []).unwrap();
    let n: i64 = a
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3);
    // Exclusive locking mode: A keeps its lock, B cannot even read.
    a.execute_batch("PRAGMA locking_mode=EXCLUSIVE; INSERT INTO t(v) VALUES ('x');")
        .unwrap();
    let err = b
        .query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0))
        .unwrap_err();
    assert_eq!(
        err.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy),
        "{err}"
    );
    assert!(h.stats().busy >= 2);
    assert_eq!(integrity(&a), "ok");
    drop(a);
    assert_eq!(integrity(&b), "ok");
    let n: i64 = b
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 4);
}

type FailSlot = Rc<RefCell<Option<(&'static str, StorageError)>>>;

/// A memory file whose calls fail on demand (`read`, `write` or `flush`).
#[derive(Debug)]
struct FaultyFile {
    inner: MemoryFile,
    fail: FailSlot,
}

impl FaultyFile {
    fn check(&self, op: &str) -> StorageResult<()> {
        match &*self.fail.borrow() {
            Some((o, e)) if *o == op => Err(e.clone()),
            _ => Ok(()),
        }
    }
}

impl PhysicalFile for FaultyFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        self.check("read")?;
        self.inner.read_at(offset, buf)
    }
    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        self.check("write")?;
        self.inner.write_at(offset, data)
    }
    fn len(&mut self) -> StorageResult<u64> {
        self.inner.len()
    }
    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        self.inner.set_len(len)
    }
    fn flush(&mut self) -> StorageResult<()> {
        self.check("flush")?;
        self.inner.flush()
    }
}

#[derive(Debug)]
struct FaultyStorage {
    files: [FaultyFile; 2],
    fail: FailSlot,
}

impl FaultyStorage {
    fn new() -> Self {
        let fail = FailSlot::default();
        let file = || FaultyFile {
            inner: MemoryFile::default(),
            fail: fail.clone(),
        };
        Self {
            files: [file(), file()],
            fail,
        }
    }
}

impl Storage for FaultyStorage {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        &mut self.files[id.index()]
    }
}

fn code_of(e: &rusqlite::Error) -> (Option<ErrorCode>, i32) {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => (Some(f.code), f.extended_code),
        _ => (None, 0),
    }
}

fn faulty_volume(mode: BufferMode) -> (VfsHandle<FaultyStorage>, FailSlot) {
    let st = FaultyStorage::new();
    let fail = st.fail.clone();
    (register(mount(st, opts(mode, Durability::Strict))), fail)
}

#[test]
fn out_of_space_is_sqlite_full_and_io_errors_are_specific() {
    const SQLITE_IOERR_READ: i32 = 266;
    for mode in [BufferMode::Disk, BufferMode::Memory] {
        // Quota exhausted at commit: SQLITE_FULL, message kept.
        let (h, fail) = faulty_volume(mode);
        let c = open(&h, "f.db");
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
            .unwrap();
        *fail.borrow_mut() = Some((
            "write",
            StorageError::QuotaExceeded {
                message: "QuotaExceededError: test".into(),
            },
        ));
        let err = c.execute("INSERT INTO t VALUES (2)", []).unwrap_err();
        assert_eq!(
            code_of(&err).0,
            Some(ErrorCode::DiskFull),
            "{mode:?}: {err}"
        );
        let msg = h.last_error().unwrap_or_default();
        assert!(msg.contains("QuotaExceededError"), "{mode:?}: {msg:?}");
        drop(c); // the volume is poisoned; nothing more to check
        drop(h);

        // A failing read: SQLITE_IOERR_READ. Disk mode reads pages from storage; start from a
        // checkpointed volume so the data lives in home blocks.
        let (h, fail) = faulty_volume(mode);
        let c = open(&h, "r.db");
        c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (randomblob(50000));")
            .unwrap();
        c.close().unwrap();
        h.volume().borrow_mut().checkpoint().unwrap();
        let st = take_volume(h).close().unwrap();
        let fail2 = st.fail.clone();
        let h = register(mount(st, opts(mode, Durability::Strict)));
        *fail2.borrow_mut() = Some((
            "read",
            StorageError::Platform {
                op: "read",
                name: "NotReadableError".into(),
                message: "test".into(),
            },
        ));
        let r = Connection::open_with_flags_and_vfs(
            "r.db",
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
            h.name(),
        )
        .and_then(|c| c.query_row("SELECT length(v) FROM t", [], |r| r.get::<_, i64>(0)));
        let err = r.unwrap_err();
        assert_eq!(code_of(&err).1, SQLITE_IOERR_READ, "{mode:?}: {err}");
        let _ = fail;
    }
}

#[test]
fn corrupt_volume_is_sqlite_corrupt() {
    let h = register(mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let c = open(&h, "c.db");
    c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (randomblob(20000));")
        .unwrap();
    c.close().unwrap();
    let mut st = take_volume(h).close().unwrap();
    // Blocks 0-1 are the superblocks, 2 the first catalog; the checkpoint at close put the
    // database's pages in blocks 3.. and the new catalog after them. Damage a page.
    let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
    data[3 * 4096 + 100] ^= 0xFF;
    let h = register(mount(st, opts(BufferMode::Memory, Durability::Strict)));
    let r = Connection::open_with_flags_and_vfs(
        "c.db",
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
        h.name(),
    )
    .and_then(|c| c.query_row("SELECT length(v) FROM t", [], |r| r.get::<_, i64>(0)));
    let err = r.unwrap_err();
    assert_eq!(code_of(&err).0, Some(ErrorCode::DatabaseCorrupt), "{err}");
    assert!(h.last_error().unwrap_or_default().contains("corrupt"));
}

#[test]
fn connection_moved_to_another_thread_gets_misuse_not_undefined_behaviour() {
    let h = register(mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    ));
    let c = open(&h, "moved.db");
    c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    let err = std::thread::spawn(move || {
        let r = c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0));
        // Closing on this thread leaks the file handle instead of touching the VFS state.
        drop(c);
        r.unwrap_err().to_string()
    })
    .join()
    .unwrap();
    assert!(!err.is_empty());
    // The VFS still works on its own thread.
    let c = open(&h, "other.db");
    c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    assert_eq!(integrity(&c), "ok");
}
