//! Mount: choose the superblock, load the catalog, replay the log.
//!
//! 1. Both superblock slots are read with one call. A slot of another format version is never
//!    overwritten: [`Error::UnsupportedVersion`]. No valid slot: a volume whose creation was
//!    interrupted (slot 1 empty, data file no longer than two blocks, empty log) is created
//!    again; anything else is [`Error::Corrupt`].
//! 2. The valid slot with the higher generation `g` wins. If the log's first frame belongs to
//!    epoch `g + 1`, a newer checkpoint existed and its superblock is damaged: mounting `g`
//!    would silently lose everything since, so mount fails with
//!    [`Error::NewerCheckpointLost`]. If the other slot is damaged and the log does not start
//!    with epoch `g`, every home block is verified before the state is trusted.
//! 3. The catalog (directory → entry chunks → map chunks) is read in block order, in windows.
//! 4. The log is read from offset 0 in growing windows, following the chain; each file's frames
//!    take effect when a commit frame lists it.

use std::collections::{BTreeMap, HashMap};

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::format::{
    self, decode_frame, decode_ids, BlobPtr, Contents, FrameHeader, FrameKind, Slot, Superblock,
    ENTRY_CHUNK_FILES, FRAME_HEADER, MAP_CHUNK_PAGES, PAGE, PAGE_SIZE, SUPER_SLOTS,
};
use crate::storage::{read_zero_filled, Counted, PhysicalFile, PhysicalFileId, Storage};

use super::alloc::{Allocator, RangeSet};
use super::log::LogWriter;
use super::maps::Home;
use super::read::{load_window, PageCache};
use super::state::{pages_for, place_of, FileState, LogLoc, PatchLoc, LINK_BASE};
use super::{
    check_name, corrupt, ix, n32, nonce, usize_of, Catalog, Volume, VolumeOptions, VolumeStats,
    MAX_FILE_ID, MAX_FILE_SIZE,
};

/// Generations and commit sequence numbers are below this (a checkpoint or a commit every
/// nanosecond would take 146 years to reach it).
const MAX_COUNTER: u64 = 1 << 62;

/// First log window read at mount; later windows double up to [`MAX_LOG_WINDOW`].
const FIRST_LOG_WINDOW: u64 = 64 << 10;
const MAX_LOG_WINDOW: u64 = 8 << 20;

pub(super) fn mount<S: Storage>(storage: S, opts: VolumeOptions) -> Result<Volume<S>> {
    let mut storage = Counted::new(storage);
    let data = PhysicalFileId::Data;
    let log = PhysicalFileId::Log;
    let data_len = storage
        .file(data)
        .len()
        .map_err(|e| Error::from_storage(data, e))?;
    let log_len = storage
        .file(log)
        .len()
        .map_err(|e| Error::from_storage(log, e))?;
    let mut slots = vec![0u8; 2 * PAGE_SIZE];
    if data_len > 0 {
        read_zero_filled(&mut storage.file(data), 0, &mut slots)
            .map_err(|e| Error::from_storage(data, e))?;
    }
    let s0 = Superblock::decode(&slots[..PAGE_SIZE]);
    let s1 = Superblock::decode(&slots[PAGE_SIZE..]);
    for s in [&s0, &s1] {
        if let Slot::Unsupported(found) = s {
            return Err(Error::UnsupportedVersion {
                found: *found,
                supported: format::FORMAT_VERSION,
            });
        }
    }
    let valid: Vec<(u64, Superblock)> = [(0u64, &s0), (1u64, &s1)]
        .into_iter()
        .filter_map(|(i, s)| match s {
            Slot::Valid(sb) => Some((i, sb.clone())),
            _ => None,
        })
        .collect();
    let Some((slot, sb)) = valid.into_iter().max_by_key(|(_, sb)| sb.generation) else {
        // Creation writes both slots with one call and flushes; a torn creation keeps a prefix:
        // slot 0 damaged and slot 1 empty. Nothing was ever committed then.
        let interrupted = s1 == Slot::Empty && data_len <= 2 * PAGE && log_len == 0;
        if interrupted {
            return create_new(storage, opts);
        }
        let why = match (&s0, &s1) {
            (Slot::Invalid(w), _) | (_, Slot::Invalid(w)) => *w,
            _ => "no superblock, but the volume is not empty (data file damaged or lost?)",
        };
        return Err(corrupt(why, data, 0));
    };
    if sb.generation % 2 != slot {
        return Err(corrupt(
            format!("superblock of generation {} in slot {slot}", sb.generation),
            data,
            slot * PAGE,
        ));
    }
    // File ids start at 1 (0 is "no file" in commit frames) and stay below MAX_FILE_ID, so
    // `create` can neither hand out 0 nor overflow (found by fuzz/: a superblock claiming
    // next id 0 over an empty catalog mounted, and the first file created made a log that the
    // next mount refused).
    if sb.next_file_id == 0 || sb.next_file_id > MAX_FILE_ID {
        return Err(corrupt(
            format!("next file id {} out of range", sb.next_file_id),
            data,
            slot * PAGE,
        ));
    }
    // The generation and the commit sequence only ever grow by one: near u64::MAX they could
    // not (found by fuzz/: generation u64::MAX overflowed at `g + 1`; in release the next
    // checkpoint would have written generation 0, and the mount after it taken the older
    // superblock, losing every commit since).
    if sb.generation > MAX_COUNTER || sb.next_txn_seq > MAX_COUNTER {
        return Err(corrupt(
            format!(
                "generation {} or commit sequence {} out of range",
                sb.generation, sb.next_txn_seq
            ),
            data,
            slot * PAGE,
        ));
    }
    let other = if slot == 0 { &s1 } else { &s0 };
    let other_damaged = matches!(other, Slot::Invalid(_));
    let mut vol = Volume::empty(storage, opts, sb);
    vol.physical_len = [data_len, log_len];
    vol.load_catalog(data_len)?;
    let first = vol.read_log_start(log_len)?;
    let head = vol.log_head(&first);
    let g = vol.sb.generation;
    match head {
        Head::Epoch(e) if e == g + 1 => {
            return Err(Error::NewerCheckpointLost {
                newest_valid: g,
                lost: g + 1,
            });
        }
        Head::Epoch(e) if e == g => {}
        _ if other_damaged => vol.verify_home_blocks()?,
        _ => {}
    }
    vol.recover_log(log_len, first)?;
    Ok(vol)
}

