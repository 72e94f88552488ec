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
//!    turns), navigates the first tab away and reloads the second, and checks
//!    `PRAGMA compile_options` of the built
//!    SQLite (no `ENABLE_BATCH_ATOMIC_WRITE`: proof that the repository's flags did not apply);
//! 5. LAST, counts physical flushes per autocommit INSERT under `Durability::Strict` through the
//!    page's `stats` hook: exactly one each (after one uncounted INSERT: the first write after a
//!    mount also flushes the data file once). This is checked after everything else, in both
//!    browsers, so the rest can be seen passing; the measured counts are printed either way.
//!
//! Screenshots, the build log and driver logs go to `target/template-e2e/`.
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

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_runner::child::start_driver;
use bench_runner::drive::{capabilities, save_screenshot};
use bench_runner::options::{target_dir, workspace_root, Browser, Tools};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};

/// INSERTs whose flushes are counted, per browser.
const FLUSH_PROBES: usize = 5;

type Res<T> = Result<T, String>;

#[test]
#[ignore = "builds the template and needs both browsers: scripts/test.sh runs it with --ignored"]
fn notes_app_template_outside_the_workspace() {
    let started = Instant::now();
    let root = workspace_root();
    let out = target_dir(&root).join("template-e2e");
    fs::create_dir_all(&out).unwrap();

    // 1. The copy, outside the workspace.
    let copy = std::env::var_os("E2E_TEMPLATE_COPY").map_or_else(
        || std::env::temp_dir().join("opfs-vfs-notes-app-e2e"),
        PathBuf::from,
    );
    let copy = absolute(&copy);
    assert!(
        !copy.starts_with(&root),
        "e2e: the template copy {} is inside the workspace {}: cargo would read the workspace's \
         .cargo/config.toml (set E2E_TEMPLATE_COPY or TMPDIR elsewhere)",
        copy.display(),
        root.display()
    );
    for dir in copy.ancestors() {
        for name in ["config.toml", "config"] {
            let config = dir.join(".cargo").join(name);
            assert!(
                !config.exists() || dir == home_dir().as_path(),
                "e2e: {} would apply to the template build; the test needs a user's setting",
                config.display()
            );
        }
    }
    if copy.exists() {
        fs::remove_dir_all(&copy).unwrap();
    }
    copy_template(&root.join("examples").join("notes-app"), &copy).unwrap();
    let vfs = root.join("vfs");
    rewrite_path_line(&copy.join("Cargo.toml"), &vfs).unwrap();
    eprintln!(
        "e2e: template copied to {} (opfs-vfs = {{ path = {:?} }})",
        copy.display(),
        vfs.display()
    );

    // 2. Its one build command.
    let target = std::env::var_os("E2E_TEMPLATE_TARGET")
        .map_or_else(|| target_dir(&root).join("notes-app-e2e"), PathBuf::from);
    let wasm_opt = std::env::var_os("WASM_OPT").unwrap_or_else(|| {
        let ours = root.join("tools/binaryen/node_modules/.bin/wasm-opt");
        if ours.is_file() {
            ours.into_os_string()
        } else {
            "off".into()
        }
    });
    let log = out.join("build.log");
    let t = Instant::now();
    // One open file for both streams (a shared offset: neither overwrites the other).
    let log_file = fs::File::create(&log).unwrap();
    let status = user_command("bash", &copy)
        .arg("build.sh")
        .env("CARGO_TARGET_DIR", &target)
        .env("WASM_OPT", &wasm_opt)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .status()
        .expect("e2e: running build.sh");
    let build_log = fs::read_to_string(&log).unwrap_or_default();
    let tail: Vec<&str> = build_log.lines().rev().take(12).collect();
    eprintln!(
        "e2e: ./build.sh: {status} in {:.0} s (log {}):\n    {}",
        t.elapsed().as_secs_f64(),
        log.display(),
        tail.into_iter().rev().collect::<Vec<_>>().join("\n    ")
    );
    assert!(status.success(), "e2e: the template's ./build.sh failed");
    let dist = copy.join("dist");
    for f in [
        "index.html",
        "app.js",
        "worker.js",
        "pkg/notes_app.js",
        "pkg/notes_app_bg.wasm",
    ] {
        assert!(dist.join(f).is_file(), "e2e: build.sh made no dist/{f}");
    }

    // 3 + 4 + 5.
    let browsers: Vec<Browser> = std::env::var("E2E_BROWSERS").map_or_else(
        |_| Browser::ALL.to_vec(),
        |v| v.split(',').map(|b| Browser::parse(b).unwrap()).collect(),
    );
    let timeout = Duration::from_secs(
        std::env::var("E2E_TIMEOUT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60),
    );
    let tools = Tools::default();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut failures = Vec::new();
    let mut flush_failures = Vec::new();
    rt.block_on(async {
        let (url, server) = serve(dist.clone()).await.expect("e2e: static server");
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
        drop(server);
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
// Copy, rewrite, build
// ---------------------------------------------------------------------------------------------

fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap().join(p)
    }
}

/// Copies the template's tracked content: everything but build outputs and installs.
fn copy_template(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if [
            OsStr::new("target"),
            OsStr::new("dist"),
            OsStr::new("node_modules"),
        ]
        .contains(&name.as_os_str())
        {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type()?.is_dir() {
            copy_template(&src, &dst)?;
        } else {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Replaces the template's one `opfs-vfs = { path = ... }` line, as its README tells a user to.
fn rewrite_path_line(manifest: &Path, vfs: &Path) -> Res<()> {
    let text = fs::read_to_string(manifest).map_err(|e| e.to_string())?;
    let matching: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("opfs-vfs = { path = "))
        .collect();
    if matching.len() != 1 {
        return Err(format!(
            "{}: expected exactly one `opfs-vfs = {{ path = ... }}` line, found {}",
            manifest.display(),
            matching.len()
        ));
    }
    let new_line = format!(
        "opfs-vfs = {{ path = {} }}",
        Value::String(vfs.display().to_string())
    );
    let text = text.replacen(matching[0], &new_line, 1);
    fs::write(manifest, text).map_err(|e| e.to_string())
}

/// A command in `dir` with a user's environment: without the variables `cargo test` sets for
/// this test (`CARGO_PKG_*`, `CARGO_MANIFEST_DIR`, ...) and without this repository's
/// `.cargo/config.toml` `[env]` (cargo passes those to the test process too; here they would
/// silently give the template the repository's SQLite flags).
fn user_command(program: &str, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir).stdin(Stdio::null());
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        if (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || key == "SQLITE_WASM_RS_FLAGS"
            || key == "LIBSQLITE3_FLAGS"
        {
            cmd.env_remove(key);
        }
    }
    cmd
}

// ---------------------------------------------------------------------------------------------
// The static server
// ---------------------------------------------------------------------------------------------

/// Serves `dir` on 127.0.0.1 (a secure context) with no extra headers. Ends when the returned
/// handle is dropped.
async fn serve(dir: PathBuf) -> Res<(String, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = axum::Router::new().fallback_service(tower_http::services::ServeDir::new(dir));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://{addr}/"), task))
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
    let log_dir = out.join(browser.name());
    fs::create_dir_all(&log_dir).map_err(|e| e.to_string())?;
    let driver = start_driver(browser, tools, &log_dir).map_err(|e| e.to_string())?;
    let profile = tempfile::Builder::new()
        .prefix("template-e2e-profile-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let window = (1000, 900);
    let client = ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities(browser, tools, window, profile.path()))
        .connect(&driver.url)
        .await
        .map_err(|e| {
            format!(
                "starting a WebDriver session: {e}{}",
                driver.guard.log_tail()
            )
        })?;
    let result = steps(&client, browser, url, out, timeout).await;
    if let Err(e) = &result {
        let shot = out.join(format!("{}-failure.png", browser.name()));
        if save_screenshot(&client, &shot, window).await.is_ok() {
            eprintln!(
                "e2e: {browser}: failed ({e}); screenshot {}",
                shot.display()
            );
        }
    }
    let _ = client.close().await;
    drop(driver);
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
    let second = client
        .new_window(true)
        .await
        .map_err(|e| format!("opening a second tab: {e}"))?
        .handle;
    client
        .switch_to_window(second.clone())
        .await
        .map_err(|e| e.to_string())?;
    client.goto(url).await.map_err(|e| e.to_string())?;
    wait_state(client, "ready", timeout).await?;
    wait_notes(client, &kept, timeout).await?;
    add_through_form(client, "fourth note, from tab 2").await?;
    let with_fourth = ["fourth note, from tab 2", texts[2], texts[0]];
    wait_notes(client, &with_fourth, timeout).await?;
    let shot = out.join(format!("{}-second-tab.png", browser.name()));
    save_screenshot(client, &shot, (1000, 900))
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
    save_screenshot(client, &shot, (1000, 900))
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

    // The first write after a mount also flushes the data file once (vfs/DESIGN.md,
    // "Recovery": a once-per-mount cost, not a per-commit one). This tab's volume was mounted
    // by Retry and has not written yet: one INSERT first, not counted but reported.
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
// Page helpers
// ---------------------------------------------------------------------------------------------

async fn script(client: &Client, js: &str) -> Res<Value> {
    client
        .execute(js, vec![])
        .await
        .map_err(|e| format!("script {js:?}: {e}"))
}

/// One worker request through the page's debug surface (`window.notesApp.request`).
async fn request(client: &Client, op: &str, arg: Value) -> Res<Value> {
    let js = "const [op, arg, done] = arguments;
        window.notesApp.request(op, arg).then(
            (r) => done(JSON.stringify({ ok: r === undefined ? null : r })),
            (e) => done(JSON.stringify({ error: e })));";
    let v = client
        .execute_async(js, vec![json!(op), arg])
        .await
        .map_err(|e| format!("request {op}: {e}"))?;
    let v: Value = serde_json::from_str(v.as_str().unwrap_or("null"))
        .map_err(|e| format!("request {op}: {e}"))?;
    match v.get("ok") {
        Some(r) => Ok(r.clone()),
        None => Err(format!("request {op} failed: {}", v["error"])),
    }
}

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

/// Waits until `window.notesApp.state` is `want`; fails at once on another final state.
async fn wait_state(client: &Client, want: &str, timeout: Duration) -> Res<()> {
    let start = Instant::now();
    let mut last = Value::Null;
    while start.elapsed() < timeout {
        // A navigation in progress can fail a script: treat as "not yet".
        if let Ok(v) = client
            .execute(
                "return window.notesApp ? [window.notesApp.state, window.notesApp.error] : null;",
                vec![],
            )
            .await
        {
            let state = v[0].as_str().unwrap_or("");
            if state == want {
                return Ok(());
            }
            if !state.is_empty() && state != "loading" {
                return Err(format!(
                    "the page's state is {state:?} (error {}), expected {want:?}",
                    v[1]
                ));
            }
            last = v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "the page did not reach state {want:?} within {} s (last: {last})",
        timeout.as_secs()
    ))
}

/// The note texts shown, top to bottom.
async fn notes(client: &Client) -> Res<Vec<String>> {
    let v = script(
        client,
        "return [...document.querySelectorAll('#notes li .text')].map(e => e.textContent);",
    )
    .await?;
    Ok(v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default())
}

async fn expect_notes(client: &Client, want: &[&str]) -> Res<()> {
    let have = notes(client).await?;
    if have != want {
        return Err(format!("the page lists {have:?}, expected {want:?}"));
    }
    Ok(())
}

async fn wait_notes(client: &Client, want: &[&str], timeout: Duration) -> Res<()> {
    let start = Instant::now();
    loop {
        let have = notes(client).await?;
        if have == want {
            return Ok(());
        }
        if start.elapsed() > timeout {
            return Err(format!("the page lists {have:?}, expected {want:?}"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn add_through_form(client: &Client, text: &str) -> Res<()> {
    let input = client
        .find(Locator::Css("#note-text"))
        .await
        .map_err(|e| format!("the note input: {e}"))?;
    input
        .send_keys(text)
        .await
        .map_err(|e| format!("typing {text:?}: {e}"))?;
    click(client, "#add").await
}

async fn click(client: &Client, css: &str) -> Res<()> {
    client
        .find(Locator::Css(css))
        .await
        .map_err(|e| format!("{css}: {e}"))?
        .click()
        .await
        .map_err(|e| format!("clicking {css}: {e}"))
}
