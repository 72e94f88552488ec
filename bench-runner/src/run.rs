//! `bench-runner run`: serve the page once, run it in each browser in turn, validate, write
//! `<out-dir>/<date>-<browser>.json`, regenerate `<out-dir>/<date>-report.md`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_results::combine::combine_loads;
use bench_results::stats::ORDER_SEED;
use bench_results::{Document, RunnerRecord, Suite};
use serde_json::Value;

use crate::child::start_serve;
use crate::doc::validate;
use crate::drive::{run_browser, DriveOptions, Outcome};
use crate::options::{target_dir, Browser, RunOptions};
use crate::util::{fmt_elapsed, today};
use crate::{report, Context as _, Error, Result};

/// What one browser's run came to.
#[derive(Debug)]
pub struct BrowserRun {
    /// Which browser.
    pub browser: Browser,
    /// The page's output, when it finished.
    pub outcome: Option<Outcome>,
    /// Why it did not finish, or what is wrong with its result (empty: all good).
    pub problems: Vec<String>,
    /// Worth saying, not failures.
    pub warnings: Vec<String>,
    /// The result file written, if any.
    pub json_path: Option<PathBuf>,
}

impl BrowserRun {
    /// Finished, valid, every verification passed, no console errors.
    pub fn ok(&self) -> bool {
        self.outcome.is_some() && self.problems.is_empty()
    }
}

/// Everything a `run` did.
#[derive(Debug)]
pub struct RunSummary {
    /// Per browser, in order.
    pub browsers: Vec<BrowserRun>,
    /// The report written, if any result was.
    pub report: Option<PathBuf>,
    /// The report's headline section.
    pub headline: Option<String>,
}

impl RunSummary {
    /// Every browser finished with a valid result.
    pub fn ok(&self) -> bool {
        self.browsers.iter().all(BrowserRun::ok)
    }
}

/// Checks an outcome: the document (see [`validate`]) and the console errors.
pub fn check(outcome: &Outcome, requested_suites: &[Suite]) -> (Vec<String>, Vec<String>) {
    let v = validate(&outcome.result_json, requested_suites);
    let mut problems = v.problems;
    for e in &outcome.console_errors {
        problems.push(format!(
            "console error: {}",
            crate::doc::scalar_text(e).unwrap_or_else(|| e.to_string())
        ));
    }
    (problems, v.warnings)
}

/// The runner's record of one browser run.
pub fn runner_record(
    outcome: &Outcome,
    query: &str,
    problems: &[String],
    warnings: &[String],
) -> RunnerRecord {
    RunnerRecord {
        tool: concat!("bench-runner ", env!("CARGO_PKG_VERSION")).to_owned(),
        browser: outcome.browser.name().to_owned(),
        browser_version: outcome.browser_version.clone(),
        headless: true,
        query: query.to_owned(),
        elapsed_s: (outcome.elapsed.as_secs_f64() * 10.0).round() / 10.0,
        console_errors: outcome
            .console_errors
            .iter()
            .map(|e| crate::doc::scalar_text(e).unwrap_or_else(|| e.to_string()))
            .collect(),
        problems: problems.to_vec(),
        warnings: warnings.to_vec(),
        emulation: outcome.emulation.clone(),
    }
}

/// The page's document with the runner's own record added under `runner`: the driver's
/// browser version, the exact query, wall time, console errors, validation problems and any
/// device emulation. The page's JSON is kept as it is (a value, not re-read through the
/// schema), so a document the schema rejects is still written for inspection.
pub fn annotate(
    outcome: &Outcome,
    query: &str,
    problems: &[String],
    warnings: &[String],
) -> Result<String> {
    let mut doc: Value = serde_json::from_str(&outcome.result_json)
        .context(format!("{}: the result is not JSON", outcome.browser))?;
    let record = serde_json::to_value(runner_record(outcome, query, problems, warnings))
        .context("serializing the runner record")?;
    if let Value::Object(m) = &mut doc {
        m.insert("runner".to_owned(), record);
    }
    serde_json::to_string_pretty(&doc).context("serializing the result")
}

