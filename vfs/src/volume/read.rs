//! Reads: the live image of a page (open transaction, then committed state), residency of file
//! contents in Memory mode, and the Disk-mode page cache with read-ahead.
//!
//! Sources of a page's committed image, newest first: the resident contents (Memory mode), the
//! page cache (Disk mode), the current log epoch, the inline bytes (small files, page 0), the
//! home block (hash-checked), else zeros. Runs of pages whose home blocks are consecutive are
//! read with one call, extended by read-ahead: in Firefox every handle call costs ~100 µs
//! whatever its size, so a sequential scan must not pay one call per page.

use std::collections::VecDeque;

use xxhash_rust::xxh3::xxh3_64;

use crate::error::{Error, Result};
use crate::format::{apply_patch, PAGE, PAGE_SIZE};
use crate::storage::{read_zero_filled, PhysicalFileId, Storage};

use super::log::LOG_READ_AHEAD;
use super::maps::{Content, Home};
use super::state::{pages_for, place_of, LogLoc};
use super::{corrupt, ix, usize_of, BufferMode, FileId, Volume};

/// Most blocks one read-ahead call fetches (256 KiB).
const READ_AHEAD_BLOCKS: u64 = 64;

/// Largest single read when loading contents.
pub(crate) const LOAD_WINDOW: u64 = 4 << 20;

/// Largest gap between wanted blocks that a load window reads through instead of ending (64
/// KiB). Per call, a read of 4 KiB costs ~2.6 µs in Chromium and ~64 µs in Firefox, and a
/// read of 1 MiB 150 / 295 µs (the physics note): reading through 64 KiB costs at most ~10 /
/// ~18 µs, a few Chromium calls and a fraction of one Firefox call. Without the bound, a window
/// read everything up to [`LOAD_WINDOW`] between its first and last blob: a 1 GiB volume's
/// ~1,000 map chunks, written by ~30 checkpoints between the pages they map, were read at
/// mount in 53 calls of 137 MB in all (natively 20–40 ms of the mount; in Chromium most of
/// the Disk-mode reopen).
pub(crate) const MAX_READ_GAP: u64 = 64 << 10;

/// The load window that starts at item `i` of `n` items sorted by first block, where
/// `span(k)` is item `k`'s block range `[start, end)` (non-empty, `start` not decreasing):
/// returns `(j, lo, hi)`, the items `i..j` it covers and the blocks `[lo, hi)` it reads. It
/// always covers item `i`, and takes the next item while the window stays within
/// [`LOAD_WINDOW`] and the gap before that item is at most [`MAX_READ_GAP`].
pub(crate) fn load_window(
    i: usize,
    n: usize,
    span: impl Fn(usize) -> (u64, u64),
) -> (usize, u64, u64) {
    let (lo, mut hi) = span(i);
    let mut j = i + 1;
    while j < n {
        let (s, e) = span(j);
        let gap = s.saturating_sub(hi);
        if gap * PAGE > MAX_READ_GAP || (e.max(hi) - lo) * PAGE > LOAD_WINDOW {
            break;
        }
        hi = hi.max(e);
        j += 1;
    }
    (j, lo, hi)
}

/// Committed page images kept in Disk mode: the newest commits' pages (first in first out),
/// and up to [`MAX_WINDOWS`] read-ahead windows (the oldest refilled first). Holds committed
/// images only: an open transaction's pages are in its record. Windows take up to half of
/// the budget, the map the rest; the whole stays within `disk_cache_bytes`.
///
/// Several windows, not one: a B-tree scan interleaves reads of leaf pages (sequential on disk)
/// with reads of interior pages elsewhere; one window would be replaced by each interior read
/// and the next leaf would cost another call (measured: 14 % more read calls on a 200 MB scan).
///
/// Invariant: every image served by [`PageCache::get`] is the page's current committed image.
/// Whoever changes a committed page calls `put`, `remove`, `cut`, `remove_file` or `remove_all`;
/// each of them also drops a window that covers the page (a window holds home-block images read
/// before the change).
#[derive(Debug, Default)]
pub(crate) struct PageCache {
    /// Page images by file, then page: a file's pages go in one step when it is deleted or
    /// cut (a flat map keyed by (file, page) was scanned whole for each: deleting 500 files
    /// after reading them in Disk mode cost ~0.3 µs more per file than in Memory mode).
    map: super::FastMap<u64, super::FastMap<u64, Box<[u8]>>>,
    /// Images in `map`.
    len: usize,
    order: VecDeque<(u64, u64)>,
    cap: usize,
    windows: Vec<Window>,
    /// Windows allowed (0 without a budget).
    max_windows: usize,
    /// The window the next refill replaces.
    next: usize,
}

