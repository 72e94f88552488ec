//! Runs the fuzz target's body on inputs without libFuzzer (stable toolchain): files or
//! directories of inputs, e.g. `seeds/corpus`, `corpus/mount`, or a crash artifact. Prints
//! the time and the peak heap of each input over the bound, and the total.
//!
//! `cargo run --release --manifest-path fuzz/Cargo.toml --example replay -- fuzz/seeds/corpus`

use std::path::PathBuf;
use std::time::Instant;

use opfs_vfs_fuzz::{counting, memory_bound, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fn main() {
    let mut files: Vec<PathBuf> = Vec::new();
    for arg in std::env::args().skip(1) {
        let p = PathBuf::from(arg);
        if p.is_dir() {
            let mut v: Vec<PathBuf> = std::fs::read_dir(&p)
                .expect("readable directory")
                .map(|e| e.expect("entry").path())
                .collect();
            v.sort();
            files.extend(v);
        } else {
            files.push(p);
        }
    }
    let verbose = std::env::var_os("REPLAY_VERBOSE").is_some();
    let start = Instant::now();
    let mut worst = 0usize;
    for f in &files {
        let input = std::fs::read(f).expect("readable input");
        counting::reset_peak();
        let base = counting::live();
        let t = Instant::now();
        let image = opfs_vfs_fuzz::run(&input);
        let used = counting::peak().saturating_sub(base);
        worst = worst.max(used);
        if verbose {
            println!("{}: {:?}, peak heap {used} B", f.display(), t.elapsed());
        }
        assert!(
            used <= memory_bound(image, 0),
            "{}: peak heap {used} B over the bound",
            f.display()
        );
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} inputs in {secs:.2} s ({:.0}/s), worst peak heap {worst} B",
        files.len(),
        files.len() as f64 / secs
    );
}
