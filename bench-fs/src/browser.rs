//! Browser backends and runner, for a dedicated worker in a secure context.
//!
//! - Our volume on [`OpfsStorage`] (two OPFS files, handles opened once per mount), in every
//!   buffer mode × durability level asked for.
//! - The hand-made baseline, [`OpfsFilesBackend`]: one OPFS file per logical file through the
//!   directory API, with a sync access handle kept open per file while mounted.
//!
//! [`run_browser`] runs the lifecycle on them and then the raw workloads ([`crate::raw`]), all
//! under one OPFS directory ([`Config::dir`]) that is wiped before and after.

use std::collections::HashMap;

use opfs_vfs::storage::{OpfsStorage, StorageError};
use web_sys::{FileSystemDirectoryHandle, FileSystemFileHandle};

use crate::config::{Config, LifecycleConfig, RenameMethod};
use crate::js::{self, SyncHandle};
use crate::lifecycle::{
    durability, selected, volume_backends, Either, FsBackend, StorageFactory, VolumeBackend,
};
use crate::result::FsResult;
use crate::runner::{run_lifecycle_suite, Tally};
use crate::{FsError, Progress};

/// Our volume's physical files in an OPFS directory.
#[derive(Debug)]
pub struct OpfsFactory {
    dir: String,
}

impl OpfsFactory {
    /// Physical files in the OPFS directory `dir` (a `/`-separated path).
    pub fn new(dir: impl Into<String>) -> Self {
        Self { dir: dir.into() }
    }
}

impl StorageFactory for OpfsFactory {
    type Storage = OpfsStorage;

    fn kind(&self) -> &'static str {
        "opfs"
    }

    async fn open(&mut self) -> Result<OpfsStorage, StorageError> {
        OpfsStorage::open(&self.dir).await
    }

    async fn wipe(&mut self) -> Result<(), StorageError> {
        OpfsStorage::remove_dir(&self.dir).await
    }
}

/// One file of the baseline: its handle (kept for `move()`) and its open sync access handle.
#[derive(Debug)]
struct OpenFile {
    file: FileSystemFileHandle,
    sync: SyncHandle,
}

/// The obvious hand-made alternative to our volume: one OPFS file per logical file.
///
/// - mount: open the directory, then every file in it (`getFileHandle` +
///   `createSyncAccessHandle` each); a sync access handle stays open per file while mounted;
/// - create: `getFileHandle({create: true})` + `createSyncAccessHandle()`;
/// - write / read: one call on the file's handle at offset 0;
/// - rename: `move()` where the browser has it (the lock forbids moving an open file: close
///   the handle, `move()`, open a new handle), else copy into a new file and `removeEntry()`
///   the old one; [`RenameMethod`] can force either, and the result records which was used;
/// - delete: `close()` + `removeEntry()`;
/// - flush: `flush()` on every handle;
/// - unmount: `close()` every handle.
#[derive(Debug)]
pub struct OpfsFilesBackend {
    path: String,
    rename: RenameMethod,
    used: Option<&'static str>,
    dir: Option<FileSystemDirectoryHandle>,
    files: HashMap<String, OpenFile>,
}

impl OpfsFilesBackend {
    /// Files in the OPFS directory `path`, renamed as `rename` says.
    pub fn new(path: impl Into<String>, rename: RenameMethod) -> Self {
        Self {
            path: path.into(),
            rename,
            used: None,
            dir: None,
            files: HashMap::new(),
        }
    }

    fn dir(&self) -> Result<&FileSystemDirectoryHandle, FsError> {
        self.dir
            .as_ref()
            .ok_or_else(|| FsError::Unsupported("the directory is not mounted".to_owned()))
    }

    fn open_file(&self, name: &str) -> Result<&OpenFile, FsError> {
        self.files.get(name).ok_or_else(|| FsError::Js {
            op: "lookup",
            name: "NotFoundError".to_owned(),
            message: format!("{name} is not open"),
        })
    }

