#![cfg(target_arch = "wasm32")]
//! The full-size browser benchmark as a test (ignored by default: minutes per browser). Runs
//! [`run_browser`] with the default protocol (1 warm-up and 5 measured rounds, every backend,
//! full size) and prints one summary line per backend (medians, paired ratios to the memory
//! reference with their 95 % intervals) and the SQL section as JSON between
//! `BENCH-SQL-JSON-BEGIN` and `BENCH-SQL-JSON-END` lines. The published benchmark is the page
//! (`bash scripts/bench.sh`); this is for working on bench-sql alone. In release mode:
//!
//! ```sh
//! WASM_BINDGEN_TEST_TIMEOUT=3600 CHROMEDRIVER=/usr/bin/chromedriver \
//!   cargo test --release --target wasm32-unknown-unknown -p bench-sql --test browser_full \
//!   -- --include-ignored --nocapture
//! ```
//! (`GECKODRIVER=$(command -v geckodriver)` for Firefox.) Compile-time knobs:
//! `BENCH_SQL_RUNS` (measured rounds), `BENCH_SQL_BACKENDS` (comma-separated name filters),
//! `BENCH_SQL_COMMIT` (recorded in the environment).

use bench_results::{RatioStat, Stat};
use bench_sql::browser::{random_tag, run_browser, BrowserConfig};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn stat(s: Option<Stat>) -> String {
    s.map_or("n/a".to_owned(), |s| {
        format!("{:.1} ({:.1}-{:.1})", s.median, s.min, s.max)
    })
}

fn ratio(r: Option<RatioStat>) -> String {
    match r {
        Some(RatioStat {
            median,
            lo: Some(lo),
            hi: Some(hi),
            ..
        }) => format!("{median:.3} [{lo:.3}, {hi:.3}]"),
        Some(r) => format!("{:.3}", r.median),
        None => "n/a".to_owned(),
    }
}

#[wasm_bindgen_test]
#[ignore = "full-size benchmark (minutes); run with --include-ignored"]
async fn full_size() {
    let defaults = BrowserConfig::default();
    let config = BrowserConfig {
        runs: option_env!("BENCH_SQL_RUNS")
            .and_then(|r| r.parse().ok())
            .unwrap_or(defaults.runs),
        backends: option_env!("BENCH_SQL_BACKENDS")
            .map(|b| b.split(',').map(str::to_owned).collect())
            .unwrap_or_default(),
        commit: option_env!("BENCH_SQL_COMMIT").map(str::to_owned),
        opfs_root: format!("bench-sql-full-{}", random_tag()),
        ..defaults
    };
    let (env, sql) = run_browser(config, &mut |p| {
        if p.outcome.is_some() {
            console_log!("{p}");
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    console_log!(
        "SUMMARY {} {}: medians (min-max) in ms; paired ratios to the memory reference, median \
         [95 % interval]",
        env.browser.as_deref().unwrap_or("?"),
        env.browser_version.as_deref().unwrap_or("?"),
    );
    for b in &sql.backends {
        let s = b.summary.clone().unwrap_or_default();
        let r = b.ratios.clone().unwrap_or_default();
        console_log!(
            "SUMMARY {}: total {} | test 1 {} | tests 2-16 {} | batch {} | total÷ref {} | \
             2-16÷ref {} | batch÷ref {}{}",
            b.meta.name,
            stat(s.total_ms),
            stat(s.test1_ms),
            stat(s.tests_2_to_16_ms),
            stat(s.batch_ms),
            ratio(r.total),
            ratio(r.tests_2_to_16),
            ratio(r.batch),
            b.error
                .as_deref()
                .map_or(String::new(), |e| format!(" | FAILED: {e}")),
        );
    }
    for g in &sql.goals {
        console_log!("GOAL {}: {}", g.statement, g.verdict.as_str());
    }
    let json = serde_json::to_string_pretty(&sql).unwrap();
    console_log!("BENCH-SQL-JSON-BEGIN\n{json}\nBENCH-SQL-JSON-END");
}
