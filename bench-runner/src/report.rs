//! The Markdown report: a headline table over every browser (medians and paired ratios with
//! their 95 % intervals), the goal checks, then per browser the environment, the 16 SQL cases,
//! the per-case ratios, the batch, lifecycle phases, physical calls of our VFS, the
//! filesystem lifecycle against the raw OPFS floor, the raw per-call figures, the
//! multi-tab hand-off against its floor, and scale and space against the one-file baseline.
//!
//! Every number is read from the documents' summaries (computed once by `bench_results`
//! where the document was produced; for older documents when they are loaded), so a report
//! can be regenerated from the JSON alone (`bench-runner report`). Nothing is computed here
//! but formatting.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bench_results::fs::{LifecycleSuite, Phase};
use bench_results::goals::{
    GoalCheck, Verdict, COMMIT_SERIES, COMMIT_SERIES_OVERWRITE, TOTAL_STRICT,
};
use bench_results::handoff::{HandoffSection, HANDLES_CONCURRENT, HANDLES_EXCLUSIVE};
use bench_results::raw::RawSuite;
use bench_results::scale::{ScaleMeasure, ScaleRun, ScaleSection};
use bench_results::sql::{AaControl, PhysicalCounters, SqlBackendResult, SqlSection};
use bench_results::summary::BackendSummary;
use bench_results::{Document, RatioStat, Stat, Suite};

use crate::util::{fmt_bytes, fmt_fixed, fmt_ms, thousands};
use crate::{Context as _, Error, Result};

/// One browser's result, as loaded from `<date>-<browser>.json`.
#[derive(Debug)]
pub struct Entry {
    /// `chromium`, `firefox`, `chromium-phone-emulation` (from the file name).
    pub browser: String,
    /// The file it came from.
    pub file: PathBuf,
    /// The document (converted to the current schema and summarized if it was older).
    pub doc: Document,
}

