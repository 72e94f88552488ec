//! The filesystem lifecycle: N files × S bytes through every phase, timed phase by phase.
//!
//! One run ([`run_once`]), from a wiped state:
//!
//! | phase | what the harness calls | ours ([`VolumeBackend`]) | baseline (one file per file) |
//! |---|---|---|---|
//! | (prepare, untimed) | `prepare` | remove the volume's files | remove the directory |
//! | mount | `mount` | open the physical files, `Volume::mount` | open the directory, open every file in it (none yet) |
//! | create | N × `create`, `commit` | `Volume::create` each; `commit()` | create + open a handle per file |
//! | write | N × `write`, `commit` | one `write` per file; `commit()` | one write per handle |
//! | read | N × `read` (+ verify), `commit` | one `read` per file | one read per handle |
//! | rename | N × `rename`, `commit` | `Volume::rename`; `commit()` | browser: `move()` or copy + `removeEntry`; native: `rename(2)` |
//! | delete | N/2 × `delete`, `commit` | `Volume::delete`; `commit()` | close + remove the file |
//! | flush | `flush` | `Volume::flush()` | `flush()` / `fsync` every handle |
//! | reopen | `unmount`, `mount` | `Volume::close` (flush + checkpoint), drop the storage, open + mount | close every handle, open the directory and every file in it again |
//! | verify | `list`, survivors × `read` | the N/2 survivors, listed and read back | same |
//! | (cleanup, untimed) | `cleanup` | remove everything | remove everything |
//!
//! Every phase of our volume ends with `commit()` (one transaction per phase; what a commit
//! waits for is the durability level's business, and is in the backend's label); the flush
//! phase calls `flush()`. Reads use a buffer one byte longer than the file, so a read also
//! proves the length without a size call. Any difference (bytes, length, the set of files
//! after reopen) is an [`FsError::Verify`], never a silent pass. File contents are generated
//! from a seed before the first phase, outside every timing.

use bench_results::sql::PhysicalCounters;
use bench_sql::backend::physical_counters;
use opfs_vfs::storage::{Storage, StorageError};
use opfs_vfs::{Volume, VolumeOptions};
use web_time::Instant;

use crate::config::{Level, LifecycleConfig, Mode};
use crate::result::{LifecycleRun, Phase, PhaseSample};
use crate::{ms_since, FsError};

/// Durability labels recorded in results: what a finished phase guarantees.
pub mod durability {
    pub use bench_sql::backend::durability::{RELAXED, STRICT};
    /// Our volume at `Durability::Balanced`.
    pub const BALANCED: &str =
        "crash of the tab may lose latest commits until flushed: balanced, flush on demand";
    /// The one-file-per-file baselines: each write is handed to the platform at once, nothing
    /// is flushed before the flush phase.
    pub const FILE_PER_FILE: &str =
        "written per call; power-loss safe only after the flush phase (flush every file)";

    /// The label of our volume at `level`.
    pub fn of(level: crate::config::Level) -> &'static str {
        match level {
            crate::config::Level::Strict => STRICT,
            crate::config::Level::Relaxed => RELAXED,
            crate::config::Level::Balanced => BALANCED,
        }
    }
}

/// The generated workload: names and contents of every file.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Bytes per file.
    pub file_size: usize,
    /// Content of file `i`.
    pub contents: Vec<Vec<u8>>,
}

