//! Power-loss simulation and fault injection over in-memory physical files.
//!
//! [`CrashStorage`] keeps, for every physical file, two things:
//! - the **durable image**: what is guaranteed to survive a power loss (the file as of its last
//!   successful [`PhysicalFile::flush`]);
//! - the **pending operations**: every `write_at` and `set_len` since that flush, in order.
//!
//! Reads see the durable image with every pending operation applied, exactly like a real file
//! system before a crash. A flush applies the pending operations of *that file only* to its
//! durable image.
//!
//! [`CrashStorage::crash`] (or [`CrashStorage::crash_with`]) produces the bytes a machine might
//! find after losing power now: starting from each durable image, every pending operation is
//! independently kept, dropped or torn (a prefix of the write kept, at byte or 512-byte sector
//! granularity), and the survivors are applied in their original order. That is the whole
//! physical contract of [`PhysicalFile`]: anything a real device may do is one of these images.
//!
//! For fault injection, [`CrashStorage::inject`] (and the shortcuts
//! [`CrashStorage::fail_writes_after`], [`CrashStorage::fail_flushes_after`],
//! [`CrashStorage::short_write_after`]) make chosen calls fail with a [`StorageError`], and
//! [`CrashStorage::crash_at_call`] / [`CrashStorage::crash_at_mutation`] simulate the power going
//! out *during* a given call: that call and every later one fail, nothing more is recorded, and
//! the harness takes [`CrashStorage::crash`] images of the state at that instant.
//!
//! Everything is deterministic: randomness comes from a seed through [`SplitMix64`].
//!
//! A `CrashStorage` is a handle: clones share the same files, so a test can keep one clone while
//! the volume (or a SQLite VFS) owns another.
//!
//! ```
//! use opfs_vfs::storage::{PhysicalFile, PhysicalFileId, Storage};
//! use opfs_vfs::testing::{CrashMode, CrashStorage};
//!
//! let mut st = CrashStorage::new();
//! let probe = st.clone(); // shares the files
//! let f = st.file(PhysicalFileId::Log);
//! f.write_at(0, b"durable").unwrap();
//! f.flush().unwrap();
//! f.write_at(0, b"DURABLE, maybe").unwrap();
//!
//! // Nothing pending survives with DropAll; everything with KeepAll.
//! let lost = probe.crash(0, CrashMode::DropAll);
//! assert_eq!(lost.get(PhysicalFileId::Log).bytes(), b"durable");
//! let kept = probe.crash(0, CrashMode::KeepAll);
//! assert_eq!(kept.get(PhysicalFileId::Log).bytes(), b"DURABLE, maybe");
//!
//! // Power goes out during the 2nd mutating call from now.
//! probe.crash_at_mutation(2);
//! let f = st.file(PhysicalFileId::Log);
//! f.flush().unwrap(); // call 1: happens
//! assert!(f.write_at(20, b"x").is_err()); // call 2: the power goes out
//! assert!(probe.is_frozen());
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::storage::{
    MemoryStorage, PhysicalFile, PhysicalFileId, Storage, StorageError, StorageResult,
};

/// Sector size used for sector-granular tears.
pub const SECTOR: u64 = 512;

// -------------------------------------------------------------------------------------------
// Randomness
// -------------------------------------------------------------------------------------------

/// SplitMix64: a tiny, fast, deterministic pseudo-random generator (not cryptographic). Used for
/// every random choice of the simulator, and handy for tests that need reproducible workloads.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed` (every seed, including 0, is fine).
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for tests, and never loops.
        let wide = u128::from(self.next_u64()) * u128::from(n);
        u64::try_from(wide >> 64).unwrap_or(0)
    }

    /// A value in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.below(hi - lo + 1)
    }

    /// An index in `0..len` (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        usize::try_from(self.below(len as u64)).unwrap_or(0)
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// Fills `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }

    /// Derives an independent seed from `seed` and `stream` (to give each crash point, image
    /// or worker its own sequence).
    pub fn mix(seed: u64, stream: u64) -> u64 {
        let mut g = SplitMix64::new(seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03));
        g.next_u64();
        g.next_u64()
    }
}

// -------------------------------------------------------------------------------------------
// Pending operations and their fates
// -------------------------------------------------------------------------------------------

/// A physical call not yet covered by a flush of its file.
#[derive(Clone, PartialEq, Eq)]
pub enum PendingOp {
    /// `write_at(offset, data)` (for a short write: only the bytes that were stored).
    Write {
        /// Byte offset.
        offset: u64,
        /// The bytes written.
        data: Vec<u8>,
    },
    /// `set_len(len)`.
    SetLen {
        /// The new length.
        len: u64,
    },
}

