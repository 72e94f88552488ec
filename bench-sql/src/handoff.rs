//! The multi-tab hand-off suite (issue 13), in the browser: two installs of one volume
//! (`opfs_vfs::web::install` with `Sharing::Shared`, Strict durability, Memory buffer mode, one
//! table) take turns in this dedicated worker, and the floor — closing and reopening two OPFS
//! sync access handles — is measured in the same round. What is recorded and how the figures
//! are derived: `bench_results::handoff`.
//!
//! Two installs in one worker are not two tabs: each has its own volume, VFS, connections,
//! Web Lock request and `BroadcastChannel` object (so the lock and the channel take exactly
//! the paths they take between tabs), but no process or thread boundary is crossed, and the
//! worker's event loop runs both sides. The suite measures the engine's hand-off, not the
//! browser's cross-process messaging.
//!
//! Per round (from a new OPFS directory; installs, table creation and cleanup untimed):
//! - `two-writers`: N times, the install that does not hold the volume acquires it (a
//!   hand-off) and INSERTs one row (autocommit); then the same N INSERTs on the install that
//!   holds it, with no hand-off (the solo loop).
//! - `writer-reader`: the reader is given the volume (untimed), then N times in turn the
//!   writer acquires and INSERTs one row, or the reader acquires and counts the rows, which
//!   must be exactly the rows committed so far; then the same statements solo.
//! - `floor`: on another directory, `OpfsStorage` (the volume's own storage) closes both
//!   handles and opens both again, `floor_cycles` times.
//!
//! - a peer's part (one per [`HandoffPeer`], named after it; [`run_handoff_with`]): another
//!   library runs the same two workloads on its own storage (the page's JavaScript peers,
//!   from wiped storage to wiped storage, both workloads in the round's order of ours), so its
//!   hand-off cost pairs with the same round's floor. A peer that fails sits out the rounds
//!   after; ours go on.
//!
//! Every hand-off is counted from the installs' share statistics (not assumed), so a loop in
//! which a statement did not follow a hand-off is an error, not a faster figure.

use opfs_vfs::storage::{Counters, OpfsStorage};
use opfs_vfs::web::{install, InstallOptions, Installed, Sharing};
use opfs_vfs::{BufferMode, Durability};
use rusqlite::{Connection, OpenFlags};
use web_time::Instant;

use bench_results::handoff::{
    FloorRun, HandoffConfig, HandoffRound, HandoffRun, HandoffSection, PeerHandoff, PeerHandoffRun,
    FLOOR, HANDLES_CONCURRENT, HANDLES_EXCLUSIVE, TWO_WRITERS, WRITER_READER,
};
use bench_results::stats::round_orders;

use crate::ms_since;

/// The parts of a round, in the order [`round_orders`] permutes.
const PARTS: [&str; 3] = [TWO_WRITERS, WRITER_READER, FLOOR];

/// Database file name inside the shared volume.
const DB: &str = "handoff.db";

/// Another implementation of the same two workloads, run as one more part of each round.
#[allow(async_fn_in_trait)] // single-threaded by design, like the SQL round loop's Contestant
pub trait HandoffPeer {
    /// What it is; `skipped` set: listed in [`HandoffSection::peers`], never run.
    fn meta(&self) -> PeerHandoff;

    /// Its part of round `round` (0-based over all rounds): `workloads` ([`TWO_WRITERS`],
    /// [`WRITER_READER`], in this order), `handoffs` hand-offs each, every statement after a
    /// hand-off, and the same statements solo; from wiped storage to wiped storage. An error
    /// is a message naming the phase.
    async fn run(
        &mut self,
        round: u32,
        workloads: &[String],
        handoffs: u32,
    ) -> Result<Vec<HandoffRun>, String>;
}

/// No peer ([`run_handoff`]).
#[derive(Debug)]
pub enum NoPeer {}

