//! What to run: browsers, the page's URL parameters, paths, limits; and the command line.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Error, Result};

/// A browser the runner drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Browser {
    /// Debian's Chromium through chromedriver.
    Chromium,
    /// Firefox ESR through geckodriver.
    Firefox,
}

impl Browser {
    /// Both, in the order they run.
    pub const ALL: [Browser; 2] = [Browser::Chromium, Browser::Firefox];

    /// Lower-case name used in file names and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Browser::Chromium => "chromium",
            Browser::Firefox => "firefox",
        }
    }

    /// Display name for reports.
    pub fn title(self) -> &'static str {
        match self {
            Browser::Chromium => "Chromium",
            Browser::Firefox => "Firefox",
        }
    }

    /// Parses `chromium`/`chrome` or `firefox`/`ff`.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "chromium" | "chrome" => Ok(Browser::Chromium),
            "firefox" | "ff" | "firefox-esr" => Ok(Browser::Firefox),
            other => Err(Error(format!(
                "unknown browser {other:?} (expected chromium or firefox)"
            ))),
        }
    }
}

impl fmt::Display for Browser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The page's presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Fewer rounds and files: a smoke run (the end-to-end test), minutes in total.
    Quick,
    /// The published configuration.
    Full,
    /// Full SQL sizes, fewer files and rounds: what the page picks on a phone.
    Phone,
}

impl Preset {
    /// As in the URL.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Quick => "quick",
            Preset::Full => "full",
            Preset::Phone => "phone",
        }
    }

    /// Parses `quick`, `full` or `phone`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "quick" => Ok(Preset::Quick),
            "full" => Ok(Preset::Full),
            "phone" => Ok(Preset::Phone),
            other => Err(Error(format!(
                "unknown preset {other:?} (expected quick, full or phone)"
            ))),
        }
    }

    /// Default limit for one browser's whole run.
    pub fn default_timeout(self) -> Duration {
        match self {
            Preset::Quick => Duration::from_secs(900),
            Preset::Full | Preset::Phone => Duration::from_secs(8 * 3600),
        }
    }
}

/// Default CPU slow-down of `--emulate-phone` (Chrome DevTools' "mid-tier mobile" is 4×).
pub const PHONE_CPU_RATE: f64 = 4.0;

/// The suites the page knows (the names of [`bench_results::Suite::ALL`], in running order).
pub const SUITES: [&str; 6] = ["sql", "batch", "fs", "raw", "handoff", "scale"];

/// URL parameters of the page (its automation contract).
#[derive(Clone, Debug, PartialEq)]
pub struct PageParams {
    /// `preset=`.
    pub preset: Preset,
    /// `suites=`; `None`: the preset's.
    pub suites: Option<Vec<String>>,
    /// `backends=` (a comma list or `all`); `None`: the preset's.
    pub backends: Option<Vec<String>>,
    /// `runs=`; `None`: the preset's.
    pub runs: Option<u32>,
    /// `fs_runs=` (lifecycle and raw rounds); `None`: the preset's (or `runs`).
    pub fs_runs: Option<u32>,
    /// `peer_runs=` (measured SQL rounds the JavaScript peers run in, the first ones); `None`:
    /// the preset's (or every round when `runs` is given).
    pub peer_runs: Option<u32>,
    /// `files=`; `None`: the preset's.
    pub files: Option<u32>,
    /// `warmup=`; `None`: the preset's.
    pub warmup: Option<u32>,
    /// `sql_scale=` (divide every SQL count; 1 = full size); `None`: the preset's.
    pub sql_scale: Option<u32>,
    /// `scale_rows=` (rows the scale suite builds, 1 KiB each); `None`: the preset's.
    pub scale_rows: Option<u64>,
    /// `scale_runs=` (measured rounds of the scale suite); `None`: the preset's.
    pub scale_runs: Option<u32>,
    /// `batch_repeats=` (runs of the batch per backend and SQL round, the fastest kept); `None`:
    /// the preset's.
    pub batch_repeats: Option<u32>,
    /// `fs_repeats=` (runs of the lifecycle per backend and round, the fastest kept); `None`:
    /// the preset's.
    pub fs_repeats: Option<u32>,
    /// `target_pct=` (stop the SQL rounds once every 16-case total ratio is within ± this many
    /// percent; 0: exactly `runs`); `None`: the preset's (none when `runs` is given).
    pub target_pct: Option<f64>,
    /// `order_seed=` (seed of every suite's shuffled round orders); `None`: the page's default.
    /// With `--page-loads`, load `k` gets the default plus `k`.
    pub order_seed: Option<u64>,
    /// `call_timing=1`: our backends time their storage calls in the SQL cases (a diagnostic).
    pub call_timing: bool,
    /// `commit=`: recorded in the result so it can be reproduced.
    pub commit: Option<String>,
}

