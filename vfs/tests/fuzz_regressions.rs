#![cfg(not(target_arch = "wasm32"))]
//! Regressions found by the fuzz target (`fuzz/`, see `fuzz/README.md`). Each test replays what
//! the fuzzer found, in the smallest form that shows it, through the public API.

use opfs_vfs::storage::MemoryStorage;
use opfs_vfs::{BufferMode, Volume, VolumeOptions};

fn memory_mode() -> VolumeOptions {
    VolumeOptions {
        buffer_mode: BufferMode::Memory,
        ..VolumeOptions::default()
    }
}

/// The newest valid superblock of a data file image, with its slot.
fn newest_superblock(data: &[u8]) -> (usize, opfs_vfs::format::Superblock) {
    use opfs_vfs::format::{Slot, Superblock, PAGE_SIZE};
    (0..2)
        .filter_map(
            |s| match Superblock::decode(&data[s * PAGE_SIZE..(s + 1) * PAGE_SIZE]) {
                Slot::Valid(sb) => Some((s, sb)),
                _ => None,
            },
        )
        .max_by_key(|(_, sb)| sb.generation)
        .expect("a valid superblock")
}

/// Found by `fuzz/` (mount target, on the first corpus pass): in Memory mode a resident file's
/// contents were indexed by a dense vector of 64 KiB chunks, sized from the file's *length*.
/// A sparse length — here a byte at 2^52 − 1, legal up to `MAX_FILE_SIZE` = 2^53 — made the
/// commit allocate 2^36 chunk slots (1 TiB) and the process abort on the failed allocation
/// (a 2^49 length asked for 512 GiB). The same happened when such a file, checkpointed, was
/// loaded on its first access after a remount (the length then comes from the image: with no
/// `memory_budget`, the native default, a hostile image could abort the process). Contents are
/// now a sparse map: memory follows the bytes stored, not the length.
#[test]
fn sparse_file_in_memory_mode_allocates_what_it_stores() {
    let far = (1u64 << 52) - 1;
    let mut v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let id = v.create("sparse").unwrap();
    v.write(id, far, b"!").unwrap();
    v.commit().unwrap();
    assert_eq!(v.len(id).unwrap(), far + 1);
    let mut b = [0u8; 4];
    assert_eq!(v.read(id, far - 3, &mut b).unwrap(), 4);
    assert_eq!(&b, b"\0\0\0!");
    assert!(
        v.stats().resident_bytes <= 1 << 20,
        "resident bytes: {}",
        v.stats().resident_bytes
    );

    // Grow further with set_len (the fuzzer's first finding was a sparse set_len), shrink,
    // and load the checkpointed file again after a remount (the length from the catalog).
    v.set_len(id, 1 << 53).unwrap();
    v.commit().unwrap();
    v.set_len(id, far + 1).unwrap();
    v.commit().unwrap();
    let st = v.close().unwrap();
    let mut v = Volume::mount(st, memory_mode()).unwrap();
    let id = v.open("sparse").unwrap();
    let mut b = [0u8; 2];
    assert_eq!(v.read(id, far - 1, &mut b).unwrap(), 2);
    assert_eq!(&b, b"\0!");
    assert!(v.stats().resident_bytes <= 1 << 20);
    v.check_invariants().unwrap();
    assert!(v.check_integrity().unwrap().is_ok());
}