impl Entry {
    /// Loads a result file; the browser is the part of the file stem after the date
    /// (`2026-11-30-firefox` → `firefox`), or the whole stem.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).context(format!("reading {}", path.display()))?;
        let doc = Document::from_json(&text).context(format!("reading {}", path.display()))?;
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
        })
    }

    /// `Chromium 156.0.8078.114`: the driver's version if the runner recorded it, else the
    /// page's environment, else the file's browser name; `(phone emulation)` when emulated.
    pub fn title(&self) -> String {
        let base = self.browser.trim_end_matches("-phone-emulation");
        let name = title_case(base);
        let version = self
            .doc
            .runner
            .as_ref()
            .and_then(|r| r.browser_version.as_deref())
            .and_then(|v| v.rsplit(' ').next().map(str::to_owned))
            .or_else(|| self.doc.environment.browser_version.clone());
        let t = match version {
            Some(v) => format!("{name} {v}"),
            None => name,
        };
        if self.emulated() {
            format!("{t} (phone emulation)")
        } else {
            t
        }
    }

    /// Short title for the headline: name and major version.
    pub fn short_title(&self) -> String {
        let t = self.title();
        match t.split_once(' ') {
            Some((n, rest)) => {
                let (v, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let major = v.split('.').next().unwrap_or(v);
                format!(
                    "{n} {major}{}{tail}",
                    if tail.is_empty() { "" } else { " " }
                )
            }
            None => t,
        }
    }

    /// Measured under device emulation.
    pub fn emulated(&self) -> bool {
        self.doc
            .runner
            .as_ref()
            .is_some_and(|r| r.emulation.is_some())
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
            !name
                .as_deref()
                .is_some_and(|n| n.ends_with("chromium.json")),
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

/// A Markdown table; the first `left_columns` columns are left-aligned, the others right-aligned.
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

/// A ratio as `1.02×`.
fn ratio_value(q: f64) -> String {
    if !q.is_finite() {
        "–".to_owned()
    } else if q >= 100.0 {
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

/// A paired ratio as `1.02× [0.99–1.05]` (95 % interval), or `1.02× (n=2)` without one.
fn ratio_cell(r: Option<&RatioStat>) -> String {
    match r {
        None => "–".to_owned(),
        Some(r) => match (r.lo, r.hi) {
            (Some(lo), Some(hi)) => format!(
                "{} [{}–{}]",
                ratio_value(r.median),
                fmt_fixed(lo, 2),
                fmt_fixed(hi, 2)
            ),
            _ => match r.loads {
                Some(loads) => format!(
                    "{} (n={} in {loads} page loads, no interval)",
                    ratio_value(r.median),
                    r.n
                ),
                None => format!("{} (n={}, no interval)", ratio_value(r.median), r.n),
            },
        },
    }
}

fn counters_cell(c: Option<PhysicalCounters>) -> String {
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

fn verdict_cell(v: Verdict) -> String {
    match v {
        Verdict::Met => "**met**".to_owned(),
        Verdict::NotMet => "**not met**".to_owned(),
        Verdict::Undecided => "undecided".to_owned(),
    }
}

/// A goal's verdict, and when its floor alone is above the threshold, that it is out of
/// reach at this run's prices (the verdict itself is the interval's).
fn goal_verdict_cell(g: &GoalCheck) -> String {
    let cell = verdict_cell(g.verdict);
    let Some(f) = g.floor.as_ref().filter(|_| g.floor_out_of_reach()) else {
        return cell;
    };
    let floor = format!("floor {} > {:.2}", ratio_value(f.ratio), g.threshold);
    match g.verdict {
        // The measured ratio beat its own floor: the two figures disagree, say so.
        Verdict::Met => format!(
            "{cell}, although {floor} (this run's raw writes and flushes cost more than its commits did)"
        ),
        _ => format!("{cell} — {floor}: physically out of reach in this run"),
    }
}

/// A floor's derivation: `ours-disk-strict 1,020 flushes × 614 µs = 626.76 ms on
/// sqlite-memvfs's 2,856.63 ms → 1.22×`, with `+ 18.3 MB written × 435 µs/MiB + 17.9 MB
/// flushed × 681 µs/MiB` after the flushes where the floor has a byte term.
fn floor_note(g: &GoalCheck) -> Option<String> {
    let f = g.floor.as_ref()?;
    let mb = |b: u64| fmt_fixed(b as f64 / 1e6, 1);
    let bytes = match (
        f.bytes,
        f.flushed_bytes,
        f.write_us_per_mib,
        f.flush_us_per_mib,
    ) {
        (Some(b), Some(d), Some(w), Some(fl)) => format!(
            " + {} MB written × {} µs/MiB + {} MB flushed × {} µs/MiB",
            mb(b),
            fmt_fixed(w, 0),
            mb(d),
            fmt_fixed(fl, 0)
        ),
        _ => String::new(),
    };
    Some(format!(
        "{} {} flushes × {} µs{bytes} = {} ms on {}'s {} ms → {}",
        g.backend,
        thousands(f.flushes),
        fmt_fixed(f.call_us, if f.call_us >= 100.0 { 0 } else { 1 }),
        fmt_ms(f.floor_ms),
        g.versus,
        fmt_ms(f.reference_ms),
        ratio_value(f.ratio)
    ))
}

fn summary(b: &SqlBackendResult) -> BackendSummary {
    b.summary.clone().unwrap_or_default()
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
         Each round runs every backend once, in a shuffled order (recorded in the JSON). Times \
         in milliseconds: median of the measured rounds, with the observed min–max in \
         parentheses; warm-up rounds are excluded. Ratios are **paired**: per round, the \
         backend's time ÷ its memory reference's time in the same round; shown as the median \
         of those ratios with its **95 % percentile-bootstrap interval** in brackets. A goal \
         is *met* only if the whole interval is on the right side of it, *not met* if the whole \
         interval is on the wrong side, otherwise *undecided*. Lower is faster. A memory \
         reference persists nothing.\n",
        files.join(", ")
    );

    headline(&mut out, entries);
    goals(&mut out, entries);
    for e in entries {
        browser_section(&mut out, e);
    }
    out
}

fn config_line(e: &Entry) -> String {
    let c = &e.doc.config;
    // With a precision target, the SQL rounds taken (the section's) and the rule.
    let rounds = match (c.target_half_width, e.doc.sql.as_ref()) {
        (Some(w), Some(sql)) if !sql.config.loads.is_empty() => format!(
            "{} (each page load stopped at ±{:.1} % of its own rounds, at most {} per load)",
            sql.config.runs,
            w * 100.0,
            c.runs
        ),
        (None, Some(sql)) if !sql.config.loads.is_empty() => {
            format!("{} ({} per page load)", sql.config.runs, c.runs)
        }
        (Some(w), Some(sql)) => format!(
            "{} (stopped at ±{:.1} %, at most {})",
            sql.config.runs,
            w * 100.0,
            c.runs
        ),
        _ => c.runs.to_string(),
    };
    let mut parts = vec![
        format!("preset {}", c.preset),
        match c.peer_runs {
            Some(k) => format!(
                "rounds {rounds} after {} warm-up (JavaScript peers: the first {k})",
                c.warmup
            ),
            None => format!("rounds {rounds} after {} warm-up", c.warmup),
        },
        format!("files {}", c.files),
        format!(
            "suites {}",
            c.suites
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(",")
        ),
        format!(
            "backends {}",
            if c.backends.is_empty() {
                "all".to_owned()
            } else {
                c.backends.join(",")
            }
        ),
    ];
    if let Some(rows) = c.scale_rows.filter(|_| c.runs_suite(Suite::Scale)) {
        parts.push(format!(
            "scale {} rows × {} round(s)",
            thousands(rows),
            c.scale_rounds()
        ));
    }
    if c.batch_repeats.is_some() && c.runs_suite(Suite::Batch) {
        parts.push(format!(
            "batch: the fastest of {} passes per round",
            c.batch_runs_per_round()
        ));
    }
    if c.fs_repeats.is_some() && c.runs_suite(Suite::Fs) {
        parts.push(format!(
            "fs lifecycle: the fastest of {} runs per round (one for runs of 250 ms or more)",
            c.fs_runs_per_round()
        ));
    }
    match e.doc.sql.as_ref().map(|s| &s.config.loads[..]) {
        Some(loads @ [first, .., last]) => parts.push(format!(
            "**{} page loads combined** (each a new browser session; rounds summed; order \
             seeds {}–{}; intervals resample page loads, then rounds)",
            loads.len(),
            first
                .order_seed
                .map_or_else(|| "?".to_owned(), |s| s.to_string()),
            last.order_seed
                .map_or_else(|| "?".to_owned(), |s| s.to_string()),
        )),
        _ => {
            if let Some(s) = c.order_seed {
                parts.push(format!("order seed {s}"));
            }
        }
    }
    if let Some(b) = e.doc.sql.as_ref().and_then(|s| s.bootstrap.as_ref()) {
        parts.push(format!(
            "bootstrap {} resamples, seed {:#x}",
            thousands(b.resamples.into()),
            b.seed
        ));
    }
    if c.call_timing {
        parts.push(
            "**our storage calls timed** (`--call-timing`: two clock readings per call)".to_owned(),
        );
    }
    if let Some(sql) = &e.doc.sql {
        if sql.suite.scale_divisor > 1 {
            parts.push(format!(
                "**SQL counts divided by {}: a smoke run, not a result**",
                sql.suite.scale_divisor
            ));
        }
    }
    if let Some(commit) = c.commit.as_ref().or(e.doc.environment.commit.as_ref()) {
        parts.push(format!("commit {commit}"));
    }
    if let Some(m) = e.doc.runner.as_ref().and_then(|r| r.emulation.as_ref()) {
        parts.push(format!(
            "**phone emulation, not a phone**: Chromium DevTools CPU throttling ×{} of the page \
             (benchmark worker measured {} slower), viewport {}×{} @{}x mobile",
            m.cpu_throttling_rate,
            m.worker_slowdown
                .map_or_else(|| "?".to_owned(), |s| format!("×{s:.2}")),
            m.width,
            m.height,
            m.device_scale_factor
        ));
    }
    if let Some(s) = e.doc.runner.as_ref().map(|r| r.elapsed_s) {
        parts.push(format!(
            "wall time {}",
            crate::util::fmt_elapsed(std::time::Duration::from_secs_f64(s.max(0.0)))
        ));
    }
    parts.join(" · ")
}

fn headline(out: &mut String, entries: &[Entry]) {
    let _ = writeln!(out, "## Headline\n");
    let rows: Vec<u32> = entries
        .iter()
        .filter_map(|e| Some(e.doc.sql.as_ref()?.suite.batch_rows))
        .collect();
    let batch = match rows.first() {
        Some(&r) if rows.iter().all(|&x| x == r) => format!("{}-row batch", thousands(r.into())),
        _ => "Batch".to_owned(),
    };
    let mut t = Table::new([
        "Browser".to_owned(),
        "Backend".to_owned(),
        "16-case total".to_owned(),
        "÷ memory [95 %]".to_owned(),
        "Test 1".to_owned(),
        "Tests 2–16 ÷ memory [95 %]".to_owned(),
        batch,
        "÷ memory [95 %]".to_owned(),
    ]);
    let mut any = false;
    for e in entries {
        let Some(sql) = &e.doc.sql else { continue };
        for b in &sql.backends {
            any = true;
            let s = summary(b);
            let r = b.ratios.as_ref();
            let name = match (&b.meta.skipped, &b.error) {
                (Some(why), _) => format!("{} (skipped: {why})", b.meta.name),
                (_, Some(_)) => format!("{} (failed)", b.meta.name),
                _ if b.meta.is_reference() => format!("{} (reference)", b.meta.name),
                _ => b.meta.name.clone(),
            };
            t.row([
                e.short_title(),
                name,
                format!("**{}**", stat_cell(s.total_ms)),
                ratio_cell(r.and_then(|r| r.total.as_ref())),
                stat_cell(s.test1_ms),
                ratio_cell(r.and_then(|r| r.tests_2_to_16.as_ref())),
                stat_cell(s.batch_ms),
                ratio_cell(r.and_then(|r| r.batch.as_ref())),
            ]);
        }
    }
    if any {
        t.render(out, 2);
    } else {
        out.push_str("No SQL results.\n\n");
    }
    let mut any_floor = false;
    for e in entries {
        let _ = writeln!(out, "- {}: {}", e.title(), config_line(e));
        if let Some((w, name)) = e
            .doc
            .sql
            .as_ref()
            .and_then(SqlSection::widest_total_interval)
        {
            let _ = writeln!(
                out,
                "  - widest 95 % interval of a 16-case total ratio: ±{:.1} % ({name})",
                w * 100.0
            );
        }
        if let Some(aa) = e.doc.sql.as_ref().and_then(SqlSection::aa_control) {
            let _ = writeln!(out, "  - {}", aa_note(&aa));
        }
        let strict: Vec<&GoalCheck> = e
            .doc
            .sql
            .iter()
            .flat_map(|s| &s.goals)
            .filter(|g| g.goal == TOTAL_STRICT)
            .collect();
        let notes: Vec<String> = strict.iter().filter_map(|g| floor_note(g)).collect();
        if !notes.is_empty() {
            any_floor = true;
            let series = strict
                .iter()
                .find_map(|g| g.floor.as_ref())
                .map_or(COMMIT_SERIES, |f| f.series.as_str());
            let _ = writeln!(
                out,
                "  - strict floor (raw `{series}` per flush): {}",
                notes.join("; ")
            );
        } else if !strict.is_empty() {
            let _ = writeln!(out, "  - strict floor: none (no raw suite in this run)");
        }
    }
    if any_floor {
        let _ = writeln!(
            out,
            "- The strict floor is the least this run's OPFS charges a strict backend: its \
             flushes in the 16 cases (median per case, summed) × the cheaper raw \
             write-and-flush pair per call (`{COMMIT_SERIES}` or `{COMMIT_SERIES_OVERWRITE}`: a \
             4 KiB write + flush, median over the raw runs), plus, where the raw suite timed \
             the flush after its 1 MiB appends, its other bytes written × the raw price of \
             writing a MiB and the other bytes its flushes carried × the raw price of flushing \
             a MiB, added to the reference's median 16-case total, ÷ that total; a lower \
             bound at this run's prices, not a result (`methodology.md`, \"The physical \
             floor\"; the Goals table gives the same floor for every goal of ours against the \
             reference, over that goal's span)."
        );
    }
    out.push('\n');
}

/// The headline's note on the A/A control: its total and per-case ratios, and how many of its
/// per-case intervals would call a difference where there is none.
fn aa_note(aa: &AaControl<'_>) -> String {
    let mut s = format!(
        "A/A control (`{}`: the reference run again in every round, paired with it): 16-case \
         total {}",
        aa.name,
        ratio_cell(aa.total.as_ref())
    );
    if let Some((lo, hi)) = aa.case_medians {
        let _ = write!(s, "; per case, medians {lo:.2}–{hi:.2}×");
    }
    if aa.cases_with_interval > 0 {
        let _ = write!(
            s,
            ", {} of {} intervals exclude 1.00 (differences it would report where there are none)",
            aa.cases_excluding_one, aa.cases_with_interval
        );
    }
    s
}

/// The goal checks, per browser: one row per check, except the per-case peer goal, which is
/// one row per peer and backend of ours with the count of cases in each verdict.
fn goals(out: &mut String, entries: &[Entry]) {
    let any = entries.iter().any(|e| {
        e.doc.sql.as_ref().is_some_and(|s| !s.goals.is_empty())
            || e.doc.handoff.as_ref().is_some_and(|h| !h.goals.is_empty())
            || e.doc.scale.as_ref().is_some_and(|s| !s.goals.is_empty())
    });
    if !any {
        return;
    }
    let _ = writeln!(out, "## Goals\n");
    let _ = writeln!(
        out,
        "Decided from the 95 % interval of each paired ratio (rule and goals: \
         `bench-results/src/goals.rs`). Floor: the physical floor of the same run (the \
         backend's flushes in the goal's span × the raw write-and-flush pair, plus its bytes \
         written and flushed × the raw prices of writing and of flushing a MiB, on the \
         reference's time; derived for the strict totals in the headline notes), \"–\" where \
         there is none; it does not decide a verdict, it says when a goal is out of reach at \
         the prices the run measured.\n"
    );
    let mut t = Table::new(["Browser", "Goal", "Ratio [95 %]", "Floor", "Verdict"]);
    let floor_cell = |g: &GoalCheck| {
        g.floor
            .as_ref()
            .map_or_else(|| "–".to_owned(), |f| ratio_value(f.ratio))
    };
    for e in entries {
        let handoff = e.doc.handoff.iter().flat_map(|h| &h.goals);
        for g in handoff.chain(e.doc.scale.iter().flat_map(|s| &s.goals)) {
            t.row([
                e.short_title(),
                g.statement.clone(),
                ratio_cell(g.ratio.as_ref()),
                floor_cell(g),
                goal_verdict_cell(g),
            ]);
        }
        let Some(sql) = &e.doc.sql else { continue };
        let mut per_case: Vec<(String, String, Vec<&GoalCheck>)> = Vec::new();
        for g in &sql.goals {
            if g.case.is_some() {
                match per_case
                    .iter_mut()
                    .find(|(b, v, _)| *b == g.backend && *v == g.versus)
                {
                    Some((_, _, list)) => list.push(g),
                    None => per_case.push((g.backend.clone(), g.versus.clone(), vec![g])),
                }
                continue;
            }
            t.row([
                e.short_title(),
                g.statement.clone(),
                ratio_cell(g.ratio.as_ref()),
                floor_cell(g),
                goal_verdict_cell(g),
            ]);
        }
        for (backend, versus, list) in per_case {
            let count = |v: Verdict| list.iter().filter(|g| g.verdict == v).count();
            let not_met: Vec<String> = list
                .iter()
                .filter(|g| g.verdict == Verdict::NotMet)
                .filter_map(|g| g.case.map(|c| c.to_string()))
                .collect();
            t.row([
                e.short_title(),
                format!(
                    "{backend} ÷ {versus} > 1.00 in each of the {} cases",
                    list.len()
                ),
                String::new(),
                "–".to_owned(),
                format!(
                    "met in {}, not met in {}{}, undecided in {}",
                    count(Verdict::Met),
                    count(Verdict::NotMet),
                    if not_met.is_empty() {
                        String::new()
                    } else {
                        format!(" (cases {})", not_met.join(", "))
                    },
                    count(Verdict::Undecided)
                ),
            ]);
        }
    }
    t.render(out, 2);
}

fn browser_section(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "## {}\n", e.title());
    environment(out, e);
    if let Some(sql) = &e.doc.sql {
        sql_section(out, sql);
    }
    if let Some(l) = &e.doc.fs {
        lifecycle_section(out, l, e.doc.raw.is_some());
    }
    if let Some(r) = &e.doc.raw {
        raw_section(out, r);
    }
    if let Some(h) = &e.doc.handoff {
        handoff_section(out, h);
    }
    if let Some(s) = &e.doc.scale {
        scale_section(out, s);
    }
    verifications(out, e);
}

fn environment(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "### Environment\n");
    let mut t = Table::new(["Field", "Value"]);
    if let Some(r) = &e.doc.runner {
        if let Some(v) = &r.browser_version {
            t.row(["webdriver browser".to_owned(), v.clone()]);
        }
        if let Some(m) = &r.emulation {
            t.row(["emulation".to_owned(), m.note.clone()]);
        }
    }
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(&e.doc.environment) {
        for (k, v) in m {
            if let Some(text) = crate::doc::scalar_text(&v) {
                t.row([k, text]);
            }
        }
    }
    t.row(["generated_at".to_owned(), e.doc.generated_at.clone()]);
    t.row([
        "schema_version".to_owned(),
        match e.doc.upgraded_from {
            Some(v) => format!("{} (converted from {v})", e.doc.schema_version),
            None => e.doc.schema_version.to_string(),
        },
    ]);
    t.row(["config".to_owned(), config_line(e)]);
    t.render(out, 2);
}

fn sql_section(out: &mut String, sql: &SqlSection) {
    let backends: Vec<&SqlBackendResult> = sql
        .backends
        .iter()
        .filter(|b| b.meta.skipped.is_none())
        .collect();
    if backends.is_empty() {
        return;
    }
    let runs = backends.iter().map(|b| b.runs.len()).max().unwrap_or(0);
    let _ = writeln!(out, "### SQL backends\n");
    let mut t = Table::new([
        "Backend",
        "Engine",
        "Package",
        "Durability",
        "Settings",
        "Reference",
    ]);
    for b in &sql.backends {
        let m = &b.meta;
        t.row([
            m.name.clone(),
            format!("{:?}", m.engine).to_lowercase(),
            match (&m.package, &m.version) {
                (Some(p), Some(v)) => format!("{p} {v}"),
                (Some(p), None) => p.clone(),
                _ => "–".to_owned(),
            },
            match &m.skipped {
                Some(why) => format!("{} (**skipped**: {why})", m.durability),
                None => m.durability.clone(),
            },
            m.durability_settings
                .clone()
                .unwrap_or_else(|| "–".to_owned()),
            m.reference.clone().unwrap_or_else(|| "–".to_owned()),
        ]);
    }
    t.render(out, 6);
    for b in backends.iter().filter(|b| b.error.is_some()) {
        let _ = writeln!(
            out,
            "- **{} failed**: {} ({} measured round(s) before the failure are kept)",
            b.meta.name,
            b.error.as_deref().unwrap_or(""),
            b.runs.len()
        );
    }

    let _ = writeln!(out, "### SQL: the 16 cases\n");
    let _ = writeln!(
        out,
        "Seed {} · SQL SHA-256 `{}` · {runs} measured round(s) after {} warm-up.\n",
        sql.suite.seed, sql.suite.sha256, sql.config.warmup,
    );
    let has_suite = backends
        .iter()
        .any(|b| b.runs.iter().any(|r| r.suite.is_some()));
    if has_suite {
        let mut header = vec!["Case".to_owned()];
        header.extend(backends.iter().map(|b| b.meta.name.clone()));
        let mut t = Table::new(header.clone());
        for (i, info) in sql.suite.cases.iter().enumerate() {
            let mut row = vec![format!("{}. {}", info.number, info.title)];
            row.extend(
                backends
                    .iter()
                    .map(|b| stat_cell(summary(b).cases_ms.get(i).and_then(|c| c.ms))),
            );
            t.row(row);
        }
        let mut row = vec!["**Total (16 cases)**".to_owned()];
        row.extend(
            backends
                .iter()
                .map(|b| format!("**{}**", stat_cell(summary(b).total_ms))),
        );
        t.row(row);
        let mut row = vec!["Tests 2–16".to_owned()];
        row.extend(
            backends
                .iter()
                .map(|b| stat_cell(summary(b).tests_2_to_16_ms)),
        );
        t.row(row);
        type Pick = fn(&bench_results::summary::RatioSummary) -> Option<&RatioStat>;
        let picks: [(&str, Pick); 3] = [
            ("Total ÷ memory [95 %]", |r| r.total.as_ref()),
            ("Test 1 ÷ memory [95 %]", |r| r.test1.as_ref()),
            ("Tests 2–16 ÷ memory [95 %]", |r| {
                r.tests_2_to_16.as_ref()
            }),
        ];
        for (label, pick) in picks {
            let mut row = vec![label.to_owned()];
            row.extend(
                backends
                    .iter()
                    .map(|b| ratio_cell(b.ratios.as_ref().and_then(pick))),
            );
            t.row(row);
        }
        t.render(out, 1);

        let _ = writeln!(
            out,
            "Per case, paired ratio to the memory reference, median [95 % interval]:\n"
        );
        let ratioed: Vec<&&SqlBackendResult> =
            backends.iter().filter(|b| b.ratios.is_some()).collect();
        let mut header = vec!["Case".to_owned()];
        header.extend(ratioed.iter().map(|b| b.meta.name.clone()));
        let mut t = Table::new(header);
        for info in &sql.suite.cases {
            let mut row = vec![info.number.to_string()];
            row.extend(ratioed.iter().map(|b| {
                ratio_cell(b.ratios.as_ref().and_then(|r| {
                    r.cases
                        .iter()
                        .find(|c| c.number == info.number)?
                        .ratio
                        .as_ref()
                }))
            }));
            t.row(row);
        }
        t.render(out, 1);
    }

    let has_batch = backends
        .iter()
        .any(|b| b.runs.iter().any(|r| r.batch.is_some()));
    if has_batch {
        let _ = writeln!(
            out,
            "### {}-row batch (one transaction)\n",
            thousands(sql.suite.batch_rows.into())
        );
        let mut t = Table::new([
            "Backend",
            "ms",
            "÷ memory [95 %]",
            "Physical calls: flushes / writes / bytes / reads",
        ]);
        for b in &backends {
            let s = summary(b);
            t.row([
                b.meta.name.clone(),
                stat_cell(s.batch_ms),
                ratio_cell(b.ratios.as_ref().and_then(|r| r.batch.as_ref())),
                counters_cell(s.batch_counters),
            ]);
        }
        t.render(out, 1);
    }

    let _ = writeln!(out, "### SQL lifecycle phases\n");
    let _ = writeln!(
        out,
        "Outside the workload timings. \"–\": not applicable (a non-persistent backend has no \
         sync, reopen or verification).\n"
    );
    let mut header = vec!["Phase".to_owned()];
    header.extend(backends.iter().map(|b| b.meta.name.clone()));
    let mut t = Table::new(header);
    type PhasePick = fn(&bench_results::summary::PhaseStats) -> Option<Stat>;
    let keys: [(&str, PhasePick); 6] = [
        ("preparation", |p| p.prepare_ms),
        ("initialization", |p| p.init_ms),
        ("later explicit sync", |p| p.sync_ms),
        ("close", |p| p.close_ms),
        ("reopen", |p| p.reopen_ms),
        ("verification", |p| p.verify_ms),
    ];
    for (workload, batch) in [("suite", false), ("batch", true)] {
        for (label, pick) in keys {
            let cells: Vec<Option<Stat>> = backends
                .iter()
                .map(|b| {
                    let s = summary(b);
                    pick(if batch {
                        &s.batch_phases
                    } else {
                        &s.suite_phases
                    })
                })
                .collect();
            if cells.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![format!("{workload}: {label}")];
            row.extend(cells.into_iter().map(stat_cell));
            t.row(row);
        }
    }
    t.render(out, 1);

    let counted: Vec<&&SqlBackendResult> = backends
        .iter()
        .filter(|b| summary(b).cases_ms.iter().any(|c| c.counters.is_some()))
        .collect();
    if has_suite && !counted.is_empty() {
        let _ = writeln!(out, "### Physical calls per case (our VFS)\n");
        let _ = writeln!(
            out,
            "Median per case of the volume's counters: flushes / writes / bytes written / \
             reads. They do not depend on timer resolution.\n"
        );
        let mut header = vec!["Case".to_owned()];
        header.extend(counted.iter().map(|b| b.meta.name.clone()));
        let mut t = Table::new(header);
        for (i, info) in sql.suite.cases.iter().enumerate() {
            let mut row = vec![info.number.to_string()];
            row.extend(
                counted
                    .iter()
                    .map(|b| counters_cell(summary(b).cases_ms.get(i).and_then(|c| c.counters))),
            );
            t.row(row);
        }
        t.render(out, 1);
    }
    if has_suite {
        call_split_section(out, sql);
    }
}

/// Where the SQL cases' time went, for runs that timed our storage calls (`--call-timing`).
fn call_split_section(out: &mut String, sql: &SqlSection) {
    let splits = bench_results::calls::call_splits(sql);
    if splits.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### Time inside storage calls per case (our VFS, timed: OPFS in a browser)\n"
    );
    let _ = writeln!(
        out,
        "This run timed every storage call of ours (`--call-timing`: two clock readings per \
         call, on the measured side). Per case: the median ms inside the calls, then, paired \
         per round with the reference's time of the same case, **in calls ÷ reference** and \
         **the rest ÷ reference** (the case's time outside the calls: SQLite, the VFS and the \
         engine on the CPU), median [95 % interval over rounds; over page loads, then rounds, where \
         the section combines several]. The two ratios add up to the case's ratio; a rest of \
         1.00 means our CPU costs what the reference's does.\n"
    );
    let mut header = vec!["Case".to_owned()];
    for s in &splits {
        header.push(format!("{}: ms in calls", s.backend));
        header.push("in calls ÷ ref.".to_owned());
        header.push("rest ÷ ref.".to_owned());
    }
    let mut t = Table::new(header);
    let cells = |row: &mut Vec<String>, sp: &bench_results::calls::Split| {
        row.push(stat_cell(sp.in_calls_ms));
        row.push(ratio_cell(sp.calls_ratio.as_ref()));
        row.push(ratio_cell(sp.rest_ratio.as_ref()));
    };
    for (i, info) in sql.suite.cases.iter().enumerate() {
        let mut row = vec![info.number.to_string()];
        for s in &splits {
            match s.cases.get(i) {
                Some(sp) => cells(&mut row, sp),
                None => row.extend(["–".to_owned(), "–".to_owned(), "–".to_owned()]),
            }
        }
        t.row(row);
    }
    let mut row = vec!["**Total (16 cases)**".to_owned()];
    for s in &splits {
        cells(&mut row, &s.total);
    }
    t.row(row);
    let mut row = vec!["Tests 2–16".to_owned()];
    for s in &splits {
        cells(&mut row, &s.tests_2_to_16);
    }
    t.row(row);
    t.render(out, 1);
}

fn lifecycle_section(out: &mut String, l: &LifecycleSuite, has_raw: bool) {
    let backends = &l.backends;
    if backends.is_empty() {
        return;
    }
    // A phase's interval is shown only over several page loads: the lifecycle's goals are
    // absolute times (µs per file), and an interval of one load's rounds misses the spread
    // between loads (methodology.md, "How many rounds"). The JSON has it either way.
    let over_loads = l.rounds.iter().any(|r| r.load.is_some_and(|x| x > 0));
    let _ = writeln!(
        out,
        "### Filesystem lifecycle: {} files × {}\n",
        thousands(l.files.into()),
        fmt_bytes(l.file_size_bytes.into())
    );
    let _ = writeln!(
        out,
        "Read includes byte verification; delete removes half the files; reopen unmounts and \
         mounts again, verify reads every survivor back.{} Ratios to the baseline are paired \
         per round.{}\n",
        if over_loads {
            " Phase times: median (min–max) [95 % interval of the median over page loads, \
             then rounds]."
        } else {
            ""
        },
        if has_raw && !l.floors.is_empty() {
            " The raw OPFS floor is what the browser charged in this run (raw workloads below) \
             for the least work the phase implies if every logical file were its own OPFS file \
             (N × the per-call mean of `new-file: create+open`, `new-file: first write`, \
             `new-file: delete`, or one `flush`); below 1× the phase costs less than that \
             floor."
        } else {
            ""
        }
    );
    let mut header = vec!["Phase".to_owned()];
    header.extend(backends.iter().map(|b| b.name.clone()));
    if !l.floors.is_empty() {
        header.push("Raw OPFS floor".to_owned());
    }
    let mut t = Table::new(header);
    let phase_stat = |b: &bench_results::fs::LifecycleBackend, p: Phase| {
        b.summary
            .as_ref()
            .and_then(|s| s.phases.iter().find(|x| x.phase == p).cloned())
    };
    for p in Phase::ALL {
        let mut row = vec![p.to_string()];
        row.extend(backends.iter().map(|b| {
            let s = phase_stat(b, p);
            let cell = stat_cell(s.as_ref().and_then(|s| s.ms));
            match s
                .and_then(|s| Some((s.ms_lo?, s.ms_hi?)))
                .filter(|_| over_loads)
            {
                Some((lo, hi)) => format!("{cell} [{}–{}]", fmt_ms(lo), fmt_ms(hi)),
                None => cell,
            }
        }));
        if !l.floors.is_empty() {
            row.push(l.floors.iter().find(|f| f.phase == p).map_or_else(
                || "–".to_owned(),
                |f| format!("{} ({})", fmt_ms(f.ms), f.what),
            ));
        }
        t.row(row);
    }
    let mut row = vec!["**Total**".to_owned()];
    row.extend(backends.iter().map(|b| {
        format!(
            "**{}**",
            stat_cell(b.summary.as_ref().and_then(|s| s.total_ms))
        )
    }));
    if !l.floors.is_empty() {
        row.push(String::new());
    }
    t.row(row);
    if let Some(versus) = backends
        .iter()
        .find_map(|b| b.ratios.as_ref().map(|r| r.versus.clone()))
    {
        let mut row = vec![format!("Total ÷ {versus} [95 %]")];
        row.extend(
            backends
                .iter()
                .map(|b| ratio_cell(b.ratios.as_ref().and_then(|r| r.total.as_ref()))),
        );
        if !l.floors.is_empty() {
            row.push(String::new());
        }
        t.row(row);
    }
    for f in &l.floors {
        let mut row = vec![format!("{} ÷ floor", f.phase)];
        row.extend(backends.iter().map(|b| {
            phase_stat(b, f.phase)
                .and_then(|s| s.floor_ratio)
                .map_or_else(|| "–".to_owned(), ratio_value)
        }));
        row.push(String::new());
        t.row(row);
    }
    t.render(out, 1);

    let counted: Vec<_> = backends
        .iter()
        .filter(|b| {
            b.summary
                .as_ref()
                .is_some_and(|s| s.phases.iter().any(|p| p.counters.is_some()))
        })
        .collect();
    if !counted.is_empty() {
        let _ = writeln!(
            out,
            "Physical calls per phase (our volume): flushes / writes / bytes written / reads.\n"
        );
        let mut header = vec!["Phase".to_owned()];
        header.extend(counted.iter().map(|b| b.name.clone()));
        let mut t = Table::new(header);
        for p in Phase::ALL {
            let mut row = vec![p.to_string()];
            row.extend(
                counted
                    .iter()
                    .map(|b| counters_cell(phase_stat(b, p).and_then(|s| s.counters))),
            );
            t.row(row);
        }
        t.render(out, 1);
    }
    for b in backends {
        let mut extra = String::new();
        if let Some(m) = &b.rename_method {
            extra = format!("; rename by {m}");
        }
        if let Some(e) = &b.error {
            extra.push_str(&format!("; **failed**: {e}"));
        }
        let _ = writeln!(
            out,
            "- `{}` ({}): {}{extra}",
            b.name, b.storage, b.durability
        );
    }
    out.push('\n');
}

fn raw_section(out: &mut String, raw: &RawSuite) {
    let Some(series) = raw.summary.as_ref().filter(|s| !s.is_empty()) else {
        return;
    };
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
    for s in series {
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
    if let Some(d) = &raw.derived {
        let us = |v: Option<f64>| v.map_or("–".to_owned(), |v| fmt_fixed(v, 1));
        let _ = writeln!(
            out,
            "Derived: per-call floor (small-overwrite) {} µs · growth cost (append − overwrite) {} \
             µs · flush {} µs (= {} small writes) · new-file cycle {} µs{}{}{}\n",
            us(d.call_floor_us),
            us(d.growth_us),
            us(d.flush_us),
            d.flush_in_small_writes
                .map_or("–".to_owned(), |v| fmt_fixed(v, 0)),
            us(d.new_file_cycle_us),
            // Documents from before the engine series have no such ratio: not shown.
            d.engine_commit_over_pair.map_or(String::new(), |r| format!(
                " · our Strict commit ÷ a raw pair of its bytes beside it {}",
                ratio_value(r)
            )),
            d.cpu_after_pair.map_or(String::new(), |r| format!(
                " · that commit's CPU (in memory) right after a raw pair ÷ back to back {}",
                ratio_value(r)
            )),
            d.chunking
                .iter()
                .map(|c| format!(
                    " · {}: the 4 KiB calls take {} as long",
                    c.series,
                    ratio_value(c.ratio)
                ))
                .collect::<String>()
        );
    }
}

fn handoff_section(out: &mut String, h: &HandoffSection) {
    let Some(sum) = &h.summary else {
        return;
    };
    let c = &h.config;
    let measured = h.rounds.iter().filter(|r| !r.warmup).count();
    let _ = writeln!(out, "### Multi-tab hand-off\n");
    let _ = writeln!(
        out,
        "Two installs of one shared volume ({} buffer mode, {}) take turns in the page's worker \
         (Web Lock, BroadcastChannel): `two-writers` alternate single-row autocommit INSERTs, \
         `writer-reader` alternate an INSERT and a count that must see it; {} hand-offs per \
         workload in each of {measured} measured round(s). Ms per hand-off: the alternating \
         loop minus the same statements on one install, per hand-off; the floor: closing and \
         reopening two OPFS sync access handles, in the same rounds. Medians of per-round \
         figures (min–max); the ratio is paired per round. Acquire, release and take-over are \
         single clock readings (rounded to the timer step). Two installs in one worker are not \
         two tabs: the lock and channel paths are the same, the process boundary is not.\n",
        c.buffer_mode,
        c.durability,
        thousands(c.handoffs.into()),
    );
    let loads: std::collections::BTreeSet<u32> = h.rounds.iter().filter_map(|r| r.load).collect();
    if loads.len() > 1 {
        let _ = writeln!(
            out,
            "**{} page loads combined** (each a new browser session; rounds summed; the ratio's \
             interval resamples page loads, then rounds).\n",
            loads.len()
        );
    }
    let handles = h.rounds.iter().find_map(|r| r.handles.as_deref());
    let _ = writeln!(
        out,
        "Our installs' access handles: {}.\n",
        match handles {
            Some(HANDLES_CONCURRENT) => {
                "concurrent (`readwrite-unsafe`): each install keeps its two open and the Web \
                 Lock alone takes turns, so a hand-off closes and opens none, and the floor is \
                 a cost it does not pay"
            }
            Some(HANDLES_EXCLUSIVE) => {
                "exclusive: the giver closes its two and the taker opens them again at every \
                 hand-off"
            }
            _ => "not recorded (exclusive: closed and opened again at every hand-off)",
        }
    );
    // A per-hand-off byte count is a median of per-round means: non-negative and far below
    // 2^53, so the rounded value converts exactly.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let per = |s: Option<Stat>, bytes: bool| match s {
        Some(s) if bytes => fmt_bytes(s.median.round().max(0.0) as u64),
        Some(s) => fmt_fixed(s.median, 1),
        None => "–".to_owned(),
    };
    let mut t = Table::new([
        "Workload",
        "ms per hand-off",
        "÷ floor [95 %]",
        "Step ms",
        "Statement alone ms",
        "Acquire ms",
        "Release ms",
        "Take-over ms",
        "Calls/hand-off",
        "Read/hand-off",
        "Log replayed/hand-off",
        "Wrong reads",
    ]);
    for w in &sum.workloads {
        t.row([
            w.workload.clone(),
            stat_cell(w.handoff_ms),
            ratio_cell(w.ratio_to_floor.as_ref()),
            stat_cell(w.step_ms),
            stat_cell(w.solo_step_ms),
            stat_cell(w.acquire_ms),
            stat_cell(w.release_ms),
            stat_cell(w.take_over_ms),
            per(w.calls_per_handoff, false),
            per(w.bytes_read_per_handoff, true),
            per(w.catch_up_bytes_per_handoff, true),
            thousands(w.mismatches),
        ]);
    }
    // The peers' rows: the loop figures, the ratio and the reads (nothing else is measured).
    for p in &sum.peers {
        for w in &p.workloads {
            let mut row = vec![
                format!("{} · {}", p.backend, w.workload),
                stat_cell(w.handoff_ms),
                ratio_cell(w.ratio_to_floor.as_ref()),
                stat_cell(w.step_ms),
                stat_cell(w.solo_step_ms),
            ];
            row.extend(std::iter::repeat_n("–".to_owned(), 6));
            row.push(thousands(w.mismatches));
            t.row(row);
        }
    }
    let mut floor = vec![
        "floor (close + reopen 2 access handles)".to_owned(),
        stat_cell(sum.floor_ms),
    ];
    floor.extend(std::iter::repeat_n("–".to_owned(), 10));
    t.row(floor);
    t.render(out, 1);
    for p in &h.peers {
        let state = match (&p.skipped, &p.error) {
            (Some(why), _) => format!("skipped: {why}"),
            (None, Some(e)) => format!("stopped: {e}"),
            (None, None) => {
                let stale: u64 = h
                    .rounds
                    .iter()
                    .flat_map(|r| &r.peers)
                    .filter(|r| r.backend == p.name)
                    .flat_map(|r| &r.workloads)
                    .map(|w| u64::from(w.unrequested_releases))
                    .sum();
                let mut s =
                    "ran in the same rounds (its own part of each round's order)".to_owned();
                if stale > 0 {
                    let _ = write!(
                        s,
                        "; {stale} statement(s) found nobody holding the database (a holder \
                         gave it up unasked, on a stale request) and acquired it, timed as they came"
                    );
                }
                s
            }
        };
        let _ = writeln!(
            out,
            "- Peer {} ({} {}): {state}. Two connections: {}. Durability: {}.",
            p.name, p.package, p.version, p.connections, p.durability
        );
    }
    if !h.peers.is_empty() {
        out.push('\n');
    }
    if let Some(e) = &h.error {
        let _ = writeln!(out, "Stopped: {e}\n");
    }
}

/// `"median (min–max)"` of `s` formatted by `f`, the range left out when every sample is the
/// same (sizes usually are); `"–"` when absent.
fn stat_cell_with(s: Option<Stat>, f: impl Fn(f64) -> String) -> String {
    match s {
        Some(s) if s.n > 1 && s.min != s.max => {
            format!("{} ({}–{})", f(s.median), f(s.min), f(s.max))
        }
        Some(s) => f(s.median),
        None => "–".to_owned(),
    }
}

/// Bytes as MiB with two decimals.
fn mib(bytes: f64) -> String {
    fmt_fixed(bytes / f64::from(1u32 << 20), 2)
}

fn scale_section(out: &mut String, s: &ScaleSection) {
    let c = &s.config;
    let _ = writeln!(
        out,
        "### Scale and space
"
    );
    let _ = writeln!(
        out,
        "{} rows × {} B ({}) built in transactions of {} rows · {} measured round(s) after {} \
         warm-up · baseline `{}`{}.\n",
        thousands(c.rows),
        thousands(c.row_bytes.into()),
        fmt_bytes(c.rows.saturating_mul(c.row_bytes.into())),
        thousands(c.batch_rows.into()),
        c.runs,
        c.warmup,
        c.baseline,
        c.order_seed
            .map_or_else(String::new, |seed| format!(" · order seed {seed}")),
    );
    let _ = writeln!(
        out,
        "Each turn builds the table from nothing, syncs and checkpoints (ours), closes and reads \
         the bytes of the backend's files at rest, reopens, reads one row, scans every row \
         twice, times \
         {} autocommit INSERTs at size (ms per INSERT), then `DROP TABLE` + `VACUUM` and reads \
         the bytes at rest again. Medians of the measured rounds (min–max); sizes in MiB; \
         logical = SQLite's page count × page size; load GB/s: logical bytes ÷ (reopen + \
         first read), for Memory buffer mode only, which loads the whole file there (at the \
         first page the reopened connection reads); \"–\": not measured on that backend.\n",
        c.autocommits
    );
    let mut t = Table::new([
        "Backend",
        "Build ms",
        "Written to build MiB",
        "Logical MiB",
        "At rest ÷ logical",
        "Checkpoint ms",
        "Reopen ms",
        "First read ms",
        "Load GB/s",
        "Full scan cold ms",
        "Full scan warm ms",
        "Autocommit INSERT ms",
        "DROP + VACUUM ms",
        "At rest after VACUUM MiB",
    ]);
    for b in &s.backends {
        let sum = b.summary.clone().unwrap_or_default();
        let name = match &b.error {
            Some(_) => format!("{} (failed)", b.meta.name),
            None if b.meta.name == c.baseline => format!("{} (baseline)", b.meta.name),
            None => b.meta.name.clone(),
        };
        // Only where the reopen loads the whole file (ours in Memory buffer mode); the
        // per-run rate is not in the summary, its median is taken here.
        let gb_per_s = b
            .meta
            .name
            .starts_with("ours-memory-")
            .then(|| Stat::over(&b.runs, ScaleRun::load_gb_per_s))
            .flatten();
        t.row([
            name,
            stat_cell(sum.build_ms),
            stat_cell_with(sum.bytes_written, mib),
            stat_cell_with(sum.logical_bytes, mib),
            stat_cell_with(sum.space_ratio, |v| fmt_fixed(v, 3)),
            stat_cell(sum.checkpoint_ms),
            stat_cell(sum.reopen_ms),
            stat_cell(sum.first_read_ms),
            stat_cell_with(gb_per_s, |v| fmt_fixed(v, 2)),
            stat_cell(sum.scan_cold_ms),
            stat_cell(sum.scan_warm_ms),
            stat_cell(sum.autocommit_ms),
            stat_cell(sum.vacuum_ms),
            stat_cell_with(sum.stored_after_vacuum, mib),
        ]);
    }
    t.render(out, 1);
    for b in &s.backends {
        if let Some(e) = &b.error {
            let _ = writeln!(
                out,
                "- **{} failed**: {e} ({} measured round(s) before the failure are kept)",
                b.meta.name,
                b.runs.len()
            );
        }
    }
    if s.backends.iter().any(|b| b.error.is_some()) {
        out.push('\n');
    }

    let ratioed: Vec<&str> = s
        .backends
        .iter()
        .map(|b| b.meta.name.as_str())
        .filter(|n| s.ratios.iter().any(|r| r.backend == *n))
        .collect();
    if !ratioed.is_empty() {
        let _ = writeln!(
            out,
            "Paired per round to `{}`, median [95 % interval]:\n",
            c.baseline
        );
        let mut header = vec!["Backend".to_owned()];
        header.extend(ScaleMeasure::ALL.iter().map(|m| m.label().to_owned()));
        let mut t = Table::new(header);
        for name in ratioed {
            let mut row = vec![name.to_owned()];
            row.extend(ScaleMeasure::ALL.iter().map(|&m| {
                ratio_cell(
                    s.ratios
                        .iter()
                        .find(|r| r.backend == name && r.measure == m)
                        .map(|r| &r.ratio),
                )
            }));
            t.row(row);
        }
        t.render(out, 1);
    }

    if !s.goals.is_empty() {
        let _ = writeln!(out, "Goals (also in the goal table above):\n");
        let mut t = Table::new(["Goal", "Ratio [95 %]", "Verdict"]);
        for g in &s.goals {
            t.row([
                g.statement.clone(),
                ratio_cell(g.ratio.as_ref()),
                goal_verdict_cell(g),
            ]);
        }
        t.render(out, 1);
    }
}

fn verifications(out: &mut String, e: &Entry) {
    let _ = writeln!(out, "### Verifications\n");
    let v = &e.doc.verifications;
    if v.all_passed && v.failures.is_empty() {
        out.push_str("All passed.");
    } else {
        let _ = write!(out, "**Not all passed** (all_passed = {}).", v.all_passed);
        for f in &v.failures {
            let _ = write!(out, "\n- {f}");
        }
    }
    let console = e.doc.runner.as_ref().map_or(0, |r| r.console_errors.len());
    let _ = writeln!(out, " Console errors: {console}.\n");
    for n in &e.doc.notes {
        let _ = writeln!(out, "- {n}");
    }
    if !e.doc.notes.is_empty() {
        out.push('\n');
    }
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
    fn lifecycle_intervals_show_over_page_loads_only() {
        use bench_results::fs::{LifecycleBackend, LifecycleSummary, PhaseStat};
        use bench_results::sql::Round;
        let stat = PhaseStat {
            phase: Phase::Create,
            ms: Stat::of(&[1.2, 1.25, 1.3]),
            ms_lo: Some(1.16),
            ms_hi: Some(1.52),
            counters: None,
            floor_ratio: None,
        };
        let mut l = LifecycleSuite {
            files: 1000,
            file_size_bytes: 1024,
            rounds: (0..2)
                .map(|i| Round {
                    index: i,
                    warmup: false,
                    order: Vec::new(),
                    load: None,
                })
                .collect(),
            backends: vec![LifecycleBackend {
                name: "ours-disk-strict".to_owned(),
                summary: Some(LifecycleSummary {
                    phases: vec![stat],
                    ..LifecycleSummary::default()
                }),
                ..LifecycleBackend::default()
            }],
            ..LifecycleSuite::default()
        };
        let create_row = |l: &LifecycleSuite| {
            let mut out = String::new();
            lifecycle_section(&mut out, l, false);
            out.lines()
                .find(|r| r.starts_with("| create"))
                .unwrap()
                .to_owned()
        };
        assert!(!create_row(&l).contains('['), "{}", create_row(&l));
        l.rounds[1].load = Some(1);
        assert!(create_row(&l).contains("[1.16–1.52]"), "{}", create_row(&l));
    }

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

    #[test]
    fn ratio_cells() {
        assert_eq!(ratio_value(2.0), "2.00×");
        assert_eq!(ratio_value(1000.0), "1,000×");
        assert_eq!(ratio_value(0.001), "0.0010×");
        assert_eq!(ratio_value(0.0), "0×");
        assert_eq!(ratio_value(0.000_01), "<0.0001×");
        assert_eq!(ratio_value(f64::NAN), "–");
        let r = RatioStat {
            median: 1.02,
            lo: Some(0.991),
            hi: Some(1.049),
            min: 0.9,
            max: 1.2,
            n: 30,
            loads: None,
        };
        assert_eq!(ratio_cell(Some(&r)), "1.02× [0.99–1.05]");
        let few = RatioStat {
            lo: None,
            hi: None,
            n: 2,
            ..r
        };
        assert_eq!(ratio_cell(Some(&few)), "1.02× (n=2, no interval)");
        let few_loads = RatioStat {
            loads: Some(3),
            n: 30,
            ..few
        };
        assert_eq!(
            ratio_cell(Some(&few_loads)),
            "1.02× (n=30 in 3 page loads, no interval)"
        );
        assert_eq!(ratio_cell(None), "–");
    }

    #[test]
    fn a_floor_above_the_threshold_is_said_beside_the_verdict() {
        use bench_results::goals::{Bound, PhysicalFloor};
        use bench_results::summary::Metric;
        let floor = |ratio: f64| PhysicalFloor {
            flushes: 1020,
            series: COMMIT_SERIES.to_owned(),
            call_us: 614.0,
            bytes: None,
            flushed_bytes: None,
            write_us_per_mib: None,
            flush_us_per_mib: None,
            floor_ms: 626.28,
            reference_ms: 2856.63,
            ratio,
        };
        let g = |verdict: Verdict, f: Option<PhysicalFloor>| GoalCheck {
            goal: TOTAL_STRICT.to_owned(),
            backend: "ours-disk-strict".to_owned(),
            versus: "sqlite-memvfs".to_owned(),
            metric: Metric::Total,
            case: None,
            bound: Bound::AtMost,
            threshold: 1.25,
            statement: String::new(),
            ratio: None,
            verdict,
            floor: f,
        };
        assert_eq!(
            goal_verdict_cell(&g(Verdict::NotMet, Some(floor(1.351)))),
            "**not met** — floor 1.35× > 1.25: physically out of reach in this run"
        );
        assert_eq!(
            goal_verdict_cell(&g(Verdict::Undecided, Some(floor(1.351)))),
            "undecided — floor 1.35× > 1.25: physically out of reach in this run"
        );
        assert!(
            goal_verdict_cell(&g(Verdict::Met, Some(floor(1.3)))).starts_with(
                "**met**, although floor 1.30× > 1.25 (this run's raw writes and flushes cost more"
            )
        );
        // Under the threshold, or none: the verdict alone.
        assert_eq!(
            goal_verdict_cell(&g(Verdict::NotMet, Some(floor(1.22)))),
            "**not met**"
        );
        assert_eq!(goal_verdict_cell(&g(Verdict::Undecided, None)), "undecided");
        assert_eq!(
            floor_note(&g(Verdict::NotMet, Some(floor(1.22)))).unwrap(),
            "ours-disk-strict 1,020 flushes × 614 µs = 626.28 ms on sqlite-memvfs's 2,856.63 ms \
             → 1.22×"
        );
    }

    /// A summarized scale section over three backends (one failed in its second round): the
    /// config line, the medians with their ranges, the sizes in MiB, Memory mode's load rate,
    /// the paired ratios, the goals (in the section and in the goal table) and the failure.
    #[test]
    fn scale_section_renders_medians_ratios_and_goals() {
        use bench_results::scale::{ScaleBackend, ScaleConfig};
        use bench_results::sql::{BackendMeta, Round};
        use bench_results::{Bootstrap, RunConfig, Suite};
        // `percent`: the run's figures in percent of the baseline's first.
        let run = |round: u32, percent: u32| {
            let k = f64::from(percent) / 100.0;
            ScaleRun {
                round,
                build_ms: 100.0 * k,
                checkpoint_ms: None,
                bytes_written: Some(200_000 * u64::from(percent)),
                logical_bytes: 20 << 20,
                stored_bytes: Some(21 << 20),
                reopen_ms: 2.0 * k,
                first_read_ms: 0.5,
                scan_cold_ms: 8.0,
                scan_warm_ms: 4.0 * k,
                autocommit_ms: 0.6,
                vacuum_ms: 12.0,
                logical_after_vacuum: 8192,
                stored_after_vacuum: Some(16384),
            }
        };
        let backend = |name: &str, percent: u32, rounds: u32| ScaleBackend {
            meta: BackendMeta {
                name: name.to_owned(),
                ..BackendMeta::default()
            },
            runs: (0..rounds)
                .map(|i| ScaleRun {
                    checkpoint_ms: name.starts_with("ours-").then_some(3.0),
                    ..run(i, percent + i)
                })
                .collect(),
            ..ScaleBackend::default()
        };
        let mut failed = backend("ours-disk-strict", 150, 1);
        failed.error = Some("round 2: disk full".to_owned());
        let mut scale = ScaleSection {
            config: ScaleConfig {
                rows: 20_000,
                row_bytes: 1000,
                batch_rows: 10_000,
                autocommits: 20,
                runs: 2,
                warmup: 0,
                order_seed: Some(7),
                baseline: "sqlite-unix-file".to_owned(),
            },
            rounds: (0..2)
                .map(|i| Round {
                    index: i,
                    warmup: false,
                    order: Vec::new(),
                    load: None,
                })
                .collect(),
            backends: vec![
                backend("sqlite-unix-file", 100, 2),
                failed,
                backend("ours-memory-strict", 200, 2),
            ],
            ..ScaleSection::default()
        };
        scale.summarize(&Bootstrap::default());
        let config = RunConfig {
            preset: "native".to_owned(),
            suites: vec![Suite::Scale],
            runs: 2,
            seed: 1,
            sql_scale: 1,
            order_seed: Some(7),
            scale_rows: Some(20_000),
            scale_runs: Some(2),
            ..RunConfig::default()
        };
        let mut doc = Document::new(
            "2026-12-04T00:00:00Z".to_owned(),
            config,
            Default::default(),
        );
        doc.scale = Some(scale);
        let entry = Entry {
            browser: "native".to_owned(),
            file: PathBuf::from("2026-12-04-native.json"),
            doc,
        };
        let md = markdown("2026-12-04", &[entry]);
        for needle in [
            "### Scale and space",
            "20,000 rows × 1,000 B (19.1 MiB) built in transactions of 10,000 rows · 2 measured \
             round(s) after 0 warm-up · baseline `sqlite-unix-file` · order seed 7.",
            "scale 20,000 rows × 2 round(s)",
            // Build, written, logical, at rest ÷ logical, checkpoint, reopen, first read, load.
            "| sqlite-unix-file (baseline) | 100.50 (100.00–101.00) | 19.17 (19.07–19.26) | \
             20.00 | 1.050 | – | 2.01 (2.00–2.02) | 0.50 (0.50–0.50) | – |",
            "| ours-disk-strict (failed) | 150.00 | 28.61 | 20.00 | 1.050 | 3.00 | 3.00 | 0.50 | – |",
            // 20 MiB ÷ (4.00 ms + 0.5 ms) = 4.66 GB/s; 20 MiB ÷ (4.02 + 0.5) = 4.64.
            "| 3.00 (3.00–3.00) | 4.01 (4.00–4.02) | 0.50 (0.50–0.50) | 4.65 (4.64–4.66) | \
             8.00 (8.00–8.00) | 8.02 (8.00–8.04) |",
            "- **ours-disk-strict failed**: round 2: disk full (1 measured round(s) before the \
             failure are kept)",
            "| Backend | build | bytes written to build | reopen + first read | full scan, warm \
             | autocommit INSERT at size |",
            "| ours-memory-strict | 2.00× (n=2, no interval) |",
            "| ours-memory-strict bytes at rest ÷ logical bytes ≤ 1.10 | 1.05× (n=2, no interval) \
             | undecided |",
            "| Native | ours-disk-strict full scan, warm ÷ sqlite-unix-file ≤ 1.20 | 1.50× (n=1, \
             no interval) | – | undecided |",
        ] {
            assert!(md.contains(needle), "no {needle:?} in\n{md}");
        }
        assert!(
            md.contains("No SQL results."),
            "the headline copes without SQL"
        );
    }
}
