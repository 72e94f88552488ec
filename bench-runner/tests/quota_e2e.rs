//! End-to-end: the template app on a real, small storage quota (the browser's own quota
//! manager refuses the writes; no injected fault).
//!
//! - Chromium: `Storage.overrideQuotaForOrigin { origin, quotaSize }` ([`CHROMIUM_QUOTA`]) sent
//!   through chromedriver's `POST /session/{id}/goog/cdp/execute` before the page is loaded.
//! - Firefox: the quota manager's preference `dom.quotaManager.temporaryStorage.fixedLimit`
//!   ([`FIREFOX_FIXED_LIMIT_KIB`], in KiB) in a fresh profile; the origin's quota is the
//!   group limit derived from it (Firefox gives a group at least 10 MiB), which the test reads
//!   from `navigator.storage.estimate()` and checks against the preference (the default quota
//!   is gigabytes).
//!
//! Chromium's override is not visible to `navigator.storage.estimate()`, so there the page also
//! gets the app's own budget (`?space_limit=`, half the quota); Firefox's limit is seen through
//! `estimate()` as a real quota is.
//!
//! Then, per browser:
//! 1. notes of [`NOTE_BYTES`] each are added (`notesApp.request("add")`) until one fails; that
//!    failure must be the template's typed storage-full error (`StorageFull`, i.e. SQLite's
//!    `SQLITE_FULL` from the engine's out-of-space error), the page must stay `ready`, and
//!    one more note through the form must make the page say "Storage is full";
//! 2. after a reload: every acknowledged note is there with its text, and
//!    `PRAGMA integrity_check` is `ok`;
//! 3. half of the notes are deleted (each delete is a commit too, made while the storage is
//!    full) and [`NOTES_AFTER_DELETE`] new notes must then be written, no reinstall; after a
//!    final reload they are all there and the check is still `ok`.
//!
//! Before the app loads, the same session measures the floor: how far one OPFS file grows under
//! that quota in that browser (4 KiB writes through a sync access handle in a worker, on a
//! blank page of the origin, until a write fails or comes up short; the file is then removed).
//! The database's logical bytes at its first `StorageFull` must reach at least
//! [`FLOOR_SHARE`] of that floor (issue 10's goal).
//!
//! Printed per browser and configuration: the quota, the floor, `estimate()`'s usage at the
//! failure, the database's logical bytes ÷ the floor, notes written.
//!
//! `QUOTA_CONFIGS`: the template's buffer modes and durability levels to run, each
//! `memory|disk-strict|relaxed|balanced`, comma-separated, or `all` (the six); default
//! `memory-strict`, the template's own setting (a fresh browser profile each).
//!
//! `#[ignore]`d (it builds the template and needs both browsers): `scripts/test.sh` runs it with
//! `cargo test -p bench-runner --test quota_e2e -- --ignored --nocapture`.
//!
//! Environment: `E2E_BROWSERS`, `E2E_TEMPLATE_COPY` (`-quota` is appended),
//! `E2E_TEMPLATE_TARGET`, `E2E_TIMEOUT_SECS`, `WASM_OPT` as in `template_e2e.rs`.

mod common;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use bench_runner::drive::save_screenshot;
use bench_runner::options::{Browser, Tools};
use common::{Res, Session};
use fantoccini::Client;
use serde_json::{json, Value};

/// Chromium: the origin's quota in bytes.
const CHROMIUM_QUOTA: u64 = 8 << 20;
/// Firefox: `dom.quotaManager.temporaryStorage.fixedLimit` in KiB.
const FIREFOX_FIXED_LIMIT_KIB: u64 = 8 << 10;
/// Characters (ASCII: bytes) per note.
const NOTE_BYTES: usize = 100_000;
/// Notes written after the deletions.
const NOTES_AFTER_DELETE: usize = 5;
/// The share of the single-file floor the database must reach before `StorageFull`.
const FLOOR_SHARE: f64 = 0.8;
/// The probe's file in the origin's OPFS root (removed after the probe).
const PROBE_FILE: &str = "quota-floor-probe";
/// A blank page of the origin to run the probe from, before the app (and its volume) loads.
const PROBE_PAGE: &str = "quota-floor-probe.html";

