//! Sparse in-memory structures whose size follows what is stored, never the largest offset:
//! [`HomeMap`] (page → home block, grouped like the on-disk map chunks) and [`Content`] (a
//! resident file's bytes as 4 KiB page images, so a growing file never reallocates one huge
//! buffer — on wasm32 a 1 GiB `Vec` doubling to 2 GiB would need 3 GiB at once).

use std::collections::BTreeMap;

use super::ix;
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

/// Smallest allocation of a page image stored in part (a small file's only page).
const MIN_IMAGE_ALLOC: usize = 1 << 10;

/// A resident file's bytes: `len` bytes as 4 KiB page images; an absent page reads as zeros,
/// and so do the bytes of an image past its length. A page stored whole is a `PAGE_SIZE`
/// image; a page stored in part (only a file's last page, or a page written piecemeal through
/// [`Content::put`]) an image as long as the next power of two (at least 1 KiB) that holds
/// the bytes stored, so a 1 KiB file costs 1 KiB.
/// Invariant: bytes at or beyond `len` inside an image are zero.
///
/// A committed page's staged image becomes its resident image as it is
/// ([`Content::put_page_owned`]): a commit moves each page into the resident copy instead of
/// copying it. With 64 KiB chunks each committed page was copied into its chunk (~17 % of a
/// Memory-mode commit's CPU per page in V8, `tools/wasm-cpu`, as each of the two other copies of
/// a page: into its staged image and into the log buffer); now Memory mode makes the copies
/// Disk mode makes, whose page cache takes the staged images as they are too.
///
/// The images are a sparse map, not a vector indexed by page: a file's length is not bounded
/// by the bytes it holds (a byte written at 2^52 makes a 4 PiB sparse file), and a dense index
/// for such a length would need gigabytes before a single byte is stored (found by the fuzz
/// target: a sparse `set_len` in Memory mode aborted on a 512 GiB allocation).
#[derive(Clone, Debug, Default)]
pub(crate) struct Content {
    pages: BTreeMap<u64, Box<[u8]>>,
    len: u64,
    /// The sum of the images' lengths, kept by every change to them: `heap_bytes` is read twice
    /// per file at every commit (`Volume::apply`), and summing the images there (262,144 for a
    /// 1 GiB file) would make each commit's CPU grow with the resident bytes.
    heap: u64,
}

impl Content {
    /// An empty file's contents.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Bytes allocated for page images (the map's own nodes not counted).
    pub(crate) fn heap_bytes(&self) -> u64 {
        debug_assert_eq!(
            self.heap,
            self.pages.values().map(|c| c.len() as u64).sum::<u64>()
        );
        self.heap
    }

    /// Stores `src` at byte `o` of page `page` (`o + src.len() <= PAGE_SIZE`): the page's image
    /// is created, or replaced by a longer one holding its bytes, if it is shorter than that.
    fn store(&mut self, page: u64, o: usize, src: &[u8]) {
        let end = o + src.len();
        debug_assert!(end <= PAGE_SIZE);
        let img = self.pages.entry(page).or_default();
        if img.len() >= end {
            img[o..end].copy_from_slice(src);
            return;
        }
        let alloc = if end == PAGE_SIZE {
            PAGE_SIZE
        } else {
            end.next_power_of_two().clamp(MIN_IMAGE_ALLOC, PAGE_SIZE)
        };
        // The old image's bytes before `src`, zeros up to it, `src`, zeros after it: each byte
        // written once (a whole page loaded is one copy, not a zero fill and a copy).
        let kept = img.len().min(o);
        let mut grown = Vec::with_capacity(alloc);
        grown.extend_from_slice(&img[..kept]);
        grown.resize(o, 0);
        grown.extend_from_slice(src);
        grown.resize(alloc, 0);
        self.heap += (alloc - img.len()) as u64;
        *img = grown.into_boxed_slice();
    }

