//! The volume: many logical files inside the fixed physical files, with crash-consistent
//! commits. `vfs/DESIGN.md` is the specification; this module implements it.
//!
//! In short: every change is recorded, per transaction, as frames appended to the log
//! ([`PhysicalFileId::Log`]) followed by a commit frame; a durable commit is one log write and
//! one log flush. A checkpoint (rare: log over a threshold, or close) copies the newest page
//! images to their home blocks in [`PhysicalFileId::Data`], writes a new catalog and switches
//! the superblock; then the log starts a new epoch. Creating, renaming, deleting and resizing
//! a logical file only change metadata: no physical file is ever created or deleted here.
//!
//! Transactions: every mutating call joins the current transaction; [`Volume::commit`] ends it
//! according to the [`Durability`] level; [`Volume::flush`] ends it and makes everything
//! durable. Dropping a volume without [`Volume::close`] is a crash: uncommitted and unflushed
//! changes may be lost, committed state stays consistent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use web_time::Instant;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::format::{
    self, decode_frame, encode_frame, CatalogEntry, FrameKind, Run, Superblock, FRAME_HEADER,
    MAX_NAME_LEN, PAGE, PAGE_SIZE, SUPER_SLOTS,
};
use crate::storage::{read_zero_filled, Counted, Counters, PhysicalFile, PhysicalFileId, Storage};

/// Largest logical file and offset: JavaScript numbers are exact up to 2^53.
pub const MAX_FILE_SIZE: u64 = 1 << 53;

/// Largest single read when Memory mode loads contents.
const LOAD_WINDOW: u64 = 4 << 20;

/// Largest log write kept in memory after it is written (see `Volume::recent`).
const RECENT_MAX: usize = 256 << 10;

/// Where logical file contents live while the volume is mounted. Both modes use the same
/// on-disk format; a volume written in one opens in the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufferMode {
    /// Contents are not kept in memory. Writes are staged in a bounded buffer
    /// ([`VolumeOptions::write_buffer_bytes`]) and appended to the log when it fills or at
    /// commit; reads come from the physical files.
    Disk,
    /// Each file's contents are held in memory from its first access; reads never touch the
    /// physical files again, and commits write the changed pages in one coalesced write.
    #[default]
    Memory,
}

/// What a commit waits for before it returns (see "Durability words" in the project notes).
/// No level ever loses consistency: after any crash the volume shows exactly the state after
/// some commit, never older than the last flushed one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// The commit is written and flushed before [`Volume::commit`] returns: it survives power
    /// loss. One log write and one `flush()` per commit.
    #[default]
    Strict,
    /// The commit is written (the browser has the bytes: survives a tab or browser crash)
    /// before `commit` returns; it is flushed by the first commit after
    /// [`VolumeOptions::max_flush_delay`] has passed, by [`Volume::flush`] or by
    /// [`Volume::close`]. Power loss may lose a suffix of commits. No flush on the commit path.
    Relaxed,
    /// The commit stays in the volume's memory until
    /// [`VolumeOptions::write_buffer_bytes`] of commits have accumulated (then one write), or
    /// until the first commit after `max_flush_delay` (then written and flushed), or until
    /// [`Volume::flush`] / [`Volume::close`]. A crash of the tab may lose a suffix of commits.
    Balanced,
}

/// Mount options. `Default` gives Memory mode, Strict durability.
#[derive(Clone, Debug)]
pub struct VolumeOptions {
    /// Where file contents live while mounted.
    pub buffer_mode: BufferMode,
    /// What a commit waits for.
    pub durability: Durability,
    /// Checkpoint when the log grows past this many bytes (checked after each commit).
    pub checkpoint_bytes: u64,
    /// Disk mode: staged page images are appended to the log when they exceed this.
    /// Balanced durability: committed frames are written when they exceed this.
    pub write_buffer_bytes: usize,
    /// Relaxed and Balanced durability: longest time a commit may stay unflushed while further
    /// commits arrive (there is no timer thread: call [`Volume::flush`] from a timer to bound
    /// it when the application goes idle).
    pub max_flush_delay: Duration,
    /// Checkpoint on [`Volume::close`] so the next mount reads only superblock and catalog.
    pub checkpoint_on_close: bool,
}

impl Default for VolumeOptions {
    fn default() -> Self {
        Self {
            buffer_mode: BufferMode::Memory,
            durability: Durability::Strict,
            checkpoint_bytes: 32 << 20,
            write_buffer_bytes: 1 << 20,
            max_flush_delay: Duration::from_millis(1000),
            checkpoint_on_close: true,
        }
    }
}

/// Identifies an open logical file. Ids are never reused within a volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u64);

/// What [`Volume::stat`] and [`Volume::list`] report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The file's id.
    pub id: FileId,
    /// Its name.
    pub name: String,
    /// Its length in bytes.
    pub len: u64,
}

/// Engine-level statistics (the physical call counts are in [`Counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VolumeStats {
    /// Commits that wrote frames.
    pub commits: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Current log length in bytes (written or staged).
    pub log_bytes: u64,
    /// Data file length in blocks.
    pub data_blocks: u64,
    /// Logical files.
    pub files: u64,
    /// Transactions replayed from the log at mount.
    pub recovered_commits: u64,
}

/// A home block of a page: its block number in the data file (0 = none; blocks 0 and 1 are
/// superblocks so 0 is never a home) and the xxh3 of its 4 KiB.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Home {
    block: u64,
    hash: u64,
}

/// Where the newest image of a page lives in the log: payload offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LogLoc {
    offset: u64,
    len: u32,
}

#[derive(Debug)]
struct FileState {
    name: String,
    size: u64,
    /// Home blocks by page index; may be shorter than the page count (the rest are holes).
    home: Vec<Home>,
    /// Memory mode: the whole contents once loaded. Invariant: `len() == size`.
    content: Option<Vec<u8>>,
    /// Pages whose newest image is in the log (supersedes `home`).
    log: BTreeMap<u64, LogLoc>,
    /// Disk mode: page images of the current segment not yet serialized.
    staged: BTreeMap<u64, Box<[u8]>>,
}

impl FileState {
    fn new(name: String, size: u64, home: Vec<Home>, content: Option<Vec<u8>>) -> Self {
        Self {
            name,
            size,
            home,
            content,
            log: BTreeMap::new(),
            staged: BTreeMap::new(),
        }
    }
}

/// What the current segment (frames not yet serialized) did to one file.
#[derive(Debug)]
struct Touch {
    existed_before: bool,
    created: bool,
    deleted: bool,
    renamed: bool,
    start_size: u64,
    min_size: u64,
    dirty: BTreeSet<u64>,
}

fn pages_for(size: u64) -> u64 {
    size.div_ceil(PAGE)
}

fn corrupt(what: impl Into<String>, file: PhysicalFileId, offset: u64) -> Error {
    Error::Corrupt {
        what: what.into(),
        file,
        offset,
    }
}

fn check_name(name: &str) -> Result<()> {
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

/// A random-enough 32-bit nonce: wall clock, a process-wide counter and an address, hashed.
/// Only needs to differ between mounts of one volume, not to be unpredictable.
fn mount_nonce() -> u32 {
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
    let h = xxh3_64(&seed);
    // Fold the 64-bit hash into 32 bits.
    u32::try_from((h ^ (h >> 32)) & 0xFFFF_FFFF).unwrap_or(0)
}

fn usize_of(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::TooLarge { value: v })
}

