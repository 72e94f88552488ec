//! The one seam between the harness and a storage: [`SqlBackend`].
//!
//! A backend owns whatever holds the database (a temp directory, a mounted volume and its VFS
//! registration, an OPFS directory) and hands out `rusqlite` connections. The harness
//! ([`crate::runner`]) calls the methods in this order, timing each call separately:
//!
//! ```text
//! prepare → open → workload… → sync → close → reopen → verify… → close → cleanup
//!  (timed)  (timed) (timed)    (timed) (timed)  (timed)  (timed)  (untimed) (untimed)
//! ```
//!
//! `sync` and `reopen` are skipped for a backend that is not [`persistent`](SqlBackend::persistent).
//!
//! The lifecycle methods are `async` because browser backends await OPFS (opening directories,
//! installing a pool); native ones are ready at once and run under [`crate::block_on`]. The
//! workload itself is synchronous `rusqlite` on the returned connection, in the browser too
//! (OPFS sync access handles). Everything is single-threaded: futures are not `Send`.

use bench_results::sql::{BackendMeta, Engine, PhysicalCounters};
use rusqlite::{Connection, OpenFlags};

use crate::BenchError;

/// A volume's counters, summed over its physical files, as a result records them (our
/// backends, natively and in the browser, and bench-fs' lifecycle).
pub fn physical_counters(c: &opfs_vfs::storage::Counters) -> PhysicalCounters {
    let t = c.total();
    PhysicalCounters {
        flushes: t.flushes,
        writes: t.writes,
        bytes_written: t.written_bytes,
        flushed_bytes: t.flushed_bytes,
        reads: t.reads,
        read_ns: t.read_ns,
        write_ns: t.write_ns,
        flush_ns: t.flush_ns,
        other_ns: t.other_ns,
    }
}

/// File name of the database inside a backend's storage.
pub const DB_NAME: &str = "bench.db";

/// Name of the memory reference: SQLite over rsqlite-vfs' memory VFS (`memvfs`), the same
/// backend in the browser (`browser::MemvfsBackend`, sqlite-wasm-rs re-exports rsqlite-vfs)
/// and natively (`native::MemvfsBackend`), so ratios to it mean the same on both.
pub const MEMVFS_NAME: &str = "sqlite-memvfs";

/// Name of the A/A control: the memory reference a second time, its files beside the
/// reference's in the same memory VFS, run once in every round like any backend and paired
/// with the reference. It differs from the reference in nothing but its name and its place in
/// each round's order, so its ratio to the reference (1.00 if the method had no bias and no
/// noise) shows what the method reports when there is no difference to find. Selected only by
/// a filter that says `twin` (`bench_results::goals::TWIN_SUFFIX`).
pub const MEMVFS_TWIN_NAME: &str = "sqlite-memvfs-twin";

/// The name of the memory reference ([`MEMVFS_NAME`]) or of its twin ([`MEMVFS_TWIN_NAME`]),
/// for the browser's and the native memvfs backends alike.
pub fn memvfs_name(twin: bool) -> &'static str {
    if twin {
        MEMVFS_TWIN_NAME
    } else {
        MEMVFS_NAME
    }
}

/// Pragmas every connection gets after opening: SQLite's defaults, stated so that a changed
/// default cannot change what is measured. `:memory:` keeps `journal_mode=memory` whatever is
/// asked.
pub const PRAGMAS: &str = "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;";