impl fmt::Debug for PendingOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PendingOp::Write { offset, data } => {
                write!(f, "Write {{ offset: {offset}, len: {} }}", data.len())
            }
            PendingOp::SetLen { len } => write!(f, "SetLen {{ len: {len} }}"),
        }
    }
}

/// A pending operation as shown to a crash chooser ([`CrashStorage::crash_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingInfo {
    /// The physical file.
    pub file: PhysicalFileId,
    /// Position among that file's pending operations (0 = oldest).
    pub index: usize,
    /// Position among all pending operations of all files, in call order (0 = oldest).
    pub global_index: usize,
    /// Byte offset of a write; the new length of a `set_len`.
    pub offset: u64,
    /// Bytes of a write; 0 for a `set_len`.
    pub len: u64,
    /// Whether this is a `set_len` (which can be kept or dropped, not torn).
    pub is_set_len: bool,
}

/// What a power loss does to one pending operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// The operation reached the medium entirely.
    Keep,
    /// The operation left no trace.
    Drop,
    /// Only the first `keep` bytes of the write reached the medium (clamped to the write's
    /// length; for a `set_len`, `Torn` means `Drop`).
    Torn {
        /// Bytes kept from the start of the write.
        keep: u64,
    },
}

/// How [`CrashStorage::crash`] chooses the fate of each pending operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CrashMode {
    /// Every pending operation survives (as if the OS got everything out in time).
    KeepAll,
    /// No pending operation survives (only flushed data remains).
    DropAll,
    /// Per file, the operations reach the medium in order until a random point: those before
    /// it are kept, the one at it is torn (at a random byte or sector boundary), the rest
    /// are dropped. The most common real behaviour.
    InOrder,
    /// Every operation independently: kept, dropped, or torn at a random byte or sector
    /// boundary (each with probability about 1/3). The adversarial model of the contract.
    Random,
    /// Like [`CrashMode::Random`], but tears only at 512-byte sector boundaries (absolute file
    /// offsets), like a disk with atomic sectors.
    RandomSectors,
}

/// A tear of a `len`-byte write at `offset`, at a random byte (`sectors == false`) or at a
/// random absolute sector boundary inside the write (may keep 0 bytes).
fn random_tear(rng: &mut SplitMix64, offset: u64, len: u64, sectors: bool) -> u64 {
    if len == 0 {
        return 0;
    }
    if !sectors {
        return rng.below(len);
    }
    // Sector boundaries strictly inside (offset, offset + len).
    let first = (offset / SECTOR + 1) * SECTOR;
    let end = offset + len;
    if first >= end {
        return 0;
    }
    let count = (end - 1 - first) / SECTOR + 1;
    first + rng.below(count) * SECTOR - offset
}

fn random_fate(rng: &mut SplitMix64, op: &PendingInfo, sectors_only: bool) -> Fate {
    match rng.below(3) {
        0 => Fate::Keep,
        1 => Fate::Drop,
        _ if op.is_set_len => Fate::Keep,
        _ => {
            let sectors = sectors_only || rng.chance(1, 2);
            Fate::Torn {
                keep: random_tear(rng, op.offset, op.len, sectors),
            }
        }
    }
}

// -------------------------------------------------------------------------------------------
// Faults
// -------------------------------------------------------------------------------------------

/// Which calls a [`Fault`] or a crash point counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    /// `read_at`.
    Read,
    /// `write_at`.
    Write,
    /// `flush`.
    Flush,
    /// `set_len`.
    SetLen,
    /// `len`.
    Len,
    /// A `write_at` or `set_len` that makes the file longer: how a storage quota fails (writes
    /// within the file's current length need no new space).
    Grow,
    /// Any call.
    Any,
}

impl FaultOp {
    fn matches(self, op: FaultOp, grows: bool) -> bool {
        self == FaultOp::Any
            || self == op
            || (self == FaultOp::Grow && grows && matches!(op, FaultOp::Write | FaultOp::SetLen))
    }

    fn name(self) -> &'static str {
        match self {
            FaultOp::Read => "read",
            FaultOp::Write => "write",
            FaultOp::Flush => "flush",
            FaultOp::SetLen => "truncate",
            FaultOp::Len => "getSize",
            FaultOp::Grow => "grow",
            FaultOp::Any => "any",
        }
    }
}

/// What an injected fault does to the call it hits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultEffect {
    /// The call changes nothing and returns this error.
    Fail(StorageError),
    /// A write stores only its first half (rounded down) and returns
    /// [`StorageError::ShortWrite`]; other calls just fail with that error.
    ShortWrite,
}

/// An injected failure: after `skip` matching calls succeed, the next matching call fails (and
/// with `sticky`, every later matching call too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Which calls are counted and failed.
    pub op: FaultOp,
    /// Only calls on this physical file (`None`: any file).
    pub file: Option<PhysicalFileId>,
    /// Matching calls that still succeed before the fault fires.
    pub skip: u64,
    /// What the failing call does.
    pub effect: FaultEffect,
    /// Keep failing every matching call after the first failure (e.g. a full disk).
    pub sticky: bool,
}

