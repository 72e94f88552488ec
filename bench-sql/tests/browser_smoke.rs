#![cfg(target_arch = "wasm32")]
//! Browser smoke test (dedicated worker, both browsers): every browser backend runs a
//! scaled-down suite and a small batch once through the whole lifecycle, and the verifications
//! pass (after reopen the suite's dropped tables are absent and every batch row is present);
//! our VFS reports physical counters; cleanup leaves no OPFS directory behind. Then
//! `run_browser` end to end at small size, with the environment filled in.
//!
//! ```sh
//! WASM_BINDGEN_TEST_TIMEOUT=300 wasm-pack test --headless --chrome --firefox --mode no-install bench-sql
//! ```

use bench_results::sql::{Engine, SqlSection};
use bench_sql::backend::SqlBackend;
use bench_sql::batch::Batch;
use bench_sql::browser::{
    parse_user_agent, random_tag, refine_with_brands, run_browser, BrowserBackend, BrowserConfig,
    OursOpfsBackend, SahpoolBackend,
};
use bench_sql::runner::{run_batch, run_suite, Progress, Workload};
use bench_sql::sql::{Suite, DEFAULT_SEED};
use bench_sql::BenchError;
use js_sys::{Array, Function, Promise, Reflect};
use opfs_vfs::{BufferMode, Durability};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// Every count divided by this: a few hundred rows per case.
const SCALE: u32 = 50;
/// Rows of the small batch.
const BATCH_ROWS: u32 = 200;

/// An OPFS root no other test or run uses.
fn unique_root(tag: &str) -> String {
    format!("bench-sql-test/{tag}-{}", random_tag())
}

async fn call_async(target: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = Reflect::get(target, &JsValue::from_str(method))?.dyn_into()?;
    let promise: Promise = f
        .apply(target, &args.iter().collect::<Array>())?
        .dyn_into()?;
    JsFuture::from(promise).await
}

/// Names in the OPFS directory `path` (`/`-separated), or `None` if it does not exist.
async fn opfs_entries(path: &str) -> Option<Vec<String>> {
    let global: JsValue = js_sys::global().into();
    let storage = Reflect::get(
        &Reflect::get(&global, &"navigator".into()).unwrap(),
        &"storage".into(),
    )
    .unwrap();
    let mut dir = call_async(&storage, "getDirectory", &[]).await.unwrap();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        match call_async(&dir, "getDirectoryHandle", &[part.into()]).await {
            Ok(d) => dir = d,
            Err(e) => {
                let name = Reflect::get(&e, &"name".into())
                    .ok()
                    .and_then(|n| n.as_string());
                assert_eq!(name.as_deref(), Some("NotFoundError"), "{e:?}");
                return None;
            }
        }
    }
    let keys: Function = Reflect::get(&dir, &"keys".into())
        .unwrap()
        .dyn_into()
        .unwrap();
    let iter = keys.call0(&dir).unwrap();
    let mut names = Vec::new();
    loop {
        let next = call_async(&iter, "next", &[]).await.unwrap();
        if Reflect::get(&next, &"done".into()).unwrap().is_truthy() {
            break;
        }
        names.push(
            Reflect::get(&next, &"value".into())
                .unwrap()
                .as_string()
                .unwrap(),
        );
    }
    Some(names)
}

