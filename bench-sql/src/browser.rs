//! # In the browser: backends, environment, and the benchmark entry point
//!
//! Everything here runs in a **dedicated worker** in a secure context: OPFS sync access handles
//! exist nowhere else. The workload is synchronous `rusqlite` on those handles; only the
//! lifecycle (opening directories, installing a pool) awaits.
//!
//! Backends ([`BrowserBackend::all`], reference first):
//!
//! | name | what | durability | persistent | counters |
//! |---|---|---|---|---|
//! | `sqlite-memvfs` | sqlite-wasm-rs' memory VFS (`memvfs`), the memory-only reference | none | no | no |
//! | `sahpool` | sqlite-wasm-vfs 0.3 `sahpool` on OPFS, the incumbent | flush on every xSync | yes | no |
//! | `ours-{disk,memory}-{strict,relaxed,balanced}` | our VFS over a volume on [`OpfsStorage`] | per level | yes | yes |
//! | `sqlite-memvfs-twin` | the reference again (only when a filter says `twin`): the A/A control | none | no | no |
//!
//! Each backend works in its own OPFS directory under a root chosen by the caller, a new one
//! for every run (`<root>/<backend>-<n>`), removed by `cleanup`; every SQLite VFS registration
//! gets a unique name. So runs never see each other's files, and a failed run leaves at most one
//! directory behind (which [`run_browser`] removes at its start).
//!
//! Not here: an IndexedDB-backed SQLite. sqlite-wasm-vfs 0.1/0.2 had one (`relaxed-idb`), on
//! the older sqlite-wasm-rs 0.5 line, which cannot be linked beside the 0.6 line rusqlite 0.43
//! uses (each line builds its own SQLite); 0.3 removed it. See the crate README.

use std::cell::Cell;
use std::fmt;

use js_sys::{Array, Function, Promise, Reflect};
use rusqlite::Connection;
use sqlite_wasm_rs::vfs::memvfs::MemVfsUtil;
use sqlite_wasm_rs::vfs::VfsFilesManager as _;
use sqlite_wasm_rs::WasmOsCallback;
use sqlite_wasm_vfs::sahpool::{self, OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use bench_results::goals::{EXCLUSIVE_SUFFIX, NO_FLUSH_AHEAD_SUFFIX, WHOLE_PAGES_SUFFIX};
use opfs_vfs::sqlite::SharedVolume;
use opfs_vfs::storage::{OpfsStorage, StorageError};
use opfs_vfs::web::{install, InstallError, InstallOptions, Installed, Sharing};
use opfs_vfs::{BufferMode, Durability};

use bench_results::sql::{BackendMeta, PhysicalCounters, SqlSection};
use bench_results::Environment;

use crate::backend::{
    base_meta, close_conn, durability, lifecycle, open_db, ours_durability, ours_meta, ours_name,
    packages, physical_counters, SqlBackend, DB_NAME, PRAGMA_SETTINGS,
};
use crate::runner::{run_rounds, Ours, Plan, Progress};
use crate::sql::DEFAULT_SEED;
use crate::BenchError;

pub use crate::backend::{MEMVFS_NAME, MEMVFS_TWIN_NAME};

// ----------------------------------------------------------------------------------------
// Shared helpers
// ----------------------------------------------------------------------------------------

thread_local! {
    /// Numbers OPFS directories and VFS registrations within this worker.
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

fn next_id() -> u64 {
    NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    })
}

/// A random tag (48 bits, hex), so that names stay unique across workers and page loads
/// (OPFS outlives both).
pub fn random_tag() -> String {
    // Math.random() is in [0, 1): the product fits in 48 bits.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let r = (js_sys::Math::random() * (1u64 << 48) as f64) as u64;
    format!("{r:012x}")
}

/// Removes an OPFS directory (a `/`-separated path) and everything in it; absent is fine.
pub async fn remove_opfs_dir(dir: &str) -> Result<(), BenchError> {
    Ok(OpfsStorage::remove_dir(dir).await?)
}

/// Calls `target[method](...args)` and awaits the promise it returns.
async fn call_await(
    target: &JsValue,
    method: &str,
    args: &[JsValue],
) -> Result<JsValue, BenchError> {
    let js = |e: JsValue| BenchError::Browser(format!("{method}: {e:?}"));
    let f: Function = Reflect::get(target, &JsValue::from_str(method))
        .map_err(js)?
        .dyn_into()
        .map_err(|_| BenchError::Browser(format!("{method} is not a function")))?;
    let promise = f
        .apply(target, &args.iter().collect::<Array>())
        .map_err(js)?;
    JsFuture::from(Promise::from(promise)).await.map_err(js)
}

