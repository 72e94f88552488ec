//! Small helpers: dates, the source commit, durations, number formatting.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Civil date (UTC) of `t` as `YYYY-MM-DD`.
pub fn utc_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Today's date (UTC), as used in result file names.
pub fn today() -> String {
    utc_date(SystemTime::now())
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    let to_u32 = |v: i64| u32::try_from(v).unwrap_or(0);
    (if m <= 2 { y + 1 } else { y }, to_u32(m), to_u32(d))
}

/// The source commit of the work tree at `root` (12 hex digits, `-dirty` if `git status`
/// shows changes), or `None` outside a git checkout.
pub fn source_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
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

/// Digits of a non-negative integer with thousands separators: `12345` → `"12,345"`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

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