/// Which epoch the log's first frame belongs to.
#[derive(Debug)]
enum Head {
    Epoch(u64),
    Unknown,
}

/// Writes a new volume: slot 0 holds generation 0 and slot 1 generation 1 (both empty; the
/// pair makes a torn creation recognisable), written with one call and flushed; the log is
/// emptied first.
fn create_new<S: Storage>(mut storage: Counted<S>, opts: VolumeOptions) -> Result<Volume<S>> {
    let volume_salt = nonce();
    let mk = |generation| Superblock {
        version: format::FORMAT_VERSION,
        generation,
        volume_salt,
        directory: BlobPtr::default(),
        next_file_id: 1,
        next_txn_seq: 1,
        block_count: SUPER_SLOTS,
    };
    let (s0, s1) = (mk(0), mk(1));
    let mut both = s0.encode();
    both.extend_from_slice(&s1.encode());
    let log = PhysicalFileId::Log;
    let data = PhysicalFileId::Data;
    storage
        .file(log)
        .set_len(0)
        .map_err(|e| Error::from_storage(log, e))?;
    storage
        .file(data)
        .write_at(0, &both)
        .map_err(|e| Error::from_storage(data, e))?;
    storage
        .file(data)
        .flush()
        .map_err(|e| Error::from_storage(data, e))?;
    let mut vol = Volume::empty(storage, opts, s1);
    vol.data_flushed = true;
    vol.physical_len = [2 * PAGE, 0];
    Ok(vol)
}

impl<S: Storage> Volume<S> {
    fn empty(storage: Counted<S>, opts: VolumeOptions, sb: Superblock) -> Self {
        let log = LogWriter::new(sb.log_salt(), nonce(), sb.next_txn_seq);
        let cache = PageCache::new(match opts.buffer_mode {
            super::BufferMode::Disk => opts.disk_cache_bytes,
            super::BufferMode::Memory => opts.disk_cache_bytes.min(256 << 10),
        });
        Self {
            storage,
            poisoned: None,
            catalog: Catalog {
                dir: sb.directory,
                ..Catalog::default()
            },
            alloc: Allocator::new(sb.block_count),
            files: super::FastMap::default(),
            logical_total: 0,
            pending: BTreeMap::new(),
            names: super::FastMap::default(),
            next_file_id: sb.next_file_id,
            staged_bytes: 0,
            log,
            aborts: Default::default(),
            data_flushed: false,
            log_truncate_pending: false,
            physical_len: [0, 0],
            tail_start: sb.block_count.max(SUPER_SLOTS),
            tail: sb.block_count.max(SUPER_SLOTS),
            log_stale: false,
            log_dirty: true,
            link_unflushed: false,
            cache,
            resident_bytes: 0,
            last_commit_at: None,
            checkpoint_retry_at: None,
            last_checkpoint_error: None,
            learned_space_limit: None,
            stats: VolumeStats::default(),
            deadline_hook: None,
            released: false,
            opts,
            sb,
        }
    }