/// Every backend: a small suite and batch through every phase, twice for the batch (fresh
/// state again), verifications passing, counters from ours, nothing left in OPFS.
#[wasm_bindgen_test]
async fn every_backend_small_run() {
    let root = unique_root("every-backend");
    let suite = Suite::generate_scaled(DEFAULT_SEED, SCALE);
    let batch = Batch::generate(DEFAULT_SEED, BATCH_ROWS);
    let backends = BrowserBackend::all(&root);
    // Six of ours, the two references, the two single-tab (`-exclusive`) references, the
    // two `-whole-pages` references, the two `-no-flush-ahead` references and the A/A control
    // (`sqlite-memvfs-twin`).
    assert_eq!(backends.len(), 15);
    for mut backend in backends {
        let name = backend.name();
        let s = run_suite(&mut backend, &suite)
            .await
            .unwrap_or_else(|e| panic!("{name}: suite: {e}"));
        assert_eq!(s.cases.len(), 16, "{name}");
        assert!(s.total_ms >= s.test1_ms, "{name}");
        let b = run_batch(&mut backend, &batch)
            .await
            .unwrap_or_else(|e| panic!("{name}: batch: {e}"));
        assert_eq!(b.rows, BATCH_ROWS, "{name}");

        // Persistent backends synced, reopened and verified; the memory VFS did none of it.
        let persistent = backend.persistent();
        assert_eq!(persistent, !name.starts_with("sqlite-memvfs"), "{name}");
        for phases in [&s.phases, &b.phases] {
            assert_eq!(phases.sync_ms.is_some(), persistent, "{name}");
            assert_eq!(phases.reopen_ms.is_some(), persistent, "{name}");
            assert_eq!(phases.verify_ms.is_some(), persistent, "{name}");
        }

        // Counters per case and for the batch: ours only.
        let ours = matches!(backend, BrowserBackend::Ours(_));
        assert!(
            s.cases.iter().all(|c| c.counters.is_some() == ours),
            "{name}"
        );
        assert_eq!(b.counters.is_some(), ours, "{name}");
        if let Some(c) = s.cases[0].counters {
            // Test 1 is autocommit: CREATE TABLE and 20 INSERTs, 21 commits. Strict writes and
            // flushes each; Relaxed writes each; Balanced keeps them in memory until a buffer's
            // worth has accumulated.
            if name.contains("-balanced") {
                assert!(c.writes < 21, "{name}: {c:?}");
            } else {
                assert!(c.writes >= 21 && c.bytes_written > 0, "{name}: {c:?}");
            }
            if name.ends_with("strict") {
                assert!(c.flushes >= 21, "{name}: {c:?}");
            }
        }
        if let Some(c) = b.counters {
            // One transaction: written at commit, except under Balanced (at the explicit sync).
            let expected = u64::from(!name.contains("-balanced"));
            assert!(c.writes >= expected, "{name}: {c:?}");
        }
        console_log!(
            "{name}: suite {:.1} ms (test 1 {:.1} ms, counters {:?}), batch {:.1} ms",
            s.total_ms,
            s.test1_ms,
            s.cases[0].counters,
            b.ms
        );

        // Fresh state again: a second run works the same.
        run_batch(&mut backend, &batch)
            .await
            .unwrap_or_else(|e| panic!("{name}: second batch: {e}"));
    }
    // Every cleanup removed its directory.
    let left = opfs_entries(&root).await.unwrap_or_default();
    assert!(left.is_empty(), "left in OPFS: {left:?}");
    bench_sql::browser::remove_opfs_dir(&root).await.unwrap();
}

/// The suite's reopen check catches a table that did not get dropped, on both OPFS backends,
/// and cleanup still runs.
#[wasm_bindgen_test]
async fn verification_detects_leftover_table() {
    let root = unique_root("verify");
    let mut suite = Suite::generate_scaled(DEFAULT_SEED, 100);
    suite.cases[15].sql = "DROP TABLE t1; DROP TABLE t2;".to_owned();
    let mut ours = OursOpfsBackend::new(&root, BufferMode::Disk, Durability::Strict);
    let err = run_suite(&mut ours, &suite).await.unwrap_err();
    assert!(matches!(err, BenchError::Verify(_)), "ours: {err}");
    let mut pool = SahpoolBackend::new(&root);
    let err = run_suite(&mut pool, &suite).await.unwrap_err();
    assert!(matches!(err, BenchError::Verify(_)), "sahpool: {err}");

    // The batch check after a reopen from OPFS: a batch one row short fails it.
    let batch = Batch::generate(DEFAULT_SEED, 50);
    let mut short = batch.clone();
    short.rows.pop();
    let mut ours = OursOpfsBackend::new(&root, BufferMode::Memory, Durability::Relaxed);
    ours.prepare().await.unwrap();
    let conn = ours.open().await.unwrap();
    short.setup(&conn).unwrap();
    short.run(&conn).unwrap();
    ours.close(conn).await.unwrap();
    let conn = ours.reopen().await.unwrap();
    assert!(matches!(batch.verify(&conn), Err(BenchError::Verify(_))));
    short.verify(&conn).unwrap();
    ours.close(conn).await.unwrap();
    ours.cleanup().await.unwrap();

    let left = opfs_entries(&root).await.unwrap_or_default();
    assert!(left.is_empty(), "left in OPFS: {left:?}");
    bench_sql::browser::remove_opfs_dir(&root).await.unwrap();
}