/// Most read-ahead windows.
const MAX_WINDOWS: usize = 4;

/// One run of consecutive pages of one file, as one read fetched them (hash-checked): a
/// sequential scan is served from here with one copy per page, without an allocation or a map
/// entry per page. `buf` is kept across refills.
#[derive(Debug, Default)]
struct Window {
    file: u64,
    first: u64,
    pages: u64,
    buf: Vec<u8>,
}

impl Window {
    fn covers(&self, file: u64, page: u64) -> bool {
        self.file == file && page >= self.first && page - self.first < self.pages
    }

    fn drop_if(&mut self, hit: bool) {
        if hit {
            self.pages = 0;
        }
    }
}

impl PageCache {
    pub(crate) fn new(bytes: usize) -> Self {
        let pages = bytes / PAGE_SIZE;
        let win = ix(READ_AHEAD_BLOCKS);
        let max_windows = if pages == 0 {
            0
        } else {
            (pages / (2 * win)).clamp(1, MAX_WINDOWS)
        };
        Self {
            cap: pages.saturating_sub(max_windows * win),
            max_windows,
            ..Self::default()
        }
    }

    pub(crate) fn bytes(&self) -> u64 {
        let windows: usize = self.windows.iter().map(|w| w.buf.capacity()).sum();
        (self.len * PAGE_SIZE + windows) as u64
    }

    pub(crate) fn get(&self, file: u64, page: u64) -> Option<&[u8]> {
        if let Some(b) = self.map.get(&file).and_then(|m| m.get(&page)) {
            return Some(&b[..]);
        }
        let w = self.windows.iter().find(|w| w.covers(file, page))?;
        let s = ix((page - w.first) * PAGE);
        Some(&w.buf[s..s + PAGE_SIZE])
    }

    fn drop_windows(&mut self, hit: impl Fn(&Window) -> bool) {
        for w in &mut self.windows {
            w.drop_if(w.pages > 0 && hit(w));
        }
    }

    /// In the map (the window does not count): such a page must not be read from its home.
    fn in_map(&self, file: u64, page: u64) -> bool {
        self.map.get(&file).is_some_and(|m| m.contains_key(&page))
    }

    pub(crate) fn put(&mut self, file: u64, page: u64, img: Box<[u8]>) {
        self.drop_windows(|w| w.covers(file, page));
        if self.cap == 0 {
            return;
        }
        if self
            .map
            .entry(file)
            .or_default()
            .insert(page, img)
            .is_none()
        {
            self.len += 1;
            self.order.push_back((file, page));
        }
        while self.len > self.cap {
            match self.order.pop_front() {
                Some((f, p)) => self.remove_image(f, p),
                None => break,
            }
        }
        // Keys removed by `remove`/`cut` linger in `order`; bound it.
        if self.order.len() > 4 * self.cap.max(16) {
            let map = &self.map;
            self.order
                .retain(|(f, p)| map.get(f).is_some_and(|m| m.contains_key(p)));
        }
    }

    /// Drops one image from the map, if there.
    fn remove_image(&mut self, file: u64, page: u64) {
        if let Some(m) = self.map.get_mut(&file) {
            if m.remove(&page).is_some() {
                self.len -= 1;
            }
            if m.is_empty() {
                self.map.remove(&file);
            }
        }
    }

