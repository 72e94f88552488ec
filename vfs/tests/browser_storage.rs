#![cfg(target_arch = "wasm32")]
// Test data is made with small, deliberate narrowing casts (byte patterns, random indices).
#![allow(clippy::cast_possible_truncation)]
//! Browser tests of the OPFS backend and of the volume on it, in a dedicated worker:
//! the storage contract, the filesystem suite in both buffer modes with remounts on new
//! handles, the busy error, and faults injected by replacing
//! `FileSystemSyncAccessHandle.prototype.{write,flush,read}` from JavaScript.
//!
//! Run: `WASM_BINDGEN_TEST_TIMEOUT=300 wasm-pack test --headless --chrome --firefox
//! --mode no-install vfs`.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;

use opfs_vfs::storage::{
    Counters, HandleMode, OpfsStorage, PhysicalFile, PhysicalFileId, Storage, StorageError,
};
use opfs_vfs::{BufferMode, Durability, Error, Volume, VolumeOptions};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// A directory name no other test (or earlier run) uses. Every test starts here, so this also
/// undoes any fault an earlier, panicking test left installed (wasm aborts on panic: no Drop).
fn unique_dir(tag: &str) -> String {
    restore_all_faults();
    let r = (js_sys::Math::random() * 1e12) as u64;
    format!("test-storage-{tag}-{r:x}")
}

async fn open(dir: &str) -> OpfsStorage {
    OpfsStorage::open(dir)
        .await
        .unwrap_or_else(|e| panic!("OpfsStorage::open({dir:?}): {e}"))
}

async fn cleanup(dir: &str) {
    OpfsStorage::remove_dir(dir)
        .await
        .unwrap_or_else(|e| panic!("remove_dir({dir:?}): {e}"));
}

fn opts(mode: BufferMode) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability: Durability::Strict,
        // Commits of two pages and more go to the data file's tail: links in real OPFS.
        link_min_bytes: Some(8 << 10),
        ..Default::default()
    }
}

#[wasm_bindgen(inline_js = r#"
export function install_fault(method, mode, after) {
    const proto = FileSystemSyncAccessHandle.prototype;
    // Remember the original globally too: a panicking test aborts without running Drop, and
    // the next test's restore_all_faults() must be able to undo what it left behind.
    const saved = (globalThis.__savedSyncHandleMethods ??= {});
    if (!(method in saved)) saved[method] = proto[method];
    const original = saved[method];
    let left = after;
    let bogusDone = false;
    proto[method] = function (...args) {
        if (left > 0) {
            left -= 1;
            return original.apply(this, args);
        }
        // A quota needs no new space for a write within the file's length (the engine's repair
        // of a failed write relies on that): quota and short-write faults hit growing writes.
        if ((mode === "quota" || mode === "short") && method === "write") {
            const at = (args[1] && args[1].at) || 0;
            if (at + args[0].byteLength <= this.getSize()) return original.apply(this, args);
        }
        switch (mode) {
            case "quota":
                throw new DOMException("injected: quota exhausted", "QuotaExceededError");
            case "invalid-state":
                throw new DOMException("injected: handle failed", "InvalidStateError");
            case "short": {
                const buf = args[0];
                return original.call(this, buf.subarray(0, buf.length >> 1), args[1]);
            }
            case "bogus":
                // A browser's lie, once: the write happened, the count is absurd.
                if (bogusDone) return original.apply(this, args);
                bogusDone = true;
                original.apply(this, args);
                return 2 ** 60;
            default:
                throw new Error("unknown fault mode " + mode);
        }
    };
    return original;
}

export function restore_method(method, original) {
    FileSystemSyncAccessHandle.prototype[method] = original;
    delete (globalThis.__savedSyncHandleMethods ?? {})[method];
}

export function restore_all_faults() {
    const saved = globalThis.__savedSyncHandleMethods ?? {};
    for (const [method, original] of Object.entries(saved)) {
        FileSystemSyncAccessHandle.prototype[method] = original;
    }
    globalThis.__savedSyncHandleMethods = {};
}

// A second, fresh dedicated worker (nested in this one), driven by messages: "read" returns the
// raw bytes of the volume's files, "hold" opens a sync access handle on volume.data and keeps
// it, "release" closes it.
export function spawn_helper_worker() {
    const src = `
        let held = null;
        onmessage = async (e) => {
            const { cmd, dir } = e.data;
            try {
                let d = await navigator.storage.getDirectory();
                for (const p of dir.split("/")) d = await d.getDirectoryHandle(p);
                if (cmd === "read") {
                    const files = [];
                    for (const name of ["volume.data", "volume.log"]) {
                        const f = await (await d.getFileHandle(name)).getFile();
                        files.push(new Uint8Array(await f.arrayBuffer()));
                    }
                    postMessage({ ok: true, files });
                } else if (cmd === "hold") {
                    held = await (await d.getFileHandle("volume.data")).createSyncAccessHandle();
                    postMessage({ ok: true });
                } else if (cmd === "release") {
                    held.close();
                    held = null;
                    postMessage({ ok: true });
                }
            } catch (err) {
                postMessage({ ok: false, error: err.name + ": " + err.message });
            }
        };`;
    const url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
    return new Worker(url);
}

