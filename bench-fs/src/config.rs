//! What to run: suites, sizes, backends and repetitions. Serializable, so a web page can pass it
//! as JSON and every result records it.
//!
//! Presets: [`Config::default`] is the full-size run (lifecycle on 1,000 files × 1 KiB, raw
//! workloads at the seed page's "quick" scale, 1 warm-up + 5 runs); [`Config::phone`] uses 100
//! files; [`Config::smoke`] is small enough for CI (and is a check that everything works, not a
//! result).

use serde::{Deserialize, Serialize};

/// Default file count of the lifecycle (issue 5).
pub const DEFAULT_FILES: u32 = 1_000;
/// File count of the lifecycle on phones.
pub const PHONE_FILES: u32 = 100;
/// Default bytes per file.
pub const DEFAULT_FILE_SIZE: u32 = 1024;
/// Seed of the file contents.
pub const DEFAULT_SEED: u64 = 20_230_411;
/// Default calls of the small (4 KiB) raw workloads (`N`).
pub const DEFAULT_SMALL_CALLS: u32 = 2_000;
/// Default calls of the flush and new-file raw workloads (`M`).
pub const DEFAULT_CYCLE_CALLS: u32 = 200;
/// Bytes per small raw call.
pub const SMALL_BYTES: u32 = 4096;
/// Chunk sizes of the chunked-append workloads.
pub const CHUNK_BYTES: [u32; 2] = [64 << 10, 1 << 20];
/// OPFS directory (browser) under which every backend and the raw workloads get their own
/// subdirectory when [`Config::dir`] is empty; wiped before and after use.
pub const DEFAULT_DIR: &str = "bench-fs";

pub use bench_results::fs::Mode;

/// [`opfs_vfs::BufferMode`] of a [`Mode`].
pub fn buffer_mode(m: Mode) -> opfs_vfs::BufferMode {
    match m {
        Mode::Disk => opfs_vfs::BufferMode::Disk,
        Mode::Memory => opfs_vfs::BufferMode::Memory,
    }
}

/// Our volume's durability level (mirrors [`opfs_vfs::Durability`], with serde).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// [`opfs_vfs::Durability::Strict`].
    Strict,
    /// [`opfs_vfs::Durability::Relaxed`].
    Relaxed,
    /// [`opfs_vfs::Durability::Balanced`].
    Balanced,
}

impl Level {
    /// `"strict"`, `"relaxed"` or `"balanced"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Strict => "strict",
            Level::Relaxed => "relaxed",
            Level::Balanced => "balanced",
        }
    }
}

impl From<Level> for opfs_vfs::Durability {
    fn from(l: Level) -> Self {
        match l {
            Level::Strict => opfs_vfs::Durability::Strict,
            Level::Relaxed => opfs_vfs::Durability::Relaxed,
            Level::Balanced => opfs_vfs::Durability::Balanced,
        }
    }
}

/// How the browser baseline renames a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RenameMethod {
    /// `FileSystemFileHandle.move()` where the browser has it, else copy.
    #[default]
    Auto,
    /// `move()`; an error where it is missing.
    Move,
    /// Copy into a new file, then `removeEntry()` the old one.
    Copy,
}

/// The filesystem lifecycle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LifecycleConfig {
    /// Logical files created (half are deleted).
    pub files: u32,
    /// Bytes per file.
    pub file_size_bytes: u32,
    /// Seed of the file contents.
    pub seed: u64,
    /// Our volume in these buffer modes ...
    pub buffer_modes: Vec<Mode>,
    /// ... at these durability levels (every combination runs).
    pub durabilities: Vec<Level>,
    /// Run the one-file-per-file baseline too.
    pub baseline: bool,
    /// How the browser baseline renames.
    #[serde(default)]
    pub baseline_rename: RenameMethod,
    /// Only backends whose name contains one of these (empty: all).
    #[serde(default)]
    pub only: Vec<String>,
    /// Runs of the lifecycle per backend and round (at least 1); the round's sample is the
    /// fastest ([`crate::runner::fastest_run`]). Backends whose lifecycle takes 250 ms or more
    /// run once ([`crate::runner::REPEAT_BELOW_MS`]).
    #[serde(default = "one")]
    pub repeats: u32,
}

fn one() -> u32 {
    1
}

impl Default for LifecycleConfig {
    fn default() -> Self {
        Self {
            files: DEFAULT_FILES,
            file_size_bytes: DEFAULT_FILE_SIZE,
            seed: DEFAULT_SEED,
            buffer_modes: vec![Mode::Disk, Mode::Memory],
            durabilities: vec![Level::Strict],
            baseline: true,
            baseline_rename: RenameMethod::Auto,
            only: Vec::new(),
            repeats: 1,
        }
    }
}

/// The raw OPFS per-call workloads (browser only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RawConfig {
    /// `N`: calls of small-append and small-overwrite; the chunked appends write the same
    /// total bytes.
    pub small_calls: u32,
    /// `M`: append+flush pairs, and files of the new-file cycle.
    pub cycle_calls: u32,
    /// Bytes per small call.
    pub small_bytes: u32,
    /// One chunked-append workload per chunk size.
    pub chunk_bytes: Vec<u32>,
}

impl Default for RawConfig {
    fn default() -> Self {
        Self {
            small_calls: DEFAULT_SMALL_CALLS,
            cycle_calls: DEFAULT_CYCLE_CALLS,
            small_bytes: SMALL_BYTES,
            chunk_bytes: CHUNK_BYTES.to_vec(),
        }
    }
}

/// A benchmark invocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Measured runs (each from a wiped state).
    pub runs: u32,
    /// Warm-up runs before them, excluded from statistics (kept in the result).
    pub warmup: u32,
    /// The lifecycle, or `None` to skip it.
    pub lifecycle: Option<LifecycleConfig>,
    /// The raw workloads, or `None` to skip them (ignored natively: they measure OPFS).
    pub raw: Option<RawConfig>,
    /// Browser: the OPFS directory everything runs in, wiped before and after (empty:
    /// [`DEFAULT_DIR`]). Native: the directory under which a temporary directory is made
    /// (empty: the system's temp dir; use a real disk, not tmpfs).
    pub dir: String,
    /// Seed of the round orders (each round runs every lifecycle backend once, shuffled).
    #[serde(default = "default_order_seed")]
    pub order_seed: u64,
}

fn default_order_seed() -> u64 {
    bench_results::stats::ORDER_SEED
}

impl Default for Config {
    fn default() -> Self {
        Self {
            runs: 5,
            warmup: 1,
            lifecycle: Some(LifecycleConfig::default()),
            raw: Some(RawConfig::default()),
            dir: String::new(),
            order_seed: default_order_seed(),
        }
    }
}

impl Config {
    /// Full size, but the lifecycle on [`PHONE_FILES`] files.
    pub fn phone() -> Self {
        let mut c = Self::default();
        if let Some(l) = &mut c.lifecycle {
            l.files = PHONE_FILES;
        }
        c
    }

    /// Tiny sizes, one run, no warm-up: proves that every suite works on every backend.
    pub fn smoke() -> Self {
        Self {
            runs: 1,
            warmup: 0,
            lifecycle: Some(LifecycleConfig {
                files: 20,
                ..LifecycleConfig::default()
            }),
            raw: Some(RawConfig {
                small_calls: 64,
                cycle_calls: 4,
                ..RawConfig::default()
            }),
            dir: String::new(),
            order_seed: default_order_seed(),
        }
    }
}