/// Many logical files in a fixed set of physical files. See the module docs.
#[derive(Debug)]
pub struct Volume<S: Storage> {
    storage: Counted<S>,
    opts: VolumeOptions,
    poisoned: Option<String>,

    // --- checkpointed state ---
    sb: Superblock,
    /// Which slot (0 or 1) holds `sb`.
    sb_slot: u64,
    /// Blocks of the current catalog blob (must survive until the next superblock switch).
    catalog_blocks: (u64, u64),
    block_count: u64,
    free: BTreeSet<u64>,
    /// Home blocks dropped since the last checkpoint: free once the next one completes.
    free_after_checkpoint: Vec<u64>,

    // --- live logical state ---
    files: HashMap<u64, FileState>,
    names: HashMap<String, u64>,
    next_file_id: u64,

    // --- current segment ---
    touched: BTreeMap<u64, Touch>,
    /// Disk mode: bytes of all files' `staged` images.
    staged_bytes: usize,
    /// Frames were serialized for the current transaction without a commit frame yet.
    open_txn_frames: bool,

    // --- log ---
    log_buf: Vec<u8>,
    log_written: u64,
    log_flushed: u64,
    chain: u64,
    next_txn_seq: u64,
    oldest_unflushed: Option<Instant>,
    /// The last buffer written to the log (at most [`RECENT_MAX`] bytes) and its offset.
    recent: Vec<u8>,
    recent_at: u64,
    /// Random nonce of this mount, hashed into every frame (see `format::decode_frame`).
    session: u32,
    /// Whether the data file has been flushed during this mount. Until it has, the superblock
    /// we mounted may exist only in the OS cache (a crash right after a checkpoint's
    /// superblock write): the log must not be overwritten before it is durable.
    data_flushed: bool,

    stats: VolumeStats,
}

impl<S: Storage> Volume<S> {
    /// Mounts the volume in `storage`, creating it if the storage is empty, and recovers the
    /// last committed state from the log. Reads: both superblocks (one call), the catalog (one
    /// call) and the log (one call per 8 MiB).
    pub fn mount(storage: S, opts: VolumeOptions) -> Result<Self> {
        let mut storage = Counted::new(storage);
        let data_len = storage
            .file(PhysicalFileId::Data)
            .len()
            .map_err(|e| Error::from_storage(PhysicalFileId::Data, e))?;
        let mut slots = vec![0u8; 2 * PAGE_SIZE];
        if data_len > 0 {
            read_zero_filled(&mut storage.file(PhysicalFileId::Data), 0, &mut slots)
                .map_err(|e| Error::from_storage(PhysicalFileId::Data, e))?;
        }
        let a = Superblock::decode(&slots[..PAGE_SIZE]);
        let b = Superblock::decode(&slots[PAGE_SIZE..]);
        let best = [(0u64, &a), (1u64, &b)]
            .into_iter()
            .filter_map(|(i, r)| match r {
                Ok(Some(sb)) => Some((i, sb.clone())),
                _ => None,
            })
            .max_by_key(|(_, sb)| sb.generation);
        let Some((slot, sb)) = best else {
            // No valid superblock. Every commit writes the log and the log is never truncated
            // after creation, so an empty log means nothing was ever committed (a new volume,
            // or a crash while creating one): creating it (again) loses nothing. A non-empty
            // log means the data file was lost or damaged: refuse rather than start an empty
            // volume over it.
            let log = PhysicalFileId::Log;
            let log_len = storage
                .file(log)
                .len()
                .map_err(|e| Error::from_storage(log, e))?;
            if log_len > 0 {
                let why = a
                    .err()
                    .or(b.err())
                    .unwrap_or("no superblock but the log is not empty (data file lost?)");
                return Err(corrupt(why, PhysicalFileId::Data, 0));
            }
            return Self::create_new(storage, opts, data_len);
        };
        // If the newest slot is damaged we are falling back to an older checkpoint: its home
        // blocks may since have been reused, so verify every one before trusting it.
        let other_damaged = if slot == 0 { b.is_err() } else { a.is_err() };
        let mut vol = Self::empty(storage, opts, sb, slot);
        vol.load_catalog(data_len)?;
        vol.recover_log()?;
        if other_damaged {
            vol.verify_home_blocks()?;
        }
        Ok(vol)
    }

    fn empty(storage: Counted<S>, opts: VolumeOptions, sb: Superblock, slot: u64) -> Self {
        let chain = sb.log_salt;
        Self {
            storage,
            opts,
            poisoned: None,
            sb_slot: slot,
            catalog_blocks: (sb.catalog_block, pages_for(sb.catalog_len)),
            block_count: sb.block_count.max(SUPER_SLOTS),
            free: BTreeSet::new(),
            free_after_checkpoint: Vec::new(),
            files: HashMap::new(),
            names: HashMap::new(),
            next_file_id: sb.next_file_id,
            touched: BTreeMap::new(),
            staged_bytes: 0,
            open_txn_frames: false,
            log_buf: Vec::new(),
            log_written: 0,
            log_flushed: 0,
            chain,
            next_txn_seq: sb.next_txn_seq,
            oldest_unflushed: None,
            recent: Vec::new(),
            recent_at: 0,
            session: mount_nonce(),
            data_flushed: false,
            stats: VolumeStats::default(),
            sb,
        }
    }

    /// Writes a new volume: one superblock in slot 0 pointing at no catalog (an empty one),
    /// then one flush. A crash before the flush leaves either no valid superblock or this one;
    /// with the log still empty, mount treats the first as a new volume again.
    fn create_new(mut storage: Counted<S>, opts: VolumeOptions, data_len: u64) -> Result<Self> {
        // A fresh salt per volume, so frames left in a reused log file by an earlier volume
        // can never chain into this one.
        let seed = [
            u64::from(mount_nonce()).to_le_bytes(),
            data_len.to_le_bytes(),
        ]
        .concat();
        let salt = xxh3_64(&seed);
        let sb = Superblock {
            generation: 1,
            log_salt: format::epoch_salt(salt, 1),
            catalog_block: SUPER_SLOTS,
            catalog_len: 0,
            catalog_hash: format::catalog_hash(&[]),
            next_file_id: 1,
            next_txn_seq: 1,
            block_count: SUPER_SLOTS,
        };
        let log = PhysicalFileId::Log;
        let data = PhysicalFileId::Data;
        storage
            .file(log)
            .set_len(0)
            .map_err(|e| Error::from_storage(log, e))?;
        storage
            .file(data)
            .write_at(0, &sb.encode())
            .map_err(|e| Error::from_storage(data, e))?;
        storage
            .file(data)
            .flush()
            .map_err(|e| Error::from_storage(data, e))?;
        let mut vol = Self::empty(storage, opts, sb, 0);
        vol.block_count = SUPER_SLOTS;
        vol.data_flushed = true;
        Ok(vol)
    }

