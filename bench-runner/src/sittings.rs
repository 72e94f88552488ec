//! `bench-runner combine`: result files of one browser, written by separate runs of the same
//! build and configuration (sittings), as one document.
//!
//! Why: a run of `--page-loads 8` resolves its own sitting, not the machine. Two runs of the
//! same protocol three hours apart moved Chromium's Balanced total by 4 points and Firefox's
//! raw write+flush pair by 60 % (`results/2026-12-06-sealed`), more than either run's
//! interval. Combined, the intervals resample the page loads of every sitting
//! ([`bench_results::combine::combine_loads`]), so a verdict stands on all of them.

use std::path::{Path, PathBuf};

use bench_results::combine::{combine_loads, CombineError};
use bench_results::Document;

/// Reads `files`, combines them and writes the result to `out`; returns a line saying what
/// was combined. Refused: fewer than two files, files of different browsers or browser
/// versions, and whatever [`combine_loads`] refuses (another configuration, including
/// another commit of the page; other backends or cases; the scale suite).
pub fn combine_files(files: &[PathBuf], out: &Path) -> Result<String, String> {
    if files.len() < 2 {
        return Err("combine needs at least two result files".to_owned());
    }
    let docs = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
            Document::from_json(&text).map_err(|e| format!("{}: {e}", f.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let browser = |d: &Document| {
        (
            d.runner.as_ref().map(|r| r.browser.clone()),
            d.environment.browser.clone(),
            d.environment.browser_version.clone(),
        )
    };
    if let Some((i, _)) = docs
        .iter()
        .enumerate()
        .find(|(_, d)| browser(d) != browser(&docs[0]))
    {
        return Err(format!(
            "{} is another browser or browser version than {}",
            files[i].display(),
            files[0].display()
        ));
    }
    // The runner records, merged: the first one's, with every file's time, errors and problems.
    let mut runner = docs[0].runner.clone();
    if let Some(r) = &mut runner {
        for d in &docs[1..] {
            if let Some(next) = &d.runner {
                r.elapsed_s += next.elapsed_s;
                r.console_errors.extend(next.console_errors.iter().cloned());
                r.problems.extend(next.problems.iter().cloned());
                r.warnings.extend(next.warnings.iter().cloned());
            }
        }
    }
    let boot = docs[0]
        .sql
        .as_ref()
        .and_then(|s| s.bootstrap.clone())
        .unwrap_or_default();
    let count = docs.len();
    // `combine_loads` counts documents as page loads; here each is a file.
    let mut doc = combine_loads(docs, &boot).map_err(|e| {
        let file = |i: usize| {
            files
                .get(i)
                .map_or_else(String::new, |f| f.display().to_string())
        };
        match e {
            CombineError::Config { load } => format!(
                "{} ran another configuration than {} (commit, suites, backends, rounds or \
                 the SQL's seed; the round orders' seeds may differ)",
                file(load),
                file(0)
            ),
            CombineError::Backends { load } => format!(
                "{} has other backends or cases than {}",
                file(load),
                file(0)
            ),
            CombineError::Suite { load, suite } => format!(
                "{}: the {suite} suite cannot be combined, or it is in one file and not another",
                file(load)
            ),
            CombineError::Empty => e.to_string(),
        }
    })?;
    doc.runner = runner;
    let loads = doc.sql.as_ref().map_or(0, |s| s.config.loads.len());
    let json = doc.to_json().map_err(|e| format!("serializing: {e}"))?;
    std::fs::write(out, json).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(format!(
        "combined {count} files ({loads} page loads) into {}",
        out.display()
    ))
}
