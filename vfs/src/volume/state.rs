//! The per-file state: what is committed ([`FileState`]) and what an open transaction changed
//! on top of it ([`Pending`]).
//!
//! The committed state is never modified by an open transaction: every change lands in the
//! file's `Pending` record (staged page images, spilled log locations, live name and size), so
//! a rollback is dropping the record, and a commit is applying it. Readers see the live state:
//! pending first, then committed.

use std::collections::BTreeMap;

use crate::format::{BlobPtr, PAGE};
use crate::storage::PhysicalFileId;

use super::maps::{Content, HomeMap};

/// Where an image of a page lives in the log: a Page frame's payload offset and length (the
/// rest of the page is zero), and, if the page changed since by a few bytes, the newest Patch
/// frame on top of it (see [`crate::format::FrameKind::Patch`]). A cut inside a page never
/// leaves a stale base behind: `set_len` stages the cut page (zeros past the cut), which is
/// logged as a new image by the cut's own commit.
///
/// A page a tail link carries (format version 4) is a whole block of the data file: its
/// `offset` is then [`LINK_BASE`] plus the block's byte offset in the data file, and `link`
/// holds the block's hash (a checkpoint makes the block the page's home without writing it).
/// One offset space lets reads and windowed loads treat both alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LogLoc {
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) patch: Option<PatchLoc>,
    pub(crate) link: Option<u64>,
}

/// Offsets at and above this are data-file offsets (plus this) of tail-link blocks; log
/// offsets stay far below (a log is at most a few hundred MiB).
pub(crate) const LINK_BASE: u64 = 1 << 62;

/// The physical file and byte offset of an offset in that space: a log offset, or a tail
/// link's at or above [`LINK_BASE`] in the data file.
pub(crate) fn place_of(offset: u64) -> (PhysicalFileId, u64) {
    if offset >= LINK_BASE {
        (PhysicalFileId::Data, offset - LINK_BASE)
    } else {
        (PhysicalFileId::Log, offset)
    }
}

impl LogLoc {
    /// A Page frame's payload.
    pub(crate) fn image(offset: u64, len: u32) -> Self {
        Self {
            offset,
            len,
            patch: None,
            link: None,
        }
    }

    /// Data block `block` of a tail link, whose contents hash to `hash`.
    pub(crate) fn linked(block: u64, hash: u64) -> Self {
        Self {
            offset: LINK_BASE + block * PAGE,
            len: super::n32(crate::format::PAGE_SIZE),
            patch: None,
            link: Some(hash),
        }
    }

    /// The data block holding this image, if a tail link carries it.
    pub(crate) fn block(&self) -> Option<u64> {
        self.link.map(|_| (self.offset - LINK_BASE) / PAGE)
    }

    /// Chunks changed since the base image (0 without a patch).
    pub(crate) fn patched_mask(&self) -> u64 {
        self.patch.map_or(0, |p| p.mask)
    }
}

/// A Patch frame's payload (offset, length) and its mask: every chunk changed since the base.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PatchLoc {
    pub(crate) offset: u64,
    pub(crate) len: u32,
    pub(crate) mask: u64,
}

/// Number of pages of a file of `size` bytes.
pub(crate) fn pages_for(size: u64) -> u64 {
    size.div_ceil(PAGE)
}

/// The committed state of one logical file.
#[derive(Debug, Default)]
pub(crate) struct FileState {
    pub(crate) name: String,
    pub(crate) size: u64,
    /// Checkpointed homes of pages (sparse).
    pub(crate) homes: HomeMap,
    /// Checkpointed inline bytes of a small file (its whole contents then; `homes` is empty).
    pub(crate) inline: Option<Box<[u8]>>,
    /// Committed page images newer than the checkpoint, in the current log epoch.
    pub(crate) log: BTreeMap<u64, LogLoc>,
    /// The file's bytes, when resident (Memory mode). Invariant: `len() == size`.
    pub(crate) resident: Option<Content>,
    /// The current checkpoint's map chunk blobs of this file, by chunk index.
    pub(crate) map_chunks: BTreeMap<u64, BlobPtr>,
    /// Committed changes since the last checkpoint (the next one must rewrite its entry).
    pub(crate) dirty: bool,
    /// Map chunks whose homes changed since the last checkpoint (cuts; new homes are found
    /// from `log` at checkpoint time).
    pub(crate) dirty_chunks: std::collections::BTreeSet<u64>,
}

