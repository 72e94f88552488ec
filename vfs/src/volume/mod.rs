//! The volume: many logical files inside two physical files, with crash-consistent, atomic,
//! failure-atomic commits. `vfs/DESIGN.md` is the specification; this module implements it.
//!
//! In short: every change joins an open transaction (per file, see [`state::Pending`]) that
//! touches nothing committed; [`Volume::commit`] serializes it as frames appended to the log
//! ([`PhysicalFileId::Log`]) followed by a commit frame — one log write, and one flush under
//! [`Durability::Strict`] — and only then applies it. A checkpoint (log over a threshold, idle,
//! close, or on demand) copies the newest page images to their home blocks in
//! [`PhysicalFileId::Data`], writes the changed parts of the catalog copy-on-write, switches the
//! superblock and starts a new log epoch. Creating, renaming, deleting and resizing a logical
//! file only change metadata: no physical file is ever created or deleted here.
//!
//! Parts, each readable alone:
//! - [`options`]: options, durability levels and the small API types;
//! - [`maps`]: sparse page maps and resident contents;
//! - [`state`]: a file's committed state and an open transaction's changes;
//! - [`alloc`]: free space of the data file;
//! - [`log`]: the log writer;
//! - `txn`: the filesystem API's mutations, commit, rollback, deadlines;
//! - `read`: reads, residency (Memory mode) and the Disk-mode page cache;
//! - `recovery`: mount;
//! - `checkpoint`: checkpoint, compaction, the catalog;
//! - `handoff`: [`Volume::release`] / [`Volume::resume`], for volumes shared between tabs;
//! - `integrity`: [`Volume::check_integrity`] and the internal invariant check.
//!
//! Failures: a failed call changes nothing (or, for a commit, rolls its transaction back) and
//! the volume keeps working, except when the outcome of a write or flush is unknown and cannot
//! be repaired: then it is *poisoned* — every later write fails with [`Error::Poisoned`], reads
//! still work — until it is remounted, which recovers the last durable commit.

mod alloc;
mod checkpoint;
mod handoff;
mod integrity;
mod log;
mod maps;
mod options;
mod read;
mod recovery;
mod state;
mod txn;

use std::collections::{BTreeMap, BTreeSet};

/// The volume's hash maps, keyed by file ids, page numbers and names: Fx hashing (`rustc-hash`)
/// instead of std's SipHash, which took ~15 % of the CPU of creating, renaming and deleting
/// 1,000 files natively (`perf`). The keys are the app's own ids and names; a page-cache or
/// name collision flood could slow only the tab that chose them.
pub(crate) type FastMap<K, V> = rustc_hash::FxHashMap<K, V>;

use web_time::Instant;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::format::{BlobPtr, Superblock, MAX_NAME_LEN, PAGE};
use crate::storage::{Counted, Counters, PhysicalFileId, Storage};

pub use handoff::CatchUp;
pub use integrity::{IntegrityProblem, IntegrityReport};
pub use options::{
    BufferMode, Durability, FileId, Metadata, SyncLevel, VolumeOptions, VolumeStats,
};

use alloc::Allocator;
use log::LogWriter;
use read::PageCache;
use state::{FileState, Pending};

/// Largest logical file and offset: JavaScript numbers are exact up to 2^53.
pub const MAX_FILE_SIZE: u64 = 1 << 53;

/// File ids are in `1..MAX_FILE_ID` (exact as JavaScript numbers; 0 is "no file" in commit
/// frames). Mount accepts a next id of at most this; `create` refuses to hand this one out.
pub(crate) const MAX_FILE_ID: u64 = 1 << 53;

/// Which uncommitted changes a commit or rollback takes.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    /// Every file's.
    All,
    /// The files whose name (now, or when the transaction began) satisfies the predicate. The
    /// SQLite VFS commits one database with its journal and WAL this way, so two connections
    /// writing two databases of one volume never commit each other's half-done work.
    Files(&'a dyn Fn(&str) -> bool),
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::All => f.write_str("All"),
            Scope::Files(_) => f.write_str("Files(..)"),
        }
    }
}

/// The catalog as the current checkpoint has it, and what the next one must rewrite.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    /// The directory blob (`len == 0`: empty catalog).
    pub(crate) dir: BlobPtr,
    /// Entry chunk blobs by chunk index.
    pub(crate) entry_chunks: BTreeMap<u64, BlobPtr>,
    /// Entry chunks whose files changed since the checkpoint.
    pub(crate) dirty: BTreeSet<u64>,
}

