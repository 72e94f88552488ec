//! The browser backend: each physical file is one OPFS `FileSystemSyncAccessHandle`.
//!
//! # Environment
//! - A **dedicated worker** in a secure context. Sync access handles exist nowhere else (not on
//!   the main thread, not in shared or service workers); [`OpfsStorage::open`] checks this first
//!   and returns a clear [`StorageError`] instead of failing later.
//! - OPFS must be available: `navigator.storage.getDirectory()` must exist and resolve. Private
//!   browsing modes may reject it; that becomes [`StorageError::Platform`] with the browser's
//!   error name and message.
//! - One owner per directory: a sync access handle is exclusive, so a second
//!   [`OpfsStorage::open`] of the same directory (another tab, another worker, or this worker
//!   while the first storage is alive) gets [`StorageError::Busy`]. The exception is
//!   [`HandleMode::Concurrent`] where the browser offers `readwrite-unsafe` (Chromium): several
//!   contexts keep handles open at once, and the caller serialises them (a Web Lock); an
//!   exclusive open is still refused while any of them is open.
//!
//! # Layout
//! The volume lives in one OPFS directory (a name, or a `/`-separated path, created if absent)
//! holding the files of [`PhysicalFileId::ALL`] (`volume.data`, `volume.log`). Every handle is
//! opened once here and closed when the [`OpfsStorage`] is dropped: no OPFS file is created,
//! opened, closed or removed while the volume is mounted (each of those costs milliseconds,
//! tens of milliseconds in Firefox; see the project's OPFS notes).
//!
//! # Browser quirks handled here
//! - Offsets and lengths cross into JavaScript as `f64`: every value is checked against 2^53
//!   first ([`StorageError::OutOfRange`]), never rounded.
//! - `write()` returns a byte count. At the quota limit it can be short, and Chrome has been seen
//!   returning a huge bogus count: anything but exactly `data.len()` is
//!   [`StorageError::ShortWrite`].
//! - Browser exceptions keep their JavaScript `name` and `message`. `QuotaExceededError` becomes
//!   [`StorageError::QuotaExceeded`]; `NoModificationAllowedError` from
//!   `createSyncAccessHandle()` becomes [`StorageError::Busy`].
//! - `getSize()` and `truncate()` are full calls (about 0.1–0.3 ms each in Firefox): the volume
//!   only calls [`PhysicalFile::len`] at mount, so no size is cached here.
//!
//! # Flush ahead (Chromium)
//! `flush()` blocks the worker until the disk has the bytes: milliseconds per MiB. Where the
//! handles are concurrent ([`HandleMode::Concurrent`] in a browser that offers it), the storage
//! starts a helper: a nested dedicated worker, from a Blob URL, with its own `readwrite-unsafe`
//! handles on the two files. [`PhysicalFile::flush_ahead`] posts it a message and returns; the
//! helper calls `flush()` on its handle while this worker goes on. Both handles are the same
//! file underneath, so the helper's flush makes this worker's writes durable, and the volume's
//! own `flush()` later finds little left to wait for. Measured (Chromium 156, this machine, one
//! run: 2 MiB written, 8.6 ms of CPU work, then `flush()`): the flush took 3.6 ms, 0.2 ms when
//! the helper had flushed during the work, which itself took 8.6 and 8.7 ms. The volume still
//! calls its own `flush()` wherever it needs a barrier: the helper is a hint, and ignores its
//! errors. Where no helper starts (exclusive handles, Firefox, a page whose Content Security
//! Policy forbids `blob:` workers) the hint does nothing. Chromium 156 does not refuse such a
//! worker in `new Worker`: it fires `error` at it ~14 ms later (a probe page served with
//! `worker-src 'self'`). The open takes that event as the answer and goes on without a helper,
//! rather than wait out [`HELPER_READY_TIMEOUT_MS`] and then a close request no one answers.
//!
//! The open waits until the helper holds its handles (at most [`HELPER_READY_TIMEOUT_MS`]): a
//! nested worker starts only when its parent's event loop runs, so a helper not waited for
//! never started while the benchmark's worker ran its 16 cases without yielding, and flushed
//! nothing (results/2026-12-07-flush-ahead). Waited for, a Balanced volume's inline flush after
//! a 4 MiB write-out and 120 ms of CPU work took 0.18–0.41 ms instead of 8.0–13.4 ms (browser
//! probe, Chromium 156, 12 of each); the install took 30–32 ms instead of 9–18 (0.18 s for the
//! page's first helper). [`OpfsStorage::open_flushing_ahead`] opens without a helper; `web`
//! starts one for Balanced volumes only. Dropping the storage asks the helper to close its
//! handles; [`OpfsStorage::open_with`] and [`OpfsStorage::remove_dir`] first wait for that (at
//! most [`HELPER_CLOSE_TIMEOUT_MS`], after which the helper is terminated), so a helper never
//! makes them fail with [`StorageError::Busy`].

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    Blob, BlobPropertyBag, DedicatedWorkerGlobalScope, DomException, FileSystemDirectoryHandle,
    FileSystemFileHandle, FileSystemGetDirectoryOptions, FileSystemGetFileOptions,
    FileSystemReadWriteOptions, FileSystemRemoveOptions, FileSystemSyncAccessHandle, Url, Worker,
    WorkerGlobalScope,
};

