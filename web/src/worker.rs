//! The wasm exports the page's worker calls (wasm32 only). See the crate docs for the contract.
//!
//! Requirements: a dedicated worker in a secure context (OPFS sync access handles exist nowhere
//! else). Every suite runs on the worker's thread and blocks it while SQLite or OPFS works; the
//! page stays responsive because it is another thread.

use std::cell::RefCell;

use js_sys::{Function, Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use bench_fs::config::{Level, LifecycleConfig, Mode, RawConfig};
use bench_fs::lifecycle::FsBackend as _;
use bench_sql::backend::SqlBackend as _;
use bench_sql::browser::{BrowserBackend, BrowserConfig, Workload};

use crate::config::{Preset, Request, RunConfig, Suite};
use crate::doc::{Document, PageEnvironment, ProgressEvent, Steps};

/// OPFS directory bench-sql works in (wiped at its start and end).
const SQL_OPFS_ROOT: &str = "bench-web-sql";
/// OPFS directory bench-fs works in.
const FS_OPFS_DIR: &str = "bench-web-fs";
/// Name the raw workloads go by in progress events and backend lists (they have no backend).
const RAW_BACKEND: &str = "opfs";

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs when the module is instantiated: panics go to `console.error` and to
/// `globalThis.__wasmPanic`, which `worker.js` adds to the error it reports (after a panic the
/// module is unusable, and the promise only says "unreachable").
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let message = format!("panic in the benchmark wasm: {info}");
        console_error(&message);
        let _ = Reflect::set(
            &js_sys::global(),
            &JsValue::from_str("__wasmPanic"),
            &JsValue::from_str(&message),
        );
    }));
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Our types serialize infallibly (no maps with non-string keys, no foreign Serialize).
    serde_json::to_string(value).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn js_error(message: impl AsRef<str>) -> JsValue {
    js_sys::Error::new(message.as_ref()).into()
}

// ------------------------------------------------------------------------------------------
// Backends and presets
// ------------------------------------------------------------------------------------------

/// One backend a suite can run.
#[derive(Debug, Serialize)]
struct BackendInfo {
    name: String,
    durability: String,
    persistent: bool,
}

/// Backends per suite, in running order.
#[derive(Debug, Serialize)]
struct Backends {
    /// bench-sql (the suite and the batch share them).
    sql: Vec<BackendInfo>,
    /// bench-fs lifecycle.
    fs: Vec<BackendInfo>,
    /// The raw workloads have no backend: OPFS itself.
    raw: Vec<BackendInfo>,
}

fn sql_backends() -> Vec<BackendInfo> {
    BrowserBackend::all(SQL_OPFS_ROOT)
        .iter()
        .map(|b| BackendInfo {
            name: b.name(),
            durability: b.durability().to_owned(),
            persistent: b.persistent(),
        })
        .collect()
}

/// The lifecycle configuration the page runs: our volume in both buffer modes at every
/// durability level, and the one-OPFS-file-per-file baseline.
fn lifecycle_config(c: &RunConfig, only: Vec<String>) -> LifecycleConfig {
    LifecycleConfig {
        files: c.files,
        file_size_bytes: c.file_size_bytes,
        seed: c.seed,
        buffer_modes: vec![Mode::Disk, Mode::Memory],
        durabilities: vec![Level::Strict, Level::Relaxed, Level::Balanced],
        baseline: true,
        only,
        ..LifecycleConfig::default()
    }
}

/// The lifecycle backends [`lifecycle_config`] runs, as bench-fs names them.
fn fs_backends() -> Vec<BackendInfo> {
    let cfg = lifecycle_config(&Preset::Full.config(), Vec::new());
    bench_fs::browser::browser_backends(&cfg, FS_OPFS_DIR)
        .iter()
        .map(|b| BackendInfo {
            name: b.name(),
            durability: b.durability().to_owned(),
            persistent: true,
        })
        .collect()
}

