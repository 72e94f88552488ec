//! # SQLite on the volume
//!
//! A SQLite VFS whose files (databases, rollback journals, WAL files, super-journals) are
//! logical files of one [`Volume`]. Register it under a name of your choice and open
//! connections with that name; rusqlite works unchanged:
//!
//! ```no_run
//! use std::{cell::RefCell, rc::Rc};
//! use opfs_vfs::sqlite::{self, rusqlite::{Connection, OpenFlags}};
//! use opfs_vfs::{storage::MemoryStorage, Volume, VolumeOptions};
//!
//! let volume = Volume::mount(MemoryStorage::new(), VolumeOptions::default()).unwrap();
//! let volume = Rc::new(RefCell::new(volume));
//! let handle = sqlite::register("opfs", volume.clone(), false).unwrap();
//! let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
//! let conn = Connection::open_with_flags_and_vfs("app.db", flags, handle.name()).unwrap();
//! conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);").unwrap();
//! ```
//!
//! ## Environment and limits
//! - One thread. The volume is an `Rc<RefCell<…>>` (OPFS handles live in one dedicated worker),
//!   so the VFS instance is bound to the thread that registered it. Every callback checks the
//!   calling thread first and fails with `SQLITE_MISUSE` on any other thread (possible natively,
//!   because a rusqlite `Connection` is `Send`), before it touches any shared state.
//! - Several connections to one database are allowed and see each other's commits; SQLite's
//!   five lock levels are kept in a per-name table that belongs to the volume: every handle of
//!   every VFS registered over the same [`SharedVolume`] shares it, so a conflicting connection
//!   gets `SQLITE_BUSY` (the detail is kept for [`VfsHandle::last_error`]), never a torn read.
//!   Two volumes over the same storage cannot exist: the storage backend's own lock refuses a
//!   second mount.
//! - No shared memory (`xShmMap`): WAL works only with `PRAGMA locking_mode=EXCLUSIVE` set first
//!   (SQLite then keeps the WAL index in heap memory). `PRAGMA journal_mode=WAL` without it fails
//!   with an error that says so, instead of SQLite's silent fallback.
//! - Busy waiting is pointless: whoever holds a conflicting lock runs on this same thread and
//!   cannot make progress while we sleep, so `xSleep` returns at once and a busy handler gives up
//!   quickly. Set `busy_timeout` to 0 to get `SQLITE_BUSY` immediately.
//! - Anonymous temporary files (temp tables, sorter spills, statement journals, VACUUM's copy)
//!   are kept in memory by default ([`TempFiles`]): they never outlive their connection, and in
//!   the volume their bytes would go through the commit log.
//! - Panics: every entry point runs inside `catch_unwind` natively and reports an internal panic
//!   as an I/O error (the instance then refuses further calls). On `wasm32-unknown-unknown`
//!   panics abort, so the code paths are kept panic-free instead (checked arithmetic, `try_*`).
//!
//! ## Commit cost: one volume commit per SQLite transaction
//! The VFS commits a database's group (the database, its journal, WAL and super-journals) as
//! one volume commit at SQLite's real end of transaction — `SQLITE_FCNTL_COMMIT_PHASETWO` in
//! every rollback-journal mode, the WAL's `xSync` in WAL mode, `COMMIT_ATOMIC_WRITE` for
//! batch-atomic commits — whatever `journal_mode` and `synchronous` are, and with or without
//! `SQLITE_ENABLE_BATCH_ATOMIC_WRITE` in SQLite's build (see `file.rs` and `vfs/DESIGN.md`). Under
//! [`Durability::Strict`](crate::Durability::Strict) that is one log write and one `flush()`;
//! the journal's creation, writes and deletion are inside the same atomic commit and cost no log
//! bytes. `PRAGMA synchronous` is answered by the VFS: `OFF` (and `NORMAL` in WAL mode) make
//! commits [`SyncLevel::WriteOnly`](crate::SyncLevel) (written, flushed within the level's
//! delay). A failed commit is rolled back in the volume, so what SQLite was told is what a
//! remount shows.
//!
//! The main database declares `SQLITE_IOCAP_BATCH_ATOMIC`; a SQLite built with
//! `SQLITE_ENABLE_BATCH_ATOMIC_WRITE` (this repository's `.cargo/config.toml` sets it) then
//! skips the journal entirely (less CPU, same physical calls). Every volume file declares
//! `SEQUENTIAL`, `SAFE_APPEND` and `POWERSAFE_OVERWRITE`: after a crash the volume shows the
//! state after some commit.
//!
//! ## Recommended configuration
//! `journal_mode=DELETE` (SQLite's default), `synchronous=FULL` (its default), normal locking.
//! Measured per autocommit INSERT natively (`cargo run --release -p opfs-vfs --example
//! commit_cost`, 4 KiB SQLite pages; the browser build uses 8 KiB pages: ~16.7 KB per INSERT):
//!
//! | configuration | flushes | writes | bytes written | reads |
//! |---|---|---|---|---|
//! | DELETE, TRUNCATE, MEMORY, OFF; Strict; either buffer mode; with or without batch atomic | 1 | 1 | 8.5 KB | 0 |
//! | PERSIST (the persisted journal's pages are logged) | 1 | 1 | 8.5 KB with batch atomic, 17.4 KB without | 0 |
//! | WAL with `locking_mode=EXCLUSIVE`, Strict | 1 | 1 | 6.8 KB | 0 |
//! | DELETE with `locking_mode=EXCLUSIVE`, Strict | 1 | 1 | 12.8 KB | 0 |
//! | any, `Relaxed` | 0 | 1 | as above | 0 |
//! | any, `Balanced` | 0 | ~0.01 | as above | 0 |
//!
//! A 1,000-row transaction costs the same one write and one flush (122 KiB). WAL saves ~20 % of
//! the bytes per commit but needs exclusive locking (one connection, and the volume cannot be
//! shared between tabs) and adds SQLite checkpoints. Details: `vfs/DESIGN.md`, "SQLite VFS".

