//! Native runner: the 16-case suite and the 10,000-row batch over every native backend, and
//! the scale-and-space suite over the unix VFS and ours.
//!
//! ```text
//! cargo run --release -p bench-sql --bin bench-sql-native -- [options]
//!   --suites A,B      some of sql,batch,scale (default sql,batch)
//!   --runs N          measured runs per backend (default 3)
//!   --warmup N        warm-up runs per backend, excluded from statistics (default 1; the
//!                     scale suite runs at most 1)
//!   --batch-repeats N runs of the batch per backend and round, the fastest kept (default 5,
//!                     as the page's full preset)
//!   --seed N          PRNG seed (default bench_sql::sql::DEFAULT_SEED)
//!   --backends A,B    only backends whose name contains one of these
//!   --dir PATH        where file backends make their temp directories (default: system
//!                     temp; use a real disk, not tmpfs)
//!   --out PATH        JSON result (default bench-sql/results/native-YYYY-MM-DD.json)
//!   --scale N         divide every SQL count by N (smoke runs; not a result)
//!   --scale-rows N    rows the scale suite builds (default 100,000: about 100 MB)
//!   --scale-runs N    measured rounds of the scale suite (default: --runs)
//!   --order-seed N    seed of the round orders (default bench_results::stats::ORDER_SEED)
//!   --reference R     sqlite-memory (default: `:memory:`) or sqlite-memvfs (the memory VFS
//!                     the browser's ratios are to: only what a VFS adds to SQLite's pager;
//!                     adds the backend sqlite-memvfs)
//!   --call-timing     our backends time their storage calls (no value; the report then
//!                     splits each case into the calls' share and the rest)
//! ```
//!
//! Warm-up rounds, then measured rounds; each round runs every backend once in a shuffled
//! order (`bench_sql::runner::run_rounds`), each suite and each batch from a wiped state. The
//! scale suite (`bench_sql::scale::run_scale`) runs afterwards in its own rounds over
//! `sqlite-unix-file` (its baseline, kept whenever one of ours is selected) and ours in Disk
//! and Memory buffer mode at Strict durability. The result is a `bench_results::Document`
//! with the `sql` and `scale` sections of the suites run, summarized (medians, paired ratios
//! to `sqlite-memory` and to the scale baseline with bootstrap intervals, goal checks). Render
//! it with `cargo run -p bench-runner -- report --out - FILE.json`; stdout gets one line per
//! backend.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::main() {
        eprintln!("bench-sql-native: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::path::{Path, PathBuf};

    use bench_results::env::{civil_date, iso_utc, unix_now};
    use bench_results::scale::ScaleSection;
    use bench_results::sql::SqlSection;
    use bench_results::{Bootstrap, Document, RunConfig, Suite as SuiteKind};
    use bench_sql::backend::SqlBackend;
    use bench_sql::native::{NativeBackend, OursBackend, UnixFileBackend};
    use bench_sql::runner::{run_rounds, Ours, Plan};
    use bench_sql::scale::{run_scale, ScalePlan};
    use bench_sql::sql::DEFAULT_SEED;
    use bench_sql::{block_on, workloads};
    use opfs_vfs::{BufferMode, Durability};

    /// Rows the scale suite builds unless `--scale-rows` says otherwise (1 KiB each: about
    /// 100 MB, the browser's full preset).
    const DEFAULT_SCALE_ROWS: u64 = 100_000;

    /// The suites this binary runs.
    const SUITES: [SuiteKind; 3] = [SuiteKind::Sql, SuiteKind::Batch, SuiteKind::Scale];

    struct Args {
        suites: Vec<SuiteKind>,
        runs: u32,
        warmup: u32,
        batch_repeats: u32,
        seed: u64,
        order_seed: u64,
        backends: Vec<String>,
        dir: PathBuf,
        out: Option<PathBuf>,
        scale: u32,
        scale_rows: u64,
        /// `None`: `runs`.
        scale_runs: Option<u32>,
        /// Ratios to memvfs (the browser's reference) instead of `:memory:`.
        against_memvfs: bool,
        /// `--call-timing`: our backends time their storage calls.
        call_timing: bool,
    }

    const USAGE: &str = "usage: bench-sql-native [--suites sql,batch,scale] [--runs N] \
                         [--warmup N] [--batch-repeats N] [--seed N] [--backends A,B] \
                         [--dir PATH] [--out PATH] [--scale N] [--scale-rows N] \
                         [--scale-runs N] [--order-seed N] \
                         [--reference sqlite-memory|sqlite-memvfs] [--call-timing]";

    /// `sql,batch,scale` in running order, or an error naming the unknown one.
    fn parse_suites(value: &str) -> Result<Vec<SuiteKind>, String> {
        let mut wanted = Vec::new();
        for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match SuiteKind::parse(name).filter(|s| SUITES.contains(s)) {
                Some(s) => wanted.push(s),
                None => return Err(format!("unknown suite {name:?} (expected sql,batch,scale)")),
            }
        }
        if wanted.is_empty() {
            return Err(format!("--suites is empty\n{USAGE}"));
        }
        Ok(SUITES.into_iter().filter(|s| wanted.contains(s)).collect())
    }

    fn parse_args() -> Result<Args, String> {
        let mut args = Args {
            suites: vec![SuiteKind::Sql, SuiteKind::Batch],
            runs: 3,
            warmup: 1,
            batch_repeats: 5,
            seed: DEFAULT_SEED,
            order_seed: bench_results::stats::ORDER_SEED,
            backends: Vec::new(),
            dir: std::env::temp_dir(),
            out: None,
            scale: 1,
            scale_rows: DEFAULT_SCALE_ROWS,
            scale_runs: None,
            against_memvfs: false,
            call_timing: false,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            if flag == "--help" || flag == "-h" {
                return Err(USAGE.to_owned());
            }
            if flag == "--call-timing" {
                args.call_timing = true;
                continue;
            }
            let value = it
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
            let num32 = |v: &str| v.parse::<u32>().map_err(|e| format!("{flag} {v}: {e}"));
            match flag.as_str() {
                "--suites" => args.suites = parse_suites(&value)?,
                "--runs" => args.runs = num32(&value)?.max(1),
                "--warmup" => args.warmup = num32(&value)?,
                "--batch-repeats" => args.batch_repeats = num32(&value)?.max(1),
                "--seed" => args.seed = num(&value)?,
                "--order-seed" => args.order_seed = num(&value)?,
                "--backends" => {
                    args.backends = value.split(',').map(str::to_owned).collect();
                }
                "--dir" => args.dir = PathBuf::from(value),
                "--out" => args.out = Some(PathBuf::from(value)),
                "--scale" => args.scale = num32(&value)?.max(1),
                "--scale-rows" => args.scale_rows = num(&value)?.max(1),
                "--scale-runs" => args.scale_runs = Some(num32(&value)?.max(1)),
                "--reference" => {
                    args.against_memvfs = match value.as_str() {
                        "sqlite-memory" => false,
                        "sqlite-memvfs" => true,
                        _ => return Err(format!("unknown reference {value:?}\n{USAGE}")),
                    }
                }
                _ => return Err(format!("unknown option {flag}\n{USAGE}")),
            }
        }
        Ok(args)
    }

    pub(crate) fn main() -> Result<(), String> {
        let args = parse_args()?;
        let started = unix_now();
        let mut environment = bench_results::env::native();
        environment.sqlite_version = Some(rusqlite::version().to_owned());
        let wants = |s| args.suites.contains(&s);
        let scale_runs = args.scale_runs.unwrap_or(args.runs);
        let config = RunConfig {
            preset: "native".to_owned(),
            suites: args.suites.clone(),
            backends: args.backends.clone(),
            runs: args.runs,
            target_half_width: None,
            warmup: args.warmup,
            fs_runs: None,
            peer_runs: None,
            seed: args.seed,
            sql_scale: args.scale,
            files: 0,
            file_size_bytes: 0,
            raw_small_calls: 0,
            raw_cycle_calls: 0,
            order_seed: Some(args.order_seed),
            call_timing: args.call_timing,
            batch_repeats: Some(args.batch_repeats),
            fs_repeats: None,
            handoffs: None,
            scale_rows: wants(SuiteKind::Scale).then_some(args.scale_rows),
            scale_runs: wants(SuiteKind::Scale).then_some(scale_runs),
            commit: environment.commit.clone(),
        };
        let mut doc = Document::new(iso_utc(started), config, environment);
        if wants(SuiteKind::Sql) || wants(SuiteKind::Batch) {
            let sql = run_sql(&args, &doc.config)?;
            for b in &sql.backends {
                match &b.error {
                    Some(e) => doc.verifications.fail("sql", Some(&b.meta.name), e.clone()),
                    None => doc.verifications.pass(format!(
                        "sql+batch: {}: {} rounds; verified after reopen where persistent",
                        b.meta.name,
                        b.runs.len() + b.warmup_runs.len()
                    )),
                }
            }
            doc.sql = Some(sql);
        }
        if wants(SuiteKind::Scale) {
            let scale = run_scale_suite(&args, &doc.config, scale_runs)?;
            for b in &scale.backends {
                match &b.error {
                    Some(e) => doc.verifications.fail(
                        bench_results::scale::SUITE,
                        Some(&b.meta.name),
                        e.clone(),
                    ),
                    None => doc.verifications.pass(format!(
                        "scale: {}: {} rounds of {} rows; every row seen by two full scans \
                         after reopen",
                        b.meta.name,
                        b.runs.len() + b.warmup_runs.len(),
                        scale.config.rows
                    )),
                }
            }
            doc.scale = Some(scale);
        }
        doc.summarize(&Bootstrap::default());
        #[allow(clippy::cast_precision_loss)] // seconds of a run, far below 2^53
        let duration_ms = (unix_now().saturating_sub(started)) as f64 * 1e3;
        doc.duration_ms = duration_ms;
        print_lines(&doc);

        let out = match args.out {
            Some(p) => p,
            None => default_out(&civil_date(started)),
        };
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let json = doc.to_json().map_err(|e| e.to_string())?;
        std::fs::write(&out, json + "\n").map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!(
            "wrote {} (tables: cargo run -p bench-runner -- report --out - {})",
            out.display(),
            out.display()
        );
        if doc.verifications.all_passed {
            Ok(())
        } else {
            Err("a backend failed (see verifications in the result)".to_owned())
        }
    }

    /// The 16 cases and/or the batch over every selected native backend, not summarized.
    fn run_sql(args: &Args, config: &RunConfig) -> Result<SqlSection, String> {
        let (suite, batch) = workloads(args.seed, args.scale);
        let all = if args.against_memvfs {
            NativeBackend::all_against_memvfs(&args.dir)
        } else {
            NativeBackend::all(&args.dir)
        };
        let mut backends: Vec<Ours<NativeBackend>> = all
            .into_iter()
            .filter(|b| config.selects_backend(&b.name()))
            .map(|mut b| {
                b.time_calls(args.call_timing);
                Ours(b)
            })
            .collect();
        if backends.is_empty() {
            return Err(format!("no backend matches {:?}", args.backends));
        }
        let plan = Plan {
            runs: args.runs,
            warmup: args.warmup,
            peer_runs: None,
            order_seed: args.order_seed,
            suite: config.runs_suite(SuiteKind::Sql),
            batch: config.runs_suite(SuiteKind::Batch),
            batch_repeats: args.batch_repeats,
            data_dir: Some(args.dir.display().to_string()),
            precision: None,
        };
        Ok(block_on(run_rounds(
            &mut backends,
            &plan,
            &suite,
            &batch,
            &mut |p| {
                if p.outcome.is_some() {
                    eprintln!("{p}");
                }
            },
        )))
    }

    /// The scale suite's backends under `base` that `config` selects: `sqlite-unix-file`
    /// (the baseline, kept whenever one of ours is selected) and ours in Disk and Memory
    /// buffer mode at Strict durability.
    fn scale_backends(base: &Path, config: &RunConfig) -> Vec<NativeBackend> {
        let ours: Vec<NativeBackend> = [BufferMode::Disk, BufferMode::Memory]
            .into_iter()
            .map(|mode| NativeBackend::Ours(OursBackend::new(base, mode, Durability::Strict)))
            .filter(|b| config.selects_backend(&b.name()))
            .collect();
        let baseline = NativeBackend::UnixFile(UnixFileBackend::new(base));
        let mut v = Vec::new();
        if !ours.is_empty() || config.selects_backend(&baseline.name()) {
            v.push(baseline);
        }
        v.extend(ours);
        v
    }

    /// The scale suite: `scale_runs` measured rounds after at most one warm-up, in the SQL
    /// rounds' order seed, files under `--dir`; not summarized.
    fn run_scale_suite(
        args: &Args,
        config: &RunConfig,
        scale_runs: u32,
    ) -> Result<ScaleSection, String> {
        let mut backends = scale_backends(&args.dir, config);
        let Some(baseline) = backends.first().map(SqlBackend::name) else {
            return Err(format!("no scale backend matches {:?}", args.backends));
        };
        let plan = ScalePlan {
            rows: args.scale_rows,
            runs: scale_runs,
            warmup: args.warmup.min(1),
            order_seed: args.order_seed,
            baseline,
        };
        Ok(block_on(run_scale(&mut backends, &plan, &mut |p| {
            if p.outcome.is_some() {
                eprintln!("{p}");
            }
        })))
    }

    /// One line per backend on stdout: the SQL total and its ratio, the scale build, the
    /// bytes at rest ÷ logical and the warm scan's ratio to the baseline.
    fn print_lines(doc: &Document) {
        let median = |s: Option<bench_results::Stat>, decimals: usize| {
            s.map_or("–".to_owned(), |s| format!("{:.*}", decimals, s.median))
        };
        let ratio = |r: Option<&bench_results::RatioStat>| {
            r.map_or("–".to_owned(), |r| match (r.lo, r.hi) {
                (Some(lo), Some(hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.median),
                _ => format!("{:.3}", r.median),
            })
        };
        for b in doc.sql.iter().flat_map(|s| &s.backends) {
            let total = b.summary.as_ref().and_then(|s| s.total_ms);
            println!(
                "{:<22} total {:>10} ms   ÷ {}: {}",
                b.meta.name,
                median(total, 1),
                b.ratios.as_ref().map_or("memory", |r| r.reference.as_str()),
                ratio(b.ratios.as_ref().and_then(|r| r.total.as_ref()))
            );
        }
        let Some(scale) = &doc.scale else { return };
        for b in &scale.backends {
            let s = b.summary.clone().unwrap_or_default();
            let scan = scale.ratios.iter().find(|r| {
                r.backend == b.meta.name
                    && r.measure == bench_results::scale::ScaleMeasure::ScanWarm
            });
            println!(
                "{:<22} scale: build {:>10} ms   at rest ÷ logical {}   warm scan ÷ {}: {}{}",
                b.meta.name,
                median(s.build_ms, 1),
                median(s.space_ratio, 3),
                scale.config.baseline,
                ratio(scan.map(|r| &r.ratio)),
                b.error
                    .as_ref()
                    .map_or(String::new(), |e| format!("   FAILED: {e}"))
            );
        }
    }

    /// `bench-sql/results/native-YYYY-MM-DD.json`, with `-2`, `-3`, … if taken.
    fn default_out(date: &str) -> PathBuf {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/results"));
        let mut path = dir.join(format!("native-{date}.json"));
        let mut n = 2;
        while path.exists() {
            path = dir.join(format!("native-{date}-{n}.json"));
            n += 1;
        }
        path
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn config(backends: &[&str]) -> RunConfig {
            RunConfig {
                preset: "native".to_owned(),
                suites: SUITES.to_vec(),
                backends: backends.iter().map(|b| (*b).to_owned()).collect(),
                runs: 1,
                seed: 1,
                sql_scale: 1,
                ..RunConfig::default()
            }
        }

        #[test]
        fn suites_parse_in_running_order() {
            assert_eq!(
                parse_suites("scale,sql").unwrap(),
                vec![SuiteKind::Sql, SuiteKind::Scale]
            );
            assert!(parse_suites("fs").is_err(), "not a native suite");
            assert!(parse_suites("nope").is_err());
            assert!(parse_suites(",").is_err());
        }

        /// The baseline stays whenever one of ours is selected; nothing of ours unless asked.
        #[test]
        fn scale_backends_keep_the_baseline() {
            let base = Path::new("/nonexistent");
            let names = |filters: &[&str]| -> Vec<String> {
                scale_backends(base, &config(filters))
                    .iter()
                    .map(SqlBackend::name)
                    .collect()
            };
            assert_eq!(
                names(&[]),
                ["sqlite-unix-file", "ours-disk-strict", "ours-memory-strict"]
            );
            assert_eq!(
                names(&["ours-memory-strict"]),
                ["sqlite-unix-file", "ours-memory-strict"]
            );
            assert_eq!(names(&["sqlite-unix"]), ["sqlite-unix-file"]);
            assert!(names(&["sqlite-memory", "relaxed"]).is_empty());
        }
    }
}