/// What the log already says about a file within the open transaction: the state as of the
/// file's last frames (its committed state until the transaction spills).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Logged {
    pub(crate) exists: bool,
    pub(crate) name: String,
    pub(crate) size: u64,
}

/// An open transaction's changes to one file.
#[derive(Debug)]
pub(crate) struct Pending {
    /// The file exists in the committed state (false: created by this transaction).
    pub(crate) existed: bool,
    /// Deleted by this transaction (the committed state, if any, stays until commit).
    pub(crate) deleted: bool,
    /// Live name and size.
    pub(crate) name: String,
    pub(crate) size: u64,
    /// The smallest live size since the transaction began: committed bytes at or beyond it
    /// were cut and read as zeros unless rewritten (staged or spilled).
    pub(crate) floor: u64,
    /// Page images not yet serialized (always a full 4 KiB page, zero past the file's end).
    pub(crate) staged: BTreeMap<u64, Box<[u8]>>,
    /// Disk mode: page images already written to the log without a commit frame (a spill).
    pub(crate) spilled: BTreeMap<u64, LogLoc>,
    /// Frames of this file were written without a commit: a rollback must log an abort.
    pub(crate) spilled_any: bool,
    /// The state the log's frames describe so far (see [`Logged`]).
    pub(crate) logged: Logged,
    /// The smallest size since the last serialization, if below `logged.size`.
    pub(crate) cut_since_logged: Option<u64>,
}

impl Pending {
    /// A transaction starts changing an existing file.
    pub(crate) fn of_existing(f: &FileState) -> Self {
        Self {
            existed: true,
            deleted: false,
            name: f.name.clone(),
            size: f.size,
            floor: f.size,
            staged: BTreeMap::new(),
            spilled: BTreeMap::new(),
            spilled_any: false,
            logged: Logged {
                exists: true,
                name: f.name.clone(),
                size: f.size,
            },
            cut_since_logged: None,
        }
    }

    /// A transaction creates a file.
    pub(crate) fn created(name: String) -> Self {
        Self {
            existed: false,
            deleted: false,
            name: name.clone(),
            size: 0,
            floor: 0,
            staged: BTreeMap::new(),
            spilled: BTreeMap::new(),
            spilled_any: false,
            logged: Logged {
                exists: false,
                name,
                size: 0,
            },
            cut_since_logged: None,
        }
    }

    /// Records a new live size.
    pub(crate) fn resize(&mut self, len: u64) {
        if len < self.size {
            self.floor = self.floor.min(len);
            if len < self.logged.size {
                self.cut_since_logged = Some(self.cut_since_logged.map_or(len, |c| c.min(len)));
            }
            let keep = pages_for(len);
            self.staged.split_off(&keep);
            self.spilled.split_off(&keep);
        }
        self.size = len;
    }

    /// Staged bytes (each staged page is a full page).
    pub(crate) fn staged_bytes(&self) -> usize {
        self.staged.len() * crate::format::PAGE_SIZE
    }

    /// Whether this record changes nothing a commit must log.
    pub(crate) fn is_noop(&self) -> bool {
        // Created and deleted again, with nothing written to the log yet.
        if !self.existed && self.deleted && !self.spilled_any {
            return true;
        }
        self.existed
            && !self.deleted
            && !self.spilled_any
            && self.staged.is_empty()
            && self.name == self.logged.name
            && self.size == self.logged.size
            && self.cut_since_logged.is_none()
            && self.floor == self.size
    }
}
