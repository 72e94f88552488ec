//! # In the browser: [`install`] once in a dedicated worker
//!
//! [`install`] opens the volume's OPFS directory ([`OpfsStorage`]), mounts the [`Volume`]
//! (recovering the last commit) and registers the SQLite VFS over it. The returned [`Installed`]
//! handle lists, exports, imports and deletes files, reports usage, flushes and closes; its
//! [`Installed::with_volume`] gives the volume's filesystem API for files that are not SQLite
//! databases. rusqlite then works unchanged:
//!
//! ```no_run
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use opfs_vfs::sqlite::rusqlite::{Connection, OpenFlags};
//! use opfs_vfs::web::{install, InstallOptions};
//!
//! let mut installed = install(InstallOptions {
//!     directory: "my-app".into(),
//!     ..InstallOptions::default()
//! })
//! .await?;
//! let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
//! let conn = Connection::open_with_flags_and_vfs("app.db", flags, installed.vfs_name())?;
//! conn.execute_batch("CREATE TABLE IF NOT EXISTS t(x); INSERT INTO t VALUES (1);")?;
//! drop(conn);
//! let backup: Vec<u8> = installed.export("app.db")?;
//! installed.close()?;
//! # let _ = backup; Ok(()) }
//! ```
//! `examples/notes-app/` is a complete app (worker, page, build script) to start from, and
//! `vfs/README.md` the guide; `vfs/examples/worker.rs` is a smaller worker.
//!
//! ## Environment and errors
//! - A **dedicated worker** in a secure context (`https:` or `localhost`). On the main thread,
//!   in a shared or service worker, [`install`] fails with [`InstallError::Unsupported`] ("OPFS
//!   sync access handles need a dedicated worker"); so it does without OPFS (old browsers,
//!   private browsing that disables it). COOP/COEP headers are not needed.
//! - Many tabs: with [`Sharing::Shared`] (the default) every tab's worker installs the same
//!   directory and they take turns holding it (see [`Installed::acquire`] and the `share`
//!   module docs); SQL run while another context holds the volume gets `SQLITE_BUSY`. With
//!   [`Sharing::Exclusive`] a second [`install`] fails, after [`InstallOptions::busy_timeout`],
//!   with [`InstallError::Busy`]. In Chromium a shared volume's access handles are opened in
//!   mode `readwrite-unsafe`, so that a hand-off closes and reopens nothing; an exclusive open
//!   of the same directory (an `Exclusive` install, another library) is then refused while any
//!   tab has it installed. Terminate the worker on the page's `pagehide` event: seen in
//!   Firefox, a reloaded page stays in the back-forward cache with its worker and handles,
//!   which no turn-taking can get back.
//! - Storage full: a commit that runs out of quota (or gets a short write, or a bogus byte
//!   count) fails with `SQLITE_FULL` and is rolled back; nothing committed before is lost, and
//!   the volume keeps working: reads succeed, and writes succeed again once space is freed
//!   (rows or files deleted) or the quota grows — no reinstall. The volume asks the browser
//!   for the origin's quota at install ([`InstallOptions::quota_aware`]) and checkpoints early
//!   near it, to give log space back. Only a failure whose outcome is unknown (a failed
//!   `flush()`) stops writes until the volume is installed again; reads keep working. A
//!   corrupt volume fails [`install`] with [`InstallError::Volume`] holding [`Error::Corrupt`],
//!   which names the structure, file and byte offset; a volume of another format version, with
//!   [`Error::UnsupportedVersion`] (it is never overwritten).
//! - Everything here is synchronous once installed (the sync access handles are), so SQLite
//!   calls block the worker, not the page.
//!
//! ## Durability
//! [`InstallOptions::durability`] chooses what a commit waits for (see [`Durability`]):
//! `Strict` writes and flushes every commit; `Relaxed` writes it and flushes within
//! [`InstallOptions::max_flush_delay`] (100 ms); `Balanced` groups commits in memory and writes
//! and flushes them within that delay. A timer in the worker keeps the delay even when no
//! further commit comes. So a tab crash, a browser crash or a power loss loses nothing under
//! `Strict`; under `Relaxed` a power loss loses at most the last 100 ms; under `Balanced` any of
//! them loses at most the last 100 ms. The page can call [`Installed::flush`] on `pagehide` or
//! `visibilitychange` (through a message to the worker) to close that window early. Dropping
//! [`Installed`] without [`Installed::close`] tries to close (flush and checkpoint) and ignores
//! errors.

