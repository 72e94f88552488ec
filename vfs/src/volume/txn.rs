//! Mutations of the filesystem API, and the commit protocol: serialize, make durable by the
//! durability level, then apply; on failure, roll back. Deadlines of the relaxed levels.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::time::Duration;

use web_time::Instant;

use crate::error::{Error, Result};
use crate::format::{
    diff_mask, encode_ids, encode_patch, same_page, FrameKind, MAX_ID_LIST, PAGE, PAGE_SIZE,
    PATCH_MAX_CHUNKS,
};
use crate::storage::{PhysicalFile, PhysicalFileId, Storage, StorageError};

use super::log::{Grouped, LogWriter};
use super::maps::Content;
use super::state::{pages_for, FileState, LogLoc, PatchLoc, Pending};
use super::{
    check_name, ix, n32, usize_of, Durability, FileId, Scope, SyncLevel, Volume, MAX_FILE_ID,
    MAX_FILE_SIZE,
};

/// The pages a serialization logged, per file, and where their images are in the log.
pub(crate) type Serialized = Vec<(u64, Vec<(u64, LogLoc)>)>;

/// How making a commit durable failed.
enum DurableError {
    /// Nothing of the commit can become durable: roll it back.
    Failed(Error),
    /// The commit was written but the flush failed: it may or may not survive power loss.
    Unknown(Error),
}

impl<S: Storage> Volume<S> {
    // ------------------------------------------------------------------------------------
    // The open transaction
    // ------------------------------------------------------------------------------------

