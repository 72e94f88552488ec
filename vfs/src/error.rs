//! The volume layer's error type.

use crate::storage::{PhysicalFileId, StorageError};

/// Errors of the volume and its filesystem API.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No file has that name.
    #[error("no such file: {name:?}")]
    NotFound {
        /// The name looked up.
        name: String,
    },
    /// A file with that name exists already.
    #[error("file already exists: {name:?}")]
    AlreadyExists {
        /// The name.
        name: String,
    },
    /// The name is not acceptable (empty, too long, contains NUL).
    #[error("invalid file name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A file id that does not (or no longer) exist, e.g. used after delete.
    #[error("file id {id} does not exist (deleted?)")]
    StaleId {
        /// The id.
        id: u64,
    },
    /// The volume's bytes are not a valid volume. Nothing was changed.
    #[error("corrupt volume: {what} (in {file} at byte {offset})")]
    Corrupt {
        /// What is wrong.
        what: String,
        /// Which physical file.
        file: PhysicalFileId,
        /// Byte offset of the bad structure.
        offset: u64,
    },
    /// Storage space or quota ran out. Every commit acknowledged before is intact; the volume
    /// must be remounted (see [`Error::Poisoned`]).
    #[error("out of space writing {file}: {source}")]
    OutOfSpace {
        /// Which physical file.
        file: PhysicalFileId,
        /// The physical error.
        source: StorageError,
    },
    /// Someone else has the volume open (another tab, worker, process, or mount).
    #[error("volume is busy: {message}")]
    Busy {
        /// Detail from the platform.
        message: String,
    },
    /// A physical call failed.
    #[error("I/O error on {file}: {source}")]
    Io {
        /// Which physical file.
        file: PhysicalFileId,
        /// The physical error, with the platform's cause.
        source: StorageError,
    },
    /// An earlier write or flush failed, so memory may hold changes that are not on disk. Every
    /// call fails with this until the volume is remounted; remounting recovers the last
    /// durable commit.
    #[error("volume unusable after an earlier failure ({cause}); remount it")]
    Poisoned {
        /// The earlier failure.
        cause: String,
    },
    /// An offset or length beyond what the volume supports (2^53 bytes per file).
    #[error("offset or length {value} too large")]
    TooLarge {
        /// The value.
        value: u64,
    },
}

impl Error {
    /// Builds the right variant for a failed physical call.
    pub(crate) fn from_storage(file: PhysicalFileId, source: StorageError) -> Error {
        match source {
            StorageError::Busy { message } => Error::Busy { message },
            s if s.is_out_of_space() => Error::OutOfSpace { file, source: s },
            s => Error::Io { file, source: s },
        }
    }
}

/// Result of a volume call.
pub type Result<T, E = Error> = std::result::Result<T, E>;
