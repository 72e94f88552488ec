//! The log writer: frames are serialized into a buffer, written with one call, flushed on
//! demand; the writer knows how far the log is written and flushed, and keeps the last buffer
//! it wrote so recently committed pages are read without a physical call.
//!
//! Failure rule: a failed write leaves the writer exactly as before the frames that were being
//! written (see [`LogWriter::mark`] / [`LogWriter::rewind`]); the caller repairs the bytes on
//! disk (see `Volume::repair_log_tail`) so that nothing a failed commit wrote can ever chain.

use web_time::Instant;

use std::collections::{BTreeMap, BTreeSet};

use xxhash_rust::xxh3::xxh3_64;

use crate::format::{
    decode_ids, encode_frame, encode_frame_unsealed, encode_ids, encode_link, seal_frames,
    FrameKind, LinkEntry, FRAME_HEADER, LINK_MAX_ENTRIES, MAX_ID_LIST, PAGE_SIZE,
};

use super::ix;
use super::state::LogLoc;

/// Largest written buffer kept in memory for reads.
const RECENT_MAX: usize = 1 << 20;

/// Largest allocation kept empty for the next buffer (see `LogWriter::spare`).
const SPARE_MAX: usize = 4 << 20;

/// Most bytes one log read-ahead fetches (see `LogWriter::ahead`): as the data file's
/// read-ahead (64 blocks).
pub(crate) const LOG_READ_AHEAD: u64 = 256 << 10;

/// Serialization state and write/flush positions of the current log epoch.
#[derive(Debug)]
pub(crate) struct LogWriter {
    /// Salt of the current epoch (every frame carries it).
    pub(crate) salt: u64,
    /// Random per mount, hashed into every frame.
    pub(crate) session: u64,
    /// Chain hash of the last sealed frame (see [`LogWriter::sealed`]), or of the last frame
    /// written if none is.
    pub(crate) chain: u64,
    /// Sequence number of the next commit frame.
    pub(crate) next_seq: u64,
    /// Frames serialized but not written; they start at log offset `written`.
    pub(crate) buf: Vec<u8>,
    /// Bytes of `buf` whose frames carry their chain hashes; the frames after them are
    /// unsealed (`format::encode_frame_unsealed`) until [`LogWriter::seal`], which every path
    /// that writes `buf` calls first. Frames are serialized at commit but hashed only when
    /// written: Balanced's buffered commits are mostly written as one group
    /// ([`LogWriter::grouped`]), which hashes its own frames, so theirs never are. Measured
    /// against hashing at commit (`results/2026-12-06-ab-seal-simd`, `seal/`: the two builds in
    /// alternating page loads, 3 × 6 rounds each): test 1's 1,000 Balanced autocommits took
    /// 11.2 → 7.9 ms (Disk mode) and 10.3 → 7.5 ms (Memory mode) above the memory VFS in Firefox
    /// 153, 6.9 → 5.8 and 6.5 → 4.6 ms in Chromium 156 (medians; xxh3 costs ~0.45 ms per MiB in
    /// Firefox: `results/2026-12-06-firefox-profile`).
    sealed: usize,
    /// Log bytes written (the valid log ends here on disk, as far as this mount knows).
    pub(crate) written: u64,
    /// Log bytes known flushed.
    pub(crate) flushed: u64,
    /// Chain hash of the last frame written (the salt if none).
    pub(crate) written_chain: u64,
    /// When the oldest commit not yet written was made (Balanced).
    pub(crate) oldest_unwritten: Option<Instant>,
    /// When the oldest commit not yet flushed was made (Relaxed, Balanced, WriteOnly): the
    /// flush clock. Only a write that carries a Commit frame starts it, at that commit's time
    /// (Balanced: [`LogWriter::oldest_unwritten`], however late the buffer is written): frames
    /// spilled by an open transaction promise nothing until their commit, and a Balanced commit
    /// that a spill happens to write is due within the delay of when it was made, not of the
    /// spill (measured, 2026-12-04: the spill-started clock put Disk and Memory mode's deferred
    /// flushes in different SQL cases).
    pub(crate) oldest_unflushed: Option<Instant>,
    /// Commit frames in the unwritten buffer.
    buf_commits: usize,
    /// Where each unwritten frame is in `buf`, for grouping ([`LogWriter::grouped`]).
    frames: Vec<FrameRec>,
    /// The unwritten buffer holds only page images and lengths that grow (no create, rename,
    /// delete, cut, abort or epoch frame): its commits can be written as one.
    groupable: bool,
    /// The last buffer written (at most `RECENT_MAX` bytes) and its log offset.
    recent: Vec<u8>,
    recent_at: u64,
    /// Log bytes read ahead from the file, and their offset: a read from the file that follows
    /// the previous one in log order ([`LogWriter::follows_last_read`]) fetches up to
    /// [`LOG_READ_AHEAD`] bytes (`Volume::read_log_range`), so reading pages in the order they
    /// were logged costs one call per window, not one per page. In Firefox each `read()` costs
    /// tens of µs whatever its size (the filesystem lifecycle's read phase in Disk mode: 1,000
    /// reads of 1 KiB images, 36 µs each, `results/2026-12-07-sittings/fs-firefox`).
    /// Invariant: it holds only bytes below `written`, which nothing rewrites within an epoch
    /// (every write of the log starts at `written`, and so does a tail repair); a new epoch
    /// drops it.
    ahead: Vec<u8>,
    ahead_at: u64,
    /// Where the last read of the log file ended (a read-ahead: where its window ended).
    last_read_end: Option<u64>,
    /// An empty allocation (at most `SPARE_MAX` bytes of capacity) for the next buffer: the
    /// one a buffer had that was written and was then too big for `recent`, or that a group
    /// replaced. Without it a Balanced buffer grew from a small allocation by doubling after
    /// every write-out, copying what it held at each step (callgrind, the SQL suite natively
    /// in Memory mode: 24.7 M instructions in 192 reallocations).
    spare: Vec<u8>,
    /// A tail link being serialized ([`LogWriter::begin_link`]): its page blocks, while the
    /// buffer takes its other frames.
    link: Option<LinkBuild>,
}

