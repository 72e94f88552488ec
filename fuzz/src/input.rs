//! How an input's bytes become an image, options and operations.
//!
//! Layout: byte 0 chooses the image source. `tag % 4 == 3`: **raw** — u32 data length, the
//! data file, u32 log length, the log file, then the plan (libFuzzer mutates the image bytes
//! directly; the committed corpus holds real volumes this way). Otherwise **seed** — byte 1
//! chooses a seed volume, then field mutations ([`FieldMut`], re-encoded with valid hashes),
//! byte mutations ([`ByteMut`]) and the plan, all read with [`arbitrary`].

use arbitrary::{Arbitrary, Unstructured};
use opfs_vfs::format::{FrameKind, Run, FRAME_HEADER, PAGE, PAGE_SIZE};

use crate::tree::{Body, ChunkNode, EntryNode, Frame, MapNode, Tree};

/// Most field mutations, byte mutations and operations taken from one input.
pub const MAX_MUTATIONS: usize = 8;
/// Most operations per input.
pub const MAX_OPS: usize = 32;

/// A new value for a numeric field.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Val {
    /// The old value plus a small signed delta.
    Delta(i8),
    /// An edge value (see [`EDGES`]).
    Edge(u8),
    /// A value taken from another field of the image (ids, blocks, sizes, ...).
    Copy(u8),
    /// Any value.
    Raw(u64),
}

/// Edge values for numeric fields.
pub const EDGES: [u64; 24] = [
    0,
    1,
    2,
    3,
    63,
    64,
    255,
    256,
    2047,
    2048,
    2049,
    4095,
    4096,
    4097,
    u16::MAX as u64,
    u32::MAX as u64,
    1 << 32,
    1 << 40,
    (1 << 53) - 1,
    1 << 53,
    (1 << 53) + 1,
    i64::MAX as u64,
    u64::MAX - 1,
    u64::MAX,
];

impl Val {
    /// The new value, given the old one and the image's numbers.
    pub fn apply(self, old: u64, pool: &[u64]) -> u64 {
        match self {
            Val::Delta(d) => old.wrapping_add(i64::from(d) as u64),
            Val::Edge(i) => EDGES[usize::from(i) % EDGES.len()],
            Val::Copy(i) if !pool.is_empty() => pool[usize::from(i) % pool.len()],
            Val::Copy(_) => old,
            Val::Raw(v) => v,
        }
    }
}

/// A structural change, re-encoded with valid hashes by [`Tree::rebuild`]. Indices select
/// modulo the number present; a mutation with nothing to act on does nothing.
#[derive(Arbitrary, Clone, Debug)]
pub enum FieldMut {
    /// A superblock field (0 generation, 1 salt, 2 directory block, 3 directory length,
    /// 4 directory hash, 5 next file id, 6 next commit sequence, 7 block count) of the newest
    /// slot, or the other one.
    Super { other: bool, field: u8, val: Val },
    /// The newest superblock copied into the other slot with generation + `delta`.
    CopySuper { delta: i8 },
    /// A directory pointer's field (0 chunk key, 1 block, 2 length, 3 hash).
    DirPtr { chunk: u8, field: u8, val: Val },
    /// A directory entry removed, duplicated, or two swapped.
    DirEdit { chunk: u8, other: u8, op: ListOp },
    /// An entry's id (field 0) or size (field 1).
    Entry {
        chunk: u8,
        entry: u8,
        field: u8,
        val: Val,
    },
    /// An entry's name: another name of the image, or an edge case.
    Name { chunk: u8, entry: u8, name: u8 },
    /// An entry's inline bytes resized (size follows or not), or an entry made inline/blocks.
    Inline {
        chunk: u8,
        entry: u8,
        len: Val,
        keep_size: bool,
    },
    /// Entries of a chunk removed, duplicated, swapped.
    EntryEdit {
        chunk: u8,
        entry: u8,
        other: u8,
        op: ListOp,
    },
    /// A map pointer's field (0 key, 1 block, 2 length, 3 hash) in an entry.
    MapPtr { map: u8, field: u8, val: Val },
    /// Map pointers of an entry removed, duplicated, swapped.
    MapEdit { map: u8, other: u8, op: ListOp },
    /// A run's field (0 first page, 1 first block, 2 count: hashes added or removed, 3 one
    /// hash, 4 every hash recomputed from the blocks it now points at).
    Run {
        map: u8,
        run: u8,
        field: u8,
        val: Val,
    },
    /// Runs of a map chunk removed, duplicated, swapped.
    RunEdit {
        map: u8,
        run: u8,
        other: u8,
        op: ListOp,
    },
    /// A frame's field (0 kind, 1 file id, 2 arg, 3 salt, 4 session), the log re-chained.
    Frame { frame: u8, field: u8, val: Val },
    /// A payload byte of a frame changed (names, id lists, page bytes), or the payload cut.
    Payload {
        frame: u8,
        at: u16,
        byte: u8,
        cut: bool,
    },
    /// Frames removed, duplicated, swapped (re-chained).
    FrameEdit { frame: u8, other: u8, op: ListOp },
    /// A new frame inserted before frame `at` (re-chained).
    FrameInsert {
        at: u8,
        kind: u8,
        file_id: Val,
        arg: Val,
        ids: Vec<u8>,
    },
}

