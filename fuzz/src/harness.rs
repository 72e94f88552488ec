//! One execution: mount the image, run the plan, check the rules listed in the crate docs.
//! A broken rule panics (libFuzzer reports it as a crash, with the input saved).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use opfs_vfs::storage::MemoryStorage;
use opfs_vfs::{BufferMode, Durability, Error, FileId, SyncLevel, Volume, VolumeOptions};

use crate::input::{decode, Op, Opts, Plan};
use crate::seeds::storage_of;

/// Files up to this length are read whole by `ReadAll`; longer ones at their start, middle
/// and end.
const READ_WHOLE: u64 = 1 << 20;
/// Piece size of reads.
const PIECE: usize = 64 << 10;
/// Files modeled byte for byte up to this length (beyond: unknown, never allocated).
const MODEL_MAX: u64 = 4 << 20;

/// What the harness knows about a file's contents.
#[derive(Clone, Debug)]
enum Known {
    /// Written in this execution: exactly these bytes.
    Bytes(Vec<u8>),
    /// From the image, or no longer tracked.
    Unknown,
}

/// The files by name: the live view and the last committed one.
#[derive(Clone, Debug, Default)]
struct Model {
    live: BTreeMap<String, Known>,
    committed: BTreeMap<String, Known>,
}

impl Model {
    fn from_volume(v: &Volume<MemoryStorage>) -> Model {
        let live: BTreeMap<String, Known> = v
            .list()
            .into_iter()
            .map(|m| (m.name, Known::Unknown))
            .collect();
        Model {
            committed: live.clone(),
            live,
        }
    }

    fn forget_all(&mut self) {
        for k in self.live.values_mut().chain(self.committed.values_mut()) {
            *k = Known::Unknown;
        }
    }
}

/// `FUZZ_TRACE=1`: print every operation and its result (for replaying a finding).
fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("FUZZ_TRACE").is_some())
}

/// Errors that a damaged image or a bad argument explain. Everything else comes only from a
/// failing storage, and `MemoryStorage` never fails.
fn check_err(e: &Error, what: &str) {
    let explained = matches!(
        e,
        Error::Corrupt { .. }
            | Error::UnsupportedVersion { .. }
            | Error::NewerCheckpointLost { .. }
            | Error::NotFound { .. }
            | Error::AlreadyExists { .. }
            | Error::InvalidName { .. }
            | Error::StaleId { .. }
            | Error::TooLarge { .. }
            | Error::FileIdsExhausted { .. }
    );
    assert!(
        explained,
        "{what}: error that only a failing storage could cause: {e:?}"
    );
}

fn options(o: &Opts) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: if o.disk {
            BufferMode::Disk
        } else {
            BufferMode::Memory
        },
        durability: match o.durability % 3 {
            0 => Durability::Strict,
            1 => Durability::Relaxed,
            _ => Durability::Balanced,
        },
        // Zero: every poll has work to do (deterministic, no sleeping).
        max_flush_delay: Duration::ZERO,
        write_buffer_bytes: if o.small_buffers { 8 << 10 } else { 1 << 20 },
        checkpoint_bytes: if o.eager_checkpoints {
            32 << 10
        } else {
            16 << 20
        },
        checkpoint_max_bytes: if o.eager_checkpoints {
            128 << 10
        } else {
            64 << 20
        },
        idle_checkpoint_bytes: 16 << 10,
        idle_checkpoint_after: Duration::ZERO,
        checkpoint_on_close: !o.no_close_checkpoint,
        // Small: a hostile size must not make Memory mode allocate (see the crate docs). Also
        // keeps executions fast: a resident file takes at least one 64 KiB chunk, however small.
        memory_budget: Some(if o.small_buffers { 128 << 10 } else { 1 << 20 }),
        disk_cache_bytes: if o.small_buffers { 16 << 10 } else { 256 << 10 },
        space_limit: None,
        // What users get: small changes logged as patches (Strict and Relaxed).
        log_patches: true,
        // Tail links for commits and spills of a few pages, so the fuzzer reaches them.
        link_min_bytes: Some(if o.small_buffers { 16 << 10 } else { 256 << 10 }),
    }
}

const NAMES: [&str; 8] = ["a", "b", "c", "d.db", "d.db-journal", "dir/x", "", "a\0b"];

fn name_for(v: &Volume<MemoryStorage>, i: u8) -> String {
    let list = v.list();
    let n = NAMES.len() + 2;
    let k = usize::from(i);
    if k % 2 == 1 && !list.is_empty() {
        return list[(k / 2) % list.len()].name.clone();
    }
    match (k / 2) % n {
        j if j < NAMES.len() => NAMES[j].to_owned(),
        j if j == NAMES.len() => "n".repeat(1024),
        _ => "n".repeat(1025),
    }
}

