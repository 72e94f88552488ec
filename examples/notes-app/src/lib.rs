//! # notes-app: the Rust side of the template's dedicated worker
//!
//! `www/worker.js` loads this module and calls [`NotesDb`]; the page (`www/app.js`) talks to the
//! worker with messages and never touches SQLite or OPFS itself. OPFS sync access handles exist
//! only in dedicated workers, and SQLite blocks the thread it runs on, so the page stays
//! responsive.
//!
//! [`NotesDb::open`] installs opfs-vfs once over an OPFS directory ([`opfs_vfs::web::install`])
//! and opens `notes.db` with rusqlite through the VFS name it returns. rusqlite is the one
//! opfs-vfs re-exports (`opfs_vfs::sqlite::rusqlite`), so its SQLite is the one the VFS was
//! built for; no rusqlite dependency of your own is needed.
//!
//! Every tab of the app has its own worker and its own connection to the same database: the
//! volume is *shared* (the default, `Sharing::Shared`). One worker at a time holds it; each
//! request takes its turn with [`Installed::run`], which waits for the volume (another tab
//! hands it over as soon as it is idle), catches up with what the other tabs committed, and
//! runs the SQL. Alone in one tab, the volume simply stays held and nothing is paid.
//!
//! Errors reach JavaScript as `Error` objects whose `name` says what happened:
//! `VolumeBusy` (another tab did not hand the volume over in time), `Unsupported` (no OPFS
//! here, not a dedicated worker), `VolumeError` (I/O, corruption), `StorageFull` (a write
//! found the storage quota used up; nothing committed is lost and the volume keeps working),
//! `SqliteError`, `Closed`, `BadArgument`.
//!
//! This crate only builds for `wasm32-unknown-unknown` (`./build.sh` passes the target); on
//! any other target it is empty.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;

use opfs_vfs::sqlite::rusqlite::{self, params, Connection, OpenFlags};
use opfs_vfs::web::{install, InstallError, InstallOptions, Installed, Sharing};
use opfs_vfs::{BufferMode, Durability};
use serde::Serialize;
use wasm_bindgen::prelude::*;

/// The database file inside the volume.
const DATABASE: &str = "notes.db";

/// The VFS name connections select (any name unique in this worker).
const VFS_NAME: &str = "notes-app";

/// A JavaScript `Error` with `name` set, so the page can tell "busy" from other failures.
fn js_error(name: &str, message: impl Display) -> JsValue {
    let e = js_sys::Error::new(&message.to_string());
    e.set_name(name);
    e.into()
}

fn install_error(e: InstallError) -> JsValue {
    let name = match &e {
        InstallError::Busy { .. } => "VolumeBusy",
        InstallError::Unsupported { .. } => "Unsupported",
        InstallError::Closed => "Closed",
        _ => "VolumeError",
    };
    js_error(name, e)
}

/// SQLite errors; `SQLITE_FULL` gets its own name, `StorageFull`: the origin's storage quota
/// (or the disk) ran out. The failed transaction was rolled back, everything committed before
/// is intact, and writes succeed again once space is freed (e.g. notes deleted).
fn sqlite_error(e: rusqlite::Error) -> JsValue {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull) {
        return js_error("StorageFull", e);
    }
    js_error("SqliteError", e)
}

/// The durability a page asked for (`?durability=` on the page's URL, passed on by the
/// worker): `strict` (the default), `relaxed` or `balanced`.
fn parse_durability(name: Option<&str>) -> Result<Durability, JsValue> {
    match name {
        None | Some("") | Some("strict") => Ok(Durability::Strict),
        Some("relaxed") => Ok(Durability::Relaxed),
        Some("balanced") => Ok(Durability::Balanced),
        Some(other) => Err(js_error(
            "BadArgument",
            format!("unknown durability {other:?}: strict, relaxed or balanced"),
        )),
    }
}