/// Found by `fuzz/`, twice: the superblock's block count (the data file's length in blocks at
/// the checkpoint) is not bounded by the data file — a file trimmed after its checkpoint is
/// legitimately shorter — yet mount took it as the data file's extent:
/// - a count of 2^40 made the range beyond the file a free tail of 2^40 blocks, and the next
///   checkpoint (here: at close) gave it back one block at a time (a timeout after 56,319
///   executions; the trim now cuts ranges in one step);
/// - a count of 2^52 or more made a compaction allocate its blobs at the end of that extent:
///   `block * 4096` overflowed (a panic with overflow checks; in release, a write at a wrapped
///   offset and a volume that no longer mounts), 18,361 executions into the next run.
///
/// Mount now takes the extent from the physical file (the catalog may only reference blocks
/// inside it).
#[test]
fn hostile_block_count_is_not_the_extent() {
    use opfs_vfs::format::PAGE_SIZE;
    use opfs_vfs::storage::PhysicalFileId;

    let mut v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let id = v.create("f").unwrap();
    v.write(id, 0, &[7u8; 10_000]).unwrap();
    let clean = v.close().unwrap();
    for count in [1u64 << 40, (1 << 52) + 5, 1 << 60, u64::MAX] {
        // Raise the newest superblock's block count (re-encoded: its checksum stays valid).
        let mut st = clean.clone();
        let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
        let (slot, mut sb) = newest_superblock(data);
        sb.block_count = count;
        data[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE].copy_from_slice(&sb.encode());

        // Compaction first (as the fuzzer found it), then a change and a checkpoint.
        let mut v = Volume::mount(st, memory_mode()).unwrap();
        v.compact().unwrap();
        let id = v.open("f").unwrap();
        v.write(id, 0, b"changed").unwrap();
        v.commit().unwrap();
        v.checkpoint().unwrap();
        v.check_invariants().unwrap();
        assert!(v.check_integrity().unwrap().is_ok(), "block count {count}");
        let st = v.close().unwrap();
        let len = st.get(PhysicalFileId::Data).bytes().len();
        assert!(
            len < 1 << 20,
            "block count {count}: data file of {len} bytes"
        );
        let mut v = Volume::mount(st, memory_mode()).unwrap();
        let id = v.open("f").unwrap();
        let data = v.read_to_vec(id).unwrap();
        assert_eq!(&data[..7], b"changed");
        assert_eq!(data.len(), 10_000);
    }
}

/// Found by `fuzz/` (3,258 executions into a run): a superblock claiming "next file id 0" over
/// an empty catalog mounted, `check_integrity` found nothing wrong, and the first file created
/// got id 0, which the log replay rightly refuses: the volume no longer mounted after a clean
/// close. A next id of 0, or so large that ids could overflow, is now `Corrupt` at mount.
#[test]
fn next_file_id_out_of_range_is_corrupt() {
    use opfs_vfs::format::{Slot, Superblock, PAGE_SIZE};
    use opfs_vfs::storage::PhysicalFileId;
    use opfs_vfs::Error;

    let v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let clean = v.close().unwrap();
    for next in [0u64, u64::MAX, 1 << 60] {
        let mut st = clean.clone();
        let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
        for s in 0..2 {
            let slot = &mut data[s * PAGE_SIZE..(s + 1) * PAGE_SIZE];
            if let Slot::Valid(mut sb) = Superblock::decode(slot) {
                sb.next_file_id = next;
                slot.copy_from_slice(&sb.encode());
            }
        }
        match Volume::mount(st, memory_mode()) {
            Err(Error::Corrupt { .. }) => {}
            other => panic!("next file id {next}: {other:?}"),
        }
    }
    // The boundary case still works: a volume with next id 1 creates, closes and mounts.
    let mut v = Volume::mount(clean, memory_mode()).unwrap();
    v.create("a").unwrap();
    let st = v.close().unwrap();
    assert!(Volume::mount(st, memory_mode()).unwrap().exists("a"));
}

