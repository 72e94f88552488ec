//! [`combine_loads`]: one document from several page loads of one configuration.
//!
//! Every backend of a page runs in one worker: one wasm instance, one heap, one OPFS
//! directory for the whole page load. What a load fixes (where the allocator puts things, what
//! the JIT decided, the files' state) lasts through all of its rounds, so rounds of one load
//! are not independent draws, and an interval that resamples only rounds misses the variation
//! between loads (`methodology.md`, "How many rounds": CPU-only cases 2–4 % off 1.00 with
//! intervals that exclude it). A combined document keeps every round, tagged with its load
//! ([`Round::load`]), and its ratios' intervals resample loads, then rounds
//! ([`crate::stats::grouped_median_interval`]).
//!
//! A document may itself be combined (several loads: one *sitting*, a run of `--page-loads`):
//! its loads keep their tags, moved after the loads before it, so sittings of one build at
//! different times combine into one document whose intervals resample the loads of all
//! (`bench-runner combine`).
//!
//! Combined: the SQL section (suite and batch), the filesystem lifecycle, the raw suite and the
//! hand-off suite (its rounds tagged alike: [`crate::handoff::HandoffRound::load`]). The scale
//! suite is refused (combining it is not built).

use crate::fs::LifecycleSuite;
use crate::handoff::{HandoffRound, HandoffSection};
use crate::sql::{PageLoad, Round, SqlSection};
use crate::stats::Bootstrap;
use crate::Document;

/// Why documents cannot be combined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CombineError {
    /// No document given.
    Empty,
    /// Load `load` ran another configuration than load 0 (seeds of the round orders aside).
    Config {
        /// 0-based index of the document (a page load, or several combined).
        load: usize,
    },
    /// Load `load` has a suite that cannot be combined, or lacks one load 0 has.
    Suite {
        /// 0-based.
        load: usize,
        /// The suite.
        suite: &'static str,
    },
    /// Load `load`'s SQL section or lifecycle has other backends or cases than load 0's.
    Backends {
        /// 0-based index of the document (a page load, or several combined).
        load: usize,
    },
}

impl std::fmt::Display for CombineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CombineError::Empty => f.write_str("no page load to combine"),
            CombineError::Config { load } => {
                write!(f, "page load {load} ran another configuration than load 0")
            }
            CombineError::Suite { load, suite } => write!(
                f,
                "page load {load}: the {suite} suite cannot be combined over page loads \
                 (sql, batch, fs, raw and handoff can), or it is in one load and not another"
            ),
            CombineError::Backends { load } => write!(
                f,
                "page load {load} has other SQL backends or cases than load 0"
            ),
        }
    }
}

impl std::error::Error for CombineError {}