/// Durability labels recorded in results: what a `COMMIT` that returned guarantees.
pub mod durability {
    /// Nothing outlives the connection.
    pub const NONE: &str = "none: in memory, lost on close";
    /// SQLite's unix VFS, `synchronous=FULL`: `fsync` before `COMMIT` returns.
    pub const FSYNC_PER_COMMIT: &str = "power-loss safe: fsync per commit (synchronous=FULL)";
    /// Our VFS at `Durability::Strict`: the commit is written and flushed before it returns.
    pub const STRICT: &str = "power-loss safe: strict, one flush per commit";
    /// Our VFS at `Durability::Relaxed`: written before it returns (survives a crash of the
    /// process or tab), flushed later; power loss may lose a suffix of commits, never
    /// consistency.
    pub const RELAXED: &str = "crash safe, power loss may lose latest commits: relaxed";
    /// Our VFS at `Durability::Balanced`: commits stay in the volume's memory until a buffer's
    /// worth has accumulated or a delay has passed; a crash of the tab may lose a suffix of
    /// commits, never consistency.
    pub const BALANCED: &str = "tab crash may lose latest commits: balanced";
    /// sqlite-wasm-vfs `sahpool` (browser), `journal_mode=DELETE`, `synchronous=FULL`: every
    /// `xSync` SQLite issues is an OPFS `flush()` before `COMMIT` returns.
    pub const FLUSH_PER_SYNC: &str =
        "power-loss safe: OPFS flush on every xSync (synchronous=FULL)";
}

/// The settings behind every connection's durability: [`PRAGMAS`], as free text.
pub const PRAGMA_SETTINGS: &str = "journal_mode=delete, synchronous=full";

/// Version of the workspace crates (ours: `opfs-vfs` has the same workspace version).
pub const OURS_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Package and version of the dependencies that implement the baselines, as in `Cargo.lock`
/// (a test checks them against it).
pub mod packages {
    /// Our engine.
    pub const OURS: &str = "opfs-vfs";
    /// The sahpool VFS.
    pub const SQLITE_WASM_VFS: (&str, &str) = ("sqlite-wasm-vfs", "0.3.0");
    /// SQLite for wasm and its memory VFS.
    pub const SQLITE_WASM_RS: (&str, &str) = ("sqlite-wasm-rs", "0.6.3");
    /// rusqlite (natively: SQLite's own `:memory:` and unix VFS, bundled).
    pub const RUSQLITE: (&str, &str) = ("rusqlite", "0.43.0");
}

/// [`BackendMeta`] from the trait's name, durability and persistence, with the memory
/// reference `reference` (SQLite engine); backends add package, version and settings.
pub fn base_meta(b: &impl SqlBackend, reference: &str) -> BackendMeta {
    BackendMeta {
        name: b.name(),
        engine: Engine::Sqlite,
        reference: Some(reference.to_owned()),
        package: None,
        version: None,
        durability: b.durability().to_owned(),
        durability_settings: Some(PRAGMA_SETTINGS.to_owned()),
        persistent: b.persistent(),
        skipped: None,
    }
}

/// The [`BackendMeta`] of our VFS in one configuration.
pub fn ours_meta(
    b: &impl SqlBackend,
    reference: &str,
    mode: opfs_vfs::BufferMode,
    level: opfs_vfs::Durability,
) -> BackendMeta {
    BackendMeta {
        package: Some(packages::OURS.to_owned()),
        version: Some(OURS_VERSION.to_owned()),
        durability_settings: Some(format!(
            "{PRAGMA_SETTINGS}; batch-atomic commits (one volume commit per transaction); \
             Durability::{level:?}, BufferMode::{mode:?}"
        )),
        ..base_meta(b, reference)
    }
}

/// Name of our VFS in one configuration: `ours-<buffer mode>-<durability>`, lower case
/// (`ours-disk-strict`), the same natively and in the browser.
pub fn ours_name(mode: opfs_vfs::BufferMode, level: opfs_vfs::Durability) -> String {
    let mode = match mode {
        opfs_vfs::BufferMode::Disk => "disk",
        opfs_vfs::BufferMode::Memory => "memory",
    };
    let level = match level {
        opfs_vfs::Durability::Strict => "strict",
        opfs_vfs::Durability::Relaxed => "relaxed",
        opfs_vfs::Durability::Balanced => "balanced",
    };
    format!("ours-{mode}-{level}")
}

/// The [`durability`] label of our VFS at `level`.
pub fn ours_durability(level: opfs_vfs::Durability) -> &'static str {
    match level {
        opfs_vfs::Durability::Strict => durability::STRICT,
        opfs_vfs::Durability::Relaxed => durability::RELAXED,
        opfs_vfs::Durability::Balanced => durability::BALANCED,
    }
}