    /// Takes the buffer of the window the next refill replaces (that window is empty until
    /// [`Self::set_window`]); an empty buffer without windows.
    fn take_window_buf(&mut self) -> Vec<u8> {
        if self.max_windows == 0 {
            return Vec::new();
        }
        if self.windows.len() < self.max_windows {
            self.windows.push(Window::default());
            self.next = self.windows.len() - 1;
        }
        let w = &mut self.windows[self.next];
        w.pages = 0;
        std::mem::take(&mut w.buf)
    }

    /// The window taken by [`Self::take_window_buf`] becomes `buf`: pages
    /// `first..first + buf.len() / 4096` of `file`, their current committed images.
    fn set_window(&mut self, file: u64, first: u64, buf: Vec<u8>) {
        if self.max_windows == 0 {
            return;
        }
        self.windows[self.next] = Window {
            file,
            first,
            pages: (buf.len() / PAGE_SIZE) as u64,
            buf,
        };
        self.next = (self.next + 1) % self.max_windows;
    }

    pub(crate) fn remove(&mut self, file: u64, page: u64) {
        self.drop_windows(|w| w.covers(file, page));
        self.remove_image(file, page);
    }

    pub(crate) fn cut(&mut self, file: u64, from_page: u64) {
        self.drop_windows(|w| w.file == file && w.first + w.pages > from_page);
        if let Some(m) = self.map.get_mut(&file) {
            let before = m.len();
            m.retain(|&p, _| p < from_page);
            self.len -= before - m.len();
            if m.is_empty() {
                self.map.remove(&file);
            }
        }
    }

    pub(crate) fn remove_file(&mut self, file: u64) {
        self.drop_windows(|w| w.file == file);
        if let Some(m) = self.map.remove(&file) {
            self.len -= m.len();
        }
    }

    pub(crate) fn remove_all(&mut self) {
        self.drop_windows(|_| true);
        self.map.clear();
        self.len = 0;
        self.order.clear();
    }
}

impl<S: Storage> Volume<S> {
    /// Reads up to `buf.len()` bytes at `offset`; returns the count (short only at end of file).
    pub fn read(&mut self, id: FileId, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.check_held()?;
        let id = id.0;
        let size = self.live_size(id)?;
        if offset >= size || buf.is_empty() {
            return Ok(0);
        }
        let n = usize_of((size - offset).min(buf.len() as u64))?;
        let buf = &mut buf[..n];
        self.prepare_resident(id)?;
        let end = offset + n as u64;
        // Fast path: nothing open on a resident file.
        if !self.pending.contains_key(&id) {
            if let Some(c) = self.files.get(&id).and_then(|f| f.resident.as_ref()) {
                c.read(offset, buf);
                return Ok(n);
            }
        }
        let mut page = offset / PAGE;
        // Bounce buffer for a spilled page, allocated on first use.
        let mut img = Vec::new();
        while page * PAGE < end {
            let pstart = page * PAGE;
            let lo = offset.max(pstart);
            let hi = end.min(pstart + PAGE);
            let dst = &mut buf[ix(lo - offset)..ix(hi - offset)];
            let src_off = ix(lo - pstart);
            match self.pending_image(id, page) {
                PendingImage::Staged => {
                    let p = &self.pending[&id];
                    dst.copy_from_slice(&p.staged[&page][src_off..src_off + dst.len()]);
                    page += 1;
                }
                PendingImage::Spilled(loc) => {
                    img.resize(PAGE_SIZE, 0);
                    self.read_log_payload(loc, &mut img)?;
                    dst.copy_from_slice(&img[src_off..src_off + dst.len()]);
                    page += 1;
                }
                PendingImage::Zero => {
                    dst.fill(0);
                    page += 1;
                }
                PendingImage::Committed => {
                    // Read as many consecutive committed pages as the request covers.
                    let mut last = page;
                    while (last + 1) * PAGE < end
                        && matches!(self.pending_image(id, last + 1), PendingImage::Committed)
                    {
                        last += 1;
                    }
                    let span_end = ((last + 1) * PAGE).min(end);
                    let dst = &mut buf[ix(lo - offset)..ix(span_end - offset)];
                    if lo == pstart && span_end == (last + 1) * PAGE {
                        // Whole pages (SQLite's reads): no bounce buffer.
                        self.read_committed(id, page, dst)?;
                    } else if last == page && self.read_cached_part(id, page, src_off, dst) {
                        // Part of one page that memory holds (SQLite reads 16 bytes of the
                        // database header at each transaction): no page-sized buffer.
                    } else {
                        let mut tmp = vec![0u8; usize_of((last - page + 1) * PAGE)?];
                        self.read_committed(id, page, &mut tmp)?;
                        dst.copy_from_slice(&tmp[ix(lo - pstart)..ix(span_end - pstart)]);
                    }
                    page = last + 1;
                }
            }
        }
        Ok(n)
    }

