//! The volume's options and the small types of its API.

use std::time::Duration;

/// Where logical file contents live while the volume is mounted. Both modes use the same
/// on-disk format; a volume written in one opens in the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferMode {
    /// Contents stay on disk. The open transaction's pages are staged in a bounded buffer
    /// ([`VolumeOptions::write_buffer_bytes`]) and appended to the log when it fills or at
    /// commit; reads come from the physical files through a small page cache
    /// ([`VolumeOptions::disk_cache_bytes`]) with read-ahead of consecutive blocks.
    Disk,
    /// Each file's contents are loaded into memory on the file's first access (subject to
    /// [`VolumeOptions::memory_budget`]); reads never touch the physical files again, and a
    /// commit writes the changed pages in one coalesced write.
    #[default]
    Memory,
}

/// What a commit waits for before it returns. No level ever loses consistency: after any crash
/// the volume shows exactly the state after some commit, never older than the last flushed one.
///
/// Words used precisely: *written* means the browser (or OS) has the bytes, which survives a
/// crash of the tab or the browser but not of the machine; *flushed* means `flush()` returned,
/// which survives power loss as far as the browser and OS honour it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Written and flushed before [`crate::Volume::commit`] returns: survives power loss. One
    /// log write and one `flush()` per commit.
    #[default]
    Strict,
    /// Written before `commit` returns (survives a tab or browser crash); flushed within
    /// [`VolumeOptions::max_flush_delay`] (power loss may lose the commits of that last
    /// interval). One write per commit, no flush on the commit path.
    Relaxed,
    /// Commits are grouped in memory (and written as one commit where they can be: see
    /// `vfs/DESIGN.md`) and written *and* flushed within
    /// [`VolumeOptions::max_flush_delay`] (or when [`VolumeOptions::write_buffer_bytes`] of
    /// them accumulate): a tab crash, a browser crash or a power loss may lose the commits of
    /// that last interval, never consistency. No physical call on most commits. The deadline is
    /// kept by the next commit or [`crate::Volume::poll`] (in the browser, a timer the `web`
    /// module arms).
    Balanced,
}

/// What one commit asks for, on top of the volume's [`Durability`]. SQLite's
/// `PRAGMA synchronous=OFF` (or `NORMAL` in WAL mode) asks only that the commit survive a crash
/// of the process, not a power loss: the VFS passes [`SyncLevel::WriteOnly`] then, which lowers
/// `Strict` to `Relaxed` for that commit and never lowers anything below "written".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncLevel {
    /// As the durability level says.
    #[default]
    Full,
    /// At most "written" before returning; flushed within the level's delay.
    WriteOnly,
}

/// Mount options. `Default` gives Memory mode, Strict durability.
#[derive(Clone, Debug)]
pub struct VolumeOptions {
    /// Where file contents live while mounted.
    pub buffer_mode: BufferMode,
    /// What a commit waits for.
    pub durability: Durability,
    /// `Relaxed`: longest time a commit stays unflushed. `Balanced`: longest time a commit
    /// stays unwritten and unflushed. Kept by later commits and by [`crate::Volume::poll`].
    pub max_flush_delay: Duration,
    /// Disk mode: staged page images of open transactions are appended to the log when they
    /// exceed this, or twice [`VolumeOptions::link_min_bytes`] if larger (up to 16 × this), so
    /// that a transaction big enough to link links from its first spill. Memory mode: when they
    /// exceed 16 × this. `Balanced`: grouped commits are written when they exceed this.
    pub write_buffer_bytes: usize,
    /// Past this many bytes of log (or a sixteenth of the volume's logical bytes, if larger,
    /// so large volumes checkpoint proportionally less often) a checkpoint is due. With a
    /// deadline hook ([`crate::Volume::set_deadline_hook`]; the `web` module's timer is one)
    /// it runs from [`crate::Volume::poll`] as soon as the worker is idle, off the commit path;
    /// without one, nothing would run it later, so the commit that passes the threshold runs it.
    pub checkpoint_bytes: u64,
    /// With a deadline hook, a commit runs a due checkpoint itself once the log has grown past
    /// this (at least `checkpoint_bytes`): the bound for a worker that never goes idle. Near a
    /// space limit the commit path checkpoints earlier, whatever this says.
    pub checkpoint_max_bytes: u64,
    /// [`crate::Volume::poll`] checkpoints an idle volume whose log holds more than this, so the
    /// space on disk returns close to the logical size between bursts.
    pub idle_checkpoint_bytes: u64,
    /// How long the volume must be idle (no commit) before `poll` checkpoints it.
    pub idle_checkpoint_after: Duration,
    /// Checkpoint (and truncate the log) on [`crate::Volume::close`], so the next mount reads
    /// only metadata. A checkpoint that fails at close (e.g. no space) is skipped: close never
    /// needs free space.
    pub checkpoint_on_close: bool,
    /// Memory mode: most bytes of file contents held in memory. A file that does not fit is
    /// read from disk as in Disk mode. `None`: no limit.
    pub memory_budget: Option<u64>,
    /// Disk mode: bytes of page images kept in memory for reads (read-ahead and the newest
    /// committed pages).
    pub disk_cache_bytes: usize,
    /// Most bytes the volume's physical files may take (e.g. from the origin's storage quota).
    /// Near it the volume checkpoints early to give log space back. `None`: unknown; the volume
    /// learns a limit from the first out-of-space error instead.
    pub space_limit: Option<u64>,
    /// Log a page that changed by a few bytes as a patch over its image earlier in the log
    /// (format version 3; Strict and Relaxed commits): ~1 KB per SQLite autocommit INSERT
    /// instead of 12.6 KB. Off: every changed page is logged whole, as before 2026-12-05 —
    /// the benchmark's `-whole-pages` references, which measure what patches save. Reading
    /// patches never depends on it.
    pub log_patches: bool,
    /// A commit (or Disk-mode spill) of a transaction whose new pages (staged and spilled
    /// pages with no home yet, nor a block of an earlier link) come to at least this many bytes,
    /// and to at least half of its pages, goes to the data file's tail as a *tail link* (format
    /// version 4): its frames and page blocks written with one call and flushed once, and its
    /// blocks become the pages' homes at the next checkpoint without being written again — a
    /// big transaction's pages are written once, not to the log and then home (see
    /// `vfs/DESIGN.md`, "Tail links"). Rewrites of pages that have a place go to the log (a
    /// link would move them and leave holes for the compaction to fill). `None`: everything
    /// goes to the log. Reading links never depends on it.
    ///
    /// Default 8 MiB: bulk loads (a 10,000-row transaction of 1 KiB rows) link, the SQL suite's
    /// commits of at most 4 MiB do not. A link grows the data file on the commit path, which
    /// costs about twice the log's overwrite per byte written and flushed (1 MiB + `flush()`:
    /// 1,247 against 601 µs in Chromium, 1,314 against 761 µs in Firefox), while the log's
    /// home writes wait for an idle checkpoint: at 1 MiB, the SQL suite's Disk Strict total
    /// took 2.5 % longer in Chromium (`vfs/DESIGN.md`, "Tail links"). Disk mode holds an open
    /// transaction up to twice this (at most 16 write buffers) before it spills, so a bulk
    /// transaction's first spill links and every page is written once: natively 1.02 × the
    /// logical bytes in both modes (Disk mode 1.75 × when it spilled at the write buffer).
    pub link_min_bytes: Option<usize>,
}