/// A place SQLite keeps the benchmark database.
///
/// Contract, for every implementation:
/// - [`prepare`](Self::prepare) leaves a fresh, empty state: nothing from an earlier run is
///   visible afterwards. It may be called again after [`cleanup`](Self::cleanup).
/// - [`open`](Self::open) and [`reopen`](Self::reopen) never wipe anything; every connection
///   they return has [`PRAGMAS`] applied.
/// - At most one connection is out at a time; it comes back through [`close`](Self::close)
///   before the next `open`/`reopen`.
/// - [`cleanup`](Self::cleanup) releases everything `prepare` and `open` acquired; it must
///   succeed after any failure, including with a connection never returned.
#[allow(async_fn_in_trait)] // single-threaded by design: no `Send` bound wanted on the futures
pub trait SqlBackend {
    /// Stable identifier used in results, tables and `--backends` filters
    /// (e.g. `ours-disk-strict`).
    fn name(&self) -> String;

    /// What a returned `COMMIT` guarantees (one of [`durability`]'s labels).
    fn durability(&self) -> &'static str;

    /// Whether the database outlives its connection. If not, `sync` and `reopen` are not
    /// applicable and are skipped.
    fn persistent(&self) -> bool;

    /// Everything a result records about this backend ([`base_meta`], [`ours_meta`]).
    fn meta(&self) -> BackendMeta;

    /// Wipes and sets up a fresh state (timed as preparation).
    async fn prepare(&mut self) -> Result<(), BenchError>;

    /// Initialization: mounts or installs whatever is needed and opens a connection to
    /// [`DB_NAME`] (timed).
    async fn open(&mut self) -> Result<Connection, BenchError>;

    /// After the workload, makes everything committed durable (timed as the explicit sync).
    /// Only called on persistent backends, with the workload's connection still open.
    async fn sync(&mut self, conn: &Connection) -> Result<(), BenchError>;

    /// Closes the connection and unmounts what `open` mounted, so that `reopen` starts from
    /// what is stored (timed).
    async fn close(&mut self, conn: Connection) -> Result<(), BenchError>;

    /// Opens the stored database again after `close` (timed). Persistent backends only.
    async fn reopen(&mut self) -> Result<Connection, BenchError> {
        self.open().await
    }

    /// Releases and removes everything (not timed).
    async fn cleanup(&mut self) -> Result<(), BenchError>;

    /// Physical calls since the current mount, if this backend counts them. The harness
    /// subtracts readings taken around each case.
    fn counters(&self) -> Option<PhysicalCounters> {
        None
    }

    /// Physical bytes written since the last [`open`](Self::open) or
    /// [`reopen`](Self::reopen), if this backend counts them (the scale suite reads it with
    /// the connection still open). Default: [`counters`](Self::counters)' bytes, which count
    /// from the current mount.
    fn bytes_written(&self) -> Option<u64> {
        self.counters().map(|c| c.bytes_written)
    }

    /// Runs the backend's own checkpoint on the open connection, if it has one (ours: the
    /// log's pages written home and the log reset), and returns whether it did. Default: it
    /// has none (`Ok(false)`).
    async fn checkpoint(&mut self, _conn: &Connection) -> Result<bool, BenchError> {
        Ok(false)
    }

    /// Bytes of every file this backend keeps for the database, read at rest (after
    /// [`close`](Self::close), before [`cleanup`](Self::cleanup)); `None`: not persistent
    /// or not readable. Default: `None`.
    async fn stored_bytes(&mut self) -> Result<Option<u64>, BenchError> {
        Ok(None)
    }
}

/// Applies [`PRAGMAS`] to a new connection.
pub fn apply_pragmas(conn: &Connection) -> Result<(), BenchError> {
    // journal_mode returns a row; execute_script steps it.
    crate::execute_script(conn, PRAGMAS)?;
    Ok(())
}

/// Flags every backend's connection is opened with (one thread per connection).
pub(crate) fn open_flags() -> OpenFlags {
    OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
}

