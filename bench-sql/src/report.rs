//! Markdown tables from a [`BenchResult`]: medians with the observed min–max, per backend.

use std::fmt::Write as _;

use crate::result::{BackendResult, BackendSummary, BenchResult, PhaseStats, Stat};

/// Picks one phase's statistics.
type PhasePick = fn(&PhaseStats) -> Option<Stat>;

/// Name of the reference backend that ratios are taken against, when present.
pub const REFERENCE: &str = "sqlite-memory";

/// The reference in the browser (the sqlite-wasm-rs memory VFS), used when [`REFERENCE`] is
/// absent.
pub const BROWSER_REFERENCE: &str = "sqlite-memvfs";

/// `12.345` → `"12.35"`; positive values below 0.01 print as `"<0.01"`.
pub fn fmt_ms(ms: f64) -> String {
    if ms > 0.0 && ms < 0.005 {
        "<0.01".to_owned()
    } else {
        format!("{ms:.2}")
    }
}

/// `"median (min–max)"`, or `"n/a"`.
pub fn fmt_stat(stat: Option<Stat>) -> String {
    match stat {
        Some(s) if s.n > 1 => format!("{} ({}–{})", fmt_ms(s.median), fmt_ms(s.min), fmt_ms(s.max)),
        Some(s) => fmt_ms(s.median),
        None => "n/a".to_owned(),
    }
}

fn ratio(value: Option<Stat>, reference: Option<Stat>) -> String {
    match (value, reference) {
        (Some(v), Some(r)) if r.median > 0.0 => format!("{:.2}", v.median / r.median),
        _ => "n/a".to_owned(),
    }
}

fn header(out: &mut String, first: &str, backends: &[&BackendResult]) {
    let _ = write!(out, "| {first} |");
    for b in backends {
        let _ = write!(out, " {} |", b.name);
    }
    out.push_str("\n|---|");
    for _ in backends {
        out.push_str("---:|");
    }
    out.push('\n');
}

fn row(out: &mut String, label: &str, cells: impl IntoIterator<Item = String>) {
    let _ = write!(out, "| {label} |");
    for c in cells {
        let _ = write!(out, " {c} |");
    }
    out.push('\n');
}