/// Many logical files in a fixed set of physical files. See the module docs.
#[derive(Debug)]
pub struct Volume<S: Storage> {
    pub(crate) storage: Counted<S>,
    pub(crate) opts: VolumeOptions,
    /// Set when the outcome of a write or flush is unknown: writes are refused, reads work.
    pub(crate) poisoned: Option<String>,

    // --- the current checkpoint ---
    pub(crate) sb: Superblock,
    pub(crate) catalog: Catalog,
    pub(crate) alloc: Allocator,

    // --- files ---
    /// Committed state by file id.
    pub(crate) files: FastMap<u64, FileState>,
    /// Sum of `files`' sizes, kept by every change of a committed size (commit, replay, catalog
    /// load) so that the commit path's thresholds do not walk every file (invariant checked by
    /// [`Volume::check_invariants`]).
    pub(crate) logical_total: u64,
    /// The open transaction's changes by file id.
    pub(crate) pending: BTreeMap<u64, Pending>,
    /// Live names (after pending renames, creates and deletes).
    pub(crate) names: FastMap<String, u64>,
    pub(crate) next_file_id: u64,
    /// Bytes of all staged page images.
    pub(crate) staged_bytes: usize,

    // --- log ---
    pub(crate) log: LogWriter,
    /// Files whose frames were written without a commit and then rolled back (or left by a
    /// crashed session): an abort frame for them precedes the next frames written.
    pub(crate) aborts: BTreeSet<u64>,
    /// Whether the data file was flushed during this mount. Until it is, the superblock we
    /// mounted may exist only in the OS cache, so the log must not be overwritten.
    pub(crate) data_flushed: bool,
    /// The log should be cut to its new epoch's marker once the data file is flushed.
    pub(crate) log_truncate_pending: bool,
    /// Physical lengths as last written or measured (data, log), for space accounting.
    pub(crate) physical_len: [u64; 2],
    /// The first block of this epoch's tail links (the checkpoint's block count) and the block
    /// at which the next link goes: blocks in between hold links (`vfs/DESIGN.md`, "Tail
    /// links").
    pub(crate) tail_start: u64,
    pub(crate) tail: u64,
    /// Frames at the log's write position still chain on from its last frame (left by a
    /// crashed session, found by replay): they must be cut off before a tail link is written.
    pub(crate) log_stale: bool,
    /// The log file changed (a write, a cut) since its last flush, or this mount has not
    /// flushed it yet: its durable bytes may differ from what this mount sees.
    pub(crate) log_dirty: bool,
    /// A spill's tail link is written but not flushed: the data file must be flushed before
    /// any log frame is written (a log frame chains on from the link, and must not be durable
    /// without it). A commit's link flushes it with its own bytes.
    pub(crate) link_unflushed: bool,

    // --- memory ---
    pub(crate) cache: PageCache,
    pub(crate) resident_bytes: u64,

    // --- bookkeeping ---
    pub(crate) last_commit_at: Option<Instant>,
    /// After a failed checkpoint: retry once the log has grown past this.
    pub(crate) checkpoint_retry_at: Option<u64>,
    pub(crate) last_checkpoint_error: Option<String>,
    /// A space limit learned from an out-of-space error (the physical bytes at that moment).
    /// It only makes checkpoints come earlier: one short write may be transient, so it never
    /// refuses commits as a given [`VolumeOptions::space_limit`] does.
    pub(crate) learned_space_limit: Option<u64>,
    pub(crate) stats: VolumeStats,
    /// Told when work becomes due (see [`Volume::set_deadline_hook`]).
    pub(crate) deadline_hook: Option<DeadlineHook>,
    /// Released to another holder (see [`Volume::release`]).
    pub(crate) released: bool,
}

/// A callback for [`Volume::set_deadline_hook`].
pub(crate) struct DeadlineHook(Box<dyn FnMut(Instant)>);

impl std::fmt::Debug for DeadlineHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeadlineHook")
    }
}

pub(crate) fn corrupt(what: impl Into<String>, file: PhysicalFileId, offset: u64) -> Error {
    Error::Corrupt {
        what: what.into(),
        file,
        offset,
    }
}

pub(crate) fn check_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        "empty"
    } else if name.len() > MAX_NAME_LEN {
        "longer than 1024 bytes"
    } else if name.contains('\0') {
        "contains NUL"
    } else {
        return Ok(());
    };
    Err(Error::InvalidName {
        name: name.to_owned(),
        reason,
    })
}

