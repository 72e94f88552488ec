//! The multi-tab hand-off suite (`handoff`, issue 13): two installs of one shared volume
//! (`Sharing::Shared`) in the page's worker take turns, and the raw floor — closing and
//! reopening the volume's two OPFS sync access handles — is measured in the same round.
//!
//! Protocol (the producer's, `bench-sql`'s `handoff` module, recorded here): warm-up rounds,
//! then measured rounds; each round starts from a new volume installed twice and runs three
//! parts in an order drawn from a seeded shuffle ([`HandoffRound::order`]):
//!
//! - [`TWO_WRITERS`]: the installs alternate single-row autocommit INSERTs; every INSERT is
//!   preceded by a hand-off (the other install held the volume).
//! - [`WRITER_READER`]: one install INSERTs a row, the other counts the rows (and must see the
//!   new one); again every statement follows a hand-off.
//! - [`FLOOR`]: on a separate OPFS directory, close and reopen two sync access handles
//!   (`close()` on both, `createSyncAccessHandle()` on both), [`FloorRun::cycles`] times.
//!
//! Each workload is timed twice in its round: the loop with hand-offs
//! ([`HandoffRun::alternating_ms`]) and the same statements run by one install that keeps the
//! volume ([`HandoffRun::solo_ms`]). The cost of a hand-off is the difference per hand-off
//! ([`HandoffRun::handoff_ms`]): whatever alternating costs beyond the SQL itself. Both loops
//! are timed with one pair of clock readings each, so the browser's coarse timer (1 ms
//! steps in some browsers) does not bias the per-hand-off figure; the per-hand-off samples
//! (`acquire_ms`, `release_ms`, `take_over_ms`) are single readings and carry that step.
//!
//! JavaScript peers ([`HandoffSection::peers`], added within version 2): another library's
//! two connections to one OPFS database run the same two workloads (same N, same statements,
//! same pragmas, the same solo loops and count check) as one more part of the same rounds
//! ([`HandoffRound::peers`]), so their hand-off cost pairs with the same round's floor
//! ([`HandoffSummary::peers`]). Only the loop figures and the reads are recorded for them: their
//! physical calls are not counted and their hand-off has no steps we can time from outside.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::goals::{self, GoalCheck};
use crate::stats::{paired_ratios_keyed, Bootstrap, RatioStat, Stat};
use crate::verify::Verifications;

/// The suite's name in configs, progress events and failures.
pub const SUITE: &str = "handoff";
/// Two installs alternating single-row autocommit INSERTs.
pub const TWO_WRITERS: &str = "two-writers";
/// One install INSERTs, the other counts.
pub const WRITER_READER: &str = "writer-reader";
/// Closing and reopening two sync access handles.
pub const FLOOR: &str = "floor";

/// The steps of one hand-off in [`HandoffRun::spans_ms`], in order, with what each spans
/// (taker: the install that asks; giver: the one that holds the volume). All but `request`
/// follow each other on the critical path; `request` overlaps `message`.
pub const SPANS: [(&str, &str); 13] = [
    ("post", "taker: acquire called → request message posted"),
    (
        "request",
        "taker: request message posted → Web Lock requested",
    ),
    (
        "message",
        "request posted → giver's channel message handler runs",
    ),
    ("notice", "giver's message handler → its hand-over starts"),
    (
        "durable",
        "giver: leftovers committed, everything flushed (Volume::release)",
    ),
    ("close", "giver: both access handles closed"),
    ("unlock", "giver: the Web Lock released"),
    (
        "grant",
        "giver released the Web Lock → taker's lock callback runs",
    ),
    ("wake", "taker's lock callback → its waiting future resumes"),
    ("open", "taker: both access handles opened"),
    (
        "catch-up",
        "taker: Volume::resume (reads the log since it last held the volume)",
    ),
    (
        "sql",
        "the statement after the hand-off (the solo loop's: solo-sql)",
    ),
    (
        "enter+return",
        "taker: into acquire before asking, and out of it after the catch-up",
    ),
];

/// [`HandoffRound::handles`]: `readwrite-unsafe` handles, kept open over a hand-off.
pub const HANDLES_CONCURRENT: &str = "concurrent";
/// [`HandoffRound::handles`]: exclusive handles, closed and opened again at every hand-off.
pub const HANDLES_EXCLUSIVE: &str = "exclusive";