export function ask_helper(worker, cmd, dir) {
    return new Promise((resolve, reject) => {
        worker.onmessage = (e) => {
            if (e.data.ok) resolve(e.data.files ?? null);
            else reject(new Error(e.data.error));
        };
        worker.onerror = (e) => reject(new Error("helper worker failed: " + e.message));
        worker.postMessage({ cmd, dir });
    });
}
"#)]
extern "C" {
    fn install_fault(method: &str, mode: &str, after: u32) -> JsValue;
    fn restore_method(method: &str, original: &JsValue);
    fn restore_all_faults();
    fn spawn_helper_worker() -> web_sys::Worker;
    #[wasm_bindgen(catch)]
    async fn ask_helper(worker: &web_sys::Worker, cmd: &str, dir: &str)
        -> Result<JsValue, JsValue>;
}

/// Replaces `FileSystemSyncAccessHandle.prototype[method]` until dropped: the first `after`
/// calls go through, every later one fails as `mode` says ("quota", "invalid-state", "short",
/// "bogus").
struct Fault {
    method: &'static str,
    original: JsValue,
}

impl Fault {
    fn new(method: &'static str, mode: &str, after: u32) -> Self {
        let original = install_fault(method, mode, after);
        Self { method, original }
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        restore_method(self.method, &self.original);
    }
}

// ---------------------------------------------------------------------------------------------
// The storage contract (see `opfs_vfs::storage`)
// ---------------------------------------------------------------------------------------------

fn read_vec(f: &mut dyn PhysicalFile, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0xEEu8; len];
    let n = f.read_at(offset, &mut buf).expect("read_at");
    buf.truncate(n);
    buf
}

fn contract(f: &mut dyn PhysicalFile, seed: u8) {
    assert_eq!(f.len().unwrap(), 0, "a new file is empty");
    assert_eq!(read_vec(f, 0, 16), b"", "read of an empty file");

    let block: Vec<u8> = (0..10_000u32).map(|i| (i as u8) ^ seed).collect();
    f.write_at(0, &block).unwrap();
    assert_eq!(f.len().unwrap(), 10_000);
    assert_eq!(read_vec(f, 0, 10_000), block);
    assert_eq!(read_vec(f, 1234, 100), &block[1234..1334]);

    // Short read at end of file, and a read past the end.
    assert_eq!(read_vec(f, 9_990, 100), &block[9_990..]);
    assert_eq!(read_vec(f, 20_000, 100), b"");

    // Writing past the end extends with zeros.
    f.write_at(12_000, b"tail").unwrap();
    assert_eq!(f.len().unwrap(), 12_004);
    let gap = read_vec(f, 10_000, 2_004);
    assert!(gap[..2_000].iter().all(|&b| b == 0), "gap reads as zeros");
    assert_eq!(&gap[2_000..], b"tail");

    // Overwrite in the middle.
    f.write_at(100, b"middle").unwrap();
    assert_eq!(
        read_vec(f, 98, 10),
        [&block[98..100], b"middle", &block[106..108]].concat()
    );

    // set_len: shrink, then grow with zeros.
    f.set_len(50).unwrap();
    assert_eq!(f.len().unwrap(), 50);
    f.set_len(4_096).unwrap();
    assert_eq!(f.len().unwrap(), 4_096);
    let v = read_vec(f, 0, 8_192);
    assert_eq!(v.len(), 4_096);
    assert_eq!(&v[..50], &block[..50]);
    assert!(v[50..].iter().all(|&b| b == 0), "grown part reads as zeros");

    f.flush().unwrap();

    // Offsets beyond 2^53 never reach JavaScript.
    let big = 1u64 << 53;
    assert!(matches!(
        f.write_at(big, b"x"),
        Err(StorageError::OutOfRange { .. })
    ));
    assert!(matches!(
        f.write_at(big - 1, b"xy"),
        Err(StorageError::OutOfRange { .. })
    ));
    assert!(matches!(
        f.read_at(big, &mut [0u8; 4]),
        Err(StorageError::OutOfRange { .. })
    ));
    assert!(matches!(
        f.set_len(big + 1),
        Err(StorageError::OutOfRange { .. })
    ));
    assert!(matches!(
        f.write_at(u64::MAX, b"x"),
        Err(StorageError::OutOfRange { .. })
    ));
    assert_eq!(f.len().unwrap(), 4_096, "rejected calls changed nothing");

    // Final contents, checked again after reopening.
    f.write_at(4_096, &block[..1_000]).unwrap();
    f.flush().unwrap();
}

fn expected_after_contract(seed: u8) -> Vec<u8> {
    let block: Vec<u8> = (0..10_000u32).map(|i| (i as u8) ^ seed).collect();
    let mut v = block[..50].to_vec();
    v.resize(4_096, 0);
    v.extend_from_slice(&block[..1_000]);
    v
}

