//! Sparse in-memory structures whose size follows what is stored, never the largest offset:
//! [`HomeMap`] (page → home block, grouped like the on-disk map chunks) and [`Content`] (a
//! resident file's bytes in 64 KiB chunks, so a growing file never reallocates one huge buffer —
//! on wasm32 a 1 GiB `Vec` doubling to 2 GiB would need 3 GiB at once).

use std::collections::BTreeMap;

use crate::format::{MAP_CHUNK_PAGES, PAGE, PAGE_SIZE};

/// Where a page's checkpointed image lives: a block of the data file (never 0 or 1, which are
/// superblocks) and the xxh3-64 of the whole 4 KiB block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Home {
    pub(crate) block: u64,
    pub(crate) hash: u64,
}

impl Home {
    fn is_set(&self) -> bool {
        self.block != 0
    }
}

/// 256 entries.
const CHUNK: usize = 256;
const _: () = assert!(CHUNK as u64 == MAP_CHUNK_PAGES);

/// Page → [`Home`], in chunks of [`MAP_CHUNK_PAGES`] (the on-disk map chunk granularity).
#[derive(Clone, Debug, Default)]
pub(crate) struct HomeMap {
    chunks: BTreeMap<u64, (Box<[Home; CHUNK]>, u16)>,
}

fn split(page: u64) -> (u64, usize) {
    // `page % 256` fits any usize.
    (page / MAP_CHUNK_PAGES, (page % MAP_CHUNK_PAGES) as usize)
}

impl HomeMap {
    pub(crate) fn get(&self, page: u64) -> Option<Home> {
        let (c, i) = split(page);
        self.chunks.get(&c).map(|(h, _)| h[i]).filter(Home::is_set)
    }

    /// Sets the home of `page`; returns the previous one.
    pub(crate) fn insert(&mut self, page: u64, home: Home) -> Option<Home> {
        debug_assert!(home.is_set());
        let (c, i) = split(page);
        let (h, n) = self
            .chunks
            .entry(c)
            .or_insert_with(|| (Box::new([Home::default(); CHUNK]), 0));
        let old = std::mem::replace(&mut h[i], home);
        if old.is_set() {
            Some(old)
        } else {
            *n += 1;
            None
        }
    }

    /// Sets the homes of `hashes.len()` pages from `first_page` to consecutive blocks from
    /// `block` (a map chunk's run, as mount reads it), with one lookup per chunk instead of one
    /// per page (at 1 GiB, per-page inserts were half of a native mount's time). Same result as
    /// [`insert`](Self::insert) page by page.
    pub(crate) fn insert_run(&mut self, first_page: u64, block: u64, hashes: &[u64]) {
        let mut done = 0;
        while done < hashes.len() {
            let (c, i0) = split(first_page + done as u64);
            let take = (CHUNK - i0).min(hashes.len() - done);
            let (h, n) = self
                .chunks
                .entry(c)
                .or_insert_with(|| (Box::new([Home::default(); CHUNK]), 0));
            for (k, slot) in h[i0..i0 + take].iter_mut().enumerate() {
                if !slot.is_set() {
                    *n += 1;
                }
                let d = done + k;
                *slot = Home {
                    block: block + d as u64,
                    hash: hashes[d],
                };
                debug_assert!(slot.is_set());
            }
            done += take;
        }
    }

    /// Removes every home at or beyond `from`; returns them (page order).
    pub(crate) fn cut(&mut self, from: u64) -> Vec<(u64, Home)> {
        let (c0, i0) = split(from);
        let mut out = Vec::new();
        let keys: Vec<u64> = self.chunks.range(c0..).map(|(k, _)| *k).collect();
        for k in keys {
            let start = if k == c0 { i0 } else { 0 };
            let Some((h, n)) = self.chunks.get_mut(&k) else {
                continue;
            };
            for (i, slot) in h.iter_mut().enumerate().skip(start) {
                if slot.is_set() {
                    out.push((k * MAP_CHUNK_PAGES + i as u64, *slot));
                    *slot = Home::default();
                    *n -= 1;
                }
            }
            if *n == 0 {
                self.chunks.remove(&k);
            }
        }
        out
    }

