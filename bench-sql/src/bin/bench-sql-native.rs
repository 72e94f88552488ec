//! Native runner: the 16-case suite and the 10,000-row batch over every native backend.
//!
//! ```text
//! cargo run --release -p bench-sql --bin bench-sql-native -- [options]
//!   --runs N        measured runs per backend (default 3)
//!   --warmup N      warm-up runs per backend, excluded from statistics (default 1)
//!   --seed N        PRNG seed (default bench_sql::sql::DEFAULT_SEED)
//!   --backends A,B  only backends whose name contains one of these
//!   --dir PATH      where file backends make their temp directories (default: system temp;
//!                   use a real disk, not tmpfs)
//!   --out PATH      JSON result (default bench-sql/results/native-YYYY-MM-DD.json)
//!   --scale N       divide every count by N (smoke runs; not a result)
//!   --order-seed N  seed of the round orders (default bench_results::stats::ORDER_SEED)
//! ```
//!
//! Warm-up rounds, then measured rounds; each round runs every backend once in a shuffled
//! order (`bench_sql::runner::run_rounds`), each suite and each batch from a wiped state. The
//! result is a `bench_results::Document` with only the `sql` section, summarized (medians,
//! paired ratios to `sqlite-memory` with bootstrap intervals, goal checks). Render it with
//! `cargo run -p bench-runner -- report --out - FILE.json`; stdout gets one line per backend.

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
    use std::path::PathBuf;

    use bench_results::env::{civil_date, iso_utc, unix_now};
    use bench_results::{Bootstrap, Document, RunConfig, Suite as SuiteKind};
    use bench_sql::backend::SqlBackend;
    use bench_sql::native::NativeBackend;
    use bench_sql::runner::{run_rounds, Ours, Plan};
    use bench_sql::sql::DEFAULT_SEED;
    use bench_sql::{block_on, workloads};

    struct Args {
        runs: u32,
        warmup: u32,
        seed: u64,
        order_seed: u64,
        backends: Vec<String>,
        dir: PathBuf,
        out: Option<PathBuf>,
        scale: u32,
    }

    const USAGE: &str = "usage: bench-sql-native [--runs N] [--warmup N] [--seed N] \
                         [--backends A,B] [--dir PATH] [--out PATH] [--scale N] \
                         [--order-seed N]";

    fn parse_args() -> Result<Args, String> {
        let mut args = Args {
            runs: 3,
            warmup: 1,
            seed: DEFAULT_SEED,
            order_seed: bench_results::stats::ORDER_SEED,
            backends: Vec::new(),
            dir: std::env::temp_dir(),
            out: None,
            scale: 1,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            if flag == "--help" || flag == "-h" {
                return Err(USAGE.to_owned());
            }
            let value = it
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
            let num32 = |v: &str| v.parse::<u32>().map_err(|e| format!("{flag} {v}: {e}"));
            match flag.as_str() {
                "--runs" => args.runs = num32(&value)?.max(1),
                "--warmup" => args.warmup = num32(&value)?,
                "--seed" => args.seed = num(&value)?,
                "--order-seed" => args.order_seed = num(&value)?,
                "--backends" => {
                    args.backends = value.split(',').map(str::to_owned).collect();
                }
                "--dir" => args.dir = PathBuf::from(value),
                "--out" => args.out = Some(PathBuf::from(value)),
                "--scale" => args.scale = num32(&value)?.max(1),
                _ => return Err(format!("unknown option {flag}\n{USAGE}")),
            }
        }
        Ok(args)
    }

    pub(crate) fn main() -> Result<(), String> {
        let args = parse_args()?;
        let started = unix_now();
        let (suite, batch) = workloads(args.seed, args.scale);
        let mut backends: Vec<Ours<NativeBackend>> = NativeBackend::all(&args.dir)
            .into_iter()
            .filter(|b| {
                args.backends.is_empty() || args.backends.iter().any(|f| b.name().contains(f))
            })
            .map(Ours)
            .collect();
        if backends.is_empty() {
            return Err(format!("no backend matches {:?}", args.backends));
        }
        let plan = Plan {
            runs: args.runs,
            warmup: args.warmup,
            peer_runs: None,
            order_seed: args.order_seed,
            suite: true,
            batch: true,
            data_dir: Some(args.dir.display().to_string()),
        };
        let mut sql = block_on(run_rounds(&mut backends, &plan, &suite, &batch, &mut |p| {
            if p.outcome.is_some() {
                eprintln!("{p}");
            }
        }));
        let mut environment = bench_results::env::native();
        environment.sqlite_version = Some(rusqlite::version().to_owned());
        let config = RunConfig {
            preset: "native".to_owned(),
            suites: vec![SuiteKind::Sql, SuiteKind::Batch],
            backends: args.backends.clone(),
            runs: args.runs,
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
            handoffs: None,
            scale_rows: None,
            scale_runs: None,
            commit: environment.commit.clone(),
        };
        let mut doc = Document::new(iso_utc(started), config, environment);
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
        sql.summarize(&Bootstrap::default());
        doc.sql = Some(sql);
        #[allow(clippy::cast_precision_loss)] // seconds of a run, far below 2^53
        let duration_ms = (unix_now().saturating_sub(started)) as f64 * 1e3;
        doc.duration_ms = duration_ms;

        for b in doc.sql.iter().flat_map(|s| &s.backends) {
            let total = b.summary.as_ref().and_then(|s| s.total_ms);
            let ratio = b.ratios.as_ref().and_then(|r| r.total);
            println!(
                "{:<22} total {:>10} ms   ÷ {}: {}",
                b.meta.name,
                total.map_or("–".to_owned(), |t| format!("{:.1}", t.median)),
                b.ratios.as_ref().map_or("memory", |r| r.reference.as_str()),
                ratio.map_or("–".to_owned(), |r| match (r.lo, r.hi) {
                    (Some(lo), Some(hi)) => format!("{:.3} [{lo:.3}, {hi:.3}]", r.median),
                    _ => format!("{:.3}", r.median),
                })
            );
        }

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
}
