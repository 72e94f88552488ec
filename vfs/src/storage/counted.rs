//! Call counting around any storage. The volume always wraps its storage in [`Counted`], so every
//! physical call is counted whatever the backend; benchmarks read [`Counters`].
//!
//! On request ([`Counted::time_calls`]) it also sums the time spent inside the calls, so that a
//! benchmark can split a workload's time into what the storage (the browser's OPFS) took and
//! what the rest (SQLite, the engine) took, in the same pass. Off by default: two clock readings
//! per call are cheap next to an OPFS call, but they are not free.

use web_time::Instant;

use super::{PhysicalFile, PhysicalFileId, Storage, StorageResult};

/// Calls and bytes for one physical file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileCounters {
    /// `read_at` calls.
    pub reads: u64,
    /// Bytes returned by `read_at`.
    pub read_bytes: u64,
    /// `write_at` calls.
    pub writes: u64,
    /// Bytes passed to successful `write_at` calls.
    pub written_bytes: u64,
    /// `flush` calls.
    pub flushes: u64,
    /// Bytes the successful flushes made durable: at each, the bytes passed to successful
    /// `write_at` calls on the file since its previous flush (what the flush had to carry).
    pub flushed_bytes: u64,
    /// [`PhysicalFile::flush_ahead`] hints (not calls: [`FileCounters::calls`] leaves them out).
    pub flush_aheads: u64,
    /// `len` calls.
    pub len_calls: u64,
    /// `set_len` calls.
    pub set_len_calls: u64,
    /// Nanoseconds inside `read_at` calls, while timing is on ([`Counted::time_calls`]).
    pub read_ns: u64,
    /// Nanoseconds inside `write_at` calls, while timing is on.
    pub write_ns: u64,
    /// Nanoseconds inside `flush` calls, while timing is on.
    pub flush_ns: u64,
    /// Nanoseconds inside `len` and `set_len` calls, while timing is on.
    pub other_ns: u64,
}

impl FileCounters {
    /// Every call of any kind.
    pub fn calls(&self) -> u64 {
        self.reads + self.writes + self.flushes + self.len_calls + self.set_len_calls
    }

    fn add(&mut self, o: &FileCounters) {
        self.reads += o.reads;
        self.read_bytes += o.read_bytes;
        self.writes += o.writes;
        self.written_bytes += o.written_bytes;
        self.flushes += o.flushes;
        self.flushed_bytes += o.flushed_bytes;
        self.flush_aheads += o.flush_aheads;
        self.len_calls += o.len_calls;
        self.set_len_calls += o.set_len_calls;
        self.read_ns += o.read_ns;
        self.write_ns += o.write_ns;
        self.flush_ns += o.flush_ns;
        self.other_ns += o.other_ns;
    }

    /// Nanoseconds inside calls of every kind, while timing was on.
    pub fn call_ns(&self) -> u64 {
        self.read_ns + self.write_ns + self.flush_ns + self.other_ns
    }

    /// `self - o`: the calls made between two readings.
    pub fn since(&self, o: &FileCounters) -> FileCounters {
        FileCounters {
            reads: self.reads - o.reads,
            read_bytes: self.read_bytes - o.read_bytes,
            writes: self.writes - o.writes,
            written_bytes: self.written_bytes - o.written_bytes,
            flushes: self.flushes - o.flushes,
            flushed_bytes: self.flushed_bytes - o.flushed_bytes,
            flush_aheads: self.flush_aheads - o.flush_aheads,
            len_calls: self.len_calls - o.len_calls,
            set_len_calls: self.set_len_calls - o.set_len_calls,
            read_ns: self.read_ns - o.read_ns,
            write_ns: self.write_ns - o.write_ns,
            flush_ns: self.flush_ns - o.flush_ns,
            other_ns: self.other_ns - o.other_ns,
        }
    }
}

/// Counters for every physical file of a volume.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Per physical file, indexed by [`PhysicalFileId::index`].
    pub files: [FileCounters; 2],
}