    async fn open(&self, name: &str, create: bool) -> Result<OpenFile, FsError> {
        let file = js::file_handle(self.dir()?, name, create).await?;
        let sync = js::sync_handle(&file).await?;
        Ok(OpenFile { file, sync })
    }
}

/// The baseline's name: `files-opfs`, or `files-opfs-move` / `files-opfs-copy` when the rename
/// method is forced.
fn baseline_name(rename: RenameMethod) -> &'static str {
    match rename {
        RenameMethod::Auto => "files-opfs",
        RenameMethod::Move => "files-opfs-move",
        RenameMethod::Copy => "files-opfs-copy",
    }
}

impl FsBackend for OpfsFilesBackend {
    fn name(&self) -> String {
        baseline_name(self.rename).to_owned()
    }

    fn storage(&self) -> &'static str {
        "opfs-file-per-file"
    }

    fn durability(&self) -> &'static str {
        durability::FILE_PER_FILE
    }

    fn rename_method(&self) -> Option<&'static str> {
        self.used
    }

    async fn prepare(&mut self) -> Result<(), FsError> {
        self.files.clear();
        self.dir = None;
        js::remove_dir(&self.path).await
    }

    async fn mount(&mut self) -> Result<(), FsError> {
        self.dir = Some(js::open_dir(&self.path, true).await?);
        for name in js::entry_names(self.dir()?).await? {
            let f = self.open(&name, false).await?;
            self.files.insert(name, f);
        }
        Ok(())
    }

    async fn create(&mut self, name: &str) -> Result<(), FsError> {
        if self.files.contains_key(name) {
            return Err(FsError::Js {
                op: "create",
                name: "AlreadyExists".to_owned(),
                message: format!("{name} exists"),
            });
        }
        let f = self.open(name, true).await?;
        self.files.insert(name.to_owned(), f);
        Ok(())
    }

    async fn write(&mut self, name: &str, data: &[u8]) -> Result<(), FsError> {
        self.open_file(name)?.sync.write_at(data, 0)
    }

    async fn read(&mut self, name: &str, buf: &mut [u8]) -> Result<usize, FsError> {
        self.open_file(name)?.sync.read_at(buf, 0)
    }

    async fn rename(&mut self, from: &str, to: &str) -> Result<(), FsError> {
        if self.files.contains_key(to) {
            return Err(FsError::Js {
                op: "rename",
                name: "AlreadyExists".to_owned(),
                message: format!("{to} exists"),
            });
        }
        let OpenFile { file, sync } = self.files.remove(from).ok_or_else(|| FsError::Js {
            op: "rename",
            name: "NotFoundError".to_owned(),
            message: format!("{from} is not open"),
        })?;
        let by_move = match self.rename {
            RenameMethod::Auto => js::has_move(&file),
            RenameMethod::Move => true,
            RenameMethod::Copy => false,
        };
        if by_move {
            self.used = Some("move");
            // A file with an open sync access handle is locked: close, move, reopen.
            drop(sync);
            js::move_to(&file, to).await?;
            let sync = js::sync_handle(&file).await?;
            self.files.insert(to.to_owned(), OpenFile { file, sync });
        } else {
            self.used = Some("copy+removeEntry");
            let mut bytes = vec![0u8; sync.size()?];
            let n = sync.read_at(&mut bytes, 0)?;
            bytes.truncate(n);
            let new = self.open(to, true).await?;
            new.sync.write_at(&bytes, 0)?;
            drop(sync);
            js::remove_entry(self.dir()?, from).await?;
            self.files.insert(to.to_owned(), new);
        }
        Ok(())
    }

    async fn delete(&mut self, name: &str) -> Result<(), FsError> {
        // Close first: an open sync access handle locks the file against removal.
        drop(self.files.remove(name));
        js::remove_entry(self.dir()?, name).await
    }

    async fn commit(&mut self) -> Result<(), FsError> {
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), FsError> {
        for f in self.files.values() {
            f.sync.flush()?;
        }
        Ok(())
    }

    async fn unmount(&mut self) -> Result<(), FsError> {
        self.files.clear();
        self.dir = None;
        Ok(())
    }

    async fn list(&mut self) -> Result<Vec<String>, FsError> {
        let mut names: Vec<String> = self.files.keys().cloned().collect();
        names.sort_unstable();
        Ok(names)
    }

    async fn cleanup(&mut self) -> Result<(), FsError> {
        self.files.clear();
        self.dir = None;
        js::remove_dir(&self.path).await
    }
}

