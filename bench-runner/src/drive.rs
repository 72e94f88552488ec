//! One browser over WebDriver: open the page with `autorun=1`, follow `window.__bench` until
//! it is `done` or `error`, read the result and the console errors, take a screenshot.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_results::runner::Emulation;
use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{json, Value};

use crate::child::{start_driver, Driver};
use crate::options::{Browser, PageParams, Tools};
use crate::util::fmt_elapsed;
use crate::{Context as _, Error, Result};

/// Chromium's flags: headless, as root in a container, without the background services that
/// would otherwise try (and fail) to reach the network during a measurement.
pub const CHROMIUM_ARGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// How one browser run is set up.
#[derive(Clone, Debug)]
pub struct DriveOptions {
    /// Which browser.
    pub browser: Browser,
    /// Browsers and drivers.
    pub tools: Tools,
    /// The page's base URL (`http://127.0.0.1:PORT/`).
    pub page_url: String,
    /// URL parameters.
    pub params: PageParams,
    /// From page load to `done`.
    pub timeout: Duration,
    /// Window size in CSS pixels.
    pub window: (u32, u32),
    /// Screenshot of the finished page, if wanted.
    pub screenshot: Option<PathBuf>,
    /// Driver logs (and a failure screenshot) go here.
    pub log_dir: PathBuf,
    /// Print progress lines.
    pub verbose: bool,
    /// Chromium: emulate a phone with this CPU slow-down ([`emulate_phone`]).
    pub emulate_phone: Option<f64>,
}