fn pick(v: &Volume<MemoryStorage>, i: u8) -> Option<(String, FileId, u64)> {
    let list = v.list();
    if list.is_empty() {
        return None;
    }
    let m = &list[usize::from(i) % list.len()];
    Some((m.name.clone(), m.id, m.len))
}

/// Bytes a `Write` op writes: `byte`, varied by position so misplaced pages show.
fn pattern(len: usize, byte: u8, at: u64) -> Vec<u8> {
    (0..len)
        .map(|i| byte ^ ((at as usize + i) as u8).rotate_left(3))
        .collect()
}

/// State of one mount within an execution.
struct Run {
    opts: Opts,
    model: Model,
    /// `check_integrity` was clean and no `Corrupt` came since: the volume must close and
    /// mount again.
    clean: bool,
    /// Read buffer (one allocation per execution).
    buf: Vec<u8>,
}

impl Run {
    fn note(&mut self, r: Result<(), Error>, what: &str) -> bool {
        if trace() {
            eprintln!("  {what}: {r:?}");
        }
        match r {
            Ok(()) => true,
            Err(e) => {
                check_err(&e, what);
                if matches!(e, Error::Corrupt { .. }) {
                    self.clean = false;
                }
                false
            }
        }
    }

    fn invariants(&self, v: &Volume<MemoryStorage>, after: &str) {
        if let Err(e) = v.check_invariants() {
            panic!("invariant broken after {after}: {e}");
        }
    }

    /// Reads a file in pieces (bounded) and compares with the model where it knows the bytes.
    fn read_file(&mut self, v: &mut Volume<MemoryStorage>, name: &str, id: FileId, len: u64) {
        let known = match self.model.live.get(name) {
            Some(Known::Bytes(b)) => Some(b.clone()),
            _ => None,
        };
        if let Some(b) = &known {
            assert_eq!(
                len,
                b.len() as u64,
                "length of {name:?} differs from what was written"
            );
        }
        let ranges: Vec<(u64, u64)> = if len <= READ_WHOLE || known.is_some() {
            vec![(0, len)]
        } else {
            let p = PIECE as u64;
            vec![(0, p), (len / 2, len / 2 + p), (len - p, len)]
        };
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(PIECE, 0);
        for (start, end) in ranges {
            let mut at = start;
            while at < end {
                let want = usize::try_from((end - at).min(PIECE as u64)).unwrap_or(PIECE);
                match v.read(id, at, &mut buf[..want]) {
                    Ok(n) => {
                        assert_eq!(n, want, "short read of {name:?} at {at} (len {len})");
                        if let Some(b) = &known {
                            let s = at as usize;
                            assert!(
                                buf[..n] == b[s..s + n],
                                "{name:?} reads other bytes than were written, at {at}"
                            );
                        }
                        at += n as u64;
                    }
                    Err(e) => {
                        assert!(
                            known.is_none(),
                            "reading {name:?}, written in this execution, failed: {e:?}"
                        );
                        self.note(Err(e), "read");
                        break;
                    }
                }
            }
        }
        self.buf = buf;
    }

    fn read_all(&mut self, v: &mut Volume<MemoryStorage>) {
        for m in v.list() {
            self.read_file(v, &m.name, m.id, m.len);
        }
        // Every file the model knows exists.
        let known: Vec<String> = self
            .model
            .live
            .iter()
            .filter(|(_, k)| matches!(k, Known::Bytes(_)))
            .map(|(n, _)| n.clone())
            .collect();
        for name in known {
            assert!(
                v.exists(&name),
                "{name:?}, written in this execution, is gone"
            );
        }
    }

    /// Mounts; on success checks the invariants and reconciles the model with the list.
    fn mount(&mut self, st: MemoryStorage, what: &str) -> Option<Volume<MemoryStorage>> {
        let must = self.clean;
        match Volume::mount(st, options(&self.opts)) {
            Ok(mut v) => {
                if self.opts.durability / 3 % 2 == 1 {
                    // Like the browser's timer, minus the timer: `poll` operations run what
                    // is due.
                    v.set_deadline_hook(|_| {});
                }
                self.invariants(&v, what);
                let names: Vec<String> = v.list().into_iter().map(|m| m.name).collect();
                let mut live = BTreeMap::new();
                for n in names {
                    let k = self.model.committed.remove(&n).unwrap_or(Known::Unknown);
                    live.insert(n, k);
                }
                for (n, k) in &self.model.committed {
                    assert!(
                        !matches!(k, Known::Bytes(_)),
                        "{n:?}, committed in this execution, is gone after {what}"
                    );
                }
                self.model.live = live.clone();
                self.model.committed = live;
                // A new mount: cleanliness must be checked again.
                self.clean = false;
                Some(v)
            }
            Err(e) => {
                assert!(
                    !must,
                    "{what}: a volume that checked clean and closed cleanly does not mount: {e:?}"
                );
                check_err(&e, what);
                None
            }
        }
    }

