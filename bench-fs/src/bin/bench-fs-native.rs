//! Native runner: the filesystem lifecycle over our volume on std files (both buffer modes) and
//! the one-file-per-file baseline.
//!
//! ```text
//! cargo run --release -p bench-fs --bin bench-fs-native -- [options]
//!   --runs N          measured runs per backend (default 5)
//!   --warmup N        warm-up runs per backend, excluded from statistics (default 1)
//!   --files N         logical files (default 1000; phones: 100)
//!   --size BYTES      bytes per file (default 1024)
//!   --seed N          seed of the file contents
//!   --modes A,B       our buffer modes: disk,memory (default both)
//!   --durability A,B  our durability levels: strict,relaxed,balanced (default strict)
//!   --no-baseline     skip the one-file-per-file baseline
//!   --backends A,B    only backends whose name contains one of these
//!   --dir PATH        where the temp directory goes (default: system temp; use a real disk)
//!   --out PATH        JSON result (default bench-fs/results/native-YYYY-MM-DD.json)
//!   --report PATH     run nothing: print the Markdown of a stored result (native or browser)
//! ```
//!
//! Markdown goes to stdout, progress to stderr.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    if let Err(e) = native::main() {
        eprintln!("bench-fs-native: {e}");
        std::process::exit(1);
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::path::PathBuf;

    use bench_fs::config::{Config, Level, LifecycleConfig, Mode};
    use bench_fs::native::run_native;
    use bench_fs::report;

    const USAGE: &str = "usage: bench-fs-native [--runs N] [--warmup N] [--files N] \
                         [--size BYTES] [--seed N] [--modes disk,memory] \
                         [--durability strict,relaxed,balanced] [--no-baseline] \
                         [--backends A,B] [--dir PATH] [--out PATH] | --report PATH";

    fn parse_args() -> Result<(Config, Option<PathBuf>), String> {
        let mut lc = LifecycleConfig::default();
        let mut config = Config {
            raw: None,
            ..Config::default()
        };
        let mut out = None;
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            match flag.as_str() {
                "--help" | "-h" => return Err(USAGE.to_owned()),
                "--no-baseline" => {
                    lc.baseline = false;
                    continue;
                }
                _ => {}
            }
            let value = it
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
            let num32 = |v: &str| v.parse::<u32>().map_err(|e| format!("{flag} {v}: {e}"));
            let list = |v: &str| v.split(',').map(str::to_owned).collect::<Vec<_>>();
            match flag.as_str() {
                "--runs" => config.runs = num32(&value)?.max(1),
                "--warmup" => config.warmup = num32(&value)?,
                "--files" => lc.files = num32(&value)?.max(2),
                "--size" => lc.file_size_bytes = num32(&value)?.max(1),
                "--seed" => lc.seed = num(&value)?,
                "--modes" => {
                    lc.buffer_modes = list(&value)
                        .iter()
                        .map(|m| match m.as_str() {
                            "disk" => Ok(Mode::Disk),
                            "memory" => Ok(Mode::Memory),
                            _ => Err(format!("--modes: unknown mode {m}")),
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--durability" => {
                    lc.durabilities = list(&value)
                        .iter()
                        .map(|d| match d.as_str() {
                            "strict" => Ok(Level::Strict),
                            "relaxed" => Ok(Level::Relaxed),
                            "balanced" => Ok(Level::Balanced),
                            _ => Err(format!("--durability: unknown level {d}")),
                        })
                        .collect::<Result<_, _>>()?;
                }
                "--backends" => lc.only = list(&value),
                "--dir" => config.dir = value,
                "--out" => out = Some(PathBuf::from(value)),
                _ => return Err(format!("unknown option {flag}\n{USAGE}")),
            }
        }
        config.lifecycle = Some(lc);
        Ok((config, out))
    }

    pub(crate) fn main() -> Result<(), String> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if let [flag, path] = args.as_slice() {
            if flag == "--report" {
                let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                let result = bench_fs::FsResult::from_json(&text)?;
                print!("{}", report::markdown(&result));
                return Ok(());
            }
        }
        let (config, out) = parse_args()?;
        let result = run_native(&config, &mut |p| {
            eprintln!(
                "[{}/{}] {} {}/{} {}: {:.1} ms",
                p.done,
                p.total,
                if p.warmup { "warm-up" } else { "run" },
                p.run,
                p.runs,
                p.item,
                p.ms
            );
        })
        .map_err(|e| e.to_string())?;

        print!("{}", report::markdown(&result));

        let out = out.unwrap_or_else(default_out);
        if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        let json = result.to_json().map_err(|e| e.to_string())?;
        std::fs::write(&out, json + "\n").map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!("wrote {}", out.display());
        Ok(())
    }

    /// `bench-fs/results/native-YYYY-MM-DD.json`, with `-2`, `-3`, … if taken.
    fn default_out() -> PathBuf {
        let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/results"));
        let unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let date = civil_date(unix_s);
        let mut path = dir.join(format!("native-{date}.json"));
        let mut n = 2;
        while path.exists() {
            path = dir.join(format!("native-{date}-{n}.json"));
            n += 1;
        }
        path
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

    #[cfg(test)]
    mod tests {
        #[test]
        fn civil_dates() {
            assert_eq!(super::civil_date(0), "1970-01-01");
            assert_eq!(super::civil_date(951_782_400), "2000-02-29");
        }
    }
}
