//! The Markdown report: a headline table over every browser, then per browser the environment,
//! the 16 SQL cases, the batch, lifecycle phases, physical calls of our VFS, the filesystem
//! lifecycle against the raw OPFS floor, and the raw per-call figures.
//!
//! Every number is recomputed from the measured runs in the result files (median with the
//! observed min–max; ratios are ratios of medians), so a report can be regenerated from the
//! JSON alone (`bench-runner report`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::doc::{scalar_text, Counters, LifecycleSuite, PageResult, RawSuite, SqlBackend, Stat};
use crate::util::{fmt_bytes, fmt_fixed, fmt_ms, thousands};
use crate::{Context as _, Error, Result};

/// One browser's result, as loaded from `<date>-<browser>.json`.
#[derive(Debug)]
pub struct Entry {
    /// `chromium`, `firefox` (from the file name).
    pub browser: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The parsed document.
    pub doc: PageResult,
    /// The raw JSON (for the runner's `runner` block and anything the mirror types skip).
    pub raw: Value,
}

impl Entry {
    /// Loads a result file; the browser is the part of the file stem after the date
    /// (`2026-11-30-firefox` → `firefox`), or the whole stem.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).context(format!("reading {}", path.display()))?;
        let raw: Value =
            serde_json::from_str(&text).context(format!("parsing {}", path.display()))?;
        let doc: PageResult =
            serde_json::from_value(raw.clone()).context(format!("reading {}", path.display()))?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let browser = match split_date(&stem) {
            Some((_, b)) => b.to_owned(),
            None => stem,
        };
        Ok(Self {
            browser,
            file: path.to_path_buf(),
            doc,
            raw,
        })
    }

    /// `Chromium 156.0.8078.114`: the driver's version if the runner recorded it, else the
    /// page's environment, else the file's browser name.
    pub fn title(&self) -> String {
        let name = title_case(&self.browser);
        let version = self
            .raw
            .pointer("/runner/browser_version")
            .and_then(Value::as_str)
            .and_then(|v| v.rsplit(' ').next().map(str::to_owned))
            .or_else(|| self.doc.env_str("browser_version"))
            .or_else(|| {
                self.doc
                    .env_str("browser")
                    .and_then(|b| b.rsplit(' ').next().map(str::to_owned))
                    .filter(|v| v.chars().next().is_some_and(|c| c.is_ascii_digit()))
            });
        match version {
            Some(v) => format!("{name} {v}"),
            None => name,
        }
    }

    /// Short title for the headline: name and major version.
    pub fn short_title(&self) -> String {
        let t = self.title();
        match t.split_once(' ') {
            Some((n, v)) => format!("{n} {}", v.split('.').next().unwrap_or(v)),
            None => t,
        }
    }
}

/// `2026-11-30-firefox` → `("2026-11-30", "firefox")`.
pub fn split_date(stem: &str) -> Option<(&str, &str)> {
    if stem.len() > 11 && stem.as_bytes()[10] == b'-' {
        let (d, rest) = stem.split_at(10);
        let is_date = d.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
        if is_date {
            return Some((d, &rest[1..]));
        }
    }
    None
}

fn title_case(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The result files of `date` in `dir` (`<date>-<browser>.json`), Chromium first, then the
/// rest by name.
pub fn files_of_date(dir: &Path, date: &str) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .context(format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_stem()
                    .and_then(|s| s.to_str())
                    .and_then(split_date)
                    .is_some_and(|(d, _)| d == date)
        })
        .collect();
    files.sort_by_key(|p| {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        (
            !name.as_deref().is_some_and(|n| n.contains("chromium")),
            name,
        )
    });
    Ok(files)
}

/// The newest date with result files in `dir`.
pub fn newest_date(dir: &Path) -> Result<String> {
    std::fs::read_dir(dir)
        .context(format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            if p.extension()? != "json" {
                return None;
            }
            let stem = p.file_stem()?.to_str()?.to_owned();
            split_date(&stem).map(|(d, _)| d.to_owned())
        })
        .max()
        .ok_or_else(|| {
            Error(format!(
                "no <date>-<browser>.json files in {}",
                dir.display()
            ))
        })
}

