//! One open SQLite file: a logical file of the volume (or, for anonymous temp files, memory),
//! with its lock level; and the commit points of a SQLite transaction.
//!
//! ## When a SQLite transaction becomes a volume commit
//! The volume makes any set of changes atomic, so the VFS commits a database's changes (its
//! file, journal, WAL and super-journals: its *group*, see [`group_of`]) exactly when SQLite's
//! transaction ends, whatever `journal_mode` and `synchronous` are:
//! - `SQLITE_FCNTL_COMMIT_ATOMIC_WRITE` (batch-atomic commits, when SQLite is built with
//!   `SQLITE_ENABLE_BATCH_ATOMIC_WRITE`), and `SQLITE_FCNTL_COMMIT_PHASETWO`, which SQLite sends
//!   in every rollback-journal mode after finalizing the journal and before unlocking: the
//!   journal's deletion and the page writes are one volume commit, so the journal is redundant
//!   and a commit costs one flush with or without the build flag;
//! - `xSync` of a WAL file: SQLite syncs the WAL after writing a commit's frames and before it
//!   publishes them in the WAL index, so a failure there leaves SQLite's index untouched and the
//!   rolled-back volume consistent with it;
//! - `xUnlock` of a main database to SHARED or NONE with changes still open (a ROLLBACK, a hot
//!   journal rolled back), and `xClose` of a main database.
//!
//! `xSync` of databases and journals commits nothing (they are within the transaction).
//!
//! `PRAGMA synchronous` is answered by the VFS itself (SQLite keeps its default, FULL, so its
//! commit path always reaches the points above): `OFF`, and `NORMAL` in WAL mode, make the
//! group's commits [`SyncLevel::WriteOnly`] — written, so a crash of the tab loses nothing,
//! flushed within the durability level's delay; `NORMAL` (rollback journal), `FULL` and `EXTRA`
//! commit at the volume's level. On failure the engine rolls the group back, so what SQLite was
//! told is what a remount shows.

use std::cell::RefMut;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::thread::ThreadId;

use rsqlite_vfs::{
    DeviceCharacteristics, FileKind, LockLevel, MemChunksFile, SyncOptions, VfsError, VfsErrorCode,
    VfsFile, VfsResult,
};

use super::lock::Held;
use super::Shared;
use crate::storage::Storage;
use crate::{Error, FileId, Scope, SyncLevel, Volume};

/// Which call failed: decides the SQLite code of a volume error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Open,
    Read,
    Write,
    Truncate,
    Sync,
    Size,
    Lock,
    Close,
    Delete,
    Access,
    AtomicCommit,
    Commit,
}

impl Op {
    fn code(self) -> VfsErrorCode {
        match self {
            Op::Open => VfsErrorCode::CantOpen,
            Op::Read => VfsErrorCode::IoRead,
            Op::Write => VfsErrorCode::IoWrite,
            Op::Truncate => VfsErrorCode::IoTruncate,
            Op::Sync => VfsErrorCode::IoSync,
            Op::Size => VfsErrorCode::IoStat,
            Op::Lock => VfsErrorCode::IoLock,
            Op::Close => VfsErrorCode::IoClose,
            Op::Delete => VfsErrorCode::IoDelete,
            Op::Access => VfsErrorCode::IoAccess,
            Op::AtomicCommit => {
                VfsErrorCode::from_raw(rsqlite_vfs::ffi::SQLITE_IOERR_COMMIT_ATOMIC)
                    .unwrap_or(VfsErrorCode::IoWrite)
            }
            // The transaction's commit point; a failure there is the commit's failure.
            Op::Commit => VfsErrorCode::IoSync,
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Op::Open => "open",
            Op::Read => "read",
            Op::Write => "write",
            Op::Truncate => "truncate",
            Op::Sync => "sync (volume commit)",
            Op::Size => "file size",
            Op::Lock => "lock",
            Op::Close => "close",
            Op::Delete => "delete",
            Op::Access => "access",
            Op::AtomicCommit => "atomic batch commit",
            Op::Commit => "commit",
        }
    }
}

