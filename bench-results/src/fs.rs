//! The filesystem lifecycle: N files × S bytes through mount, create, write, read, rename,
//! delete half, flush, reopen and verify, on our volume and on the one-OPFS-file-per-file
//! baseline, round by round (each round runs every backend once, in a shuffled order, like the
//! SQL rounds).

use serde::{Deserialize, Serialize};

use crate::raw::RawSuite;
use crate::sql::{PhysicalCounters, Round, RoundLoads};
use crate::stats::{load_median_interval, paired_ratios_keyed, Bootstrap, RatioStat, Stat};

/// Our volume's buffer mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// File contents read from storage on demand.
    Disk,
    /// File contents held in memory from first access.
    Memory,
}

impl Mode {
    /// `"disk"` or `"memory"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Disk => "disk",
            Mode::Memory => "memory",
        }
    }
}

/// The phases of one lifecycle run, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Make the (empty) store usable: open the physical files and mount / open the directory.
    Mount,
    /// Create every file, empty.
    Create,
    /// Write each file's bytes (one call per file).
    Write,
    /// Read each file back and compare every byte.
    Read,
    /// Rename every file.
    Rename,
    /// Delete every other file (half of them).
    Delete,
    /// Make everything durable.
    Flush,
    /// Unmount (close everything), then mount again from what is stored.
    Reopen,
    /// After the reopen: exactly the survivors are listed, each read back byte for byte.
    Verify,
}

impl Phase {
    /// Every phase, in execution order.
    pub const ALL: [Phase; 9] = [
        Phase::Mount,
        Phase::Create,
        Phase::Write,
        Phase::Read,
        Phase::Rename,
        Phase::Delete,
        Phase::Flush,
        Phase::Reopen,
        Phase::Verify,
    ];

    /// Lower-case name, as in the JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Mount => "mount",
            Phase::Create => "create",
            Phase::Write => "write",
            Phase::Read => "read",
            Phase::Rename => "rename",
            Phase::Delete => "delete",
            Phase::Flush => "flush",
            Phase::Reopen => "reopen",
            Phase::Verify => "verify",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The lifecycle suite: its workload and every backend's runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LifecycleSuite {
    /// Logical files created.
    pub files: u32,
    /// Bytes per file.
    pub file_size_bytes: u32,
    /// Seed of the file contents.
    pub seed: u64,
    /// Every round's order (absent in version 1 documents).
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// One entry per backend, in the order they were listed.
    pub backends: Vec<LifecycleBackend>,
    /// The raw OPFS floor of the phases that imply a known amount of physical work for a
    /// one-file-per-file design, from the raw suite of the same document ([`phase_floors`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub floors: Vec<PhaseFloor>,
}

/// Everything measured on one lifecycle backend.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LifecycleBackend {
    /// Stable identifier (`ours-disk-strict`, `files-opfs`).
    pub name: String,
    /// What holds the bytes: `opfs`, `std-file` (our volume), `opfs-file-per-file`,
    /// `std-file-per-file` (the baselines).
    pub storage: String,
    /// What a finished phase guarantees.
    pub durability: String,
    /// Our volume's buffer mode (`None` for a baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_mode: Option<Mode>,
    /// How the baseline renamed (`move`, `copy+removeEntry`, `rename(2)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_method: Option<String>,
    /// Why it stopped, if it failed (earlier runs kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Excluded from statistics.
    #[serde(default)]
    pub warmup_runs: Vec<LifecycleRun>,
    /// The measured runs.
    #[serde(default)]
    pub runs: Vec<LifecycleRun>,
    /// Medians and ranges over `runs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<LifecycleSummary>,
    /// Paired ratios to the baseline, per phase and in total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratios: Option<LifecycleRatios>,
}

impl LifecycleBackend {
    /// A one-file-per-file baseline (not our volume).
    pub fn is_baseline(&self) -> bool {
        self.storage.ends_with("file-per-file")
    }
}