use super::{PhysicalFile, PhysicalFileId, Storage, StorageError, StorageResult};

/// Largest offset or length that survives the trip through a JavaScript number exactly.
const MAX_JS_SAFE: u64 = 1 << 53;

/// The message of the error returned outside a dedicated worker.
pub const NEED_DEDICATED_WORKER: &str = "OPFS sync access handles need a dedicated worker";

/// Checks that `offset + len` stays within 2^53 and returns `offset` as an exact `f64`.
fn js_offset(offset: u64, len: usize) -> StorageResult<f64> {
    let end = offset
        .checked_add(len as u64)
        .ok_or(StorageError::OutOfRange { value: offset })?;
    if end > MAX_JS_SAFE {
        return Err(StorageError::OutOfRange { value: end });
    }
    // Exact: offset <= 2^53.
    Ok(offset as f64)
}

/// A count returned by the browser as a JavaScript number, if it is a non-negative integer
/// within 2^53.
fn js_count(value: f64) -> Option<u64> {
    if value.is_finite() && value >= 0.0 && value.fract() == 0.0 && value <= MAX_JS_SAFE as f64 {
        // Exact: a non-negative integer <= 2^53.
        #[allow(clippy::cast_possible_truncation)]
        Some(value as u64)
    } else {
        None
    }
}

/// The JavaScript `name` and `message` of a thrown value (a `DOMException`, an `Error`, or
/// anything else).
fn js_name_message(err: &JsValue) -> (String, String) {
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

/// Maps a JavaScript exception from operation `op` to a [`StorageError`], keeping its cause.
fn js_error(op: &'static str, err: &JsValue) -> StorageError {
    let (name, message) = js_name_message(err);
    if name == "QuotaExceededError" {
        return StorageError::QuotaExceeded {
            message: format!("{op}: {name}: {message}"),
        };
    }
    StorageError::Platform { op, name, message }
}

/// Calls `target[method](...args)` where the method may be missing (older browsers, insecure
/// contexts): a missing method is reported as an `Unsupported` platform error, a synchronous
/// throw is caught, and the returned promise is awaited.
async fn call_async(
    op: &'static str,
    target: &JsValue,
    method: &str,
    args: &[&JsValue],
) -> StorageResult<JsValue> {
    start_call(op, target, method, args)?
        .await
        .map_err(|e| js_error(op, &e))
}

/// Calls `method` now and returns the future of its promise: several calls started before
/// any is awaited run concurrently in the browser.
fn start_call(
    op: &'static str,
    target: &JsValue,
    method: &str,
    args: &[&JsValue],
) -> StorageResult<JsFuture> {
    let missing = || StorageError::Platform {
        op,
        name: "Unsupported".to_owned(),
        message: format!("{method}() is not available here (is OPFS supported and enabled?)"),
    };
    if !target.is_object() {
        return Err(missing());
    }
    let f = Reflect::get(target, &JsValue::from_str(method)).map_err(|e| js_error(op, &e))?;
    let f: Function = f.dyn_into().map_err(|_| missing())?;
    let args: Array = args.iter().copied().collect();
    let ret = Reflect::apply(&f, target, &args).map_err(|e| js_error(op, &e))?;
    Ok(JsFuture::from(Promise::resolve(&ret)))
}

/// The OPFS root directory, after checking that this is a dedicated worker with OPFS.
async fn opfs_root() -> StorageResult<FileSystemDirectoryHandle> {
    let global = js_sys::global();
    if global.dyn_ref::<DedicatedWorkerGlobalScope>().is_none() {
        return Err(StorageError::Platform {
            op: "open",
            name: "NotADedicatedWorker".to_owned(),
            message: NEED_DEDICATED_WORKER.to_owned(),
        });
    }
    let unavailable = |what: &str| StorageError::Platform {
        op: "getDirectory",
        name: "Unsupported".to_owned(),
        message: format!(
            "OPFS is not available: {what} (needs a secure context and a browser with the \
             origin private file system; private browsing may disable it)"
        ),
    };
    let navigator = Reflect::get(&global, &JsValue::from_str("navigator"))
        .map_err(|e| js_error("getDirectory", &e))?;
    if !navigator.is_object() {
        return Err(unavailable("no navigator"));
    }
    let storage = Reflect::get(&navigator, &JsValue::from_str("storage"))
        .map_err(|e| js_error("getDirectory", &e))?;
    if !storage.is_object() {
        return Err(unavailable("no navigator.storage"));
    }
    let root = call_async("getDirectory", &storage, "getDirectory", &[]).await?;
    root.dyn_into::<FileSystemDirectoryHandle>()
        .map_err(|_| unavailable("getDirectory() did not return a directory handle"))
}

/// The components of a `/`-separated directory path; empty components are an error.
fn dir_components(dir: &str) -> StorageResult<Vec<&str>> {
    let parts: Vec<&str> = dir.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(StorageError::Platform {
            op: "getDirectoryHandle",
            name: "TypeError".to_owned(),
            message: format!("invalid OPFS directory name {dir:?}"),
        });
    }
    Ok(parts)
}

