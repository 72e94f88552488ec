#![cfg(not(target_arch = "wasm32"))]
//! Damaged volumes: flipped bytes and truncated physical files.
//!
//! A volume with several files, two checkpoints (so both superblock slots are valid) and a few
//! committed log transactions is damaged one way at a time, then mounted in both buffer modes.
//! Every outcome must be one of:
//! - an error from mount: `Corrupt`, or `NewerCheckpointLost` (the newest superblock is damaged
//!   while its log epoch exists), or
//! - `Ok`, with the file list (names and lengths) of a committed state, and every file reading
//!   back (`read_to_vec`, twice) either exactly as in that state or as `Err(Corrupt)`. The state
//!   must be the newest one unless the damage is in the log (a damaged frame ends the log, like
//!   a torn write: the commits from there on are gone — SQLite's WAL has the same limit).
//!
//! Never silently wrong content, never a silent rollback to an older checkpoint, never a panic.
//! Further writes and commits on such a volume must not panic either.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{diff, model_write, pattern, Model};
use opfs_vfs::format::{
    decode_directory, decode_entry_chunk, decode_frame, BlobPtr, Contents, Slot, Superblock,
    FRAME_HEADER, PAGE_SIZE, SUPER_LEN,
};
use opfs_vfs::storage::{MemoryStorage, PhysicalFileId};
use opfs_vfs::{BufferMode, Durability, Error, Volume, VolumeOptions};

const DATA: PhysicalFileId = PhysicalFileId::Data;
const LOG: PhysicalFileId = PhysicalFileId::Log;
const PAGE: usize = PAGE_SIZE;

fn opts(mode: BufferMode) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability: Durability::Strict,
        checkpoint_bytes: 1 << 30,
        ..Default::default()
    }
}

/// The damaged-volume fixture: the image, every committed state, and where things are.
struct Fixture {
    image: MemoryStorage,
    history: Vec<Model>,
    /// Both superblocks (slot, decoded).
    supers: Vec<(usize, Superblock)>,
    /// Byte ranges of the current catalog's blobs in the data file (directory, entry chunks,
    /// map chunks).
    catalog: Vec<std::ops::Range<usize>>,
    /// Byte offsets of frame headers in the log, and the end of the committed log.
    frames: Vec<usize>,
    log_end: usize,
}

