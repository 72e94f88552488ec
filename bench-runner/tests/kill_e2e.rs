//! End-to-end: the browser killed (SIGKILL) while the template app commits, then started again
//! on the same profile, shows every acknowledged note.
//!
//! The template (`examples/notes-app`) is built outside the workspace as `template_e2e.rs`
//! builds it (shared code in `common/`) and served with a plain static server that also has a
//! test endpoint, `POST /ack`. For each browser and each durability level (the page's
//! `?durability=` parameter) on its own persistent profile (Chromium `--user-data-dir`,
//! Firefox `-profile`, used in place), the test repeats [`KILLS`] times:
//!
//! 1. a script in the page runs a loop of notes `r<k>-0`, `r<k>-1`, ... through the page's
//!    `notesApp.request("add", text)` (one autocommit INSERT each, one after another) and posts
//!    each acknowledgement `[i, id, Date.now()]` to `/ack` as soon as it has it (in batches while
//!    a post is in flight). The server keeps them, so the acknowledgements seen before the kill
//!    are known although the page dies;
//! 2. after at least [`MIN_ACKS`] acknowledgements and a further random pause of up to
//!    [`KILL_JITTER_MS`], the driver's whole process group — the driver and the browser with
//!    every process it started — gets SIGKILL in one `kill(2)` call; the test then waits until
//!    none of them is left (and kills by pid any process still naming the profile);
//! 3. a new driver and browser start on the same profile and open the page, which must mount
//!    the volume (state `ready`, no error), and the test reads every note (`list`) and runs
//!    `PRAGMA integrity_check` (`integrityCheck`).
//!
//! Assertions per kill:
//! - `integrity_check` is `ok` and the page is `ready`;
//! - the notes of the killed loop form a prefix `r<k>-0 .. r<k>-(m-1)` of the issued sequence
//!   (commits are atomic and ordered: no holes), with increasing ids, each acknowledged note
//!   with the id it was acknowledged with;
//! - Strict and Relaxed: every acknowledged note is present (both write before acknowledging;
//!   a killed browser loses nothing written);
//! - Balanced: every note acknowledged more than `max_flush_delay` (the template's
//!   `InstallOptions` default, [`MAX_FLUSH_DELAY_MS`]) plus [`BALANCED_MARGIN_MS`] before the
//!   kill is present (the margin covers the worker's timer running late on a loaded machine);
//! - the notes of earlier rounds are all still there.
//!
//! A table per kill is printed: acknowledged (as the server saw them), present, present but
//! not acknowledged (in flight), lost, lost within the window, the age of the oldest lost one.
//!
//! `#[ignore]`d (it builds the template and needs both browsers): `scripts/test.sh` runs it with
//! `cargo test -p bench-runner --test kill_e2e -- --ignored --nocapture`.
//!
//! Environment: `E2E_BROWSERS`, `E2E_TEMPLATE_COPY` (`-kill` is appended), `E2E_TEMPLATE_TARGET`,
//! `E2E_TIMEOUT_SECS`, `WASM_OPT` as in `template_e2e.rs`; `KILL_E2E_DURABILITIES`
//! (default `strict,relaxed,balanced`), `KILL_E2E_KILLS` (kills per browser and durability,
//! default [`KILLS`]), `KILL_E2E_SEED` (the kill moments' random seed; printed).

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bench_runner::options::{Browser, Tools};
use common::{Res, Session};
use serde_json::{json, Value};

/// Kills per browser and durability level.
const KILLS: usize = 3;
/// Acknowledgements the server must have seen before the kill is scheduled.
const MIN_ACKS: usize = 20;
/// The kill comes a random 0..this many ms after [`MIN_ACKS`].
const KILL_JITTER_MS: u64 = 400;
/// `InstallOptions::default().max_flush_delay` (the template does not change it).
const MAX_FLUSH_DELAY_MS: u64 = 100;
/// Balanced: notes acknowledged within `MAX_FLUSH_DELAY_MS + BALANCED_MARGIN_MS` before the
/// kill may be lost; older ones may not.
const BALANCED_MARGIN_MS: u64 = 150;