/// Bytes of every file in the OPFS directory `dir` (a `/`-separated path), recursively: the
/// `size` of each file's `getFile()`. `None` if the directory does not exist. Read at rest: a
/// file with an open sync access handle may refuse `getFile()` (Chromium).
pub async fn opfs_dir_bytes(dir: &str) -> Result<Option<u64>, BenchError> {
    let global = js_sys::global();
    let navigator = Reflect::get(&global, &JsValue::from_str("navigator"))
        .map_err(|e| BenchError::Browser(format!("navigator: {e:?}")))?;
    let storage = Reflect::get(&navigator, &JsValue::from_str("storage"))
        .map_err(|e| BenchError::Browser(format!("navigator.storage: {e:?}")))?;
    let mut handle = call_await(&storage, "getDirectory", &[]).await?;
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        match call_await(&handle, "getDirectoryHandle", &[JsValue::from_str(part)]).await {
            Ok(h) => handle = h,
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(Box::pin(handle_bytes(handle)).await?))
}

/// [`opfs_dir_bytes`] of a directory handle (boxed for the recursion).
async fn handle_bytes(dir: JsValue) -> Result<u64, BenchError> {
    let get = |v: &JsValue, k: &str| Reflect::get(v, &JsValue::from_str(k)).unwrap_or_default();
    let iter: Function = get(&dir, "values")
        .dyn_into()
        .map_err(|_| BenchError::Browser("FileSystemDirectoryHandle.values is missing".into()))?;
    let iter = iter
        .call0(&dir)
        .map_err(|e| BenchError::Browser(format!("values(): {e:?}")))?;
    let mut total = 0;
    loop {
        let step = call_await(&iter, "next", &[]).await?;
        if get(&step, "done").is_truthy() {
            return Ok(total);
        }
        let entry = get(&step, "value");
        if get(&entry, "kind").as_string().as_deref() == Some("directory") {
            total += Box::pin(handle_bytes(entry)).await?;
        } else {
            let file = call_await(&entry, "getFile", &[]).await?;
            // `size` is a non-negative integer in a double, exact below 2^53 (no OPFS file is
            // larger), so the cast loses nothing.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let size = get(&file, "size").as_f64().unwrap_or(0.0) as u64;
            total += size;
        }
    }
}

// ----------------------------------------------------------------------------------------
// Our VFS on OPFS
// ----------------------------------------------------------------------------------------

/// Our VFS installed over a volume, as an application installs it.
struct Mounted {
    installed: Installed,
}

/// Our VFS over a volume on OPFS, in one buffer mode at one durability level, installed the way
/// an application installs it: [`opfs_vfs::web::install`] with its defaults (so the worker's
/// deadline timer, the quota estimate and `Sharing::Shared` are what users get). Initialization
/// installs (Web Lock, two sync access handles, mount, VFS registered under a unique name) and
/// opens the connection; close closes the connection and the installation (flush, checkpoint,
/// handles closed, lock released), so that reopen mounts from what is in OPFS.
pub struct OursOpfsBackend {
    root: String,
    buffer_mode: BufferMode,
    durability: Durability,
    /// `Sharing::Shared` (what users get by default) or, for the `-exclusive` references,
    /// `Sharing::Exclusive`: one tab, exclusive handles, no Web Lock — the single-tab cost of
    /// sharing is the difference, paired per round.
    sharing: Sharing,
    /// `log_patches` (what users get) or, for the `-whole-pages` references, every changed
    /// page logged whole: what patches save is the difference, paired per round.
    patches: bool,
    /// `flush_ahead` (what users get) or, for the `-no-flush-ahead` references, no helper
    /// worker: every flush inline. What flushing ahead saves is the difference, paired per round.
    flush_ahead: bool,
    /// Time the volume's storage calls ([`OursOpfsBackend::time_calls`]).
    time_calls: bool,
    dir: Option<String>,
    mounted: Option<Mounted>,
}

impl fmt::Debug for OursOpfsBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OursOpfsBackend")
            .field("name", &self.name())
            .field("dir", &self.dir)
            .field("mounted", &self.mounted.is_some())
            .finish()
    }
}

impl OursOpfsBackend {
    /// OPFS directories go under `root`.
    pub fn new(root: &str, buffer_mode: BufferMode, durability: Durability) -> Self {
        Self {
            root: root.to_owned(),
            buffer_mode,
            durability,
            sharing: Sharing::Shared,
            patches: true,
            flush_ahead: true,
            time_calls: false,
            dir: None,
            mounted: None,
        }
    }

    /// Times the volume's storage calls from the next mount on (`opfs_vfs::Volume::time_calls`):
    /// the cases' counters then say how much of each case was spent inside OPFS calls.
    pub fn time_calls(&mut self, on: bool) {
        self.time_calls = on;
    }

    /// The six configurations we ship: Disk before Memory, Strict, Relaxed, Balanced.
    pub fn all(root: &str) -> Vec<Self> {
        let mut v = Vec::new();
        for mode in [BufferMode::Disk, BufferMode::Memory] {
            for level in [
                Durability::Strict,
                Durability::Relaxed,
                Durability::Balanced,
            ] {
                v.push(Self::new(root, mode, level));
            }
        }
        v
    }