/// An edit of a list.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum ListOp {
    /// Remove the element.
    Remove,
    /// Insert a copy of it after it.
    Duplicate,
    /// Swap it with another.
    Swap,
}

fn edit<T: Clone>(v: &mut Vec<T>, i: u8, j: u8, op: ListOp) -> bool {
    if v.is_empty() {
        return false;
    }
    let i = usize::from(i) % v.len();
    let j = usize::from(j) % v.len();
    match op {
        ListOp::Remove => {
            v.remove(i);
        }
        ListOp::Duplicate => {
            let x = v[i].clone();
            v.insert(i + 1, x);
        }
        ListOp::Swap => v.swap(i, j),
    }
    true
}

/// Where a byte mutation lands.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Region {
    /// A superblock's 88 bytes (slot 0 or 1).
    Super(bool),
    /// A catalog blob (by index: directory, entry chunks, map chunks).
    Blob(u8),
    /// A log frame of the valid chain (header and payload).
    Frame(u8),
    /// A frame header's 56 bytes.
    FrameHeader(u8),
    /// Anywhere in the data file.
    Data,
    /// Anywhere in the log.
    Log,
}

/// Damage to the bytes (after the field mutations).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum ByteMut {
    /// XOR one byte.
    Flip { region: Region, at: u32, xor: u8 },
    /// Write a little-endian integer of 1, 2, 4 or 8 bytes.
    Int {
        region: Region,
        at: u32,
        width: u8,
        val: Val,
    },
    /// Zero a range.
    Zero { region: Region, at: u32, len: u16 },
    /// Cut a file to a fraction of its length (`log`: the log, else the data file), optionally
    /// at a block or frame boundary.
    Truncate { log: bool, frac: u16, aligned: bool },
    /// Copy a data block over another (or append it).
    CopyBlock { from: u16, to: u16 },
    /// Swap two data blocks.
    SwapBlocks { a: u16, b: u16 },
    /// Recompute both superblocks' checksums (after byte damage to them).
    FixSuperChecksums,
}

/// Which physical file and byte range a region is, if the image has it.
fn region_range(t: &Tree, data: &[u8], log: &[u8], r: Region) -> Option<(bool, usize, usize)> {
    let clamp = |len: usize, start: usize, n: usize| {
        (start < len).then(|| (start, n.min(len - start).max(1)))
    };
    match r {
        Region::Super(s) => {
            clamp(data.len(), usize::from(s) * PAGE_SIZE, 88).map(|(a, n)| (false, a, n))
        }
        Region::Blob(i) => {
            let b = t.blob_ranges();
            if b.is_empty() {
                return None;
            }
            let (s, n) = b[usize::from(i) % b.len()];
            clamp(
                data.len(),
                usize::try_from(s).ok()?,
                usize::try_from(n).ok()?,
            )
            .map(|(a, n)| (false, a, n))
        }
        Region::Frame(i) | Region::FrameHeader(i) => {
            if t.frame_offsets.is_empty() {
                return None;
            }
            let k = usize::from(i) % t.frame_offsets.len();
            let start = t.frame_offsets[k];
            let end = t.frame_offsets.get(k + 1).copied().unwrap_or(t.log_end);
            let n = if matches!(r, Region::FrameHeader(_)) {
                FRAME_HEADER
            } else {
                end.saturating_sub(start)
            };
            clamp(log.len(), start, n).map(|(a, n)| (true, a, n))
        }
        Region::Data => clamp(data.len(), 0, data.len()).map(|(a, n)| (false, a, n)),
        Region::Log => clamp(log.len(), 0, log.len()).map(|(a, n)| (true, a, n)),
    }
}