/// SplitMix64 step (the same generator as bench-sql's and the vfs crash tests').
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Workload {
    /// Contents from `cfg.seed`: file `i` is SplitMix64 output seeded with `seed ^ i`, so no
    /// two files (and no file and a shifted copy of another) are alike.
    pub fn generate(cfg: &LifecycleConfig) -> Self {
        let size = cfg.file_size_bytes as usize;
        let contents = (0..u64::from(cfg.files))
            .map(|i| {
                let mut state = cfg.seed ^ i.wrapping_mul(0xD1B5_4A32_D192_ED03);
                let mut v = Vec::with_capacity(size + 8);
                while v.len() < size {
                    v.extend_from_slice(&splitmix(&mut state).to_le_bytes());
                }
                v.truncate(size);
                v
            })
            .collect();
        Self {
            file_size: size,
            contents,
        }
    }

    /// Number of files.
    pub fn files(&self) -> usize {
        self.contents.len()
    }

    /// Name of file `i` before the rename phase.
    pub fn name(i: usize) -> String {
        format!("file-{i:06}")
    }

    /// Name of file `i` after the rename phase.
    pub fn renamed(i: usize) -> String {
        format!("renamed-{i:06}")
    }

    /// Files deleted by the delete phase: the even ones (half, rounded up).
    pub fn deleted(&self) -> impl Iterator<Item = usize> {
        (0..self.files()).step_by(2)
    }

    /// Files left after the delete phase: the odd ones.
    pub fn survivors(&self) -> impl Iterator<Item = usize> {
        (1..self.files()).step_by(2)
    }

    /// Checks what a read returned for file `i` (`got` = the bytes read).
    fn check(&self, i: usize, name: &str, got: &[u8]) -> Result<(), FsError> {
        let want = &self.contents[i];
        if got.len() != want.len() {
            return Err(FsError::Verify(format!(
                "{name}: read {} bytes, expected {}",
                got.len(),
                want.len()
            )));
        }
        if let Some(at) = got.iter().zip(want).position(|(a, b)| a != b) {
            return Err(FsError::Verify(format!(
                "{name}: byte {at} is {:#04x}, expected {:#04x}",
                got[at], want[at]
            )));
        }
        Ok(())
    }
}

/// A place that holds many small files: the seam between the lifecycle and a storage.
///
/// Contract, for every implementation:
/// - [`prepare`](Self::prepare) leaves a fresh, empty, unmounted state; nothing from an earlier
///   run is visible afterwards. [`cleanup`](Self::cleanup) releases and removes everything and
///   must succeed after any failure.
/// - Between [`mount`](Self::mount) and [`unmount`](Self::unmount) the file operations work;
///   after `unmount` and another `mount`, exactly what was stored is visible.
/// - `create` makes an empty file (error if it exists); `write` writes at offset 0; `read`
///   reads from offset 0 into `buf` and returns the count (short only at end of file);
///   `rename` fails if the target exists; `delete` fails if the file does not exist.
/// - [`commit`](Self::commit) ends a phase's changes (a no-op where there are no
///   transactions); [`flush`](Self::flush) makes everything so far durable.
/// - [`list`](Self::list) returns every file name, sorted.
/// - [`counters`](Self::counters) are the physical calls since `prepare`, monotonic across
///   remounts, or `None` if the backend does not count.
///
/// Methods are `async` because browser backends await OPFS (directory handles, creating and
/// removing files); native ones are ready at once and run under [`bench_sql::block_on`].
/// Everything is single-threaded: futures are not `Send`.
#[allow(async_fn_in_trait)] // single-threaded by design: no `Send` bound wanted on the futures
pub trait FsBackend {
    /// Stable identifier used in results and filters (e.g. `ours-disk-strict`, `files-opfs`).
    fn name(&self) -> String;
    /// What holds the bytes (see [`crate::result::LifecycleBackend::storage`]).
    fn storage(&self) -> &'static str;
    /// What a finished phase guarantees (one of [`durability`]'s labels).
    fn durability(&self) -> &'static str;
    /// Our volume's buffer mode, `None` for a baseline.
    fn buffer_mode(&self) -> Option<Mode> {
        None
    }
    /// How renames were done, once known (baselines).
    fn rename_method(&self) -> Option<&'static str> {
        None
    }
    /// Wipes to a fresh, empty, unmounted state (not timed).
    async fn prepare(&mut self) -> Result<(), FsError>;
    /// Makes the stored files usable.
    async fn mount(&mut self) -> Result<(), FsError>;
    /// Creates an empty file.
    async fn create(&mut self, name: &str) -> Result<(), FsError>;
    /// Writes `data` at offset 0.
    async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError>;
    /// Reads from offset 0 into `buf`; returns the count.
    async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError>;
    /// Renames `from` to `to`.
    async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError>;
    /// Deletes a file.
    async fn delete(&mut self, name: &str) -> Result<(), FsError>;
    /// Ends the current phase's changes.
    async fn commit(&mut self) -> Result<(), FsError>;
    /// Makes everything so far durable.
    async fn flush(&mut self) -> Result<(), FsError>;
    /// Closes everything (cleanly: nothing committed is lost).
    async fn unmount(&mut self) -> Result<(), FsError>;
    /// Every file name, sorted.
    async fn list(&mut self) -> Result<Vec<String>, FsError>;
    /// Physical calls since `prepare`, if counted.
    fn counters(&self) -> Option<PhysicalCounters> {
        None
    }
    /// Releases and removes everything (not timed).
    async fn cleanup(&mut self) -> Result<(), FsError>;
}