/// Opens `file` through the VFS `vfs_name` and applies the pragmas.
pub(crate) fn open_db(file: &str, vfs_name: &str) -> Result<Connection, BenchError> {
    let conn = Connection::open_with_flags_and_vfs(file, open_flags(), vfs_name)?;
    apply_pragmas(&conn)?;
    Ok(conn)
}

/// Closes a connection, keeping SQLite's error.
pub(crate) fn close_conn(conn: Connection) -> Result<(), BenchError> {
    conn.close().map_err(|(_, e)| BenchError::Sql(e))
}

/// A backend's lifecycle went wrong (a call out of order, a file it could not remove).
pub(crate) fn lifecycle(backend: &impl SqlBackend, message: &str) -> BenchError {
    BenchError::Lifecycle {
        backend: backend.name(),
        message: message.to_owned(),
    }
}

/// Implements [`SqlBackend`] for an enum whose every variant wraps one backend, by delegating
/// each method to the wrapped backend. The native and the browser backend sets both use it.
macro_rules! delegate_sql_backend {
    ($enum:ident { $($variant:ident),+ $(,)? }) => {
        impl $crate::backend::SqlBackend for $enum {
            fn name(&self) -> String {
                match self { $($enum::$variant(b) => b.name()),+ }
            }
            fn durability(&self) -> &'static str {
                match self { $($enum::$variant(b) => b.durability()),+ }
            }
            fn persistent(&self) -> bool {
                match self { $($enum::$variant(b) => b.persistent()),+ }
            }
            fn meta(&self) -> bench_results::sql::BackendMeta {
                match self { $($enum::$variant(b) => b.meta()),+ }
            }
            async fn prepare(&mut self) -> Result<(), $crate::BenchError> {
                match self { $($enum::$variant(b) => b.prepare().await),+ }
            }
            async fn open(&mut self) -> Result<rusqlite::Connection, $crate::BenchError> {
                match self { $($enum::$variant(b) => b.open().await),+ }
            }
            async fn sync(&mut self, conn: &rusqlite::Connection) -> Result<(), $crate::BenchError> {
                match self { $($enum::$variant(b) => b.sync(conn).await),+ }
            }
            async fn close(&mut self, conn: rusqlite::Connection) -> Result<(), $crate::BenchError> {
                match self { $($enum::$variant(b) => b.close(conn).await),+ }
            }
            async fn reopen(&mut self) -> Result<rusqlite::Connection, $crate::BenchError> {
                match self { $($enum::$variant(b) => b.reopen().await),+ }
            }
            async fn cleanup(&mut self) -> Result<(), $crate::BenchError> {
                match self { $($enum::$variant(b) => b.cleanup().await),+ }
            }
            fn counters(&self) -> Option<bench_results::sql::PhysicalCounters> {
                match self { $($enum::$variant(b) => b.counters()),+ }
            }
            fn bytes_written(&self) -> Option<u64> {
                match self { $($enum::$variant(b) => b.bytes_written()),+ }
            }
            async fn checkpoint(&mut self, conn: &rusqlite::Connection) -> Result<bool, $crate::BenchError> {
                match self { $($enum::$variant(b) => b.checkpoint(conn).await),+ }
            }
            async fn stored_bytes(&mut self) -> Result<Option<u64>, $crate::BenchError> {
                match self { $($enum::$variant(b) => b.stored_bytes().await),+ }
            }
        }
    };
}
pub(crate) use delegate_sql_backend;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::packages;

    /// The versions recorded with results are the ones `Cargo.lock` builds.
    #[test]
    fn package_versions_match_the_lock_file() {
        let lock =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock")).unwrap();
        for (name, version) in [
            packages::SQLITE_WASM_VFS,
            packages::SQLITE_WASM_RS,
            packages::RUSQLITE,
        ] {
            let entry = format!("name = \"{name}\"\nversion = \"{version}\"");
            assert!(lock.contains(&entry), "Cargo.lock has no {name} {version}");
        }
        assert!(lock.contains(&format!(
            "name = \"opfs-vfs\"\nversion = \"{}\"",
            super::OURS_VERSION
        )));
    }
}
