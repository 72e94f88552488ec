//! End-to-end: the template app (`examples/notes-app`) as a new user gets it. The test
//!
//! 1. copies the template to a directory OUTSIDE the workspace (default
//!    `$TMPDIR/opfs-vfs-notes-app-e2e`), so that cargo does not read this repository's
//!    `.cargo/config.toml` (cargo looks for config files from the current directory upwards; the
//!    test fails if any ancestor of the copy has one), and rewrites the one `opfs-vfs` path line
//!    to this checkout's `vfs/`;
//! 2. builds it with its one command, `./build.sh`, in an environment without what `cargo test`
//!    adds (the `[env]` of this repository's config, e.g. `SQLITE_WASM_RS_FLAGS`, and the
//!    `CARGO_*` variables of the test itself);
//! 3. serves `dist/` with a plain static server (axum + tower-http `ServeDir`, no COOP/COEP
//!    headers: the page must not need cross-origin isolation);
//! 4. in headless Chromium and Firefox (fresh profiles): adds notes through the form, deletes
//!    one, reloads and finds them, opens a second tab that shows the same notes, writes in both
//!    tabs and sees each tab show the other's notes (the volume is shared: the tabs take
//!    turns), navigates the first tab away and reloads the second; then two tabs and a frame
//!    in one of them (three workers) write at once (`E2E_TAB_INSERTS`, default 500, writes
//!    each: autocommit INSERTs, every 25th a transaction of three; exact contents and
//!    `integrity_check` after), and again two tabs with one closed once a third of its INSERTs
//!    are acknowledged (none of those may be lost, the other tab finishes alone), then a tab
//!    whose worker is terminated in the middle of a big transaction (all or none of it, the
//!    committed ones whole, the other tab writes on); and checks
//!    `PRAGMA compile_options` of the built
//!    SQLite (no `ENABLE_BATCH_ATOMIC_WRITE`: proof that the repository's flags did not apply)
//!    and `PRAGMA integrity_check`;
//! 5. LAST, counts physical flushes per autocommit INSERT under `Durability::Strict` through the
//!    page's `stats` hook: exactly one each (after one uncounted INSERT: the first write after a
//!    mount also flushes the data file once). This is checked after everything else, in both
//!    browsers, so the rest can be seen passing; the measured counts are printed either way.
//!
//! Screenshots, the build log and driver logs go to `target/template-e2e/`. The copy, the
//! build, the server and the page helpers are shared with `kill_e2e.rs` and `quota_e2e.rs`
//! (`common/mod.rs`).
//!
//! `#[ignore]`d (it needs a wasm toolchain, clang and both browsers; the build takes minutes on a
//! cold cache): `scripts/test.sh` runs it as a gate with
//! `cargo test -p bench-runner --test template_e2e -- --ignored --nocapture`.
//!
//! Environment:
//! - `E2E_BROWSERS`: `chromium,firefox` (default: both).
//! - `E2E_TEMPLATE_COPY`: where the copy goes (must be outside the workspace; wiped first).
//! - `E2E_TEMPLATE_TARGET`: the copy's cargo target directory (default
//!   `target/notes-app-e2e`, kept between runs so only the changed crates rebuild).
//! - `E2E_TIMEOUT_SECS`: per wait for the page (default: 60).
//! - `WASM_OPT`: passed to `build.sh` (default: `tools/binaryen/node_modules/.bin/wasm-opt` when
//!   installed, else `off`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use bench_runner::drive::{capabilities, save_screenshot};
use bench_runner::options::{Browser, Tools};
use common::{
    add_through_form, expect_notes, request, script, wait_notes, wait_state, Res, WINDOW,
};
use fantoccini::wd::WindowHandle;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

/// INSERTs whose flushes are counted, per browser.
const FLUSH_PROBES: usize = 5;