/// Found by `fuzz/` (2,631,314 executions into a 10-million run, at `6b5a8ad`): the boundary
/// the test above leaves open. A next id of exactly 2^53 is a valid state (every id below it is
/// used) and mounted, but `create` handed out 2^53 itself, which the log replay refuses: after
/// a clean close the volume no longer mounted. `create` now fails with `FileIdsExhausted` and
/// changes nothing; the last id, 2^53 − 1, is still handed out.
#[test]
fn the_last_file_id_is_used_and_then_create_fails_cleanly() {
    use opfs_vfs::format::{Slot, Superblock, PAGE_SIZE};
    use opfs_vfs::storage::PhysicalFileId;
    use opfs_vfs::Error;

    let mut v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let keep = v.create("keep").unwrap();
    v.write(keep, 0, b"kept").unwrap();
    let clean = v.close().unwrap();
    for (next, creatable) in [((1u64 << 53) - 1, 1), (1 << 53, 0)] {
        let mut st = clean.clone();
        let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
        for s in 0..2 {
            let slot = &mut data[s * PAGE_SIZE..(s + 1) * PAGE_SIZE];
            if let Slot::Valid(mut sb) = Superblock::decode(slot) {
                sb.next_file_id = next;
                slot.copy_from_slice(&sb.encode());
            }
        }
        let disk_mode = VolumeOptions {
            buffer_mode: BufferMode::Disk,
            ..VolumeOptions::default()
        };
        for mode in [memory_mode(), disk_mode] {
            let mut v = Volume::mount(st.clone(), mode.clone()).unwrap();
            for i in 0..creatable {
                let id = v.create(&format!("new{i}")).unwrap();
                v.write(id, 0, b"new").unwrap();
            }
            match v.create("one too many") {
                Err(Error::FileIdsExhausted { limit }) => assert_eq!(limit, 1 << 53),
                other => panic!("next id {next}: {other:?}"),
            }
            assert!(!v.exists("one too many"));
            v.commit().unwrap();
            v.check_invariants().unwrap();
            assert!(v.check_integrity().unwrap().is_ok());
            // The log (no checkpoint at close here would hide it) and a checkpoint both mount.
            let mut v = Volume::mount(v.into_storage_unflushed(), mode.clone()).unwrap();
            for i in 0..creatable {
                let id = v.open(&format!("new{i}")).unwrap();
                assert_eq!(v.read_to_vec(id).unwrap(), b"new");
            }
            let st2 = v.close().unwrap();
            let mut v = Volume::mount(st2, mode).unwrap();
            let keep = v.open("keep").unwrap();
            assert_eq!(v.read_to_vec(keep).unwrap(), b"kept");
            assert_eq!(v.exists("new0"), creatable == 1);
        }
    }
}

/// Found by `fuzz/` (6,484 executions into a run): a superblock of generation u64::MAX (odd, so
/// in the right slot) mounted and overflowed at `generation + 1` when mount looked for the next
/// epoch's log; in release the next checkpoint would have written generation 0, and the mount
/// after it taken the older superblock, losing every commit since. Generations and the commit
/// sequence number (the same kind of counter) near u64::MAX are now `Corrupt` at mount.
#[test]
fn counters_near_the_top_are_corrupt() {
    use opfs_vfs::format::{Slot, Superblock, PAGE_SIZE};
    use opfs_vfs::storage::PhysicalFileId;
    use opfs_vfs::Error;

    let v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let clean = v.close().unwrap();
    for (generation, seq) in [(u64::MAX, None), (u64::MAX - 2, None), (3, Some(u64::MAX))] {
        let mut st = clean.clone();
        let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
        let mut sb = (0..2)
            .find_map(
                |s| match Superblock::decode(&data[s * PAGE_SIZE..(s + 1) * PAGE_SIZE]) {
                    Slot::Valid(sb) => Some(sb),
                    _ => None,
                },
            )
            .unwrap();
        // One valid superblock, in the slot its generation belongs to; the other slot empty.
        sb.generation = generation;
        if let Some(seq) = seq {
            sb.next_txn_seq = seq;
        }
        data[..2 * PAGE_SIZE].fill(0);
        let slot = (generation % 2) as usize;
        data[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE].copy_from_slice(&sb.encode());
        match Volume::mount(st, memory_mode()) {
            Err(Error::Corrupt { .. }) => {}
            other => panic!("generation {generation}, sequence {seq:?}: {other:?}"),
        }
    }
}

/// Memory mode with a small write buffer: open transactions spill after 16 × 8 KiB of staged
/// pages.
fn spilling_memory_mode() -> VolumeOptions {
    VolumeOptions {
        buffer_mode: BufferMode::Memory,
        write_buffer_bytes: 8 << 10,
        ..VolumeOptions::default()
    }
}

