//! Shared by the template app's end-to-end tests (`template_e2e.rs`, `kill_e2e.rs`,
//! `quota_e2e.rs`): the template copied outside the workspace and built as a user builds it, a
//! plain static server for its `dist/`, WebDriver sessions (fresh or persistent profiles) and
//! the page's debug surface (`window.notesApp`).
//!
//! Each test binary uses only a part of this module, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bench_runner::child::Driver;
use bench_runner::drive::{capabilities, start_session as start_driver_session};
use bench_runner::options::{target_dir, workspace_root, Browser, Tools};
use fantoccini::wd::Capabilities;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

pub type Res<T> = Result<T, String>;

// ---------------------------------------------------------------------------------------------
// Environment
// ---------------------------------------------------------------------------------------------

/// `E2E_BROWSERS` (`chromium,firefox`; default: both).
pub fn browsers() -> Vec<Browser> {
    std::env::var("E2E_BROWSERS").map_or_else(
        |_| Browser::ALL.to_vec(),
        |v| v.split(',').map(|b| Browser::parse(b).unwrap()).collect(),
    )
}

/// `E2E_TIMEOUT_SECS`: per wait for the page (default: 60).
pub fn page_timeout() -> Duration {
    Duration::from_secs(
        std::env::var("E2E_TIMEOUT_SECS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(60),
    )
}

/// `target/<name>/`, created: screenshots, logs.
pub fn out_dir(name: &str) -> PathBuf {
    let out = target_dir(&workspace_root()).join(name);
    fs::create_dir_all(&out).unwrap();
    out
}

/// A current-thread tokio runtime with timers and I/O.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

// ---------------------------------------------------------------------------------------------
// Copy, rewrite, build
// ---------------------------------------------------------------------------------------------

/// Copies the template outside the workspace, rewrites its `opfs-vfs` path line to this
/// checkout's `vfs/` and runs its `./build.sh` with a user's environment; returns `dist/`.
///
/// The copy goes to `E2E_TEMPLATE_COPY` (default `$TMPDIR/opfs-vfs-notes-app-e2e`) with
/// `suffix` appended, so that the tests sharing this code never build in one directory; it
/// must be outside the workspace and below no `.cargo/config.toml` (cargo looks for config
/// files from the current directory upwards). The cargo target directory is
/// `E2E_TEMPLATE_TARGET` (default `target/notes-app-e2e`, shared and kept between runs so only
/// the changed crates rebuild). `WASM_OPT` is passed to `build.sh` (default:
/// `tools/binaryen/node_modules/.bin/wasm-opt` when installed, else `off`). The build log goes
/// to `out/build.log`.
pub fn build_template(suffix: &str, out: &Path) -> PathBuf {
    let root = workspace_root();
    let base = std::env::var_os("E2E_TEMPLATE_COPY").map_or_else(
        || std::env::temp_dir().join("opfs-vfs-notes-app-e2e"),
        PathBuf::from,
    );
    let mut copy = absolute(&base).into_os_string();
    copy.push(suffix);
    let copy = PathBuf::from(copy);
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
    dist
}

pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from)
}

pub fn absolute(p: &Path) -> PathBuf {
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

/// Serves `dir` on 127.0.0.1 (a secure context) with no extra headers, after the routes of
/// `routes` (e.g. a test endpoint). The server task is aborted when the returned [`Served`] is
/// dropped.
pub async fn serve(dir: PathBuf, routes: axum::Router) -> Res<Served> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let app = routes.fallback_service(tower_http::services::ServeDir::new(dir));
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(Served {
        url: format!("http://{addr}/"),
        origin: format!("http://{addr}"),
        task,
    })
}

/// A running static server.
#[derive(Debug)]
pub struct Served {
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
    /// `http://127.0.0.1:PORT` (the page's origin, as the browser spells it).
    pub origin: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

/// The window size of every session here.
pub const WINDOW: (u32, u32) = (1000, 900);

/// The capabilities of [`capabilities`], with the profile directory used in place in both
/// browsers (Chromium `--user-data-dir`, Firefox `-profile`: geckodriver then neither copies
/// nor deletes it, and reads the Marionette port from the profile's `MarionetteActivePort`), so
/// a browser started again on `profile` finds the origin's storage as the last one left it;
/// plus Firefox preferences `firefox_prefs` (an object) and extra Chromium flags.
pub fn persistent_capabilities(
    browser: Browser,
    tools: &Tools,
    profile: &Path,
    firefox_prefs: Value,
    chromium_args: &[&str],
) -> Capabilities {
    let mut caps = capabilities(browser, tools, WINDOW, profile);
    match browser {
        Browser::Chromium => {
            if let Some(args) = caps
                .get_mut("goog:chromeOptions")
                .and_then(|o| o.get_mut("args"))
                .and_then(Value::as_array_mut)
            {
                args.extend(chromium_args.iter().map(|a| json!(a)));
            }
        }
        Browser::Firefox => {
            if let Some(opts) = caps
                .get_mut("moz:firefoxOptions")
                .and_then(Value::as_object_mut)
            {
                if let Some(args) = opts.get_mut("args").and_then(Value::as_array_mut) {
                    args.push(json!("-profile"));
                    args.push(json!(profile.display().to_string()));
                }
                opts.insert("prefs".into(), firefox_prefs);
            }
        }
    }
    caps
}

/// A driver and one WebDriver session on it.
#[derive(Debug)]
pub struct Session {
    pub browser: Browser,
    pub client: Client,
    pub driver: Driver,
}

/// Starts the driver for `browser` (logs in `log_dir`) and a session with `caps`.
pub async fn start_session(
    browser: Browser,
    tools: &Tools,
    log_dir: &Path,
    caps: Capabilities,
) -> Res<Session> {
    fs::create_dir_all(log_dir).map_err(|e| e.to_string())?;
    let (driver, client) = start_driver_session(browser, tools, log_dir, caps)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Session {
        browser,
        client,
        driver,
    })
}