    /// The `-exclusive` reference of a configuration: installed with `Sharing::Exclusive`
    /// (exclusive access handles, no Web Lock), to measure what sharing costs a single tab.
    pub fn exclusive(root: &str, buffer_mode: BufferMode, durability: Durability) -> Self {
        Self {
            sharing: Sharing::Exclusive,
            ..Self::new(root, buffer_mode, durability)
        }
    }

    /// The `-whole-pages` reference of a configuration: installed with `log_patches: false`
    /// (every changed page logged whole, as before 2026-12-05), to measure what patches save.
    pub fn whole_pages(root: &str, buffer_mode: BufferMode, durability: Durability) -> Self {
        Self {
            patches: false,
            ..Self::new(root, buffer_mode, durability)
        }
    }

    /// The `-no-flush-ahead` reference of a configuration: installed with `flush_ahead: false`
    /// (no helper worker; every flush made inline), to measure what flushing ahead saves.
    pub fn no_flush_ahead(root: &str, buffer_mode: BufferMode, durability: Durability) -> Self {
        Self {
            flush_ahead: false,
            ..Self::new(root, buffer_mode, durability)
        }
    }

    /// The OPFS directory of the current run, if prepared.
    pub fn dir(&self) -> Option<&str> {
        self.dir.as_deref()
    }

    async fn mount(&mut self) -> Result<Connection, BenchError> {
        if self.mounted.is_some() {
            return Err(lifecycle(self, "open while already open"));
        }
        let Some(dir) = self.dir.clone() else {
            return Err(lifecycle(self, "open before prepare"));
        };
        let name = format!("bench-{}-{}-{}", self.name(), random_tag(), next_id());
        let installed = install(InstallOptions {
            vfs_name: name.clone(),
            directory: dir,
            buffer_mode: self.buffer_mode,
            durability: self.durability,
            sharing: self.sharing,
            log_patches: self.patches,
            flush_ahead: self.flush_ahead,
            ..InstallOptions::default()
        })
        .await?;
        if self.time_calls {
            installed.volume()?.borrow_mut().time_calls(true);
        }
        let conn = open_db(DB_NAME, &name);
        self.mounted = Some(Mounted { installed });
        conn
    }

    /// Closes the installation: unregisters the VFS, closes the volume (flush, checkpoint,
    /// close the handles) and releases its Web Lock.
    fn unmount(&mut self) -> Result<(), BenchError> {
        let Some(mut m) = self.mounted.take() else {
            return Ok(());
        };
        match m.installed.close() {
            Ok(()) => Ok(()),
            Err(e @ InstallError::FilesOpen(_)) => {
                // Files still open: keep the installation so that cleanup can retry after the
                // connection is gone.
                self.mounted = Some(m);
                Err(e.into())
            }
            Err(e) => Err(e.into()),
        }
    }

    fn volume(&self) -> Option<&SharedVolume<OpfsStorage>> {
        self.mounted.as_ref()?.installed.volume().ok()
    }
}

impl SqlBackend for OursOpfsBackend {
    fn name(&self) -> String {
        let mut name = ours_name(self.buffer_mode, self.durability);
        if self.sharing == Sharing::Exclusive {
            name += EXCLUSIVE_SUFFIX;
        }
        if !self.patches {
            name += WHOLE_PAGES_SUFFIX;
        }
        if !self.flush_ahead {
            name += NO_FLUSH_AHEAD_SUFFIX;
        }
        name
    }

    fn durability(&self) -> &'static str {
        ours_durability(self.durability)
    }

    fn persistent(&self) -> bool {
        true
    }

    fn meta(&self) -> BackendMeta {
        let mut meta = ours_meta(self, MEMVFS_NAME, self.buffer_mode, self.durability);
        if self.sharing == Sharing::Exclusive {
            if let Some(d) = &mut meta.durability_settings {
                d.push_str("; Sharing::Exclusive (exclusive access handles, no Web Lock)");
            }
        }
        if !self.patches {
            if let Some(d) = &mut meta.durability_settings {
                d.push_str("; log_patches: false (every changed page logged whole)");
            }
        }
        if !self.flush_ahead {
            if let Some(d) = &mut meta.durability_settings {
                d.push_str("; flush_ahead: false (no helper worker: every flush inline)");
            }
        }
        meta
    }

    /// A new directory name; removes it (and the previous run's, if cleanup did not run) so that
    /// the volume starts empty.
    async fn prepare(&mut self) -> Result<(), BenchError> {
        self.unmount()?;
        if let Some(old) = self.dir.take() {
            remove_opfs_dir(&old).await?;
        }
        let dir = format!("{}/{}-{}", self.root, self.name(), next_id());
        remove_opfs_dir(&dir).await?;
        self.dir = Some(dir);
        Ok(())
    }

    async fn open(&mut self) -> Result<Connection, BenchError> {
        self.mount().await
    }

    /// `Volume::flush`: commits are written and flushed (nothing to do under Strict, where the
    /// last commit already flushed).
    async fn sync(&mut self, _conn: &Connection) -> Result<(), BenchError> {
        match &self.mounted {
            Some(m) => Ok(m.installed.flush()?),
            None => Err(lifecycle(self, "sync while not open")),
        }
    }

    async fn close(&mut self, conn: Connection) -> Result<(), BenchError> {
        let closed = close_conn(conn);
        let unmounted = self.unmount();
        closed?;
        unmounted
    }

    async fn cleanup(&mut self) -> Result<(), BenchError> {
        let unmounted = self.unmount();
        let removed = match self.dir.take() {
            Some(dir) => remove_opfs_dir(&dir).await,
            None => Ok(()),
        };
        unmounted?;
        removed
    }

    /// `Volume::checkpoint`: every page in the log written home, the data file flushed, the
    /// log reset.
    async fn checkpoint(&mut self, _conn: &Connection) -> Result<bool, BenchError> {
        match &self.mounted {
            Some(m) => {
                m.installed.with_volume(|v| v.checkpoint())?;
                Ok(true)
            }
            None => Err(lifecycle(self, "checkpoint while not open")),
        }
    }

    async fn stored_bytes(&mut self) -> Result<Option<u64>, BenchError> {
        match &self.dir {
            Some(dir) => opfs_dir_bytes(dir).await,
            None => Ok(None),
        }
    }

    fn counters(&self) -> Option<PhysicalCounters> {
        Some(physical_counters(&self.volume()?.borrow().counters()))
    }
}