mod ffi;
mod file;
mod lock;
// SQLite's memcpy/memmove/memset as bulk-memory instructions (see the module's docs).
#[cfg(all(
    target_arch = "wasm32",
    target_os = "unknown",
    target_feature = "bulk-memory"
))]
mod memops;
mod os;
mod store;

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::thread::ThreadId;

pub use rsqlite_vfs::{VfsError, VfsErrorCode};
/// The rusqlite this VFS is built and tested against (natively its bundled SQLite, in the
/// browser sqlite-wasm-rs' SQLite); use it to open connections.
pub use rusqlite;

use crate::storage::Storage;
use crate::Volume;
use lock::LockTable;
use store::{AppData, Store};

/// A volume shared by the VFS and the application (single-threaded).
pub type SharedVolume<S = Box<dyn Storage>> = Rc<RefCell<Volume<S>>>;

/// Where anonymous temporary files (temp tables, sorter spills, statement journals) live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TempFiles {
    /// In memory, per handle. Nothing reaches the storage.
    #[default]
    Memory,
    /// As logical files of the volume, deleted on close. They join the volume's transaction, so
    /// a commit while they are open logs their pages too; use it only for temp data larger
    /// than memory allows.
    Volume,
}

/// Registration options. `Default`: not the default VFS, temp files in memory, flush on close,
/// batch-atomic commits.
#[derive(Clone, Debug)]
pub struct VfsOptions {
    /// Make this the process's default VFS (used by connections that name none).
    pub make_default: bool,
    /// Where anonymous temporary files live.
    pub temp_files: TempFiles,
    /// Closing a main database file calls [`Volume::flush`], so everything a connection committed
    /// is durable once it is closed, whatever the durability level (one flush, only if
    /// something is unflushed).
    pub flush_on_close: bool,
    /// Declare `SQLITE_IOCAP_BATCH_ATOMIC` on main database files (see "Commit cost" above).
    /// Turn it off only to measure what it saves.
    pub batch_atomic: bool,
}

impl Default for VfsOptions {
    fn default() -> Self {
        Self {
            make_default: false,
            temp_files: TempFiles::Memory,
            flush_on_close: true,
            batch_atomic: true,
        }
    }
}

