//! The wasm exports the page's worker calls (wasm32 only). See the crate docs for the contract.
//!
//! Requirements: a dedicated worker in a secure context (OPFS sync access handles exist nowhere
//! else). Every suite runs on the worker's thread and blocks it while SQLite or OPFS works; the
//! page stays responsive because it is another thread.
//!
//! The SQL round loop is bench-sql's [`run_rounds`]; its contestants are our backends and the
//! JavaScript peers of `./peers/index.js` ([`PeerModule`]), all in the same rounds, in this
//! worker; the peers are the capped contestants, which sit out the measured rounds after the
//! first `config.peer_runs`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use bench_results::progress::ProgressEvent;
use bench_results::sql::{BackendMeta, BatchRun, SqlSection, SuiteRun};
use bench_results::{Bootstrap, Document, Stat};
use js_sys::{Array, Function, Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use bench_fs::config::{Level, LifecycleConfig, Mode, RawConfig};
use bench_fs::lifecycle::FsBackend as _;
use bench_sql::backend::SqlBackend as _;
use bench_sql::batch::{Batch, CREATE_SQL, INSERT_SQL};
use bench_sql::browser::{
    random_tag, remove_opfs_dir, remove_root, BrowserBackend, OursOpfsBackend, SahpoolBackend,
};
use bench_sql::runner::{run_rounds, Contestant, Ours, Plan, Turn, Workload};
use bench_sql::sql::Suite as SqlSuite;

use crate::config::{Preset, Request, RunConfig, Suite};
use crate::doc::Steps;
use crate::peer::{
    check_batch_run, check_handoff_out, check_suite_run, peer_metas, PeerBatch, PeerBatchExpected,
    PeerCase, PeerHandoffInfo, PeerHandoffOptions, PeerHandoffOut, PeerInfo, PeerOptions,
};

/// OPFS directory our SQL backends work in (wiped at its start and end).
const SQL_OPFS_ROOT: &str = "bench-web-sql";
/// OPFS directory bench-fs works in.
const FS_OPFS_DIR: &str = "bench-web-fs";
/// Name the raw workloads go by in progress events and backend lists (they have no backend).
const RAW_BACKEND: &str = "opfs";
/// OPFS directory the hand-off suite works in (removed at its end).
const HANDOFF_OPFS_DIR: &str = "bench-web-handoff";
/// OPFS directory the scale suite works in (removed at its start and end).
const SCALE_OPFS_DIR: &str = "bench-web-scale";
/// Our configurations the scale suite runs: Strict in both buffer modes (a database built and
/// read at size is about layout and bytes moved, not about when commits flush).
const SCALE_OURS: [&str; 2] = ["ours-disk-strict", "ours-memory-strict"];

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

/// A thrown JavaScript value as text: `Name: message` for errors, else its string form.
fn describe(e: &JsValue) -> String {
    if let Some(err) = e.dyn_ref::<js_sys::Error>() {
        let name: String = err.name().into();
        let message: String = err.message().into();
        return format!("{name}: {message}");
    }
    e.as_string()
        .or_else(|| js_sys::JSON::stringify(e).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| format!("{e:?}"))
}

// ------------------------------------------------------------------------------------------
// Peers: backends implemented in JavaScript (`./peers/index.js`)
// ------------------------------------------------------------------------------------------

/// The optional peer module as `worker.js` imported it (`None`: the page has none).
#[derive(Clone, Debug)]
struct PeerModule(JsValue);

impl PeerModule {
    fn new(module: JsValue) -> Option<Rc<Self>> {
        (!module.is_undefined() && !module.is_null()).then(|| Rc::new(Self(module)))
    }

    /// Calls the module's `name` export with `args` and awaits it; a throw or a rejection
    /// becomes its message.
    async fn call(&self, name: &str, args: &[JsValue]) -> Result<JsValue, String> {
        let f: Function = Reflect::get(&self.0, &JsValue::from_str(name))
            .ok()
            .and_then(|f| f.dyn_into().ok())
            .ok_or_else(|| format!("./peers/index.js does not export a function {name}"))?;
        let args: Array = args.iter().collect();
        let value = f.apply(&self.0, &args).map_err(|e| describe(&e))?;
        JsFuture::from(Promise::resolve(&value))
            .await
            .map_err(|e| describe(&e))
    }

    /// Whether the module exports a function `name`.
    fn has(&self, name: &str) -> bool {
        Reflect::get(&self.0, &JsValue::from_str(name)).is_ok_and(|f| f.is_function())
    }

    /// `peerBackends()`.
    async fn backends(&self) -> Result<Vec<PeerInfo>, String> {
        let v = self.call("peerBackends", &[]).await?;
        from_js(&v).map_err(|e| format!("peerBackends(): {e}"))
    }
}

/// A JavaScript value read through JSON into a Rust type.
fn from_js<T: serde::de::DeserializeOwned>(v: &JsValue) -> Result<T, String> {
    let text = js_sys::JSON::stringify(v)
        .map_err(|e| describe(&e))?
        .as_string()
        .ok_or("not JSON-serializable")?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// A Rust value as a JavaScript value, through JSON.
fn to_js<T: Serialize>(v: &T) -> Result<JsValue, String> {
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    js_sys::JSON::parse(&text).map_err(|e| describe(&e))
}

/// What every peer gets: the cases and the batch as JavaScript values, built once per run.
struct PeerInputs {
    cases: JsValue,
    batch: JsValue,
}

impl PeerInputs {
    fn new(suite: &SqlSuite, batch: &Batch) -> Result<Self, String> {
        let cases: Vec<PeerCase> = suite
            .cases
            .iter()
            .map(|c| PeerCase {
                number: c.number,
                title: c.title.clone(),
                sql: c.sql.clone(),
            })
            .collect();
        let sum = |f: fn(&bench_sql::batch::Row) -> u64| batch.rows.iter().map(f).sum::<u64>();
        let peer_batch = PeerBatch {
            create_sql: CREATE_SQL.to_owned(),
            insert_sql: INSERT_SQL.to_owned(),
            rows: batch.rows.iter().map(|r| (r.a, r.b, r.c.clone())).collect(),
            expected: PeerBatchExpected {
                count: u64::from(batch.len()),
                sum_a: sum(|r| u64::from(r.a)),
                sum_b: sum(|r| u64::from(r.b)),
            },
        };
        Ok(Self {
            cases: to_js(&cases)?,
            batch: to_js(&peer_batch)?,
        })
    }
}

/// One peer in the rounds.
struct Peer {
    meta: BackendMeta,
    module: Rc<PeerModule>,
    inputs: Rc<PeerInputs>,
    info: bench_results::sql::SuiteInfo,
}

impl Peer {
    fn options(&self, turn: Turn) -> Result<JsValue, String> {
        to_js(&PeerOptions {
            round: turn.round,
            warmup: turn.warmup,
            seed: self.info.seed,
            scale_divisor: self.info.scale_divisor,
            sha256: self.info.sha256.clone(),
        })
    }
}

/// Our backends and the peers, in one round loop.
enum WebContestant {
    Ours(Ours<BrowserBackend>),
    Peer(Peer),
}

impl Contestant for WebContestant {
    fn meta(&self) -> BackendMeta {
        match self {
            WebContestant::Ours(b) => b.meta(),
            WebContestant::Peer(p) => p.meta.clone(),
        }
    }

    async fn suite(&mut self, suite: &SqlSuite, turn: Turn) -> Result<SuiteRun, String> {
        match self {
            WebContestant::Ours(b) => b.suite(suite, turn).await,
            WebContestant::Peer(p) => {
                let args = [
                    JsValue::from_str(&p.meta.name),
                    p.inputs.cases.clone(),
                    p.options(turn)?,
                ];
                let v = p.module.call("runPeerSuite", &args).await?;
                let run: SuiteRun = from_js(&v).map_err(|e| format!("runPeerSuite: {e}"))?;
                check_suite_run(run, &p.info, p.meta.persistent)
            }
        }
    }

    async fn batch(&mut self, batch: &Batch, turn: Turn) -> Result<BatchRun, String> {
        match self {
            WebContestant::Ours(b) => b.batch(batch, turn).await,
            WebContestant::Peer(p) => {
                let args = [
                    JsValue::from_str(&p.meta.name),
                    p.inputs.batch.clone(),
                    p.options(turn)?,
                ];
                let v = p.module.call("runPeerBatch", &args).await?;
                let run: BatchRun = from_js(&v).map_err(|e| format!("runPeerBatch: {e}"))?;
                check_batch_run(run, batch.len(), p.meta.persistent)
            }
        }
    }

    /// The peers are what `peer_runs` caps: exactly the backends of `peerBackends()`.
    fn capped(&self) -> bool {
        matches!(self, WebContestant::Peer(_))
    }
}

// ------------------------------------------------------------------------------------------
// Backends and presets
// ------------------------------------------------------------------------------------------

/// One lifecycle backend.
#[derive(Debug, Serialize)]
struct FsBackendInfo {
    name: String,
    durability: String,
    persistent: bool,
    storage: String,
}

/// Backends per suite, in running order.
#[derive(Debug, Serialize)]
struct Backends {
    /// bench-sql (the suite and the batch share them): ours, the Rust-side baselines, peers.
    sql: Vec<BackendMeta>,
    /// bench-fs lifecycle.
    fs: Vec<FsBackendInfo>,
    /// The raw workloads have no backend: OPFS itself.
    raw: Vec<FsBackendInfo>,
    /// The scale suite: its baseline (`sahpool`) and ours ([`SCALE_OURS`]), a subset of `sql`.
    scale: Vec<BackendMeta>,
    /// Why the peer module could not be used, if it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    peer_error: Option<String>,
}

fn our_sql_metas() -> Vec<BackendMeta> {
    BrowserBackend::all(SQL_OPFS_ROOT)
        .iter()
        .map(|b| b.meta())
        .collect()
}

/// Our SQL backends' metadata, then the peers' (an unusable peer module is an error).
async fn sql_metas(peers: Option<&PeerModule>) -> (Vec<BackendMeta>, Option<String>) {
    let mut metas = our_sql_metas();
    let Some(peers) = peers else {
        return (metas, None);
    };
    let taken: Vec<String> = metas.iter().map(|m| m.name.clone()).collect();
    match peers.backends().await.and_then(|l| peer_metas(&l, &taken)) {
        Ok(p) => {
            metas.extend(p);
            (metas, None)
        }
        Err(e) => (metas, Some(e)),
    }
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
        repeats: c.fs_runs_per_round(),
        ..LifecycleConfig::default()
    }
}

/// The lifecycle backends [`lifecycle_config`] runs, as bench-fs names them.
fn fs_backends() -> Vec<FsBackendInfo> {
    let cfg = lifecycle_config(&Preset::Full.config(), Vec::new());
    bench_fs::browser::browser_backends(&cfg, FS_OPFS_DIR)
        .iter()
        .map(|b| FsBackendInfo {
            name: b.name(),
            durability: b.durability().to_owned(),
            persistent: true,
            storage: b.storage().to_owned(),
        })
        .collect()
}

/// The backends each suite can run, as JSON: `{sql: [BackendMeta], fs: [{name, durability,
/// persistent, storage}], raw: [{name: "opfs", ...}], scale: [BackendMeta], peer_error?}`.
/// `peers` is the module `./peers/index.js` (or `undefined`).
#[wasm_bindgen]
pub async fn backends(peers: JsValue) -> String {
    let module = PeerModule::new(peers);
    let (sql, peer_error) = sql_metas(module.as_deref()).await;
    to_json(&Backends {
        sql,
        fs: fs_backends(),
        raw: vec![FsBackendInfo {
            name: RAW_BACKEND.to_owned(),
            durability: "raw OPFS calls (flush only where the workload says)".to_owned(),
            persistent: true,
            storage: "opfs".to_owned(),
        }],
        scale: scale_backends(SCALE_OPFS_DIR)
            .iter()
            .map(|b| b.meta())
            .collect(),
        peer_error,
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

/// The names among `names_json` (a JSON array of backend names) that a run of `config_json` (a
/// [`Request`], as `run` takes it; only its `backends` filters matter) would run, as a JSON array
/// in the order given. The page checks its boxes for a URL's filters and lists a live run's
/// backends with this, so the selection rule (`RunConfig::selects_backend`) has one copy.
#[wasm_bindgen]
pub fn selected_backends(config_json: String, names_json: String) -> Result<String, JsValue> {
    let config = Request::from_json(&config_json)
        .and_then(|r| r.resolve())
        .map_err(js_error)?;
    let names: Vec<String> = serde_json::from_str(&names_json)
        .map_err(|e| js_error(format!("selected_backends: names: {e}")))?;
    let chosen: Vec<&String> = names.iter().filter(|n| config.selects_backend(n)).collect();
    Ok(to_json(&chosen))
}

/// A result document of any version the page reads (a file the user loads), converted to the
/// current layout with every summary computed, as JSON; rejects what is not a document.
#[wasm_bindgen]
pub fn load_document(text: String) -> Result<String, JsValue> {
    let doc = Document::from_json(&text).map_err(|e| js_error(e.to_string()))?;
    doc.to_json().map_err(|e| js_error(e.to_string()))
}

// ------------------------------------------------------------------------------------------
// Environment
// ------------------------------------------------------------------------------------------

async fn page_environment(commit: Option<String>) -> bench_results::Environment {
    let mut env = bench_sql::browser::environment(commit).await;
    env.page_version = Some(env!("CARGO_PKG_VERSION").to_owned());
    env
}

/// The environment as the worker sees it, as JSON (`bench_results::Environment`); `commit`
/// is recorded as given.
#[wasm_bindgen]
pub async fn environment(commit: Option<String>) -> String {
    to_json(&page_environment(commit).await)
}

// ------------------------------------------------------------------------------------------
// run
// ------------------------------------------------------------------------------------------

/// Whether a unit runs in passes within a round (several progress events of one run, of
/// which the result keeps the fastest): the batch, and the fs suite's lifecycle.
fn in_passes(suite: &str, case: &str) -> bool {
    suite == "batch" || (suite == "fs" && case == "lifecycle")
}

/// Sends progress events to the page.
struct Reporter {
    callback: Function,
    started_ms: f64,
    steps: Steps,
    /// Measured times so far per (suite, backend, case), for `so_far`, with their run: the
    /// batch and the fs lifecycle keep one time per run, the fastest of its passes (what the
    /// result keeps).
    seen: HashMap<(String, String, String), Vec<(u32, f64)>>,
}

impl Reporter {
    fn emit(
        &mut self,
        suite: &str,
        backend: &str,
        case: &str,
        run: u32,
        warmup: bool,
        ms: Option<f64>,
    ) {
        // `Some(NaN)`: the unit ended in a failure (finished, no time).
        let ended = ms.is_some();
        let ms = ms.filter(|m| m.is_finite());
        let so_far = match ms {
            Some(m) if !warmup => {
                let v = self
                    .seen
                    .entry((suite.to_owned(), backend.to_owned(), case.to_owned()))
                    .or_default();
                match v.last_mut() {
                    Some((r, fastest)) if in_passes(suite, case) && *r == run => {
                        *fastest = fastest.min(m);
                    }
                    _ => v.push((run, m)),
                }
                Stat::of(&v.iter().map(|&(_, m)| m).collect::<Vec<_>>())
            }
            _ => None,
        };
        let event = ProgressEvent {
            suite: suite.to_owned(),
            backend: backend.to_owned(),
            case: case.to_owned(),
            run,
            warmup,
            status: if ended { "end" } else { "start" }.to_owned(),
            ms,
            so_far,
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
const PART_HANDOFF: usize = 3;
const PART_SCALE: usize = 4;

/// Runs the suites `config_json` ([`Request`]) selects and resolves to the result document
/// (`bench_results::Document`, summarized) as JSON. `on_progress` gets a `ProgressEvent` as a
/// JSON string before and after each unit of work. `peers` is the module `./peers/index.js`
/// (or `undefined`): its backends join the SQL rounds. Rejects only if the request is invalid;
/// a failing backend or suite is recorded in `verifications.failures` and the rest still runs.
#[wasm_bindgen]
pub async fn run(
    config_json: String,
    on_progress: Function,
    peers: JsValue,
) -> Result<String, JsValue> {
    let started_ms = js_sys::Date::now();
    let generated_at: String = js_sys::Date::new_0().to_iso_string().into();
    let config = Request::from_json(&config_json)
        .and_then(|r| r.resolve())
        .map_err(js_error)?;
    let module = PeerModule::new(peers);

    let run_sql = config.runs_suite(Suite::Sql) || config.runs_suite(Suite::Batch);
    let (metas, peer_error) = if run_sql {
        sql_metas(module.as_deref()).await
    } else {
        (Vec::new(), None)
    };
    let sql_metas: Vec<BackendMeta> = metas
        .into_iter()
        .filter(|m| config.selects_backend(&m.name))
        .collect();
    let fs_names: Vec<String> = fs_backends()
        .into_iter()
        .map(|b| b.name)
        .filter(|n| config.selects_backend(n))
        .collect();
    let run_fs = config.runs_suite(Suite::Fs);
    let run_raw = config.runs_suite(Suite::Raw);
    let run_handoff = config.runs_suite(Suite::Handoff);
    let run_scale = config.runs_suite(Suite::Scale);
    let scale_names: Vec<String> = scale_selection(&config, SCALE_OPFS_DIR)
        .iter()
        .map(|b| b.name())
        .collect();
    let rounds = config.runs + config.warmup;
    let fs_rounds = config.fs_rounds() + config.warmup;
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let estimate_fs = |on: bool, units: u32| {
        if on {
            units.saturating_mul(fs_rounds)
        } else {
            0
        }
    };
    let workloads =
        u32::from(config.runs_suite(Suite::Sql)) + u32::from(config.runs_suite(Suite::Batch));
    // Ours run in every round, the peers (every other name) in `peer_rounds` of them.
    let ours: Vec<String> = our_sql_metas().into_iter().map(|m| m.name).collect();
    let runnable = |peers: bool| {
        let n = sql_metas
            .iter()
            .filter(|m| m.skipped.is_none() && ours.contains(&m.name) != peers)
            .count();
        count(n)
    };
    let peer_rounds = config.peer_rounds() + config.warmup;
    let sql_units = if run_sql {
        runnable(false)
            .saturating_mul(rounds)
            .saturating_add(runnable(true).saturating_mul(peer_rounds))
            .saturating_mul(workloads)
    } else {
        0
    };
    let reporter = RefCell::new(Reporter {
        callback: on_progress,
        started_ms,
        steps: Steps::new(&[
            sql_units,
            estimate_fs(run_fs, count(fs_names.len())),
            estimate_fs(run_raw, bench_fs::raw::workload_count(&raw_config(&config))),
            // Three parts per round: two workloads and the floor.
            estimate_fs(run_handoff, 3),
            // One turn per backend and round (`scale_rounds` measured, at most one warm-up).
            if run_scale {
                count(scale_names.len())
                    .saturating_mul(config.scale_rounds() + scale_warmup(&config))
            } else {
                0
            },
        ]),
        seen: HashMap::new(),
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
        doc.notes.push(
            "No warm-up round: the first round includes compilation and cache warm-up.".into(),
        );
    }
    if let Some(e) = peer_error {
        doc.verifications.fail("sql", None, format!("peers: {e}"));
    }

    if run_sql {
        if sql_metas.is_empty() {
            doc.notes
                .push("SQL: no backend matches the backend filter; skipped.".into());
        } else {
            run_sql_rounds(&config, &sql_metas, module.clone(), &reporter, &mut doc).await;
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
    if run_handoff {
        run_handoff_suite(&config, module.as_ref(), &reporter, &mut doc).await;
        reporter.borrow_mut().steps.finish(PART_HANDOFF);
    }
    if run_scale {
        if scale_names.is_empty() {
            doc.notes.push(format!(
                "Scale and space: none of our backends it runs ({}) matches the backend filter; skipped.",
                SCALE_OURS.join(", ")
            ));
        } else {
            run_scale_suite(&config, &reporter, &mut doc).await;
        }
        reporter.borrow_mut().steps.finish(PART_SCALE);
    }
    if doc.sql.is_none()
        && doc.fs.is_none()
        && doc.raw.is_none()
        && doc.handoff.is_none()
        && doc.scale.is_none()
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
    // Every summary, once, here: medians, paired ratios with intervals, goals, floors.
    doc.summarize(&Bootstrap::default());
    doc.duration_ms = js_sys::Date::now() - started_ms;
    doc.to_json().map_err(|e| js_error(e.to_string()))
}

/// Records what the SQL rounds verified and what failed or was skipped.
fn record_sql(sql: &SqlSection, config: &RunConfig, doc: &mut Document) {
    let label = match (
        config.runs_suite(Suite::Sql),
        config.runs_suite(Suite::Batch),
    ) {
        (true, true) => "sql+batch",
        (true, false) => "sql",
        _ => "batch",
    };
    let rows = sql.suite.batch_rows;
    for b in &sql.backends {
        let name = &b.meta.name;
        if let Some(reason) = &b.meta.skipped {
            doc.notes.push(format!("SQL: {name} skipped: {reason}"));
            continue;
        }
        let n = b.runs.len() + b.warmup_runs.len();
        if let Some(e) = &b.error {
            doc.verifications.fail(label, Some(name), e.clone());
            if n > 0 {
                doc.notes.push(format!(
                    "SQL: {name} failed after {n} round(s); those rounds are kept, the other backends ran on."
                ));
            }
            continue;
        }
        let verified = if b.meta.persistent {
            format!("after reopen, the dropped tables were absent and integrity_check ok (suite), all {rows} rows present (batch)")
        } else {
            "not persistent: no reopen to verify".to_owned()
        };
        doc.verifications
            .pass(format!("{label}: {name}: {n} rounds completed; {verified}"));
    }
}

/// The SQL rounds: our backends and the peers in `metas`, every round in a shuffled order.
async fn run_sql_rounds(
    config: &RunConfig,
    metas: &[BackendMeta],
    module: Option<Rc<PeerModule>>,
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
    let (suite, batch) = bench_sql::workloads(config.seed, config.sql_scale);
    let info = bench_sql::runner::suite_info(&suite, &batch);

    // Leftovers of an interrupted run (a closed tab mid-run) would only take space.
    if let Err(e) = remove_root(SQL_OPFS_ROOT).await {
        doc.verifications
            .fail("sql", None, format!("removing old OPFS data: {e}"));
        return;
    }
    let root = format!("{SQL_OPFS_ROOT}/run-{}", random_tag());
    let mut ours: Vec<Option<BrowserBackend>> = BrowserBackend::all(&root)
        .into_iter()
        .map(|mut b| {
            b.time_calls(config.call_timing);
            Some(b)
        })
        .collect();
    let inputs = match &module {
        Some(_) if metas.iter().any(|m| !ours_has(&ours, &m.name)) => {
            match PeerInputs::new(&suite, &batch) {
                Ok(i) => Some(Rc::new(i)),
                Err(e) => {
                    doc.verifications.fail(
                        "sql",
                        None,
                        format!("peers: building their inputs: {e}"),
                    );
                    None
                }
            }
        }
        _ => None,
    };
    let mut contestants: Vec<WebContestant> = Vec::new();
    for m in metas {
        if let Some(slot) = ours
            .iter_mut()
            .find(|b| b.as_ref().is_some_and(|b| b.name() == m.name))
        {
            if let Some(b) = slot.take() {
                contestants.push(WebContestant::Ours(Ours(b)));
            }
            continue;
        }
        let (Some(module), Some(inputs)) = (&module, &inputs) else {
            continue;
        };
        contestants.push(WebContestant::Peer(Peer {
            meta: m.clone(),
            module: module.clone(),
            inputs: inputs.clone(),
            info: info.clone(),
        }));
    }

    let plan = Plan {
        runs: config.runs,
        warmup: config.warmup,
        peer_runs: config.peer_runs,
        order_seed: config
            .order_seed
            .unwrap_or(bench_results::stats::ORDER_SEED),
        suite: config.runs_suite(Suite::Sql),
        batch: config.runs_suite(Suite::Batch),
        batch_repeats: config.batch_runs_per_round(),
        data_dir: Some(format!("opfs:{SQL_OPFS_ROOT}")),
        // The summary's bootstrap (`doc.summarize` below): the stop and the published
        // intervals are the same computation.
        precision: config
            .target_half_width
            .map(|half_width| bench_sql::runner::Precision {
                half_width,
                min_runs: crate::config::PRECISION_MIN_RUNS,
                every: crate::config::PRECISION_EVERY,
                bootstrap: Bootstrap::default(),
            }),
    };
    let mut on_progress = |p: &bench_sql::runner::Progress| {
        let mut r = reporter.borrow_mut();
        r.steps.report(PART_SQL, p.done, p.total);
        let (suite, case) = match p.workload {
            Workload::Suite => ("sql", suite_label.as_str()),
            Workload::Batch => ("batch", batch_label.as_str()),
        };
        let ms = match &p.outcome {
            None => None,
            Some(Ok(ms)) => Some(*ms),
            // A failure ends the unit: reported as finished without a time.
            Some(Err(_)) => Some(f64::NAN),
        };
        r.emit(suite, &p.backend, case, p.run, p.warmup, ms);
    };
    let sql = run_rounds(&mut contestants, &plan, &suite, &batch, &mut on_progress).await;
    let peers = contestants.iter().filter(|c| c.capped()).count();
    drop(contestants);
    if let (Some(k), true) = (config.peer_runs, peers > 0) {
        let warmup = if config.warmup > 0 {
            "the warm-up and "
        } else {
            ""
        };
        doc.notes.push(format!(
            "SQL: the {peers} JavaScript peer(s) ran in {warmup}the first {k} of the {} measured rounds (peer_runs); their ratios pair with their references in those rounds only, so their intervals are wider than ours.",
            config.runs
        ));
    }
    // Every backend's cleanup removed its own directory; this removes the run's and the root.
    if let Err(e) = remove_opfs_dir(&root).await {
        doc.notes
            .push(format!("SQL: removing {root} after the run failed: {e}"));
    }
    let _ = remove_root(SQL_OPFS_ROOT).await;
    record_sql(&sql, config, doc);
    doc.sql = Some(sql);
}

fn ours_has(ours: &[Option<BrowserBackend>], name: &str) -> bool {
    ours.iter().flatten().any(|b| b.name() == name)
}

fn fs_config(config: &RunConfig) -> bench_fs::Config {
    bench_fs::Config {
        runs: config.fs_rounds(),
        warmup: config.warmup,
        lifecycle: None,
        raw: None,
        dir: FS_OPFS_DIR.to_owned(),
        order_seed: config
            .order_seed
            .unwrap_or(bench_results::stats::ORDER_SEED),
    }
}

/// bench-fs' lifecycle over `names`, in rounds; a failing backend is recorded and the others
/// run on.
async fn run_fs_suite(
    config: &RunConfig,
    names: Vec<String>,
    reporter: &RefCell<Reporter>,
    doc: &mut Document,
) {
    let mut fs_config = fs_config(config);
    fs_config.lifecycle = Some(lifecycle_config(config, names.clone()));
    reporter
        .borrow_mut()
        .emit("fs", &names[0], "lifecycle", 1, config.warmup > 0, None);
    let mut on_progress = |p: bench_fs::Progress| {
        let mut r = reporter.borrow_mut();
        r.steps.report(PART_FS, p.done, p.total);
        r.emit("fs", &p.item, "lifecycle", p.run, p.warmup, Some(p.ms));
    };
    match bench_fs::browser::run_browser(&fs_config, &mut on_progress).await {
        Ok(result) => {
            if let Some(l) = &result.lifecycle {
                let survivors = l.files - l.files / 2;
                for b in &l.backends {
                    let n = b.runs.len() + b.warmup_runs.len();
                    match &b.error {
                        Some(e) => doc.verifications.fail("fs", Some(&b.name), e.clone()),
                        None => doc.verifications.pass(format!(
                            "fs: {}: {n} rounds; every byte read back, and after reopen exactly the {survivors} survivors listed and read back",
                            b.name
                        )),
                    }
                }
            }
            doc.fs = result.lifecycle;
        }
        Err(e) => doc.verifications.fail("fs", None, e.to_string()),
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
    reporter.borrow_mut().emit(
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
                doc.raw = Some(raw);
            }
            None => doc
                .verifications
                .fail("raw", None, "bench-fs returned no raw result"),
        },
        Err(e) => doc.verifications.fail("raw", None, e.to_string()),
    }
}

/// A JavaScript peer of the hand-off suite (`runPeerHandoff` of `./peers/index.js`).
struct HandoffJsPeer {
    meta: bench_results::handoff::PeerHandoff,
    module: Rc<PeerModule>,
}

impl bench_sql::handoff::HandoffPeer for HandoffJsPeer {
    fn meta(&self) -> bench_results::handoff::PeerHandoff {
        self.meta.clone()
    }

    async fn run(
        &mut self,
        round: u32,
        workloads: &[String],
        handoffs: u32,
    ) -> Result<Vec<bench_results::handoff::HandoffRun>, String> {
        let options = PeerHandoffOptions {
            backend: self.meta.name.clone(),
            round,
            handoffs,
            workloads: workloads.to_vec(),
        };
        let v = self
            .module
            .call("runPeerHandoff", &[to_js(&options)?])
            .await?;
        let out: PeerHandoffOut = from_js(&v).map_err(|e| format!("runPeerHandoff: {e}"))?;
        check_handoff_out(out, &options)
    }
}

/// The hand-off suite's peers: every one `peerHandoffBackends()` lists that the backend filter
/// selects, loaded once (`loadPeerHandoff`); an unavailable one, or one that fails to load, is
/// listed as skipped with the reason. None without the module or that export (the exports are
/// optional); `Err`: the module's list could not be read.
async fn handoff_peers(
    config: &RunConfig,
    module: Option<&Rc<PeerModule>>,
) -> Result<Vec<HandoffJsPeer>, String> {
    let Some(module) = module.filter(|m| m.has("peerHandoffBackends")) else {
        return Ok(Vec::new());
    };
    let v = module.call("peerHandoffBackends", &[]).await?;
    let list: Vec<PeerHandoffInfo> =
        from_js(&v).map_err(|e| format!("peerHandoffBackends(): {e}"))?;
    let mut peers = Vec::new();
    for info in list.iter().filter(|i| config.selects_backend(&i.name)) {
        let mut meta = info.meta();
        if meta.skipped.is_none() {
            if let Err(e) = module
                .call("loadPeerHandoff", &[JsValue::from_str(&info.name)])
                .await
            {
                meta.skipped = Some(format!("failed to load: {e}"));
            }
        }
        peers.push(HandoffJsPeer {
            meta,
            module: Rc::clone(module),
        });
    }
    Ok(peers)
}

/// bench-sql's hand-off suite: two installs of one shared volume taking turns in this worker,
/// and the floor of closing and reopening two access handles, in the lifecycle's rounds; the
/// JavaScript peers of `./peers/index.js` (`peerHandoffBackends`) as one more part of each.
async fn run_handoff_suite(
    config: &RunConfig,
    module: Option<&Rc<PeerModule>>,
    reporter: &RefCell<Reporter>,
    doc: &mut Document,
) {
    let handoffs = config.handoffs.unwrap_or(crate::config::FULL_HANDOFFS);
    let plan = bench_sql::handoff::HandoffPlan {
        handoffs,
        floor_cycles: handoffs,
        runs: config.fs_rounds(),
        warmup: config.warmup,
        order_seed: config
            .order_seed
            .unwrap_or(bench_results::stats::ORDER_SEED),
        root: format!("{HANDOFF_OPFS_DIR}/run-{}", random_tag()),
    };
    let mut peers = match handoff_peers(config, module).await {
        Ok(p) => p,
        Err(e) => {
            doc.verifications
                .fail(bench_results::handoff::SUITE, None, format!("peers: {e}"));
            Vec::new()
        }
    };
    let mut on_progress = |p: &bench_sql::handoff::HandoffProgress<'_>| {
        let mut r = reporter.borrow_mut();
        r.steps.report(PART_HANDOFF, p.done, p.total);
        r.emit(
            bench_results::handoff::SUITE,
            p.part,
            "hand-offs",
            p.run,
            p.warmup,
            p.ms,
        );
    };
    let section = bench_sql::handoff::run_handoff_with(&plan, &mut peers, &mut on_progress).await;
    let _ = remove_opfs_dir(HANDOFF_OPFS_DIR).await;
    for p in &section.peers {
        if let Some(why) = &p.skipped {
            doc.notes
                .push(format!("Hand-off: peer {} skipped: {why}", p.name));
        }
    }
    section.verify(&mut doc.verifications);
    doc.handoff = Some(section);
}

/// Every backend the scale suite can run, in listing order: the baseline (`sahpool`, one OPFS
/// file per database), then ours ([`SCALE_OURS`]). OPFS directories go under `root`.
fn scale_backends(root: &str) -> Vec<BrowserBackend> {
    let ours = OursOpfsBackend::all(root)
        .into_iter()
        .filter(|b| SCALE_OURS.contains(&b.name().as_str()))
        .map(BrowserBackend::Ours);
    std::iter::once(BrowserBackend::Sahpool(SahpoolBackend::new(root)))
        .chain(ours)
        .collect()
}

/// The scale suite's backends for `config`: ours that the backend filter selects, with the
/// baseline whenever one of ours runs (every ratio and two goals are taken to it, so it runs
/// even if the filter leaves it out); empty if none of ours is selected.
fn scale_selection(config: &RunConfig, root: &str) -> Vec<BrowserBackend> {
    let all = scale_backends(root);
    let ours_selected = all
        .iter()
        .any(|b| matches!(b, BrowserBackend::Ours(_)) && config.selects_backend(&b.name()));
    if !ours_selected {
        return Vec::new();
    }
    all.into_iter()
        .filter(|b| matches!(b, BrowserBackend::Sahpool(_)) || config.selects_backend(&b.name()))
        .collect()
}

/// Warm-up rounds of the scale suite: at most one (a turn builds a whole database; one turn
/// compiles and warms what the measured ones use).
fn scale_warmup(config: &RunConfig) -> u32 {
    config.warmup.min(1)
}

/// bench-sql's scale suite ([`bench_sql::scale::run_scale`]) on [`scale_selection`], in a
/// fresh OPFS directory under [`SCALE_OPFS_DIR`]; a backend that fails is recorded in the
/// verifications, keeps its earlier rounds, and the others run on. Summarized with the rest of
/// the document.
async fn run_scale_suite(config: &RunConfig, reporter: &RefCell<Reporter>, doc: &mut Document) {
    use bench_results::scale::SUITE;
    // Leftovers of an interrupted run would only take space (and count in no one's bytes: every
    // backend measures its own directory).
    if let Err(e) = remove_root(SCALE_OPFS_DIR).await {
        doc.verifications
            .fail(SUITE, None, format!("removing old OPFS data: {e}"));
        return;
    }
    let root = format!("{SCALE_OPFS_DIR}/run-{}", random_tag());
    let mut backends = scale_selection(config, &root);
    let baseline = backends
        .iter()
        .find(|b| matches!(b, BrowserBackend::Sahpool(_)))
        .map(|b| b.name())
        .unwrap_or_default();
    let plan = bench_sql::scale::ScalePlan {
        rows: config.scale_rows.unwrap_or(crate::config::FULL_SCALE_ROWS),
        runs: config.scale_rounds(),
        warmup: scale_warmup(config),
        order_seed: config
            .order_seed
            .unwrap_or(bench_results::stats::ORDER_SEED),
        baseline,
    };
    let case = format!("{} rows", bench_results::thousands(plan.rows));
    let mut on_progress = |p: &bench_sql::scale::ScaleProgress| {
        let mut r = reporter.borrow_mut();
        r.steps.report(PART_SCALE, p.done, p.total);
        // 1-based among the warm-up rounds, then among the measured ones.
        let run = if p.warmup {
            p.round + 1
        } else {
            p.round - plan.warmup + 1
        };
        let ms = match &p.outcome {
            None => None,
            Some(Ok(ms)) => Some(*ms),
            // A failure ends the unit: reported as finished without a time.
            Some(Err(_)) => Some(f64::NAN),
        };
        r.emit(SUITE, &p.backend, &case, run, p.warmup, ms);
    };
    let section = bench_sql::scale::run_scale(&mut backends, &plan, &mut on_progress).await;
    drop(backends);
    // Every backend's cleanup removed its own directory; this removes the run's and the root.
    if let Err(e) = remove_opfs_dir(&root).await {
        doc.notes
            .push(format!("Scale: removing {root} after the run failed: {e}"));
    }
    let _ = remove_root(SCALE_OPFS_DIR).await;
    for b in &section.backends {
        let name = &b.meta.name;
        let n = b.runs.len() + b.warmup_runs.len();
        match &b.error {
            Some(e) => {
                doc.verifications.fail(SUITE, Some(name), e.clone());
                if n > 0 {
                    doc.notes.push(format!(
                        "Scale: {name} failed after {n} round(s); those rounds are kept, the other backends ran on."
                    ));
                }
            }
            None => doc.verifications.pass(format!(
                "scale: {name}: {n} rounds; after each reopen the row read by key and both full scans saw all {} rows of {} bytes",
                bench_results::thousands(section.config.rows),
                section.config.row_bytes
            )),
        }
    }
    doc.scale = Some(section);
}