    /// Reads blobs (sorted by block; in [`load_window`]s: small gaps read through)
    /// and checks each one's bounds and hash. Returns them in the order given.
    pub(crate) fn read_blobs(
        &mut self,
        blobs: &[BlobPtr],
        data_blocks: u64,
    ) -> Result<Vec<Vec<u8>>> {
        let data = PhysicalFileId::Data;
        let mut order: Vec<usize> = (0..blobs.len()).collect();
        order.sort_unstable_by_key(|&i| blobs[i].block);
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); blobs.len()];
        let mut i = 0;
        let mut window = Vec::new();
        for &k in &order {
            let b = blobs[k];
            let inside = b
                .block
                .checked_add(b.blocks().max(1))
                .is_some_and(|end| b.block >= SUPER_SLOTS && end <= data_blocks);
            if !inside {
                return Err(corrupt(
                    "catalog blob outside the data file (truncated?)",
                    data,
                    b.block.saturating_mul(PAGE),
                ));
            }
        }
        while i < order.len() {
            // In range (checked above): `block + blocks` does not overflow.
            let (j, lo, hi) = load_window(i, order.len(), |k| {
                let b = blobs[order[k]];
                (b.block, b.block + b.blocks().max(1))
            });
            window.resize(usize_of((hi - lo) * PAGE)?, 0);
            self.read_phys(data, lo * PAGE, &mut window)?;
            for &k in &order[i..j] {
                let b = blobs[k];
                let s = usize_of((b.block - lo) * PAGE)?;
                let bytes = &window[s..s + b.len as usize];
                if xxh3_64(bytes) != b.hash {
                    return Err(corrupt(
                        "catalog blob checksum mismatch",
                        data,
                        b.block * PAGE,
                    ));
                }
                out[k] = bytes.to_vec();
            }
            i = j;
        }
        Ok(out)
    }

    /// Loads directory, entry chunks and map chunks; derives the free space.
    pub(crate) fn load_catalog(&mut self, data_len: u64) -> Result<()> {
        let data = PhysicalFileId::Data;
        let data_blocks = data_len / PAGE;
        // The extent is the physical file's, never the superblock's block count: the catalog
        // may reference only blocks inside the file (checked below), so blocks beyond it are
        // nothing but free space, and a hostile count (2^52 and more) made checkpoints and
        // compaction allocate there, at offsets that overflow (found by fuzz/).
        self.alloc.count = data_blocks.max(SUPER_SLOTS);
        let mut used = RangeSet::default();
        used.insert(0, SUPER_SLOTS);
        let claim = |used: &mut RangeSet, start: u64, n: u64, what: &str| -> Result<()> {
            if !used.insert(start, start + n) {
                return Err(corrupt(
                    format!("block {start} used twice ({what})"),
                    data,
                    start * PAGE,
                ));
            }
            Ok(())
        };
        let dir = self.sb.directory;
        if dir.len > 0 {
            let blob = self.read_blobs(&[dir], data_blocks)?.remove(0);
            claim(&mut used, dir.block, dir.blocks(), "directory")?;
            let chunks =
                format::decode_directory(&blob).map_err(|w| corrupt(w, data, dir.block * PAGE))?;
            let ptrs: Vec<BlobPtr> = chunks.iter().map(|(_, p)| *p).collect();
            let blobs = self.read_blobs(&ptrs, data_blocks)?;
            let mut entries = Vec::new();
            for ((k, p), blob) in chunks.into_iter().zip(blobs) {
                claim(&mut used, p.block, p.blocks(), "entry chunk")?;
                let es = format::decode_entry_chunk(k, &blob)
                    .map_err(|w| corrupt(w, data, p.block * PAGE))?;
                if es.is_empty() {
                    return Err(corrupt("empty entry chunk", data, p.block * PAGE));
                }
                self.catalog.entry_chunks.insert(k, p);
                entries.extend(es);
            }
            // Map chunks of every file, read together.
            let mut map_ptrs = Vec::new();
            let mut map_keys = Vec::new();
            for e in &entries {
                if let Contents::Blocks(chunks) = &e.contents {
                    for (k, p) in chunks {
                        map_ptrs.push(*p);
                        map_keys.push((e.id, *k));
                    }
                }
            }
            let map_blobs = self.read_blobs(&map_ptrs, data_blocks)?;
            let mut maps: HashMap<u64, Vec<(u64, BlobPtr, Vec<u8>)>> = HashMap::new();
            for (((id, k), p), blob) in map_keys.into_iter().zip(map_ptrs).zip(map_blobs) {
                claim(&mut used, p.block, p.blocks(), "map chunk")?;
                maps.entry(id).or_default().push((k, p, blob));
            }
            for e in entries {
                let at = || {
                    corrupt(
                        format!("catalog entry of file {}", e.id),
                        data,
                        dir.block * PAGE,
                    )
                };
                if e.id == 0 || e.id >= self.sb.next_file_id || self.files.contains_key(&e.id) {
                    return Err(corrupt(
                        format!("bad file id {}", e.id),
                        data,
                        dir.block * PAGE,
                    ));
                }
                if check_name(&e.name).is_err() || self.names.contains_key(&e.name) {
                    return Err(corrupt(
                        format!("bad or duplicate name {:?}", e.name),
                        data,
                        dir.block * PAGE,
                    ));
                }
                if e.size > MAX_FILE_SIZE {
                    return Err(at());
                }
                let npages = pages_for(e.size);
                let mut f = FileState {
                    name: e.name.clone(),
                    size: e.size,
                    ..FileState::default()
                };
                match e.contents {
                    Contents::Inline(bytes) => f.inline = Some(bytes.into_boxed_slice()),
                    Contents::Blocks(_) => {
                        for (k, p, blob) in maps.remove(&e.id).unwrap_or_default() {
                            let runs = format::decode_map_chunk(e.id, k, &blob)
                                .map_err(|w| corrupt(w, data, p.block * PAGE))?;
                            // A checkpoint writes a map chunk only for pages the file has (it
                            // drops a chunk left empty): one without runs, or starting past
                            // the file's pages, is damage — and its index could overflow the
                            // page arithmetic of a later checkpoint (a fuzz finding).
                            let inside =
                                k.checked_mul(MAP_CHUNK_PAGES).is_some_and(|p0| p0 < npages);
                            if runs.is_empty() || !inside {
                                return Err(corrupt(
                                    format!("map chunk {k} of {:?} outside the file", e.name),
                                    data,
                                    p.block * PAGE,
                                ));
                            }
                            for run in runs {
                                let n = run.hashes.len() as u64;
                                let first_page = k
                                    .checked_mul(MAP_CHUNK_PAGES)
                                    .and_then(|x| x.checked_add(u64::from(run.first)))
                                    .ok_or_else(at)?;
                                let end_block = run.block.checked_add(n).ok_or_else(at)?;
                                if first_page + n > npages
                                    || run.block < SUPER_SLOTS
                                    || end_block > data_blocks
                                {
                                    return Err(corrupt(
                                        format!(
                                            "pages of {:?} outside the file or data file",
                                            e.name
                                        ),
                                        data,
                                        p.block * PAGE,
                                    ));
                                }
                                claim(&mut used, run.block, n, "home block")?;
                                f.homes.insert_run(first_page, run.block, &run.hashes);
                            }
                            f.map_chunks.insert(k, p);
                        }
                    }
                }
                self.names.insert(e.name, e.id);
                self.files.insert(e.id, f);
            }
        }
        // Everything below the extent that nothing references is free.
        let mut next = 0;
        for (s, e) in used.iter() {
            if s > next {
                self.alloc.free.insert(next, s);
            }
            next = e;
        }
        if next < self.alloc.count {
            self.alloc.free.insert(next, self.alloc.count);
        }
        // This epoch's tail links begin at the checkpoint's block count (which the file may
        // fall short of only if it has no link) — never below a block the catalog references,
        // whatever a damaged superblock says.
        self.tail_start = self
            .sb
            .block_count
            .min(data_blocks)
            .max(next)
            .max(SUPER_SLOTS);
        self.tail = self.tail_start;
        self.recount_logical_bytes();
        Ok(())
    }

    /// The log's first window (it usually holds the whole epoch after a clean close).
    pub(crate) fn read_log_start(&mut self, log_len: u64) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; usize_of(log_len.min(FIRST_LOG_WINDOW))?];
        if !buf.is_empty() {
            let n = self.read_phys(PhysicalFileId::Log, 0, &mut buf)?;
            buf.truncate(n);
        }
        Ok(buf)
    }

    /// Which epoch the log's first frame belongs to.
    fn log_head(&self, first: &[u8]) -> Head {
        let g = self.sb.generation;
        for e in [g, g + 1] {
            let salt = format::epoch_salt(self.sb.volume_salt, e);
            if decode_frame(first, salt, salt).is_ok() {
                return Head::Epoch(e);
            }
        }
        Head::Unknown
    }

    /// Replays the current epoch: frames are buffered per file and applied, in log order, when
    /// a commit frame lists the file. Stops at the first frame that does not continue the
    /// chain, or a commit with the wrong sequence number.
    pub(crate) fn recover_log(&mut self, log_len: u64, first: Vec<u8>) -> Result<()> {
        let salt = self.sb.log_salt();
        self.replay_log(0, salt, first, log_len)?;
        Ok(())
    }

    /// Replays the log from offset `start` (whose preceding frame's chain is `chain`), with
    /// `first` holding the bytes from `start` already read. Frames are buffered per file and
    /// applied, in log order, when a commit frame lists the file; pages of resident files are
    /// patched into their contents. Stops at the first frame that does not continue the chain,
    /// or a commit with the wrong sequence number. Returns the log bytes that were replayed.
    pub(crate) fn replay_log(
        &mut self,
        start: u64,
        chain: u64,
        first: Vec<u8>,
        log_len: u64,
    ) -> Result<u64> {
        let log = PhysicalFileId::Log;
        let salt = self.sb.log_salt();
        let mut chain = chain;
        let mut pos = start; // log offset of buf[0]
        let mut file_end = start + first.len() as u64;
        let mut buf: Vec<u8> = first;
        let mut cur = 0usize;
        let mut window = FIRST_LOG_WINDOW * 2;
        let mut buffered: BTreeMap<u64, Vec<Replay>> = BTreeMap::new();
        let mut end = start;
        let mut end_chain = chain;
        let mut end_tail = self.tail;
        loop {
            if buf.len() - cur < format::frame_needs(&buf[cur..]) && file_end < log_len {
                buf.drain(..cur);
                pos += cur as u64;
                cur = 0;
                let want = window.min(log_len - file_end);
                window = (window * 2).min(MAX_LOG_WINDOW);
                let old = buf.len();
                buf.resize(old + usize_of(want)?, 0);
                let n = self
                    .storage
                    .file(log)
                    .read_at(file_end, &mut buf[old..])
                    .map_err(|e| Error::from_storage(log, e))?;
                buf.truncate(old + n);
                file_end += n as u64;
                if n > 0 {
                    continue;
                }
            }
            let Ok((h, payload)) = decode_frame(&buf[cur..], salt, chain) else {
                // Where the log's chain breaks, it may go on in the data file's tail.
                match self.replay_link(salt, &mut chain, &mut buffered)? {
                    Some(true) => {
                        end = pos + cur as u64;
                        end_chain = chain;
                        end_tail = self.tail;
                        continue;
                    }
                    // A spill's link: its frames wait for their commit, like spilled frames
                    // in the log.
                    Some(false) => continue,
                    None => break,
                }
            };
            let frame_len = FRAME_HEADER + payload.len();
            let payload_off = pos + (cur + FRAME_HEADER) as u64;
            if h.kind == FrameKind::Link {
                // Links live in the data file only.
                return Err(corrupt("link frame in the log", log, payload_off));
            }
            if !self.replay_frame(h, payload, payload_off, &mut buffered)? {
                break;
            }
            chain = h.chain;
            cur += frame_len;
            if matches!(
                h.kind,
                FrameKind::Commit | FrameKind::Abort | FrameKind::Epoch
            ) {
                end = pos + cur as u64;
                end_chain = chain;
                end_tail = self.tail;
            }
        }
        self.log.written = end;
        self.log.chain = end_chain;
        self.log.written_chain = end_chain;
        self.tail = end_tail;
        // Frames after the last commit still chain on from it (a crashed session's open
        // transaction): the next log write overwrites them, but a tail link written first
        // would leave them in the way of the next replay, which would follow them instead of
        // the link. The first link zeroes them first (`Volume::log_stale`).
        self.log_stale = chain != end_chain;
        // What recovery read may still be only in the OS cache (a process crash): the next
        // flush must flush it.
        self.log.flushed = 0;
        if end > 0 {
            self.log.oldest_unflushed = Some(web_time::Instant::now());
        }
        // Frames of transactions that never committed may lie before `end` (another file
        // committed after them): abort them before anything else is written, or a later
        // commit of the same file would revive them.
        self.aborts.extend(buffered.into_keys());
        self.physical_len[1] = self.physical_len[1].max(log_len);
        // Replay patched resident copies (a hand-off's catch-up): count them again.
        self.recount_resident();
        Ok(end - start)
    }

    /// One frame of the chain (log or link; `offset`: where its payload is, link offsets
    /// above [`LINK_BASE`]): buffered per file, or, for a Commit frame, the files it lists
    /// applied. Returns false where replay stops (a commit out of sequence).
    fn replay_frame(
        &mut self,
        h: FrameHeader,
        payload: &[u8],
        offset: u64,
        buffered: &mut BTreeMap<u64, Vec<Replay>>,
    ) -> Result<bool> {
        let (file, at) = place_of(offset);
        match h.kind {
            FrameKind::Commit => {
                if h.arg != self.log.next_seq {
                    return Ok(false);
                }
                let ids = decode_ids(payload).map_err(|w| corrupt(w, file, at))?;
                // Each file's frames in the order the chain has them (not by offset: a spill's
                // tail link lies above every log offset, and frames may follow it in the log);
                // files are independent of each other but for names, which `replay_commit`
                // settles after all of them.
                let frames: Vec<Replay> = if ids.is_empty() {
                    std::mem::take(buffered).into_values().flatten().collect()
                } else {
                    ids.iter()
                        .filter_map(|id| buffered.remove(id))
                        .flatten()
                        .collect()
                };
                self.replay_commit(frames)?;
                self.log.next_seq += 1;
                self.stats.recovered_commits += 1;
            }
            FrameKind::Abort => {
                let ids = decode_ids(payload).map_err(|w| corrupt(w, file, at))?;
                for id in ids {
                    buffered.remove(&id);
                }
            }
            FrameKind::Epoch | FrameKind::Link => {}
            _ => {
                // Page bytes stay in the log (only their offset is indexed), except for a
                // resident file (a volume catching up after another tab wrote), whose
                // contents are patched.
                let resident = self
                    .files
                    .get(&h.file_id)
                    .is_some_and(|f| f.resident.is_some());
                // A patch's payload is kept: its mask goes into the page's location.
                let keep = if h.kind == FrameKind::Page && !resident {
                    Vec::new()
                } else {
                    payload.to_vec()
                };
                buffered.entry(h.file_id).or_default().push(Replay {
                    header: h,
                    payload: keep,
                    offset,
                    link: None,
                });
            }
        }
        Ok(true)
    }

    /// The tail link at `self.tail`, if one is there that continues the chain from `chain`,
    /// ends with its Commit frame, and whose page blocks all have their hashes: its frames are
    /// replayed (its pages buffered as page images in their blocks, then committed), `chain`
    /// and `self.tail` move past it. Returns whether its last frame committed (a spill's link
    /// has no commit frame), or `None` if there is no such link.
    fn replay_link(
        &mut self,
        salt: u64,
        chain: &mut u64,
        buffered: &mut BTreeMap<u64, Vec<Replay>>,
    ) -> Result<Option<bool>> {
        // No read where the data file ends (it does at the tail but after a link): every mount
        // and hand-off comes here at the chain's end.
        if self.physical_len[0] <= self.tail * PAGE {
            return Ok(None);
        }
        let Some(link) = self.read_link(self.tail, salt, *chain)? else {
            return Ok(None);
        };
        let mut committed = false;
        let mut k = 0u64;
        for (h, payload, offset) in &link.frames {
            if h.kind == FrameKind::Link {
                // `read_link` checked that this frame lists `arg` of the link's entries.
                for e in &link.entries[ix(k)..ix(k + h.arg)] {
                    let resident = self
                        .files
                        .get(&e.file)
                        .is_some_and(|f| f.resident.is_some());
                    let bytes = if resident {
                        link.pages[ix(k) * PAGE_SIZE..(ix(k) + 1) * PAGE_SIZE].to_vec()
                    } else {
                        Vec::new()
                    };
                    buffered.entry(e.file).or_default().push(Replay {
                        header: FrameHeader {
                            kind: FrameKind::Page,
                            file_id: e.file,
                            arg: e.page,
                            payload_len: n32(PAGE_SIZE),
                            chain: h.chain,
                        },
                        payload: bytes,
                        offset: LINK_BASE + (link.first_page + k) * PAGE,
                        link: Some(e.hash),
                    });
                    k += 1;
                }
            } else if !self.replay_frame(*h, payload, *offset, buffered)? {
                // Its commit is out of sequence: the chain ends before it.
                return Ok(None);
            }
            committed = h.kind == FrameKind::Commit;
            *chain = h.chain;
        }
        self.tail = link.end;
        Ok(Some(committed))
    }

    /// Reads the tail link at block `block`: its frames (from the first that continues the
    /// chain from `chain` to the last that does), then its page blocks, each checked against
    /// its hash. `None` if no frame continues the chain there or a page block does not match
    /// (a torn link: the chain ends before it).
    pub(crate) fn read_link(
        &mut self,
        block: u64,
        salt: u64,
        chain: u64,
    ) -> Result<Option<LinkRead>> {
        let data = PhysicalFileId::Data;
        let at = block * PAGE;
        let mut buf = vec![0u8; ix(FIRST_LOG_WINDOW)];
        let mut got = self.read_phys(data, at, &mut buf)?;
        let mut frames = Vec::new();
        let mut pos = 0usize;
        let mut c = chain;
        let mut pages = 0u64;
        loop {
            match decode_frame(&buf[pos..got], salt, c) {
                Ok((h, payload)) => {
                    if h.kind == FrameKind::Link {
                        pages += h.arg;
                    }
                    frames.push((
                        h,
                        payload.to_vec(),
                        LINK_BASE + at + (pos + FRAME_HEADER) as u64,
                    ));
                    c = h.chain;
                    pos += FRAME_HEADER + payload.len();
                }
                Err(format::FrameEnd::Short)
                    if got == buf.len() && buf.len() < ix(MAX_LOG_WINDOW) =>
                {
                    // The header goes on past what was read: read more.
                    let old = buf.len();
                    buf.resize(old * 2, 0);
                    got = old + self.read_phys(data, at + old as u64, &mut buf[old..])?;
                }
                Err(_) => break,
            }
        }
        // Every link ends with its commit frame, or a spill's with its last Link frame: a
        // prefix of one (a torn write) is none.
        if frames
            .last()
            .is_none_or(|f| !matches!(f.0.kind, FrameKind::Commit | FrameKind::Link))
        {
            return Ok(None);
        }
        let first_page = block + pos.div_ceil(PAGE_SIZE) as u64;
        let mut page_bytes = vec![0u8; usize_of(pages * PAGE)?];
        let n = self.read_phys(data, first_page * PAGE, &mut page_bytes)?;
        if n < page_bytes.len() {
            return Ok(None);
        }
        let mut entries = Vec::with_capacity(usize_of(pages)?);
        for (h, payload, _) in &frames {
            if h.kind != FrameKind::Link {
                continue;
            }
            let listed = format::decode_link(payload).map_err(|w| corrupt(w, data, at))?;
            if listed.len() as u64 != h.arg {
                return Err(corrupt("link frame lists another count of pages", data, at));
            }
            entries.extend(listed);
        }
        for (k, e) in entries.iter().enumerate() {
            if xxh3_64(&page_bytes[k * PAGE_SIZE..(k + 1) * PAGE_SIZE]) != e.hash {
                return Ok(None);
            }
        }
        Ok(Some(LinkRead {
            frames,
            entries,
            pages: page_bytes,
            first_page,
            end: first_page + pages,
        }))
    }

    /// Applies one committed transaction's frames (in log order) to the committed state.
    fn replay_commit(&mut self, frames: Vec<Replay>) -> Result<()> {
        let log = PhysicalFileId::Log;
        let mut touched: Vec<(u64, Option<String>)> = Vec::new();
        for r in frames {
            let id = r.header.file_id;
            let (file, at) = place_of(r.offset);
            let bad = |w: String| corrupt(w, file, at);
            if !touched.iter().any(|(t, _)| *t == id) {
                touched.push((id, self.files.get(&id).map(|f| f.name.clone())));
            }
            match r.header.kind {
                FrameKind::Create => {
                    let name =
                        String::from_utf8(r.payload).map_err(|_| bad("name not UTF-8".into()))?;
                    check_name(&name).map_err(|e| bad(e.to_string()))?;
                    if id == 0 || id >= MAX_FILE_ID || self.files.contains_key(&id) {
                        return Err(bad(format!("create of existing or invalid file id {id}")));
                    }
                    self.next_file_id = self.next_file_id.max(id + 1);
                    self.files.insert(
                        id,
                        FileState {
                            name,
                            dirty: true,
                            ..FileState::default()
                        },
                    );
                }
                FrameKind::Rename => {
                    let name =
                        String::from_utf8(r.payload).map_err(|_| bad("name not UTF-8".into()))?;
                    check_name(&name).map_err(|e| bad(e.to_string()))?;
                    let f = self
                        .files
                        .get_mut(&id)
                        .ok_or_else(|| bad(format!("rename of missing file {id}")))?;
                    f.name = name;
                    f.dirty = true;
                }
                FrameKind::Delete => {
                    let f = self
                        .files
                        .remove(&id)
                        .ok_or_else(|| bad(format!("delete of missing file {id}")))?;
                    self.logical_total -= f.size;
                    self.release_file(id, f);
                }
                FrameKind::SetLen => {
                    let len = r.header.arg;
                    if len > MAX_FILE_SIZE {
                        return Err(bad("length out of range".into()));
                    }
                    let f = self
                        .files
                        .get_mut(&id)
                        .ok_or_else(|| bad(format!("set_len of missing file {id}")))?;
                    if len < f.size {
                        let keep = pages_for(len);
                        for (page, home) in f.homes.cut(keep) {
                            self.alloc.release_later(home.block, 1);
                            f.dirty_chunks.insert(page / MAP_CHUNK_PAGES);
                        }
                        f.log.split_off(&keep);
                        if let Some(inline) = &f.inline {
                            let cut = usize_of(len)?.min(inline.len());
                            f.inline = Some(inline[..cut].into());
                        }
                        self.cache.cut(id, keep);
                    }
                    if let Some(c) = &mut f.resident {
                        if c.set_len(len).is_err() {
                            f.resident = None;
                        }
                    }
                    self.logical_total = self.logical_total - f.size + len;
                    f.size = len;
                    f.dirty = true;
                }
                FrameKind::Page => {
                    let f = self
                        .files
                        .get_mut(&id)
                        .ok_or_else(|| bad(format!("page of missing file {id}")))?;
                    if r.header.arg >= pages_for(f.size) {
                        return Err(bad(format!(
                            "page {} beyond the end of file {id}",
                            r.header.arg
                        )));
                    }
                    let loc = match r.link {
                        Some(hash) => LogLoc::linked(at / PAGE, hash),
                        None => LogLoc::image(r.offset, r.header.payload_len),
                    };
                    f.log.insert(r.header.arg, loc);
                    f.dirty = true;
                    if let Some(c) = &mut f.resident {
                        let mut img = vec![0u8; PAGE_SIZE];
                        let n = r.payload.len().min(PAGE_SIZE);
                        img[..n].copy_from_slice(&r.payload[..n]);
                        c.put_page(r.header.arg, &img);
                    }
                    self.cache.remove(id, r.header.arg);
                }
                FrameKind::Patch => {
                    let page = r.header.arg;
                    let f = self
                        .files
                        .get_mut(&id)
                        .ok_or_else(|| bad(format!("patch of missing file {id}")))?;
                    let mask = format::decode_patch(&r.payload).map_err(|w| bad(w.into()))?;
                    // The writer patches only a page logged in this epoch and wholly in the file:
                    // the state replayed so far is the writer's, so anything else is damage.
                    let base = match f.log.get(&page) {
                        Some(b) if (page + 1) * PAGE <= f.size => *b,
                        _ => return Err(bad(format!("patch of page {page} without a base"))),
                    };
                    f.log.insert(
                        page,
                        LogLoc {
                            patch: Some(PatchLoc {
                                offset: r.offset,
                                len: r.header.payload_len,
                                mask,
                            }),
                            ..base
                        },
                    );
                    f.dirty = true;
                    if let Some(c) = &mut f.resident {
                        let mut img = vec![0u8; PAGE_SIZE];
                        c.read(page * PAGE, &mut img);
                        format::apply_patch(&r.payload, &mut img).map_err(|w| bad(w.into()))?;
                        c.put_page(page, &img);
                    }
                    self.cache.remove(id, page);
                }
                FrameKind::Commit | FrameKind::Abort | FrameKind::Epoch | FrameKind::Link => {}
            }
        }
        // Names: drop the touched files' old names, then claim their new ones.
        for (id, old) in &touched {
            if let Some(old) = old {
                if self.names.get(old) == Some(id) {
                    self.names.remove(old);
                }
            }
        }
        for (id, _) in &touched {
            self.catalog.dirty.insert(id / ENTRY_CHUNK_FILES);
            if let Some(f) = self.files.get(id) {
                if let Some(other) = self.names.insert(f.name.clone(), *id) {
                    if other != *id {
                        return Err(corrupt(
                            format!("duplicate name {:?} after log replay", f.name),
                            log,
                            0,
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Every home block not superseded by the log must hash to what the catalog says (read in
    /// windows). Used when the state might be an older checkpoint's whose blocks were reused.
    pub(crate) fn verify_home_blocks(&mut self) -> Result<()> {
        let mut checks: Vec<Home> = Vec::new();
        for f in self.files.values() {
            for (p, h) in f.homes.iter() {
                if !f.log.contains_key(&p) {
                    checks.push(h);
                }
            }
        }
        let bad = self.verify_blocks(checks)?;
        if let Some(block) = bad.first() {
            return Err(corrupt(
                "the newest superblock is damaged and the older checkpoint's blocks were \
                 overwritten since: the volume cannot be recovered to a consistent state",
                PhysicalFileId::Data,
                block * PAGE,
            ));
        }
        Ok(())
    }

    /// Reads the given home blocks in windows; returns the blocks whose hash does not match.
    pub(crate) fn verify_blocks(&mut self, mut checks: Vec<Home>) -> Result<Vec<u64>> {
        checks.sort_unstable_by_key(|h| h.block);
        let mut bad = Vec::new();
        let mut i = 0;
        let mut window = Vec::new();
        while i < checks.len() {
            let (j, lo, hi) =
                load_window(i, checks.len(), |k| (checks[k].block, checks[k].block + 1));
            window.resize(usize_of((hi - lo) * PAGE)?, 0);
            self.read_phys(PhysicalFileId::Data, lo * PAGE, &mut window)?;
            for h in &checks[i..j] {
                let s = ix((h.block - lo) * PAGE);
                if xxh3_64(&window[s..s + PAGE_SIZE]) != h.hash {
                    bad.push(h.block);
                }
            }
            i = j;
        }
        Ok(bad)
    }
}

/// A frame held until its file's commit.
struct Replay {
    header: FrameHeader,
    /// Names for Create/Rename; empty for pages (their bytes stay in the log or their block),
    /// unless the file is resident.
    payload: Vec<u8>,
    /// Where the payload is: a log offset, or [`LINK_BASE`] plus a data-file offset (a tail
    /// link's frame or page block).
    offset: u64,
    /// The block hash of a page a tail link carries.
    link: Option<u64>,
}

/// A tail link as read by [`Volume::read_link`].
pub(crate) struct LinkRead {
    /// Its frames, with where each payload is ([`LINK_BASE`] plus the data-file offset).
    pub(crate) frames: Vec<(FrameHeader, Vec<u8>, u64)>,
    /// The pages its Link frames list, in order (decoded once).
    entries: Vec<format::LinkEntry>,
    /// Its page blocks, checked against their hashes.
    pages: Vec<u8>,
    /// The block of its first page.
    first_page: u64,
    /// The block after its last.
    pub(crate) end: u64,
}