/// Bytes that differ from page to page (a misplaced or zero page shows).
fn bytes_at(at: u64, len: usize, salt: u8) -> Vec<u8> {
    (at..at + len as u64)
        .map(|p| salt ^ (p.to_le_bytes()[0].rotate_left(3)) ^ (p >> 12).to_le_bytes()[0])
        .collect()
}

fn assert_reads(v: &mut Volume<MemoryStorage>, id: opfs_vfs::FileId, want: &[u8], when: &str) {
    assert_eq!(v.len(id).unwrap(), want.len() as u64, "length {when}");
    let mut got = vec![0u8; want.len()];
    assert_eq!(v.read(id, 0, &mut got).unwrap(), want.len());
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(first.is_none(), "{when}: first wrong byte at {first:?}");
}

/// Found by `fuzz/` (the 10-million-execution run, job 0 after 243,226 executions, in Memory
/// mode with 8 KiB write buffers): a file created in a transaction that spilled pages to the
/// log read those pages as zeros once committed. The commit made a new file resident with an
/// empty copy and copied only the still-staged pages into it; the spilled ones went to the
/// file's log map alone, and reads of a resident file never look there. Every read until a
/// remount was wrong, and a checkpoint (or compaction) wrote the wrong copy home, so the loss
/// became permanent (checked: commit, checkpoint, remount read zeros at byte 0). Through
/// SQLite: any transaction over 16 MiB (16 × the default 1 MiB buffer) in Memory mode
/// (`sqlite_roundtrip.rs`, `memory_mode_transactions_beyond_the_spill_threshold`).
#[test]
fn new_file_with_spilled_pages_reads_them_after_commit() {
    let mut v = Volume::mount(MemoryStorage::new(), spilling_memory_mode()).unwrap();
    let id = v.create("c").unwrap();
    let want = bytes_at(0, 300 << 10, 1);
    for (k, piece) in want.chunks(12 << 10).enumerate() {
        v.write(id, (k * (12 << 10)) as u64, piece).unwrap();
    }
    v.commit().unwrap();
    assert_reads(&mut v, id, &want, "after the commit");
    v.compact().unwrap();
    assert_reads(&mut v, id, &want, "after compact");
    let st = v.close().unwrap();
    let mut v = Volume::mount(st, spilling_memory_mode()).unwrap();
    let id = v.open("c").unwrap();
    assert_reads(&mut v, id, &want, "after a remount");
}

/// The same rule for a file that exists: a spill evicts it, a read in the same transaction
/// loads its committed bytes again, and the commit must not leave that copy without the
/// spilled pages.
#[test]
fn resident_file_loaded_after_a_spill_reads_the_spilled_pages() {
    let mut v = Volume::mount(MemoryStorage::new(), spilling_memory_mode()).unwrap();
    let id = v.create("c").unwrap();
    let mut want = bytes_at(0, 64 << 10, 2);
    v.write(id, 0, &want).unwrap();
    v.commit().unwrap();
    assert_reads(&mut v, id, &want, "after the first commit");
    // Past the spill threshold (128 KiB staged): the first pages go to the log.
    let more = bytes_at(64 << 10, 256 << 10, 3);
    for (k, piece) in more.chunks(8 << 10).enumerate() {
        v.write(id, (64 << 10) + (k * (8 << 10)) as u64, piece)
            .unwrap();
    }
    want.extend_from_slice(&more);
    // Read in the open transaction (loads the committed bytes), then commit.
    let mut b = [0u8; 16];
    v.read(id, 0, &mut b).unwrap();
    v.commit().unwrap();
    assert_reads(&mut v, id, &want, "after the second commit");
}