#[wasm_bindgen_test]
async fn storage_contract_and_reopen() {
    let dir = unique_dir("contract");
    {
        let mut st = open(&dir).await;
        assert_eq!(st.dir(), dir);
        for (i, id) in PhysicalFileId::ALL.into_iter().enumerate() {
            contract(st.file(id), i as u8 * 77);
        }
    } // handles closed here
    {
        let mut st = open(&dir).await;
        for (i, id) in PhysicalFileId::ALL.into_iter().enumerate() {
            let want = expected_after_contract(i as u8 * 77);
            let f = st.file(id);
            assert_eq!(
                f.len().unwrap(),
                want.len() as u64,
                "{id} length after reopen"
            );
            assert_eq!(read_vec(f, 0, want.len() + 10), want, "{id} after reopen");
        }
    }
    cleanup(&dir).await;
    // Removed: a new open starts empty.
    let mut st = open(&dir).await;
    assert_eq!(st.file(PhysicalFileId::Data).len().unwrap(), 0);
    drop(st);
    cleanup(&dir).await;
    // Removing what does not exist is fine.
    cleanup(&dir).await;
}

#[wasm_bindgen_test]
async fn nested_directory_and_bad_names() {
    let dir = format!("{}/inner/volume", unique_dir("nested"));
    let mut st = open(&dir).await;
    st.file(PhysicalFileId::Log).write_at(0, b"x").unwrap();
    drop(st);
    let top = dir.split('/').next().unwrap().to_owned();
    cleanup(&top).await;
    for bad in ["", "a//b", "../x", "/abs"] {
        match OpfsStorage::open(bad).await {
            Err(StorageError::Platform { name, .. }) => assert_eq!(name, "TypeError", "{bad:?}"),
            other => panic!("open({bad:?}) gave {other:?}"),
        }
    }
}

/// Whether this browser is Chromium (its user agent names Chrome; Firefox's does not).
fn is_chromium() -> bool {
    let nav = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap();
    let ua = js_sys::Reflect::get(&nav, &"userAgent".into())
        .unwrap()
        .as_string()
        .unwrap();
    ua.contains("Chrome/")
}

/// Flush ahead (`storage/opfs.rs`): a storage with concurrent handles (Chromium) starts a
/// helper worker, and only then; hints go out between writes and change nothing a reader sees.
/// Dropped, the storage's helper closes its own handles before the next open or removal goes
/// on: an exclusive open right after the drop succeeds, and so does removing the directory
/// right after a drop with a hint in flight.
#[wasm_bindgen_test]
async fn flush_ahead_helper_where_handles_are_concurrent() {
    let dir = unique_dir("ahead");
    let mut a = OpfsStorage::open_with(&dir, HandleMode::Concurrent)
        .await
        .unwrap();
    assert_eq!(
        a.flushes_ahead(),
        a.is_concurrent(),
        "a helper exactly there"
    );
    assert_eq!(a.flushes_ahead(), is_chromium());
    let log = PhysicalFileId::Log;
    for k in 0..20u8 {
        a.file(log)
            .write_at(u64::from(k) << 12, &[k; 4096])
            .unwrap();
        a.file(log).flush_ahead();
    }
    a.file(log).flush().unwrap();
    assert_eq!(read_vec(a.file(log), 19 << 12, 4096), [19; 4096]);
    drop(a);
    let mut b = OpfsStorage::open(&dir)
        .await
        .unwrap_or_else(|e| panic!("exclusive open right after the drop: {e}"));
    assert!(!b.flushes_ahead(), "exclusive handles: no helper");
    b.file(log).flush_ahead(); // a no-op
    assert_eq!(read_vec(b.file(log), 5 << 12, 4096), [5; 4096]);
    drop(b);
    let mut d = OpfsStorage::open_flushing_ahead(&dir, HandleMode::Concurrent, false)
        .await
        .unwrap();
    assert!(!d.flushes_ahead(), "asked for none");
    d.file(log).flush_ahead(); // a no-op
    drop(d);
    let mut c = OpfsStorage::open_with(&dir, HandleMode::Concurrent)
        .await
        .unwrap();
    c.file(log).write_at(0, &[1; 1 << 16]).unwrap();
    c.file(log).flush_ahead();
    drop(c);
    OpfsStorage::remove_dir(&dir)
        .await
        .unwrap_or_else(|e| panic!("remove right after the drop: {e}"));
}