use std::cell::RefCell;
use std::fmt;
use std::rc::Rc;
use std::time::Duration;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_time::Instant;

mod share;

pub use share::{HoldGuard, ShareStats, ShareTimes};

use crate::sqlite::{self, RegisterError, SharedVolume, VfsHandle, VfsOptions};
use crate::storage::{HandleMode, OpfsStorage, OriginUsage, StorageError};
use crate::{BufferMode, Durability, Error, Metadata, Volume, VolumeOptions, VolumeStats};

/// Options of [`install`]. `Default`: VFS `"opfs-vfs"` in OPFS directory `"opfs-vfs"`, Memory
/// buffer mode, Strict durability, not SQLite's default VFS, 1 s busy timeout.
#[derive(Clone, Debug)]
pub struct InstallOptions {
    /// The name connections use to select the VFS
    /// (`Connection::open_with_flags_and_vfs(path, flags, vfs_name)`).
    pub vfs_name: String,
    /// The OPFS directory holding the volume (a name, or a `/`-separated path); created if
    /// absent.
    pub directory: String,
    /// Where file contents live while mounted: `Memory` (reads never touch OPFS; memory use is
    /// the size of the files opened) or `Disk` (bounded memory).
    pub buffer_mode: BufferMode,
    /// What a commit waits for.
    pub durability: Durability,
    /// Make this SQLite's default VFS (used by connections that name none).
    pub make_default: bool,
    /// How long [`install`] keeps retrying while the directory is held elsewhere before it
    /// fails with [`InstallError::Busy`]: a margin for a browser that releases a terminated
    /// worker's handles a moment late. (In Chromium 156 and Firefox ESR 153 they were free
    /// at once after `terminate()`; a page kept in the back-forward cache holds them until it
    /// is evicted, which no timeout covers: terminate the worker on `pagehide`.)
    /// `Duration::ZERO` fails at once.
    pub busy_timeout: Duration,
    /// `Relaxed`: longest time a commit stays unflushed; `Balanced`: unwritten and unflushed
    /// (default 100 ms). A timer in the worker keeps it when no further commit comes.
    pub max_flush_delay: Duration,
    /// Disk mode: an open transaction's staged pages go to the log beyond this, or beyond twice
    /// `link_min_bytes` if larger (up to 16 × this; Memory mode: 16 × this); `Balanced`:
    /// grouped commits are written beyond this (default 1 MiB).
    pub write_buffer_bytes: usize,
    /// A checkpoint is due when the log passes this (or a sixteenth of the data, if larger;
    /// default 16 MiB); the worker's timer runs it at the next idle moment, off the commit
    /// path. Lower means less space while mounted, more checkpoint work.
    pub checkpoint_bytes: u64,
    /// A commit runs a due checkpoint itself once the log passes this (default 64 MiB): the
    /// bound on the log of a worker that never goes idle.
    pub checkpoint_max_bytes: u64,
    /// Memory mode: most bytes of file contents held in memory (default 2 GiB; wasm32 has 4 GiB
    /// in all). Files beyond it are read from OPFS as in Disk mode.
    pub memory_budget: Option<u64>,
    /// Disk mode: bytes of page images cached for reads (default 2 MiB).
    pub disk_cache_bytes: usize,
    /// Ask `navigator.storage.estimate()` at install and keep the volume within the origin's
    /// remaining quota: near it the volume checkpoints early to give log space back (default
    /// true).
    pub quota_aware: bool,
    /// Most bytes the volume's files may take, as the app's own budget (default `None`: only
    /// the origin's quota, when `quota_aware`; with both, the smaller). Near it, commits that
    /// grow a file fail with `SQLITE_FULL` while deletes still work (see
    /// [`VolumeOptions::space_limit`]). Also for a quota the page cannot see: Chromium's
    /// DevTools quota override is not reflected in `navigator.storage.estimate()`.
    pub space_limit: Option<u64>,
    /// Whether other tabs and workers of the origin may use the volume too (default:
    /// [`Sharing::Shared`]).
    pub sharing: Sharing,
    /// Log small page changes as patches (default true; see
    /// [`VolumeOptions::log_patches`]).
    pub log_patches: bool,
    /// Commits (and Disk-mode spills) of at least this many bytes of new pages go to the data
    /// file's tail and are not written again at the checkpoint (default 8 MiB; `None`: all
    /// to the log; see [`VolumeOptions::link_min_bytes`]).
    pub link_min_bytes: Option<usize>,
    /// `Balanced` only: let a helper worker flush ahead where the handles are concurrent
    /// (Chromium with [`Sharing::Shared`]; default true). After a write-out, the helper's own
    /// handle starts the flush the volume makes later, so that the volume's worker waits less
    /// for it (see `storage::OpfsStorage`'s docs, "Flush ahead"). It changes no promise: the
    /// volume's own flush stays the barrier. The price: [`install`] waits for the helper to
    /// start (~20 ms here; 0.18 s for the page's first helper). `false`: no helper worker.
    pub flush_ahead: bool,
}