/// Writes `<dir>/<date>-report.md` (or `out`) from `files` (default: every result file of
/// `date`); returns the path written and the text.
pub fn write_report(
    dir: &Path,
    date: &str,
    files: &[PathBuf],
    out: Option<&Path>,
) -> Result<(PathBuf, String)> {
    let files = if files.is_empty() {
        files_of_date(dir, date)?
    } else {
        files.to_vec()
    };
    if files.is_empty() {
        return Err(Error(format!(
            "no result files for {date} in {}",
            dir.display()
        )));
    }
    let entries = files
        .iter()
        .map(|f| Entry::load(f))
        .collect::<Result<Vec<_>>>()?;
    let text = markdown(date, &entries);
    let path = out.map_or_else(|| dir.join(format!("{date}-report.md")), Path::to_path_buf);
    if path.as_os_str() != "-" {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).context(format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, &text).context(format!("writing {}", path.display()))?;
    }
    Ok((path, text))
}

// ---------------------------------------------------------------------------------------------
// Table helpers
// ---------------------------------------------------------------------------------------------

/// A Markdown table; the first column is left-aligned, the others right-aligned.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(header: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: impl IntoIterator<Item = impl Into<String>>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    fn render(&self, out: &mut String, left_columns: usize) {
        let esc = |s: &str| s.replace('|', "\\|");
        let _ = writeln!(
            out,
            "| {} |",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let align: Vec<&str> = (0..self.header.len())
            .map(|i| if i < left_columns { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "|{}|", align.join("|"));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out.push('\n');
    }
}

/// `"median (min–max)"`; just the median for one sample; `"–"` when absent.
fn stat_cell(s: Option<Stat>) -> String {
    match s {
        Some(s) if s.n > 1 => format!("{} ({}–{})", fmt_ms(s.median), fmt_ms(s.min), fmt_ms(s.max)),
        Some(s) => fmt_ms(s.median),
        None => "–".to_owned(),
    }
}

/// Same for microseconds, with fewer decimals for large values.
fn stat_cell_us(s: Option<Stat>) -> String {
    let f = |v: f64| fmt_fixed(v, if v >= 100.0 { 0 } else { 1 });
    match s {
        Some(s) if s.n > 1 => format!("{} ({}–{})", f(s.median), f(s.min), f(s.max)),
        Some(s) => f(s.median),
        None => "–".to_owned(),
    }
}

/// `value ÷ reference` of medians, as `"1.02"`.
fn ratio(v: Option<Stat>, r: Option<Stat>) -> String {
    ratio_of(v.map(|s| s.median), r.map(|s| s.median))
}

fn ratio_of(v: Option<f64>, r: Option<f64>) -> String {
    match (v, r) {
        (Some(v), Some(r)) if r > 0.0 && v.is_finite() => {
            let q = v / r;
            if q >= 100.0 {
                format!("{}×", fmt_fixed(q, 0))
            } else if q == 0.0 {
                "0×".to_owned()
            } else if q < 0.0001 {
                "<0.0001×".to_owned()
            } else if q < 0.01 {
                format!("{q:.4}×")
            } else {
                format!("{q:.2}×")
            }
        }
        _ => "–".to_owned(),
    }
}

fn counters_cell(c: Option<Counters>) -> String {
    match c {
        Some(c) => format!(
            "{} / {} / {} / {}",
            thousands(c.flushes),
            thousands(c.writes),
            fmt_bytes(c.bytes_written),
            thousands(c.reads)
        ),
        None => "–".to_owned(),
    }
}

/// The memory-only reference among the SQL backends: the first non-persistent one (the
/// page's `sqlite-memvfs`, natively `sqlite-memory`), else one whose name says memory and is not
/// ours.
pub fn reference(backends: &[SqlBackend]) -> Option<&SqlBackend> {
    backends
        .iter()
        .find(|b| b.persistent == Some(false))
        .or_else(|| {
            backends
                .iter()
                .find(|b| b.name.contains("mem") && !b.name.starts_with("ours"))
        })
}