/// `HandleMode::Concurrent`: in Chromium two storages on one directory are open at once, see
/// each other's writes and sizes, keep their handles over `release` (which stops every call)
/// and `reopen` (which opens nothing), and an exclusive open is refused while either is open.
/// In Firefox the option is ignored: the handles are exclusive, exactly as `open`.
#[wasm_bindgen_test]
async fn concurrent_handles_where_the_browser_offers_them() {
    let dir = unique_dir("concurrent");
    let mut a = OpfsStorage::open_with(&dir, HandleMode::Concurrent)
        .await
        .unwrap();
    assert_eq!(
        a.is_concurrent(),
        is_chromium(),
        "concurrent handles exactly in Chromium"
    );
    let second = OpfsStorage::open_with(&dir, HandleMode::Concurrent).await;
    if !a.is_concurrent() {
        // Firefox: exclusive, so the second open is busy; release and reopen close and open.
        assert!(
            matches!(second, Err(StorageError::Busy { .. })),
            "{second:?}"
        );
        a.release();
        assert!(a.is_released());
        let mut b = OpfsStorage::open_with(&dir, HandleMode::Concurrent)
            .await
            .unwrap();
        b.file(PhysicalFileId::Log).write_at(0, b"from b").unwrap();
        drop(b);
        let handles = a.reopen().await.unwrap();
        a.install(handles);
        assert_eq!(read_vec(a.file(PhysicalFileId::Log), 0, 6), b"from b");
        drop(a);
        cleanup(&dir).await;
        return;
    }
    let mut b = second.unwrap();
    assert!(b.is_concurrent());
    // One file underneath: writes and sizes are visible at once, both ways.
    a.file(PhysicalFileId::Data)
        .write_at(0, b"written by a")
        .unwrap();
    assert_eq!(
        read_vec(b.file(PhysicalFileId::Data), 0, 12),
        b"written by a"
    );
    b.file(PhysicalFileId::Log)
        .write_at(100_000, &[7; 10])
        .unwrap();
    assert_eq!(a.file(PhysicalFileId::Log).len().unwrap(), 100_010);
    // An exclusive open is refused while concurrent handles are open.
    match OpfsStorage::open(&dir).await {
        Err(StorageError::Busy { .. }) => {}
        other => panic!("exclusive open beside concurrent handles: {other:?}"),
    }
    // Released: every call is refused, the handles stay open (still no exclusive open).
    a.release();
    assert!(a.is_released());
    for id in PhysicalFileId::ALL {
        match a.file(id).len() {
            Err(StorageError::Busy { message }) => {
                assert!(message.contains("released"), "{message}")
            }
            other => panic!("{id} len while released: {other:?}"),
        }
        assert!(matches!(
            a.file(id).write_at(0, b"x"),
            Err(StorageError::Busy { .. })
        ));
    }
    drop(b);
    assert!(matches!(
        OpfsStorage::open(&dir).await,
        Err(StorageError::Busy { .. })
    ));
    // Taken back: the same handles, in service again.
    let handles = a.reopen().await.unwrap();
    a.install(handles);
    assert!(!a.is_released());
    assert_eq!(
        read_vec(a.file(PhysicalFileId::Data), 0, 12),
        b"written by a"
    );
    assert_eq!(read_vec(a.file(PhysicalFileId::Log), 100_000, 10), [7; 10]);
    drop(a);
    // All closed: an exclusive open works again.
    drop(open(&dir).await);
    cleanup(&dir).await;
}

#[wasm_bindgen_test]
async fn second_open_is_busy_until_the_first_is_dropped() {
    let dir = unique_dir("busy");
    let first = open(&dir).await;
    match OpfsStorage::open(&dir).await {
        Err(StorageError::Busy { message }) => {
            assert!(
                message.contains("open in another tab or worker"),
                "busy message: {message}"
            );
            assert!(
                message.contains("NoModificationAllowedError"),
                "message keeps the DOMException name: {message}"
            );
        }
        other => panic!("second open: expected Busy, got {other:?}"),
    }
    // Removing the directory while it is open is refused too, and removes nothing.
    match OpfsStorage::remove_dir(&dir).await {
        Err(StorageError::Busy { .. }) | Err(StorageError::Platform { .. }) => {}
        Ok(()) => panic!("remove_dir succeeded on an open volume"),
        Err(e) => panic!("remove_dir on an open volume: {e}"),
    }
    // The volume layer reports it as Error::Busy.
    let v = Volume::mount(first, opts(BufferMode::Memory)).unwrap();
    let err = match OpfsStorage::open(&dir).await {
        Err(e) => Error::from(BusyProbe(e)),
        Ok(_) => panic!("second open succeeded while mounted"),
    };
    assert!(matches!(err, Error::Busy { .. }), "{err:?}");
    drop(v.close().unwrap());
    // Released: a new open works.
    let again = open(&dir).await;
    drop(again);
    cleanup(&dir).await;
}

/// How a caller turns an open failure into the volume's error type (what the install API does).
struct BusyProbe(StorageError);