/// Combines `docs`, each one page load (or several already combined) of the same
/// configuration in the same browser, into one document, summarized again with `boot`:
///
/// - SQL: every load's rounds, renumbered to follow the previous load's, with
///   [`Round::load`] set (a combined document's loads keep their tags, moved up by the loads
///   before it); every backend's runs and warm-up runs with their rounds renumbered
///   alike; a backend's error is kept with its load's number; `config.runs` and `warmup` are
///   the sums and `config.loads` lists each load.
/// - raw: every load's runs, one after another (the raw suite has no pairing).
/// - handoff: every load's rounds, renumbered and tagged as the SQL rounds are
///   ([`HandoffRound::load`]); `config.runs` and `warmup` are the sums; its error and each
///   peer's are kept with their load's number.
/// - verifications, notes: every load's, each failure and note said once.
/// - `duration_ms` is the sum; `generated_at`, `environment`, `config` are load 0's (the
///   round orders' seed aside, the configs are equal: checked).
///
/// One document is returned as it is, summarized. The `runner` record is dropped (the caller
/// writes its own for the whole).
pub fn combine_loads(docs: Vec<Document>, boot: &Bootstrap) -> Result<Document, CombineError> {
    let mut docs = docs.into_iter();
    let mut out = docs.next().ok_or(CombineError::Empty)?;
    out.runner = None;
    check_suites(&out, 0)?;
    let single = docs.len() == 0;
    let mut loads = loads_in(&out);
    if !single && !is_combined(&out) {
        if let Some(sql) = &mut out.sql {
            sql.config.loads = vec![page_load(0, sql, &out.generated_at)];
            let errors = sql.backends.iter_mut().map(|b| &mut b.error);
            first_load(&mut sql.rounds, errors);
        }
        if let Some(fs) = &mut out.fs {
            first_load(&mut fs.rounds, fs.backends.iter_mut().map(|b| &mut b.error));
        }
        if let Some(h) = &mut out.handoff {
            let errors =
                std::iter::once(&mut h.error).chain(h.peers.iter_mut().map(|p| &mut p.error));
            first_load(&mut h.rounds, errors);
        }
    }
    for (i, doc) in docs.enumerate() {
        // The document's index (in errors), and its first load's number in the whole.
        let load = i + 1;
        let base = loads;
        let n = loads_in(&doc);
        loads = loads.saturating_add(n);
        let label = match n {
            1 => format!("page load {base}"),
            _ => format!("page loads {base}–{}", base.saturating_add(n - 1)),
        };
        check_suites(&doc, load)?;
        for (suite, here, there) in [
            ("sql", out.sql.is_some(), doc.sql.is_some()),
            ("fs", out.fs.is_some(), doc.fs.is_some()),
            ("raw", out.raw.is_some(), doc.raw.is_some()),
            ("handoff", out.handoff.is_some(), doc.handoff.is_some()),
        ] {
            if here != there {
                return Err(CombineError::Suite { load, suite });
            }
        }
        let mut config = doc.config.clone();
        config.order_seed = out.config.order_seed;
        if config != out.config {
            return Err(CombineError::Config { load });
        }
        if let (Some(sql), Some(next)) = (&mut out.sql, doc.sql) {
            append_sql(sql, next, load, base, &label, &doc.generated_at)?;
        }
        if let (Some(fs), Some(next)) = (&mut out.fs, doc.fs) {
            append_fs(fs, next, load, base, &label)?;
        }
        if let (Some(h), Some(next)) = (&mut out.handoff, doc.handoff) {
            append_handoff(h, next, load, base, &label)?;
        }
        if let (Some(raw), Some(next)) = (&mut out.raw, doc.raw) {
            raw.warmup_runs.extend(next.warmup_runs);
            raw.runs.extend(next.runs);
        }
        extend_unique(&mut out.verifications.failures, doc.verifications.failures);
        extend_unique(&mut out.verifications.passed, doc.verifications.passed);
        extend_unique(&mut out.notes, doc.notes);
        out.duration_ms += doc.duration_ms;
    }
    out.verifications.all_passed =
        out.verifications.failures.is_empty() && !out.verifications.passed.is_empty();
    if let Some(raw) = &mut out.raw {
        raw.summary = None;
        raw.derived = None;
    }
    if let Some(sql) = &mut out.sql {
        for b in &mut sql.backends {
            b.summary = None;
            b.ratios = None;
        }
        sql.goals.clear();
    }
    if let Some(fs) = &mut out.fs {
        for b in &mut fs.backends {
            b.summary = None;
            b.ratios = None;
        }
    }
    if let Some(h) = &mut out.handoff {
        h.summary = None;
        h.goals.clear();
    }
    out.summarize(boot);
    Ok(out)
}

/// The suites `doc` may have to be combined: SQL (suite, batch), fs, raw and handoff.
fn check_suites(doc: &Document, load: usize) -> Result<(), CombineError> {
    if doc.scale.is_some() {
        return Err(CombineError::Suite {
            load,
            suite: "scale",
        });
    }
    Ok(())
}

/// Whether `doc` combines several page loads already (its rounds carry their loads' tags).
fn is_combined(doc: &Document) -> bool {
    fn tagged<T: LoadRound>(rounds: &[T]) -> bool {
        rounds.iter().any(|r| r.load().is_some())
    }
    doc.sql.as_ref().is_some_and(|s| tagged(&s.rounds))
        || doc.fs.as_ref().is_some_and(|f| tagged(&f.rounds))
        || doc.handoff.as_ref().is_some_and(|h| tagged(&h.rounds))
}

/// The page loads `doc` holds: one, or as many as its rounds' tags count.
fn loads_in(doc: &Document) -> u32 {
    fn most<T: LoadRound>(rounds: &[T]) -> Option<u32> {
        rounds.iter().filter_map(LoadRound::load).max()
    }
    let sql = doc.sql.as_ref().and_then(|s| most(&s.rounds));
    let fs = doc.fs.as_ref().and_then(|f| most(&f.rounds));
    let handoff = doc.handoff.as_ref().and_then(|h| most(&h.rounds));
    sql.max(fs).max(handoff).map_or(1, |l| l.saturating_add(1))
}

