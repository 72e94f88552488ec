#![cfg(not(target_arch = "wasm32"))]
//! Power-loss simulation of the volume on `CrashStorage`.
//!
//! Each crash point is a deterministic random workload (from the point's seed): creates,
//! writes, truncations, renames, deletes, commits, flushes, checkpoints (explicit, and automatic
//! with a 16 KiB threshold), clean remounts and process crashes, in a random buffer mode and
//! durability level; a quarter of the workloads rewrite a few hot pages with many small
//! commits, mostly under Balanced (whose write-outs group commits), and many of a few bytes
//! (logged as patches under Strict and Relaxed). The workload is run once to count its mutating physical calls
//! (`write_at`, `set_len`, `flush`), then again with the power going out during a random one of
//! them (or after the last op). Several crash images are taken of that instant (all pending
//! writes kept, all dropped, kept in order up to a tear, independent keep/drop/tear at byte or
//! sector granularity); each is mounted, and must show exactly the model state after some
//! commit `c`, with `c` at least the last flushed commit (under `Strict`, the last acknowledged
//! one). One image per point is also used after recovery (write, commit, checkpoint, remount),
//! and some points replay the rest of the workload on the recovered volume and crash it again.
//!
//! `CRASH_POINTS` sets the number of points (default 1000); `CRASH_SEED` the base seed;
//! `CRASH_ONLY=i` runs point `i` alone and `CRASH_DEBUG=1` prints its ops (to debug a failure);
//! `CRASH_PROCESS_CRASHES=0` / `CRASH_SECOND_LIFE=0` leave out process crashes / second power
//! losses (to tell failures apart). The totals are printed at the end (visible with
//! `--nocapture`).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{diff, model_write, other, read_state, Model};
use opfs_vfs::storage::{MemoryStorage, PhysicalFileId};
use opfs_vfs::testing::{CrashMode, CrashStorage, Fate, SplitMix64};
use opfs_vfs::{BufferMode, Durability, Error, Volume, VolumeOptions};

const NAMES: [&str; 4] = ["a", "b", "c.db", "dir/d-journal"];

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    /// open_or_create + write.
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
    Commit,
    Flush,
    Checkpoint,
    /// Checkpoint with relocation of every block beyond what the state needs.
    Compact,
    /// close + mount (in the other buffer mode if `switch`).
    Remount {
        switch: bool,
    },
    /// into_storage_unflushed + mount: the process dies, the machine keeps running.
    ProcessCrash,
}

impl Op {
    fn commits(&self) -> bool {
        matches!(
            self,
            Op::Commit | Op::Flush | Op::Checkpoint | Op::Compact | Op::Remount { .. }
        )
    }
}

#[derive(Clone, Debug)]
struct Config {
    mode: BufferMode,
    durability: Durability,
    /// Zero: every commit is overdue, so every level flushes at every commit.
    delay: Duration,
    checkpoint_on_close: bool,
    /// `VolumeOptions::write_buffer_bytes`.
    write_buffer: usize,
    /// `VolumeOptions::checkpoint_bytes`.
    checkpoint_bytes: u64,
    /// `VolumeOptions::link_min_bytes`: commits of two pages or more go to the data file's
    /// tail in half the workloads.
    link_min_bytes: Option<usize>,
}

impl Config {
    fn random(rng: &mut SplitMix64) -> Self {
        Config {
            mode: if rng.chance(1, 2) {
                BufferMode::Memory
            } else {
                BufferMode::Disk
            },
            durability: match rng.below(3) {
                0 => Durability::Strict,
                1 => Durability::Relaxed,
                _ => Durability::Balanced,
            },
            delay: if rng.chance(1, 5) {
                Duration::ZERO
            } else {
                Duration::from_secs(3600)
            },
            checkpoint_on_close: rng.chance(3, 4),
            write_buffer: 8 << 10,
            checkpoint_bytes: 16 << 10,
            link_min_bytes: rng.chance(1, 2).then_some(8 << 10),
        }
    }

    fn options(&self, mode: BufferMode) -> VolumeOptions {
        VolumeOptions {
            buffer_mode: mode,
            durability: self.durability,
            checkpoint_bytes: self.checkpoint_bytes,
            write_buffer_bytes: self.write_buffer,
            max_flush_delay: self.delay,
            checkpoint_on_close: self.checkpoint_on_close,
            link_min_bytes: self.link_min_bytes,
            ..VolumeOptions::default()
        }
    }

    /// Whether a commit that returned Ok is durable.
    fn commit_is_durable(&self) -> bool {
        self.durability == Durability::Strict || self.delay.is_zero()
    }
}

fn gen_ops(rng: &mut SplitMix64, count: usize) -> Vec<Op> {
    let n = NAMES.len();
    (0..count)
        .map(|_| match rng.below(100) {
            0..=39 => Op::Write {
                file: rng.index(n),
                offset: match rng.below(3) {
                    0 => rng.below(24_000),
                    1 => (rng.below(6) * 4096 + rng.below(5)).saturating_sub(2),
                    _ => 0,
                },
                len: if rng.chance(1, 6) {
                    usize::try_from(rng.range(8_000, 20_000)).unwrap()
                } else {
                    usize::try_from(rng.below(5000)).unwrap()
                },
                seed: rng.next_u64(),
            },
            40..=47 => Op::SetLen {
                file: rng.index(n),
                len: match rng.below(3) {
                    0 => rng.below(30_000),
                    1 => rng.below(6) * 4096,
                    _ => rng.below(100),
                },
            },
            48..=53 => Op::Rename {
                from: rng.index(n),
                to: rng.index(n),
            },
            54..=58 => Op::Delete(rng.index(n)),
            59..=82 => Op::Commit,
            83..=88 => Op::Flush,
            89..=90 => Op::Checkpoint,
            91..=92 => Op::Compact,
            93..=96 => Op::Remount {
                switch: rng.chance(1, 3),
            },
            _ if process_crashes() => Op::ProcessCrash,
            _ => Op::Commit,
        })
        .collect()
}