// ---------------------------------------------------------------------------------------------
// The report
// ---------------------------------------------------------------------------------------------

/// The whole report for `entries` (one per browser) of `date`.
pub fn markdown(date: &str, entries: &[Entry]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Benchmark results, {date}\n");
    let files: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "`{}`",
                e.file
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "Written by `bench-runner` from {} (every sample is in those files; \
         `bench-runner report` regenerates this file from them; `methodology.md` explains \
         the protocol and how to reproduce a result).\n\n\
         Times in milliseconds: median of the measured runs, with the observed min–max in \
         parentheses (a range, not a confidence interval); warm-up runs are excluded. Ratios are \
         ratios of medians. Lower is faster. The memory-only reference does not persist anything.\n",
        files.join(", ")
    );

    headline(&mut out, entries);
    for e in entries {
        browser_section(&mut out, e);
    }
    out
}

fn config_line(e: &Entry) -> String {
    let c = &e.doc.config;
    let mut parts = Vec::new();
    for k in ["preset", "runs", "warmup", "files", "suites", "backends"] {
        if let Some(v) = c.get(k) {
            let text = match v {
                Value::Array(a) if a.is_empty() && k == "backends" => "all".to_owned(),
                Value::Array(a) => a
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(","),
                other => scalar_text(other).unwrap_or_else(|| other.to_string()),
            };
            parts.push(format!("{k} {text}"));
        }
    }
    if let Some(sql) = &e.doc.sql {
        if let Some(d) = sql.suite.scale_divisor.filter(|&d| d > 1) {
            parts.push(format!(
                "**SQL counts divided by {d}: a smoke run, not a result**"
            ));
        }
    }
    if let Some(commit) = e
        .doc
        .config
        .get("commit")
        .and_then(scalar_text)
        .or_else(|| e.doc.env_str("commit"))
    {
        parts.push(format!("commit {commit}"));
    }
    parts.join(" · ")
}

fn headline(out: &mut String, entries: &[Entry]) {
    let _ = writeln!(out, "## Headline\n");
    let rows: Vec<u32> = entries
        .iter()
        .filter_map(|e| e.doc.sql.as_ref()?.suite.batch_rows)
        .collect();
    let batch = match rows.first() {
        Some(&r) if rows.iter().all(|&x| x == r) => format!("{}-row batch", thousands(r.into())),
        _ => "Batch".to_owned(),
    };
    let mut t = Table::new([
        "Browser".to_owned(),
        "Backend".to_owned(),
        "16-case total".to_owned(),
        "÷ memory".to_owned(),
        "Test 1".to_owned(),
        "Tests 2–16 ÷ memory".to_owned(),
        batch,
        "÷ memory".to_owned(),
    ]);
    let mut any = false;
    for e in entries {
        let Some(sql) = &e.doc.sql else { continue };
        let r = reference(&sql.backends);
        for b in &sql.backends {
            any = true;
            t.row([
                e.short_title(),
                b.name.clone(),
                format!("**{}**", stat_cell(b.total())),
                ratio(b.total(), r.and_then(SqlBackend::total)),
                stat_cell(b.test1()),
                ratio(b.tests_2_to_16(), r.and_then(SqlBackend::tests_2_to_16)),
                stat_cell(b.batch()),
                ratio(b.batch(), r.and_then(SqlBackend::batch)),
            ]);
        }
    }
    if any {
        t.render(out, 2);
    } else {
        out.push_str("No SQL results.\n\n");
    }
    for e in entries {
        let _ = writeln!(out, "- {}: {}", e.title(), config_line(e));
    }
    out.push('\n');
}

fn browser_section(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "## {}\n", e.title());
    environment(out, e);
    if let Some(sql) = &e.doc.sql {
        sql_section(out, sql);
    }
    if let Some(l) = e.doc.lifecycle() {
        lifecycle_section(out, &l, e.doc.raw().as_ref());
    }
    if let Some(r) = e.doc.raw() {
        raw_section(out, &r);
    }
    verifications(out, e);
}