/// The template's configuration under test: its `?buffer_mode=` and `?durability=`.
#[derive(Clone, Copy, Debug)]
struct Config {
    buffer_mode: &'static str,
    durability: &'static str,
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.buffer_mode, self.durability)
    }
}

/// `QUOTA_CONFIGS` (see the module docs).
fn configs() -> Vec<Config> {
    const MODES: [&str; 2] = ["memory", "disk"];
    const LEVELS: [&str; 3] = ["strict", "relaxed", "balanced"];
    let all = || {
        MODES
            .iter()
            .flat_map(|&m| {
                LEVELS.iter().map(move |&d| Config {
                    buffer_mode: m,
                    durability: d,
                })
            })
            .collect::<Vec<_>>()
    };
    let Ok(list) = std::env::var("QUOTA_CONFIGS") else {
        return vec![Config {
            buffer_mode: "memory",
            durability: "strict",
        }];
    };
    if list == "all" {
        return all();
    }
    let all = all();
    list.split(',')
        .map(|name| {
            *all.iter()
                .find(|c| c.to_string() == name.trim())
                .unwrap_or_else(|| panic!("QUOTA_CONFIGS: unknown configuration {name:?}"))
        })
        .collect()
}

/// Note `i`'s text: recognisable and exactly [`NOTE_BYTES`] long.
fn note_text(i: usize) -> String {
    let head = format!("quota note {i:04} ");
    let fill = char::from(b'a' + u8::try_from(i % 26).unwrap());
    let mut s = head;
    while s.len() < NOTE_BYTES {
        s.push(fill);
    }
    s
}

#[derive(Debug)]
struct Report {
    quota: u64,
    /// How far one OPFS file grew under the quota.
    floor: u64,
    /// The volume's logical bytes at the first `StorageFull` (its files' lengths: the
    /// database file, its rollback journal being gone once the failed INSERT rolled back).
    logical_at_failure: u64,
    usage_at_failure: u64,
    written: usize,
    error: Value,
    after_delete: usize,
    usage_end: u64,
}

#[test]
#[ignore = "builds the template and needs both browsers: scripts/test.sh runs it with --ignored"]
fn storage_full_is_reported_and_recovered_from() {
    let started = Instant::now();
    let out = common::out_dir("quota-e2e");
    let dist = common::build_template("-quota", &out);
    let tools = Tools::default();
    let timeout = common::page_timeout();
    let mut failures = Vec::new();
    common::runtime().block_on(async {
        let probe_page = axum::Router::new().route(
            &format!("/{PROBE_PAGE}"),
            axum::routing::get(|| async {
                axum::response::Html("<!doctype html><title>quota floor probe</title>")
            }),
        );
        let served = common::serve(dist.clone(), probe_page)
            .await
            .expect("quota-e2e: static server");
        eprintln!("quota-e2e: serving {} at {}", dist.display(), served.url);
        for browser in common::browsers() {
            for config in configs() {
                let t = Instant::now();
                match run_browser(browser, config, &tools, &served, &out, timeout).await {
                    Ok(r) => eprintln!(
                        "quota-e2e: {browser} {config}: quota {} bytes ({:.1} MiB); one file \
                         grew to {} bytes ({:.0}% of the quota); {} notes of {NOTE_BYTES} bytes \
                         written before the failure ({}); logical bytes then {} = {:.0}% of the \
                         file's floor; estimate() usage at the failure {} bytes ({:.0}% of the \
                         quota); after deleting half, {} more written; usage at the end {} \
                         bytes; {:.1} s",
                        r.quota,
                        mib(r.quota),
                        r.floor,
                        100.0 * ratio(r.floor, r.quota),
                        r.written,
                        r.error,
                        r.logical_at_failure,
                        100.0 * ratio(r.logical_at_failure, r.floor),
                        r.usage_at_failure,
                        100.0 * ratio(r.usage_at_failure, r.quota),
                        r.after_delete,
                        r.usage_end,
                        t.elapsed().as_secs_f64()
                    ),
                    Err(e) => failures.push(format!("{browser} {config}: {e}")),
                }
            }
        }
    });
    eprintln!("quota-e2e: {:.1} s in all", started.elapsed().as_secs_f64());
    assert!(
        failures.is_empty(),
        "quota e2e failed:\n  - {}",
        failures.join("\n  - ")
    );
}

