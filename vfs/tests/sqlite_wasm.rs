#![cfg(target_arch = "wasm32")]
//! The SQLite VFS in the browser build, over in-memory storage (OPFS is covered by
//! `browser_sqlite.rs`): sqlite-wasm-rs was compiled with SQLITE_ENABLE_BATCH_ATOMIC_WRITE
//! (`SQLITE_WASM_RS_FLAGS`), the VFS links and registers, and an autocommit INSERT costs one
//! atomic batch and one flush under Strict.
//!
//! Run: `wasm-pack test --headless --chrome --mode no-install vfs -- --test sqlite_wasm`.

use std::cell::RefCell;
use std::rc::Rc;

use opfs_vfs::sqlite::rusqlite::{Connection, OpenFlags};
use opfs_vfs::sqlite::{self};
use opfs_vfs::storage::MemoryStorage;
use opfs_vfs::{Volume, VolumeOptions};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
fn batch_atomic_commit_in_the_browser_build() {
    let volume = Volume::mount(MemoryStorage::new(), VolumeOptions::default()).unwrap();
    let h = sqlite::register("wasm-mem", Rc::new(RefCell::new(volume)), false).unwrap();
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let c = Connection::open_with_flags_and_vfs("w.db", flags, h.name()).unwrap();
    let mut st = c.prepare("PRAGMA compile_options").unwrap();
    let opts: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    drop(st);
    assert!(
        opts.iter().any(|o| o == "ENABLE_BATCH_ATOMIC_WRITE"),
        "{opts:?}"
    );
    c.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    let before = h.volume().borrow().counters().total().flushes;
    let batches = h.stats().atomic_commits;
    for i in 0..10 {
        c.execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
    }
    assert_eq!(h.volume().borrow().counters().total().flushes - before, 10);
    assert_eq!(h.stats().atomic_commits - batches, 10);
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}