fn environment(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "### Environment\n");
    let mut t = Table::new(["Field", "Value"]);
    let mut seen = std::collections::BTreeSet::new();
    let mut add = |t: &mut Table, k: &str, v: String| {
        if seen.insert(k.to_owned()) {
            t.row([k.to_owned(), v]);
        }
    };
    if let Some(v) = e
        .raw
        .pointer("/runner/browser_version")
        .and_then(Value::as_str)
    {
        add(&mut t, "webdriver browser", v.to_owned());
    }
    let envs = [
        Some(&e.doc.environment),
        e.doc.sql.as_ref().map(|s| &s.environment),
    ];
    for env in envs.into_iter().flatten() {
        if let Value::Object(m) = env {
            for (k, v) in m {
                if let Some(text) = scalar_text(v) {
                    add(&mut t, k, text);
                }
            }
        }
    }
    if let Some(g) = &e.doc.generated_at {
        add(&mut t, "generated_at", g.clone());
    }
    if let Some(v) = e.doc.schema_version {
        add(&mut t, "schema_version", v.to_string());
    }
    add(&mut t, "config", config_line(e));
    if let Some(s) = e.raw.pointer("/runner/elapsed_s").and_then(Value::as_f64) {
        add(&mut t, "runner wall time", format!("{s:.1} s"));
    }
    t.render(out, 2);
}