    /// Runs one op; returns the volume to continue with (None: the execution ends).
    fn op(&mut self, v: Volume<MemoryStorage>, op: Op) -> Option<Volume<MemoryStorage>> {
        if trace() {
            eprintln!("op {op:?}");
        }
        let r = self.op_inner(v, op);
        if trace() {
            eprintln!("  -> model {:?}", self.model_summary());
        }
        r
    }

    fn model_summary(&self) -> Vec<(String, Option<usize>)> {
        let short = |n: &String| n.chars().take(12).collect::<String>();
        self.model
            .live
            .iter()
            .filter(|(_, k)| matches!(k, Known::Bytes(_)))
            .map(|(n, k)| {
                let len = match k {
                    Known::Bytes(b) => Some(b.len()),
                    Known::Unknown => None,
                };
                (short(n), len)
            })
            .collect()
    }

    fn op_inner(&mut self, mut v: Volume<MemoryStorage>, op: Op) -> Option<Volume<MemoryStorage>> {
        match op {
            Op::ReadAll => self.read_all(&mut v),
            Op::Read { file, at, len } => {
                if let Some((name, id, flen)) = pick(&v, file) {
                    let at = at.get(flen);
                    let mut buf = vec![0u8; usize::from(len)];
                    match v.read(id, at, &mut buf) {
                        Ok(n) => {
                            let expect = flen.saturating_sub(at).min(u64::from(len));
                            assert_eq!(n as u64, expect, "read count of {name:?} at {at}");
                            if let Some(Known::Bytes(b)) = self.model.live.get(&name) {
                                if n > 0 {
                                    let s = at as usize;
                                    assert!(buf[..n] == b[s..s + n], "{name:?} differs at {at}");
                                }
                            }
                        }
                        Err(e) => {
                            let known = matches!(self.model.live.get(&name), Some(Known::Bytes(_)));
                            assert!(!known, "reading {name:?} (written here) failed: {e:?}");
                            self.note(Err(e), "read");
                        }
                    }
                }
            }
            Op::Write {
                file,
                at,
                len,
                byte,
            } => {
                if let Some((name, id, flen)) = pick(&v, file) {
                    let at = at.get(flen);
                    let data = pattern(usize::from(len), byte, at);
                    let r = v.write(id, at, &data);
                    // A write of no bytes changes nothing (it does not extend the file).
                    if self.note(r, "write") && !data.is_empty() {
                        let end = at + data.len() as u64;
                        let k = self.model.live.entry(name).or_insert(Known::Unknown);
                        match k {
                            Known::Bytes(b) if end <= MODEL_MAX => {
                                if b.len() < end as usize {
                                    b.resize(end as usize, 0);
                                }
                                b[at as usize..end as usize].copy_from_slice(&data);
                            }
                            _ => *k = Known::Unknown,
                        }
                    }
                }
            }
            Op::Create { name } => {
                let name = name_for(&v, name);
                match v.create(&name) {
                    Ok(_) => {
                        self.model.live.insert(name, Known::Bytes(Vec::new()));
                    }
                    Err(e) => {
                        self.note(Err(e), "create");
                    }
                }
            }
            Op::SetLen { file, len } => {
                if let Some((name, id, flen)) = pick(&v, file) {
                    let n = len.get(flen);
                    if self.note(v.set_len(id, n), "set_len") {
                        let k = self.model.live.entry(name).or_insert(Known::Unknown);
                        match k {
                            Known::Bytes(b) if n <= MODEL_MAX => b.resize(n as usize, 0),
                            _ => *k = Known::Unknown,
                        }
                    }
                }
            }
            Op::Rename { file, to } => {
                if let Some((name, _, _)) = pick(&v, file) {
                    let to = name_for(&v, to);
                    if self.note(v.rename(&name, &to), "rename") && name != to {
                        let k = self.model.live.remove(&name).unwrap_or(Known::Unknown);
                        self.model.live.insert(to, k);
                    }
                }
            }
            Op::Delete { file } => {
                if let Some((name, _, _)) = pick(&v, file) {
                    if self.note(v.delete(&name), "delete") {
                        self.model.live.remove(&name);
                    }
                }
            }
            Op::Commit { write_only } => {
                let sync = if write_only {
                    SyncLevel::WriteOnly
                } else {
                    SyncLevel::Full
                };
                let r = v.commit_with(opfs_vfs::Scope::All, sync);
                self.committed_or_rolled_back(r, "commit");
            }
            Op::Rollback => {
                v.rollback();
                self.model.live = self.model.committed.clone();
            }
            Op::Flush => {
                let r = v.flush();
                self.committed_or_rolled_back(r, "flush");
            }
            // Both commit open changes first (`Volume::checkpoint`, `Volume::compact`).
            Op::Checkpoint => {
                let r = v.checkpoint();
                self.committed_then_more(r, "checkpoint");
            }
            Op::Compact => {
                let r = v.compact();
                self.committed_then_more(r, "compact");
            }
            Op::Poll => {
                let r = v.poll().map(|_| ());
                self.note(r, "poll");
            }
            Op::Integrity => match v.check_integrity() {
                Ok(report) => {
                    if report.is_ok() {
                        self.clean = true;
                    }
                    for p in &report.problems {
                        assert!(
                            !p.what.starts_with("invariant"),
                            "check_integrity found a broken invariant: {}",
                            p.what
                        );
                    }
                }
                Err(e) => {
                    self.note(Err(e), "check_integrity");
                }
            },
            Op::Remount => {
                let has_known = self
                    .model
                    .live
                    .values()
                    .any(|k| matches!(k, Known::Bytes(_)));
                match v.close() {
                    Ok(st) => {
                        self.model.committed = self.model.live.clone();
                        return self.mount(st, "close and remount");
                    }
                    Err(e) => {
                        check_err(&e, "close");
                        assert!(
                            !has_known || !self.clean,
                            "close of a clean volume failed: {e:?}"
                        );
                        return None;
                    }
                }
            }
            Op::Crash => {
                if self.opts.durability % 3 == 2 {
                    // Balanced: commits not yet written are lost in a crash of the process.
                    self.model.forget_all();
                    self.model.committed = self.model.live.clone();
                }
                // Strict and Relaxed: every acknowledged commit was written.
                let st = v.into_storage_unflushed();
                return self.mount(st, "crash and remount");
            }
        }
        self.invariants(&v, &format!("{op:?}"));
        Some(v)
    }

