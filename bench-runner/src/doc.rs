//! Validation of the page's result document, read as the one schema
//! ([`bench_results::Document`]; no mirror types here).
//!
//! [`validate`] checks the envelope (version, time, verifications), that every selected suite
//! produced samples for every backend that was not skipped, that the rounds are consistent
//! (every sample belongs to a recorded round whose order names its backend; warm-up rounds
//! first; with `config.peer_runs`, a backend other than ours and their references may have run
//! in the warm-up and exactly the first `peer_runs` measured rounds instead of all), that the summaries the page computed are there (medians, paired ratios, intervals
//! once there are enough rounds, the bootstrap record), and that every goal verdict follows
//! the rule of [`bench_results::goals::verdict`] from its own interval. The scale suite's
//! section must match the run's `scale_rows` and scale rounds, and every backend that did not
//! fail must have run in each of its rounds with finite times and a non-empty database.

use bench_results::goals::{verdict, GoalCheck};
use bench_results::sql::SqlSection;
use bench_results::{Document, Suite, SCHEMA_VERSION};
use serde_json::Value;

/// A scalar JSON value as text (`None` for null, arrays and objects).
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn finite_nonneg(v: f64) -> bool {
    v.is_finite() && v >= 0.0
}

/// What [`validate`] found.
#[derive(Debug, Default)]
pub struct Validation {
    /// The document, if it loaded.
    pub doc: Option<Document>,
    /// What is wrong (empty: valid).
    pub problems: Vec<String>,
    /// Worth saying, not failures.
    pub warnings: Vec<String>,
}

/// Checks a result document (see the module docs). `requested` are the suites asked for;
/// the document's own `config.suites` wins when it has one.
pub fn validate(text: &str, requested: &[Suite]) -> Validation {
    let mut v = Validation::default();
    let doc = match Document::from_json(text) {
        Ok(d) => d,
        Err(e) => {
            v.problems.push(e.to_string());
            return v;
        }
    };
    let p = &mut v.problems;
    if let Some(old) = doc.upgraded_from {
        v.warnings.push(format!(
            "schema_version {old} document, converted to {SCHEMA_VERSION} on load"
        ));
    }
    if doc.generated_at.is_empty() {
        p.push("generated_at missing".into());
    }
    if !doc.verifications.all_passed {
        p.push("verifications.all_passed is false".into());
    }
    for f in &doc.verifications.failures {
        p.push(format!("verification failed: {f}"));
    }
    let suites = if doc.config.suites.is_empty() {
        requested.to_vec()
    } else {
        doc.config.suites.clone()
    };
    let wants = |s| suites.contains(&s);
    if wants(Suite::Sql) || wants(Suite::Batch) {
        match &doc.sql {
            None => p.push("sql missing".into()),
            Some(sql) => {
                // With a precision target the rounds may stop early: the section says how
                // many it took, never more than the configured most.
                let runs = match doc.config.target_half_width {
                    Some(_) => {
                        if sql.config.runs == 0 || sql.config.runs > doc.config.runs {
                            p.push(format!(
                                "sql: {} rounds taken, the precision target allows 1..={}",
                                sql.config.runs, doc.config.runs
                            ));
                        }
                        sql.config.runs
                    }
                    None => doc.config.runs,
                };
                check_sql(
                    sql,
                    wants(Suite::Sql),
                    wants(Suite::Batch),
                    runs,
                    doc.config.warmup,
                    doc.config.peer_rounds().min(runs),
                    p,
                )
            }
        }
    }
    if wants(Suite::Fs) {
        check_lifecycle(&doc, p);
    }
    if wants(Suite::Raw) {
        check_raw(&doc, p);
    }
    if wants(Suite::Handoff) {
        check_handoff(&doc, p);
    }
    if wants(Suite::Scale) {
        check_scale(&doc, p, &mut v.warnings);
    }
    v.doc = Some(doc);
    v
}