/// Small commits to the first pages of two files, a few of them growing the file, an
/// occasional cut, flush, remount or crash of the process.
fn gen_hot_ops(rng: &mut SplitMix64, count: usize) -> Vec<Op> {
    (0..count)
        .map(|_| match rng.below(100) {
            0..=44 => Op::Write {
                file: if rng.chance(3, 4) { 2 } else { 0 },
                offset: if rng.chance(1, 5) {
                    rng.below(16_000)
                } else {
                    rng.below(3) * 4096
                },
                // Whole pages, a few bytes (logged as patches under Strict and Relaxed), or
                // anything up to a page and a bit.
                len: match rng.below(4) {
                    0 => 4096,
                    1 | 2 => usize::try_from(rng.range(1, 300)).unwrap(),
                    _ => usize::try_from(rng.below(5000)).unwrap(),
                },
                seed: rng.next_u64(),
            },
            45..=47 => Op::SetLen {
                file: 2,
                len: rng.below(20_000),
            },
            48..=85 => Op::Commit,
            86..=90 => Op::Flush,
            91..=92 => Op::Checkpoint,
            93..=95 => Op::Remount {
                switch: rng.chance(1, 3),
            },
            _ if process_crashes() => Op::ProcessCrash,
            _ => Op::Commit,
        })
        .collect()
}

/// `CRASH_PROCESS_CRASHES=0` leaves process crashes out of the workloads (a debugging aid).
fn process_crashes() -> bool {
    std::env::var("CRASH_PROCESS_CRASHES").map_or(true, |v| v != "0")
}

/// `CRASH_SECOND_LIFE=0` skips the redo-and-crash-again phase (a debugging aid).
fn second_lives() -> bool {
    std::env::var("CRASH_SECOND_LIFE").map_or(true, |v| v != "0")
}

