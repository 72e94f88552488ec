#![cfg(not(target_arch = "wasm32"))]
//! Filesystem-API conformance: one suite of checks of the volume's public API, run against
//! every native backend (`MemoryStorage`, `StdStorage` in a temporary directory, `CrashStorage`
//! without crashes), and for each in both buffer modes and all three durability levels.
//!
//! Each check also remounts (close + mount, or crash + mount after a flush) and verifies the
//! same state again, so persistence through the log and through checkpoints is covered too.
//! Physical-call accounting (how many writes and flushes a commit costs) is checked at the end.

mod common;

use common::{assert_state, model_write, opts, other, pattern, Model, DURABILITIES, MODES};
use opfs_vfs::format::FRAME_HEADER;
use opfs_vfs::format::PAGE_SIZE;
use opfs_vfs::storage::{MemoryStorage, PhysicalFileId, StdStorage, Storage, StorageError};
use opfs_vfs::testing::{CrashMode, CrashStorage};
use opfs_vfs::{BufferMode, Durability, Error, FileId, Volume, VolumeOptions, MAX_FILE_SIZE};

// ---------------------------------------------------------------------------------------------
// Backends
// ---------------------------------------------------------------------------------------------

/// A kind of storage the suite runs on.
trait Backend: Sized {
    type S: Storage;
    fn new() -> Self;
    /// The storage of a new, empty volume.
    fn storage(&mut self) -> Self::S;
    /// Closes the storage's handles and opens the same physical files again.
    fn reopen(&mut self, s: Self::S) -> Self::S;
    /// What a power loss right now would leave, if the backend can tell.
    fn power_loss_image(_s: &Self::S) -> Option<MemoryStorage> {
        None
    }
}

struct Mem;
impl Backend for Mem {
    type S = MemoryStorage;
    fn new() -> Self {
        Mem
    }
    fn storage(&mut self) -> MemoryStorage {
        MemoryStorage::new()
    }
    fn reopen(&mut self, s: MemoryStorage) -> MemoryStorage {
        s
    }
}

struct Std {
    dir: tempfile::TempDir,
}
impl Backend for Std {
    type S = StdStorage;
    fn new() -> Self {
        Std {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }
    fn storage(&mut self) -> StdStorage {
        StdStorage::open(self.dir.path()).expect("open StdStorage")
    }
    fn reopen(&mut self, s: StdStorage) -> StdStorage {
        drop(s);
        StdStorage::open(self.dir.path()).expect("reopen StdStorage")
    }
}

struct Crash;
impl Backend for Crash {
    type S = CrashStorage;
    fn new() -> Self {
        Crash
    }
    fn storage(&mut self) -> CrashStorage {
        CrashStorage::new()
    }
    fn reopen(&mut self, s: CrashStorage) -> CrashStorage {
        s
    }
    fn power_loss_image(s: &CrashStorage) -> Option<MemoryStorage> {
        Some(s.crash(0, CrashMode::DropAll))
    }
}

/// One configuration of one backend.
struct Ctx<B: Backend> {
    b: B,
    opts: VolumeOptions,
}

impl<B: Backend> Ctx<B> {
    fn mount(&mut self) -> Volume<B::S> {
        let st = self.b.storage();
        Volume::mount(st, self.opts.clone()).expect("mount new volume")
    }

    /// Clean unmount (close) and mount again with the same options.
    fn remount(&mut self, v: Volume<B::S>) -> Volume<B::S> {
        let o = self.opts.clone();
        self.remount_with(v, o)
    }

    fn remount_with(&mut self, v: Volume<B::S>, opts: VolumeOptions) -> Volume<B::S> {
        let st = v.close().expect("close");
        let st = self.b.reopen(st);
        Volume::mount(st, opts).expect("remount")
    }

    /// Drops the volume without closing (a crash of the process), then mounts again.
    fn crash_remount(&mut self, v: Volume<B::S>) -> Volume<B::S> {
        let st = v.into_storage_unflushed();
        let st = self.b.reopen(st);
        Volume::mount(st, self.opts.clone()).expect("mount after crash")
    }

    /// After a `flush`: a power loss now must keep exactly `want` (checked if the backend can
    /// simulate one).
    fn assert_durable(&self, v: &Volume<B::S>, want: &Model) {
        if let Some(img) = B::power_loss_image(v.storage()) {
            let mut w = Volume::mount(img, self.opts.clone()).expect("mount power-loss image");
            assert_state(&mut w, want);
        }
    }

    fn durability(&self) -> Durability {
        self.opts.durability
    }
}

/// Runs `check` on a fresh backend for every buffer mode and durability level.
fn for_all_configs<B: Backend>(check: fn(&mut Ctx<B>)) {
    for mode in MODES {
        for durability in DURABILITIES {
            eprintln!("--- config: {mode:?}, {durability:?}");
            let mut ctx = Ctx {
                b: B::new(),
                opts: opts(mode, durability),
            };
            check(&mut ctx);
        }
    }
}

fn id_of<S: Storage>(v: &Volume<S>, name: &str) -> FileId {
    v.open(name).expect("open")
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

fn create_exists_already_exists<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    assert!(v.list().is_empty());
    assert!(!v.exists("a"));
    let a = v.create("a").unwrap();
    assert!(v.exists("a"));
    assert_eq!(v.open("a").unwrap(), a);
    assert!(matches!(v.create("a"), Err(Error::AlreadyExists { name }) if name == "a"));
    assert!(matches!(v.open("zz"), Err(Error::NotFound { name }) if name == "zz"));
    assert!(matches!(v.stat("zz"), Err(Error::NotFound { .. })));
    assert_eq!(v.open_or_create("a").unwrap(), a);
    let b = v.open_or_create("b").unwrap();
    assert_ne!(a, b);
    assert_eq!(v.len(b).unwrap(), 0);
    assert_eq!(v.name_of(b).unwrap(), "b");
    assert_eq!(v.read_to_vec(b).unwrap(), Vec::<u8>::new());
    let mut buf = [7u8; 4];
    assert_eq!(v.read(b, 0, &mut buf).unwrap(), 0);
    v.commit().unwrap();
    let mut v = cx.remount(v);
    assert!(v.exists("a") && v.exists("b"));
    assert!(matches!(v.create("b"), Err(Error::AlreadyExists { .. })));
    let want: Model = [("a".into(), vec![]), ("b".into(), vec![])].into();
    assert_state(&mut v, &want);
    // Uncommitted creates are visible at once, and committed by close.
    v.create("c").unwrap();
    assert!(v.exists("c"));
    let v = cx.remount(v);
    assert!(v.exists("c"));
    v.close().unwrap();
}

fn invalid_names<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let long = "x".repeat(1025);
    for bad in ["", "a\0b", "\0", long.as_str()] {
        assert!(
            matches!(v.create(bad), Err(Error::InvalidName { .. })),
            "create({:?}) accepted",
            &bad[..bad.len().min(20)]
        );
        assert!(matches!(
            v.open_or_create(bad),
            Err(Error::InvalidName { .. })
        ));
    }
    let max = "y".repeat(1024);
    let ok = v.create(&max).unwrap();
    v.write(ok, 0, b"long name").unwrap();
    let uni = "ünï cødé/路径 with spaces.db-journal";
    v.create(uni).unwrap();
    // A multi-byte name of exactly 1024 bytes.
    let multi = "é".repeat(512);
    assert_eq!(multi.len(), 1024);
    v.create(&multi).unwrap();
    let too_long_multi = format!("{multi}a");
    assert!(matches!(
        v.create(&too_long_multi),
        Err(Error::InvalidName { .. })
    ));
    for bad in ["", "a\0", long.as_str()] {
        assert!(matches!(v.rename(uni, bad), Err(Error::InvalidName { .. })));
    }
    assert!(v.exists(uni), "failed rename must not move the file");
    assert!(v.list().len() == 3);
    v.commit().unwrap();
    let mut v = cx.remount(v);
    let want: Model = [
        (max.clone(), b"long name".to_vec()),
        (uni.to_string(), vec![]),
        (multi.clone(), vec![]),
    ]
    .into();
    assert_state(&mut v, &want);
    // Long names through the log (not only the catalog): rename, crash, replay.
    v.rename(&max, &"z".repeat(1024)).unwrap();
    v.flush().unwrap();
    let v = cx.crash_remount(v);
    assert!(v.exists(&"z".repeat(1024)) && !v.exists(&max));
    v.close().unwrap();
}