fn check_sql(
    sql: &SqlSection,
    suite: bool,
    batch: bool,
    runs: u32,
    warmup: u32,
    peer_rounds: u32,
    p: &mut Vec<String>,
) {
    if sql.backends.is_empty() {
        p.push("sql.backends is empty".into());
    }
    let expected_cases = sql.suite.cases.len();
    if suite && expected_cases != 16 {
        p.push(format!("sql.suite has {expected_cases} cases, expected 16"));
    }
    if sql.rounds.len() != (runs + warmup) as usize {
        p.push(format!(
            "sql: {} rounds recorded, expected {} ({warmup} warm-up + {runs})",
            sql.rounds.len(),
            runs + warmup
        ));
    }
    for (i, r) in sql.rounds.iter().enumerate() {
        if r.index as usize != i || r.warmup != (r.index < warmup) {
            p.push(format!(
                "sql round {i}: index {} warmup {}",
                r.index, r.warmup
            ));
        }
    }
    let boot = sql.bootstrap.clone();
    if boot.is_none() {
        p.push("sql: no bootstrap record (not summarized)".into());
    }
    for b in &sql.backends {
        let name = &b.meta.name;
        if b.meta.skipped.is_some() {
            if !b.runs.is_empty() || !b.warmup_runs.is_empty() {
                p.push(format!("sql backend {name}: skipped but has runs"));
            }
            continue;
        }
        if b.meta.reference.is_none() || b.meta.durability.is_empty() {
            p.push(format!("sql backend {name}: no reference or durability"));
        }
        if b.meta.is_ours() && b.meta.package.as_deref() != Some("opfs-vfs") {
            p.push(format!("sql backend {name}: package {:?}", b.meta.package));
        }
        // Capped by `peer_runs` (a JavaScript peer; which backends are peers is the page's
        // knowledge, not the document's): never one of ours, nor the reference of one of ours,
        // whose ratios need every round.
        let capped = peer_rounds < runs
            && b.runs.len() == peer_rounds as usize
            && !b.meta.is_ours()
            && !sql.backends.iter().any(|o| {
                o.meta.is_ours()
                    && sql
                        .reference_of(&o.meta)
                        .is_some_and(|r| r.meta.name == *name)
            });
        let expected = if capped { peer_rounds } else { runs };
        if b.error.is_none()
            && (b.runs.len() != expected as usize || b.warmup_runs.len() != warmup as usize)
        {
            p.push(format!(
                "sql backend {name}: {} + {} runs, expected {warmup} + {expected}",
                b.warmup_runs.len(),
                b.runs.len()
            ));
        }
        if capped {
            let got: Vec<Option<u32>> = b.runs.iter().map(|r| r.round).collect();
            let first: Vec<Option<u32>> = (warmup..warmup + peer_rounds).map(Some).collect();
            if got != first {
                p.push(format!(
                    "sql backend {name}: capped at {peer_rounds} rounds but ran in rounds \
                     {got:?}, not the first measured ones"
                ));
            }
        }
        for (i, r) in b.warmup_runs.iter().chain(&b.runs).enumerate() {
            let at = format!("sql backend {name} run {}", i + 1);
            match r.round.and_then(|k| sql.rounds.get(k as usize)) {
                Some(round) if round.order.contains(name) => {}
                _ => p.push(format!("{at}: round {:?} does not list it", r.round)),
            }
            if suite {
                match &r.suite {
                    None => p.push(format!("{at}: no suite")),
                    Some(s) => {
                        if s.cases.len() != expected_cases {
                            p.push(format!(
                                "{at}: {} cases, expected {expected_cases}",
                                s.cases.len()
                            ));
                        }
                        if let Some(c) = s.cases.iter().find(|c| !finite_nonneg(c.ms)) {
                            p.push(format!("{at}: case {} has time {}", c.number, c.ms));
                        }
                        if !(s.total_ms > 0.0 && s.total_ms.is_finite()) {
                            p.push(format!("{at}: no positive total"));
                        }
                    }
                }
            }
            if batch {
                match &r.batch {
                    None => p.push(format!("{at}: no batch")),
                    Some(bt) => {
                        if !(bt.ms > 0.0 && bt.ms.is_finite()) {
                            p.push(format!("{at}: batch has no positive time"));
                        }
                        if bt.rows != sql.suite.batch_rows {
                            p.push(format!("{at}: batch inserted {} rows", bt.rows));
                        }
                    }
                }
            }
        }
        if b.summary.is_none() {
            p.push(format!("sql backend {name}: no summary"));
        }
        let reference = sql.reference_of(&b.meta);
        if reference.is_some() && !b.runs.is_empty() {
            let total = b
                .ratios
                .as_ref()
                .and_then(|r| if suite { r.total } else { r.batch });
            match (total, &boot) {
                (None, _) => p.push(format!("sql backend {name}: no paired ratio")),
                (Some(t), Some(boot)) if t.n >= boot.min_pairs && t.lo.is_none() => {
                    p.push(format!("sql backend {name}: {} pairs but no interval", t.n));
                }
                (Some(t), _) => {
                    if let (Some(lo), Some(hi)) = (t.lo, t.hi) {
                        if !(lo <= t.median && t.median <= hi) {
                            p.push(format!(
                                "sql backend {name}: interval {lo}–{hi} misses its median {}",
                                t.median
                            ));
                        }
                    }
                }
            }
        }
    }
    check_verdicts(&sql.goals, p);
}

