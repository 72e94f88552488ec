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
    /// Storage space or quota ran out. Nothing of the failed call took effect (a failed commit
    /// is rolled back); every commit acknowledged before is intact, and the volume keeps
    /// working: reads succeed, and writes succeed again once space is freed.
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
    /// An earlier write or flush failed in a way whose outcome is unknown (a failed flush, or a
    /// failed repair after a failed write). Every write fails with this until the volume is
    /// remounted, which recovers the last durable commit; reads still work.
    #[error("volume refuses writes after an earlier failure ({cause}); remount it")]
    Poisoned {
        /// The earlier failure.
        cause: String,
    },
    /// The commit was written but the flush that should make it durable failed: it survives a
    /// crash of the tab, and may or may not survive a power loss. The volume shows it as
    /// committed and refuses further writes ([`Error::Poisoned`]) until it is remounted. Do not
    /// redo the transaction blindly: check after remounting.
    #[error("commit outcome unknown: it was written but the flush failed ({cause})")]
    CommitUnknown {
        /// The flush's error.
        cause: String,
    },
    /// The volume was written by another format version of this engine. Nothing was changed.
    #[error(
        "volume format version {found} is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        /// The version found in a superblock.
        found: u32,
        /// The version this build reads and writes.
        supported: u32,
    },
    /// The newest checkpoint's superblock is damaged, but its log epoch exists: mounting the
    /// older checkpoint would silently lose every commit since it. Nothing was changed.
    #[error(
        "the superblock of checkpoint {lost} is damaged (its log exists); mounting checkpoint \
         {newest_valid} would lose every commit made since it"
    )]
    NewerCheckpointLost {
        /// The newest checkpoint whose superblock is intact.
        newest_valid: u64,
        /// The checkpoint whose superblock was lost.
        lost: u64,
    },
    /// An offset or length beyond what the volume supports (2^53 bytes per file).
    #[error("offset or length {value} too large")]
    TooLarge {
        /// The value.
        value: u64,
    },
    /// Every file id has been handed out: ids are never reused, and stay below 2^53 (exact as
    /// JavaScript numbers). Only a volume that created 2^53 − 1 files, or an image that claims
    /// it did, gets here. Nothing was changed; existing files work as before.
    #[error("no file id left: the volume has handed out every id below {limit}")]
    FileIdsExhausted {
        /// The bound on file ids (2^53).
        limit: u64,
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