fn page_load(load: u32, sql: &SqlSection, generated_at: &str) -> PageLoad {
    PageLoad {
        load,
        runs: sql.config.runs,
        warmup: sql.config.warmup,
        order_seed: sql.config.order_seed,
        generated_at: generated_at.to_owned(),
    }
}

/// Appends document `load`'s SQL section `next` to `sql`, its loads numbered from `base`.
fn append_sql(
    sql: &mut SqlSection,
    next: SqlSection,
    load: usize,
    base: u32,
    label: &str,
    generated_at: &str,
) -> Result<(), CombineError> {
    let names = |s: &SqlSection| {
        s.backends
            .iter()
            .map(|b| b.meta.clone())
            .collect::<Vec<_>>()
    };
    if names(sql) != names(&next) || sql.case_numbers() != next.case_numbers() {
        return Err(CombineError::Backends { load });
    }
    if next.config.loads.is_empty() {
        sql.config.loads.push(page_load(base, &next, generated_at));
    } else {
        sql.config
            .loads
            .extend(next.config.loads.iter().map(|l| PageLoad {
                load: base.saturating_add(l.load),
                ..l.clone()
            }));
    }
    sql.config.runs += next.config.runs;
    sql.config.warmup += next.config.warmup;
    let offset = append_rounds(&mut sql.rounds, next.rounds, base);
    for (b, n) in sql.backends.iter_mut().zip(next.backends) {
        append_runs(&mut b.warmup_runs, n.warmup_runs, offset);
        append_runs(&mut b.runs, n.runs, offset);
        merge_error(&mut b.error, n.error, label);
    }
    Ok(())
}

/// Load 0 of several: its rounds tagged, its backends' errors (`errors`) marked as its own.
fn first_load<'a, T: LoadRound>(
    rounds: &mut [T],
    errors: impl Iterator<Item = &'a mut Option<String>>,
) {
    for r in rounds {
        *r.load_mut() = Some(0);
    }
    for e in errors {
        *e = e.take().map(|e| format!("page load 0: {e}"));
    }
}

/// Appends `from` to `into`, leaving out what `into` has already.
fn extend_unique<T: PartialEq>(into: &mut Vec<T>, from: Vec<T>) {
    for x in from {
        if !into.contains(&x) {
            into.push(x);
        }
    }
}

/// A round that may carry its page load's tag ([`Round`], [`HandoffRound`]).
trait LoadRound {
    fn index(&self) -> u32;
    fn index_mut(&mut self) -> &mut u32;
    fn load_mut(&mut self) -> &mut Option<u32>;
    fn load(&self) -> Option<u32>;
}

/// [`LoadRound`] over the `index` and `load` fields, which [`Round`] and [`HandoffRound`] share.
macro_rules! load_round {
    ($($t:ty),+) => {$(
        impl LoadRound for $t {
            fn index(&self) -> u32 {
                self.index
            }
            fn index_mut(&mut self) -> &mut u32 {
                &mut self.index
            }
            fn load_mut(&mut self) -> &mut Option<u32> {
                &mut self.load
            }
            fn load(&self) -> Option<u32> {
                self.load
            }
        }
    )+};
}

load_round!(Round, HandoffRound);

/// A run that records its round ([`crate::sql::RunSample`], [`crate::fs::LifecycleRun`]).
trait InRound {
    fn round_mut(&mut self) -> &mut Option<u32>;
}

impl InRound for crate::sql::RunSample {
    fn round_mut(&mut self) -> &mut Option<u32> {
        &mut self.round
    }
}

impl InRound for crate::fs::LifecycleRun {
    fn round_mut(&mut self) -> &mut Option<u32> {
        &mut self.round
    }
}

/// Appends `from` to `into`, each run's round moved up by `offset` (see [`append_rounds`]).
fn append_runs<T: InRound>(into: &mut Vec<T>, from: Vec<T>, offset: u32) {
    into.extend(from.into_iter().map(|mut run| {
        if let Some(r) = run.round_mut() {
            *r += offset;
        }
        run
    }));
}