/// The buffer mode a page asked for (`?buffer_mode=`, passed on by the worker): `memory` (the
/// default: file contents held in memory, reads never touch OPFS) or `disk` (bounded memory).
fn parse_buffer_mode(name: Option<&str>) -> Result<BufferMode, JsValue> {
    match name {
        None | Some("") | Some("memory") => Ok(BufferMode::Memory),
        Some("disk") => Ok(BufferMode::Disk),
        Some(other) => Err(js_error(
            "BadArgument",
            format!("unknown buffer mode {other:?}: memory or disk"),
        )),
    }
}

fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    // Integers beyond 2^53 fail here instead of being rounded.
    serde_wasm_bindgen::to_value(value).map_err(|e| js_error("BadArgument", e))
}

/// One note as the page sees it.
#[derive(Debug, Serialize)]
struct Note {
    id: i64,
    text: String,
    /// SQLite's `datetime('now')`, UTC, `YYYY-MM-DD HH:MM:SS`.
    created: String,
}

/// Physical OPFS calls since the volume was mounted, and what SQLite asked of the VFS: the
/// debug hook behind the page's `stats` request (a test counts flushes per commit with it).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Stats {
    /// `FileSystemSyncAccessHandle.flush()` calls, both physical files.
    flushes: u64,
    /// `write()` calls.
    writes: u64,
    /// Bytes passed to `write()`.
    written_bytes: u64,
    /// `read()` calls.
    reads: u64,
    /// Volume commits that wrote something.
    volume_commits: u64,
    /// SQLite transactions committed as one atomic batch (`SQLITE_FCNTL_COMMIT_ATOMIC_WRITE`).
    atomic_commits: u64,
    /// SQLite `xSync` calls on database and journal files (each a volume commit, which writes
    /// nothing when an atomic batch has already committed).
    syncs: u64,
    /// The volume's space: log length, data file length and its unused part, in bytes; the
    /// logical files' total length; commits and checkpoints that failed (e.g. storage full).
    log_bytes: u64,
    data_bytes: u64,
    free_bytes: u64,
    logical_bytes: u64,
    checkpoints: u64,
    failed_commits: u64,
    failed_checkpoints: u64,
}

/// The worker's database: `notes.db` on the OPFS volume, and the volume itself.
#[wasm_bindgen]
#[derive(Debug)]
pub struct NotesDb {
    inner: Rc<Inner>,
}

#[derive(Debug)]
struct Inner {
    // Declared before `installed`, so it is dropped first: the connection must be closed
    // before the volume is.
    conn: RefCell<Option<Connection>>,
    installed: RefCell<Installed>,
}

/// Runs `f` on the connection while this worker holds the volume (waiting for its turn).
async fn with_conn<R>(
    inner: &Rc<Inner>,
    f: impl FnOnce(&Connection) -> Result<R, JsValue>,
) -> Result<R, JsValue> {
    let guard = {
        let installed = inner.installed.try_borrow().map_err(|_| busy_here())?;
        // The borrow ends before the await below: take the future out first.
        installed.acquire()
    }
    .await
    .map_err(install_error)?;
    let conn = inner.conn.try_borrow().map_err(|_| busy_here())?;
    let conn = conn
        .as_ref()
        .ok_or_else(|| js_error("Closed", "the database is closed"))?;
    let r = f(conn);
    drop(guard);
    r
}

fn busy_here() -> JsValue {
    js_error("BadArgument", "a request is already running in this worker")
}