/// How the suite was run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandoffConfig {
    /// Hand-offs per workload per round.
    pub handoffs: u32,
    /// Close-and-reopen cycles of the floor per round.
    pub floor_cycles: u32,
    /// Measured rounds.
    pub runs: u32,
    /// Warm-up rounds before them.
    pub warmup: u32,
    /// Buffer mode of both installs (`memory`, `disk`).
    pub buffer_mode: String,
    /// Durability level of both installs (`strict`).
    pub durability: String,
    /// Seed of the part orders ([`crate::stats::round_orders`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Where the volumes lived (`opfs:<directory>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<String>,
}

/// The hand-off section of a document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffSection {
    /// How it ran.
    pub config: HandoffConfig,
    /// Every round, warm-up first.
    #[serde(default)]
    pub rounds: Vec<HandoffRound>,
    /// Medians, ranges and paired ratios over the measured rounds ([`HandoffSection::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<HandoffSummary>,
    /// The goal checks (`handoff-floor`, [`crate::goals`]).
    #[serde(default)]
    pub goals: Vec<GoalCheck>,
    /// Why the suite stopped, if it did (the rounds before are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The JavaScript peers that were to run beside us, ran or not (added within version 2:
    /// absent in older documents).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerHandoff>,
}

/// A JavaScript peer of the suite: what it is, how its two "tabs" are made, and whether it ran.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerHandoff {
    /// Its name (the SQL suite's backend name, e.g. `wasqlite-opfs-coopsync`); also its part
    /// name in [`HandoffRound::order`].
    pub name: String,
    /// npm package and version.
    #[serde(default)]
    pub package: String,
    #[serde(default)]
    pub version: String,
    /// What a commit has made durable when it returns (its `synchronous` setting and what the
    /// VFS does on `xSync`).
    #[serde(default)]
    pub durability: String,
    /// How the two connections are made and hand the database over.
    #[serde(default)]
    pub connections: String,
    /// Why it did not run at all (unavailable here, or its engine failed to load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Why it stopped (it sits out the rounds after; the rounds before are kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A peer's part of one round: its workloads (only [`HandoffRun::workload`], `handoffs`,
/// `alternating_ms`, `solo_ms`, the mismatches and `spans_ms` `statement` / `solo-statement`,
/// single readings of each statement, are filled; its calls are not counted).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerHandoffRun {
    /// [`PeerHandoff::name`].
    pub backend: String,
    /// The workloads that ran, in the round's order of [`TWO_WRITERS`] and [`WRITER_READER`].
    #[serde(default)]
    pub workloads: Vec<HandoffRun>,
}

/// One round: the three parts, in [`HandoffRound::order`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffRound {
    /// 0-based over all rounds, warm-up first.
    pub index: u32,
    /// The page load it ran in, 0-based, in a document that combines several
    /// ([`crate::combine::combine_loads`]); `None` in one page load's document. Ratios to the
    /// floor then resample page loads, then rounds ([`crate::stats::RatioStat::of_loads`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<u32>,
    /// A warm-up round (excluded from statistics).
    pub warmup: bool,
    /// Parts in running order ([`TWO_WRITERS`], [`WRITER_READER`], [`FLOOR`]).
    pub order: Vec<String>,
    /// The workloads that ran, by name.
    #[serde(default)]
    pub workloads: Vec<HandoffRun>,
    /// The floor, if it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<FloorRun>,
    /// How our installs' access handles were opened: [`HANDLES_CONCURRENT`] (kept open over
    /// a hand-off) or [`HANDLES_EXCLUSIVE`] (closed by the giver, opened by the taker).
    /// Absent in documents from before it was recorded (all exclusive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handles: Option<String>,
    /// The peers' parts that ran (each is a part of [`HandoffRound::order`] named after the
    /// peer; added within version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerHandoffRun>,
}