impl Counters {
    /// Counters of one physical file.
    pub fn file(&self, id: PhysicalFileId) -> &FileCounters {
        &self.files[id.index()]
    }

    /// Sum over all physical files.
    pub fn total(&self) -> FileCounters {
        let mut t = FileCounters::default();
        for f in &self.files {
            t.add(f);
        }
        t
    }

    /// `self - earlier`: the calls made between two readings.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            files: [
                self.files[0].since(&earlier.files[0]),
                self.files[1].since(&earlier.files[1]),
            ],
        }
    }
}

/// Wraps a storage and counts every call that reaches it.
#[derive(Debug)]
pub struct Counted<S> {
    inner: S,
    counters: Counters,
    /// Per physical file: bytes written since its last successful flush.
    unflushed: [u64; 2],
    /// Whether calls are timed.
    timed: bool,
}

impl<S: Storage> Counted<S> {
    /// Starts counting from zero.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            counters: Counters::default(),
            unflushed: [0; 2],
            timed: false,
        }
    }

    /// Times every call from now on (`true`) or stops (`false`): the counters' `*_ns` fields
    /// sum the time inside the calls while it is on, and stay as they are while it is off.
    pub fn time_calls(&mut self, on: bool) {
        self.timed = on;
    }

    /// Counters so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The wrapped storage.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The wrapped storage, mutably (bypasses counting).
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// A counting handle on physical file `id`.
    pub fn file(&mut self, id: PhysicalFileId) -> CountedFile<'_> {
        CountedFile {
            file: self.inner.file(id),
            counters: &mut self.counters.files[id.index()],
            unflushed: &mut self.unflushed[id.index()],
            timed: self.timed,
        }
    }
}

/// A physical file whose calls are counted.
pub struct CountedFile<'a> {
    file: &'a mut dyn PhysicalFile,
    counters: &'a mut FileCounters,
    unflushed: &'a mut u64,
    timed: bool,
}

impl CountedFile<'_> {
    /// Runs `call`, adding the time it took to the counter `slot` picks if timing is on. Failed
    /// calls count too: their time was spent all the same.
    fn timed<R>(
        &mut self,
        slot: fn(&mut FileCounters) -> &mut u64,
        call: impl FnOnce(&mut dyn PhysicalFile) -> R,
    ) -> R {
        if !self.timed {
            return call(&mut *self.file);
        }
        let start = Instant::now();
        let r = call(&mut *self.file);
        // Saturating: ns since the start fit u64 for 584 years.
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let c = slot(self.counters);
        *c = c.saturating_add(ns);
        r
    }
}

impl std::fmt::Debug for CountedFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountedFile")
            .field("counters", &self.counters)
            .finish()
    }
}

