//! One open SQLite file: a logical file of the volume (or, for anonymous temp files, memory),
//! with its lock level and, between `BEGIN_ATOMIC_WRITE` and `COMMIT_ATOMIC_WRITE`, the
//! buffered batch.

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
use crate::{Error, FileId, Volume};

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

/// One write or truncation buffered during an atomic batch.
#[derive(Debug)]
enum BatchOp {
    Write { offset: u64, data: Vec<u8> },
    Truncate(u64),
}

/// The writes between `BEGIN_ATOMIC_WRITE` and `COMMIT_ATOMIC_WRITE`, in order.
#[derive(Debug)]
struct Batch {
    ops: Vec<BatchOp>,
    /// The file's length as the batch sees it.
    size: u64,
}

/// A count known to be at most a slice length (saturates instead of truncating otherwise).
fn idx(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

impl Batch {
    /// Applies the batch on top of `buf`, which holds the volume's bytes at `offset` (zeros past
    /// the volume's end); returns the byte count the file has there.
    fn overlay(&self, offset: u64, buf: &mut [u8]) -> usize {
        let end = offset.saturating_add(buf.len() as u64);
        for op in &self.ops {
            match op {
                BatchOp::Write { offset: w, data } => {
                    let lo = offset.max(*w);
                    let hi = end.min(w.saturating_add(data.len() as u64));
                    if lo < hi {
                        // All three differences are below buf.len() or data.len().
                        let (b, d, n) = (idx(lo - offset), idx(lo - w), idx(hi - lo));
                        buf[b..b + n].copy_from_slice(&data[d..d + n]);
                    }
                }
                BatchOp::Truncate(len) => {
                    if *len < end {
                        let from = idx(len.saturating_sub(offset));
                        buf[from..].fill(0);
                    }
                }
            }
        }
        if offset >= self.size {
            0
        } else {
            buf.len().min(idx(self.size - offset))
        }
    }
}

/// A logical file of the volume.
pub(crate) struct VolumeBacking {
    id: FileId,
    name: Rc<str>,
    kind: Option<FileKind>,
    read_only: bool,
    delete_on_close: bool,
    held: Held,
    batch: Option<Batch>,
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
        if let Ok(mut locks) = shared.locks.try_borrow_mut() {
            locks.attach(&name);
        }
        Self {
            owner: shared.owner,
            shared,
            backing: Backing::Volume(VolumeBacking {
                id,
                name,
                kind,
                read_only,
                delete_on_close,
                held: Held::NONE,
                batch: None,
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

    /// `SQLITE_FCNTL_BEGIN_ATOMIC_WRITE`.
    pub(crate) fn begin_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::Write, |shared, b| {
            let Backing::Volume(v) = b else {
                return Err(error(
                    VfsErrorCode::NotFound,
                    "no atomic writes on temp files",
                ));
            };
            let size = volume(shared)?
                .len(v.id)
                .map_err(|e| volume_error(Op::Size, e))?;
            v.batch = Some(Batch {
                ops: Vec::new(),
                size,
            });
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_COMMIT_ATOMIC_WRITE`: applies the batch and commits the volume, so the
    /// whole batch is one atomic log append.
    pub(crate) fn commit_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::AtomicCommit, |shared, b| {
            let Backing::Volume(v) = b else {
                return Err(error(
                    VfsErrorCode::NotFound,
                    "no atomic writes on temp files",
                ));
            };
            let Some(batch) = v.batch.take() else {
                return Err(error(
                    VfsErrorCode::Misuse,
                    "COMMIT_ATOMIC_WRITE without BEGIN_ATOMIC_WRITE",
                ));
            };
            let mut vol = volume(shared)?;
            for op in batch.ops {
                match op {
                    BatchOp::Write { offset, data } => vol.write(v.id, offset, &data),
                    BatchOp::Truncate(len) => vol.set_len(v.id, len),
                }
                .map_err(|e| volume_error(Op::AtomicCommit, e))?;
            }
            vol.commit()
                .map_err(|e| volume_error(Op::AtomicCommit, e))?;
            drop(vol);
            shared.bump(|s| s.atomic_commits += 1);
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE`: forgets the batch.
    pub(crate) fn rollback_atomic_write(&mut self) -> VfsResult<()> {
        self.run(Op::Write, |shared, b| {
            if let Backing::Volume(v) = b {
                if v.batch.take().is_some() {
                    shared.bump(|s| s.atomic_rollbacks += 1);
                }
            }
            Ok(())
        })
    }

    /// `SQLITE_FCNTL_PRAGMA`, seen before SQLite runs the pragma. `Err(message)` refuses it.
    pub(crate) fn pragma(
        &mut self,
        name: &str,
        value: Option<&str>,
    ) -> VfsResult<Result<(), String>> {
        self.run(Op::Access, |_, b| {
            let Backing::Volume(v) = b else {
                return Ok(Ok(()));
            };
            if name.eq_ignore_ascii_case("locking_mode") {
                if let Some(value) = value {
                    if value.eq_ignore_ascii_case("exclusive") {
                        v.exclusive_locking = true;
                    } else if value.eq_ignore_ascii_case("normal") {
                        v.exclusive_locking = false;
                    }
                }
            } else if name.eq_ignore_ascii_case("journal_mode")
                && value.is_some_and(|m| m.eq_ignore_ascii_case("wal"))
                && !v.exclusive_locking
            {
                return Ok(Err(
                    "journal_mode=WAL needs PRAGMA locking_mode=EXCLUSIVE first: this VFS has no \
                     shared memory (xShmMap), so SQLite can only keep the WAL index in heap memory"
                        .to_owned(),
                ));
            }
            Ok(Ok(()))
        })
    }

    /// Called by `xClose`: releases locks, deletes delete-on-close files and flushes the volume
    /// for a main database if so configured.
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
            v.batch = None;
            if let Ok(mut locks) = shared.locks.try_borrow_mut() {
                locks.detach(&v.name, &mut v.held);
            }
            let mut vol = volume(shared)?;
            if v.delete_on_close {
                match vol.delete_id(v.id) {
                    Ok(()) | Err(Error::StaleId { .. }) => {}
                    Err(e) => return Err(volume_error(Op::Close, e)),
                }
            }
            if shared.opts.flush_on_close && v.kind == Some(FileKind::MainDb) {
                vol.flush().map_err(|e| volume_error(Op::Close, e))?;
            }
            Ok(())
        })
    }
}

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
            Backing::Volume(v) => {
                let n = volume(shared)?
                    .read(v.id, offset, buf)
                    .map_err(|e| volume_error(Op::Read, e))?;
                match &v.batch {
                    None => Ok(n),
                    Some(batch) => {
                        buf[n..].fill(0);
                        Ok(batch.overlay(offset, buf))
                    }
                }
            }
        })
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        self.run(Op::Write, |shared, b| match b {
            Backing::Memory(m) => m.write(buf, offset),
            Backing::Volume(v) => {
                if v.read_only {
                    return Err(read_only_error());
                }
                if let Some(batch) = &mut v.batch {
                    let end = offset
                        .checked_add(buf.len() as u64)
                        .ok_or_else(|| error(VfsErrorCode::IoWrite, "write offset out of range"))?;
                    batch.size = batch.size.max(end);
                    batch.ops.push(BatchOp::Write {
                        offset,
                        data: buf.to_vec(),
                    });
                    return Ok(());
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
                if let Some(batch) = &mut v.batch {
                    batch.size = size;
                    batch.ops.push(BatchOp::Truncate(size));
                    return Ok(());
                }
                volume(shared)?
                    .set_len(v.id, size)
                    .map_err(|e| volume_error(Op::Truncate, e))
            }
        })
    }

    /// A volume commit: the volume makes every change since the last commit durable (per its
    /// durability level) atomically, whichever file it belongs to. Temp files: nothing.
    fn sync(&mut self, _options: SyncOptions) -> VfsResult<()> {
        self.run(Op::Sync, |shared, b| match b {
            Backing::Memory(_) => Ok(()),
            Backing::Volume(v) if is_transient(v.kind) => Ok(()),
            Backing::Volume(_) => {
                volume(shared)?
                    .commit()
                    .map_err(|e| volume_error(Op::Sync, e))?;
                shared.bump(|s| s.syncs += 1);
                Ok(())
            }
        })
    }

    fn size(&self) -> VfsResult<u64> {
        self.run_ref(Op::Size, |shared, b| match b {
            Backing::Memory(m) => m.size(),
            Backing::Volume(v) => match &v.batch {
                Some(batch) => Ok(batch.size),
                None => shared
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
            },
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

    fn unlock(&mut self, level: LockLevel) -> VfsResult<()> {
        self.run(Op::Lock, |shared, b| {
            let Backing::Volume(v) = b else {
                return Ok(());
            };
            let mut locks = shared
                .locks
                .try_borrow_mut()
                .map_err(|_| error(VfsErrorCode::IoUnlock, "lock table busy"))?;
            locks.unlock(&v.name, &mut v.held, level);
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
    fn batch_overlay_applies_writes_and_truncations_in_order() {
        let b = Batch {
            ops: vec![
                BatchOp::Write {
                    offset: 2,
                    data: vec![1, 2, 3, 4],
                },
                BatchOp::Truncate(4),
                BatchOp::Write {
                    offset: 7,
                    data: vec![9],
                },
            ],
            size: 8,
        };
        let mut buf = [5u8; 10];
        assert_eq!(b.overlay(0, &mut buf), 8);
        assert_eq!(buf, [5, 5, 1, 2, 0, 0, 0, 9, 0, 0]);
        let mut buf = [5u8; 3];
        assert_eq!(b.overlay(6, &mut buf), 2);
        assert_eq!(buf, [0, 9, 0]);
        assert_eq!(b.overlay(8, &mut [0u8; 4]), 0);
    }
}