/// One workload in one round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffRun {
    /// [`TWO_WRITERS`] or [`WRITER_READER`].
    pub workload: String,
    /// Hand-offs in the alternating loop (each statement followed one: counted from the
    /// installs' share statistics, not assumed).
    pub handoffs: u32,
    /// Wall time of the alternating loop (hand-off, statement, hand-off, statement, ...).
    pub alternating_ms: f64,
    /// Wall time of the same statements on one install that keeps the volume.
    pub solo_ms: f64,
    /// Per hand-off: from asking (`Installed::acquire`) to holding, as the taker saw it.
    #[serde(default)]
    pub acquire_ms: Vec<f64>,
    /// Per hand-off: the giver's release (commit leftovers, flush, close two handles, release
    /// the lock; `ShareStats::last_release_ms`).
    #[serde(default)]
    pub release_ms: Vec<f64>,
    /// Per hand-off: the taker's take-over after the lock was granted (open two handles, catch
    /// up; `ShareStats::last_acquire_ms`).
    #[serde(default)]
    pub take_over_ms: Vec<f64>,
    /// Per hand-off, where the time went, by step ([`SPANS`]: from the installs' share
    /// timestamps, one clock in one worker; single readings, so they carry the timer step).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub spans_ms: std::collections::BTreeMap<String, Vec<f64>>,
    /// Counted physical calls (read, write, flush, len, set_len) of both installs during the
    /// hand-offs, summed (opening and closing handles is not among them).
    pub calls: u64,
    /// Bytes read during the hand-offs (the taker's catch-up).
    pub bytes_read: u64,
    /// Bytes written during the hand-offs.
    pub bytes_written: u64,
    /// Log bytes the takers' catch-ups replayed (`CatchUp::log_bytes`), summed.
    pub catch_up_log_bytes: u64,
    /// Commits they replayed, summed.
    pub catch_up_commits: u64,
    /// Catch-ups that had to reload the catalog (another holder checkpointed).
    pub reloads: u32,
    /// Reads that did not see exactly the rows committed before them ([`WRITER_READER`]); each
    /// is also a verification failure of the document.
    #[serde(default)]
    pub mismatches: u32,
    /// The first of them, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_mismatch: Option<String>,
    /// Statements that found nobody holding the database: a holder had given it up although
    /// the other connection had not asked since it took it (a peer's stale request: wa-sqlite's
    /// OPFSCoopSyncVFS posts its request again every second until its Web Lock is granted, and
    /// a copy delivered after the grant makes the next holder release, at once if idle, else
    /// after its statement). Such a statement acquires from nobody, and the loop times it as
    /// it comes; counted so a reader sees it. Always 0 for ours (the Web Lock's queue is the
    /// only request channel).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unrequested_releases: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl HandoffRun {
    /// Cost of one hand-off: `(alternating_ms − solo_ms) / handoffs`; `None` without hand-offs.
    pub fn handoff_ms(&self) -> Option<f64> {
        (self.handoffs > 0).then(|| (self.alternating_ms - self.solo_ms) / f64::from(self.handoffs))
    }

    /// `alternating_ms / handoffs`: one hand-off and one statement.
    pub fn step_ms(&self) -> Option<f64> {
        (self.handoffs > 0).then(|| self.alternating_ms / f64::from(self.handoffs))
    }

    /// `solo_ms / handoffs`: one statement without a hand-off.
    pub fn solo_step_ms(&self) -> Option<f64> {
        (self.handoffs > 0).then(|| self.solo_ms / f64::from(self.handoffs))
    }

    /// `value / handoffs`.
    fn per_handoff(&self, value: u64) -> Option<f64> {
        // Counters of one round stay far below 2^53: the conversion is exact.
        #[allow(clippy::cast_precision_loss)]
        (self.handoffs > 0).then(|| value as f64 / f64::from(self.handoffs))
    }
}

/// The floor in one round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FloorRun {
    /// Close-and-reopen cycles of the two handles.
    pub cycles: u32,
    /// Wall time of all cycles (one pair of clock readings).
    pub wall_ms: f64,
    /// Each cycle alone (single readings: rounded to the timer step).
    #[serde(default)]
    pub samples_ms: Vec<f64>,
}

impl FloorRun {
    /// `wall_ms / cycles`: closing and reopening the two handles once.
    pub fn floor_ms(&self) -> Option<f64> {
        (self.cycles > 0).then(|| self.wall_ms / f64::from(self.cycles))
    }
}

/// Statistics of the measured rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HandoffSummary {
    /// Per round, ms per close-and-reopen of the two handles.
    pub floor_ms: Option<Stat>,
    /// One per workload that ran, in [`TWO_WRITERS`], [`WRITER_READER`] order.
    pub workloads: Vec<WorkloadSummary>,
    /// Each peer that ran, its workloads paired with the same rounds' floor (added within
    /// version 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peers: Vec<PeerHandoffSummary>,
}