/// How a volume is shared between the tabs and workers of an origin.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sharing {
    /// Contexts take turns (Web Locks): the volume is held here until another context asks and
    /// this one is idle (no [`HoldGuard`], no SQLite transaction, nothing uncommitted); then it
    /// is handed over, and taken back with [`Installed::acquire`]. Alone, nothing changes: the
    /// volume stays held and nothing is paid. See the `share` docs in this module.
    #[default]
    Shared,
    /// One holder: another context's [`install`] fails with [`InstallError::Busy`] (after
    /// [`InstallOptions::busy_timeout`]) while this one has the volume installed.
    Exclusive,
}

impl Default for InstallOptions {
    fn default() -> Self {
        let defaults = VolumeOptions::default();
        Self {
            vfs_name: "opfs-vfs".to_owned(),
            directory: "opfs-vfs".to_owned(),
            buffer_mode: BufferMode::Memory,
            durability: Durability::Strict,
            make_default: false,
            busy_timeout: Duration::from_secs(1),
            max_flush_delay: defaults.max_flush_delay,
            write_buffer_bytes: defaults.write_buffer_bytes,
            checkpoint_bytes: defaults.checkpoint_bytes,
            checkpoint_max_bytes: defaults.checkpoint_max_bytes,
            memory_budget: defaults.memory_budget,
            disk_cache_bytes: defaults.disk_cache_bytes,
            quota_aware: true,
            space_limit: None,
            sharing: Sharing::Shared,
            log_patches: defaults.log_patches,
            link_min_bytes: defaults.link_min_bytes,
            flush_ahead: true,
        }
    }
}

impl InstallOptions {
    /// The volume options these select (the others at their defaults).
    pub fn volume_options(&self) -> VolumeOptions {
        VolumeOptions {
            buffer_mode: self.buffer_mode,
            durability: self.durability,
            max_flush_delay: self.max_flush_delay,
            write_buffer_bytes: self.write_buffer_bytes,
            checkpoint_bytes: self.checkpoint_bytes,
            checkpoint_max_bytes: self.checkpoint_max_bytes,
            memory_budget: self.memory_budget,
            disk_cache_bytes: self.disk_cache_bytes,
            space_limit: self.space_limit,
            log_patches: self.log_patches,
            link_min_bytes: self.link_min_bytes,
            ..VolumeOptions::default()
        }
    }
}