    /// Every (page, home), in page order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, Home)> + '_ {
        self.chunks.iter().flat_map(|(&k, (h, _))| {
            h.iter()
                .enumerate()
                .filter(|(_, x)| x.is_set())
                .map(move |(i, x)| (k * MAP_CHUNK_PAGES + i as u64, *x))
        })
    }

    /// The (page offset within the chunk, home) pairs of chunk `chunk`.
    pub(crate) fn chunk(&self, chunk: u64) -> impl Iterator<Item = (u16, Home)> + '_ {
        self.chunks.get(&chunk).into_iter().flat_map(|(h, _)| {
            h.iter()
                .enumerate()
                .filter(|(_, x)| x.is_set())
                // i < 256.
                .map(|(i, x)| (u16::try_from(i).unwrap_or(u16::MAX), *x))
        })
    }

    /// Indices of the chunks that hold at least one home.
    #[cfg(test)]
    pub(crate) fn chunk_indices(&self) -> impl Iterator<Item = u64> + '_ {
        self.chunks.keys().copied()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Homes stored.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.chunks.values().map(|(_, n)| u64::from(*n)).sum()
    }
}

/// Bytes per content chunk.
pub(crate) const CONTENT_CHUNK: usize = 64 << 10;
const CONTENT_CHUNK_U64: u64 = CONTENT_CHUNK as u64;

/// A resident file's bytes: `len` bytes in 64 KiB chunks; an absent chunk reads as zeros, and
/// so do the bytes of a chunk beyond its initialised length (`Vec::len`, the prefix up to the
/// last byte stored). Allocation (`Vec::capacity`): the first chunk grows by powers of two up
/// to 64 KiB (a 1 KiB file costs 1 KiB, not a chunk); later chunks are allocated whole, the
/// file being at least 64 KiB long by then. Bytes are appended into the allocation, not
/// written over zeros filled first: SQLite appends pages, and zero-filling each new chunk
/// wrote every appended byte twice (in V8, the fill and the copy together were ~11 % of a
/// Memory-mode commit's CPU: `tools/wasm-cpu`).
/// Invariant: bytes at or beyond `len` inside a chunk's initialised prefix are zero.
///
/// The chunks are a sparse map, not a vector indexed by chunk: a file's length is not bounded
/// by the bytes it holds (a byte written at 2^52 makes a 4 PiB sparse file), and a dense chunk
/// index for such a length would need gigabytes before a single byte is stored (found by the
/// fuzz target: a sparse `set_len` in Memory mode aborted on a 512 GiB allocation).
#[derive(Clone, Debug, Default)]
pub(crate) struct Content {
    chunks: BTreeMap<u64, Vec<u8>>,
    len: u64,
    /// The sum of the chunks' allocations, kept by every change to them: `heap_bytes` is read at
    /// every commit (`Volume::recount_resident`), and summing the chunks there (16,384 for a
    /// 1 GiB file) made each commit's CPU grow with the resident bytes. (Too small to see in
    /// `examples/scale` at 500 MB: 0.18–0.49 ms per autocommit INSERT either way, run to run.)
    heap: u64,
}

/// Smallest allocation of a chunk.
const MIN_CHUNK_ALLOC: usize = 1 << 10;

impl Content {
    /// An empty file's contents.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Bytes allocated.
    pub(crate) fn heap_bytes(&self) -> u64 {
        debug_assert_eq!(
            self.heap,
            self.chunks
                .values()
                .map(|c| c.capacity() as u64)
                .sum::<u64>()
        );
        self.heap
    }

