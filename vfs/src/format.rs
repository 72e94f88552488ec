//! On-disk encoding, format version 4: superblocks, the catalog (a directory of entry chunks,
//! entry chunks of file records, map chunks of page homes) and log frames (in the log, and in
//! tail links in the data file). `vfs/DESIGN.md` specifies the same layout in prose; keep the
//! two in step. All integers are little-endian;
//! every structure carries an xxh3-64 hash.
//!
//! Log frames carry a *chained* hash (each frame's hash is seeded with the previous frame's), so
//! a missing, torn or stale frame ends the valid log.
//!
//! Decoders never trust a count: every count is bounded by the bytes that remain before
//! anything is allocated, so a corrupt or hostile image cannot make the engine allocate more
//! than its own size (the fuzz target checks this).

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed, Xxh3};

/// Size of a logical page and of a block in the data file.
pub const PAGE_SIZE: usize = 4096;
/// [`PAGE_SIZE`] as stored in superblocks.
const PAGE_SIZE_U32: u32 = 4096;
/// [`PAGE_SIZE`] as `u64`.
pub const PAGE: u64 = PAGE_SIZE as u64;
/// Format version written into superblocks. Version 1 (the first release) had one catalog blob
/// rewritten whole at every checkpoint; it is recognised and refused with
/// [`crate::Error::UnsupportedVersion`]. Version 3 added [`FrameKind::Patch`]; its layout is
/// otherwise version 2's, so a version-2 volume mounts, and its log gets patch frames only
/// once a checkpoint has written a version-3 superblock (a version-2 build refuses that
/// superblock instead of replaying up to the first patch and stopping there: silent loss).
/// Version 4 added tail links ([`FrameKind::Link`]: a commit's frames and page blocks in the
/// data file past the checkpoint's extent); links are written only once a checkpoint has
/// written a version-4 superblock, by the same rule.
pub const FORMAT_VERSION: u32 = 4;
/// The oldest format version this build mounts.
pub const OLDEST_READABLE_VERSION: u32 = 2;
/// Superblock magic.
pub const SUPER_MAGIC: [u8; 8] = *b"OPFSVOL\0";
/// Bytes of a superblock that carry data (the rest of its 4 KiB slot is zero).
pub const SUPER_LEN: usize = 88;
/// Number of superblock slots (blocks 0 and 1 of the data file). Generation `g` lives in slot
/// `g % 2`, so the two slots always hold two consecutive generations.
pub const SUPER_SLOTS: u64 = 2;
/// Log frame magic.
pub const FRAME_MAGIC: [u8; 4] = *b"OLG2";
/// Size of a log frame header.
pub const FRAME_HEADER: usize = 56;
/// Longest logical file name, in bytes of UTF-8.
pub const MAX_NAME_LEN: usize = 1024;
/// Pages described by one map chunk (1 MiB of a file).
pub const MAP_CHUNK_PAGES: u64 = 256;
/// File ids per entry chunk.
pub const ENTRY_CHUNK_FILES: u64 = 64;
/// Files of at most this many bytes are stored inline in their catalog entry at checkpoint,
/// not in home blocks (10,000 files of 300 bytes would otherwise take a 4 KiB block each).
pub const INLINE_MAX: u64 = 2048;
/// Largest payload of a commit or abort frame: 512 file ids.
pub const MAX_ID_LIST: usize = 512;
/// Largest frame payload of any kind (a page, or a list of 512 ids).
pub const MAX_PAYLOAD: usize = PAGE_SIZE;

const DIR_MAGIC: [u8; 4] = *b"DIR2";
const ENTRY_MAGIC: [u8; 4] = *b"ENT2";
const MAP_MAGIC: [u8; 4] = *b"MAP2";

/// Little-endian cursor over a byte slice; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    pub(crate) fn left(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(crate) fn done(&self) -> bool {
        self.pos == self.buf.len()
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

/// A count bounded by the format (ids per chunk, pages per map chunk, a page) as a `u32`;
/// saturating, so an impossible count fails decoding instead of wrapping.
fn n32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

// ---------------------------------------------------------------------------------------------
// Superblock
// ---------------------------------------------------------------------------------------------

/// The root of a checkpointed state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    /// Format version the superblock was written with ([`OLDEST_READABLE_VERSION`] to
    /// [`FORMAT_VERSION`]); [`Superblock::encode`] always writes [`FORMAT_VERSION`].
    pub version: u32,
    /// Checkpoint generation; increases by one per checkpoint; lives in slot `generation % 2`.
    pub generation: u64,
    /// Random per volume, fixed at creation. The log salt of epoch `g` is
    /// [`epoch_salt`]`(volume_salt, g)`, so mount can recognise the frames of the epoch *after*
    /// the newest valid superblock (a newer checkpoint whose superblock was lost).
    pub volume_salt: u64,
    /// Where the catalog's directory blob is (`len == 0`: empty catalog).
    pub directory: BlobPtr,
    /// Next logical file id to hand out.
    pub next_file_id: u64,
    /// Sequence number the first commit of the log epoch will carry.
    pub next_txn_seq: u64,
    /// Data file length in blocks when the checkpoint was taken.
    pub block_count: u64,
}

/// What a superblock slot holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Slot {
    /// All zero: never written.
    Empty,
    /// A valid superblock of this format.
    Valid(Superblock),
    /// A superblock of another format version (recognised by magic and, for version 1, by its
    /// checksum). Never overwritten.
    Unsupported(u32),
    /// Anything else: torn or damaged.
    Invalid(&'static str),
}

