//! The seed volumes: real images written by `examples/gen_seeds.rs`, bundled into one file
//! (`seeds/images.bin`) that the fuzz target embeds, so an input names a seed by index and
//! stays small.
//!
//! Bundle format: magic `"OVFSEED1"`, then per seed: u32 name length, name, u32 data length,
//! data, u32 log length, log (little-endian).

use std::sync::OnceLock;

use opfs_vfs::storage::{MemoryStorage, PhysicalFileId};

use crate::tree::Tree;

const MAGIC: &[u8; 8] = b"OVFSEED1";

/// The committed bundle.
static BUNDLE: &[u8] = include_bytes!("../seeds/images.bin");

/// One seed volume.
#[derive(Clone, Debug)]
pub struct Seed {
    /// What the generator made (e.g. `crash-mid-checkpoint-3`).
    pub name: String,
    /// `volume.data`.
    pub data: Vec<u8>,
    /// `volume.log`.
    pub log: Vec<u8>,
}

/// A seed with its parsed structure (computed once per process).
#[derive(Debug)]
pub struct ParsedSeed {
    /// The bytes.
    pub seed: Seed,
    /// Its structure, for field mutations.
    pub tree: Tree,
}

/// Encodes seeds into the bundle format.
pub fn encode_bundle(seeds: &[Seed]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    for s in seeds {
        for part in [s.name.as_bytes(), &s.data, &s.log] {
            out.extend_from_slice(&u32::try_from(part.len()).unwrap_or(u32::MAX).to_le_bytes());
            out.extend_from_slice(part);
        }
    }
    out
}

/// Decodes a bundle (an empty or damaged bundle gives the seeds decoded so far).
pub fn decode_bundle(mut b: &[u8]) -> Vec<Seed> {
    let mut out = Vec::new();
    if b.get(..8) != Some(&MAGIC[..]) {
        return out;
    }
    b = &b[8..];
    let take = |b: &mut &[u8]| -> Option<Vec<u8>> {
        let n = u32::from_le_bytes(b.get(..4)?.try_into().ok()?) as usize;
        let v = b.get(4..4 + n)?.to_vec();
        *b = &b[4 + n..];
        Some(v)
    };
    while !b.is_empty() {
        let (Some(name), Some(data), Some(log)) = (take(&mut b), take(&mut b), take(&mut b)) else {
            break;
        };
        out.push(Seed {
            name: String::from_utf8_lossy(&name).into_owned(),
            data,
            log,
        });
    }
    out
}

/// The embedded seeds, parsed.
pub fn seeds() -> &'static [ParsedSeed] {
    static SEEDS: OnceLock<Vec<ParsedSeed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        decode_bundle(BUNDLE)
            .into_iter()
            .map(|seed| ParsedSeed {
                tree: Tree::parse(&seed.data, &seed.log),
                seed,
            })
            .collect()
    })
}

/// A seed's bytes as a storage.
pub fn storage_of(data: &[u8], log: &[u8]) -> MemoryStorage {
    let mut st = MemoryStorage::new();
    *st.get_mut(PhysicalFileId::Data).bytes_mut() = data.to_vec();
    *st.get_mut(PhysicalFileId::Log).bytes_mut() = log.to_vec();
    st
}
