//! Checkpoint: copy the committed log images to home blocks, write the catalog's changed parts
//! copy-on-write, switch the superblock, start a new log epoch; and compaction.
//!
//! Steps (DESIGN.md, "Checkpoint"):
//! 1. Write and flush the log, so it alone can redo everything since the last checkpoint.
//! 2. Plan: every changed file gets homes for its logged pages — its existing block (overwritten
//!    in place: the flushed log can redo it) or a block free in both the current and the new
//!    state — or, if small, inline bytes. Nothing in memory changes yet.
//! 3. Write the images (block order, consecutive blocks in one call of up to 1 MiB), then the
//!    changed map chunks, entry chunks and the directory into free blocks; flush.
//! 4. Write the new superblock into slot `(g + 1) % 2`; flush.
//! 5. Install the plan; blocks only the old state used are free now; cut the log to the new
//!    epoch's marker frame; give a free tail of the data file back.
//!
//! A failure before step 4 leaves the volume exactly as it was (allocations are undone); the
//! checkpoint is retried later. Step 4's outcome can be unknown: a failed superblock write is
//! repaired by zeroing the slot (else the volume is poisoned); a failed flush after it keeps
//! the new state but flushes the data file again before the log is next written.

use std::collections::{BTreeMap, BTreeSet};

use web_time::Instant;
use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::format::{
    self, BlobPtr, Contents, Entry, FrameKind, Run, Superblock, ENTRY_CHUNK_FILES, FRAME_HEADER,
    INLINE_MAX, MAP_CHUNK_PAGES, PAGE, PAGE_SIZE, SUPER_SLOTS,
};
use crate::storage::{PhysicalFile, PhysicalFileId, Storage};

use super::maps::Home;
use super::state::{pages_for, LogLoc};
use super::{usize_of, Volume};

/// Most blocks written with one call (1 MiB).
const MAX_WRITE_BLOCKS: usize = 256;
/// A free tail of at least this many blocks (256 KiB) is cut off the data file.
const TRIM_MIN_BLOCKS: u64 = 64;

/// What a checkpoint will make of one file.
struct FilePlan {
    id: u64,
    inline: Option<Vec<u8>>,
    /// New homes (page → home), overwriting or adding to the current ones.
    homes: BTreeMap<u64, Home>,
    /// Map chunks to rewrite.
    chunks: BTreeSet<u64>,
    /// Map chunk blobs after the checkpoint.
    map_chunks: BTreeMap<u64, BlobPtr>,
}

/// Where a page image to be homed comes from.
#[derive(Clone, Copy)]
enum Source {
    Resident,
    Log(LogLoc),
    Inline,
    Home,
}

struct Job {
    file: u64,
    page: u64,
    block: u64,
    source: Source,
}

impl<S: Storage> Volume<S> {
    /// No open transaction has frames in the log (a checkpoint ends the log's epoch, so their
    /// spilled pages would be lost).
    pub(crate) fn checkpoint_allowed(&self) -> bool {
        !self.pending.values().any(|p| p.spilled_any)
    }

    /// The log size at which a checkpoint is due: the option, or 1/16 of the logical bytes if
    /// larger (at most 256 MiB): large volumes checkpoint proportionally less often while the
    /// log stays a small fraction of the space; lower near the space limit, so the log gives
    /// space back in time.
    pub(crate) fn checkpoint_threshold(&self) -> u64 {
        self.proportional(self.opts.checkpoint_bytes)
            .min(self.space_threshold())
    }

    /// The log size at which a commit runs a due checkpoint on its own path although a timer
    /// could run it later (`checkpoint_max_bytes`, never below the due threshold); near the
    /// space limit the same as [`Self::checkpoint_threshold`].
    fn checkpoint_hard_threshold(&self) -> u64 {
        let soft = self.proportional(self.opts.checkpoint_bytes);
        self.opts
            .checkpoint_max_bytes
            .max(soft)
            .min(self.space_threshold())
    }

    fn proportional(&self, bytes: u64) -> u64 {
        bytes.max((self.logical_bytes() / 16).min(256 << 20))
    }

