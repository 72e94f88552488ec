//! # opfs-vfs: SQLite and many small files in a few OPFS files, crash-safe
//!
//! The engine stores many logical files (SQLite databases, journals, WAL files, user files)
//! inside a fixed set of physical files ([`storage`]), with a redo log that makes every commit
//! one large write and at most one `flush()`. See `vfs/DESIGN.md` for the on-disk format and the
//! commit and recovery protocol.
//!
//! Layers, each behind one small trait or type:
//! - [`storage`]: the physical files ([`storage::Storage`], [`storage::PhysicalFile`]); in-memory
//!   and native-file backends always compile here; the OPFS backend lives in its own module
//!   behind `cfg(target_arch = "wasm32")`.
//! - [`Volume`]: the engine and its filesystem API (create, open, read, write, rename, delete,
//!   set_len, list, stat, commit, flush, checkpoint, close).
//! - [`sqlite`]: a SQLite VFS over a volume (built on rsqlite-vfs), registered under a name of
//!   your choice; one flush per SQLite transaction under `Strict` durability.
//! - `web` (wasm32 only): `web::install`, what a web app calls once in its worker: opens the
//!   OPFS directory (`storage::OpfsStorage`), mounts the volume, registers the VFS; the
//!   returned handle lists, exports, imports, deletes, wipes, flushes and closes.
//!
//! The `sqlite` feature (on by default) brings [`sqlite`] and `web` with SQLite itself; without
//! it the crate is the engine and its storage backends alone.
//!
//! ## Environment
//! Natively: any Unix. In the browser: a dedicated worker in a secure context (OPFS sync access
//! handles exist nowhere else).

#![warn(missing_docs)]

mod error;
pub mod format;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod storage;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod volume;
#[cfg(all(target_arch = "wasm32", feature = "sqlite"))]
pub mod web;

pub use error::{Error, Result};
pub use volume::{
    BufferMode, CatchUp, Durability, FileId, IntegrityProblem, IntegrityReport, Metadata, Scope,
    SyncLevel, Volume, VolumeOptions, VolumeStats, MAX_FILE_SIZE,
};