async fn sub_directory(
    parent: &FileSystemDirectoryHandle,
    name: &str,
    create: bool,
) -> StorageResult<FileSystemDirectoryHandle> {
    let opts = FileSystemGetDirectoryOptions::new();
    opts.set_create(create);
    let dir = call_async(
        "getDirectoryHandle",
        parent,
        "getDirectoryHandle",
        &[&JsValue::from_str(name), &opts],
    )
    .await?;
    dir.dyn_into().map_err(|v| StorageError::Platform {
        op: "getDirectoryHandle",
        name: "TypeError".to_owned(),
        message: format!("not a directory handle: {v:?}"),
    })
}

/// The origin's storage use as the browser estimates it (all storage APIs, not only this
/// volume; browsers round and pad these figures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OriginUsage {
    /// Bytes used by the origin, if reported.
    pub usage_bytes: Option<u64>,
    /// Bytes the origin may use, if reported.
    pub quota_bytes: Option<u64>,
}

/// How [`OpfsStorage`] opens its sync access handles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HandleMode {
    /// `createSyncAccessHandle()` (mode `readwrite`): the handles exclude every other handle on
    /// the files, so contexts that take turns close and reopen them at every turn
    /// ([`OpfsStorage::release`], [`OpfsStorage::reopen`]).
    #[default]
    Exclusive,
    /// `createSyncAccessHandle({ mode: "readwrite-unsafe" })` where the browser offers it
    /// (Chromium 121 on; Firefox ESR 153 ignores the option and returns an exclusive handle):
    /// several contexts hold handles on the files at once, and nothing but the caller keeps
    /// them from writing at once, so it must serialise them (the volume's Web Lock). A turn
    /// then closes and reopens nothing: [`OpfsStorage::release`] only stops this storage's
    /// calls. Chromium 156 here: another handle's writes and sizes are visible at once (one
    /// file underneath), and an exclusive open is refused while any such handle is open.
    /// [`OpfsStorage::is_concurrent`] says which one the browser gave.
    Concurrent,
}

/// The `mode` value of a concurrent sync access handle.
const CONCURRENT_MODE: &str = "readwrite-unsafe";

/// Owns one sync access handle and closes it when dropped.
#[derive(Debug)]
struct SyncHandle(FileSystemSyncAccessHandle);

impl Drop for SyncHandle {
    fn drop(&mut self) {
        // close() never throws (closing twice is a no-op); it releases the exclusive lock.
        self.0.close();
    }
}

/// One physical file: an OPFS file and, while held, its sync access handle.
#[derive(Debug)]
pub struct OpfsFile {
    id: PhysicalFileId,
    dir_name: String,
    file: FileSystemFileHandle,
    /// `None` while released to another tab or worker ([`OpfsStorage::release`]) with
    /// exclusive handles.
    handle: Option<SyncHandle>,
    /// Released to another tab or worker: every call fails, even with a handle kept open
    /// (concurrent handles).
    released: bool,
    /// The storage's flush-ahead helper, if it has one (module docs, "Flush ahead").
    ahead: Option<Rc<FlushAhead>>,
}

impl OpfsFile {
    async fn open(
        dir: &FileSystemDirectoryHandle,
        dir_name: &str,
        id: PhysicalFileId,
        mode: HandleMode,
    ) -> StorageResult<Self> {
        let opts = FileSystemGetFileOptions::new();
        opts.set_create(true);
        let file = call_async(
            "getFileHandle",
            dir,
            "getFileHandle",
            &[&JsValue::from_str(id.file_name()), &opts],
        )
        .await?;
        let file: FileSystemFileHandle = file.dyn_into().map_err(|v| StorageError::Platform {
            op: "getFileHandle",
            name: "TypeError".to_owned(),
            message: format!("not a file handle: {v:?}"),
        })?;
        let handle = Self::sync_handle(&file, dir_name, id, mode).await?;
        Ok(Self {
            id,
            dir_name: dir_name.to_owned(),
            file,
            handle: Some(handle),
            released: false,
            ahead: None,
        })
    }

    async fn sync_handle(
        file: &FileSystemFileHandle,
        dir_name: &str,
        id: PhysicalFileId,
        mode: HandleMode,
    ) -> StorageResult<SyncHandle> {
        let opened = Self::start_sync_handle(file, mode)?.await;
        Self::sync_handle_from(opened, dir_name, id)
    }

    /// Starts `createSyncAccessHandle()` on `file` (finish with [`OpfsFile::sync_handle_from`]).
    fn start_sync_handle(file: &FileSystemFileHandle, mode: HandleMode) -> StorageResult<JsFuture> {
        match mode {
            HandleMode::Exclusive => start_call("open", file, "createSyncAccessHandle", &[]),
            HandleMode::Concurrent => {
                // A plain object: web-sys's options dictionary for this is behind an unstable
                // flag, and a browser without modes ignores the unknown member.
                let opts = js_sys::Object::new();
                Reflect::set(
                    &opts,
                    &JsValue::from_str("mode"),
                    &JsValue::from_str(CONCURRENT_MODE),
                )
                .map_err(|e| js_error("open", &e))?;
                start_call("open", file, "createSyncAccessHandle", &[&opts])
            }
        }
    }