fn write_offsets_gaps_and_short_reads<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let e = m.entry("f".into()).or_default();
    v.write(f, 0, b"hello").unwrap();
    model_write(e, 0, b"hello");
    // A gap of zeros, across pages.
    v.write(f, 10_000, b"world").unwrap();
    model_write(e, 10_000, b"world");
    assert_eq!(v.len(f).unwrap(), 10_005);
    let mut buf = vec![0xEE; 100];
    assert_eq!(v.read(f, 9_998, &mut buf).unwrap(), 7);
    assert_eq!(&buf[..7], b"\0\0world");
    assert!(
        buf[7..].iter().all(|&x| x == 0xEE),
        "bytes past a short read untouched"
    );
    assert_eq!(v.read(f, 10_005, &mut buf).unwrap(), 0, "read at EOF");
    assert_eq!(
        v.read(f, 1 << 40, &mut buf).unwrap(),
        0,
        "read far past EOF"
    );
    assert_eq!(v.read(f, 0, &mut []).unwrap(), 0, "empty buffer");
    let mut gap = vec![0xEE; 9_995];
    assert_eq!(v.read(f, 5, &mut gap).unwrap(), 9_995);
    assert!(gap.iter().all(|&x| x == 0), "gap reads as zeros");
    // An empty write never extends.
    v.write(f, 50_000, b"").unwrap();
    assert_eq!(v.len(f).unwrap(), 10_005);
    // Writes straddling page boundaries, and overwrites.
    let p = PAGE_SIZE as u64;
    let d = pattern(3 * PAGE_SIZE + 17, 1);
    v.write(f, p - 7, &d).unwrap();
    model_write(e, PAGE_SIZE - 7, &d);
    v.write(f, 2 * p + 1, b"overwrite").unwrap();
    model_write(e, 2 * PAGE_SIZE + 1, b"overwrite");
    // Past EOF with a gap that starts mid-page.
    v.write(f, 40_003, &[9; 5000]).unwrap();
    model_write(e, 40_003, &[9; 5000]);
    assert_state(&mut v, &m);
    v.commit().unwrap();
    // Writes in a later transaction over committed pages (read-modify-write of pages).
    v.write(f, 3, b"XY").unwrap();
    model_write(m.get_mut("f").unwrap(), 3, b"XY");
    v.write(f, 40_000, &[1; 10]).unwrap();
    model_write(m.get_mut("f").unwrap(), 40_000, &[1; 10]);
    assert_state(&mut v, &m);
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    // Reads at every offset class after remount (home blocks now).
    let f = id_of(&v, "f");
    for off in [0u64, 1, 4095, 4096, 4097, 10_004, 44_999, 45_002, 45_003] {
        let mut b = vec![0u8; 6000];
        let n = v.read(f, off, &mut b).unwrap();
        let want = &m["f"][usize::try_from(off).unwrap().min(m["f"].len())..];
        let k = want.len().min(6000);
        assert_eq!(n, k, "read at {off}");
        assert_eq!(&b[..n], &want[..k], "read at {off}");
    }
    // Offsets at the limit.
    assert!(matches!(
        v.write(f, MAX_FILE_SIZE, b"x"),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        v.write(f, u64::MAX - 1, b"xy"),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        v.set_len(f, MAX_FILE_SIZE + 1),
        Err(Error::TooLarge { .. })
    ));
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn set_len_shrink_grow<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let full = vec![0xAB; 3 * PAGE_SIZE];
    v.write(f, 0, &full).unwrap();
    v.commit().unwrap();
    // Shrink into the middle of page 1, grow again in the same transaction: the cut part of
    // page 1 and the regrown pages read as zeros.
    v.set_len(f, 5000).unwrap();
    assert_eq!(v.len(f).unwrap(), 5000);
    v.set_len(f, 11_000).unwrap();
    let mut want = vec![0xAB; 5000];
    want.resize(11_000, 0);
    m.insert("f".into(), want);
    assert_state(&mut v, &m);
    v.commit().unwrap();
    assert_state(&mut v, &m);

    // Shrink and grow in separate transactions, with a checkpoint between.
    let g = v.create("g").unwrap();
    v.write(g, 0, &full).unwrap();
    v.commit().unwrap();
    v.set_len(g, 4100).unwrap();
    v.commit().unwrap();
    v.checkpoint().unwrap();
    v.set_len(g, 3 * PAGE_SIZE as u64).unwrap();
    let mut wg = vec![0xAB; 4100];
    wg.resize(3 * PAGE_SIZE, 0);
    m.insert("g".into(), wg);
    assert_state(&mut v, &m);
    v.commit().unwrap();
    assert_state(&mut v, &m);

    // Shrink to a page boundary, then write past the end: the gap is zeros, not old data.
    let h = v.create("h").unwrap();
    v.write(h, 0, &full).unwrap();
    v.commit().unwrap();
    v.set_len(h, PAGE_SIZE as u64).unwrap();
    v.write(h, 2 * PAGE_SIZE as u64 + 100, b"end").unwrap();
    let mut wh = vec![0xAB; PAGE_SIZE];
    model_write(&mut wh, 2 * PAGE_SIZE + 100, b"end");
    m.insert("h".into(), wh);
    // To zero and back; same length is a no-op.
    let z = v.create("z").unwrap();
    v.write(z, 0, b"data").unwrap();
    v.commit().unwrap();
    v.set_len(z, 0).unwrap();
    assert_eq!(v.read_to_vec(z).unwrap(), b"");
    v.set_len(z, 3).unwrap();
    v.set_len(z, 3).unwrap();
    m.insert("z".into(), vec![0; 3]);
    // Grow only (a hole file).
    let hole = v.create("hole").unwrap();
    v.set_len(hole, 100_000).unwrap();
    m.insert("hole".into(), vec![0; 100_000]);
    assert_state(&mut v, &m);
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    v.checkpoint().unwrap();
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    // After a checkpoint the cut pages are home blocks: shrink + regrow again from there.
    let f = id_of(&v, "f");
    v.set_len(f, 4097).unwrap();
    v.set_len(f, 9000).unwrap();
    let wf = m.get_mut("f").unwrap();
    wf.truncate(4097);
    wf.resize(9000, 0);
    v.commit().unwrap();
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn rename_semantics<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    for (n, s) in [("a", 1u64), ("b", 2), ("c", 3)] {
        let id = v.create(n).unwrap();
        let d = pattern(5000 + 100 * usize::try_from(s).unwrap(), s);
        v.write(id, 0, &d).unwrap();
        m.insert(n.into(), d);
    }
    v.commit().unwrap();
    let a = id_of(&v, "a");
    v.rename("a", "a2").unwrap();
    assert!(!v.exists("a"));
    assert!(matches!(v.open("a"), Err(Error::NotFound { .. })));
    assert_eq!(v.open("a2").unwrap(), a, "rename keeps the id");
    assert_eq!(v.name_of(a).unwrap(), "a2");
    let d = m.remove("a").unwrap();
    m.insert("a2".into(), d);
    // Onto an existing name: refused, nothing changes.
    assert!(matches!(
        v.rename("a2", "b"),
        Err(Error::AlreadyExists { name }) if name == "b"
    ));
    // Onto itself: fine, nothing changes.
    v.rename("b", "b").unwrap();
    assert!(matches!(v.rename("nope", "x"), Err(Error::NotFound { .. })));
    assert!(matches!(
        v.rename("nope", "nope"),
        Err(Error::NotFound { .. })
    ));
    assert_state(&mut v, &m);
    // Swap b and c through a temporary name in one transaction.
    v.rename("b", "tmp").unwrap();
    v.rename("c", "b").unwrap();
    v.rename("tmp", "c").unwrap();
    let (b, c) = (m.remove("b").unwrap(), m.remove("c").unwrap());
    m.insert("b".into(), c);
    m.insert("c".into(), b);
    // Rename then create a new file under the old name, and write to the renamed one.
    v.rename("a2", "a3").unwrap();
    v.create("a2").unwrap();
    v.write(a, 0, b"renamed").unwrap();
    let d = m.remove("a2").unwrap();
    m.insert("a3".into(), d);
    m.insert("a2".into(), vec![]);
    model_write(m.get_mut("a3").unwrap(), 0, b"renamed");
    // Delete, then rename another file into the freed name.
    v.delete("b").unwrap();
    v.rename("c", "b").unwrap();
    let d = m.remove("c").unwrap();
    m.insert("b".into(), d);
    assert_state(&mut v, &m);
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    // A rename chain within one transaction, then remount in both ways.
    v.rename("a3", "x1").unwrap();
    v.rename("x1", "x2").unwrap();
    v.rename("x2", "a3").unwrap();
    v.rename("a2", "new").unwrap();
    let d = m.remove("a2").unwrap();
    m.insert("new".into(), d);
    v.commit().unwrap();
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn delete_then_stale_id<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let a = v.create("a").unwrap();
    v.write(a, 0, &pattern(9000, 5)).unwrap();
    v.commit().unwrap();
    v.delete("a").unwrap();
    assert!(!v.exists("a"));
    let stale = |r: Result<(), Error>| matches!(r, Err(Error::StaleId { id }) if id == a.0);
    let mut buf = [0u8; 10];
    assert!(stale(v.read(a, 0, &mut buf).map(|_| ())));
    assert!(stale(v.read_to_vec(a).map(|_| ())));
    assert!(stale(v.write(a, 0, b"x")));
    assert!(stale(v.set_len(a, 3)));
    assert!(stale(v.len(a).map(|_| ())));
    assert!(stale(v.name_of(a).map(|_| ())));
    assert!(stale(v.delete_id(a)));
    assert!(matches!(v.delete("a"), Err(Error::NotFound { .. })));
    // Recreate under the same name: a new, empty file with a new id.
    let a2 = v.create("a").unwrap();
    assert_ne!(a2, a);
    assert_eq!(v.len(a2).unwrap(), 0);
    assert!(stale(v.write(a, 0, b"x")), "old id stays stale");
    // delete_id, and create + delete within one transaction.
    let b = v.create("b").unwrap();
    v.write(b, 0, b"bbb").unwrap();
    v.delete_id(b).unwrap();
    assert!(matches!(v.len(b), Err(Error::StaleId { .. })));
    let c = v.create("c").unwrap();
    v.write(c, 0, b"ccc").unwrap();
    v.commit().unwrap();
    v.delete_id(c).unwrap();
    let want: Model = [("a".into(), vec![])].into();
    assert_state(&mut v, &want);
    v.flush().unwrap();
    cx.assert_durable(&v, &want);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &want);
    // Deleted files' space is reused after checkpoints; contents stay right.
    let mut m = want;
    for round in 0..3u64 {
        let name = format!("r{round}");
        let id = v.create(&name).unwrap();
        let d = pattern(20_000, round);
        v.write(id, 0, &d).unwrap();
        m.insert(name.clone(), d);
        v.commit().unwrap();
        v.checkpoint().unwrap();
        if round > 0 {
            let prev = format!("r{}", round - 1);
            v.delete(&prev).unwrap();
            m.remove(&prev);
            v.checkpoint().unwrap();
        }
    }
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn list_sorted_and_stat<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let names = ["b", "a/x", "c", "a", "B", "ä", "a/", "aa", "0"];
    for (i, n) in names.iter().enumerate() {
        let id = v.create(n).unwrap();
        v.write(id, 0, &vec![1; i * 10]).unwrap();
    }
    let check = |v: &Volume<B::S>| {
        let list = v.list();
        let got: Vec<&str> = list.iter().map(|m| m.name.as_str()).collect();
        let mut want: Vec<&str> = names.to_vec();
        want.sort_unstable();
        assert_eq!(got, want, "list is sorted by name (bytes)");
        for (i, n) in names.iter().enumerate() {
            let st = v.stat(n).unwrap();
            assert_eq!(st.name, *n);
            assert_eq!(st.len, (i * 10) as u64);
            assert_eq!(st.id, v.open(n).unwrap());
            let entry = list.iter().find(|m| m.name == *n).unwrap();
            assert_eq!(entry, &st);
        }
    };
    check(&v);
    v.commit().unwrap();
    let v = cx.remount(v);
    check(&v);
    let v = cx.remount_with(
        v,
        VolumeOptions {
            buffer_mode: other(cx.opts.buffer_mode),
            ..cx.opts.clone()
        },
    );
    check(&v);
    v.close().unwrap();
}

