//! Helpers shared by the volume test suites: a model of the expected files and comparisons
//! against a mounted volume.
#![allow(dead_code)] // each test crate uses a different subset

use std::collections::BTreeMap;

use opfs_vfs::storage::Storage;
use opfs_vfs::testing::SplitMix64;
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};

/// The expected state of a volume: file name → contents.
pub type Model = BTreeMap<String, Vec<u8>>;

/// Every buffer mode.
pub const MODES: [BufferMode; 2] = [BufferMode::Memory, BufferMode::Disk];
/// Every durability level.
pub const DURABILITIES: [Durability; 3] = [
    Durability::Strict,
    Durability::Relaxed,
    Durability::Balanced,
];

/// The other buffer mode.
pub fn other(mode: BufferMode) -> BufferMode {
    match mode {
        BufferMode::Memory => BufferMode::Disk,
        BufferMode::Disk => BufferMode::Memory,
    }
}

/// Options with no time-based flushing (so physical calls are deterministic).
pub fn opts(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        max_flush_delay: std::time::Duration::from_secs(3600),
        ..Default::default()
    }
}

/// `len` pseudo-random bytes from `seed`.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    SplitMix64::new(seed).fill(&mut v);
    v
}

/// Applies `write(offset, data)` to a model file (zero-filling any gap).
pub fn model_write(file: &mut Vec<u8>, offset: usize, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let end = offset + data.len();
    if file.len() < end {
        file.resize(end, 0);
    }
    file[offset..end].copy_from_slice(data);
}

/// Reads every file of the volume (names from `list`, contents from `read_to_vec`).
pub fn read_state<S: Storage>(v: &mut Volume<S>) -> opfs_vfs::Result<Model> {
    let mut out = Model::new();
    for m in v.list() {
        let data = v.read_to_vec(m.id)?;
        assert_eq!(
            data.len() as u64,
            m.len,
            "read_to_vec length of {:?}",
            m.name
        );
        out.insert(m.name, data);
    }
    Ok(out)
}

/// A short description of the difference between two states (for assertion messages).
pub fn diff(got: &Model, want: &Model) -> String {
    let mut out = Vec::new();
    for (name, data) in got {
        match want.get(name) {
            None => out.push(format!("unexpected file {name:?} ({} B)", data.len())),
            Some(w) if w != data => {
                let first = data
                    .iter()
                    .zip(w.iter())
                    .position(|(a, b)| a != b)
                    .unwrap_or(data.len().min(w.len()));
                out.push(format!(
                    "{name:?}: {} B, want {} B, first difference at byte {first}",
                    data.len(),
                    w.len()
                ));
            }
            Some(_) => {}
        }
    }
    for (name, data) in want {
        if !got.contains_key(name) {
            out.push(format!("missing file {name:?} ({} B)", data.len()));
        }
    }
    if out.is_empty() {
        "no difference".into()
    } else {
        out.join("; ")
    }
}

/// Asserts that the volume holds exactly `want` (names, lengths and contents).
#[track_caller]
pub fn assert_state<S: Storage>(v: &mut Volume<S>, want: &Model) {
    let got = read_state(v).expect("reading every file");
    assert!(
        got == *want,
        "volume differs from model: {}",
        diff(&got, want)
    );
    for (name, data) in want {
        let st = v.stat(name).expect("stat");
        assert_eq!(st.len, data.len() as u64, "stat of {name:?}");
        assert_eq!(v.len(st.id).expect("len"), data.len() as u64);
    }
}
