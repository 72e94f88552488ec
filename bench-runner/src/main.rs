//! `bench-runner`: runs the benchmark page headless in Chromium and Firefox and writes
//! `results/<date>-<browser>.json` and `results/<date>-report.md`; `bench-runner report`
//! regenerates the report from result files. See the crate docs (`src/lib.rs`) and `--help`.

use std::process::ExitCode;

use bench_runner::options::{parse_args, Command, USAGE};
use bench_runner::report::{newest_date, split_date, write_report};
use bench_runner::run::run;

fn main() -> ExitCode {
    let command = match parse_args(std::env::args().skip(1)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bench-runner: {e}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Command::Combine { files, out } => {
            match bench_runner::sittings::combine_files(&files, &out) {
                Ok(line) => {
                    eprintln!("{line}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("bench-runner combine: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Report {
            files,
            out_dir,
            date,
            out,
        } => {
            let date = match date {
                Some(d) => Ok(d),
                None if !files.is_empty() => Ok(files
                    .iter()
                    .filter_map(|f| {
                        let stem = f.file_stem()?.to_str()?;
                        split_date(stem).map(|(d, _)| d.to_owned())
                    })
                    .max()
                    .unwrap_or_else(bench_runner::util::today)),
                None => newest_date(&out_dir),
            };
            let result = date.and_then(|d| write_report(&out_dir, &d, &files, out.as_deref()));
            match result {
                Ok((path, text)) => {
                    if path.as_os_str() == "-" {
                        print!("{text}");
                    } else {
                        eprintln!("wrote {}", path.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("bench-runner report: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Run(opts) => {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("bench-runner: starting the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match rt.block_on(run(&opts)) {
                Err(e) => {
                    eprintln!("bench-runner: {e}");
                    ExitCode::FAILURE
                }
                Ok(summary) => {
                    if let Some(h) = &summary.headline {
                        println!("{h}\n");
                    }
                    if let Some(r) = &summary.report {
                        println!("report: {}", r.display());
                    }
                    for b in &summary.browsers {
                        if let Some(p) = &b.json_path {
                            println!("{}: {}", b.browser, p.display());
                        }
                    }
                    if summary.ok() {
                        ExitCode::SUCCESS
                    } else {
                        let failed: Vec<&str> = summary
                            .browsers
                            .iter()
                            .filter(|b| !b.ok())
                            .map(|b| b.browser.name())
                            .collect();
                        eprintln!("bench-runner: FAILED in {}", failed.join(", "));
                        ExitCode::FAILURE
                    }
                }
            }
        }
    }
}