impl Default for VolumeOptions {
    fn default() -> Self {
        Self {
            buffer_mode: BufferMode::Memory,
            durability: Durability::Strict,
            max_flush_delay: Duration::from_millis(100),
            write_buffer_bytes: 1 << 20,
            checkpoint_bytes: 16 << 20,
            checkpoint_max_bytes: 64 << 20,
            idle_checkpoint_bytes: 1 << 20,
            idle_checkpoint_after: Duration::from_secs(2),
            checkpoint_on_close: true,
            memory_budget: if cfg!(target_arch = "wasm32") {
                // wasm32 has 4 GiB of address space in all; leave room for SQLite and the app.
                Some(2 << 30)
            } else {
                None
            },
            disk_cache_bytes: 2 << 20,
            space_limit: None,
            log_patches: true,
            link_min_bytes: Some(8 << 20),
        }
    }
}

/// Identifies a logical file. Ids are never reused within a volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u64);

/// What [`crate::Volume::stat`] and [`crate::Volume::list`] report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The file's id.
    pub id: FileId,
    /// Its name.
    pub name: String,
    /// Its length in bytes.
    pub len: u64,
}

/// Engine-level statistics (the physical call counts are in [`crate::storage::Counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VolumeStats {
    /// Commits that wrote frames.
    pub commits: u64,
    /// Balanced commits that were written as part of a later one (their frames grouped at
    /// write-out: see [`Durability::Balanced`]).
    pub grouped_commits: u64,
    /// Page changes logged as patches over an earlier image of the epoch (format version 3:
    /// see `vfs/DESIGN.md`, "Small changes are logged as patches").
    pub patched_pages: u64,
    /// Tail links written (commits, and Disk-mode spills of big transactions), and the page
    /// blocks they carried.
    pub linked_commits: u64,
    /// See [`VolumeStats::linked_commits`].
    pub linked_pages: u64,
    /// Commits that failed and were rolled back.
    pub failed_commits: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Checkpoints that failed (the volume stayed usable; the log still holds everything).
    pub failed_checkpoints: u64,
    /// Current log length in bytes (written or buffered).
    pub log_bytes: u64,
    /// Data file length in blocks.
    pub data_blocks: u64,
    /// Blocks of the data file that hold nothing (reusable now or after the next checkpoint).
    pub free_blocks: u64,
    /// Logical files.
    pub files: u64,
    /// Sum of the logical files' lengths.
    pub logical_bytes: u64,
    /// Bytes of file contents held in memory (Memory mode) or in the page cache (Disk mode).
    pub resident_bytes: u64,
    /// Commits replayed from the log at mount.
    pub recovered_commits: u64,
    /// Whether the volume refuses writes after a failure whose outcome is unknown.
    pub poisoned: bool,
}

impl VolumeStats {
    /// Bytes the physical files take: the data file plus the log.
    pub fn physical_bytes(&self) -> u64 {
        self.data_blocks * crate::format::PAGE + self.log_bytes
    }
}