// ----------------------------------------------------------------------------------------
// sqlite-wasm-vfs sahpool
// ----------------------------------------------------------------------------------------

fn sahpool_error(e: sahpool::OpfsSAHError) -> BenchError {
    BenchError::Browser(format!("sahpool: {e}"))
}

/// sqlite-wasm-vfs 0.3 `sahpool` (a port of SQLite's `opfs-sahpool`): a pool of OPFS files
/// opened at install (six by default, each with a 4 KiB header naming the logical file), one
/// connection, `journal_mode=DELETE`, an OPFS `flush()` on every `xSync`.
///
/// Initialization installs the pool in a fresh OPFS directory under a unique VFS name (creating
/// and opening the pool's files) and opens the connection. Close closes the connection and
/// uninstalls the pool (unregisters the VFS, closes every handle), so that reopen installs it
/// again from what is in OPFS.
pub struct SahpoolBackend {
    root: String,
    dir: Option<String>,
    vfs_name: Option<String>,
    pool: Option<OpfsSAHPoolUtil>,
}

impl fmt::Debug for SahpoolBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SahpoolBackend")
            .field("dir", &self.dir)
            .field("vfs_name", &self.vfs_name)
            .field("installed", &self.pool.is_some())
            .finish()
    }
}

impl SahpoolBackend {
    /// OPFS directories go under `root`.
    pub fn new(root: &str) -> Self {
        Self {
            root: root.to_owned(),
            dir: None,
            vfs_name: None,
            pool: None,
        }
    }

    /// The OPFS directory of the current run, if prepared.
    pub fn dir(&self) -> Option<&str> {
        self.dir.as_deref()
    }

    fn uninstall(&mut self) -> Result<(), BenchError> {
        let Some(pool) = self.pool.take() else {
            return Ok(());
        };
        // SAFETY: the only connection on this VFS was closed by the caller before (close and
        // cleanup close it first; a connection that failed to close keeps its files open, and
        // uninstall then fails with an error instead of freeing anything); no VFS pointer is
        // kept anywhere; this worker is single-threaded.
        let uninstalled = unsafe { pool.uninstall() };
        if let Err(e) = uninstalled {
            self.pool = Some(pool);
            return Err(sahpool_error(e));
        }
        Ok(())
    }
}

impl SqlBackend for SahpoolBackend {
    fn name(&self) -> String {
        "sahpool".to_owned()
    }

