#![cfg(not(target_arch = "wasm32"))]
//! Model-based property test: random sequences of filesystem operations, commits, flushes,
//! checkpoints, clean remounts (sometimes in the other buffer mode) and process crashes
//! (`into_storage_unflushed` + mount), checked after every step against a
//! `BTreeMap<String, Vec<u8>>` model.
//!
//! Small `checkpoint_bytes` (16 KiB) and `write_buffer_bytes` (8 KiB) make automatic
//! checkpoints and Disk-mode spills frequent; one write in nine is 100–200 KB, past Memory
//! mode's spill threshold (16 × the buffer). The durability level is part of the generated
//! input. Cases per test: `PROPTEST_CASES` (default 128).

mod common;

use std::collections::btree_map::Entry;

use common::{diff, model_write, other, read_state, Model};
use opfs_vfs::storage::MemoryStorage;
use opfs_vfs::{BufferMode, Durability, Error, FileId, Volume, VolumeOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};

const NAMES: [&str; 6] = ["a", "b", "c", "d", "dir/journal-with-a-longer-name", "é"];
const PAGE: u64 = 4096;

#[derive(Clone, Debug)]
enum Op {
    Create(usize),
    Write {
        file: usize,
        offset: u64,
        len: usize,
        seed: u64,
    },
    SetLen {
        file: usize,
        len: u64,
    },
    Rename {
        from: usize,
        to: usize,
    },
    Delete(usize),
    /// Use an id of a file deleted earlier: must be `StaleId`.
    UseStale,
    Commit,
    Flush,
    Checkpoint,
    /// close + mount, in the other buffer mode if `switch`.
    Remount {
        switch: bool,
    },
    /// into_storage_unflushed + mount (a crash of the process; the storage keeps every write).
    CrashRemount {
        switch: bool,
    },
}

/// Offsets and lengths clustered around page boundaries, plus arbitrary ones.
fn position() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => 0u64..40_000,
        2 => (0u64..10, 0u64..5).prop_map(|(p, d)| (p * PAGE + d).saturating_sub(2)),
        1 => Just(0u64),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let n = NAMES.len();
    prop_oneof![
        3 => (0..n).prop_map(Op::Create),
        8 => (0..n, position(), prop_oneof![4 => 0usize..5000, 4 => 0usize..20_000, 1 => 100_000usize..200_000], any::<u64>())
            .prop_map(|(file, offset, len, seed)| Op::Write { file, offset, len, seed }),
        2 => (0..n, position()).prop_map(|(file, len)| Op::SetLen { file, len }),
        2 => (0..n, 0..n).prop_map(|(from, to)| Op::Rename { from, to }),
        2 => (0..n).prop_map(Op::Delete),
        1 => Just(Op::UseStale),
        4 => Just(Op::Commit),
        1 => Just(Op::Flush),
        1 => Just(Op::Checkpoint),
        1 => any::<bool>().prop_map(|switch| Op::Remount { switch }),
        1 => any::<bool>().prop_map(|switch| Op::CrashRemount { switch }),
    ]
}

fn durability() -> impl Strategy<Value = Durability> {
    prop_oneof![
        2 => Just(Durability::Strict),
        1 => Just(Durability::Relaxed),
        1 => Just(Durability::Balanced),
    ]
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(128)
}

fn options(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        checkpoint_bytes: 16 << 10,
        write_buffer_bytes: 8 << 10,
        max_flush_delay: std::time::Duration::from_secs(3600),
        checkpoint_on_close: true,
        // No links: Disk mode then spills at the write buffer (with links it holds up to
        // twice `link_min_bytes` first), so small transactions spill too.
        link_min_bytes: None,
        ..VolumeOptions::default()
    }
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    common::pattern(len, seed)
}

/// The expected state, and what a process crash may roll back to.
struct Expect {
    current: Model,
    /// The last committed state.
    committed: Model,
    /// Committed states a process crash may come back to: the last durable (or written)
    /// state first, then every later commit.
    since_durable: Vec<Model>,
}

