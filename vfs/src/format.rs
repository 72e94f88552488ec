//! On-disk encoding: superblocks, the catalog and log frames. `vfs/DESIGN.md` specifies the
//! same layout in prose; keep the two in step. All integers are little-endian.
//!
//! Every structure carries an xxh3-64 hash; log frames carry a *chained* hash (each frame's hash
//! is seeded with the previous frame's), so a missing, torn or stale frame ends the valid log.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed, Xxh3};

/// Size of a logical page and of a home block in the data file.
pub const PAGE_SIZE: usize = 4096;
/// [`PAGE_SIZE`] as stored in superblocks.
const PAGE_SIZE_U32: u32 = 4096;
/// [`PAGE_SIZE`] as `u64`.
pub const PAGE: u64 = PAGE_SIZE as u64;
/// Format version written into superblocks.
pub const FORMAT_VERSION: u32 = 1;
/// Superblock magic.
pub const SUPER_MAGIC: [u8; 8] = *b"OPFSVOL\0";
/// Bytes of a superblock that carry data (the rest of its 4 KiB slot is zero).
pub const SUPER_LEN: usize = 88;
/// Number of superblock slots (blocks 0 and 1 of the data file).
pub const SUPER_SLOTS: u64 = 2;
/// Catalog magic.
pub const CATALOG_MAGIC: [u8; 4] = *b"CATL";
/// Log frame magic.
pub const FRAME_MAGIC: [u8; 4] = *b"OLOG";
/// Size of a log frame header.
pub const FRAME_HEADER: usize = 48;
/// Longest logical file name, in bytes of UTF-8.
pub const MAX_NAME_LEN: usize = 1024;

/// Little-endian cursor over a byte slice; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
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

/// The root of a checkpointed state. Two slots ping-pong; the valid one with the highest
/// generation wins at mount.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Superblock {
    /// Checkpoint generation; increases by one per checkpoint.
    pub generation: u64,
    /// Salt of the log epoch that follows this checkpoint. Frames with another salt are stale.
    pub log_salt: u64,
    /// First block of the catalog blob in the data file.
    pub catalog_block: u64,
    /// Catalog blob length in bytes.
    pub catalog_len: u64,
    /// xxh3-64 of the catalog blob.
    pub catalog_hash: u64,
    /// Next logical file id to hand out.
    pub next_file_id: u64,
    /// Sequence number the first commit of the log epoch will carry.
    pub next_txn_seq: u64,
    /// Data file length in blocks when the checkpoint was taken.
    pub block_count: u64,
}

impl Superblock {
    /// Encodes into a full 4 KiB slot.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(PAGE_SIZE);
        b.extend_from_slice(&SUPER_MAGIC);
        b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        b.extend_from_slice(&PAGE_SIZE_U32.to_le_bytes());
        for v in [
            self.generation,
            self.log_salt,
            self.catalog_block,
            self.catalog_len,
            self.catalog_hash,
            self.next_file_id,
            self.next_txn_seq,
            self.block_count,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        let h = xxh3_64(&b);
        b.extend_from_slice(&h.to_le_bytes());
        debug_assert_eq!(b.len(), SUPER_LEN);
        b.resize(PAGE_SIZE, 0);
        b
    }