/// The benchmark entry point at small size: every backend, one warm-up and two measured
/// rounds in shuffled orders, progress reports, the environment, metadata, summaries with
/// paired ratios, JSON round trip, OPFS root removed.
#[wasm_bindgen_test]
async fn run_browser_small() {
    let opfs_root = unique_root("run-browser");
    let config = BrowserConfig {
        runs: 2,
        warmup: 1,
        scale: SCALE,
        opfs_root: opfs_root.clone(),
        commit: Some("test-commit".to_owned()),
        ..BrowserConfig::default()
    };
    let mut reports: Vec<Progress> = Vec::new();
    let (env, sql) = run_browser(config, &mut |p| reports.push(p.clone()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    // 10 backends × 3 rounds × 2 workloads, a report before and after each.
    assert_eq!(reports.len(), 120);
    assert_eq!(reports.last().unwrap().done, 60);
    assert_eq!(reports[0].total, 60);
    assert!(reports[0].warmup && reports[0].outcome.is_none());
    assert_eq!(reports[1].workload, Workload::Suite);
    assert!(matches!(reports[1].outcome, Some(Ok(_))));
    assert!(!reports.last().unwrap().warmup);

    assert_eq!(sql.suite.scale_divisor, SCALE);
    assert_eq!(sql.suite.batch_rows, 10_000 / SCALE);
    assert_eq!(
        sql.suite.sha256,
        Suite::generate_scaled(DEFAULT_SEED, SCALE).sha256()
    );
    assert_eq!((sql.config.runs, sql.config.warmup), (2, 1));
    assert_eq!(sql.rounds.len(), 3);
    assert!(sql.rounds.iter().all(|r| r.order.len() == 10));
    let names: Vec<&str> = sql.backends.iter().map(|b| b.meta.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "sqlite-memvfs",
            "sahpool",
            "ours-disk-strict",
            "ours-disk-relaxed",
            "ours-disk-balanced",
            "ours-memory-strict",
            "ours-memory-relaxed",
            "ours-memory-balanced",
            "ours-disk-strict-exclusive",
            "ours-memory-strict-exclusive",
        ]
    );
    for b in &sql.backends {
        assert_eq!(
            (b.warmup_runs.len(), b.runs.len()),
            (1, 2),
            "{}",
            b.meta.name
        );
        assert!(b.error.is_none(), "{:?}", b.error);
        let summary = b.summary.as_ref().unwrap();
        assert!(summary.total_ms.is_some() && summary.batch_ms.is_some());
        assert_eq!(summary.suite_phases.reopen_ms.is_some(), b.meta.persistent);
        assert!(!b.meta.durability.is_empty());
        assert_eq!(b.meta.engine, Engine::Sqlite);
        assert_eq!(b.meta.reference.as_deref(), Some("sqlite-memvfs"));
        assert!(b.meta.package.is_some() && b.meta.version.is_some());
        assert!(b.meta.durability_settings.is_some());
        // Two pairs: a median and a range, no interval (too few rounds).
        if b.meta.name != "sqlite-memvfs" {
            let total = b.ratios.as_ref().unwrap().total.unwrap();
            assert_eq!((total.n, total.lo), (2, None), "{}", b.meta.name);
        }
    }
    let memvfs = &sql.backends[0];
    assert!(!memvfs.meta.persistent && memvfs.ratios.is_none());
    assert_eq!(memvfs.meta.durability, bench_sql::backend::durability::NONE);
    assert!(
        sql.goals
            .iter()
            .all(|g| g.verdict == bench_results::goals::Verdict::Undecided),
        "no interval, no decision"
    );

    assert_eq!(env.runtime.as_deref(), Some("browser"));
    assert_eq!(env.commit.as_deref(), Some("test-commit"));
    assert!(env.user_agent.is_some() && env.browser.is_some() && env.browser_version.is_some());
    assert!(env.cpu_count.is_some_and(|n| n >= 1));
    assert!(
        env.timer_resolution_us.is_some_and(|us| us > 0.0),
        "{env:?}"
    );
    assert!(env.cross_origin_isolated.is_some() && env.opfs_available == Some(true));
    assert!(env.storage_quota_bytes.is_some_and(|q| q > 0), "{env:?}");
    assert!(env.sqlite_version.is_some() && env.os.is_some());

    // serde_json may read a float back one ulp off (no `float_roundtrip`): compare the parts
    // without measured floats.
    let json = serde_json::to_string(&sql).unwrap();
    let back: SqlSection = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (&back.suite, &back.config, &back.rounds),
        (&sql.suite, &sql.config, &sql.rounds)
    );
    assert_eq!(back.backends.len(), sql.backends.len());
    assert_eq!(back.backends[2].meta, sql.backends[2].meta);

    assert_eq!(opfs_entries(&opfs_root).await, None, "run root removed");
}