impl Expect {
    fn commit(&mut self) {
        self.committed = self.current.clone();
        self.since_durable.push(self.committed.clone());
    }
    fn durable(&mut self) {
        self.committed = self.current.clone();
        self.since_durable = vec![self.committed.clone()];
    }
}

/// Every file read in 4 KiB reads at page offsets.
fn read_state_paged(v: &mut Volume<MemoryStorage>) -> opfs_vfs::Result<Model> {
    let mut out = Model::new();
    for m in v.list() {
        let mut data = vec![0u8; usize::try_from(m.len).expect("small file")];
        for (k, chunk) in data.chunks_mut(4096).enumerate() {
            let n = v.read(m.id, k as u64 * PAGE, chunk)?;
            assert_eq!(n, chunk.len(), "short read of {:?} at page {k}", m.name);
        }
        out.insert(m.name, data);
    }
    Ok(out)
}

fn check_err(r: Result<(), Error>, ok: bool, what: &str) -> Result<(), TestCaseError> {
    match (r, ok) {
        (Ok(()), true) => Ok(()),
        (Err(e), true) => Err(TestCaseError::fail(format!("{what}: unexpected {e}"))),
        (Ok(()), false) => Err(TestCaseError::fail(format!("{what}: expected an error"))),
        (Err(_), false) => Ok(()),
    }
}

