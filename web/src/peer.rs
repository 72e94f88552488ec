//! The contract with backends implemented in JavaScript ("peers"), platform-independent so
//! that it is tested natively; the wasm glue that calls the module is in `worker`.
//!
//! `worker.js` imports `./peers/index.js` if the page has one and hands the module to the
//! wasm exports. The module exports (see `web/README.md`, "Peers"):
//!
//! - `peerBackends()` → `[PeerInfo]` ([`PeerInfo`]);
//! - `runPeerSuite(name, cases, options)` → a [`SuiteRun`]-shaped object, where `cases` is
//!   [`PeerCase`]s (the exact SQL of our 16 cases) and `options` is [`PeerOptions`];
//! - `runPeerBatch(name, batch, options)` → a [`BatchRun`]-shaped object, where `batch` is a
//!   [`PeerBatch`].
//!
//! For the hand-off suite (`bench_results::handoff`, optional exports):
//!
//! - `peerHandoffBackends()` → `[PeerHandoffInfo]` ([`PeerHandoffInfo`]);
//! - `loadPeerHandoff(name)`: loads the engine (a failure: the peer is skipped, with the reason);
//! - `runPeerHandoff(options)` ([`PeerHandoffOptions`]) → [`PeerHandoffOut`], checked by
//!   [`check_handoff_out`].
//!
//! Results are checked here ([`check_suite_run`], [`check_batch_run`]) before they join a
//! document: a peer that returns the wrong number of cases, a negative time or an inconsistent
//! total is recorded as failed, like a peer that throws.

use bench_results::handoff::{HandoffRun, PeerHandoff};
use bench_results::sql::{BackendMeta, BatchRun, Engine, SuiteInfo, SuiteRun};
use serde::{Deserialize, Serialize};

/// One entry of `peerBackends()`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerInfo {
    /// Unique backend name (must not collide with ours).
    pub name: String,
    /// `sqlite` or `pglite`.
    pub engine: Engine,
    /// Name of this engine's memory reference (`sqlite-memvfs`, `pglite-memory`); `null` (or
    /// its own name) for a reference itself, which `meta` records as naming itself.
    #[serde(default)]
    pub reference: Option<String>,
    /// npm package (`@journeyapps/wa-sqlite`).
    pub package: String,
    /// Its version (`2.0.6`).
    pub version: String,
    /// What a returned `COMMIT` guarantees, as a label.
    pub durability: String,
    /// The settings behind it, free text (`journal_mode=delete, synchronous=full`).
    pub durability_settings: String,
    /// Whether the database outlives its connection.
    pub persistent: bool,
    /// Whether it can run in this browser.
    pub available: bool,
    /// Why not, when `available` is false.
    #[serde(default)]
    pub skip_reason: Option<String>,
}

impl PeerInfo {
    /// The metadata a result records (`skipped` when not available).
    pub fn meta(&self) -> BackendMeta {
        BackendMeta {
            name: self.name.clone(),
            engine: self.engine,
            reference: Some(self.reference.clone().unwrap_or_else(|| self.name.clone())),
            package: Some(self.package.clone()),
            version: Some(self.version.clone()),
            durability: self.durability.clone(),
            durability_settings: Some(self.durability_settings.clone()),
            persistent: self.persistent,
            skipped: (!self.available).then(|| {
                self.skip_reason
                    .clone()
                    .unwrap_or_else(|| "not available in this browser".to_owned())
            }),
        }
    }
}

/// Checks `peerBackends()`'s list: non-empty unique names that do not collide with `taken`
/// (our backends' names). Returns the metadata, in order.
pub fn peer_metas(list: &[PeerInfo], taken: &[String]) -> Result<Vec<BackendMeta>, String> {
    let mut seen: Vec<&str> = Vec::new();
    for p in list {
        if p.name.trim().is_empty() {
            return Err("peerBackends(): a peer has an empty name".to_owned());
        }
        if taken.contains(&p.name) || seen.contains(&p.name.as_str()) {
            return Err(format!("peerBackends(): name {:?} is used twice", p.name));
        }
        seen.push(&p.name);
    }
    Ok(list.iter().map(PeerInfo::meta).collect())
}

/// One case as a peer gets it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerCase {
    /// 1 to 16.
    pub number: u32,
    /// As in reports.
    pub title: String,
    /// The exact generated SQL of the case (the peer module may adapt it for its engine).
    pub sql: String,
}

/// The batch as a peer gets it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerBatch {
    /// `CREATE TABLE batch(a INTEGER, b INTEGER, c VARCHAR(100))`, run before the timing.
    pub create_sql: String,
    /// `INSERT INTO batch VALUES(?1, ?2, ?3)`, prepared once, run for every row in one
    /// transaction.
    pub insert_sql: String,
    /// `[a, b, c]` per row.
    pub rows: Vec<(u32, u32, String)>,
    /// What a verification after reopen must find.
    pub expected: PeerBatchExpected,
}

