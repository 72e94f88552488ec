//! Golden test: the committed results of schema version 1 (`results/2026-11-30-*.json`) still
//! load, through the conversion documented in `bench_results::upgrade`, and get the summaries
//! version 1 did not have.

use std::path::PathBuf;

use bench_results::goals::Verdict;
use bench_results::summary::Metric;
use bench_results::Document;

fn load(browser: &str) -> Document {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../results")
        .join(format!("2026-11-30-{browser}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    Document::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn version_1_results_load_and_are_summarized() {
    for browser in ["chromium", "firefox"] {
        let doc = load(browser);
        assert_eq!((doc.schema_version, doc.upgraded_from), (2, Some(1)));
        assert_eq!(doc.config.runs, 5, "{browser}");
        // The page environment's `platform`/`hardware_concurrency` and bench-sql's runtime.
        assert!(doc.environment.os.as_deref().unwrap().starts_with("Linux"));
        assert_eq!(doc.environment.cpu_count, Some(2));
        assert_eq!(doc.environment.runtime.as_deref(), Some("browser"));
        assert_eq!(doc.environment.arch.as_deref(), Some("wasm32"));
        assert_eq!(
            doc.runner.as_ref().map(|r| r.browser.as_str()),
            Some(browser)
        );

        let sql = doc.sql.as_ref().unwrap();
        assert_eq!(sql.suite.scale_divisor, 1);
        assert_eq!(sql.backends.len(), 8, "{browser}");
        for b in &sql.backends {
            assert_eq!(b.runs.len(), 5, "{browser} {}", b.meta.name);
            assert_eq!(b.warmup_runs.len(), 1);
            let s = b.summary.as_ref().unwrap();
            assert_eq!(s.total_ms.unwrap().n, 5);
            assert_eq!(s.cases_ms.len(), 16);
            if b.meta.name == "sqlite-memvfs" {
                assert!(b.meta.is_reference() && b.ratios.is_none());
                continue;
            }
            let r = b.ratios.as_ref().unwrap();
            assert_eq!(r.reference, "sqlite-memvfs");
            // Five pairs: a median and a range, but too few for a 95 % interval.
            let total = r.total.unwrap();
            assert_eq!((total.n, total.lo, total.hi), (5, None, None), "{total:?}");
            assert!(total.min <= total.median && total.median <= total.max);
            assert_eq!(r.cases.len(), 16);
        }
        // Paired ratio = median of per-round ratios, which the file lets us recompute.
        let memvfs = sql.backend("sqlite-memvfs").unwrap();
        let sahpool = sql.backend("sahpool").unwrap();
        let mut per_round: Vec<f64> = sahpool
            .runs
            .iter()
            .zip(&memvfs.runs)
            .map(|(a, m)| Metric::Total.of(a, None).unwrap() / Metric::Total.of(m, None).unwrap())
            .collect();
        per_round.sort_by(f64::total_cmp);
        assert_eq!(
            sahpool.ratios.as_ref().unwrap().total.unwrap().median,
            per_round[2]
        );
        // Goals: version 1 has no `balanced` backend; strict, memory-vs-disk, the peer sahpool;
        // with five rounds none is decided.
        assert!(sql.goals.iter().all(|g| g.goal != "total-balanced"));
        assert!(sql.goals.iter().all(|g| g.verdict == Verdict::Undecided));
        assert!(sql.goals.iter().any(|g| g.goal == "total-strict"));
        assert_eq!(
            sql.goals
                .iter()
                .filter(|g| g.goal == "peer-per-case" && g.backend == "sahpool")
                .count(),
            32,
            "16 cases × 2 strict backends"
        );

        let fs = doc.fs.as_ref().unwrap();
        assert_eq!(fs.files, 1000);
        assert_eq!(fs.backends.len(), 7);
        assert!(!fs.floors.is_empty(), "floors from the raw suite");
        for b in &fs.backends {
            assert!(b.summary.is_some());
            assert_eq!(b.ratios.is_some(), b.name != "files-opfs", "{}", b.name);
        }
        let raw = doc.raw.as_ref().unwrap();
        assert!(raw.derived.as_ref().unwrap().call_floor_us.is_some());
        assert!(doc.verifications.all_passed);
    }
}