fn run(mode: BufferMode, durability: Durability, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut opts = options(mode, durability);
    let mut v = Volume::mount(MemoryStorage::new(), opts.clone()).expect("mount new volume");
    let mut ex = Expect {
        current: Model::new(),
        committed: Model::new(),
        since_durable: vec![Model::new()],
    };
    let mut stale: Vec<FileId> = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        let name = |i: usize| NAMES[i].to_string();
        match op {
            Op::Create(i) => {
                let n = name(*i);
                let r = v.create(&n);
                match ex.current.entry(n) {
                    Entry::Occupied(_) => {
                        prop_assert!(matches!(r, Err(Error::AlreadyExists { .. })), "{r:?}");
                    }
                    Entry::Vacant(slot) => {
                        r.map_err(|e| TestCaseError::fail(format!("create: {e}")))?;
                        slot.insert(Vec::new());
                    }
                }
            }
            Op::Write {
                file,
                offset,
                len,
                seed,
            } => {
                let n = name(*file);
                match v.open(&n) {
                    Ok(id) => {
                        let data = bytes(*len, *seed);
                        check_err(v.write(id, *offset, &data), true, "write")?;
                        let f = ex.current.get_mut(&n).expect("model has the file");
                        model_write(f, usize::try_from(*offset).unwrap(), &data);
                    }
                    Err(e) => {
                        prop_assert!(!ex.current.contains_key(&n), "open {n}: {e}");
                        prop_assert!(matches!(e, Error::NotFound { .. }), "{}", e);
                    }
                }
            }
            Op::SetLen { file, len } => {
                let n = name(*file);
                if let Ok(id) = v.open(&n) {
                    check_err(v.set_len(id, *len), true, "set_len")?;
                    let f = ex.current.get_mut(&n).expect("model has the file");
                    f.resize(usize::try_from(*len).unwrap(), 0);
                } else {
                    prop_assert!(!ex.current.contains_key(&n));
                }
            }
            Op::Rename { from, to } => {
                let (f, t) = (name(*from), name(*to));
                let ok = ex.current.contains_key(&f) && (f == t || !ex.current.contains_key(&t));
                let r = v.rename(&f, &t);
                check_err(r.clone(), ok, &format!("rename {f} -> {t}"))?;
                if ok && f != t {
                    let d = ex.current.remove(&f).expect("checked");
                    ex.current.insert(t, d);
                } else if !ok && !ex.current.contains_key(&f) {
                    prop_assert!(matches!(r, Err(Error::NotFound { .. })), "{r:?}");
                } else if !ok {
                    prop_assert!(matches!(r, Err(Error::AlreadyExists { .. })), "{r:?}");
                }
            }
            Op::Delete(i) => {
                let n = name(*i);
                let id = v.open(&n).ok();
                let r = v.delete(&n);
                check_err(r, ex.current.remove(&n).is_some(), "delete")?;
                stale.extend(id);
            }
            Op::UseStale => {
                if let Some(&id) = stale.last() {
                    let r = v.write(id, 0, b"x");
                    prop_assert!(matches!(r, Err(Error::StaleId { .. })), "{r:?}");
                    let r = v.read_to_vec(id);
                    prop_assert!(matches!(r, Err(Error::StaleId { .. })), "{r:?}");
                }
            }
            Op::Commit => {
                check_err(v.commit(), true, "commit")?;
                match durability {
                    // Written (and, for Strict, flushed): a process crash keeps it.
                    Durability::Strict | Durability::Relaxed => ex.durable(),
                    Durability::Balanced => ex.commit(),
                }
            }
            Op::Flush => {
                check_err(v.flush(), true, "flush")?;
                ex.durable();
            }
            Op::Checkpoint => {
                check_err(v.checkpoint(), true, "checkpoint")?;
                ex.durable();
            }
            Op::Remount { switch } => {
                if *switch {
                    opts.buffer_mode = other(opts.buffer_mode);
                }
                let st = v
                    .close()
                    .map_err(|e| TestCaseError::fail(format!("close: {e}")))?;
                v = Volume::mount(st, opts.clone())
                    .map_err(|e| TestCaseError::fail(format!("remount: {e}")))?;
                prop_assert_eq!(v.stats().recovered_commits, 0);
                ex.durable();
                stale.clear();
            }
            Op::CrashRemount { switch } => {
                if *switch {
                    opts.buffer_mode = other(opts.buffer_mode);
                }
                let st = v.into_storage_unflushed();
                v = Volume::mount(st, opts.clone())
                    .map_err(|e| TestCaseError::fail(format!("mount after crash: {e}")))?;
                let got = read_state(&mut v)
                    .map_err(|e| TestCaseError::fail(format!("read after crash: {e}")))?;
                if durability == Durability::Balanced {
                    // Some commit since the last durable point (a suffix may be lost).
                    prop_assert!(
                        ex.since_durable.contains(&got),
                        "after crash: state is no commit since the last flush: {}",
                        diff(&got, &ex.committed)
                    );
                } else {
                    prop_assert!(
                        got == ex.committed,
                        "after crash: not the last commit: {}",
                        diff(&got, &ex.committed)
                    );
                }
                ex.current = got;
                ex.durable();
                stale.clear();
            }
        }
        v.check_invariants()
            .map_err(|e| TestCaseError::fail(format!("step {step} ({op:?}): invariant: {e}")))?;
        // Page by page first (as SQLite reads: this fills the Disk-mode read-ahead windows,
        // which later commits must invalidate), then whole files.
        let paged = read_state_paged(&mut v)
            .map_err(|e| TestCaseError::fail(format!("step {step}: paged: {e}")))?;
        prop_assert!(
            paged == ex.current,
            "step {} ({:?}): paged: {}",
            step,
            op,
            diff(&paged, &ex.current)
        );
        let got =
            read_state(&mut v).map_err(|e| TestCaseError::fail(format!("step {step}: {e}")))?;
        prop_assert!(
            got == ex.current,
            "step {} ({:?}): {}",
            step,
            op,
            diff(&got, &ex.current)
        );
        let list: Vec<String> = v.list().into_iter().map(|m| m.name).collect();
        let want: Vec<String> = ex.current.keys().cloned().collect();
        prop_assert_eq!(list, want);
    }
    // Finally: close, mount in both modes, same state.
    let st = v.close().expect("final close");
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let mut w = Volume::mount(st.clone(), options(mode, durability)).expect("final mount");
        let got = read_state(&mut w).expect("final read");
        prop_assert!(got == ex.current, "final: {}", diff(&got, &ex.current));
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: cases(), ..Config::default() })]

    #[test]
    fn model_memory_mode(d in durability(), ops in prop::collection::vec(op(), 1..80)) {
        run(BufferMode::Memory, d, &ops)?;
    }

    #[test]
    fn model_disk_mode(d in durability(), ops in prop::collection::vec(op(), 1..80)) {
        run(BufferMode::Disk, d, &ops)?;
    }
}