/// A random-enough 64-bit nonce: wall clock, a process-wide counter and an address, hashed.
/// Only needs to differ between mounts of one volume, not to be unpredictable.
pub(crate) fn nonce() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let now = web_time::SystemTime::now()
        .duration_since(web_time::SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let local = 0u8;
    let addr = std::ptr::addr_of!(local) as usize as u64;
    let seed = [
        now.to_le_bytes().as_slice(),
        &n.to_le_bytes(),
        &addr.to_le_bytes(),
    ]
    .concat();
    xxh3_64(&seed)
}

/// A `u64` known to be small (an offset within a page or a buffer) as an index. Saturates
/// instead of truncating, so a broken bound fails the slice check rather than reading the wrong
/// bytes.
pub(crate) fn ix(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// A length known to fit (a page or a list of at most 512 ids) as a `u32`; saturating.
pub(crate) fn n32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

pub(crate) fn usize_of(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::TooLarge { value: v })
}

impl<S: Storage> Volume<S> {
    /// Mounts the volume in `storage`, creating it if the storage is empty, and recovers the
    /// last committed state from the log. Reads: both superblocks (one call), the catalog (a
    /// few windowed calls, in proportion to the metadata) and the log written since the last
    /// checkpoint (none after a clean close but its epoch marker).
    pub fn mount(storage: S, opts: VolumeOptions) -> Result<Self> {
        recovery::mount(storage, opts)
    }

    // ------------------------------------------------------------------------------------
    // Introspection
    // ------------------------------------------------------------------------------------

    /// The options the volume was mounted with.
    pub fn options(&self) -> &VolumeOptions {
        &self.opts
    }

    /// Physical call counters since mount.
    pub fn counters(&self) -> Counters {
        self.storage.counters()
    }

    /// Sums the time spent inside physical calls in the counters from now on (`true`), or
    /// stops (`false`, the default); see [`Counted::time_calls`]. For benchmarks: it splits a
    /// workload's time into the storage's share and the rest.
    pub fn time_calls(&mut self, on: bool) {
        self.storage.time_calls(on);
    }

    /// Engine statistics.
    pub fn stats(&self) -> VolumeStats {
        let logical = self
            .names
            .values()
            .map(|&id| self.live_size(id).unwrap_or(0))
            .sum();
        VolumeStats {
            log_bytes: self.log.end(),
            data_blocks: self.alloc.count,
            free_blocks: self.alloc.free.len() + self.alloc.pending.len(),
            files: self.names.len() as u64,
            logical_bytes: logical,
            resident_bytes: self.resident_bytes + self.cache.bytes(),
            poisoned: self.poisoned.is_some(),
            ..self.stats
        }
    }

    /// Why the last checkpoint failed, if it did (the volume stays usable: the log still holds
    /// every commit; the checkpoint is retried later).
    pub fn last_checkpoint_error(&self) -> Option<&str> {
        self.last_checkpoint_error.as_deref()
    }

    /// Installs a callback told the instant at which [`Volume::poll`] next has work, whenever a
    /// commit or a poll leaves work scheduled (the `web` module arms a timer with it, so a
    /// Relaxed or Balanced commit is flushed within its delay even if no further commit comes).
    /// Called often: it must be cheap and must not touch the volume.
    ///
    /// Contract: whoever installs a hook calls [`Volume::poll`] at (or soon after) the instant
    /// it is told. The volume relies on it: with a hook, a commit leaves a due checkpoint
    /// (`checkpoint_bytes`) to `poll` and runs it on its own path only past
    /// `checkpoint_max_bytes`.
    pub fn set_deadline_hook(&mut self, hook: impl FnMut(Instant) + 'static) {
        self.deadline_hook = Some(DeadlineHook(Box::new(hook)));
    }

    pub(crate) fn notify_deadline(&mut self) {
        if self.deadline_hook.is_some() {
            if let Some(at) = self.next_deadline() {
                if let Some(h) = self.deadline_hook.as_mut() {
                    (h.0)(at);
                }
            }
        }
    }

    /// Why the volume refuses writes, if it does.
    pub fn poisoned(&self) -> Option<&str> {
        self.poisoned.as_deref()
    }

    /// The storage (e.g. to inspect a memory or crash backend).
    pub fn storage(&self) -> &S {
        self.storage.inner()
    }

    /// Mutable access to the storage, bypassing the counters (fault injection in tests).
    pub fn storage_mut(&mut self) -> &mut S {
        self.storage.inner_mut()
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_held()?;
        match &self.poisoned {
            Some(cause) => Err(Error::Poisoned {
                cause: cause.clone(),
            }),
            None => Ok(()),
        }
    }

    pub(crate) fn poison(&mut self, e: Error) -> Error {
        if self.poisoned.is_none() {
            self.poisoned = Some(e.to_string());
        }
        e
    }