    /// The outcome of a started `createSyncAccessHandle()`, as a handle or a typed error.
    fn sync_handle_from(
        opened: Result<JsValue, JsValue>,
        dir_name: &str,
        id: PhysicalFileId,
    ) -> StorageResult<SyncHandle> {
        let handle = match opened.map_err(|e| js_error("open", &e)) {
            Ok(h) => h,
            Err(StorageError::Platform { name, message, .. })
                if name == "NoModificationAllowedError" =>
            {
                // The spec's (and both engines') error for a file whose lock is held.
                return Err(StorageError::Busy {
                    message: format!(
                        "the volume in OPFS directory {dir_name:?} is open in another tab or \
                         worker (createSyncAccessHandle on {id}: {name}: {message})"
                    ),
                });
            }
            Err(e) => return Err(e),
        };
        let handle: FileSystemSyncAccessHandle =
            handle.dyn_into().map_err(|v| StorageError::Platform {
                op: "open",
                name: "TypeError".to_owned(),
                message: format!("not a sync access handle: {v:?}"),
            })?;
        Ok(SyncHandle(handle))
    }

    /// Whether the browser gave a concurrent handle (`mode` is `readwrite-unsafe`; browsers
    /// without modes have no `mode` attribute).
    fn is_concurrent(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| {
            Reflect::get(&h.0, &JsValue::from_str("mode"))
                .ok()
                .and_then(|m| m.as_string())
                .is_some_and(|m| m == CONCURRENT_MODE)
        })
    }

    fn handle(&self) -> StorageResult<&FileSystemSyncAccessHandle> {
        self.handle
            .as_ref()
            .filter(|_| !self.released)
            .map(|h| &h.0)
            .ok_or_else(|| StorageError::Busy {
                message: format!(
                    "the volume in OPFS directory {:?} is released to another tab or worker",
                    self.dir_name
                ),
            })
    }

    /// Which physical file this is.
    pub fn id(&self) -> PhysicalFileId {
        self.id
    }
}

fn at(offset: f64) -> FileSystemReadWriteOptions {
    let opts = FileSystemReadWriteOptions::new();
    opts.set_at(offset);
    opts
}

impl PhysicalFile for OpfsFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        js_offset(offset, buf.len())?;
        let mut done = 0usize;
        // One call in practice; the loop only guards against a browser returning a partial
        // read before end of file (it then costs one more call, which returns 0 at the end).
        while done < buf.len() {
            let pos = js_offset(offset + done as u64, buf.len() - done)?;
            let n = self
                .handle()?
                .read_with_u8_array_and_options(&mut buf[done..], &at(pos))
                .map_err(|e| js_error("read", &e))?;
            let n = match js_count(n).and_then(|n| usize::try_from(n).ok()) {
                Some(n) if n <= buf.len() - done => n,
                _ => {
                    return Err(StorageError::Platform {
                        op: "read",
                        name: "RangeError".to_owned(),
                        message: format!(
                            "read() returned {n} for a {}-byte buffer at offset {}",
                            buf.len() - done,
                            offset + done as u64
                        ),
                    })
                }
            };
            if n == 0 {
                break;
            }
            done += n;
        }
        Ok(done)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        let pos = js_offset(offset, data.len())?;
        let n = self
            .handle()?
            .write_with_u8_array_and_options(data, &at(pos))
            .map_err(|e| js_error("write", &e))?;
        let requested = data.len() as u64;
        match js_count(n) {
            Some(written) if written == requested => Ok(()),
            // Short (quota) or bogus (negative, fractional, NaN, larger than asked).
            _ => Err(StorageError::ShortWrite {
                offset,
                requested,
                // As reported (saturating; NaN and negatives as 0), even if larger than asked.
                #[allow(clippy::cast_possible_truncation)]
                written: n as u64,
            }),
        }
    }

    fn len(&mut self) -> StorageResult<u64> {
        let size = self
            .handle()?
            .get_size()
            .map_err(|e| js_error("getSize", &e))?;
        js_count(size).ok_or_else(|| StorageError::Platform {
            op: "getSize",
            name: "RangeError".to_owned(),
            message: format!("getSize() returned {size}"),
        })
    }

    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        let len = js_offset(len, 0)?;
        self.handle()?
            .truncate_with_f64(len)
            .map_err(|e| js_error("truncate", &e))
    }

    fn flush(&mut self) -> StorageResult<()> {
        self.handle()?.flush().map_err(|e| js_error("flush", &e))
    }

    fn flush_ahead(&mut self) {
        if let (Some(ahead), false) = (&self.ahead, self.released) {
            ahead.flush(self.id);
        }
    }
}

