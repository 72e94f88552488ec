//! Browser plumbing shared by the OPFS baseline ([`crate::browser`]) and the raw workloads
//! ([`crate::raw`]): the worker check, OPFS directories and files, sync access handles owned by
//! a `Drop` type, JavaScript errors kept by name and message, and `performance.now()`.
//!
//! Environment: a dedicated worker in a secure context (sync access handles exist nowhere
//! else); [`worker`] checks this first and says so.

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    DedicatedWorkerGlobalScope, DomException, FileSystemDirectoryHandle, FileSystemFileHandle,
    FileSystemGetDirectoryOptions, FileSystemGetFileOptions, FileSystemReadWriteOptions,
    FileSystemRemoveOptions, FileSystemSyncAccessHandle, Performance, WorkerGlobalScope,
};

use crate::FsError;

/// Largest offset that survives the trip through a JavaScript number exactly.
const MAX_JS_SAFE: u64 = 1 << 53;

/// The JavaScript `name` and `message` of a thrown value.
fn name_message(err: &JsValue) -> (String, String) {
    if let Some(e) = err.dyn_ref::<DomException>() {
        return (e.name(), e.message());
    }
    let prop = |key: &str| {
        if err.is_object() {
            Reflect::get(err, &JsValue::from_str(key))
                .ok()
                .and_then(|v| v.as_string())
        } else {
            None
        }
    };
    match (prop("name"), prop("message")) {
        (Some(name), Some(message)) => (name, message),
        (name, _) => (
            name.unwrap_or_else(|| "Error".to_owned()),
            err.as_string().unwrap_or_else(|| format!("{err:?}")),
        ),
    }
}

/// A JavaScript exception from `op`, keeping its name and message.
pub(crate) fn js_error(op: &'static str, err: &JsValue) -> FsError {
    let (name, message) = name_message(err);
    FsError::Js { op, name, message }
}

/// Awaits a promise, mapping a rejection to [`FsError::Js`].
pub(crate) async fn settle(op: &'static str, promise: Promise) -> Result<JsValue, FsError> {
    JsFuture::from(promise).await.map_err(|e| js_error(op, &e))
}

/// The worker's global scope, after checking that this is a dedicated worker.
pub(crate) fn worker() -> Result<WorkerGlobalScope, FsError> {
    let global = js_sys::global();
    if global.dyn_ref::<DedicatedWorkerGlobalScope>().is_none() {
        return Err(FsError::Unsupported(
            "OPFS sync access handles need a dedicated worker".to_owned(),
        ));
    }
    Ok(global.unchecked_into())
}

/// The OPFS root directory.
pub(crate) async fn opfs_root() -> Result<FileSystemDirectoryHandle, FsError> {
    let storage = worker()?.navigator().storage();
    let root = settle("getDirectory", storage.get_directory()).await?;
    root.dyn_into()
        .map_err(|_| FsError::Unsupported("getDirectory() gave no directory handle".to_owned()))
}

/// The directory at `/`-separated `path` under the OPFS root, created if `create`.
pub(crate) async fn open_dir(
    path: &str,
    create: bool,
) -> Result<FileSystemDirectoryHandle, FsError> {
    let mut dir = opfs_root().await?;
    for part in path.split('/').filter(|p| !p.is_empty()) {
        let opts = FileSystemGetDirectoryOptions::new();
        opts.set_create(create);
        let sub = settle(
            "getDirectoryHandle",
            dir.get_directory_handle_with_options(part, &opts),
        )
        .await?;
        dir = sub.dyn_into().map_err(|_| FsError::Js {
            op: "getDirectoryHandle",
            name: "TypeError".to_owned(),
            message: format!("{part} is not a directory"),
        })?;
    }
    Ok(dir)
}

/// Removes the directory at `path` and everything in it; fine if it does not exist.
pub(crate) async fn remove_dir(path: &str) -> Result<(), FsError> {
    opfs_vfs::storage::OpfsStorage::remove_dir(path).await?;
    Ok(())
}