/// What the VFS did, for tests and benchmarks (physical calls are in [`Volume::counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VfsStats {
    /// Files opened (named and anonymous).
    pub opens: u64,
    /// `SQLITE_FCNTL_COMMIT_ATOMIC_WRITE`: batches applied and committed to the volume.
    pub atomic_commits: u64,
    /// `SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE`: batches discarded.
    pub atomic_rollbacks: u64,
    /// `xSync` calls on database, journal and WAL files (a WAL's sync is a commit point).
    pub syncs: u64,
    /// Volume commits the VFS made (one per SQLite transaction that changed something, at its
    /// commit point: batch commit, phase two, WAL sync, unlock after a rollback, close).
    pub commits: u64,
    /// `xDelete` calls.
    pub deletes: u64,
    /// Lock requests refused with `SQLITE_BUSY`.
    pub busy: u64,
}

/// Errors of [`register`] and [`VfsHandle::unregister`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// SQLite or rsqlite-vfs refused the registration (empty name, NUL byte, name in use, …).
    #[error("cannot register SQLite VFS: {0}")]
    Register(#[from] rsqlite_vfs::RegisterVfsError),
    /// Files of this VFS are still open: close every connection first.
    #[error("{0} file(s) of this VFS are still open; close the connections first")]
    FilesOpen(usize),
    /// `sqlite3_vfs_unregister` failed with this SQLite code.
    #[error("sqlite3_vfs_unregister failed with code {0}")]
    Unregister(i32),
}

/// State shared by the registration, its app data and every open file.
pub(crate) struct Shared<S: Storage> {
    pub(crate) name: String,
    pub(crate) owner: ThreadId,
    pub(crate) volume: SharedVolume<S>,
    pub(crate) opts: VfsOptions,
    /// SQLite's lock levels per file name, shared by every registration over this volume.
    pub(crate) locks: Rc<RefCell<LockTable>>,
    /// What `PRAGMA synchronous` asked, per database group (see `file::group_of`).
    pub(crate) synchronous: RefCell<std::collections::HashMap<Rc<str>, file::Synchronous>>,
    /// Databases whose connection set `PRAGMA locking_mode=EXCLUSIVE`.
    pub(crate) exclusive: RefCell<std::collections::HashSet<Rc<str>>>,
    pub(crate) open_files: Cell<usize>,
    pub(crate) next_temp: Cell<u64>,
    pub(crate) last_error: RefCell<Option<VfsError>>,
    pub(crate) stats: Cell<VfsStats>,
    /// Set when an entry point caught a panic: state may be inconsistent, refuse everything.
    pub(crate) panicked: Cell<bool>,
}

impl<S: Storage> Shared<S> {
    pub(crate) fn bump(&self, f: impl FnOnce(&mut VfsStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }
}

/// A registered VFS over a volume. Dropping the handle unregisters the VFS if no file of it is
/// open; otherwise it stays registered (and keeps the volume alive) for the process lifetime.
pub struct VfsHandle<S: Storage + 'static = Box<dyn Storage>> {
    shared: Rc<Shared<S>>,
    /// The app data's slot: cleared on unregister, so the volume is freed although SQLite's
    /// VFS structure is deliberately leaked (see [`VfsHandle::unregister`]).
    slot: store::Slot<S>,
    vfs: *mut rsqlite_vfs::ffi::sqlite3_vfs,
    registered: bool,
}

impl<S: Storage + 'static> fmt::Debug for VfsHandle<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VfsHandle")
            .field("name", &self.shared.name)
            .field("open_files", &self.shared.open_files.get())
            .field("registered", &self.registered)
            .finish_non_exhaustive()
    }
}

/// Registers a VFS named `name` over `volume`, optionally as the default VFS.
pub fn register<S: Storage + 'static>(
    name: &str,
    volume: SharedVolume<S>,
    make_default: bool,
) -> Result<VfsHandle<S>, RegisterError> {
    register_with(
        name,
        volume,
        VfsOptions {
            make_default,
            ..VfsOptions::default()
        },
    )
}

/// Registers a VFS named `name` over `volume` with explicit options.
pub fn register_with<S: Storage + 'static>(
    name: &str,
    volume: SharedVolume<S>,
    opts: VfsOptions,
) -> Result<VfsHandle<S>, RegisterError> {
    let shared = Rc::new(new_shared(name, volume, opts.clone()));
    if opts.temp_files == TempFiles::Volume {
        store::remove_stale_temp_files(&shared);
    }
    let slot: store::Slot<S> = Rc::new(RefCell::new(Some(shared.clone())));
    let app = AppData::new(shared.owner, slot.clone());
    let vfs = ffi::register::<S>(name, app, opts.make_default)?;
    Ok(VfsHandle {
        shared,
        slot,
        vfs,
        registered: true,
    })
}