/// Maps a volume error to the SQLite code SQLite should see: space, corruption and contention
/// keep their meaning whatever the call; everything else is the call's own I/O error code.
pub(crate) fn volume_error(op: Op, e: Error) -> VfsError {
    let code = match &e {
        Error::OutOfSpace { .. } => VfsErrorCode::Full,
        Error::Corrupt { .. } => VfsErrorCode::Corrupt,
        Error::Busy { .. } => VfsErrorCode::Busy,
        Error::CommitUnknown { .. } => VfsErrorCode::IoSync,
        _ => op.code(),
    };
    VfsError::new(code, format!("{}: {e}", op.verb()).into())
}

fn error(code: VfsErrorCode, msg: impl Into<String>) -> VfsError {
    VfsError::new(code, msg.into().into())
}

/// Fails unless called on the thread that registered the VFS. Must run before anything touches
/// `Rc`/`RefCell` state.
pub(crate) fn check_thread(owner: ThreadId) -> VfsResult<()> {
    if std::thread::current().id() == owner {
        Ok(())
    } else {
        Err(error(
            VfsErrorCode::Misuse,
            "this SQLite VFS is bound to the thread that registered it; \
             a connection of it was used on another thread",
        ))
    }
}

/// Runs an entry point: refuses to run after an earlier panic, and turns a panic into an error
/// (natively; on wasm32 panics abort, see the module docs).
pub(crate) fn catch<S: Storage, T>(
    shared: &Shared<S>,
    op: Op,
    f: impl FnOnce() -> VfsResult<T>,
) -> VfsResult<T> {
    if shared.panicked.get() {
        return Err(error(
            op.code(),
            "VFS unusable after an internal panic: close the connections and remount the volume",
        ));
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            shared.panicked.set(true);
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(error(
                op.code(),
                format!("internal panic in {}: {what}", op.verb()),
            ))
        }
    }
}

/// Borrows the volume for one call. The application may hold a borrow of its own across an
/// SQLite call by mistake: that is reported, not a panic.
pub(crate) fn volume<S: Storage>(shared: &Shared<S>) -> VfsResult<RefMut<'_, Volume<S>>> {
    shared.volume.try_borrow_mut().map_err(|_| {
        error(
            VfsErrorCode::Misuse,
            "the volume is borrowed by the application during an SQLite call; \
             release the RefCell borrow first",
        )
    })
}

/// What SQLite's `PRAGMA synchronous` asked for a database (answered by the VFS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Synchronous {
    Off,
    Normal,
    #[default]
    Full,
    Extra,
}

impl Synchronous {
    fn parse(v: &str) -> Option<Self> {
        Some(match v.trim().to_ascii_lowercase().as_str() {
            "0" | "off" | "false" | "no" => Synchronous::Off,
            "1" | "normal" => Synchronous::Normal,
            "2" | "full" | "true" | "yes" | "on" => Synchronous::Full,
            "3" | "extra" => Synchronous::Extra,
            _ => return None,
        })
    }

    fn number(self) -> &'static str {
        match self {
            Synchronous::Off => "0",
            Synchronous::Normal => "1",
            Synchronous::Full => "2",
            Synchronous::Extra => "3",
        }
    }

    /// The sync level of a commit of this database: OFF never needs power-loss safety, NORMAL
    /// does not in WAL mode (SQLite's own rule), FULL and EXTRA always do.
    fn level(self, wal: bool) -> SyncLevel {
        match self {
            Synchronous::Off => SyncLevel::WriteOnly,
            Synchronous::Normal if wal => SyncLevel::WriteOnly,
            _ => SyncLevel::Full,
        }
    }
}

/// What the VFS does with a `PRAGMA` SQLite shows it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PragmaOutcome {
    /// SQLite runs it.
    NotHandled,
    /// The VFS ran it; the optional text is its result row.
    Handled(Option<String>),
    /// Refused with this message.
    Refused(String),
}

/// The group a file belongs to: its main database's name. A database commits together with its
/// rollback journal (`-journal`), WAL (`-wal`) and super-journals (`-mj` + hex digits).
pub(crate) fn group_of(name: &str) -> &str {
    if let Some(db) = name.strip_suffix("-journal") {
        return db;
    }
    if let Some(db) = name.strip_suffix("-wal") {
        return db;
    }
    if let Some(i) = name.rfind("-mj") {
        let tail = &name[i + 3..];
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_hexdigit()) {
            return &name[..i];
        }
    }
    name
}