fn build() -> Fixture {
    let mut v = Volume::mount(MemoryStorage::new(), opts(BufferMode::Memory)).unwrap();
    let mut m = Model::new();
    let mut history = vec![m.clone()];
    let mut commit = |v: &mut Volume<MemoryStorage>, m: &Model| {
        v.commit().unwrap();
        history.push(m.clone());
    };
    // Generation 2: four files, one sparse, one empty, one over several pages.
    for (name, len, seed) in [
        ("a", 10_000, 1),
        ("b", 20_000, 2),
        ("c", 0, 3),
        ("e", 300, 4),
    ] {
        let id = v.create(name).unwrap();
        let d = pattern(len, seed);
        v.write(id, 0, &d).unwrap();
        m.insert(name.into(), d);
    }
    let d = v.create("d").unwrap();
    v.write(d, 13_000, b"sparse tail").unwrap();
    let mut dd = vec![0; 13_000];
    dd.extend_from_slice(b"sparse tail");
    m.insert("d".into(), dd);
    commit(&mut v, &m);
    v.checkpoint().unwrap();
    // Generation 3: more changes, so the older checkpoint differs and blocks get reused.
    let a = v.open("a").unwrap();
    v.write(a, 5000, &pattern(6000, 5)).unwrap();
    model_write(m.get_mut("a").unwrap(), 5000, &pattern(6000, 5));
    v.delete("e").unwrap();
    m.remove("e");
    commit(&mut v, &m);
    v.checkpoint().unwrap();
    // Committed log transactions on top.
    let a = v.open("a").unwrap();
    v.write(a, 0, b"log txn 1").unwrap();
    model_write(m.get_mut("a").unwrap(), 0, b"log txn 1");
    let f = v.create("f").unwrap();
    v.write(f, 0, &pattern(5000, 6)).unwrap();
    m.insert("f".into(), pattern(5000, 6));
    commit(&mut v, &m);
    v.rename("b", "b2").unwrap();
    let d = m.remove("b").unwrap();
    m.insert("b2".into(), d);
    v.delete("c").unwrap();
    m.remove("c");
    commit(&mut v, &m);
    let d = v.open("d").unwrap();
    v.set_len(d, 5000).unwrap();
    m.get_mut("d").unwrap().truncate(5000);
    let b2 = v.open("b2").unwrap();
    v.write(b2, 4090, &[0xAA; 100]).unwrap();
    model_write(m.get_mut("b2").unwrap(), 4090, &[0xAA; 100]);
    commit(&mut v, &m);
    let log_end = usize::try_from(v.stats().log_bytes).unwrap();
    let image = v.into_storage_unflushed();

    // Locate the structures.
    let data = image.get(DATA).bytes();
    let mut supers = Vec::new();
    for slot in 0..2 {
        if let Slot::Valid(sb) = Superblock::decode(&data[slot * PAGE..(slot + 1) * PAGE]) {
            supers.push((slot, sb));
        }
    }
    assert_eq!(supers.len(), 2, "both superblock slots hold a checkpoint");
    let cur = supers
        .iter()
        .max_by_key(|(_, s)| s.generation)
        .unwrap()
        .1
        .clone();
    let range = |p: BlobPtr| {
        let start = usize::try_from(p.block).unwrap() * PAGE;
        start..start + p.len as usize
    };
    let mut catalog = vec![range(cur.directory)];
    let dir = decode_directory(&data[range(cur.directory)]).unwrap();
    for (k, p) in dir {
        catalog.push(range(p));
        for e in decode_entry_chunk(k, &data[range(p)]).unwrap() {
            if let Contents::Blocks(chunks) = e.contents {
                catalog.extend(chunks.into_iter().map(|(_, p)| range(p)));
            }
        }
    }
    assert!(catalog.len() >= 4, "directory, entry chunk and map chunks");
    let log = image.get(LOG).bytes();
    let mut frames = Vec::new();
    let mut pos = 0;
    let salt = cur.log_salt();
    let mut chain = salt;
    while let Ok((h, payload)) = decode_frame(&log[pos..], salt, chain) {
        frames.push(pos);
        chain = h.chain;
        pos += FRAME_HEADER + payload.len();
    }
    assert_eq!(pos, log_end, "every committed frame decodes");
    assert!(frames.len() >= 8, "{} frames", frames.len());
    // The fixture itself mounts to the last state.
    let fx = Fixture {
        image,
        history,
        supers,
        catalog,
        frames,
        log_end,
    };
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let mut v = Volume::mount(fx.image.clone(), opts(mode)).unwrap();
        let got = common::read_state(&mut v).unwrap();
        assert_eq!(got, *fx.history.last().unwrap(), "{}", diff(&got, &m));
        assert_eq!(v.stats().recovered_commits, 3);
        assert!(v.check_integrity().unwrap().is_ok());
    }
    fx
}

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    corrupt_at_mount: u64,
    newer_lost: u64,
    ok_latest: u64,
    ok_older: u64,
    read_errors: u64,
}

fn is_corrupt(e: &Error) -> bool {
    matches!(e, Error::Corrupt { .. })
}

