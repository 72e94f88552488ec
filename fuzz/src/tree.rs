//! A volume image parsed into its structures (format version 2, `vfs/DESIGN.md`), so that
//! mutations can change *fields* and re-encode them with valid hashes: superblocks, the
//! directory, entry chunks, map chunks and log frames. Anything that does not parse is kept as
//! bytes and left alone.
//!
//! [`Tree::rebuild`] writes the changed structures back: a blob that still fits its old blocks
//! is rewritten in place, a grown one is appended at the end of the data file; parents get the
//! new pointer and hash up to the superblock (re-encoded with its checksum); the log is
//! re-encoded and re-chained from the first changed frame (the bytes after the valid chain are
//! kept after it).

use opfs_vfs::format::{
    decode_directory, decode_entry_chunk, decode_frame, decode_map_chunk, encode_directory,
    encode_entry_chunk, encode_frame, encode_map_chunk, BlobPtr, Contents, Entry, FrameKind, Run,
    Slot, Superblock, FRAME_HEADER, PAGE, PAGE_SIZE,
};

/// A map chunk: its pointer (as its entry has it) and its runs, if they decoded.
#[derive(Clone, Debug)]
pub struct MapNode {
    /// Chunk index (page / 256).
    pub key: u64,
    /// Where it is.
    pub ptr: BlobPtr,
    /// Its runs.
    pub runs: Option<Vec<Run>>,
    /// Changed: re-encode.
    pub dirty: bool,
}

/// What a catalog entry holds.
#[derive(Clone, Debug)]
pub enum Body {
    /// Inline bytes.
    Inline(Vec<u8>),
    /// Map chunks.
    Blocks(Vec<MapNode>),
}

/// A catalog entry.
#[derive(Clone, Debug)]
pub struct EntryNode {
    /// File id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Size.
    pub size: u64,
    /// Contents.
    pub body: Body,
}

/// An entry chunk.
#[derive(Clone, Debug)]
pub struct ChunkNode {
    /// Chunk index (id / 64).
    pub key: u64,
    /// Where it is (as the directory has it).
    pub ptr: BlobPtr,
    /// Its entries, if they decoded.
    pub entries: Option<Vec<EntryNode>>,
    /// Changed: re-encode.
    pub dirty: bool,
}

/// A log frame of the valid chain.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Kind.
    pub kind: FrameKind,
    /// File id.
    pub file_id: u64,
    /// Page, length, sequence or generation.
    pub arg: u64,
    /// The writer's session nonce.
    pub session: u64,
    /// The salt written into the frame.
    pub salt: u64,
    /// Payload.
    pub payload: Vec<u8>,
}

/// A parsed image.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    /// Both superblock slots, where valid.
    pub slots: [Option<Superblock>; 2],
    /// Slot of the newest valid superblock.
    pub cur: Option<usize>,
    /// Slots to re-encode.
    pub sb_dirty: [bool; 2],
    /// The newest superblock's directory, if it decoded.
    pub dir: Option<Vec<ChunkNode>>,
    /// Directory changed: re-encode.
    pub dir_dirty: bool,
    /// The valid chain of log frames.
    pub frames: Vec<Frame>,
    /// Byte offset of each frame in the log as parsed.
    pub frame_offsets: Vec<usize>,
    /// Where the valid chain ends.
    pub log_end: usize,
    /// The salt of the chain's first frame (its chain seed).
    pub salt: u64,
    /// Frames changed: re-encode the log.
    pub log_dirty: bool,
}

fn blob<'a>(data: &'a [u8], p: &BlobPtr) -> Option<&'a [u8]> {
    let start = usize::try_from(p.block.checked_mul(PAGE)?).ok()?;
    let end = start.checked_add(p.len as usize)?;
    data.get(start..end)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Largest payload of a frame kind (as `opfs_vfs::format` bounds it).
pub fn max_payload(kind: FrameKind) -> usize {
    match kind {
        FrameKind::Page | FrameKind::Commit | FrameKind::Abort => PAGE_SIZE,
        FrameKind::Create | FrameKind::Rename => 1024,
        _ => 0,
    }
}

