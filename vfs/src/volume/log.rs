//! The log writer: frames are serialized into a buffer, written with one call, flushed on
//! demand; the writer knows how far the log is written and flushed, and keeps the last buffer
//! it wrote so recently committed pages are read without a physical call.
//!
//! Failure rule: a failed write leaves the writer exactly as before the frames that were being
//! written (see [`LogWriter::mark`] / [`LogWriter::rewind`]); the caller repairs the bytes on
//! disk (see `Volume::repair_log_tail`) so that nothing a failed commit wrote can ever chain.

use web_time::Instant;

use crate::format::{encode_frame, FrameKind, FRAME_HEADER};

use super::ix;

/// Largest written buffer kept in memory for reads.
const RECENT_MAX: usize = 1 << 20;

/// Serialization state and write/flush positions of the current log epoch.
#[derive(Debug)]
pub(crate) struct LogWriter {
    /// Salt of the current epoch (every frame carries it).
    pub(crate) salt: u64,
    /// Random per mount, hashed into every frame.
    pub(crate) session: u64,
    /// Chain hash of the last frame serialized.
    pub(crate) chain: u64,
    /// Sequence number of the next commit frame.
    pub(crate) next_seq: u64,
    /// Frames serialized but not written; they start at log offset `written`.
    pub(crate) buf: Vec<u8>,
    /// Log bytes written (the valid log ends here on disk, as far as this mount knows).
    pub(crate) written: u64,
    /// Log bytes known flushed.
    pub(crate) flushed: u64,
    /// Chain hash of the last frame written (the salt if none).
    pub(crate) written_chain: u64,
    /// When the oldest commit not yet written was made (Balanced).
    pub(crate) oldest_unwritten: Option<Instant>,
    /// When the oldest commit not yet flushed was made (Relaxed, Balanced, WriteOnly): the
    /// flush clock. Only a write that carries a Commit frame starts it, at that commit's time
    /// (Balanced: [`LogWriter::oldest_unwritten`], however late the buffer is written): frames
    /// spilled by an open transaction promise nothing until their commit, and a Balanced commit
    /// that a spill happens to write is due within the delay of when it was made, not of the
    /// spill (measured, 2026-12-04: the spill-started clock put Disk and Memory mode's deferred
    /// flushes in different SQL cases).
    pub(crate) oldest_unflushed: Option<Instant>,
    /// The unwritten buffer holds a Commit frame.
    buf_commits: bool,
    /// The last buffer written (at most `RECENT_MAX` bytes) and its log offset.
    recent: Vec<u8>,
    recent_at: u64,
}

/// A position to rewind to if writing what follows fails.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mark {
    buf_len: usize,
    chain: u64,
    next_seq: u64,
    oldest_unwritten: Option<Instant>,
    buf_commits: bool,
}

impl LogWriter {
    pub(crate) fn new(salt: u64, session: u64, next_seq: u64) -> Self {
        Self {
            salt,
            session,
            chain: salt,
            next_seq,
            buf: Vec::new(),
            written: 0,
            flushed: 0,
            written_chain: salt,
            oldest_unwritten: None,
            oldest_unflushed: None,
            buf_commits: false,
            recent: Vec::new(),
            recent_at: 0,
        }
    }

    /// Log length including unwritten frames.
    pub(crate) fn end(&self) -> u64 {
        self.written + self.buf.len() as u64
    }

    /// Log offset at which the next frame's payload will start.
    pub(crate) fn next_payload_offset(&self) -> u64 {
        self.end() + FRAME_HEADER as u64
    }

    /// Appends one frame.
    pub(crate) fn frame(&mut self, kind: FrameKind, file: u64, arg: u64, payload: &[u8]) {
        self.buf_commits |= kind == FrameKind::Commit;
        self.chain = encode_frame(
            &mut self.buf,
            self.salt,
            self.session,
            self.chain,
            kind,
            file,
            arg,
            payload,
        );
    }

    pub(crate) fn mark(&self) -> Mark {
        Mark {
            buf_len: self.buf.len(),
            chain: self.chain,
            next_seq: self.next_seq,
            oldest_unwritten: self.oldest_unwritten,
            buf_commits: self.buf_commits,
        }
    }

    /// Forgets every frame serialized after `m` (which must still be unwritten).
    pub(crate) fn rewind(&mut self, m: Mark) {
        self.buf.truncate(m.buf_len);
        self.chain = m.chain;
        self.next_seq = m.next_seq;
        self.oldest_unwritten = m.oldest_unwritten;
        self.buf_commits = m.buf_commits;
    }

    /// The buffer was written at `written`: advance, and keep it for reads if small.
    pub(crate) fn wrote(&mut self, now: Instant) {
        let at = self.written;
        self.written += self.buf.len() as u64;
        self.written_chain = self.chain;
        std::mem::swap(&mut self.buf, &mut self.recent);
        self.recent_at = at;
        self.buf.clear();
        if self.recent.len() > RECENT_MAX {
            self.recent = Vec::new();
        }
        // The clock counts from the oldest commit the buffer carries (Balanced keeps commits
        // unwritten: a commit written late, by a spill or the 1 MiB rule, is still due within
        // the delay of when it was made), else from this write.
        let committed_at = self.oldest_unwritten.take();
        if std::mem::take(&mut self.buf_commits) && self.flushed < self.written {
            self.oldest_unflushed
                .get_or_insert(committed_at.unwrap_or(now));
        }
    }

    pub(crate) fn flushed_all(&mut self) {
        self.flushed = self.written;
        self.oldest_unflushed = None;
    }

    /// Copies log bytes at `offset` that are still in memory (the unwritten buffer, or the last
    /// written buffer) into `buf`; returns false if any byte must come from the file.
    pub(crate) fn read_memory(&self, offset: u64, buf: &mut [u8]) -> bool {
        let end = offset + buf.len() as u64;
        if offset >= self.written && end <= self.end() {
            // Differences are below the buffer's length.
            let s = ix(offset - self.written);
            buf.copy_from_slice(&self.buf[s..s + buf.len()]);
            return true;
        }
        let recent_end = self.recent_at + self.recent.len() as u64;
        if offset >= self.recent_at && end <= recent_end {
            let s = ix(offset - self.recent_at);
            buf.copy_from_slice(&self.recent[s..s + buf.len()]);
            return true;
        }
        false
    }

    /// A new epoch after a checkpoint: offsets restart at 0.
    pub(crate) fn new_epoch(&mut self, salt: u64) {
        debug_assert!(self.buf.is_empty());
        self.salt = salt;
        self.chain = salt;
        self.written_chain = salt;
        self.written = 0;
        self.flushed = 0;
        self.recent.clear();
        self.recent_at = 0;
        self.oldest_unwritten = None;
        self.oldest_unflushed = None;
        self.buf_commits = false;
    }
}
