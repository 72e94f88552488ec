//! Helpers shared by the `sqlite_*` tests (not a test target of its own).
#![allow(dead_code)]

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use opfs_vfs::sqlite::rusqlite::{Connection, OpenFlags};
use opfs_vfs::sqlite::{self, SharedVolume, VfsHandle};
use opfs_vfs::storage::Storage;
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};

/// A VFS name no other test (thread) of this process uses.
pub fn unique_name(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Volume options for tests: no time-based flush under Relaxed, so counts are deterministic.
pub fn opts(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        max_flush_delay: Duration::from_secs(3600),
        ..VolumeOptions::default()
    }
}

pub fn mount<S: Storage + 'static>(storage: S, o: VolumeOptions) -> SharedVolume<S> {
    Rc::new(RefCell::new(Volume::mount(storage, o).expect("mount")))
}

/// Registers a VFS that owns the only reference to `volume` (reach it with `h.volume()`).
pub fn register<S: Storage + 'static>(volume: SharedVolume<S>) -> VfsHandle<S> {
    sqlite::register(&unique_name("vfs"), volume, false).expect("register")
}

/// Opens (creating) `db` on the VFS, with no busy waiting.
pub fn open<S: Storage + 'static>(h: &VfsHandle<S>, db: &str) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let c = Connection::open_with_flags_and_vfs(db, flags, h.name()).expect("open");
    c.busy_timeout(Duration::ZERO).expect("busy_timeout");
    c
}

/// Unregisters the VFS and takes the volume back out of its `Rc`.
pub fn take_volume<S: Storage + 'static>(h: VfsHandle<S>) -> Volume<S> {
    let v = h.volume().clone();
    h.unregister().map_err(|(_, e)| e).expect("unregister");
    Rc::try_unwrap(v)
        .ok()
        .expect("volume still shared")
        .into_inner()
}

/// Journal modes this VFS supports (WAL needs exclusive locking).
pub const JOURNAL_MODES: [&str; 6] = ["delete", "truncate", "persist", "memory", "off", "wal"];

/// Pragmas to run right after opening a connection in journal mode `jm`.
pub fn setup_sql(jm: &str) -> String {
    if jm == "wal" {
        "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;".to_owned()
    } else {
        format!("PRAGMA journal_mode={jm};")
    }
}

/// Pragmas to run when reopening a database last written in journal mode `jm`.
pub fn reopen_sql(jm: &str) -> &'static str {
    if jm == "wal" {
        "PRAGMA locking_mode=EXCLUSIVE;"
    } else {
        ""
    }
}

pub fn integrity(c: &Connection) -> String {
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check")
}