fn sql_section(out: &mut String, sql: &crate::doc::SqlResult) {
    let backends = &sql.backends;
    if backends.is_empty() {
        return;
    }
    let r = reference(backends);
    let rname = r.map_or("memory", |r| r.name.as_str());
    let runs = backends.iter().map(|b| b.runs.len()).max().unwrap_or(0);
    let _ = writeln!(out, "### SQL: the 16 cases\n");
    let _ = writeln!(
        out,
        "Seed {} · SQL SHA-256 `{}` · {} measured run(s) per backend after {} warm-up.\n",
        sql.suite
            .seed
            .map_or_else(|| "?".to_owned(), |s| s.to_string()),
        sql.suite.sha256.as_deref().unwrap_or("?"),
        runs,
        sql.config
            .warmup
            .map_or_else(|| "?".to_owned(), |w| w.to_string()),
    );
    let has_suite = backends
        .iter()
        .any(|b| b.runs.iter().any(|r| r.suite.is_some()));
    if has_suite {
        let mut header = vec!["Case".to_owned()];
        header.extend(backends.iter().map(|b| b.name.clone()));
        let mut t = Table::new(header);
        let numbers: Vec<(u32, String)> = if sql.suite.cases.is_empty() {
            (1..=16).map(|n| (n, String::new())).collect()
        } else {
            sql.suite
                .cases
                .iter()
                .map(|c| (c.number, c.title.clone()))
                .collect()
        };
        for (n, title) in &numbers {
            let mut row = vec![if title.is_empty() {
                n.to_string()
            } else {
                format!("{n}. {title}")
            }];
            row.extend(backends.iter().map(|b| stat_cell(b.case(*n))));
            t.row(row);
        }
        let mut row = vec!["**Total (16 cases)**".to_owned()];
        row.extend(
            backends
                .iter()
                .map(|b| format!("**{}**", stat_cell(b.total()))),
        );
        t.row(row);
        let mut row = vec!["Tests 2–16".to_owned()];
        row.extend(backends.iter().map(|b| stat_cell(b.tests_2_to_16())));
        t.row(row);
        if let Some(r) = r {
            for (label, pick) in [
                (
                    "Total",
                    SqlBackend::total as fn(&SqlBackend) -> Option<Stat>,
                ),
                ("Test 1", SqlBackend::test1),
                ("Tests 2–16", SqlBackend::tests_2_to_16),
            ] {
                let mut row = vec![format!("{label} ÷ {rname}")];
                row.extend(backends.iter().map(|b| ratio(pick(b), pick(r))));
                t.row(row);
            }
        }
        t.render(out, 1);
    }

    let has_batch = backends
        .iter()
        .any(|b| b.runs.iter().any(|r| r.batch.is_some()));
    if has_batch {
        let rows = sql.suite.batch_rows.unwrap_or(10_000);
        let _ = writeln!(
            out,
            "### {}-row batch (one transaction)\n",
            thousands(rows.into())
        );
        let mut t = Table::new([
            "Backend",
            "Durability",
            "ms",
            &format!("÷ {rname}"),
            "Physical calls: flushes / writes / bytes / reads",
        ]);
        for b in backends {
            t.row([
                b.name.clone(),
                b.durability.clone(),
                stat_cell(b.batch()),
                ratio(b.batch(), r.and_then(SqlBackend::batch)),
                counters_cell(b.batch_counters()),
            ]);
        }
        t.render(out, 2);
    }

    let _ = writeln!(out, "### SQL lifecycle phases\n");
    let _ = writeln!(
        out,
        "Outside the workload timings. \"–\": not applicable (a non-persistent backend has no \
         sync, reopen or verification).\n"
    );
    let mut header = vec!["Phase".to_owned()];
    header.extend(backends.iter().map(|b| b.name.clone()));
    let mut t = Table::new(header);
    let keys = [
        ("prepare_ms", "preparation"),
        ("init_ms", "initialization"),
        ("sync_ms", "later explicit sync"),
        ("close_ms", "close"),
        ("reopen_ms", "reopen"),
        ("verify_ms", "verification"),
    ];
    for (workload, pick) in [
        (
            "suite",
            SqlBackend::suite_phase as fn(&SqlBackend, &str) -> Option<Stat>,
        ),
        ("batch", SqlBackend::batch_phase),
    ] {
        for (key, label) in keys {
            if backends.iter().all(|b| pick(b, key).is_none()) {
                continue;
            }
            let mut row = vec![format!("{workload}: {label}")];
            row.extend(backends.iter().map(|b| stat_cell(pick(b, key))));
            t.row(row);
        }
    }
    t.render(out, 1);

    let counted: Vec<&SqlBackend> = backends.iter().filter(|b| b.has_counters()).collect();
    if has_suite && !counted.is_empty() {
        let _ = writeln!(out, "### Physical calls per case (our VFS)\n");
        let _ = writeln!(
            out,
            "Median per case of the volume's counters: flushes / writes / bytes written / \
             reads. They do not depend on timer resolution.\n"
        );
        let mut header = vec!["Case".to_owned()];
        header.extend(counted.iter().map(|b| b.name.clone()));
        let mut t = Table::new(header);
        let numbers: Vec<u32> = if sql.suite.cases.is_empty() {
            (1..=16).collect()
        } else {
            sql.suite.cases.iter().map(|c| c.number).collect()
        };
        for n in numbers {
            let mut row = vec![n.to_string()];
            row.extend(counted.iter().map(|b| counters_cell(b.case_counters(n))));
            t.row(row);
        }
        t.render(out, 1);
    }
}

/// The raw OPFS floor of a lifecycle phase: what the browser charges for the least work the
/// phase implies if each logical file were its own OPFS file, from the per-call means measured
/// in the same run. `None` where no raw series measures it (read, rename, mount, reopen,
/// verify).
pub fn phase_floor_ms(phase: &str, files: u32, raw: &RawSuite) -> Option<(f64, String)> {
    let us = |name: &str| raw.mean_us(name);
    let (calls, per_call, what) = match phase {
        "create" => (files, us("new-file: create+open")?, "× create+open"),
        "write" => (files, us("new-file: first write")?, "× first write"),
        "delete" => (files / 2, us("new-file: delete")?, "× removeEntry"),
        "flush" => match us("append+flush: flush") {
            Some(f) => (1, f, "× flush"),
            None => (1, us("append+flush")?, "× append+flush"),
        },
        _ => return None,
    };
    Some((
        f64::from(calls) * per_call / 1000.0,
        format!("{} {what}", thousands(calls.into())),
    ))
}