/// Errors of [`install`] and of the [`Installed`] handle.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// Not available here: not a dedicated worker, or no OPFS (e.g. private browsing).
    #[error("{message}")]
    Unsupported {
        /// What is missing, with the browser's error if there was one.
        message: String,
    },
    /// The volume is open elsewhere (another tab or worker, or an earlier [`install`] here).
    #[error("volume is busy: {message}")]
    Busy {
        /// Who holds it, as far as the browser says.
        message: String,
    },
    /// Opening the OPFS files failed otherwise (the browser's error name and message kept).
    #[error("cannot open the OPFS volume: {0}")]
    Storage(StorageError),
    /// The volume refused (corrupt at mount, out of space, I/O error, ...).
    #[error("{0}")]
    Volume(#[from] Error),
    /// SQLite refused the VFS registration (e.g. the name is taken).
    #[error("{0}")]
    Register(#[from] RegisterError),
    /// SQLite files of this VFS are still open: drop the connections first.
    #[error("{0} SQLite file(s) of this VFS are still open; drop the connections first")]
    FilesOpen(usize),
    /// The handle was closed (or wiped).
    #[error("the volume was closed")]
    Closed,
}

impl From<StorageError> for InstallError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Busy { message } => InstallError::Busy { message },
            StorageError::Platform {
                op,
                ref name,
                ref message,
            } if name == "NotADedicatedWorker"
                || name == "Unsupported"
                || (op == "getDirectory" && name == "SecurityError") =>
            {
                InstallError::Unsupported {
                    message: format!("{message} ({op}: {name})"),
                }
            }
            e => InstallError::Storage(e),
        }
    }
}

/// What [`Installed::usage`] reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// The browser's estimate for the whole origin (`navigator.storage.estimate()`).
    pub origin: OriginUsage,
    /// Logical files in the volume.
    pub files: u64,
    /// Sum of their lengths in bytes.
    pub file_bytes: u64,
    /// Engine statistics (data file blocks, log bytes, commits, ...).
    pub volume: VolumeStats,
}

struct Inner {
    vfs: VfsHandle<OpfsStorage>,
    volume: SharedVolume<OpfsStorage>,
}

/// An installed volume and its SQLite VFS. See the module docs.
pub struct Installed {
    vfs_name: String,
    directory: String,
    inner: Option<Inner>,
    share: Option<Rc<share::Share>>,
}

impl fmt::Debug for Installed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Installed")
            .field("vfs_name", &self.vfs_name)
            .field("directory", &self.directory)
            .field("open", &self.inner.is_some())
            .finish()
    }
}

/// Opens the OPFS directory, mounts the volume and registers the SQLite VFS. Call it once, in
/// a dedicated worker, and keep the handle as long as connections use the VFS.
pub async fn install(options: InstallOptions) -> Result<Installed, InstallError> {
    // Shared: take our turn first (the Web Lock), then the handles are ours to open.
    let mut held = None;
    if options.sharing == Sharing::Shared {
        let s = share::Share::new(&options.directory, options.busy_timeout)?;
        let release = s.wait_for_lock(Some(options.busy_timeout)).await?;
        held = Some((s, release));
    }
    // Shared: concurrent handles where the browser offers them (Chromium), so that a hand-off
    // closes and reopens nothing; the Web Lock serialises the contexts (`share`).
    let mode = match options.sharing {
        Sharing::Shared => HandleMode::Concurrent,
        Sharing::Exclusive => HandleMode::Exclusive,
    };
    // Only Balanced hints (it is the level that defers its flushes): the others would pay the
    // helper's start at every mount for nothing.
    let flush_ahead = options.flush_ahead && options.durability == Durability::Balanced;
    let storage =
        match open_waiting(&options.directory, mode, flush_ahead, options.busy_timeout).await {
            Ok(st) => st,
            Err(e) => {
                if let Some((s, release)) = held {
                    let _ = release.call0(&JsValue::NULL);
                    s.close_channel();
                }
                return Err(e.into());
            }
        };
    let result = install_with(options, storage).await;
    match (result, held) {
        (Ok(mut inst), Some((s, release))) => {
            s.set_held(release);
            if let Some(inner) = &inst.inner {
                s.bind(&inner.volume, Box::new(inner.vfs.locks_probe()));
            }
            inst.share = Some(s);
            Ok(inst)
        }
        (Ok(inst), None) => Ok(inst),
        (Err(e), held) => {
            if let Some((s, release)) = held {
                let _ = release.call0(&JsValue::NULL);
                s.close_channel();
            }
            Err(e)
        }
    }
}

