//! Power loss under SQL: random transactions through rusqlite on the SQLite VFS over
//! `CrashStorage`; the power goes out during a random physical call; every crash image must
//! open with `PRAGMA integrity_check` = ok and hold exactly the rows of one committed
//! transaction: under `Strict` the last acknowledged one (or the one in flight), under
//! `Relaxed` any one from the last flushed on.
//!
//! `SQL_CRASH_POINTS` sets the number of crash points (default 500); `SQL_CRASH_SEED` the base
//! seed (default: fixed). The long run:
//! `SQL_CRASH_POINTS=50000 cargo test --release -p opfs-vfs --test sqlite_crash -- --nocapture`
#![cfg(not(target_arch = "wasm32"))]

mod sqlite_common;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use opfs_vfs::sqlite::rusqlite::{self, params, Connection};
use opfs_vfs::storage::{MemoryStorage, Storage};
use opfs_vfs::testing::{CrashMode, CrashStorage, SplitMix64};
use opfs_vfs::{BufferMode, Durability, Volume};
use sqlite_common::*;

/// Rows of `kv`: key → (value, counter). `None`: the table does not exist yet.
type Model = Option<BTreeMap<i64, (Vec<u8>, i64)>>;

/// 108 workloads of five points: every journal mode x synchronous x durability x buffer mode.
const DEFAULT_POINTS: u64 = 540;
/// Crash points taken from one workload (each replays it up to its point).
const POINTS_PER_WORKLOAD: u64 = 5;
const IMAGES_PER_POINT: u64 = 2;

#[derive(Clone, Copy, Debug)]
struct Config {
    mode: BufferMode,
    durability: Durability,
    journal: &'static str,
    /// `PRAGMA synchronous`: off, normal or full.
    sync: &'static str,
    txns: u64,
}

impl Config {
    /// Whether an acknowledged commit is flushed (survives power loss): Strict, unless
    /// `synchronous` asked for less (OFF; NORMAL in WAL mode).
    fn commits_flushed(&self) -> bool {
        self.durability == Durability::Strict
            && match self.sync {
                "off" => false,
                "normal" => self.journal != "wal",
                _ => true,
            }
    }
}

/// One transaction of the workload, generated from the seed; SQL plus its effect on the model.
#[derive(Clone, Debug)]
enum Txn {
    Create,
    Insert(Vec<(i64, Vec<u8>)>),
    Update {
        modulo: i64,
        value: Vec<u8>,
    },
    Delete {
        lo: i64,
        hi: i64,
    },
    /// Inserts and deletes, then ROLLBACK.
    RolledBack(Vec<(i64, Vec<u8>)>),
    CreateIndex,
    DropIndex,
    Vacuum,
    /// The application flushes the volume (a durability point under Relaxed).
    Flush,
}

fn blob(rng: &mut SplitMix64, max: u64) -> Vec<u8> {
    let mut v = vec![0u8; usize::try_from(rng.range(1, max)).expect("small")];
    rng.fill(&mut v);
    v
}