fn new_shared<S: Storage>(name: &str, volume: SharedVolume<S>, opts: VfsOptions) -> Shared<S> {
    let locks = lock::table_for(&volume);
    Shared {
        name: name.to_owned(),
        owner: std::thread::current().id(),
        volume,
        opts,
        locks,
        synchronous: RefCell::new(std::collections::HashMap::new()),
        exclusive: RefCell::new(std::collections::HashSet::new()),
        open_files: Cell::new(0),
        next_temp: Cell::new(0),
        last_error: RefCell::new(None),
        stats: Cell::new(VfsStats::default()),
        panicked: Cell::new(false),
    }
}

impl<S: Storage + 'static> VfsHandle<S> {
    /// The name connections use to select this VFS.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The volume this VFS stores its files in.
    pub fn volume(&self) -> &SharedVolume<S> {
        &self.shared.volume
    }

    /// The message of the last error this VFS reported to SQLite (what `xGetLastError` returns).
    pub fn last_error(&self) -> Option<String> {
        self.shared
            .last_error
            .borrow()
            .as_ref()
            .map(|e| e.message().to_owned())
    }

    /// The last error with its SQLite code.
    pub fn last_vfs_error(&self) -> Option<VfsError> {
        self.shared.last_error.borrow().clone()
    }

    /// Counters since registration.
    pub fn stats(&self) -> VfsStats {
        self.shared.stats.get()
    }

    /// Whether any connection over this volume holds a SQLite lock (is inside a read or write
    /// transaction). A volume shared between tabs is handed over only when none does.
    pub fn locks_held(&self) -> bool {
        self.shared
            .locks
            .try_borrow()
            .map_or(true, |l| l.any_held())
    }

    /// [`VfsHandle::locks_held`] as a function that outlives the handle's borrow.
    pub fn locks_probe(&self) -> impl Fn() -> bool + 'static {
        let locks = self.shared.locks.clone();
        move || locks.try_borrow().map_or(true, |l| l.any_held())
    }

    /// Files of this VFS currently open.
    pub fn open_files(&self) -> usize {
        self.shared.open_files.get()
    }

    /// Unregisters the VFS. Fails (giving the handle back) while any of its files is open.
    ///
    /// SQLite's `sqlite3_vfs` structure and name are leaked on purpose (a few hundred bytes): a
    /// thread that looked the VFS up just before could still read them, and it must find valid
    /// memory that tells it to stop (the owner-thread check), never freed memory. The volume and
    /// all other state are released.
    pub fn unregister(mut self) -> Result<(), (Self, RegisterError)> {
        match self.unregister_inner() {
            Ok(()) => Ok(()),
            Err(e) => Err((self, e)),
        }
    }

    fn unregister_inner(&mut self) -> Result<(), RegisterError> {
        if !self.registered {
            return Ok(());
        }
        let open = self.shared.open_files.get();
        if open > 0 {
            return Err(RegisterError::FilesOpen(open));
        }
        ffi::unregister(self.vfs).map_err(RegisterError::Unregister)?;
        self.registered = false;
        self.slot.replace(None);
        Ok(())
    }
}

impl<S: Storage + 'static> Drop for VfsHandle<S> {
    fn drop(&mut self) {
        // With files still open the VFS must stay registered: their connections use it.
        let _ = self.unregister_inner();
    }
}

/// Runs rsqlite-vfs's `test_suite` (the store and file contract checks, without SQLite) against
/// this VFS's store over `volume`. For conformance tests; needs an isolated volume (it reserves
/// `___test_vfs_store*` names).
pub fn run_rsqlite_test_suite<S: Storage + 'static>(
    volume: SharedVolume<S>,
    temp_files: TempFiles,
) -> Result<(), VfsError> {
    let opts = VfsOptions {
        temp_files,
        ..VfsOptions::default()
    };
    let shared = Rc::new(new_shared("test-suite", volume, opts));
    let slot: store::Slot<S> = Rc::new(RefCell::new(Some(shared.clone())));
    let app = AppData::new(shared.owner, slot);
    rsqlite_vfs::test_suite::test_vfs_store::<Store<S>>(rsqlite_vfs::VfsAppData::new(app))
}
