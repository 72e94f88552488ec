//! The raw OPFS per-call workloads (seed page 000), on one `FileSystemSyncAccessHandle` in
//! this dedicated worker: the physical floor, measured on the same device in the same run as
//! the lifecycle.
//!
//! | series | calls | what is timed, per call |
//! |---|---|---|
//! | `small-append` | N | `write(4 KiB, {at: size})`: the file grows on every call |
//! | `small-overwrite` | N | `write(4 KiB, {at: 0})` into a file pre-sized to 4 KiB |
//! | `chunked-append (64 KiB)` | ⌈N·4 KiB / 64 KiB⌉ | appending writes of 64 KiB, same total bytes as small-append (the last chunk may be shorter) |
//! | `chunked-append (1 MiB)` | ⌈N·4 KiB / 1 MiB⌉ | the same with 1 MiB |
//! | `chunked-append (64 KiB): flush`, `chunked-append (1 MiB): flush` | 1 | the `flush()` right after each chunked series, of its N·4 KiB unflushed bytes: what making bulk bytes durable costs (the physical floor prices the bytes a backend writes with it and the 1 MiB series) |
//! | `append+flush` | M | a 4 KiB append followed by `flush()`, timed together |
//! | `append+flush: flush` | M | the `flush()` of each pair alone |
//! | `overwrite+flush` | M | a 4 KiB write inside a file pre-sized (and flushed) to M × 4 KiB, at the next 4 KiB offset, followed by `flush()`: what a commit costs when the log does not grow the file |
//! | `overwrite+flush: flush` | M | the `flush()` of each pair alone |
//! | `commit-sized overwrite+flush` | M | the same with writes of [`LOG_COMMIT_BYTES`] (12,576 B: one test-1 autocommit in our log) at consecutive offsets, not 4 KiB aligned, in a file pre-sized to M × 12,576 |
//! | `commit-sized overwrite+flush: flush` | M | the `flush()` of each pair alone |
//! | `engine commit (Strict)` | M | our volume's `commit()` in Memory mode at `Strict` on OPFS (its own two files, in a subdirectory), of what an autocommit INSERT changes: a 100-byte row in an 8 KiB leaf and 8 bytes of page 0 (SQLite's change counter). Each makes one write and one flush (checked) |
//! | `engine commit: raw pair` | M | a write of the bytes one such commit writes (at consecutive offsets of a pre-sized file) and a `flush()`, in blocks of 25 alternating with the commits' blocks: what the commit costs the browser, measured beside it |
//! | `engine commit: outside its calls` | M | each of those commits less the time inside its two OPFS calls (the volume times them: four `performance.now()` readings per commit, in the commit's time too) |
//! | `engine commit in memory: back to back` | M | the same commits on a volume in memory (`MemoryStorage`: no OPFS call), in blocks of 25 with nothing between them: the commit's CPU |
//! | `engine commit in memory: after a raw pair` | M | the same, each right after a raw write+flush pair (untimed) of the commit's bytes: the commit's CPU after a wait for the browser |
//! | `bulk append+flush` | [`BULK_PAIRS`] | a [`BULK_BYTES`] (1 MiB) write at the file's end followed by `flush()`: what a big commit costs as a tail link, which grows the data file |
//! | `bulk grown+flush` | [`BULK_PAIRS`] | the same into a file grown ahead by `truncate()` (not written): whether growing the tail ahead in steps would save the growth |
//! | `bulk overwrite+flush` | [`BULK_PAIRS`] | the same into a file written and flushed ahead: what a big commit costs in the log, which overwrites its spare bytes |
//! | `bulk …: flush` | [`BULK_PAIRS`] | the `flush()` of each of those pairs alone |
//! | `new-file: create+open` | M | `getFileHandle(name, {create: true})` + `createSyncAccessHandle()` on a new name |
//! | `new-file: first write` | M | `write(4 KiB, {at: 0})` into that empty file |
//! | `new-file: close` | M | `close()` of the handle |
//! | `new-file: delete` | M | `removeEntry(name)` |
//! | `new-file: full cycle` | M | the four steps above, per file |
//!
//! Each workload starts on a new file (created, and afterwards closed and removed, outside the
//! timings); each run starts from a wiped directory. Times come from the worker's
//! `performance.now()` read right before and after each call (options objects are built
//! before the first reading), so they are rounded to the browser's timer step (recorded in the
//! environment): a call faster than the step reads as 0 or one step, and per-call means are
//! only meaningful over many calls. Every write's returned count is checked.