fn check_lifecycle(doc: &Document, p: &mut Vec<String>) {
    let Some(l) = &doc.fs else {
        p.push("fs lifecycle missing".into());
        return;
    };
    if l.backends.is_empty() {
        p.push("fs lifecycle: no backends".into());
    }
    if l.rounds.len() != (doc.config.fs_rounds() + doc.config.warmup) as usize {
        p.push(format!("fs: {} rounds recorded", l.rounds.len()));
    }
    for b in &l.backends {
        if b.runs.is_empty() {
            p.push(format!("fs backend {}: no measured runs", b.name));
        }
        for (i, r) in b.runs.iter().enumerate() {
            if r.phases.is_empty() {
                p.push(format!("fs backend {} run {}: no phases", b.name, i + 1));
            }
            if let Some(ph) = r.phases.iter().find(|ph| !finite_nonneg(ph.ms)) {
                p.push(format!(
                    "fs backend {} run {}: phase {} has time {}",
                    b.name,
                    i + 1,
                    ph.phase,
                    ph.ms
                ));
            }
        }
        if b.summary.is_none() {
            p.push(format!("fs backend {}: no summary", b.name));
        }
        if !b.is_baseline() && b.ratios.is_none() && l.backends.iter().any(|x| x.is_baseline()) {
            p.push(format!("fs backend {}: no ratio to the baseline", b.name));
        }
    }
}

fn check_raw(doc: &Document, p: &mut Vec<String>) {
    let Some(raw) = &doc.raw else {
        p.push("raw OPFS workloads missing".into());
        return;
    };
    if raw.runs.is_empty() {
        p.push("raw: no measured runs".into());
    }
    for (i, r) in raw.runs.iter().enumerate() {
        if r.series.is_empty() {
            p.push(format!("raw run {}: no series", i + 1));
        }
        for s in &r.series {
            if s.calls == 0 || !finite_nonneg(s.stats.total_us) {
                p.push(format!(
                    "raw run {} series {}: {} calls, total {} µs",
                    i + 1,
                    s.name,
                    s.calls,
                    s.stats.total_us
                ));
            }
        }
    }
    if raw.summary.is_none() || raw.derived.is_none() {
        p.push("raw: no summary".into());
    }
}

