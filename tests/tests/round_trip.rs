//! Producer → JSON → consumer: documents made by the real producers (bench-sql's round loop,
//! its scale suite and bench-fs' lifecycle over their native backends; a raw suite built from
//! call samples the way bench-fs builds it in the browser) go through JSON and are read back by every consumer:
//! the schema's loader (exactly equal, floats included), `bench-runner`'s validation (no
//! problem) and its Markdown report (the intervals and goals are in it).

use bench_fs::config::{Config, Level, LifecycleConfig, Mode};
use bench_results::handoff::{
    FloorRun, HandoffConfig, HandoffRound, HandoffRun, HandoffSection, PeerHandoff, PeerHandoffRun,
    FLOOR, TWO_WRITERS, WRITER_READER,
};
use bench_results::raw::{CallSeries, RawRun, RawSuite};
use bench_results::sql::{BackendMeta, BatchRun, SuiteRun};
use bench_results::{Bootstrap, Document, RunConfig, Suite};
use bench_runner::doc::validate;
use bench_runner::report::{markdown, Entry};
use bench_sql::backend::SqlBackend as _;
use bench_sql::batch::Batch;
use bench_sql::native::NativeBackend;
use bench_sql::native::{OursBackend, UnixFileBackend};
use bench_sql::runner::{run_rounds, Contestant, Ours, Plan, Turn};
use bench_sql::scale::{run_scale, ScalePlan};
use bench_sql::sql::Suite as SqlSuite;
use opfs_vfs::{BufferMode, Durability};

const RUNS: u32 = 6;

/// Rows and measured rounds of the scale suite in [`document`] (after no warm-up).
const SCALE_ROWS: u64 = 500;
const SCALE_RUNS: u32 = 2;