#[allow(clippy::cast_precision_loss)] // display only
fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

#[allow(clippy::cast_precision_loss)] // display only
fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b.max(1) as f64
}

async fn run_browser(
    browser: Browser,
    config: Config,
    tools: &Tools,
    served: &common::Served,
    out: &Path,
    timeout: Duration,
) -> Res<Report> {
    let profile = tempfile::Builder::new()
        .prefix("quota-e2e-profile-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let prefs = match browser {
        Browser::Firefox => json!({
            "dom.quotaManager.temporaryStorage.fixedLimit": FIREFOX_FIXED_LIMIT_KIB,
        }),
        Browser::Chromium => json!({}),
    };
    let caps = common::persistent_capabilities(browser, tools, profile.path(), prefs, &[]);
    let session = common::start_session(
        browser,
        tools,
        &out.join(format!("{}-{config}", browser.name())),
        caps,
    )
    .await?;
    let result = steps(&session, config, served, timeout).await;
    if let Err(e) = &result {
        let shot = out.join(format!("{}-{config}-failure.png", browser.name()));
        if save_screenshot(&session.client, &shot, common::WINDOW)
            .await
            .is_ok()
        {
            eprintln!(
                "quota-e2e: {browser} {config}: failed ({e}); screenshot {}",
                shot.display()
            );
        }
    }
    session.close().await;
    result
}