/// Totals of the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerBatchExpected {
    /// Rows.
    pub count: u64,
    /// `sum(a)`.
    pub sum_a: u64,
    /// `sum(b)`.
    pub sum_b: u64,
}

/// `options` of both calls.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerOptions {
    /// 0-based round (warm-up first).
    pub round: u32,
    /// A warm-up round.
    pub warmup: bool,
    /// Seed the workloads were generated from.
    pub seed: u64,
    /// Every count divided by this (1: full size).
    pub scale_divisor: u32,
    /// SHA-256 of the cases' SQL as generated (before any adaptation by the peer).
    pub sha256: String,
}

/// Whether two float sums agree: within 1 µs plus a relative millionth.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 + 1e-6 * a.abs().max(b.abs())
}

fn finite_nonneg(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("{what} is {v}, not a finite non-negative time"))
    }
}

/// Checks a peer's suite result against the suite it was given: every case once, in order,
/// finite non-negative times, `total_ms` and `test1_ms` consistent with the cases, sync,
/// reopen and verification present exactly when the peer is persistent. Counters, which only
/// our storage has, are dropped.
pub fn check_suite_run(
    mut run: SuiteRun,
    info: &SuiteInfo,
    persistent: bool,
) -> Result<SuiteRun, String> {
    let want: Vec<u32> = info.cases.iter().map(|c| c.number).collect();
    let got: Vec<u32> = run.cases.iter().map(|c| c.number).collect();
    if want != got {
        return Err(format!("runPeerSuite: cases {got:?}, expected {want:?}"));
    }
    for c in &mut run.cases {
        finite_nonneg(&format!("case {} ms", c.number), c.ms)?;
        c.counters = None;
    }
    let p = &run.phases;
    for (what, v) in [
        ("prepare_ms", p.prepare_ms),
        ("init_ms", p.init_ms),
        ("close_ms", p.close_ms),
    ] {
        finite_nonneg(what, v)?;
    }
    for (what, v) in [
        ("sync_ms", p.sync_ms),
        ("reopen_ms", p.reopen_ms),
        ("verify_ms", p.verify_ms),
    ] {
        if let Some(v) = v {
            finite_nonneg(what, v)?;
        }
    }
    if persistent && (p.reopen_ms.is_none() || p.verify_ms.is_none()) {
        return Err("runPeerSuite: a persistent peer must reopen and verify".to_owned());
    }
    let sum: f64 = run.cases.iter().map(|c| c.ms).sum();
    let test1 = run.case_ms(1).unwrap_or(0.0);
    if !close(run.total_ms, sum) || !close(run.test1_ms, test1) {
        return Err(format!(
            "runPeerSuite: total_ms {} / test1_ms {} do not match the cases ({sum} / {test1})",
            run.total_ms, run.test1_ms
        ));
    }
    Ok(run)
}

/// Checks a peer's batch result: every row inserted, finite non-negative times.
pub fn check_batch_run(mut run: BatchRun, rows: u32, persistent: bool) -> Result<BatchRun, String> {
    if run.rows != rows {
        return Err(format!("runPeerBatch: {} rows, expected {rows}", run.rows));
    }
    finite_nonneg("ms", run.ms)?;
    let p = &run.phases;
    for (what, v) in [
        ("prepare_ms", p.prepare_ms),
        ("init_ms", p.init_ms),
        ("close_ms", p.close_ms),
    ] {
        finite_nonneg(what, v)?;
    }
    if persistent && (p.reopen_ms.is_none() || p.verify_ms.is_none()) {
        return Err("runPeerBatch: a persistent peer must reopen and verify".to_owned());
    }
    run.counters = None;
    Ok(run)
}

/// One entry of `peerHandoffBackends()`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerHandoffInfo {
    /// Its name (also its part name in the rounds' orders).
    pub name: String,
    /// npm package and version.
    pub package: String,
    pub version: String,
    /// Its durability (its `synchronous` setting and what `xSync` does).
    pub durability: String,
    /// How its two connections are made and hand over.
    pub connections: String,
    /// Whether it can run in this browser.
    pub available: bool,
    /// Why not.
    #[serde(default)]
    pub skip_reason: Option<String>,
}

impl PeerHandoffInfo {
    /// The section's entry; `skipped` if unavailable.
    pub fn meta(&self) -> PeerHandoff {
        PeerHandoff {
            name: self.name.clone(),
            package: self.package.clone(),
            version: self.version.clone(),
            durability: self.durability.clone(),
            connections: self.connections.clone(),
            skipped: (!self.available).then(|| {
                self.skip_reason
                    .clone()
                    .unwrap_or_else(|| "not available here".to_owned())
            }),
            error: None,
        }
    }
}

