//! The physical layer: a small, fixed set of named files.
//!
//! In the browser each physical file is one OPFS `FileSystemSyncAccessHandle`, opened once when
//! the volume is mounted and closed when it is unmounted; natively it is a `std::fs::File` or a
//! byte vector. The volume ([`crate::Volume`]) never creates or deletes a physical file after
//! mount: logical files (SQLite databases, journals, user files) live *inside* these.
//!
//! # Contract of [`PhysicalFile`]
//! - Offsets and lengths are `u64` byte counts. A backend that cannot represent a value (OPFS
//!   offsets above 2^53) returns [`StorageError::OutOfRange`]; it never truncates.
//! - [`PhysicalFile::write_at`] writes the whole buffer or returns an error. A short write (quota
//!   exhausted, or a bogus count from the browser) is [`StorageError::ShortWrite`], never `Ok`.
//!   Writing past the end extends the file; the gap reads as zeros.
//! - [`PhysicalFile::read_at`] fills as much of the buffer as the file holds from `offset` and
//!   returns that count; a count below `buf.len()` means end of file, never an error.
//! - [`PhysicalFile::flush`] is the only durability barrier. Until it returns, any write since
//!   the previous flush may be lost, kept, or torn (a prefix kept) after power loss,
//!   independently of the others. The volume's commit protocol is built on exactly this.
//! - [`PhysicalFile::flush_ahead`] is a hint, never a barrier: a backend may start making the
//!   writes so far durable off this thread (OPFS in Chromium: a helper worker's own handle), or
//!   do nothing. The volume relies on it for nothing; only a later `flush` counts.
//! - Calls are synchronous. Nothing here is `Send`: OPFS handles live in one worker.
//!
//! Every call is counted ([`Counters`]); the benchmarks report these beside the times.

mod counted;
mod memory;
#[cfg(target_arch = "wasm32")]
mod opfs;
#[cfg(not(target_arch = "wasm32"))]
mod std_file;

pub use counted::{Counted, Counters, FileCounters};
pub use memory::{MemoryFile, MemoryStorage};
#[cfg(target_arch = "wasm32")]
pub use opfs::{
    HandleMode, OpfsFile, OpfsStorage, OriginUsage, ReopenedHandles, NEED_DEDICATED_WORKER,
};
#[cfg(not(target_arch = "wasm32"))]
pub use std_file::{StdFile, StdStorage};

use std::fmt;

/// The physical files of a volume. The set is fixed: see `vfs/DESIGN.md` for what each holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PhysicalFileId {
    /// Superblocks, catalog and the home blocks of logical file pages (written at checkpoint).
    Data,
    /// The redo log: every commit is appended here (written at commit).
    Log,
}

impl PhysicalFileId {
    /// All physical files, in a fixed order.
    pub const ALL: [PhysicalFileId; 2] = [PhysicalFileId::Data, PhysicalFileId::Log];

    /// The file name used by backends that store physical files in a directory.
    pub fn file_name(self) -> &'static str {
        match self {
            PhysicalFileId::Data => "volume.data",
            PhysicalFileId::Log => "volume.log",
        }
    }

    /// Index into per-file arrays.
    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for PhysicalFileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.file_name())
    }
}

/// An error from the physical layer. Browser errors keep their JavaScript name and message.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageError {
    /// The write stored fewer bytes than asked (typically: storage quota exhausted).
    #[error("short write: {written} of {requested} bytes at offset {offset}")]
    ShortWrite {
        /// Byte offset of the write.
        offset: u64,
        /// Bytes requested.
        requested: u64,
        /// Bytes the platform reported as written.
        written: u64,
    },
    /// The platform reported that storage space or quota is exhausted.
    #[error("storage quota exhausted: {message}")]
    QuotaExceeded {
        /// The platform's message.
        message: String,
    },
    /// An offset or length the backend cannot represent (e.g. above 2^53 for JavaScript).
    #[error("offset or length {value} out of range for this backend")]
    OutOfRange {
        /// The offending value.
        value: u64,
    },
    /// Another owner holds the physical files (another tab, worker or process).
    #[error("storage is busy: {message}")]
    Busy {
        /// What holds it, as far as the platform says.
        message: String,
    },
    /// Any other platform failure. `name` is the JavaScript error name (e.g.
    /// `InvalidStateError`) or the `std::io::ErrorKind`.
    #[error("{op} failed: {name}: {message}")]
    Platform {
        /// The operation: `read`, `write`, `flush`, `truncate`, `getSize`, `open`, ...
        op: &'static str,
        /// Error class name.
        name: String,
        /// Error message.
        message: String,
    },
}

impl StorageError {
    /// Whether this failure means "no space left" (maps to `SQLITE_FULL`).
    pub fn is_out_of_space(&self) -> bool {
        matches!(
            self,
            StorageError::ShortWrite { .. } | StorageError::QuotaExceeded { .. }
        )
    }
}

/// Result of a physical call.
pub type StorageResult<T> = Result<T, StorageError>;

/// One physical file. See the module docs for the contract.
// `len` is a physical call (OPFS `getSize()`), not a container size: an `is_empty` would only
// invite a second call.
#[allow(clippy::len_without_is_empty)]
pub trait PhysicalFile {
    /// Reads up to `buf.len()` bytes at `offset`; returns the count (short only at end of file).
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize>;
    /// Writes all of `data` at `offset`, extending the file if needed; a short write is an error.
    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()>;
    /// Current length in bytes.
    fn len(&mut self) -> StorageResult<u64>;
    /// Sets the length: truncates, or extends with zeros.
    fn set_len(&mut self, len: u64) -> StorageResult<()>;
    /// Durability barrier: returns once every earlier write survives power loss.
    fn flush(&mut self) -> StorageResult<()>;
    /// A hint: start making the writes so far durable in the background, where the backend can
    /// do that off this thread, so that the next [`PhysicalFile::flush`] finds less to wait
    /// for. It promises nothing and reports nothing: the volume still calls `flush` wherever
    /// it needs a barrier. The default does nothing.
    fn flush_ahead(&mut self) {}
}

/// The fixed set of physical files a volume lives in.
///
/// A backend is constructed with all its files open (opening OPFS handles is asynchronous and
/// happens before the volume gets the storage); the volume then only calls [`Storage::file`].
pub trait Storage {
    /// The physical file `id`. Always present once the storage exists.
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile;
}

impl<S: Storage + ?Sized> Storage for Box<S> {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        (**self).file(id)
    }
}

/// Reads exactly `buf.len()` bytes, treating end-of-file as zeros. Returns the count that was
/// really in the file (the rest of `buf` is zero-filled).
pub(crate) fn read_zero_filled(
    file: &mut dyn PhysicalFile,
    offset: u64,
    buf: &mut [u8],
) -> StorageResult<usize> {
    let n = file.read_at(offset, buf)?;
    buf[n..].fill(0);
    Ok(n)
}