impl Superblock {
    /// The log salt of this checkpoint's epoch.
    pub fn log_salt(&self) -> u64 {
        epoch_salt(self.volume_salt, self.generation)
    }

    /// Encodes into a full 4 KiB slot.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(PAGE_SIZE);
        b.extend_from_slice(&SUPER_MAGIC);
        put_u32(&mut b, FORMAT_VERSION);
        put_u32(&mut b, PAGE_SIZE_U32);
        for v in [
            self.generation,
            self.volume_salt,
            self.directory.block,
            u64::from(self.directory.len),
            self.directory.hash,
            self.next_file_id,
            self.next_txn_seq,
            self.block_count,
        ] {
            put_u64(&mut b, v);
        }
        let h = xxh3_64(&b);
        put_u64(&mut b, h);
        debug_assert_eq!(b.len(), SUPER_LEN);
        b.resize(PAGE_SIZE, 0);
        b
    }

    /// Decodes a slot.
    pub fn decode(slot: &[u8]) -> Slot {
        if slot.len() < SUPER_LEN {
            return Slot::Invalid("superblock slot shorter than a superblock");
        }
        if slot[..SUPER_LEN].iter().all(|&b| b == 0) {
            return Slot::Empty;
        }
        let mut r = Reader::new(slot);
        if r.bytes(8) != Some(&SUPER_MAGIC[..]) {
            return Slot::Invalid("bad superblock magic");
        }
        let version = r.u32().unwrap_or(0);
        // Every version keeps this compatibility contract: bytes 0..12 are magic and version,
        // bytes 80..88 an xxh3-64 of bytes 0..80. So a damaged version field is "invalid", and
        // only a superblock that another version really wrote is "unsupported".
        let hash_ok =
            xxh3_64(&slot[..SUPER_LEN - 8]).to_le_bytes() == slot[SUPER_LEN - 8..SUPER_LEN];
        if !hash_ok {
            return Slot::Invalid("superblock checksum mismatch");
        }
        if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
            return Slot::Unsupported(version);
        }
        if r.u32() != Some(PAGE_SIZE_U32) {
            return Slot::Invalid("unsupported page size");
        }
        let mut f = || r.u64().unwrap_or(0);
        let (generation, volume_salt, block, len, hash) = (f(), f(), f(), f(), f());
        let (next_file_id, next_txn_seq, block_count) = (f(), f(), f());
        let Ok(len) = u32::try_from(len) else {
            return Slot::Invalid("directory length out of range");
        };
        Slot::Valid(Superblock {
            version,
            generation,
            volume_salt,
            directory: BlobPtr { block, len, hash },
            next_file_id,
            next_txn_seq,
            block_count,
        })
    }
}

/// The salt of log epoch `generation` of a volume.
pub fn epoch_salt(volume_salt: u64, generation: u64) -> u64 {
    xxh3_64_with_seed(&generation.to_le_bytes(), volume_salt)
}

// ---------------------------------------------------------------------------------------------
// Blobs: directory, entry chunks, map chunks
// ---------------------------------------------------------------------------------------------

/// Where a catalog blob lives: `len` bytes from block `block` (in `ceil(len / 4096)` blocks),
/// with its xxh3-64. A blob is written once (copy-on-write) and never modified in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlobPtr {
    /// First block.
    pub block: u64,
    /// Length in bytes.
    pub len: u32,
    /// xxh3-64 of the bytes.
    pub hash: u64,
}

impl BlobPtr {
    /// Blocks the blob occupies.
    pub fn blocks(&self) -> u64 {
        u64::from(self.len).div_ceil(PAGE)
    }

    /// The pointer for `bytes` written at `block`.
    pub fn of(block: u64, bytes: &[u8]) -> Result<BlobPtr, &'static str> {
        let len = u32::try_from(bytes.len()).map_err(|_| "catalog blob larger than 4 GiB")?;
        Ok(BlobPtr {
            block,
            len,
            hash: xxh3_64(bytes),
        })
    }

    fn put(&self, b: &mut Vec<u8>) {
        put_u64(b, self.block);
        put_u32(b, self.len);
        put_u64(b, self.hash);
    }

    fn get(r: &mut Reader<'_>) -> Option<BlobPtr> {
        Some(BlobPtr {
            block: r.u64()?,
            len: r.u32()?,
            hash: r.u64()?,
        })
    }
}

/// Encoded size of a [`BlobPtr`] with its key.
const KEYED_PTR: usize = 8 + 20;

/// The directory: where each entry chunk is. Key: chunk index (`file id / 64`).
pub fn encode_directory(chunks: &[(u64, BlobPtr)]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + chunks.len() * KEYED_PTR);
    b.extend_from_slice(&DIR_MAGIC);
    put_u32(&mut b, n32(chunks.len()));
    for (k, p) in chunks {
        put_u64(&mut b, *k);
        p.put(&mut b);
    }
    b
}

/// Decodes the directory; chunk indices strictly increase.
pub fn decode_directory(blob: &[u8]) -> Result<Vec<(u64, BlobPtr)>, &'static str> {
    let mut r = Reader::new(blob);
    if r.bytes(4) != Some(&DIR_MAGIC[..]) {
        return Err("bad directory magic");
    }
    let n = r.u32().ok_or("truncated directory")? as usize;
    if n > r.left() / KEYED_PTR {
        return Err("directory count exceeds blob");
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let k = r.u64().ok_or("truncated directory")?;
        let p = BlobPtr::get(&mut r).ok_or("truncated directory")?;
        if out.last().is_some_and(|(prev, _)| *prev >= k) {
            return Err("directory chunks out of order");
        }
        out.push((k, p));
    }
    if !r.done() {
        return Err("trailing bytes after directory");
    }
    Ok(out)
}