/// The flush-ahead helper's script (module docs, "Flush ahead"). Messages: `{open: [data, log]}`
/// (file handles, in [`PhysicalFileId::index`] order; it answers `{ready: n}`, n the handles it
/// holds), `{flush: index}`, `{close: true}` (it closes its handles, answers `{closed: true}`
/// and ends). A flush asked for while one runs is
/// made once after it. It keeps a handle only if the browser made it concurrent, so that it can
/// never lock the volume's owner out. Every error is ignored: the volume's own `flush()` is the
/// barrier, and reports them.
const FLUSH_AHEAD_JS: &str = r#""use strict";
let handles = [];
let opened = Promise.resolve();
const due = new Set();
let scheduled = false;
function run() {
  scheduled = false;
  for (const i of due) {
    due.delete(i);
    const h = handles[i];
    if (h) { try { h.flush(); } catch (_) {} }
  }
}
onmessage = (e) => {
  const m = e.data;
  if (m.open) {
    opened = Promise.all(m.open.map((f) => f.createSyncAccessHandle({ mode: "readwrite-unsafe" })
      .then((h) => (h.mode === "readwrite-unsafe" ? h : (h.close(), null)), () => null)))
      .then((hs) => { handles = hs; postMessage({ ready: hs.filter((h) => h).length }); });
  } else if (m.close) {
    const done = () => {
      for (const h of handles) { if (h) { try { h.close(); } catch (_) {} } }
      handles = [];
      postMessage({ closed: true });
      close();
    };
    opened.then(done, done);
  } else if (typeof m.flush === "number") {
    due.add(m.flush);
    if (!scheduled) { scheduled = true; opened.then(() => setTimeout(run, 0)); }
  }
};
"#;

/// How long a dropped storage's helper may take to close its handles before it is terminated.
pub const HELPER_CLOSE_TIMEOUT_MS: i32 = 2_000;

/// How long [`OpfsStorage::open_with`] waits for a new helper to hold its handles before it
/// goes on without one.
pub const HELPER_READY_TIMEOUT_MS: i32 = 1_000;

thread_local! {
    /// Helpers asked to close, whose handles may still be open: each promise resolves when its
    /// helper has closed them, or after [`HELPER_CLOSE_TIMEOUT_MS`].
    static CLOSING: RefCell<Vec<Promise>> = const { RefCell::new(Vec::new()) };
}

/// Waits until every dropped storage's helper has closed its handles (or was terminated).
async fn helpers_closed() {
    let closing = CLOSING.with(|c| std::mem::take(&mut *c.borrow_mut()));
    for p in closing {
        // The promise only resolves.
        let _ = JsFuture::from(p).await;
    }
}

/// A message object `{key: value}`.
fn message(key: &str, value: &JsValue) -> Option<js_sys::Object> {
    let m = js_sys::Object::new();
    Reflect::set(&m, &JsValue::from_str(key), value).ok()?;
    Some(m)
}

/// A running flush-ahead helper (module docs, "Flush ahead"), shared by the storage's two
/// files. Dropping it asks the helper to close its handles.
#[derive(Debug)]
struct FlushAhead {
    worker: Worker,
    url: String,
    /// The script failed before it answered (an `error` event): dropping terminates it at once,
    /// with no close request.
    failed: bool,
}

/// Why [`FlushAhead::start_script`] left the volume without a helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoHelper {
    /// No `Worker` or Blob URL here, or the helper could not be sent its message.
    Refused,
    /// The helper's script failed to load or threw (an `error` event).
    Failed,
    /// The helper answered, holding fewer than both handles.
    NoHandles,
    /// No answer within [`HELPER_READY_TIMEOUT_MS`].
    NotReady,
}

impl FlushAhead {
    /// Starts a helper on `files` (in [`PhysicalFileId::index`] order) and waits until it holds
    /// a handle on each, or `None` where the browser refuses (module docs, "Flush ahead").
    ///
    /// Why wait: a nested worker starts only when its parent's event loop runs, and a volume's
    /// worker may run SQL for seconds without yielding. Not waited for, the helper of a page
    /// that mounted and then ran the benchmark's 16 cases never started, and flushed nothing
    /// (results/2026-12-07-flush-ahead).
    async fn start(files: [&FileSystemFileHandle; 2]) -> Option<Self> {
        Self::start_script(FLUSH_AHEAD_JS, files).await.ok()
    }