impl From<BusyProbe> for Error {
    fn from(p: BusyProbe) -> Self {
        match p.0 {
            StorageError::Busy { message } => Error::Busy { message },
            e => Error::Io {
                file: PhysicalFileId::Data,
                source: e,
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The volume filesystem suite on OPFS
// ---------------------------------------------------------------------------------------------

/// Deterministic pseudo-random numbers (xorshift64*), fixed seed per test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type Model = BTreeMap<String, Vec<u8>>;

fn verify<S: Storage>(v: &mut Volume<S>, model: &Model, when: &str) {
    let listed: Vec<(String, u64)> = {
        let mut l: Vec<_> = v.list().into_iter().map(|m| (m.name, m.len)).collect();
        l.sort();
        l
    };
    let want: Vec<(String, u64)> = model
        .iter()
        .map(|(k, d)| (k.clone(), d.len() as u64))
        .collect();
    assert_eq!(listed, want, "{when}: list()");
    for (name, data) in model {
        let id = v.open(name).unwrap();
        assert_eq!(
            v.len(id).unwrap(),
            data.len() as u64,
            "{when}: len of {name}"
        );
        let got = v.read_to_vec(id).unwrap();
        assert!(got == *data, "{when}: contents of {name} differ");
        let s = v.stat(name).unwrap();
        assert_eq!(s.len, data.len() as u64);
    }
}

/// One random filesystem operation applied to the volume and the model.
fn random_op<S: Storage>(v: &mut Volume<S>, model: &mut Model, rng: &mut Rng) {
    let names: Vec<String> = model.keys().cloned().collect();
    let pick = |rng: &mut Rng| names[rng.below(names.len() as u64) as usize].clone();
    match rng.below(10) {
        0 | 1 if model.len() < 12 => {
            let name = format!("file-{}", rng.below(1_000));
            match model.entry(name.clone()) {
                Entry::Occupied(_) => {
                    assert!(matches!(v.create(&name), Err(Error::AlreadyExists { .. })))
                }
                Entry::Vacant(slot) => {
                    v.create(&name).unwrap();
                    slot.insert(Vec::new());
                }
            }
        }
        2..=5 if !names.is_empty() => {
            let name = pick(rng);
            let data = model.get_mut(&name).unwrap();
            let offset = rng.below(data.len() as u64 + 20_000) as usize;
            let len = match rng.below(4) {
                0 => rng.below(64) as usize + 1,
                1 => 4_096,
                2 => rng.below(20_000) as usize + 1,
                _ => rng.below(100_000) as usize + 1,
            };
            let byte = rng.next() as u8;
            let bytes: Vec<u8> = (0..len).map(|i| byte.wrapping_add(i as u8)).collect();
            let id = v.open(&name).unwrap();
            v.write(id, offset as u64, &bytes).unwrap();
            if data.len() < offset + len {
                data.resize(offset + len, 0);
            }
            data[offset..offset + len].copy_from_slice(&bytes);
        }
        6 if !names.is_empty() => {
            let name = pick(rng);
            let data = model.get_mut(&name).unwrap();
            let len = rng.below(data.len() as u64 * 2 + 10_000) as usize;
            let id = v.open(&name).unwrap();
            v.set_len(id, len as u64).unwrap();
            data.resize(len, 0);
        }
        7 if !names.is_empty() => {
            let from = pick(rng);
            let to = format!("renamed-{}", rng.below(1_000));
            if model.contains_key(&to) && to != from {
                assert!(matches!(
                    v.rename(&from, &to),
                    Err(Error::AlreadyExists { .. })
                ));
            } else {
                v.rename(&from, &to).unwrap();
                let data = model.remove(&from).unwrap();
                model.insert(to, data);
            }
        }
        8 if !names.is_empty() => {
            let name = pick(rng);
            v.delete(&name).unwrap();
            model.remove(&name);
            assert!(matches!(v.open(&name), Err(Error::NotFound { .. })));
        }
        _ => {
            // Read a random range and compare.
            if let Some(name) = names.first() {
                let data = &model[name];
                let id = v.open(name).unwrap();
                let offset = rng.below(data.len() as u64 + 10) as usize;
                let mut buf = vec![0u8; rng.below(10_000) as usize + 1];
                let n = v.read(id, offset as u64, &mut buf).unwrap();
                let want = &data[offset.min(data.len())..(offset + buf.len()).min(data.len())];
                assert_eq!(&buf[..n], want, "read of {name} at {offset}");
            }
        }
    }
}

async fn filesystem_suite(mode: BufferMode, seed: u64) {
    let dir = unique_dir(&format!("fs-{mode:?}"));
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let mut v = Volume::mount(open(&dir).await, opts(mode)).unwrap();

    // A fixed scenario first: create/write/read/rename/delete/set_len/list.
    let a = v.create("a.bin").unwrap();
    v.write(a, 0, &vec![1u8; 10_000]).unwrap();
    v.write(a, 5_000, b"hello").unwrap();
    let b = v.create("b.txt").unwrap();
    v.write(b, 100, b"xyz").unwrap();
    v.commit().unwrap();
    v.set_len(a, 5_002).unwrap();
    v.set_len(a, 9_000).unwrap();
    v.rename("b.txt", "c.txt").unwrap();
    v.create("gone").unwrap();
    v.delete("gone").unwrap();
    v.commit().unwrap();
    let mut a_data = vec![1u8; 10_000];
    a_data[5_000..5_005].copy_from_slice(b"hello");
    a_data.truncate(5_002);
    a_data.resize(9_000, 0);
    model.insert("a.bin".into(), a_data);
    let mut c = vec![0u8; 100];
    c.extend_from_slice(b"xyz");
    model.insert("c.txt".into(), c);
    verify(&mut v, &model, "after the fixed scenario");
    assert!(v.stats().linked_commits > 0, "no tail link in OPFS");

    // Then random operations, committed in batches.
    for round in 0..6 {
        for _ in 0..25 {
            random_op(&mut v, &mut model, &mut rng);
        }
        v.commit().unwrap();
        verify(&mut v, &model, &format!("round {round}"));
    }

    // Clean close: handles are dropped, then new handles, new mount.
    drop(v.close().unwrap());
    let mut v = Volume::mount(open(&dir).await, opts(mode)).unwrap();
    verify(&mut v, &model, "after close and remount");

    // Crash: commit (Strict) and drop without close; the log is replayed at the next mount.
    for _ in 0..25 {
        random_op(&mut v, &mut model, &mut rng);
    }
    v.commit().unwrap();
    let committed = model.clone();
    for _ in 0..10 {
        random_op(&mut v, &mut model, &mut rng); // never committed
    }
    drop(v.into_storage_unflushed());
    let mut v = Volume::mount(open(&dir).await, opts(mode)).unwrap();
    assert!(v.stats().recovered_commits > 0, "the log was replayed");
    verify(&mut v, &committed, "after a crash and remount");

    // Checkpoint, then close and open in the other buffer mode.
    v.checkpoint().unwrap();
    drop(v.close().unwrap());
    let other = match mode {
        BufferMode::Disk => BufferMode::Memory,
        BufferMode::Memory => BufferMode::Disk,
    };
    let mut v = Volume::mount(open(&dir).await, opts(other)).unwrap();
    verify(&mut v, &committed, "reopened in the other buffer mode");
    drop(v.close().unwrap());
    cleanup(&dir).await;
}

#[wasm_bindgen_test]
async fn filesystem_suite_memory_mode() {
    filesystem_suite(BufferMode::Memory, 0x5EED_0001).await;
}

#[wasm_bindgen_test]
async fn filesystem_suite_disk_mode() {
    filesystem_suite(BufferMode::Disk, 0x5EED_0002).await;
}

#[wasm_bindgen_test]
async fn disk_mode_volume_opens_in_memory_mode_without_checkpoint() {
    let dir = unique_dir("disk-to-mem");
    let mut v = Volume::mount(
        open(&dir).await,
        VolumeOptions {
            checkpoint_on_close: false,
            ..opts(BufferMode::Disk)
        },
    )
    .unwrap();
    let id = v.create("db").unwrap();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    v.write(id, 0, &data).unwrap();
    v.commit().unwrap();
    drop(v.close().unwrap());
    let mut v = Volume::mount(open(&dir).await, opts(BufferMode::Memory)).unwrap();
    let id = v.open("db").unwrap();
    assert!(v.read_to_vec(id).unwrap() == data);
    drop(v.close().unwrap());
    cleanup(&dir).await;
}

// ---------------------------------------------------------------------------------------------
// Faults injected from JavaScript
// ---------------------------------------------------------------------------------------------

/// Where the injected fault is hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    /// A large write to `f0` and a commit.
    Commit,
    /// A read of `f3` (Disk mode reads pages from the physical files).
    Read,
    /// `close()`: its checkpoint writes the data file.
    Close,
}

/// Commits a few transactions under Strict (all acknowledged), installs the fault, runs
/// `action` and hands its error to `check`; then drops the volume like a crash, removes the
/// fault, remounts on new handles and checks that every acknowledged commit is there (the
/// failed one may or may not be, but never half of it).
async fn fault_case(
    tag: &str,
    mode: BufferMode,
    (method, fault, after): (&'static str, &str, u32),
    action: Action,
    check: impl Fn(&Error),
) {
    let dir = unique_dir(&format!("fault-{tag}"));
    // No page cache: the read fault must reach the storage. No tail links: these cases pin
    // down what the log's failures report (a failure at every call of links, spills included,
    // is `tests/faults.rs`'s `Link` scenario).
    let fopts = VolumeOptions {
        disk_cache_bytes: 0,
        link_min_bytes: None,
        ..opts(mode)
    };
    let mut v = Volume::mount(open(&dir).await, fopts).unwrap();
    let mut acknowledged = Model::new();
    for i in 0..5u8 {
        let name = format!("f{i}");
        let id = v.create(&name).unwrap();
        let data = vec![i + 1; 5_000 + i as usize * 3_000];
        v.write(id, 0, &data).unwrap();
        v.commit().unwrap();
        acknowledged.insert(name, data);
    }
    // Larger than the log file's spare bytes (it grows in steps of at least 1 MiB), so the
    // commit's write grows the file and a quota fault can hit it.
    let attempted = vec![0xABu8; 1_500_000];
    if action == Action::Close {
        let id = v.open("f0").unwrap();
        v.write(id, 0, &attempted).unwrap();
        v.commit().unwrap();
        acknowledged.insert("f0".into(), attempted.clone());
    }

    let (err, volume) = {
        let _fault = Fault::new(method, fault, after);
        match action {
            Action::Commit => {
                let id = v.open("f0").unwrap();
                let err = v
                    .write(id, 0, &attempted)
                    .and_then(|()| v.commit())
                    .expect_err("the injected fault must surface");
                if matches!(err, Error::CommitUnknown { .. }) {
                    // Written, flush failed: shown as committed, writes refused until remount.
                    assert!(matches!(v.commit(), Err(Error::Poisoned { .. })));
                    assert!(v.poisoned().is_some());
                    assert!(v.read_to_vec(id).unwrap() == attempted);
                } else {
                    // Rolled back: the volume shows the acknowledged version and keeps working.
                    assert!(v.poisoned().is_none(), "{tag}: poisoned by {err}");
                    assert!(v.read_to_vec(id).unwrap() == acknowledged["f0"]);
                }
                (Some(err), Some(v))
            }
            Action::Read => {
                let id = v.open("f3").unwrap();
                let err = v
                    .read(id, 0, &mut [0u8; 4096])
                    .expect_err("the injected fault must surface");
                (Some(err), Some(v))
            }
            Action::Close => {
                // The checkpoint at close fails: close never needs free space, so it skips the
                // checkpoint and succeeds; the log keeps every commit.
                v.close().expect("close skips a failed checkpoint");
                (None, None)
            }
        }
    };
    let Some(err) = err else {
        return finish_close_case(tag, mode, &dir, &acknowledged).await;
    };
    check(&err);
    web_sys::console::log_1(&format!("{tag} ({mode:?}): the fault surfaced as: {err}").into());

    // Crash (drop without close; close() already dropped the handles on failure), the fault
    // is gone, remount on new handles.
    drop(volume.map(Volume::into_storage_unflushed));
    let mut v = Volume::mount(open(&dir).await, opts(mode)).unwrap();
    for (name, data) in &acknowledged {
        let id = v
            .open(name)
            .unwrap_or_else(|e| panic!("{tag}: acknowledged file {name} lost: {e}"));
        let got = v.read_to_vec(id).unwrap();
        if name == "f0" && action == Action::Commit && matches!(err, Error::CommitUnknown { .. }) {
            assert!(
                got == *data || got == attempted,
                "{tag}: f0 is neither the acknowledged nor the attempted version (len {})",
                got.len()
            );
        } else {
            assert!(got == *data, "{tag}: acknowledged contents of {name} lost");
        }
    }
    // The volume works again.
    let id = v.create("after").unwrap();
    v.write(id, 0, b"works").unwrap();
    v.commit().unwrap();
    drop(v.close().unwrap());
    cleanup(&dir).await;
}

/// After a close whose checkpoint failed: every acknowledged commit is there after a remount,
/// and the volume works.
async fn finish_close_case(tag: &str, mode: BufferMode, dir: &str, acknowledged: &Model) {
    let mut v = Volume::mount(open(dir).await, opts(mode)).unwrap();
    for (name, data) in acknowledged {
        let id = v
            .open(name)
            .unwrap_or_else(|e| panic!("{tag}: acknowledged file {name} lost: {e}"));
        assert!(v.read_to_vec(id).unwrap() == *data, "{tag}: {name} lost");
    }
    let id = v.create("after").unwrap();
    v.write(id, 0, b"works").unwrap();
    v.commit().unwrap();
    drop(v.close().unwrap());
    cleanup(dir).await;
}

fn is_out_of_space(e: &Error) {
    assert!(
        matches!(e, Error::OutOfSpace { .. }),
        "expected OutOfSpace, got {e:?}"
    );
}

#[wasm_bindgen_test]
async fn write_quota_fault_is_out_of_space() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        fault_case("quota", mode, ("write", "quota", 0), Action::Commit, |e| {
            is_out_of_space(e);
            match e {
                Error::OutOfSpace {
                    source: StorageError::QuotaExceeded { message },
                    ..
                } => assert!(message.contains("QuotaExceededError"), "{message}"),
                other => panic!("{other:?}"),
            }
        })
        .await;
    }
}

#[wasm_bindgen_test]
async fn short_write_fault_is_out_of_space() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        fault_case(
            "short",
            mode,
            ("write", "short", 0),
            Action::Commit,
            |e| match e {
                Error::OutOfSpace {
                    source:
                        StorageError::ShortWrite {
                            requested, written, ..
                        },
                    ..
                } => assert_eq!(*written, *requested / 2),
                other => panic!("expected a short write, got {other:?}"),
            },
        )
        .await;
    }
}