#[test]
#[ignore = "builds the template and needs both browsers: scripts/test.sh runs it with --ignored"]
fn notes_app_template_outside_the_workspace() {
    let started = Instant::now();
    let out = common::out_dir("template-e2e");
    // 1 + 2: the copy outside the workspace, built with its one command.
    let dist = common::build_template("", &out);

    // 3 + 4 + 5.
    let browsers = common::browsers();
    let timeout = common::page_timeout();
    let tools = Tools::default();
    let rt = common::runtime();
    let mut failures = Vec::new();
    let mut flush_failures = Vec::new();
    rt.block_on(async {
        let served = common::serve(dist.clone(), axum::Router::new())
            .await
            .expect("e2e: static server");
        let url = served.url.clone();
        eprintln!("e2e: serving {} at {url} (no COOP/COEP headers)", dist.display());
        for &browser in &browsers {
            let t = Instant::now();
            match run_browser(browser, &tools, &url, &out, timeout).await {
                Ok(report) => {
                    eprintln!(
                        "e2e: {browser}: every check before the flush count passed in {:.1} s",
                        t.elapsed().as_secs_f64()
                    );
                    let per_insert: Vec<u64> = report.probes.iter().map(|p| p.flushes).collect();
                    eprintln!(
                        "e2e: {browser}: per autocommit INSERT (Strict): flushes {:?}, writes {:?}, \
                         bytes written {:?}, atomic batches {:?}, xSync calls {:?}",
                        per_insert,
                        report.probes.iter().map(|p| p.writes).collect::<Vec<_>>(),
                        report.probes.iter().map(|p| p.written_bytes).collect::<Vec<_>>(),
                        report.probes.iter().map(|p| p.atomic_commits).collect::<Vec<_>>(),
                        report.probes.iter().map(|p| p.syncs).collect::<Vec<_>>(),
                    );
                    if per_insert.iter().any(|&f| f != 1) {
                        flush_failures.push(format!(
                            "{browser}: flushes per autocommit INSERT under Strict were \
                             {per_insert:?}, expected exactly 1 each"
                        ));
                    }
                }
                Err(e) => failures.push(format!("{browser}: {e}")),
            }
        }
        drop(served);
    });
    eprintln!(
        "e2e: template, {} browser(s), {:.1} s in all",
        browsers.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "template e2e failed:\n  - {}",
        failures.join("\n  - ")
    );
    // Last, on purpose (see the module docs).
    assert!(
        flush_failures.is_empty(),
        "template e2e: everything else passed, but the commit cost is wrong:\n  - {}",
        flush_failures.join("\n  - ")
    );
}

// ---------------------------------------------------------------------------------------------
// One browser
// ---------------------------------------------------------------------------------------------

/// What one INSERT cost (differences of two `stats` readings).
#[derive(Debug, Default)]
struct Probe {
    flushes: u64,
    writes: u64,
    written_bytes: u64,
    atomic_commits: u64,
    syncs: u64,
}

#[derive(Debug)]
struct Report {
    probes: Vec<Probe>,
}