    fn durability(&self) -> &'static str {
        durability::FLUSH_PER_SYNC
    }

    fn persistent(&self) -> bool {
        true
    }

    fn meta(&self) -> BackendMeta {
        BackendMeta {
            package: Some(packages::SQLITE_WASM_VFS.0.to_owned()),
            version: Some(packages::SQLITE_WASM_VFS.1.to_owned()),
            durability_settings: Some(format!(
                "{PRAGMA_SETTINGS}; OPFS flush() on every xSync; a pool of pre-opened OPFS files"
            )),
            ..base_meta(self, MEMVFS_NAME)
        }
    }

    async fn prepare(&mut self) -> Result<(), BenchError> {
        self.uninstall()?;
        if let Some(old) = self.dir.take() {
            remove_opfs_dir(&old).await?;
        }
        let n = next_id();
        let dir = format!("{}/sahpool-{n}", self.root);
        remove_opfs_dir(&dir).await?;
        self.dir = Some(dir);
        self.vfs_name = Some(format!("bench-sahpool-{}-{n}", random_tag()));
        Ok(())
    }

    async fn open(&mut self) -> Result<Connection, BenchError> {
        if self.pool.is_some() {
            return Err(lifecycle(self, "open while already open"));
        }
        let (Some(dir), Some(name)) = (self.dir.clone(), self.vfs_name.clone()) else {
            return Err(lifecycle(self, "open before prepare"));
        };
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(&name)
            .directory(&dir)
            .build();
        let pool = sahpool::install::<WasmOsCallback>(&cfg, false)
            .await
            .map_err(sahpool_error)?;
        self.pool = Some(pool);
        open_db(DB_NAME, &name)
    }

    /// Nothing is pending: every commit flushed before it returned.
    async fn sync(&mut self, _conn: &Connection) -> Result<(), BenchError> {
        Ok(())
    }

    async fn close(&mut self, conn: Connection) -> Result<(), BenchError> {
        close_conn(conn)?;
        self.uninstall()
    }

    /// The pool's files: the database's with its 4 KiB header, and the pool's spare files.
    async fn stored_bytes(&mut self) -> Result<Option<u64>, BenchError> {
        match &self.dir {
            Some(dir) => opfs_dir_bytes(dir).await,
            None => Ok(None),
        }
    }

    async fn cleanup(&mut self) -> Result<(), BenchError> {
        let uninstalled = self.uninstall();
        let removed = match self.dir.take() {
            Some(dir) => remove_opfs_dir(&dir).await,
            None => Ok(()),
        };
        self.vfs_name = None;
        uninstalled?;
        removed
    }
}

// ----------------------------------------------------------------------------------------
// sqlite-wasm-rs memory VFS
// ----------------------------------------------------------------------------------------

/// Name under which sqlite-wasm-rs registers its memory VFS (at SQLite initialization).
pub const MEMVFS: &str = "memvfs";

/// The sqlite-wasm-rs memory VFS (`memvfs`): the database and its rollback journal are files
/// in the worker's memory, `journal_mode=DELETE` as everywhere else. The memory-only reference:
/// not persistent. Its files would outlive the connection inside the worker, so close removes
/// them: nothing outlives the connection, and there is nothing to reopen (the runner skips
/// sync, reopen and verification; the result shows them as `null`, not applicable).
///
/// [`MemvfsBackend::twin`] is the same backend under [`MEMVFS_TWIN_NAME`], paired with this
/// one: the A/A control.
#[derive(Debug, Default)]
pub struct MemvfsBackend {
    file: Option<String>,
    /// The A/A control ([`MEMVFS_TWIN_NAME`]), not the reference.
    twin: bool,
}

impl MemvfsBackend {
    /// The A/A control: the reference again, under [`MEMVFS_TWIN_NAME`], with the reference as
    /// its reference.
    pub fn twin() -> Self {
        Self {
            file: None,
            twin: true,
        }
    }

    /// Removes the database and its journal from the memory VFS.
    fn remove_files(&self) -> Result<(), BenchError> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        // SAFETY: called on this worker's only thread, which installed memvfs (SQLite's
        // initialization) and does all SQLite work; nothing else registers VFSes meanwhile.
        let util = match unsafe { MemVfsUtil::get() } {
            Ok(util) => util,
            // SQLite not initialized yet: no file can exist.
            Err(sqlite_wasm_rs::vfs::memvfs::MemVfsError::NotInstalled) => return Ok(()),
            Err(e) => return Err(BenchError::Browser(format!("memvfs: {e}"))),
        };
        for name in [file.clone(), format!("{file}-journal")] {
            // Infallible.
            let _ = util.remove(&name);
        }
        Ok(())
    }
}

impl SqlBackend for MemvfsBackend {
    fn name(&self) -> String {
        crate::backend::memvfs_name(self.twin).to_owned()
    }

    fn durability(&self) -> &'static str {
        durability::NONE
    }

    fn persistent(&self) -> bool {
        false
    }

    fn meta(&self) -> BackendMeta {
        BackendMeta {
            package: Some(packages::SQLITE_WASM_RS.0.to_owned()),
            version: Some(packages::SQLITE_WASM_RS.1.to_owned()),
            durability_settings: Some(format!(
                "{PRAGMA_SETTINGS}; database and journal in the worker's memory"
            )),
            ..base_meta(self, MEMVFS_NAME)
        }
    }

    async fn prepare(&mut self) -> Result<(), BenchError> {
        self.remove_files()?;
        self.file = Some(format!("bench-{}-{}.db", random_tag(), next_id()));
        Ok(())
    }

    async fn open(&mut self) -> Result<Connection, BenchError> {
        match &self.file {
            Some(file) => open_db(file, MEMVFS),
            None => Err(lifecycle(self, "open before prepare")),
        }
    }

    async fn sync(&mut self, _conn: &Connection) -> Result<(), BenchError> {
        Ok(())
    }

    async fn close(&mut self, conn: Connection) -> Result<(), BenchError> {
        close_conn(conn)?;
        self.remove_files()
    }

    async fn reopen(&mut self) -> Result<Connection, BenchError> {
        Err(lifecycle(
            self,
            "not applicable: a memory database does not outlive its connection",
        ))
    }

    async fn cleanup(&mut self) -> Result<(), BenchError> {
        let removed = self.remove_files();
        self.file = None;
        removed
    }
}