    /// Copies `buf.len()` bytes at `offset` (within `len`) into `buf`.
    pub(crate) fn read(&self, offset: u64, buf: &mut [u8]) {
        debug_assert!(offset + buf.len() as u64 <= self.len);
        if buf.is_empty() {
            return;
        }
        let end = offset + buf.len() as u64;
        // Zeros first where no image is, then each stored image's part (few reads span more
        // than the two 4 KiB pages of one of SQLite's 8 KiB pages).
        let mut at = offset;
        for (&page, img) in self.pages.range(offset / PAGE..=(end - 1) / PAGE) {
            let pstart = page * PAGE;
            let lo = at.max(pstart);
            // Bytes before this page (and after the last image) read as zeros.
            buf[ix(at - offset)..ix(lo - offset)].fill(0);
            let hi = end.min(pstart + PAGE);
            let (o, n) = (ix(lo - pstart), ix(hi - lo));
            let dst = &mut buf[ix(lo - offset)..ix(hi - offset)];
            // The image's bytes from `o` (none if it ends before), then zeros.
            let have = img.get(o..).map_or(&[][..], |b| &b[..b.len().min(n)]);
            dst[..have.len()].copy_from_slice(have);
            dst[have.len()..].fill(0);
            at = hi;
        }
        buf[ix(at - offset)..].fill(0);
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

    /// Sets the length: truncating zeroes the cut bytes of the last kept page (which keeps its
    /// allocation) and drops the images beyond; growing adds zeros (allocates nothing). Fails
    /// only if the length is beyond the address space (the contents must stay addressable),
    /// before changing anything.
    pub(crate) fn set_len(&mut self, len: u64) -> Result<(), u64> {
        usize::try_from(len).map_err(|_| len)?;
        if len < self.len {
            let npages = len.div_ceil(PAGE);
            let cut: u64 = self
                .pages
                .split_off(&npages)
                .values()
                .map(|c| c.len() as u64)
                .sum();
            self.heap -= cut;
            let tail = ix(len % PAGE);
            if tail != 0 {
                if let Some(last) = self.pages.get_mut(&(npages - 1)) {
                    if last.len() > tail {
                        last[tail..].fill(0);
                    }
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
        let n = self.page_bytes(page);
        self.store(page, 0, &img[..n]);
    }

    /// [`Content::put_page`], taking the image: a page wholly within `len` keeps `img` as its
    /// image (no copy); the page holding the file's end is copied into an image of its size.
    pub(crate) fn put_page_owned(&mut self, page: u64, img: Box<[u8]>) {
        debug_assert_eq!(img.len(), PAGE_SIZE);
        let n = self.page_bytes(page);
        if n < PAGE_SIZE {
            self.store(page, 0, &img[..n]);
            return;
        }
        let old = self.pages.insert(page, img).map_or(0, |c| c.len());
        self.heap = self.heap - old as u64 + PAGE;
    }

    /// Bytes of page `page` within `len` (the page lies within `len`).
    fn page_bytes(&self, page: u64) -> usize {
        let start = page * PAGE;
        debug_assert!(start < self.len);
        usize::try_from(self.len - start).map_or(PAGE_SIZE, |l| l.min(PAGE_SIZE))
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
        if (page + 1) * PAGE > self.len {
            return None;
        }
        let stored = self.pages.get(&page).map_or(&[][..], |c| &c[..]);
        if stored.len() == PAGE_SIZE {
            return Some(cmp(stored, img));
        }
        // Bytes past a stored image are zeros.
        let mut page_img = [0u8; PAGE_SIZE];
        page_img[..stored.len()].copy_from_slice(stored);
        Some(cmp(&page_img, img))
    }

    /// Copies `src` to `offset` (within `len`); used when loading.
    pub(crate) fn put(&mut self, offset: u64, src: &[u8]) {
        let mut done = 0;
        while done < src.len() {
            let pos = offset + done as u64;
            let o = ix(pos % PAGE);
            let n = (PAGE_SIZE - o).min(src.len() - done);
            self.store(pos / PAGE, o, &src[done..done + n]);
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
        c.put_page(16, &img); // 65,536: the start of page 16
        let mut buf = vec![9u8; 10];
        c.read(65_530, &mut buf);
        assert_eq!(buf, [0, 0, 0, 0, 0, 0, 1, 7, 7, 7]);
        c.put(65_535, &[3, 3]);
        c.set_len(65_536).unwrap();
        c.set_len(70_000).unwrap();
        let mut buf = vec![9u8; 4];
        c.read(65_534, &mut buf);
        assert_eq!(buf, [0, 3, 0, 0], "bytes cut and regrown read as zeros");
        // Page 15's image (its last byte was stored) is all that is left.
        assert_eq!(c.heap_bytes(), PAGE);
    }

    #[test]
    fn content_is_sparse() {
        // A length of 2^52 (a byte written far away) allocates nothing until bytes are stored.
        let mut c = Content::new();
        c.set_len(1 << 52).unwrap();
        assert_eq!(c.heap_bytes(), 0);
        c.put((1 << 52) - 3, &[1, 2, 3]);
        assert_eq!(c.heap_bytes(), PAGE);
        let mut buf = [9u8; 5];
        c.read((1 << 52) - 5, &mut buf);
        assert_eq!(buf, [0, 0, 1, 2, 3]);
        c.set_len(10).unwrap();
        assert_eq!(c.heap_bytes(), 0);
    }

    #[test]
    fn committed_pages_are_moved_in_not_copied() {
        // A file growing page by page, as SQLite appends: each page's image is the one handed
        // over (the same allocation), and the heap counts a page per page.
        let mut c = Content::new();
        let mut kept = Vec::new();
        for (page, fill) in (0..20u64).zip(1u8..) {
            c.set_len((page + 1) * PAGE).unwrap();
            let img = vec![fill; PAGE_SIZE].into_boxed_slice();
            kept.push(img.as_ptr());
            c.put_page_owned(page, img);
            assert_eq!(c.heap_bytes(), (page + 1) * PAGE);
        }
        for (page, ptr) in kept.into_iter().enumerate() {
            assert_eq!(
                c.pages[&(page as u64)].as_ptr(),
                ptr,
                "page {page} was copied"
            );
        }
        // Rewriting a page replaces its image; the heap stays.
        c.put_page_owned(3, vec![9u8; PAGE_SIZE].into_boxed_slice());
        assert_eq!(c.heap_bytes(), 20 * PAGE);
        let mut buf = vec![0u8; 3 * PAGE_SIZE];
        c.read(2 * PAGE, &mut buf);
        assert!(buf[..PAGE_SIZE].iter().all(|&b| b == 3));
        assert!(buf[PAGE_SIZE..2 * PAGE_SIZE].iter().all(|&b| b == 9));
        assert!(buf[2 * PAGE_SIZE..].iter().all(|&b| b == 5));
        // The page holding the file's end is stored at its size, not as the page handed over.
        c.set_len(20 * PAGE + 100).unwrap();
        c.put_page_owned(20, vec![7u8; PAGE_SIZE].into_boxed_slice());
        assert_eq!(c.heap_bytes(), 20 * PAGE + 1024);
        let mut buf = vec![0u8; 200];
        c.read_padded(20 * PAGE, &mut buf);
        assert!(buf[..100].iter().all(|&b| b == 7));
        assert!(
            buf[100..].iter().all(|&b| b == 0),
            "bytes past the end read as zeros"
        );
    }

    #[test]
    fn small_files_cost_their_size() {
        // A 1 KiB file allocates 1 KiB (1,000 such files were 64 MiB of zeroed chunks).
        let mut c = Content::new();
        c.set_len(1000).unwrap();
        c.put(0, &[5; 1000]);
        assert_eq!(c.heap_bytes(), 1024);
        // Growing within a page reallocates its image to the power of two that holds the
        // bytes, and keeps them: page 0 grows to a whole page, page 1 takes 1 KiB.
        c.set_len(5000).unwrap();
        c.put(4000, &[6; 1000]);
        assert_eq!(c.heap_bytes(), 4096 + 1024);
        let mut buf = vec![9u8; 5000];
        c.read(0, &mut buf);
        assert!(buf[..1000].iter().all(|&b| b == 5));
        assert!(buf[1000..4000].iter().all(|&b| b == 0));
        assert!(buf[4000..].iter().all(|&b| b == 6));
        // Reading past a page's image (within len) gives zeros: past page 1's 1 KiB image,
        // and in a page with no image.
        c.set_len(60_000).unwrap();
        let mut buf = vec![9u8; 100];
        c.read(PAGE + 1500, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
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
