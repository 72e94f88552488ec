//! Fuzzing the volume's mount, recovery and operations against damaged and hostile physical
//! images (see `fuzz/README.md`).
//!
//! One execution: the input chooses a physical image (a pair of files: `volume.data`,
//! `volume.log`) — either one of the committed *seed volumes* (`seeds/images.bin`, real volumes
//! written by `examples/gen_seeds.rs`) with structure-aware mutations applied, or raw bytes —
//! then mount options and a list of operations. The harness ([`run`]) mounts the image with
//! [`opfs_vfs::Volume::mount`] over [`opfs_vfs::storage::MemoryStorage`] and runs the
//! operations. What must hold, whatever the bytes:
//! - no panic, no abort;
//! - every error is one that a damaged image or a bad argument explains (`Corrupt`,
//!   `UnsupportedVersion`, `NewerCheckpointLost`, `NotFound`, `AlreadyExists`, `InvalidName`,
//!   `StaleId`, `TooLarge`, `FileIdsExhausted`); never `Io`, `OutOfSpace`, `Busy`,
//!   `CommitUnknown` or `Poisoned`, which only a failing storage can cause, and `MemoryStorage`
//!   never fails;
//! - `check_invariants()` holds after mount and after every operation;
//! - files this execution wrote read back exactly as written (or fail with `Corrupt`: the
//!   image may have damage the engine finds only when it reads it), also after a clean close
//!   and remount, and after a process crash under `Strict` and `Relaxed`;
//! - a volume whose `check_integrity()` was clean and that closed cleanly mounts again;
//! - the peak of live heap bytes during the execution stays under
//!   `64 MiB + 16 × (data length + log length)` (the caller checks it: see [`CountingAlloc`]).
//!
//! A broken rule panics, which libFuzzer reports as a crash.
//!
//! **Mutations that keep images realistic.** Flipping random bytes of a volume mostly hits a
//! checksum: the superblock's, a catalog blob's or a log frame's chained hash, so the image
//! fails at the first check and nothing deeper is exercised. The seed path therefore parses the
//! seed into its structures ([`tree::Tree`]: superblocks, directory, entry chunks, map chunks,
//! log frames), changes *fields* (an id, a size, a name, a block number, a run, a frame's kind
//! or sequence number; values near the original, from a table of edge values, or copied from
//! another field of the image), and re-encodes what changed with correct hashes, placing grown
//! blobs at the end of the data file and re-chaining the log. Byte-level damage (flips,
//! integers written into a chosen structure, truncation, block copies and swaps, zeroed
//! ranges, optionally with the superblock checksums fixed afterwards) comes on top.

#![forbid(unsafe_op_in_unsafe_fn)]

pub mod counting;
pub mod harness;
pub mod input;
pub mod seeds;
pub mod tree;

pub use counting::CountingAlloc;
pub use harness::run;

/// The memory bound for one execution on images of these lengths: 64 MiB plus 16 times the
/// image's size.
pub fn memory_bound(data_len: usize, log_len: usize) -> usize {
    (64 << 20) + 16 * (data_len + log_len)
}
