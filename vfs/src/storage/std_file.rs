//! Native backend: each physical file is a `std::fs::File` in a directory, locked exclusively
//! (`File::try_lock`) so a second process or a second mount in this one gets
//! [`StorageError::Busy`] instead of corrupting the volume.
//!
//! The lock (`flock` on Linux) belongs to the open file description, and a child process
//! forked by any thread of this process shares that description until it `exec`s, even with
//! close-on-exec set: for that moment the lock outlives this backend's close, and a remount
//! right after it would see the volume as busy (seen: a test thread running `git` while
//! another remounted). So a lock that is held is tried again for up to [`LOCK_PATIENCE`]
//! before the open fails with `Busy`.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{PhysicalFile, PhysicalFileId, Storage, StorageError, StorageResult};

/// How long a held lock is tried again (a forked child holds it for microseconds to a few
/// milliseconds, until it `exec`s) before [`StdStorage::open`] reports `Busy`.
pub const LOCK_PATIENCE: Duration = Duration::from_millis(200);

fn platform(op: &'static str, err: io::Error) -> StorageError {
    if err.kind() == io::ErrorKind::StorageFull || err.raw_os_error() == Some(28) {
        return StorageError::QuotaExceeded {
            message: err.to_string(),
        };
    }
    StorageError::Platform {
        op,
        name: format!("{:?}", err.kind()),
        message: err.to_string(),
    }
}

/// One physical file on the native file system.
#[derive(Debug)]
pub struct StdFile {
    file: File,
}

impl PhysicalFile for StdFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(platform("read", e)),
            }
        }
        Ok(done)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        self.file
            .write_all_at(data, offset)
            .map_err(|e| platform("write", e))
    }

    fn len(&mut self) -> StorageResult<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| platform("getSize", e))
    }

    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        self.file.set_len(len).map_err(|e| platform("truncate", e))
    }

    fn flush(&mut self) -> StorageResult<()> {
        self.file.sync_data().map_err(|e| platform("flush", e))
    }
}

/// Physical files in a native directory (created if absent).
#[derive(Debug)]
pub struct StdStorage {
    dir: PathBuf,
    files: [StdFile; 2],
}

impl StdStorage {
    /// Opens (creating if needed) the physical files in `dir` and locks them exclusively.
    pub fn open(dir: impl AsRef<Path>) -> StorageResult<Self> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| platform("open", e))?;
        let open = |id: PhysicalFileId| -> StorageResult<StdFile> {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(dir.join(id.file_name()))
                .map_err(|e| platform("open", e))?;
            let start = Instant::now();
            loop {
                match file.try_lock() {
                    Ok(()) => return Ok(StdFile { file }),
                    Err(TryLockError::WouldBlock) if start.elapsed() < LOCK_PATIENCE => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(TryLockError::WouldBlock) => {
                        return Err(StorageError::Busy {
                            message: format!(
                                "{} is locked by another mount of this volume",
                                dir.join(id.file_name()).display()
                            ),
                        })
                    }
                    Err(TryLockError::Error(e)) => return Err(platform("lock", e)),
                }
            }
        };
        let data = open(PhysicalFileId::Data)?;
        let log = open(PhysicalFileId::Log)?;
        Ok(Self {
            dir,
            files: [data, log],
        })
    }

    /// The directory holding the physical files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Storage for StdStorage {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        &mut self.files[id.index()]
    }
}
