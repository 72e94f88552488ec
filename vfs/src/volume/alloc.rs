//! Block allocation in the data file.
//!
//! Invariants (checked by `Volume::check_invariants`):
//! - `free` holds blocks that neither the current checkpoint (the superblock on disk) nor the
//!   live state references: a checkpoint may write them without endangering what a crash would
//!   mount.
//! - `pending` holds blocks the current checkpoint still references but the live state no
//!   longer does (pages cut or deleted since, blobs replaced): they become free only after the
//!   next superblock is durable. Reusing them earlier could overwrite what recovery needs.
//! - Blocks 0 and 1 (superblocks) are never in either set; every block below `count` is exactly
//!   one of: superblock, referenced, free, pending.

use std::collections::BTreeMap;

use crate::format::SUPER_SLOTS;

/// A set of block numbers stored as disjoint, non-adjacent ranges `start → end` (exclusive).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RangeSet {
    ranges: BTreeMap<u64, u64>,
    len: u64,
}

impl RangeSet {
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn contains(&self, b: u64) -> bool {
        self.ranges
            .range(..=b)
            .next_back()
            .is_some_and(|(_, &e)| b < e)
    }

    /// Adds `[start, end)`; returns false (adding nothing) if any block is already in the set.
    pub(crate) fn insert(&mut self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        if let Some((_, &e)) = self.ranges.range(..end).next_back() {
            if e > start {
                return false;
            }
        }
        let mut s = start;
        let mut e = end;
        if let Some((&ps, &pe)) = self.ranges.range(..start).next_back() {
            if pe == start {
                self.ranges.remove(&ps);
                s = ps;
            }
        }
        if let Some(&ne) = self.ranges.get(&end) {
            self.ranges.remove(&end);
            e = ne;
        }
        self.ranges.insert(s, e);
        self.len += end - start;
        true
    }

    /// Removes `b` if present.
    #[cfg(test)]
    pub(crate) fn remove(&mut self, b: u64) -> bool {
        let Some((&s, &e)) = self.ranges.range(..=b).next_back() else {
            return false;
        };
        if b >= e {
            return false;
        }
        self.ranges.remove(&s);
        if s < b {
            self.ranges.insert(s, b);
        }
        if b + 1 < e {
            self.ranges.insert(b + 1, e);
        }
        self.len -= 1;
        true
    }

    /// Removes every member at or beyond `at`, one range at a time (never one block at a
    /// time: a free tail can be 2^40 blocks long when a hostile superblock claims such a block
    /// count).
    pub(crate) fn remove_from(&mut self, at: u64) {
        if let Some((&s, &e)) = self.ranges.range(..at).next_back() {
            if e > at {
                self.ranges.insert(s, at);
                self.len -= e - at;
            }
        }
        for (s, e) in self.ranges.split_off(&at) {
            self.len -= e - s;
        }
    }

    /// Ranges in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ranges.iter().map(|(&s, &e)| (s, e))
    }

    /// The last range, if it ends at `end`.
    pub(crate) fn tail_ending_at(&self, end: u64) -> Option<(u64, u64)> {
        self.ranges
            .iter()
            .next_back()
            .map(|(&s, &e)| (s, e))
            .filter(|&(_, e)| e == end)
    }
}

/// Free space of the data file.
#[derive(Clone, Debug, Default)]
pub(crate) struct Allocator {
    /// Data file length in blocks as the engine uses it (the physical file may be longer after
    /// a failed truncation; never shorter).
    pub(crate) count: u64,
    pub(crate) free: RangeSet,
    pub(crate) pending: RangeSet,
}

impl Allocator {
    pub(crate) fn new(count: u64) -> Self {
        Self {
            count: count.max(SUPER_SLOTS),
            free: RangeSet::default(),
            pending: RangeSet::default(),
        }
    }