fn lifecycle_section(out: &mut String, l: &LifecycleSuite, raw: Option<&RawSuite>) {
    let backends = &l.backends;
    if backends.is_empty() {
        return;
    }
    let files = l.files.unwrap_or(0);
    let _ = writeln!(
        out,
        "### Filesystem lifecycle: {} files × {}\n",
        thousands(files.into()),
        fmt_bytes(l.file_size_bytes.unwrap_or(0).into())
    );
    let _ = writeln!(
        out,
        "Read includes byte verification; delete removes half the files; reopen unmounts and \
         mounts again, verify reads every survivor back.{}\n",
        if raw.is_some() {
            " The raw OPFS floor is what the browser charged in this run (raw workloads below) \
             for the least work the phase implies if every logical file were its own OPFS file \
             (N × the per-call mean of `new-file: create+open`, `new-file: first write`, \
             `new-file: delete`, or one `flush`); below 1× the phase costs less than that \
             floor."
        } else {
            ""
        }
    );
    let phases = backends
        .iter()
        .map(|b| b.phase_names())
        .max_by_key(Vec::len)
        .unwrap_or_default();
    let mut header = vec!["Phase".to_owned()];
    header.extend(backends.iter().map(|b| b.name.clone()));
    if raw.is_some() {
        header.push("Raw OPFS floor".to_owned());
    }
    let mut t = Table::new(header);
    let floors: Vec<Option<(f64, String)>> = phases
        .iter()
        .map(|p| raw.and_then(|r| phase_floor_ms(p, files, r)))
        .collect();
    for (p, floor) in phases.iter().zip(&floors) {
        let mut row = vec![p.clone()];
        row.extend(backends.iter().map(|b| stat_cell(b.phase(p))));
        if raw.is_some() {
            row.push(floor.as_ref().map_or_else(
                || "–".to_owned(),
                |(ms, what)| format!("{} ({what})", fmt_ms(*ms)),
            ));
        }
        t.row(row);
    }
    let mut row = vec!["**Total**".to_owned()];
    row.extend(
        backends
            .iter()
            .map(|b| format!("**{}**", stat_cell(b.total()))),
    );
    if raw.is_some() {
        row.push(String::new());
    }
    t.row(row);
    for (p, floor) in phases.iter().zip(&floors) {
        if let Some((ms, _)) = floor {
            let mut row = vec![format!("{p} ÷ floor")];
            row.extend(
                backends
                    .iter()
                    .map(|b| ratio_of(b.phase(p).map(|s| s.median), Some(*ms))),
            );
            row.push(String::new());
            t.row(row);
        }
    }
    t.render(out, 1);

    let counted: Vec<_> = backends
        .iter()
        .filter(|b| phases.iter().any(|p| b.phase_counters(p).is_some()))
        .collect();
    if !counted.is_empty() {
        let _ = writeln!(
            out,
            "Physical calls per phase (our volume): flushes / writes / bytes written / reads.\n"
        );
        let mut header = vec!["Phase".to_owned()];
        header.extend(counted.iter().map(|b| b.name.clone()));
        let mut t = Table::new(header);
        for p in &phases {
            let mut row = vec![p.clone()];
            row.extend(counted.iter().map(|b| counters_cell(b.phase_counters(p))));
            t.row(row);
        }
        t.render(out, 1);
    }
    let described: Vec<_> = backends
        .iter()
        .filter(|b| !b.durability.is_empty())
        .collect();
    for b in described {
        let mut extra = String::new();
        if let Some(m) = &b.rename_method {
            extra = format!("; rename by {m}");
        }
        let _ = writeln!(
            out,
            "- `{}` ({}): {}{extra}",
            b.name,
            if b.storage.is_empty() {
                "?"
            } else {
                &b.storage
            },
            b.durability
        );
    }
    out.push('\n');
}