async fn steps(
    session: &Session,
    config: Config,
    served: &common::Served,
    timeout: Duration,
) -> Res<Report> {
    let browser = session.browser;
    let client = &session.client;
    let step = |what: &str| eprintln!("quota-e2e: {browser} {config}: {what}");

    let expected_max = match browser {
        Browser::Chromium => {
            step(&format!(
                "Storage.overrideQuotaForOrigin {} {CHROMIUM_QUOTA}",
                served.origin
            ));
            cdp(
                session,
                "Storage.overrideQuotaForOrigin",
                json!({ "origin": served.origin, "quotaSize": CHROMIUM_QUOTA }),
            )
            .await?;
            CHROMIUM_QUOTA
        }
        Browser::Firefox => FIREFOX_FIXED_LIMIT_KIB * 1024,
    };
    // Chromium: the override is enforced but invisible to the page (estimate() keeps the
    // default quota, below), so the volume could only learn the limit from the first failure,
    // when its log may hold the whole quota and no delete fits (not promised: vfs/DESIGN.md,
    // "Storage full"). The page passes the app's own budget instead (the template's
    // `?space_limit=`, InstallOptions::space_limit): half the quota, since Chromium counts
    // ~2 MiB of usage before the first note. Firefox: the real quota, seen through estimate().
    let mut url = format!(
        "{}?buffer_mode={}&durability={}",
        served.url, config.buffer_mode, config.durability
    );
    if browser == Browser::Chromium {
        url.push_str(&format!("&space_limit={}", CHROMIUM_QUOTA / 2));
    }

    // The floor, before the app's volume exists.
    client
        .goto(&format!("{}{PROBE_PAGE}", served.url))
        .await
        .map_err(|e| e.to_string())?;
    let probe = floor_probe(client).await?;
    let floor = probe["size"]
        .as_u64()
        .ok_or_else(|| format!("the floor probe gave {probe}"))?;
    step(&format!("one OPFS file grew to {floor} bytes: {probe}"));
    if probe["error"].is_null() || floor == 0 {
        return Err(format!("the floor probe did not reach the quota: {probe}"));
    }

    client.goto(&url).await.map_err(|e| e.to_string())?;
    common::wait_state(client, "ready", timeout).await?;
    let (usage, estimated_quota) = common::estimate(client).await?;
    step(&format!(
        "estimate(): quota {estimated_quota} bytes, usage {usage} bytes"
    ));
    let quota = match browser {
        // Chromium 156 enforces the override (a write past it fails with QuotaExceededError)
        // but estimate() keeps reporting the default quota (10 GiB here); the quota manager's
        // own figure, through CDP, shows the override.
        Browser::Chromium => {
            let q = cdp(
                session,
                "Storage.getUsageAndQuota",
                json!({ "origin": served.origin }),
            )
            .await?;
            step(&format!("Storage.getUsageAndQuota: {q}"));
            if q["overrideActive"] != true {
                return Err(format!("the quota override is not active: {q}"));
            }
            q["quota"]
                .as_u64()
                .ok_or_else(|| format!("Storage.getUsageAndQuota gave {q}"))?
        }
        Browser::Firefox => estimated_quota,
    };
    if quota > expected_max {
        return Err(format!(
            "the quota did not take effect: the origin's quota is {quota} bytes, more than the \
             {expected_max} set"
        ));
    }

    step(&format!(
        "add notes of {NOTE_BYTES} bytes until a write fails"
    ));
    let max_notes = usize::try_from(3 * quota).unwrap() / NOTE_BYTES + 10;
    let mut acked: Vec<(u64, usize)> = Vec::new();
    let error = loop {
        let i = acked.len();
        if i >= max_notes {
            return Err(format!(
                "{i} notes of {NOTE_BYTES} bytes fitted in a quota of {quota} bytes: the quota \
                 is not enforced"
            ));
        }
        match common::try_request(client, "add", json!(note_text(i))).await? {
            Ok(id) => acked.push((id.as_u64().ok_or_else(|| format!("add returned {id}"))?, i)),
            Err(e) => break e,
        }
    };
    let (usage_at_failure, _) = common::estimate(client).await?;
    let stats = common::request(client, "stats", Value::Null).await?;
    let logical_at_failure = stats["logicalBytes"]
        .as_u64()
        .ok_or_else(|| format!("stats gave {stats}"))?;
    step(&format!(
        "{} notes written; then {error}; estimate() usage {usage_at_failure} bytes; volume {}",
        acked.len(),
        describe_space(&stats)
    ));
    if error["name"] != "StorageFull" {
        return Err(format!(
            "the failing write gave {error}, expected the storage-full error (name StorageFull)"
        ));
    }
    if acked.is_empty() {
        return Err("the very first note failed: nothing was tested".into());
    }
    let state = common::script(client, "return window.notesApp.state;").await?;
    if state != "ready" {
        return Err(format!(
            "after the storage-full error the page's state is {state}, expected ready"
        ));
    }

    step("one more note through the form: the page must say the storage is full");
    // The input's maxlength limits typing, not a value set by script.
    client
        .execute(
            "document.querySelector('#note-text').value = arguments[0]; return true;",
            vec![json!(note_text(acked.len()))],
        )
        .await
        .map_err(|e| e.to_string())?;
    common::click(client, "#add").await?;
    let status = wait_status(client, "Storage is full", timeout).await?;
    step(&format!("status: {status:?}"));

    step("reload: every acknowledged note is there; integrity_check");
    settle(config).await;
    client.refresh().await.map_err(|e| e.to_string())?;
    common::wait_state(client, "ready", timeout).await?;
    common::integrity_check(client).await?;
    check_notes(client, &acked).await?;

    let delete = acked.len().div_ceil(2);
    step(&format!(
        "delete {delete} notes, then write {NOTES_AFTER_DELETE} new ones"
    ));
    step(&format!("volume before: {}", space(client).await?));
    let mut kept: Vec<(u64, usize)> = acked[delete..].to_vec();
    let mut refused = Vec::new();
    for &(id, i) in &acked[..delete] {
        match common::try_request(client, "remove", json!(id)).await? {
            Ok(_) => {}
            Err(e) => {
                if refused.is_empty() {
                    step(&format!(
                        "deleting note {i} (id {id}) failed: {e}; volume {}",
                        space(client).await?
                    ));
                }
                refused.push(i);
                kept.push((id, i));
            }
        }
    }
    step(&format!(
        "{} of {delete} deletes refused; volume after: {}",
        refused.len(),
        space(client).await?
    ));
    if !refused.is_empty() {
        return Err(format!(
            "{} of {delete} deletes failed with the storage full (notes {refused:?}): the app \
             cannot give space back",
            refused.len()
        ));
    }
    let first_new = acked.len() + 1;
    for i in first_new..first_new + NOTES_AFTER_DELETE {
        let id = common::try_request(client, "add", json!(note_text(i)))
            .await?
            .map_err(|e| {
                format!(
                    "note {} of {NOTES_AFTER_DELETE} after deleting {delete} notes: {e}",
                    i - first_new + 1
                )
            })?;
        kept.push((id.as_u64().ok_or_else(|| format!("add returned {id}"))?, i));
    }
    settle(config).await;
    client.refresh().await.map_err(|e| e.to_string())?;
    common::wait_state(client, "ready", timeout).await?;
    common::integrity_check(client).await?;
    check_notes(client, &kept).await?;
    let (usage_end, _) = common::estimate(client).await?;
    #[allow(clippy::cast_precision_loss)] // a share of a few MiB
    if (logical_at_failure as f64) < FLOOR_SHARE * floor as f64 {
        return Err(format!(
            "the database held {logical_at_failure} logical bytes at its first StorageFull: \
             {:.0}% of the {floor} bytes one OPFS file grew to under the same quota, under the \
             goal of {:.0}%",
            100.0 * ratio(logical_at_failure, floor),
            100.0 * FLOOR_SHARE
        ));
    }
    Ok(Report {
        quota,
        floor,
        logical_at_failure,
        usage_at_failure,
        written: acked.len(),
        error,
        after_delete: NOTES_AFTER_DELETE,
        usage_end,
    })
}