#[wasm_bindgen_test]
async fn bogus_write_count_is_out_of_space() {
    fault_case(
        "bogus",
        BufferMode::Memory,
        ("write", "bogus", 0),
        Action::Commit,
        |e| {
            assert!(
                matches!(
                    e,
                    Error::OutOfSpace {
                        source: StorageError::ShortWrite { .. },
                        ..
                    }
                ),
                "{e:?}"
            )
        },
    )
    .await;
}

#[wasm_bindgen_test]
async fn flush_fault_is_io_error() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        fault_case(
            "flush",
            mode,
            ("flush", "invalid-state", 0),
            Action::Commit,
            |e| match e {
                // The commit was written; its flush failed: the outcome is unknown.
                Error::CommitUnknown { cause } => {
                    assert!(cause.contains("flush"), "{cause}");
                    assert!(cause.contains("InvalidStateError"), "{cause}");
                    assert!(cause.contains("injected"), "{cause}");
                }
                other => panic!("expected CommitUnknown from a failed flush, got {other:?}"),
            },
        )
        .await;
    }
}

#[wasm_bindgen_test]
async fn read_fault_is_io_error() {
    fault_case(
        "read",
        BufferMode::Disk,
        ("read", "invalid-state", 0),
        Action::Read,
        |e| match e {
            Error::Io {
                source: StorageError::Platform { op, name, .. },
                ..
            } => {
                assert_eq!(*op, "read");
                assert_eq!(name, "InvalidStateError");
            }
            other => panic!("expected an I/O error from read, got {other:?}"),
        },
    )
    .await;
}