/// Runs the lifecycle once on `backend`, from a fresh state, and cleans up (also after a
/// failure; the run's error wins over a cleanup error).
pub async fn run_once<B: FsBackend>(
    backend: &mut B,
    w: &Workload,
) -> Result<LifecycleRun, FsError> {
    let name = backend.name();
    backend
        .prepare()
        .await
        .map_err(|e| e.in_phase(&name, "prepare"))?;
    let out = phases(backend, w, &name).await;
    let cleaned = backend
        .cleanup()
        .await
        .map_err(|e| e.in_phase(&name, "cleanup"));
    let run = out?;
    cleaned?;
    Ok(run)
}

/// Times phases and takes counter deltas around them.
struct Recorder {
    phases: Vec<PhaseSample>,
    start: Instant,
    before: Option<PhysicalCounters>,
}

impl Recorder {
    fn begin<B: FsBackend>(&mut self, backend: &B) {
        self.before = backend.counters();
        self.start = Instant::now();
    }

    fn end<B: FsBackend>(&mut self, backend: &B, phase: Phase) {
        let ms = ms_since(self.start);
        let counters = match (self.before, backend.counters()) {
            (Some(b), Some(a)) => Some(a.since(&b)),
            _ => None,
        };
        self.phases.push(PhaseSample {
            phase,
            ms,
            counters,
        });
    }
}

async fn phases<B: FsBackend>(
    backend: &mut B,
    w: &Workload,
    name: &str,
) -> Result<LifecycleRun, FsError> {
    let n = w.files();
    let names: Vec<String> = (0..n).map(Workload::name).collect();
    let renamed: Vec<String> = (0..n).map(Workload::renamed).collect();
    let mut buf = vec![0u8; w.file_size + 1];
    let mut rec = Recorder {
        phases: Vec::with_capacity(Phase::ALL.len()),
        start: Instant::now(),
        before: None,
    };
    let at = |phase: Phase| move |e: FsError| e.in_phase(name, phase);

    rec.begin(backend);
    backend.mount().await.map_err(at(Phase::Mount))?;
    rec.end(backend, Phase::Mount);

    rec.begin(backend);
    for f in &names {
        backend.create(f).await.map_err(at(Phase::Create))?;
    }
    backend.commit().await.map_err(at(Phase::Create))?;
    rec.end(backend, Phase::Create);

    rec.begin(backend);
    for (f, data) in names.iter().zip(&w.contents) {
        backend.write(f, data).await.map_err(at(Phase::Write))?;
    }
    backend.commit().await.map_err(at(Phase::Write))?;
    rec.end(backend, Phase::Write);

    rec.begin(backend);
    for (i, f) in names.iter().enumerate() {
        let got = backend.read(f, &mut buf).await.map_err(at(Phase::Read))?;
        w.check(i, f, &buf[..got]).map_err(at(Phase::Read))?;
    }
    backend.commit().await.map_err(at(Phase::Read))?;
    rec.end(backend, Phase::Read);

    rec.begin(backend);
    for (from, to) in names.iter().zip(&renamed) {
        backend.rename(from, to).await.map_err(at(Phase::Rename))?;
    }
    backend.commit().await.map_err(at(Phase::Rename))?;
    rec.end(backend, Phase::Rename);

    rec.begin(backend);
    for i in w.deleted() {
        backend
            .delete(&renamed[i])
            .await
            .map_err(at(Phase::Delete))?;
    }
    backend.commit().await.map_err(at(Phase::Delete))?;
    rec.end(backend, Phase::Delete);

    rec.begin(backend);
    backend.flush().await.map_err(at(Phase::Flush))?;
    rec.end(backend, Phase::Flush);

    rec.begin(backend);
    backend.unmount().await.map_err(at(Phase::Reopen))?;
    backend.mount().await.map_err(at(Phase::Reopen))?;
    rec.end(backend, Phase::Reopen);

    rec.begin(backend);
    let listed = backend.list().await.map_err(at(Phase::Verify))?;
    let mut expected: Vec<&str> = w.survivors().map(|i| renamed[i].as_str()).collect();
    expected.sort_unstable();
    if listed != expected {
        let missing = expected
            .iter()
            .filter(|e| !listed.contains(&e.to_string()))
            .count();
        return Err(FsError::Verify(format!(
            "after reopen {} files are listed, expected the {} survivors ({missing} of them \
             missing; first listed: {:?})",
            listed.len(),
            expected.len(),
            listed.first()
        ))
        .in_phase(name, Phase::Verify));
    }
    for i in w.survivors() {
        let f = &renamed[i];
        let got = backend.read(f, &mut buf).await.map_err(at(Phase::Verify))?;
        w.check(i, f, &buf[..got]).map_err(at(Phase::Verify))?;
    }
    rec.end(backend, Phase::Verify);

    let total_ms = rec.phases.iter().map(|p| p.ms).sum();
    Ok(LifecycleRun {
        round: None,
        phases: rec.phases,
        total_ms,
        repeats_ms: Vec::new(),
    })
}