/// Small reads (SQLite's 16-byte header reads) of committed pages, of pages a transaction
/// added past the committed length, and across that length: memory serves the first without a
/// page-sized buffer (`Volume::read_cached_part`), and reading past the committed length of a
/// resident copy must give zeros, not trip over its end (a debug assertion in the browser
/// suite, 2026-12-06).
fn small_reads_past_the_committed_length<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    // The committed length ends inside page 1, which stays committed when the file grows.
    let data = pattern(5_002, 31);
    let f = v.create("small").unwrap();
    v.write(f, 0, &data).unwrap();
    v.commit().unwrap();
    v.set_len(f, 20_000).unwrap();
    v.write(f, 12_000, b"staged").unwrap();
    let mut want = data.clone();
    want.resize(20_000, 0);
    want[12_000..12_006].copy_from_slice(b"staged");
    for round in 0..2 {
        let reads = [
            (24usize, 16usize),
            (4_990, 16),
            (6_000, 16),
            (11_998, 10),
            (19_990, 16),
        ];
        for (off, len) in reads {
            let mut b = vec![0xEE; len];
            let n = v.read(f, off as u64, &mut b).unwrap();
            let end = (off + len).min(want.len());
            assert_eq!(
                &b[..n],
                &want[off..end],
                "read of {len} at {off}, round {round}"
            );
        }
        v.commit().unwrap();
    }
}