    /// The pending record of a live file, created on first change.
    pub(crate) fn touch(&mut self, id: u64) -> Result<&mut Pending> {
        let p = match self.pending.entry(id) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let f = self.files.get(&id).ok_or(Error::StaleId { id })?;
                e.insert(Pending::of_existing(f))
            }
        };
        if p.deleted {
            return Err(Error::StaleId { id });
        }
        Ok(p)
    }

    /// Creates an empty file; fails if the name exists.
    pub fn create(&mut self, name: &str) -> Result<FileId> {
        self.check_writable()?;
        check_name(name)?;
        if self.names.contains_key(name) {
            return Err(Error::AlreadyExists {
                name: name.to_owned(),
            });
        }
        // A next id of MAX_FILE_ID is a valid state (mount accepts it: every id below it is
        // used), but that id is not one a log may hold (found by fuzz/: an image claiming next
        // id 2^53 mounted, `create` handed 2^53 out, and the next mount refused the log).
        let id = self.next_file_id;
        if id >= MAX_FILE_ID {
            return Err(Error::FileIdsExhausted { limit: MAX_FILE_ID });
        }
        self.next_file_id += 1;
        self.pending.insert(id, Pending::created(name.to_owned()));
        self.names.insert(name.to_owned(), id);
        Ok(FileId(id))
    }

    /// Opens the file, creating it empty if absent.
    pub fn open_or_create(&mut self, name: &str) -> Result<FileId> {
        match self.names.get(name) {
            Some(&id) => Ok(FileId(id)),
            None => self.create(name),
        }
    }

    /// Renames `from` to `to`; fails if `to` exists.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<()> {
        self.check_writable()?;
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
        self.touch(id)?.name = to.to_owned();
        self.names.remove(from);
        self.names.insert(to.to_owned(), id);
        Ok(())
    }

    /// Deletes a file by name. Its space is reused after the next checkpoint.
    pub fn delete(&mut self, name: &str) -> Result<()> {
        let id = self.open(name)?;
        self.delete_id(id)
    }

    /// Deletes a file.
    pub fn delete_id(&mut self, id: FileId) -> Result<()> {
        self.check_writable()?;
        let id = id.0;
        let p = self.touch(id)?;
        p.deleted = true;
        let freed = p.staged_bytes();
        p.staged.clear();
        p.spilled.clear();
        let name = p.name.clone();
        self.staged_bytes -= freed;
        if self.names.get(&name) == Some(&id) {
            self.names.remove(&name);
        }
        Ok(())
    }

    /// Writes `data` at `offset`, extending the file (with zeros in any gap) if needed.
    pub fn write(&mut self, id: FileId, offset: u64, data: &[u8]) -> Result<()> {
        self.check_writable()?;
        let id = id.0;
        let size = self.live_size(id)?;
        let end = offset
            .checked_add(data.len() as u64)
            .filter(|&e| e <= MAX_FILE_SIZE)
            .ok_or(Error::TooLarge { value: offset })?;
        if data.is_empty() {
            return Ok(());
        }
        // Everything that can fail (loading contents, reading partially overwritten pages)
        // happens before any state changes: a failed write leaves the volume as it was.
        self.prepare_resident(id)?;
        let first = offset / PAGE;
        let last = (end - 1) / PAGE;
        let mut pre: Vec<(u64, Box<[u8]>)> = Vec::new();
        for page in [first, last] {
            let pstart = page * PAGE;
            let partial = offset > pstart || end < pstart + PAGE;
            let staged = self
                .pending
                .get(&id)
                .is_some_and(|p| p.staged.contains_key(&page));
            if partial && pstart < size && !staged && !pre.iter().any(|(p, _)| *p == page) {
                pre.push((page, self.live_page(id, page)?));
            }
        }
        // Check the sizes cross into usize before changing anything.
        usize_of(end - offset)?;
        let p = self.touch(id)?;
        let mut added = 0usize;
        for page in first..=last {
            let pstart = page * PAGE;
            let lo = offset.max(pstart);
            let hi = end.min(pstart + PAGE);
            // All three differences are below PAGE_SIZE or data.len().
            let (d, o, n) = (ix(lo - offset), ix(lo - pstart), ix(hi - lo));
            let src = &data[d..d + n];
            let img = match p.staged.entry(page) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    added += PAGE_SIZE;
                    let base = match pre.iter().position(|(q, _)| *q == page) {
                        Some(i) => pre.swap_remove(i).1,
                        // A whole page (SQLite's writes) is copied into its new image at
                        // once: zeroing the allocation first and then overwriting it was
                        // ~18 K of the ~38 K instructions an autocommit INSERT cost above the
                        // memory VFS (callgrind, Memory mode, Balanced, 8 KiB SQLite pages:
                        // bench-sql/examples/insert_cpu.rs).
                        None if n == PAGE_SIZE => {
                            e.insert(Box::from(src));
                            continue;
                        }
                        None => vec![0u8; PAGE_SIZE].into_boxed_slice(),
                    };
                    e.insert(base)
                }
            };
            img[o..o + n].copy_from_slice(src);
        }
        if end > p.size {
            p.size = end;
        }
        self.staged_bytes += added;
        self.maybe_spill();
        Ok(())
    }

    /// Sets the length: truncates, or extends with zeros.
    pub fn set_len(&mut self, id: FileId, len: u64) -> Result<()> {
        self.check_writable()?;
        let id = id.0;
        if len > MAX_FILE_SIZE {
            return Err(Error::TooLarge { value: len });
        }
        let size = self.live_size(id)?;
        if len == size {
            return Ok(());
        }
        self.prepare_resident(id)?;
        let cut_page = (len < size && !len.is_multiple_of(PAGE)).then_some(len / PAGE);
        let mut pre = None;
        if let Some(page) = cut_page {
            let staged = self
                .pending
                .get(&id)
                .is_some_and(|p| p.staged.contains_key(&page));
            if !staged {
                pre = Some(self.live_page(id, page)?);
            }
        }
        let p = self.touch(id)?;
        let before = p.staged_bytes();
        p.resize(len);
        if let Some(page) = cut_page {
            // The page cut in the middle must read as zeros past `len` if the file regrows:
            // stage its new image, which supersedes every older one.
            let img = p
                .staged
                .entry(page)
                .or_insert_with(|| pre.unwrap_or_else(|| vec![0u8; PAGE_SIZE].into_boxed_slice()));
            img[(len % PAGE) as usize..].fill(0);
            p.spilled.remove(&page);
        }
        let after = p.staged_bytes();
        self.staged_bytes = self.staged_bytes + after - before;
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Commit and rollback
    // ------------------------------------------------------------------------------------

    /// Ends every file's open transaction according to the durability level: atomically, all or
    /// nothing. A no-op when nothing changed. On failure nothing of it is committed, the
    /// transaction is rolled back, and the volume stays usable (unless the failure's outcome is
    /// unknown: see the module docs).
    pub fn commit(&mut self) -> Result<()> {
        self.commit_with(Scope::All, SyncLevel::Full)
    }

    /// Commits the open transaction of the files in `scope`, waiting for what `sync` and the
    /// durability level ask. Success means the commit is durable to that level; work after
    /// that point (a checkpoint) never turns it into a failure.
    pub fn commit_with(&mut self, scope: Scope<'_>, sync: SyncLevel) -> Result<()> {
        self.check_writable()?;
        // Records that change nothing are dropped, not logged.
        let ids = match scope {
            Scope::All => {
                self.pending.retain(|_, p| !p.is_noop());
                self.pending.keys().copied().collect()
            }
            Scope::Files(_) => {
                let mut ids = self.in_scope(scope);
                ids.retain(|id| {
                    if self.pending.get(id).is_some_and(Pending::is_noop) {
                        self.pending.remove(id);
                        false
                    } else {
                        true
                    }
                });
                ids
            }
        };
        if ids.is_empty() {
            return Ok(());
        }
        let now = Instant::now();
        // The link chains on from the log's last frame and is flushed alone: every frame before
        // it must be written and flushed first (Relaxed's and Balanced's deferred flush,
        // early). Nothing of this commit is written yet: if that fails without poisoning the
        // volume, the commit goes to the log as any other.
        // A transaction that spilled links commits as one too, whatever its size: the
        // data file must be flushed for them anyway, and then that is the commit's one flush.
        let link = (self.link_unflushed || self.link_wanted(&ids))
            && match self.log_written_and_flushed(now) {
                Ok(()) => true,
                Err(_) if self.poisoned.is_none() => false,
                Err(e) => {
                    self.rollback_ids(&ids);
                    self.stats.failed_commits += 1;
                    return Err(e);
                }
            };
        if link {
            self.log.begin_link();
        }
        let mark = self.log.mark();
        let aborts = self.aborts.clone();
        let mut serialized = match self.serialize(&ids, true) {
            Ok(s) => s,
            Err(e) => {
                self.log.rewind(mark);
                self.aborts = aborts;
                self.rollback_ids(&ids);
                self.stats.failed_commits += 1;
                return Err(e);
            }
        };
        if let Err(e) = self.check_growth(&ids) {
            self.log.rewind(mark);
            self.aborts = aborts;
            self.rollback_ids(&ids);
            self.stats.failed_commits += 1;
            return Err(e);
        }
        let durable = if link {
            self.place_link(&mut serialized);
            self.write_link(true)
        } else {
            self.make_durable(sync, now, &mut serialized)
        };
        match durable {
            Ok(()) => {}
            Err(DurableError::Failed(e)) => {
                self.log.rewind(mark);
                self.aborts = aborts;
                self.rollback_ids(&ids);
                self.stats.failed_commits += 1;
                return Err(e);
            }
            Err(DurableError::Unknown(e)) => {
                // The frames are written: after a crash of the tab they are there; after a
                // power loss they may not be. Keep them (the live state shows the commit),
                // refuse further writes, and say that the outcome is unknown.
                self.apply(&ids, serialized);
                let e = Error::CommitUnknown {
                    cause: e.to_string(),
                };
                return Err(self.poison(e));
            }
        }
        self.apply(&ids, serialized);
        self.stats.commits += 1;
        self.last_commit_at = Some(now);
        self.after_commit();
        self.notify_deadline();
        Ok(())
    }

    /// Near a known space limit, refuses a commit that grows the logical bytes of any file it
    /// touches once the physical files would pass `limit - space_reserve(limit)`. The reserve is
    /// what a full volume needs to keep working: commits that do not grow a file (SQLite's
    /// DELETE and UPDATE, INSERTs into freed pages) and the checkpoints after them, which give
    /// the log's space back, may use it. Without it, the last bytes of the quota go to growth
    /// and nothing, not even a delete, can commit any more (seen in both browsers).
    /// The refusal is the same typed error as the browser's: [`Error::OutOfSpace`].
    fn check_growth(&self, ids: &[u64]) -> Result<()> {
        let Some(limit) = self.opts.space_limit else {
            return Ok(());
        };
        let grows = ids.iter().any(|id| match self.pending.get(id) {
            Some(p) if !p.deleted => p.size > self.files.get(id).map_or(0, |f| f.size),
            _ => false,
        });
        if !grows {
            return Ok(());
        }
        // The log's end includes this commit's serialized frames (the buffer).
        let after = self.physical_bytes();
        let reserve = space_reserve(limit);
        if after.saturating_add(reserve) > limit {
            return Err(Error::OutOfSpace {
                file: PhysicalFileId::Log,
                source: crate::storage::StorageError::QuotaExceeded {
                    message: format!(
                        "growing to {after} bytes would leave less than the {reserve} bytes this \
                         volume keeps of its {limit}-byte space limit for deletes and \
                         checkpoints"
                    ),
                },
            });
        }
        Ok(())
    }

    /// Discards every uncommitted change (all files).
    pub fn rollback(&mut self) {
        self.rollback_with(Scope::All);
    }

    /// Discards the uncommitted changes of the files in `scope`.
    pub fn rollback_with(&mut self, scope: Scope<'_>) {
        let ids = self.in_scope(scope);
        self.rollback_ids(&ids);
    }

    /// Pending file ids in `scope`, ascending.
    fn in_scope(&self, scope: Scope<'_>) -> Vec<u64> {
        self.pending
            .iter()
            .filter(|(&id, p)| match scope {
                Scope::All => true,
                Scope::Files(f) => {
                    f(&p.name)
                        || f(&p.logged.name)
                        || self.files.get(&id).is_some_and(|c| f(&c.name))
                }
            })
            .map(|(&id, _)| id)
            .collect()
    }

    /// Drops the pending records of `ids`, restoring the committed names.
    pub(crate) fn rollback_ids(&mut self, ids: &[u64]) {
        let mut restore = Vec::new();
        for &id in ids {
            let Some(p) = self.pending.remove(&id) else {
                continue;
            };
            self.staged_bytes -= p.staged_bytes();
            if p.spilled_any {
                self.aborts.insert(id);
            }
            if !p.deleted && self.names.get(&p.name) == Some(&id) {
                self.names.remove(&p.name);
            }
            if p.existed {
                restore.push(id);
            }
        }
        for id in restore {
            let Some(name) = self.files.get(&id).map(|f| f.name.clone()) else {
                continue;
            };
            // An uncommitted change elsewhere took the committed name (only possible through
            // the filesystem API, renaming across scopes): it is rolled back too.
            if let Some(&other) = self.names.get(&name) {
                if other != id {
                    self.rollback_ids(&[other]);
                }
            }
            self.names.insert(name, id);
        }
    }

    /// Serializes the open transaction of `ids` (plus pending aborts) into the log buffer,
    /// followed by a commit frame if `commit`. Changes nothing but the log buffer and the abort
    /// list, so a failure is undone by rewinding the log to a mark and restoring the aborts.
    /// Returns, per file, the pages logged and where their images are.
    pub(crate) fn serialize(&mut self, ids: &[u64], commit: bool) -> Result<Serialized> {
        if !self.aborts.is_empty() {
            let aborted: Vec<u64> = std::mem::take(&mut self.aborts).into_iter().collect();
            for chunk in aborted.chunks(MAX_ID_LIST) {
                self.log.frame(FrameKind::Abort, 0, 0, &encode_ids(chunk));
            }
        }
        let mut out: Serialized = Vec::with_capacity(ids.len());
        // Patches only in commits that are written at once: Balanced's buffered commits are
        // written as one group of whole images (`LogWriter::grouped`), and a spill's pages
        // are not committed yet. Never into a version-2 volume's log (see FORMAT_VERSION).
        let patches = commit
            && !self.log.linking()
            && self.opts.log_patches
            && self.opts.durability != Durability::Balanced
            && self.sb.version >= 3;
        let reserved = if self.log.linking() {
            None
        } else {
            // At most one page frame per staged page, three more frames per record (a create
            // or rename with its name, a cut, a length) and the commit frame listing the
            // files: the buffer is sized once, not regrown by doubling while a big commit is
            // framed (each regrowth copies what it holds; in wasm, a new allocation and a
            // copy). Natively, Disk mode, Strict: the 16 cases took 5.6 M fewer instructions
            // (6,817.8 → 6,812.2 M; the memory VFS 6,746.0 M). Counting the page frames only
            // left the commit frame to regrow a buffer sized exactly for them. A link's pages
            // go to its blocks, not to this buffer.
            use crate::format::FRAME_HEADER;
            let bytes: usize = records(&self.pending, ids)
                .map(|(_, p)| {
                    p.staged.len() * (FRAME_HEADER + PAGE_SIZE) + 3 * FRAME_HEADER + p.name.len()
                })
                .sum();
            self.log.reserve(bytes + FRAME_HEADER + 8 * ids.len());
            Some(self.log.buf.capacity())
        };
        let (files, cache) = (&self.files, &self.cache);
        for (id, p) in records(&self.pending, ids) {
            let f = files.get(&id);
            let how = |page: u64, img: &[u8]| page_log(f, cache, p, id, page, img, patches);
            out.push((id, serialize_file(&mut self.log, id, p, how)));
        }
        if self.log.linking() {
            // The link's pages, listed before its commit frame (a spill link has none).
            self.log.link_frames();
        }
        if commit {
            // A commit lists its files, so a concurrent transaction's spilled frames stay
            // uncommitted. An empty list means "every file with uncommitted frames": only when
            // that is exactly this commit's set.
            let others_spilled = self
                .pending
                .iter()
                .any(|(id, p)| p.spilled_any && !ids.contains(id));
            let payload = if ids.len() <= MAX_ID_LIST {
                encode_ids(ids)
            } else if !others_spilled {
                Vec::new()
            } else {
                return Err(Error::TooLarge {
                    value: ids.len() as u64,
                });
            };
            let seq = self.log.next_seq;
            self.log.frame(FrameKind::Commit, 0, seq, &payload);
            self.log.next_seq += 1;
        }
        debug_assert!(
            reserved.is_none_or(|c| c == self.log.buf.capacity()),
            "the log buffer regrew while a commit was framed"
        );
        Ok(out)
    }

    /// Writes and flushes as the level and `sync` ask. `inflight` is where this commit's
    /// pages are in the log (moved if its write groups the buffered commits).
    fn make_durable(
        &mut self,
        sync: SyncLevel,
        now: Instant,
        inflight: &mut Serialized,
    ) -> Result<(), DurableError> {
        let delay = self.opts.max_flush_delay;
        let overdue = |t: Option<Instant>| t.is_some_and(|t| now.duration_since(t) >= delay);
        match (self.opts.durability, sync) {
            (Durability::Strict, SyncLevel::Full) => {
                self.write_out(now).map_err(DurableError::Failed)?;
                self.flush_log().map_err(DurableError::Unknown)
            }
            (Durability::Strict, SyncLevel::WriteOnly) | (Durability::Relaxed, _) => {
                self.write_out(now).map_err(DurableError::Failed)?;
                if overdue(self.log.oldest_unflushed) {
                    // The flush is due on this commit's path: if it fails, whether this and
                    // the earlier commits survive a power loss is unknown, and it is said.
                    self.flush_log().map_err(DurableError::Unknown)?;
                }
                Ok(())
            }
            (Durability::Balanced, _) => {
                self.log.oldest_unwritten.get_or_insert(now);
                let due = overdue(self.log.oldest_unwritten);
                let write = due || self.log.buf.len() >= self.opts.write_buffer_bytes;
                if write {
                    self.write_out_with(now, Some(inflight))
                        .map_err(DurableError::Failed)?;
                }
                if due || overdue(self.log.oldest_unflushed) {
                    self.flush_log().map_err(DurableError::Unknown)?;
                } else if write {
                    // The flush these bytes need comes later, on a commit's path or the
                    // worker's deadline timer: let the storage start it now where it can do so
                    // off this thread (Chromium: `storage/opfs.rs`, "Flush ahead"). Only here:
                    // Strict flushes at once, and Relaxed writes every commit, where a hint
                    // per write would flush per commit in the background.
                    self.storage.file(PhysicalFileId::Log).flush_ahead();
                }
                Ok(())
            }
        }
    }

    /// Whether this commit (or spill) goes to the data file's tail as a link: its transaction's
    /// pages without a place (below), staged and spilled, come to at least `link_min_bytes` and
    /// to at least half of its pages, and the superblock says format version 4 (an older build
    /// would stop its replay where the chain leaves the log, and lose every commit after).
    ///
    /// Only pages without a place count: neither a home nor a block of an earlier link (which
    /// becomes its home at the next checkpoint). A link's block becomes its page's home, so a
    /// page that has a place would move and leave a hole behind, which the compaction must
    /// then fill by relocating other pages. A bulk load's new pages would be appended at the
    /// checkpoint anyway; a big UPDATE or DELETE rewrites pages in place from the log.
    fn link_wanted(&self, ids: &[u64]) -> bool {
        let Some(min) = self.opts.link_min_bytes else {
            return false;
        };
        if self.sb.version < 4 {
            return false;
        }
        // A link goes at `tail_start`, where every later mount of this epoch must look for
        // it. Mount sets `tail_start` to the superblock's block count, or to the data file's
        // end where the file is shorter (a damaged superblock or data file: every checkpoint
        // leaves the file at least that long). In that case the first link lengthens the file,
        // the next mount looks for links at its new end, and the commit is lost (found by
        // fuzz/). So the epoch logs every commit; its checkpoint writes a block count that
        // matches the file, and links resume.
        if self.tail_start < self.sb.block_count {
            return false;
        }
        // The transaction's size, spilled pages included: a big transaction in Disk mode
        // spills a write buffer at a time, and its spills link once it is that big.
        // Every commit asks: most are far too small, and need no look at each page's place.
        let at_most: usize = records(&self.pending, ids)
            .map(|(_, p)| p.staged.len() + p.spilled.len())
            .sum();
        if at_most * crate::format::PAGE_SIZE < min.max(1) {
            return false;
        }
        let (mut pages, mut homeless) = (0usize, 0usize);
        for (id, p) in records(&self.pending, ids) {
            let f = self.files.get(&id);
            let no_home = |page: u64| {
                f.is_none_or(|f| {
                    f.homes.get(page).is_none() && f.log.get(&page).is_none_or(|l| l.link.is_none())
                })
            };
            let restaged = p.staged.keys().filter(|k| !p.spilled.contains_key(k));
            for page in restaged.chain(p.spilled.keys()) {
                pages += 1;
                homeless += usize::from(no_home(*page));
            }
        }
        let homeless_bytes = homeless * crate::format::PAGE_SIZE;
        homeless_bytes >= min.max(1) && 2 * homeless >= pages
    }

    /// Everything serialized so far written and flushed, so that a link may chain on from the
    /// log's last frame: replay follows the log first and looks for a link only where the
    /// log's chain breaks, so the log's *durable* bytes at its write position must not go on
    /// chaining. They could: frames a crashed session left after the last commit
    /// (`log_stale`), or frames a cut of the file hid that come back when the cut is lost
    /// with the power. So: zero a frame header there if needed, and flush the log if anything
    /// changed it since its last flush (after which the durable log is the live one). A failed
    /// write changes nothing (it is repaired as every log write is); a failed flush poisons
    /// the volume if written commits waited for it (their durability is unknown), else only
    /// says no link may be written now.
    fn log_written_and_flushed(&mut self, now: Instant) -> Result<()> {
        self.ensure_data_flushed()?;
        self.write_out(now)?;
        let log = PhysicalFileId::Log;
        if self.log_stale {
            // Within the file: no quota needed.
            let at = self.log.written;
            if self.physical_len[1] > at {
                zero_frame_header(&mut self.storage.file(log), at, self.physical_len[1])
                    .map_err(|e| Error::from_storage(log, e))?;
                self.log_dirty = true;
            }
            self.log_stale = false;
        }
        if self.log_dirty || self.log.flushed < self.log.written {
            if let Err(e) = self.storage.file(log).flush() {
                let err = Error::from_storage(log, e);
                if self.log.flushed < self.log.written {
                    // Commits were waiting for this flush: their durability is unknown.
                    return Err(self.poison(err));
                }
                // Nothing waited for it (the log was only possibly different on disk): no
                // link now, nothing lost.
                return Err(err);
            }
            self.log.flushed_all();
            self.log_dirty = false;
        }
        Ok(())
    }

    /// The link's frames are serialized: its pages' blocks follow them, from `tail` on. Turns
    /// each page's index (see `serialize_file`) into its block.
    fn place_link(&mut self, serialized: &mut Serialized) {
        let (header_blocks, _) = self.log.link_shape();
        let first = self.tail + header_blocks;
        for (_, locs) in serialized.iter_mut() {
            for (_, loc) in locs.iter_mut() {
                if let Some(hash) = loc.link {
                    *loc = LogLoc::linked(first + loc.offset, hash);
                }
            }
        }
    }

    /// Writes the link at `tail` with one call and, for a commit (`flush`), flushes the data
    /// file once: the commit's one flush, which covers the transaction's spilled links too.
    /// A spill's link is not flushed on its own: nothing waits for it, and the data file is
    /// flushed before the next log write instead (`link_unflushed`). A failed write is
    /// repaired (the link's first frame header zeroed where the file reaches, and flushed), so
    /// nothing of it can chain; then the commit fails.
    fn write_link(&mut self, flush: bool) -> Result<(), DurableError> {
        let data = PhysicalFileId::Data;
        let at = self.tail * PAGE;
        let bytes = self.log.link_bytes();
        let (header_blocks, pages) = self.log.link_shape();
        if let Err(e) = self.storage.file(data).write_at(at, &bytes) {
            let err = Error::from_storage(data, e);
            self.learn_space_limit(&err);
            if self.repair_link(at).is_err() {
                return Err(DurableError::Failed(self.poison(err)));
            }
            return Err(DurableError::Failed(err));
        }
        self.physical_len[0] = self.physical_len[0].max(at + bytes.len() as u64);
        self.log.linked();
        self.tail += header_blocks + pages;
        self.stats.linked_commits += 1;
        self.stats.linked_pages += pages;
        if !flush {
            self.link_unflushed = true;
            return Ok(());
        }
        self.storage
            .file(data)
            .flush()
            .map_err(|e| DurableError::Unknown(Error::from_storage(data, e)))?;
        self.link_unflushed = false;
        Ok(())
    }

    /// After a failed link write at byte `at` of the data file: zero its first frame header
    /// if the file reaches it, and flush, so no byte of it can ever chain.
    fn repair_link(&mut self, at: u64) -> Result<()> {
        let data = PhysicalFileId::Data;
        let mut file = self.storage.file(data);
        let len = file.len().map_err(|e| Error::from_storage(data, e))?;
        if len > at {
            zero_frame_header(&mut file, at, len)
                .and_then(|()| file.flush())
                .map_err(|e| Error::from_storage(data, e))?;
        }
        self.physical_len[0] = self.physical_len[0].max(len);
        Ok(())
    }

    /// Applies a durable commit of `ids` to the committed state.
    fn apply(&mut self, ids: &[u64], mut serialized: Serialized) {
        // A commit of every open record (the usual case: SQLite's, and the filesystem API's
        // `commit()`) takes the records in one piece: removing a thousand of them one by one
        // shifted the rest of each B-tree node every time (a third of the copying in `perf`
        // when 1,000 files are created and committed).
        let mut taken: Vec<(u64, Pending)> = if covers_all(&self.pending, ids) {
            std::mem::take(&mut self.pending).into_iter().collect()
        } else {
            ids.iter()
                .filter_map(|&id| Some((id, self.pending.remove(&id)?)))
                .collect()
        };
        // Records and logged pages are matched as two lists sorted by id, not through a map.
        // Both come in ascending order already (`in_scope`, `serialize`); the sorts only make
        // the match independent of that (a sorted input costs one pass).
        taken.sort_unstable_by_key(|(id, _)| *id);
        serialized.sort_unstable_by_key(|(id, _)| *id);
        let mut serialized = serialized.into_iter().peekable();
        for (id, p) in taken {
            while serialized.next_if(|(sid, _)| *sid < id).is_some() {}
            let locs = match serialized.next_if(|(sid, _)| *sid == id) {
                Some((_, locs)) => locs,
                None => Vec::new(),
            };
            // Resident bytes follow each file's change: a sum over every file at each commit
            // made a commit's cost grow with the volume's file count (`benches/commit.rs`:
            // 29.9 µs per small commit with 10,000 files in Memory mode, 1.2 µs with 10).
            let before = self.resident_heap(id);
            self.apply_file(id, p, locs);
            self.resident_bytes = self.resident_bytes - before + self.resident_heap(id);
        }
        self.enforce_memory_budget();
    }

    /// Heap bytes of file `id`'s resident copy (0 if it has none).
    fn resident_heap(&self, id: u64) -> u64 {
        self.files
            .get(&id)
            .and_then(|f| f.resident.as_ref())
            .map_or(0, Content::heap_bytes)
    }

    /// [`Volume::apply`] for one file: its pending record and where its pages were logged.
    fn apply_file(&mut self, id: u64, mut p: Pending, locs: Vec<(u64, LogLoc)>) {
        self.staged_bytes -= p.staged_bytes();
        self.catalog
            .dirty
            .insert(id / crate::format::ENTRY_CHUNK_FILES);
        if p.deleted {
            if let Some(f) = self.files.remove(&id) {
                self.logical_total -= f.size;
                self.release_file(id, f);
            }
            return;
        }
        let memory = self.opts.buffer_mode == super::BufferMode::Memory;
        let f = self.files.entry(id).or_insert_with(|| FileState {
            name: p.name.clone(),
            // A new file in Memory mode is resident from the start (it has no bytes to load).
            resident: memory.then(Content::new),
            ..FileState::default()
        });
        f.name = p.name;
        f.dirty = true;
        if p.floor < f.size {
            let keep = pages_for(p.floor);
            for (page, home) in f.homes.cut(keep) {
                self.alloc.release_later(home.block, 1);
                f.dirty_chunks.insert(page / crate::format::MAP_CHUNK_PAGES);
            }
            f.log.split_off(&keep);
            if let Some(inline) = &f.inline {
                // Inline files are at most INLINE_MAX bytes: floor fits a usize here.
                let cut = ix(p.floor).min(inline.len());
                f.inline = Some(inline[..cut].into());
            }
            if let Some(c) = &mut f.resident {
                let _ = c.set_len(p.floor);
            }
            self.cache.cut(id, keep);
        }
        self.logical_total = self.logical_total - f.size + p.size;
        f.size = p.size;
        if let Some(c) = &mut f.resident {
            if c.set_len(p.size).is_err() {
                f.resident = None;
            }
        }
        // A resident copy must get the pages spilled during the transaction too: they are
        // in the log only (missing them was a fuzz finding: a new file's empty copy read
        // them as zeros, and a checkpoint wrote that copy home). They are read back here,
        // after the size changes and before the staged pages (which are newer).
        let spilled: Vec<(u64, LogLoc)> = p.spilled.into_iter().collect();
        for &(page, loc) in &spilled {
            f.log.insert(page, loc);
            self.cache.remove(id, page);
        }
        if !spilled.is_empty() {
            if let Some(mut c) = f.resident.take() {
                // One read per window of the log, about the bytes spilled: far cheaper
                // than loading the whole file again. If it fails, the file stops being
                // resident (it loads on its next access, and reports the failure then):
                // this commit is durable already.
                if self.put_log_images(spilled, &mut c).is_ok() {
                    if let Some(f) = self.files.get_mut(&id) {
                        f.resident = Some(c);
                    }
                }
            }
        }
        let Some(f) = self.files.get_mut(&id) else {
            return;
        };
        for (page, loc) in locs {
            self.stats.patched_pages += u64::from(loc.patch.is_some());
            f.log.insert(page, loc);
            let Some(img) = p.staged.remove(&page) else {
                continue;
            };
            match &mut f.resident {
                Some(c) => c.put_page_owned(page, img),
                None => self.cache.put(id, page, img),
            }
        }
    }

    /// A committed file is gone: its blocks and map chunk blobs are free after the next
    /// checkpoint.
    pub(crate) fn release_file(&mut self, id: u64, f: FileState) {
        for (_, home) in f.homes.iter() {
            self.alloc.release_later(home.block, 1);
        }
        for blob in f.map_chunks.values() {
            self.alloc.release_later(blob.block, blob.blocks());
        }
        self.cache.remove_file(id);
    }

    /// Work after a durable commit; failures never reach the committer.
    fn after_commit(&mut self) {
        if self.checkpoint_due() {
            if let Err(e) = self.checkpoint_quietly() {
                self.last_checkpoint_error = Some(e.to_string());
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // Spilling (bounded memory for large transactions)
    // ------------------------------------------------------------------------------------

    /// Bytes of staged pages above which an open transaction's pages go to the log (or, when
    /// big enough, to a link) early.
    fn spill_threshold(&self) -> usize {
        // Memory mode keeps more: spilling a resident file costs its residency.
        let most = self.opts.write_buffer_bytes.saturating_mul(16);
        match self.opts.buffer_mode {
            // Disk mode holds a transaction up to twice `link_min_bytes` (within Memory
            // mode's bound): when a bulk transaction first spills, its new pages have passed
            // `link_min_bytes` (the few pages it rewrites do not count), so the spill links,
            // and every one of its pages is written once. Spilling at the write buffer sent
            // the first 8 MiB of each bulk transaction to the log and, at the checkpoint, home
            // again: building 1 GiB in 10 MB transactions wrote 1.74 × its bytes (Memory mode,
            // which spills later, 1.01 ×). At exactly `link_min_bytes` the spill would come a
            // few pages short of it, and go to the log.
            super::BufferMode::Disk => self.opts.write_buffer_bytes.max(
                self.opts
                    .link_min_bytes
                    .unwrap_or(0)
                    .saturating_mul(2)
                    .min(most),
            ),
            super::BufferMode::Memory => most,
        }
    }

    /// Writes the staged pages of every open transaction to the log, without a commit frame.
    /// A failure here is not the write's failure: the pages stay staged and the spill is
    /// retried by later writes; the commit reports any lasting problem.
    fn maybe_spill(&mut self) {
        if self.staged_bytes <= self.spill_threshold() || self.poisoned.is_some() {
            return;
        }
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| !p.staged.is_empty())
            .map(|(&id, _)| id)
            .collect();
        let now = Instant::now();
        // A big enough spill goes to the data file's tail as a link (no commit frame), so a
        // big transaction in Disk mode writes its pages once too. It is not flushed: the
        // commit's link flushes it with its own bytes (one file), and a log write first
        // flushes the data file (`link_unflushed`).
        let link = self.link_wanted(&ids) && self.log_written_and_flushed(now).is_ok();
        if link {
            self.log.begin_link();
        }
        let mark = self.log.mark();
        let aborts = self.aborts.clone();
        let result = self.serialize(&ids, false).and_then(|mut s| {
            if link {
                self.place_link(&mut s);
                match self.write_link(false) {
                    Ok(()) => Ok(s),
                    // Not reached (no flush), but kept total: written, durability unknown.
                    Err(DurableError::Unknown(e)) => {
                        self.poison(e);
                        Ok(s)
                    }
                    Err(DurableError::Failed(e)) => Err(e),
                }
            } else {
                self.write_out(now).map(|()| s)
            }
        });
        match result {
            Ok(serialized) => {
                for (id, locs) in serialized {
                    // A resident file stays resident: its copy is the committed contents, which
                    // a spill does not change; the commit copies the spilled pages in from the
                    // log (`apply`), a rollback leaves the copy as it is.
                    if let Some(p) = self.pending.get_mut(&id) {
                        let freed = p.spilled_to(locs);
                        self.staged_bytes -= freed;
                    }
                }
            }
            Err(_) => {
                // write_out already cut off whatever reached the file (or poisoned).
                self.log.rewind(mark);
                self.aborts = aborts;
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // Writing and flushing the log
    // ------------------------------------------------------------------------------------

    /// Writes the log buffer with one call. On failure the writer is unchanged; the caller
    /// rewinds what it serialized and calls [`Volume::repair_log_tail`].
    pub(crate) fn write_out(&mut self, now: Instant) -> Result<()> {
        self.write_out_with(now, None)
    }

    /// [`Volume::write_out`]; the buffered commits are written as one where they can be
    /// (`LogWriter::grouped`: Balanced keeps commits unwritten, and 1,000 autocommits that
    /// rewrite the same few pages then log those pages once). `inflight` holds the log
    /// locations of a commit serialized but not applied yet: they move with the group, as do
    /// the committed state's.
    pub(crate) fn write_out_with(
        &mut self,
        now: Instant,
        inflight: Option<&mut Serialized>,
    ) -> Result<()> {
        if self.log.buf.is_empty() {
            return Ok(());
        }
        self.ensure_data_flushed()?;
        if self.link_unflushed {
            // A spill's link first: these frames chain on from it.
            let data = PhysicalFileId::Data;
            if let Err(e) = self.storage.file(data).flush() {
                // The link's bytes may be lost, and a later flush that succeeds need not
                // bring them back: its transaction could commit without its spilled pages.
                return Err(self.poison(Error::from_storage(data, e)));
            }
            self.link_unflushed = false;
        }
        let log = PhysicalFileId::Log;
        let at = self.log.written;
        let mut grouped = self.log.grouped();
        if grouped.is_none() {
            self.log.seal();
        }
        let n = grouped.as_ref().map_or(self.log.buf.len(), |g| g.buf.len());
        let end = at + n as u64;
        // The log grows its file by steps (zeros after the frames, in the same call), so most
        // commits overwrite bytes the file already has: a flush after such a write is cheaper
        // than after an append (`overwrite+flush` against `append+flush`: 426 against 638 µs
        // per pair in Chromium 156, 555 against 1,019 µs in Firefox 153, this machine). The
        // zeros never chain: the next frames overwrite them.
        let mut pad = self.log_padding(end, n);
        if pad == 0 && end < self.physical_len[1] {
            // Inside the file: stale bytes follow (an earlier epoch's frames, or superseded
            // ones). A zeroed frame header after the frames says "end of log" to a holder
            // catching up (`Volume::resume`) without its having to reload.
            pad = (self.physical_len[1] - end).min(crate::format::FRAME_HEADER as u64);
        }
        loop {
            let bytes = match &mut grouped {
                Some(g) => &mut g.buf,
                None => &mut self.log.buf,
            };
            bytes.resize(n + ix(pad), 0);
            let written = self.storage.file(log).write_at(at, bytes);
            bytes.truncate(n);
            let Err(e) = written else { break };
            let err = Error::from_storage(log, e);
            self.learn_space_limit(&err);
            // Whatever part of the buffer reached the file must not chain: cut it off.
            if self.repair_log_tail().is_err() {
                return Err(self.poison(err));
            }
            if pad > 0
                && matches!(
                    err,
                    Error::OutOfSpace {
                        source: StorageError::QuotaExceeded { .. },
                        ..
                    }
                )
            {
                // The step did not fit the quota: the frames alone may. (A short write or an
                // absurd count is not retried: the browser misbehaved; say so.)
                pad = 0;
                continue;
            }
            return Err(err);
        }
        if let Some(g) = grouped {
            self.moved_to_group(&g, at, inflight);
            self.log.adopt(g);
        }
        // The write replaced whatever chained on at `at`.
        self.log_stale = false;
        self.log_dirty = true;
        self.log.wrote(now);
        self.physical_len[1] = self.physical_len[1].max(end + pad);
        Ok(())
    }

    /// The buffered commits were written as `g` at log offset `at`: every log location past
    /// `at` (the committed state's, and `inflight`'s) moves to where `g` put that page's image.
    /// Only the last image of a page survives grouping; a location of an earlier one can only
    /// be the committed state's for a page the in-flight commit rewrote, which applying that
    /// commit replaces.
    fn moved_to_group(&mut self, g: &Grouped, at: u64, inflight: Option<&mut Serialized>) {
        for (file, page, loc) in g.pages() {
            if let Some(old) = self.files.get_mut(&file).and_then(|f| f.log.get_mut(&page)) {
                // A tail link's block is not in the log (its offset is above LINK_BASE).
                if old.link.is_none() && old.offset >= at {
                    *old = loc;
                }
            }
        }
        for (id, locs) in inflight.into_iter().flatten() {
            for (page, loc) in locs {
                if loc.link.is_none() && loc.offset >= at {
                    if let Some(new) = g.loc_of(*id, *page) {
                        *loc = new;
                    }
                }
            }
        }
        self.stats.grouped_commits += g.commits as u64 - 1;
    }

    /// Zero bytes to write after log frames that end at `end`, written by a call of `n` bytes:
    /// none while the file is long enough; none after a large write (at least
    /// [`PAD_MAX_WRITE`]); else up to the next multiple of [`log_step`], but at most
    /// [`PAD_PER_BYTE`] × `n` after a write of more than [`PAD_STEP_MAX_WRITE`] — and none
    /// where a known space limit is near (the step must not take the space that non-growing
    /// commits and checkpoints need).
    ///
    /// Why the bound for mid-sized writes: zeros cost what frames cost to write and flush (in
    /// Firefox ~1.35 ms per MiB, 568 µs written and 785 µs flushed, results/2026-12-05-night),
    /// and each later commit that fits saves the premium of growing the file (per 4 KiB pair:
    /// 35-460 µs in Firefox, sitting to sitting; ~0.2 ms in Chromium). Autocommits (1.4 KB of
    /// patches in the rollback-journal modes, 12.6 KB of WAL frames) fill a step in 60 to 700
    /// commits, so a whole step pays back many times. A commit of tens of KB (the filesystem
    /// API's 1,000 creates or renames: 65 and 68 KB of frames) padded to a 1 MiB step wrote
    /// ~1 MiB of zeros for commits that may never come. Bounded by its own bytes, the pad costs
    /// at most what the commit's frames cost and holds one more such commit. Measured in the
    /// bench-fs lifecycle, pages alternated twice in one sitting (results/2026-12-06-fs-pad),
    /// Firefox Strict, ms per 1,000 files, Disk / Memory mode: create 2.06-1.66 / 2.10-1.78
    /// with 4 × the bytes, 1.50-1.56 / 1.50-1.56 with 1 ×; rename 3.22-2.44 / 2.64-2.28
    /// against 2.10-1.88 / 1.56-1.68; Chromium alike (create 1.41-1.50 against 1.03-1.19).
    ///
    /// Why not after a large write: the step saves small commits a dearer flush (see
    /// `write_out`), but a run of large writes — a big transaction spilling 1 MiB at a time in
    /// Disk mode, bulk commits — would write every log byte twice, zeros first (measured,
    /// 200,000 rows × 1 KiB in 10,000-row transactions, Disk mode: 2.77× the unix VFS's bytes
    /// written with padding after every write, against Memory mode's 2.09×). The flush after
    /// an append costs a large write a few hundred µs on top of its own cost; the next small
    /// commit pads again.
    fn log_padding(&self, end: u64, n: usize) -> u64 {
        if end <= self.physical_len[1] || n >= PAD_MAX_WRITE {
            return 0;
        }
        let mut pad = end.next_multiple_of(self.log_step()) - end;
        if n > PAD_STEP_MAX_WRITE {
            pad = pad.min((PAD_PER_BYTE * n) as u64);
        }
        if self.spare_log_fits(end + pad) {
            pad
        } else {
            0
        }
    }

    /// Whether a log file of `len` bytes leaves a known space limit's reserve free (always,
    /// without a limit). Spare log bytes are quota the database cannot use: near a limit the
    /// log file holds only its frames.
    pub(crate) fn spare_log_fits(&self, len: u64) -> bool {
        self.known_space_limit().is_none_or(|limit| {
            (self.data_bytes() + len).saturating_add(space_reserve(limit)) <= limit
        })
    }

    /// The step by which the log file grows now ([`log_step`] of the logical bytes).
    pub(crate) fn log_step(&self) -> u64 {
        log_step(self.logical_bytes())
    }

    /// Cuts the log file to `keep` bytes (at least the written frames) if it is longer; a
    /// failure is harmless (spare bytes never chain) and ignored.
    pub(crate) fn cut_log_file(&mut self, keep: u64) {
        debug_assert!(keep >= self.log.written);
        let log = PhysicalFileId::Log;
        if self.physical_len[1] > keep && self.storage.file(log).set_len(keep).is_ok() {
            self.physical_len[1] = keep;
            self.log_dirty = true;
        }
    }

    /// After a failed log write at `log.written`: zero the first frame header there (if the
    /// file reaches that far) and flush, so that no byte of the failed write can continue the
    /// chain after any crash. Fails only if the repair itself fails (the caller poisons).
    pub(crate) fn repair_log_tail(&mut self) -> Result<()> {
        let log = PhysicalFileId::Log;
        let at = self.log.written;
        let (salt, chain) = (self.log.salt, self.log.written_chain);
        let mut file = self.storage.file(log);
        let len = file.len().map_err(|e| Error::from_storage(log, e))?;
        if len > at {
            // The file has bytes there (a step of zeros, a previous epoch's frames, or part of
            // the failed write). Replay stops at the first frame that does not continue the
            // chain: if the first one there does not, nothing after it can either, and no
            // write is needed (a failing write call would poison the volume for nothing).
            let mut head = vec![0u8; ix((len - at).min(FIRST_FRAME_MAX))];
            if let Ok(n) = file.read_at(at, &mut head) {
                head.truncate(n);
                if crate::format::decode_frame(&head, salt, chain).is_err() {
                    return Ok(());
                }
            }
            zero_frame_header(&mut file, at, len)
                .and_then(|()| file.flush())
                .map_err(|e| Error::from_storage(log, e))?;
        }
        Ok(())
    }

    /// Flushes the log if anything written is unflushed. A failure poisons: the outcome of the
    /// flush is unknown.
    pub(crate) fn flush_log(&mut self) -> Result<()> {
        if self.log.flushed == self.log.written {
            self.log.oldest_unflushed = None;
            return Ok(());
        }
        let log = PhysicalFileId::Log;
        if let Err(e) = self.storage.file(log).flush() {
            let err = Error::from_storage(log, e);
            return Err(self.poison(err));
        }
        self.log.flushed_all();
        self.log_dirty = false;
        Ok(())
    }

    /// Before the first log write of a mount (or after a checkpoint whose last flush failed):
    /// flush the data file, so the superblock this epoch belongs to is durable before its log
    /// can overwrite the previous epoch's.
    pub(crate) fn ensure_data_flushed(&mut self) -> Result<()> {
        if self.data_flushed {
            return Ok(());
        }
        let data = PhysicalFileId::Data;
        self.storage
            .file(data)
            .flush()
            .map_err(|e| Error::from_storage(data, e))?;
        self.data_flushed = true;
        if self.log_truncate_pending {
            self.log_truncate_pending = false;
            self.cut_log_to_marker();
        }
        Ok(())
    }

    /// A quota error tells the volume how much space it really has.
    pub(crate) fn learn_space_limit(&mut self, e: &Error) {
        if matches!(e, Error::OutOfSpace { .. }) {
            let now = self.physical_bytes();
            self.learned_space_limit = Some(self.learned_space_limit.map_or(now, |l| l.min(now)));
        }
    }

    // ------------------------------------------------------------------------------------
    // Durability on demand, deadlines, close
    // ------------------------------------------------------------------------------------

    /// Commits everything, then makes every commit so far durable (written and flushed).
    pub fn flush(&mut self) -> Result<()> {
        self.commit()?;
        self.sync()
    }

    /// Makes every commit so far durable (written and flushed), without committing open
    /// transactions.
    pub fn sync(&mut self) -> Result<()> {
        self.check_writable()?;
        self.write_out(Instant::now())?;
        self.flush_log()
    }

    /// When [`Volume::poll`] next has work: the relaxed levels' write/flush deadline, a due
    /// checkpoint (now), or an idle checkpoint. `None`: nothing scheduled.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.poisoned.is_some() || self.released {
            return None;
        }
        let delay = self.opts.max_flush_delay;
        let mut next: Option<Instant> = None;
        let mut consider = |t: Instant| next = Some(next.map_or(t, |n: Instant| n.min(t)));
        if let Some(t) = self.log.oldest_unwritten {
            consider(t + delay);
        }
        if let Some(t) = self.log.oldest_unflushed {
            consider(t + delay);
        }
        if self.checkpoint_wanted() {
            // Due now: the timer runs it at the worker's next idle moment.
            consider(self.last_commit_at.unwrap_or_else(Instant::now));
        } else if self.idle_checkpoint_wanted() {
            if let Some(t) = self.last_commit_at {
                consider(t + self.opts.idle_checkpoint_after);
            }
        }
        next
    }

    /// Does what is due: writes and flushes commits whose delay has passed (Relaxed,
    /// Balanced, WriteOnly commits), runs a due checkpoint (the log passed
    /// `checkpoint_bytes`: with a deadline hook, commits leave it to `poll`), and checkpoints an
    /// idle volume whose log is over `idle_checkpoint_bytes`. Call
    /// it from a timer at [`Volume::next_deadline`] (the `web` module does). Returns the next
    /// deadline.
    pub fn poll(&mut self) -> Result<Option<Instant>> {
        if self.poisoned.is_some() || self.released {
            return Ok(None);
        }
        let now = Instant::now();
        let delay = self.opts.max_flush_delay;
        let due = |t: Option<Instant>| t.is_some_and(|t| now.duration_since(t) >= delay);
        if due(self.log.oldest_unwritten) || due(self.log.oldest_unflushed) {
            self.write_out(now)?;
            self.flush_log()?;
        }
        let idle = self
            .last_commit_at
            .is_some_and(|t| now.duration_since(t) >= self.opts.idle_checkpoint_after);
        if self.checkpoint_wanted() || (idle && self.idle_checkpoint_wanted()) {
            if let Err(e) = self.checkpoint_quietly() {
                self.last_checkpoint_error = Some(e.to_string());
            }
        }
        self.notify_deadline();
        Ok(self.next_deadline())
    }

    fn idle_checkpoint_wanted(&self) -> bool {
        self.epoch_bytes() > self.opts.idle_checkpoint_bytes
            && self.checkpoint_allowed()
            && self
                .checkpoint_retry_at
                .is_none_or(|at| self.epoch_bytes() >= at)
    }

    /// Commits and flushes, then checkpoints if the options say so (a checkpoint that fails
    /// is skipped: close never needs free space), and hands the storage back (to mount it
    /// again, or to drop it, which closes OPFS handles). On error the storage is dropped (its
    /// handles close); a poisoned volume fails with [`Error::Poisoned`], since what it wrote
    /// last may not be durable.
    pub fn close(mut self) -> Result<S> {
        self.flush()?;
        if self.opts.checkpoint_on_close && self.epoch_bytes() > 0 {
            if let Err(e) = self.checkpoint_quietly() {
                self.last_checkpoint_error = Some(e.to_string());
            }
        }
        // A checkpoint that failed in a way that poisons leaves the durability of what was
        // flushed before intact, but of nothing after: say so.
        self.check_writable()?;
        // At rest the log file holds no spare bytes.
        if self.log.buf.is_empty() {
            self.cut_log_file(self.log.written);
        }
        Ok(self.storage.into_inner())
    }

    /// Gives the storage back without flushing: what survives is what a crash would leave.
    pub fn into_storage_unflushed(self) -> S {
        self.storage.into_inner()
    }

    /// How long until the relaxed levels' deadline for a commit made now.
    pub fn max_flush_delay(&self) -> Duration {
        self.opts.max_flush_delay
    }
}

/// How a staged page is logged (see [`page_log`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PageLog {
    /// Byte for byte its committed image: not logged.
    Unchanged,
    /// As a Patch frame over the committed location `base`, with every chunk changed since
    /// that location's image (`mask`).
    Patch { base: LogLoc, mask: u64 },
    /// As a Page frame.
    Image,
}

/// How staged page `page` of `p` (file `id`, committed state `f`) is logged, as far as memory
/// can tell the committed image (the resident copy, or the Disk-mode cache, which serves
/// committed images only):
/// - byte for byte the committed image: not at all. SQLite rewrites whole pages: an autocommit
///   INSERT with 8 KiB pages writes page 1 for its change counter, whose second 4 KiB never
///   changes, and UPDATEs often change one half of a page;
/// - with `patches`, a page whose committed image is logged in this epoch and
///   whose chunks changed since that image are at most [`PATCH_MAX_CHUNKS`]: a Patch frame of
///   those chunks. An autocommit INSERT changes a few dozen bytes of its leaf page and 8 of
///   page 1: ~1 KB logged and flushed instead of 12.6 KB (three 4 KiB images);
/// - else a Page frame.
///
/// Never anything but a Page frame for a page the transaction cut (`floor`, at most the live
/// size: replay would show the cut's zeros without one) or spilled (replay would take the
/// spilled image).
fn page_log(
    f: Option<&FileState>,
    cache: &super::read::PageCache,
    p: &Pending,
    id: u64,
    page: u64,
    img: &[u8],
    patches: bool,
) -> PageLog {
    let end = (page + 1) * PAGE;
    let Some(f) = f else { return PageLog::Image };
    if !p.existed || p.deleted || end > p.floor || p.spilled.contains_key(&page) {
        return PageLog::Image;
    }
    // Which chunks changed matters only where a patch can be logged (on a base image in this
    // epoch's log); elsewhere it is enough to know whether the page changed at all, and the
    // comparison stops at the first difference.
    let base = f.log.get(&page).copied().filter(|_| patches);
    let cmp = |old: &[u8], img: &[u8]| match base {
        Some(_) => diff_mask(old, img),
        None => u64::from(!same_page(old, img)),
    };
    let changed = match &f.resident {
        Some(c) => c.compare_page(page, img, cmp),
        None => cache.get(id, page).map(|c| cmp(c, img)),
    };
    let Some(changed) = changed else {
        return PageLog::Image;
    };
    if changed == 0 {
        return PageLog::Unchanged;
    }
    let Some(base) = base else {
        return PageLog::Image;
    };
    // `changed` is the mask of the chunks that changed here.
    let mask = base.patched_mask() | changed;
    if mask.count_ones() <= PATCH_MAX_CHUNKS {
        PageLog::Patch { base, mask }
    } else {
        PageLog::Image
    }
}

/// Whether `ids` are all the open records. `ids` are always distinct keys of `pending` (as
/// `Volume::in_scope` gives them), so equal counts mean the same set.
fn covers_all(pending: &BTreeMap<u64, Pending>, ids: &[u64]) -> bool {
    ids.len() == pending.len()
}

/// The open records of `ids` with their ids, in the order of `ids`. `ids` must be distinct keys
/// of `pending`, ascending (as `Volume::in_scope` gives them): when they are all of them (a
/// commit of everything, the usual case) the map is walked once instead of looked up per id,
/// which took a tenth of the CPU of committing 1,000 new files (`perf`).
fn records<'a>(
    pending: &'a BTreeMap<u64, Pending>,
    ids: &'a [u64],
) -> impl Iterator<Item = (u64, &'a Pending)> + 'a {
    let all = covers_all(pending, ids);
    let whole = all.then(|| pending.iter().map(|(&id, p)| (id, p)));
    let each = (!all).then(|| ids.iter().filter_map(|&id| Some((id, pending.get(&id)?))));
    whole
        .into_iter()
        .flatten()
        .chain(each.into_iter().flatten())
}

/// Frames for one file's changes since its last frames (see [`super::state::Logged`]); returns
/// the pages it logged and where their images start. `how` says how each staged page is logged
/// ([`page_log`]): unchanged pages are not (their staged image is dropped with the record).
fn serialize_file(
    log: &mut LogWriter,
    id: u64,
    p: &Pending,
    how: impl Fn(u64, &[u8]) -> PageLog,
) -> Vec<(u64, LogLoc)> {
    let mut locs = Vec::new();
    if p.deleted {
        if p.logged.exists {
            log.frame(FrameKind::Delete, id, 0, &[]);
        }
        return locs;
    }
    let mut base = p.logged.size;
    if !p.logged.exists {
        log.frame(FrameKind::Create, id, 0, p.name.as_bytes());
        base = 0;
    } else if p.name != p.logged.name {
        log.frame(FrameKind::Rename, id, 0, p.name.as_bytes());
    }
    if let Some(cut) = p.cut_since_logged {
        if cut < base {
            log.cut_follows();
            log.frame(FrameKind::SetLen, id, cut, &[]);
            base = cut;
        }
    }
    if p.size != base {
        if p.size < base {
            log.cut_follows();
        }
        log.frame(FrameKind::SetLen, id, p.size, &[]);
    }
    for (&page, img) in p.staged.range(..pages_for(p.size)) {
        let loc = match how(page, img) {
            PageLog::Unchanged => continue,
            PageLog::Patch { base, mask } => {
                let payload = encode_patch(mask, img);
                let patch = PatchLoc {
                    offset: log.next_payload_offset(),
                    len: n32(payload.len()),
                    mask,
                };
                log.frame(FrameKind::Patch, id, page, &payload);
                LogLoc {
                    patch: Some(patch),
                    ..base
                }
            }
            PageLog::Image if log.linking() => {
                // A block of the tail link: its place is known once the link's frames are
                // (`Volume::place_link`); until then `offset` is its index among the link's
                // pages.
                let (index, hash) = log.link_page(id, page, img);
                LogLoc {
                    offset: index,
                    link: Some(hash),
                    ..LogLoc::image(0, n32(PAGE_SIZE))
                }
            }
            PageLog::Image => {
                // At most a page.
                let n = (p.size - page * PAGE).min(PAGE) as usize;
                let loc = LogLoc::image(log.next_payload_offset(), n32(n));
                log.frame(FrameKind::Page, id, page, &img[..n]);
                loc
            }
        };
        locs.push((page, loc));
    }
    locs
}

impl Pending {
    /// The frames of this record were written (a spill): the log now describes its live
    /// state, and its staged pages live in the log at `locs`.
    pub(crate) fn spilled_to(&mut self, locs: Vec<(u64, LogLoc)>) -> usize {
        self.logged = super::state::Logged {
            exists: !self.deleted,
            name: self.name.clone(),
            size: self.size,
        };
        self.cut_since_logged = None;
        self.spilled_any = true;
        let freed = self.staged_bytes();
        self.staged.clear();
        self.spilled.extend(locs);
        freed
    }
}

/// Zeroes the frame header at byte `at` of a file `len` bytes long (as much of it as the file
/// has), so no frame starts there: the end of a chain, in the log or at a tail link. Within the
/// file, so no quota is needed.
fn zero_frame_header(
    file: &mut impl PhysicalFile,
    at: u64,
    len: u64,
) -> crate::storage::StorageResult<()> {
    let n = len
        .saturating_sub(at)
        .min(crate::format::FRAME_HEADER as u64);
    file.write_at(at, &vec![0u8; ix(n)])
}

/// Bytes of a space limit kept for commits that do not grow the volume and for checkpoints
/// (see `Volume::check_growth`): a sixteenth of the limit, at least 512 KiB (a few checkpoints
/// of small commits, or one of a 100 KB row's pages), at most 64 MiB.
pub(crate) fn space_reserve(limit: u64) -> u64 {
    (limit / 16).clamp(512 << 10, 64 << 20)
}

/// Log writes of at least this many bytes extend the file by their frames only (no step of
/// zeros after them): see `Volume::log_padding`.
const PAD_MAX_WRITE: usize = 256 << 10;

/// Log writes of at most this many bytes (every autocommit) pad the file to the next step;
/// larger ones at most [`PAD_PER_BYTE`] × their bytes: see `Volume::log_padding`.
const PAD_STEP_MAX_WRITE: usize = 16 << 10;

/// Zeros per byte written that a log write of more than [`PAD_STEP_MAX_WRITE`] may add (4 was
/// measured slower in the filesystem lifecycle: see `Volume::log_padding`).
const PAD_PER_BYTE: usize = 1;

/// Bytes that hold any one frame (header and the largest payload: a page image, a name of
/// 1,024 bytes or 512 file ids), for [`Volume::repair_log_tail`]'s check.
const FIRST_FRAME_MAX: u64 = (crate::format::FRAME_HEADER + crate::format::PAGE_SIZE) as u64;

/// The step by which the log file grows (and the length a checkpoint leaves it): a sixteenth of
/// the logical bytes, rounded down to a power of two, 1 MiB to 4 MiB — so a Strict commit of
/// two 8 KiB pages grows the file once per ~60 commits (at 64 KiB, once per 4: in a first
/// browser run a quarter of test 1's commits paid the growing flush and 14 MiB of zeros), while
/// the spare bytes stay at most 1 MiB or 6.25 % of the volume while mounted, and none at rest.
pub(crate) fn log_step(logical: u64) -> u64 {
    let s = (logical / 16).max(1);
    (1u64 << s.ilog2()).clamp(1 << 20, 4 << 20)
}