    /// [`FlushAhead::start`] with the helper's script given (the tests give failing ones).
    async fn start_script(
        script: &str,
        files: [&FileSystemFileHandle; 2],
    ) -> Result<Self, NoHelper> {
        let parts = Array::of1(&JsValue::from_str(script));
        let opts = BlobPropertyBag::new();
        opts.set_type("text/javascript");
        let blob = Blob::new_with_str_sequence_and_options(&parts, &opts)
            .map_err(|_| NoHelper::Refused)?;
        let url = Url::create_object_url_with_blob(&blob).map_err(|_| NoHelper::Refused)?;
        let Ok(worker) = Worker::new(&url) else {
            let _ = Url::revoke_object_url(&url);
            return Err(NoHelper::Refused);
        };
        // From here on, dropping `ahead` closes the helper.
        let mut ahead = Self {
            worker,
            url,
            failed: false,
        };
        let global = js_sys::global()
            .dyn_into::<WorkerGlobalScope>()
            .map_err(|_| NoHelper::Refused)?;
        // Resolves with the helper's first message or error event, or with `undefined` at the
        // timeout. (A `once_into_js` callback never called keeps its few bytes until the page
        // unloads.)
        let first = Promise::new(&mut |resolve, _reject| {
            let answer = Closure::once_into_js({
                let resolve = resolve.clone();
                move |e: JsValue| {
                    let _ = resolve.call1(&JsValue::UNDEFINED, &e);
                }
            });
            ahead.worker.set_onmessage(Some(answer.unchecked_ref()));
            ahead.worker.set_onerror(Some(answer.unchecked_ref()));
            let _ = global.set_timeout_with_callback_and_timeout_and_arguments_0(
                &resolve,
                HELPER_READY_TIMEOUT_MS,
            );
        });
        let open = message("open", &Array::of2(files[0], files[1])).ok_or(NoHelper::Refused)?;
        ahead
            .worker
            .post_message(&open)
            .map_err(|_| NoHelper::Refused)?;
        let answer = JsFuture::from(first).await.unwrap_or(JsValue::UNDEFINED);
        ahead.worker.set_onmessage(None);
        ahead.worker.set_onerror(None);
        let field = |v: &JsValue, k: &str| Reflect::get(v, &JsValue::from_str(k)).ok();
        match field(&answer, "type")
            .and_then(|t| t.as_string())
            .as_deref()
        {
            Some("message") => {
                let held = field(&answer, "data")
                    .and_then(|d| field(&d, "ready"))
                    .and_then(|n| n.as_f64());
                // Fewer than two: the helper closes what it holds as it is dropped.
                if held == Some(2.0) {
                    Ok(ahead)
                } else {
                    Err(NoHelper::NoHandles)
                }
            }
            // The script did not run (Chromium 156 with a Content Security Policy whose
            // `worker-src` leaves out `blob:` fires `error` ~14 ms after `new Worker`, which
            // does not throw) or threw before it answered: it opened nothing, and a close
            // request would wait out HELPER_CLOSE_TIMEOUT_MS for an answer that never comes.
            Some("error") => {
                ahead.failed = true;
                Err(NoHelper::Failed)
            }
            // Not ready in time: it may still open its handles, so it is asked to close them.
            _ => Err(NoHelper::NotReady),
        }
    }

    /// Asks the helper to flush file `id` (a message; nothing waits for it).
    fn flush(&self, id: PhysicalFileId) {
        // A file index is 0 or 1.
        #[allow(clippy::cast_possible_truncation)]
        if let Some(m) = message("flush", &JsValue::from(id.index() as u32)) {
            let _ = self.worker.post_message(&m);
        }
    }
}

impl Drop for FlushAhead {
    fn drop(&mut self) {
        if self.failed {
            self.worker.terminate();
            let _ = Url::revoke_object_url(&self.url);
            return;
        }
        let worker = self.worker.clone();
        let closed = Promise::new(&mut |resolve, _reject| {
            // Either the helper's answer or the timeout, whichever comes first: the helper
            // is terminated (its handles close with it), and the promise resolves. The other
            // callback then finds it resolved. (A `once_into_js` callback never called — the
            // answer after a timeout — keeps its few bytes until the page unloads.)
            let end = |w: Worker, r: Function| {
                move |_: JsValue| {
                    w.terminate();
                    let _ = r.call0(&JsValue::UNDEFINED);
                }
            };
            let answer = Closure::once_into_js(end(worker.clone(), resolve.clone()));
            worker.set_onmessage(Some(answer.unchecked_ref()));
            let timeout = Closure::once_into_js(end(worker.clone(), resolve.clone()));
            let scheduled = js_sys::global()
                .dyn_into::<WorkerGlobalScope>()
                .ok()
                .and_then(|g| {
                    g.set_timeout_with_callback_and_timeout_and_arguments_0(
                        timeout.unchecked_ref(),
                        HELPER_CLOSE_TIMEOUT_MS,
                    )
                    .ok()
                });
            if scheduled.is_none() {
                // No timer here (not a worker): end it now rather than wait forever.
                worker.terminate();
                let _ = resolve.call0(&JsValue::UNDEFINED);
            }
        });
        match message("close", &JsValue::TRUE) {
            Some(m) if self.worker.post_message(&m).is_ok() => {
                CLOSING.with(|c| c.borrow_mut().push(closed));
            }
            // Cannot ask: terminate it (its handles close as it ends).
            _ => self.worker.terminate(),
        }
        let _ = Url::revoke_object_url(&self.url);
    }
}

/// Sync access handles opened by [`OpfsStorage::reopen`]; dropping them closes them.
#[derive(Debug)]
pub struct ReopenedHandles(Vec<SyncHandle>);

/// The physical files of a volume in one OPFS directory. Dropping it closes every handle.
#[derive(Debug)]
pub struct OpfsStorage {
    dir: String,
    files: [OpfsFile; 2],
    /// Both handles are concurrent ([`HandleMode::Concurrent`] in a browser that offers it):
    /// [`OpfsStorage::release`] keeps them open.
    concurrent: bool,
    mode: HandleMode,
}