fn raw_section(out: &mut String, raw: &RawSuite) {
    let series = raw.summarize();
    if series.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Raw OPFS per call\n");
    let _ = writeln!(
        out,
        "`FileSystemSyncAccessHandle` calls timed one by one in the worker, {} measured run(s). \
         Microseconds per call: median across runs of each run's figure, with the min–max; \
         p50/p99 are nearest-rank within a run; \"first\" is call number 1 (for the appends, the \
         first write into a fresh file). Values are rounded to the timer step.\n",
        raw.runs.len()
    );
    let mut t = Table::new([
        "Workload",
        "Calls",
        "Bytes/call",
        "Mean µs/call",
        "p50 µs",
        "p99 µs",
        "First call µs",
        "Total ms",
    ]);
    for s in &series {
        t.row([
            s.name.clone(),
            thousands(s.calls.into()),
            if s.bytes_per_call == 0 {
                "–".to_owned()
            } else {
                thousands(s.bytes_per_call.into())
            },
            stat_cell_us(s.mean_us),
            stat_cell_us(s.p50_us),
            stat_cell_us(s.p99_us),
            stat_cell_us(s.first_us),
            stat_cell(s.total_us.map(|t| Stat {
                median: t.median / 1000.0,
                min: t.min / 1000.0,
                max: t.max / 1000.0,
                n: t.n,
            })),
        ]);
    }
    t.render(out, 1);
}

