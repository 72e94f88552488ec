//! [`RunnerRecord`]: what `bench-runner` adds to a page's document (`runner`).

use serde::{Deserialize, Serialize};

/// How the runner drove the page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunnerRecord {
    /// `bench-runner <version>`.
    pub tool: String,
    /// `chromium` or `firefox`.
    pub browser: String,
    /// `browserName browserVersion` as the WebDriver session reported them.
    pub browser_version: Option<String>,
    /// Headless browser.
    pub headless: bool,
    /// The exact URL query the page was opened with.
    pub query: String,
    /// From navigation to the page reporting `done`, seconds.
    pub elapsed_s: f64,
    /// What the page collected from `console.error`, errors and rejections.
    pub console_errors: Vec<String>,
    /// Validation problems (empty: valid).
    pub problems: Vec<String>,
    /// Remarks that are not failures.
    pub warnings: Vec<String>,
    /// Device emulation, if the browser was told to pretend to be something else. A result
    /// with this set was measured on the runner's machine, not on the emulated device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<Emulation>,
}

/// Phone emulation through Chromium's DevTools protocol: a mobile viewport and a CPU slowed
/// down by throttling. It is **not** a phone: storage, OPFS, the browser build and the memory
/// are the desktop's.
///
/// DevTools throttles pages only (`Emulation.setCPUThrottlingRate` on a worker target answers
/// "Operation is only supported for pages, not workers"); the page's throttling slows its
/// dedicated worker, where the benchmark runs, by less than the rate. So the runner measures
/// that: the same CPU-bound loop in the worker before and after throttling, and records both
/// and their ratio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Emulation {
    /// `chromium-devtools-phone-emulation`.
    pub kind: String,
    /// The `Emulation.setCPUThrottlingRate` rate asked for the page (4: four times slower).
    pub cpu_throttling_rate: f64,
    /// Worker calibration loop times before throttling, ms (one per repetition).
    pub worker_calibration_before_ms: Vec<f64>,
    /// The same after throttling, ms.
    pub worker_calibration_after_ms: Vec<f64>,
    /// Median after ÷ median before: how much slower the benchmark's worker really ran.
    pub worker_slowdown: Option<f64>,
    /// `Emulation.setDeviceMetricsOverride`: CSS width.
    pub width: u32,
    /// CSS height.
    pub height: u32,
    /// Device pixel ratio.
    pub device_scale_factor: f64,
    /// `mobile: true`.
    pub mobile: bool,
    /// Plain words for readers: what this is and is not.
    pub note: String,
}