async fn install_with(
    options: InstallOptions,
    storage: OpfsStorage,
) -> Result<Installed, InstallError> {
    let mut vopts = options.volume_options();
    if options.quota_aware {
        // The origin's remaining quota, plus what the volume's files take already (they are in
        // `usage`). Browsers round these figures; the volume also learns from a quota error.
        if let Ok(OriginUsage {
            usage_bytes: Some(usage),
            quota_bytes: Some(quota),
        }) = OpfsStorage::estimate().await
        {
            let mut st = storage;
            let mine: u64 = crate::storage::PhysicalFileId::ALL
                .iter()
                .filter_map(|&id| crate::storage::Storage::file(&mut st, id).len().ok())
                .sum();
            let origin = quota.saturating_sub(usage).saturating_add(mine);
            vopts.space_limit = Some(vopts.space_limit.map_or(origin, |own| own.min(origin)));
            return finish_install(options, st, vopts);
        }
    }
    finish_install(options, storage, vopts)
}

fn finish_install(
    options: InstallOptions,
    storage: OpfsStorage,
    vopts: VolumeOptions,
) -> Result<Installed, InstallError> {
    // Storage errors at mount (e.g. a failing read) are volume errors; a failure drops the
    // storage, which closes the handles.
    let volume = Volume::mount(storage, vopts)?;
    let volume = Rc::new(RefCell::new(volume));
    DeadlineTimer::attach(&volume);
    let vfs = sqlite::register_with(
        &options.vfs_name,
        volume.clone(),
        VfsOptions {
            make_default: options.make_default,
            ..VfsOptions::default()
        },
    )?;
    Ok(Installed {
        vfs_name: options.vfs_name,
        directory: options.directory,
        inner: Some(Inner { vfs, volume }),
        share: None,
    })
}

/// Keeps the relaxed levels' promise in wall-clock time: when a commit leaves work due (a
/// Balanced commit to write, a Relaxed one to flush, an idle checkpoint), a `setTimeout` in the
/// worker calls [`Volume::poll`] at the deadline, even if no further commit comes. The timer
/// runs between the worker's tasks (SQLite calls are synchronous), so the volume is never
/// borrowed when it fires; if it is, it retries 10 ms later.
struct DeadlineTimer {
    volume: std::rc::Weak<RefCell<Volume<OpfsStorage>>>,
    /// The deadline the armed timer fires for, and its id.
    armed: std::cell::Cell<Option<Instant>>,
    timeout_id: std::cell::Cell<Option<JsValue>>,
    callback: RefCell<Option<wasm_bindgen::closure::Closure<dyn FnMut()>>>,
}

impl DeadlineTimer {
    fn attach(volume: &SharedVolume<OpfsStorage>) {
        let timer = Rc::new(DeadlineTimer {
            volume: Rc::downgrade(volume),
            armed: std::cell::Cell::new(None),
            timeout_id: std::cell::Cell::new(None),
            callback: RefCell::new(None),
        });
        let weak = Rc::downgrade(&timer);
        let cb = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || {
            if let Some(t) = weak.upgrade() {
                t.fire();
            }
        });
        *timer.callback.borrow_mut() = Some(cb);
        let hook_timer = timer.clone();
        if let Ok(mut v) = volume.try_borrow_mut() {
            v.set_deadline_hook(move |at| hook_timer.arm(at));
        }
    }

    fn arm(&self, at: Instant) {
        // Every commit of the deferred levels, and every Strict one while an idle checkpoint is
        // wanted, comes here; nearly always an earlier (or equal) timer is armed already. That
        // answer needs no call into JavaScript: reading `performance.now` through `Reflect`
        // here (a string decoded, two lookups, a call) cost ~11 µs per Strict commit in
        // Firefox 153 under its profiler (2026-12-05: 2 % of the commit path's samples, half
        // of what framing the pages took).
        if self
            .armed
            .get()
            .is_some_and(|t| t <= at + Duration::from_millis(1))
        {
            return;
        }
        let delay_ms = at.saturating_duration_since(Instant::now()).as_secs_f64() * 1000.0;
        let Ok(cb) = self.callback.try_borrow() else {
            return;
        };
        let Some(cb) = cb.as_ref() else {
            return;
        };
        let global = js_sys::global();
        let set_timeout = Reflect::get(&global, &JsValue::from_str("setTimeout"))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        if let Some(f) = set_timeout {
            // A delay in ms fits an i32 for any deadline we set (seconds at most).
            let ms = JsValue::from_f64(delay_ms.ceil().max(0.0));
            // One timer at a time: an earlier deadline replaces the armed one.
            self.cancel();
            if let Ok(id) = f.call2(&global, cb.as_ref(), &ms) {
                self.armed.set(Some(at));
                self.timeout_id.set(Some(id));
            }
        }
    }

    fn fire(&self) {
        self.armed.set(None);
        self.timeout_id.set(None);
        let Some(volume) = self.volume.upgrade() else {
            return;
        };
        let next = match volume.try_borrow_mut() {
            // Errors are kept by the volume (poisoned, last checkpoint error); the next commit
            // reports them.
            Ok(mut v) => v.poll().ok().flatten(),
            Err(_) => Some(Instant::now() + Duration::from_millis(10)),
        };
        if let Some(at) = next {
            self.arm(at);
        }
    }
}