/// Mounts `img` and checks the rule of this file; an older state is acceptable only with
/// `older_ok` (log damage). `Err` describes a violation.
fn check(
    img: &MemoryStorage,
    mode: BufferMode,
    fx: &Fixture,
    tally: &mut Tally,
    older_ok: bool,
) -> Result<(), String> {
    tally.cases += 1;
    let mut v = match Volume::mount(img.clone(), opts(mode)) {
        Err(e) if is_corrupt(&e) => {
            tally.corrupt_at_mount += 1;
            return Ok(());
        }
        Err(Error::NewerCheckpointLost { .. }) => {
            tally.newer_lost += 1;
            return Ok(());
        }
        Err(e) => return Err(format!("mount failed with a non-Corrupt error: {e:?}")),
        Ok(v) => v,
    };
    let list = v.list();
    let candidates: Vec<(usize, &Model)> = fx
        .history
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.len() == list.len()
                && list
                    .iter()
                    .all(|e| m.get(&e.name).is_some_and(|d| d.len() as u64 == e.len))
        })
        .collect();
    if candidates.is_empty() {
        let names: Vec<String> = list
            .iter()
            .map(|e| format!("{}:{}", e.name, e.len))
            .collect();
        return Err(format!(
            "mounted, but the file list [{}] is no committed state's",
            names.join(", ")
        ));
    }
    // Read every file twice (a failed read must not leave wrong contents behind).
    let mut reads: Vec<(String, Vec<u8>)> = Vec::new();
    for pass in 0..2 {
        for e in &list {
            match v.read_to_vec(e.id) {
                Ok(d) => reads.push((e.name.clone(), d)),
                Err(err) if is_corrupt(&err) => tally.read_errors += 1,
                Err(err) => {
                    return Err(format!(
                        "read of {:?} (pass {pass}) failed with a non-Corrupt error: {err:?}",
                        e.name
                    ))
                }
            }
        }
    }
    let matched = candidates
        .iter()
        .find(|(_, m)| reads.iter().all(|(name, d)| m[name] == *d));
    match matched {
        Some((i, _)) if *i == fx.history.len() - 1 => tally.ok_latest += 1,
        Some((i, _)) if older_ok => {
            let _ = i;
            tally.ok_older += 1
        }
        Some((i, _)) => {
            return Err(format!(
                "SILENT ROLLBACK to committed state #{i} of {} (not the newest)",
                fx.history.len() - 1
            ))
        }
        None => {
            let (_, m) = candidates.last().unwrap();
            let wrong: Vec<String> = reads
                .iter()
                .filter(|(name, d)| m[name] != *d)
                .map(|(name, d)| {
                    let first = d.iter().zip(&m[name]).position(|(a, b)| a != b);
                    format!("{name:?} differs at byte {first:?}")
                })
                .collect();
            return Err(format!(
                "SILENTLY WRONG CONTENT: {} (candidate states {:?})",
                wrong.join(", "),
                candidates.iter().map(|(i, _)| i).collect::<Vec<_>>()
            ));
        }
    }
    // Using the volume further must not panic (errors are fine).
    for e in &list {
        let _ = v.write(e.id, 1, b"more");
        let _ = v.set_len(e.id, e.len / 2);
    }
    let _ = v.commit();
    let _ = v.checkpoint();
    Ok(())
}

/// Runs `check` in both modes, turning panics into failures that name the damage.
fn check_both(
    img: &MemoryStorage,
    fx: &Fixture,
    tally: &mut Tally,
    what: &str,
    failures: &mut Vec<String>,
) {
    check_both_with(img, fx, tally, what, failures, false)
}

fn check_both_with(
    img: &MemoryStorage,
    fx: &Fixture,
    tally: &mut Tally,
    what: &str,
    failures: &mut Vec<String>,
    older_ok: bool,
) {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let r = catch_unwind(AssertUnwindSafe(|| check(img, mode, fx, tally, older_ok)));
        let r = match r {
            Ok(r) => r,
            Err(p) => Err(format!(
                "PANIC: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
                    .unwrap_or_default()
            )),
        };
        if let Err(e) = r {
            failures.push(format!("{what}, mounted in {mode:?}: {e}"));
        }
    }
}

fn flipped(fx: &Fixture, file: PhysicalFileId, offset: usize, mask: u8) -> MemoryStorage {
    let mut img = fx.image.clone();
    img.get_mut(file).bytes_mut()[offset] ^= mask;
    img
}

fn truncated(fx: &Fixture, file: PhysicalFileId, len: usize) -> MemoryStorage {
    let mut img = fx.image.clone();
    img.get_mut(file).bytes_mut().truncate(len);
    img
}