/// Found by `fuzz/` (the 10-million-execution run, job 0 after 113,774 executions): a map chunk
/// with no runs at index 2^56 mounted (only runs were checked against the file's pages), and in
/// the fuzzer's execution a later compaction computed its pages, `(k + 1) × 256`, with an
/// overflow (a panic with overflow checks; in release a wrapped range). A map chunk without runs, or one starting past
/// the file's pages, is now `Corrupt` at mount: checkpoints never write either.
#[test]
fn map_chunk_outside_the_file_is_corrupt() {
    use opfs_vfs::format::{self, BlobPtr, Contents, PAGE_SIZE};
    use opfs_vfs::storage::PhysicalFileId;
    use opfs_vfs::Error;

    let mut v = Volume::mount(MemoryStorage::new(), memory_mode()).unwrap();
    let id = v.create("f").unwrap();
    v.write(id, 0, &[7u8; 10_000]).unwrap();
    let clean = v.close().unwrap();
    let read_blob = |data: &[u8], p: BlobPtr| {
        let at = usize::try_from(p.block).unwrap() * PAGE_SIZE;
        data[at..at + p.len as usize].to_vec()
    };
    // Appends `bytes` as a blob at the end of the data file (whole blocks).
    let append = |data: &mut Vec<u8>, bytes: &[u8]| {
        let block = (data.len() / PAGE_SIZE) as u64;
        data.extend_from_slice(bytes);
        data.resize(data.len().next_multiple_of(PAGE_SIZE), 0);
        BlobPtr::of(block, bytes).unwrap()
    };
    for (k, nruns) in [(1u64 << 56, 0usize), (5, 0), (5, 1), (0, 0)] {
        let mut st = clean.clone();
        let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
        let (slot, mut sb) = newest_superblock(data);
        let dir = format::decode_directory(&read_blob(data, sb.directory)).unwrap();
        let (chunk, eptr) = dir[0];
        let mut entries = format::decode_entry_chunk(chunk, &read_blob(data, eptr)).unwrap();
        let e = entries.iter_mut().find(|e| e.name == "f").unwrap();
        let Contents::Blocks(maps) = &mut e.contents else {
            panic!("f is not in blocks");
        };
        // The extra chunk: no runs, or (k = 5, 20 KiB past a 10,000-byte file) one run of the
        // file's first home block.
        let first = format::decode_map_chunk(e.id, maps[0].0, &read_blob(data, maps[0].1))
            .unwrap()
            .remove(0);
        let run = format::Run {
            first: 0,
            block: first.block,
            hashes: vec![first.hashes[0]],
        };
        let runs: Vec<format::Run> = if nruns == 0 { Vec::new() } else { vec![run] };
        let blob = format::encode_map_chunk(e.id, k, &runs);
        let ptr = append(data, &blob);
        if k == 0 {
            maps[0].1 = ptr;
        } else {
            maps.push((k, ptr));
        }
        let refs: Vec<&format::Entry> = entries.iter().collect();
        let eptr = append(data, &format::encode_entry_chunk(chunk, &refs));
        sb.directory = append(data, &format::encode_directory(&[(chunk, eptr)]));
        sb.block_count = (data.len() / PAGE_SIZE) as u64;
        data[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE].copy_from_slice(&sb.encode());
        match Volume::mount(st, memory_mode()) {
            Err(Error::Corrupt { .. }) => {}
            Ok(mut v) => {
                // Before the fix: mounted; the compaction overflowed at k = 2^56.
                let r = v.compact();
                panic!("map chunk {k} with {nruns} runs mounted (compact: {r:?})");
            }
            Err(e) => panic!("map chunk {k}: {e:?}"),
        }
    }
}