/// The backends each suite can run, as JSON: `{sql: [{name, durability, persistent}], fs:
/// [...], raw: [{name: "opfs", ...}]}`.
#[wasm_bindgen]
pub fn backends() -> String {
    to_json(&Backends {
        sql: sql_backends(),
        fs: fs_backends(),
        raw: vec![BackendInfo {
            name: RAW_BACKEND.to_owned(),
            durability: "raw OPFS calls (flush only where the workload says)".to_owned(),
            persistent: true,
        }],
    })
}

/// The presets as JSON: `{full: RunConfig, phone: RunConfig, quick: RunConfig}`.
#[wasm_bindgen]
pub fn presets() -> String {
    let map: serde_json::Map<String, serde_json::Value> = Preset::ALL
        .iter()
        .map(|p| {
            (
                p.as_str().to_owned(),
                serde_json::to_value(p.config()).unwrap_or_default(),
            )
        })
        .collect();
    to_json(&map)
}

// ------------------------------------------------------------------------------------------
// Environment
// ------------------------------------------------------------------------------------------

fn global_get(path: &[&str]) -> Option<JsValue> {
    let mut v: JsValue = js_sys::global().into();
    for key in path {
        if v.is_undefined() || v.is_null() {
            return None;
        }
        v = Reflect::get(&v, &JsValue::from_str(key)).ok()?;
    }
    (!v.is_undefined() && !v.is_null()).then_some(v)
}

/// `navigator.storage.persisted()`, where the worker has it.
async fn storage_persisted() -> Option<bool> {
    let storage = global_get(&["navigator", "storage"])?;
    let method: Function = Reflect::get(&storage, &JsValue::from_str("persisted"))
        .ok()?
        .dyn_into()
        .ok()?;
    let promise: Promise = method.call0(&storage).ok()?.dyn_into().ok()?;
    JsFuture::from(promise).await.ok()?.as_bool()
}