fn large_file<B: Backend>(cx: &mut Ctx<B>) {
    // What this checks is the log's: no tail links (`big_commits_go_to_the_data_tail`).
    cx.opts.link_min_bytes = None;
    const LEN: usize = 3 << 20;
    let mut v = cx.mount();
    let data = pattern(LEN, 77);
    let f = v.create("big").unwrap();
    let before = v.counters();
    for (i, chunk) in data.chunks(100_000).enumerate() {
        v.write(f, (i * 100_000) as u64, chunk).unwrap();
    }
    let spilled = v.counters().since(&before).file(PhysicalFileId::Log).writes;
    if cx.opts.buffer_mode == BufferMode::Disk {
        assert!(
            spilled >= 2,
            "Disk mode must spill staged pages past write_buffer_bytes ({spilled} log writes)"
        );
    } else {
        assert_eq!(spilled, 0, "Memory mode writes nothing before commit");
    }
    // Read back before commit (staged + spilled log + memory).
    assert_eq!(v.read_to_vec(f).unwrap(), data);
    v.commit().unwrap();
    let mut m: Model = [("big".into(), data.clone())].into();
    // Overwrite a range across the 1 MiB mark in one call, plus random small reads.
    let patch = pattern(300_000, 78);
    v.write(f, 900_000, &patch).unwrap();
    model_write(m.get_mut("big").unwrap(), 900_000, &patch);
    let want = &m["big"];
    for off in [
        0usize,
        4095,
        1 << 20,
        (1 << 20) - 1,
        900_000,
        1_199_999,
        LEN - 1,
    ] {
        let mut b = vec![0; 10_000];
        let n = v.read(f, off as u64, &mut b).unwrap();
        assert_eq!(&b[..n], &want[off..(off + 10_000).min(LEN)]);
    }
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    v.checkpoint().unwrap();
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    // A single write call larger than the write buffer, at an unaligned offset.
    let g = v.create("big2").unwrap();
    let one = &data[..1_500_000];
    v.write(g, 12_345, one).unwrap();
    let mut d2 = vec![0; 12_345];
    d2.extend_from_slice(one);
    m.insert("big2".into(), d2);
    v.commit().unwrap();
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn many_files<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    for i in 0..1000u64 {
        let name = format!("dir/file-{i:04}.bin");
        let id = v.create(&name).unwrap();
        let d = pattern(1024, i);
        v.write(id, 0, &d).unwrap();
        m.insert(name, d);
        if i % 250 == 249 {
            v.commit().unwrap();
        }
    }
    assert_eq!(v.list().len(), 1000);
    assert_state(&mut v, &m);
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    // Delete every third, then checkpoint and remount.
    for i in (0..1000u64).step_by(3) {
        let name = format!("dir/file-{i:04}.bin");
        v.delete(&name).unwrap();
        m.remove(&name);
    }
    v.checkpoint().unwrap();
    let mut v = cx.remount(v);
    assert_eq!(v.list().len(), m.len());
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn close_remount_persistence<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    for round in 0..5u64 {
        let name = format!("f{}", round % 3);
        let id = v.open_or_create(&name).unwrap();
        let d = pattern(3000, round);
        let off = round * 2000;
        v.write(id, off, &d).unwrap();
        model_write(
            m.entry(name).or_default(),
            usize::try_from(off).unwrap(),
            &d,
        );
        v.commit().unwrap();
    }
    // Uncommitted changes are committed by close.
    let id = v.create("late").unwrap();
    v.write(id, 0, b"late").unwrap();
    m.insert("late".into(), b"late".to_vec());
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    assert_eq!(
        v.stats().recovered_commits,
        0,
        "close checkpoints: nothing to replay"
    );
    assert_eq!(
        v.stats().log_bytes,
        FRAME_HEADER as u64,
        "after a clean close the log holds only its epoch marker"
    );
    // Several close/mount cycles without changes keep everything.
    for _ in 0..3 {
        v = cx.remount(v);
    }
    assert_state(&mut v, &m);
    // Without checkpoint_on_close the state comes back from the log.
    let no_ckpt = VolumeOptions {
        checkpoint_on_close: false,
        ..cx.opts.clone()
    };
    let mut v = cx.remount_with(v, no_ckpt.clone());
    let id = v.open("late").unwrap();
    v.write(id, 4, b"r").unwrap();
    model_write(m.get_mut("late").unwrap(), 4, b"r");
    let mut v = cx.remount_with(v, no_ckpt);
    assert!(v.stats().recovered_commits >= 1);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn checkpoint_then_remount<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let d = pattern(50_000, 1);
    v.write(f, 0, &d).unwrap();
    m.insert("f".into(), d);
    v.checkpoint().unwrap();
    assert_eq!(v.stats().checkpoints, 1);
    assert_eq!(
        v.stats().log_bytes,
        FRAME_HEADER as u64,
        "checkpoint starts a new log epoch: its marker frame only"
    );
    // A checkpoint makes everything durable, whatever the durability level.
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    assert_eq!(v.stats().recovered_commits, 0);
    // Log on top of a checkpoint, another checkpoint, crash.
    let f = id_of(&v, "f");
    v.write(f, 10_000, b"after checkpoint").unwrap();
    model_write(m.get_mut("f").unwrap(), 10_000, b"after checkpoint");
    v.commit().unwrap();
    let g = v.create("g").unwrap();
    v.write(g, 0, &[5; 7000]).unwrap();
    m.insert("g".into(), vec![5; 7000]);
    v.checkpoint().unwrap();
    v.write(g, 0, b"x").unwrap();
    model_write(m.get_mut("g").unwrap(), 0, b"x");
    v.flush().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    assert_eq!(v.stats().recovered_commits, 1);
    // Automatic checkpoints with a small threshold.
    let small = VolumeOptions {
        checkpoint_bytes: 64 << 10,
        ..cx.opts.clone()
    };
    let mut v = cx.remount_with(v, small.clone());
    let f = id_of(&v, "f");
    for i in 0..40u64 {
        let d = pattern(8000, 100 + i);
        v.write(f, (i % 7) * 5000, &d).unwrap();
        model_write(
            m.get_mut("f").unwrap(),
            usize::try_from((i % 7) * 5000).unwrap(),
            &d,
        );
        v.commit().unwrap();
    }
    assert!(v.stats().checkpoints >= 2, "{:?}", v.stats());
    let mut v = cx.remount_with(v, small);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

fn mount_in_other_buffer_mode<B: Backend>(cx: &mut Ctx<B>) {
    let mode = cx.opts.buffer_mode;
    let flipped = VolumeOptions {
        buffer_mode: other(mode),
        ..cx.opts.clone()
    };
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let d = pattern(30_000, 9);
    v.write(f, 0, &d).unwrap();
    m.insert("f".into(), d);
    let mut v = cx.remount_with(v, flipped.clone());
    assert_eq!(v.options().buffer_mode, other(mode));
    assert_state(&mut v, &m);
    // Changes in the other mode, left in the log (crash), read back in the first mode.
    let f = id_of(&v, "f");
    v.write(f, 4000, b"other mode").unwrap();
    v.set_len(f, 20_000).unwrap();
    let wf = m.get_mut("f").unwrap();
    model_write(wf, 4000, b"other mode");
    wf.truncate(20_000);
    let g = v.create("g").unwrap();
    v.write(g, 5, b"g").unwrap();
    m.insert("g".into(), b"\0\0\0\0\0g".to_vec());
    v.flush().unwrap();
    let st = v.into_storage_unflushed();
    let st = cx.b.reopen(st);
    let mut v = Volume::mount(st, cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    let mut v = cx.remount_with(v, flipped);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// With a deadline hook (a timer), the commit that makes a checkpoint due leaves it to `poll`
/// and says so through the hook (due at once); past `checkpoint_max_bytes` a commit runs it on
/// its own path. Without a hook, the commit runs it (the last test).
fn due_checkpoint_runs_from_poll_with_a_hook<B: Backend>(cx: &mut Ctx<B>) {
    use std::cell::Cell;
    use std::rc::Rc;
    let small = VolumeOptions {
        checkpoint_bytes: 64 << 10,
        checkpoint_max_bytes: 512 << 10,
        ..cx.opts.clone()
    };
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    v.commit().unwrap();
    let mut v = cx.remount_with(v, small);
    let told: Rc<Cell<Option<web_time::Instant>>> = Rc::new(Cell::new(None));
    let hook = told.clone();
    v.set_deadline_hook(move |at| hook.set(Some(at)));
    m.insert("f".into(), Vec::new());
    let base = v.stats().checkpoints;
    let mut i = 0u64;
    let mut commit = |v: &mut Volume<B::S>, m: &mut Model| {
        let d = pattern(8000, 300 + i);
        v.write(f, (i % 5) * 8192, &d).unwrap();
        model_write(
            m.get_mut("f").unwrap(),
            usize::try_from((i % 5) * 8192).unwrap(),
            &d,
        );
        v.commit().unwrap();
        i += 1;
    };
    while v.stats().log_bytes < 64 << 10 {
        commit(&mut v, &mut m);
        assert_eq!(
            v.stats().checkpoints,
            base,
            "a commit below the max checkpointed"
        );
    }
    // Due now: the hook was told an instant that has passed, and nothing ran yet.
    let at = told.get().expect("the hook was told");
    assert!(at <= web_time::Instant::now());
    assert!(v
        .next_deadline()
        .is_some_and(|d| d <= web_time::Instant::now()));
    assert_eq!(v.stats().checkpoints, base);
    v.poll().unwrap();
    assert_eq!(
        v.stats().checkpoints,
        base + 1,
        "poll ran the due checkpoint"
    );
    assert!(v.stats().log_bytes < 64 << 10, "{:?}", v.stats());
    assert_state(&mut v, &m);
    // Never polled: the commit past the max runs it itself, and the log stays bounded.
    let before = v.stats().checkpoints;
    for _ in 0..120 {
        commit(&mut v, &mut m);
        assert!(
            v.stats().log_bytes < (512 << 10) + (64 << 10),
            "{:?}",
            v.stats()
        );
    }
    assert!(v.stats().checkpoints > before, "{:?}", v.stats());
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// The log file grows in steps (zeros after the frames, in the same write), so most commits
/// overwrite bytes the file has; a checkpoint leaves it one step long; close trims it to its
/// frames. Whatever is in the spare bytes, the content reads back after a crash and a remount.
fn log_file_grows_in_steps<B: Backend>(cx: &mut Ctx<B>) {
    let log_len = |v: &mut Volume<B::S>| v.storage_mut().file(PhysicalFileId::Log).len().unwrap();
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    m.insert("f".into(), Vec::new());
    let mut grew = 0;
    let mut last = log_len(&mut v);
    for i in 0..60u64 {
        let d = pattern(3000, 500 + i);
        v.write(f, (i % 9) * 4096, &d).unwrap();
        model_write(
            m.get_mut("f").unwrap(),
            usize::try_from((i % 9) * 4096).unwrap(),
            &d,
        );
        v.commit().unwrap();
        v.sync().unwrap();
        let now = log_len(&mut v);
        assert!(now >= v.stats().log_bytes, "the file holds the log");
        if now != last {
            grew += 1;
            assert_eq!(
                now % (64 << 10),
                0,
                "grows to a multiple of the step: {now}"
            );
        }
        last = now;
    }
    // ~60 × 3–4 KiB of frames in 1 MiB steps: one growth, not 60.
    assert!(grew <= 1, "the log file grew {grew} times in 60 commits");
    let st = v.into_storage_unflushed();
    let mut v = Volume::mount(cx.b.reopen(st), cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    v.checkpoint().unwrap();
    assert_eq!(log_len(&mut v), 1 << 20, "a checkpoint leaves one step");
    let d = pattern(5000, 9);
    v.write(f, 0, &d).unwrap();
    model_write(m.get_mut("f").unwrap(), 0, &d);
    v.commit().unwrap();
    v.sync().unwrap();
    assert_eq!(
        log_len(&mut v),
        1 << 20,
        "the next commit overwrites: no growth"
    );
    let st = v.into_storage_unflushed();
    let mut v = Volume::mount(cx.b.reopen(st), cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    let mut st = v.close().unwrap();
    let at_rest = st.file(PhysicalFileId::Log).len().unwrap();
    assert!(
        at_rest < 4096,
        "close trims the log to its frames: {at_rest}"
    );
    let mut v = Volume::mount(cx.b.reopen(st), cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// Large log writes are not padded: a 4 MiB transaction (spilled 1 MiB at a time in Disk mode,
/// one write at commit in Memory mode) leaves a log file as long as its frames, so no log byte
/// is written twice (zeros, then frames); the next small commit grows the file by a step again.
fn large_log_writes_are_not_padded<B: Backend>(cx: &mut Ctx<B>) {
    let log_len = |v: &mut Volume<B::S>| v.storage_mut().file(PhysicalFileId::Log).len().unwrap();
    cx.opts.write_buffer_bytes = 1 << 20;
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let before = v.counters();
    let d = pattern(4 << 20, 77);
    // In 64 KiB writes, as SQLite writes pages: Disk mode spills each time 1 MiB is staged.
    for (k, chunk) in d.chunks(64 << 10).enumerate() {
        v.write(f, (k as u64) << 16, chunk).unwrap();
    }
    m.insert("f".into(), d);
    v.commit().unwrap();
    v.sync().unwrap();
    let written = v
        .counters()
        .since(&before)
        .file(PhysicalFileId::Log)
        .written_bytes;
    let frames = v.stats().log_bytes;
    // Only the commit's last write, if small (Disk mode: what is left after the spills), may
    // pad to the next step: at most one step of zeros, not one per spill.
    assert!(
        written <= frames + (1 << 20),
        "{written} bytes written for {frames} bytes of log"
    );
    let len = log_len(&mut v);
    assert!(len < frames + (1 << 20), "log file {len} for {frames}");
    let small = pattern(3000, 78);
    v.write(f, 8192, &small).unwrap();
    model_write(m.get_mut("f").unwrap(), 8192, &small);
    v.commit().unwrap();
    v.sync().unwrap();
    let now = log_len(&mut v);
    assert!(now > v.stats().log_bytes, "a small commit pads: {now}");
    assert_eq!(now % (1 << 20), 0, "to a multiple of the step: {now}");
    let st = v.into_storage_unflushed();
    let mut v = Volume::mount(cx.b.reopen(st), cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// A mid-sized log write (more than an autocommit's, less than a large one's) pads the file by
/// at most its own bytes again, not to a whole step: 1,000 files created in one commit
/// (~60 KB of frames) wrote ~1 MiB of zeros before. Small commits after it still fit the spare
/// bytes, and the content reads back after a crash.
fn mid_sized_log_writes_pad_in_proportion<B: Backend>(cx: &mut Ctx<B>) {
    let log_len = |v: &mut Volume<B::S>| v.storage_mut().file(PhysicalFileId::Log).len().unwrap();
    let mut v = cx.mount();
    let mut m = Model::new();
    let (before, log_before) = (v.counters(), v.stats().log_bytes);
    for i in 0..1000 {
        let name = format!("file-{i:06}");
        v.create(&name).unwrap();
        m.insert(name, Vec::new());
    }
    v.commit().unwrap();
    v.sync().unwrap();
    let frames = v.stats().log_bytes - log_before;
    let written = v
        .counters()
        .since(&before)
        .file(PhysicalFileId::Log)
        .written_bytes;
    assert!(
        (16 << 10..256 << 10).contains(&frames),
        "a mid-sized commit: {frames} bytes of frames"
    );
    assert!(
        written > frames && written <= 2 * frames,
        "{written} bytes written for {frames} bytes of frames"
    );
    let len = log_len(&mut v);
    assert!(len < 1 << 20, "not padded to a whole step: log file {len}");
    // Small commits fit in what the pad left.
    let f = v.open("file-000007").unwrap();
    for i in 0..4u64 {
        let d = pattern(3000, 600 + i);
        v.write(f, i * 4096, &d).unwrap();
        model_write(
            m.get_mut("file-000007").unwrap(),
            usize::try_from(i * 4096).unwrap(),
            &d,
        );
        v.commit().unwrap();
        v.sync().unwrap();
    }
    assert_eq!(
        log_len(&mut v),
        len,
        "small commits overwrite the spare bytes"
    );
    let st = v.into_storage_unflushed();
    let mut v = Volume::mount(cx.b.reopen(st), cx.opts.clone()).unwrap();
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// Frames an open transaction spilled promise nothing until its commit: they do not start the
/// deferred levels' flush clock (only a write carrying a commit does), so a long transaction
/// is flushed within the delay after its commit, not at a time set by its first spill; and a
/// Balanced commit that a later spill writes out is due within the delay of the commit.
fn spills_do_not_start_the_flush_clock<B: Backend>(cx: &mut Ctx<B>) {
    // What this checks is the log's: no tail links (`big_commits_go_to_the_data_tail`).
    cx.opts.link_min_bytes = None;
    // Memory mode spills at 16 × the write buffer: 256 KiB here.
    cx.opts.write_buffer_bytes = 16 << 10;
    let delay = cx.opts.max_flush_delay;
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    v.flush().unwrap();
    let before = v.counters();
    let d = pattern(320 << 10, 91);
    for (k, chunk) in d.chunks(8 << 10).enumerate() {
        v.write(f, (k as u64) << 13, chunk).unwrap();
    }
    m.insert("f".into(), d);
    let since = v.counters().since(&before);
    let spilled = since.file(PhysicalFileId::Log);
    assert!(spilled.writes >= 1, "the transaction spilled: {spilled:?}");
    assert_eq!(spilled.flushes, 0, "{spilled:?}");
    assert_eq!(v.next_deadline(), None, "spilled frames start no clock");
    // The clock may not start before the commit (a coarse clock could tie without the pause).
    std::thread::sleep(std::time::Duration::from_millis(2));
    let t0 = web_time::Instant::now();
    v.commit().unwrap();
    match cx.durability() {
        Durability::Strict => assert_eq!(v.next_deadline(), None, "flushed at commit"),
        _ => {
            let at = v.next_deadline().expect("the commit's deadline");
            assert!(at >= t0 + delay, "the delay counts from the commit");
        }
    }
    v.sync().unwrap();
    assert_eq!(v.next_deadline(), None);

    // A small commit that Balanced keeps unwritten, then a spill that writes it out later:
    // the commit is still due within the delay of when it was made, not of the spill.
    let g = v.create("g").unwrap();
    v.write(g, 0, &[7; 100]).unwrap();
    v.commit().unwrap();
    let committed = web_time::Instant::now();
    m.insert("g".into(), vec![7; 100]);
    std::thread::sleep(std::time::Duration::from_millis(3));
    let before = v.counters();
    let d2 = pattern(320 << 10, 92);
    for (k, chunk) in d2.chunks(8 << 10).enumerate() {
        v.write(f, (k as u64) << 13, chunk).unwrap();
    }
    let since = v.counters().since(&before);
    assert!(
        since.file(PhysicalFileId::Log).writes >= 1,
        "spilled: {since:?}"
    );
    if let Some(at) = v.next_deadline() {
        assert!(at <= committed + delay, "the clock counts from the commit");
    }
    v.rollback();
    v.sync().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// Balanced hints the storage to flush ahead (`PhysicalFile::flush_ahead`) after each
/// write-out whose flush it defers, on the log only; a flush that is due is made, not hinted.
/// Strict and Relaxed never hint (Strict flushes at once; Relaxed writes every commit, and a
/// hint per write would flush per commit in the background).
fn deferred_flushes_are_hinted_ahead<B: Backend>(cx: &mut Ctx<B>) {
    cx.opts.write_buffer_bytes = 16 << 10;
    cx.opts.max_flush_delay = std::time::Duration::from_secs(3600);
    let balanced = cx.durability() == Durability::Balanced;
    let mut v = cx.mount();
    let f = v.create("f").unwrap();
    v.flush().unwrap();
    let before = v.counters();
    for k in 0..12u64 {
        v.write(f, k << 13, &pattern(8 << 10, 700 + k)).unwrap();
        v.commit().unwrap();
    }
    let c = v.counters().since(&before);
    let log = c.file(PhysicalFileId::Log);
    assert_eq!(c.file(PhysicalFileId::Data).flush_aheads, 0, "{c:?}");
    if balanced {
        // Each write-out holds about two commits' frames (8 KiB pages, a 16 KiB buffer).
        assert!(log.writes >= 4, "{c:?}");
        assert_eq!(log.flushes, 0, "the flushes are an hour away: {c:?}");
        assert_eq!(
            log.flush_aheads, log.writes,
            "one hint per write-out: {c:?}"
        );
    } else {
        assert_eq!(log.flush_aheads, 0, "{:?}: {c:?}", cx.durability());
    }
    assert_eq!(
        log.calls(),
        log.writes + log.flushes,
        "hints are not calls: {c:?}"
    );
    let before = v.counters();
    v.flush().unwrap();
    let c = v.counters().since(&before);
    assert_eq!(c.total().flush_aheads, 0, "a due flush is made: {c:?}");
    v.close().unwrap();
}

/// Balanced keeps commits unwritten; a write-out writes them as one commit: each file's last
/// length and the last image of each page. The log loses the superseded images; every page is
/// read where the group put it (from the writer's memory and, once later writes have replaced
/// that, from the file); a crash or a power loss after the flush keeps the last commit's state;
/// the log holds one commit per group. A cut inside the buffer stops the grouping: an image
/// logged before a cut must not come back.
fn buffered_commits_are_written_as_one<B: Backend>(cx: &mut Ctx<B>) {
    cx.opts.write_buffer_bytes = 64 << 10;
    cx.opts.disk_cache_bytes = 0;
    let balanced = cx.durability() == Durability::Balanced;
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let g = v.create("g").unwrap();
    v.commit().unwrap();
    m.insert("f".into(), Vec::new());
    m.insert("g".into(), Vec::new());
    let log_before = v.stats().log_bytes;
    let rounds = 120u64;
    for k in 0..rounds {
        // Two pages rewritten by every commit, and a file that grows by 100 bytes.
        let d = pattern(8 << 10, 500 + k);
        v.write(f, 0, &d).unwrap();
        model_write(m.get_mut("f").unwrap(), 0, &d);
        let tail = pattern(100, 900 + k);
        let at = usize::try_from(k).unwrap() * 100;
        v.write(g, at as u64, &tail).unwrap();
        model_write(m.get_mut("g").unwrap(), at, &tail);
        if k == 50 {
            let h = v.create("h").unwrap();
            v.write(h, 0, &[5; 5000]).unwrap();
            m.insert("h".into(), vec![5; 5000]);
        }
        v.commit().unwrap();
    }
    assert_state(&mut v, &m);
    v.sync().unwrap();
    let st = v.stats();
    let logged = st.log_bytes - log_before;
    if balanced {
        assert!(st.grouped_commits >= rounds / 2, "{st:?}");
        // Ungrouped, every commit logs at least its 8,292 bytes of payload.
        assert!(logged * 3 < rounds * 8292, "logged {logged} bytes: {st:?}");
    } else {
        assert_eq!(
            st.grouped_commits, 0,
            "only Balanced buffers commits: {st:?}"
        );
        assert!(logged >= rounds * 8292, "logged {logged} bytes");
    }
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let commits = st.commits - st.grouped_commits;
    let mut v = cx.crash_remount(v);
    assert_eq!(
        v.stats().recovered_commits,
        commits,
        "one commit per group in the log"
    );
    assert_state(&mut v, &m);

    // A page logged, the file cut below it, then grown again: the page reads as zeros.
    let c = v.create("c").unwrap();
    v.write(c, 0, &pattern(6 * PAGE_SIZE, 77)).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    let grouped = v.stats().grouped_commits;
    let mut want = pattern(6 * PAGE_SIZE, 77);
    v.write(c, 5 * PAGE_SIZE as u64, &[9; 100]).unwrap();
    v.commit().unwrap();
    v.set_len(c, PAGE_SIZE as u64).unwrap();
    v.commit().unwrap();
    v.set_len(c, 6 * PAGE_SIZE as u64).unwrap();
    v.commit().unwrap();
    want.truncate(PAGE_SIZE);
    want.resize(6 * PAGE_SIZE, 0);
    m.insert("c".into(), want);
    v.sync().unwrap();
    assert_eq!(
        v.stats().grouped_commits,
        grouped,
        "a cut stops the grouping"
    );
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// A page rewritten with the bytes it already has is not logged (SQLite rewrites whole pages:
/// an 8 KiB page whose one 4 KiB half changed, page 1 for its change counter). Never when the
/// transaction cut the page or spilled an image of it: replay would then show the cut or the
/// spilled image.
fn unchanged_pages_are_not_logged<B: Backend>(cx: &mut Ctx<B>) {
    // What this checks is the log's: no tail links (`big_commits_go_to_the_data_tail`).
    cx.opts.link_min_bytes = None;
    // Disk mode spills at 16 KiB of staged pages, Memory mode at 256 KiB.
    cx.opts.write_buffer_bytes = 16 << 10;
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let d = pattern(4 * PAGE_SIZE, 61);
    v.write(f, 0, &d).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    m.insert("f".into(), d.clone());

    // Pages 0 and 1 rewritten as they are, page 2 changed: one page image is logged.
    let before = v.stats().log_bytes;
    let mut d2 = d.clone();
    d2[2 * PAGE_SIZE..3 * PAGE_SIZE].fill(9);
    v.write(f, 0, &d2[..3 * PAGE_SIZE]).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    m.insert("f".into(), d2.clone());
    let logged = v.stats().log_bytes - before;
    assert!(
        logged >= PAGE_SIZE as u64 && logged < 2 * PAGE_SIZE as u64,
        "one page image and the commit frame: {logged} bytes"
    );
    assert_state(&mut v, &m);

    // Spilled, then rewritten as committed: logged (replay would take the spilled image).
    v.write(f, 0, &[1; 100]).unwrap();
    let filler = pattern(80 * PAGE_SIZE, 62);
    v.write(f, 4 * PAGE_SIZE as u64, &filler).unwrap();
    v.write(f, 0, &d2[..100]).unwrap();
    v.commit().unwrap();
    let mut d3 = d2.clone();
    d3.extend_from_slice(&filler);
    m.insert("f".into(), d3.clone());

    // Cut below page 3 and grown again, page 3 rewritten with its committed bytes: logged
    // (replay would show the cut's zeros otherwise), pages 1 and 2 read as zeros.
    v.set_len(f, PAGE_SIZE as u64).unwrap();
    v.set_len(f, d3.len() as u64).unwrap();
    v.write(f, 3 * PAGE_SIZE as u64, &d3[3 * PAGE_SIZE..])
        .unwrap();
    v.commit().unwrap();
    d3[PAGE_SIZE..3 * PAGE_SIZE].fill(0);
    m.insert("f".into(), d3);
    v.sync().unwrap();
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// A page whose committed image is logged in this epoch and that changes by a few bytes is
/// logged as a patch over that image (Strict and Relaxed, which write each commit: an
/// autocommit INSERT changes a few dozen bytes of an 8 KiB page). The patch carries every chunk
/// changed since its base, so a page is always its base plus its newest patch: after many
/// small commits, past a quarter of the page, after a cut inside the page (never a base
/// again), read from memory, from the log (crash remount), from a power-loss image and after
/// a checkpoint.
fn small_changes_are_logged_as_patches<B: Backend>(cx: &mut Ctx<B>) {
    let patches = cx.durability() != Durability::Balanced;
    let mut v = cx.mount();
    let mut m = Model::new();
    let f = v.create("f").unwrap();
    let d = pattern(4 * PAGE_SIZE, 71);
    v.write(f, 0, &d).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    m.insert("f".into(), d);
    // The first change of a page in an epoch logs its image (there is no base yet).
    v.write(f, PAGE_SIZE as u64 + 5, &[1; 10]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), PAGE_SIZE + 5, &[1; 10]);

    // Small changes to pages 1 and 2, commit after commit: two small patches each.
    for k in 0..12u8 {
        let before = v.stats().log_bytes;
        let at1 = PAGE_SIZE + 64 * usize::from(k % 4) + 7;
        let at2 = 2 * PAGE_SIZE + 1000 + 100 * usize::from(k % 3);
        let (b1, b2) = ([k; 20], [k ^ 0x5a; 30]);
        v.write(f, at1 as u64, &b1).unwrap();
        v.write(f, at2 as u64, &b2).unwrap();
        v.commit().unwrap();
        model_write(m.get_mut("f").unwrap(), at1, &b1);
        model_write(m.get_mut("f").unwrap(), at2, &b2);
        let logged = v.stats().log_bytes - before;
        if patches && k > 0 {
            // Page 2's first change logged its image; then two patch frames and a commit.
            assert!(logged < 1200, "commit {k} logged {logged} bytes");
        } else if !patches {
            assert!(logged >= 2 * PAGE_SIZE as u64, "commit {k}: {logged}");
        }
        assert_state(&mut v, &m);
    }
    // More than a quarter of page 1 changed since its base: its image is logged again.
    let before = v.stats().log_bytes;
    let wide = pattern(PAGE_SIZE / 2, 72);
    v.write(f, PAGE_SIZE as u64, &wide).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), PAGE_SIZE, &wide);
    assert!(v.stats().log_bytes - before >= PAGE_SIZE as u64);
    // ... and is the base of the next patch.
    let before = v.stats().log_bytes;
    v.write(f, PAGE_SIZE as u64 + 3000, &[7; 3]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), PAGE_SIZE + 3000, &[7; 3]);
    if patches {
        assert!(v.stats().log_bytes - before < 400);
    }
    v.sync().unwrap();
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);

    // After the remount the replayed locations are bases and patches again.
    let before = v.stats().log_bytes;
    v.write(f, 2 * PAGE_SIZE as u64 + 10, &[3; 10]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), 2 * PAGE_SIZE + 10, &[3; 10]);
    if patches {
        // Page 2's patch carries the loop's chunks too (6 chunks): 56 + 8 + 384 + 64.
        assert_eq!(v.stats().log_bytes - before, 512);
    }

    // Cut inside page 2, grown again, a small change there: the cut logged page 2's new
    // image (zeros past the cut), and the change is a patch over that image, not the older
    // one that still holds the bytes the cut removed.
    v.set_len(f, 2 * PAGE_SIZE as u64 + 100).unwrap();
    v.commit().unwrap();
    v.set_len(f, 4 * PAGE_SIZE as u64).unwrap();
    v.commit().unwrap();
    let before = v.stats().log_bytes;
    v.write(f, 2 * PAGE_SIZE as u64 + 50, &[4; 10]).unwrap();
    v.commit().unwrap();
    if patches {
        assert_eq!(v.stats().log_bytes - before, 56 + 8 + 64 + 64);
    }
    let want = m.get_mut("f").unwrap();
    want[2 * PAGE_SIZE + 100..].fill(0);
    model_write(want, 2 * PAGE_SIZE + 50, &[4; 10]);
    v.sync().unwrap();
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    // A checkpoint writes the patched pages home; the next epoch starts with images.
    v.write(f, PAGE_SIZE as u64 + 9, &[8; 9]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), PAGE_SIZE + 9, &[8; 9]);
    v.checkpoint().unwrap();
    assert_state(&mut v, &m);
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);

    // `log_patches: false` logs whole pages (the benchmark's `-whole-pages` references) and
    // still reads the patches it finds.
    v.write(f, PAGE_SIZE as u64 + 1, &[6; 2]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("f").unwrap(), PAGE_SIZE + 1, &[6; 2]);
    let mut whole = cx.opts.clone();
    whole.log_patches = false;
    let mut v = cx.remount_with(v, whole);
    assert_state(&mut v, &m);
    for k in 0..3u8 {
        v.write(f, PAGE_SIZE as u64 + 20, &[k; 2]).unwrap();
        v.commit().unwrap();
        model_write(m.get_mut("f").unwrap(), PAGE_SIZE + 20, &[k; 2]);
    }
    assert_eq!(v.stats().patched_pages, 0);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// A commit of at least `link_min_bytes` of pages goes to the data file's tail as a link: one
/// write and one flush of the data file, nothing in the log; the commits around it stay in the
/// log; a checkpoint makes the link's blocks the pages' homes without writing them again (the
/// write-twice of log then home is gone); a patch over a linked page, a crash remount, a
/// power-loss image and the other buffer mode read it back; deleting the file gives the space
/// back.
fn big_commits_go_to_the_data_tail<B: Backend>(cx: &mut Ctx<B>) {
    let data = PhysicalFileId::Data;
    let log = PhysicalFileId::Log;
    cx.opts.link_min_bytes = Some(64 << 10);
    let mut v = cx.mount();
    let mut m = Model::new();
    let s = v.create("small").unwrap();
    v.write(s, 0, &pattern(100, 1)).unwrap();
    v.commit().unwrap();
    m.insert("small".into(), pattern(100, 1));

    let f = v.create("big").unwrap();
    let big = pattern(128 * PAGE_SIZE, 2);
    v.write(f, 0, &big).unwrap();
    let (before, log_before) = (v.counters(), v.stats().log_bytes);
    v.commit().unwrap();
    m.insert("big".into(), big.clone());
    let c = v.counters().since(&before);
    assert_eq!(v.stats().linked_commits, 1);
    assert_eq!(v.stats().linked_pages, 128);
    // The link: one write, one flush of the data file; the page bytes once, plus its frames.
    assert_eq!(c.file(data).writes, 1, "{c:?}");
    assert_eq!(c.file(data).flushes, 1, "{c:?}");
    let linked = c.file(data).written_bytes;
    assert!(
        linked >= big.len() as u64 && linked <= big.len() as u64 + 2 * PAGE_SIZE as u64,
        "{linked}"
    );
    // The log only gets what came before (Balanced's buffered commit) written and flushed.
    assert!(c.file(log).flushes <= 1, "{c:?}");
    if cx.durability() != Durability::Balanced {
        assert_eq!(c.file(log).writes, 0, "{c:?}");
        assert_eq!(v.stats().log_bytes, log_before);
    }
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);

    // A small commit after it chains on in the log; a small change of a linked page is a
    // patch over the link's block (Strict, Relaxed).
    let patches = cx.durability() != Durability::Balanced;
    v.write(f, 5 * PAGE_SIZE as u64 + 40, &[9; 12]).unwrap();
    v.commit().unwrap();
    model_write(m.get_mut("big").unwrap(), 5 * PAGE_SIZE + 40, &[9; 12]);
    if patches {
        assert_eq!(v.stats().patched_pages, 1);
    }
    v.sync().unwrap();
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    // A second link after the remount, and a third right after it.
    let f = id_of(&v, "big");
    for k in 0..2u64 {
        let more = pattern(32 * PAGE_SIZE, 3 + k);
        v.write(f, (128 + 32 * k) * PAGE_SIZE as u64, &more)
            .unwrap();
        v.commit().unwrap();
        m.get_mut("big").unwrap().extend_from_slice(&more);
    }
    assert_eq!(v.stats().linked_commits, 2);
    v.sync().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);

    // The checkpoint writes the catalog and the patched page, not the linked pages.
    let before = v.counters();
    v.checkpoint().unwrap();
    let c = v.counters().since(&before);
    assert!(
        c.file(data).written_bytes < 64 << 10,
        "the checkpoint wrote {} bytes",
        c.file(data).written_bytes
    );
    assert_state(&mut v, &m);
    let mut o = cx.opts.clone();
    o.buffer_mode = other(o.buffer_mode);
    let mut v = cx.remount_with(v, o);
    assert_state(&mut v, &m);
    assert!(v.check_integrity().unwrap().is_ok());

    // Deleted: the blocks come back (the data file is cut to what the small file needs).
    v.delete("big").unwrap();
    v.commit().unwrap();
    m.remove("big");
    v.checkpoint().unwrap();
    assert_state(&mut v, &m);
    assert!(
        v.stats().data_blocks < 16,
        "{} blocks after the delete",
        v.stats().data_blocks
    );
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);

    // A big rewrite of pages that have homes goes to the log: linking it would move them and
    // leave holes behind. Its homeless pages (20, over the threshold) are less than half of
    // its 52 pages: not a link either.
    let f = v.create("rewritten").unwrap();
    v.write(f, 0, &pattern(32 * PAGE_SIZE, 8)).unwrap();
    v.commit().unwrap();
    v.checkpoint().unwrap();
    let (links, log_before) = (v.stats().linked_commits, v.stats().log_bytes);
    let rewrite = pattern(52 * PAGE_SIZE, 9);
    v.write(f, 0, &rewrite).unwrap();
    v.commit().unwrap();
    m.insert("rewritten".into(), rewrite.clone());
    assert_eq!(v.stats().linked_commits, links);
    assert!(v.stats().log_bytes >= log_before + rewrite.len() as u64);
    v.sync().unwrap();
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    v.checkpoint().unwrap();
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// A big transaction is flushed once: it spills to tail links as it goes, and those are not
/// flushed on their own (nothing waits for them); its commit is a link too, whose flush
/// covers the lot. After spilled links are rolled back, the next commit is a link whatever
/// its size: the data file must be flushed for them before any log frame, and then that
/// flush is the commit's one.
fn a_big_transaction_is_flushed_once<B: Backend>(cx: &mut Ctx<B>) {
    let (data, log) = (PhysicalFileId::Data, PhysicalFileId::Log);
    cx.opts.link_min_bytes = Some(64 << 10);
    cx.opts.write_buffer_bytes = 64 << 10;
    let disk = cx.opts.buffer_mode == BufferMode::Disk;
    let mut v = cx.mount();
    let mut m = Model::new();
    let s = v.create("small").unwrap();
    v.write(s, 0, &pattern(100, 1)).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    m.insert("small".into(), pattern(100, 1));

    let f = v.create("big").unwrap();
    let before = v.counters();
    let mut content = Vec::new();
    for k in 0..16u64 {
        let part = pattern(32 * PAGE_SIZE, 40 + k);
        v.write(f, content.len() as u64, &part).unwrap();
        content.extend_from_slice(&part);
    }
    let c = v.counters().since(&before);
    assert_eq!(c.total().flushes, 0, "{c:?}");
    let spills = if disk { 4 } else { 1 };
    assert!(v.stats().linked_commits >= spills, "{:?}", v.stats());
    v.commit().unwrap();
    m.insert("big".into(), content.clone());
    let c = v.counters().since(&before);
    assert_eq!(c.total().flushes, 1, "{c:?}");
    // The commit is a link (both modes spill here: Memory mode past 16 write buffers).
    assert_eq!(c.file(data).flushes, 1, "{c:?}");
    cx.assert_durable(&v, &m);

    // Spilled links rolled back, then a small commit in the log.
    let spilled_links = v.stats().linked_commits;
    for k in 0..8u64 {
        let at = content.len() as u64 + k * 32 * PAGE_SIZE as u64;
        v.write(f, at, &pattern(32 * PAGE_SIZE, 60 + k)).unwrap();
    }
    v.rollback();
    let before = v.counters();
    v.write(s, 0, &[7; 10]).unwrap();
    v.commit().unwrap();
    v.sync().unwrap();
    model_write(m.get_mut("small").unwrap(), 0, &[7; 10]);
    let c = v.counters().since(&before);
    // One flush: in Disk mode the small commit follows the rolled-back spills' links into
    // the data file (with their abort), in Memory mode (no spill at 1 MiB) the log.
    assert_eq!(c.total().flushes, 1, "{c:?}");
    if disk {
        assert!(v.stats().linked_commits > spilled_links + 1);
        assert_eq!(c.file(log).writes, 0, "{c:?}");
    } else {
        assert_eq!(c.file(log).flushes, 1, "{c:?}");
    }
    assert_state(&mut v, &m);
    cx.assert_durable(&v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    assert!(v.check_integrity().unwrap().is_ok());
    v.close().unwrap();
}

/// A bulk transaction writes its pages once in both buffer modes: Disk mode holds it until it
/// is big enough to link (twice `link_min_bytes`), so its first spill already links, and none
/// of its new pages goes to the log and then home. Spilling at the write buffer (a quarter of
/// `link_min_bytes` here; an eighth by default) sent its first `link_min_bytes` to the log,
/// and building 1 GiB in Disk mode wrote 1.74 × its bytes.
fn a_bulk_transaction_writes_its_pages_once<B: Backend>(cx: &mut Ctx<B>) {
    let (data, log) = (PhysicalFileId::Data, PhysicalFileId::Log);
    cx.opts.write_buffer_bytes = 32 << 10;
    cx.opts.link_min_bytes = Some(128 << 10);
    let mut v = cx.mount();
    let f = v.create("db").unwrap();
    let mut content = pattern(8 * PAGE_SIZE, 1);
    v.write(f, 0, &content).unwrap();
    v.commit().unwrap();
    v.checkpoint().unwrap();

    // 256 new pages, one write each as SQLite makes them, and with every 16th a rewrite of
    // one of the 8 pages that have homes (as SQLite rewrites its header and interior pages).
    // So when the transaction passes `link_min_bytes`, a few of its pages are not new.
    const NEW: usize = 256;
    let before = v.counters();
    for k in 0..NEW {
        let page = pattern(PAGE_SIZE, 100 + k as u64);
        v.write(f, content.len() as u64, &page).unwrap();
        content.extend_from_slice(&page);
        if k % 16 == 0 {
            let at = (k / 16 % 8) * PAGE_SIZE + 16;
            let mark = [u8::try_from(k / 16).unwrap(); 8];
            v.write(f, at as u64, &mark).unwrap();
            model_write(&mut content, at, &mark);
        }
    }
    v.commit().unwrap();
    v.sync().unwrap();
    let mut m = Model::new();
    m.insert("db".into(), content);
    let c = v.counters().since(&before);
    assert!(v.stats().linked_pages >= NEW as u64, "{:?}", v.stats());
    // The log gets at most the rewritten pages' images; the data file the new pages once.
    let new_bytes = (NEW * PAGE_SIZE) as u64;
    assert!(
        c.file(log).written_bytes < 16 * PAGE_SIZE as u64,
        "the log got {} bytes of a {new_bytes}-byte bulk transaction: {c:?}",
        c.file(log).written_bytes
    );
    assert!(
        c.file(data).written_bytes < new_bytes + new_bytes / 8,
        "{c:?}"
    );
    // One flush of the data file; the log's, if any, carries nothing of the transaction (the
    // first link after a checkpoint's cut of the log flushes the log, so that its durable bytes
    // stop where the link begins).
    assert_eq!(c.file(data).flushes, 1, "{c:?}");
    assert!(c.file(log).flushes <= 1, "{c:?}");
    cx.assert_durable(&v, &m);

    // The checkpoint makes the links' blocks the pages' homes: it writes the catalog and the
    // first page, not the new pages again.
    let before = v.counters();
    v.checkpoint().unwrap();
    let c = v.counters().since(&before);
    assert!(c.file(data).written_bytes < 64 << 10, "{c:?}");
    assert_state(&mut v, &m);
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    assert!(v.check_integrity().unwrap().is_ok());
    v.close().unwrap();
}

/// A file whose pages are in tail links, cut to one page (as SQLite's VACUUM after a DROP
/// cuts its database), gives its space back at the next checkpoint: the link blocks past the
/// cut are freed, and the compaction moves what is left down and cuts the data file.
fn a_linked_file_cut_gives_its_space_back<B: Backend>(cx: &mut Ctx<B>) {
    cx.opts.link_min_bytes = Some(64 << 10);
    let mut v = cx.mount();
    let f = v.create("db").unwrap();
    let mut content = Vec::new();
    for k in 0..10u64 {
        let part = pattern(100 * PAGE_SIZE, 20 + k);
        v.write(f, content.len() as u64, &part).unwrap();
        v.commit().unwrap();
        content.extend_from_slice(&part);
    }
    // Disk mode spills some of each (its write buffer is smaller): links too.
    assert!(v.stats().linked_commits >= 10);
    v.set_len(f, PAGE_SIZE as u64).unwrap();
    v.commit().unwrap();
    content.truncate(PAGE_SIZE);
    let mut m = Model::new();
    m.insert("db".into(), content);
    v.checkpoint().unwrap();
    assert_state(&mut v, &m);
    assert!(
        v.stats().data_blocks < 16,
        "{} blocks for one page",
        v.stats().data_blocks
    );
    let mut v = cx.crash_remount(v);
    assert_state(&mut v, &m);
    assert!(v.check_integrity().unwrap().is_ok());
    v.close().unwrap();
}

/// A mount reads the catalog's blobs, not the pages between them, and in few calls. Twelve
/// checkpoints each add 1 MiB of pages to one file in two linked commits (the second rewrites
/// three pages of the first, whose link blocks are then freed: one-block holes all over the
/// data file, as a bulk load through SQLite leaves them), and create small files.
/// - Before `load_window`'s gap bound, windows read everything up to 4 MiB between blobs
///   (at 1 GiB: 137 MB in 53 calls).
/// - Before `alloc_cluster`, each map chunk took the first one-block hole, and a 1 GiB volume's
///   catalog needed 252 calls.
fn mount_reads_the_catalog_in_few_calls<B: Backend>(cx: &mut Ctx<B>) {
    let data = PhysicalFileId::Data;
    cx.opts.link_min_bytes = Some(256 << 10);
    let mut v = cx.mount();
    let mut m = Model::new();
    let db = v.create("db").unwrap();
    let mut content = Vec::new();
    let rounds = 12u64;
    for r in 0..rounds {
        let first = content.len() as u64;
        for half in 0..2 {
            let part = pattern(128 * PAGE_SIZE, 100 + 2 * r + half);
            v.write(db, content.len() as u64, &part).unwrap();
            content.extend_from_slice(&part);
            if half == 1 {
                let mark = [u8::try_from(r).unwrap(); 8];
                for p in [10, 60, 110] {
                    let at = first + p * PAGE_SIZE as u64;
                    v.write(db, at, &mark).unwrap();
                    model_write(&mut content, usize::try_from(at).unwrap(), &mark);
                }
            }
            v.commit().unwrap();
        }
        for k in 0..4 {
            let name = format!("s{r}-{k}");
            let f = v.create(&name).unwrap();
            let bytes = pattern(PAGE_SIZE + 100, r * 10 + k);
            v.write(f, 0, &bytes).unwrap();
            m.insert(name, bytes);
        }
        v.commit().unwrap();
        v.checkpoint().unwrap();
    }
    assert!(v.stats().linked_commits >= 2 * rounds, "{:?}", v.stats());
    m.insert("db".into(), content);
    let mut v = cx.remount(v);
    let c = *v.counters().file(data);
    let data_bytes = v.stats().data_blocks * PAGE_SIZE as u64;
    assert!(data_bytes > 12 << 20, "{data_bytes}");
    assert!(
        c.read_bytes < (1 << 20),
        "mount read {c:?} of {data_bytes} bytes"
    );
    assert!(c.reads <= rounds + 4, "mount read {c:?}");
    assert_state(&mut v, &m);
    assert!(v.check_integrity().unwrap().is_ok());
    v.close().unwrap();
}

/// Pages read in the order they were logged cost one log read per window, not one per page:
/// the log is read ahead once reads follow each other (Disk mode; Memory mode reads none).
/// This is the filesystem lifecycle's read phase: 1,000 files of 1 KiB written in one commit
/// (1.1 MiB of frames: more than the writer keeps in memory and the page cache holds), then
/// read in order. Before the read-ahead each file was one `read()` of the log (in Firefox
/// 36 µs each, `results/2026-12-07-sittings/fs-firefox`); a checkpoint then reads the small
/// files the same way to inline them (the lifecycle's reopen: 500 reads).
fn logged_pages_read_in_log_order_are_read_ahead<B: Backend>(cx: &mut Ctx<B>) {
    let log = PhysicalFileId::Log;
    // No Disk-mode page cache: every read below goes to the log (with the cache, 256 of the
    // files would be served from it, in an order that depends on its eviction).
    cx.opts.disk_cache_bytes = 0;
    let mut v = cx.mount();
    let mut m = Model::new();
    let n = 1000u64;
    let name = |k: u64| format!("f{k:04}");
    for k in 0..n {
        let f = v.create(&name(k)).unwrap();
        let bytes = pattern(1024, k);
        v.write(f, 0, &bytes).unwrap();
        m.insert(name(k), bytes);
    }
    v.commit().unwrap();
    v.flush().unwrap();
    let logged = v.counters().file(log).written_bytes;
    assert!(logged > 1 << 20, "{logged} bytes logged");
    let before = v.counters();
    for k in 0..n {
        let f = id_of(&v, &name(k));
        assert_eq!(v.read_to_vec(f).unwrap(), m[&name(k)], "{}", name(k));
    }
    let c = v.counters().since(&before);
    // The first read alone, then windows of 256 KiB.
    let most = 1 + logged.div_ceil(256 << 10);
    assert!(
        c.file(log).reads <= most,
        "{} reads: {c:?}",
        c.file(log).reads
    );
    assert_eq!(c.total().writes, 0, "{c:?}");
    // Reading in another order still reads the right bytes (every tenth file, backwards).
    for k in (0..n).rev().step_by(10) {
        let f = id_of(&v, &name(k));
        assert_eq!(v.read_to_vec(f).unwrap(), m[&name(k)], "{}", name(k));
    }
    // The checkpoint reads the files to inline them, in the same few calls.
    let before = v.counters();
    v.checkpoint().unwrap();
    let c = v.counters().since(&before);
    assert!(c.file(log).reads <= most, "checkpoint: {c:?}");
    // The new epoch rewrites the log from its start: what was read ahead from the old one
    // must not be served. Read backwards, the last file first (its new frames lie where the
    // checkpoint's last window was).
    for k in 0..n {
        let f = id_of(&v, &name(k));
        let bytes = pattern(1024, n + k);
        v.write(f, 0, &bytes).unwrap();
        m.insert(name(k), bytes);
    }
    v.commit().unwrap();
    v.flush().unwrap();
    for k in (0..n).rev() {
        let f = id_of(&v, &name(k));
        assert_eq!(
            v.read_to_vec(f).unwrap(),
            m[&name(k)],
            "{} after a checkpoint",
            name(k)
        );
    }
    let mut v = cx.remount(v);
    assert_state(&mut v, &m);
    v.close().unwrap();
}

/// Physical calls per operation (the volume counts them whatever the backend).
fn physical_call_accounting<B: Backend>(cx: &mut Ctx<B>) {
    let mut v = cx.mount();
    let a = v.create("a").unwrap();
    v.write(a, 0, &[1; 100]).unwrap();
    v.flush().unwrap();
    // Make sure the file is loaded (Memory mode) so writes touch nothing physical.
    v.read_to_vec(a).unwrap();

    // Namespace changes never touch a physical file before commit.
    let before = v.counters();
    v.create("x").unwrap();
    v.rename("x", "y").unwrap();
    v.rename("a", "a1").unwrap();
    v.rename("a1", "a").unwrap();
    v.delete("y").unwrap();
    let id = v.create("z").unwrap();
    v.delete_id(id).unwrap();
    assert_eq!(
        v.counters().since(&before).total().calls(),
        0,
        "create/rename/delete made physical calls"
    );
    // A small write to a new file: nothing physical either, in both modes.
    let b = v.create("b").unwrap();
    v.write(b, 0, &[2; 50]).unwrap();
    if cx.opts.buffer_mode == BufferMode::Memory {
        v.write(a, 10, &[3; 10]).unwrap();
    }
    assert_eq!(v.counters().since(&before).total().calls(), 0);

    // One commit of that small change.
    let before = v.counters();
    v.commit().unwrap();
    let c = v.counters().since(&before);
    let log = c.file(PhysicalFileId::Log);
    let data = c.file(PhysicalFileId::Data);
    let (writes, flushes) = match cx.durability() {
        Durability::Strict => (1, 1),
        Durability::Relaxed => (1, 0),
        Durability::Balanced => (0, 0),
    };
    assert_eq!(
        (log.writes, log.flushes),
        (writes, flushes),
        "commit under {:?}: {c:?}",
        cx.durability()
    );
    assert_eq!(log.calls(), writes + flushes, "no other log call: {c:?}");
    assert_eq!(data.calls(), 0, "commit never touches the data file: {c:?}");

    // A second small commit costs the same.
    let before = v.counters();
    v.write(b, 0, &[4; 10]).unwrap();
    v.commit().unwrap();
    let c = v.counters().since(&before);
    let log = c.file(PhysicalFileId::Log);
    assert_eq!((log.writes, log.flushes), (writes, flushes), "{c:?}");
    assert_eq!(c.file(PhysicalFileId::Data).calls(), 0, "{c:?}");
    if cx.opts.buffer_mode == BufferMode::Memory {
        assert_eq!(c.total().calls(), writes + flushes, "{c:?}");
    } else {
        // Disk mode reads the page being partly overwritten (from the log), nothing else.
        assert_eq!(log.calls(), writes + flushes + log.reads, "{c:?}");
        assert!(log.reads <= 1, "{c:?}");
    }

    // flush(): whatever is not yet written or flushed, one call each.
    let before = v.counters();
    v.flush().unwrap();
    let c = v.counters().since(&before);
    let log = c.file(PhysicalFileId::Log);
    let want = match cx.durability() {
        Durability::Strict => (0, 0),
        Durability::Relaxed => (0, 1),
        Durability::Balanced => (1, 1),
    };
    assert_eq!((log.writes, log.flushes), want, "flush: {c:?}");
    assert_eq!(c.total().calls(), want.0 + want.1, "flush: {c:?}");

    // Nothing to commit: commit and flush are free.
    let before = v.counters();
    v.commit().unwrap();
    v.flush().unwrap();
    assert_eq!(v.counters().since(&before).total().calls(), 0);

    // A checkpoint: two data-file flushes, no log flush when the log is already flushed; the
    // log is cut to the new epoch's marker (one write, one truncation).
    v.write(b, 0, &[5; 10]).unwrap();
    v.flush().unwrap();
    let before = v.counters();
    v.checkpoint().unwrap();
    let c = v.counters().since(&before);
    assert_eq!(c.file(PhysicalFileId::Data).flushes, 2, "{c:?}");
    assert_eq!(c.file(PhysicalFileId::Log).flushes, 0, "{c:?}");
    assert_eq!(c.file(PhysicalFileId::Log).writes, 1, "{c:?}");
    assert!(c.file(PhysicalFileId::Log).set_len_calls <= 1, "{c:?}");

    // Mount after a clean close reads superblocks and catalog (directory, entry chunks, map
    // chunks: one windowed read each here) and the log's marker, and writes nothing.
    let v = cx.remount(v);
    let c = v.counters();
    assert_eq!(c.total().writes, 0, "mount wrote: {c:?}");
    assert!(c.file(PhysicalFileId::Data).reads <= 4, "{c:?}");
    assert!(c.file(PhysicalFileId::Log).reads <= 1, "{c:?}");
    v.close().unwrap();
}

// ---------------------------------------------------------------------------------------------
// The suite, per backend
// ---------------------------------------------------------------------------------------------

macro_rules! suite {
    ($module:ident, $backend:ty) => {
        mod $module {
            use super::*;

            #[test]
            fn create_exists_already_exists() {
                for_all_configs::<$backend>(super::create_exists_already_exists);
            }
            #[test]
            fn invalid_names() {
                for_all_configs::<$backend>(super::invalid_names);
            }
            #[test]
            fn write_offsets_gaps_and_short_reads() {
                for_all_configs::<$backend>(super::write_offsets_gaps_and_short_reads);
            }
            #[test]
            fn set_len_shrink_grow() {
                for_all_configs::<$backend>(super::set_len_shrink_grow);
            }
            #[test]
            fn rename_semantics() {
                for_all_configs::<$backend>(super::rename_semantics);
            }
            #[test]
            fn delete_then_stale_id() {
                for_all_configs::<$backend>(super::delete_then_stale_id);
            }
            #[test]
            fn list_sorted_and_stat() {
                for_all_configs::<$backend>(super::list_sorted_and_stat);
            }
            #[test]
            fn large_file() {
                for_all_configs::<$backend>(super::large_file);
            }
            #[test]
            fn small_reads_past_the_committed_length() {
                for_all_configs::<$backend>(super::small_reads_past_the_committed_length);
            }
            #[test]
            fn many_files() {
                for_all_configs::<$backend>(super::many_files);
            }
            #[test]
            fn close_remount_persistence() {
                for_all_configs::<$backend>(super::close_remount_persistence);
            }
            #[test]
            fn checkpoint_then_remount() {
                for_all_configs::<$backend>(super::checkpoint_then_remount);
            }
            #[test]
            fn mount_in_other_buffer_mode() {
                for_all_configs::<$backend>(super::mount_in_other_buffer_mode);
            }
            #[test]
            fn due_checkpoint_runs_from_poll_with_a_hook() {
                for_all_configs::<$backend>(super::due_checkpoint_runs_from_poll_with_a_hook);
            }
            #[test]
            fn log_file_grows_in_steps() {
                for_all_configs::<$backend>(super::log_file_grows_in_steps);
            }
            #[test]
            fn large_log_writes_are_not_padded() {
                for_all_configs::<$backend>(super::large_log_writes_are_not_padded);
            }
            #[test]
            fn mid_sized_log_writes_pad_in_proportion() {
                for_all_configs::<$backend>(super::mid_sized_log_writes_pad_in_proportion);
            }
            #[test]
            fn spills_do_not_start_the_flush_clock() {
                for_all_configs::<$backend>(super::spills_do_not_start_the_flush_clock);
            }
            #[test]
            fn deferred_flushes_are_hinted_ahead() {
                for_all_configs::<$backend>(super::deferred_flushes_are_hinted_ahead);
            }
            #[test]
            fn buffered_commits_are_written_as_one() {
                for_all_configs::<$backend>(super::buffered_commits_are_written_as_one);
            }
            #[test]
            fn unchanged_pages_are_not_logged() {
                for_all_configs::<$backend>(super::unchanged_pages_are_not_logged);
            }
            #[test]
            fn small_changes_are_logged_as_patches() {
                for_all_configs::<$backend>(super::small_changes_are_logged_as_patches);
            }
            #[test]
            fn big_commits_go_to_the_data_tail() {
                for_all_configs::<$backend>(super::big_commits_go_to_the_data_tail);
            }
            #[test]
            fn a_big_transaction_is_flushed_once() {
                for_all_configs::<$backend>(super::a_big_transaction_is_flushed_once);
            }
            #[test]
            fn a_bulk_transaction_writes_its_pages_once() {
                for_all_configs::<$backend>(super::a_bulk_transaction_writes_its_pages_once);
            }
            #[test]
            fn a_linked_file_cut_gives_its_space_back() {
                for_all_configs::<$backend>(super::a_linked_file_cut_gives_its_space_back);
            }
            #[test]
            fn mount_reads_the_catalog_in_few_calls() {
                for_all_configs::<$backend>(super::mount_reads_the_catalog_in_few_calls);
            }
            #[test]
            fn logged_pages_read_in_log_order_are_read_ahead() {
                for_all_configs::<$backend>(super::logged_pages_read_in_log_order_are_read_ahead);
            }
            #[test]
            fn physical_call_accounting() {
                for_all_configs::<$backend>(super::physical_call_accounting);
            }
        }
    };
}

suite!(memory, Mem);
suite!(std_file, Std);
suite!(crash_sim, Crash);

#[test]
fn std_storage_second_open_is_busy() {
    let dir = tempfile::tempdir().unwrap();
    let st = StdStorage::open(dir.path()).unwrap();
    let mut v = Volume::mount(st, opts(BufferMode::Memory, Durability::Strict)).unwrap();
    let f = v.create("f").unwrap();
    v.write(f, 0, b"held").unwrap();
    v.commit().unwrap();
    match StdStorage::open(dir.path()) {
        Err(StorageError::Busy { message }) => assert!(!message.is_empty()),
        other => panic!("second open while mounted: {other:?}"),
    }
    // Still busy with the storage unmounted but alive.
    let st = v.close().unwrap();
    assert!(matches!(
        StdStorage::open(dir.path()),
        Err(StorageError::Busy { .. })
    ));
    drop(st);
    let st = StdStorage::open(dir.path()).expect("free once the first is dropped");
    let mut v = Volume::mount(st, opts(BufferMode::Disk, Durability::Strict)).unwrap();
    let f = v.open("f").unwrap();
    assert_eq!(v.read_to_vec(f).unwrap(), b"held");
}

/// A lock held a moment longer than the mount that took it — a child process forked by any
/// thread shares the lock until it `exec`s, here stood in for by `flock(1)` holding the data
/// file for 60 ms — does not make the next open fail: it waits for it (up to 200 ms).
#[test]
fn std_storage_open_waits_out_a_lock_held_for_a_moment() {
    let dir = tempfile::tempdir().unwrap();
    drop(StdStorage::open(dir.path()).unwrap());
    let data = dir.path().join(PhysicalFileId::Data.file_name());
    let mut child = std::process::Command::new("flock")
        .arg(&data)
        .args(["sleep", "0.06"])
        .spawn()
        .expect("flock(1) from util-linux");
    // Until the child holds the lock (it takes it within milliseconds).
    let probe = std::fs::File::open(&data).unwrap();
    let held_since = std::time::Instant::now();
    loop {
        match probe.try_lock() {
            Ok(()) => probe.unlock().unwrap(),
            Err(std::fs::TryLockError::WouldBlock) => break,
            Err(e) => panic!("{e:?}"),
        }
        assert!(
            held_since.elapsed() < std::time::Duration::from_secs(5),
            "flock(1) never took the lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let st = StdStorage::open(dir.path()).expect("the open waits for a lock held 60 ms");
    assert!(child.wait().unwrap().success());
    drop(st);
}

#[test]
fn std_storage_files_are_where_documented() {
    let dir = tempfile::tempdir().unwrap();
    let st = StdStorage::open(dir.path()).unwrap();
    assert_eq!(st.dir(), dir.path());
    let v = Volume::mount(st, opts(BufferMode::Memory, Durability::Strict)).unwrap();
    v.close().unwrap();
    for id in PhysicalFileId::ALL {
        assert!(dir.path().join(id.file_name()).is_file(), "{id}");
    }
}