/// One acknowledgement as the page posted it.
#[derive(Clone, Copy, Debug)]
struct Ack {
    index: u64,
    id: u64,
    /// `Date.now()` in the page when `add` resolved.
    at_ms: u64,
}

/// The `/ack` endpoint's store: prefix -> acknowledgements in arrival order.
type Acks = Arc<Mutex<BTreeMap<String, Vec<Ack>>>>;

/// What one kill showed.
#[derive(Debug)]
struct Round {
    browser: Browser,
    durability: &'static str,
    round: usize,
    acked: usize,
    present: usize,
    unacked_present: usize,
    lost: usize,
    lost_in_window: usize,
    oldest_lost_ms: Option<u64>,
    loop_ms: u64,
    failures: Vec<String>,
}

#[test]
#[ignore = "builds the template and needs both browsers: scripts/test.sh runs it with --ignored"]
fn browser_killed_mid_commit_keeps_every_acknowledged_note() {
    let started = Instant::now();
    let out = common::out_dir("kill-e2e");
    let dist = common::build_template("-kill", &out);
    let browsers = common::browsers();
    let durabilities: Vec<&'static str> = std::env::var("KILL_E2E_DURABILITIES")
        .unwrap_or_else(|_| "strict,relaxed,balanced".into())
        .split(',')
        .map(|d| match d.trim() {
            "strict" => "strict",
            "relaxed" => "relaxed",
            "balanced" => "balanced",
            other => panic!("KILL_E2E_DURABILITIES: unknown durability {other:?}"),
        })
        .collect();
    let kills: usize = std::env::var("KILL_E2E_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(KILLS);
    let seed: u64 = std::env::var("KILL_E2E_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
                .into()
        });
    eprintln!("kill-e2e: seed {seed} (KILL_E2E_SEED={seed} repeats the kill moments)");
    let mut rng = XorShift(seed.max(1));
    let tools = Tools::default();
    let timeout = common::page_timeout();

    let acks: Acks = Arc::default();
    let mut rounds = Vec::new();
    let mut errors = Vec::new();
    common::runtime().block_on(async {
        let store = acks.clone();
        let routes = axum::Router::new().route(
            "/ack",
            axum::routing::post(move |body: String| {
                let store = store.clone();
                async move { record_acks(&store, &body) }
            }),
        );
        let served = common::serve(dist.clone(), routes)
            .await
            .expect("kill-e2e: static server");
        eprintln!("kill-e2e: serving {} at {}", dist.display(), served.url);
        for &browser in &browsers {
            for &durability in &durabilities {
                let t = Instant::now();
                let series = Series {
                    browser,
                    durability,
                    tools: &tools,
                    url: &served.url,
                    out: &out,
                    timeout,
                    acks: &acks,
                };
                match series.run(kills, &mut rng, &mut rounds).await {
                    Ok(()) => eprintln!(
                        "kill-e2e: {browser} {durability}: {kills} kill(s) in {:.1} s",
                        t.elapsed().as_secs_f64()
                    ),
                    Err(e) => errors.push(format!("{browser} {durability}: {e}")),
                }
            }
        }
    });

    eprintln!(
        "\nkill-e2e: per kill (acked = acknowledgements the server received before the kill; \
         window = {} ms)",
        MAX_FLUSH_DELAY_MS + BALANCED_MARGIN_MS
    );
    eprintln!(
        "  {:<8} {:<8} {:>4} {:>7} {:>7} {:>9} {:>5} {:>10} {:>11} {:>8}",
        "browser",
        "level",
        "kill",
        "acked",
        "present",
        "in flight",
        "lost",
        "lost (win)",
        "oldest lost",
        "loop ms"
    );
    for r in &rounds {
        eprintln!(
            "  {:<8} {:<8} {:>4} {:>7} {:>7} {:>9} {:>5} {:>10} {:>11} {:>8}",
            r.browser.name(),
            r.durability,
            r.round + 1,
            r.acked,
            r.present,
            r.unacked_present,
            r.lost,
            r.lost_in_window,
            r.oldest_lost_ms
                .map_or_else(|| "-".to_owned(), |ms| format!("{ms} ms")),
            r.loop_ms
        );
        for f in &r.failures {
            errors.push(format!(
                "{} {} kill {}: {f}",
                r.browser,
                r.durability,
                r.round + 1
            ));
        }
    }
    eprintln!(
        "kill-e2e: {} kill(s), {:.1} s in all",
        rounds.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        errors.is_empty(),
        "kill e2e failed:\n  - {}",
        errors.join("\n  - ")
    );
    let expected = browsers.len() * durabilities.len() * kills;
    assert_eq!(rounds.len(), expected, "kill e2e: kills done");
}

