//! The 16-case SQL suite, generated deterministically from a seed.
//!
//! The cases are SQLite's speed-comparison tests in the shape frozen in wa-sqlite's
//! `demo/benchmarks/benchmark1..16.sql` (which PGlite's benchmark duplicates byte for byte):
//! tables `t1`, `t2`, `t3` of `(a INTEGER, b INTEGER, c VARCHAR(100))`, `i3` on `t3(c)`, every
//! random `b` drawn from `[0, 100000)`, and `c` the English name of `b` with hyphenated tens
//! ("nineteen thousand one hundred forty-seven"). Test 7 runs inside `BEGIN … COMMIT` as in those
//! files. Differences from SQLite's own `speed.html` (t2/t3 values from `[0, 500000)`, names
//! without hyphens, test 7 without a transaction) are inherited from them.
//!
//! Those files hold one fixed draw of `Math.random()`; we cannot reproduce their numbers, so the
//! numbers come from [`SplitMix64`] seeded with [`Suite::seed`], and every result records the seed
//! and [`Suite::sha256`] of the generated SQL. Same seed, same SQL, same hash, on every platform.
//!
//! One random stream serves the whole suite, consumed in case order (tests 1, 2, 3, 9, 10, 15
//! draw numbers; the others draw none).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The seed used unless a run says otherwise: 20230411, the date the pinned files were frozen.
pub const DEFAULT_SEED: u64 = 20_230_411;

/// Random `b` values are drawn from `[0, B_RANGE)`.
pub const B_RANGE: u64 = 100_000;

/// Row and statement counts of the full-size suite. [`Suite::generate_scaled`] divides them.
pub mod counts {
    /// Test 1: autocommit INSERTs into t1.
    pub const T1_INSERTS: u32 = 1_000;
    /// Test 2: INSERTs into t2 in one transaction.
    pub const T2_INSERTS: u32 = 25_000;
    /// Test 3: INSERTs into the indexed t3 in one transaction.
    pub const T3_INSERTS: u32 = 25_000;
    /// Test 4: range SELECTs without an index.
    pub const SELECTS_NO_INDEX: u32 = 100;
    /// Test 5: LIKE SELECTs on number names.
    pub const SELECTS_LIKE: u32 = 100;
    /// Test 7: range SELECTs with an index.
    pub const SELECTS_INDEXED: u32 = 5_000;
    /// Test 8: range UPDATEs of t1 without an index.
    pub const UPDATES_NO_INDEX: u32 = 1_000;
    /// Test 9: integer UPDATEs of t2 by indexed `a`.
    pub const UPDATES_INDEXED: u32 = 25_000;
    /// Test 10: text UPDATEs of t2 by indexed `a`.
    pub const TEXT_UPDATES: u32 = 25_000;
    /// Test 15: INSERTs into t1 after deleting it, in one transaction.
    pub const REFILL_INSERTS: u32 = 12_000;
}

/// Separates cases in the bytes hashed by [`Suite::sha256`]; it cannot occur in SQL text.
const HASH_SEPARATOR: u8 = 0;

/// SplitMix64 (Steele, Lea, Flood 2014; the seeding generator of Java's `SplittableRandom`):
/// small, fast, portable and fully specified, which is all a benchmark generator needs. The
/// engine's crash simulator uses the same generator; the pinned SHA-256 test below proves the
/// generated SQL does not depend on which copy it is.
pub use opfs_vfs::testing::SplitMix64;

/// A random `b` value, in `[0, B_RANGE)`.
fn random_b(rng: &mut SplitMix64) -> u32 {
    // below(B_RANGE) < 100,000 fits in a u32.
    u32::try_from(rng.below(B_RANGE)).unwrap_or(0)
}

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = [
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
];

/// The English name of `n` as the pinned files spell it: groups of thousands, "hundred" words,
/// tens hyphenated with units, no "and": `19147` → "nineteen thousand one hundred forty-seven",
/// `0` → "zero". Defined for every `u32` (the suite uses `n < 100,000`).
pub fn number_name(n: u32) -> String {
    let mut out = String::new();
    push_number_name(&mut out, n);
    out
}