fn blobs_mut(t: &mut Tree) -> Vec<&mut ChunkNode> {
    t.dir.iter_mut().flatten().collect()
}

fn entry_mut(t: &mut Tree, chunk: u8, entry: u8) -> Option<(&mut ChunkNode, usize)> {
    let mut chunks = blobs_mut(t);
    if chunks.is_empty() {
        return None;
    }
    let n = chunks.len();
    let c = chunks.swap_remove(usize::from(chunk) % n);
    let len = c.entries.as_ref()?.len();
    if len == 0 {
        return None;
    }
    Some((c, usize::from(entry) % len))
}

/// The map nodes of all entries, flattened: (chunk index, entry index, map index).
fn map_index(t: &Tree) -> Vec<(usize, usize, usize)> {
    let mut v = Vec::new();
    for (ci, c) in t.dir.iter().flatten().enumerate() {
        for (ei, e) in c.entries.iter().flatten().enumerate() {
            if let Body::Blocks(maps) = &e.body {
                for mi in 0..maps.len() {
                    v.push((ci, ei, mi));
                }
            }
        }
    }
    v
}

fn entries_with_maps(t: &Tree) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for (ci, c) in t.dir.iter().flatten().enumerate() {
        for (ei, e) in c.entries.iter().flatten().enumerate() {
            if matches!(e.body, Body::Blocks(_)) {
                v.push((ci, ei));
            }
        }
    }
    v
}

fn chunk_entry(t: &mut Tree, ci: usize, ei: usize) -> (&mut ChunkNode, usize) {
    let c = &mut t.dir.as_mut().expect("indexed above")[ci];
    (c, ei)
}

fn map_mut(t: &mut Tree, pick: u8) -> Option<(&mut ChunkNode, usize, usize)> {
    let idx = map_index(t);
    if idx.is_empty() {
        return None;
    }
    let (ci, ei, mi) = idx[usize::from(pick) % idx.len()];
    let (c, ei) = chunk_entry(t, ci, ei);
    Some((c, ei, mi))
}

fn map_node(c: &mut ChunkNode, ei: usize, mi: usize) -> &mut MapNode {
    match &mut c.entries.as_mut().expect("indexed")[ei].body {
        Body::Blocks(maps) => &mut maps[mi],
        Body::Inline(_) => unreachable!("map_index lists block entries only"),
    }
}

/// Edge-case names (valid and invalid), besides the image's own.
const NAMES: [&str; 5] = ["", "a\0b", "x", "é/..//", "main.db-journal"];

