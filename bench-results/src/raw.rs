//! The raw OPFS per-call workloads: every call of every series timed alone, and the figures
//! derived from them.

use serde::{Deserialize, Serialize};

use crate::stats::Stat;

/// The raw per-call workloads: every run, every call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawSuite {
    /// Excluded from statistics.
    #[serde(default)]
    pub warmup_runs: Vec<RawRun>,
    /// The measured runs.
    #[serde(default)]
    pub runs: Vec<RawRun>,
    /// Per series, medians and ranges over `runs` ([`RawSuite::summarize`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Vec<SeriesSummary>>,
    /// Figures derived from the summary ([`RawDerived`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<RawDerived>,
}

/// One run of every raw workload, each from a fresh file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawRun {
    /// One series per timed call kind, in a fixed order.
    pub series: Vec<CallSeries>,
}

/// The calls of one kind in one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallSeries {
    /// `small-append`, `chunked-append (64 KiB)`, `new-file: create+open`, ...
    pub name: String,
    /// Number of timed calls.
    pub calls: u32,
    /// Bytes per call (0 where no data moves).
    pub bytes_per_call: u32,
    /// Bytes moved by all calls of the series.
    pub total_bytes: u64,
    /// Statistics of `samples_us`.
    pub stats: CallStats,
    /// Every call's time in call order.
    #[serde(default)]
    pub samples_us: Vec<f64>,
}

/// Per-call statistics of one series in one run, microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CallStats {
    /// Sum of all calls.
    pub total_us: f64,
    /// `total_us / calls`.
    pub mean_us: f64,
    /// Nearest-rank 50th percentile.
    pub p50_us: f64,
    /// Nearest-rank 90th percentile.
    pub p90_us: f64,
    /// Nearest-rank 99th percentile.
    pub p99_us: f64,
    /// Slowest call.
    pub max_us: f64,
    /// Call number 1.
    pub first_us: f64,
}

/// Nearest-rank percentile of sorted samples (non-empty).
fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    // ceil(p/100 · n) is in 1..=n for 0 < p <= 100; the cast is of a small positive integer.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let rank = ((p / 100.0) * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

impl CallStats {
    /// Statistics of `samples` (in call order); `None` if empty.
    pub fn of(samples: &[f64]) -> Option<Self> {
        let first_us = *samples.first()?;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let total_us: f64 = samples.iter().sum();
        Some(Self {
            total_us,
            mean_us: total_us / samples.len() as f64,
            p50_us: nearest_rank(&sorted, 50.0),
            p90_us: nearest_rank(&sorted, 90.0),
            p99_us: nearest_rank(&sorted, 99.0),
            max_us: sorted[sorted.len() - 1],
            first_us,
        })
    }
}

impl CallSeries {
    /// A series from its samples (statistics computed here); `None` if there are none.
    pub fn new(
        name: &str,
        bytes_per_call: u32,
        total_bytes: u64,
        samples_us: Vec<f64>,
    ) -> Option<Self> {
        Some(Self {
            name: name.to_owned(),
            calls: u32::try_from(samples_us.len()).unwrap_or(u32::MAX),
            bytes_per_call,
            total_bytes,
            stats: CallStats::of(&samples_us)?,
            samples_us,
        })
    }
}

/// One series across the measured runs: the median of each per-run figure and its min–max.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeriesSummary {
    /// [`CallSeries::name`].
    pub name: String,
    /// Calls per run.
    pub calls: u32,
    /// Bytes per call.
    pub bytes_per_call: u32,
    /// Bytes per run.
    pub total_bytes: u64,
    /// Across runs: [`CallStats::total_us`].
    pub total_us: Option<Stat>,
    /// Across runs: [`CallStats::mean_us`].
    pub mean_us: Option<Stat>,
    /// Across runs: [`CallStats::p50_us`].
    pub p50_us: Option<Stat>,
    /// Across runs: [`CallStats::p90_us`].
    pub p90_us: Option<Stat>,
    /// Across runs: [`CallStats::p99_us`].
    pub p99_us: Option<Stat>,
    /// Across runs: [`CallStats::max_us`].
    pub max_us: Option<Stat>,
    /// Across runs: [`CallStats::first_us`].
    pub first_us: Option<Stat>,
}

/// Name of the raw series that times our volume's Strict commit of an autocommit-sized change
/// on OPFS (bench-fs), priced against [`ENGINE_PAIR_SERIES`].
pub const ENGINE_COMMIT_SERIES: &str = "engine commit (Strict)";

/// Name of the raw series of write+flush pairs of one engine commit's bytes, timed in blocks
/// alternating with [`ENGINE_COMMIT_SERIES`]'s commits: their physical floor, measured beside
/// them.
pub const ENGINE_PAIR_SERIES: &str = "engine commit: raw pair";