// -------------------------------------------------------------------------------------------
// Our volume
// -------------------------------------------------------------------------------------------

/// Where a [`VolumeBackend`] gets its physical files: opened fresh for every mount, removed by
/// `wipe`.
#[allow(async_fn_in_trait)] // single-threaded, as `FsBackend`
pub trait StorageFactory {
    /// The storage it opens.
    type Storage: Storage;
    /// What it is, for results (`std-file`, `opfs`, `memory`).
    fn kind(&self) -> &'static str;
    /// Opens (creating if needed) the physical files.
    async fn open(&mut self) -> Result<Self::Storage, StorageError>;
    /// Gets back the storage of an unmounted volume (dropping it closes OPFS handles; an
    /// in-memory factory keeps it for the next `open`).
    fn release(&mut self, storage: Self::Storage) {
        drop(storage);
    }
    /// Removes the physical files (nothing may hold them open).
    async fn wipe(&mut self) -> Result<(), StorageError>;
}

/// Our [`Volume`] over storages from a [`StorageFactory`].
#[derive(Debug)]
pub struct VolumeBackend<F: StorageFactory> {
    factory: F,
    mode: Mode,
    level: Level,
    opts: VolumeOptions,
    volume: Option<Volume<F::Storage>>,
    /// Counters of earlier mounts since `prepare` (a mount starts its counters at zero).
    earlier: PhysicalCounters,
}

impl<F: StorageFactory> VolumeBackend<F> {
    /// Our volume in `mode` at `level`, otherwise with default options.
    pub fn new(factory: F, mode: Mode, level: Level) -> Self {
        Self {
            factory,
            mode,
            level,
            opts: VolumeOptions {
                buffer_mode: crate::config::buffer_mode(mode),
                durability: level.into(),
                ..VolumeOptions::default()
            },
            volume: None,
            earlier: PhysicalCounters::default(),
        }
    }

    fn volume(&mut self) -> Result<&mut Volume<F::Storage>, FsError> {
        self.volume
            .as_mut()
            .ok_or_else(|| FsError::Unsupported("the volume is not mounted".to_owned()))
    }
}

fn add(a: PhysicalCounters, b: PhysicalCounters) -> PhysicalCounters {
    PhysicalCounters {
        flushes: a.flushes + b.flushes,
        writes: a.writes + b.writes,
        bytes_written: a.bytes_written + b.bytes_written,
        flushed_bytes: a.flushed_bytes + b.flushed_bytes,
        reads: a.reads + b.reads,
        read_ns: a.read_ns + b.read_ns,
        write_ns: a.write_ns + b.write_ns,
        flush_ns: a.flush_ns + b.flush_ns,
        other_ns: a.other_ns + b.other_ns,
    }
}

impl<F: StorageFactory> FsBackend for VolumeBackend<F> {
    fn name(&self) -> String {
        format!("ours-{}-{}", self.mode.as_str(), self.level.as_str())
    }