/// Applies one field mutation to the tree (marking what must be re-encoded).
pub fn apply_field(t: &mut Tree, m: &FieldMut, pool: &[u64], data: &[u8]) {
    match *m {
        FieldMut::Super { other, field, val } => {
            let Some(cur) = t.cur else { return };
            let s = if other { 1 - cur } else { cur };
            let Some(sb) = &mut t.slots[s] else { return };
            let f = match field % 8 {
                0 => &mut sb.generation,
                1 => &mut sb.volume_salt,
                2 => &mut sb.directory.block,
                3 => {
                    sb.directory.len = val.apply(u64::from(sb.directory.len), pool) as u32;
                    t.sb_dirty[s] = true;
                    return;
                }
                4 => &mut sb.directory.hash,
                5 => &mut sb.next_file_id,
                6 => &mut sb.next_txn_seq,
                _ => &mut sb.block_count,
            };
            *f = val.apply(*f, pool);
            t.sb_dirty[s] = true;
        }
        FieldMut::CopySuper { delta } => {
            let Some(cur) = t.cur else { return };
            let Some(mut sb) = t.slots[cur].clone() else {
                return;
            };
            sb.generation = sb.generation.wrapping_add(i64::from(delta) as u64);
            t.slots[1 - cur] = Some(sb);
            t.sb_dirty[1 - cur] = true;
        }
        FieldMut::DirPtr { chunk, field, val } => {
            let mut chunks = blobs_mut(t);
            if chunks.is_empty() {
                return;
            }
            let n = chunks.len();
            let c = chunks.swap_remove(usize::from(chunk) % n);
            match field % 4 {
                0 => c.key = val.apply(c.key, pool),
                1 => c.ptr.block = val.apply(c.ptr.block, pool),
                2 => c.ptr.len = val.apply(u64::from(c.ptr.len), pool) as u32,
                _ => c.ptr.hash = val.apply(c.ptr.hash, pool),
            }
            t.dir_dirty = true;
        }
        FieldMut::DirEdit { chunk, other, op } => {
            if let Some(d) = &mut t.dir {
                t.dir_dirty |= edit(d, chunk, other, op);
            }
        }
        FieldMut::Entry {
            chunk,
            entry,
            field,
            val,
        } => {
            let Some((c, i)) = entry_mut(t, chunk, entry) else {
                return;
            };
            let e = &mut c.entries.as_mut().expect("checked")[i];
            if field % 2 == 0 {
                e.id = val.apply(e.id, pool);
            } else {
                e.size = val.apply(e.size, pool);
            }
            c.dirty = true;
        }
        FieldMut::Name { chunk, entry, name } => {
            let mut names = t.names();
            names.extend(NAMES.iter().map(|s| s.to_string()));
            names.push("n".repeat(1024));
            names.push("n".repeat(1025));
            let new = names[usize::from(name) % names.len()].clone();
            let Some((c, i)) = entry_mut(t, chunk, entry) else {
                return;
            };
            c.entries.as_mut().expect("checked")[i].name = new;
            c.dirty = true;
        }
        FieldMut::Inline {
            chunk,
            entry,
            len,
            keep_size,
        } => {
            let Some((c, i)) = entry_mut(t, chunk, entry) else {
                return;
            };
            let e: &mut EntryNode = &mut c.entries.as_mut().expect("checked")[i];
            let old = match &e.body {
                Body::Inline(b) => b.len() as u64,
                Body::Blocks(_) => e.size,
            };
            // Bounded: the encoder writes the bytes.
            let n = len.apply(old, pool).min(8192) as usize;
            match &mut e.body {
                Body::Inline(_) if n == 0 && !keep_size => e.body = Body::Blocks(Vec::new()),
                Body::Inline(b) => b.resize(n, 0xA5),
                Body::Blocks(_) => e.body = Body::Inline(vec![0x5A; n]),
            }
            if !keep_size {
                e.size = n as u64;
            }
            c.dirty = true;
        }
        FieldMut::EntryEdit {
            chunk,
            entry,
            other,
            op,
        } => {
            let mut chunks = blobs_mut(t);
            if chunks.is_empty() {
                return;
            }
            let n = chunks.len();
            let c = chunks.swap_remove(usize::from(chunk) % n);
            if let Some(es) = &mut c.entries {
                c.dirty |= edit(es, entry, other, op);
            }
        }
        FieldMut::MapPtr { map, field, val } => {
            let Some((c, ei, mi)) = map_mut(t, map) else {
                return;
            };
            let m = map_node(c, ei, mi);
            match field % 4 {
                0 => m.key = val.apply(m.key, pool),
                1 => m.ptr.block = val.apply(m.ptr.block, pool),
                2 => m.ptr.len = val.apply(u64::from(m.ptr.len), pool) as u32,
                _ => m.ptr.hash = val.apply(m.ptr.hash, pool),
            }
            c.dirty = true;
        }
        FieldMut::MapEdit { map, other, op } => {
            let idx = entries_with_maps(t);
            if idx.is_empty() {
                return;
            }
            let (ci, ei) = idx[usize::from(map) % idx.len()];
            let (c, ei) = chunk_entry(t, ci, ei);
            if let Body::Blocks(maps) = &mut c.entries.as_mut().expect("indexed")[ei].body {
                c.dirty |= edit(maps, map / 7, other, op);
            }
        }
        FieldMut::Run {
            map,
            run,
            field,
            val,
        } => {
            let Some((c, ei, mi)) = map_mut(t, map) else {
                return;
            };
            let m = map_node(c, ei, mi);
            let Some(runs) = &mut m.runs else { return };
            if runs.is_empty() {
                return;
            }
            let n = runs.len();
            let r: &mut Run = &mut runs[usize::from(run) % n];
            match field % 5 {
                0 => r.first = val.apply(u64::from(r.first), pool) as u16,
                1 => r.block = val.apply(r.block, pool),
                2 => {
                    let want = val.apply(r.hashes.len() as u64, pool).min(300) as usize;
                    let last = r.hashes.last().copied().unwrap_or(0);
                    r.hashes.resize(want, last);
                }
                3 => {
                    if !r.hashes.is_empty() {
                        let k = usize::from(run) % r.hashes.len();
                        r.hashes[k] = val.apply(r.hashes[k], pool);
                    }
                }
                _ => rehash_run(r, data),
            }
            m.dirty = true;
            c.dirty = true;
        }
        FieldMut::RunEdit {
            map,
            run,
            other,
            op,
        } => {
            let Some((c, ei, mi)) = map_mut(t, map) else {
                return;
            };
            let m = map_node(c, ei, mi);
            if let Some(runs) = &mut m.runs {
                if edit(runs, run, other, op) {
                    m.dirty = true;
                    c.dirty = true;
                }
            }
        }
        FieldMut::Frame { frame, field, val } => {
            if t.frames.is_empty() {
                return;
            }
            let n = t.frames.len();
            let f: &mut Frame = &mut t.frames[usize::from(frame) % n];
            match field % 5 {
                0 => f.kind = kind_of(val.apply(f.kind as u64, pool)),
                1 => f.file_id = val.apply(f.file_id, pool),
                2 => f.arg = val.apply(f.arg, pool),
                3 => f.salt = val.apply(f.salt, pool),
                _ => f.session = val.apply(f.session, pool),
            }
            t.log_dirty = true;
        }
        FieldMut::Payload {
            frame,
            at,
            byte,
            cut,
        } => {
            if t.frames.is_empty() {
                return;
            }
            let n = t.frames.len();
            let f = &mut t.frames[usize::from(frame) % n];
            if f.payload.is_empty() {
                f.payload.push(byte);
            } else {
                let k = usize::from(at) % f.payload.len();
                if cut {
                    f.payload.truncate(k);
                } else {
                    f.payload[k] = byte;
                }
            }
            t.log_dirty = true;
        }
        FieldMut::FrameEdit { frame, other, op } => {
            t.log_dirty |= edit(&mut t.frames, frame, other, op);
        }
        FieldMut::FrameInsert {
            at,
            kind,
            file_id,
            arg,
            ref ids,
        } => {
            let n = t.frames.len();
            let at = usize::from(at) % (n + 1);
            let kind = kind_of(u64::from(kind));
            let near = t.frames.get(at.saturating_sub(1)).cloned();
            let (salt, session, id0, arg0) =
                near.map_or((t.salt, 0, 1, 0), |f| (f.salt, f.session, f.file_id, f.arg));
            let payload = match kind {
                FrameKind::Commit | FrameKind::Abort => ids
                    .iter()
                    .take(8)
                    .flat_map(|&i| u64::from(i).to_le_bytes())
                    .collect(),
                FrameKind::Create | FrameKind::Rename => ids.iter().take(64).copied().collect(),
                FrameKind::Page => ids.iter().copied().cycle().take(PAGE_SIZE).collect(),
                _ => Vec::new(),
            };
            t.frames.insert(
                at,
                Frame {
                    kind,
                    file_id: file_id.apply(id0, pool),
                    arg: arg.apply(arg0, pool),
                    session,
                    salt,
                    payload,
                },
            );
            t.log_dirty = true;
        }
    }
}