#[wasm_bindgen_test]
async fn checkpoint_write_fault_at_close_loses_nothing() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        fault_case("close", mode, ("write", "quota", 0), Action::Close, |e| {
            panic!("close must not fail: {e}")
        })
        .await;
    }
}

// ---------------------------------------------------------------------------------------------
// Another worker: persistence seen from a fresh worker, and a lock held by another worker
// ---------------------------------------------------------------------------------------------

async fn helper(worker: &web_sys::Worker, cmd: &str, dir: &str) -> JsValue {
    ask_helper(worker, cmd, dir)
        .await
        .unwrap_or_else(|e| panic!("helper worker {cmd}: {e:?}"))
}

#[wasm_bindgen_test]
async fn a_fresh_worker_sees_the_committed_volume() {
    let dir = unique_dir("fresh-worker");
    let mut v = Volume::mount(open(&dir).await, opts(BufferMode::Memory)).unwrap();
    let mut model = Model::new();
    let mut rng = Rng(0x5EED_0003);
    for _ in 0..60 {
        random_op(&mut v, &mut model, &mut rng);
    }
    v.commit().unwrap();
    // Crash-style: the helper must replay the log, not read a checkpoint.
    drop(v.into_storage_unflushed());

    // A new worker reads the raw OPFS files; mount those bytes in memory and compare.
    let worker = spawn_helper_worker();
    let files = js_sys::Array::from(&helper(&worker, "read", &dir).await);
    let mut st = opfs_vfs::storage::MemoryStorage::new();
    for id in PhysicalFileId::ALL {
        let bytes = js_sys::Uint8Array::new(&files.get(id.index() as u32)).to_vec();
        *st.get_mut(id).bytes_mut() = bytes;
    }
    let mut copy = Volume::mount(st, opts(BufferMode::Memory)).unwrap();
    verify(&mut copy, &model, "bytes read by a fresh worker");
    worker.terminate();
    cleanup(&dir).await;
}