/// A browser lifecycle backend.
pub type BrowserBackend = Either<VolumeBackend<OpfsFactory>, OpfsFilesBackend>;

/// Every browser backend `cfg` selects, each in its own directory under the OPFS path `dir`.
pub fn browser_backends(cfg: &LifecycleConfig, dir: &str) -> Vec<BrowserBackend> {
    let mut out: Vec<BrowserBackend> =
        volume_backends(cfg, |name| OpfsFactory::new(format!("{dir}/{name}")))
            .into_iter()
            .map(Either::Ours)
            .collect();
    if cfg.baseline {
        let path = format!("{dir}/{}", baseline_name(cfg.baseline_rename));
        out.push(Either::Baseline(OpfsFilesBackend::new(
            path,
            cfg.baseline_rename,
        )));
    }
    out.retain(|b| selected(cfg, &b.name()));
    out
}

/// Runs what `config` asks for in this dedicated worker: the lifecycle on every selected
/// backend (in rounds, shuffled per round), then the raw OPFS workloads, each `config.warmup` +
/// `config.runs` times, reporting each finished unit to `progress`. Everything happens under
/// the OPFS directory `config.dir`, wiped before and after (also after a failure). The samples
/// come back unsummarized (the caller's `bench_results::Document::summarize` does that); a
/// lifecycle backend that failed has its `error` set and the others ran on. `Err` means a
/// raw workload failed or the directory could not be wiped.
pub async fn run_browser(
    config: &Config,
    progress: &mut dyn FnMut(Progress),
) -> Result<FsResult, FsError> {
    js::worker()?;
    let dir = if config.dir.is_empty() {
        crate::config::DEFAULT_DIR.to_owned()
    } else {
        config.dir.clone()
    };
    js::remove_dir(&dir).await?;
    let out = suites(config, &dir, progress).await;
    let cleaned = js::remove_dir(&dir).await;
    let result = out?;
    cleaned?;
    Ok(result)
}

async fn suites(
    config: &Config,
    dir: &str,
    progress: &mut dyn FnMut(Progress),
) -> Result<FsResult, FsError> {
    let rounds = config.warmup + config.runs;
    let mut backends = match &config.lifecycle {
        Some(cfg) => {
            let b = browser_backends(cfg, dir);
            if b.is_empty() {
                return Err(FsError::Unsupported(format!(
                    "no browser backend matches {:?}",
                    cfg.only
                )));
            }
            b
        }
        None => Vec::new(),
    };
    let raw_units = config
        .raw
        .as_ref()
        .map_or(0, |r| crate::raw::workload_count(r) * rounds);
    let passes = config.lifecycle.as_ref().map_or(1, |c| c.repeats.max(1));
    let mut tally = Tally {
        done: 0,
        total: rounds * u32::try_from(backends.len()).unwrap_or(0) * passes + raw_units,
    };
    let lifecycle = match &config.lifecycle {
        Some(cfg) => Some(
            run_lifecycle_suite(
                &mut backends,
                cfg,
                config.runs,
                config.warmup,
                config.order_seed,
                &mut tally,
                progress,
            )
            .await,
        ),
        None => None,
    };
    let raw = match &config.raw {
        Some(cfg) => Some(
            crate::raw::run_raw_suite(
                cfg,
                &format!("{dir}/raw"),
                config.runs,
                config.warmup,
                &mut tally,
                progress,
            )
            .await?,
        ),
        None => None,
    };
    Ok(FsResult { lifecycle, raw })
}
