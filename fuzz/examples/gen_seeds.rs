//! Writes the seed volumes (`seeds/images.bin`) and the seed corpus (`seeds/corpus/`): real
//! volumes made with the `Volume` API — inline small files, files in home blocks, sparse files
//! over several map chunks, two entry chunks, committed log transactions (create, write,
//! rename, delete, resize), open transactions that spilled to the log and were aborted or left
//! uncommitted, both superblock slots valid — and `CrashStorage` power-loss images taken in
//! the middle of checkpoints.
//!
//! Run from the repository root (stable toolchain is enough):
//! `cargo run --release --manifest-path fuzz/Cargo.toml --example gen_seeds`
//! The images differ on every run (each volume gets a random salt): commit the result once.

use std::fs;
use std::path::Path;

use opfs_vfs::storage::{MemoryStorage, PhysicalFileId, Storage};
use opfs_vfs::testing::{CrashMode, CrashStorage, SplitMix64};
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};
use opfs_vfs_fuzz::input::{encode_raw, encode_seed};
use opfs_vfs_fuzz::seeds::{encode_bundle, Seed};

fn opts(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        write_buffer_bytes: 8 << 10,
        checkpoint_bytes: 1 << 30,
        ..Default::default()
    }
}

fn bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    SplitMix64::new(seed).fill(&mut v);
    v
}

fn seed_of(name: &str, st: &MemoryStorage) -> Seed {
    Seed {
        name: name.to_owned(),
        data: st.get(PhysicalFileId::Data).bytes().to_vec(),
        log: st.get(PhysicalFileId::Log).bytes().to_vec(),
    }
}

/// A checkpointed base: small (inline) files, two files in home blocks, a sparse file over
/// three map chunks, 70 files so that two entry chunks exist.
fn base<S: Storage>(v: &mut Volume<S>) {
    for (i, len) in [0usize, 10, 300, 2048].into_iter().enumerate() {
        let id = v.create(&format!("small{i}")).unwrap();
        v.write(id, 0, &bytes(len, i as u64)).unwrap();
    }
    let a = v.create("main.db").unwrap();
    v.write(a, 0, &bytes(12_000, 7)).unwrap();
    let b = v.create("main.db-journal").unwrap();
    v.write(b, 0, &bytes(5_000, 8)).unwrap();
    let s = v.create("sparse").unwrap();
    for page in [0u64, 300, 600] {
        v.write(s, page * 4096 + 5, b"far apart").unwrap();
    }
    v.commit().unwrap();
    for i in 0..66 {
        let id = v.create(&format!("many/{i:02}")).unwrap();
        v.write(id, 0, &[i as u8; 40]).unwrap();
    }
    v.commit().unwrap();
}