impl Fault {
    /// `Some(effect)` if this call should fail; updates the countdown.
    fn hit(&mut self, op: FaultOp, file: PhysicalFileId, grows: bool) -> Option<FaultEffect> {
        if !self.op.matches(op, grows) || self.file.is_some_and(|f| f != file) {
            return None;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        Some(self.effect.clone())
    }
}

/// Calls seen by a [`CrashStorage`] since it was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallCounts {
    /// Every call.
    pub calls: u64,
    /// `write_at`, `set_len` and `flush` calls (the ones that can change what survives).
    pub mutations: u64,
}

// -------------------------------------------------------------------------------------------
// The storage
// -------------------------------------------------------------------------------------------

#[derive(Clone, Default)]
struct SimFile {
    durable: Vec<u8>,
    current: Vec<u8>,
    pending: Vec<(usize, PendingOp)>, // (global sequence number, op)
}

fn apply(bytes: &mut Vec<u8>, op: &PendingOp, fate: Fate) {
    match (op, fate) {
        (_, Fate::Drop) => {}
        (PendingOp::SetLen { .. }, Fate::Torn { .. }) => {}
        (PendingOp::SetLen { len }, Fate::Keep) => {
            bytes.resize(usize::try_from(*len).expect("length fits memory"), 0);
        }
        (PendingOp::Write { offset, data }, fate) => {
            let keep = match fate {
                Fate::Torn { keep } => usize::try_from(keep).unwrap_or(usize::MAX),
                _ => data.len(),
            }
            .min(data.len());
            if keep == 0 {
                return;
            }
            let start = usize::try_from(*offset).expect("offset fits memory");
            let end = start + keep;
            if bytes.len() < end {
                bytes.resize(end, 0);
            }
            bytes[start..end].copy_from_slice(&data[..keep]);
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CrashAt {
    Call(u64),
    Mutation(u64),
}

#[derive(Default)]
struct Shared {
    files: [SimFile; 2],
    seq: usize,
    counts: CallCounts,
    faults: Vec<Fault>,
    crash_at: Option<CrashAt>,
    frozen: bool,
    /// Most bytes all files together may hold (a storage quota): a call that would make the
    /// total larger fails with `QuotaExceeded` and changes nothing.
    quota: Option<u64>,
}

impl Shared {
    /// Whether growing by `more` bytes would pass the quota.
    fn over_quota(&self, more: u64) -> bool {
        self.quota.is_some_and(|q| {
            let total: u64 = self.files.iter().map(|f| f.current.len() as u64).sum();
            total + more > q
        })
    }

    /// Bookkeeping common to every call: counts it, fires a crash point or a fault. `Ok(None)`:
    /// proceed normally.
    fn enter(&mut self, op: FaultOp, file: PhysicalFileId) -> Result<Option<FaultEffect>, Frozen> {
        self.enter_growing(op, file, false)
    }

    /// [`Shared::enter`] for a call that may make the file longer (`grows`).
    fn enter_growing(
        &mut self,
        op: FaultOp,
        file: PhysicalFileId,
        grows: bool,
    ) -> Result<Option<FaultEffect>, Frozen> {
        if self.frozen {
            return Err(Frozen::Before);
        }
        let mutation = matches!(op, FaultOp::Write | FaultOp::SetLen | FaultOp::Flush);
        self.counts.calls += 1;
        if mutation {
            self.counts.mutations += 1;
        }
        let fire = match self.crash_at {
            Some(CrashAt::Call(k)) => self.counts.calls >= k,
            Some(CrashAt::Mutation(k)) => mutation && self.counts.mutations >= k,
            None => false,
        };
        if fire {
            self.crash_at = None;
            self.frozen = true;
            return Err(Frozen::Now);
        }
        let mut effect = None;
        let mut i = 0;
        while i < self.faults.len() {
            if let Some(e) = self.faults[i].hit(op, file, grows) {
                if !self.faults[i].sticky {
                    self.faults.remove(i);
                }
                effect = Some(e);
                break;
            }
            i += 1;
        }
        Ok(effect)
    }

    /// Per file, the call-order rank of each pending operation among all pending ones.
    fn ranks(&self) -> [Vec<usize>; 2] {
        let mut all: Vec<(usize, usize, usize)> = Vec::new(); // (seq, file, index)
        for (fi, f) in self.files.iter().enumerate() {
            all.extend(
                f.pending
                    .iter()
                    .enumerate()
                    .map(|(i, (seq, _))| (*seq, fi, i)),
            );
        }
        all.sort_unstable();
        let mut out = [
            vec![0; self.files[0].pending.len()],
            vec![0; self.files[1].pending.len()],
        ];
        for (rank, (_, fi, i)) in all.into_iter().enumerate() {
            out[fi][i] = rank;
        }
        out
    }

    fn record(&mut self, file: PhysicalFileId, op: PendingOp) {
        let f = &mut self.files[file.index()];
        apply(&mut f.current, &op, Fate::Keep);
        f.pending.push((self.seq, op));
        self.seq += 1;
    }
}

/// Why a call did not happen normally.
enum Frozen {
    /// The power was already out.
    Before,
    /// The power goes out during this call.
    Now,
}

fn power_loss(op: FaultOp) -> StorageError {
    StorageError::Platform {
        op: op.name(),
        name: "PowerLoss".into(),
        message: "simulated power loss: the storage is frozen".into(),
    }
}

/// Physical files that remember what a power loss could leave behind. See the module docs.
///
/// Clones share the same files (it is a handle).
#[derive(Clone)]
pub struct CrashStorage {
    shared: Arc<Mutex<Shared>>,
    files: [CrashFile; 2],
}

impl Default for CrashStorage {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for CrashStorage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        let mut d = f.debug_struct("CrashStorage");
        for id in PhysicalFileId::ALL {
            let file = &s.files[id.index()];
            d.field(
                id.file_name(),
                &format_args!(
                    "durable {} B, current {} B, {} pending",
                    file.durable.len(),
                    file.current.len(),
                    file.pending.len()
                ),
            );
        }
        d.field("counts", &s.counts)
            .field("frozen", &s.frozen)
            .finish()
    }
}

impl CrashStorage {
    /// Empty physical files, nothing pending.
    pub fn new() -> Self {
        Self::from_image(&MemoryStorage::new())
    }

    /// Physical files whose durable contents are `image` (e.g. a crash image, to simulate a
    /// second power loss after recovery), nothing pending.
    pub fn from_image(image: &MemoryStorage) -> Self {
        let mut sh = Shared::default();
        for id in PhysicalFileId::ALL {
            let bytes = image.get(id).bytes().to_vec();
            sh.files[id.index()] = SimFile {
                durable: bytes.clone(),
                current: bytes,
                pending: Vec::new(),
            };
        }
        let shared = Arc::new(Mutex::new(sh));
        let files = PhysicalFileId::ALL.map(|id| CrashFile {
            id,
            shared: Arc::clone(&shared),
        });
        Self { shared, files }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic while holding the lock cannot leave the state half-updated in a way that
        // matters to a test; keep going.
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }

    // --- images --------------------------------------------------------------------------

    /// What reads see now (durable plus every pending operation): what survives a crash of
    /// the process but not of the machine.
    pub fn current_image(&self) -> MemoryStorage {
        let s = self.lock();
        let mut m = MemoryStorage::new();
        for id in PhysicalFileId::ALL {
            m.get_mut(id)
                .bytes_mut()
                .clone_from(&s.files[id.index()].current);
        }
        m
    }

    /// Only what was flushed: the same as `crash(_, CrashMode::DropAll)`.
    pub fn durable_image(&self) -> MemoryStorage {
        self.crash_with(|_| Fate::Drop)
    }

    /// Every pending operation, oldest first (per file; `global_index` gives the call order
    /// across files).
    pub fn pending(&self) -> Vec<PendingInfo> {
        let s = self.lock();
        let ranks = s.ranks();
        let mut out = Vec::new();
        for id in PhysicalFileId::ALL {
            for (index, (_, op)) in s.files[id.index()].pending.iter().enumerate() {
                out.push(info(id, index, ranks[id.index()][index], op));
            }
        }
        out
    }

    /// The physical files after a simulated power loss now, with each pending operation's
    /// fate chosen by `mode` from `seed`. Does not change this storage.
    pub fn crash(&self, seed: u64, mode: CrashMode) -> MemoryStorage {
        let mut rng = SplitMix64::new(seed);
        match mode {
            CrashMode::KeepAll => self.crash_with(|_| Fate::Keep),
            CrashMode::DropAll => self.crash_with(|_| Fate::Drop),
            CrashMode::Random => self.crash_with(|op| random_fate(&mut rng, op, false)),
            CrashMode::RandomSectors => self.crash_with(|op| random_fate(&mut rng, op, true)),
            CrashMode::InOrder => {
                let counts: Vec<usize> = {
                    let s = self.lock();
                    s.files.iter().map(|f| f.pending.len()).collect()
                };
                // Per file: ops before `cut` kept, op `cut` torn (or kept if a set_len).
                let cuts: Vec<usize> = counts.iter().map(|&n| rng.index(n + 1)).collect();
                self.crash_with(|op| {
                    let cut = cuts[op.file.index()];
                    if op.index < cut {
                        Fate::Keep
                    } else if op.index == cut && !op.is_set_len {
                        let sectors = rng.chance(1, 2);
                        Fate::Torn {
                            keep: random_tear(&mut rng, op.offset, op.len, sectors),
                        }
                    } else {
                        Fate::Drop
                    }
                })
            }
        }
    }

    /// The physical files after a simulated power loss now, with each pending operation's
    /// fate chosen by `choose` (called once per operation, per file in order). Does not
    /// change this storage.
    pub fn crash_with(&self, mut choose: impl FnMut(&PendingInfo) -> Fate) -> MemoryStorage {
        let s = self.lock();
        let ranks = s.ranks();
        let mut m = MemoryStorage::new();
        for id in PhysicalFileId::ALL {
            let f = &s.files[id.index()];
            let mut bytes = f.durable.clone();
            for (index, (_, op)) in f.pending.iter().enumerate() {
                let fate = choose(&info(id, index, ranks[id.index()][index], op));
                apply(&mut bytes, op, fate);
            }
            *m.get_mut(id).bytes_mut() = bytes;
        }
        m
    }

    // --- crash points --------------------------------------------------------------------

    /// The power goes out during the `k`-th physical call (of any kind) from now, counting
    /// from 1 (`k == 0` acts like 1). A write or `set_len` at that call is recorded as
    /// pending (so crash images may keep, drop or tear it) and fails; a flush does not
    /// happen. From then on the storage is frozen: every call fails, nothing changes, and
    /// [`CrashStorage::crash`] shows the state at that instant.
    pub fn crash_at_call(&self, k: u64) {
        let mut s = self.lock();
        let target = s.counts.calls + k.max(1);
        s.crash_at = Some(CrashAt::Call(target));
    }

    /// Like [`CrashStorage::crash_at_call`], but counts only `write_at`, `set_len` and
    /// `flush` (the calls that change what can survive).
    pub fn crash_at_mutation(&self, k: u64) {
        let mut s = self.lock();
        let target = s.counts.mutations + k.max(1);
        s.crash_at = Some(CrashAt::Mutation(target));
    }

    /// Freezes now, as if the power went out between two calls.
    pub fn freeze(&self) {
        let mut s = self.lock();
        s.crash_at = None;
        s.frozen = true;
    }

    /// Whether the power is out (every call fails).
    pub fn is_frozen(&self) -> bool {
        self.lock().frozen
    }

    /// Calls seen since creation.
    pub fn counts(&self) -> CallCounts {
        self.lock().counts
    }

    /// Restarts the call counts from zero (crash points count from here).
    pub fn clear_counts(&self) {
        self.lock().counts = CallCounts::default();
    }

    // --- faults --------------------------------------------------------------------------

    /// Adds a fault. Faults are checked in the order added; the first that fires decides.
    pub fn inject(&self, fault: Fault) {
        self.lock().faults.push(fault);
    }

    /// After `n` more successful `write_at` calls (any file), every write fails with `error`
    /// and changes nothing, until [`CrashStorage::clear_faults`].
    pub fn fail_writes_after(&self, n: u64, error: StorageError) {
        self.inject(Fault {
            op: FaultOp::Write,
            file: None,
            skip: n,
            effect: FaultEffect::Fail(error),
            sticky: true,
        });
    }

    /// After `n` more successful flushes (any file), every flush fails with `error` and
    /// makes nothing durable, until [`CrashStorage::clear_faults`].
    pub fn fail_flushes_after(&self, n: u64, error: StorageError) {
        self.inject(Fault {
            op: FaultOp::Flush,
            file: None,
            skip: n,
            effect: FaultEffect::Fail(error),
            sticky: true,
        });
    }

    /// After `n` more successful `write_at` calls (any file), every write stores only its
    /// first half and returns [`StorageError::ShortWrite`] (quota running out mid-write),
    /// until [`CrashStorage::clear_faults`].
    pub fn short_write_after(&self, n: u64) {
        self.inject(Fault {
            op: FaultOp::Write,
            file: None,
            skip: n,
            effect: FaultEffect::ShortWrite,
            sticky: true,
        });
    }

    /// Sets a quota: the files together may hold at most `bytes` (`None`: unlimited). A write
    /// or `set_len` that would grow the total beyond it fails with
    /// [`StorageError::QuotaExceeded`] and changes nothing, like a browser's storage quota.
    pub fn set_quota(&self, bytes: Option<u64>) {
        self.lock().quota = bytes;
    }

    /// Bytes all files hold now.
    pub fn total_len(&self) -> u64 {
        self.lock()
            .files
            .iter()
            .map(|f| f.current.len() as u64)
            .sum()
    }

    /// Removes every fault (and a crash point not reached yet). Does not unfreeze.
    pub fn clear_faults(&self) {
        let mut s = self.lock();
        s.faults.clear();
        s.crash_at = None;
    }
}

fn info(file: PhysicalFileId, index: usize, global_index: usize, op: &PendingOp) -> PendingInfo {
    match op {
        PendingOp::Write { offset, data } => PendingInfo {
            file,
            index,
            global_index,
            offset: *offset,
            len: data.len() as u64,
            is_set_len: false,
        },
        PendingOp::SetLen { len } => PendingInfo {
            file,
            index,
            global_index,
            offset: *len,
            len: 0,
            is_set_len: true,
        },
    }
}

impl Storage for CrashStorage {
    fn file(&mut self, id: PhysicalFileId) -> &mut dyn PhysicalFile {
        &mut self.files[id.index()]
    }
}

/// One physical file of a [`CrashStorage`].
pub struct CrashFile {
    id: PhysicalFileId,
    shared: Arc<Mutex<Shared>>,
}

impl Clone for CrashFile {
    fn clone(&self) -> Self {
        Self {
            id: self.id,
            shared: Arc::clone(&self.shared),
        }
    }
}

impl fmt::Debug for CrashFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrashFile").field("id", &self.id).finish()
    }
}