    /// `n` consecutive blocks: the first free run below `limit` that fits (`u64::MAX`: any;
    /// a compaction passes its target), else at the end of the file.
    pub(crate) fn alloc_run_below(&mut self, n: u64, limit: u64) -> u64 {
        if n == 0 {
            return self.count;
        }
        if let Some(s) = take_first_fit(&mut self.free, n, limit) {
            return s;
        }
        let s = self.count;
        self.count += n;
        s
    }

    /// Places blobs of `sizes` blocks each: back to back in one run when one fits below
    /// `limit` (`u64::MAX`: always, at the end of the file if no free run fits), else each
    /// where it fits first (a compaction's target may leave only small holes below it, and
    /// the catalog must still land there). Returns each blob's first block, in order.
    ///
    /// Why: a checkpoint's map chunks placed one by one took the single blocks its
    /// predecessors freed, all over the file; a 1 GiB volume's ~1,000 map chunks then needed
    /// 252 read calls at mount (~64 µs each in Firefox). A cluster per checkpoint leaves the
    /// mount about one call per checkpoint whose chunks are still live, and the checkpoint
    /// itself writes the cluster in one call (up to 1 MiB).
    pub(crate) fn alloc_cluster(&mut self, sizes: &[u64], limit: u64) -> Vec<u64> {
        let total: u64 = sizes.iter().sum();
        if total == 0 {
            return vec![self.count; sizes.len()];
        }
        let start = if limit == u64::MAX {
            Some(self.alloc_run_below(total, limit))
        } else {
            take_first_fit(&mut self.free, total, limit)
        };
        match start {
            Some(mut at) => sizes
                .iter()
                .map(|&n| {
                    let here = at;
                    at += n;
                    here
                })
                .collect(),
            None => sizes
                .iter()
                .map(|&n| self.alloc_run_below(n, limit))
                .collect(),
        }
    }

    /// Blocks `[start, end)` hold tail links (beyond the checkpoint's extent, or free blocks of
    /// the extent a failed truncation left): no checkpoint may allocate them while they
    /// matter. Takes them out of the free set and extends the extent over them.
    pub(crate) fn claim(&mut self, start: u64, end: u64) {
        if start < end {
            // By ranges, not blocks (the links of an epoch can be 2^18 blocks and more).
            let after: Vec<(u64, u64)> = self
                .free
                .iter()
                .filter(|&(_, e)| e > end)
                .map(|(s, e)| (s.max(end), e))
                .collect();
            self.free.remove_from(start);
            for (s, e) in after {
                self.free.insert(s, e);
            }
        }
        self.count = self.count.max(end);
    }

    /// A block leaves the live state: free after the next checkpoint.
    pub(crate) fn release_later(&mut self, start: u64, n: u64) {
        let ok = self.pending.insert(start, start + n);
        debug_assert!(ok, "block {start}+{n} released twice");
    }

    /// A block allocated by an unfinished checkpoint goes back.
    pub(crate) fn release_now(&mut self, start: u64, n: u64) {
        let ok = self.free.insert(start, start + n);
        debug_assert!(ok, "block {start}+{n} freed twice");
    }

    /// After a superblock switch: everything pending is free.
    pub(crate) fn checkpoint_done(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for (s, e) in pending.iter() {
            self.free.insert(s, e);
        }
    }

    /// Where the file may be cut: the start of the free range ending at `count`, if that range
    /// is at least `min_blocks` long (a shorter tail is not worth a `truncate()`).
    pub(crate) fn trim_point(&self, min_blocks: u64) -> Option<u64> {
        self.free
            .tail_ending_at(self.count)
            .map(|(s, _)| s.max(SUPER_SLOTS))
            .filter(|&s| self.count - s >= min_blocks)
    }

    /// Forgets the free blocks at and after `new_count` and shrinks the file's extent.
    pub(crate) fn trim_to(&mut self, new_count: u64) {
        if let Some((s, _)) = self.free.tail_ending_at(self.count) {
            if s <= new_count {
                // One range operation: block by block, a hostile superblock's block count of
                // 2^40 made the checkpoint at close loop for hours (found by fuzz/).
                self.free.remove_from(new_count);
                self.count = new_count.max(SUPER_SLOTS);
            }
        }
    }
}