fn verifications(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "### Verifications\n");
    match &e.doc.verifications {
        Some(v) if v.all_passed == Some(true) && v.failures.is_empty() => {
            out.push_str("All passed.");
        }
        Some(v) => {
            let _ = write!(out, "**Not all passed** (all_passed = {:?}).", v.all_passed);
            for f in &v.failures {
                let _ = write!(
                    out,
                    "\n- {}",
                    scalar_text(f).unwrap_or_else(|| f.to_string())
                );
            }
        }
        None => out.push_str("**No verifications recorded.**"),
    }
    let console = e
        .raw
        .pointer("/runner/console_errors")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let _ = writeln!(out, " Console errors: {console}.\n");
    let _ = writeln!(
        out,
        "A clean reopen shows the data was stored; it is not crash durability (see \
         `methodology.md`).\n"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_names() {
        assert_eq!(
            split_date("2026-11-30-firefox"),
            Some(("2026-11-30", "firefox"))
        );
        assert_eq!(
            split_date("2026-11-30-report"),
            Some(("2026-11-30", "report"))
        );
        assert_eq!(split_date("native-2026-11-30"), None);
        assert_eq!(split_date("2026-11-30"), None);
    }

    fn sql_run(scale: f64, counters: bool) -> Value {
        let cases: Vec<Value> = (1..=16)
            .map(|n| {
                let mut c = serde_json::json!({"number": n, "ms": scale * f64::from(n)});
                if counters {
                    c["counters"] = serde_json::json!(
                        {"flushes": 1, "writes": 1, "bytes_written": 8192, "reads": 0});
                }
                c
            })
            .collect();
        serde_json::json!({
            "suite": {"phases": {"prepare_ms": 1.0, "init_ms": 2.0, "sync_ms": null,
                                 "close_ms": 0.5, "reopen_ms": null, "verify_ms": null},
                      "cases": cases, "total_ms": scale * 136.0, "test1_ms": scale},
            "batch": {"phases": {}, "rows": 10000, "ms": scale * 10.0}
        })
    }

    fn entry() -> Entry {
        let raw = serde_json::json!({
            "schema_version": 1,
            "generated_at": "2026-01-01T00:00:00Z",
            "config": {"preset": "full", "runs": 2, "suites": ["sql", "batch", "fs", "raw"],
                       "commit": "abc"},
            "environment": {"browser": "Chrome", "browser_version": "156.0.1",
                            "timer_resolution_us": 5, "cross_origin_isolated": true},
            "sql": {"suite": {"seed": 20230411, "sha256": "eeed", "scale_divisor": 1,
                              "cases": [{"number": 1, "title": "1,000 INSERTs"}],
                              "batch_rows": 10000},
                    "config": {"runs": 2, "warmup": 1},
                    "backends": [
                        {"name": "sqlite-memvfs", "durability": "none", "persistent": false,
                         "warmup_runs": [sql_run(100.0, false)],
                         "runs": [sql_run(1.0, false), sql_run(1.0, false)]},
                        {"name": "ours-memory-strict", "durability": "strict",
                         "persistent": true, "warmup_runs": [],
                         "runs": [sql_run(1.0, true), sql_run(1.1, true)]}]},
            "fs": {"lifecycle": {"files": 100, "file_size_bytes": 1024, "backends": [
                {"name": "files-opfs", "storage": "opfs-file-per-file", "durability": "d",
                 "warmup_runs": [], "runs": [{"phases": [
                     {"phase": "create", "ms": 200.0}, {"phase": "flush", "ms": 3.0}],
                     "total_ms": 203.0}]}]}},
            "raw": {"warmup_runs": [], "runs": [{"series": [
                {"name": "new-file: create+open", "calls": 10, "bytes_per_call": 0,
                 "stats": {"total_us": 20000.0, "mean_us": 2000.0, "p50_us": 2000.0,
                           "p99_us": 2500.0, "first_us": 3000.0}},
                {"name": "append+flush: flush", "calls": 10, "bytes_per_call": 0,
                 "stats": {"total_us": 3000.0, "mean_us": 300.0}}]}]},
            "verifications": {"all_passed": true, "failures": []},
            "runner": {"browser_version": "chrome 156.0.8078.114", "console_errors": []}
        });
        Entry {
            browser: "chromium".into(),
            file: PathBuf::from("2026-01-01-chromium.json"),
            doc: serde_json::from_value(raw.clone()).unwrap(),
            raw,
        }
    }

    #[test]
    fn report_has_every_section() {
        let e = entry();
        assert_eq!(e.title(), "Chromium 156.0.8078.114");
        assert_eq!(e.short_title(), "Chromium 156");
        let md = markdown("2026-01-01", &[e]);
        for needle in [
            "# Benchmark results, 2026-01-01",
            "## Headline",
            // ours: total median 136 × 1.05 = 142.8 over the memory reference's 136 (warm-up
            // excluded).
            "| Chromium 156 | ours-memory-strict | **142.80 (136.00–149.60)** | 1.05× |",
            "| Chromium 156 | sqlite-memvfs | **136.00 (136.00–136.00)** | 1.00× |",
            "## Chromium 156.0.8078.114",
            "| timer_resolution_us | 5 |",
            "| 1. 1,000 INSERTs | 1.00 (1.00–1.00) | 1.05 (1.00–1.10) |",
            "Total ÷ sqlite-memvfs",
            "### 10,000-row batch (one transaction)",
            "| ours-memory-strict | strict | 10.50 (10.00–11.00) | 1.05× | – |",
            "### Physical calls per case (our VFS)",
            "| 1 | 1 / 1 / 8.0 KiB / 0 |",
            "### Filesystem lifecycle: 100 files × 1.0 KiB",
            "| create | 200.00 | 200.00 (100 × create+open) |",
            "| create ÷ floor | 1.00× |",
            "| flush ÷ floor | 10.00× |",
            "### Raw OPFS per call",
            "| new-file: create+open | 10 | – | 2,000 | 2,000 | 2,500 | 3,000 | 20.00 |",
            "All passed. Console errors: 0.",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in:\n{md}");
        }
    }

    #[test]
    fn ratios() {
        assert_eq!(ratio_of(Some(2.0), Some(1.0)), "2.00×");
        assert_eq!(ratio_of(Some(1.0), Some(0.0)), "–");
        assert_eq!(ratio_of(Some(1000.0), Some(1.0)), "1,000×");
        assert_eq!(ratio_of(Some(0.001), Some(1.0)), "0.0010×");
        assert_eq!(ratio_of(Some(0.0), Some(1.0)), "0×");
        assert_eq!(ratio_of(Some(0.000_01), Some(1.0)), "<0.0001×");
        assert_eq!(ratio_of(None, Some(1.0)), "–");
    }
}
