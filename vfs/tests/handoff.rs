#![cfg(not(target_arch = "wasm32"))]
// Small random sizes and offsets, narrowed on purpose.
#![allow(clippy::cast_possible_truncation)]
//! Several holders of one volume taking turns (tabs or workers of one origin): release, resume
//! and catch up; a holder that dies holding the volume; checkpoints by others in between.
//!
//! Holders are volumes mounted on clones of one `CrashStorage` (clones share the files, like
//! two tabs share OPFS); only the holder of the turn touches the storage, as the Web Lock
//! guarantees in the browser.

mod common;

use common::{diff, model_write, pattern, read_state, Model};
use opfs_vfs::testing::{CrashMode, CrashStorage, SplitMix64};
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};

fn opts(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        checkpoint_bytes: 48 << 10,
        write_buffer_bytes: 8 << 10,
        max_flush_delay: std::time::Duration::from_secs(3600),
        // No links: Disk mode then spills at the write buffer (with links it holds up to
        // twice `link_min_bytes` first), so small transactions spill too.
        link_min_bytes: None,
        ..VolumeOptions::default()
    }
}

#[test]
fn catch_up_reads_only_the_new_log() {
    let st = CrashStorage::new();
    let o = opts(BufferMode::Memory, Durability::Strict);
    let mut a = Volume::mount(st.clone(), o.clone()).unwrap();
    let f = a.create("f").unwrap();
    a.write(f, 0, &pattern(50_000, 1)).unwrap();
    a.commit().unwrap();
    assert_eq!(
        a.read_to_vec(f).unwrap(),
        pattern(50_000, 1),
        "resident in A"
    );
    a.release().unwrap();
    assert!(matches!(
        a.read_to_vec(f),
        Err(opfs_vfs::Error::Busy { .. })
    ));
    assert!(a.create("x").is_err(), "a released volume refuses writes");

    let mut b = Volume::mount(st.clone(), o.clone()).unwrap();
    let g = b.open("f").unwrap();
    b.write(g, 100, b"written by B").unwrap();
    let h = b.create("h").unwrap();
    b.write(h, 0, b"new file").unwrap();
    b.commit().unwrap();
    // A second small change of that page: a patch over B's image of it, which A's resident
    // copy must take too.
    b.write(g, 200, b"and again").unwrap();
    b.commit().unwrap();
    assert_eq!(b.stats().patched_pages, 1);
    b.release().unwrap();

    let before = a.counters();
    let up = a.resume().unwrap();
    let c = a.counters().since(&before);
    assert_eq!(up.commits, 2);
    assert!(!up.reloaded);
    assert!(up.log_bytes > 0 && up.log_bytes < 20_000, "{up:?}");
    // Two lengths, the superblocks, the log tail: no catalog, no contents.
    assert_eq!(c.total().reads, 2, "{c:?}");
    let mut want = pattern(50_000, 1);
    model_write(&mut want, 100, b"written by B");
    model_write(&mut want, 200, b"and again");
    assert_eq!(a.read_to_vec(f).unwrap(), want, "resident contents patched");
    let h = a.open("h").unwrap();
    assert_eq!(a.read_to_vec(h).unwrap(), b"new file");
    assert!(a.check_integrity().unwrap().is_ok());
    a.check_invariants().unwrap();

    // Nothing written while A was released: the log's spare zeros after the chain's end (the
    // file grows in steps) say so, and A catches up without reloading.
    a.release().unwrap();
    b.resume().unwrap();
    b.release().unwrap();
    let up = a.resume().unwrap();
    assert!(!up.reloaded && up.commits == 0, "{up:?}");
    assert_eq!(a.read_to_vec(f).unwrap(), want);

    // B checkpoints while holding: A reloads the catalog.
    a.release().unwrap();
    b.resume().unwrap();
    b.checkpoint().unwrap();
    b.release().unwrap();
    let up = a.resume().unwrap();
    assert!(up.reloaded, "{up:?}");
    assert_eq!(a.read_to_vec(f).unwrap(), want);
    a.check_invariants().unwrap();
}

/// A holder dies in the middle of a transaction that spilled to the log: the next holder
/// catches up, its uncommitted frames never take effect, and later commits of the same file
/// do not revive them.
#[test]
fn a_holder_that_dies_mid_transaction_loses_only_its_open_transaction() {
    let st = CrashStorage::new();
    let o = opts(BufferMode::Disk, Durability::Strict);
    let mut a = Volume::mount(st.clone(), o.clone()).unwrap();
    let f = a.create("f").unwrap();
    a.write(f, 0, b"committed").unwrap();
    a.commit().unwrap();
    a.release().unwrap();

    let mut b = Volume::mount(st.clone(), o.clone()).unwrap();
    let g = b.open("f").unwrap();
    b.write(g, 0, &pattern(200_000, 9)).unwrap(); // spills (8 KiB buffer)
    assert!(
        b.stats().log_bytes > 100_000,
        "the open transaction spilled"
    );
    // The tab is killed: no release, no commit; its written bytes survive.
    drop(b.into_storage_unflushed());
    let img = st.crash(1, CrashMode::KeepAll);

    let up = a.resume().unwrap();
    assert_eq!(up.commits, 0);
    assert_eq!(a.read_to_vec(f).unwrap(), b"committed");
    a.write(f, 0, b"COMMITTED").unwrap();
    a.commit().unwrap();
    drop(a);
    // A fresh mount (after everything) sees A's commit only.
    for img in [
        st.crash(2, CrashMode::DropAll),
        st.crash(3, CrashMode::KeepAll),
        img,
    ] {
        let mut v = Volume::mount(img, o.clone()).unwrap();
        let f = v.open("f").unwrap();
        let data = v.read_to_vec(f).unwrap();
        assert!(
            data == b"COMMITTED" || data == b"committed",
            "{} bytes",
            data.len()
        );
    }
}

