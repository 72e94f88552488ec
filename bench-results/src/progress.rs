//! [`ProgressEvent`]: what the page's worker reports before and after each unit of work.

use serde::{Deserialize, Serialize};

use crate::stats::Stat;

/// A progress event, sent to the page as JSON before and after each unit of work.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProgressEvent {
    /// `sql`, `batch`, `fs` or `raw`.
    pub suite: String,
    /// Backend name (`opfs` for the raw workloads, which have none).
    pub backend: String,
    /// What runs: `16 cases`, `10k batch`, `lifecycle`, or the raw workload's name.
    pub case: String,
    /// 1-based run number among the warm-up or the measured runs (the round).
    pub run: u32,
    /// Whether this is a warm-up run (excluded from statistics).
    pub warmup: bool,
    /// `start` (about to run) or `end` (finished, `ms` set).
    pub status: String,
    /// Time of the finished unit, milliseconds (suite: the 16-case total; raw: the workload's
    /// total); `None` at `start`.
    pub ms: Option<f64>,
    /// At `end` of a measured unit: median and range of this backend's measured times of
    /// this unit so far (what the page shows while the run goes on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub so_far: Option<Stat>,
    /// Units finished over the whole run.
    pub done_steps: u32,
    /// Units in the whole run (an estimate until each suite reports its own count).
    pub total_steps: u32,
    /// Since the run started, milliseconds.
    pub elapsed_ms: f64,
}