/// How one file's contents are stored at a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contents {
    /// In home blocks described by map chunks: `(chunk index, blob)`, chunk index increasing.
    Blocks(Vec<(u64, BlobPtr)>),
    /// All bytes inline (at most [`INLINE_MAX`]; the length equals the file size).
    Inline(Vec<u8>),
}

/// One file's record in an entry chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Stable id (never reused within a volume).
    pub id: u64,
    /// Name.
    pub name: String,
    /// Length in bytes.
    pub size: u64,
    /// Where the bytes are.
    pub contents: Contents,
}

/// An entry chunk: the records of files with ids in `[chunk·64, chunk·64 + 64)`, id increasing.
pub fn encode_entry_chunk(chunk: u64, entries: &[&Entry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + entries.len() * 64);
    b.extend_from_slice(&ENTRY_MAGIC);
    put_u64(&mut b, chunk);
    put_u32(&mut b, n32(entries.len()));
    for e in entries {
        put_u64(&mut b, e.id);
        put_u64(&mut b, e.size);
        // Names are at most MAX_NAME_LEN bytes (checked on create/rename), so they fit a u16.
        put_u16(&mut b, u16::try_from(e.name.len()).unwrap_or(u16::MAX));
        b.extend_from_slice(e.name.as_bytes());
        match &e.contents {
            Contents::Blocks(chunks) => {
                b.push(0);
                put_u32(&mut b, n32(chunks.len()));
                for (k, p) in chunks {
                    put_u64(&mut b, *k);
                    p.put(&mut b);
                }
            }
            Contents::Inline(bytes) => {
                b.push(1);
                put_u32(&mut b, n32(bytes.len()));
                b.extend_from_slice(bytes);
            }
        }
    }
    b
}

/// Decodes an entry chunk; checks ids belong to `chunk` and increase.
pub fn decode_entry_chunk(chunk: u64, blob: &[u8]) -> Result<Vec<Entry>, &'static str> {
    let mut r = Reader::new(blob);
    if r.bytes(4) != Some(&ENTRY_MAGIC[..]) {
        return Err("bad entry chunk magic");
    }
    if r.u64() != Some(chunk) {
        return Err("entry chunk index mismatch");
    }
    let n = r.u32().ok_or("truncated entry chunk")? as usize;
    // Every entry takes at least 23 bytes.
    if n > r.left() / 23 {
        return Err("entry count exceeds chunk");
    }
    let mut out: Vec<Entry> = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.u64().ok_or("truncated entry")?;
        if id / ENTRY_CHUNK_FILES != chunk || out.last().is_some_and(|e| e.id >= id) {
            return Err("entry id outside its chunk or out of order");
        }
        let size = r.u64().ok_or("truncated entry")?;
        let name_len = r.u16().ok_or("truncated entry")? as usize;
        if name_len == 0 || name_len > MAX_NAME_LEN {
            return Err("entry name length out of range");
        }
        let name = std::str::from_utf8(r.bytes(name_len).ok_or("truncated entry name")?)
            .map_err(|_| "entry name is not UTF-8")?
            .to_owned();
        let contents = match r.u8().ok_or("truncated entry")? {
            0 => {
                let k = r.u32().ok_or("truncated entry")? as usize;
                if k > r.left() / KEYED_PTR {
                    return Err("map chunk count exceeds entry chunk");
                }
                let mut chunks: Vec<(u64, BlobPtr)> = Vec::with_capacity(k);
                for _ in 0..k {
                    let idx = r.u64().ok_or("truncated entry")?;
                    let p = BlobPtr::get(&mut r).ok_or("truncated entry")?;
                    if chunks.last().is_some_and(|(prev, _)| *prev >= idx) {
                        return Err("map chunks out of order");
                    }
                    chunks.push((idx, p));
                }
                Contents::Blocks(chunks)
            }
            1 => {
                let len = r.u32().ok_or("truncated entry")?;
                if u64::from(len) != size || u64::from(len) > INLINE_MAX {
                    return Err("inline length does not match the size");
                }
                Contents::Inline(
                    r.bytes(len as usize)
                        .ok_or("truncated inline data")?
                        .to_vec(),
                )
            }
            _ => return Err("unknown entry contents kind"),
        };
        out.push(Entry {
            id,
            name,
            size,
            contents,
        });
    }
    if !r.done() {
        return Err("trailing bytes after entry chunk");
    }
    Ok(out)
}

/// A run of a map chunk: pages `first..first+hashes.len()` (offsets within the chunk) live in
/// blocks `block..`; `hashes[i]` is the xxh3-64 of the whole 4 KiB block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// First page, as an offset within the chunk (0..256).
    pub first: u16,
    /// First block.
    pub block: u64,
    /// One hash per page.
    pub hashes: Vec<u64>,
}

/// A map chunk: where pages `[chunk·256, chunk·256 + 256)` of file `file` live. Pages in no
/// run are holes (zeros). Runs are ordered and do not overlap.
pub fn encode_map_chunk(file: u64, chunk: u64, runs: &[Run]) -> Vec<u8> {
    let n: usize = runs.iter().map(|r| 12 + 8 * r.hashes.len()).sum();
    let mut b = Vec::with_capacity(24 + n);
    b.extend_from_slice(&MAP_MAGIC);
    put_u64(&mut b, file);
    put_u64(&mut b, chunk);
    put_u32(&mut b, n32(runs.len()));
    for run in runs {
        put_u16(&mut b, run.first);
        put_u16(&mut b, u16::try_from(run.hashes.len()).unwrap_or(u16::MAX));
        put_u64(&mut b, run.block);
        for h in &run.hashes {
            put_u64(&mut b, *h);
        }
    }
    b
}