// ----------------------------------------------------------------------------------------
// The set
// ----------------------------------------------------------------------------------------

/// Any browser backend (the trait's async methods make it unusable as `dyn`).
#[derive(Debug)]
pub enum BrowserBackend {
    /// The sqlite-wasm-rs memory VFS.
    Memvfs(MemvfsBackend),
    /// sqlite-wasm-vfs `sahpool` on OPFS.
    Sahpool(SahpoolBackend),
    /// Our VFS on OPFS.
    Ours(OursOpfsBackend),
}

impl BrowserBackend {
    /// Every browser backend, reference first: memvfs, sahpool, ours in the six
    /// configurations, the `-exclusive`, `-whole-pages` and `-no-flush-ahead` references, and
    /// the A/A control last. OPFS directories go under `root`.
    pub fn all(root: &str) -> Vec<Self> {
        let mut v = vec![
            Self::Memvfs(MemvfsBackend::default()),
            Self::Sahpool(SahpoolBackend::new(root)),
        ];
        v.extend(OursOpfsBackend::all(root).into_iter().map(Self::Ours));
        // The single-tab references of sharing, Strict in both modes (selected only by a filter
        // that says `exclusive`, or by none: `RunConfig::selects_backend`).
        for mode in [BufferMode::Disk, BufferMode::Memory] {
            v.push(Self::Ours(OursOpfsBackend::exclusive(
                root,
                mode,
                Durability::Strict,
            )));
        }
        // What patches save, Strict in both modes (selected only by a filter that says
        // `whole-pages`).
        for mode in [BufferMode::Disk, BufferMode::Memory] {
            v.push(Self::Ours(OursOpfsBackend::whole_pages(
                root,
                mode,
                Durability::Strict,
            )));
        }
        // What flushing ahead saves, Balanced (the level that hints) in both modes (selected
        // only by a filter that says `no-flush-ahead`).
        for mode in [BufferMode::Disk, BufferMode::Memory] {
            v.push(Self::Ours(OursOpfsBackend::no_flush_ahead(
                root,
                mode,
                Durability::Balanced,
            )));
        }
        // The A/A control (selected only by a filter that says `twin`).
        v.push(Self::Memvfs(MemvfsBackend::twin()));
        v
    }

    /// Times our backends' storage calls ([`OursOpfsBackend::time_calls`]); the others have
    /// none of ours to time.
    pub fn time_calls(&mut self, on: bool) {
        if let Self::Ours(b) = self {
            b.time_calls(on);
        }
    }
}

crate::backend::delegate_sql_backend!(BrowserBackend {
    Memvfs,
    Sahpool,
    Ours
});

// ----------------------------------------------------------------------------------------
// Environment
// ----------------------------------------------------------------------------------------

fn global_get(path: &[&str]) -> Option<JsValue> {
    let mut v: JsValue = js_sys::global().into();
    for key in path {
        if v.is_undefined() || v.is_null() {
            return None;
        }
        v = Reflect::get(&v, &JsValue::from_str(key)).ok()?;
    }
    (!v.is_undefined() && !v.is_null()).then_some(v)
}

/// The smallest positive step of `performance.now()` seen over many consecutive readings, in
/// microseconds: the timer resolution as this worker sees it (browsers coarsen the clock, to
/// 5 µs or 100 µs in Chromium and 20 µs or 1 ms in Firefox depending on cross-origin
/// isolation). Reads until 1,000 steps or 200 ms have passed. `None` without `performance`.
pub fn timer_resolution_us() -> Option<f64> {
    let performance = global_get(&["performance"])?;
    let now: Function = Reflect::get(&performance, &JsValue::from_str("now"))
        .ok()?
        .dyn_into()
        .ok()?;
    let read = || now.call0(&performance).ok().and_then(|v| v.as_f64());
    let start = read()?;
    let mut last = start;
    let mut smallest = f64::INFINITY;
    let mut steps = 0;
    while steps < 1_000 && last - start < 200.0 {
        let t = read()?;
        if t > last {
            smallest = smallest.min(t - last);
            steps += 1;
            last = t;
        }
    }
    // Milliseconds to microseconds, rounded to 1 ns (the float noise of the subtraction).
    smallest.is_finite().then(|| (smallest * 1e6).round() / 1e3)
}

