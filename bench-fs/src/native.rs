//! Native backends and runner: our volume on [`StdStorage`] and the one-`std::fs`-file-per-file
//! baseline, each in its own directory under a temporary directory. The raw OPFS workloads do
//! not exist natively (they measure the browser).
//!
//! Natively every future is ready at its first poll; [`run_native`] drives them with
//! [`bench_sql::block_on`].

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use opfs_vfs::storage::{StdStorage, StorageError};

use crate::config::Config;
use crate::lifecycle::{
    durability, selected, volume_backends, Either, FsBackend, StorageFactory, VolumeBackend,
};
use crate::result::FsResult;
use crate::runner::{run_lifecycle_suite, Tally};
use crate::{FsError, Progress};

/// Our volume's physical files in a native directory.
#[derive(Debug)]
pub struct StdFactory {
    dir: PathBuf,
}

impl StdFactory {
    /// Physical files in `dir` (created at mount, removed by wipe).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }
}

fn remove_dir(dir: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

impl StorageFactory for StdFactory {
    type Storage = StdStorage;

    fn kind(&self) -> &'static str {
        "std-file"
    }

    async fn open(&mut self) -> Result<StdStorage, StorageError> {
        StdStorage::open(&self.dir)
    }

    async fn wipe(&mut self) -> Result<(), StorageError> {
        remove_dir(&self.dir).map_err(|e| StorageError::Platform {
            op: "remove_dir_all",
            name: format!("{:?}", e.kind()),
            message: format!("{}: {e}", self.dir.display()),
        })
    }
}

/// The native baseline: one `std::fs::File` per logical file in one directory, every file kept
/// open while mounted (as the browser baseline keeps a sync access handle per file).
#[derive(Debug)]
pub struct StdFilesBackend {
    dir: PathBuf,
    files: HashMap<String, File>,
}

impl StdFilesBackend {
    /// Files in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            files: HashMap::new(),
        }
    }

    fn file(&self, name: &str) -> Result<&File, FsError> {
        self.files.get(name).ok_or_else(|| {
            FsError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{name} is not open"),
            ))
        })
    }

    fn open_rw(path: &Path, create_new: bool) -> io::Result<File> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(create_new)
            .open(path)
    }
}

impl FsBackend for StdFilesBackend {
    fn name(&self) -> String {
        "files-std".to_owned()
    }

    fn storage(&self) -> &'static str {
        "std-file-per-file"
    }

    fn durability(&self) -> &'static str {
        durability::FILE_PER_FILE
    }

    fn rename_method(&self) -> Option<&'static str> {
        Some("rename(2)")
    }

    async fn prepare(&mut self) -> Result<(), FsError> {
        self.files.clear();
        remove_dir(&self.dir)?;
        Ok(())
    }

    async fn mount(&mut self) -> Result<(), FsError> {
        std::fs::create_dir_all(&self.dir)?;
        for entry in std::fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let file = Self::open_rw(&entry.path(), false)?;
            self.files.insert(name, file);
        }
        Ok(())
    }

    async fn create(&mut self, name: &str) -> Result<(), FsError> {
        let file = Self::open_rw(&self.dir.join(name), true)?;
        self.files.insert(name.to_owned(), file);
        Ok(())
    }

    async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
        self.file(name)?.write_all_at(data, 0)?;
        Ok(())
    }

    async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
        let file = self.file(name)?;
        let mut done = 0;
        while done < buf.len() {
            match file.read_at(&mut buf[done..], done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(done)
    }

    async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        let target = self.dir.join(to);
        if target.exists() {
            return Err(FsError::Io(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{to} exists"),
            )));
        }
        std::fs::rename(self.dir.join(from), target)?;
        // The open file follows the rename (same inode).
        let file = self
            .files
            .remove(from)
            .ok_or_else(|| FsError::Io(io::Error::new(io::ErrorKind::NotFound, from.to_owned())))?;
        self.files.insert(to.to_owned(), file);
        Ok(())
    }

    async fn delete(&mut self, name: &str) -> Result<(), FsError> {
        drop(self.files.remove(name));
        std::fs::remove_file(self.dir.join(name))?;
        Ok(())
    }

    async fn commit(&mut self) -> Result<(), FsError> {
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FsError> {
        for file in self.files.values() {
            file.sync_data()?;
        }
        Ok(())
    }

    async fn unmount(&mut self) -> Result<(), FsError> {
        self.files.clear();
        Ok(())
    }

    async fn list(&mut self) -> Result<Vec<String>, FsError> {
        let mut names: Vec<String> = self.files.keys().cloned().collect();
        names.sort_unstable();
        Ok(names)
    }

    async fn cleanup(&mut self) -> Result<(), FsError> {
        self.files.clear();
        remove_dir(&self.dir)?;
        Ok(())
    }
}

