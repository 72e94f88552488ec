//! Handing a volume over to another tab or worker, and catching up when it comes back.
//!
//! Only one context at a time can hold a volume's OPFS access handles. [`Volume::release`]
//! makes everything durable and stops using the storage (the caller then closes the handles
//! and lets another context open them); while released, every call that would read contents or
//! write fails with [`Error::Busy`]. When the handles are back, [`Volume::resume`] catches up
//! with what the other holders committed meanwhile, reading only what changed:
//! - the same checkpoint generation: the log from where this volume last wrote (the log is
//!   append-only and chained, so the other holders' frames continue this volume's chain);
//!   resident contents and the page cache are patched from those frames;
//! - a newer generation (someone checkpointed): the catalog is reloaded and the new epoch
//!   replayed, as a mount does (resident contents are dropped and load again on access).
//!
//! A holder that dies (tab killed) releases nothing: the browser closes its handles and its
//! Web Lock; what it wrote survives (a tab crash keeps written bytes), and the next holder's
//! catch-up applies its committed frames and aborts its uncommitted ones, as a mount would.

use crate::error::{Error, Result};
use crate::format::{Slot, Superblock, PAGE_SIZE};
use crate::storage::{read_zero_filled, PhysicalFile, PhysicalFileId, Storage};

use super::alloc::Allocator;
use super::log::LogWriter;
use super::{nonce, Catalog, Volume};

/// What [`Volume::resume`] read to catch up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// Log bytes written by other holders and replayed.
    pub log_bytes: u64,
    /// Commits replayed.
    pub commits: u64,
    /// Another holder checkpointed: the catalog was reloaded (and resident contents dropped).
    pub reloaded: bool,
}

/// Bytes of log the catch-up reads first (more follow while frames continue): one window of
/// the mount's replay, several single-row commits of a typical database.
const CATCH_UP_FIRST_READ: u64 = 64 << 10;

impl<S: Storage> Volume<S> {
    /// Whether the volume is released to another holder (see the module docs).
    pub fn is_released(&self) -> bool {
        self.released
    }

    pub(crate) fn check_held(&self) -> Result<()> {
        if self.released {
            return Err(Error::Busy {
                message: "the volume is held by another tab or worker (this one released it); \
                          acquire it first"
                    .into(),
            });
        }
        Ok(())
    }

    /// Makes every commit durable (written and flushed) and stops using the storage, so its
    /// handles can be closed and another holder can open them. Fails with [`Error::Busy`]
    /// while a transaction is open (commit or roll it back first).
    pub fn release(&mut self) -> Result<()> {
        self.check_writable()?;
        self.check_held()?;
        if self.has_uncommitted() {
            return Err(Error::Busy {
                message: "a transaction is open: commit or roll it back before releasing".into(),
            });
        }
        // The log must end at a terminal frame: the next holder catches up to the last
        // commit or abort and appends from there, overwriting anything after it. A rolled-back
        // transaction that had spilled leaves frames after it: abort them now, so this
        // volume's end of log is where the next holder continues.
        if !self.aborts.is_empty() {
            self.serialize(&[], false)?;
        }
        self.sync()?;
        self.released = true;
        Ok(())
    }

