//! The fuzz target: mount an image (a mutated seed volume or raw bytes) and run operations on
//! it; see `fuzz/src/lib.rs` for the rules checked and `fuzz/README.md` for how to run it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use opfs_vfs_fuzz::{counting, memory_bound, CountingAlloc};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

fuzz_target!(|input: &[u8]| {
    counting::reset_peak();
    let base = counting::live();
    let image_len = opfs_vfs_fuzz::run(input);
    let used = counting::peak().saturating_sub(base);
    // The bound counts the image itself as its length (data + log); `run` reports it.
    let bound = memory_bound(image_len, 0);
    assert!(
        used <= bound,
        "peak heap {used} bytes exceeds the bound {bound} (image {image_len} bytes)"
    );
});