/// What one browser produced.
#[derive(Debug)]
pub struct Outcome {
    /// Which browser.
    pub browser: Browser,
    /// `window.__bench.result`, serialized by the page (`JSON.stringify`).
    pub result_json: String,
    /// `window.__bench.consoleErrors`.
    pub console_errors: Vec<Value>,
    /// `browserName browserVersion` as the driver reported them.
    pub browser_version: Option<String>,
    /// From navigation to `done`.
    pub elapsed: Duration,
    /// Where the screenshot went, if one was taken.
    pub screenshot: Option<PathBuf>,
    /// The emulation applied, if any.
    pub emulation: Option<Emulation>,
    /// The backends the page offered in its selector when the run was done.
    pub backend_choices: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Phone emulation (Chromium, DevTools protocol through chromedriver)
// ---------------------------------------------------------------------------------------------

/// A DevTools protocol command sent through chromedriver's `POST
/// /session/{id}/goog/cdp/execute` (`{cmd, params}` → `{value: result}`), which runs it on the
/// page's DevTools session.
#[derive(Debug)]
struct Cdp {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

async fn cdp(client: &Client, cmd: &'static str, params: Value) -> Result<Value> {
    client
        .issue_cmd(Cdp { cmd, params })
        .await
        .map_err(|e| Error(format!("DevTools {cmd}: {e}")))
}

/// The viewport of the emulated phone: a common Android size (CSS pixels) and pixel ratio.
pub const PHONE_VIEWPORT: (u32, u32, f64) = (412, 915, 2.625);

/// Script: the benchmark worker's ready (the page enabled Start) and nothing runs yet.
const READY_SCRIPT: &str = "const s = document.querySelector('#start');     return !!(window.__bench && window.__bench.state === 'idle' && s && !s.disabled);";

/// Script: start the run as a user would.
const START_SCRIPT: &str = "document.querySelector('#start').click(); return true;";

/// Script: the page's worker calibration (`window.__bench.calibrate`: a fixed CPU-bound loop
/// in the benchmark worker, repeated), as a JSON array of milliseconds.
const CALIBRATE_SCRIPT: &str = "const done = arguments[arguments.length - 1]; \
    window.__bench.calibrate().then((v) => done(JSON.stringify(v)), (e) => done(JSON.stringify({error: String(e)})));";

async fn calibrate(client: &Client) -> Result<Vec<f64>> {
    let v = client
        .execute_async(CALIBRATE_SCRIPT, vec![])
        .await
        .map_err(|e| Error(format!("worker calibration: {e}")))?;
    let text = v.as_str().unwrap_or_default();
    serde_json::from_str::<Vec<f64>>(text)
        .map_err(|_| Error(format!("worker calibration answered {text}")))
}

/// Emulates a phone in the open page (Chromium): `Emulation.setDeviceMetricsOverride` (mobile
/// viewport) and `Emulation.setCPUThrottlingRate` on the page. DevTools cannot throttle the
/// worker itself (see [`Emulation`]), so the worker's real slowdown is measured around the
/// throttling with the page's calibration loop and recorded.
pub async fn emulate_phone(client: &Client, rate: f64) -> Result<Emulation> {
    let (width, height, dpr) = PHONE_VIEWPORT;
    let before = calibrate(client).await?;
    cdp(
        client,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": width, "height": height, "deviceScaleFactor": dpr, "mobile": true}),
    )
    .await?;
    cdp(
        client,
        "Emulation.setCPUThrottlingRate",
        json!({ "rate": rate }),
    )
    .await?;
    let after = calibrate(client).await?;
    let slowdown = match (
        bench_results::stats::median(&before),
        bench_results::stats::median(&after),
    ) {
        (Some(b), Some(a)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let measured = slowdown.map_or_else(|| "unmeasured".to_owned(), |s| format!("×{s:.2}"));
    Ok(Emulation {
        kind: "chromium-devtools-phone-emulation".to_owned(),
        cpu_throttling_rate: rate,
        worker_calibration_before_ms: before,
        worker_calibration_after_ms: after,
        worker_slowdown: slowdown,
        width,
        height,
        device_scale_factor: dpr,
        mobile: true,
        note: format!(
            "Phone EMULATION in desktop Chromium, not a phone: DevTools CPU throttling ×{rate} of \
             the page (the benchmark worker measured {measured} slower) and a {width}×{height} \
             mobile viewport. Storage, OPFS, memory and the browser build are this machine's."
        ),
    })
}

/// The browser's WebDriver capabilities.
pub fn capabilities(
    browser: Browser,
    tools: &Tools,
    window: (u32, u32),
    profile: &Path,
) -> Capabilities {
    let caps = match browser {
        Browser::Chromium => {
            let mut args: Vec<String> = CHROMIUM_ARGS.iter().map(|s| (*s).to_owned()).collect();
            args.push(format!("--user-data-dir={}", profile.display()));
            args.push(format!("--window-size={},{}", window.0, window.1));
            json!({
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": tools.chromium,
                    "args": args,
                },
            })
        }
        Browser::Firefox => json!({
            "browserName": "firefox",
            "moz:firefoxOptions": {
                "binary": tools.firefox,
                "args": ["-headless", format!("--width={}", window.0), format!("--height={}", window.1)],
            },
        }),
    };
    match caps {
        Value::Object(m) => m,
        _ => Capabilities::new(),
    }
}

/// Reads the page's state without the (large) result.
const POLL_SCRIPT: &str = r"
const b = window.__bench;
if (!b) return null;
let progress = null;
try { progress = JSON.parse(JSON.stringify(b.progress ?? null)); } catch (e) { progress = String(b.progress); }
return JSON.stringify({
  state: b.state ?? null,
  progress,
  error: b.error == null ? null : String(b.error && b.error.stack ? b.error.stack : b.error),
  console_errors: Array.isArray(b.consoleErrors) ? b.consoleErrors.length : 0,
});";

/// The result as Rust serialized it (`resultJson`): re-serializing the page's parsed object
/// would round integers above 2^53 (the bootstrap seed was saved as 792762676033229000 for
/// 0x0B00757420261130). A page without it (an older build) gives its object.
const RESULT_SCRIPT: &str = "const b = window.__bench; if (!b) return null; \
     if (typeof b.resultJson === 'string') return b.resultJson; \
     return b.result == null ? null : JSON.stringify(b.result);";

/// The console errors the page collected.
const CONSOLE_SCRIPT: &str =
    "const c = window.__bench && window.__bench.consoleErrors; return JSON.stringify(Array.isArray(c) ? c : []);";

/// The page's backend checkboxes.
const CHOICES_SCRIPT: &str = "return JSON.stringify([...document.querySelectorAll('input[name=backend]')].map((c) => c.value));";

/// Height of the whole document in CSS pixels.
const HEIGHT_SCRIPT: &str = "return Math.ceil(Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0));";

/// What the poll script returns.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Poll {
    state: Option<String>,
    progress: Value,
    error: Option<String>,
    console_errors: usize,
}

/// A short line from the page's `progress` value. The page sends `{suite, backend, case, run,
/// warmup, status: start|end, ms, done_steps, total_steps, elapsed_ms}`; other shapes fall back to
/// known fields in a fixed order, else the compact JSON.
pub fn describe_progress(p: &Value) -> String {
    let obj = match p {
        Value::Null => return String::new(),
        Value::String(s) => return s.clone(),
        Value::Number(n) => return n.to_string(),
        Value::Object(o) => o,
        other => return truncate(&other.to_string(), 160),
    };
    let text = |k: &str| obj.get(k).and_then(crate::doc::scalar_text);
    let num = |k: &str| obj.get(k).and_then(Value::as_f64);
    let mut parts: Vec<String> = Vec::new();
    for k in ["suite", "backend"] {
        if let Some(v) = text(k) {
            parts.push(v);
        }
    }
    match (obj.get("case"), text("cases")) {
        (Some(Value::Number(n)), Some(total)) => parts.push(format!("case {n}/{total}")),
        (Some(Value::Number(n)), None) => parts.push(format!("case {n}")),
        (Some(v), _) => parts.extend(crate::doc::scalar_text(v)),
        (None, _) => {}
    }
    for k in ["phase", "step", "workload", "label", "message"] {
        if let Some(v) = text(k) {
            parts.push(v);
        }
    }
    if let Some(run) = text("run") {
        let kind = if obj.get("warmup").and_then(Value::as_bool) == Some(true) {
            "warm-up"
        } else {
            "run"
        };
        parts.push(match text("runs") {
            Some(r) => format!("{kind} {run}/{r}"),
            None => format!("{kind} {run}"),
        });
    }
    if text("status").as_deref() == Some("end") {
        if let Some(ms) = num("ms") {
            parts.push(format!("{} ms", crate::util::fmt_ms(ms)));
        }
    }
    let (done, total) = match (num("done_steps"), num("total_steps")) {
        (Some(d), Some(t)) => (Some(d), Some(t)),
        _ => (num("done"), num("total")),
    };
    let pct = num("percent")
        .or_else(|| num("fraction").map(|f| f * 100.0))
        .or_else(|| match (done, total) {
            (Some(d), Some(t)) if t > 0.0 => Some(100.0 * d / t),
            _ => None,
        });
    match (done, total, pct) {
        (Some(d), Some(t), Some(p)) => parts.push(format!("{d}/{t} ({p:.0}%)")),
        (Some(d), Some(t), None) => parts.push(format!("{d}/{t}")),
        (_, _, Some(p)) => parts.push(format!("{p:.0}%")),
        _ => {}
    }
    if parts.is_empty() {
        truncate(&p.to_string(), 160)
    } else {
        parts.join(" · ")
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let t: String = s.chars().take(max).collect();
        format!("{t}…")
    }
}

/// Starts `browser`'s driver (its log in `log_dir`) and a WebDriver session with `caps`.
///
/// Once, a failed start is tried again from the beginning, with a new driver on a new port;
/// the first failure is printed to stderr, and both are in the error if the second fails too.
/// Why: a driver's port is found free and released before the driver binds it, so another
/// process can take it in between (then the driver exits, or the client talks to a stranger);
/// and a first start can fail for reasons of its own. The clean-clone CI run of 2026-12-06 on
/// a fresh machine failed once here: geckodriver's session failed within 0.1 s with
/// "webdriver server did not respond (legacy client)" while Chromium's driver started beside
/// it. Its cause was not seen: the driver's log was empty (its two streams overwrote each
/// other then, see [`ChildGuard::spawn_logging_all`](crate::child::ChildGuard::spawn_logging_all)).
pub async fn start_session(
    browser: Browser,
    tools: &Tools,
    log_dir: &Path,
    caps: Capabilities,
) -> Result<(Driver, Client)> {
    let attempt = || async {
        let driver = start_driver(browser, tools, log_dir)?;
        match ClientBuilder::new(HttpConnector::new())
            .capabilities(caps.clone())
            .connect(&driver.url)
            .await
        {
            Ok(client) => Ok((driver, client)),
            Err(e) => Err(Error(format!(
                "{browser}: starting a WebDriver session: {e}{}",
                driver.guard.log_tail()
            ))),
        }
    };
    match attempt().await {
        Ok(started) => Ok(started),
        Err(first) => {
            eprintln!("[{browser}] {first}\n[{browser}] starting the driver and the session again");
            attempt().await.map_err(|second| {
                Error(format!(
                    "{second}\n  (the first attempt had failed too: {first})"
                ))
            })
        }
    }
}

/// Runs the page in one browser, start to finish: driver, session, page, result, screenshot.
/// The session is closed and the driver (with its browser) ended whatever happens.
pub async fn run_browser(opts: &DriveOptions) -> Result<Outcome> {
    std::fs::create_dir_all(&opts.log_dir)
        .context(format!("creating {}", opts.log_dir.display()))?;
    // A fresh profile per run (Chromium; geckodriver makes its own for Firefox): no OPFS
    // data, cache or permissions carried over from an earlier run.
    let profile = tempfile::Builder::new()
        .prefix("bench-runner-profile-")
        .tempdir()
        .context("creating a browser profile directory")?;
    let caps = capabilities(opts.browser, &opts.tools, opts.window, profile.path());
    let (driver, client) = start_session(opts.browser, &opts.tools, &opts.log_dir, caps).await?;
    let result = drive(&client, opts).await;
    if let Err(e) = &result {
        // What the page showed when it failed.
        let shot = opts
            .log_dir
            .join(format!("{}-failure.png", opts.browser.name()));
        if save_screenshot(&client, &shot, opts.window).await.is_ok() && opts.verbose {
            eprintln!(
                "[{}] failed ({e}); screenshot: {}",
                opts.browser,
                shot.display()
            );
        }
    }
    let _ = client.close().await;
    drop(driver);
    drop(profile);
    result
}

async fn drive(client: &Client, opts: &DriveOptions) -> Result<Outcome> {
    let who = opts.browser.name();
    let browser_version = browser_version(client);
    client
        .set_window_size(opts.window.0, opts.window.1)
        .await
        .context(format!("{who}: setting the window size"))?;
    // With emulation the page opens without autorun: the worker must exist (to be throttled)
    // before the run starts.
    let query = if opts.emulate_phone.is_some() {
        opts.params.query().replace("&autorun=1", "")
    } else {
        opts.params.query()
    };
    let url = format!("{}{query}", opts.page_url);
    if opts.verbose {
        eprintln!(
            "[{who}] {} — opening {url}",
            browser_version.as_deref().unwrap_or("version unknown")
        );
    }
    let start = Instant::now();
    client
        .goto(&url)
        .await
        .context(format!("{who}: opening {url}"))?;

    let emulation = match opts.emulate_phone {
        None => None,
        Some(rate) => {
            loop {
                match client.execute(READY_SCRIPT, vec![]).await {
                    Ok(Value::Bool(true)) => break,
                    _ if start.elapsed() > Duration::from_secs(60) => {
                        return Err(Error(format!(
                            "{who}: the page's worker was not ready after 60 s"
                        )));
                    }
                    _ => tokio::time::sleep(Duration::from_millis(250)).await,
                }
            }
            let e = emulate_phone(client, rate)
                .await
                .context(format!("{who}: phone emulation"))?;
            if opts.verbose {
                eprintln!("[{who}] {}", e.note);
            }
            client
                .execute(START_SCRIPT, vec![])
                .await
                .context(format!("{who}: pressing Start"))?;
            Some(e)
        }
    };

    let mut last_line = String::new();
    let mut last_print = Instant::now();
    let mut started = false;
    let final_poll = loop {
        let elapsed = start.elapsed();
        if elapsed > opts.timeout {
            return Err(Error(format!(
                "{who}: no result within {} (last progress: {})",
                fmt_elapsed(opts.timeout),
                if last_line.is_empty() {
                    "none"
                } else {
                    &last_line
                }
            )));
        }
        let poll = match client.execute(POLL_SCRIPT, vec![]).await {
            Ok(Value::String(s)) => serde_json::from_str::<Poll>(&s).ok(),
            Ok(_) => None,
            // A navigation in progress can fail a script; try again.
            Err(e) if elapsed < Duration::from_secs(30) => {
                if opts.verbose {
                    eprintln!("[{who}] poll: {e}");
                }
                None
            }
            Err(e) => return Err(Error(format!("{who}: reading window.__bench: {e}"))),
        };
        let Some(poll) = poll else {
            if elapsed > Duration::from_secs(60) {
                return Err(Error(format!(
                    "{who}: window.__bench is still undefined after {} (is the page built, and \
                     does it load without errors?)",
                    fmt_elapsed(elapsed)
                )));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
            continue;
        };
        let state = poll.state.as_deref().unwrap_or("?");
        match state {
            "done" | "error" => break poll,
            "idle" if !started && elapsed > Duration::from_secs(60) => {
                return Err(Error(format!(
                    "{who}: still idle {} after load: autorun=1 did not start the run",
                    fmt_elapsed(elapsed)
                )));
            }
            "running" => started = true,
            _ => {}
        }
        let line = describe_progress(&poll.progress);
        let changed = line != last_line;
        if opts.verbose && (changed || last_print.elapsed() > Duration::from_secs(30)) {
            eprintln!(
                "[{who} {:>7}] {state}{}{}",
                fmt_elapsed(elapsed),
                if line.is_empty() { "" } else { " · " },
                line
            );
            last_print = Instant::now();
        }
        last_line = line;
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let elapsed = start.elapsed();

    let console_errors: Vec<Value> = match client.execute(CONSOLE_SCRIPT, vec![]).await {
        Ok(Value::String(s)) => serde_json::from_str(&s).unwrap_or_default(),
        _ => Vec::new(),
    };
    if final_poll.state.as_deref() == Some("error") {
        return Err(Error(format!(
            "{who}: the page reported an error after {}: {}{}",
            fmt_elapsed(elapsed),
            final_poll.error.as_deref().unwrap_or("(no message)"),
            if console_errors.is_empty() {
                String::new()
            } else {
                format!(
                    "\n  console errors: {}",
                    Value::Array(console_errors.clone())
                )
            }
        )));
    }
    let result_json = match client
        .execute(RESULT_SCRIPT, vec![])
        .await
        .context(format!("{who}: reading window.__bench.result"))?
    {
        Value::String(s) => s,
        _ => {
            return Err(Error(format!(
                "{who}: state is done but window.__bench.result is empty"
            )))
        }
    };
    if opts.verbose {
        eprintln!(
            "[{who} {:>7}] done ({} KiB of JSON, {} console error(s))",
            fmt_elapsed(elapsed),
            result_json.len() / 1024,
            final_poll.console_errors.max(console_errors.len())
        );
    }
    let backend_choices: Vec<String> = match client.execute(CHOICES_SCRIPT, vec![]).await {
        Ok(Value::String(s)) => serde_json::from_str(&s).unwrap_or_default(),
        _ => Vec::new(),
    };
    let screenshot = match &opts.screenshot {
        Some(path) => {
            save_screenshot(client, path, opts.window)
                .await
                .context(format!("{who}: screenshot {}", path.display()))?;
            Some(path.clone())
        }
        None => None,
    };
    Ok(Outcome {
        browser: opts.browser,
        result_json,
        console_errors,
        browser_version,
        elapsed,
        screenshot,
        emulation,
        backend_choices,
    })
}

/// `browserName browserVersion` from the capabilities the driver answered the new session with.
fn browser_version(client: &Client) -> Option<String> {
    let caps = client.capabilities()?;
    let text = |k: &str| caps.get(k).and_then(Value::as_str);
    match (text("browserName"), text("browserVersion")) {
        (Some(n), Some(v)) => Some(format!("{n} {v}")),
        (None, Some(v)) => Some(v.to_owned()),
        _ => None,
    }
}

/// A PNG of the whole page: the window is made as tall as the document (up to 12,000 px),
/// captured, then restored.
pub async fn save_screenshot(client: &Client, path: &Path, window: (u32, u32)) -> Result<()> {
    let height = match client.execute(HEIGHT_SCRIPT, vec![]).await {
        Ok(v) => v
            .as_u64()
            .and_then(|h| u32::try_from(h).ok())
            .unwrap_or(window.1),
        Err(_) => window.1,
    };
    let tall = height.clamp(window.1, 12_000);
    if tall != window.1 {
        let _ = client.set_window_size(window.0, tall + 120).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let png = client.screenshot().await.context("taking a screenshot")?;
    if tall != window.1 {
        let _ = client.set_window_size(window.0, window.1).await;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).context(format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, png).context(format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which starts of [`fake_driver`] exit at once without listening, as a driver whose port
    /// was taken does.
    #[derive(Clone, Copy)]
    enum Fails {
        Never,
        First,
        Always,
    }

    /// A stand-in for chromedriver (python3): it answers a W3C new-session request and
    /// nothing else, listening on its `--port=N`. Each start is counted in `dir` ([`starts`]).
    fn fake_driver(dir: &Path, fails: Fails) -> Tools {
        let script = dir.join("fake-chromedriver");
        let body = format!(
            r#"#!/usr/bin/env python3
import http.server, json, os, sys
port = int([a for a in sys.argv[1:] if a.startswith("--port=")][0].split("=")[1])
marker = os.path.join({dir:?}, "started")
first = not os.path.exists(marker)
open(marker, "a").write("start\n")
if {fail}:
    print("fake driver: this start fails", file=sys.stderr)
    sys.exit(3)
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, value):
        body = json.dumps({{"value": value}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.reply({{"sessionId": "fake", "capabilities": {{}}}} if self.path == "/session" else None)
    def do_DELETE(self):
        self.reply(None)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"#,
            dir = dir.to_str().unwrap(),
            fail = match fails {
                Fails::Never => "False",
                Fails::First => "first",
                Fails::Always => "True",
            },
        );
        std::fs::write(&script, body).unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        Tools {
            chromedriver: script,
            ..Tools::default()
        }
    }

    fn starts(dir: &Path) -> usize {
        std::fs::read_to_string(dir.join("started"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn start(tools: &Tools, log_dir: &Path) -> Result<(Driver, Client)> {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(start_session(
                Browser::Chromium,
                tools,
                log_dir,
                Capabilities::new(),
            ))
    }

    #[test]
    fn a_failed_session_start_is_tried_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let tools = fake_driver(dir.path(), Fails::First);
        let started = start(&tools, dir.path());
        assert!(started.is_ok(), "{:?}", started.err());
        assert_eq!(starts(dir.path()), 2, "the driver is started twice");
    }

    #[test]
    fn a_session_that_starts_is_started_once() {
        let dir = tempfile::tempdir().unwrap();
        let tools = fake_driver(dir.path(), Fails::Never);
        let started = start(&tools, dir.path());
        assert!(started.is_ok(), "{:?}", started.err());
        assert_eq!(starts(dir.path()), 1);
    }

    #[test]
    fn a_driver_that_never_starts_fails_with_both_attempts() {
        let dir = tempfile::tempdir().unwrap();
        let tools = fake_driver(dir.path(), Fails::Always);
        let Err(Error(err)) = start(&tools, dir.path()) else {
            panic!("no driver, no session");
        };
        assert_eq!(starts(dir.path()), 2);
        assert!(err.contains("exited early"), "{err}");
        assert!(err.contains("the first attempt had failed too"), "{err}");
        // The driver's stderr is in its log, and so in the error.
        assert!(err.contains("fake driver: this start fails"), "{err}");
    }

    #[test]
    fn progress_lines() {
        assert_eq!(describe_progress(&Value::Null), "");
        assert_eq!(describe_progress(&json!("warming up")), "warming up");
        assert_eq!(
            describe_progress(&json!({"suite":"sql","backend":"ours","case":7,"cases":16,
                                      "run":2,"runs":3,"fraction":0.35})),
            "sql · ours · case 7/16 · run 2/3 · 35%"
        );
        assert_eq!(
            describe_progress(&json!({"suite":"fs","phase":"create","done":3,"total":12})),
            "fs · create · 3/12 (25%)"
        );
        // The page's own shape.
        assert_eq!(
            describe_progress(&json!({"suite":"sql","backend":"sahpool","case":"16 cases",
                "run":1,"warmup":true,"status":"start","ms":null,"done_steps":3,
                "total_steps":12,"elapsed_ms":1234.0})),
            "sql · sahpool · 16 cases · warm-up 1 · 3/12 (25%)"
        );
        assert_eq!(
            describe_progress(
                &json!({"suite":"raw","backend":"opfs","case":"small-append",
                "run":2,"warmup":false,"status":"end","ms":1234.5,"done_steps":6,
                "total_steps":12})
            ),
            "raw · opfs · small-append · run 2 · 1,234.50 ms · 6/12 (50%)"
        );
        assert_eq!(describe_progress(&json!({"x":1})), r#"{"x":1}"#);
    }

    #[test]
    fn capabilities_carry_the_flags() {
        let tools = Tools::default();
        let c = capabilities(Browser::Chromium, &tools, (800, 600), Path::new("/tmp/p"));
        let args = c["goog:chromeOptions"]["args"].as_array().unwrap();
        for flag in CHROMIUM_ARGS {
            assert!(args.iter().any(|a| a == flag), "{flag}");
        }
        assert!(args.iter().any(|a| a == "--user-data-dir=/tmp/p"));
        let f = capabilities(Browser::Firefox, &tools, (800, 600), Path::new("/tmp/p"));
        assert_eq!(f["moz:firefoxOptions"]["args"][0], "-headless");
    }
}