/// A peer's workloads over the measured rounds it ran in. Only the loop figures, the ratio and
/// the mismatches are set: [`WorkloadSummary::acquire_ms`] and the counted calls and bytes stay
/// `None` (not measured for a peer).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerHandoffSummary {
    /// [`PeerHandoff::name`].
    pub backend: String,
    /// In [`TWO_WRITERS`], [`WRITER_READER`] order.
    pub workloads: Vec<WorkloadSummary>,
}

/// One workload over the measured rounds. Every [`Stat`] is over per-round figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkloadSummary {
    /// [`HandoffRun::workload`].
    pub workload: String,
    /// [`HandoffRun::handoff_ms`].
    pub handoff_ms: Option<Stat>,
    /// [`HandoffRun::step_ms`].
    pub step_ms: Option<Stat>,
    /// [`HandoffRun::solo_step_ms`].
    pub solo_step_ms: Option<Stat>,
    /// The round's median of [`HandoffRun::acquire_ms`].
    pub acquire_ms: Option<Stat>,
    /// The round's median of [`HandoffRun::release_ms`].
    pub release_ms: Option<Stat>,
    /// The round's median of [`HandoffRun::take_over_ms`].
    pub take_over_ms: Option<Stat>,
    /// Counted physical calls per hand-off.
    pub calls_per_handoff: Option<Stat>,
    /// Bytes read per hand-off.
    pub bytes_read_per_handoff: Option<Stat>,
    /// Bytes written per hand-off.
    pub bytes_written_per_handoff: Option<Stat>,
    /// Log bytes replayed per hand-off.
    pub catch_up_bytes_per_handoff: Option<Stat>,
    /// Hand-off ÷ floor, paired by round, with the bootstrap interval of its median.
    pub ratio_to_floor: Option<RatioStat>,
    /// Reads that saw the wrong rows, over all rounds (warm-up included).
    pub mismatches: u64,
    /// Catch-ups that reloaded the catalog (the other install had checkpointed), over the
    /// measured rounds: those hand-offs read more than the log since the last turn.
    #[serde(default)]
    pub reloads: u64,
}

impl HandoffSection {
    fn measured(&self) -> impl Iterator<Item = &HandoffRound> {
        self.rounds.iter().filter(|r| !r.warmup)
    }