impl Tree {
    /// Parses what parses.
    pub fn parse(data: &[u8], log: &[u8]) -> Tree {
        let mut t = Tree::default();
        for slot in 0..2 {
            if let Some(bytes) = data.get(slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE) {
                if let Slot::Valid(sb) = Superblock::decode(bytes) {
                    t.slots[slot] = Some(sb);
                }
            }
        }
        t.cur = (0..2)
            .filter(|&s| t.slots[s].is_some())
            .max_by_key(|&s| t.slots[s].as_ref().map_or(0, |sb| sb.generation));
        let Some(sb) = t.cur.and_then(|s| t.slots[s].clone()) else {
            return t;
        };
        if sb.directory.len > 0 {
            t.dir = blob(data, &sb.directory)
                .and_then(|b| decode_directory(b).ok())
                .map(|chunks| {
                    chunks
                        .into_iter()
                        .map(|(key, ptr)| ChunkNode {
                            key,
                            ptr,
                            entries: blob(data, &ptr)
                                .and_then(|b| decode_entry_chunk(key, b).ok())
                                .map(|es| es.into_iter().map(|e| entry_node(data, e)).collect()),
                            dirty: false,
                        })
                        .collect()
                });
        } else {
            t.dir = Some(Vec::new());
        }
        // The log: the chain of the current epoch (or of the next one, if the log starts with
        // it: a newer checkpoint whose superblock is lost).
        let s0 = opfs_vfs::format::epoch_salt(sb.volume_salt, sb.generation);
        let s1 = opfs_vfs::format::epoch_salt(sb.volume_salt, sb.generation.wrapping_add(1));
        t.salt = if decode_frame(log, s0, s0).is_err() && decode_frame(log, s1, s1).is_ok() {
            s1
        } else {
            s0
        };
        let mut chain = t.salt;
        let mut pos = 0;
        while let Ok((h, payload)) = decode_frame(&log[pos..], t.salt, chain) {
            t.frame_offsets.push(pos);
            t.frames.push(Frame {
                kind: h.kind,
                file_id: h.file_id,
                arg: h.arg,
                session: u64_at(log, pos + 40),
                salt: u64_at(log, pos + 16),
                payload: payload.to_vec(),
            });
            chain = h.chain;
            pos += FRAME_HEADER + payload.len();
        }
        t.log_end = pos;
        t
    }

    /// Every number in the structures: ids, sizes, blocks, lengths, sequence numbers (values
    /// that other fields may plausibly be set to).
    pub fn numbers(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for sb in self.slots.iter().flatten() {
            v.extend([
                sb.generation,
                sb.directory.block,
                u64::from(sb.directory.len),
                sb.next_file_id,
                sb.next_txn_seq,
                sb.block_count,
            ]);
        }
        for c in self.dir.iter().flatten() {
            v.extend([c.key, c.ptr.block, u64::from(c.ptr.len)]);
            for e in c.entries.iter().flatten() {
                v.extend([e.id, e.size]);
                if let Body::Blocks(maps) = &e.body {
                    for m in maps {
                        v.extend([m.key, m.ptr.block]);
                        for r in m.runs.iter().flatten() {
                            v.extend([u64::from(r.first), r.block, r.hashes.len() as u64]);
                        }
                    }
                }
            }
        }
        for f in &self.frames {
            v.extend([f.file_id, f.arg]);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Every name in the catalog and the log.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .dir
            .iter()
            .flatten()
            .flat_map(|c| c.entries.iter().flatten().map(|e| e.name.clone()))
            .collect();
        for f in &self.frames {
            if matches!(f.kind, FrameKind::Create | FrameKind::Rename) {
                v.push(String::from_utf8_lossy(&f.payload).into_owned());
            }
        }
        v
    }

    /// Catalog blobs as (first byte, length) in the data file: directory, entry chunks, map
    /// chunks.
    pub fn blob_ranges(&self) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        let r = |p: &BlobPtr| (p.block.saturating_mul(PAGE), u64::from(p.len));
        if let Some(sb) = self.cur.and_then(|s| self.slots[s].as_ref()) {
            if sb.directory.len > 0 {
                v.push(r(&sb.directory));
            }
        }
        for c in self.dir.iter().flatten() {
            v.push(r(&c.ptr));
            for e in c.entries.iter().flatten() {
                if let Body::Blocks(maps) = &e.body {
                    v.extend(maps.iter().map(|m| r(&m.ptr)));
                }
            }
        }
        v
    }