use bench_results::raw::{
    ENGINE_COMMIT_SERIES, ENGINE_MEMORY_AFTER_PAIR_SERIES, ENGINE_MEMORY_SERIES,
    ENGINE_OUTSIDE_SERIES, ENGINE_PAIR_SERIES,
};
use opfs_vfs::storage::{MemoryStorage, OpfsStorage, PhysicalFileId, Storage};
use opfs_vfs::{BufferMode, Durability, FileId, Volume, VolumeOptions};
use web_sys::FileSystemDirectoryHandle;

use crate::config::RawConfig;
use crate::js::{self, Clock, SyncHandle};
use crate::result::{CallSeries, RawRun, RawSuite};
use crate::runner::Tally;
use crate::{FsError, Progress, SuiteKind};

/// Seed of the bytes written (their values do not matter; they are not zeros).
const DATA_SEED: u64 = 0x0BF5_0000_0000_0001;

/// Bytes one autocommit INSERT of the SQL suite's test 1 writes to our log (three 4 KiB page
/// frames and a commit frame: 3 × 4,152 + 120; measured 2026-12-05 with 8 KiB SQLite pages).
pub const LOG_COMMIT_BYTES: u32 = 12_576;

/// Name of the commit-sized write+flush series.
pub const COMMIT_SIZED: &str = "commit-sized overwrite+flush";

/// Bytes per write of the bulk write+flush series: a big commit's pages.
pub const BULK_BYTES: u32 = 1 << 20;

/// Pairs per bulk series (8 MiB written by each).
pub const BULK_PAIRS: u32 = 8;

/// Units of work per run, for progress: small-append, small-overwrite, one per chunk size,
/// append+flush, overwrite+flush, commit-sized overwrite+flush, the engine commit, the three
/// bulk series, new-file.
pub fn workload_count(cfg: &RawConfig) -> u32 {
    10 + u32::try_from(cfg.chunk_bytes.len()).unwrap_or(0)
}

/// Bytes of the engine series' file: its row moves through bytes 4,096..12,288 (an 8 KiB leaf).
const ENGINE_FILE_BYTES: usize = 64 << 10;

/// Commits (and pairs) per block of the engine series: the two alternate in blocks, so that
/// drift in the browser's costs during the series falls on both alike.
const ENGINE_BLOCK: u32 = 25;

/// The engine series' figures: the commits, the raw pairs interleaved with them, the log
/// bytes one commit wrote (the pairs' size), each commit's time outside its OPFS calls, and the
/// same commits on a volume in memory, back to back and each after a raw pair.
struct EngineRun {
    commits: Vec<f64>,
    pairs: Vec<f64>,
    bytes_per_commit: u32,
    outside: Vec<f64>,
    memory: Vec<f64>,
    memory_after_pair: Vec<f64>,
}

/// A volume at Strict in Memory mode on `storage`, holding the engine series' file `db`, its
/// contents committed and checkpointed; returns the file's id.
fn engine_volume<S: Storage>(storage: S) -> Result<(Volume<S>, FileId), FsError> {
    let opts = VolumeOptions {
        buffer_mode: BufferMode::Memory,
        durability: Durability::Strict,
        ..VolumeOptions::default()
    };
    let mut v = Volume::mount(storage, opts)?;
    let id = v.create("db")?;
    v.write(id, 0, &pattern(ENGINE_FILE_BYTES))?;
    v.commit()?;
    v.checkpoint()?;
    Ok((v, id))
}

/// One autocommit-sized change to `db` (`k`-th: a 100-byte row at the next position of an
/// 8 KiB leaf, and 8 bytes at offset 24), then its commit, timed: (µs, µs inside the storage's
/// calls while it ran: 0 unless the volume times them).
fn engine_commit<S: Storage>(
    v: &mut Volume<S>,
    id: FileId,
    k: &mut u64,
    clock: &Clock,
) -> Result<(f64, f64), FsError> {
    v.write(id, 4096 + (*k * 100) % (8192 - 100), &[0xA5u8; 100])?;
    v.write(id, 24, &k.to_le_bytes())?;
    *k += 1;
    let before = v.counters().total().call_ns();
    let t0 = clock.now();
    let r = v.commit();
    let t1 = clock.now();
    r?;
    let inside = v.counters().total().call_ns() - before;
    Ok(((t1 - t0) * 1e3, inside as f64 / 1e3))
}