    /// Stores `src` at `pos` (`src` within one chunk): the chunk holding `pos` is created or
    /// its allocation grown to hold at least its first `pos % 64 KiB + src.len()` bytes; a gap
    /// between its initialised prefix and `pos` is zero-filled, and `src` appended after it.
    fn store(&mut self, pos: u64, src: &[u8]) {
        // `pos % 64 KiB` fits any usize.
        let o = (pos % CONTENT_CHUNK_U64) as usize;
        let end = o + src.len();
        debug_assert!(end <= CONTENT_CHUNK);
        let c = self.chunks.entry(pos / CONTENT_CHUNK_U64).or_default();
        if c.capacity() < end {
            let before = c.capacity() as u64;
            // Past the first chunk the file is already 64 KiB long: its chunks are allocated
            // whole. Grown by powers of two as SQLite appends pages, a chunk was reallocated
            // three times (8, 16, 32 → 64 KiB), copying 56 KiB for every 64 KiB of the file:
            // natively, 6.4 M of the 16 cases' instructions in Memory mode.
            let alloc = if pos >= CONTENT_CHUNK_U64 {
                CONTENT_CHUNK
            } else {
                end.next_power_of_two()
                    .clamp(MIN_CHUNK_ALLOC, CONTENT_CHUNK)
            };
            c.reserve_exact(alloc - c.len());
            self.heap += c.capacity() as u64 - before;
        }
        if c.len() < o {
            c.resize(o, 0);
        }
        // Overwrite what is initialised, append the rest.
        let over = c.len().min(end) - o;
        c[o..o + over].copy_from_slice(&src[..over]);
        c.extend_from_slice(&src[over..]);
    }

    /// Copies `buf.len()` bytes at `offset` (within `len`) into `buf`.
    pub(crate) fn read(&self, offset: u64, buf: &mut [u8]) {
        debug_assert!(offset + buf.len() as u64 <= self.len);
        let mut done = 0;
        while done < buf.len() {
            let pos = offset + done as u64;
            // `pos % 64 KiB` fits any usize.
            let o = (pos % CONTENT_CHUNK_U64) as usize;
            let n = (CONTENT_CHUNK - o).min(buf.len() - done);
            let dst = &mut buf[done..done + n];
            let have = self
                .chunks
                .get(&(pos / CONTENT_CHUNK_U64))
                .map_or(&[][..], |c| &c[o.min(c.len())..(o + n).min(c.len())]);
            dst[..have.len()].copy_from_slice(have);
            dst[have.len()..].fill(0);
            done += n;
        }
    }

    /// Copies `buf.len()` bytes at `offset` into `buf`, as zeros past `len` (where a page or a
    /// transaction reaches beyond the committed contents; `offset` may lie beyond `len`).
    pub(crate) fn read_padded(&self, offset: u64, buf: &mut [u8]) {
        let n = usize::try_from(self.len.saturating_sub(offset))
            .map_or(buf.len(), |n| n.min(buf.len()));
        if n > 0 {
            self.read(offset, &mut buf[..n]);
        }
        buf[n..].fill(0);
    }

    /// Sets the length: truncating zeroes the cut bytes of the last kept chunk and drops the
    /// chunks beyond; growing adds zeros (allocates nothing). Fails only if the length is
    /// beyond the address space (the contents must stay addressable), before changing
    /// anything.
    pub(crate) fn set_len(&mut self, len: u64) -> Result<(), u64> {
        usize::try_from(len).map_err(|_| len)?;
        if len < self.len {
            let nchunks = len.div_ceil(CONTENT_CHUNK_U64);
            let cut: u64 = self
                .chunks
                .split_off(&nchunks)
                .values()
                .map(|c| c.capacity() as u64)
                .sum();
            self.heap -= cut;
            let tail = (len % CONTENT_CHUNK_U64) as usize;
            if tail != 0 {
                if let Some(last) = self.chunks.get_mut(&(nchunks - 1)) {
                    // Keeps its allocation: the bytes cut read as zeros, as past any prefix.
                    last.truncate(tail);
                }
            }
        }
        self.len = len;
        Ok(())
    }

    /// Writes a whole page image (`PAGE_SIZE` bytes, zero beyond the file's end) at page
    /// `page`, which lies within `len`.
    pub(crate) fn put_page(&mut self, page: u64, img: &[u8]) {
        debug_assert_eq!(img.len(), PAGE_SIZE);
        let start = page * PAGE;
        debug_assert!(start < self.len);
        let n = usize::try_from(self.len - start).map_or(PAGE_SIZE, |l| l.min(PAGE_SIZE));
        self.store(start, &img[..n]);
    }