/// The full report: context, timings, lifecycle phases, and physical counters where counted.
pub fn markdown(result: &BenchResult) -> String {
    let summaries: Vec<BackendSummary> = result
        .backends
        .iter()
        .map(|b| b.summary.clone().unwrap_or_else(|| b.summarize()))
        .collect();
    let backends: Vec<&BackendResult> = result.backends.iter().collect();
    let reference_index = [REFERENCE, BROWSER_REFERENCE]
        .iter()
        .find_map(|r| result.backends.iter().position(|b| b.name == *r));
    let reference_name = reference_index.map_or(REFERENCE, |i| result.backends[i].name.as_str());
    let reference = reference_index.map(|i| &summaries[i]);
    let mut out = String::new();

    let env = &result.environment;
    let _ = writeln!(
        out,
        "Seed {} · SQL sha256 {} · batch sha256 {}{}",
        result.suite.seed,
        short(&result.suite.sha256),
        short(&result.suite.batch_sha256),
        if result.suite.scale_divisor == 1 {
            String::new()
        } else {
            format!(
                " · **counts divided by {} (smoke run, not a result)**",
                result.suite.scale_divisor
            )
        }
    );
    let _ = writeln!(
        out,
        "{} runs after {} warm-up · {} {} · {} CPUs{} · SQLite {}{}\n",
        result.config.runs,
        result.config.warmup,
        env.os,
        env.arch,
        env.cpu_count.map_or("?".to_owned(), |n| n.to_string()),
        env.cpu_model
            .as_deref()
            .map_or(String::new(), |m| format!(" ({m})")),
        env.sqlite_version,
        env.commit
            .as_deref()
            .map_or(String::new(), |c| format!(" · commit {c}")),
    );

    if let Some(ua) = &env.user_agent {
        let _ = writeln!(
            out,
            "{} {} · timer step {} µs · crossOriginIsolated {} · origin storage {} of {} MB · {ua}\n",
            env.browser.as_deref().unwrap_or("browser"),
            env.browser_version.as_deref().unwrap_or("?"),
            env.timer_resolution_us
                .map_or("?".to_owned(), |us| format!("{us:.1}")),
            env.cross_origin_isolated
                .map_or("?".to_owned(), |b| b.to_string()),
            mb(env.storage_usage_bytes),
            mb(env.storage_quota_bytes),
        );
    }

    out.push_str("Milliseconds, median (min–max).\n\n");
    header(&mut out, "Case", &backends);
    let titles = &result.suite.cases;
    for (i, info) in titles.iter().enumerate() {
        let cells = summaries
            .iter()
            .map(|s| fmt_stat(s.cases_ms.get(i).and_then(|c| c.ms)));
        row(&mut out, &format!("{}. {}", info.number, info.title), cells);
    }
    row(
        &mut out,
        "**Total (16 cases)**",
        summaries
            .iter()
            .map(|s| format!("**{}**", fmt_stat(s.total_ms))),
    );
    row(
        &mut out,
        "Tests 2–16",
        summaries.iter().map(|s| fmt_stat(s.tests_2_to_16_ms)),
    );
    if let Some(r) = reference {
        row(
            &mut out,
            &format!("Total ÷ {reference_name}"),
            summaries.iter().map(|s| ratio(s.total_ms, r.total_ms)),
        );
        row(
            &mut out,
            &format!("Tests 2–16 ÷ {reference_name}"),
            summaries
                .iter()
                .map(|s| ratio(s.tests_2_to_16_ms, r.tests_2_to_16_ms)),
        );
    }
    row(
        &mut out,
        &format!(
            "**{}-row batch**",
            crate::sql::thousands(result.suite.batch_rows)
        ),
        summaries
            .iter()
            .map(|s| format!("**{}**", fmt_stat(s.batch_ms))),
    );
    if let Some(r) = reference {
        row(
            &mut out,
            &format!("Batch ÷ {reference_name}"),
            summaries.iter().map(|s| ratio(s.batch_ms, r.batch_ms)),
        );
    }

    out.push_str("\nLifecycle phases, milliseconds (n/a: not persistent).\n\n");
    header(&mut out, "Phase", &backends);
    let phase_rows: [(&str, PhasePick); 6] = [
        ("preparation", |p| p.prepare_ms),
        ("initialization", |p| p.init_ms),
        ("explicit sync", |p| p.sync_ms),
        ("close", |p| p.close_ms),
        ("reopen", |p| p.reopen_ms),
        ("verification", |p| p.verify_ms),
    ];
    for (workload, pick) in [
        (
            "suite",
            (|s| &s.suite_phases) as fn(&BackendSummary) -> &PhaseStats,
        ),
        ("batch", |s| &s.batch_phases),
    ] {
        for (label, phase) in phase_rows {
            row(
                &mut out,
                &format!("{workload}: {label}"),
                summaries.iter().map(|s| fmt_stat(phase(pick(s)))),
            );
        }
    }

    let counted: Vec<&BackendResult> = backends
        .iter()
        .copied()
        .filter(|b| b.median_counters(1).is_some())
        .collect();
    if !counted.is_empty() {
        out.push_str(
            "\nPhysical calls per case (median over runs): flushes / writes / KiB written / \
             reads.\n\n",
        );
        header(&mut out, "Case", &counted);
        for info in titles {
            let cells = counted.iter().map(|b| {
                b.median_counters(info.number)
                    .map_or("n/a".to_owned(), fmt_counters)
            });
            row(&mut out, &format!("{}. {}", info.number, info.title), cells);
        }
        row(
            &mut out,
            "batch",
            counted.iter().map(|b| {
                b.median_batch_counters()
                    .map_or("n/a".to_owned(), fmt_counters)
            }),
        );
    }
    out
}

fn fmt_counters(c: crate::result::PhysicalCounters) -> String {
    format!(
        "{} / {} / {:.0} / {}",
        c.flushes,
        c.writes,
        c.bytes_written as f64 / 1024.0,
        c.reads
    )
}

fn mb(bytes: Option<u64>) -> String {
    bytes.map_or("?".to_owned(), |b| format!("{:.1}", b as f64 / 1e6))
}

fn short(hash: &str) -> &str {
    hash.get(..16).unwrap_or(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(fmt_ms(0.0), "0.00");
        assert_eq!(fmt_ms(0.001), "<0.01");
        assert_eq!(fmt_ms(1234.567), "1234.57");
        assert_eq!(fmt_stat(None), "n/a");
        assert_eq!(fmt_stat(Stat::of(&[2.0, 1.0, 3.0])), "2.00 (1.00–3.00)");
        assert_eq!(fmt_stat(Stat::of(&[2.0])), "2.00");
        assert_eq!(ratio(Stat::of(&[3.0]), Stat::of(&[2.0])), "1.50".to_owned());
    }
}
