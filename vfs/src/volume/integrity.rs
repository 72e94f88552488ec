//! [`Volume::check_integrity`] (reads everything on disk and reports what is wrong) and
//! [`Volume::check_invariants`] (the in-memory structure's own consistency, for tests).

use crate::error::Result;
use crate::format::{
    decode_frame, FrameKind, Slot, Superblock, FRAME_HEADER, PAGE, PAGE_SIZE, SUPER_SLOTS,
};
use crate::storage::{PhysicalFileId, Storage};

use super::alloc::RangeSet;
use super::state::pages_for;
use super::{usize_of, Volume};

/// One thing [`Volume::check_integrity`] found wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntegrityProblem {
    /// What is wrong.
    pub what: String,
    /// Where.
    pub file: PhysicalFileId,
    /// Byte offset.
    pub offset: u64,
}

/// What [`Volume::check_integrity`] checked and found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IntegrityReport {
    /// Logical files.
    pub files: u64,
    /// Catalog blobs read and verified.
    pub blobs: u64,
    /// Home blocks read and verified.
    pub home_blocks: u64,
    /// Log bytes re-read and verified (the chain from the epoch's start).
    pub log_bytes: u64,
    /// Commit frames in the log.
    pub log_commits: u64,
    /// Everything wrong (empty: the volume is intact).
    pub problems: Vec<IntegrityProblem>,
}

impl IntegrityReport {
    /// No problem found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

impl<S: Storage> Volume<S> {
    /// Reads the whole volume and checks it: the current superblock, every catalog blob,
    /// every home block's hash (windowed reads), and the log's chain up to where this mount
    /// has written; then the in-memory invariants. Returns a report; `Err` only when a read
    /// fails.
    pub fn check_integrity(&mut self) -> Result<IntegrityReport> {
        let data = PhysicalFileId::Data;
        let mut report = IntegrityReport {
            files: self.names.len() as u64,
            ..IntegrityReport::default()
        };
        let problem = |r: &mut IntegrityReport, what: String, file, offset| {
            r.problems.push(IntegrityProblem { what, file, offset })
        };
        // Superblock.
        if self.data_flushed {
            let slot = self.sb.generation % 2;
            let mut buf = vec![0u8; PAGE_SIZE];
            self.read_phys(data, slot * PAGE, &mut buf)?;
            if Superblock::decode(&buf) != Slot::Valid(self.sb.clone()) {
                problem(
                    &mut report,
                    "current superblock does not match".into(),
                    data,
                    slot * PAGE,
                );
            }
        }
        // Catalog blobs.
        let data_blocks = self.alloc.count;
        let blobs: Vec<_> = self.catalog_blobs().collect();
        for b in &blobs {
            match self.read_blobs(std::slice::from_ref(b), data_blocks) {
                Ok(_) => report.blobs += 1,
                Err(e) => problem(&mut report, e.to_string(), data, b.block * PAGE),
            }
        }
        // Home blocks.
        let homes: Vec<_> = self
            .files
            .values()
            .flat_map(|f| f.homes.iter().map(|(_, h)| h))
            .collect();
        report.home_blocks = homes.len() as u64;
        for block in self.verify_blocks(homes)? {
            problem(
                &mut report,
                "home block checksum mismatch".into(),
                data,
                block * PAGE,
            );
        }
        // The log, as written by this mount and before.
        let log = PhysicalFileId::Log;
        let written = self.log.written;
        let mut buf = vec![0u8; usize_of(written)?];
        let n = self.read_phys(log, 0, &mut buf)?;
        if n < buf.len() {
            problem(
                &mut report,
                "log shorter than written".into(),
                log,
                n as u64,
            );
        } else {
            let salt = self.sb.log_salt();
            let mut chain = salt;
            let mut pos = 0usize;
            // Where the chain leaves the log it goes on in the data file's tail links.
            let mut link_at = self.tail_start;
            loop {
                if pos < buf.len() {
                    if let Ok((h, payload)) = decode_frame(&buf[pos..], salt, chain) {
                        chain = h.chain;
                        pos += FRAME_HEADER + payload.len();
                        if h.kind == FrameKind::Commit {
                            report.log_commits += 1;
                        }
                        continue;
                    }
                }
                if link_at < self.tail {
                    if let Some(link) = self.read_link(link_at, salt, chain)? {
                        for (h, ..) in &link.frames {
                            chain = h.chain;
                            report.log_commits += u64::from(h.kind == FrameKind::Commit);
                        }
                        link_at = link.end;
                        continue;
                    }
                    problem(
                        &mut report,
                        "tail link chain broken".into(),
                        data,
                        link_at * PAGE,
                    );
                } else if pos < buf.len() {
                    problem(&mut report, "log chain broken".into(), log, pos as u64);
                }
                break;
            }
            report.log_bytes = pos as u64;
            if pos == buf.len() && chain != self.log.written_chain {
                problem(
                    &mut report,
                    "log chain differs from the writer's".into(),
                    log,
                    pos as u64,
                );
            }
        }
        if let Err(what) = self.check_invariants() {
            problem(&mut report, format!("invariant: {what}"), data, 0);
        }
        Ok(report)
    }