/// `m` Strict commits of our volume on OPFS in the directory `path` (created, and left for the
/// run's wipe), each of a 100-byte row written into an 8 KiB "leaf" at the next position and 8
/// bytes at offset 24 — the pages and sizes an autocommit INSERT changes — and `m` raw pairs of
/// the same size: a write of the bytes one commit wrote, at consecutive offsets of the file
/// `pair_name` in `d` (pre-sized and flushed), and a `flush()`. Commits and pairs alternate in
/// blocks of [`ENGINE_BLOCK`]; each `commit()` and each pair is timed (µs), and so is the time
/// inside each commit's two OPFS calls. After each block of pairs, the same commits on a volume
/// in memory: a block back to back, then a block each right after an untimed raw pair. Untimed
/// before: the file is written, committed and checkpointed, then eight commits: the first log
/// the pages' images, so the timed ones are logged as patches, as a run of autocommits is; the
/// last four give the pairs' size. Fails if a timed commit made other than one log write and
/// one flush.
async fn engine_commits(
    path: &str,
    d: &FileSystemDirectoryHandle,
    pair_name: &str,
    clock: &Clock,
    m: u32,
) -> Result<EngineRun, FsError> {
    let (mut v, id) = engine_volume(OpfsStorage::open(path).await?)?;
    let (mut mem, mem_id) = engine_volume(MemoryStorage::new())?;
    let (mut k, mut mem_k) = (0u64, 0u64);
    for _ in 0..4 {
        engine_commit(&mut v, id, &mut k, clock)?;
        engine_commit(&mut mem, mem_id, &mut mem_k, clock)?;
    }
    // The pairs' size: what four more untimed commits wrote, on average.
    let size = {
        let before = v.counters();
        for _ in 0..4 {
            engine_commit(&mut v, id, &mut k, clock)?;
            engine_commit(&mut mem, mem_id, &mut mem_k, clock)?;
        }
        let b = v
            .counters()
            .since(&before)
            .file(PhysicalFileId::Log)
            .written_bytes
            / 4;
        usize::try_from(b).unwrap_or(4096).max(1)
    };
    let bytes = pattern(size);
    // Room for the pairs timed beside the commits and for those before the in-memory commits.
    let h = fresh(d, pair_name).await?;
    h.write_at(&vec![0x5Au8; size * 2 * m as usize + 4096], 0)?;
    h.flush()?;
    // The OPFS volume's calls are timed from here on, so that each commit's time splits into
    // its two calls and the rest.
    v.time_calls(true);
    let before = v.counters();
    let cap = m as usize;
    let (mut commits, mut outside, mut pairs) = (
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
    );
    let (mut memory, mut memory_after_pair) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
    let mut done = 0u32;
    let mut offset = 0u64;
    while done < m {
        let n = ENGINE_BLOCK.min(m - done);
        for _ in 0..n {
            let (us, inside) = engine_commit(&mut v, id, &mut k, clock)?;
            commits.push(us);
            outside.push(us - inside);
        }
        pairs.extend(write_flush_pairs(&h, clock, &bytes, offset, n)?.0);
        offset += u64::from(n);
        for _ in 0..n {
            memory.push(engine_commit(&mut mem, mem_id, &mut mem_k, clock)?.0);
        }
        for _ in 0..n {
            write_flush_pairs(&h, clock, &bytes, offset, 1)?;
            offset += 1;
            memory_after_pair.push(engine_commit(&mut mem, mem_id, &mut mem_k, clock)?.0);
        }
        done += n;
    }
    discard(d, pair_name, h).await?;
    let calls = v.counters().since(&before);
    let log = calls.file(PhysicalFileId::Log);
    let all = calls.total();
    if all.writes != u64::from(m) || all.flushes != u64::from(m) || log.writes != all.writes {
        return Err(FsError::Unsupported(format!(
            "{ENGINE_COMMIT_SERIES}: {m} commits made {} writes and {} flushes ({} writes to \
             the log), not one log write and one flush each",
            all.writes, all.flushes, log.writes
        )));
    }
    drop(v.close()?);
    Ok(EngineRun {
        commits,
        pairs,
        bytes_per_commit: u32::try_from(size).unwrap_or(u32::MAX),
        outside,
        memory,
        memory_after_pair,
    })
}

/// `65536` → `"64 KiB"`, `1048576` → `"1 MiB"`.
fn human_bytes(n: u32) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