/// Appends [`number_name`]`(n)` to `out` (no allocation of its own: the generator calls this
/// 138,000 times).
pub fn push_number_name(out: &mut String, n: u32) {
    if n == 0 {
        out.push_str(ONES[0]);
        return;
    }
    let mut first = true;
    let mut word = |out: &mut String, w: &str| {
        if !first {
            out.push(' ');
        }
        first = false;
        out.push_str(w);
    };
    let mut rest = n;
    for (scale, name) in [
        (1_000_000_000, "billion"),
        (1_000_000, "million"),
        (1_000, "thousand"),
        (1, ""),
    ] {
        let group = rest / scale;
        rest %= scale;
        if group == 0 {
            continue;
        }
        // 1 ≤ group < 1000 (the top group of a u32 is at most 4).
        let (hundreds, tens, ones) = (group / 100, group % 100 / 10, group % 10);
        if hundreds > 0 {
            word(out, ONES[hundreds as usize]);
            word(out, "hundred");
        }
        match (tens, ones) {
            (0, 0) => {}
            (0 | 1, _) => word(out, ONES[(tens * 10 + ones) as usize]),
            (_, 0) => word(out, TENS[tens as usize]),
            _ => {
                word(out, TENS[tens as usize]);
                out.push('-');
                out.push_str(ONES[ones as usize]);
            }
        }
        if !name.is_empty() {
            word(out, name);
        }
    }
}

/// One case of the suite: its number (1–16), the title used in reports, and its SQL, executed
/// as one script (every statement stepped to completion, as `sqlite3_exec` does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// 1 to 16.
    pub number: u32,
    /// The usual title ("25,000 INSERTs in a transaction"), with the counts actually generated.
    pub title: String,
    /// The script.
    pub sql: String,
}

/// The 16 cases generated from one seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    /// The PRNG seed the numbers came from.
    pub seed: u64,
    /// Every count was divided by this (1: the full-size suite that results report).
    pub scale_divisor: u32,
    /// The cases, in execution order. Each depends on the state the previous ones left.
    pub cases: Vec<Case>,
}

impl Suite {
    /// The full-size suite.
    pub fn generate(seed: u64) -> Self {
        Self::generate_scaled(seed, 1)
    }