fn workload(seed: u64, cfg: &Config) -> Vec<Txn> {
    let mut rng = SplitMix64::new(seed);
    let mut next_key = 1i64;
    let rows = |rng: &mut SplitMix64, next_key: &mut i64, n: u64, max: u64| {
        (0..n)
            .map(|_| {
                *next_key += 1 + rng.below(3) as i64;
                (*next_key, blob(rng, max))
            })
            .collect::<Vec<_>>()
    };
    let mut txns = vec![Txn::Create];
    for _ in 0..cfg.txns {
        let t = match rng.below(100) {
            0..=39 => Txn::Insert(rows(&mut rng, &mut next_key, 1, 300)),
            40..=54 => {
                let n = rng.range(2, 30);
                Txn::Insert(rows(&mut rng, &mut next_key, n, 1500))
            }
            // Bigger than the page cache (cache_size=20): SQLite spills and journals on disk.
            55..=61 => {
                let n = rng.range(60, 200);
                Txn::Insert(rows(&mut rng, &mut next_key, n, 1200))
            }
            62..=71 => Txn::Update {
                modulo: rng.range(2, 5) as i64,
                value: blob(&mut rng, 200),
            },
            72..=79 => {
                let lo = rng.below(next_key as u64) as i64;
                Txn::Delete {
                    lo,
                    hi: lo + rng.range(1, 20) as i64,
                }
            }
            // Half of them spill the page cache before the ROLLBACK.
            80..=84 if cfg.journal != "off" => {
                let n = if rng.chance(1, 2) {
                    rng.range(1, 40)
                } else {
                    rng.range(60, 200)
                };
                Txn::RolledBack(rows(&mut rng, &mut next_key, n, 1200))
            }
            85..=89 => Txn::CreateIndex,
            90..=91 => Txn::DropIndex,
            92..=95 => Txn::Vacuum,
            _ => Txn::Flush,
        };
        txns.push(t);
    }
    txns
}

fn apply(model: &Model, t: &Txn) -> Model {
    let mut m = model.clone();
    match t {
        Txn::Create => m = Some(BTreeMap::new()),
        Txn::Insert(rows) => {
            let m = m.as_mut().expect("table exists");
            for (k, v) in rows {
                m.insert(*k, (v.clone(), 0));
            }
        }
        Txn::Update { modulo, value } => {
            for (k, row) in m.as_mut().expect("table exists").iter_mut() {
                if k % modulo == 0 {
                    *row = (value.clone(), row.1 + 1);
                }
            }
        }
        Txn::Delete { lo, hi } => {
            m.as_mut()
                .expect("table exists")
                .retain(|k, _| !(lo <= k && k < hi));
        }
        Txn::RolledBack(_) | Txn::CreateIndex | Txn::DropIndex | Txn::Vacuum | Txn::Flush => {}
    }
    m
}

fn run_txn<S: Storage + 'static>(
    c: &Connection,
    h: &opfs_vfs::sqlite::VfsHandle<S>,
    t: &Txn,
) -> rusqlite::Result<()> {
    let insert = |rows: &[(i64, Vec<u8>)]| -> rusqlite::Result<()> {
        let mut st = c.prepare("INSERT INTO kv(k, v, n) VALUES (?1, ?2, 0)")?;
        for (k, v) in rows {
            st.execute(params![k, v])?;
        }
        Ok(())
    };
    match t {
        Txn::Create => c.execute_batch(
            "CREATE TABLE kv(k INTEGER PRIMARY KEY, v BLOB NOT NULL, n INTEGER NOT NULL)",
        ),
        Txn::Insert(rows) if rows.len() == 1 => insert(rows),
        Txn::Insert(rows) => {
            c.execute_batch("BEGIN")?;
            insert(rows)?;
            c.execute_batch("COMMIT")
        }
        Txn::Update { modulo, value } => c
            .execute(
                "UPDATE kv SET v = ?2, n = n + 1 WHERE k % ?1 = 0",
                params![modulo, value],
            )
            .map(drop),
        Txn::Delete { lo, hi } => c
            .execute("DELETE FROM kv WHERE k >= ?1 AND k < ?2", params![lo, hi])
            .map(drop),
        Txn::RolledBack(rows) => {
            c.execute_batch("BEGIN")?;
            insert(rows)?;
            c.execute_batch("DELETE FROM kv WHERE k % 3 = 0; ROLLBACK")
        }
        Txn::CreateIndex => c.execute_batch("CREATE INDEX IF NOT EXISTS kv_v ON kv(v, n)"),
        Txn::DropIndex => c.execute_batch("DROP INDEX IF EXISTS kv_v"),
        Txn::Vacuum => c.execute_batch("VACUUM"),
        Txn::Flush => h.volume().borrow_mut().flush().map_err(|e| {
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(10), Some(e.to_string()))
        }),
    }
}