/// One lifecycle run: every phase, timed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LifecycleRun {
    /// [`Round::index`] (absent in version 1 documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// In execution order.
    pub phases: Vec<PhaseSample>,
    /// Sum of the phases.
    pub total_ms: f64,
    /// When the round ran the lifecycle in passes (`RunConfig::fs_repeats`): every pass's
    /// total in running order; this record is the fastest (bench-fs's `fastest_run`). Empty:
    /// one run (and in documents before this field).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats_ms: Vec<f64>,
}

impl LifecycleRun {
    /// The sample of `phase`, if it ran.
    pub fn phase(&self, phase: Phase) -> Option<&PhaseSample> {
        self.phases.iter().find(|p| p.phase == phase)
    }
}

/// One phase of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseSample {
    /// Which phase.
    pub phase: Phase,
    /// Wall time.
    pub ms: f64,
    /// Physical calls during the phase (our volume only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
}

/// Statistics of one backend's measured runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LifecycleSummary {
    /// Per phase, in [`Phase::ALL`] order.
    pub phases: Vec<PhaseStat>,
    /// Sum of the phases.
    pub total_ms: Option<Stat>,
    /// Rank of the total's median among the backends (1 = lowest; ties share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

/// Statistics of one phase.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseStat {
    /// Which phase.
    pub phase: Phase,
    /// Its times.
    pub ms: Option<Stat>,
    /// 95 % interval of the median time (`ms.median`): a bootstrap of the rounds, or of page
    /// loads then rounds when the suite combines several ([`load_median_interval`]); absent
    /// with too few rounds or loads, and in documents summarized before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_lo: Option<f64>,
    /// Upper end of that interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_hi: Option<f64>,
    /// Per-field lower median of its counters, where counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<PhysicalCounters>,
    /// Median ÷ the phase's raw OPFS floor ([`LifecycleSuite::floors`]), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ratio: Option<f64>,
}

/// Paired ratios of one backend to the baseline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LifecycleRatios {
    /// The baseline's name.
    pub versus: String,
    /// The sum of the phases.
    pub total: Option<RatioStat>,
    /// Per phase.
    pub phases: Vec<PhaseRatio>,
}

/// One phase's paired ratio.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseRatio {
    /// Which phase.
    pub phase: Phase,
    /// Its ratio.
    pub ratio: Option<RatioStat>,
}

/// The raw OPFS floor of one phase: what the browser charged in the same run (raw workloads)
/// for the least physical work the phase implies if every logical file were its own OPFS file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseFloor {
    /// Which phase.
    pub phase: Phase,
    /// Calls × the per-call mean (median over the raw runs), milliseconds.
    pub ms: f64,
    /// What it is made of: `1,000 × create+open`.
    pub what: String,
}

/// Floors of the phases a raw series measures: create (N × `new-file: create+open`), write
/// (N × `new-file: first write`), delete (N/2 × `new-file: delete`), flush (one
/// `append+flush: flush`, else one `append+flush`). Read, rename, mount, reopen and verify have
/// none.
pub fn phase_floors(files: u32, raw: &RawSuite) -> Vec<PhaseFloor> {
    let us = |name: &str| raw.mean_us(name);
    let mut out = Vec::new();
    let mut add = |phase, calls: u32, per_call: Option<f64>, what: &str| {
        if let Some(per_call) = per_call {
            out.push(PhaseFloor {
                phase,
                ms: f64::from(calls) * per_call / 1000.0,
                what: format!("{} × {what}", crate::thousands(calls.into())),
            });
        }
    };
    add(
        Phase::Create,
        files,
        us("new-file: create+open"),
        "create+open",
    );
    add(
        Phase::Write,
        files,
        us("new-file: first write"),
        "first write",
    );
    add(
        Phase::Delete,
        files / 2,
        us("new-file: delete"),
        "removeEntry",
    );
    match us("append+flush: flush") {
        Some(f) => add(Phase::Flush, 1, Some(f), "flush"),
        None => add(Phase::Flush, 1, us("append+flush"), "append+flush"),
    }
    out
}