impl DeadlineTimer {
    fn cancel(&self) {
        if let Some(id) = self.timeout_id.take() {
            let global = js_sys::global();
            if let Some(f) = Reflect::get(&global, &JsValue::from_str("clearTimeout"))
                .ok()
                .and_then(|f| f.dyn_into::<Function>().ok())
            {
                let _ = f.call1(&global, &id);
            }
        }
        self.armed.set(None);
    }
}

impl Drop for DeadlineTimer {
    /// The volume is gone: cancel the armed timer, whose callback dies with this struct.
    fn drop(&mut self) {
        self.cancel();
    }
}

/// `performance.now()` in ms (0 if there is no `performance`).
pub(crate) fn now_ms() -> f64 {
    let global = js_sys::global();
    Reflect::get(&global, &JsValue::from_str("performance"))
        .ok()
        .and_then(|p| {
            let now = Reflect::get(&p, &JsValue::from_str("now")).ok()?;
            let now: Function = now.dyn_into().ok()?;
            now.call0(&p).ok()?.as_f64()
        })
        .unwrap_or(0.0)
}

/// Opens the storage, retrying with growing pauses while it is busy, up to `timeout`.
async fn open_waiting(
    directory: &str,
    mode: HandleMode,
    flush_ahead: bool,
    timeout: Duration,
) -> Result<OpfsStorage, StorageError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(10);
    loop {
        match OpfsStorage::open_flushing_ahead(directory, mode, flush_ahead).await {
            Err(StorageError::Busy { .. }) if start.elapsed() + pause <= timeout => {
                sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(250));
            }
            result => return result,
        }
    }
}