impl PageParams {
    /// Only the preset.
    pub fn preset(preset: Preset) -> Self {
        Self {
            preset,
            suites: None,
            backends: None,
            runs: None,
            fs_runs: None,
            peer_runs: None,
            files: None,
            warmup: None,
            sql_scale: None,
            scale_rows: None,
            scale_runs: None,
            batch_repeats: None,
            fs_repeats: None,
            target_pct: None,
            order_seed: None,
            call_timing: false,
            commit: None,
        }
    }

    /// The query string, starting with `?`, always with `autorun=1`.
    pub fn query(&self) -> String {
        let mut q = format!("?preset={}&autorun=1", self.preset.name());
        if let Some(s) = &self.suites {
            q.push_str(&format!("&suites={}", encode(&s.join(","))));
        }
        if let Some(b) = &self.backends {
            q.push_str(&format!("&backends={}", encode(&b.join(","))));
        }
        if let Some(r) = self.runs {
            q.push_str(&format!("&runs={r}"));
        }
        if let Some(r) = self.fs_runs {
            q.push_str(&format!("&fs_runs={r}"));
        }
        if let Some(r) = self.peer_runs {
            q.push_str(&format!("&peer_runs={r}"));
        }
        if let Some(f) = self.files {
            q.push_str(&format!("&files={f}"));
        }
        if let Some(w) = self.warmup {
            q.push_str(&format!("&warmup={w}"));
        }
        if let Some(s) = self.sql_scale {
            q.push_str(&format!("&sql_scale={s}"));
        }
        if let Some(r) = self.scale_rows {
            q.push_str(&format!("&scale_rows={r}"));
        }
        if let Some(r) = self.scale_runs {
            q.push_str(&format!("&scale_runs={r}"));
        }
        if let Some(r) = self.batch_repeats {
            q.push_str(&format!("&batch_repeats={r}"));
        }
        if let Some(r) = self.fs_repeats {
            q.push_str(&format!("&fs_repeats={r}"));
        }
        if let Some(t) = self.target_pct {
            q.push_str(&format!("&target_pct={t}"));
        }
        if let Some(s) = self.order_seed {
            q.push_str(&format!("&order_seed={s}"));
        }
        if self.call_timing {
            q.push_str("&call_timing=1");
        }
        if let Some(c) = &self.commit {
            q.push_str(&format!("&commit={}", encode(c)));
        }
        q
    }

    /// The suites this run asked for (the preset's are all of [`SUITES`] unless the page says
    /// otherwise in its result's `config`).
    pub fn requested_suites(&self) -> Vec<String> {
        self.suites
            .clone()
            .unwrap_or_else(|| SUITES.iter().map(|s| (*s).to_owned()).collect())
    }
}

/// Percent-encodes everything but unreserved characters and the comma.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Where the page comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageSource {
    /// Start the serve binary (or `cargo run` it when `bin` is `None`) on `dir`.
    Serve {
        /// Path of the `serve` binary; `None`: `cargo run --release -p web --bin serve`.
        bin: Option<PathBuf>,
        /// The built page (`web/dist`).
        dir: PathBuf,
    },
    /// A page already served at this base URL (must be cross-origin isolated to get fine
    /// timers).
    Url(String),
}

/// Paths of the browsers and drivers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tools {
    /// Chromium executable.
    pub chromium: PathBuf,
    /// chromedriver.
    pub chromedriver: PathBuf,
    /// Firefox executable.
    pub firefox: PathBuf,
    /// geckodriver.
    pub geckodriver: PathBuf,
}

impl Default for Tools {
    fn default() -> Self {
        let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
        let geckodriver =
            find_on_path("geckodriver").unwrap_or_else(|| home.join(".cargo/bin/geckodriver"));
        Self {
            chromium: PathBuf::from("/usr/bin/chromium"),
            chromedriver: PathBuf::from("/usr/bin/chromedriver"),
            firefox: PathBuf::from("/usr/bin/firefox-esr"),
            geckodriver,
        }
    }
}