    /// Workload `name`'s runs in the measured rounds, with their round index.
    fn runs_of<'a>(&'a self, name: &'a str) -> impl Iterator<Item = (u32, &'a HandoffRun)> + 'a {
        self.measured().filter_map(move |r| {
            r.workloads
                .iter()
                .find(|w| w.workload == name)
                .map(|w| (r.index, w))
        })
    }

    /// Every peer run of `backend` in the measured rounds, with their round index.
    fn peer_runs_of<'a>(
        &'a self,
        backend: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = (u32, &'a HandoffRun)> + 'a {
        self.measured().filter_map(move |r| {
            r.peers
                .iter()
                .filter(|p| p.backend == backend)
                .flat_map(|p| &p.workloads)
                .find(|w| w.workload == name)
                .map(|w| (r.index, w))
        })
    }

    /// Records what the suite verified in `v`: per workload, that every statement followed
    /// a hand-off and every read saw exactly the committed rows (a failure per workload with
    /// wrong reads, and one for [`HandoffSection::error`]); the same for each peer that ran
    /// (its failures name it), and one failure per peer that stopped with an error.
    pub fn verify(&self, v: &mut Verifications) {
        for name in [TWO_WRITERS, WRITER_READER] {
            let runs: Vec<&HandoffRun> = self
                .rounds
                .iter()
                .flat_map(|r| &r.workloads)
                .filter(|w| w.workload == name)
                .collect();
            verify_runs(v, None, name, &runs);
        }
        if let Some(e) = &self.error {
            v.fail(SUITE, None, e.clone());
        }
        for p in &self.peers {
            for name in [TWO_WRITERS, WRITER_READER] {
                let runs: Vec<&HandoffRun> = self
                    .rounds
                    .iter()
                    .flat_map(|r| &r.peers)
                    .filter(|r| r.backend == p.name)
                    .flat_map(|r| &r.workloads)
                    .filter(|w| w.workload == name)
                    .collect();
                verify_runs(v, Some(&p.name), name, &runs);
            }
            if let Some(e) = &p.error {
                v.fail(SUITE, Some(&p.name), e.clone());
            }
        }
    }

    /// Fills [`HandoffSection::summary`] and [`HandoffSection::goals`] from the rounds.
    pub fn summarize(&mut self, boot: &Bootstrap) {
        let floors: Vec<(u32, f64)> = self
            .measured()
            .filter_map(|r| Some((r.index, r.floor.as_ref()?.floor_ms()?)))
            .collect();
        // Each round's page load (0 for every round of one load's document).
        let loads: BTreeMap<u32, u32> = self
            .rounds
            .iter()
            .map(|r| (r.index, r.load.unwrap_or(0)))
            .collect();
        let paired = Paired {
            floors: &floors,
            loads: &loads,
        };
        let floor_values: Vec<f64> = floors.iter().map(|f| f.1).collect();
        let mut workloads = Vec::new();
        for name in [TWO_WRITERS, WRITER_READER] {
            let runs: Vec<(u32, &HandoffRun)> = self.runs_of(name).collect();
            let all = self.rounds.iter().flat_map(|r| &r.workloads);
            let label = format!("{SUITE} / {name} / {FLOOR}");
            if let Some(w) = summarize_runs(name, &runs, all, &paired, boot, &label, true) {
                workloads.push(w);
            }
        }
        let mut peers = Vec::new();
        for p in &self.peers {
            let mut ws = Vec::new();
            for name in [TWO_WRITERS, WRITER_READER] {
                let runs: Vec<(u32, &HandoffRun)> = self.peer_runs_of(&p.name, name).collect();
                let all = self
                    .rounds
                    .iter()
                    .flat_map(|r| &r.peers)
                    .filter(|r| r.backend == p.name)
                    .flat_map(|r| &r.workloads);
                let label = format!("{SUITE} / {} / {name} / {FLOOR}", p.name);
                if let Some(w) = summarize_runs(name, &runs, all, &paired, boot, &label, false) {
                    ws.push(w);
                }
            }
            if !ws.is_empty() {
                peers.push(PeerHandoffSummary {
                    backend: p.name.clone(),
                    workloads: ws,
                });
            }
        }
        let summary = HandoffSummary {
            floor_ms: Stat::of(&floor_values),
            workloads,
            peers,
        };
        self.goals = goals::check_handoff(&summary);
        self.summary = Some(summary);
    }
}

/// The verification of workload `name`'s `runs` (all rounds) of ours (`peer: None`) or a peer.
fn verify_runs(v: &mut Verifications, peer: Option<&str>, name: &str, runs: &[&HandoffRun]) {
    if runs.is_empty() {
        return;
    }
    let bad: u64 = runs.iter().map(|w| u64::from(w.mismatches)).sum();
    let handoffs: u64 = runs.iter().map(|w| u64::from(w.handoffs)).sum();
    if bad > 0 {
        let first = runs.iter().find_map(|w| w.first_mismatch.clone());
        v.fail(
            SUITE,
            Some(peer.unwrap_or(name)),
            format!(
                "{}{bad} read(s) did not see exactly the committed rows (first: {})",
                if peer.is_some() {
                    format!("{name}: ")
                } else {
                    String::new()
                },
                first.unwrap_or_default()
            ),
        );
    } else {
        let reads = if name == WRITER_READER {
            ", every read saw exactly the rows committed before it"
        } else {
            ""
        };
        let who = peer.map_or_else(String::new, |p| format!("{p}: "));
        v.pass(format!(
            "{SUITE}: {who}{name}: {} rounds, {handoffs} hand-offs, each statement after one{reads}",
            runs.len()
        ));
    }
}

/// What a workload's hand-offs are paired with: each measured round's floor, by round index,
/// and each round's page load.
struct Paired<'a> {
    floors: &'a [(u32, f64)],
    loads: &'a BTreeMap<u32, u32>,
}