/// Appends `next` rounds to `rounds`, numbered on after every round so far (warm-up
/// included) and tagged with their load: `base`, or `base` + the load they carry (a combined
/// document's); returns the number added to their indexes.
fn append_rounds<T: LoadRound>(rounds: &mut Vec<T>, next: Vec<T>, base: u32) -> u32 {
    let offset = rounds.iter().map(|r| r.index() + 1).max().unwrap_or(0);
    rounds.extend(next.into_iter().map(|mut r| {
        *r.index_mut() += offset;
        let load = r.load().unwrap_or(0);
        *r.load_mut() = Some(base.saturating_add(load));
        r
    }));
    offset
}

/// A backend's error in the loads `label` names, added to those of the loads before.
fn merge_error(error: &mut Option<String>, next: Option<String>, label: &str) {
    if let Some(e) = next {
        let e = format!("{label}: {e}");
        *error = Some(match error.take() {
            Some(prev) => format!("{prev}; {e}"),
            None => e,
        });
    }
}

/// Appends document `load`'s lifecycle `next` to `fs`, rounds renumbered after `fs`'s own,
/// its loads numbered from `base`.
fn append_fs(
    fs: &mut LifecycleSuite,
    next: LifecycleSuite,
    load: usize,
    base: u32,
    label: &str,
) -> Result<(), CombineError> {
    let names = |l: &LifecycleSuite| {
        l.backends
            .iter()
            .map(|b| b.name.clone())
            .collect::<Vec<_>>()
    };
    if names(fs) != names(&next)
        || (fs.files, fs.file_size_bytes) != (next.files, next.file_size_bytes)
    {
        return Err(CombineError::Backends { load });
    }
    let offset = append_rounds(&mut fs.rounds, next.rounds, base);
    for (b, n) in fs.backends.iter_mut().zip(next.backends) {
        append_runs(&mut b.warmup_runs, n.warmup_runs, offset);
        append_runs(&mut b.runs, n.runs, offset);
        merge_error(&mut b.error, n.error, label);
    }
    Ok(())
}