/// First `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Everything one `bench-runner run` does.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// In this order, one after the other (never at once: they would share the 2 cores).
    pub browsers: Vec<Browser>,
    /// URL parameters.
    pub page: PageParams,
    /// Where the page comes from.
    pub source: PageSource,
    /// Browsers and drivers.
    pub tools: Tools,
    /// Result files and the report go here.
    pub out_dir: PathBuf,
    /// Screenshot of the results view; `{browser}` and `{date}` are substituted, and with
    /// several browsers and no `{browser}` the browser name is added before the extension.
    pub screenshot: Option<PathBuf>,
    /// Limit for one browser's run, from page load to `done`.
    pub timeout: Duration,
    /// Browser window (CSS pixels): the layout the screenshot shows.
    pub window: (u32, u32),
    /// Workspace root (for `cargo run` and the commit).
    pub root: PathBuf,
    /// Write no files (the end-to-end test checks in memory and saves only the screenshot).
    pub write_results: bool,
    /// Chromium only: emulate a phone (mobile viewport, CPU slowed down by this rate). The
    /// result is marked as emulation, never as a phone.
    pub emulate_phone: Option<f64>,
    /// Page loads per browser (1: one). Each is a new browser session with its own round
    /// orders' seed; their documents are combined into one ([`bench_results::combine`]),
    /// whose intervals resample loads, then rounds.
    pub page_loads: u32,
}

impl RunOptions {
    /// The screenshot path for `browser` on `date`, if screenshots were asked for.
    pub fn screenshot_path(&self, browser: Browser, date: &str) -> Option<PathBuf> {
        let template = self.screenshot.as_ref()?.to_string_lossy().into_owned();
        let mut p = template
            .replace("{browser}", browser.name())
            .replace("{date}", date);
        if self.browsers.len() > 1 && !template.contains("{browser}") {
            let path = Path::new(&p);
            let stem = path.file_stem().map_or_else(
                || "screenshot".to_owned(),
                |s| s.to_string_lossy().into_owned(),
            );
            let ext = path
                .extension()
                .map_or_else(|| "png".to_owned(), |e| e.to_string_lossy().into_owned());
            p = path
                .with_file_name(format!("{stem}-{}.{ext}", browser.name()))
                .to_string_lossy()
                .into_owned();
        }
        Some(PathBuf::from(p))
    }
}

/// The workspace root: `$BENCH_ROOT`, else the parent of this crate's manifest directory when
/// it still exists, else the current directory.
pub fn workspace_root() -> PathBuf {
    if let Some(r) = std::env::var_os("BENCH_ROOT") {
        return PathBuf::from(r);
    }
    let compiled = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if compiled.join("Cargo.toml").is_file() {
        return compiled.canonicalize().unwrap_or(compiled);
    }
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}

/// The cargo target directory (`$CARGO_TARGET_DIR` or `<root>/target`).
pub fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// The serve binary built by `cargo build [--release] -p web --bin serve`, newest first
/// by profile preference (release, then debug), if one exists.
pub fn built_serve(root: &Path) -> Option<PathBuf> {
    let target = target_dir(root);
    ["release", "debug"]
        .iter()
        .map(|p| target.join(p).join("serve"))
        .find(|p| p.is_file())
}

/// What the command line asked for.
#[derive(Debug)]
pub enum Command {
    /// Run the page in browsers.
    Run(Box<RunOptions>),
    /// Regenerate a Markdown report from result files.
    Report {
        /// Result files (`<date>-<browser>.json`); empty: every file of `date` in `out_dir`.
        files: Vec<PathBuf>,
        /// Directory of the result files.
        out_dir: PathBuf,
        /// Date whose files to use (default: the newest date found in `out_dir`).
        date: Option<String>,
        /// Report path (default `<out_dir>/<date>-report.md`; `-` = stdout).
        out: Option<PathBuf>,
    },
    /// Combine result files of one browser (sittings of one build) into one.
    Combine {
        /// The documents, each one page load or several combined.
        files: Vec<PathBuf>,
        /// Where the combined document goes.
        out: PathBuf,
    },
    /// Print usage.
    Help,
}

/// Usage text.
pub const USAGE: &str = "\
usage: bench-runner [run] [options]
       bench-runner report [--out-dir DIR] [--date YYYY-MM-DD] [--out FILE.md|-] [FILE.json ...]
       bench-runner combine --out FILE.json FILE.json FILE.json ...

combine: one browser's result files of the same configuration and build (each one page load
     or a `--page-loads` run: a sitting) as one document whose intervals resample the page
     loads of all; render it with `report`.