    fn load_catalog(&mut self, data_len: u64) -> Result<()> {
        let data = PhysicalFileId::Data;
        let sb = self.sb.clone();
        let off = sb.catalog_block.checked_mul(PAGE);
        // An empty catalog (a new volume) occupies no bytes.
        let in_file = sb.catalog_len == 0
            || off
                .and_then(|o| o.checked_add(sb.catalog_len))
                .is_some_and(|end| end <= data_len);
        if sb.catalog_block < SUPER_SLOTS || !in_file || sb.catalog_len > (1 << 32) {
            return Err(corrupt(
                "catalog location outside the data file (truncated?)",
                data,
                sb.catalog_block.saturating_mul(PAGE),
            ));
        }
        let off = sb.catalog_block * PAGE;
        let mut blob = vec![0u8; usize_of(sb.catalog_len)?];
        let n = self
            .storage
            .file(data)
            .read_at(off, &mut blob)
            .map_err(|e| Error::from_storage(data, e))?;
        if n != blob.len() || format::catalog_hash(&blob) != sb.catalog_hash {
            return Err(corrupt("catalog checksum mismatch", data, off));
        }
        let entries = format::decode_catalog(&blob).map_err(|w| corrupt(w, data, off))?;
        let file_blocks = data_len / PAGE;
        self.block_count = file_blocks.max(sb.block_count).max(SUPER_SLOTS);
        let mut used: BTreeSet<u64> = BTreeSet::new();
        let cat_blocks = pages_for(sb.catalog_len);
        for b in sb.catalog_block..sb.catalog_block + cat_blocks {
            used.insert(b);
        }
        for e in entries {
            if e.id == 0 || e.id >= sb.next_file_id || self.files.contains_key(&e.id) {
                return Err(corrupt(format!("bad file id {}", e.id), data, off));
            }
            if check_name(&e.name).is_err() || self.names.contains_key(&e.name) {
                return Err(corrupt(
                    format!("bad or duplicate name {:?}", e.name),
                    data,
                    off,
                ));
            }
            if e.size > MAX_FILE_SIZE {
                return Err(corrupt("file size out of range", data, off));
            }
            let npages = pages_for(e.size);
            let mut home = Vec::new();
            for run in &e.runs {
                let count = run.hashes.len() as u64;
                let end_page = run.first_page.checked_add(count);
                let end_block = run.first_block.checked_add(count);
                if end_page.is_none_or(|p| p > npages)
                    || end_block.is_none_or(|b| b > file_blocks)
                    || run.first_block < SUPER_SLOTS
                {
                    return Err(corrupt(
                        format!("extent of {:?} outside file or data file", e.name),
                        data,
                        off,
                    ));
                }
                for (i, &hash) in run.hashes.iter().enumerate() {
                    let page = usize_of(run.first_page + i as u64)?;
                    let block = run.first_block + i as u64;
                    if !used.insert(block) {
                        return Err(corrupt(format!("block {block} used twice"), data, off));
                    }
                    if home.len() <= page {
                        home.resize(page + 1, Home::default());
                    }
                    home[page] = Home { block, hash };
                }
            }
            self.names.insert(e.name.clone(), e.id);
            self.files
                .insert(e.id, FileState::new(e.name, e.size, home, None));
        }
        self.free = (SUPER_SLOTS..self.block_count)
            .filter(|b| !used.contains(b))
            .collect();
        Ok(())
    }

    /// Replays committed transactions of the current log epoch. Stops at the first frame that
    /// does not continue the chain; frames after the last commit frame are ignored.
    fn recover_log(&mut self) -> Result<()> {
        let log = PhysicalFileId::Log;
        let log_len = self
            .storage
            .file(log)
            .len()
            .map_err(|e| Error::from_storage(log, e))?;
        const WINDOW: u64 = 8 << 20;
        let salt = self.sb.log_salt;
        let mut chain = salt;
        let mut pos = 0u64; // log offset of `buf[0]`
        let mut buf: Vec<u8> = Vec::new();
        let mut cur = 0usize; // parse position in buf
        let mut txn: Vec<(format::FrameHeader, Vec<u8>, u64)> = Vec::new();
        let mut committed_end = 0u64;
        let mut committed_chain = salt;
        let mut file_end = 0u64; // how much of the log file has been read into buf
        loop {
            // Make sure a whole frame (header + max payload) is buffered if the file has it.
            if buf.len() - cur < FRAME_HEADER + PAGE_SIZE && file_end < log_len {
                buf.drain(..cur);
                pos += cur as u64;
                cur = 0;
                let want = WINDOW.min(log_len - file_end);
                let old = buf.len();
                buf.resize(old + usize_of(want)?, 0);
                let n = self
                    .storage
                    .file(log)
                    .read_at(file_end, &mut buf[old..])
                    .map_err(|e| Error::from_storage(log, e))?;
                buf.truncate(old + n);
                file_end += n as u64;
                if n == 0 {
                    break;
                }
            }
            let Some((h, payload)) = decode_frame(&buf[cur..], salt, chain) else {
                break;
            };
            let frame_len = FRAME_HEADER + payload.len();
            let payload_off = pos + (cur + FRAME_HEADER) as u64;
            chain = h.chain;
            if h.kind == FrameKind::Commit {
                if h.arg != self.next_txn_seq {
                    break;
                }
                for (fh, p, off) in txn.drain(..) {
                    self.replay(&fh, &p, off)
                        .map_err(|w| corrupt(w, log, off))?;
                }
                self.next_txn_seq += 1;
                self.stats.recovered_commits += 1;
                committed_end = pos + (cur + frame_len) as u64;
                committed_chain = chain;
            } else {
                // Page payloads stay in the log (only their offset is indexed); names are kept.
                let keep = if h.kind == FrameKind::Page {
                    &[][..]
                } else {
                    payload
                };
                txn.push((h, keep.to_vec(), payload_off));
            }
            cur += frame_len;
        }
        self.log_written = committed_end;
        // What recovery read may still be only in the OS cache (a process crash): the next
        // flush must flush it.
        self.log_flushed = 0;
        self.chain = committed_chain;
        // Names must be unique after replay.
        self.names.clear();
        for (&id, f) in &self.files {
            if self.names.insert(f.name.clone(), id).is_some() {
                return Err(corrupt(
                    format!("duplicate name {:?} after log replay", f.name),
                    log,
                    0,
                ));
            }
        }
        Ok(())
    }

    /// Applies one committed frame during recovery. Errors are descriptions of corruption.
    fn replay(&mut self, h: &format::FrameHeader, payload: &[u8], off: u64) -> Result<(), String> {
        let id = h.file_id;
        let name = || std::str::from_utf8(payload).map(str::to_owned);
        match h.kind {
            FrameKind::Create => {
                let name = name().map_err(|_| "name not UTF-8".to_string())?;
                if id == 0 || self.files.contains_key(&id) {
                    return Err(format!("create of existing file id {id}"));
                }
                self.next_file_id = self.next_file_id.max(id + 1);
                self.files
                    .insert(id, FileState::new(name, 0, Vec::new(), None));
            }
            FrameKind::Rename => {
                let name = name().map_err(|_| "name not UTF-8".to_string())?;
                let f = self
                    .files
                    .get_mut(&id)
                    .ok_or_else(|| format!("rename of missing file {id}"))?;
                f.name = name;
            }
            FrameKind::Delete => {
                let f = self
                    .files
                    .remove(&id)
                    .ok_or_else(|| format!("delete of missing file {id}"))?;
                self.free_after_checkpoint
                    .extend(f.home.iter().filter(|h| h.block != 0).map(|h| h.block));
            }
            FrameKind::SetLen => {
                if h.arg > MAX_FILE_SIZE {
                    return Err("length out of range".into());
                }
                self.cut_pages(id, h.arg)
                    .map_err(|_| format!("set_len of missing file {id}"))?;
                if let Some(f) = self.files.get_mut(&id) {
                    f.size = h.arg;
                }
            }
            FrameKind::Page => {
                let f = self
                    .files
                    .get_mut(&id)
                    .ok_or_else(|| format!("page of missing file {id}"))?;
                if h.arg >= pages_for(f.size) {
                    return Err(format!("page {} beyond end of file {id}", h.arg));
                }
                f.log.insert(
                    h.arg,
                    LogLoc {
                        offset: off,
                        len: h.payload_len,
                    },
                );
            }
            FrameKind::Commit => unreachable!("commit frames are handled by recover_log"),
        }
        Ok(())
    }