#[wasm_bindgen_test]
fn user_agents() {
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                  HeadlessChrome/156.0.0.0 Safari/537.36";
    assert_eq!(
        parse_user_agent(chrome),
        Some(("Chrome Headless".into(), "156.0.0.0".into()))
    );
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0";
    assert_eq!(
        parse_user_agent(firefox),
        Some(("Firefox".into(), "153.0".into()))
    );
    let edge = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) \
                Chrome/140.0.0.0 Safari/537.36 Edg/140.0.0.0";
    assert_eq!(
        parse_user_agent(edge),
        Some(("Edge".into(), "140.0.0.0".into()))
    );
    let safari = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 \
                  (KHTML, like Gecko) Version/26.0 Safari/605.1.15";
    assert_eq!(
        parse_user_agent(safari),
        Some(("Safari".into(), "26.0".into()))
    );
    assert_eq!(parse_user_agent("curl/8"), None);

    // Chromium says "Chrome" in its user agent; the brand list tells.
    let brands = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter()
            .map(|(b, v)| ((*b).to_owned(), (*v).to_owned()))
            .collect()
    };
    let chromium = brands(&[("Not)A;Brand", "8.0.0.0"), ("Chromium", "156.0.8078.114")]);
    let headless = parse_user_agent(chrome).unwrap();
    assert_eq!(
        refine_with_brands(headless.clone(), &chromium),
        ("Chromium Headless".into(), "156.0.8078.114".into())
    );
    let chrome_brands = brands(&[
        ("Chromium", "156.0.8078.114"),
        ("Google Chrome", "156.0.8078.114"),
    ]);
    assert_eq!(
        refine_with_brands(("Chrome".into(), "156.0.0.0".into()), &chrome_brands),
        ("Chrome".into(), "156.0.8078.114".into())
    );
    // A disagreeing major version keeps the user agent's; other browsers are left alone.
    let other = brands(&[("Chromium", "157.0.1.2")]);
    assert_eq!(refine_with_brands(headless.clone(), &other), headless);
    let fx = parse_user_agent(firefox).unwrap();
    assert_eq!(refine_with_brands(fx.clone(), &chromium), fx);
}