/// How far one OPFS file grows under the origin's quota: a worker (from a blob: sync access
/// handles exist only in workers) writes 4 KiB at a time to [`PROBE_FILE`] until a write
/// throws or comes up short, reads the file's size, closes and removes it. Gives
/// `{ size, error, usage_after }` (`error`: why it stopped; `usage_after`: `estimate()`'s usage
/// once the file is gone).
async fn floor_probe(client: &Client) -> Res<Value> {
    let js = r#"const [name, done] = arguments;
        const src = `onmessage = async (m) => {
          const root = await navigator.storage.getDirectory();
          const h = await (await root.getFileHandle(m.data, { create: true })).createSyncAccessHandle();
          const chunk = new Uint8Array(4096).fill(7);
          let at = 0, error = null;
          try {
            for (;;) {
              const n = h.write(chunk, { at });
              at += n;
              if (n < chunk.length) { error = "short write of " + n + " bytes"; break; }
              if (at >= 1 << 30) break;
            }
          } catch (e) { error = (e && e.name) + ": " + (e && e.message); }
          try { h.flush(); } catch (e) {}
          const size = h.getSize();
          h.close();
          await root.removeEntry(m.data);
          const usage_after = (await navigator.storage.estimate()).usage;
          postMessage({ size, error, usage_after });
        };`;
        const w = new Worker(URL.createObjectURL(new Blob([src], { type: "text/javascript" })));
        w.onmessage = (e) => { w.terminate(); done(JSON.stringify(e.data)); };
        w.onerror = (e) => done(JSON.stringify({ size: null, error: "worker: " + e.message }));
        w.postMessage(name);"#;
    let v = client
        .execute_async(js, vec![json!(PROBE_FILE)])
        .await
        .map_err(|e| format!("floor probe: {e}"))?;
    let text = v.as_str().ok_or_else(|| format!("floor probe gave {v}"))?;
    serde_json::from_str(text).map_err(|e| format!("floor probe: {e}: {text}"))
}

