//! End-to-end: the built page, served by the real serve binary, runs its quick preset in headless
//! Chromium and Firefox; the result JSON must validate (schema version, every verification
//! passed, results from every suite) and the page must log no console errors. A screenshot of
//! each browser's results view is saved to `target/e2e/<browser>-results.png`, with the result
//! JSON (`target/e2e/<date>-<browser>.json`) and the Markdown report rendered from it
//! (`target/e2e/report.md`).
//!
//! `#[ignore]`d: it needs the built page and the browsers, so plain `cargo test --workspace` does
//! not run it. `scripts/test.sh` runs it as its own gate after building the page
//! (`web/build.sh`) and the serve binary: `cargo test -p bench-runner --test e2e -- --ignored`.
//! Every missing piece is a failure. It never builds anything itself (a nested cargo would wait
//! forever on the lock held by the `cargo test` running it).
//!
//! Environment:
//! - `E2E_SERVE_BIN`: the serve binary (default: `target/release/serve`, else `target/debug/serve`).
//! - `E2E_PAGE_DIR`: the built page (default: `web/dist`).
//! - `E2E_BROWSERS`: `chromium,firefox` (default: both).
//! - `E2E_TIMEOUT_SECS`: per browser (default: 240).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_runner::child::start_serve;
use bench_runner::drive::{run_browser, DriveOptions};
use bench_runner::options::{
    built_serve, target_dir, workspace_root, Browser, PageParams, PageSource, Preset, Tools, SUITES,
};
use bench_runner::report::write_report;
use bench_runner::run::{annotate, check};
use bench_runner::util::{source_commit, today};

#[test]
#[ignore = "needs the built page and both browsers: scripts/test.sh runs it with --ignored"]
fn quick_preset_in_chromium_and_firefox() {
    let started = Instant::now();
    let root = workspace_root();
    let out = target_dir(&root).join("e2e");
    std::fs::create_dir_all(&out).unwrap();

    let page_dir = std::env::var_os("E2E_PAGE_DIR")
        .map_or_else(|| root.join("web").join("dist"), PathBuf::from);
    assert!(
        page_dir.join("index.html").is_file(),
        "e2e: the page is not built: {} has no index.html (run `bash web/build.sh`)",
        page_dir.display()
    );
    let serve_bin = std::env::var_os("E2E_SERVE_BIN")
        .map(PathBuf::from)
        .or_else(|| built_serve(&root))
        .unwrap_or_else(|| {
            panic!(
                "e2e: no serve binary in {}/{{release,debug}}/ (run `cargo build --release -p web \
                 --bin serve`, or set E2E_SERVE_BIN)",
                target_dir(&root).display()
            )
        });
    let browsers: Vec<Browser> = std::env::var("E2E_BROWSERS").map_or_else(
        |_| Browser::ALL.to_vec(),
        |v| v.split(',').map(|b| Browser::parse(b).unwrap()).collect(),
    );
    let timeout = Duration::from_secs(
        std::env::var("E2E_TIMEOUT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(240),
    );
    let tools = Tools::default();
    for (what, path) in [
        ("chromium", &tools.chromium),
        ("chromedriver", &tools.chromedriver),
        ("firefox", &tools.firefox),
        ("geckodriver", &tools.geckodriver),
    ] {
        assert!(
            path.is_file(),
            "e2e: {what} not found at {} (scripts/setup.sh installs it)",
            path.display()
        );
    }

    let suites: Vec<String> = SUITES.iter().map(|s| (*s).to_owned()).collect();
    let params = PageParams {
        suites: Some(suites.clone()),
        commit: source_commit(&root),
        ..PageParams::preset(Preset::Quick)
    };
    let date = today();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut failures: Vec<String> = Vec::new();
    let mut written = Vec::new();
    rt.block_on(async {
        let server = start_serve(
            &PageSource::Serve {
                bin: Some(serve_bin),
                dir: page_dir,
            },
            &root,
            &out,
        )
        .expect("e2e: starting serve");
        for &browser in &browsers {
            let t = Instant::now();
            let opts = DriveOptions {
                browser,
                tools: tools.clone(),
                page_url: server.url.clone(),
                params: params.clone(),
                timeout,
                window: (1280, 1600),
                screenshot: Some(out.join(format!("{}-results.png", browser.name()))),
                log_dir: out.clone(),
                verbose: true,
            };
            let outcome = match run_browser(&opts).await {
                Ok(o) => o,
                Err(e) => {
                    failures.push(format!("{browser}: {e}"));
                    continue;
                }
            };
            let (problems, warnings) = check(&outcome, &suites);
            for w in &warnings {
                eprintln!("e2e: {browser}: warning: {w}");
            }
            let json = out.join(format!("{date}-{}.json", browser.name()));
            let text = annotate(&outcome, &params.query(), &problems, &warnings).unwrap();
            std::fs::write(&json, text).unwrap();
            written.push(json);
            failures.extend(problems.iter().map(|p| format!("{browser}: {p}")));
            let shot = outcome.screenshot.as_ref().expect("screenshot path");
            let size = std::fs::metadata(shot).map_or(0, |m| m.len());
            if size < 1000 {
                failures.push(format!(
                    "{browser}: screenshot {} is {size} bytes",
                    shot.display()
                ));
            }
            eprintln!(
                "e2e: {browser}: {} in {:.1} s; screenshot {}",
                if problems.is_empty() { "ok" } else { "FAILED" },
                t.elapsed().as_secs_f64(),
                shot.display()
            );
        }
    });

    if !written.is_empty() {
        match write_report(&out, &date, &written, Some(&out.join("report.md"))) {
            Ok((path, _)) => eprintln!("e2e: report {}", path.display()),
            Err(e) => failures.push(format!("report: {e}")),
        }
    }
    eprintln!(
        "e2e: {} browser(s) in {:.1} s",
        browsers.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "e2e failed:\n  - {}",
        failures.join("\n  - ")
    );
}