impl HandoffPeer for NoPeer {
    fn meta(&self) -> PeerHandoff {
        match *self {}
    }
    async fn run(&mut self, _: u32, _: &[String], _: u32) -> Result<Vec<HandoffRun>, String> {
        match *self {}
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandoffPlan {
    /// Hand-offs per workload per round (≥ 2).
    pub handoffs: u32,
    /// Floor cycles per round (≥ 1).
    pub floor_cycles: u32,
    /// Measured rounds.
    pub runs: u32,
    /// Warm-up rounds before them.
    pub warmup: u32,
    /// Seed of the part orders.
    pub order_seed: u64,
    /// OPFS directory to work in (removed at the end).
    pub root: String,
}

/// One part of one round, started (`ms: None`) or finished.
#[derive(Clone, Debug, PartialEq)]
pub struct HandoffProgress<'a> {
    /// [`TWO_WRITERS`], [`WRITER_READER`], [`FLOOR`] or a peer's name.
    pub part: &'a str,
    /// 1-based within warm-up rounds, then within measured rounds.
    pub run: u32,
    /// A warm-up round.
    pub warmup: bool,
    /// Wall time of the part (hand-off loop and solo loop, or all floor cycles); `None`: it
    /// starts; NaN: it failed.
    pub ms: Option<f64>,
    /// Parts finished so far.
    pub done: u32,
    /// Parts in all.
    pub total: u32,
}

fn err(what: &str, e: impl std::fmt::Display) -> String {
    format!("{what}: {e}")
}

fn options(dir: &str, vfs_name: String) -> InstallOptions {
    InstallOptions {
        vfs_name,
        directory: dir.to_owned(),
        buffer_mode: BufferMode::Memory,
        durability: Durability::Strict,
        sharing: Sharing::Shared,
        busy_timeout: std::time::Duration::from_secs(10),
        ..InstallOptions::default()
    }
}

/// One "tab": an install and its connection.
struct Tab {
    inst: Installed,
    conn: Option<Connection>,
}

impl Tab {
    fn conn(&self) -> Result<&Connection, String> {
        self.conn
            .as_ref()
            .ok_or_else(|| "connection closed".to_owned())
    }

    fn counters(&self) -> Result<Counters, String> {
        self.inst
            .with_volume(|v| Ok(v.counters()))
            .map_err(|e| err("counters", e))
    }

    fn acquisitions(&self) -> u64 {
        self.inst.share_stats().map_or(0, |s| s.acquisitions)
    }
}

async fn open_tab(dir: &str, vfs_name: String) -> Result<Tab, String> {
    let inst = install(options(dir, vfs_name))
        .await
        .map_err(|e| err("install", e))?;
    // Opening a connection may create the database file: do it while holding the volume.
    let conn = inst
        .run(|| {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
            let c = Connection::open_with_flags_and_vfs(DB, flags, inst.vfs_name())?;
            // SQLITE_BUSY must surface at once (the volume is acquired before every statement).
            c.busy_timeout(std::time::Duration::ZERO)?;
            // The pragmas of every SQL backend here (journal_mode=DELETE, synchronous=FULL).
            crate::execute_script(&c, crate::backend::PRAGMAS)?;
            Ok::<_, rusqlite::Error>(c)
        })
        .await
        .map_err(|e| err("acquire", e))?
        .map_err(|e| err("open", e))?;
    Ok(Tab {
        inst,
        conn: Some(conn),
    })
}

/// A statement of a workload.
#[derive(Clone, Copy)]
enum Op {
    Insert,
    Count,
}

/// The round's volume: both tabs and the rows committed so far.
struct Round {
    tabs: [Tab; 2],
    rows: i64,
}

impl Round {
    /// Runs `op` on tab `k` (which holds the volume).
    fn exec(&mut self, k: usize, op: Op, run: &mut HandoffRun) -> Result<(), String> {
        let c = self.tabs[k].conn()?;
        match op {
            Op::Insert => {
                c.execute(
                    "INSERT INTO t(who, v) VALUES (?1, ?2)",
                    (k as i64, self.rows),
                )
                .map_err(|e| err("insert", e))?;
                self.rows += 1;
            }
            Op::Count => {
                let n: i64 = c
                    .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                    .map_err(|e| err("count", e))?;
                if n != self.rows {
                    run.mismatches += 1;
                    if run.first_mismatch.is_none() {
                        run.first_mismatch =
                            Some(format!("read {n} rows after {} were committed", self.rows));
                    }
                }
            }
        }
        Ok(())
    }