fn kind_of(v: u64) -> FrameKind {
    match v % 8 {
        0 => FrameKind::Create,
        1 => FrameKind::Rename,
        2 => FrameKind::Delete,
        3 => FrameKind::SetLen,
        4 => FrameKind::Page,
        5 => FrameKind::Commit,
        6 => FrameKind::Abort,
        _ => FrameKind::Epoch,
    }
}

/// Recomputes a run's hashes from the blocks it points at (so a moved run passes the hash
/// checks and exercises the overlap and bounds checks instead).
fn rehash_run(r: &mut Run, data: &[u8]) {
    for (k, h) in r.hashes.iter_mut().enumerate() {
        let Some(start) = r
            .block
            .checked_add(k as u64)
            .and_then(|b| b.checked_mul(PAGE))
            .and_then(|s| usize::try_from(s).ok())
        else {
            return;
        };
        let mut blk = [0u8; PAGE_SIZE];
        if let Some(src) = data.get(start..) {
            let n = src.len().min(PAGE_SIZE);
            blk[..n].copy_from_slice(&src[..n]);
        }
        *h = opfs_vfs_hash(&blk);
    }
}

/// xxh3-64, as the format uses it (via a one-block blob pointer, to avoid a second copy of
/// the hash crate).
fn opfs_vfs_hash(bytes: &[u8]) -> u64 {
    opfs_vfs::format::BlobPtr::of(0, bytes).map_or(0, |p| p.hash)
}

