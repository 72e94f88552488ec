//! Physical calls per SQLite commit over the SQLite VFS, by buffer mode × durability × journal
//! mode, counted by the volume's storage counters (the same on every backend; the counts are
//! what OPFS charges for: the per-call table in `vfs/DESIGN.md`).
//!
//! For each configuration: a fresh volume, a table with 100 rows, then `INSERTS` autocommit
//! INSERTs (about 100 bytes each) measured one by one, then one transaction of `TXN_ROWS`
//! INSERTs. Prints a Markdown table.
//!
//! `cargo run --release -p opfs-vfs --example commit_cost`

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use opfs_vfs::sqlite::rusqlite::{params, Connection, OpenFlags};
use opfs_vfs::sqlite::{self, VfsOptions};
use opfs_vfs::storage::{FileCounters, MemoryStorage};
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};

/// Autocommit INSERTs measured per configuration.
const INSERTS: u64 = 200;
/// Rows of the one multi-row transaction.
const TXN_ROWS: u64 = 1000;
/// Rows before measuring (so the table spans a few pages).
const WARMUP_ROWS: u64 = 100;

struct Row {
    mode: BufferMode,
    durability: Durability,
    journal: &'static str,
    batch_atomic: bool,
    per_insert: FileCounters,
    atomic_per_insert: f64,
    txn: FileCounters,
}

fn measure(mode: BufferMode, durability: Durability, journal: &'static str, batch: bool) -> Row {
    let opts = VolumeOptions {
        buffer_mode: mode,
        durability,
        // No time-based flushes: counts must not depend on the machine's speed.
        max_flush_delay: Duration::from_secs(3600),
        ..VolumeOptions::default()
    };
    let volume = Rc::new(RefCell::new(
        Volume::mount(MemoryStorage::new(), opts).expect("mount"),
    ));
    let name = format!("cost-{mode:?}-{durability:?}-{journal}-{batch}");
    let h = sqlite::register_with(
        &name,
        volume,
        VfsOptions {
            batch_atomic: batch,
            ..VfsOptions::default()
        },
    )
    .expect("register");
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let c = Connection::open_with_flags_and_vfs("cost.db", flags, h.name()).expect("open");
    if journal == "wal" {
        c.execute_batch("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL;")
            .expect("wal");
    } else if journal == "delete+exclusive" {
        c.execute_batch("PRAGMA locking_mode=EXCLUSIVE;")
            .expect("exclusive");
    } else {
        c.execute_batch(&format!("PRAGMA journal_mode={journal};"))
            .expect("journal mode");
    }
    c.execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);")
        .expect("create");
    let insert = |c: &Connection, i: u64| {
        c.execute("INSERT INTO t(v) VALUES (?1)", params![format!("{i:0>96}")])
            .expect("insert");
    };
    for i in 0..WARMUP_ROWS {
        insert(&c, i);
    }
    let counters = || h.volume().borrow().counters().total();
    let before = counters();
    let atomic_before = h.stats().atomic_commits;
    for i in 0..INSERTS {
        insert(&c, i);
    }
    let after = counters();
    let atomic = h.stats().atomic_commits - atomic_before;
    c.execute_batch("BEGIN").expect("begin");
    for i in 0..TXN_ROWS {
        insert(&c, i);
    }
    c.execute_batch("COMMIT").expect("commit");
    let txn_after = counters();
    Row {
        mode,
        durability,
        journal,
        batch_atomic: batch,
        per_insert: after.since(&before),
        atomic_per_insert: atomic as f64 / INSERTS as f64,
        txn: txn_after.since(&after),
    }
}

fn per(n: u64) -> f64 {
    n as f64 / INSERTS as f64
}

fn main() {
    println!(
        "Physical calls per autocommit INSERT (mean of {INSERTS}, ~100-byte rows) and for one \
         {TXN_ROWS}-row transaction.\n"
    );
    println!(
        "| buffer mode | durability | journal mode | batch atomic | flushes/commit | writes/commit | \
         bytes written/commit | reads/commit | atomic batches/commit | {TXN_ROWS}-row txn: flushes | writes | KiB written |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        for durability in [
            Durability::Strict,
            Durability::Relaxed,
            Durability::Balanced,
        ] {
            for journal in ["delete", "truncate", "persist", "memory", "off", "wal"] {
                rows.push(measure(mode, durability, journal, true));
            }
        }
    }
    // Exclusive locking: SQLite stops re-reading the database header at each transaction.
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        rows.push(measure(mode, Durability::Strict, "delete+exclusive", true));
    }
    // What batch-atomic commits save: the same, with the capability not declared.
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        for journal in ["delete", "truncate", "persist"] {
            rows.push(measure(mode, Durability::Strict, journal, false));
        }
    }
    for r in rows {
        println!(
            "| {:?} | {:?} | {} | {} | {:.2} | {:.2} | {:.0} | {:.2} | {:.2} | {} | {} | {:.0} |",
            r.mode,
            r.durability,
            match r.journal {
                "wal" => "wal (locking_mode=exclusive)",
                "delete+exclusive" => "delete (locking_mode=exclusive)",
                j => j,
            },
            if r.batch_atomic { "yes" } else { "no" },
            per(r.per_insert.flushes),
            per(r.per_insert.writes),
            per(r.per_insert.written_bytes),
            per(r.per_insert.reads),
            r.atomic_per_insert,
            r.txn.flushes,
            r.txn.writes,
            r.txn.written_bytes as f64 / 1024.0,
        );
    }
}