    /// The suite with every row and statement count divided by `divisor` (at least 1 each), for
    /// smoke tests. Fixed bounds (test 13's `a<20000`, the ranges of tests 4 and 7) stay. A
    /// divisor of 0 is treated as 1.
    pub fn generate_scaled(seed: u64, divisor: u32) -> Self {
        let divisor = divisor.max(1);
        let n = |full: u32| (full / divisor).max(1);
        let mut rng = SplitMix64::new(seed);
        let mut cases = Vec::with_capacity(16);
        let mut case = |number: u32, title: String, sql: String| {
            cases.push(Case { number, title, sql });
        };

        // 1: autocommit INSERTs: each one its own transaction, so this measures commit cost.
        let k = n(counts::T1_INSERTS);
        let mut sql = String::from("CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR(100));\n");
        push_inserts(&mut sql, "t1", k, &mut rng);
        case(1, format!("{} INSERTs", thousands(k)), sql);

        // 2: INSERTs in one transaction.
        let k = n(counts::T2_INSERTS);
        let mut sql =
            String::from("BEGIN;\nCREATE TABLE t2(a INTEGER, b INTEGER, c VARCHAR(100));\n");
        push_inserts(&mut sql, "t2", k, &mut rng);
        sql.push_str("COMMIT;\n");
        case(2, format!("{} INSERTs in a transaction", thousands(k)), sql);

        // 3: INSERTs into a table indexed on the text column.
        let k = n(counts::T3_INSERTS);
        let mut sql = String::from(
            "BEGIN;\nCREATE TABLE t3(a INTEGER, b INTEGER, c VARCHAR(100));\n\
             CREATE INDEX i3 ON t3(c);\n",
        );
        push_inserts(&mut sql, "t3", k, &mut rng);
        sql.push_str("COMMIT;\n");
        case(
            3,
            format!("{} INSERTs into an indexed table", thousands(k)),
            sql,
        );

        // 4: range scans without an index.
        let k = n(counts::SELECTS_NO_INDEX);
        let mut sql = String::from("BEGIN;\n");
        for i in 0..k {
            let lo = i * 100;
            let _ = writeln!(
                sql,
                "SELECT count(*), avg(b) FROM t2 WHERE b>={lo} AND b<{};",
                lo + 1000
            );
        }
        sql.push_str("COMMIT;\n");
        case(4, format!("{} SELECTs without an index", thousands(k)), sql);

        // 5: LIKE on the names of 1, 2, 3, …
        let k = n(counts::SELECTS_LIKE);
        let mut sql = String::from("BEGIN;\n");
        for i in 1..=k {
            let _ = writeln!(
                sql,
                "SELECT count(*), avg(b) FROM t2 WHERE c LIKE '%{}%';",
                number_name(i)
            );
        }
        sql.push_str("COMMIT;\n");
        case(
            5,
            format!("{} SELECTs with string comparisons", thousands(k)),
            sql,
        );

        // 6
        case(
            6,
            "Create indexes".to_owned(),
            "CREATE INDEX i2a ON t2(a);\nCREATE INDEX i2b ON t2(b);\n".to_owned(),
        );

        // 7: range lookups through i2b.
        let k = n(counts::SELECTS_INDEXED);
        let mut sql = String::from("BEGIN;\n");
        for i in 0..k {
            let lo = i * 100;
            let _ = writeln!(
                sql,
                "SELECT count(*), avg(b) FROM t2 WHERE b>={lo} AND b<{};",
                lo + 100
            );
        }
        sql.push_str("COMMIT;\n");
        case(7, format!("{} SELECTs with an index", thousands(k)), sql);

        // 8: range UPDATEs of t1, which has no index.
        let k = n(counts::UPDATES_NO_INDEX);
        let mut sql = String::from("BEGIN;\n");
        for i in 0..k {
            let lo = i * 10;
            let _ = writeln!(sql, "UPDATE t1 SET b=b*2 WHERE a>={lo} AND a<{};", lo + 10);
        }
        sql.push_str("COMMIT;\n");
        case(8, format!("{} UPDATEs without an index", thousands(k)), sql);

        // 9: integer UPDATEs through i2a.
        let k = n(counts::UPDATES_INDEXED);
        let mut sql = String::from("BEGIN;\n");
        for i in 1..=k {
            let _ = writeln!(sql, "UPDATE t2 SET b={} WHERE a={i};", random_b(&mut rng));
        }
        sql.push_str("COMMIT;\n");
        case(9, format!("{} UPDATEs with an index", thousands(k)), sql);

        // 10: text UPDATEs through i2a.
        let k = n(counts::TEXT_UPDATES);
        let mut sql = String::from("BEGIN;\n");
        for i in 1..=k {
            sql.push_str("UPDATE t2 SET c='");
            push_number_name(&mut sql, random_b(&mut rng));
            let _ = writeln!(sql, "' WHERE a={i};");
        }
        sql.push_str("COMMIT;\n");
        case(
            10,
            format!("{} text UPDATEs with an index", thousands(k)),
            sql,
        );

        // 11: t1 grows by t2's rows, then t2 by the new t1's.
        case(
            11,
            "INSERTs from a SELECT".to_owned(),
            "BEGIN;\nINSERT INTO t1 SELECT b,a,c FROM t2;\nINSERT INTO t2 SELECT b,a,c FROM t1;\n\
             COMMIT;\n"
                .to_owned(),
        );

        // 12
        case(
            12,
            "DELETE without an index".to_owned(),
            "DELETE FROM t2 WHERE c LIKE '%fifty%';\n".to_owned(),
        );

        // 13
        case(
            13,
            "DELETE with an index".to_owned(),
            "DELETE FROM t2 WHERE a>10 AND a<20000;\n".to_owned(),
        );

        // 14
        case(
            14,
            "A big INSERT after a big DELETE".to_owned(),
            "INSERT INTO t2 SELECT * FROM t1;\n".to_owned(),
        );

        // 15
        let k = n(counts::REFILL_INSERTS);
        let mut sql = String::from("BEGIN;\nDELETE FROM t1;\n");
        push_inserts(&mut sql, "t1", k, &mut rng);
        sql.push_str("COMMIT;\n");
        case(
            15,
            format!("A big DELETE followed by {} INSERTs", thousands(k)),
            sql,
        );

        // 16
        case(
            16,
            "DROP tables".to_owned(),
            "DROP TABLE t1;\nDROP TABLE t2;\nDROP TABLE t3;\n".to_owned(),
        );

        Self {
            seed,
            scale_divisor: divisor,
            cases,
        }
    }