/// Applies one byte mutation.
pub fn apply_bytes(t: &Tree, m: &ByteMut, pool: &[u64], data: &mut Vec<u8>, log: &mut Vec<u8>) {
    let pick = |r: Region, at: u32, data: &[u8], log: &[u8]| {
        region_range(t, data, log, r).map(|(is_log, s, n)| (is_log, s + at as usize % n))
    };
    match *m {
        ByteMut::Flip { region, at, xor } => {
            if let Some((is_log, i)) = pick(region, at, data, log) {
                let f = if is_log { log } else { data };
                f[i] ^= xor.max(1);
            }
        }
        ByteMut::Int {
            region,
            at,
            width,
            val,
        } => {
            if let Some((is_log, i)) = pick(region, at, data, log) {
                let f = if is_log { log } else { data };
                let w = [1usize, 2, 4, 8][usize::from(width) % 4].min(f.len() - i);
                let mut old = [0u8; 8];
                old[..w].copy_from_slice(&f[i..i + w]);
                let new = val.apply(u64::from_le_bytes(old), pool).to_le_bytes();
                f[i..i + w].copy_from_slice(&new[..w]);
            }
        }
        ByteMut::Zero { region, at, len } => {
            if let Some((is_log, i)) = pick(region, at, data, log) {
                let f = if is_log { log } else { data };
                let end = (i + usize::from(len)).min(f.len());
                f[i..end].fill(0);
            }
        }
        ByteMut::Truncate {
            log: l,
            frac,
            aligned,
        } => {
            let f = if l { &mut *log } else { &mut *data };
            let mut n = f.len() * usize::from(frac) / 65536;
            if aligned {
                if l {
                    n = t
                        .frame_offsets
                        .iter()
                        .copied()
                        .filter(|&o| o <= n)
                        .max()
                        .unwrap_or(0);
                } else {
                    n -= n % PAGE_SIZE;
                }
            }
            f.truncate(n);
        }
        ByteMut::CopyBlock { from, to } => {
            let blocks = data.len() / PAGE_SIZE;
            if blocks == 0 {
                return;
            }
            let a = usize::from(from) % blocks;
            let b = usize::from(to) % (blocks + 1);
            let blk = data[a * PAGE_SIZE..(a + 1) * PAGE_SIZE].to_vec();
            crate::tree::write_at(data, b * PAGE_SIZE, &blk);
        }
        ByteMut::SwapBlocks { a, b } => {
            let blocks = data.len() / PAGE_SIZE;
            if blocks < 2 {
                return;
            }
            let (a, b) = (usize::from(a) % blocks, usize::from(b) % blocks);
            if a != b {
                let (lo, hi) = (a.min(b), a.max(b));
                let (x, y) = data.split_at_mut(hi * PAGE_SIZE);
                x[lo * PAGE_SIZE..(lo + 1) * PAGE_SIZE].swap_with_slice(&mut y[..PAGE_SIZE]);
            }
        }
        ByteMut::FixSuperChecksums => {
            for s in 0..2 {
                let at = s * PAGE_SIZE;
                if data.len() >= at + 88 {
                    let h = opfs_vfs_xxh3(&data[at..at + 80]);
                    data[at + 80..at + 88].copy_from_slice(&h.to_le_bytes());
                }
            }
        }
    }
}