/// A native lifecycle backend.
pub type NativeBackend = Either<VolumeBackend<StdFactory>, StdFilesBackend>;

/// Every native backend `cfg` selects, each in its own directory under `base`.
pub fn native_backends(cfg: &crate::config::LifecycleConfig, base: &Path) -> Vec<NativeBackend> {
    let mut out: Vec<NativeBackend> = volume_backends(cfg, |name| StdFactory::new(base.join(name)))
        .into_iter()
        .map(Either::Ours)
        .collect();
    if cfg.baseline {
        out.push(Either::Baseline(StdFilesBackend::new(
            base.join("files-std"),
        )));
    }
    out.retain(|b| selected(cfg, &b.name()));
    out
}

/// Runs the lifecycle natively as `config` says (the raw workloads are browser-only and are
/// skipped). Files live in a temporary directory under `config.dir` (or the system's temp
/// directory), removed afterwards. The samples come back unsummarized; a backend that failed
/// has its `error` set.
pub fn run_native(
    config: &Config,
    progress: &mut dyn FnMut(Progress),
) -> Result<FsResult, FsError> {
    let base = if config.dir.is_empty() {
        tempfile::Builder::new().prefix("bench-fs-").tempdir()?
    } else {
        std::fs::create_dir_all(&config.dir)?;
        tempfile::Builder::new()
            .prefix("bench-fs-")
            .tempdir_in(&config.dir)?
    };
    let lifecycle = match &config.lifecycle {
        Some(cfg) => {
            let mut backends = native_backends(cfg, base.path());
            if backends.is_empty() {
                return Err(FsError::Unsupported(format!(
                    "no native backend matches {:?}",
                    cfg.only
                )));
            }
            let units = (config.warmup + config.runs)
                * u32::try_from(backends.len()).unwrap_or(0)
                * cfg.repeats.max(1);
            let mut tally = Tally {
                done: 0,
                total: units,
            };
            Some(bench_sql::block_on(run_lifecycle_suite(
                &mut backends,
                cfg,
                config.runs,
                config.warmup,
                config.order_seed,
                &mut tally,
                progress,
            )))
        }
        None => None,
    };
    Ok(FsResult {
        lifecycle,
        raw: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Level, LifecycleConfig, Mode};
    use crate::result::Phase;

    /// The lifecycle on 50 files over every native backend (both modes, every durability
    /// level, the baseline), once: every verification passes and every figure is sane.
    #[test]
    fn lifecycle_on_every_native_backend() {
        let config = Config {
            runs: 1,
            warmup: 0,
            lifecycle: Some(LifecycleConfig {
                files: 50,
                buffer_modes: vec![Mode::Disk, Mode::Memory],
                durabilities: vec![Level::Strict, Level::Relaxed, Level::Balanced],
                ..LifecycleConfig::default()
            }),
            raw: None,
            dir: String::new(),
            order_seed: 1,
        };
        let mut seen = Vec::new();
        let result = run_native(&config, &mut |p| seen.push(p)).unwrap();
        let suite = result.lifecycle.as_ref().unwrap();
        let names: Vec<&str> = suite.backends.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names.len(), 7, "{names:?}");
        assert!(names.contains(&"files-std"));
        assert!(names.contains(&"ours-memory-balanced"));
        assert_eq!(seen.len(), 7);
        assert_eq!(seen.last().unwrap().done, 7);
        for b in &suite.backends {
            assert_eq!(b.runs.len(), 1);
            let run = &b.runs[0];
            assert_eq!(
                run.phases.iter().map(|p| p.phase).collect::<Vec<_>>(),
                Phase::ALL
            );
            for p in &run.phases {
                assert!(p.ms.is_finite() && p.ms >= 0.0, "{} {}", b.name, p.phase);
            }
            assert!(run.total_ms > 0.0);
            let counted = b.name.starts_with("ours");
            assert_eq!(run.phases[0].counters.is_some(), counted, "{}", b.name);
            if counted {
                let c = |p: Phase| run.phase(p).unwrap().counters.unwrap();
                assert!(c(Phase::Write).bytes_written + c(Phase::Flush).bytes_written >= 50 * 1024);
                assert!(c(Phase::Flush).flushes >= 1 || b.name.ends_with("strict"));
                assert!(c(Phase::Reopen).reads >= 1);
            }
            assert!(b.error.is_none(), "{:?}", b.error);
            assert_eq!(run.round, Some(0));
        }
        assert_eq!(suite.rounds.len(), 1);
        assert_eq!(suite.rounds[0].order.len(), 7);
    }

    #[test]
    fn filter_and_empty_selection() {
        let cfg = LifecycleConfig {
            only: vec!["files".to_owned()],
            ..LifecycleConfig::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let b = native_backends(&cfg, dir.path());
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].name(), "files-std");
        let config = Config {
            lifecycle: Some(LifecycleConfig {
                only: vec!["nothing-matches".to_owned()],
                ..LifecycleConfig::default()
            }),
            ..Config::smoke()
        };
        assert!(matches!(
            run_native(&config, &mut |_| {}),
            Err(FsError::Unsupported(_))
        ));
    }

    /// A baseline that loses a file is caught by the verification.
    #[test]
    fn verification_failure_is_an_error() {
        /// Loses a byte if `.1`.
        struct Lossy(StdFilesBackend, bool);
        impl FsBackend for Lossy {
            fn name(&self) -> String {
                if self.1 { "lossy" } else { "intact" }.into()
            }
            fn storage(&self) -> &'static str {
                "test"
            }
            fn durability(&self) -> &'static str {
                "none"
            }
            async fn prepare(&mut self) -> Result<(), FsError> {
                self.0.prepare().await
            }
            async fn mount(&mut self) -> Result<(), FsError> {
                self.0.mount().await
            }
            async fn create(&mut self, name: &str) -> Result<(), FsError> {
                self.0.create(name).await
            }
            async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
                // Drops the last byte of one file.
                let data = if self.1 && name == "file-000007" {
                    &data[..data.len() - 1]
                } else {
                    data
                };
                self.0.write(name, data).await
            }
            async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
                self.0.read(name, buf).await
            }
            async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
                self.0.rename(from, to).await
            }
            async fn delete(&mut self, name: &str) -> Result<(), FsError> {
                self.0.delete(name).await
            }
            async fn commit(&mut self) -> Result<(), FsError> {
                Ok(())
            }
            async fn flush(&mut self) -> Result<(), FsError> {
                self.0.flush().await
            }
            async fn unmount(&mut self) -> Result<(), FsError> {
                self.0.unmount().await
            }
            async fn list(&mut self) -> Result<Vec<String>, FsError> {
                self.0.list().await
            }
            async fn cleanup(&mut self) -> Result<(), FsError> {
                self.0.cleanup().await
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let mut b = Lossy(StdFilesBackend::new(dir.path().join("x")), true);
        let w = crate::lifecycle::Workload::generate(&LifecycleConfig {
            files: 10,
            ..LifecycleConfig::default()
        });
        let err = bench_sql::block_on(crate::lifecycle::run_once(&mut b, &w)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("lossy: read: verification failed: file-000007"),
            "{text}"
        );
        assert!(
            !dir.path().join("x").exists(),
            "cleaned up after the failure"
        );

        // In the round loop: the failure is recorded, the other backend runs every round.
        let cfg = LifecycleConfig {
            files: 10,
            ..LifecycleConfig::default()
        };
        let mut backends = vec![
            Lossy(StdFilesBackend::new(dir.path().join("a")), true),
            Lossy(StdFilesBackend::new(dir.path().join("b")), false),
        ];
        let mut tally = crate::runner::Tally::default();
        let mut reports = Vec::new();
        let suite = bench_sql::block_on(crate::runner::run_lifecycle_suite(
            &mut backends,
            &cfg,
            3,
            1,
            7,
            &mut tally,
            &mut |p| reports.push(p),
        ));
        let (lossy, intact) = (&suite.backends[0], &suite.backends[1]);
        assert!(
            lossy.error.as_deref().unwrap().contains("round 1"),
            "{:?}",
            lossy.error
        );
        assert!(lossy.runs.is_empty() && lossy.warmup_runs.is_empty());
        assert_eq!((intact.warmup_runs.len(), intact.runs.len()), (1, 3));
        assert!(intact.error.is_none());
        assert_eq!(suite.rounds.len(), 4);
        assert!(suite.rounds[1..].iter().all(|r| r.order == ["intact"]));
        assert_eq!(reports.iter().filter(|p| p.ms.is_nan()).count(), 1);
    }
}
