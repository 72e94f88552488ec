//! Markdown tables from an [`FsResult`]: per lifecycle phase the median and min–max per
//! backend, the physical calls per phase of our volume, and the raw per-call figures.

use std::fmt::Write as _;

use bench_sql::report::fmt_stat;

use crate::result::{
    FsResult, LifecycleBackend, LifecycleSummary, Phase, PhysicalCounters, SeriesSummary, Stat,
};

fn header(out: &mut String, first: &str, columns: &[&str]) {
    let _ = write!(out, "| {first} |");
    for c in columns {
        let _ = write!(out, " {c} |");
    }
    out.push_str("\n|---|");
    for _ in columns {
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

fn fmt_counters(c: PhysicalCounters) -> String {
    format!(
        "{} / {} / {:.0} / {}",
        c.flushes,
        c.writes,
        c.bytes_written as f64 / 1024.0,
        c.reads
    )
}

/// Microseconds with a precision that suits the size.
pub fn fmt_us(us: f64) -> String {
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

fn median_us(s: Option<Stat>) -> String {
    s.map_or("n/a".to_owned(), |s| fmt_us(s.median))
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The whole report: context, lifecycle phases, counters, raw workloads.
pub fn markdown(result: &FsResult) -> String {
    let mut out = String::new();
    let env = &result.environment;
    let mut context = vec![format!(
        "{} runs after {} warm-up",
        result.config.runs, result.config.warmup
    )];
    if let Some(b) = &env.browser {
        context.push(b.clone());
    }
    if let (Some(os), Some(arch)) = (&env.os, &env.arch) {
        context.push(format!("{os} {arch}"));
    } else if let Some(os) = &env.os {
        context.push(os.clone());
    }
    if let Some(n) = env.cpu_count {
        context.push(format!("{n} CPUs"));
    }
    if let Some(m) = &env.cpu_model {
        context.push(m.clone());
    }
    if let Some(r) = env.timer_resolution_us {
        context.push(format!("timer step {} µs", fmt_us(r)));
    }
    if let Some(i) = env.cross_origin_isolated {
        context.push(format!("crossOriginIsolated {i}"));
    }
    if let Some(c) = &env.commit {
        context.push(format!("commit {c}"));
    }
    let _ = writeln!(out, "{}\n", context.join(" · "));

    if let Some(l) = &result.lifecycle {
        lifecycle(&mut out, l);
    }
    if let Some(r) = &result.raw {
        let summary = r.summary.clone().unwrap_or_else(|| r.summarize());
        raw(&mut out, &summary);
    }
    out
}

fn lifecycle(out: &mut String, l: &crate::result::LifecycleSuite) {
    let summaries: Vec<LifecycleSummary> = l
        .backends
        .iter()
        .map(|b| b.summary.clone().unwrap_or_else(|| b.summarize()))
        .collect();
    let names: Vec<&str> = l.backends.iter().map(|b| b.name.as_str()).collect();
    let _ = writeln!(
        out,
        "Filesystem lifecycle, {} files × {} B. Milliseconds, median (min–max). Read includes \
         byte verification; delete removes half the files; reopen = unmount + mount; verify = \
         list and read back the survivors.\n",
        thousands(u64::from(l.files)),
        thousands(u64::from(l.file_size_bytes))
    );
    header(out, "Phase", &names);
    for (i, phase) in Phase::ALL.iter().enumerate() {
        row(
            out,
            phase.as_str(),
            summaries
                .iter()
                .map(|s| fmt_stat(s.phases.get(i).and_then(|p| p.ms))),
        );
    }
    row(
        out,
        "**total**",
        summaries
            .iter()
            .map(|s| format!("**{}**", fmt_stat(s.total_ms))),
    );
    out.push('\n');
    for b in &l.backends {
        let _ = writeln!(
            out,
            "- `{}`: {}{}; {}",
            b.name,
            b.storage,
            b.rename_method
                .as_deref()
                .map_or(String::new(), |m| format!(", rename by {m}")),
            b.durability
        );
    }

    let counted: Vec<(&LifecycleBackend, &LifecycleSummary)> = l
        .backends
        .iter()
        .zip(&summaries)
        .filter(|(_, s)| s.phases.iter().any(|p| p.counters.is_some()))
        .collect();
    if !counted.is_empty() {
        out.push_str(
            "\nPhysical calls per phase, our volume (median over runs): flushes / writes / KiB \
             written / reads.\n\n",
        );
        let names: Vec<&str> = counted.iter().map(|(b, _)| b.name.as_str()).collect();
        header(out, "Phase", &names);
        for (i, phase) in Phase::ALL.iter().enumerate() {
            row(
                out,
                phase.as_str(),
                counted.iter().map(|(_, s)| {
                    s.phases
                        .get(i)
                        .and_then(|p| p.counters)
                        .map_or("n/a".to_owned(), fmt_counters)
                }),
            );
        }
    }
    out.push('\n');
}

fn raw(out: &mut String, series: &[SeriesSummary]) {
    out.push_str(
        "Raw OPFS calls on one sync access handle. Per-call µs: median over runs of each run's \
         mean / p50 / p90 / p99 / max / first call; total ms median (min–max).\n\n",
    );
    out.push_str(
        "| Workload | Calls | Bytes/call | Total ms | mean µs | p50 µs | p90 µs | p99 µs | \
         max µs | 1st call µs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in series {
        let total_ms = s.total_us.map(|t| Stat {
            median: t.median / 1e3,
            min: t.min / 1e3,
            max: t.max / 1e3,
            n: t.n,
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            s.name,
            thousands(u64::from(s.calls)),
            if s.bytes_per_call == 0 {
                "–".to_owned()
            } else {
                thousands(u64::from(s.bytes_per_call))
            },
            fmt_stat(total_ms),
            median_us(s.mean_us),
            median_us(s.p50_us),
            median_us(s.p90_us),
            median_us(s.p99_us),
            median_us(s.max_us),
            median_us(s.first_us),
        );
    }
    out.push('\n');
    derived(out, series);
}

/// The seed page's derived figures, from the medians: what growing a file, small calls,
/// flushes and new files cost.
fn derived(out: &mut String, series: &[SeriesSummary]) {
    let find = |name: &str| series.iter().find(|s| s.name == name);
    let med = |s: Option<&SeriesSummary>, f: fn(&SeriesSummary) -> Option<Stat>| {
        s.and_then(f).map(|st| st.median)
    };
    let append = find("small-append");
    let mut lines = Vec::new();
    if let (Some(a), Some(o)) = (
        med(append, |s| s.mean_us),
        med(find("small-overwrite"), |s| s.mean_us),
    ) {
        lines.push(format!(
            "growing the file costs {} µs per 4 KiB call (append {} − overwrite {} µs, means)",
            fmt_us(a - o),
            fmt_us(a),
            fmt_us(o)
        ));
    }
    for s in series
        .iter()
        .filter(|s| s.name.starts_with("chunked-append"))
    {
        if let (Some(small), Some(chunked)) =
            (med(append, |s| s.total_us), med(Some(s), |s| s.total_us))
        {
            if chunked > 0.0 {
                lines.push(format!(
                    "the same bytes in {} calls: {:.1}× cheaper than in 4 KiB calls",
                    s.name
                        .trim_start_matches("chunked-append (")
                        .trim_end_matches(')'),
                    small / chunked
                ));
            }
        }
    }
    if let Some(f) = med(find("append+flush: flush"), |s| s.mean_us) {
        lines.push(format!(
            "flush() after a 4 KiB append: {} µs (mean)",
            fmt_us(f)
        ));
    }
    if let Some(c) = med(find("new-file: full cycle"), |s| s.mean_us) {
        lines.push(format!(
            "a new file (create+open, write, close, delete) costs {:.2} ms",
            c / 1e3
        ));
    }
    if !lines.is_empty() {
        out.push_str("Derived (medians): ");
        out.push_str(&lines.join("; "));
        out.push_str(".\n\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(81_920_000), "81,920,000");
        assert_eq!(fmt_us(6.64), "6.6");
        assert_eq!(fmt_us(5454.2), "5454");
    }

    #[test]
    fn stored_browser_result_renders() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/results/browser-chromium-2026-11-30.json"
        );
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        let result = FsResult::from_json(&text).unwrap();
        let md = markdown(&result);
        assert!(md.contains("| new-file: full cycle |"), "{md}");
        assert!(md.contains("Derived (medians): growing the file"), "{md}");
        assert!(md.contains("× cheaper"), "{md}");
    }
}