/// Browser name and version from a user agent string: the first of Edge, Opera, Firefox,
/// Chrome (`HeadlessChrome` is `Chrome Headless`), Chromium, Safari (version from `Version/`)
/// that it names. `None` if none.
pub fn parse_user_agent(ua: &str) -> Option<(String, String)> {
    let version_after = |token: &str| -> Option<String> {
        let start = ua.find(token)? + token.len();
        let version: String = ua[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
            .collect();
        (!version.is_empty()).then_some(version)
    };
    let known: [(&str, &str); 9] = [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("Firefox/", "Firefox"),
        ("FxiOS/", "Firefox"),
        ("HeadlessChrome/", "Chrome Headless"),
        ("CriOS/", "Chrome"),
        ("Chrome/", "Chrome"),
        ("Chromium/", "Chromium"),
        ("Version/", "Safari"),
    ];
    known.iter().find_map(|(token, name)| {
        if *name == "Safari" && !ua.contains("Safari/") {
            return None;
        }
        version_after(token).map(|v| ((*name).to_owned(), v))
    })
}

/// Chromium's brands with their full versions
/// (`navigator.userAgentData.getHighEntropyValues(["fullVersionList"])`), where the browser
/// offers them: the user agent string only carries the major version (`156.0.0.0`) and says
/// `Chrome` for Chromium too.
async fn full_version_list() -> Option<Vec<(String, String)>> {
    let data = global_get(&["navigator", "userAgentData"])?;
    let method: Function = Reflect::get(&data, &JsValue::from_str("getHighEntropyValues"))
        .ok()?
        .dyn_into()
        .ok()?;
    let hints = Array::of1(&JsValue::from_str("fullVersionList"));
    let promise: Promise = method.call1(&data, &hints).ok()?.dyn_into().ok()?;
    let values = JsFuture::from(promise).await.ok()?;
    let list: Array = Reflect::get(&values, &JsValue::from_str("fullVersionList"))
        .ok()?
        .dyn_into()
        .ok()?;
    Some(
        list.iter()
            .filter_map(|b| {
                let get = |k: &str| Reflect::get(&b, &JsValue::from_str(k)).ok()?.as_string();
                Some((get("brand")?, get("version")?))
            })
            .collect(),
    )
}

/// Refines a Chromium-family name and version from the user agent with the brand list: the
/// product (`Google Chrome`, `Microsoft Edge`, `Opera`, else `Chromium`) and its full version,
/// if its major version agrees with the user agent's. `Headless` is kept.
pub fn refine_with_brands(
    (name, version): (String, String),
    brands: &[(String, String)],
) -> (String, String) {
    let headless = name.ends_with(" Headless");
    let family = name.trim_end_matches(" Headless");
    if !matches!(family, "Chrome" | "Chromium" | "Edge" | "Opera") {
        return (name, version);
    }
    let products = [
        ("Microsoft Edge", "Edge"),
        ("Opera", "Opera"),
        ("Google Chrome", "Chrome"),
        ("Chromium", "Chromium"),
    ];
    let major = |v: &str| v.split('.').next().map(str::to_owned);
    for (brand, product) in products {
        if let Some((_, full)) = brands.iter().find(|(b, _)| b == brand) {
            if major(full) != major(&version) {
                break;
            }
            let name = if headless {
                format!("{product} Headless")
            } else {
                product.to_owned()
            };
            return (name, full.clone());
        }
    }
    (name, version)
}

/// `navigator.storage.persisted()`, where the worker has it.
async fn storage_persisted() -> Option<bool> {
    let storage = global_get(&["navigator", "storage"])?;
    let method: Function = Reflect::get(&storage, &JsValue::from_str("persisted"))
        .ok()?
        .dyn_into()
        .ok()?;
    let promise: Promise = method.call0(&storage).ok()?.dyn_into().ok()?;
    JsFuture::from(promise).await.ok()?.as_bool()
}

/// The environment of this worker, the one record every browser result holds: user agent,
/// browser and version, OS, `hardwareConcurrency`, `deviceMemory`, timer resolution (measured
/// here), `crossOriginIsolated`, `isSecureContext`, OPFS present, `navigator.storage`
/// estimate and persistence, SQLite version, and `commit` as given by the caller.
pub async fn environment(commit: Option<String>) -> Environment {
    let string = |path: &[&str]| global_get(path).and_then(|v| v.as_string());
    let user_agent = string(&["navigator", "userAgent"]);
    let mut parsed = user_agent.as_deref().and_then(parse_user_agent);
    if let (Some(p), Some(brands)) = (parsed.clone(), full_version_list().await) {
        parsed = Some(refine_with_brands(p, &brands));
    }
    let (browser, browser_version) = parsed.unzip();
    let os = string(&["navigator", "userAgentData", "platform"])
        .filter(|p| !p.is_empty())
        .or_else(|| string(&["navigator", "platform"]))
        .filter(|p| !p.is_empty());
    let cpu_count = global_get(&["navigator", "hardwareConcurrency"])
        .and_then(|v| v.as_f64())
        .and_then(|n| {
            // A small positive integer; anything else is not a count.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let n_u32 = n as u32;
            (n >= 1.0 && n <= f64::from(u32::MAX) && f64::from(n_u32) == n).then_some(n_u32)
        });
    let flag = |path: &[&str]| global_get(path).and_then(|v| v.as_bool());
    let estimate = OpfsStorage::estimate().await.ok();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let started_unix_s = Some((js_sys::Date::now() / 1e3) as u64);
    Environment {
        runtime: Some("browser".to_owned()),
        os,
        arch: Some("wasm32".to_owned()),
        cpu_count,
        device_memory_gb: global_get(&["navigator", "deviceMemory"]).and_then(|v| v.as_f64()),
        sqlite_version: Some(rusqlite::version().to_owned()),
        commit,
        user_agent,
        browser,
        browser_version,
        timer_resolution_us: timer_resolution_us(),
        cross_origin_isolated: flag(&["crossOriginIsolated"]),
        secure_context: flag(&["isSecureContext"]),
        opfs_available: Some(
            global_get(&["navigator", "storage", "getDirectory"]).is_some_and(|f| f.is_function()),
        ),
        storage_usage_bytes: estimate.and_then(|e| e.usage_bytes),
        storage_quota_bytes: estimate.and_then(|e| e.quota_bytes),
        storage_persisted: storage_persisted().await,
        started_unix_s,
        ..Environment::default()
    }
}

// ----------------------------------------------------------------------------------------
// The benchmark entry point
// ----------------------------------------------------------------------------------------

/// What [`run_browser`] runs. `Default`: the full-size suite and batch, 1 warm-up and 5
/// measured rounds, every backend, OPFS root `bench-sql`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserConfig {
    /// Measured rounds (at least 1).
    pub runs: u32,
    /// Warm-up rounds, excluded from statistics (kept in the result).
    pub warmup: u32,
    /// PRNG seed of the suite and the batch.
    pub seed: u64,
    /// Seed of the round orders.
    pub order_seed: u64,
    /// Divide every count by this (1 = full size; anything else is a smoke run, marked so in
    /// the result).
    pub scale: u32,
    /// Backend filters, with the rule of `RunConfig::selects_backend`
    /// ([`bench_results::config::backend_selected`]): names that contain one of them, the
    /// lever references only when a filter names them (empty: all but the `-whole-pages`
    /// references).
    pub backends: Vec<String>,
    /// OPFS directory under which every run's directories are made. It is removed at the start
    /// (leftovers of an interrupted run) and at the end.
    pub opfs_root: String,
    /// Source commit of the build, recorded in the environment.
    pub commit: Option<String>,
}