fn document() -> Document {
    let dir = tempfile::tempdir().unwrap();
    let (suite, batch) = bench_sql::workloads(bench_sql::sql::DEFAULT_SEED, 100);
    let mut backends: Vec<Ours<NativeBackend>> = NativeBackend::all(dir.path())
        .into_iter()
        .filter(|b| {
            ["sqlite-memory", "ours-memory-strict", "ours-disk-balanced"]
                .contains(&b.name().as_str())
        })
        .map(Ours)
        .collect();
    assert_eq!(backends.len(), 3);
    let plan = Plan {
        runs: RUNS,
        warmup: 1,
        peer_runs: None,
        order_seed: 5,
        suite: true,
        batch: true,
        batch_repeats: 1,
        data_dir: None,
        precision: None,
    };
    let sql = bench_sql::block_on(run_rounds(
        &mut backends,
        &plan,
        &suite,
        &batch,
        &mut |_| {},
    ));

    let fs = bench_fs::native::run_native(
        &Config {
            runs: RUNS,
            warmup: 1,
            lifecycle: Some(LifecycleConfig {
                files: 20,
                buffer_modes: vec![Mode::Disk, Mode::Memory],
                durabilities: vec![Level::Strict],
                ..LifecycleConfig::default()
            }),
            raw: None,
            dir: String::new(),
            order_seed: 5,
        },
        &mut |_| {},
    )
    .unwrap();

    // The raw suite as bench-fs' browser code builds it: series from per-call samples.
    let run = |k: f64| RawRun {
        series: vec![
            CallSeries::new(
                "small-append",
                4096,
                4 * 4096,
                vec![k * 11.0, 12.0, 13.0, 10.0],
            )
            .unwrap(),
            CallSeries::new(
                "small-overwrite",
                4096,
                4 * 4096,
                vec![k * 9.0, 9.0, 10.0, 8.0],
            )
            .unwrap(),
            CallSeries::new("append+flush", 4096, 2 * 4096, vec![k * 320.0, 270.0]).unwrap(),
            CallSeries::new("append+flush: flush", 0, 0, vec![k * 300.0, 250.0]).unwrap(),
            CallSeries::new("new-file: create+open", 0, 0, vec![k * 2000.0, 1500.0]).unwrap(),
            CallSeries::new("new-file: first write", 0, 0, vec![k * 20.0, 25.0]).unwrap(),
            CallSeries::new("new-file: delete", 0, 0, vec![k * 900.0, 800.0]).unwrap(),
        ],
    };
    let raw = RawSuite {
        warmup_runs: vec![run(3.0)],
        runs: (0..RUNS).map(|i| run(1.0 + f64::from(i) / 10.0)).collect(),
        ..RawSuite::default()
    };

    // The hand-off section as bench-sql's browser suite builds it: per round two workloads and
    // the floor, with per-hand-off samples (no browser here: the figures are made up).
    let workload = |name: &str, k: f64| HandoffRun {
        workload: name.to_owned(),
        handoffs: 4,
        alternating_ms: 40.0 * k,
        solo_ms: 6.0,
        acquire_ms: vec![7.0 * k, 8.0, 7.5, 7.2],
        release_ms: vec![1.8, 1.7, 1.9, 1.8],
        take_over_ms: vec![3.1, 3.0, 3.2, 3.1],
        spans_ms: [
            ("open".to_owned(), vec![1.6, 1.7, 1.6, 1.5]),
            ("grant".to_owned(), vec![0.4, 0.3, 0.4, 0.5]),
        ]
        .into_iter()
        .collect(),
        calls: 16,
        bytes_read: 4 * 24_000,
        bytes_written: 0,
        catch_up_log_bytes: 4 * 16_000,
        catch_up_commits: 4,
        reloads: 0,
        mismatches: 0,
        first_mismatch: None,
        unrequested_releases: 0,
    };
    let handoff = HandoffSection {
        config: HandoffConfig {
            handoffs: 4,
            floor_cycles: 4,
            runs: RUNS,
            warmup: 1,
            buffer_mode: "memory".to_owned(),
            durability: "strict".to_owned(),
            order_seed: Some(5),
            data_dir: Some("opfs:test".to_owned()),
        },
        rounds: (0..=RUNS)
            .map(|i| HandoffRound {
                index: i,
                load: None,
                warmup: i == 0,
                order: vec![TWO_WRITERS.into(), FLOOR.into(), WRITER_READER.into()],
                workloads: vec![
                    workload(TWO_WRITERS, 1.0 + f64::from(i) / 20.0),
                    workload(WRITER_READER, 1.1),
                ],
                floor: Some(FloorRun {
                    cycles: 4,
                    wall_ms: 15.0 + f64::from(i % 3),
                    samples_ms: vec![3.9, 3.7, 3.8, 3.6],
                }),
                handles: Some(bench_results::handoff::HANDLES_CONCURRENT.to_owned()),
                peers: vec![PeerHandoffRun {
                    backend: "wasqlite-opfs-coopsync".to_owned(),
                    workloads: vec![HandoffRun {
                        acquire_ms: vec![],
                        release_ms: vec![],
                        take_over_ms: vec![],
                        calls: 0,
                        bytes_read: 0,
                        catch_up_log_bytes: 0,
                        catch_up_commits: 0,
                        unrequested_releases: i % 2,
                        ..workload(TWO_WRITERS, 2.0 + f64::from(i) / 10.0)
                    }],
                }],
            })
            .collect(),
        peers: vec![PeerHandoff {
            name: "wasqlite-opfs-coopsync".to_owned(),
            package: "@journeyapps/wa-sqlite".to_owned(),
            version: "2.0.6".to_owned(),
            durability: "synchronous=FULL".to_owned(),
            connections: "two module instances".to_owned(),
            skipped: None,
            error: None,
        }],
        ..HandoffSection::default()
    };

    // The scale suite over the unix VFS (its baseline) and ours in Disk mode.
    let mut scale_backends = vec![
        NativeBackend::UnixFile(UnixFileBackend::new(dir.path())),
        NativeBackend::Ours(OursBackend::new(
            dir.path(),
            BufferMode::Disk,
            Durability::Strict,
        )),
    ];
    let scale = bench_sql::block_on(run_scale(
        &mut scale_backends,
        &ScalePlan {
            rows: SCALE_ROWS,
            runs: SCALE_RUNS,
            warmup: 0,
            order_seed: 5,
            baseline: "sqlite-unix-file".to_owned(),
        },
        &mut |_| {},
    ));

    let mut environment = bench_results::env::native();
    environment.sqlite_version = Some("test".to_owned());
    let config = RunConfig {
        preset: "test".to_owned(),
        suites: Suite::ALL.to_vec(),
        runs: RUNS,
        warmup: 1,
        seed: bench_sql::sql::DEFAULT_SEED,
        sql_scale: 100,
        files: 20,
        file_size_bytes: 1024,
        raw_small_calls: 4,
        raw_cycle_calls: 2,
        order_seed: Some(5),
        handoffs: Some(4),
        scale_rows: Some(SCALE_ROWS),
        scale_runs: Some(SCALE_RUNS),
        ..RunConfig::default()
    };
    let mut doc = Document::new("2026-12-01T00:00:00Z".to_owned(), config, environment);
    for b in &sql.backends {
        assert!(b.error.is_none(), "{}: {:?}", b.meta.name, b.error);
        doc.verifications
            .pass(format!("sql+batch: {}", b.meta.name));
    }
    doc.sql = Some(sql);
    doc.fs = fs.lifecycle;
    doc.raw = Some(raw);
    handoff.verify(&mut doc.verifications);
    doc.handoff = Some(handoff);
    for b in &scale.backends {
        assert!(b.error.is_none(), "{}: {:?}", b.meta.name, b.error);
        doc.verifications.pass(format!("scale: {}", b.meta.name));
    }
    doc.scale = Some(scale);
    doc.summarize(&Bootstrap::default());
    doc
}