async fn run_browser(
    browser: Browser,
    tools: &Tools,
    url: &str,
    out: &Path,
    timeout: Duration,
) -> Res<Report> {
    let profile = tempfile::Builder::new()
        .prefix("template-e2e-profile-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let window = WINDOW;
    let caps = capabilities(browser, tools, window, profile.path());
    let session = common::start_session(browser, tools, &out.join(browser.name()), caps).await?;
    let client = &session.client;
    let result = steps(client, browser, url, out, timeout).await;
    if let Err(e) = &result {
        let shot = out.join(format!("{}-failure.png", browser.name()));
        if save_screenshot(client, &shot, window).await.is_ok() {
            eprintln!(
                "e2e: {browser}: failed ({e}); screenshot {}",
                shot.display()
            );
        }
    }
    session.close().await;
    result
}

async fn steps(
    client: &Client,
    browser: Browser,
    url: &str,
    out: &Path,
    timeout: Duration,
) -> Res<Report> {
    let step = |what: &str| eprintln!("e2e: {browser}: {what}");

    step("open the page");
    client.goto(url).await.map_err(|e| e.to_string())?;
    wait_state(client, "ready", timeout).await?;
    let context = script(
        client,
        "return [window.isSecureContext, window.crossOriginIsolated];",
    )
    .await?;
    if context != json!([true, false]) {
        return Err(format!(
            "expected a secure, not cross-origin isolated page; [isSecureContext, \
             crossOriginIsolated] = {context}"
        ));
    }
    expect_notes(client, &[]).await?;

    step("add three notes through the form, delete one");
    let texts = [
        "first note",
        "second note",
        "third note: ünïcødé & <b>markup</b>",
    ];
    for (i, text) in texts.iter().enumerate() {
        add_through_form(client, text).await?;
        let mut want: Vec<&str> = texts[..=i].to_vec();
        want.reverse();
        wait_notes(client, &want, timeout).await?;
    }
    let delete = client
        .find(Locator::XPath(
            "//ul[@id='notes']/li[span[@class='text' and text()='second note']]/button[@class='delete']",
        ))
        .await
        .map_err(|e| format!("the Delete button of 'second note': {e}"))?;
    delete.click().await.map_err(|e| e.to_string())?;
    let kept = [texts[2], texts[0]];
    wait_notes(client, &kept, timeout).await?;

    step("reload: the notes persist");
    client.refresh().await.map_err(|e| e.to_string())?;
    wait_state(client, "ready", timeout).await?;
    wait_notes(client, &kept, timeout).await?;

    step("second tab: the same notes; both tabs write and see each other's notes");
    let first = client.window().await.map_err(|e| e.to_string())?;
    let second = open_app_tab(client, url, timeout).await?;
    wait_notes(client, &kept, timeout).await?;
    add_through_form(client, "fourth note, from tab 2").await?;
    let with_fourth = ["fourth note, from tab 2", texts[2], texts[0]];
    wait_notes(client, &with_fourth, timeout).await?;
    let shot = out.join(format!("{}-second-tab.png", browser.name()));
    save_screenshot(client, &shot, WINDOW)
        .await
        .map_err(|e| e.to_string())?;
    client
        .switch_to_window(first.clone())
        .await
        .map_err(|e| e.to_string())?;
    // The first tab was told of the change (BroadcastChannel) and shows it; then it writes,
    // taking the volume back from the second tab.
    wait_notes(client, &with_fourth, timeout).await?;
    add_through_form(client, "fifth note, from tab 1").await?;
    let all = [
        "fifth note, from tab 1",
        "fourth note, from tab 2",
        texts[2],
        texts[0],
    ];
    wait_notes(client, &all, timeout).await?;
    let turns = script(client, "return window.notesApp.request('stats');").await?;
    step(&format!("tab 1 after taking the volume back: {turns}"));
    client
        .switch_to_window(second.clone())
        .await
        .map_err(|e| e.to_string())?;
    wait_notes(client, &all, timeout).await?;

    step("first tab navigates away (pagehide ends its worker); the second tab carries on");
    client
        .switch_to_window(first.clone())
        .await
        .map_err(|e| e.to_string())?;
    client
        .goto("about:blank")
        .await
        .map_err(|e| e.to_string())?;
    client
        .switch_to_window(second)
        .await
        .map_err(|e| e.to_string())?;
    client.refresh().await.map_err(|e| e.to_string())?;
    wait_state(client, "ready", timeout).await?;
    wait_notes(client, &all, timeout).await?;
    let shot = out.join(format!("{}-notes.png", browser.name()));
    save_screenshot(client, &shot, WINDOW)
        .await
        .map_err(|e| e.to_string())?;

    step("SQLite compile options of the built module");
    let options = request(client, "compileOptions", Value::Null).await?;
    let options: Vec<&str> = options
        .as_array()
        .ok_or_else(|| format!("compileOptions returned {options}"))?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if options.is_empty() {
        return Err("PRAGMA compile_options returned nothing".into());
    }
    let batch = options.contains(&"ENABLE_BATCH_ATOMIC_WRITE");
    step(&format!(
        "{} compile options; ENABLE_BATCH_ATOMIC_WRITE {}",
        options.len(),
        if batch { "PRESENT" } else { "absent" }
    ));
    if batch {
        return Err(
            "the template's SQLite has ENABLE_BATCH_ATOMIC_WRITE: this repository's \
             .cargo/config.toml or environment reached a build that must be like a user's (if \
             opfs-vfs now sets the flag by itself, this check is obsolete)"
                .into(),
        );
    }

    step("PRAGMA integrity_check");
    common::integrity_check(client).await?;

    two_tabs_interleave(client, browser, url, timeout).await?;
    closed_mid_transaction(client, browser, url, timeout).await?;

    // The first write after a mount also flushes the data file once (vfs/DESIGN.md,
    // "Recovery": a once-per-mount cost, not a per-commit one). This tab's worker last took the
    // volume over from the tab closed above, which may count as a mount: one INSERT first, not
    // counted but reported.
    let before = stats(client).await?;
    request(client, "add", json!("after the mount")).await?;
    let after = stats(client).await?;
    step(&format!(
        "first INSERT after the mount: {} flush(es) (includes the once-per-mount data-file flush)",
        after["flushes"] - before["flushes"]
    ));
    step(&format!(
        "count flushes of {FLUSH_PROBES} autocommit INSERTs (stats hook)"
    ));
    let mut probes = Vec::new();
    for i in 0..FLUSH_PROBES {
        let before = stats(client).await?;
        let id = request(client, "add", json!(format!("flush probe {i}"))).await?;
        if id.as_u64().is_none_or(|id| id == 0) {
            return Err(format!("add returned {id}, expected the new note's id"));
        }
        let after = stats(client).await?;
        let d = |k: &str| after.get(k).copied().unwrap_or(0) - before.get(k).copied().unwrap_or(0);
        probes.push(Probe {
            flushes: d("flushes"),
            writes: d("writes"),
            written_bytes: d("writtenBytes"),
            atomic_commits: d("atomicCommits"),
            syncs: d("syncs"),
        });
    }
    Ok(Report { probes })
}

// ---------------------------------------------------------------------------------------------
// Two tabs writing at once, and one of them closed while it writes
// ---------------------------------------------------------------------------------------------

/// Autocommit INSERTs per tab and round (`E2E_TAB_INSERTS`, default 500).
fn tab_inserts() -> usize {
    std::env::var("E2E_TAB_INSERTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

/// In the current tab (which is on the app, ready), a frame of the app added to it, and a new
/// tab: the three workers write at the same time, each `tab_inserts()` writes in a row through
/// the page's request surface (autocommit INSERTs, every `TXN_EVERY`-th a transaction of
/// three), so the shared volume changes hands between them (Web Lock + hand-off) as often as
/// the engine lets it. Then the exact contents and `integrity_check`, and the frame goes. Then a
/// second round in which the new tab is CLOSED once it has had some of its INSERTs
/// acknowledged: its worker dies wherever it is (holding the volume, mid-commit, or waiting
/// for its turn), the browser releases its lock, and the first tab carries on alone. Every
/// INSERT acknowledged in the closed tab must be there, none twice, and the first tab's
/// round complete. Leaves the current tab selected, with the new tab closed.
async fn two_tabs_interleave(
    client: &Client,
    browser: Browser,
    url: &str,
    timeout: Duration,
) -> Res<()> {
    let step = |what: &str| eprintln!("e2e: {browser}: {what}");
    let n = tab_inserts();
    let before: Vec<String> = common::list_notes(client)
        .await?
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let a = client.window().await.map_err(|e| e.to_string())?;
    let b = open_app_tab(client, url, timeout).await?;
    let switch = |w: WindowHandle| async move {
        client.switch_to_window(w).await.map_err(|e| e.to_string())
    };

    // Round 1: three contexts to the end — tab A, a frame in tab A (the same page: its own
    // worker), tab B — each writing n times, every TXN_EVERY-th write a transaction.
    step(&format!(
        "two tabs and a frame write at once: {n} writes each (autocommit INSERTs; every \
         {TXN_EVERY}th a transaction of 3)"
    ));
    switch(a.clone()).await?;
    client
        .execute(
            "const f = document.createElement('iframe');
             f.id = 'third-context';
             f.src = arguments[0];
             document.body.appendChild(f);
             return true;",
            vec![json!(url)],
        )
        .await
        .map_err(|e| format!("adding a frame: {e}"))?;
    client
        .enter_frame(0)
        .await
        .map_err(|e| format!("entering the frame: {e}"))?;
    wait_state(client, "ready", timeout).await?;
    client
        .enter_parent_frame()
        .await
        .map_err(|e| e.to_string())?;
    let t = Instant::now();
    switch(b.clone()).await?;
    start_inserts(client, "tab B", n, TXN_EVERY).await?;
    switch(a.clone()).await?;
    let turns_before = request(client, "stats", Value::Null).await?;
    client
        .enter_frame(0)
        .await
        .map_err(|e| format!("entering the frame: {e}"))?;
    start_inserts(client, "frame A", n, TXN_EVERY).await?;
    client
        .enter_parent_frame()
        .await
        .map_err(|e| e.to_string())?;
    start_inserts(client, "tab A", n, TXN_EVERY).await?;
    let limit = timeout * 10;
    let contexts = [
        ("tab A", &a, false),
        ("frame A", &a, true),
        ("tab B", &b, false),
    ];
    let mut done = [false; 3];
    while done.iter().any(|d| !d) {
        for (i, (name, w, frame)) in contexts.iter().enumerate() {
            if done[i] {
                continue;
            }
            switch((*w).clone()).await?;
            if *frame {
                client.enter_frame(0).await.map_err(|e| e.to_string())?;
            }
            let p = inserts_progress(client).await?;
            if *frame {
                client
                    .enter_parent_frame()
                    .await
                    .map_err(|e| e.to_string())?;
            }
            if let Some(e) = p.error {
                return Err(format!(
                    "{name}: write {} of {n} failed: {e}",
                    p.acked.len() + 1
                ));
            }
            done[i] = p.done;
        }
        if t.elapsed() > limit {
            return Err(format!(
                "three contexts: {n} writes each not done in {limit:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let secs = t.elapsed().as_secs_f64();
    switch(a.clone()).await?;
    let turns_after = request(client, "stats", Value::Null).await?;
    let mut want: Vec<String> = before.clone();
    for tag in ["tab A", "frame A", "tab B"] {
        want.extend(texts_of(tag, n, TXN_EVERY));
    }
    let commits = 3 * n;
    step(&format!(
        "two tabs and a frame: {commits} commits ({} notes) in {secs:.1} s ({:.2} ms per \
         commit); tab A's turn counters before {turns_before}, after {turns_after}",
        want.len() - before.len(),
        secs * 1e3 / commits as f64
    ));
    check_exact(
        &common::list_notes(client).await?,
        &want,
        "after two tabs and a frame wrote at once",
    )?;
    common::integrity_check(client).await?;
    // The frame goes (its page unloads, its worker ends): round 2 is two tabs.
    script(
        client,
        "document.getElementById('third-context').remove(); return true;",
    )
    .await?;

    // Round 2: tab B is closed while it writes.
    step("again, and tab B is closed after some of its INSERTs are acknowledged");
    switch(b.clone()).await?;
    start_inserts(client, "closed B", n, 0).await?;
    switch(a.clone()).await?;
    start_inserts(client, "survivor A", n, 0).await?;
    switch(b.clone()).await?;
    let t = Instant::now();
    let acked_b = loop {
        let p = inserts_progress(client).await?;
        if let Some(e) = p.error {
            return Err(format!("tab B before its close: an INSERT failed: {e}"));
        }
        // A third of the way: both tabs are writing, and B's worker is busy when it dies.
        if p.acked.len() >= n / 3 || p.done {
            break p.acked;
        }
        if t.elapsed() > limit {
            return Err(format!(
                "tab B: {} of {n} INSERTs in {limit:?}",
                p.acked.len()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // INSERTs acknowledged between that reading and the close are in the database too; the
    // check is that every one read here is.
    client
        .close_window()
        .await
        .map_err(|e| format!("closing tab B: {e}"))?;
    switch(a.clone()).await?;
    let t = Instant::now();
    loop {
        let p = inserts_progress(client).await?;
        if let Some(e) = p.error {
            return Err(format!(
                "tab A after tab B was closed: INSERT {} of {n} failed: {e}",
                p.acked.len() + 1
            ));
        }
        if p.done {
            break;
        }
        if t.elapsed() > limit {
            return Err(format!(
                "tab A alone: {} of {n} INSERTs in {limit:?}",
                p.acked.len()
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let notes = common::list_notes(client).await?;
    let in_db_b: Vec<&str> = notes
        .iter()
        .map(|(_, t)| t.as_str())
        .filter(|t| t.starts_with("closed B "))
        .collect();
    let lost: Vec<&String> = acked_b
        .iter()
        .filter(|t| !in_db_b.contains(&t.as_str()))
        .collect();
    if !lost.is_empty() {
        return Err(format!(
            "closing tab B lost {} acknowledged INSERT(s): {lost:?}",
            lost.len()
        ));
    }
    // The rest is exact: what was there, round 2 of tab A complete, and B's INSERTs a prefix
    // (B wrote them in order) at least as long as what B saw acknowledged.
    want.extend((0..n).map(|i| format!("survivor A {i}")));
    want.extend((0..in_db_b.len()).map(|i| format!("closed B {i}")));
    check_exact(&notes, &want, "after tab B was closed mid-write")?;
    common::integrity_check(client).await?;
    step(&format!(
        "tab B closed with {} INSERT(s) acknowledged (read before the close); {} of its \
         INSERTs are in the database; tab A's {n} all there, integrity ok",
        acked_b.len(),
        in_db_b.len()
    ));
    Ok(())
}

/// A tab closed in the middle of a big transaction: in a new tab, one `addMany` transaction
/// of `m` notes is timed (`m` doubled from 10,000 until it takes at least 300 ms, at most
/// 160,000), then a second one of the same size is started and, halfway through its measured
/// time — while its worker holds the volume inside the transaction — the worker is terminated
/// (the page's `pagehide` handler, dispatched by hand: what a navigation away does) and the
/// tab closed. The
/// tab we come back to must find the first transaction's notes all there and the second's
/// all or none (none is what a close mid-transaction gives; all, a commit that beat the
/// close), `integrity_check` ok, and go on writing. Leaves the first tab selected.
async fn closed_mid_transaction(
    client: &Client,
    browser: Browser,
    url: &str,
    timeout: Duration,
) -> Res<()> {
    let step = |what: &str| eprintln!("e2e: {browser}: {what}");
    let a = client.window().await.map_err(|e| e.to_string())?;
    let (total_before, _) = count_notes(client, "").await?;
    open_app_tab(client, url, timeout).await?;
    // In the page: one transaction of `m` generated notes, timed; progress in window.__many.
    let start_many = |tag: &'static str, m: u64| async move {
        client
            .execute(
                "const [tag, m] = arguments;
                 const texts = Array.from({ length: m }, (_, i) => `${tag} ${i} ${'x'.repeat(40)}`);
                 const run = (window.__many = { ms: null, error: null });
                 // postMessage clones the texts before it returns: time only what follows.
                 window.notesApp.request('addMany', texts).then(
                     () => { run.ms = performance.now() - t; },
                     (e) => { run.error = `${e?.name}: ${e?.message ?? e}`; });
                 const t = performance.now();
                 return true;",
                vec![json!(tag), json!(m)],
            )
            .await
            .map_err(|e| format!("starting addMany({m}): {e}"))
    };
    let mut m = 10_000u64;
    let mut calibrated = Vec::new();
    let took = loop {
        start_many("calibration", m).await?;
        let t = Instant::now();
        let ms = loop {
            let v = script(client, "return window.__many;").await?;
            if let Some(e) = v["error"].as_str() {
                return Err(format!("addMany({m}) failed: {e}"));
            }
            if let Some(ms) = v["ms"].as_f64() {
                break ms;
            }
            if t.elapsed() > timeout * 10 {
                return Err(format!("addMany({m}) not done in {:?}", timeout * 10));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        calibrated.push((m, ms));
        if ms >= 300.0 || m >= 160_000 {
            break Duration::from_secs_f64(ms / 1e3);
        }
        m *= 2;
    };
    let committed: u64 = calibrated.iter().map(|(m, _)| m).sum();
    step(&format!(
        "closed mid-transaction: addMany transactions {calibrated:?} (notes, ms); now \
         {m} more, and the tab's worker is terminated {} ms after the start",
        (took / 2).as_millis()
    ));
    start_many("doomed", m).await?;
    tokio::time::sleep(took / 2).await;
    // The page's own pagehide handler terminates its worker (as a navigation away does), at
    // once and wherever the worker is; then the tab goes. What the page had heard just before:
    let v = script(
        client,
        "const v = { ...window.__many }; dispatchEvent(new Event('pagehide')); return v;",
    )
    .await?;
    let finished_first = v["ms"].as_f64().is_some() || v["error"].as_str().is_some();
    client
        .close_window()
        .await
        .map_err(|e| format!("closing the tab: {e}"))?;
    client
        .switch_to_window(a.clone())
        .await
        .map_err(|e| e.to_string())?;
    let (total, doomed) = count_notes(client, "doomed ").await?;
    let (_, calibration) = count_notes(client, "calibration ").await?;
    if calibration != committed {
        return Err(format!(
            "after the close: {calibration} of the {committed} notes of the committed \
             transactions"
        ));
    }
    if doomed != 0 && doomed != m {
        return Err(format!(
            "the transaction closed mid-way left {doomed} of its {m} notes: not atomic"
        ));
    }
    if total != total_before + committed + doomed {
        return Err(format!(
            "after the close: {total} notes, expected {} + {committed} + {doomed}",
            total_before
        ));
    }
    common::integrity_check(client).await?;
    for i in 0..10 {
        request(client, "add", json!(format!("after the close {i}"))).await?;
    }
    let (_, after) = count_notes(client, "after the close ").await?;
    if after != 10 {
        return Err(format!("after the close: {after} of 10 new notes"));
    }
    step(&format!(
        "closed mid-transaction: {} of the closed tab's {m} uncommitted notes are in the \
         database ({}; the tab's page had {}seen it finish), the {committed} committed ones \
         all; integrity ok; this tab wrote 10 more",
        doomed,
        if doomed == 0 {
            "rolled back"
        } else {
            "the commit beat the close"
        },
        if finished_first { "" } else { "not " }
    ));
    if finished_first && doomed == 0 {
        return Err("the closed tab saw its transaction finish, but its notes are gone".into());
    }
    Ok(())
}

/// Opens a new tab, switches to it and loads the app at `url` until it is ready; returns the
/// tab's handle.
async fn open_app_tab(client: &Client, url: &str, timeout: Duration) -> Res<WindowHandle> {
    let tab = client
        .new_window(true)
        .await
        .map_err(|e| format!("opening another tab: {e}"))?
        .handle;
    client
        .switch_to_window(tab.clone())
        .await
        .map_err(|e| e.to_string())?;
    client.goto(url).await.map_err(|e| e.to_string())?;
    wait_state(client, "ready", timeout).await?;
    Ok(tab)
}

/// In the current tab: how many notes there are, and how many start with `prefix` (counted in
/// the page, so that a large list does not cross WebDriver).
async fn count_notes(client: &Client, prefix: &str) -> Res<(u64, u64)> {
    let v = client
        .execute_async(
            "const [prefix, done] = arguments;
             window.notesApp.request('list').then(
                 (ns) => done([ns.length, ns.filter((n) => n.text.startsWith(prefix)).length]),
                 (e) => done({ error: `${e?.name}: ${e?.message ?? e}` }));",
            vec![json!(prefix)],
        )
        .await
        .map_err(|e| format!("counting notes: {e}"))?;
    match (v[0].as_u64(), v[1].as_u64()) {
        (Some(n), Some(k)) => Ok((n, k)),
        _ => Err(format!("counting notes: {v}")),
    }
}

/// Every `TXN_EVERY`-th write of round 1 is a transaction of three INSERTs (`addMany`).
const TXN_EVERY: usize = 25;

/// The note texts `start_inserts(.., tag, n, txn_every)` writes, in order.
fn texts_of(tag: &str, n: usize, txn_every: usize) -> Vec<String> {
    let mut v = Vec::new();
    for i in 0..n {
        v.push(format!("{tag} {i}"));
        if txn_every > 0 && i % txn_every == txn_every - 1 {
            v.push(format!("{tag} {i}.1"));
            v.push(format!("{tag} {i}.2"));
        }
    }
    v
}

/// Starts `n` writes in the current browsing context (a tab or a frame) and returns at once;
/// `inserts_progress` reads how far they got. Write `i` is an autocommit INSERT of
/// "`{tag} {i}`", or, every `txn_every`-th (0: never), one transaction of three INSERTs
/// ("`{tag} {i}`", "`… {i}.1`", "`… {i}.2`") through `addMany`. All in order: `texts_of`.
async fn start_inserts(client: &Client, tag: &str, n: usize, txn_every: usize) -> Res<()> {
    let js = "const [tag, n, every] = arguments;
        const run = (window.__inserts = { acked: [], error: null, done: false });
        (async () => {
            for (let i = 0; i < n; i++) {
                const text = `${tag} ${i}`;
                const many = every > 0 && i % every === every - 1;
                const texts = many ? [text, `${text}.1`, `${text}.2`] : [text];
                try {
                    if (many) {
                        await window.notesApp.request('addMany', texts);
                    } else {
                        await window.notesApp.request('add', text);
                    }
                    run.acked.push(...texts);
                } catch (e) {
                    run.error = `${e?.name}: ${e?.message ?? e}`;
                    break;
                }
            }
            run.done = true;
        })();
        return true;";
    client
        .execute(js, vec![json!(tag), json!(n), json!(txn_every)])
        .await
        .map_err(|e| format!("starting INSERTs in the page: {e}"))?;
    Ok(())
}

struct Progress {
    acked: Vec<String>,
    error: Option<String>,
    done: bool,
}

async fn inserts_progress(client: &Client) -> Res<Progress> {
    let v = script(client, "return window.__inserts;").await?;
    let acked = v["acked"]
        .as_array()
        .ok_or_else(|| format!("no INSERTs running in this tab: {v}"))?
        .iter()
        .map(|t| t.as_str().unwrap_or_default().to_owned())
        .collect();
    Ok(Progress {
        acked,
        error: v["error"].as_str().map(str::to_owned),
        done: v["done"].as_bool().unwrap_or(false),
    })
}

/// The notes' texts are exactly `want` (as a multiset: no note lost, none twice, none extra).
fn check_exact(notes: &[(u64, String)], want: &[String], when: &str) -> Res<()> {
    let mut got: Vec<&str> = notes.iter().map(|(_, t)| t.as_str()).collect();
    let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
    got.sort_unstable();
    want.sort_unstable();
    if got == want {
        return Ok(());
    }
    let missing: Vec<&&str> = want.iter().filter(|w| !got.contains(w)).take(5).collect();
    let extra: Vec<&&str> = got.iter().filter(|g| !want.contains(g)).take(5).collect();
    Err(format!(
        "{when}: {} notes, expected {}; missing (first 5) {missing:?}, unexpected (first 5) \
         {extra:?}",
        got.len(),
        want.len()
    ))
}

// ---------------------------------------------------------------------------------------------
// Page helpers (the others are in common/)
// ---------------------------------------------------------------------------------------------

async fn stats(client: &Client) -> Res<BTreeMap<String, u64>> {
    let v = request(client, "stats", Value::Null).await?;
    let map = v
        .as_object()
        .ok_or_else(|| format!("stats returned {v}"))?
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
        .collect::<BTreeMap<_, _>>();
    if !map.contains_key("flushes") || !map.contains_key("writes") {
        return Err(format!("stats lacks flushes/writes: {v}"));
    }
    Ok(map)
}