run: serve the page, run it headless in each browser, write
     <out-dir>/<date>-<browser>.json and regenerate <out-dir>/<date>-report.md.
  --browsers LIST      chromium,firefox (default: both)
  --preset P           quick | full | phone (default: full)
  --suites LIST        sql,batch,fs,raw,handoff,scale (default: the preset's)
  --backends LIST      comma list of backend names, or all (default: the preset's)
  --runs N             measured rounds (every backend once per round; default: the preset's;
                       alone it sets the lifecycle's and raw workloads' rounds too)
  --target-pct P       stop the SQL rounds once every 16-case total ratio's 95 % interval is
                       within ±P % (checked every 4 rounds from 12 on; --runs is then the most;
                       0: exactly --runs; default: the preset's, full 3; none with --runs alone)
  --batch-repeats N    runs of the batch per backend and SQL round, back to back after the
                       round's suites; the fastest is the round's sample (default: the
                       preset's, full and phone 5, quick 3)
  --fs-repeats N       the same for the filesystem lifecycle, after the round's runs (a
                       backend whose lifecycle takes 250 ms or more runs once; default: the
                       preset's, full and phone 5, quick 3)
  --fs-runs N          measured rounds of the lifecycle and raw workloads (default: the preset's)
  --peer-runs N        measured SQL rounds the JavaScript peers run in: the first N (they also
                       run in the warm-up; ours and the references run in every round; default:
                       the preset's, full 8, phone and quick every round; with --runs: every
                       round)
  --files N            files in the fs lifecycle (default: the preset's)
  --warmup N           warm-up runs per backend, excluded from statistics (default: the preset's)
  --sql-scale N        divide every SQL count by N; 1 = full size (default: the preset's)
  --scale-rows N       rows (1 KiB each) the scale suite builds (default: the preset's)
  --scale-runs N       measured rounds of the scale suite (default: the preset's)
  --page-loads N       run the page N times per browser, each in a new browser session with
                       its own round orders (seed 20261130 + load), and combine them into one
                       result whose intervals resample page loads, then rounds (an interval
                       needs 6 loads or more); suites sql, batch, fs, raw and handoff only
                       (default 1)
  --order-seed N       seed of every suite's shuffled round orders (default 20261130); with
                       --page-loads, load k takes N + k: give each sitting of a later
                       `combine` its own (e.g. 20261130, 20261230, ...)
  --call-timing        our backends time their OPFS calls in the SQL cases; the report then
                       splits each case into the time inside those calls and the rest (a
                       diagnostic: each call pays two clock readings)
  --commit SHA         recorded in the result (default: git rev-parse of the work tree)
  --out-dir DIR        default: results
  --screenshot PATH    PNG of the results view; {browser} and {date} are substituted
  --timeout-secs N     per browser (default: 900 quick, 14400 full)
  --serve-bin PATH     the serve binary (default: target/release/serve, target/debug/serve,
                       else `cargo run --release -p web --bin serve`)
  --dir DIR            the built page (default: web/dist)
  --url URL            use a page already served there instead of starting serve
  --chromium PATH, --chromedriver PATH, --firefox PATH, --geckodriver PATH
  --window WxH         browser window in CSS pixels (default: 1280x1600)
  --emulate-phone[=R]  Chromium only: emulate a phone through DevTools (mobile viewport
                       412x915 @2.625x, the page's CPU throttled R times, default 4; the
                       benchmark worker's real slowdown is measured and recorded); implies
                       --browsers chromium and, unless given, --preset phone. Written as
                       <date>-chromium-phone-emulation.json and marked as emulation (not a
                       phone) in the JSON and the report.

report: regenerate the Markdown report from result files (default: all files of the newest
        date in --out-dir, written to <out-dir>/<date>-report.md).";

/// Splits a comma list, dropping empty items.
fn list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Parses the command line (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command> {
    let mut args: Vec<String> = args.into_iter().collect();
    let sub = match args.first().map(String::as_str) {
        Some("report") => {
            args.remove(0);
            "report"
        }
        Some("run") => {
            args.remove(0);
            "run"
        }
        Some("combine") => {
            args.remove(0);
            "combine"
        }
        _ => "run",
    };
    let root = workspace_root();
    let mut it = args.into_iter();
    let next_value = |it: &mut std::vec::IntoIter<String>, flag: &str| {
        it.next()
            .ok_or_else(|| Error(format!("{flag} needs a value\n\n{USAGE}")))
    };
    let number = |flag: &str, v: &str| {
        v.parse::<u32>()
            .map_err(|e| Error(format!("{flag} {v:?}: {e}")))
    };

    if sub == "combine" {
        let mut files = Vec::new();
        let mut out = None;
        while let Some(a) = it.next() {
            match a.as_str() {
                "-h" | "--help" => return Ok(Command::Help),
                "--out" => out = Some(PathBuf::from(next_value(&mut it, &a)?)),
                f if f.starts_with("--") => {
                    return Err(Error(format!("unknown option {f}\n\n{USAGE}")))
                }
                _ => files.push(PathBuf::from(a)),
            }
        }
        // How many files `combine` needs is `sittings::combine_files`'s to check.
        let out = out.ok_or_else(|| Error(format!("combine needs --out\n\n{USAGE}")))?;
        return Ok(Command::Combine { files, out });
    }

    if sub == "report" {
        let mut files = Vec::new();
        let mut out_dir = root.join("results");
        let mut date = None;
        let mut out = None;
        while let Some(a) = it.next() {
            match a.as_str() {
                "-h" | "--help" => return Ok(Command::Help),
                "--out-dir" => out_dir = PathBuf::from(next_value(&mut it, &a)?),
                "--date" => date = Some(next_value(&mut it, &a)?),
                "--out" => out = Some(PathBuf::from(next_value(&mut it, &a)?)),
                f if f.starts_with("--") => {
                    return Err(Error(format!("unknown option {f}\n\n{USAGE}")))
                }
                _ => files.push(PathBuf::from(a)),
            }
        }
        return Ok(Command::Report {
            files,
            out_dir,
            date,
            out,
        });
    }

    let mut browsers = Browser::ALL.to_vec();
    let mut page = PageParams::preset(Preset::Full);
    let mut out_dir = root.join("results");
    let mut screenshot = None;
    let mut timeout = None;
    let mut serve_bin = None;
    let mut dir = root.join("web").join("dist");
    let mut url = None;
    let mut tools = Tools::default();
    let mut window = (1280, 1600);
    let mut emulate_phone = None;
    let mut browsers_given = false;
    let mut preset_given = false;
    let mut page_loads = 1;
    while let Some(a) = it.next() {
        if let Some(rate) = a.strip_prefix("--emulate-phone") {
            let rate = match rate.strip_prefix('=') {
                Some(r) => r
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 1.0)
                    .ok_or_else(|| Error(format!("{a}: the rate must be a number >= 1")))?,
                None if rate.is_empty() => PHONE_CPU_RATE,
                None => return Err(Error(format!("unknown option {a}\n\n{USAGE}"))),
            };
            emulate_phone = Some(rate);
            continue;
        }
        match a.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--browsers" => {
                browsers = list(&next_value(&mut it, &a)?)
                    .iter()
                    .map(|b| Browser::parse(b))
                    .collect::<Result<_>>()?;
                browsers.dedup();
                if browsers.is_empty() {
                    return Err("--browsers is empty".into());
                }
                browsers_given = true;
            }
            "--preset" => {
                page.preset = Preset::parse(&next_value(&mut it, &a)?)?;
                preset_given = true;
            }
            "--suites" => {
                let s = list(&next_value(&mut it, &a)?);
                if let Some(bad) = s.iter().find(|s| !SUITES.contains(&s.as_str())) {
                    return Err(Error(format!(
                        "unknown suite {bad:?} (expected some of {})",
                        SUITES.join(",")
                    )));
                }
                page.suites = Some(s);
            }
            "--backends" => page.backends = Some(list(&next_value(&mut it, &a)?)),
            "--runs" => page.runs = Some(number(&a, &next_value(&mut it, &a)?)?.max(1)),
            "--fs-runs" => page.fs_runs = Some(number(&a, &next_value(&mut it, &a)?)?.max(1)),
            "--target-pct" => {
                let v = next_value(&mut it, &a)?;
                let pct: f64 = v
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=100.0).contains(p))
                    .ok_or_else(|| Error(format!("{a}: expected a percentage 0-100, got {v:?}")))?;
                page.target_pct = Some(pct);
            }
            "--peer-runs" => {
                page.peer_runs = Some(number(&a, &next_value(&mut it, &a)?)?.max(1));
            }
            "--files" => page.files = Some(number(&a, &next_value(&mut it, &a)?)?.max(1)),
            "--warmup" => page.warmup = Some(number(&a, &next_value(&mut it, &a)?)?),
            "--sql-scale" => {
                page.sql_scale = Some(number(&a, &next_value(&mut it, &a)?)?.max(1));
            }
            "--scale-rows" => {
                let v = next_value(&mut it, &a)?;
                let rows = v
                    .parse::<u64>()
                    .map_err(|e| Error(format!("{a} {v:?}: {e}")))?;
                page.scale_rows = Some(rows.max(1));
            }
            "--scale-runs" => {
                page.scale_runs = Some(number(&a, &next_value(&mut it, &a)?)?.max(1));
            }
            "--batch-repeats" => {
                page.batch_repeats = Some(number(&a, &next_value(&mut it, &a)?)?.max(1));
            }
            "--fs-repeats" => {
                page.fs_repeats = Some(number(&a, &next_value(&mut it, &a)?)?.max(1));
            }
            "--page-loads" => page_loads = number(&a, &next_value(&mut it, &a)?)?.max(1),
            "--order-seed" => {
                let v = next_value(&mut it, &a)?;
                page.order_seed = Some(
                    v.parse()
                        .map_err(|_| Error(format!("{a} needs a whole number, not {v:?}")))?,
                );
            }
            "--call-timing" => page.call_timing = true,
            "--commit" => page.commit = Some(next_value(&mut it, &a)?),
            "--out-dir" => out_dir = PathBuf::from(next_value(&mut it, &a)?),
            "--screenshot" => screenshot = Some(PathBuf::from(next_value(&mut it, &a)?)),
            "--timeout-secs" => {
                timeout = Some(Duration::from_secs(
                    number(&a, &next_value(&mut it, &a)?)?.into(),
                ));
            }
            "--serve-bin" => serve_bin = Some(PathBuf::from(next_value(&mut it, &a)?)),
            "--dir" => dir = PathBuf::from(next_value(&mut it, &a)?),
            "--url" => url = Some(next_value(&mut it, &a)?),
            "--chromium" => tools.chromium = PathBuf::from(next_value(&mut it, &a)?),
            "--chromedriver" => tools.chromedriver = PathBuf::from(next_value(&mut it, &a)?),
            "--firefox" => tools.firefox = PathBuf::from(next_value(&mut it, &a)?),
            "--geckodriver" => tools.geckodriver = PathBuf::from(next_value(&mut it, &a)?),
            "--window" => {
                let v = next_value(&mut it, &a)?;
                let (w, h) = v
                    .split_once(['x', 'X'])
                    .ok_or_else(|| Error(format!("--window {v:?}: expected WxH")))?;
                window = (number(&a, w)?, number(&a, h)?);
            }
            f => return Err(Error(format!("unknown option {f}\n\n{USAGE}"))),
        }
    }
    if page.commit.is_none() {
        page.commit = crate::util::source_commit(&root);
    }
    if emulate_phone.is_some() {
        if browsers_given && browsers != [Browser::Chromium] {
            return Err("--emulate-phone works in Chromium only: use --browsers chromium".into());
        }
        browsers = vec![Browser::Chromium];
        if !preset_given {
            page.preset = Preset::Phone;
        }
    }
    if page_loads > 1 {
        let combinable = ["sql", "batch", "fs", "raw", "handoff"];
        let suites = page.requested_suites();
        if let Some(bad) = suites.iter().find(|s| !combinable.contains(&s.as_str())) {
            return Err(Error(format!(
                "--page-loads combines the suites {} only, not {bad:?}: give --suites",
                combinable.join(",")
            )));
        }
    }
    let source = match url {
        Some(u) => PageSource::Url(u),
        None => PageSource::Serve {
            bin: serve_bin.or_else(|| built_serve(&root)),
            dir,
        },
    };
    Ok(Command::Run(Box::new(RunOptions {
        browsers,
        timeout: timeout.unwrap_or_else(|| page.preset.default_timeout()),
        page,
        source,
        tools,
        out_dir,
        screenshot,
        window,
        root,
        write_results: true,
        emulate_phone,
        page_loads,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command> {
        parse_args(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn query_string() {
        let mut p = PageParams::preset(Preset::Quick);
        assert_eq!(p.query(), "?preset=quick&autorun=1");
        p.suites = Some(vec!["sql".into(), "fs".into()]);
        p.backends = Some(vec!["all".into()]);
        p.runs = Some(3);
        p.files = Some(100);
        p.warmup = Some(0);
        p.sql_scale = Some(10);
        p.commit = Some("abc123-dirty".into());
        assert_eq!(
            p.query(),
            "?preset=quick&autorun=1&suites=sql,fs&backends=all&runs=3&files=100&warmup=0\
             &sql_scale=10&commit=abc123-dirty"
        );
        p.commit = Some("a b&c".into());
        assert!(p.query().ends_with("&commit=a%20b%26c"));
        p.commit = None;
        p.peer_runs = Some(2);
        assert!(
            p.query().contains("&runs=3&peer_runs=2&files=100"),
            "{}",
            p.query()
        );
        p.scale_rows = Some(1_000_000);
        p.scale_runs = Some(2);
        assert!(
            p.query()
                .ends_with("&sql_scale=10&scale_rows=1000000&scale_runs=2"),
            "{}",
            p.query()
        );
    }

    /// The runner accepts every suite the schema knows, by the same names, in the same order.
    #[test]
    fn suites_are_the_schemas() {
        let names: Vec<&str> = bench_results::Suite::ALL
            .iter()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(names, SUITES);
    }

    #[test]
    fn scale_options() {
        let Command::Run(o) = parse(&[
            "--suites",
            "scale",
            "--scale-rows",
            "20000",
            "--scale-runs",
            "3",
        ])
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page.requested_suites(), vec!["scale"]);
        assert_eq!(
            (o.page.scale_rows, o.page.scale_runs),
            (Some(20_000), Some(3))
        );
        let q = o.page.query();
        assert!(
            q.contains("&suites=scale&") && q.contains("&scale_rows=20000&scale_runs=3"),
            "{q}"
        );
        let Command::Run(o) = parse(&[]).unwrap() else {
            panic!("not a run")
        };
        assert!(!o.page.query().contains("scale_"), "absent: the preset's");
        assert!(parse(&["--scale-rows", "x"]).is_err());
        assert!(parse(&["--scale-runs"]).is_err());
        assert!(USAGE.contains("--scale-rows N") && USAGE.contains("--scale-runs N"));
    }

    #[test]
    fn page_loads_need_combinable_suites() {
        let Command::Run(o) = parse(&["--page-loads", "3", "--suites", "sql,fs,raw"]).unwrap()
        else {
            panic!("not a run")
        };
        assert_eq!(o.page_loads, 3);
        assert_eq!(o.page.order_seed, None, "the runner seeds each load itself");
        let Command::Run(o) = parse(&[
            "--page-loads",
            "3",
            "--suites",
            "sql",
            "--order-seed",
            "20261230",
        ])
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page.order_seed, Some(20_261_230));
        assert!(parse(&["--order-seed", "x"]).is_err());
        assert!(USAGE.contains("--order-seed N"));
        assert!(!o.page.call_timing && !o.page.query().contains("call_timing"));
        let Command::Run(o) = parse(&["--call-timing"]).unwrap() else {
            panic!("not a run")
        };
        assert!(o.page.query().contains("&call_timing=1"));
        let Command::Run(o) = parse(&[]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page_loads, 1);
        let e = parse(&["--page-loads", "2"]).unwrap_err().to_string();
        assert!(e.contains("not \"scale\""), "{e}");
        assert!(parse(&["--page-loads", "2", "--suites", "sql,scale"]).is_err());
        assert!(parse(&["--page-loads", "2", "--suites", "handoff"]).is_ok());
        assert!(parse(&["--page-loads", "1", "--suites", "scale"]).is_ok());
        let q = PageParams {
            order_seed: Some(20_261_131),
            ..PageParams::preset(Preset::Quick)
        }
        .query();
        assert!(q.contains("&order_seed=20261131"), "{q}");
    }

    #[test]
    fn target_pct_goes_to_the_page() {
        let Command::Run(o) = parse(&["--target-pct", "2.5", "--runs", "64"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page.target_pct, Some(2.5));
        assert!(o.page.query().contains("&runs=64&"), "{}", o.page.query());
        assert!(
            o.page.query().contains("&target_pct=2.5"),
            "{}",
            o.page.query()
        );
        let Command::Run(o) = parse(&[]).unwrap() else {
            panic!("not a run")
        };
        assert!(
            !o.page.query().contains("target_pct"),
            "absent: the preset's"
        );
        assert!(parse(&["--target-pct", "-1"]).is_err());
        assert!(parse(&["--target-pct", "x"]).is_err());
        assert!(USAGE.contains("--target-pct P"));
    }

    #[test]
    fn run_options() {
        let Command::Run(o) = parse(&[
            "--browsers",
            "firefox",
            "--preset",
            "quick",
            "--runs",
            "2",
            "--suites",
            "sql,raw",
            "--commit",
            "x",
            "--url",
            "http://127.0.0.1:1/",
            "--window",
            "800x600",
        ])
        .unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.browsers, vec![Browser::Firefox]);
        assert_eq!(o.page.preset, Preset::Quick);
        assert_eq!(o.page.runs, Some(2));
        assert_eq!(o.page.requested_suites(), vec!["sql", "raw"]);
        assert_eq!(o.timeout, Preset::Quick.default_timeout());
        assert_eq!(o.source, PageSource::Url("http://127.0.0.1:1/".into()));
        assert_eq!(o.window, (800, 600));

        let Command::Run(o) = parse(&["--emulate-phone"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.emulate_phone, Some(PHONE_CPU_RATE));
        assert_eq!(
            (o.browsers.as_slice(), o.page.preset),
            (&[Browser::Chromium][..], Preset::Phone)
        );
        let Command::Run(o) = parse(&["--emulate-phone=6", "--preset", "full"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!((o.emulate_phone, o.page.preset), (Some(6.0), Preset::Full));
        assert!(parse(&["--emulate-phone=0.5"]).is_err());
        assert!(parse(&["--emulate-phone", "--browsers", "firefox"]).is_err());
        assert!(parse(&["--emulate-phonex"]).is_err());

        assert!(parse(&["--suites", "sql,nope"]).is_err());
        assert!(parse(&["--browsers", "safari"]).is_err());
        assert!(parse(&["--runs"]).is_err());
        let Command::Run(o) = parse(&["--runs", "3", "--peer-runs", "1"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!((o.page.runs, o.page.peer_runs), (Some(3), Some(1)));
        assert!(o.page.query().contains("&runs=3&peer_runs=1"));
        let Command::Run(o) = parse(&[]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page.peer_runs, None, "absent: the preset's");
        assert!(!o.page.query().contains("peer_runs"));
        assert!(parse(&["--peer-runs"]).is_err());
        assert!(parse(&["--peer-runs", "x"]).is_err());
        let Command::Run(o) = parse(&["--batch-repeats", "7"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!(o.page.batch_repeats, Some(7));
        assert!(o.page.query().contains("&batch_repeats=7"));
        assert!(!PageParams::preset(Preset::Full)
            .query()
            .contains("batch_repeats"));
        assert!(parse(&["--batch-repeats", "x"]).is_err());
        let Command::Run(o) = parse(&["--fs-repeats", "4"]).unwrap() else {
            panic!("not a run")
        };
        assert_eq!((o.page.fs_repeats, o.page.batch_repeats), (Some(4), None));
        assert!(o.page.query().contains("&fs_repeats=4"));
        assert!(!o.page.query().contains("batch_repeats"));
        assert!(parse(&["--fs-repeats", "x"]).is_err());
        assert!(USAGE.contains("--peer-runs N"));
        assert!(parse(&["--bogus"]).is_err());
        assert!(matches!(parse(&["--help"]).unwrap(), Command::Help));
    }

    #[test]
    fn report_options() {
        let Command::Report {
            files, date, out, ..
        } = parse(&["report", "--date", "2026-01-02", "--out", "-", "a.json"]).unwrap()
        else {
            panic!("not a report")
        };
        assert_eq!(files, vec![PathBuf::from("a.json")]);
        assert_eq!(date.as_deref(), Some("2026-01-02"));
        assert_eq!(out, Some(PathBuf::from("-")));
    }

    #[test]
    fn screenshot_paths() {
        let Command::Run(mut o) = parse(&["--screenshot", "shots/r.png"]).unwrap() else {
            panic!()
        };
        assert_eq!(
            o.screenshot_path(Browser::Firefox, "d"),
            Some(PathBuf::from("shots/r-firefox.png"))
        );
        o.screenshot = Some(PathBuf::from("x/{date}-{browser}.png"));
        assert_eq!(
            o.screenshot_path(Browser::Chromium, "2026-01-02"),
            Some(PathBuf::from("x/2026-01-02-chromium.png"))
        );
        o.browsers = vec![Browser::Chromium];
        o.screenshot = Some(PathBuf::from("one.png"));
        assert_eq!(
            o.screenshot_path(Browser::Chromium, "d"),
            Some(PathBuf::from("one.png"))
        );
    }
}