/// Whether `name` is a super-journal (a multi-database commit is in progress while one exists).
fn is_super_journal(name: &str) -> bool {
    group_of(name) != name && !name.ends_with("-journal") && !name.ends_with("-wal")
}

/// Commits the open changes of `group` (or of every file, while a multi-database commit's
/// super-journal is open, so the databases of one volume commit together).
pub(crate) fn commit_group<S: Storage>(
    shared: &Shared<S>,
    group: &str,
    wal: bool,
    op: Op,
) -> VfsResult<()> {
    let sync = shared
        .synchronous
        .borrow()
        .get(group)
        .copied()
        .unwrap_or_default()
        .level(wal);
    let mut vol = volume(shared)?;
    let multi = vol.has_uncommitted_where(&is_super_journal);
    let in_group = |n: &str| group_of(n) == group;
    let scope = if multi {
        Scope::All
    } else {
        Scope::Files(&in_group)
    };
    vol.commit_with(scope, sync)
        .map_err(|e| volume_error(op, e))?;
    drop(vol);
    shared.bump(|s| s.commits += 1);
    Ok(())
}

/// A logical file of the volume.
pub(crate) struct VolumeBacking {
    id: FileId,
    name: Rc<str>,
    /// [`group_of`] the name.
    group: Rc<str>,
    kind: Option<FileKind>,
    read_only: bool,
    delete_on_close: bool,
    held: Held,
    /// Between `BEGIN_ATOMIC_WRITE` and its commit or rollback.
    in_batch: bool,
    /// `PRAGMA locking_mode=EXCLUSIVE` was seen on this (main database) file.
    exclusive_locking: bool,
    /// Declares `SQLITE_IOCAP_BATCH_ATOMIC` (main databases, unless disabled).
    batch_atomic: bool,
}

pub(crate) enum Backing {
    Volume(VolumeBacking),
    /// An anonymous temp file kept in memory.
    Memory(MemChunksFile),
}

fn opened<S: Storage>(shared: &Shared<S>) {
    shared.open_files.set(shared.open_files.get() + 1);
    shared.bump(|s| s.opens += 1);
}

/// An open file, as SQLite's `xOpen` created it.
pub(crate) struct File<S: Storage + 'static> {
    /// Copied from `shared` so it can be checked without touching the `Rc`.
    owner: ThreadId,
    shared: Rc<Shared<S>>,
    backing: Backing,
}