/// First fit of `n` consecutive members below `limit`, removed from the set.
fn take_first_fit(set: &mut RangeSet, n: u64, limit: u64) -> Option<u64> {
    let (s, e) = set
        .ranges
        .iter()
        .map(|(&s, &e)| (s, e))
        .find(|&(s, e)| e.min(limit) > s && e.min(limit) - s >= n)?;
    set.ranges.remove(&s);
    if s + n < e {
        set.ranges.insert(s + n, e);
    }
    set.len -= n;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_set_merges_and_splits() {
        let mut r = RangeSet::default();
        assert!(r.insert(5, 8));
        assert!(r.insert(8, 10));
        assert!(r.insert(2, 5));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(2, 10)]);
        assert!(!r.insert(9, 11), "overlap refused");
        assert!(r.remove(4));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(2, 4), (5, 10)]);
        assert_eq!(r.len(), 7);
        assert!(r.contains(9) && !r.contains(4) && !r.contains(10));
        assert_eq!(take_first_fit(&mut r, 3, u64::MAX), Some(5));
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(2, 4), (8, 10)]);
        assert_eq!(take_first_fit(&mut r, 3, u64::MAX), None);
        assert_eq!(take_first_fit(&mut r, 2, 9), Some(2));
        assert_eq!(take_first_fit(&mut r, 2, 9), None, "limit respected");
    }

    #[test]
    fn a_cluster_is_one_run_where_it_fits_else_first_fits() {
        let mut a = Allocator::new(100);
        // One-block holes at 10, 20, 30, and a run of 4 at 50.
        for s in [10, 20, 30] {
            a.release_now(s, 1);
        }
        a.release_now(50, 4);
        assert_eq!(a.alloc_cluster(&[1, 2, 1], u64::MAX), vec![50, 51, 53]);
        // Nothing fits 4 blocks any more: past the end.
        assert_eq!(a.alloc_cluster(&[2, 2], u64::MAX), vec![100, 102]);
        assert_eq!(a.count, 104);
        // Below a compaction's target with only one-block holes: each blob first fits.
        assert_eq!(a.alloc_cluster(&[1, 1], 40), vec![10, 20]);
        assert_eq!(a.alloc_cluster(&[], 40), Vec::<u64>::new());
        assert_eq!(a.free.iter().collect::<Vec<_>>(), vec![(30, 31)]);
    }

    #[test]
    fn allocator_frees_pending_only_after_checkpoint_and_trims_tail() {
        let mut a = Allocator::new(2);
        let x = a.alloc_run_below(4, u64::MAX);
        assert_eq!((x, a.count), (2, 6));
        a.release_later(4, 2);
        assert_eq!(
            a.alloc_run_below(1, u64::MAX),
            6,
            "pending blocks are not reused"
        );
        a.checkpoint_done();
        assert_eq!(a.trim_point(1), None, "block 6 is in use at the end");
        assert_eq!(a.alloc_run_below(2, u64::MAX), 4);
        a.release_later(4, 3);
        a.checkpoint_done();
        assert_eq!(a.trim_point(3), Some(4));
        assert_eq!(a.trim_point(4), None, "a tail shorter than asked is kept");
        a.trim_to(4);
        assert_eq!((a.count, a.free.len()), (4, 0));

        // A huge free tail is cut in one step, and a range straddling the cut keeps its head.
        let mut a = Allocator::new(1 << 40);
        assert!(a.free.insert(3, 1 << 40));
        a.trim_to(10);
        assert_eq!(a.count, 10);
        assert_eq!(a.free.iter().collect::<Vec<_>>(), vec![(3, 10)]);
        assert_eq!(a.free.len(), 7);
    }
}