/// The pages of a tail link being serialized.
#[derive(Debug, Default)]
struct LinkBuild {
    entries: Vec<LinkEntry>,
    pages: Vec<u8>,
}

/// A position to rewind to if writing what follows fails.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    buf_len: usize,
    sealed: usize,
    chain: u64,
    next_seq: u64,
    oldest_unwritten: Option<Instant>,
    buf_commits: usize,
    frames: usize,
    groupable: bool,
}

/// One unwritten frame: its header fields and where it starts in the buffer.
#[derive(Clone, Copy, Debug)]
struct FrameRec {
    kind: FrameKind,
    file: u64,
    arg: u64,
    at: usize,
    payload_len: usize,
}

/// The unwritten commits of a [`LogWriter`] serialized as one commit (see
/// [`LogWriter::grouped`]); nothing changes until [`LogWriter::adopt`].
#[derive(Debug)]
pub(crate) struct Grouped {
    /// The frames, to be written at the writer's `written` offset.
    pub(crate) buf: Vec<u8>,
    chain: u64,
    next_seq: u64,
    /// Commits this one replaces.
    pub(crate) commits: usize,
    /// Where the image of each logged page is now, by (file, page), ascending.
    pages: Vec<((u64, u64), LogLoc)>,
}

impl Grouped {
    /// Where the grouped buffer holds the image of `page` of `file`.
    pub(crate) fn loc_of(&self, file: u64, page: u64) -> Option<LogLoc> {
        let i = self
            .pages
            .binary_search_by_key(&(file, page), |p| p.0)
            .ok()?;
        Some(self.pages[i].1)
    }