async fn page_environment(commit: Option<String>) -> PageEnvironment {
    let env = bench_sql::browser::environment(commit.clone()).await;
    let opfs_available =
        global_get(&["navigator", "storage", "getDirectory"]).is_some_and(|f| f.is_function());
    PageEnvironment {
        user_agent: env.user_agent,
        browser: env.browser,
        browser_version: env.browser_version,
        platform: Some(env.os).filter(|s| !s.is_empty()),
        hardware_concurrency: env.cpu_count,
        device_memory_gb: global_get(&["navigator", "deviceMemory"]).and_then(|v| v.as_f64()),
        timer_resolution_us: env.timer_resolution_us,
        cross_origin_isolated: env.cross_origin_isolated,
        secure_context: global_get(&["isSecureContext"]).and_then(|v| v.as_bool()),
        opfs_available,
        storage_usage_bytes: env.storage_usage_bytes,
        storage_quota_bytes: env.storage_quota_bytes,
        storage_persisted: storage_persisted().await,
        sqlite_version: Some(env.sqlite_version).filter(|s| !s.is_empty()),
        commit,
        page_version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

/// The environment as the worker sees it, as JSON ([`PageEnvironment`]); `commit` is recorded
/// as given.
#[wasm_bindgen]
pub async fn environment(commit: Option<String>) -> String {
    to_json(&page_environment(commit).await)
}

// ------------------------------------------------------------------------------------------
// run
// ------------------------------------------------------------------------------------------

/// Sends progress events to the page.
struct Reporter {
    callback: Function,
    started_ms: f64,
    steps: Steps,
}

impl Reporter {
    fn emit(
        &self,
        suite: &str,
        backend: &str,
        case: &str,
        run: u32,
        warmup: bool,
        ms: Option<f64>,
    ) {
        let event = ProgressEvent {
            suite: suite.to_owned(),
            backend: backend.to_owned(),
            case: case.to_owned(),
            run,
            warmup,
            status: if ms.is_some() { "end" } else { "start" }.to_owned(),
            ms,
            done_steps: self.steps.done(),
            total_steps: self.steps.total(),
            elapsed_ms: js_sys::Date::now() - self.started_ms,
        };
        // A throwing callback must not abort the benchmark.
        let _ = self
            .callback
            .call1(&JsValue::NULL, &JsValue::from_str(&to_json(&event)));
    }
}

/// Step-accounting parts, in running order.
const PART_SQL: usize = 0;
const PART_FS: usize = 1;
const PART_RAW: usize = 2;

/// Runs the suites `config_json` ([`Request`]) selects and resolves to the result document
/// ([`Document`]) as JSON. `on_progress` gets a [`ProgressEvent`] as a JSON string before and
/// after each unit of work. Rejects only if the request is invalid; a failing suite is
/// recorded in `verifications.failures` and the others still run.
#[wasm_bindgen]
pub async fn run(config_json: String, on_progress: Function) -> Result<String, JsValue> {
    let started_ms = js_sys::Date::now();
    let generated_at: String = js_sys::Date::new_0().to_iso_string().into();
    let config = Request::from_json(&config_json)
        .and_then(|r| r.resolve())
        .map_err(js_error)?;

    let sql_names: Vec<String> = sql_backends()
        .into_iter()
        .map(|b| b.name)
        .filter(|n| config.selects_backend(n))
        .collect();
    let fs_names: Vec<String> = fs_backends()
        .into_iter()
        .map(|b| b.name)
        .filter(|n| config.selects_backend(n))
        .collect();
    let run_sql = config.runs_suite(Suite::Sql) || config.runs_suite(Suite::Batch);
    let run_fs = config.runs_suite(Suite::Fs);
    let run_raw = config.runs_suite(Suite::Raw);
    let rounds = config.runs + config.warmup;
    let count = |v: &[String]| u32::try_from(v.len()).unwrap_or(u32::MAX);
    let estimate = |on: bool, units: u32| if on { units.saturating_mul(rounds) } else { 0 };
    let reporter = RefCell::new(Reporter {
        callback: on_progress,
        started_ms,
        steps: Steps::new(&[
            estimate(run_sql, count(&sql_names) * 2),
            estimate(run_fs, count(&fs_names)),
            estimate(run_raw, bench_fs::raw::workload_count(&raw_config(&config))),
        ]),
    });

    let environment = page_environment(config.commit.clone()).await;
    let mut doc = Document::new(generated_at, config.clone(), environment);
    if config.sql_scale != 1 && run_sql {
        doc.notes.push(format!(
            "The SQL suite and batch ran with every count divided by {}: a check that they work, not a result comparable with full-size runs.",
            config.sql_scale
        ));
    }
    if config.warmup == 0 {
        doc.notes
            .push("No warm-up run: the first run includes compilation and cache warm-up.".into());
    }

    if run_sql {
        if sql_names.is_empty() {
            doc.notes
                .push("SQL: no backend matches the backend filter; skipped.".into());
        } else {
            run_sql_suites(&config, sql_names, &reporter, &mut doc).await;
        }
        reporter.borrow_mut().steps.finish(PART_SQL);
    }
    if run_fs {
        if fs_names.is_empty() {
            doc.notes.push(
                "Filesystem lifecycle: no backend matches the backend filter; skipped.".into(),
            );
        } else {
            run_fs_suite(&config, fs_names, &reporter, &mut doc).await;
        }
        reporter.borrow_mut().steps.finish(PART_FS);
    }
    if run_raw {
        run_raw_suite(&config, &reporter, &mut doc).await;
        reporter.borrow_mut().steps.finish(PART_RAW);
    }
    if doc.sql.is_none()
        && doc.fs.is_none()
        && doc.raw.is_none()
        && doc.verifications.failures.is_empty()
    {
        doc.verifications.fail(
            "all",
            None,
            format!(
                "nothing ran: no backend matches the filter {:?} in the selected suites",
                config.backends
            ),
        );
    }
    doc.duration_ms = js_sys::Date::now() - started_ms;
    doc.to_json().map_err(|e| js_error(e.to_string()))
}

/// The name of the backend an error of bench-sql happened in, if it says.
fn sql_error_backend(e: &bench_sql::BenchError) -> Option<String> {
    match e {
        bench_sql::BenchError::InBackend { backend, .. }
        | bench_sql::BenchError::Lifecycle { backend, .. } => Some(backend.clone()),
        _ => None,
    }
}

/// bench-sql over `names`. A backend that fails is recorded and left out, and the others run
/// again without it (bench-sql interleaves backends per run index and returns nothing on
/// error, so this is the only way to keep the others' results).
async fn run_sql_suites(
    config: &RunConfig,
    mut names: Vec<String>,
    reporter: &RefCell<Reporter>,
    doc: &mut Document,
) {
    let scaled = if config.sql_scale == 1 {
        String::new()
    } else {
        format!(" (÷{})", config.sql_scale)
    };
    let suite_label = format!("16 cases{scaled}");
    let batch_label = format!("10k batch{scaled}");
    let label = match (
        config.runs_suite(Suite::Sql),
        config.runs_suite(Suite::Batch),
    ) {
        (true, true) => "sql+batch",
        (true, false) => "sql",
        _ => "batch",
    };
    while !names.is_empty() {
        let sql_config = BrowserConfig {
            runs: config.runs,
            warmup: config.warmup,
            seed: config.seed,
            scale: config.sql_scale,
            backends: names.clone(),
            opfs_root: SQL_OPFS_ROOT.to_owned(),
            commit: config.commit.clone(),
        };
        let mut on_progress = |p: bench_sql::browser::Progress| {
            let mut r = reporter.borrow_mut();
            r.steps.report(PART_SQL, p.done, p.total);
            let (suite, case) = match p.workload {
                Workload::Suite => ("sql", suite_label.as_str()),
                Workload::Batch => ("batch", batch_label.as_str()),
            };
            r.emit(suite, &p.backend, case, p.run, p.warmup, p.ms);
        };
        match bench_sql::browser::run_browser(sql_config, &mut on_progress).await {
            Ok(result) => {
                let rows = result.suite.batch_rows;
                for b in &result.backends {
                    let n = b.runs.len() + b.warmup_runs.len();
                    let verified = if b.persistent {
                        format!("after reopen, the dropped tables were absent and integrity_check ok (suite), all {rows} rows present (batch)")
                    } else {
                        "not persistent: no reopen to verify".to_owned()
                    };
                    doc.verifications.pass(format!(
                        "{label}: {}: {n} runs completed; {verified}",
                        b.name
                    ));
                }
                match serde_json::to_value(&result) {
                    Ok(v) => doc.sql = Some(v),
                    Err(e) => doc.verifications.fail(label, None, e.to_string()),
                }
                return;
            }
            Err(e) => {
                let backend = sql_error_backend(&e);
                doc.verifications
                    .fail(label, backend.as_deref(), e.to_string());
                match backend {
                    Some(b) if names.contains(&b) => {
                        names.retain(|n| *n != b);
                        if !names.is_empty() {
                            doc.notes.push(format!(
                                "SQL: {b} failed; the other backends ran again without it."
                            ));
                        }
                        let mut r = reporter.borrow_mut();
                        let total = u32::try_from(names.len()).unwrap_or(u32::MAX)
                            * 2
                            * (config.runs + config.warmup);
                        r.steps.report(PART_SQL, 0, total);
                    }
                    _ => return,
                }
            }
        }
    }
}

/// The name of the backend an error of bench-fs happened in, if it says.
fn fs_error_backend(e: &bench_fs::FsError) -> Option<String> {
    match e {
        bench_fs::FsError::InPhase { backend, .. } => Some(backend.clone()),
        _ => None,
    }
}

fn fs_config(config: &RunConfig) -> bench_fs::Config {
    bench_fs::Config {
        runs: config.runs,
        warmup: config.warmup,
        lifecycle: None,
        raw: None,
        dir: FS_OPFS_DIR.to_owned(),
        commit: config.commit.clone(),
    }
}

/// bench-fs' lifecycle over `names`; a failing backend is recorded and the others run again
/// without it.
async fn run_fs_suite(
    config: &RunConfig,
    mut names: Vec<String>,
    reporter: &RefCell<Reporter>,
    doc: &mut Document,
) {
    while !names.is_empty() {
        let mut fs_config = fs_config(config);
        fs_config.lifecycle = Some(lifecycle_config(config, names.clone()));
        reporter
            .borrow()
            .emit("fs", &names[0], "lifecycle", 1, config.warmup > 0, None);
        let mut on_progress = |p: bench_fs::Progress| {
            let mut r = reporter.borrow_mut();
            r.steps.report(PART_FS, p.done, p.total);
            r.emit("fs", &p.item, "lifecycle", p.run, p.warmup, Some(p.ms));
        };
        match bench_fs::browser::run_browser(&fs_config, &mut on_progress).await {
            Ok(mut result) => {
                result.raw = None;
                if let Some(l) = &result.lifecycle {
                    let survivors = l.files - l.files / 2;
                    for b in &l.backends {
                        let n = b.runs.len() + b.warmup_runs.len();
                        doc.verifications.pass(format!(
                            "fs: {}: {n} runs; every byte read back, and after reopen exactly the {survivors} survivors listed and read back",
                            b.name
                        ));
                    }
                }
                match serde_json::to_value(&result) {
                    Ok(v) => doc.fs = Some(v),
                    Err(e) => doc.verifications.fail("fs", None, e.to_string()),
                }
                return;
            }
            Err(e) => {
                let backend = fs_error_backend(&e);
                doc.verifications
                    .fail("fs", backend.as_deref(), e.to_string());
                match backend {
                    Some(b) if names.contains(&b) => {
                        names.retain(|n| *n != b);
                        if !names.is_empty() {
                            doc.notes.push(format!(
                                "Filesystem lifecycle: {b} failed; the other backends ran again without it."
                            ));
                        }
                        let total = u32::try_from(names.len()).unwrap_or(u32::MAX)
                            * (config.runs + config.warmup);
                        reporter.borrow_mut().steps.report(PART_FS, 0, total);
                    }
                    _ => return,
                }
            }
        }
    }
}

fn raw_config(config: &RunConfig) -> RawConfig {
    RawConfig {
        small_calls: config.raw_small_calls,
        cycle_calls: config.raw_cycle_calls,
        ..RawConfig::default()
    }
}

/// bench-fs' raw OPFS per-call workloads.
async fn run_raw_suite(config: &RunConfig, reporter: &RefCell<Reporter>, doc: &mut Document) {
    let mut fs_config = fs_config(config);
    fs_config.raw = Some(raw_config(config));
    reporter.borrow().emit(
        "raw",
        RAW_BACKEND,
        "per-call workloads",
        1,
        config.warmup > 0,
        None,
    );
    let mut on_progress = |p: bench_fs::Progress| {
        let mut r = reporter.borrow_mut();
        r.steps.report(PART_RAW, p.done, p.total);
        r.emit("raw", RAW_BACKEND, &p.item, p.run, p.warmup, Some(p.ms));
    };
    match bench_fs::browser::run_browser(&fs_config, &mut on_progress).await {
        Ok(result) => match result.raw {
            Some(raw) => {
                let runs = raw.runs.len() + raw.warmup_runs.len();
                let series = raw.runs.first().map_or(0, |r| r.series.len());
                doc.verifications
                    .pass(format!("raw: {series} call series × {runs} runs completed"));
                match serde_json::to_value(&raw) {
                    Ok(v) => doc.raw = Some(v),
                    Err(e) => doc.verifications.fail("raw", None, e.to_string()),
                }
            }
            None => doc
                .verifications
                .fail("raw", None, "bench-fs returned no raw result"),
        },
        Err(e) => doc.verifications.fail("raw", None, e.to_string()),
    }
}