/// Decodes a map chunk of `file`, index `chunk`.
pub fn decode_map_chunk(file: u64, chunk: u64, blob: &[u8]) -> Result<Vec<Run>, &'static str> {
    let mut r = Reader::new(blob);
    if r.bytes(4) != Some(&MAP_MAGIC[..]) {
        return Err("bad map chunk magic");
    }
    if r.u64() != Some(file) || r.u64() != Some(chunk) {
        return Err("map chunk belongs to another file or index");
    }
    let n = r.u32().ok_or("truncated map chunk")? as usize;
    if n > r.left() / 20 {
        return Err("run count exceeds map chunk");
    }
    let mut runs: Vec<Run> = Vec::with_capacity(n);
    let mut next_free = 0u64;
    for _ in 0..n {
        let first = r.u16().ok_or("truncated run")?;
        let count = r.u16().ok_or("truncated run")?;
        let block = r.u64().ok_or("truncated run")?;
        let end = u64::from(first) + u64::from(count);
        if count == 0 || u64::from(first) < next_free || end > MAP_CHUNK_PAGES {
            return Err("map chunk run out of range or overlapping");
        }
        next_free = end;
        if usize::from(count) > r.left() / 8 {
            return Err("truncated run hashes");
        }
        let hashes = (0..count).map(|_| r.u64().unwrap_or(0)).collect();
        runs.push(Run {
            first,
            block,
            hashes,
        });
    }
    if !r.done() {
        return Err("trailing bytes after map chunk");
    }
    Ok(runs)
}

// ---------------------------------------------------------------------------------------------
// Log frames
// ---------------------------------------------------------------------------------------------

/// What a log frame records. A file's frames take effect when a later `Commit` frame lists the
/// file (or lists no file, meaning all files with frames not yet committed); an `Abort` frame
/// drops a file's frames written since its last commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// Create file `file_id` with the name in the payload, empty.
    Create = 1,
    /// Rename file `file_id` to the name in the payload.
    Rename = 2,
    /// Delete file `file_id`.
    Delete = 3,
    /// Set the length of `file_id` to `arg` (shrinking drops pages; growing adds zeros).
    SetLen = 4,
    /// Image of page `arg` of `file_id` (payload: the page's bytes up to the file's end, at
    /// most a page; the rest of the page is zero).
    Page = 5,
    /// Commit number `arg` of the files listed in the payload (u64 ids), or of every file with
    /// uncommitted frames if the payload is empty.
    Commit = 6,
    /// The files listed in the payload (u64 ids) roll back: their uncommitted frames are void.
    Abort = 7,
    /// First frame of the epoch after checkpoint `arg` (written when the log is cut at a
    /// checkpoint, so an epoch is never empty on disk and mount can tell which epoch the log
    /// belongs to even after a clean close).
    Epoch = 8,
    /// Changed bytes of page `arg` of `file_id` (format version 3): payload a u64 mask, then
    /// for each set bit `i`, ascending, the 64 bytes at `64·i` of the page. The page is the
    /// file's newest Page image of the epoch (its *base*) with the masked chunks replaced;
    /// the mask covers every chunk changed since that base, so a page is always its base plus
    /// its newest patch (see [`encode_patch`]).
    Patch = 9,
    /// Pages of a tail link (format version 4; only in the data file, never in the log file):
    /// payload `n` × (u64 file id, u64 page index, u64 xxh3 of the block), the next `n` page
    /// blocks of the link, in order (see [`encode_link`] and `vfs/DESIGN.md`, "Tail links").
    Link = 10,
}

impl FrameKind {
    fn from_u8(v: u8) -> Option<FrameKind> {
        Some(match v {
            1 => FrameKind::Create,
            2 => FrameKind::Rename,
            3 => FrameKind::Delete,
            4 => FrameKind::SetLen,
            5 => FrameKind::Page,
            6 => FrameKind::Commit,
            7 => FrameKind::Abort,
            8 => FrameKind::Epoch,
            9 => FrameKind::Patch,
            10 => FrameKind::Link,
            _ => return None,
        })
    }

    fn max_payload(self) -> usize {
        match self {
            FrameKind::Page => PAGE_SIZE,
            FrameKind::Patch => PATCH_MAX,
            FrameKind::Link => LINK_MAX_ENTRIES * LINK_ENTRY,
            FrameKind::Create | FrameKind::Rename => MAX_NAME_LEN,
            FrameKind::Commit | FrameKind::Abort => MAX_ID_LIST * 8,
            FrameKind::Delete | FrameKind::SetLen | FrameKind::Epoch => 0,
        }
    }
}

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// What the frame records.
    pub kind: FrameKind,
    /// Logical file the frame is about (0 for commits and aborts).
    pub file_id: u64,
    /// Page index, new length, or commit sequence number, by kind.
    pub arg: u64,
    /// Payload bytes following the header.
    pub payload_len: u32,
    /// Chained hash over this header (without the hash field) and payload, seeded with the
    /// previous frame's hash (the epoch's log salt for the first frame).
    pub chain: u64,
}