    /// Decodes a slot. `Ok(None)`: the slot was never written (all zero).
    /// `Err(reason)`: the slot holds something that is not a valid superblock.
    pub fn decode(slot: &[u8]) -> Result<Option<Superblock>, &'static str> {
        if slot.len() < SUPER_LEN {
            return Err("superblock slot shorter than a superblock");
        }
        if slot[..SUPER_LEN].iter().all(|&b| b == 0) {
            return Ok(None);
        }
        let mut r = Reader::new(slot);
        if r.bytes(8) != Some(&SUPER_MAGIC[..]) {
            return Err("bad superblock magic");
        }
        let body_hash = xxh3_64(&slot[..SUPER_LEN - 8]);
        let stored =
            u64::from_le_bytes(slot[SUPER_LEN - 8..SUPER_LEN].try_into().unwrap_or([0; 8]));
        if body_hash != stored {
            return Err("superblock checksum mismatch");
        }
        if r.u32() != Some(FORMAT_VERSION) {
            return Err("unsupported format version");
        }
        if r.u32() != Some(PAGE_SIZE_U32) {
            return Err("unsupported page size");
        }
        let mut f = || r.u64().ok_or("truncated superblock");
        Ok(Some(Superblock {
            generation: f()?,
            log_salt: f()?,
            catalog_block: f()?,
            catalog_len: f()?,
            catalog_hash: f()?,
            next_file_id: f()?,
            next_txn_seq: f()?,
            block_count: f()?,
        }))
    }
}

/// One file as recorded in the catalog: its name, size and where its pages live.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Stable id (never reused within a volume).
    pub id: u64,
    /// Name.
    pub name: String,
    /// Length in bytes.
    pub size: u64,
    /// Runs of pages stored in consecutive blocks. Pages in no run are holes (zeros).
    pub runs: Vec<Run>,
}

/// Pages `first_page..first_page+hashes.len()` live in blocks `first_block..`; `hashes[i]` is
/// the xxh3-64 of the full 4 KiB block holding page `first_page + i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// First page index.
    pub first_page: u64,
    /// First block index in the data file.
    pub first_block: u64,
    /// One hash per page of the run.
    pub hashes: Vec<u64>,
}

/// Encodes the catalog blob.
pub fn encode_catalog(entries: &[CatalogEntry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(16 + entries.len() * 64);
    b.extend_from_slice(&CATALOG_MAGIC);
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        b.extend_from_slice(&e.id.to_le_bytes());
        b.extend_from_slice(&e.size.to_le_bytes());
        // Names are at most MAX_NAME_LEN bytes (checked on create/rename), so they fit a u16.
        let name_len = u16::try_from(e.name.len()).unwrap_or(u16::MAX);
        b.extend_from_slice(&name_len.to_le_bytes());
        b.extend_from_slice(e.name.as_bytes());
        b.extend_from_slice(&(e.runs.len() as u64).to_le_bytes());
        for run in &e.runs {
            b.extend_from_slice(&run.first_page.to_le_bytes());
            b.extend_from_slice(&run.first_block.to_le_bytes());
            b.extend_from_slice(&(run.hashes.len() as u64).to_le_bytes());
            for h in &run.hashes {
                b.extend_from_slice(&h.to_le_bytes());
            }
        }
    }
    b
}

/// Decodes the catalog blob; the error names what is wrong. An empty blob is an empty
/// catalog (a new volume's superblock points at no catalog).
pub fn decode_catalog(blob: &[u8]) -> Result<Vec<CatalogEntry>, &'static str> {
    if blob.is_empty() {
        return Ok(Vec::new());
    }
    let mut r = Reader::new(blob);
    if r.bytes(4) != Some(&CATALOG_MAGIC[..]) {
        return Err("bad catalog magic");
    }
    let n = r.u64().ok_or("truncated catalog")?;
    let mut out = Vec::new();
    for _ in 0..n {
        let id = r.u64().ok_or("truncated catalog entry")?;
        let size = r.u64().ok_or("truncated catalog entry")?;
        let name_len = r.u16().ok_or("truncated catalog entry")? as usize;
        if name_len > MAX_NAME_LEN {
            return Err("catalog name too long");
        }
        let name = std::str::from_utf8(r.bytes(name_len).ok_or("truncated catalog name")?)
            .map_err(|_| "catalog name is not UTF-8")?
            .to_owned();
        let nruns = r.u64().ok_or("truncated catalog entry")?;
        // Bound every count by the bytes left, so a corrupt count cannot make us allocate.
        let left = (blob.len() - r.pos()) as u64;
        if nruns > left / 24 {
            return Err("catalog run count exceeds blob");
        }
        let mut runs = Vec::with_capacity(usize::try_from(nruns).unwrap_or(0));
        for _ in 0..nruns {
            let first_page = r.u64().ok_or("truncated catalog run")?;
            let first_block = r.u64().ok_or("truncated catalog run")?;
            let count = r.u64().ok_or("truncated catalog run")?;
            let left = (blob.len() - r.pos()) as u64;
            if count == 0 || count > left / 8 {
                return Err("catalog run length out of range");
            }
            let mut hashes = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
            for _ in 0..count {
                hashes.push(r.u64().ok_or("truncated catalog run")?);
            }
            runs.push(Run {
                first_page,
                first_block,
                hashes,
            });
        }
        out.push(CatalogEntry {
            id,
            name,
            size,
            runs,
        });
    }
    if r.pos() != blob.len() {
        return Err("trailing bytes after catalog");
    }
    Ok(out)
}

