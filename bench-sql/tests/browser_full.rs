#![cfg(target_arch = "wasm32")]
//! The full-size browser benchmark as a test (ignored by default: minutes per browser). Runs
//! [`run_browser`] with the default protocol (1 warm-up, 5 measured runs, every backend, full
//! size) and prints the Markdown report, one summary line per backend, and the JSON result
//! between `BENCH-SQL-JSON-BEGIN` and `BENCH-SQL-JSON-END` lines. In release mode:
//!
//! ```sh
//! WASM_BINDGEN_TEST_TIMEOUT=3600 CHROMEDRIVER=/usr/bin/chromedriver \
//!   cargo test --release --target wasm32-unknown-unknown -p bench-sql --test browser_full \
//!   -- --include-ignored --nocapture
//! ```
//! (`GECKODRIVER=$(command -v geckodriver)` for Firefox.) Compile-time knobs:
//! `BENCH_SQL_RUNS` (measured runs), `BENCH_SQL_BACKENDS` (comma-separated name filters),
//! `BENCH_SQL_COMMIT` (recorded in the environment).

use bench_sql::browser::{random_tag, run_browser, BrowserConfig};
use bench_sql::report::{self, fmt_stat, BROWSER_REFERENCE};
use bench_sql::result::Stat;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn ratio(value: Option<Stat>, reference: Option<Stat>) -> String {
    match (value, reference) {
        (Some(v), Some(r)) if r.median > 0.0 => format!("{:.2}", v.median / r.median),
        _ => "n/a".to_owned(),
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
    let result = run_browser(config, &mut |p| {
        if p.ms.is_some() {
            console_log!("{p}");
        }
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));

    console_log!("{}", report::markdown(&result));

    let summaries: Vec<_> = result
        .backends
        .iter()
        .map(|b| (b, b.summary.clone().unwrap_or_else(|| b.summarize())))
        .collect();
    let reference = summaries
        .iter()
        .find(|(b, _)| b.name == BROWSER_REFERENCE)
        .map(|(_, s)| s.clone());
    let env = &result.environment;
    console_log!(
        "SUMMARY {} {}: 16-case total | test 1 | tests 2-16 | 10k batch (ms, median (min-max)); \
         ratios to {BROWSER_REFERENCE}",
        env.browser.as_deref().unwrap_or("?"),
        env.browser_version.as_deref().unwrap_or("?"),
    );
    for (b, s) in &summaries {
        let r = reference.as_ref();
        console_log!(
            "SUMMARY {}: total {} | test 1 {} | tests 2-16 {} | batch {} | total÷ref {} | \
             2-16÷ref {} | batch÷ref {} | test 1 counters {:?}",
            b.name,
            fmt_stat(s.total_ms),
            fmt_stat(s.test1_ms),
            fmt_stat(s.tests_2_to_16_ms),
            fmt_stat(s.batch_ms),
            ratio(s.total_ms, r.and_then(|r| r.total_ms)),
            ratio(s.tests_2_to_16_ms, r.and_then(|r| r.tests_2_to_16_ms)),
            ratio(s.batch_ms, r.and_then(|r| r.batch_ms)),
            b.median_counters(1),
        );
    }
    let json = result.to_json().unwrap();
    console_log!("BENCH-SQL-JSON-BEGIN\n{json}\nBENCH-SQL-JSON-END");
}