/// Appends one frame to `out` and returns its chain hash (the seed of the next frame).
/// `session` is a random nonce of the current mount: a frame written after a remount differs
/// from a stale frame of an earlier mount even when the content is the same, so a lost commit
/// that the application redoes byte for byte cannot re-chain into stale frames beyond it.
#[allow(clippy::too_many_arguments)]
pub fn encode_frame(
    out: &mut Vec<u8>,
    salt: u64,
    session: u64,
    prev_chain: u64,
    kind: FrameKind,
    file_id: u64,
    arg: u64,
    payload: &[u8],
) -> u64 {
    let start = out.len();
    encode_frame_unsealed(out, salt, session, kind, file_id, arg, payload);
    seal_frames(&mut out[start..], prev_chain)
}

/// [`encode_frame`] without the chain hash: the header's last field stays zero until
/// [`seal_frames`] fills it. A frame is only valid once sealed. The log writer seals its buffer
/// when it writes it: Balanced's buffered commits are then hashed once, in the group they are
/// written as, instead of once per commit and again in the group.
pub fn encode_frame_unsealed(
    out: &mut Vec<u8>,
    salt: u64,
    session: u64,
    kind: FrameKind,
    file_id: u64,
    arg: u64,
    payload: &[u8],
) {
    debug_assert!(payload.len() <= kind.max_payload());
    out.reserve(FRAME_HEADER + payload.len());
    out.extend_from_slice(&FRAME_MAGIC);
    out.push(kind as u8);
    out.extend_from_slice(&[0; 3]);
    // Payloads are bounded by max_payload (<= 4 KiB): they fit a u32.
    put_u32(out, n32(payload.len()));
    put_u32(out, 0);
    put_u64(out, salt);
    put_u64(out, file_id);
    put_u64(out, arg);
    put_u64(out, session);
    put_u64(out, 0);
    out.extend_from_slice(payload);
}

/// Fills in the chain hashes of `frames`: whole frames made by [`encode_frame_unsealed`], back
/// to back, the first chaining on from `prev_chain`. Returns the last frame's chain (the seed
/// of the next frame; `prev_chain` if `frames` is empty).
pub fn seal_frames(frames: &mut [u8], prev_chain: u64) -> u64 {
    let mut chain = prev_chain;
    let mut at = 0;
    while at + FRAME_HEADER <= frames.len() {
        let len = u32::from_le_bytes([
            frames[at + 8],
            frames[at + 9],
            frames[at + 10],
            frames[at + 11],
        ]) as usize;
        let end = (at + FRAME_HEADER + len).min(frames.len());
        debug_assert_eq!(
            end,
            at + FRAME_HEADER + len,
            "a frame cut short in a sealed buffer"
        );
        // The chain hash covers the header's first 48 bytes and the payload, which the hash
        // slot (bytes 48..56) separates. The header's bytes move up by 8 over that slot (still
        // zero), the two parts are hashed as one slice, and the header moves back: the same
        // xxh3 value as `frame_hash`'s two-part streaming, which costs 1.5x as much per 4 KiB
        // frame in wasm (V8: ~1.2 against ~0.78 us) and 1.2x natively.
        let frame = &mut frames[at..end];
        frame.copy_within(..FRAME_HEADER - 8, 8);
        chain = xxh3_64_with_seed(&frame[8..], chain);
        frame.copy_within(8..FRAME_HEADER, 0);
        frame[FRAME_HEADER - 8..FRAME_HEADER].copy_from_slice(&chain.to_le_bytes());
        at = end;
    }
    debug_assert_eq!(
        at,
        frames.len(),
        "bytes after the last frame of a sealed buffer"
    );
    chain
}

fn frame_hash(prev_chain: u64, header: &[u8], payload: &[u8]) -> u64 {
    if payload.is_empty() {
        return xxh3_64_with_seed(header, prev_chain);
    }
    let mut h = Xxh3::with_seed(prev_chain);
    h.update(header);
    h.update(payload);
    h.digest()
}

/// Why a frame does not continue the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameEnd {
    /// Fewer bytes than a header or its payload: read more, or the log ends here.
    Short,
    /// The bytes are not a frame of this chain (the valid log ends here).
    Invalid,
}

/// Decodes the frame at the start of `buf` if it continues the chain: right magic and salt,
/// known kind, payload present and within its kind's bound, chain hash matching.
pub fn decode_frame(
    buf: &[u8],
    salt: u64,
    prev_chain: u64,
) -> Result<(FrameHeader, &[u8]), FrameEnd> {
    if buf.len() < FRAME_HEADER {
        return Err(FrameEnd::Short);
    }
    let mut r = Reader::new(buf);
    if r.bytes(4) != Some(&FRAME_MAGIC[..]) {
        return Err(FrameEnd::Invalid);
    }
    let kind = r
        .u8()
        .and_then(FrameKind::from_u8)
        .ok_or(FrameEnd::Invalid)?;
    let _pad = r.bytes(3);
    let payload_len = r.u32().ok_or(FrameEnd::Invalid)?;
    let _reserved = r.u32();
    if r.u64() != Some(salt) {
        return Err(FrameEnd::Invalid);
    }
    let file_id = r.u64().ok_or(FrameEnd::Invalid)?;
    let arg = r.u64().ok_or(FrameEnd::Invalid)?;
    let _session = r.u64();
    let chain = r.u64().ok_or(FrameEnd::Invalid)?;
    if payload_len as usize > kind.max_payload() {
        return Err(FrameEnd::Invalid);
    }
    let payload = r.bytes(payload_len as usize).ok_or(FrameEnd::Short)?;
    if frame_hash(prev_chain, &buf[..FRAME_HEADER - 8], payload) != chain {
        return Err(FrameEnd::Invalid);
    }
    Ok((
        FrameHeader {
            kind,
            file_id,
            arg,
            payload_len,
            chain,
        },
        payload,
    ))
}