/// Log transactions on top of the base: writes, a rename, a delete, resizes, a new file.
fn log_work<S: Storage>(v: &mut Volume<S>) {
    let a = v.open("main.db").unwrap();
    v.write(a, 4096, &bytes(4000, 9)).unwrap();
    v.commit().unwrap();
    v.rename("main.db-journal", "renamed").unwrap();
    v.delete("small1").unwrap();
    v.commit().unwrap();
    let s = v.open("sparse").unwrap();
    v.set_len(s, 100_000).unwrap();
    let n = v.create("new").unwrap();
    v.write(n, 0, &bytes(3000, 10)).unwrap();
    v.commit().unwrap();
    v.set_len(a, 30_000).unwrap();
    v.commit().unwrap();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let mut seeds: Vec<Seed> = Vec::new();

    // 0. A new, empty volume.
    let v = Volume::mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    )
    .unwrap();
    seeds.push(seed_of("empty", &v.close().unwrap()));

    // 1. The base, closed cleanly (checkpointed: catalog only, log = epoch frame).
    let mut v = Volume::mount(
        MemoryStorage::new(),
        opts(BufferMode::Memory, Durability::Strict),
    )
    .unwrap();
    base(&mut v);
    let closed = v.close().unwrap();
    seeds.push(seed_of("base-closed", &closed));

    // 2. Base checkpointed, then log transactions, then a crash of the process.
    let mut v = Volume::mount(closed.clone(), opts(BufferMode::Disk, Durability::Strict)).unwrap();
    log_work(&mut v);
    let crashed = v.into_storage_unflushed();
    seeds.push(seed_of("log-after-checkpoint", &crashed));

    // 3. Both superblock slots valid (a second checkpoint), then more log.
    let mut v = Volume::mount(
        crashed.clone(),
        opts(BufferMode::Memory, Durability::Strict),
    )
    .unwrap();
    v.checkpoint().unwrap();
    let a = v.open("main.db").unwrap();
    v.write(a, 100, b"after the second checkpoint").unwrap();
    v.commit().unwrap();
    seeds.push(seed_of("two-slots-and-log", &v.into_storage_unflushed()));

    // 4. Disk mode, small write buffer: a transaction spills to the log and is rolled back
    //    (abort frame); another commits; a third spills and is left open at the crash.
    let mut v = Volume::mount(closed.clone(), opts(BufferMode::Disk, Durability::Relaxed)).unwrap();
    let a = v.open("main.db").unwrap();
    v.write(a, 0, &bytes(24_000, 11)).unwrap();
    v.rollback();
    let b = v.open("small2").unwrap();
    v.write(b, 0, b"committed after an abort").unwrap();
    v.commit().unwrap();
    v.write(a, 8192, &bytes(20_000, 12)).unwrap();
    let other = v.open("small3").unwrap();
    v.write(other, 0, b"x").unwrap();
    v.commit_with(
        opfs_vfs::Scope::Files(&|n: &str| n == "small3"),
        opfs_vfs::SyncLevel::Full,
    )
    .unwrap();
    seeds.push(seed_of("spill-abort-open", &v.into_storage_unflushed()));

    // 5. Balanced durability, crashed with commits grouped in memory and some written.
    let mut v = Volume::mount(
        closed.clone(),
        opts(BufferMode::Memory, Durability::Balanced),
    )
    .unwrap();
    log_work(&mut v);
    v.sync().unwrap();
    let a = v.open("main.db").unwrap();
    v.write(a, 0, b"grouped, unwritten").unwrap();
    v.commit().unwrap();
    seeds.push(seed_of("balanced", &v.into_storage_unflushed()));

    // 6.. Power loss in the middle of a checkpoint: a CrashStorage holding the base and log
    //    work; the power goes out at the k-th mutating call of the checkpoint; images with
    //    every pending write kept, torn in order, and at random.
    for k in [2u64, 3, 4, 6] {
        let cs = CrashStorage::from_image(&crashed);
        let probe = cs.clone();
        let mut v = Volume::mount(cs, opts(BufferMode::Memory, Durability::Strict)).unwrap();
        let n = v.open("new").unwrap();
        v.write(n, 0, b"last commit before the checkpoint").unwrap();
        v.commit().unwrap();
        probe.clear_counts();
        probe.crash_at_mutation(k);
        let _ = v.checkpoint();
        drop(v);
        for (mode, tag, s) in [
            (CrashMode::InOrder, "inorder", k),
            (CrashMode::Random, "random", k + 100),
        ] {
            let img = probe.crash(s, mode);
            seeds.push(seed_of(&format!("crash-mid-checkpoint-{k}-{tag}"), &img));
        }
    }

    // A torn creation (slot 0 torn, slot 1 empty).
    let cs = CrashStorage::new();
    let probe = cs.clone();
    probe.crash_at_mutation(2);
    let _ = Volume::mount(cs, opts(BufferMode::Memory, Durability::Strict));
    seeds.push(seed_of(
        "torn-creation",
        &probe.crash(5, CrashMode::InOrder),
    ));

    // Check: every seed mounts (or fails with a typed error, for the torn ones) without
    // panicking, and report sizes.
    let mut total = 0;
    for s in &seeds {
        let st = opfs_vfs_fuzz::seeds::storage_of(&s.data, &s.log);
        let r = Volume::mount(st, opts(BufferMode::Memory, Durability::Strict));
        total += s.data.len() + s.log.len();
        println!(
            "{:32} data {:7} B, log {:7} B, mount: {}",
            s.name,
            s.data.len(),
            s.log.len(),
            match r {
                Ok(v) => format!("ok, {} files", v.list().len()),
                Err(e) => format!("{e}"),
            }
        );
    }
    println!("{} seeds, {total} bytes", seeds.len());
    fs::write(root.join("images.bin"), encode_bundle(&seeds)).unwrap();

    // The corpus: per seed, two seed-mode inputs with different plans; raw-mode inputs for a
    // few seeds (libFuzzer then mutates real images byte by byte).
    let dir = root.join("corpus");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let mut rng = SplitMix64::new(0x5EED);
    for (i, s) in seeds.iter().enumerate() {
        let idx = u8::try_from(i).unwrap();
        for k in 0..2 {
            let mut plan = vec![0u8; 96];
            rng.fill(&mut plan);
            fs::write(
                dir.join(format!("seed-{i:02}-{k}")),
                encode_seed(idx, &plan),
            )
            .unwrap();
        }
        if matches!(s.name.as_str(), "log-after-checkpoint" | "spill-abort-open") {
            let mut plan = vec![0u8; 96];
            rng.fill(&mut plan);
            fs::write(
                dir.join(format!("raw-{i:02}")),
                encode_raw(&s.data, &s.log, &plan),
            )
            .unwrap();
        }
    }
}