impl<S: Storage + 'static> File<S> {
    pub(crate) fn new_memory(shared: Rc<Shared<S>>) -> Self {
        opened(&shared);
        Self {
            owner: shared.owner,
            shared,
            backing: Backing::Memory(MemChunksFile::new(8192)),
        }
    }

    pub(crate) fn new_volume(
        shared: Rc<Shared<S>>,
        id: FileId,
        name: &str,
        kind: Option<FileKind>,
        read_only: bool,
        delete_on_close: bool,
    ) -> Self {
        opened(&shared);
        let batch_atomic = kind == Some(FileKind::MainDb) && shared.opts.batch_atomic;
        let name: Rc<str> = Rc::from(name);
        let group: Rc<str> = Rc::from(group_of(&name));
        if let Ok(mut locks) = shared.locks.try_borrow_mut() {
            locks.attach(&name);
        }
        Self {
            owner: shared.owner,
            shared,
            backing: Backing::Volume(VolumeBacking {
                id,
                name,
                group,
                kind,
                read_only,
                delete_on_close,
                held: Held::NONE,
                in_batch: false,
                exclusive_locking: false,
                batch_atomic,
            }),
        }
    }

    /// Thread check, panic barrier, then `f` with the shared state and the backing.
    fn run<T>(
        &mut self,
        op: Op,
        f: impl FnOnce(&Shared<S>, &mut Backing) -> VfsResult<T>,
    ) -> VfsResult<T> {
        check_thread(self.owner)?;
        let shared = &*self.shared;
        let backing = &mut self.backing;
        catch(shared, op, || f(shared, backing))
    }

    fn run_ref<T>(
        &self,
        op: Op,
        f: impl FnOnce(&Shared<S>, &Backing) -> VfsResult<T>,
    ) -> VfsResult<T> {
        check_thread(self.owner)?;
        let shared = &*self.shared;
        catch(shared, op, || f(shared, &self.backing))
    }

    /// `SQLITE_FCNTL_BEGIN_ATOMIC_WRITE`: the batch's writes go to the volume as they come;
    /// they are one commit at `COMMIT_ATOMIC_WRITE`, or rolled back.
    pub(crate) fn begin_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::Write, |_, b| {
            let Backing::Volume(v) = b else {
                return Err(error(
                    VfsErrorCode::NotFound,
                    "no atomic writes on temp files",
                ));
            };
            v.in_batch = true;
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_COMMIT_ATOMIC_WRITE`: the whole batch is one volume commit (one log
    /// append). On failure the engine has rolled the batch back.
    pub(crate) fn commit_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::AtomicCommit, |shared, b| {
            let Backing::Volume(v) = b else {
                return Err(error(
                    VfsErrorCode::NotFound,
                    "no atomic writes on temp files",
                ));
            };
            if !std::mem::take(&mut v.in_batch) {
                return Err(error(
                    VfsErrorCode::Misuse,
                    "COMMIT_ATOMIC_WRITE without BEGIN_ATOMIC_WRITE",
                ));
            }
            commit_group(shared, &v.group, false, Op::AtomicCommit)?;
            shared.bump(|s| s.atomic_commits += 1);
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE`: the batch's writes are rolled back.
    pub(crate) fn rollback_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::Write, |shared, b| {
            if let Backing::Volume(v) = b {
                if std::mem::take(&mut v.in_batch) {
                    let group = v.group.clone();
                    let in_group = |n: &str| group_of(n) == &*group;
                    volume(shared)?.rollback_with(Scope::Files(&in_group));
                    shared.bump(|s| s.atomic_rollbacks += 1);
                }
            }
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_COMMIT_PHASETWO`: the transaction has committed as far as SQLite is
    /// concerned (journal finalized); commit the volume before SQLite unlocks.
    pub(crate) fn commit_phase_two(&mut self) -> VfsResult<()> {
        self.run(Op::Commit, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(());
            };
            commit_group(shared, &v.group, false, Op::Commit)
        })
    }

    /// `SQLITE_FCNTL_PRAGMA`, seen before SQLite runs the pragma.
    pub(crate) fn pragma(&mut self, name: &str, value: Option<&str>) -> VfsResult<PragmaOutcome> {
        self.run(Op::Access, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(PragmaOutcome::NotHandled);
            };
            if name.eq_ignore_ascii_case("locking_mode") {
                if let Some(value) = value {
                    if value.eq_ignore_ascii_case("exclusive") {
                        v.exclusive_locking = true;
                    } else if value.eq_ignore_ascii_case("normal") {
                        v.exclusive_locking = false;
                    }
                    if let Ok(mut set) = shared.exclusive.try_borrow_mut() {
                        if v.exclusive_locking {
                            set.insert(v.group.clone());
                        } else {
                            set.remove(&v.group);
                        }
                    }
                }
            } else if name.eq_ignore_ascii_case("journal_mode")
                && value.is_some_and(|m| m.eq_ignore_ascii_case("wal"))
                && !v.exclusive_locking
            {
                return Ok(PragmaOutcome::Refused(WAL_NEEDS_EXCLUSIVE.to_owned()));
            } else if name.eq_ignore_ascii_case("synchronous") {
                let mut map = shared
                    .synchronous
                    .try_borrow_mut()
                    .map_err(|_| error(VfsErrorCode::Misuse, "pragma table busy"))?;
                return Ok(match value {
                    None => PragmaOutcome::Handled(Some(
                        map.get(&*v.group)
                            .copied()
                            .unwrap_or_default()
                            .number()
                            .to_owned(),
                    )),
                    Some(text) => match Synchronous::parse(text) {
                        Some(level) => {
                            map.insert(v.group.clone(), level);
                            PragmaOutcome::Handled(None)
                        }
                        None => PragmaOutcome::NotHandled,
                    },
                });
            }
            Ok(PragmaOutcome::NotHandled)
        })
    }

    /// Called by `xClose`: releases locks, deletes delete-on-close files, commits what a main
    /// database left open and makes it durable if so configured.
    pub(crate) fn close(mut self) -> VfsResult<()> {
        if let Err(e) = check_thread(self.owner) {
            // Never touch or drop our `Rc` on a foreign thread: leak the handle instead.
            std::mem::forget(self);
            return Err(e);
        }
        let open = self.shared.open_files.get();
        self.shared.open_files.set(open.saturating_sub(1));
        self.run(Op::Close, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(());
            };
            if let Ok(mut locks) = shared.locks.try_borrow_mut() {
                locks.detach(&v.name, &mut v.held);
            }
            if v.delete_on_close {
                let mut vol = volume(shared)?;
                match vol.delete_id(v.id) {
                    Ok(()) | Err(Error::StaleId { .. }) => {}
                    Err(e) => return Err(volume_error(Op::Close, e)),
                }
            }
            if v.kind == Some(FileKind::MainDb) {
                commit_group(shared, &v.group, false, Op::Close)?;
                if shared.opts.flush_on_close {
                    volume(shared)?
                        .sync()
                        .map_err(|e| volume_error(Op::Close, e))?;
                }
            }
            Ok(())
        })
    }
}

/// Why `journal_mode=WAL` is refused without exclusive locking.
pub(crate) const WAL_NEEDS_EXCLUSIVE: &str =
    "journal_mode=WAL needs PRAGMA locking_mode=EXCLUSIVE first: this VFS has no shared memory \
     (xShmMap), so SQLite can only keep the WAL index in heap memory";

fn read_only_error() -> VfsError {
    error(VfsErrorCode::ReadOnly, "file was opened read-only")
}

/// Kinds whose contents never need to survive the connection: syncing them commits nothing.
fn is_transient(kind: Option<FileKind>) -> bool {
    matches!(
        kind,
        Some(
            FileKind::TempDb | FileKind::TempJournal | FileKind::SubJournal | FileKind::TransientDb
        )
    )
}

impl<S: Storage + 'static> VfsFile for File<S> {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        self.run(Op::Read, |shared, b| match b {
            Backing::Memory(m) => m.read(buf, offset),
            Backing::Volume(v) => volume(shared)?
                .read(v.id, offset, buf)
                .map_err(|e| volume_error(Op::Read, e)),
        })
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        self.run(Op::Write, |shared, b| match b {
            Backing::Memory(m) => m.write(buf, offset),
            Backing::Volume(v) => {
                if v.read_only {
                    return Err(read_only_error());
                }
                volume(shared)?
                    .write(v.id, offset, buf)
                    .map_err(|e| volume_error(Op::Write, e))
            }
        })
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        self.run(Op::Truncate, |shared, b| match b {
            Backing::Memory(m) => m.truncate(size),
            Backing::Volume(v) => {
                if v.read_only {
                    return Err(read_only_error());
                }
                volume(shared)?
                    .set_len(v.id, size)
                    .map_err(|e| volume_error(Op::Truncate, e))
            }
        })
    }

    /// A WAL file's sync is its database's commit point (see the module docs); any other
    /// file's sync is within a transaction and commits nothing.
    fn sync(&mut self, _options: SyncOptions) -> VfsResult<()> {
        self.run(Op::Sync, |shared, b| match b {
            Backing::Volume(v) if v.kind == Some(FileKind::Wal) => {
                commit_group(shared, &v.group, true, Op::Sync)?;
                shared.bump(|s| s.syncs += 1);
                Ok(())
            }
            Backing::Volume(v) if !is_transient(v.kind) => {
                shared.bump(|s| s.syncs += 1);
                Ok(())
            }
            _ => Ok(()),
        })
    }

    fn size(&self) -> VfsResult<u64> {
        self.run_ref(Op::Size, |shared, b| match b {
            Backing::Memory(m) => m.size(),
            Backing::Volume(v) => shared
                .volume
                .try_borrow()
                .map_err(|_| {
                    error(
                        VfsErrorCode::Misuse,
                        "volume borrowed during an SQLite call",
                    )
                })?
                .len(v.id)
                .map_err(|e| volume_error(Op::Size, e)),
        })
    }

    fn lock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.run(Op::Lock, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(());
            };
            let mut locks = shared
                .locks
                .try_borrow_mut()
                .map_err(|_| error(VfsErrorCode::IoLock, "lock table busy"))?;
            match locks.lock(&v.name, &mut v.held, level) {
                Ok(()) => Ok(()),
                Err(conflict) => {
                    drop(locks);
                    shared.bump(|s| s.busy += 1);
                    Err(error(
                        VfsErrorCode::Busy,
                        format!(
                            "database {:?} is locked: {} (this VFS allows one writer, and no \
                             reader while a writer commits)",
                            &*v.name,
                            conflict.describe()
                        ),
                    ))
                }
            }
        })
    }

    /// Dropping a main database to SHARED or NONE ends its write transaction: whatever it left
    /// open (a ROLLBACK's restored pages, a hot journal rolled back) is committed, written but
    /// not waited for — the content equals what was committed before.
    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.run(Op::Lock, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(());
            };
            let was_writing = v.held.level >= LockLevel::Reserved;
            {
                let mut locks = shared
                    .locks
                    .try_borrow_mut()
                    .map_err(|_| error(VfsErrorCode::IoUnlock, "lock table busy"))?;
                locks.unlock(&v.name, &mut v.held, level);
            }
            if was_writing && v.kind == Some(FileKind::MainDb) && level <= LockLevel::Shared {
                let group = v.group.clone();
                let pending =
                    volume(shared)?.has_uncommitted_where(&|n: &str| group_of(n) == &*group);
                if pending {
                    let mut vol = volume(shared)?;
                    let in_group = |n: &str| group_of(n) == &*group;
                    vol.commit_with(Scope::Files(&in_group), SyncLevel::WriteOnly)
                        .map_err(|e| volume_error(Op::Lock, e))?;
                }
            }
            Ok(())
        })
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        self.run_ref(Op::Lock, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(false);
            };
            let locks = shared
                .locks
                .try_borrow()
                .map_err(|_| error(VfsErrorCode::IoCheckReservedLock, "lock table busy"))?;
            Ok(locks.reserved(&v.name))
        })
    }

    /// The volume makes every commit atomic and ordered (see the module docs); the main database
    /// additionally takes whole transactions as atomic batches.
    fn device_characteristics(&self) -> DeviceCharacteristics {
        let base = DeviceCharacteristics::SEQUENTIAL
            | DeviceCharacteristics::SAFE_APPEND
            | DeviceCharacteristics::POWERSAFE_OVERWRITE;
        match &self.backing {
            Backing::Volume(v) if v.batch_atomic => base | DeviceCharacteristics::BATCH_ATOMIC,
            _ => base,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_sqlite_names() {
        assert_eq!(group_of("app.db"), "app.db");
        assert_eq!(group_of("app.db-journal"), "app.db");
        assert_eq!(group_of("app.db-wal"), "app.db");
        assert_eq!(group_of("app.db-mj0A1B2C3D"), "app.db");
        assert_eq!(
            group_of("notes-mjx"),
            "notes-mjx",
            "not hex: not a super-journal"
        );
        assert!(is_super_journal("app.db-mj0A1B2C3D"));
        assert!(!is_super_journal("app.db-journal"));
    }

    #[test]
    fn synchronous_levels() {
        assert_eq!(Synchronous::parse("OFF"), Some(Synchronous::Off));
        assert_eq!(Synchronous::parse(" 1 "), Some(Synchronous::Normal));
        assert_eq!(Synchronous::parse("bogus"), None);
        assert_eq!(Synchronous::Off.level(false), SyncLevel::WriteOnly);
        assert_eq!(Synchronous::Normal.level(false), SyncLevel::Full);
        assert_eq!(Synchronous::Normal.level(true), SyncLevel::WriteOnly);
        assert_eq!(Synchronous::Extra.level(true), SyncLevel::Full);
    }
}