fn check_handoff(doc: &Document, p: &mut Vec<String>) {
    let Some(h) = &doc.handoff else {
        p.push("handoff section missing".into());
        return;
    };
    let expected = doc.config.fs_rounds() + doc.config.warmup;
    if h.error.is_none() && h.rounds.len() != expected as usize {
        p.push(format!(
            "handoff: {} rounds recorded, expected {expected}",
            h.rounds.len()
        ));
    }
    for (i, r) in h.rounds.iter().enumerate() {
        let peers = r
            .peers
            .iter()
            .flat_map(|p| p.workloads.iter().map(move |w| (Some(&p.backend), w)));
        for (who, w) in r.workloads.iter().map(|w| (None, w)).chain(peers) {
            if w.handoffs == 0 || !finite_nonneg(w.alternating_ms) || !finite_nonneg(w.solo_ms) {
                let who = who.map_or_else(String::new, |b| format!(" {b}"));
                p.push(format!(
                    "handoff round {i}{who} {}: {} hand-offs, {} ms alternating, {} ms solo",
                    w.workload, w.handoffs, w.alternating_ms, w.solo_ms
                ));
            }
        }
        for b in &r.peers {
            if !h.peers.iter().any(|m| m.name == b.backend) {
                p.push(format!(
                    "handoff round {i}: peer {} ran but is not among the section's peers",
                    b.backend
                ));
            }
        }
        if let Some(f) = &r.floor {
            if f.cycles == 0 || !finite_nonneg(f.wall_ms) {
                p.push(format!(
                    "handoff round {i} floor: {} cycles, {} ms",
                    f.cycles, f.wall_ms
                ));
            }
        }
    }
    if h.summary.is_none() {
        p.push("handoff: no summary".into());
    }
    check_verdicts(&h.goals, p);
}

/// The scale section (module docs). A backend's error is a problem line like a failed
/// verification (`scale/<backend>: <error>`), once: not again when the producer already
/// recorded it among the failures. A section without its baseline is only a warning: its
/// ratios and two of its goals are missing, the rest stands. (Its summaries need no check:
/// loading summarizes a section that lacks them.)
fn check_scale(doc: &Document, p: &mut Vec<String>, warnings: &mut Vec<String>) {
    use bench_results::scale::SUITE;
    let Some(s) = &doc.scale else {
        p.push("scale section missing".into());
        return;
    };
    let c = &s.config;
    if s.backends.is_empty() {
        p.push("scale: no backends".into());
    }
    if c.runs != doc.config.scale_rounds() {
        p.push(format!(
            "scale: {} measured rounds in the section, the run's config says {}",
            c.runs,
            doc.config.scale_rounds()
        ));
    }
    if c.rows == 0 || doc.config.scale_rows.is_some_and(|r| r != c.rows) {
        p.push(format!(
            "scale: {} rows built, the run's config says {:?}",
            c.rows, doc.config.scale_rows
        ));
    }
    if s.rounds.len() != (c.runs + c.warmup) as usize {
        p.push(format!(
            "scale: {} rounds recorded, expected {} ({} warm-up + {})",
            s.rounds.len(),
            c.runs + c.warmup,
            c.warmup,
            c.runs
        ));
    }
    for (i, r) in s.rounds.iter().enumerate() {
        if r.index as usize != i || r.warmup != (r.index < c.warmup) {
            p.push(format!(
                "scale round {i}: index {} warmup {}",
                r.index, r.warmup
            ));
        }
    }
    if !s.backends.is_empty() && s.backend(&c.baseline).is_none() {
        warnings.push(format!(
            "scale: the baseline {} did not run: no ratios to it",
            c.baseline
        ));
    }
    for b in &s.backends {
        let name = &b.meta.name;
        match &b.error {
            Some(e) => {
                let recorded = doc
                    .verifications
                    .failures
                    .iter()
                    .any(|f| f.suite == SUITE && f.backend.as_deref() == Some(name.as_str()));
                if !recorded {
                    p.push(format!("{SUITE}/{name}: {e}"));
                }
            }
            None if b.runs.len() != c.runs as usize || b.warmup_runs.len() != c.warmup as usize => {
                p.push(format!(
                    "scale backend {name}: {} + {} runs, expected {} + {}",
                    b.warmup_runs.len(),
                    b.runs.len(),
                    c.warmup,
                    c.runs
                ));
            }
            None => {}
        }
        for (i, r) in b.warmup_runs.iter().chain(&b.runs).enumerate() {
            let at = format!("scale backend {name} run {}", i + 1);
            match s.rounds.get(r.round as usize) {
                Some(round) if round.order.contains(name) => {}
                _ => p.push(format!("{at}: round {} does not list it", r.round)),
            }
            let times: [(&str, Option<f64>); 8] = [
                ("build", Some(r.build_ms)),
                ("checkpoint", r.checkpoint_ms),
                ("reopen", Some(r.reopen_ms)),
                ("first read", Some(r.first_read_ms)),
                ("cold scan", Some(r.scan_cold_ms)),
                ("warm scan", Some(r.scan_warm_ms)),
                ("autocommit", Some(r.autocommit_ms)),
                ("vacuum", Some(r.vacuum_ms)),
            ];
            for (what, ms) in times {
                if let Some(ms) = ms.filter(|ms| !finite_nonneg(*ms)) {
                    p.push(format!("{at}: {what} has time {ms}"));
                }
            }
            if r.logical_bytes == 0 {
                p.push(format!("{at}: no logical bytes"));
            }
        }
    }
    check_verdicts(&s.goals, p);
}

