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
//! ```
//!
//! The result is a `bench_results::Document` with only the `fs` section, summarized (medians,
//! paired ratios to the baseline). Render it with
//! `cargo run -p bench-runner -- report --out - FILE.json`. Progress goes to stderr.

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
    use bench_results::env::{civil_date, iso_utc, unix_now};
    use bench_results::{Bootstrap, Document, RunConfig, Suite};

    const USAGE: &str = "usage: bench-fs-native [--runs N] [--warmup N] [--files N] \
                         [--size BYTES] [--seed N] [--modes disk,memory] \
                         [--durability strict,relaxed,balanced] [--no-baseline] \
                         [--backends A,B] [--dir PATH] [--out PATH]";

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
        let (config, out) = parse_args()?;
        let started = unix_now();
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
        let lc = config.lifecycle.clone().unwrap_or_default();
        let environment = bench_results::env::native();
        let run_config = RunConfig {
            preset: "native".to_owned(),
            suites: vec![Suite::Fs],
            backends: lc.only.clone(),
            runs: config.runs,
            target_half_width: None,
            warmup: config.warmup,
            fs_runs: None,
            peer_runs: None,
            seed: lc.seed,
            sql_scale: 1,
            files: lc.files,
            file_size_bytes: lc.file_size_bytes,
            raw_small_calls: 0,
            raw_cycle_calls: 0,
            order_seed: Some(config.order_seed),
            call_timing: false,
            batch_repeats: None,
            fs_repeats: None,
            handoffs: None,
            scale_rows: None,
            scale_runs: None,
            commit: environment.commit.clone(),
        };
        let mut doc = Document::new(iso_utc(started), run_config, environment);
        for b in result.lifecycle.iter().flat_map(|l| &l.backends) {
            match &b.error {
                Some(e) => doc.verifications.fail("fs", Some(&b.name), e.clone()),
                None => doc.verifications.pass(format!(
                    "fs: {}: every byte read back, survivors verified after reopen",
                    b.name
                )),
            }
        }
        doc.fs = result.lifecycle;
        doc.summarize(&Bootstrap::default());
        #[allow(clippy::cast_precision_loss)] // seconds of a run, far below 2^53
        let duration_ms = unix_now().saturating_sub(started) as f64 * 1e3;
        doc.duration_ms = duration_ms;
        for b in doc.fs.iter().flat_map(|l| &l.backends) {
            let total = b.summary.as_ref().and_then(|s| s.total_ms);
            println!(
                "{:<24} total {:>10} ms{}",
                b.name,
                total.map_or("–".to_owned(), |t| format!("{:.1}", t.median)),
                b.ratios
                    .as_ref()
                    .and_then(|r| Some((r.versus.clone(), r.total?)))
                    .map_or(String::new(), |(v, r)| format!("   ÷ {v}: {:.3}", r.median))
            );
        }

        let out = out.unwrap_or_else(|| default_out(&civil_date(started)));
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

    /// `bench-fs/results/native-YYYY-MM-DD.json`, with `-2`, `-3`, … if taken.
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