#[test]
fn every_consumer_reads_what_the_producers_write() {
    let doc = document();
    let json = doc.to_json().unwrap();
    assert!(json.contains("\"schema_version\": 2"));

    // The loader: the same document, floats bit for bit (serde_json's float_roundtrip).
    let back = Document::from_json(&json).unwrap();
    assert_eq!(back, doc);
    assert!(!back.needs_summary(), "summaries travel with the document");

    // What the producer computed is there.
    let sql = back.sql.as_ref().unwrap();
    assert_eq!(sql.rounds.len(), 7);
    let ours = sql.backend("ours-memory-strict").unwrap();
    assert_eq!(ours.meta.reference.as_deref(), Some("sqlite-memory"));
    assert_eq!(ours.meta.package.as_deref(), Some("opfs-vfs"));
    let total = ours.ratios.as_ref().unwrap().total.unwrap();
    assert_eq!(total.n, RUNS as usize);
    assert!(total.lo.unwrap() <= total.median && total.median <= total.hi.unwrap());
    assert!(sql.goals.iter().any(|g| g.goal == "total-strict"));
    assert!(sql.goals.iter().any(|g| g.goal == "total-balanced"));
    // The flush floors, from the native backends' counters and the raw write+flush pairs:
    // every goal of ours against the reference has one (our native backends count every
    // case and the batch), no other goal has.
    for g in &sql.goals {
        assert_eq!(
            g.floor.is_some(),
            bench_results::goals::has_floor(&g.goal),
            "{}: {:?}",
            g.statement,
            g.floor
        );
    }
    let floor = sql
        .goals
        .iter()
        .filter(|g| g.goal == "total-strict")
        .find_map(|g| g.floor.as_ref())
        .unwrap();
    assert!(floor.flushes > 0 && floor.ratio > 1.0, "{floor:?}");
    // The Strict batch's floor: its one commit's flush on the reference's batch.
    let batch = sql
        .goals
        .iter()
        .find(|g| g.goal == "batch" && g.backend == "ours-memory-strict")
        .and_then(|g| g.floor.as_ref())
        .unwrap();
    let reference_batch = sql
        .backend("sqlite-memory")
        .unwrap()
        .summary
        .as_ref()
        .unwrap();
    assert_eq!(batch.flushes, 1, "{batch:?}");
    assert_eq!(batch.reference_ms, reference_batch.batch_ms.unwrap().median);
    let fs = back.fs.as_ref().unwrap();
    assert_eq!(fs.floors.len(), 4);
    assert!(fs.backends.iter().all(|b| b.summary.is_some()));
    assert!(back.raw.as_ref().unwrap().derived.is_some());
    let h = back.handoff.as_ref().unwrap();
    let w = &h.summary.as_ref().unwrap().workloads;
    assert_eq!(w.len(), 2);
    let r = w[0].ratio_to_floor.unwrap();
    assert_eq!(
        r.n, RUNS as usize,
        "paired with the floor, warm-up excluded"
    );
    assert!(r.lo.unwrap() <= r.median && r.median <= r.hi.unwrap());
    assert_eq!(h.goals.len(), 2);
    assert!(h.goals.iter().all(|g| g.goal == "handoff-floor"));
    let peer = &h.summary.as_ref().unwrap().peers[0];
    assert_eq!(peer.backend, "wasqlite-opfs-coopsync");
    assert_eq!(peer.workloads[0].ratio_to_floor.unwrap().n, RUNS as usize);
    // The scale section as run_scale produced it, summarized by the document.
    let s = back.scale.as_ref().unwrap();
    assert_eq!(s, doc.scale.as_ref().unwrap());
    assert!(s.summarized);
    assert_eq!((s.config.rows, s.config.runs), (SCALE_ROWS, SCALE_RUNS));
    assert_eq!(s.rounds.len(), SCALE_RUNS as usize);
    for b in &s.backends {
        assert_eq!(b.runs.len(), SCALE_RUNS as usize, "{}", b.meta.name);
        assert!(b.summary.as_ref().unwrap().logical_bytes.is_some());
    }
    let paired = s
        .ratios
        .iter()
        .filter(|r| r.backend == "ours-disk-strict")
        .count();
    assert_eq!(
        paired, 5,
        "every measure, bytes written included: {:?}",
        s.ratios
    );
    assert!(s.goals.iter().any(|g| g.goal == "scale-space"));

    // The runner's validation: nothing wrong.
    let v = validate(&json, &Suite::ALL);
    assert!(v.problems.is_empty(), "{:#?}", v.problems);

    // The runner's report, from the file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("2026-12-01-native.json");
    std::fs::write(&path, &json).unwrap();
    let entry = Entry::load(&path).unwrap();
    let md = markdown("2026-12-01", &[entry]);
    for needle in [
        "## Headline",
        "| Native | ours-memory-strict |",
        "÷ memory [95 %]",
        "## Goals",
        "ours-disk-balanced ÷ sqlite-memory, 16-case total ≤ 1.05",
        "| Ratio [95 %] | Floor | Verdict |",
        "  - strict floor (raw `append+flush` per flush): ours-memory-strict ",
        "### Filesystem lifecycle: 20 files × 1.0 KiB",
        "create ÷ floor",
        "### Raw OPFS per call",
        "### Multi-tab hand-off",
        "| two-writers |",
        "| wasqlite-opfs-coopsync · two-writers |",
        "- Peer wasqlite-opfs-coopsync (@journeyapps/wa-sqlite 2.0.6): ran in the same rounds",
        "two-writers hand-off ÷ closing and reopening two access handles ≤ 2.00",
        "order seed 5",
        "### Scale and space",
        "500 rows × 1,000 B (488.3 KiB) built in transactions of 10,000 rows · 2 measured round(s)",
        "| sqlite-unix-file (baseline) |",
        "Paired per round to `sqlite-unix-file`, median [95 % interval]:",
        "| ours-disk-strict | ",
        "ours-disk-strict bytes at rest ÷ logical bytes ≤ 1.10",
        "scale 500 rows × 2 round(s)",
    ] {
        assert!(md.contains(needle), "no {needle:?} in\n{md}");
    }
}