/// `chromium`, `firefox`, or `chromium-phone-emulation`: the name a browser's result file
/// carries after its date.
pub fn result_name(browser: Browser, emulated: bool) -> String {
    if emulated {
        format!("{}-phone-emulation", browser.name())
    } else {
        browser.name().to_owned()
    }
}

/// Runs everything `opts` asks for. Browser failures are recorded, not returned: the other
/// browser still runs and the report still gets written. `Err` only when nothing could start
/// (no page, no server).
pub async fn run(opts: &RunOptions) -> Result<RunSummary> {
    let date = today();
    let log_dir = target_dir(&opts.root).join("bench-runner");
    std::fs::create_dir_all(&log_dir).context(format!("creating {}", log_dir.display()))?;
    let server = start_serve(&opts.source, &opts.root, &log_dir)?;
    eprintln!("[bench-runner] page at {}", server.url);
    let query = opts.page.query();
    let requested: Vec<Suite> = opts
        .page
        .requested_suites()
        .iter()
        .filter_map(|s| Suite::parse(s))
        .collect();
    let mut browsers = Vec::new();
    for &browser in &opts.browsers {
        let started = Instant::now();
        let mut run = BrowserRun {
            browser,
            outcome: None,
            problems: Vec::new(),
            warnings: Vec::new(),
            json_path: None,
        };
        match run_loads(opts, browser, &server.url, &log_dir, &date, &requested).await {
            Err(e) => run.problems.push(e.to_string()),
            Ok((outcome, problems, warnings)) => {
                run.problems = problems;
                run.warnings = warnings;
                if opts.write_results {
                    let name = result_name(browser, outcome.emulation.is_some());
                    let path = opts.out_dir.join(format!("{date}-{name}.json"));
                    let written = annotate(&outcome, &query, &run.problems, &run.warnings)
                        .and_then(|text| {
                            std::fs::create_dir_all(&opts.out_dir)
                                .context(format!("creating {}", opts.out_dir.display()))?;
                            std::fs::write(&path, text)
                                .context(format!("writing {}", path.display()))
                        });
                    match written {
                        Ok(()) => {
                            eprintln!("[{browser}] wrote {}", path.display());
                            run.json_path = Some(path);
                        }
                        Err(e) => run.problems.push(e.to_string()),
                    }
                }
                if let Some(s) = &outcome.screenshot {
                    eprintln!("[{browser}] screenshot {}", s.display());
                }
                run.outcome = Some(outcome);
            }
        }
        for w in &run.warnings {
            eprintln!("[{browser}] warning: {w}");
        }
        if run.problems.is_empty() {
            eprintln!("[{browser}] ok ({})", fmt_elapsed(started.elapsed()));
        } else {
            eprintln!(
                "[{browser}] FAILED after {}:",
                fmt_elapsed(started.elapsed())
            );
            for p in &run.problems {
                eprintln!("  - {p}");
            }
        }
        browsers.push(run);
    }
    drop(server);

    let mut summary = RunSummary {
        browsers,
        report: None,
        headline: None,
    };
    if summary.browsers.iter().any(|b| b.json_path.is_some()) {
        let (path, text) = report::write_report(&opts.out_dir, &date, &[], None)?;
        summary.headline = Some(headline_of(&text));
        summary.report = Some(path);
    }
    Ok(summary)
}

