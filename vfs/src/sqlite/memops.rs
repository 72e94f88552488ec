//! `memcpy`, `memmove` and `memset` for SQLite's C code on `wasm32-unknown-unknown`, as the
//! bulk-memory instructions `memory.copy` / `memory.fill`.
//!
//! Why this exists: sqlite-wasm-rs compiles SQLite with the system `clang` and no target
//! features (Debian 12's clang 14 defaults to the MVP feature set), so every `memcpy`,
//! `memmove` and `memset` of a non-constant size in SQLite is a call to the symbol. On this
//! target the symbol is Rust's `compiler_builtins` fallback, a word-at-a-time loop in wasm code,
//! while Rust code (bulk memory is on by default since Rust 1.87) and SQLite's official
//! Emscripten build copy with `memory.copy`, which the engines run as a native `memmove`.
//! SQLite copies and clears whole pages all the time (the pager, b-tree balancing, the page
//! cache); the loop made the cases that move many pages — INSERT from a SELECT, DELETE with an
//! index, a big INSERT after a big DELETE — slower than the same SQL in SQLite's own WASM build
//! (results/2026-12-03: cases 11, 13, 14 in Chromium; measured gain: see `methodology.md`).
//!
//! The definitions here are strong symbols; `compiler_builtins` defines its own as weak ones,
//! so the linker picks these for the whole module, C and Rust alike, in any crate that links
//! `opfs-vfs` with the `sqlite` feature — no compiler flags needed. They exist only where the
//! bulk-memory feature is enabled (Rust's default for the target): without it the
//! `copy`/`write_bytes` below would lower to calls to the very symbols being defined.
//!
//! The C contracts are the standard ones: `memcpy` — non-overlapping; `memmove` — may overlap;
//! `memset` — the byte is `c`'s low byte; each returns `dest`. `memory.copy` has `memmove`
//! semantics, so one instruction serves both; a zero length is a no-op for any pointer.

use std::ffi::{c_int, c_void};

/// C `memcpy`: copies `n` bytes from `src` to `dest` (which must not overlap) and returns `dest`.
///
/// # Safety
/// The C contract: `src` is valid for reads and `dest` for writes of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // Safety: the caller's C contract (valid ranges of `n` bytes). `ptr::copy` is lowered to one
    // `memory.copy` instruction (bulk memory is enabled: the module is cfg-gated on it), which
    // also tolerates overlap, so a caller that breaks memcpy's no-overlap rule is still safe.
    unsafe { std::ptr::copy(src.cast::<u8>(), dest.cast::<u8>(), n) };
    dest
}

/// C `memmove`: copies `n` bytes from `src` to `dest` (they may overlap) and returns `dest`.
///
/// # Safety
/// The C contract: `src` is valid for reads and `dest` for writes of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memmove(dest: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    // Safety: the caller's C contract; `ptr::copy` allows overlap (one `memory.copy`).
    unsafe { std::ptr::copy(src.cast::<u8>(), dest.cast::<u8>(), n) };
    dest
}

/// C `memset`: sets `n` bytes at `dest` to `c as u8` and returns `dest`.
///
/// # Safety
/// The C contract: `dest` is valid for writes of `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memset(dest: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    // C converts `c` to `unsigned char`: its low byte.
    let [byte, ..] = c.to_le_bytes();
    // Safety: the caller's C contract; lowered to one `memory.fill`.
    unsafe { std::ptr::write_bytes(dest.cast::<u8>(), byte, n) };
    dest
}