impl PhysicalFile for CountedFile<'_> {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        self.counters.reads += 1;
        let n = self.timed(|c| &mut c.read_ns, |f| f.read_at(offset, buf))?;
        self.counters.read_bytes += n as u64;
        Ok(n)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        self.counters.writes += 1;
        self.timed(|c| &mut c.write_ns, |f| f.write_at(offset, data))?;
        self.counters.written_bytes += data.len() as u64;
        *self.unflushed += data.len() as u64;
        Ok(())
    }

    fn len(&mut self) -> StorageResult<u64> {
        self.counters.len_calls += 1;
        self.timed(|c| &mut c.other_ns, |f| f.len())
    }

    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        self.counters.set_len_calls += 1;
        self.timed(|c| &mut c.other_ns, |f| f.set_len(len))
    }

    fn flush(&mut self) -> StorageResult<()> {
        self.counters.flushes += 1;
        self.timed(|c| &mut c.flush_ns, |f| f.flush())?;
        self.counters.flushed_bytes += std::mem::take(self.unflushed);
        Ok(())
    }

    fn flush_ahead(&mut self) {
        self.counters.flush_aheads += 1;
        self.file.flush_ahead();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::MemoryStorage;

    /// A flush is counted with the bytes written to its file since that file's previous flush;
    /// the other file's writes are not its bytes.
    #[test]
    fn flushed_bytes_are_what_each_flush_carried() {
        let mut c = Counted::new(MemoryStorage::new());
        let (data, log) = (PhysicalFileId::Data, PhysicalFileId::Log);
        c.file(log).write_at(0, &[1; 100]).unwrap();
        c.file(log).write_at(100, &[2; 50]).unwrap();
        c.file(data).write_at(0, &[3; 4096]).unwrap();
        c.file(log).flush().unwrap();
        assert_eq!(c.counters().file(log).flushed_bytes, 150);
        assert_eq!(c.counters().file(data).flushed_bytes, 0);
        c.file(log).flush().unwrap();
        assert_eq!(
            c.counters().file(log).flushed_bytes,
            150,
            "nothing new to carry"
        );
        let before = c.counters();
        c.file(log).write_at(0, &[4; 10]).unwrap();
        c.file(log).flush().unwrap();
        c.file(data).flush().unwrap();
        let since = c.counters().since(&before);
        assert_eq!(since.file(log).flushed_bytes, 10);
        assert_eq!(since.total().flushed_bytes, 10 + 4096);
    }

    /// A storage whose flushes take `FLUSH_MS` and whose other calls take no measurable time.
    struct SlowFlush(MemoryStorage);
    const FLUSH_MS: u64 = 20;
    struct SlowFile<'a>(&'a mut dyn PhysicalFile);
    impl PhysicalFile for SlowFile<'_> {
        fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
            self.0.read_at(offset, buf)
        }
        fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
            self.0.write_at(offset, data)
        }
        fn len(&mut self) -> StorageResult<u64> {
            self.0.len()
        }
        fn set_len(&mut self, len: u64) -> StorageResult<()> {
            self.0.set_len(len)
        }
        fn flush(&mut self) -> StorageResult<()> {
            std::thread::sleep(std::time::Duration::from_millis(FLUSH_MS));
            self.0.flush()
        }
    }
    impl Storage for SlowFlush {
        fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
            // Leaked per call: a handful of calls in one test.
            Box::leak(Box::new(SlowFile(self.0.file(id))))
        }
    }

    /// Timing is off until asked for; once on, the time inside each kind of call goes to its
    /// own counter of the file called, and `since` gives a span's share.
    #[test]
    fn calls_are_timed_only_when_asked() {
        let mut c = Counted::new(SlowFlush(MemoryStorage::new()));
        let log = PhysicalFileId::Log;
        c.file(log).write_at(0, &[1; 100]).unwrap();
        c.file(log).flush().unwrap();
        assert_eq!(
            c.counters().total().call_ns(),
            0,
            "timing is off by default"
        );

        c.time_calls(true);
        let before = c.counters();
        c.file(log).write_at(100, &[2; 100]).unwrap();
        c.file(log).flush().unwrap();
        let mut buf = [0; 10];
        c.file(log).read_at(0, &mut buf).unwrap();
        let span = c.counters().since(&before);
        let f = span.file(log);
        let ms = |ns: u64| ns as f64 / 1e6;
        assert!(ms(f.flush_ns) >= FLUSH_MS as f64, "{f:?}");
        assert!(ms(f.write_ns) < FLUSH_MS as f64 / 2.0, "{f:?}");
        assert!(ms(f.read_ns) < FLUSH_MS as f64 / 2.0, "{f:?}");
        assert_eq!(
            f.call_ns(),
            f.read_ns + f.write_ns + f.flush_ns + f.other_ns
        );
        assert_eq!(span.file(PhysicalFileId::Data).call_ns(), 0);

        c.time_calls(false);
        let off = c.counters();
        c.file(log).flush().unwrap();
        assert_eq!(c.counters().since(&off).total().call_ns(), 0);
    }
}