    /// Near a space limit: the log size that keeps a checkpoint possible. `u64::MAX`: no limit.
    fn space_threshold(&self) -> u64 {
        match self.known_space_limit() {
            // A checkpoint needs up to the log's size of new data blocks while the log still
            // exists: data + 2 × log must fit, with room for the commit that passes the
            // threshold. A third of what is left keeps that.
            Some(limit) => (limit.saturating_sub(self.data_bytes()) / 3).max(64 << 10),
            None => u64::MAX,
        }
    }

    /// A checkpoint is due (the log passed [`Self::checkpoint_threshold`], none is blocked by an
    /// open spilled transaction, and a failed one is not waiting for the log to grow).
    pub(crate) fn checkpoint_wanted(&self) -> bool {
        let end = self.epoch_bytes();
        end >= self.checkpoint_threshold()
            && self.checkpoint_allowed()
            && self.checkpoint_retry_at.is_none_or(|at| end >= at)
    }

    /// The commit that just finished runs the due checkpoint itself: there is no timer to run
    /// it when the worker is idle, or the log passed the hard threshold (a worker that never
    /// idles, or a space limit near).
    pub(crate) fn checkpoint_due(&self) -> bool {
        self.checkpoint_wanted()
            && (self.deadline_hook.is_none()
                || self.epoch_bytes() >= self.checkpoint_hard_threshold())
    }