    /// After [`Volume::release`], once the storage's handles are open again: catch up with
    /// what other holders committed meanwhile. Reads: two lengths, the superblocks (one
    /// call), and the log written since (usually one call) — or, if someone checkpointed,
    /// the catalog as a mount does.
    pub fn resume(&mut self) -> Result<CatchUp> {
        if !self.released {
            return Ok(CatchUp::default());
        }
        let data = PhysicalFileId::Data;
        let log = PhysicalFileId::Log;
        let data_len = self
            .storage
            .file(data)
            .len()
            .map_err(|e| Error::from_storage(data, e))?;
        let log_len = self
            .storage
            .file(log)
            .len()
            .map_err(|e| Error::from_storage(log, e))?;
        let mut slots = vec![0u8; 2 * PAGE_SIZE];
        read_zero_filled(&mut self.storage.file(data), 0, &mut slots)
            .map_err(|e| Error::from_storage(data, e))?;
        let current = self.sb.generation % 2;
        let i = crate::volume::ix(current) * PAGE_SIZE;
        let same = Superblock::decode(&slots[i..i + PAGE_SIZE]) == Slot::Valid(self.sb.clone())
            && {
                let other = (current + 1) % 2;
                let j = crate::volume::ix(other) * PAGE_SIZE;
                // A newer checkpoint lives in the other slot.
                !matches!(Superblock::decode(&slots[j..j + PAGE_SIZE]),
                    Slot::Valid(sb) if sb.generation > self.sb.generation)
            };
        let mut up = CatchUp::default();
        let before = self.stats.recovered_commits;
        if same {
            let start = self.log.written;
            let chain = self.log.written_chain;
            // The log file grows in steps (zeros after the frames), so most of what lies
            // after `start` is spare: read one window (usually one commit or a few), and let
            // the replay read on while frames continue.
            let mut first = vec![
                0u8;
                crate::volume::usize_of(
                    log_len.saturating_sub(start).min(CATCH_UP_FIRST_READ)
                )?
            ];
            if !first.is_empty() {
                let n = self
                    .storage
                    .file(log)
                    .read_at(start, &mut first)
                    .map_err(|e| Error::from_storage(log, e))?;
                first.truncate(n);
            }
            // Another holder appends where this one ended. If the bytes there do not continue
            // this volume's chain, the log was rewritten behind it (a holder that died with
            // frames after its last commit was caught up past): load everything again.
            // Zeros there: nothing was written since. Every log write leaves a zeroed frame
            // header after its frames where the file goes on (`Volume::write_out`), a failed
            // write's repair zeroes its first header, and every holder writes only at the
            // chain's end, which replaying the same bytes puts at the same offset.
            let header = &first[..first.len().min(crate::format::FRAME_HEADER)];
            let continues = header.iter().all(|&b| b == 0)
                || crate::format::decode_frame(&first, self.log.salt, chain).is_ok();
            if continues {
                // The data file is as this volume left it: the same superblock in its slot, no
                // newer one in the other (a holder that died mid-checkpoint can only have
                // written free blocks or a torn other slot, neither of which this epoch's log
                // depends on). So whether its superblock is flushed is what it was at release:
                // `data_flushed` keeps its value, and the first commit after a take-over does
                // not flush the data file again.
                // Links another holder wrote lie past the data file's length as last seen.
                self.physical_len[0] = data_len;
                up.log_bytes = self.replay_log(start, chain, first, log_len)?;
            } else {
                self.reload(data_len, log_len)?;
                up.reloaded = true;
            }
        } else {
            self.reload(data_len, log_len)?;
            up.reloaded = true;
        }
        up.commits = self.stats.recovered_commits - before;
        self.log.flushed = 0;
        // What the others wrote may exist only in the OS cache.
        self.log_dirty = true;
        self.log.session = nonce();
        self.released = false;
        Ok(up)
    }

    /// Forgets the in-memory state and loads the volume again from storage, as a mount does.
    fn reload(&mut self, data_len: u64, log_len: u64) -> Result<()> {
        // A new superblock another holder wrote may exist only in the OS cache (it may have
        // died before flushing it): flush the data file before this volume's first log write.
        self.data_flushed = false;
        let mut slots = vec![0u8; 2 * PAGE_SIZE];
        read_zero_filled(&mut self.storage.file(PhysicalFileId::Data), 0, &mut slots)
            .map_err(|e| Error::from_storage(PhysicalFileId::Data, e))?;
        let best = [0usize, 1]
            .into_iter()
            .filter_map(
                |i| match Superblock::decode(&slots[i * PAGE_SIZE..(i + 1) * PAGE_SIZE]) {
                    Slot::Valid(sb) => Some(sb),
                    _ => None,
                },
            )
            .max_by_key(|sb| sb.generation)
            .ok_or_else(|| {
                super::corrupt(
                    "no valid superblock after another holder's checkpoint",
                    PhysicalFileId::Data,
                    0,
                )
            })?;
        self.files.clear();
        self.names.clear();
        self.pending.clear();
        self.staged_bytes = 0;
        self.aborts.clear();
        self.cache.remove_all();
        self.resident_bytes = 0;
        self.catalog = Catalog {
            dir: best.directory,
            ..Catalog::default()
        };
        self.alloc = Allocator::new(best.block_count);
        self.next_file_id = best.next_file_id;
        self.log = LogWriter::new(best.log_salt(), nonce(), best.next_txn_seq);
        self.sb = best;
        self.physical_len = [data_len, log_len];
        self.load_catalog(data_len)?;
        let first = self.read_log_start(log_len)?;
        self.recover_log(log_len, first)
    }
}