    /// Every page image of the group and where it is.
    pub(crate) fn pages(&self) -> impl Iterator<Item = (u64, u64, LogLoc)> + '_ {
        self.pages.iter().map(|&((f, p), l)| (f, p, l))
    }
}

impl LogWriter {
    pub(crate) fn new(salt: u64, session: u64, next_seq: u64) -> Self {
        Self {
            salt,
            session,
            chain: salt,
            next_seq,
            buf: Vec::new(),
            sealed: 0,
            written: 0,
            flushed: 0,
            written_chain: salt,
            oldest_unwritten: None,
            oldest_unflushed: None,
            buf_commits: 0,
            frames: Vec::new(),
            groupable: true,
            recent: Vec::new(),
            recent_at: 0,
            ahead: Vec::new(),
            ahead_at: 0,
            last_read_end: None,
            spare: Vec::new(),
            link: None,
        }
    }

    /// Log length including unwritten frames.
    pub(crate) fn end(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    /// Log offset at which the next frame's payload will start.
    pub(crate) fn next_payload_offset(&self) -> u64 {
        self.end() + FRAME_HEADER as u64
    }

    /// Makes room for `bytes` more of frames in the buffer.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        self.buf.reserve(bytes);
    }

    /// Appends one frame.
    pub(crate) fn frame(&mut self, kind: FrameKind, file: u64, arg: u64, payload: &[u8]) {
        self.buf_commits += usize::from(kind == FrameKind::Commit);
        self.groupable &= matches!(
            kind,
            FrameKind::Page | FrameKind::SetLen | FrameKind::Commit
        );
        self.frames.push(FrameRec {
            kind,
            file,
            arg,
            at: self.buf.len(),
            payload_len: payload.len(),
        });
        encode_frame_unsealed(
            &mut self.buf,
            self.salt,
            self.session,
            kind,
            file,
            arg,
            payload,
        );
    }