#[wasm_bindgen]
impl NotesDb {
    /// Installs the VFS over OPFS directory `directory` (created if absent) and opens
    /// `notes.db`, creating its table on first use. With another tab holding the volume, it
    /// waits for its turn (another tab hands over as soon as it is idle); `VolumeBusy` after
    /// a few seconds if that tab never does (a page kept in the back-forward cache).
    ///
    /// `durability`: `"strict"` (also when absent), `"relaxed"` or `"balanced"`; see
    /// [`Durability`] for what a crash may lose under each. `space_limit`: an optional budget
    /// in bytes (decimal) for the database's files, on top of the origin's quota; past it new
    /// notes fail with `StorageFull` while deletes still work. `buffer_mode`: `"memory"` (also
    /// when absent) or `"disk"`.
    pub async fn open(
        directory: String,
        durability: Option<String>,
        space_limit: Option<String>,
        buffer_mode: Option<String>,
    ) -> Result<NotesDb, JsValue> {
        let durability = parse_durability(durability.as_deref())?;
        let buffer_mode = parse_buffer_mode(buffer_mode.as_deref())?;
        let space_limit = match space_limit.as_deref() {
            None | Some("") => None,
            Some(s) => Some(
                s.parse::<u64>()
                    .map_err(|e| js_error("BadArgument", format!("space_limit {s:?}: {e}")))?,
            ),
        };
        let installed = install(InstallOptions {
            vfs_name: VFS_NAME.into(),
            directory,
            // Memory (the default): file contents in memory, reads never touch OPFS. Fine while
            // the database fits in memory; BufferMode::Disk for bounded memory.
            buffer_mode,
            // Strict (the default): every commit is written and flushed before the INSERT
            // returns, so it survives a crash of the tab, of the browser and a power loss.
            durability,
            // Other tabs of the app use the same database, taking turns.
            sharing: Sharing::Shared,
            busy_timeout: std::time::Duration::from_secs(5),
            space_limit,
            ..InstallOptions::default()
        })
        .await
        .map_err(install_error)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let conn = Connection::open_with_flags_and_vfs(DATABASE, flags, installed.vfs_name())
            .map_err(sqlite_error)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS notes(
                 id INTEGER PRIMARY KEY,
                 text TEXT NOT NULL,
                 created TEXT NOT NULL DEFAULT (datetime('now')));",
        )
        .map_err(sqlite_error)?;
        Ok(NotesDb {
            inner: Rc::new(Inner {
                conn: RefCell::new(Some(conn)),
                installed: RefCell::new(installed),
            }),
        })
    }

    /// Adds a note and returns its id: one autocommit INSERT, i.e. one SQLite transaction.
    pub fn add(&self, text: String) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let text = text.trim().to_owned();
            if text.is_empty() {
                return Err(js_error("BadArgument", "a note needs some text"));
            }
            with_conn(&inner, |conn| {
                conn.execute("INSERT INTO notes(text) VALUES (?1)", params![text])
                    .map_err(sqlite_error)?;
                to_js(&conn.last_insert_rowid())
            })
            .await
        })
    }

    /// Adds several notes in one transaction — all of them or, on any error, none — and
    /// returns their ids (e.g. an import).
    #[wasm_bindgen(js_name = addMany)]
    pub fn add_many(&self, texts: Vec<String>) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let texts: Vec<String> = texts.iter().map(|t| t.trim().to_owned()).collect();
            if texts.iter().any(String::is_empty) {
                return Err(js_error("BadArgument", "every note needs some text"));
            }
            with_conn(&inner, |conn| {
                // The whole transaction runs within one turn of the volume (`with_conn` holds
                // it), so another tab sees all of these notes or none.
                let tx = conn.unchecked_transaction().map_err(sqlite_error)?;
                let mut ids = Vec::with_capacity(texts.len());
                for text in &texts {
                    tx.execute("INSERT INTO notes(text) VALUES (?1)", params![text])
                        .map_err(sqlite_error)?;
                    ids.push(tx.last_insert_rowid());
                }
                tx.commit().map_err(sqlite_error)?;
                to_js(&ids)
            })
            .await
        })
    }

    /// Every note, newest first, as `{ id, text, created }` objects.
    pub fn list(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            with_conn(&inner, |conn| {
                let mut stmt = conn
                    .prepare("SELECT id, text, created FROM notes ORDER BY id DESC")
                    .map_err(sqlite_error)?;
                let notes = stmt
                    .query_map([], |row| {
                        Ok(Note {
                            id: row.get(0)?,
                            text: row.get(1)?,
                            created: row.get(2)?,
                        })
                    })
                    .map_err(sqlite_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(sqlite_error)?;
                to_js(&notes)
            })
            .await
        })
    }

    /// Deletes note `id`; resolves to whether it existed.
    pub fn remove(&self, id: f64) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            // Ids come back from JavaScript as numbers: accept exact integers only.
            if id.fract() != 0.0 || !(1.0..=9_007_199_254_740_991.0).contains(&id) {
                return Err(js_error("BadArgument", format!("not a note id: {id}")));
            }
            let id = id as i64;
            with_conn(&inner, |conn| {
                let deleted = conn
                    .execute("DELETE FROM notes WHERE id = ?1", params![id])
                    .map_err(sqlite_error)?;
                Ok(JsValue::from_bool(deleted > 0))
            })
            .await
        })
    }

    /// The debug hook: `{ flushes, writes, writtenBytes, reads, volumeCommits, atomicCommits,
    /// syncs }`, counted since the volume was mounted (compare two readings around an operation
    /// to see what it cost), and the volume's space now: `{ logBytes, dataBytes, freeBytes,
    /// logicalBytes, checkpoints, failedCommits, failedCheckpoints }`.
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let installed = self.inner.installed.try_borrow().map_err(|_| busy_here())?;
        let calls = installed
            .with_volume(|v| Ok((v.counters().total(), v.stats())))
            .map_err(install_error)?;
        let (physical, volume) = calls;
        let vfs = installed.vfs().map_err(install_error)?.stats();
        to_js(&Stats {
            flushes: physical.flushes,
            writes: physical.writes,
            written_bytes: physical.written_bytes,
            reads: physical.reads,
            volume_commits: volume.commits,
            atomic_commits: vfs.atomic_commits,
            syncs: vfs.syncs,
            log_bytes: volume.log_bytes,
            data_bytes: volume.data_blocks * opfs_vfs::format::PAGE,
            free_bytes: volume.free_blocks * opfs_vfs::format::PAGE,
            logical_bytes: volume.logical_bytes,
            checkpoints: volume.checkpoints,
            failed_commits: volume.failed_commits,
            failed_checkpoints: volume.failed_checkpoints,
        })
    }

    /// `PRAGMA compile_options` of the SQLite this module was built with, one string each
    /// (e.g. whether it has `ENABLE_BATCH_ATOMIC_WRITE`).
    #[wasm_bindgen(js_name = compileOptions)]
    pub fn compile_options(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            with_conn(&inner, |conn| {
                let mut stmt = conn
                    .prepare("PRAGMA compile_options")
                    .map_err(sqlite_error)?;
                let options = stmt
                    .query_map([], |row| row.get::<_, String>(0))
                    .map_err(sqlite_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(sqlite_error)?;
                to_js(&options)
            })
            .await
        })
    }

    /// `PRAGMA integrity_check`: `["ok"]`, or the problems SQLite found, one string each.
    #[wasm_bindgen(js_name = integrityCheck)]
    pub fn integrity_check(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            with_conn(&inner, |conn| {
                let mut stmt = conn
                    .prepare("PRAGMA integrity_check")
                    .map_err(sqlite_error)?;
                let rows = stmt
                    .query_map([], |row| row.get::<_, String>(0))
                    .map_err(sqlite_error)?
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(sqlite_error)?;
                to_js(&rows)
            })
            .await
        })
    }

    /// The database file's bytes (a consistent copy: taken between transactions), e.g. for a
    /// download; resolves to a `Uint8Array`.
    pub fn export(&self) -> js_sys::Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            with_conn(&inner, |_| {
                let installed = inner.installed.try_borrow().map_err(|_| busy_here())?;
                let bytes = installed.export(DATABASE).map_err(install_error)?;
                Ok(js_sys::Uint8Array::from(bytes.as_slice()).into())
            })
            .await
        })
    }

    /// Closes the connection and the volume (flush, checkpoint, release the OPFS files and the
    /// turn, so that another tab or worker can take them). Terminating the worker releases them
    /// too.
    pub fn close(&self) -> Result<(), JsValue> {
        drop(
            self.inner
                .conn
                .try_borrow_mut()
                .map_err(|_| busy_here())?
                .take(),
        );
        self.inner
            .installed
            .try_borrow_mut()
            .map_err(|_| busy_here())?
            .close()
            .map_err(install_error)
    }
}