/// The summary of workload `name` from its measured `runs` (with round indices) and `all` its
/// runs (warm-up included, for the mismatches), paired with the same rounds' floors; `None`
/// without runs. `counted`: the calls and bytes were counted (ours), else those figures stay
/// `None`.
fn summarize_runs<'a>(
    name: &str,
    runs: &[(u32, &HandoffRun)],
    all: impl Iterator<Item = &'a HandoffRun>,
    paired: &Paired<'_>,
    boot: &Bootstrap,
    label: &str,
    counted: bool,
) -> Option<WorkloadSummary> {
    if runs.is_empty() {
        return None;
    }
    let over = |f: &dyn Fn(&HandoffRun) -> Option<f64>| Stat::over(runs, |(_, r)| f(r));
    let counts = |f: &dyn Fn(&HandoffRun) -> Option<f64>| if counted { over(f) } else { None };
    let median_of = |v: &[f64]| crate::stats::median(v);
    let keyed: Vec<(u32, f64)> = runs
        .iter()
        .filter_map(|(i, r)| Some((*i, r.handoff_ms()?)))
        .collect();
    Some(WorkloadSummary {
        workload: name.to_owned(),
        handoff_ms: over(&HandoffRun::handoff_ms),
        step_ms: over(&HandoffRun::step_ms),
        solo_step_ms: over(&HandoffRun::solo_step_ms),
        acquire_ms: over(&|r| median_of(&r.acquire_ms)),
        release_ms: over(&|r| median_of(&r.release_ms)),
        take_over_ms: over(&|r| median_of(&r.take_over_ms)),
        calls_per_handoff: counts(&|r| r.per_handoff(r.calls)),
        bytes_read_per_handoff: counts(&|r| r.per_handoff(r.bytes_read)),
        bytes_written_per_handoff: counts(&|r| r.per_handoff(r.bytes_written)),
        catch_up_bytes_per_handoff: counts(&|r| r.per_handoff(r.catch_up_log_bytes)),
        ratio_to_floor: RatioStat::of_loads(&by_load(&keyed, paired), boot, label),
        reloads: runs.iter().map(|(_, r)| u64::from(r.reloads)).sum(),
        mismatches: all
            .filter(|w| w.workload == name)
            .map(|w| u64::from(w.mismatches))
            .sum(),
    })
}