fn opfs_vfs_xxh3(bytes: &[u8]) -> u64 {
    opfs_vfs_hash(bytes)
}

/// Mount options the input chooses.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct Opts {
    /// Disk mode (else Memory).
    pub disk: bool,
    /// `% 3`: 0 Strict, 1 Relaxed, 2 Balanced. `/ 3 % 2 == 1`: a deadline hook is installed
    /// (as the browser's timer does), so due checkpoints wait for `poll` up to
    /// `checkpoint_max_bytes` (4 × `checkpoint_bytes` here).
    pub durability: u8,
    /// Small write buffer (8 KiB: open transactions spill to the log) and small caches.
    pub small_buffers: bool,
    /// Checkpoint after 32 KiB of log (else 16 MiB).
    pub eager_checkpoints: bool,
    /// Skip the checkpoint at close.
    pub no_close_checkpoint: bool,
}

/// Offsets and lengths for operations.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Off {
    /// A byte offset below 64 KiB.
    Small(u16),
    /// Page `p`, plus a few bytes.
    Page(u8, u16),
    /// Relative to the file's length.
    End(i16),
    /// Far away: 2^(32 + n % 22) (sparse files; 2^53 is the limit).
    Far(u8),
}

impl Off {
    /// The offset, given the file's current length.
    pub fn get(self, len: u64) -> u64 {
        match self {
            Off::Small(v) => u64::from(v),
            Off::Page(p, o) => u64::from(p) * PAGE + u64::from(o % 4096),
            Off::End(d) => len.saturating_add_signed(i64::from(d)),
            Off::Far(n) => 1u64 << (32 + n % 22),
        }
    }
}

/// One operation on the mounted volume. Files are chosen by index into the sorted list.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Op {
    /// List every file and read each one (bounded: see the harness).
    ReadAll,
    /// Read `len` bytes at an offset.
    Read { file: u8, at: Off, len: u16 },
    /// Write `len` bytes of `byte` (varied per position) at an offset.
    Write {
        file: u8,
        at: Off,
        len: u16,
        byte: u8,
    },
    /// Create a file (name from a small table).
    Create { name: u8 },
    /// Resize.
    SetLen { file: u8, len: Off },
    /// Rename to a name from the table (or to another file's name).
    Rename { file: u8, to: u8 },
    /// Delete.
    Delete { file: u8 },
    /// Commit everything (full or write-only sync).
    Commit { write_only: bool },
    /// Roll everything back.
    Rollback,
    /// Commit and make durable.
    Flush,
    /// Checkpoint now.
    Checkpoint,
    /// Checkpoint with relocation.
    Compact,
    /// Do what is due.
    Poll,
    /// Close and mount again (same options).
    Remount,
    /// Crash (no flush, nothing more written) and mount again.
    Crash,
    /// `check_integrity()`.
    Integrity,
}

/// What one input asks for.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Options.
    pub opts: Opts,
    /// Operations.
    pub ops: Vec<Op>,
}