    /// An operation that commits, then does more work that can fail on its own (a
    /// checkpoint): on success everything is committed; on failure the commit may or may not
    /// have happened, so what differs from the last committed view is no longer known.
    fn committed_then_more(&mut self, r: Result<(), Error>, what: &str) {
        if self.note(r, what) {
            self.model.committed = self.model.live.clone();
            return;
        }
        let names: BTreeSet<String> = self
            .model
            .live
            .keys()
            .chain(self.model.committed.keys())
            .cloned()
            .collect();
        for n in names {
            let same = match (self.model.live.get(&n), self.model.committed.get(&n)) {
                (Some(Known::Bytes(a)), Some(Known::Bytes(b))) => a == b,
                (None, None) => true,
                _ => false,
            };
            if !same {
                self.model.live.insert(n.clone(), Known::Unknown);
                self.model.committed.insert(n, Known::Unknown);
            }
        }
    }

    fn committed_or_rolled_back(&mut self, r: Result<(), Error>, what: &str) {
        if self.note(r, what) {
            self.model.committed = self.model.live.clone();
        } else {
            self.model.live = self.model.committed.clone();
        }
    }
}

/// Mounts an image and runs a plan.
pub fn run_plan(data: Vec<u8>, log: Vec<u8>, plan: &Plan) {
    let mut run = Run {
        opts: plan.opts,
        model: Model::default(),
        clean: false,
        buf: Vec::new(),
    };
    let st = storage_of(&data, &log);
    drop((data, log));
    let Some(mut v) = run.mount(st, "mount") else {
        return;
    };
    run.model = Model::from_volume(&v);
    for &op in &plan.ops {
        match run.op(v, op) {
            Some(next) => v = next,
            None => return,
        }
    }
    // Always end with a close, a remount and a full read.
    if let Some(mut v) = run.op(v, Op::Remount) {
        run.read_all(&mut v);
    }
}

/// The fuzz target's body: decode, mount, run. Returns the image's total length (for the
/// memory bound).
pub fn run(input: &[u8]) -> usize {
    let d = decode(input);
    let size = d.data.len() + d.log.len();
    if trace() {
        eprintln!(
            "image: seed {:?}, data {} B, log {} B; {:?}",
            d.seed,
            d.data.len(),
            d.log.len(),
            d.plan.opts
        );
    }
    run_plan(d.data, d.log, &d.plan);
    size
}