    /// Acquires the volume on tab `k` and runs `op`; records the hand-off's figures when one
    /// took place (`record`).
    async fn step(
        &mut self,
        k: usize,
        op: Op,
        run: &mut HandoffRun,
        record: bool,
    ) -> Result<(), String> {
        let before = [self.tabs[0].counters()?, self.tabs[1].counters()?];
        let start = Instant::now();
        let guard = self.tabs[k]
            .inst
            .acquire()
            .await
            .map_err(|e| err("acquire", e))?;
        let waited = ms_since(start);
        if record {
            let after = [self.tabs[0].counters()?, self.tabs[1].counters()?];
            for (a, b) in after.iter().zip(&before) {
                let d = a.since(b).total();
                run.calls += d.calls();
                run.bytes_read += d.read_bytes;
                run.bytes_written += d.written_bytes;
            }
            run.acquire_ms.push(waited);
            // The taker's and the giver's stats of this hand-off, read once each.
            let taker = self.tabs[k].inst.share_stats();
            let giver = self.tabs[1 - k].inst.share_stats();
            if let Some(s) = &taker {
                run.take_over_ms.push(s.last_acquire_ms);
                run.catch_up_log_bytes += s.last_catch_up.log_bytes;
                run.catch_up_commits += s.last_catch_up.commits;
                run.reloads += u32::from(s.last_catch_up.reloaded);
            }
            if let Some(s) = &giver {
                run.release_ms.push(s.last_release_ms);
            }
            if let (Some(t), Some(g)) = (taker.map(|s| s.times), giver.map(|s| s.times)) {
                let spans = [
                    ("post", t.posted - t.asked),
                    ("request", t.requested - t.posted),
                    ("message", g.message - t.posted),
                    ("notice", g.check - g.message),
                    ("durable", g.durable - g.check),
                    ("close", g.closed - g.durable),
                    ("unlock", g.unlocked - g.closed),
                    ("grant", t.granted - g.unlocked),
                    ("wake", t.woke - t.granted),
                    ("open", t.opened - t.woke),
                    ("catch-up", t.held - t.opened),
                ];
                for (name, ms) in spans {
                    run.spans_ms.entry(name.to_owned()).or_default().push(ms);
                }
                // Around the share's own steps: entering `acquire` and returning the guard.
                let inside = t.held - t.asked;
                run.spans_ms
                    .entry("enter+return".to_owned())
                    .or_default()
                    .push(waited - inside);
            }
        }
        let sql = Instant::now();
        let r = self.exec(k, op, run);
        let sql_ms = ms_since(sql);
        drop(guard);
        let span = if record { "sql" } else { "solo-sql" };
        run.spans_ms
            .entry(span.to_owned())
            .or_default()
            .push(sql_ms);
        r
    }

    fn acquisitions(&self) -> u64 {
        self.tabs[0].acquisitions() + self.tabs[1].acquisitions()
    }

    fn holder(&self) -> usize {
        usize::from(!self.tabs[0].inst.is_held())
    }

    /// The workload `name`: `n` statements each after a hand-off, then the same solo.
    async fn workload(&mut self, name: &str, n: u32) -> Result<HandoffRun, String> {
        let mut run = HandoffRun {
            workload: name.to_owned(),
            ..HandoffRun::default()
        };
        // Writer: tab 0; reader: tab 1, given the volume first so that the writer's first
        // statement follows a hand-off too.
        let plan: Vec<(usize, Op)> = if name == WRITER_READER {
            if !self.tabs[1].inst.is_held() {
                self.step(1, Op::Count, &mut run, false).await?;
            }
            (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        (0, Op::Insert)
                    } else {
                        (1, Op::Count)
                    }
                })
                .collect()
        } else {
            let first = 1 - self.holder();
            (0..n)
                .map(|i| ((first + i as usize) % 2, Op::Insert))
                .collect()
        };
        let before = self.acquisitions();
        let start = Instant::now();
        for &(k, op) in &plan {
            self.step(k, op, &mut run, true).await?;
        }
        run.alternating_ms = ms_since(start);
        let handoffs = self.acquisitions() - before;
        run.handoffs = u32::try_from(handoffs).unwrap_or(u32::MAX);
        if handoffs != u64::from(n) {
            return Err(format!(
                "{name}: {handoffs} hand-offs in a loop of {n} statements that each needed one"
            ));
        }
        // The same statements on the install that holds the volume: no hand-off.
        let k = self.holder();
        let before = self.acquisitions();
        let start = Instant::now();
        for &(_, op) in &plan {
            self.step(k, op, &mut run, false).await?;
        }
        run.solo_ms = ms_since(start);
        if self.acquisitions() != before {
            return Err(format!("{name}: the solo loop changed hands"));
        }
        Ok(run)
    }

    /// Drops the connections, closes one install and wipes the directory with the other.
    async fn finish(self) -> Result<(), String> {
        let [mut a, mut b] = self.tabs;
        drop(a.conn.take());
        drop(b.conn.take());
        // The one not holding first: its close only closes the channel; the holder's flushes
        // and closes the handles, after which the directory can go.
        if a.inst.is_held() {
            b.inst.close().map_err(|e| err("close", e))?;
            a.inst.wipe().await.map_err(|e| err("wipe", e))
        } else {
            a.inst.close().map_err(|e| err("close", e))?;
            b.inst.wipe().await.map_err(|e| err("wipe", e))
        }
    }
}