    // ------------------------------------------------------------------------------------
    // Names and metadata (the live view: committed state overlaid with the open transaction)
    // ------------------------------------------------------------------------------------

    /// Live size of a live file.
    pub(crate) fn live_size(&self, id: u64) -> Result<u64> {
        match self.pending.get(&id) {
            Some(p) if p.deleted => Err(Error::StaleId { id }),
            Some(p) => Ok(p.size),
            None => self
                .files
                .get(&id)
                .map(|f| f.size)
                .ok_or(Error::StaleId { id }),
        }
    }

    fn live_name(&self, id: u64) -> Result<&str> {
        match self.pending.get(&id) {
            Some(p) if p.deleted => Err(Error::StaleId { id }),
            Some(p) => Ok(&p.name),
            None => self
                .files
                .get(&id)
                .map(|f| f.name.as_str())
                .ok_or(Error::StaleId { id }),
        }
    }

    /// Looks a file up by name.
    pub fn open(&self, name: &str) -> Result<FileId> {
        self.names
            .get(name)
            .map(|&id| FileId(id))
            .ok_or_else(|| Error::NotFound {
                name: name.to_owned(),
            })
    }

    /// Whether a file of that name exists.
    pub fn exists(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// Name and length of a file.
    pub fn stat(&self, name: &str) -> Result<Metadata> {
        let id = self.open(name)?;
        Ok(Metadata {
            id,
            name: name.to_owned(),
            len: self.live_size(id.0)?,
        })
    }

    /// Every file, sorted by name.
    pub fn list(&self) -> Vec<Metadata> {
        let mut v: Vec<Metadata> = self
            .names
            .iter()
            .map(|(name, &id)| Metadata {
                id: FileId(id),
                name: name.clone(),
                len: self.live_size(id).unwrap_or(0),
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Current name of a file.
    pub fn name_of(&self, id: FileId) -> Result<&str> {
        self.live_name(id.0)
    }

    /// Length of a file.
    pub fn len(&self, id: FileId) -> Result<u64> {
        self.live_size(id.0)
    }

    /// Whether any change is not yet committed.
    pub fn has_uncommitted(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether a file whose name (now, or when its change began) satisfies `f` has an
    /// uncommitted change.
    pub fn has_uncommitted_where(&self, f: &dyn Fn(&str) -> bool) -> bool {
        self.pending.iter().any(|(id, p)| {
            f(&p.name) || f(&p.logged.name) || self.files.get(id).is_some_and(|c| f(&c.name))
        })
    }

    /// Physical bytes in use: data file length plus log length (each the larger of what the
    /// state needs and what the file holds: the data file may extend past the allocated
    /// blocks until a checkpoint trims its free tail).
    pub(crate) fn physical_bytes(&self) -> u64 {
        self.data_bytes() + self.log.end().max(self.physical_len[1])
    }

    /// What the epoch has written since its checkpoint: the log, and the tail links (whose
    /// bytes a crash recovery reads too). Checkpoint thresholds count both: a volume built by
    /// big transactions would otherwise never checkpoint, and its next mount after a crash
    /// would read every link to check it.
    pub(crate) fn epoch_bytes(&self) -> u64 {
        self.log.end() + (self.tail - self.tail_start) * PAGE
    }

    /// Every blob of the current catalog: the directory (if any), the entry chunks, and every
    /// file's map chunks.
    pub(crate) fn catalog_blobs(&self) -> impl Iterator<Item = crate::format::BlobPtr> + '_ {
        let dir = (self.catalog.dir.len > 0).then_some(self.catalog.dir);
        dir.into_iter()
            .chain(self.catalog.entry_chunks.values().copied())
            .chain(
                self.files
                    .values()
                    .flat_map(|f| f.map_chunks.values().copied()),
            )
    }

    /// Sum of the logical files' lengths.
    pub(crate) fn logical_bytes(&self) -> u64 {
        self.logical_total
    }

    /// Recomputes [`Self::logical_bytes`] from the files (after a catalog load or a replay).
    pub(crate) fn recount_logical_bytes(&mut self) {
        self.logical_total = self.files.values().map(|f| f.size).sum();
    }

    /// The space limit the volume keeps to: the option's or the one learned from a quota
    /// error, whichever is smaller. `None`: unknown.
    pub(crate) fn known_space_limit(&self) -> Option<u64> {
        self.opts
            .space_limit
            .into_iter()
            .chain(self.learned_space_limit)
            .min()
    }

    /// The data file's length: the allocated extent or the file's length, whichever is larger.
    pub(crate) fn data_bytes(&self) -> u64 {
        (self.alloc.count * PAGE).max(self.physical_len[0])
    }
}