    /// `cmp` of page `page`'s image and `img` (`PAGE_SIZE` bytes each: as
    /// [`crate::format::diff_mask`] or [`crate::format::same_page`]); `None` if the page is not
    /// wholly within `len`.
    pub(crate) fn compare_page<R>(
        &self,
        page: u64,
        img: &[u8],
        cmp: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Option<R> {
        debug_assert_eq!(img.len(), PAGE_SIZE);
        let start = page * PAGE;
        if start + PAGE > self.len {
            return None;
        }
        // A page lies within one chunk (PAGE divides CONTENT_CHUNK); bytes past a chunk's
        // allocation are zeros.
        let o = (start % CONTENT_CHUNK_U64) as usize;
        let chunk = self
            .chunks
            .get(&(start / CONTENT_CHUNK_U64))
            .map_or(&[][..], |c| {
                &c[o.min(c.len())..(o + PAGE_SIZE).min(c.len())]
            });
        if chunk.len() == PAGE_SIZE {
            return Some(cmp(chunk, img));
        }
        let mut page_img = [0u8; PAGE_SIZE];
        page_img[..chunk.len()].copy_from_slice(chunk);
        Some(cmp(&page_img, img))
    }

    /// Copies `src` to `offset` (within `len`); used when loading.
    pub(crate) fn put(&mut self, offset: u64, src: &[u8]) {
        let mut done = 0;
        while done < src.len() {
            let pos = offset + done as u64;
            let o = (pos % CONTENT_CHUNK_U64) as usize;
            let n = (CONTENT_CHUNK - o).min(src.len() - done);
            self.store(pos, &src[done..done + n]);
            done += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_map_is_sparse_and_cuts() {
        let mut m = HomeMap::default();
        let h = |b| Home { block: b, hash: b };
        assert_eq!(m.insert(5, h(10)), None);
        assert_eq!(m.insert(5, h(11)), Some(h(10)));
        // A page at 1 TiB costs one chunk, not a dense array.
        let far = (1u64 << 40) / PAGE;
        m.insert(far, h(12));
        assert_eq!(m.chunk_indices().count(), 2);
        assert_eq!(m.get(far), Some(h(12)));
        assert_eq!(m.get(6), None);
        assert_eq!(m.len(), 2);
        let cut = m.cut(6);
        assert_eq!(cut, vec![(far, h(12))]);
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![(5, h(11))]);
        assert_eq!(m.cut(0).len(), 1);
        assert!(m.is_empty());
    }

    #[test]
    fn a_run_inserts_as_pages_do() {
        let hashes: Vec<u64> = (0..600).map(|i| 1000 + i).collect();
        for first in [0, 3, 255, 256, 700] {
            let mut run = HomeMap::default();
            let mut one = HomeMap::default();
            // An existing home inside the run is replaced, not counted twice.
            run.insert(first + 10, Home { block: 9, hash: 9 });
            one.insert(first + 10, Home { block: 9, hash: 9 });
            run.insert_run(first, 40, &hashes);
            for (i, &hash) in hashes.iter().enumerate() {
                let home = Home {
                    block: 40 + i as u64,
                    hash,
                };
                one.insert(first + i as u64, home);
            }
            assert_eq!(
                run.iter().collect::<Vec<_>>(),
                one.iter().collect::<Vec<_>>()
            );
            assert_eq!(run.len(), 600);
            assert_eq!(
                run.chunk_indices().collect::<Vec<_>>(),
                one.chunk_indices().collect::<Vec<_>>()
            );
            // Counts stay right: cutting everything empties the map.
            assert_eq!(run.cut(0).len(), 600);
            assert!(run.is_empty());
        }
    }

    #[test]
    fn content_reads_writes_and_truncates() {
        let mut c = Content::new();
        c.set_len(200_000).unwrap();
        let mut img = vec![7u8; PAGE_SIZE];
        img[0] = 1;
        c.put_page(16, &img); // 65,536: the start of chunk 1
        let mut buf = vec![9u8; 10];
        c.read(65_530, &mut buf);
        assert_eq!(buf, [0, 0, 0, 0, 0, 0, 1, 7, 7, 7]);
        c.put(65_535, &[3, 3]);
        c.set_len(65_536).unwrap();
        c.set_len(70_000).unwrap();
        let mut buf = vec![9u8; 4];
        c.read(65_534, &mut buf);
        assert_eq!(buf, [0, 3, 0, 0], "bytes cut and regrown read as zeros");
        assert!(c.heap_bytes() <= 2 * CONTENT_CHUNK as u64);
    }

    #[test]
    fn content_is_sparse() {
        // A length of 2^52 (a byte written far away) allocates nothing until bytes are stored.
        let mut c = Content::new();
        c.set_len(1 << 52).unwrap();
        assert_eq!(c.heap_bytes(), 0);
        c.put((1 << 52) - 3, &[1, 2, 3]);
        assert_eq!(c.heap_bytes(), CONTENT_CHUNK as u64);
        let mut buf = [9u8; 5];
        c.read((1 << 52) - 5, &mut buf);
        assert_eq!(buf, [0, 0, 1, 2, 3]);
        c.set_len(10).unwrap();
        assert_eq!(c.heap_bytes(), 0);
    }

    #[test]
    fn chunks_past_the_first_are_allocated_whole() {
        // A file growing page by page, as SQLite appends: the first chunk grows by powers of
        // two, every later one is allocated once, whole.
        let mut c = Content::new();
        let img = vec![4u8; PAGE_SIZE];
        let pages = (CONTENT_CHUNK / PAGE_SIZE) as u64;
        for page in 0..pages + 2 {
            c.set_len((page + 1) * PAGE).unwrap();
            c.put_page(page, &img);
            let heap = c.heap_bytes();
            if page < pages {
                assert_eq!(heap, ((page + 1) * PAGE).next_power_of_two().max(1024));
            } else {
                assert_eq!(heap, 2 * CONTENT_CHUNK as u64, "page {page}");
            }
            // Allocated whole, but initialised only as far as the pages stored: no chunk is
            // zero-filled ahead of the bytes appended into it.
            let stored = (page + 1) * PAGE;
            assert_eq!(
                c.chunks.values().map(Vec::len).sum::<usize>() as u64,
                stored,
                "page {page}"
            );
        }
        let mut buf = vec![0u8; 2 * PAGE_SIZE];
        c.read((pages - 1) * PAGE, &mut buf);
        assert!(buf.iter().all(|&b| b == 4));
    }

    #[test]
    fn small_files_cost_their_size() {
        // A 1 KiB file allocates 1 KiB (1,000 such files were 64 MiB of zeroed chunks).
        let mut c = Content::new();
        c.set_len(1000).unwrap();
        c.put(0, &[5; 1000]);
        assert_eq!(c.heap_bytes(), 1024);
        // Growing within the chunk reallocates by powers of two and keeps the bytes.
        c.set_len(5000).unwrap();
        c.put(4000, &[6; 1000]);
        assert_eq!(c.heap_bytes(), 8192);
        let mut buf = vec![9u8; 5000];
        c.read(0, &mut buf);
        assert!(buf[..1000].iter().all(|&b| b == 5));
        assert!(buf[1000..4000].iter().all(|&b| b == 0));
        assert!(buf[4000..].iter().all(|&b| b == 6));
        // Reading past a chunk's allocated prefix (within len) gives zeros.
        c.set_len(60_000).unwrap();
        let mut buf = vec![9u8; 100];
        c.read(59_900, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
        // Truncating drops the cut bytes; regrowing reads zeros there.
        c.set_len(4500).unwrap();
        c.set_len(5000).unwrap();
        let mut buf = vec![9u8; 500];
        c.read(4500, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
        // Past `len`: zeros, also from an offset beyond it.
        c.put(4000, &[7; 1000]);
        let mut buf = vec![9u8; 20];
        c.read_padded(4990, &mut buf);
        assert_eq!(&buf[..10], &[7; 10]);
        assert!(buf[10..].iter().all(|&b| b == 0));
        let mut buf = vec![9u8; 20];
        c.read_padded(6000, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
    }
}