    /// Copies bytes `at..at + dst.len()` of committed page `page` into `dst` if memory holds
    /// that page (the file's resident copy, or the page cache); false if it does not, and
    /// nothing is copied. Allocating, zeroing and filling a page-sized buffer for a 16-byte
    /// read cost ~4.5 K instructions per autocommit INSERT in Disk mode (callgrind,
    /// `bench-sql/examples/insert_cpu.rs`).
    fn read_cached_part(&self, id: u64, page: u64, at: usize, dst: &mut [u8]) -> bool {
        debug_assert!(at + dst.len() <= PAGE_SIZE);
        let Some(f) = self.files.get(&id) else {
            return false;
        };
        if let Some(c) = &f.resident {
            // A transaction can have grown the file past the resident copy's end.
            c.read_padded(page * PAGE + at as u64, dst);
            return true;
        }
        match self.cache.get(id, page) {
            Some(img) => {
                dst.copy_from_slice(&img[at..at + dst.len()]);
                true
            }
            None => false,
        }
    }

    /// The whole file.
    pub fn read_to_vec(&mut self, id: FileId) -> Result<Vec<u8>> {
        let mut v = vec![0u8; usize_of(self.len(id)?)?];
        let n = self.read(id, 0, &mut v)?;
        v.truncate(n);
        Ok(v)
    }

    /// The live image of one page (4 KiB, zero past the end), for partial overwrites.
    pub(crate) fn live_page(&mut self, id: u64, page: u64) -> Result<Box<[u8]>> {
        let mut img = vec![0u8; PAGE_SIZE].into_boxed_slice();
        match self.pending_image(id, page) {
            PendingImage::Staged => img.copy_from_slice(&self.pending[&id].staged[&page]),
            PendingImage::Spilled(loc) => self.read_log_payload(loc, &mut img)?,
            PendingImage::Zero => {}
            PendingImage::Committed => self.read_committed(id, page, &mut img)?,
        }
        Ok(img)
    }

    fn pending_image(&self, id: u64, page: u64) -> PendingImage {
        let Some(p) = self.pending.get(&id) else {
            return PendingImage::Committed;
        };
        if p.staged.contains_key(&page) {
            return PendingImage::Staged;
        }
        if let Some(&loc) = p.spilled.get(&page) {
            return PendingImage::Spilled(loc);
        }
        if !p.existed || page >= pages_for(p.floor) {
            return PendingImage::Zero;
        }
        PendingImage::Committed
    }