impl OpfsStorage {
    /// Opens (creating if needed) the directory `dir_name` (a name or a `/`-separated path
    /// under the OPFS root) and a sync access handle on each physical file.
    ///
    /// Errors: outside a dedicated worker, or without OPFS, a [`StorageError::Platform`] saying
    /// so; [`StorageError::Busy`] if another tab or worker (or another live `OpfsStorage`)
    /// holds the directory. Handles opened before a failure are closed again.
    pub async fn open(dir_name: &str) -> StorageResult<Self> {
        Self::open_with(dir_name, HandleMode::Exclusive).await
    }

    /// [`OpfsStorage::open`] with the handles opened in `mode`. With
    /// [`HandleMode::Concurrent`], another context's concurrent storage on the same directory
    /// does not make this fail (an exclusive one does), so the caller must serialise them.
    pub async fn open_with(dir_name: &str, mode: HandleMode) -> StorageResult<Self> {
        Self::open_flushing_ahead(dir_name, mode, true).await
    }

    /// [`OpfsStorage::open_with`]; with `flush_ahead` false no helper starts (module docs,
    /// "Flush ahead"), where `open_with` starts one wherever the handles are concurrent.
    pub async fn open_flushing_ahead(
        dir_name: &str,
        mode: HandleMode,
        flush_ahead: bool,
    ) -> StorageResult<Self> {
        let parts = dir_components(dir_name)?;
        // A storage dropped just before may have a helper whose handles are still open: an
        // exclusive open would be refused while they are.
        helpers_closed().await;
        let mut dir = opfs_root().await?;
        for part in parts {
            dir = sub_directory(&dir, part, true).await?;
        }
        let data = OpfsFile::open(&dir, dir_name, PhysicalFileId::Data, mode).await?;
        let log = OpfsFile::open(&dir, dir_name, PhysicalFileId::Log, mode).await?;
        // Both or neither: one browser gives the same answer for both files.
        let concurrent = data.is_concurrent() && log.is_concurrent();
        let mut files = [data, log];
        if concurrent && flush_ahead {
            if let Some(ahead) = FlushAhead::start([&files[0].file, &files[1].file]).await {
                let ahead = Rc::new(ahead);
                for f in &mut files {
                    f.ahead = Some(Rc::clone(&ahead));
                }
            }
        }
        Ok(Self {
            dir: dir_name.to_owned(),
            files,
            concurrent,
            mode,
        })
    }

    /// Whether a helper flushes ahead for this storage (module docs, "Flush ahead"): where the
    /// handles are concurrent and the browser let the helper start.
    pub fn flushes_ahead(&self) -> bool {
        self.files.iter().all(|f| f.ahead.is_some())
    }

    /// Whether the handles are concurrent (asked for with [`HandleMode::Concurrent`], and the
    /// browser offers it), so that [`OpfsStorage::release`] keeps them open.
    pub fn is_concurrent(&self) -> bool {
        self.concurrent
    }