/// The fix for the two findings above keeps residency: a resident file whose transaction
/// spilled stays resident, and its commit reads back the spilled images only (a few windowed
/// log reads: at most what was written, with frame headers), not the whole file — a 4 MiB
/// file, 1 MiB rewritten past the 128 KiB threshold.
#[test]
fn spilled_commit_of_a_resident_file_reads_back_only_the_spilled_pages() {
    use opfs_vfs::storage::PhysicalFileId;

    let mut v = Volume::mount(MemoryStorage::new(), spilling_memory_mode()).unwrap();
    let id = v.create("db").unwrap();
    let mut want = bytes_at(0, 4 << 20, 4);
    v.write(id, 0, &want).unwrap();
    v.commit().unwrap();
    v.checkpoint().unwrap();
    let st = v.close().unwrap();
    let mut v = Volume::mount(st, spilling_memory_mode()).unwrap();
    let id = v.open("db").unwrap();
    assert_reads(&mut v, id, &want, "after the remount"); // loads it
    assert!(v.stats().resident_bytes >= 4 << 20);
    let before = v.counters();
    let more = bytes_at(1 << 20, 1 << 20, 5);
    for (k, piece) in more.chunks(16 << 10).enumerate() {
        v.write(id, (1 << 20) + (k * (16 << 10)) as u64, piece)
            .unwrap();
    }
    want[1 << 20..2 << 20].copy_from_slice(&more);
    v.commit().unwrap();
    let after = v.counters();
    let data_read =
        after.file(PhysicalFileId::Data).read_bytes - before.file(PhysicalFileId::Data).read_bytes;
    let log_read =
        after.file(PhysicalFileId::Log).read_bytes - before.file(PhysicalFileId::Log).read_bytes;
    let log_reads = after.file(PhysicalFileId::Log).reads - before.file(PhysicalFileId::Log).reads;
    assert_eq!(data_read, 0, "the home blocks were read again");
    assert!(
        (1..(1 << 20) + (64 << 10)).contains(&log_read) && log_reads <= 2,
        "read back {log_read} bytes in {log_reads} calls for 1 MiB written"
    );
    assert!(v.stats().resident_bytes >= 4 << 20, "no longer resident");
    assert_reads(&mut v, id, &want, "after the spilled commit");
    let after_read = v.counters();
    assert_eq!(
        after_read.total().reads,
        after.total().reads,
        "reading the file touched storage"
    );
}

/// Found by `fuzz/` (the CI gate's 30-second run, 11,370 executions in): a superblock whose
/// block count exceeds the data file (here 2^53 and the file's end + 8; a damaged image) mounted,
/// and a commit big enough for a tail link went to the data file's end, where mount had put the
/// epoch's links. The next mount, with the same superblock and a longer file, looked for links
/// at the new end, found none, and the acknowledged commit (a new file and a write) was gone,
/// with `check_integrity` clean. Such an epoch now logs its commits.
#[test]
fn a_block_count_past_the_file_does_not_lose_linked_commits() {
    use opfs_vfs::format::PAGE_SIZE;
    use opfs_vfs::storage::PhysicalFileId;

    let opts = VolumeOptions {
        buffer_mode: BufferMode::Memory,
        link_min_bytes: Some(16 << 10),
        checkpoint_on_close: false,
        ..VolumeOptions::default()
    };
    let mut v = Volume::mount(MemoryStorage::new(), opts.clone()).unwrap();
    let id = v.create("old").unwrap();
    v.write(id, 0, &[7u8; 10_000]).unwrap();
    v.commit().unwrap();
    v.checkpoint().unwrap();
    let clean = v.close().unwrap();
    let blocks = (clean.get(PhysicalFileId::Data).bytes().len() / PAGE_SIZE) as u64;
    let want = bytes_at(0, 64 << 10, 3);
    // `None`: the superblock as written (the control: the same commit links there).
    for count in [None, Some(blocks + 8), Some(1u64 << 53)] {
        let mut st = clean.clone();
        if let Some(count) = count {
            let data = st.get_mut(PhysicalFileId::Data).bytes_mut();
            let (slot, mut sb) = newest_superblock(data);
            sb.block_count = count;
            data[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE].copy_from_slice(&sb.encode());
        }
        let mut v = Volume::mount(st, opts.clone()).unwrap();
        let id = v.create("new").unwrap();
        v.write(id, 0, &want).unwrap();
        v.commit().unwrap();
        if count.is_none() {
            assert_eq!(v.stats().linked_commits, 1, "the control commit links");
        }
        let st = v.close().unwrap();
        let mut v = Volume::mount(st, opts.clone()).unwrap();
        let id = v
            .open("new")
            .unwrap_or_else(|e| panic!("block count {count:?}: the commit is lost: {e:?}"));
        assert_reads(&mut v, id, &want, &format!("block count {count:?}"));
        v.check_invariants().unwrap();
        assert!(v.check_integrity().unwrap().is_ok());
    }
}