/// The per-round ratios of `values` to the floors in `paired`, grouped by page load (in load
/// order; one group for one load's document).
fn by_load(values: &[(u32, f64)], paired: &Paired<'_>) -> Vec<Vec<f64>> {
    let mut groups: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (round, ratio) in paired_ratios_keyed(values, paired.floors) {
        let load = paired.loads.get(&round).copied().unwrap_or(0);
        groups.entry(load).or_default().push(ratio);
    }
    groups.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, alternating: f64, solo: f64) -> HandoffRun {
        HandoffRun {
            workload: name.to_owned(),
            handoffs: 10,
            alternating_ms: alternating,
            solo_ms: solo,
            acquire_ms: vec![3.0, 4.0, 5.0],
            calls: 40,
            bytes_read: 10 * 4096,
            ..HandoffRun::default()
        }
    }

    fn section(rounds: u32, floor_ms: f64) -> HandoffSection {
        HandoffSection {
            rounds: (0..rounds)
                .map(|i| HandoffRound {
                    index: i,
                    load: None,
                    warmup: i == 0,
                    order: vec![TWO_WRITERS.into(), FLOOR.into()],
                    workloads: vec![run(TWO_WRITERS, 60.0 + f64::from(i % 3), 10.0)],
                    floor: Some(FloorRun {
                        cycles: 10,
                        wall_ms: floor_ms * 10.0,
                        samples_ms: vec![],
                    }),
                    handles: None,
                    peers: vec![],
                })
                .collect(),
            ..HandoffSection::default()
        }
    }

    #[test]
    fn per_handoff_figures_subtract_the_solo_loop() {
        let r = run(TWO_WRITERS, 60.0, 10.0);
        assert_eq!(r.handoff_ms(), Some(5.0));
        assert_eq!(r.step_ms(), Some(6.0));
        assert_eq!(r.solo_step_ms(), Some(1.0));
        assert_eq!(r.per_handoff(r.calls), Some(4.0));
        let none = HandoffRun::default();
        assert_eq!((none.handoff_ms(), none.step_ms()), (None, None));
        assert_eq!(FloorRun::default().floor_ms(), None);
    }

    #[test]
    fn summary_pairs_with_the_floor_and_decides_the_goal() {
        // Hand-off 5.0–5.2 ms, floor 2 ms: ratio 2.5–2.6, every interval above 2: not met.
        let mut s = section(8, 2.0);
        s.summarize(&Bootstrap::default());
        let sum = s.summary.as_ref().unwrap();
        assert_eq!(sum.floor_ms.unwrap().n, 7, "warm-up excluded");
        let w = &sum.workloads[0];
        assert_eq!(w.workload, TWO_WRITERS);
        assert_eq!(w.handoff_ms.unwrap().n, 7);
        assert_eq!(w.calls_per_handoff.unwrap().median, 4.0);
        assert_eq!(w.bytes_read_per_handoff.unwrap().median, 4096.0);
        assert_eq!(w.acquire_ms.unwrap().median, 4.0);
        let r = w.ratio_to_floor.unwrap();
        assert!(r.lo.unwrap() > 2.0 && r.median > 2.4, "{r:?}");
        assert_eq!(s.goals.len(), 1);
        assert_eq!(s.goals[0].goal, "handoff-floor");
        assert_eq!(s.goals[0].verdict, goals::Verdict::NotMet);
        // A floor of 3 ms: ratio ≈ 1.7, met.
        let mut s = section(8, 3.0);
        s.summarize(&Bootstrap::default());
        assert_eq!(s.goals[0].verdict, goals::Verdict::Met);
        // Too few rounds for an interval: undecided, whatever the median.
        let mut s = section(4, 3.0);
        s.summarize(&Bootstrap::default());
        assert_eq!(s.goals[0].verdict, goals::Verdict::Undecided);
        assert!(s.goals[0].ratio.unwrap().lo.is_none());
    }

    #[test]
    fn peers_pair_with_the_same_rounds_floor() {
        let mut s = section(8, 2.0);
        s.peers = vec![PeerHandoff {
            name: "peer-x".into(),
            ..PeerHandoff::default()
        }];
        for r in &mut s.rounds {
            let mut w = run(TWO_WRITERS, 90.0, 10.0); // 8 ms per hand-off: 4x the floor
            if r.index == 3 {
                w.mismatches = 1;
                w.first_mismatch = Some("read 1 rows after 2 were committed".into());
            }
            r.peers.push(PeerHandoffRun {
                backend: "peer-x".into(),
                workloads: vec![w],
            });
        }
        s.summarize(&Bootstrap::default());
        let sum = s.summary.as_ref().unwrap();
        assert_eq!(sum.workloads.len(), 1, "ours unchanged");
        let p = &sum.peers[0];
        assert_eq!(p.backend, "peer-x");
        let w = &p.workloads[0];
        assert_eq!(w.handoff_ms.unwrap().median, 8.0);
        assert_eq!(w.handoff_ms.unwrap().n, 7, "warm-up excluded");
        assert_eq!(w.ratio_to_floor.unwrap().median, 4.0);
        assert!(w.ratio_to_floor.unwrap().lo.is_some());
        assert_eq!(w.calls_per_handoff, None, "not counted for a peer");
        assert_eq!(w.mismatches, 1);
        assert_eq!(s.goals.len(), 1, "the goal is ours only");
        let mut v = Verifications::default();
        s.verify(&mut v);
        assert_eq!(v.failures.len(), 1);
        assert_eq!(v.failures[0].backend.as_deref(), Some("peer-x"));
        assert!(v.failures[0].message.starts_with("two-writers: 1 read(s)"));
        // A document without peers reads as before.
        let mut old: serde_json::Value = serde_json::to_value(&s).unwrap();
        old.as_object_mut().unwrap().remove("peers");
        for r in old["rounds"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("peers");
        }
        let back: HandoffSection = serde_json::from_value(old).unwrap();
        assert!(back.peers.is_empty() && back.rounds.iter().all(|r| r.peers.is_empty()));
    }

    #[test]
    fn json_round_trip_is_exact() {
        let mut s = section(7, 2.5);
        s.config = HandoffConfig {
            handoffs: 10,
            floor_cycles: 10,
            runs: 6,
            warmup: 1,
            buffer_mode: "memory".into(),
            durability: "strict".into(),
            order_seed: Some(1),
            data_dir: Some("opfs:x".into()),
        };
        s.summarize(&Bootstrap::default());
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<HandoffSection>(&text).unwrap(), s);
    }
}