/// `runPeerHandoff`'s argument.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerHandoffOptions {
    /// [`PeerHandoffInfo::name`].
    pub backend: String,
    /// 0-based round over all rounds (its directory).
    pub round: u32,
    /// Hand-offs per workload.
    pub handoffs: u32,
    /// The workloads, in the order to run them.
    pub workloads: Vec<String>,
}

/// What `runPeerHandoff` resolves to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerHandoffOut {
    /// Its name, as asked.
    pub backend: String,
    /// One per workload asked for, in that order.
    pub workloads: Vec<HandoffRun>,
}

/// Checks a peer's part against what was asked: the workloads in order, each with exactly
/// `options.handoffs` hand-offs and finite non-negative loop times.
pub fn check_handoff_out(
    out: PeerHandoffOut,
    options: &PeerHandoffOptions,
) -> Result<Vec<HandoffRun>, String> {
    if out.backend != options.backend {
        return Err(format!(
            "runPeerHandoff: asked for {}, got {}",
            options.backend, out.backend
        ));
    }
    let names: Vec<&str> = out.workloads.iter().map(|w| w.workload.as_str()).collect();
    if names != options.workloads {
        return Err(format!(
            "runPeerHandoff: asked for the workloads {:?}, got {names:?}",
            options.workloads
        ));
    }
    for w in &out.workloads {
        if w.handoffs != options.handoffs {
            return Err(format!(
                "runPeerHandoff: {}: {} hand-offs, {} asked for",
                w.workload, w.handoffs, options.handoffs
            ));
        }
        finite_nonneg(&format!("{} alternating_ms", w.workload), w.alternating_ms)?;
        finite_nonneg(&format!("{} solo_ms", w.workload), w.solo_ms)?;
    }
    Ok(out.workloads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_results::sql::{CaseInfo, CaseSample, Phases};

    fn info() -> SuiteInfo {
        SuiteInfo {
            cases: (1..=3)
                .map(|n| CaseInfo {
                    number: n,
                    title: format!("c{n}"),
                })
                .collect(),
            ..SuiteInfo::default()
        }
    }

    fn run(times: &[f64], persistent: bool) -> SuiteRun {
        let phases = Phases {
            prepare_ms: 1.0,
            init_ms: 1.0,
            close_ms: 1.0,
            sync_ms: persistent.then_some(0.5),
            reopen_ms: persistent.then_some(2.0),
            verify_ms: persistent.then_some(3.0),
        };
        SuiteRun::from_cases(
            phases,
            times
                .iter()
                .enumerate()
                .map(|(i, &ms)| CaseSample {
                    number: u32::try_from(i).unwrap() + 1,
                    ms,
                    counters: None,
                })
                .collect(),
        )
    }

    #[test]
    fn suite_runs_are_checked() {
        let ok = run(&[1.0, 2.0, 3.0], true);
        assert_eq!(check_suite_run(ok.clone(), &info(), true).unwrap(), ok);
        assert!(check_suite_run(run(&[1.0, 2.0], true), &info(), true).is_err());
        assert!(check_suite_run(run(&[1.0, -2.0, 3.0], true), &info(), true).is_err());
        assert!(check_suite_run(run(&[1.0, f64::NAN, 3.0], true), &info(), true).is_err());
        let mut wrong_total = ok.clone();
        wrong_total.total_ms += 1.0;
        let e = check_suite_run(wrong_total, &info(), true).unwrap_err();
        assert!(e.contains("do not match"), "{e}");
        let e = check_suite_run(run(&[1.0, 2.0, 3.0], false), &info(), true).unwrap_err();
        assert!(e.contains("reopen"), "{e}");
        assert!(check_suite_run(run(&[1.0, 2.0, 3.0], false), &info(), false).is_ok());
        // The shape a JavaScript peer returns, counters absent and sync absent.
        let js: SuiteRun = serde_json::from_str(
            r#"{"phases":{"prepare_ms":1,"init_ms":2,"close_ms":0.5,"reopen_ms":1,"verify_ms":1},
                "cases":[{"number":1,"ms":1.5},{"number":2,"ms":2},{"number":3,"ms":0}],
                "total_ms":3.5,"test1_ms":1.5}"#,
        )
        .unwrap();
        assert_eq!(check_suite_run(js, &info(), true).unwrap().total_ms, 3.5);
    }

    #[test]
    fn batch_runs_are_checked() {
        let b: BatchRun = serde_json::from_str(
            r#"{"phases":{"prepare_ms":1,"init_ms":2,"close_ms":0.5,"reopen_ms":1,"verify_ms":1},
                "rows":100,"ms":12.5,"counters":{"flushes":1,"writes":1,"bytes_written":1,"reads":1}}"#,
        )
        .unwrap();
        let checked = check_batch_run(b.clone(), 100, true).unwrap();
        assert_eq!(checked.counters, None, "peers have no counters of ours");
        assert!(check_batch_run(b.clone(), 99, true).is_err());
        let mut slow = b;
        slow.ms = f64::INFINITY;
        assert!(check_batch_run(slow, 100, true).is_err());
    }

    #[test]
    fn peer_list_is_checked() {
        let p: PeerInfo = serde_json::from_str(
            r#"{"name":"wa-sqlite-opfs-coop","engine":"sqlite","reference":"sqlite-memvfs",
                "package":"@journeyapps/wa-sqlite","version":"2.0.6","durability":"flushed",
                "durability_settings":"journal_mode=delete, synchronous=full",
                "persistent":true,"available":false,"skip_reason":"no OPFS"}"#,
        )
        .unwrap();
        let metas = peer_metas(std::slice::from_ref(&p), &["ours-disk-strict".to_owned()]).unwrap();
        assert_eq!(metas[0].skipped.as_deref(), Some("no OPFS"));
        assert_eq!(metas[0].engine, Engine::Sqlite);
        assert!(metas[0].is_peer());
        assert!(
            peer_metas(&[p.clone(), p.clone()], &[]).is_err(),
            "duplicate"
        );
        assert!(
            peer_metas(std::slice::from_ref(&p), std::slice::from_ref(&p.name)).is_err(),
            "collides with ours"
        );
        let pglite: PeerInfo = serde_json::from_str(
            r#"{"name":"pglite-memory","engine":"pglite","reference":"pglite-memory",
                "package":"@electric-sql/pglite","version":"0.5.17","durability":"none",
                "durability_settings":"memory://","persistent":false,"available":true}"#,
        )
        .unwrap();
        let m = pglite.meta();
        assert!(m.is_reference() && m.skipped.is_none());
        // As web/peers/index.js describes a reference: `reference: null` (and
        // `engine_reference`, which the document does not keep).
        let own: PeerInfo = serde_json::from_str(
            r#"{"name":"pglite-memory","engine":"pglite","reference":null,"engine_reference":null,
                "package":"@electric-sql/pglite","version":"0.5.17","durability":"none",
                "durability_settings":"memory://","persistent":false,"available":true,
                "skip_reason":null}"#,
        )
        .unwrap();
        assert_eq!(own.meta(), m, "null reference = names itself");
        assert!(serde_json::from_str::<PeerInfo>(r#"{"name":"x","engine":"duckdb"}"#).is_err());
    }

    #[test]
    fn a_peer_handoff_part_is_checked_against_what_was_asked() {
        let options = PeerHandoffOptions {
            backend: "p".into(),
            round: 0,
            handoffs: 4,
            workloads: vec!["writer-reader".into(), "two-writers".into()],
        };
        let run = |name: &str| HandoffRun {
            workload: name.into(),
            handoffs: 4,
            alternating_ms: 20.0,
            solo_ms: 4.0,
            ..HandoffRun::default()
        };
        let out = PeerHandoffOut {
            backend: "p".into(),
            workloads: vec![run("writer-reader"), run("two-writers")],
        };
        assert_eq!(check_handoff_out(out.clone(), &options).unwrap().len(), 2);
        let mut bad = out.clone();
        bad.workloads.swap(0, 1);
        assert!(check_handoff_out(bad, &options).is_err());
        let mut bad = out.clone();
        bad.workloads[1].handoffs = 3;
        assert!(check_handoff_out(bad, &options)
            .unwrap_err()
            .contains("3 hand-offs"));
        let mut bad = out;
        bad.workloads[0].solo_ms = f64::NAN;
        assert!(check_handoff_out(bad, &options).is_err());
        // The JSON the module returns, calls and bytes as 0.
        let json = r#"{"backend":"p","workloads":[{"workload":"two-writers","handoffs":4,"alternating_ms":9.5,"solo_ms":2,"spans_ms":{"statement":[1,2,3,3.5],"solo-statement":[0.5,0.5,0.5,0.5]},"calls":0,"bytes_read":0,"bytes_written":0,"catch_up_log_bytes":0,"catch_up_commits":0,"reloads":0,"mismatches":0}]}"#;
        let out: PeerHandoffOut = serde_json::from_str(json).unwrap();
        assert_eq!(out.workloads[0].spans_ms["statement"].len(), 4);
        let info: PeerHandoffInfo = serde_json::from_str(r#"{"name":"p","package":"x","version":"1","durability":"d","connections":"c","available":false,"skip_reason":"no OPFS"}"#).unwrap();
        assert_eq!(info.meta().skipped.as_deref(), Some("no OPFS"));
    }
}