/// Every goal check's verdict is the one the rule gives for its own interval
/// ([`bench_results::goals::verdict`]); one problem line per check that says otherwise.
fn check_verdicts(goals: &[GoalCheck], p: &mut Vec<String>) {
    for g in goals {
        let expected = verdict(g.ratio.as_ref(), g.bound, g.threshold);
        if g.verdict != expected {
            p.push(format!(
                "goal {}: verdict {:?}, the rule gives {expected:?}",
                g.statement, g.verdict
            ));
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_reports_problems() {
        let all = Suite::ALL.to_vec();
        let v = validate("{", &all);
        assert!(v.problems[0].starts_with("not JSON"), "{:?}", v.problems);
        let v = validate(
            r#"{"schema_version":2,"generated_at":"x","config":{"preset":"quick","suites":["sql","fs","raw"],
                "backends":[],"runs":1,"warmup":0,"seed":1,"sql_scale":10,"files":10,
                "file_size_bytes":1,"raw_small_calls":1,"raw_cycle_calls":1},"environment":{},
                "verifications":{"all_passed":false,"failures":[{"suite":"sql","backend":"sahpool",
                "message":"reopen: rows differ"}]}}"#,
            &all,
        );
        let text = v.problems.join("\n");
        assert!(text.contains("all_passed"), "{text}");
        assert!(text.contains("sql/sahpool: reopen: rows differ"), "{text}");
        assert!(text.contains("sql missing"), "{text}");
        assert!(text.contains("fs lifecycle missing"), "{text}");
        assert!(text.contains("raw OPFS workloads missing"), "{text}");
        let v = validate(r#"{"schema_version":9}"#, &all);
        assert!(
            v.problems[0].contains("schema_version 9"),
            "{:?}",
            v.problems
        );
    }

    /// A summarized scale-only document: `sqlite-unix-file` and `ours-disk-strict`, two
    /// measured rounds after one warm-up.
    fn scale_document() -> Document {
        use bench_results::scale::{ScaleBackend, ScaleConfig, ScaleRun, ScaleSection};
        use bench_results::sql::{BackendMeta, Round};
        use bench_results::{Bootstrap, RunConfig};
        let names = ["sqlite-unix-file", "ours-disk-strict"];
        let run = |round: u32| ScaleRun {
            round,
            build_ms: 50.0,
            bytes_written: Some(3_000_000),
            logical_bytes: 2_000_000,
            stored_bytes: Some(2_000_000),
            reopen_ms: 1.0,
            first_read_ms: 0.1,
            scan_cold_ms: 4.0,
            scan_warm_ms: 3.0,
            autocommit_ms: 2.0,
            vacuum_ms: 9.0,
            logical_after_vacuum: 8192,
            stored_after_vacuum: Some(8192),
            ..ScaleRun::default()
        };
        let config = RunConfig {
            preset: "test".to_owned(),
            suites: vec![Suite::Scale],
            runs: 5,
            warmup: 1,
            seed: 1,
            sql_scale: 1,
            order_seed: Some(3),
            scale_rows: Some(2000),
            scale_runs: Some(2),
            ..RunConfig::default()
        };
        let mut doc = Document::new(
            "2026-12-04T00:00:00Z".to_owned(),
            config,
            Default::default(),
        );
        let mut s = ScaleSection {
            config: ScaleConfig {
                rows: 2000,
                row_bytes: 1000,
                batch_rows: 10_000,
                autocommits: 20,
                runs: 2,
                warmup: 1,
                order_seed: Some(3),
                baseline: names[0].to_owned(),
            },
            rounds: (0..3)
                .map(|i| Round {
                    index: i,
                    warmup: i == 0,
                    order: names.iter().map(|n| (*n).to_owned()).collect(),
                    load: None,
                })
                .collect(),
            backends: names
                .iter()
                .map(|n| ScaleBackend {
                    meta: BackendMeta {
                        name: (*n).to_owned(),
                        ..BackendMeta::default()
                    },
                    warmup_runs: vec![run(0)],
                    runs: vec![run(1), run(2)],
                    ..ScaleBackend::default()
                })
                .collect(),
            ..ScaleSection::default()
        };
        s.summarize(&Bootstrap::default());
        for n in names {
            doc.verifications.pass(format!("scale: {n}"));
        }
        doc.scale = Some(s);
        doc
    }

    fn problems(doc: &Document) -> String {
        validate(&doc.to_json().unwrap(), &[Suite::Scale])
            .problems
            .join("\n")
    }

    #[test]
    fn a_scale_section_validates() {
        let doc = scale_document();
        let v = validate(&doc.to_json().unwrap(), &[Suite::Scale]);
        assert!(v.problems.is_empty(), "{:#?}", v.problems);
        assert!(v.warnings.is_empty(), "{:#?}", v.warnings);
    }

    #[test]
    fn scale_validation_reports_problems() {
        let mut doc = scale_document();
        doc.scale = None;
        assert!(problems(&doc).contains("scale section missing"));

        // A round short, a negative time, an empty database, a round that does not list it.
        let mut doc = scale_document();
        let s = doc.scale.as_mut().unwrap();
        s.backends[1].runs.pop();
        s.backends[0].runs[0].scan_warm_ms = -1.0;
        s.backends[0].runs[1].checkpoint_ms = Some(-0.5);
        s.backends[0].warmup_runs[0].logical_bytes = 0;
        s.rounds[2].order.retain(|n| n != "sqlite-unix-file");
        let text = problems(&doc);
        for needle in [
            "scale backend ours-disk-strict: 1 + 1 runs, expected 1 + 2",
            "scale backend sqlite-unix-file run 2: warm scan has time -1",
            "scale backend sqlite-unix-file run 3: checkpoint has time -0.5",
            "scale backend sqlite-unix-file run 1: no logical bytes",
            "scale backend sqlite-unix-file run 3: round 2 does not list it",
        ] {
            assert!(text.contains(needle), "no {needle:?} in\n{text}");
        }

        // A backend that failed: one failure line, whether or not the producer recorded it.
        let mut doc = scale_document();
        let s = doc.scale.as_mut().unwrap();
        s.backends[1].error = Some("round 2: disk full".to_owned());
        s.backends[1].runs.truncate(0);
        let text = problems(&doc);
        assert!(
            text.contains("scale/ours-disk-strict: round 2: disk full"),
            "{text}"
        );
        assert!(
            !text.contains("runs, expected"),
            "a failed backend's rounds: {text}"
        );
        doc.verifications
            .fail("scale", Some("ours-disk-strict"), "round 2: disk full");
        let text = problems(&doc);
        assert_eq!(text.matches("round 2: disk full").count(), 1, "{text}");

        // Rows and rounds that differ from the run's config.
        let mut doc = scale_document();
        doc.config.scale_rows = Some(100_000);
        doc.config.scale_runs = Some(3);
        let text = problems(&doc);
        assert!(text.contains("scale: 2000 rows built, the run's config says Some(100000)"));
        assert!(text.contains("scale: 2 measured rounds in the section, the run's config says 3"));

        // A verdict that does not follow from its interval.
        let mut doc = scale_document();
        let g = &mut doc.scale.as_mut().unwrap().goals[0];
        g.verdict = match g.verdict {
            bench_results::goals::Verdict::Met => bench_results::goals::Verdict::NotMet,
            _ => bench_results::goals::Verdict::Met,
        };
        assert!(problems(&doc).contains("the rule gives"));
    }
}
