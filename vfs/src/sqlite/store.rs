//! The VFS's file namespace: open, close, access, delete, over the volume's logical files.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::rc::Rc;
use std::thread::ThreadId;

use rsqlite_vfs::{
    AccessMode, OpenAccess, OpenOptions, OpenRequest, OpenedFile, VfsError, VfsErrorCode,
    VfsResult, VfsStore,
};

use super::file::{catch, check_thread, volume, volume_error, File, Op};
use super::{Shared, TempFiles};
use crate::storage::Storage;
use crate::Error;

/// Longest name SQLite may hand us for a database: the volume's 1024-byte limit minus the
/// longest suffix SQLite appends (`-mj` plus nine characters for a super-journal; `-journal`
/// and `-wal` are shorter).
const MAX_DB_NAME: usize = 1024 - 12;

/// Where the app data finds the shared state; emptied by unregister.
pub(crate) type Slot<S> = Rc<RefCell<Option<Rc<Shared<S>>>>>;

/// `sqlite3_vfs.pAppData`. SQLite may call in on any thread; only `owner` is read before the
/// thread check, and it is never written after construction.
pub(crate) struct AppData<S: Storage + 'static> {
    owner: ThreadId,
    slot: Slot<S>,
}

impl<S: Storage + 'static> AppData<S> {
    pub(crate) fn new(owner: ThreadId, slot: Slot<S>) -> Self {
        Self { owner, slot }
    }

    fn shared(&self) -> VfsResult<Rc<Shared<S>>> {
        check_thread(self.owner)?;
        self.slot
            .try_borrow()
            .ok()
            .and_then(|s| s.clone())
            .ok_or_else(|| VfsError::new(VfsErrorCode::Misuse, "VFS was unregistered".into()))
    }
}

fn temp_prefix<S: Storage>(shared: &Shared<S>) -> String {
    format!(".sqlite-temp-{}-", shared.name)
}

/// Deletes temp files a crashed earlier run left in the volume (`TempFiles::Volume`).
pub(crate) fn remove_stale_temp_files<S: Storage>(shared: &Shared<S>) {
    let prefix = temp_prefix(shared);
    if let Ok(mut vol) = shared.volume.try_borrow_mut() {
        for m in vol.list() {
            if m.name.starts_with(&prefix) {
                let _ = vol.delete_id(m.id);
            }
        }
    }
}

fn cant_open(msg: String) -> VfsError {
    VfsError::new(VfsErrorCode::CantOpen, msg.into())
}

/// The [`VfsStore`] of a VFS over a volume with storage `S`.
pub(crate) struct Store<S>(PhantomData<S>);