impl Default for BrowserConfig {
    fn default() -> Self {
        Self {
            runs: 5,
            warmup: 1,
            seed: DEFAULT_SEED,
            order_seed: bench_results::stats::ORDER_SEED,
            scale: 1,
            backends: Vec::new(),
            opfs_root: "bench-sql".to_owned(),
            commit: None,
        }
    }
}

/// Runs the 16-case suite and the batch over the selected browser backends
/// ([`run_rounds`]: warm-up rounds, then measured rounds, each backend once per round in a
/// shuffled order, every suite and batch from a fresh state) and returns the environment and
/// the summarized section. A failing backend is recorded in its `error`; the others go on.
///
/// Call it in a dedicated worker. `progress` hears about each workload run before and after.
/// (The page runs its own round loop, with the JavaScript peers as extra contestants; this one
/// is for tests and for pages without peers.)
pub async fn run_browser(
    config: BrowserConfig,
    progress: &mut dyn FnMut(&Progress),
) -> Result<(Environment, SqlSection), BenchError> {
    // Leftovers of an interrupted run (a closed tab mid-run) would only take space.
    remove_root(&config.opfs_root).await?;
    let environment = environment(config.commit.clone()).await;
    let (suite, batch) = crate::workloads(config.seed, config.scale);
    let root = format!("{}/run-{}", config.opfs_root, random_tag());

    let mut backends: Vec<Ours<BrowserBackend>> = BrowserBackend::all(&root)
        .into_iter()
        .filter(|b| bench_results::config::backend_selected(&config.backends, &b.name()))
        .map(Ours)
        .collect();
    if backends.is_empty() {
        return Err(BenchError::Browser(format!(
            "no backend matches {:?}",
            config.backends
        )));
    }
    let plan = Plan {
        runs: config.runs,
        warmup: config.warmup,
        peer_runs: None,
        order_seed: config.order_seed,
        suite: true,
        batch: true,
        batch_repeats: 1,
        data_dir: Some(format!("opfs:{}", config.opfs_root)),
        precision: None,
    };
    let mut sql = run_rounds(&mut backends, &plan, &suite, &batch, progress).await;
    // Every backend's cleanup removed its own directory; this removes the run's and the root.
    remove_opfs_dir(&root).await?;
    remove_root(&config.opfs_root).await?;
    sql.summarize(&bench_results::Bootstrap::default());
    Ok((environment, sql))
}

/// Removes the OPFS root of [`BrowserConfig`] unless another tab's benchmark holds a file in it
/// (then each keeps to its own `run-<tag>` directory).
pub async fn remove_root(root: &str) -> Result<(), BenchError> {
    match OpfsStorage::remove_dir(root).await {
        Ok(()) | Err(StorageError::Busy { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