/// How many bytes the frame at the start of `buf` needs to be decoded: the header, or the
/// header and its declared payload (bounded by the largest payload of any kind).
pub fn frame_needs(buf: &[u8]) -> usize {
    if buf.len() < FRAME_HEADER {
        return FRAME_HEADER;
    }
    let len = u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]) as usize;
    FRAME_HEADER + len.min(MAX_ID_LIST * 8)
}

/// Bytes per chunk of a [`FrameKind::Patch`] (a page has 64 of them: one mask bit each).
pub const PATCH_CHUNK: usize = 64;
/// Most chunks a patch carries: beyond a quarter of the page a Page image is logged instead.
pub const PATCH_MAX_CHUNKS: u32 = 16;
/// Largest patch payload: the mask and [`PATCH_MAX_CHUNKS`] chunks.
pub const PATCH_MAX: usize = 8 + PATCH_MAX_CHUNKS as usize * PATCH_CHUNK;

/// Mask of the [`PATCH_CHUNK`]-byte chunks in which two page images (`PAGE_SIZE` bytes each)
/// differ. Compares 8-byte words (wasm32's `memcmp` is a byte loop).
pub fn diff_mask(a: &[u8], b: &[u8]) -> u64 {
    debug_assert!(a.len() == PAGE_SIZE && b.len() == PAGE_SIZE);
    let mut mask = 0u64;
    for (i, (x, y)) in a
        .chunks_exact(PATCH_CHUNK)
        .zip(b.chunks_exact(PATCH_CHUNK))
        .enumerate()
    {
        mask |= u64::from(chunk_differs(x, y)) << i;
    }
    mask
}

/// Whether two page images (`PAGE_SIZE` bytes each) are equal, as [`diff_mask`] `== 0` but
/// stopping at the first chunk that differs: where no patch can be logged, a commit only needs
/// to know whether a page changed at all.
pub fn same_page(a: &[u8], b: &[u8]) -> bool {
    debug_assert!(a.len() == PAGE_SIZE && b.len() == PAGE_SIZE);
    a.chunks_exact(PATCH_CHUNK)
        .zip(b.chunks_exact(PATCH_CHUNK))
        .all(|(x, y)| !chunk_differs(x, y))
}

/// Whether two [`PATCH_CHUNK`]-byte chunks differ, compared as 8-byte words (wasm32's `memcmp`
/// is a byte loop). Always inlined: called per chunk, `diff_mask` took 2.5 × the instructions
/// natively (callgrind, an autocommit INSERT in Memory mode at Strict: 12.3 K against 4.9 K).
#[inline(always)]
fn chunk_differs(x: &[u8], y: &[u8]) -> bool {
    let mut d = 0u64;
    for (u, v) in x.chunks_exact(8).zip(y.chunks_exact(8)) {
        d |= u64::from_ne_bytes(u.try_into().unwrap_or([0; 8]))
            ^ u64::from_ne_bytes(v.try_into().unwrap_or([0; 8]));
    }
    d != 0
}

/// The payload of a [`FrameKind::Patch`]: `mask`, then the masked chunks of `img` (a full
/// page).
pub fn encode_patch(mask: u64, img: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + mask.count_ones() as usize * PATCH_CHUNK);
    put_u64(&mut b, mask);
    for (i, c) in img.chunks_exact(PATCH_CHUNK).enumerate() {
        if mask >> i & 1 == 1 {
            b.extend_from_slice(c);
        }
    }
    b
}

/// Checks a patch payload: a mask and exactly its chunks. Returns the mask.
pub fn decode_patch(payload: &[u8]) -> Result<u64, &'static str> {
    let mask = payload
        .first_chunk::<8>()
        .map(|m| u64::from_le_bytes(*m))
        .ok_or("patch shorter than its mask")?;
    if payload.len() != 8 + mask.count_ones() as usize * PATCH_CHUNK {
        return Err("patch length does not match its mask");
    }
    Ok(mask)
}

/// Applies a patch payload (checked by [`decode_patch`]) to a full page image.
pub fn apply_patch(payload: &[u8], img: &mut [u8]) -> Result<(), &'static str> {
    if img.len() != PAGE_SIZE {
        // A shorter image would silently miss the chunks past its end.
        return Err("patch applied to less than a page");
    }
    let mask = decode_patch(payload)?;
    let mut src = payload[8..].chunks_exact(PATCH_CHUNK);
    for (i, dst) in img.chunks_exact_mut(PATCH_CHUNK).enumerate() {
        if mask >> i & 1 == 1 {
            dst.copy_from_slice(src.next().ok_or("patch shorter than its mask")?);
        }
    }
    Ok(())
}

/// Bytes per page listed in a [`FrameKind::Link`] payload: file id, page index, block hash.
pub const LINK_ENTRY: usize = 24;
/// Most pages one Link frame lists (a link with more pages has several Link frames).
pub const LINK_MAX_ENTRIES: usize = MAX_PAYLOAD / LINK_ENTRY;

/// One page of a tail link: which page of which file, and the xxh3 of its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkEntry {
    /// Logical file id.
    pub file: u64,
    /// Page index in the file.
    pub page: u64,
    /// xxh3-64 of the whole 4 KiB block.
    pub hash: u64,
}