    /// Removes the directory `dir_name` and everything in it. Succeeds if it does not exist.
    /// Fails (typically [`StorageError::Busy`]) while an [`OpfsStorage`] on it is open.
    pub async fn remove_dir(dir_name: &str) -> StorageResult<()> {
        let parts = dir_components(dir_name)?;
        // A dropped storage's helper may still hold handles on the files.
        helpers_closed().await;
        let Some((last, parents)) = parts.split_last() else {
            return Ok(()); // unreachable: split yields at least one part
        };
        let mut dir = opfs_root().await?;
        for part in parents {
            match sub_directory(&dir, part, false).await {
                Ok(d) => dir = d,
                Err(StorageError::Platform { name, .. }) if name == "NotFoundError" => {
                    return Ok(())
                }
                Err(e) => return Err(e),
            }
        }
        let opts = FileSystemRemoveOptions::new();
        opts.set_recursive(true);
        match call_async(
            "removeEntry",
            &dir,
            "removeEntry",
            &[&JsValue::from_str(last), &opts],
        )
        .await
        {
            Ok(_) => Ok(()),
            Err(StorageError::Platform { name, .. }) if name == "NotFoundError" => Ok(()),
            Err(StorageError::Platform { name, message, .. })
                if name == "NoModificationAllowedError" || name == "InvalidModificationError" =>
            {
                Err(StorageError::Busy {
                    message: format!(
                        "cannot remove OPFS directory {dir_name:?}: a file in it is open \
                         (here, or in another tab or worker) ({name}: {message})"
                    ),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// What the browser says this origin uses and may use (`navigator.storage.estimate()`).
    /// Needs a worker or window with `navigator.storage`.
    pub async fn estimate() -> StorageResult<OriginUsage> {
        let global = js_sys::global();
        let navigator = Reflect::get(&global, &JsValue::from_str("navigator"))
            .map_err(|e| js_error("estimate", &e))?;
        let storage = if navigator.is_object() {
            Reflect::get(&navigator, &JsValue::from_str("storage"))
                .map_err(|e| js_error("estimate", &e))?
        } else {
            JsValue::UNDEFINED
        };
        let estimate = call_async("estimate", &storage, "estimate", &[]).await?;
        let field = |key: &str| {
            Reflect::get(&estimate, &JsValue::from_str(key))
                .ok()
                .and_then(|v| v.as_f64())
                .and_then(js_count)
        };
        Ok(OriginUsage {
            usage_bytes: field("usage"),
            quota_bytes: field("quota"),
        })
    }

    /// The directory name this storage was opened with.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// Hands the files to another tab or worker: every call fails with [`StorageError::Busy`]
    /// until [`OpfsStorage::reopen`] and [`OpfsStorage::install`]. Exclusive handles are closed
    /// (another context may then open them; closing costs ~0.7 ms per handle in Chromium, ~5–11
    /// ms in Firefox); concurrent ones stay open (nothing to pay here or at the reopen).
    pub fn release(&mut self) {
        for f in &mut self.files {
            f.released = true;
            if !self.concurrent {
                f.handle = None;
            }
        }
    }

    /// Whether the handles are released.
    pub fn is_released(&self) -> bool {
        // A handle is `None` only while released (exclusive handles).
        self.files.iter().any(|f| f.released)
    }

    /// Opens new sync access handles on this storage's files after [`OpfsStorage::release`]
    /// (the file handles from the first open are reused: no directory walk). The future owns
    /// what it needs, so no borrow of the storage is held while it runs; put the result in with
    /// [`OpfsStorage::install`]. Fails with [`StorageError::Busy`] while another context holds
    /// the files; a half-open result closes what it opened.
    /// Concurrent handles are still open: the result is ready at once and opens nothing.
    pub fn reopen(&self) -> impl std::future::Future<Output = StorageResult<ReopenedHandles>> {
        // Concurrent handles are closed only with the storage: `release` keeps them.
        let kept = self.concurrent;
        let mode = self.mode;
        let files: Vec<(FileSystemFileHandle, String, PhysicalFileId)> = if kept {
            Vec::new()
        } else {
            self.files
                .iter()
                .map(|f| (f.file.clone(), f.dir_name.clone(), f.id))
                .collect()
        };
        async move {
            if kept {
                return Ok(ReopenedHandles(Vec::new()));
            }
            // Both requests go out before either is awaited: each is a round trip to the
            // browser's file system backend, and the files are independent (Chromium 156 here:
            // the pair took 1.64 ms instead of 1.89 ms one after the other).
            let started: Vec<_> = files
                .iter()
                .map(|(file, _, _)| OpfsFile::start_sync_handle(file, mode))
                .collect();
            let mut handles = Vec::with_capacity(files.len());
            let mut failed = None;
            // Every started request is awaited, even after a failure, so that a handle it
            // opens is owned here and closed when dropped (an orphaned handle would keep the
            // file locked until garbage collection).
            for (start, (_, dir, id)) in started.into_iter().zip(&files) {
                let opened = match start {
                    Ok(fut) => OpfsFile::sync_handle_from(fut.await, dir, *id),
                    Err(e) => Err(e),
                };
                match opened {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
            }
            match failed {
                // The handles opened drop here, which closes them.
                Some(e) => Err(e),
                None => Ok(ReopenedHandles(handles)),
            }
        }
    }

    /// Puts handles from [`OpfsStorage::reopen`] back into service (kept concurrent handles:
    /// the same ones).
    pub fn install(&mut self, handles: ReopenedHandles) {
        let mut handles = handles.0.into_iter();
        for f in &mut self.files {
            if let Some(h) = handles.next() {
                f.handle = Some(h);
            }
            f.released = false;
        }
    }
}

impl Storage for OpfsStorage {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        &mut self.files[id.index()]
    }
}

/// Browser tests of what the public API cannot reach (`wasm-pack test`; the rest of the OPFS
/// tests are in `tests/browser_storage.rs`).
#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

    wasm_bindgen_test_configure!(run_in_dedicated_worker);

    fn closing() -> usize {
        CLOSING.with(|c| c.borrow().len())
    }

    /// A helper whose script fails before it answers (as under a Content Security Policy that
    /// forbids `blob:` workers, where Chromium fires `error` and `new Worker` does not throw)
    /// is given up at its error event, not after [`HELPER_READY_TIMEOUT_MS`], and leaves no
    /// close request for the next open to wait out. One that never answers is given up at the
    /// timeout and is asked to close, since it may still open its handles.
    #[wasm_bindgen_test]
    async fn a_helper_that_fails_is_given_up_at_its_error_and_a_silent_one_at_the_timeout() {
        let dir = format!("ahead-fails-{}", js_sys::Math::random().to_bits());
        let st = OpfsStorage::open_flushing_ahead(&dir, HandleMode::Concurrent, false)
            .await
            .unwrap();
        let files = [&st.files[0].file, &st.files[1].file];
        helpers_closed().await;

        let thrown = FlushAhead::start_script("throw new Error('no helper here');", files).await;
        assert_eq!(thrown.err(), Some(NoHelper::Failed));
        assert_eq!(
            closing(),
            0,
            "a failed helper is terminated, not asked to close"
        );

        let silent = FlushAhead::start_script("onmessage = () => {};", files).await;
        assert_eq!(silent.err(), Some(NoHelper::NotReady));
        assert_eq!(closing(), 1, "a helper not ready in time is asked to close");
        helpers_closed().await;
        assert_eq!(closing(), 0);

        drop(st);
        OpfsStorage::remove_dir(&dir).await.unwrap();
    }
}