const LEGACY_KEY: u32 = 1 << 30;

fn keyed(b: &LifecycleBackend, pick: impl Fn(&LifecycleRun) -> Option<f64>) -> Vec<(u32, f64)> {
    b.runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let key = r
                .round
                .unwrap_or_else(|| LEGACY_KEY + u32::try_from(i).unwrap_or(u32::MAX));
            pick(r).map(|v| (key, v))
        })
        .collect()
}

impl LifecycleBackend {
    /// Statistics over the measured runs (warm-up excluded), each phase's median with its
    /// interval (runs grouped by `loads`, from `boot`).
    pub fn summarize(
        &self,
        floors: &[PhaseFloor],
        loads: &RoundLoads,
        boot: &Bootstrap,
    ) -> LifecycleSummary {
        let runs = &self.runs;
        LifecycleSummary {
            phases: Phase::ALL
                .iter()
                .map(|&phase| {
                    let ms = Stat::over(runs, |r| r.phase(phase).map(|p| p.ms));
                    let floor = floors.iter().find(|f| f.phase == phase);
                    let samples = loads.group(&keyed(self, |r| r.phase(phase).map(|p| p.ms)));
                    let label = format!("fs / {} / {phase} / ms", self.name);
                    let interval = load_median_interval(&samples, boot, &label);
                    PhaseStat {
                        phase,
                        ms_lo: interval.map(|i| i.0),
                        ms_hi: interval.map(|i| i.1),
                        floor_ratio: match (ms, floor) {
                            (Some(s), Some(f)) if f.ms > 0.0 => Some(s.median / f.ms),
                            _ => None,
                        },
                        ms,
                        counters: PhysicalCounters::median_of(
                            &runs
                                .iter()
                                .filter_map(|r| r.phase(phase)?.counters)
                                .collect::<Vec<_>>(),
                        ),
                    }
                })
                .collect(),
            total_ms: Stat::over(runs, |r| Some(r.total_ms)),
            rank: None,
        }
    }
}

impl LifecycleSuite {
    /// Fills every backend's summary (with `floors` from `raw`, if given), rank and paired
    /// ratios to the baseline.
    pub fn summarize(&mut self, raw: Option<&RawSuite>, boot: &Bootstrap) {
        self.floors = raw.map_or_else(Vec::new, |r| phase_floors(self.files, r));
        let loads = RoundLoads::of_rounds(&self.rounds);
        let totals: Vec<Option<f64>> = self
            .backends
            .iter()
            .map(|b| Stat::over(&b.runs, |r| Some(r.total_ms)).map(|s| s.median))
            .collect();
        let ranks = crate::summary::ranks(&totals);
        let baseline = self
            .backends
            .iter()
            .find(|b| b.is_baseline() && !b.runs.is_empty())
            .cloned();
        for (b, rank) in self.backends.iter_mut().zip(ranks) {
            let mut s = b.summarize(&self.floors, &loads, boot);
            s.rank = rank;
            b.summary = Some(s);
            b.ratios = match &baseline {
                Some(base) if base.name != b.name && !b.runs.is_empty() => {
                    let ratio = |pick: &dyn Fn(&LifecycleRun) -> Option<f64>, what: &str| {
                        RatioStat::of_loads(
                            &loads.group(&paired_ratios_keyed(&keyed(b, pick), &keyed(base, pick))),
                            boot,
                            &format!("fs / {} / {} / {what}", b.name, base.name),
                        )
                    };
                    Some(LifecycleRatios {
                        versus: base.name.clone(),
                        total: ratio(&|r| Some(r.total_ms), "total"),
                        phases: Phase::ALL
                            .iter()
                            .map(|&phase| PhaseRatio {
                                phase,
                                ratio: ratio(&|r| r.phase(phase).map(|p| p.ms), phase.as_str()),
                            })
                            .collect(),
                    })
                }
                _ => None,
            };
        }
    }
}