impl Session {
    /// Ends the session normally (the browser shuts down), then the driver.
    pub async fn close(self) {
        let _ = self.client.close().await;
        drop(self.driver);
    }
}

// ---------------------------------------------------------------------------------------------
// Page helpers
// ---------------------------------------------------------------------------------------------

pub async fn script(client: &Client, js: &str) -> Res<Value> {
    client
        .execute(js, vec![])
        .await
        .map_err(|e| format!("script {js:?}: {e}"))
}

/// What a worker request through `window.notesApp.request` gave: its result, or the page's
/// `{ name, message }` error.
pub async fn try_request(client: &Client, op: &str, arg: Value) -> Res<Result<Value, Value>> {
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
    Ok(match v.get("ok") {
        Some(r) => Ok(r.clone()),
        None => Err(v["error"].clone()),
    })
}

/// One worker request through the page's debug surface (`window.notesApp.request`).
pub async fn request(client: &Client, op: &str, arg: Value) -> Res<Value> {
    try_request(client, op, arg)
        .await?
        .map_err(|e| format!("request {op} failed: {e}"))
}

/// Waits until `window.notesApp.state` is `want`; fails at once on another final state.
pub async fn wait_state(client: &Client, want: &str, timeout: Duration) -> Res<()> {
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
pub async fn notes(client: &Client) -> Res<Vec<String>> {
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

pub async fn expect_notes(client: &Client, want: &[&str]) -> Res<()> {
    let have = notes(client).await?;
    if have != want {
        return Err(format!("the page lists {have:?}, expected {want:?}"));
    }
    Ok(())
}

pub async fn wait_notes(client: &Client, want: &[&str], timeout: Duration) -> Res<()> {
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

pub async fn add_through_form(client: &Client, text: &str) -> Res<()> {
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

pub async fn click(client: &Client, css: &str) -> Res<()> {
    client
        .find(Locator::Css(css))
        .await
        .map_err(|e| format!("{css}: {e}"))?
        .click()
        .await
        .map_err(|e| format!("clicking {css}: {e}"))
}

/// `PRAGMA integrity_check` through the page's `integrityCheck` request: `Ok` for `["ok"]`,
/// else the rows SQLite returned.
pub async fn integrity_check(client: &Client) -> Res<()> {
    let rows = request(client, "integrityCheck", Value::Null).await?;
    if rows == json!(["ok"]) {
        Ok(())
    } else {
        Err(format!("PRAGMA integrity_check returned {rows}"))
    }
}

/// Every note as the worker lists it: `(id, text)`, newest first.
pub async fn list_notes(client: &Client) -> Res<Vec<(u64, String)>> {
    let v = request(client, "list", Value::Null).await?;
    v.as_array()
        .ok_or_else(|| format!("list returned {v}"))?
        .iter()
        .map(|n| match (n["id"].as_u64(), n["text"].as_str()) {
            (Some(id), Some(text)) => Ok((id, text.to_owned())),
            _ => Err(format!("list returned a malformed note {n}")),
        })
        .collect()
}

/// `navigator.storage.estimate()` in the page: `(usage, quota)` in bytes.
pub async fn estimate(client: &Client) -> Res<(u64, u64)> {
    let v = client
        .execute_async(
            "const done = arguments[0];
             navigator.storage.estimate().then(
                 (e) => done([e.usage, e.quota]), (e) => done(String(e)));",
            vec![],
        )
        .await
        .map_err(|e| format!("navigator.storage.estimate(): {e}"))?;
    match (v[0].as_u64(), v[1].as_u64()) {
        (Some(usage), Some(quota)) => Ok((usage, quota)),
        _ => Err(format!("navigator.storage.estimate() gave {v}")),
    }
}