    /// Writes every changed structure back into `data` and `log` (see the module docs).
    pub fn rebuild(&mut self, data: &mut Vec<u8>, log: &mut Vec<u8>) {
        if let Some(chunks) = &mut self.dir {
            for c in chunks.iter_mut() {
                let Some(entries) = &mut c.entries else {
                    continue;
                };
                for e in entries.iter_mut() {
                    let id = e.id;
                    if let Body::Blocks(maps) = &mut e.body {
                        for m in maps.iter_mut().filter(|m| m.dirty) {
                            if let Some(runs) = &m.runs {
                                m.ptr = place(data, m.ptr, &encode_map_chunk(id, m.key, runs));
                                c.dirty = true;
                            }
                            m.dirty = false;
                        }
                    }
                }
                if c.dirty {
                    let owned: Vec<Entry> = entries.iter().map(to_entry).collect();
                    let refs: Vec<&Entry> = owned.iter().collect();
                    c.ptr = place(data, c.ptr, &encode_entry_chunk(c.key, &refs));
                    self.dir_dirty = true;
                    c.dirty = false;
                }
            }
            if self.dir_dirty {
                if let Some(s) = self.cur {
                    if let Some(sb) = &mut self.slots[s] {
                        let list: Vec<(u64, BlobPtr)> =
                            chunks.iter().map(|c| (c.key, c.ptr)).collect();
                        sb.directory = place(data, sb.directory, &encode_directory(&list));
                        self.sb_dirty[s] = true;
                    }
                }
                self.dir_dirty = false;
            }
        }
        for s in 0..2 {
            if self.sb_dirty[s] {
                if let Some(sb) = &self.slots[s] {
                    write_at(data, s * PAGE_SIZE, &sb.encode());
                }
                self.sb_dirty[s] = false;
            }
        }
        if self.log_dirty {
            let tail = log.get(self.log_end..).unwrap_or(&[]).to_vec();
            let mut out = Vec::with_capacity(log.len());
            let mut chain = self.salt;
            self.frame_offsets.clear();
            for f in &mut self.frames {
                f.payload.truncate(max_payload(f.kind));
                self.frame_offsets.push(out.len());
                chain = encode_frame(
                    &mut out, f.salt, f.session, chain, f.kind, f.file_id, f.arg, &f.payload,
                );
            }
            self.log_end = out.len();
            out.extend_from_slice(&tail);
            *log = out;
            self.log_dirty = false;
        }
    }
}

fn entry_node(data: &[u8], e: Entry) -> EntryNode {
    let body = match e.contents {
        Contents::Inline(b) => Body::Inline(b),
        Contents::Blocks(chunks) => Body::Blocks(
            chunks
                .into_iter()
                .map(|(key, ptr)| MapNode {
                    key,
                    ptr,
                    runs: blob(data, &ptr).and_then(|b| decode_map_chunk(e.id, key, b).ok()),
                    dirty: false,
                })
                .collect(),
        ),
    };
    EntryNode {
        id: e.id,
        name: e.name,
        size: e.size,
        body,
    }
}

fn to_entry(e: &EntryNode) -> Entry {
    Entry {
        id: e.id,
        name: e.name.clone(),
        size: e.size,
        contents: match &e.body {
            Body::Inline(b) => Contents::Inline(b.clone()),
            Body::Blocks(maps) => Contents::Blocks(maps.iter().map(|m| (m.key, m.ptr)).collect()),
        },
    }
}

/// Writes `bytes` into the data file at `at`, extending it with zeros if needed.
pub fn write_at(data: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    let end = at + bytes.len();
    if data.len() < end {
        data.resize(end, 0);
    }
    data[at..end].copy_from_slice(bytes);
}

/// Places a re-encoded blob: in its old blocks if it fits there (and they are inside the
/// data file), else in new blocks at the end of the data file.
fn place(data: &mut Vec<u8>, old: BlobPtr, bytes: &[u8]) -> BlobPtr {
    let span = usize::try_from(old.blocks().saturating_mul(PAGE)).unwrap_or(0);
    let start = usize::try_from(old.block.saturating_mul(PAGE)).unwrap_or(usize::MAX);
    let block = if old.block >= 2 && bytes.len() <= span && start.saturating_add(span) <= data.len()
    {
        old.block
    } else {
        data.len().div_ceil(PAGE_SIZE) as u64
    };
    let at = (block * PAGE) as usize;
    let mut padded = bytes.to_vec();
    padded.resize(bytes.len().div_ceil(PAGE_SIZE).max(1) * PAGE_SIZE, 0);
    write_at(data, at, &padded);
    BlobPtr::of(block, bytes).unwrap_or(old)
}