/// What a (possibly interrupted) run of a workload established.
struct Outcome {
    /// Committed states in order; `history[0]` is the state at the start. The last one may be
    /// a commit that was in flight when the power went out.
    history: Vec<Model>,
    /// For each history entry, the index of the op after which the workload continues from it.
    resume_at: Vec<usize>,
    /// Index into `history` of the oldest state a power loss may leave.
    lower: usize,
    /// Whether the power went out during the run.
    crashed: bool,
    /// Mutating physical calls made (including the one the power went out in).
    mutations: u64,
    /// With injected faults: the error that stopped the run, and the op.
    error: Option<(Error, &'static str)>,
    /// With injected faults: what `commit` answered right after the error.
    after_error: Option<Result<(), Error>>,
    /// Pages the run's commits logged as patches.
    patches: u64,
    /// The run's commits that went to tail links.
    links: u64,
}

/// Runs `ops` on `storage`, starting from the (mounted) state `start`. Stops at the first
/// error, which must be the simulated power loss.
fn run(cfg: &Config, ops: &[Op], storage: &CrashStorage, start: Model) -> Result<Outcome, String> {
    run_with(cfg, ops, storage, start, false)
}

/// [`run`]; with `faults`, any error stops the run (it is an injected fault): the error and
/// what the volume answers next are kept in the outcome.
fn run_with(
    cfg: &Config,
    ops: &[Op],
    storage: &CrashStorage,
    start: Model,
    faults: bool,
) -> Result<Outcome, String> {
    let before = storage.counts().mutations;
    let mut out = Outcome {
        history: vec![start.clone()],
        resume_at: vec![0],
        lower: 0,
        crashed: false,
        mutations: 0,
        error: None,
        after_error: None,
        patches: 0,
        links: 0,
    };
    let mut mode = cfg.mode;
    let finish = |mut out: Outcome, crashed: bool| {
        out.crashed = crashed;
        out.mutations = storage.counts().mutations - before;
        Ok(out)
    };
    // A failed call is fine only if the power is out (or, with `faults`, it is the fault).
    macro_rules! check {
        ($e:expr, $what:expr) => {
            check!($e, $what, None::<&mut Volume<CrashStorage>>)
        };
        ($e:expr, $what:expr, $vol:expr) => {
            match $e {
                Ok(x) => x,
                Err(e) => {
                    if storage.is_frozen() {
                        return finish(out, true);
                    }
                    if faults {
                        out.error = Some((e, $what));
                        if let Some(v) = $vol {
                            out.after_error = Some(v.commit());
                        }
                        return finish(out, true);
                    }
                    return Err(format!("{} failed without a power loss: {e}", $what));
                }
            }
        };
    }
    let mut v = check!(
        Volume::mount(storage.clone(), cfg.options(mode)),
        "initial mount"
    );
    let mut model = start;
    let trace = std::env::var_os("CRASH_TRACE").is_some();
    for (i, op) in ops.iter().enumerate() {
        if !storage.is_frozen() {
            if let Err(e) = v.check_invariants() {
                return Err(format!("before op {i} ({op:?}): invariant: {e}"));
            }
        }
        if trace {
            eprintln!("  [{}] op {i}: {op:?}", storage.counts().mutations - before);
        }
        if op.commits() {
            out.history.push(model.clone());
            out.resume_at.push(i + 1);
        }
        let name = |f: usize| NAMES[f].to_string();
        match op {
            Op::Write {
                file,
                offset,
                len,
                seed,
            } => {
                let id = check!(
                    v.open_or_create(NAMES[*file]),
                    "open_or_create",
                    Some(&mut v)
                );
                let data = common::pattern(*len, *seed);
                check!(v.write(id, *offset, &data), "write", Some(&mut v));
                let f = model.entry(name(*file)).or_default();
                model_write(f, usize::try_from(*offset).unwrap(), &data);
            }
            Op::SetLen { file, len } => {
                if let Some(f) = model.get_mut(NAMES[*file]) {
                    let id = check!(v.open(NAMES[*file]), "open");
                    check!(v.set_len(id, *len), "set_len", Some(&mut v));
                    f.resize(usize::try_from(*len).unwrap(), 0);
                }
            }
            Op::Rename { from, to } => {
                if from != to && model.contains_key(NAMES[*from]) && !model.contains_key(NAMES[*to])
                {
                    check!(v.rename(NAMES[*from], NAMES[*to]), "rename", Some(&mut v));
                    let d = model.remove(NAMES[*from]).unwrap();
                    model.insert(name(*to), d);
                }
            }
            Op::Delete(f) => {
                if model.remove(NAMES[*f]).is_some() {
                    check!(v.delete(NAMES[*f]), "delete", Some(&mut v));
                }
            }
            Op::Commit => {
                let (patched, linked) = (v.stats().patched_pages, v.stats().linked_commits);
                check!(v.commit(), "commit", Some(&mut v));
                out.patches += v.stats().patched_pages - patched;
                out.links += v.stats().linked_commits - linked;
                if cfg.commit_is_durable() {
                    out.lower = out.history.len() - 1;
                }
            }
            Op::Flush => {
                check!(v.flush(), "flush", Some(&mut v));
                out.lower = out.history.len() - 1;
            }
            Op::Checkpoint => {
                check!(v.checkpoint(), "checkpoint", Some(&mut v));
                out.lower = out.history.len() - 1;
            }
            Op::Compact => {
                check!(v.compact(), "compact", Some(&mut v));
                out.lower = out.history.len() - 1;
            }
            Op::Remount { switch } => {
                let st = check!(v.close(), "close");
                out.lower = out.history.len() - 1;
                if *switch {
                    mode = other(mode);
                }
                v = check!(Volume::mount(st, cfg.options(mode)), "remount");
            }
            Op::ProcessCrash => {
                let st = v.into_storage_unflushed();
                v = check!(
                    Volume::mount(st, cfg.options(mode)),
                    "mount after process crash"
                );
                let got = check!(read_state(&mut v), "read after process crash");
                // Some commit since the last durable one; later ones are gone for good.
                let Some(j) = (out.lower..out.history.len())
                    .rev()
                    .find(|&j| out.history[j] == got)
                else {
                    return Err(format!(
                        "after a process crash at op {i}: state is no commit since the last \
                         durable one ({}): {}",
                        out.lower,
                        diff(&got, out.history.last().unwrap())
                    ));
                };
                out.history.truncate(j + 1);
                out.resume_at.truncate(j + 1);
                // Continuing from here replays the ops after this one.
                out.resume_at[j] = i + 1;
                model = got;
            }
        }
    }
    // Everything ran: the power goes out now (with faults: the caller goes on).
    if !faults {
        storage.freeze();
    }
    drop(v);
    finish(out, false)
}

// ---------------------------------------------------------------------------------------------
// Checking crash images
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Totals {
    points: AtomicU64,
    images: AtomicU64,
    mid_run: AtomicU64,
    reused: AtomicU64,
    second_crashes: AtomicU64,
    pending_ops: AtomicU64,
    patches: AtomicU64,
    links: AtomicU64,
}

const IMAGE_MODES: [(CrashMode, &str); 7] = [
    (CrashMode::KeepAll, "keep-all"),
    (CrashMode::DropAll, "drop-all"),
    (CrashMode::InOrder, "in-order"),
    (CrashMode::InOrder, "in-order"),
    (CrashMode::Random, "random"),
    (CrashMode::Random, "random"),
    (CrashMode::RandomSectors, "random-sectors"),
];

/// Mounts `img` and finds the history state it shows (index >= `lower`).
fn recovered(
    img: &MemoryStorage,
    mode: BufferMode,
    history: &[Model],
    lower: usize,
) -> Result<(usize, Model), String> {
    let opts = VolumeOptions {
        buffer_mode: mode,
        ..Default::default()
    };
    let mut v = Volume::mount(img.clone(), opts).map_err(|e| format!("mount failed: {e}"))?;
    let got = read_state(&mut v).map_err(|e| format!("reading files failed: {e}"))?;
    match (lower..history.len()).rev().find(|&j| history[j] == got) {
        Some(j) => Ok((j, got)),
        None => {
            let older = (0..lower).rev().find(|&j| history[j] == got);
            Err(format!(
                "state is no commit at or after the last durable one (#{lower} of {}); {}; \
                 vs last durable: {}; vs newest: {}",
                history.len(),
                match older {
                    Some(j) => format!("it equals OLDER commit #{j} (a durable commit was lost)"),
                    None => "it equals no commit at all".into(),
                },
                diff(&got, &history[lower]),
                diff(&got, history.last().unwrap())
            ))
        }
    }
}

/// After recovery the volume must work normally: write, commit, checkpoint, remount.
fn use_after_recovery(
    img: MemoryStorage,
    mode: BufferMode,
    mut state: Model,
) -> Result<(), String> {
    let opts = VolumeOptions {
        buffer_mode: mode,
        ..Default::default()
    };
    let e = |what: &'static str| move |err: Error| format!("after recovery, {what}: {err}");
    let mut v = Volume::mount(img, opts.clone()).map_err(e("mount"))?;
    let data = common::pattern(9000, 1);
    let id = v.create("after-crash").map_err(e("create"))?;
    v.write(id, 100, &data).map_err(e("write"))?;
    if let Some((name, old)) = state.iter_mut().next() {
        let id = v.open(name).map_err(e("open"))?;
        v.write(id, 1, b"changed").map_err(e("write"))?;
        model_write(old, 1, b"changed");
    }
    v.commit().map_err(e("commit"))?;
    v.checkpoint().map_err(e("checkpoint"))?;
    let mut want_new = vec![0u8; 100];
    want_new.extend_from_slice(&data);
    state.insert("after-crash".into(), want_new);
    let st = v.close().map_err(e("close"))?;
    let mut v = Volume::mount(
        st,
        VolumeOptions {
            buffer_mode: other(mode),
            ..opts
        },
    )
    .map_err(e("remount"))?;
    let got = read_state(&mut v).map_err(e("read"))?;
    if got != state {
        return Err(format!(
            "after recovery and more commits: {}",
            diff(&got, &state)
        ));
    }
    Ok(())
}

/// Crash images of `storage` (frozen), each checked against `out`. Returns the distinct images
/// with the history index each one showed.
fn check_images(
    point: u64,
    rng: &mut SplitMix64,
    storage: &CrashStorage,
    out: &Outcome,
    totals: &Totals,
) -> Result<Vec<(MemoryStorage, usize, Model)>, String> {
    let mut seen: Vec<(MemoryStorage, usize, Model)> = Vec::new();
    let pending = storage.pending().len();
    totals
        .pending_ops
        .fetch_add(pending as u64, Ordering::Relaxed);
    for (n, (mode, label)) in IMAGE_MODES.iter().enumerate() {
        let seed = SplitMix64::mix(point, n as u64);
        let img = storage.crash(seed, *mode);
        if seen.iter().any(|(s, _, _)| same_image(s, &img)) {
            continue;
        }
        let mount_mode = if rng.chance(1, 2) {
            BufferMode::Memory
        } else {
            BufferMode::Disk
        };
        totals.images.fetch_add(1, Ordering::Relaxed);
        let (j, got) = catch_unwind(AssertUnwindSafe(|| {
            recovered(&img, mount_mode, &out.history, out.lower)
        }))
        .map_err(|p| format!("PANIC: {}", panic_text(&*p)))
        .and_then(|r| r)
        .map_err(|e| {
            format!(
                "image {label} (seed {seed:#x}, {pending} pending ops, mounted in {mount_mode:?}): {e}"
            )
        })?;
        seen.push((img, j, got));
    }
    Ok(seen)
}

fn same_image(a: &MemoryStorage, b: &MemoryStorage) -> bool {
    PhysicalFileId::ALL
        .iter()
        .all(|&id| a.get(id).bytes() == b.get(id).bytes())
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
        .unwrap_or_else(|| "non-string panic".into())
}

/// A new, flushed, empty volume in a crash storage.
fn fresh_storage() -> CrashStorage {
    let st = CrashStorage::new();
    let v = Volume::mount(st.clone(), VolumeOptions::default()).expect("create volume");
    drop(v.close().expect("close"));
    CrashStorage::from_image(&st.current_image())
}

/// Crash points per workload: each replays it up to its own crash point; the dry run that
/// counts the workload's calls is shared.
const GROUP: u64 = 4;

/// A workload and its number of mutating physical calls.
struct Workload {
    group: u64,
    cfg: Config,
    ops: Vec<Op>,
    mutations: u64,
}

fn workload(group: u64, base_seed: u64) -> Result<Workload, String> {
    let mut rng = SplitMix64::new(SplitMix64::mix(base_seed, group));
    let mut cfg = Config::random(&mut rng);
    // A quarter of the workloads (chosen apart from the main stream, which stays as it was):
    // hot pages, rewritten by many small commits, as SQLite's autocommits do; mostly Balanced,
    // whose write-outs then group several commits into one.
    let mut hot = SplitMix64::new(SplitMix64::mix(base_seed ^ 0x407, group));
    let ops = if hot.chance(1, 4) {
        if hot.chance(2, 3) {
            cfg.durability = Durability::Balanced;
            cfg.delay = Duration::from_secs(3600);
            cfg.write_buffer = 32 << 10;
            // Checkpoints write the buffer out: at 16 KiB of log, one per few commits.
            cfg.checkpoint_bytes = 256 << 10;
        } else {
            // Commits rather than spills, in epochs long enough for patches over patches
            // (their bases are in the epoch).
            cfg.write_buffer = 32 << 10;
            cfg.checkpoint_bytes = 256 << 10;
        }
        let nops = usize::try_from(hot.range(20, 70)).unwrap();
        gen_hot_ops(&mut hot, nops)
    } else {
        let nops = usize::try_from(rng.range(10, 45)).unwrap();
        gen_ops(&mut rng, nops)
    };
    if std::env::var_os("CRASH_DEBUG").is_some() {
        for (i, op) in ops.iter().enumerate() {
            eprintln!("op {i}: {op:?}");
        }
    }
    // Dry run: how many mutating calls.
    let dry = run(&cfg, &ops, &fresh_storage(), Model::new()).map_err(|e| {
        format!("workload {group} (base seed {base_seed:#x}; {cfg:?}), dry run: {e}")
    })?;
    Ok(Workload {
        group,
        cfg,
        mutations: dry.mutations,
        ops,
    })
}

fn crash_point(point: u64, w: &Workload, base_seed: u64, totals: &Totals) -> Result<(), String> {
    let mut rng = SplitMix64::new(SplitMix64::mix(base_seed ^ 0xC4A5_4000, point));
    let (cfg, ops) = (&w.cfg, &w.ops);
    let debug = std::env::var_os("CRASH_DEBUG").is_some();
    let ctx = |e: String| {
        format!(
            "crash point {point} (workload {}, base seed {base_seed:#x}; {cfg:?}; {} ops): {e}",
            w.group,
            ops.len()
        )
    };
    let k = rng.range(1, w.mutations + 1);

    // The run with the power going out at call k (k > mutations: after the last op).
    let storage = fresh_storage();
    storage.crash_at_mutation(k);
    let out = catch_unwind(AssertUnwindSafe(|| run(cfg, ops, &storage, Model::new())))
        .map_err(|p| format!("PANIC during the workload: {}", panic_text(&*p)))
        .and_then(|r| r)
        .map_err(|e| ctx(format!("k={k}: {e}")))?;
    if out.crashed {
        totals.mid_run.fetch_add(1, Ordering::Relaxed);
    }
    totals.patches.fetch_add(out.patches, Ordering::Relaxed);
    totals.links.fetch_add(out.links, Ordering::Relaxed);
    let images = check_images(point, &mut rng, &storage, &out, totals)
        .map_err(|e| ctx(format!("power lost at mutating call {k}: {e}")))?;

    // Every other point: keep using one recovered volume.
    if rng.chance(1, 2) {
        let (img, _, state) = &images[rng.index(images.len())];
        let mode = if rng.chance(1, 2) {
            BufferMode::Memory
        } else {
            BufferMode::Disk
        };
        catch_unwind(AssertUnwindSafe(|| {
            use_after_recovery(img.clone(), mode, state.clone())
        }))
        .map_err(|p| format!("PANIC: {}", panic_text(&*p)))
        .and_then(|r| r)
        .map_err(|e| ctx(format!("power lost at mutating call {k}: {e}")))?;
        totals.reused.fetch_add(1, Ordering::Relaxed);
    }

    // Some points: the application restarts on a recovered image and redoes what was lost
    // (the same ops after the recovered commit), and the power goes out again.
    if rng.chance(1, 4) && second_lives() {
        // Prefer the image that lost the most (the most to redo), and an early second crash.
        let pick = if rng.chance(1, 2) {
            (0..images.len()).min_by_key(|&i| images[i].1).unwrap()
        } else {
            rng.index(images.len())
        };
        let (img, j, state) = &images[pick];
        let rest = &ops[out.resume_at[*j]..];
        if debug {
            eprintln!(
                "first life: k={k}, lower={}, history {}, resume_at {:?}; second life from #{j} = op {}",
                out.lower,
                out.history.len(),
                out.resume_at,
                out.resume_at[*j]
            );
        }
        let second = CrashStorage::from_image(img);
        let dry2 = CrashStorage::from_image(img);
        let d2 = run(cfg, rest, &dry2, state.clone())
            .map_err(|e| ctx(format!("second life (dry): {e}")))?;
        let k2 = if rng.chance(1, 2) {
            rng.range(1, d2.mutations.min(4) + 1)
        } else {
            rng.range(1, d2.mutations + 1)
        };
        second.crash_at_mutation(k2);
        if debug {
            eprintln!("second life: {} mutations, k2={k2}", d2.mutations);
        }
        let out2 = catch_unwind(AssertUnwindSafe(|| run(cfg, rest, &second, state.clone())))
            .map_err(|p| format!("PANIC: {}", panic_text(&*p)))
            .and_then(|r| r)
            .map_err(|e| ctx(format!("second life: {e}")))?;
        check_images(point ^ (1 << 63), &mut rng, &second, &out2, totals).map_err(|e| {
            ctx(format!(
                "first power loss at call {k} (recovered commit #{j}), redone ops from #{}, \
                 second power loss at call {k2}: {e}",
                out.resume_at[*j]
            ))
        })?;
        totals.second_crashes.fetch_add(1, Ordering::Relaxed);
    }
    totals.points.fetch_add(1, Ordering::Relaxed);
    Ok(())
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

#[test]
fn power_loss_at_random_points() {
    let points = env_u64("CRASH_POINTS").unwrap_or(1000);
    let base_seed = env_u64("CRASH_SEED").unwrap_or(0x5EED_C0DE);
    let only = env_u64("CRASH_ONLY");
    let totals = Totals::default();
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let stop = AtomicBool::new(false);
    let next = AtomicU64::new(0);
    let started = Instant::now();
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    let groups = match only {
        Some(o) => o / GROUP + 1,
        None => points.div_ceil(GROUP),
    };
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let g = match only {
                    Some(o) => {
                        if next.fetch_add(1, Ordering::Relaxed) > 0 {
                            return;
                        }
                        o / GROUP
                    }
                    None => next.fetch_add(1, Ordering::Relaxed),
                };
                if g >= groups {
                    return;
                }
                let result = workload(g, base_seed).and_then(|w| {
                    let first = g * GROUP;
                    let end = if only.is_some() {
                        first + GROUP
                    } else {
                        (first + GROUP).min(points)
                    };
                    for point in first..end {
                        if only.is_some_and(|o| o != point) {
                            continue;
                        }
                        crash_point(point, &w, base_seed, &totals)?;
                    }
                    Ok(())
                });
                if let Err(e) = result {
                    stop.store(true, Ordering::Relaxed);
                    let mut f = failure.lock().unwrap();
                    if f.is_none() {
                        *f = Some(e);
                    }
                    return;
                }
            });
        }
    });
    let t = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "crash test: {} crash points, {} crash images checked ({} points lost power mid-run, \
         {} recovered volumes reused, {} second power losses, {} pending ops at crash, {} pages \
         logged as patches, {} commits as tail links) in {:.1?}",
        t(&totals.points),
        t(&totals.images),
        t(&totals.mid_run),
        t(&totals.reused),
        t(&totals.second_crashes),
        t(&totals.pending_ops),
        t(&totals.patches),
        t(&totals.links),
        started.elapsed()
    );
    if let Some(e) = failure.into_inner().unwrap() {
        panic!("{e}");
    }
    if only.is_none() {
        assert_eq!(t(&totals.points), points);
        // The hot workloads' small writes under Strict and Relaxed log patches.
        assert!(
            points < 500 || t(&totals.patches) > 0,
            "no patch was logged"
        );
        // Half the workloads link commits of two new pages or more.
        assert!(
            points < 500 || t(&totals.links) > 0,
            "no commit went to a tail link"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Targeted scenarios
// ---------------------------------------------------------------------------------------------

/// Every way the very first mount (which creates the volume) can be interrupted: the storage
/// must mount again as an empty volume, never as `Corrupt`.
#[test]
fn power_loss_while_creating_the_volume() {
    let dry = CrashStorage::new();
    drop(Volume::mount(dry.clone(), VolumeOptions::default()).unwrap());
    let calls = dry.counts().mutations;
    assert!(calls >= 2, "creation writes and flushes");
    let mut checked = 0;
    for k in 1..=calls {
        let st = CrashStorage::new();
        st.crash_at_mutation(k);
        assert!(Volume::mount(st.clone(), VolumeOptions::default()).is_err());
        let pending = st.pending();
        // Every write: dropped, kept, or torn at every sector boundary and at a few bytes.
        let mut fates: Vec<Vec<Fate>> = vec![vec![]];
        for p in &pending {
            let mut options = vec![Fate::Keep, Fate::Drop];
            if !p.is_set_len {
                let mut keep = 512;
                while keep < p.len {
                    options.push(Fate::Torn { keep });
                    keep += 512;
                }
                for keep in [1, 8, 87, 88, 4096 + 40] {
                    if keep < p.len {
                        options.push(Fate::Torn { keep });
                    }
                }
            }
            fates = fates
                .into_iter()
                .flat_map(|f| {
                    options.iter().map(move |o| {
                        let mut f = f.clone();
                        f.push(*o);
                        f
                    })
                })
                .collect();
        }
        for combo in fates {
            let img = st.crash_with(|p| {
                let pos = pending
                    .iter()
                    .position(|q| q.file == p.file && q.index == p.index)
                    .unwrap();
                combo[pos]
            });
            for mode in [BufferMode::Memory, BufferMode::Disk] {
                let opts = VolumeOptions {
                    buffer_mode: mode,
                    ..Default::default()
                };
                let mut v = Volume::mount(img.clone(), opts).unwrap_or_else(|e| {
                    panic!("power loss at call {k} of volume creation ({combo:?}): {e}")
                });
                assert!(v.list().is_empty());
                let id = v.create("x").unwrap();
                v.write(id, 0, b"works").unwrap();
                v.flush().unwrap();
                checked += 1;
            }
        }
    }
    println!("creation crash images checked: {checked}");
}

/// Relaxed commits 2 and 3 are written but not flushed; the power loss drops commit 2's write
/// and keeps commit 3's. Recovery correctly stops after commit 1. The application then redoes
/// commit 2 exactly (Strict). Commit 3 was never redone, so no later crash may show it — but
/// its frames are still in the log right after the redone commit 2, chained to the same bytes.
#[test]
fn lost_commit_does_not_come_back_after_redo() {
    let opts = |d| VolumeOptions {
        durability: d,
        max_flush_delay: Duration::from_secs(3600),
        ..Default::default()
    };
    let st = fresh_storage();
    let mut v = Volume::mount(st.clone(), opts(Durability::Relaxed)).unwrap();
    let f = v.create("f").unwrap();
    v.write(f, 0, b"one").unwrap();
    v.flush().unwrap(); // commit 1: durable
    v.write(f, 0, b"two").unwrap();
    v.commit().unwrap(); // commit 2: written, not flushed
    v.write(f, 0, b"three").unwrap();
    v.commit().unwrap(); // commit 3: written, not flushed
    drop(v);
    let log_writes: Vec<_> = st
        .pending()
        .into_iter()
        .filter(|p| p.file == PhysicalFileId::Log)
        .collect();
    assert_eq!(log_writes.len(), 2, "one write per Relaxed commit");
    let img = st.crash_with(|p| {
        if p.file == PhysicalFileId::Log && p.index == 0 {
            Fate::Drop
        } else {
            Fate::Keep
        }
    });

    let st2 = CrashStorage::from_image(&img);
    let mut v = Volume::mount(st2.clone(), opts(Durability::Strict)).unwrap();
    let f = v.open("f").unwrap();
    assert_eq!(v.read_to_vec(f).unwrap(), b"one", "recovers commit 1");
    v.write(f, 0, b"two").unwrap();
    v.commit().unwrap(); // acknowledged and durable
    drop(v);
    // Power loss (or just a process crash) now: the state must be "two".
    for img in [st2.crash(0, CrashMode::DropAll), st2.current_image()] {
        let mut v = Volume::mount(img, opts(Durability::Strict)).unwrap();
        let f = v.open("f").unwrap();
        assert_eq!(
            String::from_utf8_lossy(&v.read_to_vec(f).unwrap()),
            "two",
            "a commit lost in the first crash came back"
        );
    }
}

fn read_file(img: MemoryStorage, name: &str) -> Option<Vec<u8>> {
    let mut v = Volume::mount(img, VolumeOptions::default()).expect("mount");
    let id = v.open(name).ok()?;
    Some(v.read_to_vec(id).expect("read"))
}

/// A Relaxed commit is written but not flushed; the process dies (the OS still has the write).
/// The next mount recovers the commit; `flush()` then returns Ok, so a power loss must keep
/// it. Today mount marks the recovered log as already flushed, so `flush()` does nothing.
#[test]
fn flush_after_process_crash_makes_recovered_commits_durable() {
    let opts = VolumeOptions {
        durability: Durability::Relaxed,
        max_flush_delay: Duration::from_secs(3600),
        ..Default::default()
    };
    let st = fresh_storage();
    let mut v = Volume::mount(st.clone(), opts.clone()).unwrap();
    let f = v.create("f").unwrap();
    v.write(f, 0, b"relaxed").unwrap();
    v.commit().unwrap();
    let st = v.into_storage_unflushed(); // process crash
    let mut v = Volume::mount(st.clone(), opts).unwrap();
    let f = v.open("f").unwrap();
    assert_eq!(v.read_to_vec(f).unwrap(), b"relaxed");
    v.flush().unwrap();
    drop(v);
    assert_eq!(
        read_file(st.crash(0, CrashMode::DropAll), "f").as_deref(),
        Some(&b"relaxed"[..]),
        "flush() returned Ok, then a power loss lost the commit"
    );
}

/// The checkpoint's last flush (after its superblock write) fails: the checkpoint is installed,
/// and the data file is flushed again before the new epoch's log is written. A Strict commit
/// made right after, on the same volume, and the commit before the checkpoint, must both
/// survive a power loss — whether or not the new superblock reached the disk.
#[test]
fn strict_commits_after_failed_checkpoint_flush_survive_power_loss() {
    let opts = VolumeOptions::default(); // Strict
    let st = fresh_storage();
    let mut v = Volume::mount(st.clone(), opts.clone()).unwrap();
    let a = v.create("a").unwrap();
    v.write(a, 0, b"A").unwrap();
    v.commit().unwrap(); // acknowledged, durable
                         // The second flush of the data file from now (the superblock's) fails.
    st.inject(opfs_vfs::testing::Fault {
        op: opfs_vfs::testing::FaultOp::Flush,
        file: Some(PhysicalFileId::Data),
        skip: 1,
        effect: opfs_vfs::testing::FaultEffect::Fail(opfs_vfs::storage::StorageError::Platform {
            op: "flush",
            name: "InvalidStateError".into(),
            message: "injected".into(),
        }),
        sticky: false,
    });
    v.checkpoint().unwrap();
    assert!(
        v.poisoned().is_none(),
        "a failed flush after the superblock write does not poison"
    );
    let b = v.create("b").unwrap();
    v.write(b, 0, b"B").unwrap();
    v.commit().unwrap(); // acknowledged, Strict
    drop(v);
    for (label, img) in [
        ("drop-all", st.crash(0, CrashMode::DropAll)),
        ("keep-all", st.crash(0, CrashMode::KeepAll)),
        ("random", st.crash(7, CrashMode::Random)),
    ] {
        assert_eq!(
            read_file(img.clone(), "a").as_deref(),
            Some(&b"A"[..]),
            "{label}: lost A"
        );
        assert_eq!(
            read_file(img, "b").as_deref(),
            Some(&b"B"[..]),
            "{label}: lost B"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Injected storage failures
// ---------------------------------------------------------------------------------------------

/// One fault-injection case: a random workload where, after a random number of successful
/// calls, a write fails (a full quota: every growing write from then on; a short write; a
/// platform error) or a flush fails (any file, or the data file only, i.e. inside a
/// checkpoint). The failing call must report the right error (`OutOfSpace` for quota and
/// short writes, `Io` or `CommitUnknown` otherwise); the volume is poisoned only when an
/// outcome is unknown. Then, with the fault gone: every power-loss image, and a remount of the
/// storage as it is (a process restart), show some commit at or after the last durable one;
/// and a Strict commit made after that remount survives a power loss. (`tests/faults.rs`
/// checks the exact contract at every call of a commit, a checkpoint and a mount.)
fn fault_case(case: u64) -> Result<(), String> {
    use opfs_vfs::storage::StorageError;
    use opfs_vfs::testing::{Fault, FaultEffect, FaultOp};
    let mut rng = SplitMix64::new(SplitMix64::mix(0xFA17_0000, case));
    let cfg = Config::random(&mut rng);
    let nops = usize::try_from(rng.range(10, 45)).unwrap();
    let ops = gen_ops(&mut rng, nops);
    let dry = run(&cfg, &ops, &fresh_storage(), Model::new())?;
    let skip = rng.below(dry.mutations.max(1));
    let platform = |op: &'static str| StorageError::Platform {
        op,
        name: "InvalidStateError".into(),
        message: "injected".into(),
    };
    let kind = rng.below(5);
    let (fault, out_of_space) = match kind {
        0 => (
            Fault {
                op: FaultOp::Grow,
                file: None,
                skip: skip / 2,
                effect: FaultEffect::Fail(StorageError::QuotaExceeded {
                    message: "injected".into(),
                }),
                sticky: true,
            },
            true,
        ),
        1 => (
            Fault {
                op: FaultOp::Grow,
                file: None,
                skip: skip / 2,
                effect: FaultEffect::ShortWrite,
                sticky: true,
            },
            true,
        ),
        2 => (
            Fault {
                op: FaultOp::Write,
                file: None,
                skip,
                effect: FaultEffect::Fail(platform("write")),
                sticky: false,
            },
            false,
        ),
        3 => (
            Fault {
                op: FaultOp::Flush,
                file: None,
                skip: skip / 3,
                effect: FaultEffect::Fail(platform("flush")),
                sticky: false,
            },
            false,
        ),
        _ => (
            Fault {
                op: FaultOp::Flush,
                file: Some(PhysicalFileId::Data),
                skip: skip / 6,
                effect: FaultEffect::Fail(platform("flush")),
                sticky: false,
            },
            false,
        ),
    };
    let ctx = |e: String| format!("fault case {case} ({cfg:?}; {fault:?}): {e}");
    let storage = fresh_storage();
    storage.inject(fault.clone());
    let out = catch_unwind(AssertUnwindSafe(|| {
        run_with(&cfg, &ops, &storage, Model::new(), true)
    }))
    .map_err(|p| ctx(format!("PANIC: {}", panic_text(&*p))))?
    .map_err(ctx)?;
    storage.clear_faults();
    if let Some((e, what)) = &out.error {
        let right = if out_of_space {
            matches!(e, Error::OutOfSpace { .. })
        } else {
            // A flush that fails inside an automatic checkpoint is not the commit's failure
            // (the commit had kept its promise): it poisons, and the next call says so.
            matches!(e, Error::Io { .. } | Error::CommitUnknown { .. })
                || (matches!(fault.op, FaultOp::Flush) && matches!(e, Error::Poisoned { .. }))
        };
        if !right {
            return Err(ctx(format!("{what} failed with the wrong error: {e:?}")));
        }
        if let Some(r) = &out.after_error {
            let poisoned = matches!(r, Err(Error::Poisoned { .. }));
            let unknown =
                matches!(e, Error::CommitUnknown { .. }) || matches!(fault.op, FaultOp::Flush);
            if poisoned && !unknown {
                return Err(ctx(format!(
                    "after {what} failed ({e}), the volume is poisoned although nothing's \
                     outcome was unknown"
                )));
            }
        }
    }
    // Power loss right now.
    for (n, mode) in [CrashMode::KeepAll, CrashMode::DropAll, CrashMode::Random]
        .into_iter()
        .enumerate()
    {
        let img = storage.crash(SplitMix64::mix(case, n as u64), mode);
        recovered(&img, cfg.mode, &out.history, out.lower)
            .map_err(|e| ctx(format!("power loss after the fault ({mode:?}): {e}")))?;
    }
    // The application restarts on the storage as it is, commits (Strict), and then the power
    // goes out.
    let mut v = Volume::mount(storage.clone(), VolumeOptions::default())
        .map_err(|e| ctx(format!("remount after the fault: {e}")))?;
    let mut state = read_state(&mut v).map_err(|e| ctx(format!("read after remount: {e}")))?;
    if !out.history[out.lower..].contains(&state) {
        return Err(ctx(format!(
            "remount after the fault: no commit at or after the last durable one: {}",
            diff(&state, &out.history[out.lower])
        )));
    }
    let id = v.create("after-fault").map_err(|e| ctx(e.to_string()))?;
    v.write(id, 0, b"acknowledged")
        .map_err(|e| ctx(e.to_string()))?;
    v.commit().map_err(|e| ctx(e.to_string()))?;
    drop(v);
    state.insert("after-fault".into(), b"acknowledged".to_vec());
    for (n, mode) in [CrashMode::DropAll, CrashMode::Random, CrashMode::InOrder]
        .into_iter()
        .enumerate()
    {
        let img = storage.crash(SplitMix64::mix(case ^ 1, n as u64), mode);
        recovered(&img, cfg.mode, std::slice::from_ref(&state), 0).map_err(|e| {
            ctx(format!(
                "Strict commit acknowledged after remounting, then power loss ({mode:?}): {e}"
            ))
        })?;
    }
    Ok(())
}

#[test]
fn storage_faults_then_recover() {
    let cases = env_u64("FAULT_CASES").unwrap_or(300);
    let mut failures = Vec::new();
    for case in 0..cases {
        if let Err(e) = fault_case(case) {
            failures.push(e);
        }
    }
    println!("fault cases: {cases}, failing: {}", failures.len());
    if std::env::var_os("FAULT_LIST").is_some() {
        for f in &failures {
            println!("{}", &f[..f.len().min(300)]);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} fault cases failed; first ones:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}
