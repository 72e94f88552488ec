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

// The C runtime's memcpy/memmove/memset as SQLite's C code links them: on this target
// `opfs_vfs` defines them (src/sqlite/memops.rs, one bulk-memory instruction each) in place of
// the weak `compiler_builtins` loops. Declared here the way C declares them.
extern "C" {
    fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8;
    fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8;
    fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8;
}

#[wasm_bindgen_test]
fn c_memory_functions_keep_their_contracts() {
    let pattern: Vec<u8> = (0..=255u8).cycle().take(20_000).collect();
    for n in [0usize, 1, 7, 8, 31, 512, 8192, 19_000] {
        let mut dst = vec![0xAAu8; 20_000];
        // Safety: both buffers hold 20,000 bytes and n ≤ 19,000; they do not overlap.
        let r = unsafe { memcpy(dst.as_mut_ptr().add(3), pattern.as_ptr(), n) };
        assert_eq!(r, dst.as_mut_ptr().wrapping_add(3), "memcpy returns dest");
        assert_eq!(&dst[3..3 + n], &pattern[..n], "memcpy n={n}");
        assert!(
            dst[..3].iter().chain(&dst[3 + n..]).all(|&b| b == 0xAA),
            "memcpy n={n} stays inside"
        );

        // Overlapping both ways: the result is as if copied through a temporary buffer.
        for (from, to) in [(0usize, 5usize), (5, 0)] {
            let mut buf = pattern.clone();
            let mut want = pattern.clone();
            want.copy_within(from..from + n, to);
            // Safety: from/to + n ≤ 19,005 < 20,000, inside `buf`.
            let r = unsafe { memmove(buf.as_mut_ptr().add(to), buf.as_ptr().add(from), n) };
            assert_eq!(r, buf.as_mut_ptr().wrapping_add(to), "memmove returns dest");
            assert_eq!(buf, want, "memmove n={n} from {from} to {to}");
        }

        let mut buf = pattern.clone();
        // Safety: 1 + n ≤ 19,001 bytes of a 20,000-byte buffer. C passes the byte as an int and
        // uses it as unsigned char: 0x1FE sets 0xFE.
        let r = unsafe { memset(buf.as_mut_ptr().add(1), 0x1FE, n) };
        assert_eq!(r, buf.as_mut_ptr().wrapping_add(1), "memset returns dest");
        assert!(buf[1..1 + n].iter().all(|&b| b == 0xFE), "memset n={n}");
        assert_eq!(buf[0], pattern[0]);
        assert_eq!(
            &buf[1 + n..],
            &pattern[1 + n..],
            "memset n={n} stays inside"
        );
    }
}