    fn storage(&self) -> &'static str {
        self.factory.kind()
    }

    fn durability(&self) -> &'static str {
        durability::of(self.level)
    }

    fn buffer_mode(&self) -> Option<Mode> {
        Some(self.mode)
    }

    async fn prepare(&mut self) -> Result<(), FsError> {
        if let Some(v) = self.volume.take() {
            self.factory.release(v.into_storage_unflushed());
        }
        self.factory.wipe().await?;
        self.earlier = PhysicalCounters::default();
        Ok(())
    }

    async fn mount(&mut self) -> Result<(), FsError> {
        if self.volume.is_some() {
            return Err(FsError::Unsupported("already mounted".to_owned()));
        }
        let storage = self.factory.open().await?;
        self.volume = Some(Volume::mount(storage, self.opts.clone())?);
        Ok(())
    }

    async fn create(&mut self, name: &str) -> Result<(), FsError> {
        self.volume()?.create(name)?;
        Ok(())
    }

    async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
        let v = self.volume()?;
        let id = v.open(name)?;
        v.write(id, 0, data)?;
        Ok(())
    }

    async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
        let v = self.volume()?;
        let id = v.open(name)?;
        Ok(v.read(id, 0, buf)?)
    }

    async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        self.volume()?.rename(from, to)?;
        Ok(())
    }

    async fn delete(&mut self, name: &str) -> Result<(), FsError> {
        self.volume()?.delete(name)?;
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), FsError> {
        self.volume()?.commit()?;
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FsError> {
        self.volume()?.flush()?;
        Ok(())
    }

    async fn unmount(&mut self) -> Result<(), FsError> {
        let mut v = self
            .volume
            .take()
            .ok_or_else(|| FsError::Unsupported("the volume is not mounted".to_owned()))?;
        // `Volume::close` is flush + checkpoint (if the options say so and the log is not
        // empty). Do both here so that their physical calls are counted; the `close` after
        // them then finds nothing to do.
        v.flush()?;
        if self.opts.checkpoint_on_close && v.stats().log_bytes > 0 {
            v.checkpoint()?;
        }
        self.earlier = add(self.earlier, physical_counters(&v.counters()));
        let storage = v.close()?;
        self.factory.release(storage);
        Ok(())
    }

    async fn list(&mut self) -> Result<Vec<String>, FsError> {
        // `Volume::list` is sorted by name.
        Ok(self.volume()?.list().into_iter().map(|m| m.name).collect())
    }

    fn counters(&self) -> Option<PhysicalCounters> {
        let now = self
            .volume
            .as_ref()
            .map(|v| physical_counters(&v.counters()))
            .unwrap_or_default();
        Some(add(self.earlier, now))
    }

    async fn cleanup(&mut self) -> Result<(), FsError> {
        if let Some(v) = self.volume.take() {
            self.factory.release(v.into_storage_unflushed());
        }
        self.factory.wipe().await?;
        Ok(())
    }
}

/// An in-memory [`StorageFactory`]: the storage survives unmounts in the factory. Measures the
/// engine's CPU cost without any I/O; used by tests.
#[derive(Debug, Default)]
pub struct MemoryFactory {
    kept: Option<opfs_vfs::storage::MemoryStorage>,
}

impl StorageFactory for MemoryFactory {
    type Storage = opfs_vfs::storage::MemoryStorage;

    fn kind(&self) -> &'static str {
        "memory"
    }

    async fn open(&mut self) -> Result<Self::Storage, StorageError> {
        Ok(self.kept.take().unwrap_or_default())
    }

    fn release(&mut self, storage: Self::Storage) {
        self.kept = Some(storage);
    }

    async fn wipe(&mut self) -> Result<(), StorageError> {
        self.kept = None;
        Ok(())
    }
}

// -------------------------------------------------------------------------------------------
// Two kinds of backend in one list
// -------------------------------------------------------------------------------------------

/// Either our volume or a baseline, so that one list (and one runner call) holds both.
#[derive(Debug)]
pub enum Either<A, B> {
    /// Our volume.
    Ours(A),
    /// A baseline.
    Baseline(B),
}

macro_rules! either {
    ($self:ident, $b:ident => $e:expr) => {
        match $self {
            Either::Ours($b) => $e,
            Either::Baseline($b) => $e,
        }
    };
}