impl CrashFile {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn to_usize(value: u64) -> StorageResult<usize> {
    usize::try_from(value).map_err(|_| StorageError::OutOfRange { value })
}

impl PhysicalFile for CrashFile {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> StorageResult<usize> {
        let mut s = self.lock();
        match s.enter(FaultOp::Read, self.id) {
            Err(_) => return Err(power_loss(FaultOp::Read)),
            Ok(Some(FaultEffect::Fail(e))) => return Err(e),
            Ok(Some(FaultEffect::ShortWrite)) => {
                return Err(StorageError::Platform {
                    op: "read",
                    name: "InjectedFault".into(),
                    message: "injected read failure".into(),
                })
            }
            Ok(None) => {}
        }
        let cur = &s.files[self.id.index()].current;
        if offset >= cur.len() as u64 {
            return Ok(0);
        }
        let start = to_usize(offset)?;
        let n = buf.len().min(cur.len() - start);
        buf[..n].copy_from_slice(&cur[start..start + n]);
        Ok(n)
    }

    fn write_at(&mut self, offset: u64, data: &[u8]) -> StorageResult<()> {
        let end = offset
            .checked_add(data.len() as u64)
            .ok_or(StorageError::OutOfRange { value: offset })?;
        to_usize(end)?;
        let mut s = self.lock();
        let op = |data: &[u8]| PendingOp::Write {
            offset,
            data: data.to_vec(),
        };
        let cur = s.files[self.id.index()].current.len() as u64;
        let grows = end > cur;
        if grows && s.over_quota(end - cur) {
            return Err(StorageError::QuotaExceeded {
                message: "quota exceeded (simulated)".into(),
            });
        }
        match s.enter_growing(FaultOp::Write, self.id, grows) {
            Err(Frozen::Before) => Err(power_loss(FaultOp::Write)),
            Err(Frozen::Now) => {
                // The write was in flight when the power went out: it may or may not land.
                s.record(self.id, op(data));
                Err(power_loss(FaultOp::Write))
            }
            Ok(Some(FaultEffect::Fail(e))) => Err(e),
            Ok(Some(FaultEffect::ShortWrite)) => {
                let written = data.len() / 2;
                if written > 0 {
                    s.record(self.id, op(&data[..written]));
                }
                Err(StorageError::ShortWrite {
                    offset,
                    requested: data.len() as u64,
                    written: written as u64,
                })
            }
            Ok(None) => {
                if !data.is_empty() {
                    s.record(self.id, op(data));
                }
                Ok(())
            }
        }
    }