/// Hash of a catalog blob, as stored in the superblock.
pub fn catalog_hash(blob: &[u8]) -> u64 {
    xxh3_64(blob)
}

/// What a log frame records. Frames of one transaction are followed by a `Commit` frame;
/// recovery applies a transaction only if its commit frame is valid.
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
    /// Full image of page `arg` of `file_id` (payload: the page's bytes, at most a page; the
    /// rest of the page is zero).
    Page = 5,
    /// End of transaction number `arg`.
    Commit = 6,
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
            _ => return None,
        })
    }
}

/// A decoded frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    /// What the frame records.
    pub kind: FrameKind,
    /// Logical file the frame is about (0 for commits).
    pub file_id: u64,
    /// Page index, new length, or transaction sequence number, by kind.
    pub arg: u64,
    /// Payload bytes following the header.
    pub payload_len: u32,
    /// Chained hash over this header (without the hash field) and payload, seeded with the
    /// previous frame's hash (the log salt for the first frame of an epoch).
    pub chain: u64,
}

/// Appends one frame to `out` and returns its chain hash (the seed for the next frame).
/// `session` is a random nonce of the current mount (see `decode_frame`).
#[allow(clippy::too_many_arguments)]
pub fn encode_frame(
    out: &mut Vec<u8>,
    salt: u64,
    session: u32,
    prev_chain: u64,
    kind: FrameKind,
    file_id: u64,
    arg: u64,
    payload: &[u8],
) -> u64 {
    let start = out.len();
    out.extend_from_slice(&FRAME_MAGIC);
    out.push(kind as u8);
    out.extend_from_slice(&[0; 3]);
    out.extend_from_slice(&salt.to_le_bytes());
    out.extend_from_slice(&file_id.to_le_bytes());
    out.extend_from_slice(&arg.to_le_bytes());
    // Payloads are names (<= MAX_NAME_LEN) or page images (<= PAGE_SIZE): they fit a u32.
    debug_assert!(payload.len() <= PAGE_SIZE);
    out.extend_from_slice(
        &u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .to_le_bytes(),
    );
    out.extend_from_slice(&session.to_le_bytes());
    let chain = frame_hash(prev_chain, &out[start..start + FRAME_HEADER - 8], payload);
    out.extend_from_slice(&chain.to_le_bytes());
    out.extend_from_slice(payload);
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

/// Decodes the frame at the start of `buf` if it is a valid continuation of the chain:
/// right magic and salt, known kind, payload present, chain hash matching. `None` ends the log.
pub fn decode_frame(buf: &[u8], salt: u64, prev_chain: u64) -> Option<(FrameHeader, &[u8])> {
    let mut r = Reader::new(buf);
    if r.bytes(4)? != FRAME_MAGIC {
        return None;
    }
    let kind = FrameKind::from_u8(r.bytes(4)?[0])?;
    if r.u64()? != salt {
        return None;
    }
    let file_id = r.u64()?;
    let arg = r.u64()?;
    let payload_len = r.u32()?;
    // The session nonce is not checked, only hashed: it makes frames written after a
    // remount differ from stale frames of an earlier mount, even for identical content.
    let _session = r.u32()?;
    let chain = r.u64()?;
    let max = match kind {
        FrameKind::Page => PAGE_SIZE,
        FrameKind::Create | FrameKind::Rename => MAX_NAME_LEN,
        _ => 0,
    };
    if payload_len as usize > max {
        return None;
    }
    let payload = r.bytes(payload_len as usize)?;
    if frame_hash(prev_chain, &buf[..FRAME_HEADER - 8], payload) != chain {
        return None;
    }
    Some((
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

/// The salt of the log epoch after checkpoint `generation`: distinct per generation and per
/// volume (mixed with the volume's creation salt).
pub fn epoch_salt(volume_salt: u64, generation: u64) -> u64 {
    xxh3_64_with_seed(&generation.to_le_bytes(), volume_salt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superblock_round_trip_and_corruption() {
        let sb = Superblock {
            generation: 7,
            log_salt: 99,
            catalog_block: 2,
            catalog_len: 12,
            catalog_hash: 5,
            next_file_id: 3,
            next_txn_seq: 40,
            block_count: 10,
        };
        let enc = sb.encode();
        assert_eq!(Superblock::decode(&enc), Ok(Some(sb)));
        assert_eq!(Superblock::decode(&vec![0; PAGE_SIZE]), Ok(None));
        for i in 0..SUPER_LEN {
            let mut bad = enc.clone();
            bad[i] ^= 0x40;
            assert!(Superblock::decode(&bad).is_err(), "flip at {i} accepted");
        }
    }

    #[test]
    fn frames_chain_and_reject_tampering() {
        let mut log = Vec::new();
        let c1 = encode_frame(&mut log, 5, 9, 5, FrameKind::Create, 1, 0, b"a.db");
        let first_len = log.len();
        let c2 = encode_frame(&mut log, 5, 9, c1, FrameKind::Page, 1, 0, &[7; 100]);
        // Same content in another session hashes differently.
        let mut other = Vec::new();
        let d1 = encode_frame(&mut other, 5, 10, 5, FrameKind::Create, 1, 0, b"a.db");
        assert_ne!(c1, d1);
        let (h1, p1) = decode_frame(&log, 5, 5).expect("first frame");
        assert_eq!((h1.kind, p1), (FrameKind::Create, &b"a.db"[..]));
        let (h2, p2) = decode_frame(&log[first_len..], 5, h1.chain).expect("second frame");
        assert_eq!((h2.kind, h2.chain, p2.len()), (FrameKind::Page, c2, 100));
        // Wrong salt, wrong seed, or any flipped byte ends the chain.
        assert!(decode_frame(&log, 6, 5).is_none());
        assert!(decode_frame(&log[first_len..], 5, 5).is_none());
        for i in first_len..log.len() {
            let mut bad = log.clone();
            bad[i] ^= 1;
            assert!(
                decode_frame(&bad[first_len..], 5, c1).is_none(),
                "flip at {i}"
            );
        }
        // A torn frame (prefix only) is rejected.
        assert!(decode_frame(&log[first_len..log.len() - 1], 5, c1).is_none());
    }

    #[test]
    fn catalog_round_trip() {
        let entries = vec![CatalogEntry {
            id: 4,
            name: "x/y.db".into(),
            size: 9000,
            runs: vec![
                Run {
                    first_page: 0,
                    first_block: 2,
                    hashes: vec![1, 2],
                },
                Run {
                    first_page: 2,
                    first_block: 9,
                    hashes: vec![3],
                },
            ],
        }];
        let blob = encode_catalog(&entries);
        assert_eq!(decode_catalog(&blob), Ok(entries));
        assert!(decode_catalog(&blob[..blob.len() - 1]).is_err());
    }
}