/// Before a reload (which ends the worker as a tab crash would): under `balanced` a commit is
/// acknowledged before it is written, and written and flushed within the level's 100 ms
/// (`max_flush_delay`); a reload sooner may lose the newest (its promise: vfs/README.md,
/// "Durability levels"). Wait past it, so the check after the reload holds the level to its
/// promise and no further. Strict and relaxed commits are written before they are
/// acknowledged: no wait.
async fn settle(config: Config) {
    if config.durability == "balanced" {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The volume's space as the page's `stats` hook reports it, for the log.
async fn space(client: &Client) -> Res<String> {
    Ok(describe_space(
        &common::request(client, "stats", Value::Null).await?,
    ))
}

/// The `stats` hook's answer `v`, as [`space`] logs it.
fn describe_space(v: &Value) -> String {
    let f = |k: &str| v[k].as_u64().unwrap_or(0);
    format!(
        "log {} B, data {} B ({} B unused), logical {} B, checkpoints {} ({} failed), failed \
         commits {}",
        f("logBytes"),
        f("dataBytes"),
        f("freeBytes"),
        f("logicalBytes"),
        f("checkpoints"),
        f("failedCheckpoints"),
        f("failedCommits")
    )
}

/// The notes listed are exactly `want` (`(id, index)`), each with its text.
async fn check_notes(client: &Client, want: &[(u64, usize)]) -> Res<()> {
    let mut have = common::list_notes(client).await?;
    have.sort();
    let mut want: Vec<(u64, usize)> = want.to_vec();
    want.sort_unstable();
    let ids: Vec<u64> = have.iter().map(|n| n.0).collect();
    let want_ids: Vec<u64> = want.iter().map(|n| n.0).collect();
    if ids != want_ids {
        let missing: Vec<u64> = want_ids
            .iter()
            .filter(|id| !ids.contains(id))
            .copied()
            .collect();
        return Err(format!(
            "{} notes listed, {} expected; missing ids {missing:?}",
            ids.len(),
            want_ids.len()
        ));
    }
    for ((id, text), (_, i)) in have.iter().zip(&want) {
        if *text != note_text(*i) {
            return Err(format!(
                "note {id} has {} bytes starting {:?}, expected note {i}",
                text.len(),
                text.chars().take(20).collect::<String>()
            ));
        }
    }
    Ok(())
}

/// Waits until `#status` contains `want`; returns its text.
async fn wait_status(client: &Client, want: &str, timeout: Duration) -> Res<String> {
    let start = Instant::now();
    loop {
        let v = common::script(
            client,
            "return document.querySelector('#status').textContent;",
        )
        .await?;
        let text = v.as_str().unwrap_or_default().to_owned();
        if text.contains(want) {
            return Ok(text);
        }
        if start.elapsed() > timeout {
            return Err(format!(
                "the page's status is {text:?}, expected it to contain {want:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A Chrome DevTools Protocol command through chromedriver's
/// `POST /session/{id}/goog/cdp/execute` (`{ cmd, params }`). fantoccini's
/// `WebDriverCompatibleCommand` would need the `url` and `http` crates as dependencies of
/// these tests; the request is one small HTTP/1.1 POST to 127.0.0.1, made here with std (a
/// blocking call of a few milliseconds, inside the test's own runtime). chromedriver closes
/// an HTTP/1.0 request without a reply, and answers HTTP/1.1 with a `Content-Length`.
async fn cdp(session: &Session, cmd: &str, params: Value) -> Res<Value> {
    let id = session
        .client
        .session_id()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no WebDriver session id")?;
    let base = session.driver.url.trim_end_matches('/');
    let addr = base
        .strip_prefix("http://")
        .ok_or_else(|| format!("driver URL {base} is not http://"))?;
    let body = json!({ "cmd": cmd, "params": params }).to_string();
    let request = format!(
        "POST /session/{id}/goog/cdp/execute HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n\
         {body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    // chromedriver says `Connection: close` but keeps the socket open: read the head, then
    // exactly `Content-Length` bytes.
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let (head, body) = loop {
        let n = stream.read(&mut chunk).map_err(|e| format!("{cmd}: {e}"))?;
        if n == 0 {
            return Err(format!(
                "{cmd}: the connection closed after {} bytes: {:?}",
                buf.len(),
                String::from_utf8_lossy(&buf)
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let length = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse::<usize>().ok())?
            })
            .ok_or_else(|| format!("{cmd}: no Content-Length in {head:?}"))?;
        if buf.len() >= end + 4 + length {
            let body = String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into_owned();
            break (head, body);
        }
    };
    let body = body.as_str();
    let v: Value = serde_json::from_str(body).map_err(|e| format!("{cmd}: {e}: {body:?}"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!(
            "{cmd}: {}: {v}",
            head.lines().next().unwrap_or_default()
        ));
    }
    Ok(v["value"].clone())
}