/// Three holders take turns at random (in random buffer modes and levels), doing random work;
/// some die holding the volume, some checkpoint. After every hand-off the new holder sees
/// exactly the last commit.
#[test]
fn random_holders_interleave() {
    let runs: u64 = std::env::var("HANDOFF_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    for run in 0..runs {
        let mut rng = SplitMix64::new(SplitMix64::mix(0x4A4D, run));
        let st = CrashStorage::new();
        let names = ["a", "b", "c.db", "c.db-journal"];
        let mut model = Model::new();
        let mut holders: Vec<Option<Volume<CrashStorage>>> = (0..3).map(|_| None).collect();
        let mut current: Option<usize> = None;
        let level = |r: &mut SplitMix64| match r.below(3) {
            0 => Durability::Strict,
            1 => Durability::Relaxed,
            _ => Durability::Balanced,
        };
        let debug = std::env::var_os("HANDOFF_DEBUG").is_some()
            && std::env::var("HANDOFF_ONLY")
                .ok()
                .and_then(|v| v.parse().ok())
                == Some(run);
        if std::env::var("HANDOFF_ONLY")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|o| o != run)
        {
            continue;
        }
        for step in 0..40 {
            let who = rng.index(3);
            if debug {
                eprintln!("step {step}: holder {who} (current {current:?})");
            }
            if current != Some(who) {
                if let Some(c) = current {
                    let v = holders[c].as_mut().unwrap();
                    if debug {
                        eprintln!("  holder {c} hands off");
                    }
                    if rng.chance(1, 6) {
                        // Dies holding it: everything committed and written survives.
                        v.sync().unwrap();
                        holders[c] = None;
                    } else {
                        v.release().unwrap();
                    }
                }
                let mode = if rng.chance(1, 2) {
                    BufferMode::Memory
                } else {
                    BufferMode::Disk
                };
                match holders[who].as_mut() {
                    Some(v) => {
                        v.resume()
                            .unwrap_or_else(|e| panic!("run {run} step {step}: resume: {e}"));
                    }
                    None => {
                        // Commits and spills of two pages go to the data file's tail in
                        // half the runs: catching up follows them.
                        let mut o = opts(mode, level(&mut rng));
                        if run % 2 == 1 {
                            o.link_min_bytes = Some(8 << 10);
                        }
                        holders[who] = Some(Volume::mount(st.clone(), o).unwrap());
                    }
                }
                current = Some(who);
                let v = holders[who].as_mut().unwrap();
                let got = read_state(v).unwrap();
                assert!(
                    got == model,
                    "run {run} step {step}: holder {who} after hand-off: {}",
                    diff(&got, &model)
                );
                v.check_invariants()
                    .unwrap_or_else(|e| panic!("run {run} step {step}: {e}"));
            }
            let v = holders[who].as_mut().unwrap();
            // A transaction of a few changes, committed or rolled back.
            let mut next = model.clone();
            for _ in 0..rng.range(1, 4) {
                let name = names[rng.index(names.len())];
                match rng.below(4) {
                    0 if next.contains_key(name) => {
                        if debug {
                            eprintln!("  delete {name}");
                        }
                        v.delete(name).unwrap();
                        next.remove(name);
                    }
                    1 if next.contains_key(name) => {
                        let len = rng.below(30_000);
                        if debug {
                            eprintln!("  set_len {name} {len}");
                        }
                        let id = v.open(name).unwrap();
                        v.set_len(id, len).unwrap();
                        next.get_mut(name).unwrap().resize(len as usize, 0);
                    }
                    _ => {
                        let id = v.open_or_create(name).unwrap();
                        let off = rng.below(40_000);
                        let data = pattern(rng.range(1, 20_000) as usize, rng.next_u64());
                        if debug {
                            eprintln!("  write {name} at {off} len {}", data.len());
                        }
                        v.write(id, off, &data).unwrap();
                        model_write(next.entry(name.into()).or_default(), off as usize, &data);
                    }
                }
            }
            if rng.chance(1, 5) {
                if debug {
                    eprintln!("  rollback");
                }
                v.rollback();
            } else {
                if debug {
                    eprintln!("  commit");
                }
                v.commit().unwrap();
                model = next;
                if rng.chance(1, 8) {
                    v.checkpoint().unwrap();
                }
            }
        }
        let v = holders[current.unwrap()].as_mut().unwrap();
        let report = v.check_integrity().unwrap();
        assert!(report.is_ok(), "run {run}: {report:?}");
    }
}
