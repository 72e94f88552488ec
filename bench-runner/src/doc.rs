//! Validation of the page's result document, read as the one schema
//! ([`bench_results::Document`]; no mirror types here).
//!
//! [`validate`] checks the envelope (version, time, verifications), that every selected suite
//! produced samples for every backend that was not skipped, that the rounds are consistent
//! (every sample belongs to a recorded round whose order names its backend; warm-up rounds
//! first; with `config.peer_runs`, a backend other than ours and their references may have run
//! in the warm-up and exactly the first `peer_runs` measured rounds instead of all), that the summaries the page computed are there (medians, paired ratios, intervals
//! once there are enough rounds, the bootstrap record), and that every goal verdict follows
//! the rule of [`bench_results::goals::verdict`] from its own interval.

use bench_results::goals::verdict;
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
            Some(sql) => check_sql(
                sql,
                wants(Suite::Sql),
                wants(Suite::Batch),
                doc.config.runs,
                doc.config.warmup,
                doc.config.peer_rounds(),
                p,
            ),
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
    for g in &sql.goals {
        let expected = verdict(g.ratio.as_ref(), g.bound, g.threshold);
        if g.verdict != expected {
            p.push(format!(
                "goal {}: verdict {:?}, the rule gives {expected:?}",
                g.statement, g.verdict
            ));
        }
    }
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
    for g in &h.goals {
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
}