/// Waits `duration` with the global `setTimeout` (no busy waiting; returns at once if there is
/// no `setTimeout`).
async fn sleep(duration: Duration) {
    let ms = i32::try_from(duration.as_millis()).unwrap_or(i32::MAX);
    let promise = Promise::new(&mut |resolve, _reject| {
        let global = js_sys::global();
        let set_timeout = Reflect::get(&global, &JsValue::from_str("setTimeout"))
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok());
        let scheduled = set_timeout
            .map(|f| f.call2(&global, &resolve, &JsValue::from(ms)).is_ok())
            .unwrap_or(false);
        if !scheduled {
            let _ = resolve.call0(&JsValue::UNDEFINED);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// The rollback journal and WAL file SQLite keeps beside database `name`.
fn side_files(name: &str) -> [String; 2] {
    [format!("{name}-journal"), format!("{name}-wal")]
}

impl Installed {
    /// The VFS name to open connections with.
    pub fn vfs_name(&self) -> &str {
        &self.vfs_name
    }

    /// The OPFS directory of the volume.
    pub fn directory(&self) -> &str {
        &self.directory
    }

    fn inner(&self) -> Result<&Inner, InstallError> {
        self.inner.as_ref().ok_or(InstallError::Closed)
    }

    /// The registered VFS (its statistics and last error message).
    pub fn vfs(&self) -> Result<&VfsHandle<OpfsStorage>, InstallError> {
        Ok(&self.inner()?.vfs)
    }

    /// The volume shared with the VFS. Prefer [`Installed::with_volume`]; a clone kept past
    /// [`Installed::close`] keeps the OPFS handles open until it is dropped.
    pub fn volume(&self) -> Result<&SharedVolume<OpfsStorage>, InstallError> {
        Ok(&self.inner()?.volume)
    }

    /// Runs `f` on the volume: its filesystem API (create, open, read, write, rename, delete,
    /// set_len, list, stat, commit, flush, counters) for files that are not SQLite databases.
    /// Changes become durable at the volume's next commit or flush, as the durability level
    /// says; call [`Volume::commit`] inside `f` when done.
    pub fn with_volume<R>(
        &self,
        f: impl FnOnce(&mut Volume<OpfsStorage>) -> Result<R, Error>,
    ) -> Result<R, InstallError> {
        let inner = self.inner()?;
        let mut volume = inner
            .volume
            .try_borrow_mut()
            .map_err(|_| InstallError::Busy {
                message: "the volume is in use by a call further up the stack".to_owned(),
            })?;
        Ok(f(&mut volume)?)
    }

    /// Every file in the volume (databases, journals, other files), sorted by name.
    pub fn list(&self) -> Result<Vec<Metadata>, InstallError> {
        self.with_volume(|v| {
            let mut files = v.list();
            files.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(files)
        })
    }

    /// The bytes of file `name`, e.g. a database to download. For a consistent copy of a
    /// database, call it when no connection is inside a write transaction.
    pub fn export(&self, name: &str) -> Result<Vec<u8>, InstallError> {
        self.with_volume(|v| {
            let id = v.open(name)?;
            v.read_to_vec(id)
        })
    }

    /// Creates or replaces file `name` with `bytes` and makes it durable (one commit and one
    /// flush). A leftover rollback journal or WAL file of the old `name` is deleted in the
    /// same commit, so it cannot be replayed over the new database; a crash leaves either the
    /// old files or the new one. No connection may have `name` open.
    pub fn import(&self, name: &str, bytes: &[u8]) -> Result<(), InstallError> {
        self.with_volume(|v| {
            for old in std::iter::once(name.to_owned()).chain(side_files(name)) {
                if v.exists(&old) {
                    v.delete(&old)?;
                }
            }
            let id = v.create(name)?;
            v.write(id, 0, bytes)?;
            v.flush()
        })
    }

    /// Deletes file `name`, with the rollback journal and WAL file SQLite may have left beside
    /// it, and makes that durable. No connection may have `name` open.
    pub fn delete(&self, name: &str) -> Result<(), InstallError> {
        self.with_volume(|v| {
            v.delete(name)?;
            for side in side_files(name) {
                if v.exists(&side) {
                    v.delete(&side)?;
                }
            }
            v.flush()
        })
    }

    /// The browser's estimate for the origin and the volume's own figures.
    pub async fn usage(&self) -> Result<Usage, InstallError> {
        // Read the volume before awaiting: no borrow is held across the await.
        let (files, file_bytes, volume) = self.with_volume(|v| {
            let list = v.list();
            Ok((
                list.len() as u64,
                list.iter().map(|m| m.len).sum(),
                v.stats(),
            ))
        })?;
        let origin = OpfsStorage::estimate().await?;
        Ok(Usage {
            origin,
            files,
            file_bytes,
            volume,
        })
    }

    /// Makes every commit so far durable (written and flushed): one flush, if anything is
    /// unflushed. With `Relaxed` or `Balanced` durability call it from a timer or when the page
    /// is hidden.
    pub fn flush(&self) -> Result<(), InstallError> {
        self.with_volume(Volume::flush)
    }

    /// Unregisters the VFS, flushes, checkpoints and closes the OPFS handles. Fails with
    /// [`InstallError::FilesOpen`] (changing nothing) while connections are open. Any later
    /// call on this handle returns [`InstallError::Closed`]. The handles are released even when
    /// the final flush fails (the error is returned; the next [`install`] recovers the last
    /// durable commit).
    pub fn close(&mut self) -> Result<(), InstallError> {
        let open = self.inner()?.vfs.open_files();
        if open > 0 {
            return Err(InstallError::FilesOpen(open));
        }
        let Inner { vfs, volume } = self.inner.take().ok_or(InstallError::Closed)?;
        let unregistered = vfs.unregister().map_err(|(_, e)| InstallError::from(e));
        // Released to another context: what this one committed was made durable when it
        // released; nothing to flush, no handles to close.
        let released = volume.try_borrow().is_ok_and(|v| v.is_released());
        let closed = if released {
            Ok(())
        } else {
            match Rc::try_unwrap(volume) {
                Ok(volume) => volume.into_inner().close().map(drop),
                // Someone kept a clone of the shared volume: flush, the handles close with it.
                Err(shared) => shared.borrow_mut().flush(),
            }
        };
        if let Some(s) = self.share.take() {
            s.close_channel();
        }
        unregistered?;
        Ok(closed?)
    }

    /// Waits until this context holds the volume (shared volumes: another tab or worker may
    /// hold it), catching up with what others committed meanwhile, and keeps it held while the
    /// guard lives. Run SQL while holding it; with [`Sharing::Exclusive`] it returns at once.
    /// After the guard drops the volume stays held until another context asks.
    ///
    /// The future does not borrow `self`: start it, then await it after the borrow ends (the
    /// handle may live in a `RefCell`).
    pub fn acquire(
        &self,
    ) -> impl std::future::Future<Output = Result<Option<HoldGuard>, InstallError>> + 'static {
        let share = match self.inner() {
            Ok(_) => Ok(self.share.clone()),
            Err(e) => Err(e),
        };
        async move {
            match share? {
                Some(s) => Ok(Some(s.acquire().await?)),
                None => Ok(None),
            }
        }
    }

    /// Acquires the volume ([`Installed::acquire`]), runs `f` (synchronous SQL on this context's
    /// connections), and lets the volume go to whoever asked meanwhile.
    pub async fn run<R>(&self, f: impl FnOnce() -> R) -> Result<R, InstallError> {
        let guard = self.acquire().await?;
        let r = f();
        drop(guard);
        Ok(r)
    }

    /// Hands the volume over now (shared volumes), for apps that manage it themselves, e.g.
    /// when their tab is hidden: makes everything durable, closes the access handles, releases
    /// the Web Lock. Fails with [`InstallError::Busy`] while a connection is inside a
    /// transaction or a [`HoldGuard`] lives. Take it back with [`Installed::resume`].
    pub fn pause(&self) -> Result<(), InstallError> {
        self.inner()?;
        let Some(s) = &self.share else {
            return Err(InstallError::Unsupported {
                message: "pause needs Sharing::Shared".into(),
            });
        };
        match s.release_now()? {
            true => Ok(()),
            false => Err(InstallError::Busy {
                message: "a transaction is open or a HoldGuard lives; pause when idle".into(),
            }),
        }
    }

    /// Takes the volume back after [`Installed::pause`] (or after another context took it):
    /// waits for the Web Lock, reopens the handles, catches up.
    pub async fn resume(&self) -> Result<(), InstallError> {
        drop(self.acquire().await?);
        Ok(())
    }

    /// Whether this context holds the volume now (always, for exclusive volumes).
    pub fn is_held(&self) -> bool {
        self.share.as_ref().is_none_or(|s| s.holding.get())
    }

    /// Whether the volume's access handles are concurrent (a shared volume in a browser with
    /// `readwrite-unsafe` handles: Chromium), so that a hand-off keeps them open. `false` for
    /// exclusive handles, and once closed.
    pub fn has_concurrent_handles(&self) -> bool {
        self.inner.as_ref().is_some_and(|inner| {
            inner
                .volume
                .try_borrow()
                .is_ok_and(|v| v.storage().is_concurrent())
        })
    }

    /// What this context did to share the volume (shared volumes).
    pub fn share_stats(&self) -> Option<ShareStats> {
        self.share.as_ref().map(|s| s.stats.get())
    }

    /// Closes the volume (as [`Installed::close`]) and removes its OPFS directory with every
    /// file in it.
    pub async fn wipe(&mut self) -> Result<(), InstallError> {
        // Only FilesOpen leaves the volume open; after any other outcome the handles are
        // released (or were never ours) and the directory can go.
        if let Err(InstallError::FilesOpen(n)) = self.close() {
            return Err(InstallError::FilesOpen(n));
        }
        Ok(OpfsStorage::remove_dir(&self.directory).await?)
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if self.inner.is_some() {
            // Best effort; with connections still open the VFS stays registered and keeps the
            // volume (and its handles) alive for them.
            let _ = self.close();
        }
    }
}
