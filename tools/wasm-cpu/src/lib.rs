//! The engine's CPU per page of a large transaction, in wasm: a volume on `MemoryStorage`,
//! transactions appending whole 8 KiB pages (as SQLite's cases 2, 3, 11 and 14 write them),
//! timed with the storage calls' own time subtracted (`Volume::time_calls`), so what is left
//! is what the browser's split calls "the rest" (`results/2026-12-07-call-timing`). See
//! README.md.

use opfs_vfs::storage::MemoryStorage;
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};
use wasm_bindgen::prelude::*;
use web_time::Instant;

/// SQLite's page size in the wasm build.
const SQLITE_PAGE: usize = 8192;

/// `txns` transactions on one file, each appending `pages` 8 KiB pages and committing.
/// Returns `[writes, commits, inside storage calls, checkpoints]`: the first three in
/// nanoseconds per page, the last a count of the checkpoints that ran (`ab.js` fails if any did).
/// Checkpoints are kept off (`checkpoint_bytes` 1 TiB): the browser runs them when the
/// worker idles, outside the timed cases.
#[wasm_bindgen]
pub fn bench(memory: bool, balanced: bool, pages: u32, txns: u32) -> Result<Vec<f64>, String> {
    let durability = if balanced {
        Durability::Balanced
    } else {
        Durability::Strict
    };
    let mut v = volume(memory, durability)?;
    let id = v.create("db").map_err(err)?;
    v.commit().map_err(err)?;
    v.time_calls(true);
    let calls_before = v.counters().total().call_ns();
    let mut page = vec![0u8; SQLITE_PAGE];
    let (mut writing, mut committing) = (0f64, 0f64);
    let mut at = 0u64;
    for t in 0..txns {
        let start = Instant::now();
        for p in 0..pages {
            // Every page differs from every other (no page is skipped as unchanged).
            page[..8].copy_from_slice(&(u64::from(p) | u64::from(t) << 32).to_le_bytes());
            v.write(id, at, &page).map_err(err)?;
            at += SQLITE_PAGE as u64;
        }
        let written = Instant::now();
        v.commit().map_err(err)?;
        committing += written.elapsed().as_secs_f64();
        writing += (written - start).as_secs_f64();
    }
    let n = f64::from(pages) * f64::from(txns);
    Ok(results(&v, calls_before, writing, committing, n))
}

/// Test 1's shape: `commits` autocommits, each writing the file's first 8 KiB page (SQLite's
/// header page: its change counter moves) and its last leaf page (a new row's cell), a new
/// leaf every 64 commits, as 1,000 autocommit INSERTs of ~100-byte rows do. Returns
/// `[writes, commits, inside storage calls, checkpoints]`: the first three in nanoseconds per
/// commit, the last a count.
#[wasm_bindgen]
pub fn bench_autocommit(memory: bool, commits: u32) -> Result<Vec<f64>, String> {
    let mut v = volume(memory, Durability::Balanced)?;
    let id = v.create("db").map_err(err)?;
    let mut header = vec![0u8; SQLITE_PAGE];
    let mut leaf = vec![0u8; SQLITE_PAGE];
    v.write(id, 0, &header).map_err(err)?;
    v.commit().map_err(err)?;
    v.time_calls(true);
    let calls_before = v.counters().total().call_ns();
    let (mut writing, mut committing) = (0f64, 0f64);
    for c in 0..commits {
        let start = Instant::now();
        header[24..28].copy_from_slice(&c.to_be_bytes());
        v.write(id, 0, &header).map_err(err)?;
        // Cells fill the leaf from its end; its header (cell count) changes at byte 3.
        let row = (c % 64) as usize;
        leaf[3..5].copy_from_slice(&(row as u16 + 1).to_be_bytes());
        leaf[SQLITE_PAGE - 100 * (row + 1)..SQLITE_PAGE - 100 * row].fill(c as u8 | 1);
        let at = (1 + u64::from(c / 64)) * SQLITE_PAGE as u64;
        v.write(id, at, &leaf).map_err(err)?;
        let written = Instant::now();
        v.commit().map_err(err)?;
        committing += written.elapsed().as_secs_f64();
        writing += (written - start).as_secs_f64();
    }
    Ok(results(
        &v,
        calls_before,
        writing,
        committing,
        f64::from(commits),
    ))
}

/// A volume on `MemoryStorage` in the given mode and level, checkpoints off
/// (`checkpoint_bytes` 1 TiB: the browser runs them when the worker idles, outside the cases).
fn volume(memory: bool, durability: Durability) -> Result<Volume<MemoryStorage>, String> {
    let opts = VolumeOptions {
        buffer_mode: if memory {
            BufferMode::Memory
        } else {
            BufferMode::Disk
        },
        durability,
        memory_budget: None,
        checkpoint_bytes: 1 << 40,
        ..VolumeOptions::default()
    };
    Volume::mount(MemoryStorage::new(), opts).map_err(err)
}

fn err(e: opfs_vfs::Error) -> String {
    e.to_string()
}

/// `[writes, commits, inside storage calls]` in ns per unit (`n` units: pages or commits), from
/// seconds of writing and committing and the storage calls' ns since `calls_before`; then the
/// checkpoints run.
fn results(
    v: &Volume<MemoryStorage>,
    calls_before: u64,
    writing: f64,
    committing: f64,
    n: f64,
) -> Vec<f64> {
    let calls = (v.counters().total().call_ns() - calls_before) as f64;
    vec![
        writing * 1e9 / n,
        committing * 1e9 / n,
        calls / n,
        v.stats().checkpoints as f64,
    ]
}