fn report(name: &str, tally: &Tally, failures: &[String]) {
    println!("{name}: {tally:?}");
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(12).collect();
        panic!(
            "{} of {} cases violate the rule; first ones:\n{}",
            failures.len(),
            tally.cases,
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Every byte of both superblocks' 88 bytes, three different flips each.
#[test]
fn flipped_superblock_bytes() {
    let fx = build();
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    for (slot, sb) in &fx.supers {
        for i in 0..SUPER_LEN {
            for mask in [0x01, 0x80, 0xFF] {
                let off = slot * PAGE + i;
                let what = format!(
                    "superblock slot {slot} (gen {}) byte {i} ^ {mask:#x}",
                    sb.generation
                );
                check_both(
                    &flipped(&fx, DATA, off, mask),
                    &fx,
                    &mut tally,
                    &what,
                    &mut failures,
                );
            }
        }
    }
    report("superblocks", &tally, &failures);
    assert!(
        tally.newer_lost > 0,
        "damage to the newest superblock is reported as a lost checkpoint"
    );
    assert_eq!(tally.ok_older, 0);
}

/// Every byte of the current catalog's blobs.
#[test]
fn flipped_catalog_bytes() {
    let fx = build();
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    for off in fx.catalog.iter().flat_map(|r| r.clone()) {
        for mask in [0x01, 0xFF] {
            let what = format!("catalog byte {off} ^ {mask:#x}");
            check_both(
                &flipped(&fx, DATA, off, mask),
                &fx,
                &mut tally,
                &what,
                &mut failures,
            );
        }
    }
    report("catalog", &tally, &failures);
    assert_eq!(
        tally.corrupt_at_mount, tally.cases,
        "a damaged catalog blob fails its hash"
    );
}

/// Every byte of every frame header of the committed log, and a sample of payload bytes
/// (first, last, and every 61st).
#[test]
fn flipped_log_bytes() {
    let fx = build();
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    let mut offsets = Vec::new();
    for (n, &start) in fx.frames.iter().enumerate() {
        let end = fx.frames.get(n + 1).copied().unwrap_or(fx.log_end);
        offsets.extend(start..start + FRAME_HEADER);
        let payload = start + FRAME_HEADER..end;
        if !payload.is_empty() {
            offsets.push(payload.start);
            offsets.push(payload.end - 1);
            offsets.extend(payload.step_by(61));
        }
    }
    offsets.sort_unstable();
    offsets.dedup();
    for off in offsets {
        let what = format!("log byte {off} ^ 0x10");
        check_both_with(
            &flipped(&fx, LOG, off, 0x10),
            &fx,
            &mut tally,
            &what,
            &mut failures,
            true,
        );
    }
    report("log", &tally, &failures);
    assert!(tally.ok_older > 0, "log damage falls back to older commits");
}

/// A sample of the home blocks' bytes (data file past the superblocks): reads must fail, never
/// return wrong data.
#[test]
fn flipped_home_block_bytes() {
    let fx = build();
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    let len = fx.image.get(DATA).bytes().len();
    for off in (2 * PAGE..len).step_by(211) {
        let what = format!("data byte {off} (block {}) ^ 0x04", off / PAGE);
        check_both(
            &flipped(&fx, DATA, off, 0x04),
            &fx,
            &mut tally,
            &what,
            &mut failures,
        );
    }
    report("home blocks", &tally, &failures);
    assert!(
        tally.read_errors > 0,
        "damaged home blocks are detected on read"
    );
}

/// Each physical file cut to various lengths.
#[test]
fn truncated_physical_files() {
    let fx = build();
    let (mut tally, mut failures) = (Tally::default(), Vec::new());
    for file in PhysicalFileId::ALL {
        let len = fx.image.get(file).bytes().len();
        let mut lens = vec![0, 1, 4096, 8192, len / 2, len.saturating_sub(1)];
        match file {
            PhysicalFileId::Data => {
                lens.extend([SUPER_LEN - 1, PAGE + SUPER_LEN - 1]);
                lens.extend(fx.catalog.iter().map(|r| r.end - 1));
                lens.extend((3..len / PAGE).map(|b| b * PAGE));
            }
            PhysicalFileId::Log => {
                lens.extend(fx.frames.iter().copied());
                lens.extend(fx.frames.iter().map(|f| f + FRAME_HEADER / 2));
                lens.push(fx.log_end - 1);
            }
        }
        lens.sort_unstable();
        lens.dedup();
        for l in lens.into_iter().filter(|&l| l < len) {
            let what = format!("{file} truncated to {l} of {len} bytes");
            check_both_with(
                &truncated(&fx, file, l),
                &fx,
                &mut tally,
                &what,
                &mut failures,
                file == LOG,
            );
        }
    }
    report("truncations", &tally, &failures);
}

/// The data file lost (empty) while the log still holds commits: refuse, never start a new,
/// empty volume over the log.
#[test]
fn data_file_wiped_with_log_present_is_corrupt() {
    let fx = build();
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let img = truncated(&fx, DATA, 0);
        match Volume::mount(img, opts(mode)) {
            Err(Error::Corrupt { file, .. }) => assert_eq!(file, DATA),
            Err(e) => panic!("expected Corrupt, got {e:?}"),
            Ok(v) => panic!("mounted a wiped data file as a new volume: {:?}", v.list()),
        }
        // Zeroed instead of truncated: the same.
        let mut img = fx.image.clone();
        img.get_mut(DATA).bytes_mut().fill(0);
        assert!(matches!(
            Volume::mount(img, opts(mode)),
            Err(Error::Corrupt { .. })
        ));
    }
    // Both files empty: a new volume, fine.
    let mut img = truncated(&fx, DATA, 0);
    img.get_mut(LOG).bytes_mut().clear();
    let v = Volume::mount(img, opts(BufferMode::Memory)).unwrap();
    assert!(v.list().is_empty());
}

/// A volume with files `x` (3 pages) and `y` (1 page) checkpointed to home blocks, with one
/// byte of `x`'s page 1 flipped.
fn damaged_home_block() -> MemoryStorage {
    let mut v = Volume::mount(MemoryStorage::new(), opts(BufferMode::Memory)).unwrap();
    let x = v.create("x").unwrap();
    v.write(x, 0, &pattern(3 * PAGE, 1)).unwrap();
    let y = v.create("y").unwrap();
    v.write(y, 0, &pattern(PAGE, 2)).unwrap();
    let mut img = v.close().unwrap();
    let page1 = pattern(3 * PAGE, 1)[PAGE..PAGE + 64].to_vec();
    let data = img.get_mut(DATA).bytes_mut();
    let block = (2..data.len() / PAGE)
        .find(|b| data[b * PAGE..b * PAGE + 64] == page1[..])
        .expect("x's page 1 has a home block");
    data[block * PAGE + 100] ^= 0x01;
    img
}

/// Memory mode loads every file on first access; when a home block fails its checksum the
/// first read says `Corrupt`, but the files must not be left marked as loaded with zeroed
/// contents: later reads must fail again or return the right bytes, never zeros.
#[test]
fn memory_mode_failed_load_leaves_no_wrong_contents() {
    let mut v = Volume::mount(damaged_home_block(), opts(BufferMode::Memory)).unwrap();
    let x = v.open("x").unwrap();
    let y = v.open("y").unwrap();
    assert!(matches!(v.read_to_vec(x), Err(Error::Corrupt { .. })));
    match v.read_to_vec(x) {
        Err(e) => assert!(is_corrupt(&e), "{e:?}"),
        Ok(d) => panic!(
            "second read of a damaged file returned {} bytes of wrong content (zeros: {})",
            d.len(),
            d.iter().all(|&b| b == 0)
        ),
    }
    match v.read_to_vec(y) {
        Ok(d) => assert_eq!(d, pattern(PAGE, 2), "intact file y read back wrong"),
        Err(e) => assert!(is_corrupt(&e), "{e:?}"),
    }
}

/// Disk mode: a write that must read a damaged page (partial-page write) fails with `Corrupt`;
/// the following commit must not panic (today: `unreachable!("dirty page .. not staged")`).
#[test]
fn disk_mode_commit_after_failed_partial_write_does_not_panic() {
    let mut v = Volume::mount(damaged_home_block(), opts(BufferMode::Disk)).unwrap();
    let x = v.open("x").unwrap();
    let r = v.write(x, PAGE as u64 + 10, b"partial page");
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{r:?}");
    let r = catch_unwind(AssertUnwindSafe(|| v.commit()));
    let r = r.unwrap_or_else(|_| panic!("commit panicked after a failed write"));
    // Either the failed write left no trace (commit fine) or the volume refuses to continue.
    if r.is_ok() {
        assert_eq!(
            v.len(x).unwrap(),
            3 * PAGE as u64,
            "failed write changed the length"
        );
    }
}

/// Disk mode: `set_len` into the middle of a damaged page fails with `Corrupt` (it must read
/// the page to zero its tail); the following commit must not panic.
#[test]
fn disk_mode_commit_after_failed_set_len_does_not_panic() {
    let mut v = Volume::mount(damaged_home_block(), opts(BufferMode::Disk)).unwrap();
    let x = v.open("x").unwrap();
    let r = v.set_len(x, PAGE as u64 + 10);
    assert!(matches!(r, Err(Error::Corrupt { .. })), "{r:?}");
    let r = catch_unwind(AssertUnwindSafe(|| v.commit()));
    assert!(r.is_ok(), "commit panicked after a failed set_len");
}

/// Finding 7: a volume of another format version is refused as such, and never overwritten.
#[test]
fn other_format_versions_are_unsupported_and_untouched() {
    let fx = build();
    for version in [1u32, 5, 77] {
        let mut img = fx.image.clone();
        let data = img.get_mut(DATA).bytes_mut();
        for slot in 0..2 {
            let s = &mut data[slot * PAGE..slot * PAGE + SUPER_LEN];
            s[8..12].copy_from_slice(&version.to_le_bytes());
            let h = xxhash_rust::xxh3::xxh3_64(&s[..SUPER_LEN - 8]);
            s[SUPER_LEN - 8..].copy_from_slice(&h.to_le_bytes());
        }
        let before = img.clone();
        match Volume::mount(img, opts(BufferMode::Memory)) {
            Err(Error::UnsupportedVersion { found, supported }) => {
                assert_eq!(
                    (found, supported),
                    (version, opfs_vfs::format::FORMAT_VERSION)
                )
            }
            other => panic!("version {version}: {other:?}"),
        }
        // Mount takes the storage by value and wrote nothing: the image is what it was.
        assert_eq!(
            before.get(DATA).bytes().len(),
            fx.image.get(DATA).bytes().len()
        );
    }
}

/// Rewrites both superblocks of a closed volume's image to say format `version`.
fn set_version(img: &mut MemoryStorage, version: u32) {
    let data = img.get_mut(DATA).bytes_mut();
    for slot in 0..2 {
        let s = &mut data[slot * PAGE..slot * PAGE + SUPER_LEN];
        s[8..12].copy_from_slice(&version.to_le_bytes());
        let h = xxhash_rust::xxh3::xxh3_64(&s[..SUPER_LEN - 8]);
        s[SUPER_LEN - 8..].copy_from_slice(&h.to_le_bytes());
        assert!(matches!(Superblock::decode(s), Slot::Valid(sb) if sb.version == version));
    }
}

/// A closed volume with file "f" of three pages (`pattern(3 * PAGE, 5)`), its superblocks
/// rewritten to say format `version`.
fn closed_volume_of_version(version: u32, o: &VolumeOptions) -> MemoryStorage {
    let mut v = Volume::mount(MemoryStorage::new(), o.clone()).unwrap();
    let f = v.create("f").unwrap();
    v.write(f, 0, &pattern(3 * PAGE, 5)).unwrap();
    v.commit().unwrap();
    let mut img = v.close().unwrap();
    set_version(&mut img, version);
    img
}

/// A version-3 volume (before tail links) mounts and keeps working; a big commit goes to its
/// log, not to the data file's tail, while its superblock says version 3 (a version-3 build
/// would end its replay where the chain leaves the log: silent loss), and to the tail once a
/// checkpoint has written a version-4 superblock.
#[test]
fn version_3_volumes_get_tail_links_only_after_a_checkpoint() {
    let o = VolumeOptions {
        link_min_bytes: Some(2 * PAGE),
        ..opts(BufferMode::Memory)
    };
    let img = closed_volume_of_version(3, &o);
    let mut v = Volume::mount(img, o.clone()).unwrap();
    let f = v.open("f").unwrap();
    v.write(f, 0, &pattern(3 * PAGE, 6)).unwrap();
    v.commit().unwrap();
    let mut want = pattern(3 * PAGE, 6);
    assert_eq!(
        v.stats().linked_commits,
        0,
        "a tail link in a version-3 volume"
    );
    v.checkpoint().unwrap();
    // New pages (a link carries pages that have no home yet).
    v.write(f, 3 * PAGE as u64, &pattern(3 * PAGE, 7)).unwrap();
    v.commit().unwrap();
    want.extend_from_slice(&pattern(3 * PAGE, 7));
    assert_eq!(
        v.stats().linked_commits,
        1,
        "no tail link after the checkpoint"
    );
    let img = v.into_storage_unflushed();
    let mut v = Volume::mount(img, opts(BufferMode::Disk)).unwrap();
    let f = v.open("f").unwrap();
    assert_eq!(v.read_to_vec(f).unwrap(), want);
}

/// A version-2 volume (before Patch frames) mounts and keeps working; its log gets no patch
/// while its superblock says version 2 (a version-2 build would stop its replay at the first
/// one: silent loss), and does once a checkpoint has written a version-3 superblock.
#[test]
fn version_2_volumes_mount_and_get_patches_only_after_a_checkpoint() {
    let img = closed_volume_of_version(2, &opts(BufferMode::Memory));
    let mut want = pattern(3 * PAGE, 5);
    let mut v = Volume::mount(img, opts(BufferMode::Memory)).unwrap();
    let f = v.open("f").unwrap();
    for k in 0..5u8 {
        v.write(f, 100 + u64::from(k), &[k; 3]).unwrap();
        v.commit().unwrap();
        model_write(&mut want, 100 + usize::from(k), &[k; 3]);
    }
    assert_eq!(v.stats().patched_pages, 0, "patches in a version-2 log");
    v.checkpoint().unwrap();
    for k in 0..5u8 {
        v.write(f, 200 + u64::from(k), &[k; 3]).unwrap();
        v.commit().unwrap();
        model_write(&mut want, 200 + usize::from(k), &[k; 3]);
    }
    assert_eq!(
        v.stats().patched_pages,
        4,
        "the first change logs an image, then patches"
    );
    let img = v.into_storage_unflushed();
    let mut v = Volume::mount(img, opts(BufferMode::Disk)).unwrap();
    let f = v.open("f").unwrap();
    assert_eq!(v.read_to_vec(f).unwrap(), want);
}

/// `check_integrity` reads everything: a flipped byte in a home block that no read has
/// touched yet is reported, with where it is.
#[test]
fn check_integrity_finds_damaged_home_blocks() {
    let fx = build();
    let mut v = Volume::mount(fx.image.clone(), opts(BufferMode::Disk)).unwrap();
    let report = v.check_integrity().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert!(report.home_blocks > 0 && report.blobs >= 4 && report.log_commits >= 3);
    let mut img = damaged_home_block();
    let mut v = Volume::mount(img.clone(), opts(BufferMode::Disk)).unwrap();
    let report = v.check_integrity().unwrap();
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert_eq!(report.problems[0].file, DATA);
    // Undamaged: clean.
    let fixed = {
        let mut v = Volume::mount(MemoryStorage::new(), opts(BufferMode::Memory)).unwrap();
        let x = v.create("x").unwrap();
        v.write(x, 0, &pattern(3 * PAGE, 1)).unwrap();
        v.close().unwrap()
    };
    img = fixed;
    let mut v = Volume::mount(img, opts(BufferMode::Memory)).unwrap();
    assert!(v.check_integrity().unwrap().is_ok());
}
