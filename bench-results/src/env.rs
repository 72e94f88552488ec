//! [`Environment`]: where a result was measured, recorded once per document.
//!
//! One record for every producer: the page's worker fills the browser fields, the native
//! runners the machine fields. Every field is optional (`None`: the platform cannot tell, or
//! the producer did not ask); absent fields are left out of the JSON.
//!
//! Version 1 page documents called the OS field `platform` and the CPU count
//! `hardware_concurrency`; both still load (serde aliases).

use serde::{Deserialize, Serialize};

/// The machine and software a result was measured on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// `browser` (a dedicated worker in a page) or `native`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Operating system: `navigator.userAgentData.platform` / `navigator.platform` in a
    /// browser, `std::env::consts::OS` natively.
    #[serde(alias = "platform", skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// CPU architecture of the code (`wasm32` in a browser).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arch: Option<String>,
    /// Logical CPUs (`hardwareConcurrency`, `available_parallelism`).
    #[serde(
        alias = "hardware_concurrency",
        skip_serializing_if = "Option::is_none"
    )]
    pub cpu_count: Option<u32>,
    /// CPU model (native, `/proc/cpuinfo`; a page cannot see it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// `navigator.deviceMemory`, GB, rounded by the browser (Chromium only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_memory_gb: Option<f64>,
    /// `navigator.userAgent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// Browser name (`Firefox`, `Chromium Headless`, ...), from the user agent and, in
    /// Chromium, the brand list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    /// Browser version (Chromium: the full version from `userAgentData`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_version: Option<String>,
    /// Smallest `performance.now()` step measured in the worker, microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer_resolution_us: Option<f64>,
    /// `crossOriginIsolated` in the worker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_origin_isolated: Option<bool>,
    /// `isSecureContext` in the worker (OPFS needs it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secure_context: Option<bool>,
    /// `navigator.storage.getDirectory` exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opfs_available: Option<bool>,
    /// `navigator.storage.estimate().usage` before the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_usage_bytes: Option<u64>,
    /// `navigator.storage.estimate().quota`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_quota_bytes: Option<u64>,
    /// `navigator.storage.persisted()`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage_persisted: Option<bool>,
    /// `sqlite3_libversion()` of our SQLite (the one in the wasm, or the bundled one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlite_version: Option<String>,
    /// `rustc -V` (native runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// Source commit, `-dirty` if the work tree had changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Version of the page (the `web` crate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_version: Option<String>,
    /// Seconds since the Unix epoch when the run started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_unix_s: Option<u64>,
}