/// The payload of a [`FrameKind::Link`] (at most [`LINK_MAX_ENTRIES`] entries).
pub fn encode_link(entries: &[LinkEntry]) -> Vec<u8> {
    debug_assert!(entries.len() <= LINK_MAX_ENTRIES);
    let mut b = Vec::with_capacity(entries.len() * LINK_ENTRY);
    for e in entries {
        put_u64(&mut b, e.file);
        put_u64(&mut b, e.page);
        put_u64(&mut b, e.hash);
    }
    b
}

/// Decodes a [`FrameKind::Link`] payload.
pub fn decode_link(payload: &[u8]) -> Result<Vec<LinkEntry>, &'static str> {
    if !payload.len().is_multiple_of(LINK_ENTRY) {
        return Err("link payload is not a list of entries");
    }
    Ok(payload
        .chunks_exact(LINK_ENTRY)
        .map(|c| {
            let u = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().unwrap_or([0; 8]));
            LinkEntry {
                file: u(0),
                page: u(8),
                hash: u(16),
            }
        })
        .collect())
}

/// Encodes a list of file ids (commit and abort payloads).
pub fn encode_ids(ids: &[u64]) -> Vec<u8> {
    let mut b = Vec::with_capacity(ids.len() * 8);
    for id in ids {
        put_u64(&mut b, *id);
    }
    b
}