#[test]
fn a_corrupted_document_is_caught() {
    let mut doc = document();
    // A verdict that does not follow from its interval.
    let sql = doc.sql.as_mut().unwrap();
    let g = sql
        .goals
        .iter_mut()
        .find(|g| g.ratio.is_some_and(|r| r.lo.is_some()))
        .unwrap();
    g.verdict = match g.verdict {
        bench_results::goals::Verdict::Met => bench_results::goals::Verdict::NotMet,
        _ => bench_results::goals::Verdict::Met,
    };
    // A sample that belongs to no recorded round.
    sql.backends[0].runs[0].round = Some(99);
    // A scale run of an empty database, one with a negative time, a scale backend a round
    // short.
    let s = doc.scale.as_mut().unwrap();
    s.backends[0].runs[0].logical_bytes = 0;
    s.backends[0].runs[1].reopen_ms = -1.0;
    s.backends[1].runs.pop();
    let v = validate(&doc.to_json().unwrap(), &Suite::ALL);
    let text = v.problems.join("\n");
    assert!(text.contains("the rule gives"), "{text}");
    assert!(text.contains("does not list it"), "{text}");
    assert!(text.contains("run 1: no logical bytes"), "{text}");
    assert!(text.contains("run 2: reopen has time -1"), "{text}");
    assert!(text.contains("0 + 1 runs, expected 0 + 2"), "{text}");
}