/// Runs the page `opts.page_loads` times in `browser` (each load in a new session; with more
/// than one, load `k` has the round orders' seed [`load_seed`]) and checks each
/// ([`check`]). One load: its outcome. Several: one outcome whose document combines them
/// ([`combine_loads`]), whose console errors are all of theirs and whose time is their sum;
/// a load's problems and warnings carry its number. A load that cannot run ends the series:
/// the loads before it are combined and kept, its error is a problem. `Err` when the first
/// load could not run.
async fn run_loads(
    opts: &RunOptions,
    browser: Browser,
    url: &str,
    log_dir: &Path,
    date: &str,
    requested: &[Suite],
) -> Result<(Outcome, Vec<String>, Vec<String>)> {
    let loads = opts.page_loads.max(1);
    let mut outcomes = Vec::new();
    let (mut problems, mut warnings) = (Vec::new(), Vec::new());
    for load in 0..loads {
        let mut params = opts.page.clone();
        if loads > 1 {
            params.order_seed = Some(load_seed(opts.page.order_seed, load));
            eprintln!("[{browser}] page load {} of {loads}", load + 1);
        }
        let drive = DriveOptions {
            browser,
            tools: opts.tools.clone(),
            page_url: url.to_owned(),
            params,
            timeout: opts.timeout,
            window: opts.window,
            // The last load's results view (the combined one is only in the files).
            screenshot: opts
                .screenshot_path(browser, date)
                .filter(|_| load + 1 == loads),
            log_dir: log_dir.to_owned(),
            verbose: true,
            emulate_phone: opts.emulate_phone.filter(|_| browser == Browser::Chromium),
        };
        let outcome = match run_browser(&drive).await {
            Ok(o) => o,
            Err(e) if load == 0 && loads > 1 => return Err(Error(format!("page load 0: {e}"))),
            Err(e) if load == 0 => return Err(e),
            Err(e) => {
                eprintln!("[{browser}] page load {load} failed; keeping the {load} before it");
                problems.push(format!("page load {load}: {e}"));
                break;
            }
        };
        let (p, w) = check(&outcome, requested);
        let tag = |m: String| {
            if loads > 1 {
                format!("page load {load}: {m}")
            } else {
                m
            }
        };
        problems.extend(p.into_iter().map(tag));
        warnings.extend(w.into_iter().map(tag));
        outcomes.push(outcome);
    }
    if outcomes.len() == 1 {
        let outcome = outcomes.pop().ok_or("no page load ran")?;
        return Ok((outcome, problems, warnings));
    }
    let docs = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| {
            Document::from_json(&o.result_json)
                .map_err(|e| Error(format!("page load {i}: the result does not load: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let boot = docs
        .first()
        .and_then(|d| d.sql.as_ref()?.bootstrap.clone())
        .unwrap_or_default();
    let docs_len = docs.len();
    let combined = combine_loads(docs, &boot).context("combining the page loads")?;
    let mut outcome = outcomes.pop().ok_or("no page load ran")?;
    outcome.elapsed += outcomes.iter().map(|o| o.elapsed).sum::<Duration>();
    let mut errors: Vec<Value> = outcomes
        .into_iter()
        .flat_map(|o| o.console_errors)
        .collect();
    errors.append(&mut outcome.console_errors);
    outcome.console_errors = errors;
    outcome.result_json = combined
        .to_json()
        .context("serializing the combined result")?;
    eprintln!("[{browser}] combined {} page loads", docs_len);
    Ok((outcome, problems, warnings))
}

/// The `## Headline` section of a report.
pub fn headline_of(report: &str) -> String {
    let Some(start) = report.find("## Headline") else {
        return String::new();
    };
    let rest = &report[start..];
    let end = rest[2..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].trim_end().to_owned()
}

/// The round orders' seed of page load `load` (from 0) in a `--page-loads` run: `--order-seed`
/// (else [`ORDER_SEED`]) + `load`. Sittings run with the same base repeat each other's orders;
/// `--order-seed` gives each its own.
fn load_seed(base: Option<u64>, load: u32) -> u64 {
    base.unwrap_or(ORDER_SEED).wrapping_add(u64::from(load))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_section() {
        let r = "# T\n\nintro\n\n## Headline\n\n| a |\n\n- x\n\n## Chromium 1\n\nmore";
        assert_eq!(headline_of(r), "## Headline\n\n| a |\n\n- x");
        assert_eq!(headline_of("nothing"), "");
    }

    #[test]
    fn loads_take_their_seed_from_the_order_seed() {
        assert_eq!(load_seed(None, 0), ORDER_SEED);
        assert_eq!(load_seed(None, 3), ORDER_SEED + 3);
        assert_eq!(load_seed(Some(7), 0), 7);
        assert_eq!(load_seed(Some(7), 2), 9);
    }
}