    /// Checks the in-memory structures against each other: names and live files agree;
    /// staged bytes add up; every block below the data file's extent is exactly one of
    /// superblock, referenced (home or catalog blob), free, or pending-free; logged and homed
    /// pages lie within their files; resident contents have their file's length.
    pub fn check_invariants(&self) -> Result<(), String> {
        let resident = self.resident_sum();
        if resident != self.resident_bytes {
            return Err(format!(
                "running resident bytes {} differ from the resident copies' {resident}",
                self.resident_bytes
            ));
        }
        let sum: u64 = self.files.values().map(|f| f.size).sum();
        if sum != self.logical_total {
            return Err(format!(
                "running logical total {} differs from the files' sizes {sum}",
                self.logical_total
            ));
        }
        // Names.
        let mut live = 0usize;
        for (&id, f) in &self.files {
            match self.pending.get(&id) {
                Some(p) if p.deleted => {}
                Some(p) => {
                    live += 1;
                    if self.names.get(&p.name) != Some(&id) {
                        return Err(format!("pending file {id} ({:?}) not in names", p.name));
                    }
                }
                None => {
                    live += 1;
                    if self.names.get(&f.name) != Some(&id) {
                        return Err(format!("file {id} ({:?}) not in names", f.name));
                    }
                }
            }
        }
        for (&id, p) in &self.pending {
            if !self.files.contains_key(&id) {
                if p.existed {
                    return Err(format!(
                        "pending file {id} existed but has no committed state"
                    ));
                }
                if !p.deleted {
                    live += 1;
                    if self.names.get(&p.name) != Some(&id) {
                        return Err(format!("created file {id} ({:?}) not in names", p.name));
                    }
                }
            }
            if p.floor > p.size.max(p.floor) || p.staged.keys().any(|&pg| pg >= pages_for(p.size)) {
                return Err(format!("pending file {id}: staged page beyond its size"));
            }
            if id >= self.next_file_id {
                return Err(format!("pending file {id} at or beyond next id"));
            }
        }
        if live != self.names.len() {
            return Err(format!("{} names for {live} live files", self.names.len()));
        }
        let staged: usize = self.pending.values().map(|p| p.staged_bytes()).sum();
        if staged != self.staged_bytes {
            return Err(format!("staged bytes {} != {staged}", self.staged_bytes));
        }
        // Blocks.
        let mut used = RangeSet::default();
        used.insert(0, SUPER_SLOTS);
        let mut claim = |start: u64, n: u64, what: &str| -> Result<(), String> {
            if start < SUPER_SLOTS || start + n > self.alloc.count {
                return Err(format!("{what} block {start} outside the data file"));
            }
            if !used.insert(start, start + n) {
                return Err(format!("{what} block {start} used twice"));
            }
            Ok(())
        };
        if self.catalog.dir.len > 0 {
            claim(
                self.catalog.dir.block,
                self.catalog.dir.blocks(),
                "directory",
            )?;
        }
        for p in self.catalog.entry_chunks.values() {
            claim(p.block, p.blocks(), "entry chunk")?;
        }
        for (&id, f) in &self.files {
            for p in f.map_chunks.values() {
                claim(p.block, p.blocks(), "map chunk")?;
            }
            for (page, h) in f.homes.iter() {
                claim(h.block, 1, "home")?;
                if page >= pages_for(f.size) {
                    return Err(format!("file {id}: home of page {page} beyond its size"));
                }
            }
            if let Some((&page, _)) = f.log.iter().next_back() {
                if page >= pages_for(f.size) {
                    return Err(format!("file {id}: logged page {page} beyond its size"));
                }
                // A checkpoint plans (and afterwards clears) only dirty files.
                if !f.dirty {
                    return Err(format!("file {id}: logged pages but not dirty"));
                }
            }
            if let Some(c) = &f.resident {
                if c.len() != f.size {
                    return Err(format!(
                        "file {id}: resident length {} != {}",
                        c.len(),
                        f.size
                    ));
                }
            }
            if f.inline.as_ref().is_some_and(|i| i.len() as u64 > f.size) {
                return Err(format!("file {id}: inline bytes beyond its size"));
            }
            if id >= self.next_file_id {
                return Err(format!("file {id} at or beyond next id"));
            }
        }
        for (s, e) in self.alloc.free.iter().chain(self.alloc.pending.iter()) {
            if !used.insert(s, e) {
                return Err(format!("free or pending blocks {s}..{e} overlap used ones"));
            }
        }
        if used.len() != self.alloc.count {
            return Err(format!(
                "{} of {} blocks accounted for (leaked blocks)",
                used.len(),
                self.alloc.count
            ));
        }
        if self.log.flushed > self.log.written {
            return Err("log flushed beyond written".into());
        }
        Ok(())
    }
}