/// Ours and the reference as they are; a persistent SQLite backend under a peer's name, capped
/// by `Plan::peer_runs` as the page caps its JavaScript peers.
enum Entrant {
    Ours(Ours<NativeBackend>),
    Peer(Ours<NativeBackend>),
}

impl Contestant for Entrant {
    fn meta(&self) -> BackendMeta {
        match self {
            Entrant::Ours(b) => b.meta(),
            Entrant::Peer(b) => BackendMeta {
                name: "peer-unix-file".to_owned(),
                package: Some("a-peer".to_owned()),
                ..b.meta()
            },
        }
    }
    async fn suite(&mut self, suite: &SqlSuite, turn: Turn) -> Result<SuiteRun, String> {
        let (Entrant::Ours(b) | Entrant::Peer(b)) = self;
        b.suite(suite, turn).await
    }
    async fn batch(&mut self, batch: &Batch, turn: Turn) -> Result<BatchRun, String> {
        let (Entrant::Ours(b) | Entrant::Peer(b)) = self;
        b.batch(batch, turn).await
    }
    fn capped(&self) -> bool {
        matches!(self, Entrant::Peer(_))
    }
}

/// A peer capped at 6 of 8 rounds: the round loop runs it in the warm-up and the first six,
/// its ratios and goals pair by round (six pairs, with intervals), the runner's validation
/// accepts exactly that shape (and not a capped one of ours, nor a peer in other rounds), and
/// the report's config line says so.
#[test]
fn a_peer_capped_by_peer_runs_validates_and_pairs_by_round() {
    const RUNS: u32 = 8;
    const PEER_RUNS: u32 = 6;
    let dir = tempfile::tempdir().unwrap();
    let (suite, batch) = bench_sql::workloads(bench_sql::sql::DEFAULT_SEED, 100);
    let mut contestants: Vec<Entrant> = NativeBackend::all(dir.path())
        .into_iter()
        .filter_map(|b| match b.name().as_str() {
            "sqlite-memory" | "ours-memory-strict" => Some(Entrant::Ours(Ours(b))),
            "sqlite-unix-file" => Some(Entrant::Peer(Ours(b))),
            _ => None,
        })
        .collect();
    assert_eq!(contestants.len(), 3);
    let plan = Plan {
        runs: RUNS,
        warmup: 1,
        peer_runs: Some(PEER_RUNS),
        order_seed: 11,
        suite: true,
        batch: true,
        batch_repeats: 1,
        data_dir: None,
        precision: None,
    };
    let sql = bench_sql::block_on(run_rounds(
        &mut contestants,
        &plan,
        &suite,
        &batch,
        &mut |_| {},
    ));
    let config = RunConfig {
        preset: "test".to_owned(),
        suites: vec![Suite::Sql, Suite::Batch],
        runs: RUNS,
        warmup: 1,
        peer_runs: Some(PEER_RUNS),
        seed: bench_sql::sql::DEFAULT_SEED,
        sql_scale: 100,
        order_seed: Some(11),
        ..RunConfig::default()
    };
    let mut doc = Document::new(
        "2026-12-01T00:00:00Z".to_owned(),
        config,
        bench_results::env::native(),
    );
    for b in &sql.backends {
        assert!(b.error.is_none(), "{}: {:?}", b.meta.name, b.error);
        doc.verifications
            .pass(format!("sql+batch: {}", b.meta.name));
    }
    doc.sql = Some(sql);
    doc.summarize(&Bootstrap::default());
    let json = doc.to_json().unwrap();
    assert!(json.contains("\"peer_runs\": 6"), "recorded in config");

    let sql = doc.sql.as_ref().unwrap();
    let peer = sql.backend("peer-unix-file").unwrap();
    assert_eq!(
        peer.runs.iter().map(|r| r.round).collect::<Vec<_>>(),
        (1..=PEER_RUNS).map(Some).collect::<Vec<_>>()
    );
    assert_eq!(sql.backend("ours-memory-strict").unwrap().runs.len(), 8);
    let total = peer.ratios.as_ref().unwrap().total.unwrap();
    assert_eq!(total.n, PEER_RUNS as usize);
    assert!(total.lo.is_some());
    let ours_total = sql.backend("ours-memory-strict").unwrap().ratios.as_ref();
    assert_eq!(ours_total.unwrap().total.unwrap().n, RUNS as usize);
    // The per-case goal pairs the peer with ours-memory-strict in the rounds both ran.
    let goal = sql
        .goals
        .iter()
        .find(|g| g.goal == "peer-per-case" && g.backend == "peer-unix-file")
        .unwrap();
    assert_eq!(goal.ratio.unwrap().n, PEER_RUNS as usize, "{goal:?}");

    let v = validate(&json, &Suite::ALL);
    assert!(v.problems.is_empty(), "{:#?}", v.problems);

    // A peer that ran in other rounds than the first measured ones is caught.
    let mut moved = doc.clone();
    let s = moved.sql.as_mut().unwrap();
    let i = s
        .backends
        .iter()
        .position(|b| b.meta.name == "peer-unix-file")
        .unwrap();
    s.backends[i].runs[0].round = Some(RUNS);
    let text = validate(&moved.to_json().unwrap(), &Suite::ALL)
        .problems
        .join("\n");
    assert!(text.contains("not the first measured ones"), "{text}");
    // One of ours may not be capped.
    let mut short = doc.clone();
    let s = short.sql.as_mut().unwrap();
    let i = s
        .backends
        .iter()
        .position(|b| b.meta.name == "ours-memory-strict")
        .unwrap();
    s.backends[i].runs.truncate(PEER_RUNS as usize);
    let text = validate(&short.to_json().unwrap(), &Suite::ALL)
        .problems
        .join("\n");
    assert!(
        text.contains("ours-memory-strict: 1 + 6 runs, expected 1 + 8"),
        "{text}"
    );

    let path = dir.path().join("2026-12-01-native.json");
    std::fs::write(&path, &json).unwrap();
    let md = markdown("2026-12-01", &[Entry::load(&path).unwrap()]);
    assert!(
        md.contains("rounds 8 after 1 warm-up (JavaScript peers: the first 6)"),
        "{md}"
    );
}