/// `POST /ack` body: `{ "prefix": "r0-", "acks": [[index, id, ms], ...] }`.
fn record_acks(store: &Acks, body: &str) -> &'static str {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return "bad json";
    };
    let (Some(prefix), Some(list)) = (v["prefix"].as_str(), v["acks"].as_array()) else {
        return "bad shape";
    };
    let mut store = store.lock().unwrap();
    let entry = store.entry(prefix.to_owned()).or_default();
    for a in list {
        if let (Some(index), Some(id), Some(at_ms)) = (a[0].as_u64(), a[1].as_u64(), a[2].as_u64())
        {
            entry.push(Ack { index, id, at_ms });
        }
    }
    "ok"
}

/// xorshift64*: the kill moments (no cryptography here).
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// The page's insert loop (started by `execute`, it runs until the browser dies).
const LOOP_SCRIPT: &str = r#"
const [prefix, reportUrl] = arguments;
const app = window.notesApp;
const loop = (app.killLoop = { prefix, acked: 0, error: null });
const queue = [];
let sending = false;
async function report() {
  if (sending) return;
  sending = true;
  while (queue.length) {
    const acks = queue.splice(0);
    try {
      const r = await fetch(reportUrl, { method: "POST", body: JSON.stringify({ prefix, acks }) });
      if (!r.ok) loop.error = `report: HTTP ${r.status}`;
    } catch (e) {
      loop.error = `report: ${e}`;
    }
  }
  sending = false;
}
(async () => {
  for (let i = 0; ; i++) {
    let id;
    try {
      id = await app.request("add", prefix + i);
    } catch (e) {
      loop.error = `add ${prefix}${i}: ${e.name}: ${e.message}`;
      return;
    }
    queue.push([i, id, Date.now()]);
    loop.acked = i + 1;
    report();
  }
})();
return true;
"#;

struct Series<'a> {
    browser: Browser,
    durability: &'static str,
    tools: &'a Tools,
    url: &'a str,
    out: &'a Path,
    timeout: Duration,
    acks: &'a Acks,
}

