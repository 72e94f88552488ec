//! The FFI seam: the only `unsafe` of the SQLite VFS.
//!
//! rsqlite-vfs supplies every raw callback (`xOpen`, `xRead`, …) as a default method that turns
//! pointers into slices and calls the safe [`VfsStore`]/[`VfsFile`](rsqlite_vfs::VfsFile)
//! traits implemented in `store.rs` and `file.rs`. This module registers those callbacks and
//! overrides one: `xFileControl`, for the atomic-batch file controls, the transaction's commit
//! point (`SQLITE_FCNTL_COMMIT_PHASETWO`) and `SQLITE_FCNTL_PRAGMA`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::marker::PhantomData;

use rsqlite_vfs::ffi::{
    sqlite3_file, sqlite3_vfs, SQLITE_FCNTL_BEGIN_ATOMIC_WRITE, SQLITE_FCNTL_COMMIT_ATOMIC_WRITE,
    SQLITE_FCNTL_COMMIT_PHASETWO, SQLITE_FCNTL_PRAGMA, SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE,
    SQLITE_FCNTL_SIZE_HINT, SQLITE_NOTFOUND, SQLITE_OK,
};
use rsqlite_vfs::{
    RegisterVfsError, SQLiteIoMethods, SQLiteVfs, SQLiteVfsFile, VfsAppData, VfsError,
    VfsErrorCode, VfsFile, VfsResult, VfsStore,
};

use super::file::{File, PragmaOutcome};
use super::os::{Os, OS};
use super::store::{AppData, Store};
use crate::storage::Storage;

/// The I/O method table: rsqlite-vfs's defaults plus our `xFileControl`.
pub(crate) struct IoMethods<S>(PhantomData<S>);

/// The VFS callbacks: all rsqlite-vfs defaults.
pub(crate) struct Vfs<S>(PhantomData<S>);

impl<S: Storage + 'static> SQLiteVfs<IoMethods<S>> for Vfs<S> {
    type Os = Os;

    fn os(_data: &AppData<S>) -> &Os {
        &OS
    }

    /// The volume's name limit (see `store.rs` for the part left to SQLite's suffixes).
    const MAX_PATH_SIZE: c_int = 1024;
}

impl<S: Storage + 'static> SQLiteIoMethods for IoMethods<S> {
    type Store = Store<S>;

    unsafe extern "C" fn xFileControl(
        p_file: *mut sqlite3_file,
        op: c_int,
        p_arg: *mut c_void,
    ) -> c_int {
        // Safety: SQLite calls xFileControl only on a file that this VFS's default xOpen
        // initialised as an `SQLiteVfsFile` (the method table is installed by that xOpen), and
        // it serialises calls on one file, so this exclusive borrow is the only one.
        let vfs_file = unsafe { &mut *SQLiteVfsFile::from_file(p_file) };
        // Safety: `register` below gave this VFS app data of type `AppData<S>`; it is never
        // freed (the registration is made permanent), so it outlives the call.
        let app = unsafe { VfsAppData::<AppData<S>>::get(vfs_file.vfs()) };
        // Safety: xOpen stored a boxed `File<S>` (the `VfsStore::File` of `Store<S>`) in the
        // handle; it lives until xClose and nothing else borrows it during this call.
        let file = unsafe { vfs_file.handle_mut::<File<S>>() };
        let result: VfsResult<c_int> = match op {
            SQLITE_FCNTL_BEGIN_ATOMIC_WRITE => file.begin_atomic_write().map(|()| SQLITE_OK),
            SQLITE_FCNTL_COMMIT_ATOMIC_WRITE => file.commit_atomic_write().map(|()| SQLITE_OK),
            SQLITE_FCNTL_ROLLBACK_ATOMIC_WRITE => file.rollback_atomic_write().map(|()| SQLITE_OK),
            SQLITE_FCNTL_COMMIT_PHASETWO => file.commit_phase_two().map(|()| SQLITE_OK),
            SQLITE_FCNTL_SIZE_HINT if !p_arg.is_null() => {
                // Safety: for SQLITE_FCNTL_SIZE_HINT, SQLite passes a pointer to an
                // `sqlite3_int64` (checked non-null above).
                let hint = unsafe { *p_arg.cast::<i64>() };
                match u64::try_from(hint) {
                    Ok(size) => {
                        file.size_hint(size)
                            .map(|handled| if handled { SQLITE_OK } else { SQLITE_NOTFOUND })
                    }
                    Err(_) => Ok(SQLITE_NOTFOUND),
                }
            }
            SQLITE_FCNTL_PRAGMA if !p_arg.is_null() => {
                // Safety: for SQLITE_FCNTL_PRAGMA, SQLite passes its `char *azArg[4]` (checked
                // non-null above), valid for the call.
                unsafe { pragma(file, p_arg.cast::<*mut c_char>()) }
            }
            _ => Ok(SQLITE_NOTFOUND),
        };
        match result {
            Ok(code) => code,
            Err(e) => {
                let code = e.raw_code();
                Store::<S>::record_error(app, e);
                code
            }
        }
    }
}

