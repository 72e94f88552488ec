//! Small helpers: dates, the source commit, durations, number formatting.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Civil date (UTC) of `t` as `YYYY-MM-DD`.
pub fn utc_date(t: SystemTime) -> String {
    bench_results::env::civil_date(t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// Today's date (UTC), as used in result file names.
pub fn today() -> String {
    utc_date(SystemTime::now())
}

/// The source commit of the work tree at `root` (12 hex digits, `-dirty` if `git status`
/// shows changes), or `None` outside a git checkout.
pub fn source_commit(root: &Path) -> Option<String> {
    bench_results::env::source_commit(root)
}

/// `83.4 s` → `"1m23s"`; below a minute `"42.0s"`.
pub fn fmt_elapsed(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, (s / 60) % 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

pub use bench_results::thousands;

/// A millisecond value for tables: two decimals with thousands separators (`2,026.98`);
/// positive values below 0.005 print as `<0.01`, non-finite ones as `n/a`.
pub fn fmt_ms(ms: f64) -> String {
    fmt_fixed(ms, 2)
}

/// `v` with `decimals` decimals and thousands separators in the integer part.
pub fn fmt_fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "n/a".to_owned();
    }
    let smallest = 0.5 * 10f64.powi(-i32::try_from(decimals).unwrap_or(0));
    if v > 0.0 && v < smallest {
        return format!("<{:.*}", decimals, 2.0 * smallest);
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let int = int
        .parse::<u64>()
        .map_or_else(|_| int.to_owned(), thousands);
    let sign = if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// Bytes as `"1.5 KiB"`, `"12.0 MiB"`, or plain bytes below 1 KiB.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    #[allow(clippy::cast_precision_loss)] // display only
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        // 2000-02-29 (leap day) and 2026-11-30.
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29"
        );
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(1_796_056_923)),
            "2026-11-30"
        );
        assert_eq!(
            utc_date(UNIX_EPOCH + Duration::from_secs(1_735_689_599)),
            "2024-12-31"
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(fmt_ms(2026.984), "2,026.98");
        assert_eq!(fmt_ms(0.004), "<0.01");
        assert_eq!(fmt_ms(0.0), "0.00");
        assert_eq!(fmt_ms(-1234.5), "-1,234.50");
        assert_eq!(fmt_ms(f64::NAN), "n/a");
        assert_eq!(fmt_fixed(1.049, 1), "1.0");
        assert_eq!(fmt_fixed(12_345.0, 0), "12,345");
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(1536), "1.5 KiB");
        assert_eq!(fmt_bytes(12 << 20), "12.0 MiB");
    }

    #[test]
    fn elapsed() {
        assert_eq!(fmt_elapsed(Duration::from_millis(4200)), "4.2s");
        assert_eq!(fmt_elapsed(Duration::from_secs(83)), "1m23s");
        assert_eq!(fmt_elapsed(Duration::from_secs(3723)), "1h02m03s");
    }
}