    /// Committed images of pages `first..first + buf.len() / 4096` (whole pages, zero past the
    /// committed end).
    pub(crate) fn read_committed(&mut self, id: u64, first: u64, buf: &mut [u8]) -> Result<()> {
        let npages = (buf.len() / PAGE_SIZE) as u64;
        let Some(f) = self.files.get(&id) else {
            buf.fill(0);
            return Ok(());
        };
        if let Some(c) = &f.resident {
            c.read_padded(first * PAGE, buf);
            return Ok(());
        }
        let mut i = 0u64;
        while i < npages {
            let page = first + i;
            let dst_range = ix(i * PAGE)..ix((i + 1) * PAGE);
            let f = &self.files[&id];
            if let Some(img) = self.cache.get(id, page) {
                buf[dst_range].copy_from_slice(img);
                i += 1;
                continue;
            }
            if let Some(&loc) = f.log.get(&page) {
                let mut img = vec![0u8; PAGE_SIZE].into_boxed_slice();
                self.read_log_payload(loc, &mut img)?;
                buf[dst_range].copy_from_slice(&img);
                self.cache.put(id, page, img);
                i += 1;
                continue;
            }
            if page == 0 {
                if let Some(inline) = &f.inline {
                    let dst = &mut buf[dst_range];
                    dst[..inline.len()].copy_from_slice(inline);
                    dst[inline.len()..].fill(0);
                    i += 1;
                    continue;
                }
            }
            let Some(h0) = f.homes.get(page) else {
                buf[dst_range].fill(0);
                i += 1;
                continue;
            };
            // A run of pages in consecutive home blocks, not superseded by the log or cached.
            let home_at = |k: u64| -> Option<Home> {
                let p = page + k;
                if f.log.contains_key(&p) || self.cache.in_map(id, p) {
                    return None;
                }
                f.homes.get(p).filter(|h| h.block == h0.block + k)
            };
            let mut want = 1u64;
            while i + want < npages && home_at(want).is_some() {
                want += 1;
            }
            // Read ahead (Disk mode): the pages after the request, if they follow on disk.
            let mut ahead = want;
            if self.opts.buffer_mode == BufferMode::Disk || f.resident.is_none() {
                while ahead < want + READ_AHEAD_BLOCKS && home_at(ahead).is_some() {
                    ahead += 1;
                }
            }
            let homes: Vec<Home> = (0..ahead).filter_map(home_at).collect();
            let w = ix(want * PAGE);
            let start = ix(i * PAGE);
            if ahead == want {
                // Nothing to keep: straight into the caller's buffer.
                let dst = &mut buf[start..start + w];
                self.read_phys(PhysicalFileId::Data, h0.block * PAGE, dst)?;
                check_homes(dst, &homes)?;
            } else {
                // Into the window (its buffer reused), then the requested part out of it.
                let mut big = self.cache.take_window_buf();
                big.resize(usize_of(ahead * PAGE)?, 0);
                self.read_phys(PhysicalFileId::Data, h0.block * PAGE, &mut big)?;
                check_homes(&big, &homes)?;
                buf[start..start + w].copy_from_slice(&big[..w]);
                self.cache.set_window(id, page, big);
            }
            i += want;
        }
        Ok(())
    }

