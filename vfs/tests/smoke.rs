use vfs::storage::MemoryStorage;
use vfs::{BufferMode, Durability, Volume, VolumeOptions};

fn opts(mode: BufferMode) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability: Durability::Strict,
        ..Default::default()
    }
}

#[test]
fn round_trip_both_modes_with_checkpoint_and_crash() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let mut v = Volume::mount(MemoryStorage::new(), opts(mode)).unwrap();
        let a = v.create("a").unwrap();
        v.write(a, 0, &vec![1u8; 10_000]).unwrap();
        v.write(a, 5000, b"hello").unwrap();
        let b = v.create("b").unwrap();
        v.write(b, 100, b"xyz").unwrap();
        v.commit().unwrap();
        v.set_len(a, 5002).unwrap();
        v.set_len(a, 9000).unwrap();
        v.rename("b", "c").unwrap();
        v.commit().unwrap();
        let check = |v: &mut Volume<MemoryStorage>| {
            let a = v.open("a").unwrap();
            let data = v.read_to_vec(a).unwrap();
            assert_eq!(data.len(), 9000);
            assert!(data[..5000].iter().all(|&x| x == 1));
            assert_eq!(&data[5000..5002], b"he");
            assert!(data[5002..].iter().all(|&x| x == 0), "tail not zero");
            assert!(v.open("b").is_err());
            let c = v.open("c").unwrap();
            let data = v.read_to_vec(c).unwrap();
            assert_eq!(data.len(), 103);
            assert_eq!(&data[100..], b"xyz");
        };
        check(&mut v);
        // Crash (drop without close): log replay.
        let st = v.into_storage_unflushed();
        let mut v = Volume::mount(st.clone(), opts(mode)).unwrap();
        check(&mut v);
        // Checkpoint, then reopen in the other mode.
        v.checkpoint().unwrap();
        check(&mut v);
        let st = v.close().unwrap();
        let other = if mode == BufferMode::Memory {
            BufferMode::Disk
        } else {
            BufferMode::Memory
        };
        let mut v = Volume::mount(st, opts(other)).unwrap();
        check(&mut v);
        assert_eq!(v.stats().recovered_commits, 0);
    }
}