/// Name of the raw series of [`ENGINE_COMMIT_SERIES`]'s commits less the time inside their two
/// OPFS calls (timed by the volume): the commit's CPU where it waits for the browser twice.
pub const ENGINE_OUTSIDE_SERIES: &str = "engine commit: outside its calls";

/// Name of the raw series of the same commits on a volume in memory (no OPFS call), one after
/// the other: the commit's CPU with nothing in between.
pub const ENGINE_MEMORY_SERIES: &str = "engine commit in memory: back to back";

/// Name of the raw series of the commits of [`ENGINE_MEMORY_SERIES`], each right after a raw
/// write+flush pair on OPFS: the same CPU after a wait for the browser.
pub const ENGINE_MEMORY_AFTER_PAIR_SERIES: &str = "engine commit in memory: after a raw pair";

/// What the raw figures imply, each from the medians over runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RawDerived {
    /// Fixed per-call floor: mean µs per `small-overwrite` call (the size never changes).
    pub call_floor_us: Option<f64>,
    /// Extra µs per call when the write grows the file: `small-append` − `small-overwrite`.
    pub growth_us: Option<f64>,
    /// Per chunked series: how many times longer the same bytes take in 4 KiB calls
    /// (`small-append` total ÷ the chunked series' total).
    pub chunking: Vec<ChunkGain>,
    /// Mean µs per `flush()` after an append (`append+flush: flush`).
    pub flush_us: Option<f64>,
    /// A flush in small writes: `flush_us ÷ call_floor_us`.
    pub flush_in_small_writes: Option<f64>,
    /// Mean µs per new-file cycle (create+open, write, close, delete).
    pub new_file_cycle_us: Option<f64>,
    /// Our volume's Strict commit of an autocommit-sized change ÷ a raw write+flush pair of
    /// its bytes timed beside it (mean per call; [`ENGINE_COMMIT_SERIES`] ÷
    /// [`ENGINE_PAIR_SERIES`]): what the engine adds to the one write and one flush a durable
    /// commit needs. `None` in documents from before the series.
    pub engine_commit_over_pair: Option<f64>,
    /// The same commit's CPU on a volume in memory right after a raw write+flush pair ÷ back
    /// to back (mean per call; [`ENGINE_MEMORY_AFTER_PAIR_SERIES`] ÷ [`ENGINE_MEMORY_SERIES`]):
    /// what waiting for the browser costs the code that runs next. `None` in documents from
    /// before the series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_after_pair: Option<f64>,
}

/// The gain of one chunk size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChunkGain {
    /// The chunked series (`chunked-append (64 KiB)`).
    pub series: String,
    /// `small-append` total ÷ its total.
    pub ratio: f64,
}

impl RawSuite {
    /// Statistics per series over the measured runs, in the order of the first run.
    pub fn summarize_series(&self) -> Vec<SeriesSummary> {
        let Some(first) = self.runs.first() else {
            return Vec::new();
        };
        first
            .series
            .iter()
            .map(|s| {
                let per_run: Vec<CallStats> = self
                    .runs
                    .iter()
                    .filter_map(|r| r.series.iter().find(|x| x.name == s.name))
                    .map(|x| x.stats)
                    .collect();
                let stat = |f: fn(&CallStats) -> f64| Stat::over(&per_run, |c| Some(f(c)));
                SeriesSummary {
                    name: s.name.clone(),
                    calls: s.calls,
                    bytes_per_call: s.bytes_per_call,
                    total_bytes: s.total_bytes,
                    total_us: stat(|c| c.total_us),
                    mean_us: stat(|c| c.mean_us),
                    p50_us: stat(|c| c.p50_us),
                    p90_us: stat(|c| c.p90_us),
                    p99_us: stat(|c| c.p99_us),
                    max_us: stat(|c| c.max_us),
                    first_us: stat(|c| c.first_us),
                }
            })
            .collect()
    }