    fn len(&mut self) -> StorageResult<u64> {
        let mut s = self.lock();
        match s.enter(FaultOp::Len, self.id) {
            Err(_) => Err(power_loss(FaultOp::Len)),
            Ok(Some(FaultEffect::Fail(e))) => Err(e),
            Ok(Some(FaultEffect::ShortWrite)) => Err(StorageError::Platform {
                op: "getSize",
                name: "InjectedFault".into(),
                message: "injected getSize failure".into(),
            }),
            Ok(None) => Ok(s.files[self.id.index()].current.len() as u64),
        }
    }

    fn set_len(&mut self, len: u64) -> StorageResult<()> {
        to_usize(len)?;
        let mut s = self.lock();
        let cur = s.files[self.id.index()].current.len() as u64;
        let grows = len > cur;
        if grows && s.over_quota(len - cur) {
            return Err(StorageError::QuotaExceeded {
                message: "quota exceeded (simulated)".into(),
            });
        }
        match s.enter_growing(FaultOp::SetLen, self.id, grows) {
            Err(Frozen::Before) => Err(power_loss(FaultOp::SetLen)),
            Err(Frozen::Now) => {
                s.record(self.id, PendingOp::SetLen { len });
                Err(power_loss(FaultOp::SetLen))
            }
            Ok(Some(FaultEffect::Fail(e))) => Err(e),
            Ok(Some(FaultEffect::ShortWrite)) => Err(StorageError::QuotaExceeded {
                message: "injected: quota exceeded on truncate".into(),
            }),
            Ok(None) => {
                s.record(self.id, PendingOp::SetLen { len });
                Ok(())
            }
        }
    }