/// `SQLITE_FCNTL_PRAGMA`: `args[1]` is the pragma name, `args[2]` its value or null. To answer
/// the pragma ourselves we return `SQLITE_OK` with an optional `sqlite3_malloc`ed result in
/// `args[0]` (SQLite returns it as the result row and frees it); to refuse it, `SQLITE_ERROR`
/// with the message in `args[0]`; to let SQLite run it, `SQLITE_NOTFOUND`.
///
/// # Safety
/// `args` must point to SQLite's four-element argument array for this file control, whose
/// strings are NUL-terminated and live for the call.
unsafe fn pragma<S: Storage + 'static>(
    file: &mut File<S>,
    args: *mut *mut c_char,
) -> VfsResult<c_int> {
    // Safety: `args` has four elements (the caller's contract); 1 and 2 are in bounds.
    let (name, value) = unsafe { (*args.add(1), *args.add(2)) };
    if name.is_null() {
        return Ok(SQLITE_NOTFOUND);
    }
    // Safety: non-null pragma name and value are NUL-terminated strings owned by SQLite.
    let name = unsafe { CStr::from_ptr(name) }.to_str().unwrap_or("");
    // Safety: as above.
    let value = (!value.is_null()).then(|| unsafe { CStr::from_ptr(value) }.to_str().unwrap_or(""));
    match file.pragma(name, value)? {
        PragmaOutcome::NotHandled => Ok(SQLITE_NOTFOUND),
        PragmaOutcome::Handled(result) => {
            if let Some(text) = result {
                // Safety: `args[0]` is ours to set (contract above).
                unsafe { set_arg0(args, &text) };
            }
            Ok(SQLITE_OK)
        }
        PragmaOutcome::Refused(message) => {
            // Safety: as above.
            unsafe { set_arg0(args, &message) };
            // Recorded for xGetLastError; its code is SQLITE_ERROR.
            Err(VfsError::new(VfsErrorCode::Error, message.into()))
        }
    }
}

/// Stores an `sqlite3_malloc`ed copy of `text` in `args[0]` (left null if allocation fails).
///
/// # Safety
/// `args` must be SQLite's `SQLITE_FCNTL_PRAGMA` argument array, valid for the call.
unsafe fn set_arg0(args: *mut *mut c_char, text: &str) {
    let len = text.len();
    let size = c_int::try_from(len + 1).unwrap_or(c_int::MAX);
    // Safety: plain allocation from SQLite's allocator; SQLite frees `args[0]` with
    // sqlite3_free after using it.
    let out = unsafe { rusqlite::ffi::sqlite3_malloc(size) }.cast::<u8>();
    if !out.is_null() {
        // Safety: `out` has `len + 1` bytes (checked non-null); the source is `len` bytes of a
        // live str; `args[0]` is ours to set (the caller's contract).
        unsafe {
            out.copy_from_nonoverlapping(text.as_ptr(), len);
            out.add(len).write(0);
            *args = out.cast::<c_char>();
        }
    }
}

/// Registers the VFS and makes its allocations permanent; returns SQLite's pointer to it.
pub(crate) fn register<S: Storage + 'static>(
    name: &str,
    app: AppData<S>,
    make_default: bool,
) -> Result<*mut sqlite3_vfs, RegisterVfsError> {
    // Safety: `Vfs<S>` and `IoMethods<S>` keep rsqlite-vfs's own VFS constructor and method
    // table, so versions, file layout (`SQLiteVfsFile`) and app-data type (`AppData<S>`) agree;
    // our one override (xFileControl) uses that same layout and type. SQLite serialises the
    // registration itself; callers register distinct names. `into_raw` keeps every allocation
    // for the process lifetime, so no callback can outlive them.
    let registration =
        unsafe { rsqlite_vfs::register_vfs::<IoMethods<S>, Vfs<S>>(name, app, make_default) }?;
    Ok(registration.into_raw())
}

/// Unlinks a VFS registered by [`register`] from SQLite's list (its memory stays allocated).
pub(crate) fn unregister(vfs: *mut sqlite3_vfs) -> Result<(), c_int> {
    // Safety: `vfs` came from `register` and is never freed; sqlite3_vfs_unregister only
    // unlinks it, under SQLite's own mutex. The caller checked that none of its files is open.
    let rc = unsafe { rsqlite_vfs::ffi::sqlite3_vfs_unregister(vfs) };
    if rc == SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}