/// The floor: `cycles` times, close both handles of an `OpfsStorage` on `dir` and open both
/// again.
async fn floor(dir: &str, cycles: u32) -> Result<FloorRun, String> {
    let mut st = OpfsStorage::open(dir)
        .await
        .map_err(|e| err("floor: open", e))?;
    let mut samples_ms = Vec::with_capacity(cycles as usize);
    let start = Instant::now();
    for _ in 0..cycles {
        let t = Instant::now();
        st.release();
        let handles = st.reopen().await.map_err(|e| err("floor: reopen", e))?;
        st.install(handles);
        samples_ms.push(ms_since(t));
    }
    let wall_ms = ms_since(start);
    drop(st);
    OpfsStorage::remove_dir(dir)
        .await
        .map_err(|e| err("floor: remove", e))?;
    Ok(FloorRun {
        cycles,
        wall_ms,
        samples_ms,
    })
}

/// The round's peer parts: which peers to run (index into `peers`), and their state.
struct PeerParts<'a, P> {
    peers: &'a mut [P],
    metas: &'a mut [PeerHandoff],
}

async fn one_round<P: HandoffPeer>(
    plan: &HandoffPlan,
    round: &mut HandoffRound,
    tag: &str,
    peers: &mut PeerParts<'_, P>,
    progress: &mut dyn FnMut(&str, Option<f64>),
) -> Result<(), String> {
    let dir = format!("{}/r{}", plan.root, round.index);
    let name = |who: &str| format!("handoff-{tag}-r{}-{who}", round.index);
    let a = open_tab(&dir, name("a")).await?;
    a.inst
        .run(|| {
            a.conn()?
                .execute_batch("CREATE TABLE t(id INTEGER PRIMARY KEY, who INTEGER, v INTEGER)")
                .map_err(|e| err("create", e))
        })
        .await
        .map_err(|e| err("acquire", e))??;
    // B's install asks for the volume; A is idle and hands it over.
    let b = open_tab(&dir, name("b")).await?;
    let concurrent = a.inst.has_concurrent_handles() && b.inst.has_concurrent_handles();
    round.handles = Some(
        if concurrent {
            HANDLES_CONCURRENT
        } else {
            HANDLES_EXCLUSIVE
        }
        .to_owned(),
    );
    let mut vol = Round {
        tabs: [a, b],
        rows: 0,
    };
    let mut outcome = Ok(());
    for part in round.order.clone() {
        progress(&part, None);
        let start = Instant::now();
        let peer = peers.metas.iter().position(|m| m.name == part);
        let r = if let Some(i) = peer {
            // A peer's part: its failure is its own (recorded; it sits out later rounds).
            let workloads: Vec<String> = round
                .order
                .iter()
                .filter(|p| *p == TWO_WRITERS || *p == WRITER_READER)
                .cloned()
                .collect();
            match peers.peers[i]
                .run(round.index, &workloads, plan.handoffs)
                .await
            {
                Ok(w) => {
                    round.peers.push(PeerHandoffRun {
                        backend: part.clone(),
                        workloads: w,
                    });
                    progress(&part, Some(ms_since(start)));
                }
                Err(e) => {
                    peers.metas[i].error = Some(format!("round {}: {e}", round.index));
                    progress(&part, Some(f64::NAN));
                }
            }
            continue;
        } else if part == FLOOR {
            floor(&format!("{dir}-floor"), plan.floor_cycles)
                .await
                .map(|f| round.floor = Some(f))
        } else {
            vol.workload(&part, plan.handoffs)
                .await
                .map(|w| round.workloads.push(w))
        };
        progress(
            &part,
            Some(if r.is_ok() { ms_since(start) } else { f64::NAN }),
        );
        if let Err(e) = r {
            outcome = Err(e);
            break;
        }
    }
    let finished = vol.finish().await;
    outcome.and(finished)
}