    /// Commits everything, then checkpoints: afterwards the log holds only the new epoch's
    /// marker and the next mount reads only metadata. Costs two or three flushes.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.commit()?;
        self.checkpoint_inner(false)
    }

    /// Checkpoints, then moves every block beyond what the state needs into free space below
    /// it and cuts the data file there: gives the space of deleted and shrunk files back to the
    /// origin. Costs a rewrite of the catalog and of the moved blocks. (Checkpoints do this by
    /// themselves when more than a tenth of the data file, and over 1 MiB, is unused.)
    pub fn compact(&mut self) -> Result<()> {
        self.commit()?;
        self.checkpoint_pass(false)?;
        self.checkpoint_pass(true)
    }

    /// A checkpoint whose failure is recorded and retried later, never reported to a commit.
    pub(crate) fn checkpoint_quietly(&mut self) -> Result<()> {
        match self.checkpoint_inner(false) {
            Ok(()) => {
                self.checkpoint_retry_at = None;
                self.last_checkpoint_error = None;
                Ok(())
            }
            Err(e) => {
                self.stats.failed_checkpoints += 1;
                let step = self.checkpoint_threshold().max(1 << 20) / 2;
                self.checkpoint_retry_at = Some(self.epoch_bytes() + step);
                Err(e)
            }
        }
    }

    /// Blocks the data file holds beyond what the state needs (free now or after the next
    /// checkpoint), if that is worth a compaction: more than 1 MiB and more than a tenth.
    fn wasted_blocks(&self) -> Option<u64> {
        let waste = self.alloc.free.len() + self.alloc.pending.len();
        (waste > 256 && waste * 10 > self.alloc.count).then_some(waste)
    }

    fn checkpoint_inner(&mut self, relocate: bool) -> Result<()> {
        self.checkpoint_pass(relocate)?;
        // A shrunk or deleted database leaves holes the tail trim cannot give back: when they
        // are worth it, move the blocks beyond what the state needs down and cut the file.
        if !relocate && self.wasted_blocks().is_some() {
            self.checkpoint_pass(true)?;
            // The blocks this checkpoint freed are free only after it, so the first relocation
            // may have to put the new catalog past the end (seen after a big file's pages
            // were homed in a tail link's blocks and the file was cut): one more pass moves
            // it down and gives the tail back.
            if self.wasted_blocks().is_some() {
                self.checkpoint_pass(true)?;
            }
        }
        Ok(())
    }

    fn checkpoint_pass(&mut self, relocate: bool) -> Result<()> {
        self.check_writable()?;
        // Nothing to do: no change since the checkpoint, and the log holds at most its epoch's
        // marker frame.
        let clean = self
            .files
            .values()
            .all(|f| !f.dirty && f.dirty_chunks.is_empty())
            && self.catalog.dirty.is_empty();
        if clean && self.epoch_bytes() <= FRAME_HEADER as u64 && !relocate {
            return Ok(());
        }
        self.write_out(Instant::now())?;
        self.flush_log()?;
        let snapshot = self.alloc.clone();
        let data = PhysicalFileId::Data;
        let before = self.storage.file(data).len().ok();
        match self.checkpoint_body(relocate) {
            Ok(()) => {
                self.stats.checkpoints += 1;
                Ok(())
            }
            Err(e) => {
                // What the failed checkpoint appended to the data file is referenced by
                // nothing (new blocks are copy-on-write beyond the old extent): cut it off, so
                // a checkpoint that failed for space gives that space back (a truncate needs
                // no quota). If the cut fails, the bytes stay and a later checkpoint reuses
                // or trims them.
                if let Some(len) = before.map(|b| b.max(snapshot.count * PAGE)) {
                    if self.physical_len[0] > len && self.storage.file(data).set_len(len).is_ok() {
                        self.physical_len[0] = len;
                    }
                }
                self.alloc = snapshot;
                Err(e)
            }
        }
    }

    fn checkpoint_body(&mut self, relocate: bool) -> Result<()> {
        let data = PhysicalFileId::Data;
        // Compaction target: everything the state references fits below it.
        let target = if relocate {
            let referenced = self.alloc.count - self.alloc.free.len() - self.alloc.pending.len();
            // The relocation writes the whole catalog anew while the old one still holds its
            // blocks: room for it below the target too, or its blobs land past the end and the
            // tail never comes back (seen: a 1-page database after DROP + VACUUM kept 93 MB,
            // each pass appending its catalog behind the last).
            let catalog: u64 = self.catalog_blobs().map(|b| b.blocks()).sum();
            (referenced + catalog).max(SUPER_SLOTS)
        } else {
            u64::MAX
        };
        let moves = |b: u64| b >= target;
        // This epoch's tail links: their blocks stay untouched until the new superblock is
        // durable (the old one's replay needs them). Pages whose newest image is a link's
        // block keep it as their home (not written again); the rest are free after step 4.
        let (link_start, link_end) = (self.tail_start, self.tail);
        self.alloc.claim(link_start, link_end);
        let mut adopted: BTreeSet<u64> = BTreeSet::new();

        // --- 2. plan -------------------------------------------------------------------
        let mut ids: Vec<u64> = self
            .files
            .iter()
            .filter(|(_, f)| {
                f.dirty
                    || !f.dirty_chunks.is_empty()
                    || (relocate
                        && (f.homes.iter().any(|(_, h)| moves(h.block))
                            || f.map_chunks.values().any(|p| moves(p.block))))
            })
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        let mut plans: Vec<FilePlan> = Vec::with_capacity(ids.len());
        let mut jobs: Vec<Job> = Vec::new();
        let mut freed: Vec<(u64, u64)> = Vec::new();
        for &id in &ids {
            let f = &self.files[&id];
            let mut plan = FilePlan {
                id,
                inline: None,
                homes: BTreeMap::new(),
                chunks: f.dirty_chunks.clone(),
                map_chunks: f.map_chunks.clone(),
            };
            if f.size <= INLINE_MAX {
                for (_, h) in f.homes.iter() {
                    freed.push((h.block, 1));
                }
                for p in f.map_chunks.values() {
                    freed.push((p.block, p.blocks()));
                }
                plan.map_chunks.clear();
                plan.chunks.clear();
                plan.inline = Some(Vec::new()); // filled below from the committed image
                plans.push(plan);
                continue;
            }
            let mut pages: BTreeSet<u64> = f.log.keys().copied().collect();
            if f.inline.is_some() {
                pages.insert(0);
            }
            if relocate {
                pages.extend(
                    f.homes
                        .iter()
                        .filter(|(_, h)| moves(h.block))
                        .map(|(p, _)| p),
                );
                plan.chunks.extend(f.map_chunks.keys().copied());
            }
            let pages: Vec<u64> = pages
                .into_iter()
                .filter(|&p| p < pages_for(f.size))
                .filter(|&p| {
                    // A tail link's block, unpatched: it becomes the page's home as it is.
                    let Some(l) = f.log.get(&p).filter(|l| l.patch.is_none()) else {
                        return true;
                    };
                    let (Some(block), Some(hash)) = (l.block(), l.link) else {
                        return true;
                    };
                    if moves(block) {
                        return true;
                    }
                    if let Some(old) = f.homes.get(p) {
                        freed.push((old.block, 1));
                    }
                    plan.homes.insert(p, Home { block, hash });
                    adopted.insert(block);
                    false
                })
                .collect();
            // Blocks: keep an existing home (overwrite in place) unless it moves; new blocks
            // are allocated per run of consecutive pages, so files stay contiguous on disk.
            let mut i = 0;
            while i < pages.len() {
                let keep = |p: u64| f.homes.get(p).filter(|h| !moves(h.block));
                if let Some(h) = keep(pages[i]) {
                    jobs.push(Job {
                        file: id,
                        page: pages[i],
                        block: h.block,
                        source: source_of(f, pages[i]),
                    });
                    plan.homes.insert(pages[i], h);
                    i += 1;
                    continue;
                }
                let mut j = i + 1;
                while j < pages.len() && pages[j] == pages[j - 1] + 1 && keep(pages[j]).is_none() {
                    j += 1;
                }
                let n = (j - i) as u64;
                let first = self.alloc.alloc_run_below(n, target);
                for (k, &page) in pages[i..j].iter().enumerate() {
                    let block = first + k as u64;
                    if let Some(old) = f.homes.get(page) {
                        freed.push((old.block, 1));
                    }
                    jobs.push(Job {
                        file: id,
                        page,
                        block,
                        source: source_of(f, page),
                    });
                    plan.homes.insert(page, Home { block, hash: 0 });
                }
                i = j;
            }
            for &p in plan.homes.keys() {
                plan.chunks.insert(p / MAP_CHUNK_PAGES);
            }
            plans.push(plan);
        }

        // Inline files: their bytes, read now (at most INLINE_MAX each).
        for plan in plans.iter_mut().filter(|p| p.inline.is_some()) {
            let size = self.files[&plan.id].size;
            let mut img = vec![0u8; PAGE_SIZE];
            if size > 0 {
                self.read_committed(plan.id, 0, &mut img)?;
            }
            img.truncate(usize_of(size)?);
            plan.inline = Some(img);
        }

        // --- 3. images ------------------------------------------------------------------
        let hashes = self.write_images(&jobs)?;
        for plan in &mut plans {
            for (page, home) in plan.homes.iter_mut() {
                if let Some(&h) = hashes.get(&(plan.id, *page)) {
                    home.hash = h;
                }
            }
        }

        // Map chunks, entry chunks, directory: copy-on-write into free blocks.
        // Each kind is placed as one cluster where it fits (`Allocator::alloc_cluster`), so
        // that a mount reads the catalog in few calls.
        let mut blobs: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut map_blobs: Vec<((usize, u64), Vec<u8>)> = Vec::new();
        for (pi, plan) in plans.iter_mut().enumerate() {
            let f = &self.files[&plan.id];
            for &k in &plan.chunks {
                if let Some(old) = plan.map_chunks.remove(&k) {
                    freed.push((old.block, old.blocks()));
                }
                let mut homes: BTreeMap<u16, Home> = f.homes.chunk(k).collect();
                for (&page, &h) in plan
                    .homes
                    .range(k * MAP_CHUNK_PAGES..(k + 1) * MAP_CHUNK_PAGES)
                {
                    // page % 256 < 256.
                    homes.insert((page % MAP_CHUNK_PAGES) as u16, h);
                }
                if homes.is_empty() {
                    continue;
                }
                map_blobs.push((
                    (pi, k),
                    format::encode_map_chunk(plan.id, k, &runs_of(&homes)),
                ));
            }
        }
        for ((pi, k), ptr) in self.place_blobs(map_blobs, target, &mut blobs)? {
            plans[pi].map_chunks.insert(k, ptr);
        }
        let mut entry_dirty: BTreeSet<u64> = self.catalog.dirty.clone();
        entry_dirty.extend(plans.iter().map(|p| p.id / ENTRY_CHUNK_FILES));
        if relocate {
            entry_dirty.extend(self.catalog.entry_chunks.keys().copied());
        }
        let mut by_chunk: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for &k in &entry_dirty {
            by_chunk.insert(k, Vec::new());
        }
        // The files of each dirty entry chunk: looked up by id when that is fewer lookups than
        // a pass over every file (a checkpoint's cost follows what changed).
        if (by_chunk.len() as u64).saturating_mul(ENTRY_CHUNK_FILES) < self.files.len() as u64 {
            for (&k, v) in by_chunk.iter_mut() {
                let ids = k * ENTRY_CHUNK_FILES..(k + 1) * ENTRY_CHUNK_FILES;
                v.extend(ids.filter(|id| self.files.contains_key(id)));
            }
        } else {
            for &id in self.files.keys() {
                if let Some(v) = by_chunk.get_mut(&(id / ENTRY_CHUNK_FILES)) {
                    v.push(id);
                }
            }
        }
        let plan_of: BTreeMap<u64, usize> =
            plans.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
        let mut entry_chunks = self.catalog.entry_chunks.clone();
        let mut entry_blobs: Vec<(u64, Vec<u8>)> = Vec::new();
        for (k, mut members) in by_chunk {
            members.sort_unstable();
            if let Some(old) = entry_chunks.remove(&k) {
                freed.push((old.block, old.blocks()));
            }
            if members.is_empty() {
                continue;
            }
            let entries: Vec<Entry> = members
                .iter()
                .map(|id| {
                    let f = &self.files[id];
                    let contents = match plan_of.get(id).map(|&i| &plans[i]) {
                        Some(plan) => match &plan.inline {
                            Some(bytes) => Contents::Inline(bytes.clone()),
                            None => Contents::Blocks(
                                plan.map_chunks.iter().map(|(k, p)| (*k, *p)).collect(),
                            ),
                        },
                        None => match &f.inline {
                            Some(bytes) => Contents::Inline(bytes.to_vec()),
                            None => Contents::Blocks(
                                f.map_chunks.iter().map(|(k, p)| (*k, *p)).collect(),
                            ),
                        },
                    };
                    Entry {
                        id: *id,
                        name: f.name.clone(),
                        size: f.size,
                        contents,
                    }
                })
                .collect();
            let refs: Vec<&Entry> = entries.iter().collect();
            entry_blobs.push((k, format::encode_entry_chunk(k, &refs)));
        }
        entry_chunks.extend(self.place_blobs(entry_blobs, target, &mut blobs)?);
        if self.catalog.dir.len > 0 {
            freed.push((self.catalog.dir.block, self.catalog.dir.blocks()));
        }
        let dir = if entry_chunks.is_empty() {
            BlobPtr::default()
        } else {
            let list: Vec<(u64, BlobPtr)> = entry_chunks.iter().map(|(k, p)| (*k, *p)).collect();
            let bytes = format::encode_directory(&list);
            self.place_blobs(vec![((), bytes)], target, &mut blobs)?[0].1
        };
        self.write_blobs(&mut blobs)?;
        let mut file = self.storage.file(data);
        file.flush().map_err(|e| Error::from_storage(data, e))?;
        // The links' blocks no page adopted are free once the new superblock is.
        let mut b = link_start;
        for &a in adopted.iter().chain(std::iter::once(&link_end)) {
            if a > b {
                freed.push((b, a - b));
            }
            b = b.max(a + 1);
        }
        // The free space once the new superblock is in place (installed in step 5): what was
        // pending is free, and so are those link blocks. The extent the superblock records,
        // and where the next epoch's links begin, leaves out the free tail step 5 cuts.
        let after = {
            let mut a = self.alloc.clone();
            a.checkpoint_done();
            for (start, n) in freed {
                a.release_now(start, n);
            }
            a
        };
        let block_count = after.trim_point(TRIM_MIN_BLOCKS).unwrap_or(after.count);

        // --- 4. superblock --------------------------------------------------------------
        let generation = self.sb.generation + 1;
        let sb = Superblock {
            version: crate::format::FORMAT_VERSION,
            generation,
            volume_salt: self.sb.volume_salt,
            directory: dir,
            next_file_id: self.next_file_id,
            next_txn_seq: self.log.next_seq,
            block_count,
        };
        let slot = generation % 2;
        if let Err(e) = self.storage.file(data).write_at(slot * PAGE, &sb.encode()) {
            let err = Error::from_storage(data, e);
            // The slot may now hold a torn or complete new superblock: make it invalid.
            let zeroed = self
                .storage
                .file(data)
                .write_at(slot * PAGE, &vec![0u8; PAGE_SIZE])
                .and_then(|()| self.storage.file(data).flush());
            if zeroed.is_err() {
                return Err(self.poison(err));
            }
            return Err(err);
        }
        let flushed = self.storage.file(data).flush().is_ok();

        // --- 5. install -----------------------------------------------------------------
        for plan in plans {
            let Some(f) = self.files.get_mut(&plan.id) else {
                continue;
            };
            match plan.inline {
                Some(bytes) => {
                    f.homes = Default::default();
                    f.inline = Some(bytes.into_boxed_slice());
                }
                None => {
                    for (page, h) in plan.homes {
                        f.homes.insert(page, h);
                    }
                    f.inline = None;
                }
            }
            f.map_chunks = plan.map_chunks;
        }
        // Only the planned files have anything to clear: a file with log entries is dirty
        // (`check_invariants`), and the plan took every dirty file.
        for id in &ids {
            if let Some(f) = self.files.get_mut(id) {
                f.log.clear();
                f.dirty = false;
                f.dirty_chunks.clear();
            }
        }
        self.catalog.entry_chunks = entry_chunks;
        self.catalog.dir = dir;
        self.catalog.dirty.clear();
        self.alloc = after;
        self.sb = sb;
        let salt = self.sb.log_salt();
        // Frames buffered meanwhile cannot exist: the log was written out in step 1 and open
        // transactions have not spilled (checkpoint_allowed).
        self.log.buf.clear();
        self.log.new_epoch(salt);
        self.aborts.clear();
        self.tail_start = block_count;
        self.tail = block_count;
        self.data_flushed = flushed;
        if flushed {
            self.cut_log_to_marker();
            self.trim_data_tail();
        } else {
            self.log_truncate_pending = true;
        }
        Ok(())
    }

    /// Reads every job's image (windowed by log offset for log images), hashes it, and writes
    /// the images in block order, runs of consecutive blocks in one call. Returns the hashes.
    fn write_images(&mut self, jobs: &[Job]) -> Result<BTreeMap<(u64, u64), u64>> {
        let data = PhysicalFileId::Data;
        let mut images: Vec<(u64, u64, u64, Vec<u8>)> = Vec::with_capacity(jobs.len());
        // Log-sourced images of files not in memory: read in log order, windowed, below.
        let mut from_log: Vec<(u64, LogLoc)> = Vec::new();
        let mut slot_of: Vec<usize> = Vec::new();
        for job in jobs.iter() {
            let resident = self
                .files
                .get(&job.file)
                .is_some_and(|f| f.resident.is_some());
            let mut img = vec![0u8; PAGE_SIZE];
            match job.source {
                Source::Log(l) if !resident => {
                    slot_of.push(images.len());
                    from_log.push((job.page, l));
                }
                _ => self.read_committed(job.file, job.page, &mut img)?,
            }
            images.push((job.block, job.file, job.page, img));
        }
        let mut bad = None;
        self.each_log_image(&from_log, |k, part, bytes| {
            if let Err(e) = part.fill(&mut images[slot_of[k]].3, bytes) {
                bad.get_or_insert(e);
            }
        })?;
        if let Some(e) = bad {
            return Err(e);
        }
        let mut hashes = BTreeMap::new();
        images.sort_unstable_by_key(|x| x.0);
        for (_, file, page, img) in &images {
            hashes.insert((*file, *page), xxh3_64(img));
        }
        let mut a = 0;
        while a < images.len() {
            let mut b = a + 1;
            while b < images.len() && b - a < MAX_WRITE_BLOCKS && images[b].0 == images[b - 1].0 + 1
            {
                b += 1;
            }
            // Copied page by page: a byte-wise `flat_map(..).collect()` here took ~12
            // instructions per byte, 130 M for the SQL suite's two checkpoints (natively, more
            // than everything else the checkpoints did together).
            let mut run = Vec::with_capacity((b - a) * PAGE_SIZE);
            for x in &images[a..b] {
                run.extend_from_slice(&x.3);
            }
            self.storage
                .file(data)
                .write_at(images[a].0 * PAGE, &run)
                .map_err(|e| Error::from_storage(data, e))?;
            // Overwritten blocks are not in the page cache (it is keyed by file and page, and
            // the images are unchanged), so nothing to invalidate.
            a = b;
        }
        let top = images.iter().map(|x| x.0 + 1).max().unwrap_or(0);
        self.physical_len[0] = self.physical_len[0].max(top * PAGE);
        Ok(hashes)
    }

    /// Places one kind of catalog blob (`Allocator::alloc_cluster`: one run where it fits
    /// below `target`), queues each one's bytes in `blobs` for `write_blobs`, and returns
    /// each key with its blob's pointer.
    fn place_blobs<K>(
        &mut self,
        items: Vec<(K, Vec<u8>)>,
        target: u64,
        blobs: &mut Vec<(u64, Vec<u8>)>,
    ) -> Result<Vec<(K, BlobPtr)>> {
        let sizes: Vec<u64> = items
            .iter()
            .map(|(_, b)| pages_for(b.len() as u64))
            .collect();
        let places = self.alloc.alloc_cluster(&sizes, target);
        let mut out = Vec::with_capacity(items.len());
        for ((key, bytes), at) in items.into_iter().zip(places) {
            out.push((key, blob_ptr(at, &bytes)?));
            blobs.push((at, bytes));
        }
        Ok(out)
    }

    /// Writes catalog blobs in block order, consecutive ones in one call.
    fn write_blobs(&mut self, blobs: &mut [(u64, Vec<u8>)]) -> Result<()> {
        let data = PhysicalFileId::Data;
        blobs.sort_unstable_by_key(|b| b.0);
        let mut a = 0;
        while a < blobs.len() {
            let mut buf = Vec::new();
            let start = blobs[a].0;
            let mut b = a;
            while b < blobs.len()
                && blobs[b].0 == start + (buf.len() as u64) / PAGE
                && buf.len() < (1 << 20)
            {
                buf.extend_from_slice(&blobs[b].1);
                let padded = buf.len().div_ceil(PAGE_SIZE) * PAGE_SIZE;
                buf.resize(padded, 0);
                b += 1;
            }
            self.storage
                .file(data)
                .write_at(start * PAGE, &buf)
                .map_err(|e| Error::from_storage(data, e))?;
            self.physical_len[0] = self.physical_len[0].max(start * PAGE + buf.len() as u64);
            a = b;
        }
        Ok(())
    }

    /// The log of the new epoch starts with its marker frame; the file is cut to one growth
    /// step ([`super::txn::log_step`]), so the epoch's first commits overwrite bytes the file
    /// has (cheaper flushes) instead of growing it again. Stale bytes there carry the old
    /// epoch's salt and never chain. Failures are harmless and ignored.
    pub(crate) fn cut_log_to_marker(&mut self) {
        let generation = self.sb.generation;
        if self.log.written == 0 && self.log.buf.is_empty() {
            self.log.frame(FrameKind::Epoch, 0, generation, &[]);
            if self.write_out(Instant::now()).is_err() {
                return;
            }
        }
        let mut keep = self.log.written.max(self.log_step());
        if !self.spare_log_fits(keep) {
            keep = self.log.written;
        }
        self.cut_log_file(keep);
    }

    /// Gives a free tail of the data file back (one truncate call; only when it is worth it).
    fn trim_data_tail(&mut self) {
        let Some(start) = self.alloc.trim_point(TRIM_MIN_BLOCKS) else {
            return;
        };
        let data = PhysicalFileId::Data;
        if self.storage.file(data).set_len(start * PAGE).is_ok() {
            self.alloc.trim_to(start);
            self.physical_len[0] = start * PAGE;
        }
    }
}