impl<A: FsBackend, B: FsBackend> FsBackend for Either<A, B> {
    fn name(&self) -> String {
        either!(self, b => b.name())
    }
    fn storage(&self) -> &'static str {
        either!(self, b => b.storage())
    }
    fn durability(&self) -> &'static str {
        either!(self, b => b.durability())
    }
    fn buffer_mode(&self) -> Option<Mode> {
        either!(self, b => b.buffer_mode())
    }
    fn rename_method(&self) -> Option<&'static str> {
        either!(self, b => b.rename_method())
    }
    async fn prepare(&mut self) -> Result<(), FsError> {
        either!(self, b => b.prepare().await)
    }
    async fn mount(&mut self) -> Result<(), FsError> {
        either!(self, b => b.mount().await)
    }
    async fn create(&mut self, name: &str) -> Result<(), FsError> {
        either!(self, b => b.create(name).await)
    }
    async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
        either!(self, b => b.write(name, data).await)
    }
    async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
        either!(self, b => b.read(name, buf).await)
    }
    async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        either!(self, b => b.rename(from, to).await)
    }
    async fn delete(&mut self, name: &str) -> Result<(), FsError> {
        either!(self, b => b.delete(name).await)
    }
    async fn commit(&mut self) -> Result<(), FsError> {
        either!(self, b => b.commit().await)
    }
    async fn flush(&mut self) -> Result<(), FsError> {
        either!(self, b => b.flush().await)
    }
    async fn unmount(&mut self) -> Result<(), FsError> {
        either!(self, b => b.unmount().await)
    }
    async fn list(&mut self) -> Result<Vec<String>, FsError> {
        either!(self, b => b.list().await)
    }
    fn counters(&self) -> Option<PhysicalCounters> {
        either!(self, b => b.counters())
    }
    async fn cleanup(&mut self) -> Result<(), FsError> {
        either!(self, b => b.cleanup().await)
    }
}

/// Our volume in every buffer mode × durability level of `cfg`, each from `factory(name)`
/// (`name` = the backend's name, for a per-backend directory).
pub fn volume_backends<F: StorageFactory>(
    cfg: &LifecycleConfig,
    mut factory: impl FnMut(&str) -> F,
) -> Vec<VolumeBackend<F>> {
    let mut out = Vec::new();
    for &mode in &cfg.buffer_modes {
        for &level in &cfg.durabilities {
            let name = format!("ours-{}-{}", mode.as_str(), level.as_str());
            out.push(VolumeBackend::new(factory(&name), mode, level));
        }
    }
    out
}

/// Whether `name` passes the `only` filter of `cfg` (empty: everything does).
pub fn selected(cfg: &LifecycleConfig, name: &str) -> bool {
    cfg.only.is_empty() || cfg.only.iter().any(|f| name.contains(f.as_str()))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn workload_is_deterministic_and_distinct() {
        let cfg = LifecycleConfig {
            files: 300,
            file_size_bytes: 1000,
            ..LifecycleConfig::default()
        };
        let a = Workload::generate(&cfg);
        let b = Workload::generate(&cfg);
        assert_eq!(a.contents, b.contents);
        assert_eq!(a.files(), 300);
        assert!(a.contents.iter().all(|c| c.len() == 1000));
        let mut sorted = a.contents.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 300, "every file differs");
        assert_eq!(a.deleted().count() + a.survivors().count(), 300);
        assert_eq!(a.survivors().count(), 150);
        assert!(a.check(3, "x", &a.contents[3]).is_ok());
        assert!(matches!(
            a.check(3, "x", &a.contents[4]),
            Err(FsError::Verify(_))
        ));
        assert!(matches!(
            a.check(3, "x", &a.contents[3][1..]),
            Err(FsError::Verify(_))
        ));
    }

    #[test]
    fn lifecycle_on_memory_storage_counts_calls() {
        let cfg = LifecycleConfig {
            files: 50,
            ..LifecycleConfig::default()
        };
        let w = Workload::generate(&cfg);
        for mut b in volume_backends(&cfg, |_| MemoryFactory::default()) {
            let run = bench_sql::block_on(run_once(&mut b, &w)).unwrap();
            assert_eq!(run.phases.len(), Phase::ALL.len());
            let c = |p| run.phase(p).unwrap().counters.unwrap();
            // Strict: one commit with a flush per mutating phase; the write phase writes at
            // least every byte once.
            assert!(c(Phase::Create).flushes >= 1);
            assert!(c(Phase::Write).bytes_written >= 50 * 1024);
            assert_eq!(c(Phase::Read).writes, 0);
            assert!(c(Phase::Reopen).reads >= 1, "mount reads the superblocks");
        }
    }
}