/// Runs the suite: `plan.warmup + plan.runs` rounds. A failing round ends the suite; the
/// rounds before are kept and the error is in [`HandoffSection::error`]. The directory
/// `plan.root` is removed at the end.
pub async fn run_handoff(
    plan: &HandoffPlan,
    progress: &mut dyn FnMut(&HandoffProgress<'_>),
) -> HandoffSection {
    run_handoff_with::<NoPeer>(plan, &mut [], progress).await
}

/// [`run_handoff`] with `peers`, each one more part of every round (those whose meta is
/// `skipped` are only listed). A peer that fails has its error in its
/// [`HandoffSection::peers`] entry and sits out the later rounds (their orders do not list
/// it); ours go on.
pub async fn run_handoff_with<P: HandoffPeer>(
    plan: &HandoffPlan,
    peers: &mut [P],
    progress: &mut dyn FnMut(&HandoffProgress<'_>),
) -> HandoffSection {
    let mut section = HandoffSection {
        config: HandoffConfig {
            handoffs: plan.handoffs,
            floor_cycles: plan.floor_cycles,
            runs: plan.runs,
            warmup: plan.warmup,
            buffer_mode: "memory".to_owned(),
            durability: "strict".to_owned(),
            order_seed: Some(plan.order_seed),
            data_dir: Some(format!("opfs:{}", plan.root)),
        },
        peers: peers.iter().map(HandoffPeer::meta).collect(),
        ..HandoffSection::default()
    };
    if plan.handoffs < 2 || plan.floor_cycles == 0 {
        section.error = Some(format!(
            "the hand-off suite needs at least 2 hand-offs and 1 floor cycle per round: {plan:?}"
        ));
        return section;
    }
    // The parts: ours, then every peer that runs (without peers, the orders are as before).
    let mut parts: Vec<String> = PARTS.iter().map(|p| (*p).to_owned()).collect();
    parts.extend(
        section
            .peers
            .iter()
            .filter(|m| m.skipped.is_none())
            .map(|m| m.name.clone()),
    );
    let rounds = plan.warmup + plan.runs;
    let orders = round_orders(plan.order_seed, parts.len(), rounds);
    let per_round = u32::try_from(parts.len()).unwrap_or(u32::MAX);
    let mut total = rounds.saturating_mul(per_round);
    let mut done = 0;
    let tag = crate::browser::random_tag();
    let _ = OpfsStorage::remove_dir(&plan.root).await;
    let mut metas = std::mem::take(&mut section.peers);
    for (index, order) in (0..rounds).zip(orders) {
        let warmup = index < plan.warmup;
        let run = if warmup {
            index + 1
        } else {
            index - plan.warmup + 1
        };
        // A peer that failed is not in the later rounds' orders.
        let order: Vec<String> = order
            .iter()
            .map(|&i| parts[i].clone())
            .filter(|p| {
                metas
                    .iter()
                    .find(|m| m.name == *p)
                    .is_none_or(|m| m.error.is_none())
            })
            .collect();
        let mut round = HandoffRound {
            index,
            warmup,
            order,
            ..HandoffRound::default()
        };
        let before = metas.iter().filter(|m| m.error.is_some()).count();
        let mut on_part = |part: &str, ms: Option<f64>| {
            if ms.is_some() {
                done += 1;
            }
            progress(&HandoffProgress {
                part,
                run,
                warmup,
                ms,
                done,
                total,
            });
        };
        let mut peer_parts = PeerParts {
            peers: &mut *peers,
            metas: &mut metas,
        };
        let r = one_round(plan, &mut round, &tag, &mut peer_parts, &mut on_part).await;
        section.rounds.push(round);
        // A peer that failed in this round: its parts of the later rounds are not run.
        let failed = metas.iter().filter(|m| m.error.is_some()).count() - before;
        let later = plan.warmup + plan.runs - index - 1;
        total = total.saturating_sub(
            u32::try_from(failed)
                .unwrap_or(u32::MAX)
                .saturating_mul(later),
        );
        if let Err(e) = r {
            section.error = Some(format!("round {index}: {e}"));
            break;
        }
    }
    section.peers = metas;
    let _ = OpfsStorage::remove_dir(&plan.root).await;
    section
}