    /// Drops every page of `id` at or beyond `pages_for(len)` from the home map, the log
    /// index and the staged images (home blocks become free after the next checkpoint).
    /// Does not change `size`.
    fn cut_pages(&mut self, id: u64, len: u64) -> Result<()> {
        let f = self.files.get_mut(&id).ok_or(Error::StaleId { id })?;
        let keep = pages_for(len);
        if (f.home.len() as u64) > keep {
            let cut = f.home.split_off(usize_of(keep)?);
            self.free_after_checkpoint
                .extend(cut.iter().filter(|h| h.block != 0).map(|h| h.block));
        }
        f.log.split_off(&keep);
        let dropped = f.staged.split_off(&keep);
        self.staged_bytes -= dropped.len() * PAGE_SIZE;
        Ok(())
    }

    /// After falling back to an older superblock: every home block not superseded by the log
    /// must still hash to what the catalog says.
    fn verify_home_blocks(&mut self) -> Result<()> {
        let mut checks: Vec<(u64, u64)> = Vec::new();
        for f in self.files.values() {
            for (p, h) in f.home.iter().enumerate() {
                if h.block != 0 && !f.log.contains_key(&(p as u64)) {
                    checks.push((h.block, h.hash));
                }
            }
        }
        checks.sort_unstable();
        let mut buf = vec![0u8; PAGE_SIZE];
        for (block, hash) in checks {
            self.read_phys(PhysicalFileId::Data, block * PAGE, &mut buf)?;
            if xxh3_64(&buf) != hash {
                return Err(corrupt(
                    "newest superblock damaged and the older checkpoint's blocks were reused",
                    PhysicalFileId::Data,
                    block * PAGE,
                ));
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Public filesystem API
    // ------------------------------------------------------------------------------------

    /// The options the volume was mounted with.
    pub fn options(&self) -> &VolumeOptions {
        &self.opts
    }

    /// Physical call counters since mount.
    pub fn counters(&self) -> Counters {
        self.storage.counters()
    }

    /// Engine statistics.
    pub fn stats(&self) -> VolumeStats {
        VolumeStats {
            log_bytes: self.log_end(),
            data_blocks: self.block_count,
            files: self.files.len() as u64,
            ..self.stats
        }
    }

    /// The storage (e.g. to inspect a memory or crash backend).
    pub fn storage(&self) -> &S {
        self.storage.inner()
    }

    /// Mutable access to the storage, bypassing the counters (fault injection in tests).
    pub fn storage_mut(&mut self) -> &mut S {
        self.storage.inner_mut()
    }

    fn check_usable(&self) -> Result<()> {
        match &self.poisoned {
            Some(cause) => Err(Error::Poisoned {
                cause: cause.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Looks a file up by name.
    pub fn open(&self, name: &str) -> Result<FileId> {
        self.check_usable()?;
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

    /// Creates an empty file; fails if the name exists.
    pub fn create(&mut self, name: &str) -> Result<FileId> {
        self.check_usable()?;
        check_name(name)?;
        if self.names.contains_key(name) {
            return Err(Error::AlreadyExists {
                name: name.to_owned(),
            });
        }
        let id = self.next_file_id;
        self.next_file_id += 1;
        let content = (self.opts.buffer_mode == BufferMode::Memory).then(Vec::new);
        self.files
            .insert(id, FileState::new(name.to_owned(), 0, Vec::new(), content));
        self.names.insert(name.to_owned(), id);
        self.touched.insert(
            id,
            Touch {
                existed_before: false,
                created: true,
                deleted: false,
                renamed: false,
                start_size: 0,
                min_size: 0,
                dirty: BTreeSet::new(),
            },
        );
        Ok(FileId(id))
    }

    /// Opens the file, creating it empty if absent.
    pub fn open_or_create(&mut self, name: &str) -> Result<FileId> {
        match self.names.get(name) {
            Some(&id) => {
                self.check_usable()?;
                Ok(FileId(id))
            }
            None => self.create(name),
        }
    }

    /// Name and length of a file.
    pub fn stat(&self, name: &str) -> Result<Metadata> {
        let id = self.open(name)?;
        Ok(Metadata {
            id,
            name: name.to_owned(),
            len: self.files[&id.0].size,
        })
    }

    /// Every file, sorted by name.
    pub fn list(&self) -> Vec<Metadata> {
        let mut v: Vec<Metadata> = self
            .files
            .iter()
            .map(|(&id, f)| Metadata {
                id: FileId(id),
                name: f.name.clone(),
                len: f.size,
            })
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// Current name of an open file.
    pub fn name_of(&self, id: FileId) -> Result<&str> {
        self.files
            .get(&id.0)
            .map(|f| f.name.as_str())
            .ok_or(Error::StaleId { id: id.0 })
    }

    /// Length of an open file.
    pub fn len(&self, id: FileId) -> Result<u64> {
        self.check_usable()?;
        self.files
            .get(&id.0)
            .map(|f| f.size)
            .ok_or(Error::StaleId { id: id.0 })
    }

    fn touch(&mut self, id: u64) -> Result<&mut Touch> {
        let f = self.files.get(&id).ok_or(Error::StaleId { id })?;
        let size = f.size;
        Ok(self.touched.entry(id).or_insert_with(|| Touch {
            existed_before: true,
            created: false,
            deleted: false,
            renamed: false,
            start_size: size,
            min_size: size,
            dirty: BTreeSet::new(),
        }))
    }

    /// Renames `from` to `to`; fails if `to` exists.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<()> {
        self.check_usable()?;
        check_name(to)?;
        let id = self.open(from)?.0;
        if from == to {
            return Ok(());
        }
        if self.names.contains_key(to) {
            return Err(Error::AlreadyExists {
                name: to.to_owned(),
            });
        }
        self.touch(id)?.renamed = true;
        self.names.remove(from);
        self.names.insert(to.to_owned(), id);
        if let Some(f) = self.files.get_mut(&id) {
            f.name = to.to_owned();
        }
        Ok(())
    }

    /// Deletes a file by name. Its space is reused after the next checkpoint.
    pub fn delete(&mut self, name: &str) -> Result<()> {
        let id = self.open(name)?;
        self.delete_id(id)
    }

    /// Deletes an open file.
    pub fn delete_id(&mut self, id: FileId) -> Result<()> {
        self.check_usable()?;
        let id = id.0;
        let t = self.touch(id)?;
        t.deleted = true;
        t.dirty.clear();
        let f = self.files.remove(&id).ok_or(Error::StaleId { id })?;
        self.names.remove(&f.name);
        self.free_after_checkpoint
            .extend(f.home.iter().filter(|h| h.block != 0).map(|h| h.block));
        self.staged_bytes -= f.staged.len() * PAGE_SIZE;
        Ok(())
    }

    /// Reads up to `buf.len()` bytes at `offset`; returns the count (short only at end of file).
    pub fn read(&mut self, id: FileId, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.check_usable()?;
        let size = self.len(id)?;
        if offset >= size || buf.is_empty() {
            return Ok(0);
        }
        let n = usize_of((size - offset).min(buf.len() as u64))?;
        let buf = &mut buf[..n];
        if self.opts.buffer_mode == BufferMode::Memory {
            self.ensure_loaded(id.0)?;
            let content = self.files[&id.0].content.as_ref().expect("loaded above");
            let start = usize_of(offset)?;
            buf.copy_from_slice(&content[start..start + n]);
            return Ok(n);
        }
        self.read_pages_disk(id.0, offset, buf)?;
        Ok(n)
    }

    /// The whole file.
    pub fn read_to_vec(&mut self, id: FileId) -> Result<Vec<u8>> {
        let mut v = vec![0u8; usize_of(self.len(id)?)?];
        let n = self.read(id, 0, &mut v)?;
        v.truncate(n);
        Ok(v)
    }

    /// Writes `data` at `offset`, extending the file (with zeros in any gap) if needed.
    pub fn write(&mut self, id: FileId, offset: u64, data: &[u8]) -> Result<()> {
        self.check_usable()?;
        let id = id.0;
        let size = self.files.get(&id).ok_or(Error::StaleId { id })?.size;
        let end = offset
            .checked_add(data.len() as u64)
            .filter(|&e| e <= MAX_FILE_SIZE)
            .ok_or(Error::TooLarge { value: offset })?;
        if data.is_empty() {
            return Ok(());
        }
        let memory = self.opts.buffer_mode == BufferMode::Memory;
        let first = offset / PAGE;
        let last = (end - 1) / PAGE;
        // Everything that can fail (loading, reading partially overwritten pages) happens
        // before any state changes, so a failed write leaves the volume as it was.
        let mut loaded: Vec<(u64, Box<[u8]>)> = Vec::new();
        if memory {
            self.ensure_loaded(id)?;
        } else {
            // Only the first and the last page can be partially overwritten.
            for page in [first, last] {
                let pstart = page * PAGE;
                let partial = (offset > pstart || end < pstart + PAGE) && pstart < size;
                if partial && !loaded.iter().any(|(p, _)| *p == page) {
                    if let Some(img) = self.current_unstaged_image(id, page)? {
                        loaded.push((page, img));
                    }
                }
            }
        }
        let t = self.touch(id)?;
        t.dirty.extend(first..=last);
        let f = self.files.get_mut(&id).expect("checked above");
        if end > size {
            f.size = end;
        }
        if memory {
            let c = f.content.as_mut().expect("loaded above");
            if c.len() < usize_of(end)? {
                c.resize(usize_of(end)?, 0);
            }
            let s = usize_of(offset)?;
            c[s..s + data.len()].copy_from_slice(data);
            return Ok(());
        }
        // Disk mode: update each touched page's staged image.
        for page in first..=last {
            let pstart = page * PAGE;
            let lo = offset.max(pstart);
            let hi = end.min(pstart + PAGE);
            let pre = loaded
                .iter()
                .position(|(p, _)| *p == page)
                .map(|i| loaded.swap_remove(i).1);
            let img = self.stage(id, page, pre);
            let d = usize_of(lo - offset)?;
            let p = usize_of(lo - pstart)?;
            let n = usize_of(hi - lo)?;
            img[p..p + n].copy_from_slice(&data[d..d + n]);
        }
        if self.staged_bytes > self.opts.write_buffer_bytes {
            self.serialize(false)?;
            self.write_out()?;
        }
        Ok(())
    }

    /// Sets the length: truncates, or extends with zeros.
    pub fn set_len(&mut self, id: FileId, len: u64) -> Result<()> {
        self.check_usable()?;
        let id = id.0;
        if len > MAX_FILE_SIZE {
            return Err(Error::TooLarge { value: len });
        }
        let size = self.files.get(&id).ok_or(Error::StaleId { id })?.size;
        if len == size {
            return Ok(());
        }
        let memory = self.opts.buffer_mode == BufferMode::Memory;
        // As in `write`: whatever can fail happens before any state changes.
        let mut cut_page_img = None;
        if memory {
            self.ensure_loaded(id)?;
        } else if len < size && !len.is_multiple_of(PAGE) {
            cut_page_img = self.current_unstaged_image(id, len / PAGE)?;
        }
        let keep = pages_for(len);
        let t = self.touch(id)?;
        if len < size {
            t.min_size = t.min_size.min(len);
            t.dirty.retain(|&p| p < keep);
            // The page cut in the middle must read as zeros past `len` if the file regrows:
            // log its new image.
            if !len.is_multiple_of(PAGE) {
                t.dirty.insert(len / PAGE);
            }
        }
        if len < size {
            if !memory && !len.is_multiple_of(PAGE) {
                let img = self.stage(id, len / PAGE, cut_page_img);
                img[usize_of(len % PAGE)?..].fill(0);
            }
            self.cut_pages(id, len)?;
        }
        let f = self.files.get_mut(&id).expect("checked above");
        f.size = len;
        if let Some(c) = f.content.as_mut() {
            c.resize(usize_of(len)?, 0);
        }
        Ok(())
    }

    /// Ends the current transaction according to the durability level. A no-op when nothing
    /// changed since the last commit.
    pub fn commit(&mut self) -> Result<()> {
        self.check_usable()?;
        if self.touched.is_empty() && !self.open_txn_frames {
            return Ok(());
        }
        self.serialize(true)?;
        self.stats.commits += 1;
        let now_unflushed = self.oldest_unflushed.get_or_insert_with(Instant::now);
        let overdue = now_unflushed.elapsed() >= self.opts.max_flush_delay;
        match self.opts.durability {
            Durability::Strict => {
                self.write_out()?;
                self.flush_log()?;
            }
            Durability::Relaxed => {
                self.write_out()?;
                if overdue {
                    self.flush_log()?;
                }
            }
            Durability::Balanced => {
                if overdue {
                    self.write_out()?;
                    self.flush_log()?;
                } else if self.log_buf.len() >= self.opts.write_buffer_bytes {
                    self.write_out()?;
                }
            }
        }
        if self.log_end() >= self.opts.checkpoint_bytes {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// Commits and makes every commit so far durable (written and flushed).
    pub fn flush(&mut self) -> Result<()> {
        self.commit()?;
        self.write_out()?;
        self.flush_log()
    }

    /// Flushes, then checkpoints if the option says so, and hands the storage back (to mount
    /// it again, or to drop it, which closes OPFS handles).
    pub fn close(mut self) -> Result<S> {
        self.flush()?;
        if self.opts.checkpoint_on_close && self.log_end() > 0 {
            self.checkpoint()?;
        }
        Ok(self.storage.into_inner())
    }

    /// Gives the storage back without flushing: what survives is what a crash would leave.
    pub fn into_storage_unflushed(self) -> S {
        self.storage.into_inner()
    }

    // ------------------------------------------------------------------------------------
    // Reading pages
    // ------------------------------------------------------------------------------------

    fn read_phys(&mut self, file: PhysicalFileId, offset: u64, buf: &mut [u8]) -> Result<usize> {
        read_zero_filled(&mut self.storage.file(file), offset, buf)
            .map_err(|e| Error::from_storage(file, e))
    }

    /// Reads a log payload into `buf` (zero-filled past the payload).
    fn read_log(&mut self, loc: LogLoc, buf: &mut [u8]) -> Result<()> {
        let len = (loc.len as usize).min(buf.len());
        self.read_log_range(loc.offset, &mut buf[..len])?;
        buf[len..].fill(0);
        Ok(())
    }

    /// Reads log bytes `[offset, offset + buf.len())`: the written part from the log file,
    /// the rest from the unwritten buffer.
    fn read_log_range(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset + buf.len() as u64;
        let split = usize_of(self.log_written.clamp(offset, end) - offset)?;
        let recent_end = self.recent_at + self.recent.len() as u64;
        if split > 0 && offset >= self.recent_at && offset + split as u64 <= recent_end {
            let s = usize_of(offset - self.recent_at)?;
            buf[..split].copy_from_slice(&self.recent[s..s + split]);
        } else if split > 0 {
            let n = self.read_phys(PhysicalFileId::Log, offset, &mut buf[..split])?;
            if n != split {
                return Err(corrupt(
                    "log shorter than its index",
                    PhysicalFileId::Log,
                    offset,
                ));
            }
        }
        if split < buf.len() {
            let s = usize_of(offset + split as u64 - self.log_written)?;
            let n = buf.len() - split;
            buf[split..].copy_from_slice(&self.log_buf[s..s + n]);
        }
        Ok(())
    }

    fn read_home(&mut self, home: Home, buf: &mut [u8]) -> Result<()> {
        let off = home.block * PAGE;
        self.read_phys(PhysicalFileId::Data, off, buf)?;
        if xxh3_64(buf) != home.hash {
            return Err(corrupt(
                "home block checksum mismatch",
                PhysicalFileId::Data,
                off,
            ));
        }
        Ok(())
    }

    /// Disk mode: the current image of a page that is not staged (`None` if it is staged).
    fn current_unstaged_image(&mut self, id: u64, page: u64) -> Result<Option<Box<[u8]>>> {
        if self.files[&id].staged.contains_key(&page) {
            return Ok(None);
        }
        let mut img = vec![0u8; PAGE_SIZE].into_boxed_slice();
        self.read_page_disk(id, page, &mut img)?;
        Ok(Some(img))
    }

    /// Disk mode: the staged image of a page, staging `pre` (or zeros) first if the page is not
    /// staged yet. Cannot fail: callers read what they need beforehand.
    fn stage(&mut self, id: u64, page: u64, pre: Option<Box<[u8]>>) -> &mut [u8] {
        let staged_bytes = &mut self.staged_bytes;
        let f = self
            .files
            .get_mut(&id)
            .expect("caller checked the file exists");
        f.staged.entry(page).or_insert_with(|| {
            *staged_bytes += PAGE_SIZE;
            pre.unwrap_or_else(|| vec![0u8; PAGE_SIZE].into_boxed_slice())
        })
    }

    /// One page's current image (4 KiB), from staging, log, home block, or zeros.
    fn read_page_disk(&mut self, id: u64, page: u64, buf: &mut [u8]) -> Result<()> {
        let f = &self.files[&id];
        if let Some(img) = f.staged.get(&page) {
            buf.copy_from_slice(img);
            return Ok(());
        }
        if let Some(&loc) = f.log.get(&page) {
            return self.read_log(loc, buf);
        }
        let home = self.files[&id]
            .home
            .get(usize_of(page)?)
            .copied()
            .unwrap_or_default();
        if home.block == 0 {
            buf.fill(0);
            return Ok(());
        }
        self.read_home(home, buf)
    }

    /// Disk-mode read of `buf.len()` bytes (within the file) at `offset`. Runs of pages that
    /// live in consecutive home blocks are read with one call.
    fn read_pages_disk(&mut self, id: u64, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset + buf.len() as u64;
        let mut page = offset / PAGE;
        let mut scratch = vec![0u8; PAGE_SIZE];
        while page * PAGE < end {
            let pstart = page * PAGE;
            // Extend a run of home-only pages in consecutive blocks.
            let home_of = |v: &Self, p: u64| -> Option<Home> {
                let f = &v.files[&id];
                if f.staged.contains_key(&p) || f.log.contains_key(&p) {
                    return None;
                }
                let p = usize::try_from(p).ok()?;
                f.home.get(p).copied().filter(|h| h.block != 0)
            };
            let mut run = 1u64;
            if let Some(h0) = home_of(self, page) {
                while (page + run) * PAGE < end
                    && home_of(self, page + run).is_some_and(|h| h.block == h0.block + run)
                {
                    run += 1;
                }
            }
            if run > 1 {
                let h0 = home_of(self, page).expect("run start is a home page");
                let mut big = vec![0u8; usize_of(run * PAGE)?];
                self.read_phys(PhysicalFileId::Data, h0.block * PAGE, &mut big)?;
                for i in 0..run {
                    let h = home_of(self, page + i).expect("run member");
                    let blk = &big[usize_of(i * PAGE)?..usize_of((i + 1) * PAGE)?];
                    if xxh3_64(blk) != h.hash {
                        return Err(corrupt(
                            "home block checksum mismatch",
                            PhysicalFileId::Data,
                            h.block * PAGE,
                        ));
                    }
                }
                let lo = offset.max(pstart);
                let hi = end.min(pstart + run * PAGE);
                buf[usize_of(lo - offset)?..usize_of(hi - offset)?]
                    .copy_from_slice(&big[usize_of(lo - pstart)?..usize_of(hi - pstart)?]);
            } else {
                self.read_page_disk(id, page, &mut scratch)?;
                let lo = offset.max(pstart);
                let hi = end.min(pstart + PAGE);
                buf[usize_of(lo - offset)?..usize_of(hi - offset)?]
                    .copy_from_slice(&scratch[usize_of(lo - pstart)?..usize_of(hi - pstart)?]);
            }
            page += run;
        }
        Ok(())
    }

    /// Memory mode: on the first access to any file's contents, loads every file not loaded
    /// yet. Home blocks and log images are read in windows of up to [`LOAD_WINDOW`] bytes in
    /// physical order (gaps included), so loading N small files costs a few calls, not N: in
    /// Firefox every call costs ~100 µs whatever its size.
    fn ensure_loaded(&mut self, id: u64) -> Result<()> {
        let f = self.files.get(&id).ok_or(Error::StaleId { id })?;
        if f.content.is_some() {
            return Ok(());
        }
        // (physical offset, length, file, page, expected block hash or None for log images)
        let mut home_items: Vec<(u64, u64, u64, u64, Option<u64>)> = Vec::new();
        let mut log_items: Vec<(u64, u64, u64, u64, Option<u64>)> = Vec::new();
        // Contents are built here and installed only if every read succeeds: a failed load
        // must not leave zeros standing in for data.
        let mut contents: HashMap<u64, Vec<u8>> = HashMap::new();
        for (&fid, f) in self.files.iter() {
            if f.content.is_some() {
                continue;
            }
            contents.insert(fid, vec![0u8; usize_of(f.size)?]);
            for (p, h) in f.home.iter().enumerate() {
                let p = p as u64;
                if h.block != 0 && !f.log.contains_key(&p) {
                    home_items.push((h.block * PAGE, PAGE, fid, p, Some(h.hash)));
                }
            }
            for (&p, l) in &f.log {
                log_items.push((l.offset, u64::from(l.len), fid, p, None));
            }
        }
        self.load_items(PhysicalFileId::Data, home_items, &mut contents)?;
        self.load_items(PhysicalFileId::Log, log_items, &mut contents)?;
        for (fid, c) in contents {
            self.files.get_mut(&fid).expect("listed above").content = Some(c);
        }
        Ok(())
    }

    /// Reads `items` (sorted here by offset) window by window and copies each into its file's
    /// contents, verifying block hashes where given.
    fn load_items(
        &mut self,
        file: PhysicalFileId,
        mut items: Vec<(u64, u64, u64, u64, Option<u64>)>,
        contents: &mut HashMap<u64, Vec<u8>>,
    ) -> Result<()> {
        items.sort_unstable_by_key(|i| i.0);
        let mut i = 0;
        let mut window = Vec::new();
        while i < items.len() {
            let lo = items[i].0;
            let mut j = i;
            while j < items.len() && items[j].0 + items[j].1 - lo <= LOAD_WINDOW {
                j += 1;
            }
            let j = j.max(i + 1);
            let hi = items[i..j].iter().map(|x| x.0 + x.1).max().unwrap_or(lo);
            window.resize(usize_of(hi - lo)?, 0);
            if file == PhysicalFileId::Log {
                self.read_log_range(lo, &mut window)?;
            } else {
                self.read_phys(file, lo, &mut window)?;
            }
            for &(off, len, fid, page, hash) in &items[i..j] {
                let src = &window[usize_of(off - lo)?..usize_of(off - lo + len)?];
                if let Some(h) = hash {
                    if xxh3_64(src) != h {
                        return Err(corrupt("home block checksum mismatch", file, off));
                    }
                }
                let c = contents.get_mut(&fid).expect("being loaded");
                let s = usize_of(page * PAGE)?;
                let e = usize_of(((page + 1) * PAGE).min(c.len() as u64))?;
                let n = src.len().min(e - s);
                c[s..s + n].copy_from_slice(&src[..n]);
                c[s + n..e].fill(0);
            }
            i = j;
        }
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Writing the log
    // ------------------------------------------------------------------------------------

    fn log_end(&self) -> u64 {
        self.log_written + self.log_buf.len() as u64
    }

    fn poison(&mut self, e: Error) -> Error {
        self.poisoned = Some(e.to_string());
        e
    }

    /// Serializes the current segment into `log_buf` (deletes, renames, creates, lengths, page
    /// images; then a commit frame if `commit`), and indexes the page images.
    fn serialize(&mut self, commit: bool) -> Result<()> {
        let salt = self.sb.log_salt;
        let touched = std::mem::take(&mut self.touched);
        let mut buf = std::mem::take(&mut self.log_buf);
        let base = self.log_written;
        let mut chain = self.chain;
        let session = self.session;
        let mut frame = |buf: &mut Vec<u8>, kind, id, arg, payload: &[u8]| {
            chain = encode_frame(buf, salt, session, chain, kind, id, arg, payload);
        };
        for (&id, t) in &touched {
            if t.deleted && t.existed_before {
                frame(&mut buf, FrameKind::Delete, id, 0, &[]);
            }
        }
        for (&id, t) in &touched {
            if t.renamed && t.existed_before && !t.deleted {
                frame(
                    &mut buf,
                    FrameKind::Rename,
                    id,
                    0,
                    self.files[&id].name.as_bytes(),
                );
            }
        }
        for (&id, t) in &touched {
            if t.created && !t.deleted {
                frame(
                    &mut buf,
                    FrameKind::Create,
                    id,
                    0,
                    self.files[&id].name.as_bytes(),
                );
            }
        }
        for (&id, t) in &touched {
            if t.deleted {
                continue;
            }
            let size = self.files[&id].size;
            let mut base_size = t.start_size;
            if t.min_size < t.start_size {
                frame(&mut buf, FrameKind::SetLen, id, t.min_size, &[]);
                base_size = t.min_size;
            }
            if size != base_size {
                frame(&mut buf, FrameKind::SetLen, id, size, &[]);
            }
            for &page in t.dirty.range(..pages_for(size)) {
                let n = usize_of((size - page * PAGE).min(PAGE))?;
                let f = self.files.get_mut(&id).expect("touched file exists");
                // Memory mode: the image is in `content`. Disk mode: every dirty page was
                // staged when it was dirtied (write and set_len stage what they touch).
                let img: &[u8] = match (&f.content, f.staged.get(&page)) {
                    (Some(c), _) => {
                        let s = usize_of(page * PAGE)?;
                        &c[s..s + n]
                    }
                    (None, Some(img)) => &img[..n],
                    (None, None) => {
                        // Invariant broken (write and set_len stage every page they dirty).
                        // Refuse to log an unknown image; poison rather than panic.
                        let e = Error::Poisoned {
                            cause: format!("internal: dirty page {page} of file {id} not staged"),
                        };
                        return Err(self.poison(e));
                    }
                };
                let payload_off = base + (buf.len() + FRAME_HEADER) as u64;
                frame(&mut buf, FrameKind::Page, id, page, img);
                let len = u32::try_from(n).map_err(|_| Error::TooLarge { value: n as u64 })?;
                f.log.insert(
                    page,
                    LogLoc {
                        offset: payload_off,
                        len,
                    },
                );
            }
        }
        if commit {
            frame(&mut buf, FrameKind::Commit, 0, self.next_txn_seq, &[]);
            self.next_txn_seq += 1;
            self.open_txn_frames = false;
        } else {
            self.open_txn_frames = true;
        }
        self.chain = chain;
        self.log_buf = buf;
        for &id in touched.keys() {
            if let Some(f) = self.files.get_mut(&id) {
                f.staged.clear();
            }
        }
        self.staged_bytes = 0;
        Ok(())
    }

    /// Writes `log_buf` with one call. On failure the volume is poisoned.
    fn write_out(&mut self) -> Result<()> {
        if self.log_buf.is_empty() {
            return Ok(());
        }
        if !self.data_flushed {
            let data = PhysicalFileId::Data;
            if let Err(e) = self.storage.file(data).flush() {
                let err = Error::from_storage(data, e);
                return Err(self.poison(err));
            }
            self.data_flushed = true;
        }
        let log = PhysicalFileId::Log;
        let r = self
            .storage
            .file(log)
            .write_at(self.log_written, &self.log_buf);
        if let Err(e) = r {
            let err = Error::from_storage(log, e);
            return Err(self.poison(err));
        }
        // Keep what was just written (if small): Disk mode reads recently committed pages,
        // e.g. SQLite's page 1 at every transaction start, without a physical call.
        let at = self.log_written;
        self.log_written += self.log_buf.len() as u64;
        std::mem::swap(&mut self.log_buf, &mut self.recent);
        self.recent_at = at;
        self.log_buf.clear();
        if self.recent.len() > RECENT_MAX {
            self.recent = Vec::new();
        }
        Ok(())
    }

    fn flush_log(&mut self) -> Result<()> {
        if self.log_flushed == self.log_written {
            self.oldest_unflushed = None;
            return Ok(());
        }
        let log = PhysicalFileId::Log;
        if let Err(e) = self.storage.file(log).flush() {
            let err = Error::from_storage(log, e);
            return Err(self.poison(err));
        }
        self.log_flushed = self.log_written;
        self.oldest_unflushed = None;
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Checkpoint
    // ------------------------------------------------------------------------------------

    fn alloc_block(&mut self) -> u64 {
        if let Some(b) = self.free.pop_first() {
            return b;
        }
        let b = self.block_count;
        self.block_count += 1;
        b
    }

    /// Copies every page whose newest image is in the log to its home block, writes a new
    /// catalog, flushes, switches the superblock, flushes, and starts a new log epoch.
    /// Costs two data-file flushes (plus one log flush if the log was not flushed).
    pub fn checkpoint(&mut self) -> Result<()> {
        self.check_usable()?;
        self.commit()?;
        match self.checkpoint_inner() {
            Ok(()) => Ok(()),
            Err(e) => Err(self.poison(e)),
        }
    }

    fn checkpoint_inner(&mut self) -> Result<()> {
        self.write_out()?;
        self.flush_log()?;
        let data = PhysicalFileId::Data;
        // 1. Assign home blocks: keep a page's block (overwrite in place: the flushed log can
        //    redo it), else allocate one that is free in the new state.
        let mut work: Vec<(u64, u64, LogLoc)> = self
            .files
            .iter()
            .flat_map(|(&id, f)| f.log.iter().map(move |(&page, &loc)| (id, page, loc)))
            .collect();
        work.sort_unstable_by_key(|&(id, page, _)| (id, page));
        let mut jobs: Vec<(u64, u64, u64, LogLoc)> = Vec::with_capacity(work.len());
        for (id, page, loc) in work {
            let p = usize_of(page)?;
            let existing = self.files[&id].home.get(p).copied().unwrap_or_default();
            let block = if existing.block != 0 {
                existing.block
            } else {
                self.alloc_block()
            };
            jobs.push((block, id, page, loc));
        }
        // 2. Write the images. Jobs are taken in log order, in windows of at most LOAD_WINDOW
        //    bytes of log (one read per window where images must come from the log: Disk mode,
        //    or Memory-mode files never loaded); within a window, images are written in block
        //    order, consecutive blocks coalesced (≤ 1 MiB per call).
        jobs.sort_unstable_by_key(|j| j.3.offset);
        let mut window = Vec::new();
        let mut i = 0;
        while i < jobs.len() {
            let lo = jobs[i].3.offset;
            let mut j = i;
            while j < jobs.len() && jobs[j].3.offset + u64::from(jobs[j].3.len) - lo <= LOAD_WINDOW
            {
                j += 1;
            }
            let j = j.max(i + 1);
            let from_log = |v: &Self, id: u64| v.files[&id].content.is_none();
            if jobs[i..j].iter().any(|job| from_log(self, job.1)) {
                let hi = jobs[i..j]
                    .iter()
                    .map(|job| job.3.offset + u64::from(job.3.len))
                    .max()
                    .unwrap_or(lo);
                window.resize(usize_of(hi - lo)?, 0);
                self.read_log_range(lo, &mut window)?;
            }
            let mut batch: Vec<(u64, Vec<u8>)> = Vec::with_capacity(j - i);
            for &(block, id, page, loc) in &jobs[i..j] {
                let mut img = vec![0u8; PAGE_SIZE];
                let src: &[u8] = match &self.files[&id].content {
                    Some(c) => {
                        // Logged pages are within the file, whose contents are in memory.
                        let s = usize_of(page * PAGE)?.min(c.len());
                        let e = usize_of((page + 1) * PAGE)?.min(c.len());
                        &c[s..e]
                    }
                    None => {
                        let s = usize_of(loc.offset - lo)?;
                        &window[s..s + loc.len as usize]
                    }
                };
                img[..src.len()].copy_from_slice(src);
                let hash = xxh3_64(&img);
                let f = self.files.get_mut(&id).expect("indexed file exists");
                let p = usize_of(page)?;
                if f.home.len() <= p {
                    f.home.resize(p + 1, Home::default());
                }
                f.home[p] = Home { block, hash };
                batch.push((block, img));
            }
            batch.sort_unstable_by_key(|b| b.0);
            const MAX_RUN: usize = 256;
            let mut a = 0;
            while a < batch.len() {
                let mut b = a + 1;
                while b < batch.len() && b - a < MAX_RUN && batch[b].0 == batch[b - 1].0 + 1 {
                    b += 1;
                }
                let run: Vec<u8> = batch[a..b]
                    .iter()
                    .flat_map(|x| x.1.iter().copied())
                    .collect();
                self.storage
                    .file(data)
                    .write_at(batch[a].0 * PAGE, &run)
                    .map_err(|e| Error::from_storage(data, e))?;
                a = b;
            }
            i = j;
        }
        // 3. The new catalog, in blocks free in both the old and the new state.
        let mut ids: Vec<u64> = self.files.keys().copied().collect();
        ids.sort_unstable();
        let entries: Vec<CatalogEntry> = ids
            .iter()
            .map(|id| {
                let f = &self.files[id];
                let mut runs: Vec<Run> = Vec::new();
                for (p, h) in f.home.iter().enumerate() {
                    if h.block == 0 {
                        continue;
                    }
                    let p = p as u64;
                    match runs.last_mut() {
                        Some(r)
                            if r.first_page + r.hashes.len() as u64 == p
                                && r.first_block + r.hashes.len() as u64 == h.block =>
                        {
                            r.hashes.push(h.hash)
                        }
                        _ => runs.push(Run {
                            first_page: p,
                            first_block: h.block,
                            hashes: vec![h.hash],
                        }),
                    }
                }
                CatalogEntry {
                    id: *id,
                    name: f.name.clone(),
                    size: f.size,
                    runs,
                }
            })
            .collect();
        let blob = format::encode_catalog(&entries);
        let nblocks = pages_for(blob.len() as u64).max(1);
        let cat_block = self.alloc_contiguous(nblocks);
        self.storage
            .file(data)
            .write_at(cat_block * PAGE, &blob)
            .map_err(|e| Error::from_storage(data, e))?;
        self.storage
            .file(data)
            .flush()
            .map_err(|e| Error::from_storage(data, e))?;
        // 4. Switch the superblock (the other slot), flush.
        let generation = self.sb.generation + 1;
        let sb = Superblock {
            generation,
            log_salt: format::epoch_salt(self.sb.log_salt, generation),
            catalog_block: cat_block,
            catalog_len: blob.len() as u64,
            catalog_hash: format::catalog_hash(&blob),
            next_file_id: self.next_file_id,
            next_txn_seq: self.next_txn_seq,
            block_count: self.block_count,
        };
        let slot = 1 - self.sb_slot;
        self.storage
            .file(data)
            .write_at(slot * PAGE, &sb.encode())
            .map_err(|e| Error::from_storage(data, e))?;
        self.storage
            .file(data)
            .flush()
            .map_err(|e| Error::from_storage(data, e))?;
        // 5. The new state is durable: release old space, start the new log epoch.
        let (old_cat, old_n) = self.catalog_blocks;
        self.free.extend(old_cat..old_cat + old_n);
        self.free.extend(self.free_after_checkpoint.drain(..));
        self.catalog_blocks = (cat_block, nblocks);
        self.chain = sb.log_salt;
        self.sb = sb;
        self.sb_slot = slot;
        for f in self.files.values_mut() {
            f.log.clear();
        }
        self.log_written = 0;
        self.log_flushed = 0;
        // Log offsets restart at 0: the kept buffer belongs to the old epoch.
        self.recent.clear();
        self.recent_at = 0;
        self.data_flushed = true;
        self.stats.checkpoints += 1;
        Ok(())
    }

    /// `n` consecutive free blocks (first fit), else extends the data file.
    fn alloc_contiguous(&mut self, n: u64) -> u64 {
        let mut start = None;
        let mut prev: Option<u64> = None;
        let mut len = 0;
        for &b in &self.free {
            if prev == Some(b.wrapping_sub(1)) {
                len += 1;
            } else {
                start = Some(b);
                len = 1;
            }
            prev = Some(b);
            if len == n {
                break;
            }
        }
        if len == n {
            let s = start.expect("run found");
            for b in s..s + n {
                self.free.remove(&b);
            }
            return s;
        }
        let s = self.block_count;
        self.block_count += n;
        s
    }
}