    /// Fills `summary` and `derived`.
    pub fn summarize(&mut self) {
        let series = self.summarize_series();
        let median = |name: &str, f: fn(&SeriesSummary) -> Option<Stat>| {
            series
                .iter()
                .find(|s| s.name == name)
                .and_then(f)
                .map(|s| s.median)
        };
        let floor = median("small-overwrite", |s| s.mean_us);
        let append = median("small-append", |s| s.mean_us);
        let append_total = median("small-append", |s| s.total_us);
        let flush = median("append+flush: flush", |s| s.mean_us);
        let derived = RawDerived {
            call_floor_us: floor,
            growth_us: append.zip(floor).map(|(a, f)| a - f),
            chunking: series
                .iter()
                .filter(|s| s.name.starts_with("chunked-append") && !s.name.ends_with(": flush"))
                .filter_map(|s| {
                    let t = s.total_us?.median;
                    let a = append_total?;
                    (t > 0.0).then(|| ChunkGain {
                        series: s.name.clone(),
                        ratio: a / t,
                    })
                })
                .collect(),
            flush_us: flush,
            flush_in_small_writes: flush
                .zip(floor)
                .and_then(|(fl, f)| (f > 0.0).then(|| fl / f)),
            new_file_cycle_us: median("new-file: full cycle", |s| s.mean_us),
            engine_commit_over_pair: median(ENGINE_COMMIT_SERIES, |s| s.mean_us)
                .zip(median(ENGINE_PAIR_SERIES, |s| s.mean_us))
                .and_then(|(e, p)| (p > 0.0).then(|| e / p)),
            cpu_after_pair: median(ENGINE_MEMORY_AFTER_PAIR_SERIES, |s| s.mean_us)
                .zip(median(ENGINE_MEMORY_SERIES, |s| s.mean_us))
                .and_then(|(a, b)| (b > 0.0).then(|| a / b)),
        };
        self.summary = Some(series);
        self.derived = Some(derived);
    }

    /// The summary of the series `name` (from `summary`, else computed).
    pub fn series_summary(&self, name: &str) -> Option<SeriesSummary> {
        match &self.summary {
            Some(s) => s.iter().find(|s| s.name == name).cloned(),
            None => self.summarize_series().into_iter().find(|s| s.name == name),
        }
    }

    /// Median across runs of the mean per call of the series `name`, in microseconds.
    pub fn mean_us(&self, name: &str) -> Option<f64> {
        self.series_summary(name)?.mean_us.map(|s| s.median)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_stats_nearest_rank() {
        assert_eq!(CallStats::of(&[]), None);
        let samples: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        let s = CallStats::of(&samples).unwrap();
        assert_eq!((s.first_us, s.total_us, s.mean_us), (100.0, 5050.0, 50.5));
        assert_eq!(
            (s.p50_us, s.p90_us, s.p99_us, s.max_us),
            (50.0, 90.0, 99.0, 100.0)
        );
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = CallStats::of(&ten).unwrap();
        assert_eq!((s.p50_us, s.p90_us, s.p99_us), (5.0, 9.0, 10.0));
    }

    #[test]
    fn derived_figures() {
        let run = |scale: f64| RawRun {
            series: vec![
                CallSeries::new("small-append", 4096, 4096 * 4, vec![scale * 12.0; 4]).unwrap(),
                CallSeries::new("small-overwrite", 4096, 4096 * 4, vec![scale * 10.0; 4]).unwrap(),
                CallSeries::new(
                    "chunked-append (64 KiB)",
                    65536,
                    4096 * 4,
                    vec![scale * 6.0],
                )
                .unwrap(),
                CallSeries::new("chunked-append (64 KiB): flush", 0, 0, vec![scale * 900.0])
                    .unwrap(),
                CallSeries::new("append+flush: flush", 0, 0, vec![scale * 300.0; 2]).unwrap(),
                CallSeries::new("new-file: full cycle", 0, 0, vec![scale * 5000.0; 2]).unwrap(),
                CallSeries::new(ENGINE_PAIR_SERIES, 900, 1800, vec![scale * 200.0; 2]).unwrap(),
                CallSeries::new(ENGINE_COMMIT_SERIES, 900, 1800, vec![scale * 230.0; 2]).unwrap(),
                CallSeries::new(ENGINE_MEMORY_SERIES, 0, 0, vec![scale * 4.0; 2]).unwrap(),
                CallSeries::new(ENGINE_MEMORY_AFTER_PAIR_SERIES, 0, 0, vec![scale * 10.0; 2])
                    .unwrap(),
            ],
        };
        let mut raw = RawSuite {
            warmup_runs: vec![run(100.0)],
            runs: vec![run(1.0), run(3.0), run(2.0)],
            ..RawSuite::default()
        };
        raw.summarize();
        let d = raw.derived.clone().unwrap();
        assert_eq!(
            d.call_floor_us,
            Some(20.0),
            "median of 10, 30, 20: warm-up excluded"
        );
        assert_eq!(d.growth_us, Some(4.0));
        assert_eq!(d.chunking[0].ratio, 96.0 / 12.0);
        assert_eq!(
            d.chunking.len(),
            1,
            "the flush after the appends is no chunk size"
        );
        assert_eq!(d.flush_us, Some(600.0));
        assert_eq!(d.flush_in_small_writes, Some(30.0));
        assert_eq!(d.new_file_cycle_us, Some(10_000.0));
        assert_eq!(d.engine_commit_over_pair, Some(460.0 / 400.0));
        assert_eq!(d.cpu_after_pair, Some(2.5));
        assert_eq!(raw.mean_us("small-append"), Some(24.0));
        assert_eq!(raw.summary.as_ref().unwrap().len(), 10);
    }
}