/// Appends document `load`'s hand-off section `next` to `h`, rounds renumbered after `h`'s own
/// and tagged with their loads, numbered from `base`. Refused: another configuration (the part
/// orders' seed and the OPFS directory aside: each load draws its own; `h` keeps load 0's) or
/// other peers.
fn append_handoff(
    h: &mut HandoffSection,
    next: HandoffSection,
    load: usize,
    base: u32,
    label: &str,
) -> Result<(), CombineError> {
    let same = |a: &HandoffSection, b: &HandoffSection| {
        let config = |s: &HandoffSection| crate::handoff::HandoffConfig {
            runs: 0,
            warmup: 0,
            order_seed: None,
            data_dir: None,
            ..s.config.clone()
        };
        let peers = |s: &HandoffSection| s.peers.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        config(a) == config(b) && peers(a) == peers(b)
    };
    if !same(h, &next) {
        return Err(CombineError::Config { load });
    }
    h.config.runs += next.config.runs;
    h.config.warmup += next.config.warmup;
    append_rounds(&mut h.rounds, next.rounds, base);
    merge_error(&mut h.error, next.error, label);
    for (p, n) in h.peers.iter_mut().zip(next.peers) {
        merge_error(&mut p.error, n.error, label);
        if p.skipped.is_none() {
            p.skipped = n.skipped.map(|s| format!("{label}: {s}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::{CallSeries, RawRun, RawSuite};
    use crate::sql::{BackendMeta, CaseSample, RunSample, SqlBackendResult, SuiteRun};
    use crate::{Environment, RunConfig, Suite};

    /// One page load: a memory reference and one of ours, `rounds` measured rounds after one
    /// warm-up, ours taking `level` × the reference in every round.
    fn load(level: f64, rounds: u32) -> Document {
        let config = RunConfig {
            suites: vec![Suite::Sql, Suite::Raw],
            runs: rounds,
            warmup: 1,
            order_seed: Some(7),
            ..RunConfig::default()
        };
        let mut doc = Document::new("t".to_owned(), config, Environment::default());
        let backend = |name: &str, persistent: bool, ms: f64| SqlBackendResult {
            meta: BackendMeta {
                name: name.to_owned(),
                persistent,
                reference: Some("sqlite-memvfs".to_owned()),
                ..BackendMeta::default()
            },
            warmup_runs: vec![run(0, ms)],
            runs: (1..=rounds).map(|r| run(r, ms)).collect(),
            ..SqlBackendResult::default()
        };
        let mut sql = SqlSection {
            rounds: (0..=rounds)
                .map(|index| Round {
                    index,
                    warmup: index == 0,
                    order: vec![
                        "sqlite-memvfs".to_owned(),
                        "ours-memory-balanced".to_owned(),
                    ],
                    load: None,
                })
                .collect(),
            backends: vec![
                backend("sqlite-memvfs", false, 100.0),
                backend("ours-memory-balanced", true, 100.0 * level),
            ],
            ..SqlSection::default()
        };
        sql.config.runs = rounds;
        sql.config.warmup = 1;
        sql.config.order_seed = Some(7);
        doc.sql = Some(sql);
        doc.raw = Some(RawSuite {
            runs: vec![RawRun {
                series: vec![CallSeries::new("append+flush", 4096, 4096, vec![400.0]).unwrap()],
            }],
            ..RawSuite::default()
        });
        doc.verifications.pass("integrity ok");
        doc.duration_ms = 1000.0;
        doc.summarize(&Bootstrap::default());
        doc
    }

    fn run(round: u32, ms: f64) -> RunSample {
        RunSample {
            round: Some(round),
            suite: Some(SuiteRun::from_cases(
                Default::default(),
                vec![CaseSample {
                    number: 1,
                    ms,
                    counters: None,
                }],
            )),
            batch: None,
        }
    }

    fn ours(doc: &Document) -> &SqlBackendResult {
        doc.sql
            .as_ref()
            .unwrap()
            .backend("ours-memory-balanced")
            .unwrap()
    }

    #[test]
    fn loads_are_renumbered_tagged_and_resampled() {
        let levels = [1.00, 1.04, 0.98, 1.02, 1.01, 1.03];
        let docs: Vec<Document> = levels.iter().map(|&l| load(l, 8)).collect();
        // One load alone: its rounds' interval, a point (every round the same).
        let alone = ours(&docs[1]).ratios.as_ref().unwrap().total.unwrap();
        assert_eq!(
            (alone.lo, alone.hi, alone.loads),
            (Some(1.04), Some(1.04), None)
        );

        let doc = combine_loads(docs, &Bootstrap::default()).unwrap();
        let sql = doc.sql.as_ref().unwrap();
        assert_eq!(sql.rounds.len(), 6 * 9);
        let indexes: Vec<u32> = sql.rounds.iter().map(|r| r.index).collect();
        assert_eq!(indexes, (0..54).collect::<Vec<_>>(), "renumbered in order");
        assert_eq!(sql.rounds[9].load, Some(1));
        assert!(sql.rounds[9].warmup, "load 1's warm-up round");
        assert_eq!(sql.rounds[53].load, Some(5));
        assert_eq!((sql.config.runs, sql.config.warmup), (48, 6));
        assert_eq!(sql.config.loads.len(), 6);
        assert_eq!(sql.config.loads[2].runs, 8);
        let b = ours(&doc);
        assert_eq!((b.runs.len(), b.warmup_runs.len()), (48, 6));
        assert_eq!(b.runs[8].round, Some(10), "load 1's first measured round");
        // The interval now spans the loads' levels, not one load's point.
        let total = b.ratios.as_ref().unwrap().total.unwrap();
        assert_eq!((total.n, total.loads), (48, Some(6)));
        let (lo, hi) = (total.lo.unwrap(), total.hi.unwrap());
        assert!(lo < 1.01 && hi > 1.02, "{total:?}");
        assert_eq!(doc.raw.as_ref().unwrap().runs.len(), 6);
        assert!(
            doc.raw.as_ref().unwrap().summary.is_some(),
            "summarized again"
        );
        assert_eq!(doc.duration_ms, 6000.0);
        assert_eq!(doc.verifications.passed, vec!["integrity ok".to_owned()]);
        assert!(doc.verifications.all_passed);
    }

    /// `load(level, rounds)` with a lifecycle too: ours (create takes `create_ms`) and the
    /// one-file-per-file baseline (create 10 ms), `rounds` measured rounds after one warm-up.
    fn with_fs(level: f64, rounds: u32, create_ms: f64) -> Document {
        use crate::fs::{LifecycleBackend, LifecycleRun, Phase, PhaseSample};
        let mut doc = load(level, rounds);
        let run = |round: u32, ms: f64| LifecycleRun {
            round: Some(round),
            phases: vec![PhaseSample {
                phase: Phase::Create,
                ms,
                counters: None,
            }],
            total_ms: ms,
            repeats_ms: Vec::new(),
        };
        let backend = |name: &str, storage: &str, ms: f64| LifecycleBackend {
            name: name.to_owned(),
            storage: storage.to_owned(),
            warmup_runs: vec![run(0, ms)],
            runs: (1..=rounds).map(|r| run(r, ms)).collect(),
            ..LifecycleBackend::default()
        };
        doc.fs = Some(LifecycleSuite {
            files: 1000,
            rounds: (0..=rounds)
                .map(|index| Round {
                    index,
                    warmup: index == 0,
                    order: Vec::new(),
                    load: None,
                })
                .collect(),
            backends: vec![
                backend("ours-disk-strict", "opfs", create_ms),
                backend("files-opfs", "opfs-file-per-file", 10.0),
            ],
            ..LifecycleSuite::default()
        });
        doc.summarize(&Bootstrap::default());
        doc
    }

    #[test]
    fn lifecycles_combine_with_intervals_over_loads() {
        use crate::fs::Phase;
        let create = [1.6, 1.9, 1.7, 1.8, 1.65, 2.1];
        let docs: Vec<Document> = create.iter().map(|&c| with_fs(1.0, 4, c)).collect();
        let alone = &docs[0].fs.as_ref().unwrap().backends[0];
        let phase = |b: &crate::fs::LifecycleBackend| {
            b.summary
                .as_ref()
                .unwrap()
                .phases
                .iter()
                .find(|p| p.phase == Phase::Create)
                .cloned()
                .unwrap()
        };
        // One load of 4 rounds: too few rounds for an interval.
        assert_eq!((phase(alone).ms_lo, phase(alone).ms_hi), (None, None));

        let doc = combine_loads(docs, &Bootstrap::default()).unwrap();
        let fs = doc.fs.as_ref().unwrap();
        assert_eq!(fs.rounds.len(), 6 * 5);
        assert_eq!(fs.rounds[29].load, Some(5));
        assert_eq!(fs.rounds[29].index, 29);
        let ours = &fs.backends[0];
        assert_eq!(ours.runs.len(), 24);
        assert_eq!(ours.runs[4].round, Some(6), "load 1's first measured round");
        let p = phase(ours);
        let (lo, hi) = (p.ms_lo.unwrap(), p.ms_hi.unwrap());
        assert!(lo <= 1.7 && (1.8..=2.1).contains(&hi), "[{lo}, {hi}]");
        let pooled: Vec<f64> = ours.runs.iter().map(|r| r.total_ms).collect();
        let flat = crate::stats::median_interval(&pooled, &Bootstrap::default(), "x").unwrap();
        assert!(
            hi - lo > flat.1 - flat.0,
            "[{lo}, {hi}] vs rounds alone {flat:?}"
        );
        let total = ours.ratios.as_ref().unwrap().total.unwrap();
        assert_eq!((total.loads, total.n), (Some(6), 24));
        assert!(total.lo.is_some());
        // Another set of files is another workload.
        let mut other = with_fs(1.0, 4, 1.6);
        other.fs.as_mut().unwrap().files = 10;
        assert_eq!(
            combine_loads(vec![with_fs(1.0, 4, 1.6), other], &Bootstrap::default()),
            Err(CombineError::Backends { load: 1 })
        );
    }

    #[test]
    fn combined_documents_combine_as_their_loads() {
        // Two sittings of three loads each, combined, then combined with each other: the
        // same document as the six loads combined at once.
        let levels = [1.00, 1.04, 0.98, 1.02, 1.01, 1.03];
        let docs = || {
            levels
                .iter()
                .map(|&l| with_fs(l, 5, 1.5 + l))
                .collect::<Vec<_>>()
        };
        let boot = Bootstrap::default();
        let at_once = combine_loads(docs(), &boot).unwrap();
        let mut sittings = docs();
        let second = combine_loads(sittings.split_off(3), &boot).unwrap();
        let first = combine_loads(sittings, &boot).unwrap();
        let nested = combine_loads(vec![first, second], &boot).unwrap();
        let sql = nested.sql.as_ref().unwrap();
        let loads: Vec<u32> = sql.config.loads.iter().map(|l| l.load).collect();
        assert_eq!(loads, [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            sql.rounds[6 * 3].load,
            Some(3),
            "the second sitting's first round"
        );
        assert_eq!(nested.sql, at_once.sql);
        assert_eq!(nested.fs, at_once.fs);
        assert_eq!(
            ours(&nested).ratios.as_ref().unwrap().total.unwrap().loads,
            Some(6)
        );
        // A sitting and a single load: the load comes after the sitting's loads.
        let mut sittings = docs();
        let last = sittings.pop().unwrap();
        let five = combine_loads(sittings, &boot).unwrap();
        let six = combine_loads(vec![five, last], &boot).unwrap();
        assert_eq!(six.sql, at_once.sql);
    }

    #[test]
    fn few_loads_give_no_interval() {
        let docs = vec![load(1.0, 8), load(1.02, 8)];
        let doc = combine_loads(docs, &Bootstrap::default()).unwrap();
        let total = ours(&doc).ratios.as_ref().unwrap().total.unwrap();
        assert_eq!((total.loads, total.lo, total.hi), (Some(2), None, None));
    }

    #[test]
    fn one_load_is_kept_as_it_is() {
        let doc = load(1.02, 8);
        let same = combine_loads(vec![doc.clone()], &Bootstrap::default()).unwrap();
        assert_eq!(same, doc);
    }

    #[test]
    fn mismatches_are_refused() {
        let boot = Bootstrap::default();
        assert_eq!(combine_loads(vec![], &boot), Err(CombineError::Empty));
        let mut other = load(1.0, 8);
        other.config.sql_scale = 10;
        assert_eq!(
            combine_loads(vec![load(1.0, 8), other], &boot),
            Err(CombineError::Config { load: 1 })
        );
        // Another order seed is expected (the runner gives each load its own).
        let mut reseeded = load(1.0, 8);
        reseeded.config.order_seed = Some(8);
        assert!(combine_loads(vec![load(1.0, 8), reseeded], &boot).is_ok());
        let mut fewer = load(1.0, 8);
        fewer.sql.as_mut().unwrap().backends.pop();
        assert_eq!(
            combine_loads(vec![load(1.0, 8), fewer], &boot),
            Err(CombineError::Backends { load: 1 })
        );
        let mut with_handoff = load(1.0, 8);
        with_handoff.handoff = Some(crate::HandoffSection::default());
        assert_eq!(
            combine_loads(vec![load(1.0, 8), with_handoff], &boot),
            Err(CombineError::Suite {
                load: 1,
                suite: "handoff"
            })
        );
        let mut no_raw = load(1.0, 8);
        no_raw.raw = None;
        assert_eq!(
            combine_loads(vec![load(1.0, 8), no_raw], &boot),
            Err(CombineError::Suite {
                load: 1,
                suite: "raw"
            })
        );
    }

    /// One page load of the hand-off suite: `rounds` measured rounds after one warm-up, each
    /// hand-off taking `level` × the floor of 2 ms (± a little by round), in OPFS directory
    /// `dir`.
    fn with_handoff(level: f64, rounds: u32, dir: &str) -> Document {
        use crate::handoff::{FloorRun, HandoffConfig, HandoffRun, TWO_WRITERS};
        let config = RunConfig {
            suites: vec![Suite::Handoff],
            runs: rounds,
            warmup: 1,
            order_seed: Some(7),
            ..RunConfig::default()
        };
        let mut doc = Document::new("t".to_owned(), config, Environment::default());
        doc.handoff = Some(HandoffSection {
            config: HandoffConfig {
                handoffs: 10,
                floor_cycles: 10,
                runs: rounds,
                warmup: 1,
                buffer_mode: "memory".to_owned(),
                durability: "strict".to_owned(),
                order_seed: Some(7),
                data_dir: Some(format!("opfs:{dir}")),
            },
            rounds: (0..=rounds)
                .map(|index| HandoffRound {
                    index,
                    warmup: index == 0,
                    workloads: vec![HandoffRun {
                        workload: TWO_WRITERS.to_owned(),
                        handoffs: 10,
                        // (alternating − solo) ÷ 10 hand-offs = level × 2 ms × (1 ± 1 %).
                        alternating_ms: 10.0
                            + 20.0 * level * (1.0 + (f64::from(index % 3) - 1.0) / 100.0),
                        solo_ms: 10.0,
                        ..HandoffRun::default()
                    }],
                    floor: Some(FloorRun {
                        cycles: 10,
                        wall_ms: 20.0,
                        samples_ms: vec![],
                    }),
                    ..HandoffRound::default()
                })
                .collect(),
            ..HandoffSection::default()
        });
        doc.verifications.pass("hand-offs ok");
        doc.summarize(&Bootstrap::default());
        doc
    }

    #[test]
    fn handoff_rounds_combine_with_intervals_over_loads() {
        let boot = Bootstrap::default();
        let levels = [0.50, 0.46, 0.55, 0.48, 0.52, 0.47];
        let docs: Vec<Document> = levels
            .iter()
            .enumerate()
            .map(|(i, &l)| with_handoff(l, 4, &format!("run-{i}")))
            .collect();
        let ratio = |d: &Document| {
            d.handoff
                .as_ref()
                .unwrap()
                .summary
                .as_ref()
                .unwrap()
                .workloads[0]
                .ratio_to_floor
                .unwrap()
        };
        // One load of 4 rounds: no interval, and no load count.
        assert_eq!((ratio(&docs[0]).lo, ratio(&docs[0]).loads), (None, None));
        let doc = combine_loads(docs, &boot).unwrap();
        let h = doc.handoff.as_ref().unwrap();
        assert_eq!((h.config.runs, h.config.warmup), (24, 6));
        assert_eq!(h.config.data_dir.as_deref(), Some("opfs:run-0"), "load 0's");
        assert_eq!(h.rounds.len(), 30);
        assert_eq!((h.rounds[29].index, h.rounds[29].load), (29, Some(5)));
        assert_eq!((h.rounds[5].index, h.rounds[5].load), (5, Some(1)));
        let r = ratio(&doc);
        assert_eq!((r.n, r.loads), (24, Some(6)));
        let (lo, hi) = (r.lo.unwrap(), r.hi.unwrap());
        assert!(lo <= 0.48 && (0.50..=0.56).contains(&hi), "[{lo}, {hi}]");
        // The loads' spread is in the interval: wider than resampling the rounds alone.
        let pooled: Vec<f64> = h
            .rounds
            .iter()
            .filter(|r| !r.warmup)
            .map(|r| r.workloads[0].handoff_ms().unwrap() / 2.0)
            .collect();
        let flat = crate::stats::median_interval(&pooled, &boot, "x").unwrap();
        assert!(hi - lo > flat.1 - flat.0, "[{lo}, {hi}] vs {flat:?}");
        assert_eq!(h.goals.len(), 1, "the goal is decided again");
        // Another configuration is refused.
        let mut other = with_handoff(0.5, 4, "run-9");
        other.handoff.as_mut().unwrap().config.handoffs = 20;
        assert_eq!(
            combine_loads(vec![with_handoff(0.5, 4, "run-0"), other], &boot),
            Err(CombineError::Config { load: 1 })
        );
        // An error keeps its load.
        let mut failed = with_handoff(0.5, 4, "run-1");
        failed.handoff.as_mut().unwrap().error = Some("lock lost".to_owned());
        let doc = combine_loads(vec![with_handoff(0.5, 4, "run-0"), failed], &boot).unwrap();
        let error = doc.handoff.unwrap().error;
        assert_eq!(error.as_deref(), Some("page load 1: lock lost"));
    }

    #[test]
    fn scale_is_refused() {
        let mut scaled = load(1.0, 8);
        scaled.scale = Some(crate::scale::ScaleSection::default());
        assert_eq!(
            combine_loads(vec![scaled, load(1.0, 8)], &Bootstrap::default()),
            Err(CombineError::Suite {
                load: 0,
                suite: "scale"
            })
        );
    }

    #[test]
    fn errors_keep_their_load() {
        let mut failed = load(1.0, 8);
        failed.sql.as_mut().unwrap().backends[1].error = Some("disk full".to_owned());
        let doc = combine_loads(vec![load(1.0, 8), failed], &Bootstrap::default()).unwrap();
        assert_eq!(ours(&doc).error.as_deref(), Some("page load 1: disk full"));
    }
}