/// Opens the database with the pragmas of `cfg` (journal mode only when `fresh`).
fn connect<S: Storage + 'static>(
    h: &opfs_vfs::sqlite::VfsHandle<S>,
    cfg: &Config,
    fresh: bool,
) -> rusqlite::Result<Connection> {
    let c = Connection::open_with_flags_and_vfs(
        "crash.db",
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_CREATE,
        h.name(),
    )?;
    c.busy_timeout(std::time::Duration::ZERO)?;
    c.execute_batch(reopen_sql(cfg.journal))?;
    if fresh {
        c.execute_batch(&setup_sql(cfg.journal))?;
    }
    c.execute_batch(&format!(
        "PRAGMA cache_size=20; PRAGMA synchronous={};",
        cfg.sync
    ))?;
    Ok(c)
}

/// What a run did before the power went out.
struct Outcome {
    /// Model after each acknowledged transaction; `[0]` is the empty volume.
    states: Vec<Model>,
    /// Transactions acknowledged (index into `states`).
    acked: usize,
    /// Index of the last state known flushed.
    flushed: usize,
    /// The power went out during this transaction (index into the workload).
    in_flight: Option<usize>,
    /// Mutating physical calls made.
    mutations: u64,
}

fn run(cfg: &Config, txns: &[Txn], storage: CrashStorage) -> Outcome {
    let probe = storage.clone();
    let mut out = Outcome {
        states: vec![None],
        acked: 0,
        flushed: 0,
        in_flight: None,
        mutations: 0,
    };
    let vol = match Volume::mount(storage, opts(cfg.mode, cfg.durability)) {
        Ok(v) => v,
        Err(e) => {
            assert!(
                probe.is_frozen(),
                "{cfg:?}: mount failed without a power loss: {e}"
            );
            out.mutations = probe.counts().mutations;
            return out;
        }
    };
    let h = register(Rc::new(RefCell::new(vol)));
    // A failed connect changes no rows: nothing in flight that the model would see.
    match connect(&h, cfg, true) {
        Err(e) => assert!(probe.is_frozen(), "{cfg:?}: connect failed: {e}"),
        Ok(c) => {
            for (i, t) in txns.iter().enumerate() {
                let next = apply(out.states.last().expect("non-empty"), t);
                if let Err(e) = run_txn(&c, &h, t) {
                    assert!(
                        probe.is_frozen(),
                        "{cfg:?} {t:?} failed without a power loss: {e}"
                    );
                    out.in_flight = Some(i);
                    out.states.push(next);
                    break;
                }
                out.states.push(next);
                out.acked = out.states.len() - 1;
                if matches!(t, Txn::Flush) || cfg.commits_flushed() {
                    out.flushed = out.acked;
                }
            }
        }
    }
    drop(h);
    out.mutations = probe.counts().mutations;
    out
}

fn read_model(c: &Connection) -> rusqlite::Result<Model> {
    let exists: i64 = c.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='kv'",
        [],
        |r| r.get(0),
    )?;
    if exists == 0 {
        return Ok(None);
    }
    let mut st = c.prepare("SELECT k, v, n FROM kv ORDER BY k")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?;
    Ok(Some(rows.collect::<Result<_, _>>()?))
}

