//! Native SQL micro-benchmarks: the SQLite VFS over the volume on the std-file backend (a
//! temporary directory on disk), in both buffer modes and both non-buffered durability levels,
//! against rusqlite's default unix VFS on a file (journal_mode=DELETE, synchronous=FULL: its
//! defaults) and against `:memory:`.
//!
//! Workloads (each iteration starts from a fresh database, set up outside the timing):
//! - `insert_autocommit_100`: 100 INSERTs, each its own transaction;
//! - `insert_txn_1000`: 1,000 INSERTs in one transaction;
//! - `select_point_100`: 100 primary-key lookups in a 1,000-row table.
//!
//! Before timing, each backend × workload runs once more with the volume's counters and prints
//! physical flushes and write calls per commit (stderr). The full table by journal mode is
//! `cargo run --release -p opfs-vfs --example commit_cost`.
//!
//! `cargo bench -p opfs-vfs --bench sql`

// Native only: `wasm-pack test` builds benches too; there this file is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use opfs_vfs::sqlite::rusqlite::{params, Connection, OpenFlags};
use opfs_vfs::sqlite::{self, VfsHandle};
use opfs_vfs::storage::StdStorage;
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};
use tempfile::TempDir;

/// Rows of the point-select table.
const SELECT_TABLE_ROWS: i64 = 1000;
/// Seed of the point-select key sequence.
const SELECT_SEED: u64 = 0x5e1ec7;

#[derive(Clone, Copy, Debug)]
enum Backend {
    Ours(BufferMode, Durability),
    UnixFile,
    Memory,
}

impl Backend {
    const ALL: [Backend; 6] = [
        Backend::Ours(BufferMode::Memory, Durability::Strict),
        Backend::Ours(BufferMode::Memory, Durability::Relaxed),
        Backend::Ours(BufferMode::Disk, Durability::Strict),
        Backend::Ours(BufferMode::Disk, Durability::Relaxed),
        Backend::UnixFile,
        Backend::Memory,
    ];

    fn label(self) -> String {
        match self {
            Backend::Ours(m, d) => format!("opfs-vfs/{m:?}/{d:?}").to_lowercase(),
            Backend::UnixFile => "unix-file".into(),
            Backend::Memory => "memory".into(),
        }
    }
}

/// An open database and what keeps it alive. Field order is drop order: the connection closes
/// before the VFS is unregistered and the directory removed.
struct Fixture {
    conn: Connection,
    vfs: Option<VfsHandle<StdStorage>>,
    _dir: Option<TempDir>,
}

impl Fixture {
    fn new(backend: Backend) -> Fixture {
        let dir = || tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        match backend {
            Backend::Ours(mode, durability) => {
                let d = dir();
                let storage = StdStorage::open(d.path()).expect("storage");
                let opts = VolumeOptions {
                    buffer_mode: mode,
                    durability,
                    ..VolumeOptions::default()
                };
                let volume = Rc::new(RefCell::new(Volume::mount(storage, opts).expect("mount")));
                let name = unique_name();
                let vfs = sqlite::register(&name, volume, false).expect("register");
                let conn = Connection::open_with_flags_and_vfs("bench.db", flags, name.as_str())
                    .expect("open");
                Fixture {
                    conn,
                    vfs: Some(vfs),
                    _dir: Some(d),
                }
            }
            Backend::UnixFile => {
                let d = dir();
                let conn =
                    Connection::open_with_flags(d.path().join("bench.db"), flags).expect("open");
                Fixture {
                    conn,
                    vfs: None,
                    _dir: Some(d),
                }
            }
            Backend::Memory => Fixture {
                conn: Connection::open_in_memory().expect("open"),
                vfs: None,
                _dir: None,
            },
        }
    }
}

fn unique_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("bench-{}", N.fetch_add(1, Ordering::Relaxed))
}

#[derive(Clone, Copy, Debug)]
enum Workload {
    InsertAutocommit100,
    InsertTxn1000,
    SelectPoint100,
}

impl Workload {
    const ALL: [Workload; 3] = [
        Workload::InsertAutocommit100,
        Workload::InsertTxn1000,
        Workload::SelectPoint100,
    ];

    fn name(self) -> &'static str {
        match self {
            Workload::InsertAutocommit100 => "insert_autocommit_100",
            Workload::InsertTxn1000 => "insert_txn_1000",
            Workload::SelectPoint100 => "select_point_100",
        }
    }

    /// Commits the timed part makes.
    fn commits(self) -> u64 {
        match self {
            Workload::InsertAutocommit100 => 100,
            Workload::InsertTxn1000 => 1,
            Workload::SelectPoint100 => 0,
        }
    }

    fn setup(self, backend: Backend) -> Fixture {
        let f = Fixture::new(backend);
        f.conn
            .execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL);")
            .expect("create");
        if let Workload::SelectPoint100 = self {
            f.conn
                .execute_batch(&format!(
                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<{SELECT_TABLE_ROWS})
                     INSERT INTO t SELECT i, printf('%096d', i) FROM n;"
                ))
                .expect("fill");
        }
        f
    }

    fn run(self, c: &Connection) {
        // One prepared statement per run: SQL parsing would otherwise dominate the time.
        let mut ins = c.prepare("INSERT INTO t(v) VALUES (?1)").expect("prepare");
        let mut insert = |i: i64| {
            ins.execute(params![format!("{i:0>96}")]).expect("insert");
        };
        match self {
            Workload::InsertAutocommit100 => (0..100).for_each(&mut insert),
            Workload::InsertTxn1000 => {
                c.execute_batch("BEGIN").expect("begin");
                (0..1000).for_each(&mut insert);
                c.execute_batch("COMMIT").expect("commit");
            }
            Workload::SelectPoint100 => {
                let mut st = c.prepare("SELECT v FROM t WHERE id = ?1").expect("prepare");
                let mut x = SELECT_SEED;
                for _ in 0..100 {
                    // xorshift: a fixed pseudo-random key sequence.
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let key =
                        i64::try_from(x % SELECT_TABLE_ROWS.unsigned_abs()).expect("small") + 1;
                    let v: String = st.query_row([key], |r| r.get(0)).expect("select");
                    assert_eq!(v.len(), 96);
                }
            }
        }
    }
}

/// One untimed run with counters: physical calls per commit, on stderr.
fn report_calls(backend: Backend, w: Workload) {
    let Backend::Ours(..) = backend else {
        return;
    };
    let f = w.setup(backend);
    let vfs = f.vfs.as_ref().expect("ours");
    let before = vfs.volume().borrow().counters().total();
    w.run(&f.conn);
    let d = vfs.volume().borrow().counters().total();
    let commits = w.commits().max(1) as f64;
    eprintln!(
        "calls {:<28} {:<22} flushes/commit {:>5.2}  writes/commit {:>5.2}  \
         KiB written/commit {:>6.1}  reads {:>4}",
        backend.label(),
        w.name(),
        (d.flushes - before.flushes) as f64 / commits,
        (d.writes - before.writes) as f64 / commits,
        (d.written_bytes - before.written_bytes) as f64 / 1024.0 / commits,
        d.reads - before.reads,
    );
}

fn bench(c: &mut Criterion) {
    for w in Workload::ALL {
        let mut g = c.benchmark_group(w.name());
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for backend in Backend::ALL {
            report_calls(backend, w);
            g.bench_function(backend.label(), |b| {
                b.iter_batched(
                    || w.setup(backend),
                    |f| {
                        w.run(&f.conn);
                        f // dropped (closed) outside the timing
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
