//! What bench-fs measures, as `bench_results` types (the one result schema): the lifecycle
//! ([`LifecycleSuite`]) and the raw per-call workloads ([`RawSuite`]), every sample kept.
//! Summaries (medians, min–max, paired ratios to the baseline, raw floors) are computed by
//! `bench_results` ([`LifecycleSuite::summarize`], [`RawSuite::summarize`]), not here.

pub use bench_results::fs::{
    LifecycleBackend, LifecycleRun, LifecycleSuite, LifecycleSummary, Mode, Phase, PhaseSample,
    PhaseStat,
};
pub use bench_results::raw::{CallSeries, CallStats, RawRun, RawSuite, SeriesSummary};
pub use bench_results::sql::PhysicalCounters;
pub use bench_results::Stat;

/// What one invocation measured (not serialized itself: the caller puts the parts into a
/// `bench_results::Document`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FsResult {
    /// The filesystem lifecycle, if it ran.
    pub lifecycle: Option<LifecycleSuite>,
    /// The raw OPFS per-call workloads, if they ran (browser only).
    pub raw: Option<RawSuite>,
}