impl Series<'_> {
    fn page_url(&self) -> String {
        format!("{}?durability={}", self.url, self.durability)
    }

    async fn start(&self, profile: &Path, n: usize) -> Res<Session> {
        let caps =
            common::persistent_capabilities(self.browser, self.tools, profile, json!({}), &[]);
        let log_dir = self
            .out
            .join(format!("{}-{}-{n}", self.browser.name(), self.durability));
        let session = common::start_session(self.browser, self.tools, &log_dir, caps).await?;
        session
            .client
            .goto(&self.page_url())
            .await
            .map_err(|e| e.to_string())?;
        common::wait_state(&session.client, "ready", self.timeout).await?;
        Ok(session)
    }

    async fn run(&self, kills: usize, rng: &mut XorShift, rounds: &mut Vec<Round>) -> Res<()> {
        let profile = tempfile::Builder::new()
            .prefix(&format!(
                "kill-e2e-{}-{}-",
                self.browser.name(),
                self.durability
            ))
            .tempdir()
            .map_err(|e| e.to_string())?;
        let mut session = self.start(profile.path(), 0).await?;
        // Notes present per earlier round, as first seen after its kill.
        let mut kept: Vec<usize> = Vec::new();
        for round in 0..kills {
            let prefix = format!("{}-{}-r{round}-", self.browser.name(), self.durability);
            let report_url = format!("{}ack", self.url);
            let loop_start = now_ms();
            session
                .client
                .execute(LOOP_SCRIPT, vec![json!(prefix), json!(report_url)])
                .await
                .map_err(|e| format!("starting the insert loop: {e}"))?;
            self.wait_for_acks(&session, &prefix).await?;
            tokio::time::sleep(Duration::from_millis(rng.below(KILL_JITTER_MS + 1))).await;
            let kill_ms = now_ms();
            kill(session, profile.path())?;
            // Posts in flight when the browser died are either complete or gone: let the
            // server finish those that arrived.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let acked = self
                .acks
                .lock()
                .unwrap()
                .get(&prefix)
                .cloned()
                .unwrap_or_default();

            session = self.start(profile.path(), round + 1).await?;
            let mut r = Round {
                browser: self.browser,
                durability: self.durability,
                round,
                acked: acked.len(),
                present: 0,
                unacked_present: 0,
                lost: 0,
                lost_in_window: 0,
                oldest_lost_ms: None,
                loop_ms: kill_ms - loop_start,
                failures: Vec::new(),
            };
            if let Err(e) = common::integrity_check(&session.client).await {
                r.failures.push(e);
            }
            let notes = common::list_notes(&session.client).await?;
            self.check_round(&mut r, &prefix, &acked, &notes, kill_ms);
            // Earlier rounds keep what they had.
            for (earlier, &had) in kept.iter().enumerate() {
                let p = format!("{}-{}-r{earlier}-", self.browser.name(), self.durability);
                let now = notes.iter().filter(|(_, t)| t.starts_with(&p)).count();
                if now != had {
                    r.failures.push(format!(
                        "round {} had {had} notes after its kill, now {now}",
                        earlier + 1
                    ));
                }
            }
            kept.push(r.present);
            eprintln!(
                "kill-e2e: {} {} kill {}: acked {}, present {}, lost {} (within the window {})",
                self.browser,
                self.durability,
                round + 1,
                r.acked,
                r.present,
                r.lost,
                r.lost_in_window
            );
            rounds.push(r);
        }
        session.close().await;
        Ok(())
    }

    /// Waits until the server has [`MIN_ACKS`] acknowledgements of `prefix` (or the loop
    /// reports an error).
    async fn wait_for_acks(&self, session: &Session, prefix: &str) -> Res<()> {
        let start = Instant::now();
        loop {
            let n = self.acks.lock().unwrap().get(prefix).map_or(0, Vec::len);
            if n >= MIN_ACKS {
                return Ok(());
            }
            if start.elapsed() > self.timeout {
                let state = common::script(
                    &session.client,
                    "return JSON.stringify(window.notesApp.killLoop);",
                )
                .await
                .unwrap_or_default();
                return Err(format!(
                    "only {n} acknowledgements within {} s (loop: {state})",
                    self.timeout.as_secs()
                ));
            }
            if start.elapsed() > Duration::from_millis(500) {
                let v = common::script(&session.client, "return window.notesApp.killLoop.error;")
                    .await?;
                if !v.is_null() {
                    return Err(format!("the insert loop failed before the kill: {v}"));
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    fn check_round(
        &self,
        r: &mut Round,
        prefix: &str,
        acked: &[Ack],
        notes: &[(u64, String)],
        kill_ms: u64,
    ) {
        // index -> id of the notes of this round.
        let mut present: BTreeMap<u64, u64> = BTreeMap::new();
        for (id, text) in notes {
            if let Some(i) = text.strip_prefix(prefix) {
                match i.parse::<u64>() {
                    Ok(i) => {
                        if present.insert(i, *id).is_some() {
                            r.failures.push(format!("note {text:?} is there twice"));
                        }
                    }
                    Err(_) => r.failures.push(format!("unexpected note {text:?}")),
                }
            }
        }
        r.present = present.len();
        // A prefix of the issued sequence, ids increasing.
        let n = u64::try_from(present.len()).unwrap();
        if present
            .keys()
            .next_back()
            .is_some_and(|&last| last + 1 != n)
        {
            let holes: Vec<u64> = (0..n)
                .filter(|i| !present.contains_key(i))
                .take(10)
                .collect();
            r.failures.push(format!(
                "the notes present are not a prefix of the issued sequence: {} notes, last \
                 index {:?}, missing e.g. {holes:?}",
                present.len(),
                present.keys().next_back()
            ));
        }
        if present
            .values()
            .zip(present.values().skip(1))
            .any(|(a, b)| a >= b)
        {
            r.failures
                .push("the ids of the notes present do not increase with their index".into());
        }
        let window = MAX_FLUSH_DELAY_MS + BALANCED_MARGIN_MS;
        let mut acked_indices = std::collections::BTreeSet::new();
        for a in acked {
            acked_indices.insert(a.index);
            match present.get(&a.index) {
                Some(&id) if id == a.id => {}
                Some(&id) => r.failures.push(format!(
                    "note {prefix}{} was acknowledged with id {}, found with id {id}",
                    a.index, a.id
                )),
                None => {
                    r.lost += 1;
                    let age = kill_ms.saturating_sub(a.at_ms);
                    r.oldest_lost_ms = Some(r.oldest_lost_ms.map_or(age, |o| o.max(age)));
                    if age <= window {
                        r.lost_in_window += 1;
                    }
                }
            }
        }
        r.unacked_present = present
            .keys()
            .filter(|i| !acked_indices.contains(i))
            .count();
        match self.durability {
            "balanced" => {
                let outside = r.lost - r.lost_in_window;
                if outside > 0 {
                    r.failures.push(format!(
                        "{outside} acknowledged note(s) lost that were acknowledged more than \
                         {window} ms before the kill (oldest {} ms)",
                        r.oldest_lost_ms.unwrap_or(0)
                    ));
                }
            }
            _ => {
                if r.lost > 0 {
                    r.failures.push(format!(
                        "{} acknowledged note(s) lost (the oldest acknowledged {} ms before the \
                         kill)",
                        r.lost,
                        r.oldest_lost_ms.unwrap_or(0)
                    ));
                }
            }
        }
        if acked.is_empty() {
            r.failures
                .push("no acknowledgement reached the server: nothing was tested".into());
        }
    }
}

/// SIGKILL to the driver's process group (the driver, the browser and every process the
/// browser started: they inherit the group), then waits until none is left. A process outside
/// the group that still names the profile in its command line is killed by pid.
fn kill(session: Session, profile: &Path) -> Res<()> {
    let Session { client, driver, .. } = session;
    let pgid = libc::pid_t::try_from(driver.guard.id()).map_err(|e| e.to_string())?;
    // Safety: kill(2) with a negative pid signals that process group and has no memory effects
    // here. The group is the one ChildGuard::spawn created for the driver (its pid is the
    // group id), so only processes this test started are signalled.
    let rc = unsafe { libc::kill(-pgid, libc::SIGKILL) };
    if rc != 0 {
        return Err(format!(
            "kill(-{pgid}, SIGKILL): {}",
            std::io::Error::last_os_error()
        ));
    }
    drop(client);
    // Reaps the driver (it has exited) after signalling the group once more.
    drop(driver);
    let profile = profile.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = survivors(pgid, &profile);
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("processes survived the kill: {left:?}"));
        }
        for &(pid, in_group) in &left {
            if !in_group {
                // Safety: as above, for one pid whose command line names this test's own
                // temporary profile directory.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Live (not zombie) processes in group `pgid` or naming `profile`: `(pid, in the group)`.
fn survivors(pgid: libc::pid_t, profile: &str) -> Vec<(libc::pid_t, bool)> {
    let mut left = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return left;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command name in parentheses: state, ppid, pgrp, ...
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        let (Some(&state), Some(pgrp)) = (
            fields.first(),
            fields.get(2).and_then(|p| p.parse::<libc::pid_t>().ok()),
        ) else {
            continue;
        };
        if state == "Z" || state == "X" {
            continue;
        }
        let in_group = pgrp == pgid;
        let names_profile = fs::read(entry.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(profile));
        if in_group || names_profile {
            left.push((pid, in_group));
        }
    }
    left
}
