//! Native demo of the engine: the filesystem lifecycle (N files × 1 KiB: create, write, read,
//! rename, delete half, flush, close, reopen and verify) on the std-file backend, in both buffer
//! modes and every durability level, with wall time and physical calls per phase.
//!
//! `cargo run --release -p opfs-vfs --example demo [-- FILES]`

// Native only (std files). `cargo test --target wasm32-unknown-unknown` (wasm-pack test) builds
// examples too: there this example is empty.
#![cfg_attr(target_arch = "wasm32", no_main)]
#![cfg(not(target_arch = "wasm32"))]

use std::time::Instant;

use opfs_vfs::storage::{Counters, StdStorage};
use opfs_vfs::{BufferMode, Durability, Volume, VolumeOptions};

const FILE_SIZE: usize = 1024;

fn content(i: usize) -> Vec<u8> {
    (0..FILE_SIZE)
        .map(|j| (i * 31 + j * 7).to_le_bytes()[0])
        .collect()
}

struct Phase {
    name: &'static str,
    micros: f64,
    calls: Counters,
}

fn run(files: usize, mode: BufferMode, durability: Durability) -> opfs_vfs::Result<Vec<Phase>> {
    let dir = std::env::temp_dir().join(format!("opfs-vfs-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = VolumeOptions {
        buffer_mode: mode,
        durability,
        ..Default::default()
    };
    let open = |dir: &std::path::Path| {
        StdStorage::open(dir).map_err(|e| opfs_vfs::Error::Io {
            file: opfs_vfs::storage::PhysicalFileId::Data,
            source: e,
        })
    };
    let mut phases = Vec::new();
    let mut t = Instant::now();
    let mut last = Counters::default();
    // Records a phase: time since the previous mark, physical calls since the previous mark.
    let mut mark = |name, vol: &Volume<StdStorage>, last: &mut Counters| {
        let now = vol.counters();
        phases.push(Phase {
            name,
            micros: t.elapsed().as_secs_f64() * 1e6,
            calls: now.since(last),
        });
        *last = now;
        t = Instant::now();
    };
    let mut vol = Volume::mount(open(&dir)?, opts.clone())?;
    mark("mount", &vol, &mut last);
    let ids: Vec<_> = (0..files)
        .map(|i| vol.create(&format!("dir/file-{i:05}")))
        .collect::<opfs_vfs::Result<_>>()?;
    vol.commit()?;
    mark("create", &vol, &mut last);
    for (i, &id) in ids.iter().enumerate() {
        vol.write(id, 0, &content(i))?;
        vol.commit()?;
    }
    mark("write", &vol, &mut last);
    let mut buf = vec![0u8; FILE_SIZE];
    for (i, &id) in ids.iter().enumerate() {
        assert_eq!(vol.read(id, 0, &mut buf)?, FILE_SIZE);
        assert!(buf == content(i), "file {i} read back wrong");
    }
    mark("read", &vol, &mut last);
    for i in 0..files {
        vol.rename(&format!("dir/file-{i:05}"), &format!("dir/renamed-{i:05}"))?;
    }
    vol.commit()?;
    mark("rename", &vol, &mut last);
    for i in (0..files).step_by(2) {
        vol.delete(&format!("dir/renamed-{i:05}"))?;
    }
    vol.commit()?;
    mark("delete", &vol, &mut last);
    vol.flush()?;
    mark("flush", &vol, &mut last);
    // Close (checkpoint) and remount: a fresh volume's counters start at zero.
    let closing = vol.counters();
    drop(vol.close()?);
    let mut vol = Volume::mount(open(&dir)?, opts)?;
    last = Counters::default();
    let _ = closing;
    for i in (1..files).step_by(2) {
        let id = vol.open(&format!("dir/renamed-{i:05}"))?;
        assert!(vol.read_to_vec(id)? == content(i), "survivor {i} wrong");
    }
    assert_eq!(vol.list().len(), files / 2);
    mark("reopen+verify", &vol, &mut last);
    drop(vol);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(phases)
}

fn main() -> opfs_vfs::Result<()> {
    let files: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    println!("Filesystem lifecycle, {files} files x {FILE_SIZE} B, std-file backend");
    println!("(write phase commits once per file; reopen = close with checkpoint, then mount)\n");
    println!(
        "{:<8} {:<9} {:<14} {:>10} {:>9} {:>7} {:>8} {:>7} {:>10}",
        "mode", "durab.", "phase", "total µs", "µs/file", "reads", "writes", "flushes", "bytes out"
    );
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        for durability in [
            Durability::Strict,
            Durability::Relaxed,
            Durability::Balanced,
        ] {
            for p in run(files, mode, durability)? {
                let c = p.calls.total();
                println!(
                    "{:<8} {:<9} {:<14} {:>10.0} {:>9.2} {:>7} {:>8} {:>7} {:>10}",
                    format!("{mode:?}"),
                    format!("{durability:?}"),
                    p.name,
                    p.micros,
                    p.micros / files as f64,
                    c.reads,
                    c.writes,
                    c.flushes,
                    c.written_bytes
                );
            }
            println!();
        }
    }
    Ok(())
}