fn pattern(len: usize) -> Vec<u8> {
    let mut state = DATA_SEED;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        v.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Runs every raw workload `warmup + runs` times in the OPFS directory `dir` (wiped before each
/// run and removed after it, also after a failure).
pub async fn run_raw_suite(
    cfg: &RawConfig,
    dir: &str,
    runs: u32,
    warmup: u32,
    tally: &mut Tally,
    progress: &mut dyn FnMut(Progress),
) -> Result<RawSuite, FsError> {
    if cfg.small_calls == 0
        || cfg.cycle_calls == 0
        || cfg.small_bytes == 0
        || cfg.chunk_bytes.contains(&0)
    {
        return Err(FsError::Unsupported(format!(
            "raw workloads need positive counts and sizes: {cfg:?}"
        )));
    }
    let clock = Clock::new()?;
    let largest = cfg
        .chunk_bytes
        .iter()
        .copied()
        .chain([cfg.small_bytes, LOG_COMMIT_BYTES, BULK_BYTES])
        .max()
        .unwrap_or(cfg.small_bytes);
    let data = pattern(largest as usize);
    let mut suite = RawSuite::default();
    for index in 0..warmup + runs {
        js::remove_dir(dir).await?;
        let d = js::open_dir(dir, true).await?;
        let mut report = |item: &str, ms: f64| {
            tally.report(progress, SuiteKind::Raw, item, index, warmup, runs, ms);
        };
        let out = run_once(cfg, dir, &d, &clock, &data, &mut report).await;
        drop(d);
        let cleaned = js::remove_dir(dir).await;
        let run = out?;
        cleaned?;
        if index < warmup {
            suite.warmup_runs.push(run);
        } else {
            suite.runs.push(run);
        }
    }
    Ok(suite)
}

/// What a bulk series' file holds before its pairs.
#[derive(Clone, Copy)]
enum Ahead {
    /// Nothing: every write grows the file.
    Nothing,
    /// Its final length, set by `truncate()`: zeros never written.
    Truncate,
    /// Its final length, written and flushed.
    Written,
}

/// A new empty file and its handle (untimed).
async fn fresh(d: &FileSystemDirectoryHandle, name: &str) -> Result<SyncHandle, FsError> {
    let file = js::file_handle(d, name, true).await?;
    js::sync_handle(&file).await
}

/// Closes and removes a workload's file (untimed).
async fn discard(d: &FileSystemDirectoryHandle, name: &str, h: SyncHandle) -> Result<(), FsError> {
    drop(h);
    js::remove_entry(d, name).await
}

fn series(
    name: &str,
    bytes_per_call: u32,
    total: u64,
    samples: Vec<f64>,
) -> Result<CallSeries, FsError> {
    CallSeries::new(name, bytes_per_call, total, samples)
        .ok_or_else(|| FsError::Unsupported(format!("{name}: no calls")))
}

/// `m` pairs of a `buf.len()`-byte write at the next offset (`first`·len, (`first`+1)·len,
/// ...) and a `flush()`, timing each pair and each flush alone (µs).
fn write_flush_pairs(
    h: &SyncHandle,
    clock: &Clock,
    buf: &[u8],
    first: u64,
    m: u32,
) -> Result<(Vec<f64>, Vec<f64>), FsError> {
    let mut pairs = Vec::with_capacity(m as usize);
    let mut flushes = Vec::with_capacity(m as usize);
    for i in first..first + u64::from(m) {
        let opts = js::at(i * buf.len() as u64)?;
        let t0 = clock.now();
        let w = h.write_with(buf, &opts);
        let t1 = clock.now();
        let f = h.flush();
        let t2 = clock.now();
        w?;
        f?;
        pairs.push((t2 - t0) * 1e3);
        flushes.push((t2 - t1) * 1e3);
    }
    Ok((pairs, flushes))
}

/// [`write_flush_pairs`] in a new file `name` already sized (and flushed, outside the timings)
/// to the `m × buf.len()` bytes the pairs overwrite; returns the pairs, the flushes and that
/// total.
async fn overwrite_flush_pairs(
    d: &FileSystemDirectoryHandle,
    name: &str,
    clock: &Clock,
    buf: &[u8],
    m: u32,
) -> Result<(Vec<f64>, Vec<f64>, u64), FsError> {
    let total = u64::from(m) * buf.len() as u64;
    let h = fresh(d, name).await?;
    let sized = vec![0x5Au8; usize::try_from(total).unwrap_or(usize::MAX)];
    h.write_at(&sized, 0)?;
    h.flush()?;
    drop(sized);
    let (pairs, flushes) = write_flush_pairs(&h, clock, buf, 0, m)?;
    discard(d, name, h).await?;
    Ok((pairs, flushes, total))
}

/// Appends `total` bytes in calls of `chunk` bytes (the last may be shorter), timing each.
fn appends(
    h: &SyncHandle,
    clock: &Clock,
    data: &[u8],
    chunk: usize,
    total: u64,
) -> Result<Vec<f64>, FsError> {
    let mut samples = Vec::with_capacity(usize::try_from(total / chunk as u64 + 1).unwrap_or(0));
    let mut offset = 0u64;
    while offset < total {
        let len = usize::try_from((total - offset).min(chunk as u64)).unwrap_or(chunk);
        let opts = js::at(offset)?;
        let buf = &data[..len];
        let t0 = clock.now();
        let r = h.write_with(buf, &opts);
        let t1 = clock.now();
        r?;
        samples.push((t1 - t0) * 1e3);
        offset += len as u64;
    }
    Ok(samples)
}

async fn run_once(
    cfg: &RawConfig,
    dir: &str,
    d: &FileSystemDirectoryHandle,
    clock: &Clock,
    data: &[u8],
    report: &mut dyn FnMut(&str, f64),
) -> Result<RawRun, FsError> {
    let small = cfg.small_bytes as usize;
    let n = cfg.small_calls;
    let m = cfg.cycle_calls;
    let small_total = u64::from(n) * u64::from(cfg.small_bytes);
    let mut out = Vec::new();

    // small-append
    let start = clock.now();
    let h = fresh(d, "small-append.bin").await?;
    let samples = appends(&h, clock, data, small, small_total)?;
    discard(d, "small-append.bin", h).await?;
    out.push(series(
        "small-append",
        cfg.small_bytes,
        small_total,
        samples,
    )?);
    report("small-append", clock.now() - start);

    // small-overwrite
    let start = clock.now();
    let h = fresh(d, "small-overwrite.bin").await?;
    h.write_at(&data[..small], 0)?;
    let opts = js::at(0)?;
    let buf = &data[..small];
    let mut samples = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let t0 = clock.now();
        let r = h.write_with(buf, &opts);
        let t1 = clock.now();
        r?;
        samples.push((t1 - t0) * 1e3);
    }
    discard(d, "small-overwrite.bin", h).await?;
    out.push(series(
        "small-overwrite",
        cfg.small_bytes,
        small_total,
        samples,
    )?);
    report("small-overwrite", clock.now() - start);

    // chunked-append, one per chunk size
    for &chunk in &cfg.chunk_bytes {
        let name = format!("chunked-append ({})", human_bytes(chunk));
        let start = clock.now();
        let h = fresh(d, "chunked-append.bin").await?;
        let samples = appends(&h, clock, data, chunk as usize, small_total)?;
        let t0 = clock.now();
        let flushed = h.flush();
        let t1 = clock.now();
        flushed?;
        discard(d, "chunked-append.bin", h).await?;
        out.push(series(&name, chunk, small_total, samples)?);
        out.push(series(
            &format!("{name}: flush"),
            0,
            0,
            vec![(t1 - t0) * 1e3],
        )?);
        report(&name, clock.now() - start);
    }

    // append+flush
    let start = clock.now();
    let h = fresh(d, "append-flush.bin").await?;
    let (pairs, flushes) = write_flush_pairs(&h, clock, buf, 0, m)?;
    discard(d, "append-flush.bin", h).await?;
    let flush_total = u64::from(m) * u64::from(cfg.small_bytes);
    out.push(series("append+flush", cfg.small_bytes, flush_total, pairs)?);
    out.push(series("append+flush: flush", 0, 0, flushes)?);
    report("append+flush", clock.now() - start);

    // overwrite+flush: the same pairs inside a file that already has its size, so no write
    // changes the file's length; then with the log's own sizes and offsets (not 4 KiB
    // aligned): what one autocommit costs our log physically.
    let commit = &data[..LOG_COMMIT_BYTES as usize];
    for (name, file, bytes) in [
        ("overwrite+flush", "overwrite-flush.bin", buf),
        (COMMIT_SIZED, "commit-flush.bin", commit),
    ] {
        let start = clock.now();
        let (pairs, flushes, total) = overwrite_flush_pairs(d, file, clock, bytes, m).await?;
        // A write is at most the largest chunk or LOG_COMMIT_BYTES: it fits a u32.
        let per_call = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        out.push(series(name, per_call, total, pairs)?);
        out.push(series(&format!("{name}: flush"), 0, 0, flushes)?);
        report(name, clock.now() - start);
    }

    // The engine's Strict commit of an autocommit-sized change, and raw pairs of its bytes in
    // blocks alternating with its commits: its floor, measured beside it
    // (`RawDerived::engine_commit_over_pair`).
    let start = clock.now();
    let e = engine_commits(&format!("{dir}/engine"), d, "engine-pair.bin", clock, m).await?;
    let total = u64::from(e.bytes_per_commit) * u64::from(m);
    out.push(series(
        ENGINE_COMMIT_SERIES,
        e.bytes_per_commit,
        total,
        e.commits,
    )?);
    out.push(series(
        ENGINE_PAIR_SERIES,
        e.bytes_per_commit,
        total,
        e.pairs,
    )?);
    out.push(series(ENGINE_OUTSIDE_SERIES, 0, 0, e.outside)?);
    out.push(series(ENGINE_MEMORY_SERIES, 0, 0, e.memory)?);
    out.push(series(
        ENGINE_MEMORY_AFTER_PAIR_SERIES,
        0,
        0,
        e.memory_after_pair,
    )?);
    report(ENGINE_COMMIT_SERIES, clock.now() - start);

    // Bulk pairs: the same 1 MiB write+flush at the end of a growing file (a tail link), into
    // a file grown ahead by truncate() but never written, and into a file written and flushed
    // ahead (the log's spare bytes).
    let bulk = &data[..BULK_BYTES as usize];
    let bulk_total = u64::from(BULK_PAIRS) * u64::from(BULK_BYTES);
    for (name, ahead) in [
        ("bulk append+flush", Ahead::Nothing),
        ("bulk grown+flush", Ahead::Truncate),
        ("bulk overwrite+flush", Ahead::Written),
    ] {
        let start = clock.now();
        let file = "bulk.bin";
        let h = fresh(d, file).await?;
        match ahead {
            Ahead::Nothing => {}
            Ahead::Truncate => h.truncate(bulk_total)?,
            Ahead::Written => {
                for i in 0..u64::from(BULK_PAIRS) {
                    h.write_at(bulk, i * u64::from(BULK_BYTES))?;
                }
            }
        }
        h.flush()?;
        let (pairs, flushes) = write_flush_pairs(&h, clock, bulk, 0, BULK_PAIRS)?;
        discard(d, file, h).await?;
        out.push(series(name, BULK_BYTES, bulk_total, pairs)?);
        out.push(series(&format!("{name}: flush"), 0, 0, flushes)?);
        report(name, clock.now() - start);
    }

    // new-file cycle
    let start = clock.now();
    let cap = m as usize;
    let (mut open, mut write, mut close, mut delete, mut cycle) = (
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
    );
    for i in 0..m {
        let name = format!("new-file-{i:06}.bin");
        let opts = js::at(0)?;
        let t0 = clock.now();
        let file = js::file_handle(d, &name, true).await?;
        let h = js::sync_handle(&file).await?;
        let t1 = clock.now();
        let w = h.write_with(buf, &opts);
        let t2 = clock.now();
        drop(h); // close()
        let t3 = clock.now();
        js::remove_entry(d, &name).await?;
        let t4 = clock.now();
        w?;
        open.push((t1 - t0) * 1e3);
        write.push((t2 - t1) * 1e3);
        close.push((t3 - t2) * 1e3);
        delete.push((t4 - t3) * 1e3);
        cycle.push((t4 - t0) * 1e3);
    }
    let bytes = u64::from(m) * u64::from(cfg.small_bytes);
    out.push(series("new-file: create+open", 0, 0, open)?);
    out.push(series(
        "new-file: first write",
        cfg.small_bytes,
        bytes,
        write,
    )?);
    out.push(series("new-file: close", 0, 0, close)?);
    out.push(series("new-file: delete", 0, 0, delete)?);
    out.push(series(
        "new-file: full cycle",
        cfg.small_bytes,
        bytes,
        cycle,
    )?);
    report("new-file", clock.now() - start);

    Ok(RawRun { series: out })
}
