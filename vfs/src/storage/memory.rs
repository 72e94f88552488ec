//! Always-compiled in-memory backend: the reference implementation of the contract, used by
//! tests and by the crash simulator (which wraps it).

use super::{PhysicalFile, PhysicalFileId, Storage, StorageError, StorageResult};

/// A physical file held in a byte vector. `flush` does nothing: there is nothing to lose.
#[derive(Debug, Default, Clone)]
pub struct MemoryFile {
    bytes: Vec<u8>,
}

impl MemoryFile {
    /// The current contents.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Mutable access to the contents, for fault injection in tests.
    pub fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }
}

fn to_usize(value: u64) -> StorageResult<usize> {
    usize::try_from(value).map_err(|_| StorageError::OutOfRange { value })
}

impl PhysicalFile for MemoryFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        let len = self.bytes.len() as u64;
        if offset >= len {
            return Ok(0);
        }
        let start = to_usize(offset)?;
        let n = buf.len().min(self.bytes.len() - start);
        buf[..n].copy_from_slice(&self.bytes[start..start + n]);
        Ok(n)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        let start = to_usize(offset)?;
        let end = start
            .checked_add(data.len())
            .ok_or(StorageError::OutOfRange { value: offset })?;
        if end > self.bytes.len() {
            self.bytes.resize(end, 0);
        }
        self.bytes[start..end].copy_from_slice(data);
        Ok(())
    }

    fn len(&mut self) -> StorageResult<u64> {
        Ok(self.bytes.len() as u64)
    }

    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        self.bytes.resize(to_usize(len)?, 0);
        Ok(())
    }

    fn flush(&mut self) -> StorageResult<()> {
        Ok(())
    }
}

/// All physical files in memory. Clone it to snapshot a volume's bytes.
#[derive(Debug, Default, Clone)]
pub struct MemoryStorage {
    files: [MemoryFile; 2],
}

impl MemoryStorage {
    /// An empty storage: mounting it creates a new volume.
    pub fn new() -> Self {
        Self::default()
    }

    /// Read access to one physical file's bytes.
    pub fn get(&self, id: PhysicalFileId) -> &MemoryFile {
        &self.files[id.index()]
    }

    /// Mutable access to one physical file (for corruption tests).
    pub fn get_mut(&mut self, id: PhysicalFileId) -> &mut MemoryFile {
        &mut self.files[id.index()]
    }
}

impl Storage for MemoryStorage {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        &mut self.files[id.index()]
    }
}