    /// Lower-case hex SHA-256 of every case's SQL in order, each followed by one NUL byte.
    /// Titles and numbers are not hashed: the hash identifies what SQLite executes.
    pub fn sha256(&self) -> String {
        let mut hasher = Sha256::new();
        for case in &self.cases {
            hasher.update(case.sql.as_bytes());
            hasher.update([HASH_SEPARATOR]);
        }
        hex(&hasher.finalize())
    }
}

/// `INSERT INTO {table} VALUES(i, b, 'name of b');` for `i` in `1..=count`.
fn push_inserts(sql: &mut String, table: &str, count: u32, rng: &mut SplitMix64) {
    for i in 1..=count {
        let b = random_b(rng);
        let _ = write!(sql, "INSERT INTO {table} VALUES({i}, {b}, '");
        push_number_name(sql, b);
        sql.push_str("');\n");
    }
}

/// `25000` → `"25,000"`.
pub fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Suite::generate(DEFAULT_SEED).sha256()`.
    const PINNED_SHA256: &str = "eeed25684871fa0c11e9b6f2cea30d02e4bebb58a8c582e477445208faa894ad";

    #[test]
    fn number_names() {
        let cases = [
            (0, "zero"),
            (7, "seven"),
            (19, "nineteen"),
            (20, "twenty"),
            (21, "twenty-one"),
            (99, "ninety-nine"),
            (100, "one hundred"),
            (1000, "one thousand"),
            (19147, "nineteen thousand one hundred forty-seven"),
            (99999, "ninety-nine thousand nine hundred ninety-nine"),
            (50_050, "fifty thousand fifty"),
            (110_000, "one hundred ten thousand"),
            (
                u32::MAX,
                "four billion two hundred ninety-four million nine hundred sixty-seven \
                        thousand two hundred ninety-five",
            ),
            (1_000_001, "one million one"),
        ];
        for (n, name) in cases {
            assert_eq!(number_name(n), name, "{n}");
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(100), "100");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(25000), "25,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn splitmix_reference_values() {
        // First outputs for seed 0 from the reference implementation (Vigna's splitmix64.c).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_stays_in_range() {
        let mut r = SplitMix64::new(DEFAULT_SEED);
        for _ in 0..10_000 {
            assert!(r.below(B_RANGE) < B_RANGE);
        }
    }

    #[test]
    fn deterministic() {
        let a = Suite::generate(DEFAULT_SEED);
        assert_eq!(a, Suite::generate(DEFAULT_SEED));
        // Pinned: a change here changes what every result measured. Bump SCHEMA_VERSION and say
        // why in methodology.md if it is intended.
        assert_eq!(a.sha256(), PINNED_SHA256);

        let small = |seed| Suite::generate_scaled(seed, 20);
        assert_eq!(small(5).sha256(), small(5).sha256());
        assert_ne!(small(5).sha256(), small(6).sha256());
        assert_ne!(small(5).sha256(), Suite::generate_scaled(5, 21).sha256());
        // Cases without random numbers are identical across seeds.
        assert_eq!(small(5).cases[3].sql, small(6).cases[3].sql);
        assert_ne!(small(5).cases[0].sql, small(6).cases[0].sql);
    }

    #[test]
    fn shapes_of_full_suite() {
        let s = Suite::generate(DEFAULT_SEED);
        assert_eq!(s.cases.len(), 16);
        let numbers: Vec<u32> = s.cases.iter().map(|c| c.number).collect();
        assert_eq!(numbers, (1..=16).collect::<Vec<_>>());
        let count = |n: usize, needle: &str| s.cases[n - 1].sql.matches(needle).count();
        assert_eq!(count(1, "INSERT INTO t1 VALUES("), 1_000);
        assert_eq!(count(1, "BEGIN"), 0, "test 1 is autocommit");
        assert_eq!(count(2, "INSERT INTO t2 VALUES("), 25_000);
        assert_eq!(count(3, "INSERT INTO t3 VALUES("), 25_000);
        assert_eq!(count(4, "SELECT"), 100);
        assert_eq!(count(5, "LIKE"), 100);
        assert_eq!(count(7, "SELECT"), 5_000);
        assert_eq!(count(7, "BEGIN;"), 1);
        assert_eq!(count(8, "UPDATE"), 1_000);
        assert_eq!(count(9, "UPDATE"), 25_000);
        assert_eq!(count(10, "UPDATE"), 25_000);
        assert_eq!(count(15, "INSERT"), 12_000);
        assert!(s.cases[0]
            .sql
            .starts_with("CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR(100));\n"));
        assert!(s.cases[3]
            .sql
            .contains("SELECT count(*), avg(b) FROM t2 WHERE b>=9900 AND b<10900;\n"));
        assert!(s.cases[4]
            .sql
            .contains("SELECT count(*), avg(b) FROM t2 WHERE c LIKE '%one hundred%';\n"));
        assert!(s.cases[6]
            .sql
            .contains("SELECT count(*), avg(b) FROM t2 WHERE b>=499900 AND b<500000;\n"));
        assert!(s.cases[7]
            .sql
            .contains("UPDATE t1 SET b=b*2 WHERE a>=9990 AND a<10000;\n"));
        assert_eq!(s.cases[0].title, "1,000 INSERTs");
    }

    /// Runs `suite` on `:memory:` and checks the row counts each case leaves.
    fn check_row_counts(suite: &Suite, t1: i64, t2: i64, t3: i64, refill: i64) {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let q = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
        let count = |t: &str| q(&format!("SELECT count(*) FROM {t}"));
        let run = |n: usize| {
            crate::execute_script(&conn, &suite.cases[n - 1].sql)
                .unwrap_or_else(|e| panic!("case {n}: {e}"));
        };
        run(1);
        assert_eq!(count("t1"), t1);
        run(2);
        assert_eq!(count("t2"), t2);
        run(3);
        assert_eq!(count("t3"), t3);
        assert_eq!(q("SELECT count(*) FROM sqlite_schema WHERE name='i3'"), 1);
        for n in 4..=10 {
            run(n);
        }
        assert_eq!((count("t1"), count("t2"), count("t3")), (t1, t2, t3));
        assert_eq!(
            q("SELECT count(*) FROM sqlite_schema WHERE type='index'"),
            3
        );
        // 8 doubled every b of t1 (all a in [1, t1] are covered by the ranges).
        run(11);
        let (t1, t2) = (t1 + t2, t2 + t1 + t2);
        assert_eq!((count("t1"), count("t2")), (t1, t2));
        let fifty = q("SELECT count(*) FROM t2 WHERE c LIKE '%fifty%'");
        run(12);
        assert_eq!(count("t2"), t2 - fifty);
        let middle = q("SELECT count(*) FROM t2 WHERE a>10 AND a<20000");
        run(13);
        let t2 = t2 - fifty - middle;
        assert_eq!(count("t2"), t2);
        run(14);
        assert_eq!(count("t2"), t2 + t1);
        run(15);
        assert_eq!(count("t1"), refill);
        run(16);
        assert_eq!(q("SELECT count(*) FROM sqlite_schema"), 0);
    }

    #[test]
    #[ignore = "about 10 s with SQLite unoptimized (debug); run with --ignored, ideally --release"]
    fn row_counts_full_size() {
        let s = Suite::generate(DEFAULT_SEED);
        check_row_counts(&s, 1_000, 25_000, 25_000, 12_000);
    }

    #[test]
    fn row_counts_scaled() {
        let s = Suite::generate_scaled(DEFAULT_SEED, 100);
        check_row_counts(&s, 10, 250, 250, 120);
        assert_eq!(s.cases[1].title, "250 INSERTs in a transaction");
    }

    /// The values in every INSERT are a random `b` in range and its name.
    #[test]
    fn inserted_values_are_consistent() {
        let s = Suite::generate_scaled(DEFAULT_SEED, 10);
        for line in s.cases[1].sql.lines().filter(|l| l.starts_with("INSERT")) {
            let inner = &line["INSERT INTO t2 VALUES(".len()..line.len() - 2];
            let mut parts = inner.splitn(3, ", ");
            let _a = parts.next().unwrap();
            let b: u32 = parts.next().unwrap().parse().unwrap();
            let c = parts.next().unwrap();
            assert!(u64::from(b) < B_RANGE);
            assert_eq!(c, format!("'{}'", number_name(b)));
        }
    }
}