impl<'a> Arbitrary<'a> for Plan {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let opts = Opts::arbitrary(u)?;
        let mut ops = Vec::new();
        for op in u.arbitrary_iter::<Op>()? {
            ops.push(op?);
            if ops.len() >= MAX_OPS {
                break;
            }
        }
        Ok(Plan { opts, ops })
    }
}

/// A decoded input: the image and the plan.
#[derive(Debug)]
pub struct Decoded {
    /// `volume.data`.
    pub data: Vec<u8>,
    /// `volume.log`.
    pub log: Vec<u8>,
    /// Options and operations.
    pub plan: Plan,
    /// Which seed, if any (for reports).
    pub seed: Option<usize>,
}

fn take_part<'a>(b: &mut &'a [u8]) -> &'a [u8] {
    let n = b.get(..4).map_or(0, |s| {
        u32::from_le_bytes(s.try_into().unwrap_or([0; 4])) as usize
    });
    let rest = b.get(4..).unwrap_or(&[]);
    let n = n.min(rest.len());
    *b = &rest[n..];
    &rest[..n]
}

/// Decodes an input (any bytes decode to something).
pub fn decode(input: &[u8]) -> Decoded {
    let tag = input.first().copied().unwrap_or(0);
    let seeds = crate::seeds::seeds();
    if tag % 4 == 3 || seeds.is_empty() {
        let mut b = input.get(1..).unwrap_or(&[]);
        let data = take_part(&mut b).to_vec();
        let log = take_part(&mut b).to_vec();
        let mut u = Unstructured::new(b);
        let plan = Plan::arbitrary(&mut u).unwrap_or_else(|_| default_plan());
        return Decoded {
            data,
            log,
            plan,
            seed: None,
        };
    }
    let index = usize::from(input.get(1).copied().unwrap_or(0)) % seeds.len();
    let s = &seeds[index];
    let mut u = Unstructured::new(input.get(2..).unwrap_or(&[]));
    let mut data = s.seed.data.clone();
    let mut log = s.seed.log.clone();
    let mut fields = Vec::new();
    let mut bytes = Vec::new();
    if let Ok(it) = u.arbitrary_iter::<FieldMut>() {
        for m in it.take(MAX_MUTATIONS).flatten() {
            fields.push(m);
        }
    }
    if let Ok(it) = u.arbitrary_iter::<ByteMut>() {
        for m in it.take(MAX_MUTATIONS).flatten() {
            bytes.push(m);
        }
    }
    let plan = Plan::arbitrary(&mut u).unwrap_or_else(|_| default_plan());
    if !fields.is_empty() {
        let mut tree = s.tree.clone();
        let pool = tree.numbers();
        for m in &fields {
            apply_field(&mut tree, m, &pool, &data);
        }
        tree.rebuild(&mut data, &mut log);
        let pool = tree.numbers();
        for m in &bytes {
            apply_bytes(&tree, m, &pool, &mut data, &mut log);
        }
    } else {
        let pool = s.tree.numbers();
        for m in &bytes {
            apply_bytes(&s.tree, m, &pool, &mut data, &mut log);
        }
    }
    Decoded {
        data,
        log,
        plan,
        seed: Some(index),
    }
}

fn default_plan() -> Plan {
    Plan {
        opts: Opts {
            disk: false,
            durability: 0,
            small_buffers: false,
            eager_checkpoints: false,
            no_close_checkpoint: false,
        },
        ops: vec![Op::ReadAll, Op::Integrity, Op::Remount, Op::ReadAll],
    }
}

/// Encodes a raw-mode input (what the corpus generator writes for a real volume).
pub fn encode_raw(data: &[u8], log: &[u8], plan_bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![3u8];
    for part in [data, log] {
        out.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(part);
    }
    out.extend_from_slice(plan_bytes);
    out
}

/// Encodes a seed-mode input with no mutation (the generator's starting points).
pub fn encode_seed(index: u8, plan_bytes: &[u8]) -> Vec<u8> {
    // Tag 0, the seed index, then "no field mutation" and "no byte mutation" (arbitrary's
    // iterators stop at a zero byte... or at the end), then the plan.
    let mut out = vec![0u8, index, 0, 0];
    out.extend_from_slice(plan_bytes);
    out
}