fn blob_ptr(at: u64, bytes: &[u8]) -> Result<BlobPtr> {
    BlobPtr::of(at, bytes).map_err(|_| Error::TooLarge {
        value: bytes.len() as u64,
    })
}

fn source_of(f: &super::state::FileState, page: u64) -> Source {
    if f.resident.is_some() {
        Source::Resident
    } else if let Some(&l) = f.log.get(&page) {
        Source::Log(l)
    } else if page == 0 && f.inline.is_some() {
        Source::Inline
    } else if f.homes.get(page).is_some() {
        Source::Home
    } else {
        Source::Inline
    }
}

/// Runs of a map chunk: consecutive pages in consecutive blocks.
fn runs_of(homes: &BTreeMap<u16, Home>) -> Vec<Run> {
    let mut runs: Vec<Run> = Vec::new();
    for (&p, h) in homes {
        match runs.last_mut() {
            Some(r)
                if u64::from(r.first) + r.hashes.len() as u64 == u64::from(p)
                    && r.block + r.hashes.len() as u64 == h.block
                    && r.hashes.len() < usize::from(u16::MAX) =>
            {
                r.hashes.push(h.hash)
            }
            _ => runs.push(Run {
                first: p,
                block: h.block,
                hashes: vec![h.hash],
            }),
        }
    }
    runs
}