/// `getFileHandle(name, {create})`.
pub(crate) async fn file_handle(
    dir: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> Result<FileSystemFileHandle, FsError> {
    let opts = FileSystemGetFileOptions::new();
    opts.set_create(create);
    let file = settle(
        "getFileHandle",
        dir.get_file_handle_with_options(name, &opts),
    )
    .await?;
    file.dyn_into().map_err(|_| FsError::Js {
        op: "getFileHandle",
        name: "TypeError".to_owned(),
        message: format!("{name} is not a file"),
    })
}

/// `createSyncAccessHandle()`.
pub(crate) async fn sync_handle(file: &FileSystemFileHandle) -> Result<SyncHandle, FsError> {
    let h = settle("createSyncAccessHandle", file.create_sync_access_handle()).await?;
    let h: FileSystemSyncAccessHandle = h.dyn_into().map_err(|_| FsError::Js {
        op: "createSyncAccessHandle",
        name: "TypeError".to_owned(),
        message: "not a sync access handle".to_owned(),
    })?;
    Ok(SyncHandle(h))
}

/// `removeEntry(name)`.
pub(crate) async fn remove_entry(
    dir: &FileSystemDirectoryHandle,
    name: &str,
) -> Result<(), FsError> {
    let opts = FileSystemRemoveOptions::new();
    opts.set_recursive(false);
    settle("removeEntry", dir.remove_entry_with_options(name, &opts)).await?;
    Ok(())
}

/// Every entry name of `dir` (`keys()`, an async iterator), unsorted.
pub(crate) async fn entry_names(dir: &FileSystemDirectoryHandle) -> Result<Vec<String>, FsError> {
    let iter = dir.keys();
    let mut names = Vec::new();
    loop {
        let next = iter.next().map_err(|e| js_error("keys", &e))?;
        let step = settle("keys", next).await?;
        let done =
            Reflect::get(&step, &JsValue::from_str("done")).map_err(|e| js_error("keys", &e))?;
        if done.is_truthy() {
            return Ok(names);
        }
        let value =
            Reflect::get(&step, &JsValue::from_str("value")).map_err(|e| js_error("keys", &e))?;
        names.push(value.as_string().unwrap_or_default());
    }
}

/// Whether this browser has `FileSystemFileHandle.prototype.move`.
pub(crate) fn has_move(file: &FileSystemFileHandle) -> bool {
    Reflect::get(file, &JsValue::from_str("move"))
        .map(|f| f.is_function())
        .unwrap_or(false)
}

/// `file.move(new_name)` (not in web-sys: called by name).
pub(crate) async fn move_to(file: &FileSystemFileHandle, new_name: &str) -> Result<(), FsError> {
    let f: Function = Reflect::get(file, &JsValue::from_str("move"))
        .map_err(|e| js_error("move", &e))?
        .dyn_into()
        .map_err(|_| FsError::Unsupported("FileSystemFileHandle.move() is missing".to_owned()))?;
    let ret = f
        .call1(file, &JsValue::from_str(new_name))
        .map_err(|e| js_error("move", &e))?;
    settle("move", Promise::resolve(&ret)).await?;
    Ok(())
}

/// Read/write options with `at` set (offset checked against 2^53).
pub(crate) fn at(offset: u64) -> Result<FileSystemReadWriteOptions, FsError> {
    if offset > MAX_JS_SAFE {
        return Err(FsError::Unsupported(format!("offset {offset} above 2^53")));
    }
    let opts = FileSystemReadWriteOptions::new();
    // Exact: offset <= 2^53.
    #[allow(clippy::cast_precision_loss)]
    opts.set_at(offset as f64);
    Ok(opts)
}

/// An open sync access handle, closed when dropped.
#[derive(Debug)]
pub(crate) struct SyncHandle(pub(crate) FileSystemSyncAccessHandle);

impl Drop for SyncHandle {
    fn drop(&mut self) {
        // close() never throws (closing twice is a no-op); it releases the file's lock.
        self.0.close();
    }
}

impl SyncHandle {
    /// Writes all of `data` with prepared options; a short or bogus count is an error.
    pub(crate) fn write_with(
        &self,
        data: &[u8],
        opts: &FileSystemReadWriteOptions,
    ) -> Result<(), FsError> {
        let n = self
            .0
            .write_with_u8_array_and_options(data, opts)
            .map_err(|e| js_error("write", &e))?;
        check_count("write", n, data.len())
    }

    /// Writes all of `data` at `offset`.
    pub(crate) fn write_at(&self, data: &[u8], offset: u64) -> Result<(), FsError> {
        self.write_with(data, &at(offset)?)
    }

    /// Reads into `buf` at `offset`; returns the count.
    pub(crate) fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<usize, FsError> {
        let n = self
            .0
            .read_with_u8_array_and_options(buf, &at(offset)?)
            .map_err(|e| js_error("read", &e))?;
        count("read", n, buf.len())
    }

    /// `getSize()`.
    pub(crate) fn size(&self) -> Result<usize, FsError> {
        let n = self.0.get_size().map_err(|e| js_error("getSize", &e))?;
        count("getSize", n, usize::MAX)
    }

    /// `truncate(len)`: sets the file's length (grows it with zeros, or cuts it).
    pub(crate) fn truncate(&self, len: u64) -> Result<(), FsError> {
        // Lengths here are at most a few MiB: exact in an f64.
        #[allow(clippy::cast_precision_loss)]
        self.0
            .truncate_with_f64(len as f64)
            .map_err(|e| js_error("truncate", &e))
    }

    /// `flush()`.
    pub(crate) fn flush(&self) -> Result<(), FsError> {
        self.0.flush().map_err(|e| js_error("flush", &e))
    }
}

/// A count the browser returned, if it is an integer in `0..=max`.
fn count(op: &'static str, n: f64, max: usize) -> Result<usize, FsError> {
    if n.is_finite() && n >= 0.0 && n.fract() == 0.0 && n <= max as f64 {
        // Exact: a non-negative integer no larger than a usize we hold.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(n as usize)
    } else {
        Err(FsError::Js {
            op,
            name: "RangeError".to_owned(),
            message: format!("{op}() returned {n} (at most {max} expected)"),
        })
    }
}

/// A write's count must be exactly the length asked for.
fn check_count(op: &'static str, n: f64, len: usize) -> Result<(), FsError> {
    match count(op, n, len) {
        Ok(m) if m == len => Ok(()),
        _ => Err(FsError::Js {
            op,
            name: "ShortWrite".to_owned(),
            message: format!("{op}() stored {n} of {len} bytes"),
        }),
    }
}

/// `performance.now()` of the worker, in milliseconds.
#[derive(Debug, Clone)]
pub(crate) struct Clock(Performance);

impl Clock {
    /// The worker global's `performance` object.
    pub(crate) fn new() -> Result<Self, FsError> {
        let p = Reflect::get(&js_sys::global(), &JsValue::from_str("performance"))
            .map_err(|e| js_error("performance", &e))?;
        p.dyn_into::<Performance>()
            .map(Clock)
            .map_err(|_| FsError::Unsupported("no performance object in this global".to_owned()))
    }

    /// Milliseconds since the time origin.
    #[inline]
    pub(crate) fn now(&self) -> f64 {
        self.0.now()
    }
}