/// Decodes a list of file ids.
pub fn decode_ids(payload: &[u8]) -> Result<Vec<u64>, &'static str> {
    if !payload.len().is_multiple_of(8) {
        return Err("id list length is not a multiple of 8");
    }
    Ok(payload
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb() -> Superblock {
        Superblock {
            version: FORMAT_VERSION,
            generation: 7,
            volume_salt: 99,
            directory: BlobPtr {
                block: 2,
                len: 12,
                hash: 5,
            },
            next_file_id: 3,
            next_txn_seq: 40,
            block_count: 10,
        }
    }

    #[test]
    fn superblock_round_trip_and_corruption() {
        let enc = sb().encode();
        assert_eq!(Superblock::decode(&enc), Slot::Valid(sb()));
        assert_eq!(Superblock::decode(&vec![0; PAGE_SIZE]), Slot::Empty);
        for i in 0..SUPER_LEN {
            let mut bad = enc.clone();
            bad[i] ^= 0x40;
            assert!(
                matches!(Superblock::decode(&bad), Slot::Invalid(_)),
                "flip at {i} accepted: {:?}",
                Superblock::decode(&bad)
            );
        }
    }

    #[test]
    fn other_versions_are_unsupported_not_corrupt() {
        // A version-1 superblock: same layout, version 1, valid checksum.
        let mut v1 = sb().encode();
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        let h = xxh3_64(&v1[..80]);
        v1[80..88].copy_from_slice(&h.to_le_bytes());
        assert_eq!(Superblock::decode(&v1), Slot::Unsupported(1));
        // A future version that keeps the checksum contract.
        let mut v9 = sb().encode();
        v9[8..12].copy_from_slice(&9u32.to_le_bytes());
        let h = xxh3_64(&v9[..80]);
        v9[80..88].copy_from_slice(&h.to_le_bytes());
        assert_eq!(Superblock::decode(&v9), Slot::Unsupported(9));
    }

    #[test]
    fn patches_round_trip_and_reject_bad_lengths() {
        let base: Vec<u8> = (0..PAGE_SIZE)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        let mut new = base.clone();
        new[3] ^= 1; // chunk 0
        new[64 * 10 + 63] ^= 1; // chunk 10
        new[PAGE_SIZE - 1] ^= 1; // chunk 63
        let mask = diff_mask(&base, &new);
        assert_eq!(mask, 1 | 1 << 10 | 1 << 63);
        assert_eq!(diff_mask(&new, &new), 0);
        assert!(same_page(&new, &new));
        assert!(!same_page(&base, &new));
        // A difference in the last byte only (the comparison stops early elsewhere).
        let mut last = base.clone();
        last[PAGE_SIZE - 1] ^= 0x80;
        assert!(!same_page(&base, &last));
        assert_eq!(diff_mask(&base, &last), 1 << 63);
        let p = encode_patch(mask, &new);
        assert_eq!(p.len(), 8 + 3 * PATCH_CHUNK);
        assert_eq!(decode_patch(&p), Ok(mask));
        let mut img = base.clone();
        apply_patch(&p, &mut img).unwrap();
        assert_eq!(img, new);
        assert!(decode_patch(&p[..p.len() - 1]).is_err());
        assert!(decode_patch(&p[..7]).is_err());
        let mut longer = p.clone();
        longer.push(0);
        assert!(apply_patch(&longer, &mut img).is_err());
        assert!(apply_patch(&p, &mut img[..PAGE_SIZE - 64]).is_err());
    }

    #[test]
    fn sealing_a_buffer_equals_encoding_frame_by_frame() {
        // Payloads of every length class xxh3 hashes differently (with the header's 48
        // bytes: ≤ 128, ≤ 240, longer), a whole page among them.
        let page: Vec<u8> = (0..PAGE_SIZE)
            .map(|i| (i * 31 % 251).to_le_bytes()[0])
            .collect();
        let frames: [(FrameKind, u64, &[u8]); 5] = [
            (FrameKind::Create, 1, b"a.db"),
            (FrameKind::Page, 0, &[7; 100]),
            (FrameKind::Page, 1, &page),
            (FrameKind::SetLen, 4096, &[]),
            (FrameKind::Commit, 3, &[1, 0, 0, 0, 0, 0, 0, 0]),
        ];
        let mut encoded = Vec::new();
        let mut chain = 5;
        for (kind, arg, payload) in frames {
            chain = encode_frame(&mut encoded, 5, 9, chain, kind, 1, arg, payload);
        }
        let mut unsealed = Vec::new();
        let mut first_len = 0;
        for (i, (kind, arg, payload)) in frames.into_iter().enumerate() {
            encode_frame_unsealed(&mut unsealed, 5, 9, kind, 1, arg, payload);
            if i == 0 {
                first_len = unsealed.len();
            }
        }
        assert_eq!(unsealed.len(), encoded.len());
        assert_ne!(unsealed, encoded, "an unsealed frame carries no chain hash");
        assert!(decode_frame(&unsealed, 5, 5).is_err());
        // Sealed in two steps, the second chaining on from the first.
        let mut in_two = unsealed.clone();
        let c1 = seal_frames(&mut in_two[..first_len], 5);
        assert_eq!(seal_frames(&mut in_two[first_len..], c1), chain);
        assert_eq!(in_two, encoded);
        assert_eq!(seal_frames(&mut unsealed, 5), chain);
        assert_eq!(unsealed, encoded);
        assert_eq!(seal_frames(&mut [], 42), 42);
        // Sealing hashes each frame in one piece; decoding (`frame_hash`) in two: the same
        // chain, frame by frame.
        let (mut rest, mut prev) = (&encoded[..], 5);
        for (kind, arg, payload) in frames {
            let (h, p) = decode_frame(rest, 5, prev).expect("a sealed frame decodes");
            assert_eq!((h.kind, h.arg, p), (kind, arg, payload));
            rest = &rest[FRAME_HEADER + p.len()..];
            prev = h.chain;
        }
        assert!(rest.is_empty());
        assert_eq!(prev, chain);
    }

    #[test]
    fn frames_chain_and_reject_tampering() {
        let mut log = Vec::new();
        let c1 = encode_frame(&mut log, 5, 9, 5, FrameKind::Create, 1, 0, b"a.db");
        let first_len = log.len();
        let c2 = encode_frame(&mut log, 5, 9, c1, FrameKind::Page, 1, 0, &[7; 100]);
        let mut other = Vec::new();
        let d1 = encode_frame(&mut other, 5, 10, 5, FrameKind::Create, 1, 0, b"a.db");
        assert_ne!(c1, d1, "the session nonce is hashed");
        let (h1, p1) = decode_frame(&log, 5, 5).expect("first frame");
        assert_eq!((h1.kind, p1), (FrameKind::Create, &b"a.db"[..]));
        let (h2, p2) = decode_frame(&log[first_len..], 5, h1.chain).expect("second frame");
        assert_eq!((h2.kind, h2.chain, p2.len()), (FrameKind::Page, c2, 100));
        assert_eq!(decode_frame(&log, 6, 5), Err(FrameEnd::Invalid));
        assert_eq!(
            decode_frame(&log[first_len..], 5, 5),
            Err(FrameEnd::Invalid)
        );
        for i in first_len..log.len() {
            let mut bad = log.clone();
            bad[i] ^= 1;
            assert!(
                decode_frame(&bad[first_len..], 5, c1).is_err(),
                "flip at {i}"
            );
        }
        assert_eq!(
            decode_frame(&log[first_len..log.len() - 1], 5, c1),
            Err(FrameEnd::Short)
        );
    }

    #[test]
    fn catalog_blobs_round_trip_and_reject_damage() {
        let dir = vec![
            (0, BlobPtr::of(9, b"x").unwrap()),
            (3, BlobPtr::of(11, b"y").unwrap()),
        ];
        let blob = encode_directory(&dir);
        assert_eq!(decode_directory(&blob), Ok(dir));
        assert!(decode_directory(&blob[..blob.len() - 1]).is_err());

        let a = Entry {
            id: 64,
            name: "x/y.db".into(),
            size: 9000,
            contents: Contents::Blocks(vec![(0, BlobPtr::of(4, b"m").unwrap())]),
        };
        let b = Entry {
            id: 70,
            name: "small".into(),
            size: 3,
            contents: Contents::Inline(vec![1, 2, 3]),
        };
        let blob = encode_entry_chunk(1, &[&a, &b]);
        assert_eq!(decode_entry_chunk(1, &blob), Ok(vec![a.clone(), b.clone()]));
        assert!(decode_entry_chunk(2, &blob).is_err(), "wrong chunk index");
        assert!(decode_entry_chunk(1, &blob[..blob.len() - 2]).is_err());

        let runs = vec![
            Run {
                first: 0,
                block: 2,
                hashes: vec![1, 2],
            },
            Run {
                first: 5,
                block: 9,
                hashes: vec![3],
            },
        ];
        let blob = encode_map_chunk(64, 0, &runs);
        assert_eq!(decode_map_chunk(64, 0, &blob), Ok(runs.clone()));
        assert!(decode_map_chunk(65, 0, &blob).is_err(), "wrong file");
        let overlapping = vec![
            runs[0].clone(),
            Run {
                first: 1,
                ..runs[1].clone()
            },
        ];
        let blob = encode_map_chunk(64, 0, &overlapping);
        assert!(decode_map_chunk(64, 0, &blob).is_err());
    }

    #[test]
    fn hostile_counts_do_not_allocate() {
        // A directory claiming 2^32-1 chunks in a 10-byte blob is rejected before allocating.
        let mut blob = DIR_MAGIC.to_vec();
        blob.extend_from_slice(&u32::MAX.to_le_bytes());
        blob.extend_from_slice(&[0; 2]);
        assert_eq!(decode_directory(&blob), Err("directory count exceeds blob"));
    }
}