impl<S: Storage + 'static> VfsStore for Store<S> {
    type File = File<S>;
    type AppData = AppData<S>;

    fn record_error(data: &AppData<S>, error: VfsError) {
        if let Ok(shared) = data.shared() {
            if let Ok(mut last) = shared.last_error.try_borrow_mut() {
                *last = Some(error);
            }
        }
    }

    fn last_error(data: &AppData<S>) -> Option<VfsError> {
        let shared = data.shared().ok()?;
        let last = shared.last_error.try_borrow().ok()?;
        last.clone()
    }

    fn open_file(data: &AppData<S>, request: OpenRequest<'_>) -> VfsResult<OpenedFile<File<S>>> {
        let shared = data.shared()?;
        catch(&shared, Op::Open, || {
            let options = request.options;
            let access = options.access();
            let read_only = access == OpenAccess::ReadOnly;
            let Some(filename) = request.filename else {
                let file = match shared.opts.temp_files {
                    TempFiles::Memory => File::new_memory(shared.clone()),
                    TempFiles::Volume => {
                        let mut vol = volume(&shared)?;
                        let (id, name) = loop {
                            let n = shared.next_temp.get();
                            shared.next_temp.set(n + 1);
                            let name = format!("{}{n}", temp_prefix(&shared));
                            match vol.create(&name) {
                                Ok(id) => break (id, name),
                                Err(Error::AlreadyExists { .. }) => continue,
                                Err(e) => return Err(volume_error(Op::Open, e)),
                            }
                        };
                        drop(vol);
                        File::new_volume(shared.clone(), id, &name, options.kind(), false, true)
                    }
                };
                return Ok(OpenedFile { file, access });
            };
            let name = filename.path();
            let mut vol = volume(&shared)?;
            let id = if vol.exists(name) {
                if options.exclusive() {
                    return Err(cant_open(format!("file already exists: {name:?}")));
                }
                vol.open(name).map_err(|e| volume_error(Op::Open, e))?
            } else if options.create() {
                vol.create(name).map_err(|e| volume_error(Op::Open, e))?
            } else {
                return Err(cant_open(format!("no such file: {name:?}")));
            };
            drop(vol);
            let file = File::new_volume(
                shared.clone(),
                id,
                name,
                options.kind(),
                read_only,
                options.delete_on_close(),
            );
            Ok(OpenedFile { file, access })
        })
    }

    fn close_file(
        _data: &AppData<S>,
        _name: Option<&str>,
        file: File<S>,
        _options: OpenOptions,
    ) -> VfsResult<()> {
        file.close()
    }

    fn access(data: &AppData<S>, name: &str, _mode: AccessMode) -> VfsResult<bool> {
        let shared = data.shared()?;
        // Every file of the volume is readable and writable.
        catch(&shared, Op::Access, || {
            let exists = volume(&shared)?.exists(name);
            // SQLite asks whether a WAL exists before its first read of a database; without
            // exclusive locking it then fails with a bare SQLITE_CANTOPEN (no shared memory
            // here). Leave the reason where `VfsHandle::last_error` (and xGetLastError) finds it.
            if exists {
                if let Some(db) = name.strip_suffix("-wal") {
                    let exclusive = shared
                        .exclusive
                        .try_borrow()
                        .is_ok_and(|set| set.contains(db));
                    if !exclusive {
                        if let Ok(mut last) = shared.last_error.try_borrow_mut() {
                            *last = Some(VfsError::new(
                                VfsErrorCode::CantOpen,
                                format!(
                                    "database {db:?} is in WAL mode; {}",
                                    super::file::WAL_NEEDS_EXCLUSIVE
                                )
                                .into(),
                            ));
                        }
                    }
                }
            }
            Ok(exists)
        })
    }

    /// The namespace is flat: names are kept as given (SQLite appends `-journal`/`-wal`).
    fn full_pathname(_data: &AppData<S>, name: &str) -> VfsResult<String> {
        if name.is_empty() || name.len() > MAX_DB_NAME {
            return Err(cant_open(format!(
                "database name must be 1 to {MAX_DB_NAME} bytes, got {}",
                name.len()
            )));
        }
        Ok(name.to_owned())
    }

    /// Deletes, whatever `sync_dir` says (the deletion becomes durable with its database's
    /// commit).
    fn delete_file(data: &AppData<S>, name: &str, _sync_dir: bool) -> VfsResult<()> {
        let shared = data.shared()?;
        catch(&shared, Op::Delete, || {
            let mut vol = volume(&shared)?;
            match vol.delete(name) {
                Ok(()) => {}
                Err(Error::NotFound { .. }) => {
                    return Err(VfsError::new(
                        VfsErrorCode::IoDeleteNoEntry,
                        format!("delete: no such file: {name:?}").into(),
                    ))
                }
                Err(e) => return Err(volume_error(Op::Delete, e)),
            }
            // No commit here: a journal's deletion is part of its transaction, committed with
            // it at the transaction's commit point (see `file.rs`); a deletion outside one is
            // committed by the database's next commit point or its close.
            drop(vol);
            shared.bump(|s| s.deletes += 1);
            Ok(())
        })
    }
}