    fn flush(&mut self) -> StorageResult<()> {
        let mut s = self.lock();
        match s.enter(FaultOp::Flush, self.id) {
            Err(_) => Err(power_loss(FaultOp::Flush)),
            Ok(Some(FaultEffect::Fail(e))) => Err(e),
            Ok(Some(FaultEffect::ShortWrite)) => Err(StorageError::Platform {
                op: "flush",
                name: "InjectedFault".into(),
                message: "injected flush failure".into(),
            }),
            Ok(None) => {
                let f = &mut s.files[self.id.index()];
                let pending = std::mem::take(&mut f.pending);
                for (_, op) in &pending {
                    apply(&mut f.durable, op, Fate::Keep);
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(st: &mut CrashStorage) -> &mut dyn PhysicalFile {
        st.file(PhysicalFileId::Log)
    }

    #[test]
    fn pending_writes_keep_drop_and_tear() {
        let mut st = CrashStorage::new();
        log(&mut st).write_at(0, &[1; 1000]).unwrap();
        log(&mut st).flush().unwrap();
        log(&mut st).write_at(1000, &[2; 2000]).unwrap();
        log(&mut st).write_at(0, &[3; 10]).unwrap();
        st.file(PhysicalFileId::Data).write_at(0, b"d").unwrap();

        let mut buf = vec![0; 3000];
        assert_eq!(log(&mut st).read_at(0, &mut buf).unwrap(), 3000);
        assert_eq!(&buf[..10], &[3; 10]);
        assert_eq!(log(&mut st).len().unwrap(), 3000);

        let kept = st.crash(1, CrashMode::KeepAll);
        assert_eq!(kept.get(PhysicalFileId::Log).bytes(), &buf[..]);
        assert_eq!(kept.get(PhysicalFileId::Data).bytes(), b"d");
        let dropped = st.crash(1, CrashMode::DropAll);
        assert_eq!(dropped.get(PhysicalFileId::Log).bytes(), &[1; 1000][..]);
        assert!(dropped.get(PhysicalFileId::Data).bytes().is_empty());

        let pend = st.pending();
        assert_eq!(pend.len(), 3);
        assert_eq!(
            pend.iter().map(|p| p.global_index).collect::<Vec<_>>(),
            vec![2, 0, 1],
            "per file (data first), with the call order across files"
        );
        // Tear the 2000-byte write after 700 bytes, drop the second, keep the data write.
        let torn = st.crash_with(|p| match (p.file, p.index) {
            (PhysicalFileId::Log, 0) => Fate::Torn { keep: 700 },
            (PhysicalFileId::Log, _) => Fate::Drop,
            _ => Fate::Keep,
        });
        let b = torn.get(PhysicalFileId::Log).bytes();
        assert_eq!(b.len(), 1700);
        assert!(b[..1000].iter().all(|&x| x == 1));
        assert!(b[1000..].iter().all(|&x| x == 2));

        // Flush of the log makes its writes durable; the data write stays pending.
        log(&mut st).flush().unwrap();
        let dropped = st.crash(1, CrashMode::DropAll);
        assert_eq!(dropped.get(PhysicalFileId::Log).bytes(), &buf[..]);
        assert!(dropped.get(PhysicalFileId::Data).bytes().is_empty());
    }

    #[test]
    fn set_len_is_pending_too() {
        let mut st = CrashStorage::new();
        log(&mut st).write_at(0, &[9; 100]).unwrap();
        log(&mut st).flush().unwrap();
        log(&mut st).set_len(10).unwrap();
        log(&mut st).write_at(20, &[8; 5]).unwrap();
        assert_eq!(log(&mut st).len().unwrap(), 25);
        let img = st.crash_with(|p| if p.is_set_len { Fate::Drop } else { Fate::Keep });
        let b = img.get(PhysicalFileId::Log).bytes();
        assert_eq!(b.len(), 100);
        assert_eq!(&b[20..25], &[8; 5]);
        let img = st.crash(0, CrashMode::KeepAll);
        let b = img.get(PhysicalFileId::Log).bytes();
        assert_eq!(b, &[&[9u8; 10][..], &[0; 10], &[8; 5]].concat()[..]);
    }

    #[test]
    fn tears_stay_inside_the_write_and_sectors_are_aligned() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..10_000 {
            let offset = rng.below(5000);
            let len = rng.range(1, 3000);
            let k = random_tear(&mut rng, offset, len, false);
            assert!(k < len);
            let k = random_tear(&mut rng, offset, len, true);
            assert!(k < len);
            assert!(
                k == 0 || (offset + k).is_multiple_of(SECTOR),
                "{offset} {len} {k}"
            );
        }
        // Every mode is deterministic from its seed.
        let mut st = CrashStorage::new();
        for i in 0..20u8 {
            log(&mut st)
                .write_at(u64::from(i) * 700, &[i; 1300])
                .unwrap();
        }
        for mode in [
            CrashMode::Random,
            CrashMode::RandomSectors,
            CrashMode::InOrder,
        ] {
            let a = st.crash(42, mode);
            let b = st.crash(42, mode);
            assert_eq!(
                a.get(PhysicalFileId::Log).bytes(),
                b.get(PhysicalFileId::Log).bytes()
            );
        }
    }

    #[test]
    fn crash_point_freezes_and_records_the_in_flight_write() {
        let mut st = CrashStorage::new();
        st.crash_at_call(3);
        log(&mut st).write_at(0, b"one").unwrap(); // 1
        let mut b = [0; 3];
        log(&mut st).read_at(0, &mut b).unwrap(); // 2
        assert!(log(&mut st).write_at(3, b"two").is_err()); // 3: power out
        assert!(st.is_frozen());
        assert!(log(&mut st).flush().is_err());
        assert!(log(&mut st).read_at(0, &mut b).is_err());
        assert_eq!(st.pending().len(), 2);
        let img = st.crash(0, CrashMode::KeepAll);
        assert_eq!(img.get(PhysicalFileId::Log).bytes(), b"onetwo");
        assert_eq!(st.counts().calls, 3);

        let mut st = CrashStorage::new();
        st.crash_at_mutation(2);
        log(&mut st).write_at(0, b"one").unwrap();
        log(&mut st).read_at(0, &mut b).unwrap();
        log(&mut st).len().unwrap();
        assert!(log(&mut st).flush().is_err()); // mutation 2: the flush does not happen
        let img = st.crash(0, CrashMode::DropAll);
        assert!(img.get(PhysicalFileId::Log).bytes().is_empty());
    }

    #[test]
    fn faults_fire_after_n_calls() {
        let mut st = CrashStorage::new();
        st.fail_writes_after(
            1,
            StorageError::QuotaExceeded {
                message: "full".into(),
            },
        );
        log(&mut st).write_at(0, b"ok").unwrap();
        assert!(matches!(
            log(&mut st).write_at(2, b"no"),
            Err(StorageError::QuotaExceeded { .. })
        ));
        assert!(log(&mut st).write_at(2, b"no").is_err(), "sticky");
        st.clear_faults();
        log(&mut st).write_at(2, b"yes").unwrap();

        st.short_write_after(0);
        assert_eq!(
            log(&mut st).write_at(5, b"abcd"),
            Err(StorageError::ShortWrite {
                offset: 5,
                requested: 4,
                written: 2
            })
        );
        st.clear_faults();
        let mut b = vec![0; 10];
        let n = log(&mut st).read_at(0, &mut b).unwrap();
        assert_eq!(&b[..n], b"okyesab");

        st.fail_flushes_after(
            0,
            StorageError::Platform {
                op: "flush",
                name: "InvalidStateError".into(),
                message: "x".into(),
            },
        );
        assert!(log(&mut st).flush().is_err());
        st.clear_faults();
        assert_eq!(st.pending().len(), 3);
        log(&mut st).flush().unwrap();
        assert!(st.pending().is_empty());

        // A one-shot fault on one file only.
        st.inject(Fault {
            op: FaultOp::Any,
            file: Some(PhysicalFileId::Data),
            skip: 0,
            effect: FaultEffect::Fail(StorageError::Platform {
                op: "any",
                name: "X".into(),
                message: "y".into(),
            }),
            sticky: false,
        });
        log(&mut st).len().unwrap();
        assert!(st.file(PhysicalFileId::Data).len().is_err());
        st.file(PhysicalFileId::Data).len().unwrap();
    }

    #[test]
    fn from_image_starts_durable() {
        let mut m = MemoryStorage::new();
        m.get_mut(PhysicalFileId::Data)
            .bytes_mut()
            .extend_from_slice(b"abc");
        let mut st = CrashStorage::from_image(&m);
        assert_eq!(st.file(PhysicalFileId::Data).len().unwrap(), 3);
        let img = st.crash(0, CrashMode::DropAll);
        assert_eq!(img.get(PhysicalFileId::Data).bytes(), b"abc");
        assert_eq!(st.current_image().get(PhysicalFileId::Data).bytes(), b"abc");
    }
}