    /// Fills in the chain hashes of the unsealed frames: the buffer is ready to be written.
    pub(crate) fn seal(&mut self) {
        self.chain = seal_frames(&mut self.buf[self.sealed..], self.chain);
        self.sealed = self.buf.len();
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            buf_len: self.buf.len(),
            sealed: self.sealed,
            chain: self.chain,
            next_seq: self.next_seq,
            oldest_unwritten: self.oldest_unwritten,
            buf_commits: self.buf_commits,
            frames: self.frames.len(),
            groupable: self.groupable,
        }
    }

    /// The next SetLen frame makes a file shorter than its last logged length: the buffer's
    /// commits can no longer be grouped (the images logged before the cut must stay dead).
    pub(crate) fn cut_follows(&mut self) {
        self.groupable = false;
    }

    /// Forgets every frame serialized after `m` (which must still be unwritten), and a tail
    /// link being serialized.
    pub(crate) fn rewind(&mut self, m: Mark) {
        self.link = None;
        self.buf.truncate(m.buf_len);
        // The frames sealed at the mark are still there, and `m.chain` is the last one's.
        self.sealed = m.sealed;
        self.chain = m.chain;
        self.next_seq = m.next_seq;
        self.oldest_unwritten = m.oldest_unwritten;
        self.buf_commits = m.buf_commits;
        self.frames.truncate(m.frames);
        self.groupable = m.groupable;
    }

    /// The unwritten buffer's commits as one commit, if it holds at least two and every one of
    /// them can merge: each file's last length and the last image of each page it logged,
    /// then one Commit frame that lists every file and carries the first commit's sequence
    /// number. Nothing changes here: the caller writes [`Grouped::buf`] and, once that has
    /// succeeded, [`LogWriter::adopt`]s it.
    ///
    /// Why this keeps every promise (Balanced is the only level that buffers commits): no
    /// commit in the buffer was written, so none was promised to survive any crash yet, and
    /// recovery sees all of them or none — a prefix of the commit order either way. What the
    /// group replays is what the commits replay one after the other: without cuts, creates,
    /// renames or deletes, a file's state after a run of commits is its last length and the
    /// last image of each page (every page was below the length it was logged at, and lengths
    /// only grow). Frames a commit's files spilled earlier are written before the buffer, so
    /// the group commits them as their own commit would have.
    ///
    /// Why: SQLite's autocommits rewrite the same pages (test 1's 1,000 INSERTs logged 16.7 KB
    /// each in the browser build, 15.8 MB in all); grouped, a write-out logs each distinct
    /// page once. Measurements: `vfs/DESIGN.md`.
    pub(crate) fn grouped(&self) -> Option<Grouped> {
        if self.buf_commits < 2 || !self.groupable {
            return None;
        }
        if self.frames.last()?.kind != FrameKind::Commit {
            // An open transaction's spilled frames follow: they are not the commits'.
            return None;
        }
        let payload = |f: &FrameRec| {
            let s = f.at + FRAME_HEADER;
            &self.buf[s..s + f.payload_len]
        };
        let mut ids = BTreeSet::new();
        let mut first_seq = None;
        let mut len_of: BTreeMap<u64, u64> = BTreeMap::new();
        let mut image_of: BTreeMap<(u64, u64), &FrameRec> = BTreeMap::new();
        for f in &self.frames {
            match f.kind {
                FrameKind::Commit => {
                    let list = decode_ids(payload(f)).ok()?;
                    if list.is_empty() {
                        // "Every file with uncommitted frames": not a list to merge.
                        return None;
                    }
                    ids.extend(list);
                    first_seq.get_or_insert(f.arg);
                }
                FrameKind::SetLen => {
                    len_of.insert(f.file, f.arg);
                }
                FrameKind::Page => {
                    image_of.insert((f.file, f.arg), f);
                }
                _ => return None,
            }
        }
        let listed = |file: &u64| ids.contains(file);
        if ids.len() > MAX_ID_LIST
            || !len_of.keys().all(listed)
            || !image_of.keys().all(|(file, _)| listed(file))
        {
            return None;
        }
        let first_seq = first_seq?;
        let list: Vec<u64> = ids.iter().copied().collect();
        let commit_payload = encode_ids(&list);
        // The group's exact size: every frame's header and payload. Counting only the page
        // frames left the SetLen and Commit frames to regrow the buffer by doubling at its
        // end, copying the whole group (in wasm, unless the allocator can grow it in place:
        // 8 samples of 0.5 ms in 6 passes of the 16 cases in a Chromium profile, none after,
        // `results/2026-12-07-chromium-profile`).
        let bytes = image_of
            .values()
            .map(|f| FRAME_HEADER + f.payload_len)
            .sum::<usize>()
            + len_of.len() * FRAME_HEADER
            + FRAME_HEADER
            + commit_payload.len();
        let mut g = Grouped {
            buf: Vec::with_capacity(bytes),
            chain: self.written_chain,
            next_seq: first_seq + 1,
            commits: self.buf_commits,
            pages: Vec::with_capacity(image_of.len()),
        };
        let put = |g: &mut Grouped, kind, file, arg, bytes: &[u8]| {
            g.chain = encode_frame(
                &mut g.buf,
                self.salt,
                self.session,
                g.chain,
                kind,
                file,
                arg,
                bytes,
            );
        };
        for &file in &ids {
            if let Some(&len) = len_of.get(&file) {
                put(&mut g, FrameKind::SetLen, file, len, &[]);
            }
            for (&(_, page), f) in image_of.range((file, 0)..=(file, u64::MAX)) {
                let loc = LogLoc::image(
                    self.written + (g.buf.len() + FRAME_HEADER) as u64,
                    // At most a page.
                    u32::try_from(f.payload_len).ok()?,
                );
                g.pages.push(((file, page), loc));
                put(&mut g, FrameKind::Page, file, page, payload(f));
            }
        }
        put(&mut g, FrameKind::Commit, 0, first_seq, &commit_payload);
        debug_assert_eq!(
            g.buf.len(),
            bytes,
            "the group's size was not counted exactly"
        );
        Some(g)
    }

    /// `g` (made by [`LogWriter::grouped`] from the current buffer) was written in its place:
    /// it becomes the buffer, to be recorded by [`LogWriter::wrote`] at once (which drops the
    /// frame index: nothing is grouped twice).
    pub(crate) fn adopt(&mut self, g: Grouped) {
        let replaced = std::mem::replace(&mut self.buf, g.buf);
        self.sealed = self.buf.len();
        self.keep_spare(replaced);
        self.frames.clear();
        self.chain = g.chain;
        self.next_seq = g.next_seq;
        self.buf_commits = 1;
    }

    /// Keeps `v`'s allocation, emptied, as the next buffer's if it is the largest one seen
    /// since the buffer last took it and at most `SPARE_MAX` bytes.
    fn keep_spare(&mut self, mut v: Vec<u8>) {
        if v.capacity() <= SPARE_MAX && v.capacity() > self.spare.capacity() {
            v.clear();
            self.spare = v;
        }
    }

    /// The next frames form a tail link (see `vfs/DESIGN.md`, "Tail links"): page images go to
    /// [`LogWriter::link_page`], the other frames to the buffer as usual, chained on from the
    /// last frame written. The buffer must be empty (written out, and flushed: the link is
    /// flushed alone).
    pub(crate) fn begin_link(&mut self) {
        debug_assert!(self.buf.is_empty() && self.flushed == self.written);
        self.link = Some(LinkBuild::default());
    }

    /// Whether a tail link is being serialized.
    pub(crate) fn linking(&self) -> bool {
        self.link.is_some()
    }

    /// Adds a full page image to the link being serialized; returns its index among the
    /// link's pages and the hash of its block.
    pub(crate) fn link_page(&mut self, file: u64, page: u64, img: &[u8]) -> (u64, u64) {
        debug_assert_eq!(img.len(), PAGE_SIZE);
        let Some(l) = self.link.as_mut() else {
            return (0, 0);
        };
        let hash = xxh3_64(img);
        l.entries.push(LinkEntry { file, page, hash });
        l.pages.extend_from_slice(img);
        ((l.entries.len() - 1) as u64, hash)
    }

    /// Appends the Link frames that list the link's pages (before its Commit frame).
    pub(crate) fn link_frames(&mut self) {
        // Taken out while the frames are appended (they borrow the writer), then put back.
        let Some(entries) = self.link.as_mut().map(|l| std::mem::take(&mut l.entries)) else {
            return;
        };
        for chunk in entries.chunks(LINK_MAX_ENTRIES) {
            self.frame(FrameKind::Link, 0, chunk.len() as u64, &encode_link(chunk));
        }
        if let Some(l) = self.link.as_mut() {
            l.entries = entries;
        }
    }

    /// Blocks the link's frames take (the buffer, zero-padded to whole blocks) and the number
    /// of its page blocks, which follow them.
    pub(crate) fn link_shape(&self) -> (u64, u64) {
        let pages = self.link.as_ref().map_or(0, |l| l.entries.len());
        (self.buf.len().div_ceil(PAGE_SIZE) as u64, pages as u64)
    }

    /// The link's bytes as written at its block: the frames (sealed now), zeros to the block
    /// boundary, the page blocks.
    pub(crate) fn link_bytes(&mut self) -> Vec<u8> {
        self.seal();
        let header = self.buf.len().next_multiple_of(PAGE_SIZE);
        let pages = self.link.as_ref().map_or(&[][..], |l| &l.pages[..]);
        let mut out = Vec::with_capacity(header + pages.len());
        out.extend_from_slice(&self.buf);
        out.resize(header, 0);
        out.extend_from_slice(pages);
        out
    }

    /// The link was written and flushed: its frames are the chain's newest; the log file is
    /// unchanged (its next frame chains from the link's last).
    pub(crate) fn linked(&mut self) {
        debug_assert_eq!(self.sealed, self.buf.len());
        self.link = None;
        self.buf.clear();
        self.sealed = 0;
        self.written_chain = self.chain;
        self.frames.clear();
        self.groupable = true;
        self.buf_commits = 0;
        self.oldest_unwritten = None;
    }

    /// The buffer was written at `written`: advance, and keep it for reads if small.
    pub(crate) fn wrote(&mut self, now: Instant) {
        debug_assert_eq!(self.sealed, self.buf.len(), "an unsealed frame was written");
        let at = self.written;
        self.written += self.buf.len() as u64;
        self.written_chain = self.chain;
        self.sealed = 0;
        std::mem::swap(&mut self.buf, &mut self.recent);
        self.recent_at = at;
        self.buf.clear();
        if self.recent.len() > RECENT_MAX {
            let big = std::mem::take(&mut self.recent);
            self.keep_spare(big);
        }
        if self.spare.capacity() > self.buf.capacity() {
            self.buf = std::mem::take(&mut self.spare);
        }
        // The clock counts from the oldest commit the buffer carries (Balanced keeps commits
        // unwritten: a commit written late, by a spill or the 1 MiB rule, is still due within
        // the delay of when it was made), else from this write.
        let committed_at = self.oldest_unwritten.take();
        self.frames.clear();
        self.groupable = true;
        if std::mem::take(&mut self.buf_commits) > 0 && self.flushed < self.written {
            self.oldest_unflushed
                .get_or_insert(committed_at.unwrap_or(now));
        }
    }

    pub(crate) fn flushed_all(&mut self) {
        self.flushed = self.written;
        self.oldest_unflushed = None;
    }

    /// Copies log bytes at `offset` that are still in memory (the unwritten buffer, or the last
    /// written buffer) into `buf`; returns false if any byte must come from the file.
    pub(crate) fn read_memory(&self, offset: u64, buf: &mut [u8]) -> bool {
        let end = offset + buf.len() as u64;
        if offset >= self.written && end <= self.end() {
            // Differences are below the buffer's length.
            let s = ix(offset - self.written);
            buf.copy_from_slice(&self.buf[s..s + buf.len()]);
            return true;
        }
        let recent_end = self.recent_at + self.recent.len() as u64;
        if offset >= self.recent_at && end <= recent_end {
            let s = ix(offset - self.recent_at);
            buf.copy_from_slice(&self.recent[s..s + buf.len()]);
            return true;
        }
        let ahead_end = self.ahead_at + self.ahead.len() as u64;
        if offset >= self.ahead_at && end <= ahead_end {
            let s = ix(offset - self.ahead_at);
            buf.copy_from_slice(&self.ahead[s..s + buf.len()]);
            return true;
        }
        false
    }

    /// Whether a read of log bytes `[offset, end)` from the file follows the previous one in
    /// log order: it ends past where that one ended, and starts at most
    /// [`super::read::MAX_READ_GAP`] after it (reading through such a gap costs less than
    /// another call: see that constant). A read that straddles the end of the read-ahead
    /// window follows it too.
    pub(crate) fn follows_last_read(&self, offset: u64, end: u64) -> bool {
        self.last_read_end
            .is_some_and(|e| end > e && offset <= e.saturating_add(super::read::MAX_READ_GAP))
    }

    /// A read of the log file ended at `end`.
    pub(crate) fn note_read(&mut self, end: u64) {
        self.last_read_end = Some(end);
    }

    /// The read-ahead buffer's allocation, emptied (what it held is no longer served).
    pub(crate) fn take_ahead(&mut self) -> Vec<u8> {
        let mut v = std::mem::take(&mut self.ahead);
        v.clear();
        v
    }

    /// `bytes` were read from the log file at `at`, all below `written`: served from memory
    /// until the epoch ends.
    pub(crate) fn set_ahead(&mut self, at: u64, bytes: Vec<u8>) {
        debug_assert!(at + bytes.len() as u64 <= self.written);
        self.ahead_at = at;
        self.last_read_end = Some(at + bytes.len() as u64);
        self.ahead = bytes;
    }

    /// A new epoch after a checkpoint: offsets restart at 0.
    pub(crate) fn new_epoch(&mut self, salt: u64) {
        debug_assert!(self.buf.is_empty());
        self.link = None;
        self.sealed = 0;
        self.salt = salt;
        self.chain = salt;
        self.written_chain = salt;
        self.written = 0;
        self.flushed = 0;
        self.recent.clear();
        self.recent_at = 0;
        // The new epoch's frames overwrite the log from its start.
        self.ahead.clear();
        self.ahead_at = 0;
        self.last_read_end = None;
        self.oldest_unwritten = None;
        self.oldest_unflushed = None;
        self.buf_commits = 0;
        self.frames.clear();
        self.groupable = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A group's buffer is sized once, for every frame it holds: its page images, the files'
    /// lengths and the commit listing them. Sized for the page frames only, the last frames
    /// regrew it by doubling (a copy of the whole group).
    #[test]
    fn a_group_is_framed_into_one_allocation() {
        let mut w = LogWriter::new(11, 12, 1);
        for k in 0..3u8 {
            w.frame(FrameKind::SetLen, 1, 8192 + u64::from(k) * 4096, &[]);
            w.frame(FrameKind::Page, 1, u64::from(k), &[k; PAGE_SIZE]);
            // A last page shorter than a page (a file's tail).
            w.frame(FrameKind::SetLen, 2, 100, &[]);
            w.frame(FrameKind::Page, 2, 0, &[k; 100]);
            w.frame(FrameKind::Commit, 0, u64::from(k) + 1, &encode_ids(&[1, 2]));
        }
        let g = w
            .grouped()
            .expect("three commits of pages and lengths group");
        assert_eq!(g.commits, 3);
        assert_eq!(
            g.buf.capacity(),
            g.buf.len(),
            "the group's buffer was regrown"
        );
    }

    /// Frames serialized after a mark, sealed and then rewound leave the writer as if they had
    /// never been serialized: what follows seals into the same bytes and chain.
    #[test]
    fn rewind_after_a_seal_restores_the_chain() {
        let mut w = LogWriter::new(11, 12, 1);
        let mut fresh = LogWriter::new(11, 12, 1);
        for l in [&mut w, &mut fresh] {
            l.frame(FrameKind::Page, 1, 0, &[1; 64]);
            l.seal();
            l.frame(FrameKind::Page, 1, 1, &[2; 64]);
        }
        let m = w.mark();
        w.frame(FrameKind::Page, 1, 2, &[3; 64]);
        w.frame(FrameKind::Commit, 0, 1, &[]);
        w.seal();
        w.rewind(m);
        for l in [&mut w, &mut fresh] {
            l.frame(FrameKind::SetLen, 1, 8192, &[]);
            l.frame(FrameKind::Commit, 0, 1, &[]);
            l.seal();
        }
        assert_eq!(w.buf, fresh.buf);
        assert_eq!(w.chain, fresh.chain);
        // The sealed buffer is a valid chain from the epoch's salt.
        let mut chain = 11;
        let mut at = 0;
        while at < w.buf.len() {
            let (h, p) = crate::format::decode_frame(&w.buf[at..], 11, chain).expect("a frame");
            chain = h.chain;
            at += FRAME_HEADER + p.len();
        }
        assert_eq!(chain, w.chain);
    }
}
