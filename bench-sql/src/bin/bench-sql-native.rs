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
//! ```
//!
//! Each run index goes through every backend in turn (warm-up first), so slow drift of the
//! machine affects all backends alike. Each suite and each batch starts from a wiped state.

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
    use std::process::Command;
    use std::time::{SystemTime, UNIX_EPOCH};

    use bench_sql::backend::SqlBackend;
    use bench_sql::batch::{Batch, BATCH_ROWS};
    use bench_sql::native::NativeBackend;
    use bench_sql::result::{
        BackendResult, BenchResult, CaseInfo, Config, Environment, RunSample, SuiteInfo,
        SCHEMA_VERSION,
    };
    use bench_sql::runner::{run_batch, run_suite};
    use bench_sql::sql::{Suite, DEFAULT_SEED};
    use bench_sql::{block_on, report};

    struct Args {
        runs: u32,
        warmup: u32,
        seed: u64,
        backends: Vec<String>,
        dir: PathBuf,
        out: Option<PathBuf>,
        scale: u32,
    }

    const USAGE: &str = "usage: bench-sql-native [--runs N] [--warmup N] [--seed N] \
                         [--backends A,B] [--dir PATH] [--out PATH] [--scale N]";

    fn parse_args() -> Result<Args, String> {
        let mut args = Args {
            runs: 3,
            warmup: 1,
            seed: DEFAULT_SEED,
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
        let started_unix_s = unix_now();
        let suite = Suite::generate_scaled(args.seed, args.scale);
        let batch = Batch::generate(args.seed, (BATCH_ROWS / args.scale).max(1));

        let mut backends: Vec<NativeBackend> = NativeBackend::all(&args.dir)
            .into_iter()
            .filter(|b| {
                args.backends.is_empty() || args.backends.iter().any(|f| b.name().contains(f))
            })
            .collect();
        if backends.is_empty() {
            return Err(format!("no backend matches {:?}", args.backends));
        }

        let mut results: Vec<BackendResult> = backends
            .iter()
            .map(|b| BackendResult {
                name: b.name(),
                durability: b.durability().to_owned(),
                persistent: b.persistent(),
                warmup_runs: Vec::new(),
                runs: Vec::new(),
                summary: None,
            })
            .collect();

        let total = args.warmup + args.runs;
        for i in 0..total {
            let warm = i < args.warmup;
            for (backend, result) in backends.iter_mut().zip(&mut results) {
                let name = backend.name();
                let suite_run = block_on(run_suite(backend, &suite))
                    .map_err(|e| format!("{name}: suite: {e}"))?;
                let batch_run = block_on(run_batch(backend, &batch))
                    .map_err(|e| format!("{name}: batch: {e}"))?;
                eprintln!(
                    "{} {}/{} {name}: suite {:.1} ms (test 1 {:.1}), batch {:.1} ms",
                    if warm { "warm-up" } else { "run" },
                    if warm { i + 1 } else { i - args.warmup + 1 },
                    if warm { args.warmup } else { args.runs },
                    suite_run.total_ms,
                    suite_run.test1_ms,
                    batch_run.ms
                );
                let sample = RunSample {
                    suite: suite_run,
                    batch: batch_run,
                };
                if warm {
                    result.warmup_runs.push(sample);
                } else {
                    result.runs.push(sample);
                }
            }
        }

        let mut result = BenchResult {
            schema_version: SCHEMA_VERSION,
            suite: SuiteInfo {
                seed: suite.seed,
                sha256: suite.sha256(),
                scale_divisor: suite.scale_divisor,
                cases: suite
                    .cases
                    .iter()
                    .map(|c| CaseInfo {
                        number: c.number,
                        title: c.title.clone(),
                    })
                    .collect(),
                batch_rows: batch.len(),
                batch_sha256: batch.sha256(),
            },
            config: Config {
                runs: args.runs,
                warmup: args.warmup,
                data_dir: Some(args.dir.display().to_string()),
            },
            environment: environment(started_unix_s),
            backends: results,
        };
        result.summarize();

        print!("{}", report::markdown(&result));

        let out = match args.out {
            Some(p) => p,
            None => default_out(),
        };
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let json = result.to_json().map_err(|e| e.to_string())?;
        std::fs::write(&out, json + "\n").map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!("wrote {}", out.display());
        Ok(())
    }

    /// `bench-sql/results/native-YYYY-MM-DD.json`, with `-2`, `-3`, … if taken.
    fn default_out() -> PathBuf {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/results"));
        let date = civil_date(unix_now());
        let mut path = dir.join(format!("native-{date}.json"));
        let mut n = 2;
        while path.exists() {
            path = dir.join(format!("native-{date}-{n}.json"));
            n += 1;
        }
        path
    }

    fn unix_now() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// `YYYY-MM-DD` (UTC) of a Unix time, by Howard Hinnant's `civil_from_days`.
    fn civil_date(unix_s: u64) -> String {
        let z = i64::try_from(unix_s / 86_400).unwrap_or(0) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        format!("{year:04}-{month:02}-{day:02}")
    }

    fn command_output(program: &str, args: &[&str]) -> Option<String> {
        let out = Command::new(program).args(args).output().ok()?;
        if !out.status.success() {
            return None;
        }
        Some(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    fn environment(started_unix_s: u64) -> Environment {
        let commit = command_output("git", &["rev-parse", "--short=12", "HEAD"]).map(|c| {
            let dirty =
                command_output("git", &["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{c}-dirty")
            } else {
                c
            }
        });
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        });
        Environment {
            platform: "native".to_owned(),
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
            cpu_count: std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok()),
            cpu_model,
            sqlite_version: rusqlite::version().to_owned(),
            rustc: command_output("rustc", &["-V"]),
            commit,
            user_agent: None,
            browser: None,
            browser_version: None,
            timer_resolution_us: None,
            cross_origin_isolated: None,
            storage_usage_bytes: None,
            storage_quota_bytes: None,
            started_unix_s: Some(started_unix_s),
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn civil_dates() {
            assert_eq!(super::civil_date(0), "1970-01-01");
            assert_eq!(super::civil_date(951_782_400), "2000-02-29");
            assert_eq!(super::civil_date(1_681_171_200), "2023-04-11");
        }
    }
}