/// Recovers an image and checks it against the allowed states; returns the matching index.
/// `process_crash`: every write survived (the tab died, the machine did not), so every
/// acknowledged commit must be there unless the level is Balanced (which may hold commits in
/// memory); otherwise (power loss) every flushed one.
fn check_image(
    cfg: &Config,
    image: MemoryStorage,
    out: &Outcome,
    ctx: &str,
    process_crash: bool,
) -> usize {
    // Reopen in either buffer mode: the format does not depend on it.
    let mode = if out.mutations.is_multiple_of(2) {
        BufferMode::Memory
    } else {
        BufferMode::Disk
    };
    let h = register(mount(image, opts(mode, cfg.durability)));
    let c = connect(&h, cfg, false).unwrap_or_else(|e| panic!("{ctx}: open: {e}"));
    assert_eq!(integrity(&c), "ok", "{ctx}");
    let got = read_model(&c).unwrap_or_else(|e| panic!("{ctx}: read: {e}"));
    // `states` ends with the in-flight transaction's state, if any.
    let hi = out.states.len() - 1;
    let lo = if process_crash && cfg.durability != Durability::Balanced {
        out.acked
    } else {
        out.flushed
    };
    if let Some(i) = (lo..=hi).rev().find(|&i| out.states[i] == got) {
        return i;
    }
    panic!(
        "{ctx}: recovered rows match no allowed state {lo}..={hi} (acked {}, in flight {:?}); \
         got {} rows",
        out.acked,
        out.in_flight,
        got.as_ref().map_or(0, |m| m.len())
    );
}

/// A crash storage holding a freshly created, empty volume, all durable. (Volume creation
/// itself is the engine's business, tested in `tests/crash.rs`; these tests are about SQL.)
fn fresh_storage() -> CrashStorage {
    let v = Volume::mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    )
    .expect("create volume");
    CrashStorage::from_image(&v.close().expect("close"))
}

#[test]
fn sql_power_loss() {
    let points: u64 = std::env::var("SQL_CRASH_POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_POINTS);
    let base: u64 = std::env::var("SQL_CRASH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0003);
    let started = std::time::Instant::now();
    let journals = ["delete", "truncate", "persist", "memory", "off", "wal"];
    let mut done = 0u64;
    let mut images = 0u64;
    let mut newer = 0u64;
    let mut w = 0u64;
    while done < points {
        let seed = SplitMix64::mix(base, w);
        w += 1;
        let mut rng = SplitMix64::new(seed);
        // Every journal mode x synchronous x durability x buffer mode in turn (108 combinations),
        // the workload itself random.
        let combo = usize::try_from(w - 1).unwrap_or(0);
        let syncs = ["off", "normal", "full"];
        let levels = [
            Durability::Strict,
            Durability::Relaxed,
            Durability::Balanced,
        ];
        let cfg = Config {
            mode: if combo.is_multiple_of(2) {
                BufferMode::Disk
            } else {
                BufferMode::Memory
            },
            durability: levels[(combo / 2) % 3],
            journal: journals[(combo / 6) % journals.len()],
            sync: syncs[(combo / 36) % 3],
            txns: rng.range(3, 14),
        };
        let txns = workload(rng.next_u64(), &cfg);
        // Dry run: the number of mutating calls, and a check that the full run is right.
        let full = run(&cfg, &txns, fresh_storage());
        assert!(full.in_flight.is_none());
        let total = full.mutations;
        for p in 0..POINTS_PER_WORKLOAD.min(points - done) {
            let k = rng.range(1, total);
            let storage = fresh_storage();
            storage.crash_at_mutation(k);
            let out = run(&cfg, &txns, storage.clone());
            if !storage.is_frozen() {
                continue;
            }
            for i in 0..IMAGES_PER_POINT {
                let mode = match rng.below(5) {
                    0 => CrashMode::KeepAll,
                    1 => CrashMode::DropAll,
                    2 => CrashMode::InOrder,
                    3 => CrashMode::RandomSectors,
                    _ => CrashMode::Random,
                };
                let ctx = format!(
                    "workload {w} (seed {seed:#x}) {cfg:?} point {p} at mutation {k}/{total}, \
                     image {i} {mode:?}"
                );
                let image = storage.crash(rng.next_u64(), mode);
                let got = check_image(&cfg, image, &out, &ctx, mode == CrashMode::KeepAll);
                if got > out.acked {
                    newer += 1;
                }
                images += 1;
            }
            done += 1;
        }
    }
    eprintln!(
        "sql_power_loss: {done} crash points, {images} images ({newer} recovered the in-flight \
         transaction), {w} workloads, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