    pub(crate) fn read_phys(
        &mut self,
        file: PhysicalFileId,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize> {
        read_zero_filled(&mut self.storage.file(file), offset, buf)
            .map_err(|e| Error::from_storage(file, e))
    }

    /// Reads a page image from the log into `buf` (a full page: zero past the payload), with
    /// its patch applied.
    pub(crate) fn read_log_payload(&mut self, loc: LogLoc, buf: &mut [u8]) -> Result<()> {
        let len = (loc.len as usize).min(buf.len());
        self.read_log_range(loc.offset, &mut buf[..len])?;
        buf[len..].fill(0);
        if let Some(p) = loc.patch {
            let mut payload = vec![0u8; p.len as usize];
            self.read_log_range(p.offset, &mut payload)?;
            apply_patch(&payload, buf).map_err(|w| corrupt(w, PhysicalFileId::Log, p.offset))?;
        }
        Ok(())
    }

    /// Log bytes `[offset, offset + buf.len())`: from memory where the writer still has them,
    /// else from the file (the part below `written`) and the unwritten buffer (the rest).
    /// A range at or above [`super::state::LINK_BASE`] is a tail link's block in the data file.
    pub(crate) fn read_log_range(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if let (data @ PhysicalFileId::Data, at) = place_of(offset) {
            if self.read_phys(data, at, buf)? != buf.len() {
                return Err(corrupt("data file shorter than a tail link", data, at));
            }
            return Ok(());
        }
        if self.log.read_memory(offset, buf) {
            return Ok(());
        }
        let end = offset + buf.len() as u64;
        let log = PhysicalFileId::Log;
        if end <= self.log.written
            && (buf.len() as u64) < LOG_READ_AHEAD
            && self.log.follows_last_read(offset, end)
        {
            // In log order: read ahead, up to what is written (see `LogWriter::ahead`).
            let hi = (offset + LOG_READ_AHEAD).min(self.log.written);
            let mut ahead = self.log.take_ahead();
            ahead.resize(usize_of(hi - offset)?, 0);
            if self.read_phys(log, offset, &mut ahead)? != ahead.len() {
                return Err(corrupt("log shorter than its index", log, offset));
            }
            buf.copy_from_slice(&ahead[..buf.len()]);
            self.log.set_ahead(offset, ahead);
            return Ok(());
        }
        let split = usize_of(self.log.written.clamp(offset, end) - offset)?;
        if split > 0 {
            let n = self.read_phys(log, offset, &mut buf[..split])?;
            if n != split {
                return Err(corrupt("log shorter than its index", log, offset));
            }
            self.log.note_read(offset + split as u64);
        }
        if split < buf.len() {
            let at = offset + split as u64;
            if !self.log.read_memory(at, &mut buf[split..]) {
                return Err(corrupt("log index beyond the log", PhysicalFileId::Log, at));
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------------------------
    // Residency (Memory mode)
    // ------------------------------------------------------------------------------------

    /// Memory mode: loads the file's committed contents if it is not resident and fits the
    /// budget. A file that does not fit stays on disk (read as in Disk mode). Changes nothing
    /// if loading fails.
    pub(crate) fn prepare_resident(&mut self, id: u64) -> Result<()> {
        if self.opts.buffer_mode != BufferMode::Memory {
            return Ok(());
        }
        let Some(f) = self.files.get(&id) else {
            return Ok(());
        };
        if f.resident.is_some() {
            return Ok(());
        }
        let size = f.size;
        if let Some(budget) = self.opts.memory_budget {
            if self.resident_bytes.saturating_add(size) > budget {
                return Ok(());
            }
        }
        // The contents must be addressable here (wasm32: 4 GiB).
        usize_of(size)?;
        let content = self.load_contents(id)?;
        self.resident_bytes += content.heap_bytes();
        self.cache.remove_file(id);
        if let Some(f) = self.files.get_mut(&id) {
            f.resident = Some(content);
        }
        Ok(())
    }

    /// Builds a file's committed contents: home blocks in windows of up to [`LOAD_WINDOW`]
    /// (hash-checked), then the log's images (windowed by log offset), then the inline bytes.
    fn load_contents(&mut self, id: u64) -> Result<Content> {
        let f = &self.files[&id];
        let mut c = Content::new();
        c.set_len(f.size)
            .map_err(|v| Error::TooLarge { value: v })?;
        let size = f.size;
        let homes: Vec<(u64, Home)> = f
            .homes
            .iter()
            .filter(|(p, _)| !f.log.contains_key(p))
            .collect();
        let logs: Vec<(u64, LogLoc)> = f.log.iter().map(|(&p, &l)| (p, l)).collect();
        let inline = f.inline.clone();
        if let Some(bytes) = inline {
            if !f.log.contains_key(&0) {
                let n = ix((bytes.len() as u64).min(size));
                c.put(0, &bytes[..n]);
            }
        }
        // Home blocks, in block order, windowed (small gaps read through).
        let mut by_block = homes;
        by_block.sort_unstable_by_key(|(_, h)| h.block);
        let mut i = 0;
        let mut window = Vec::new();
        while i < by_block.len() {
            let (j, lo, hi) = load_window(i, by_block.len(), |k| {
                let b = by_block[k].1.block;
                (b, b + 1)
            });
            window.resize(usize_of((hi - lo) * PAGE)?, 0);
            self.read_phys(PhysicalFileId::Data, lo * PAGE, &mut window)?;
            for &(page, h) in &by_block[i..j] {
                let s = ix((h.block - lo) * PAGE);
                let blk = &window[s..s + PAGE_SIZE];
                if xxh3_64(blk) != h.hash {
                    return Err(corrupt(
                        "home block checksum mismatch",
                        PhysicalFileId::Data,
                        h.block * PAGE,
                    ));
                }
                let start = page * PAGE;
                let n = (size - start).min(PAGE) as usize;
                c.put(start, &blk[..n]);
            }
            i = j;
        }
        // Log images, in log order, windowed.
        self.put_log_images(logs, &mut c)?;
        Ok(c)
    }

    /// Copies the page images at `locs` (page, where in the log) into `c`, reading the log in
    /// log order, in windows of up to [`LOAD_WINDOW`] (one transaction's images lie mostly back
    /// to back, so a window is one call); a patch is applied to its page once read (it lies
    /// after its base in the log). Pages at or past `c`'s length are skipped. On an error `c`
    /// may hold some of the images.
    pub(crate) fn put_log_images(
        &mut self,
        locs: Vec<(u64, LogLoc)>,
        c: &mut Content,
    ) -> Result<()> {
        let mut img = vec![0u8; PAGE_SIZE];
        let mut bad = None;
        self.each_log_image(&locs, |i, part, bytes| {
            let page = locs[i].0;
            if page * PAGE >= c.len() || bad.is_some() {
                return;
            }
            if let LogPart::Patch(_) = part {
                // Its base was put first (log order).
                c.read_padded(page * PAGE, &mut img);
            }
            if let Err(e) = part.fill(&mut img, bytes) {
                bad = Some(e);
                return;
            }
            c.put_page(page, &img);
        })?;
        bad.map_or(Ok(()), Err)
    }

    /// Reads the log bytes of the images at `locs` (each one's Page payload, then its patch if
    /// any) in log order, in windows of up to [`LOAD_WINDOW`], and hands each to `f` with the
    /// index of its location in `locs`. Every image comes before every patch: a base in a tail
    /// link has a larger offset than a patch on it in the log.
    pub(crate) fn each_log_image(
        &mut self,
        locs: &[(u64, LogLoc)],
        mut f: impl FnMut(usize, LogPart, &[u8]),
    ) -> Result<()> {
        // (offset, len, index, part)
        let mut parts: Vec<(u64, u32, usize, LogPart)> = Vec::with_capacity(locs.len());
        for (i, (_, l)) in locs.iter().enumerate() {
            parts.push((l.offset, l.len, i, LogPart::Image));
            if let Some(p) = l.patch {
                parts.push((p.offset, p.len, i, LogPart::Patch(p.offset)));
            }
        }
        parts.sort_unstable_by_key(|x| (matches!(x.3, LogPart::Patch(_)), x.0));
        let mut window = Vec::new();
        let mut i = 0;
        while i < parts.len() {
            let lo = parts[i].0;
            let patch = matches!(parts[i].3, LogPart::Patch(_));
            let mut j = i;
            while j < parts.len()
                && matches!(parts[j].3, LogPart::Patch(_)) == patch
                && parts[j].0 + u64::from(parts[j].1) - lo <= LOAD_WINDOW
            {
                j += 1;
            }
            let j = j.max(i + 1);
            let hi = parts[i..j]
                .iter()
                .map(|&(o, n, ..)| o + u64::from(n))
                .max()
                .unwrap_or(lo);
            window.resize(usize_of(hi - lo)?, 0);
            self.read_log_range(lo, &mut window)?;
            for &(o, n, k, part) in &parts[i..j] {
                let s = ix(o - lo);
                f(k, part, &window[s..s + n as usize]);
            }
            i = j;
        }
        Ok(())
    }

    /// A resident file stops being resident.
    pub(crate) fn evict(&mut self, id: u64) {
        if let Some(f) = self.files.get_mut(&id) {
            if let Some(c) = f.resident.take() {
                self.resident_bytes = self.resident_bytes.saturating_sub(c.heap_bytes());
            }
        }
    }

    /// Recomputes resident bytes from every file (after a replay changed resident copies),
    /// evicting the largest resident files while over the budget. O(files): commits keep the
    /// count up to date per file instead (`Volume::apply`).
    pub(crate) fn recount_resident(&mut self) {
        self.resident_bytes = self.resident_sum();
        self.enforce_memory_budget();
    }

    /// Heap bytes of every resident copy, summed.
    pub(crate) fn resident_sum(&self) -> u64 {
        self.files
            .values()
            .filter_map(|f| f.resident.as_ref())
            .map(Content::heap_bytes)
            .sum()
    }

    /// Evicts the largest resident files while the resident bytes exceed the budget.
    pub(crate) fn enforce_memory_budget(&mut self) {
        let Some(budget) = self.opts.memory_budget else {
            return;
        };
        while self.resident_bytes > budget {
            let largest = self
                .files
                .iter()
                .filter_map(|(&id, f)| f.resident.as_ref().map(|c| (c.heap_bytes(), id)))
                .max();
            match largest {
                Some((_, id)) => self.evict(id),
                None => break,
            }
        }
    }
}

/// Checks each 4 KiB block of `blocks` against its home's hash.
fn check_homes(blocks: &[u8], homes: &[Home]) -> Result<()> {
    for (blk, h) in blocks.chunks_exact(PAGE_SIZE).zip(homes) {
        if xxh3_64(blk) != h.hash {
            return Err(corrupt(
                "home block checksum mismatch",
                PhysicalFileId::Data,
                h.block * PAGE,
            ));
        }
    }
    Ok(())
}

/// Which log bytes of a page image [`Volume::each_log_image`] hands over.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LogPart {
    /// The Page frame's payload (the page's bytes up to its length then).
    Image,
    /// A Patch payload, at this log offset, to apply on top.
    Patch(u64),
}

impl LogPart {
    /// Puts these log bytes into `img`, a page buffer: an image's bytes, zeros past them; or a
    /// patch, applied on top of the base `img` already holds.
    pub(crate) fn fill(self, img: &mut [u8], bytes: &[u8]) -> Result<()> {
        match self {
            LogPart::Image => {
                img[..bytes.len()].copy_from_slice(bytes);
                img[bytes.len()..].fill(0);
                Ok(())
            }
            LogPart::Patch(at) => {
                apply_patch(bytes, img).map_err(|w| corrupt(w, PhysicalFileId::Log, at))
            }
        }
    }
}

enum PendingImage {
    Staged,
    Spilled(LogLoc),
    Zero,
    Committed,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(b: u8) -> Box<[u8]> {
        vec![b; PAGE_SIZE].into_boxed_slice()
    }

    /// The count of images follows every way one leaves (eviction, remove, cut, a file's
    /// removal), and a file's removal or cut takes exactly its pages.
    #[test]
    fn page_cache_keeps_its_count_and_drops_only_what_is_asked() {
        let mut c = PageCache::new(2 << 20);
        assert!(c.cap >= 8 && c.max_windows >= 1);
        for f in 0..3u8 {
            for p in 0..4u8 {
                c.put(f.into(), p.into(), img(f * 10 + p));
            }
        }
        assert_eq!(c.len, 12);
        c.remove_file(1);
        assert_eq!(c.len, 8);
        assert!((0..4).all(|p| c.get(1, p).is_none()));
        assert_eq!(c.get(2, 3).map(|b| b[0]), Some(23));
        c.cut(0, 2);
        assert_eq!(c.len, 6);
        assert_eq!(c.get(0, 1).map(|b| b[0]), Some(1));
        assert!(c.get(0, 2).is_none() && c.get(0, 3).is_none());
        c.remove(2, 0);
        assert_eq!(c.len, 5);
        assert_eq!(c.bytes(), (5 * PAGE_SIZE) as u64);
        // Past the cap, the oldest images go first.
        let cap = c.cap;
        for p in 0..cap as u64 {
            c.put(9, p, img(9));
        }
        assert_eq!(c.len, cap);
        assert!(c.get(0, 0).is_none(), "the oldest image was evicted");
        assert!(c.get(9, cap as u64 - 1).is_some());
        let counted: usize = c.map.values().map(|m| m.len()).sum();
        assert_eq!(counted, c.len);
        assert!(
            c.map.values().all(|m| !m.is_empty()),
            "no empty file entries"
        );
        c.remove_all();
        assert_eq!((c.len, c.bytes()), (0, 0));
    }
}