#[wasm_bindgen_test]
async fn a_volume_held_by_another_worker_is_busy() {
    let dir = unique_dir("other-worker");
    drop(open(&dir).await); // create the files
    let worker = spawn_helper_worker();
    helper(&worker, "hold", &dir).await;
    match OpfsStorage::open(&dir).await {
        Err(StorageError::Busy { message }) => {
            assert!(message.contains("another tab or worker"), "{message}")
        }
        other => panic!("expected Busy while another worker holds the file, got {other:?}"),
    }
    helper(&worker, "release", &dir).await;
    drop(open(&dir).await);
    worker.terminate();
    cleanup(&dir).await;
}

#[wasm_bindgen_test]
async fn install_waits_for_a_terminated_worker_to_release_the_volume() {
    let dir = unique_dir("terminated-worker");
    drop(open(&dir).await);
    let worker = spawn_helper_worker();
    helper(&worker, "hold", &dir).await;
    // What a reload does to the old page's worker.
    worker.terminate();
    let immediately = OpfsStorage::open(&dir).await.map(drop);
    web_sys::console::log_1(&format!("open right after terminate(): {immediately:?}").into());
    let started = js_sys::Date::now();
    let mut installed = opfs_vfs::web::install(opfs_vfs::web::InstallOptions {
        vfs_name: dir.clone(),
        directory: dir.clone(),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("install after terminate(): {e}"));
    web_sys::console::log_1(
        &format!(
            "install succeeded {} ms after terminate()",
            js_sys::Date::now() - started
        )
        .into(),
    );
    installed.wipe().await.unwrap();
}

/// Installed as users install it (`Sharing::Shared`), a Balanced volume has its flush-ahead
/// helper in Chromium, ready before the install returns, and a commit that fills the write
/// buffer is written and hinted, its flush left for later; a Strict volume has no helper.
#[wasm_bindgen_test]
async fn an_installed_balanced_volume_flushes_ahead_in_chromium() {
    for durability in [Durability::Balanced, Durability::Strict] {
        let dir = unique_dir("installed-ahead");
        let mut installed = opfs_vfs::web::install(opfs_vfs::web::InstallOptions {
            vfs_name: dir.clone(),
            directory: dir.clone(),
            durability,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("install: {e}"));
        {
            let mut v = installed.volume().unwrap().borrow_mut();
            let balanced = durability == Durability::Balanced;
            assert_eq!(v.storage().flushes_ahead(), balanced && is_chromium());
            let f = v.create("f").unwrap();
            v.write(f, 0, &vec![7; 2 << 20]).unwrap();
            let before = v.counters();
            v.commit().unwrap();
            let c = v.counters().since(&before);
            let log = c.file(PhysicalFileId::Log);
            let want = if balanced { (1, 0, 1) } else { (1, 1, 0) };
            assert_eq!((log.writes, log.flushes, log.flush_aheads), want, "{c:?}");
        }
        installed.wipe().await.unwrap();
    }
}

/// Counters are exact on OPFS too: a Strict commit is one log write and one flush.
#[wasm_bindgen_test]
async fn strict_commit_costs_one_write_and_one_flush() {
    let dir = unique_dir("counters");
    let mut v = Volume::mount(open(&dir).await, opts(BufferMode::Memory)).unwrap();
    let id = v.create("x").unwrap();
    v.commit().unwrap();
    let before: Counters = v.counters();
    v.write(id, 0, &[7u8; 100]).unwrap();
    v.commit().unwrap();
    let d = v.counters().since(&before).total();
    assert_eq!((d.writes, d.flushes), (1, 1), "{d:?}");
    drop(v.close().unwrap());
    cleanup(&dir).await;
}
