//! CPU per autocommit INSERT, for instruction counts: `N` INSERTs of test 1's shape, each its
//! own transaction, through one backend, natively. Run it under callgrind twice, with 0 and
//! with N INSERTs, and divide the difference by N (callgrind counts instructions, which do not
//! depend on what else the machine is doing):
//!
//! ```text
//! export LIBSQLITE3_FLAGS="SQLITE_ENABLE_BATCH_ATOMIC_WRITE SQLITE_DEFAULT_PAGE_SIZE=8192 \
//!     SQLITE_DEFAULT_CACHE_SIZE=-16384 SQLITE_TEMP_STORE=2"
//! CARGO_TARGET_DIR=target/wasmlike cargo build --release -p bench-sql --example insert_cpu
//! for n in 0 2000; do
//!     valgrind --tool=callgrind --callgrind-out-file=cg-$n.out \
//!         target/wasmlike/release/examples/insert_cpu memory-balanced $n
//! done
//! ```
//!
//! The flags build the bundled SQLite as sqlite-wasm-rs builds it for the browser (8 KiB pages,
//! a 16 MiB cache, temp files in memory), in a target dir of their own; the repository's
//! `.cargo/config.toml` gives only the first. Backends: `memvfs` (the browser's memory
//! reference) or `{memory,disk}-{strict,relaxed,balanced}` (ours on the std-file backend, in a
//! temporary directory under `$TMPDIR`). Figures: `vfs/DESIGN.md`, "What limits each goal".

// Native only (the SQL backends it drives are): `wasm-pack test` and the wasm32 clippy gate
// build examples too, and there this is empty.
#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    native::main();
}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use bench_sql::backend::SqlBackend;
    use bench_sql::native::{MemvfsBackend, OursBackend};

    pub fn main() {
        let mut args = std::env::args().skip(1);
        let (Some(which), Some(n)) = (args.next(), args.next().and_then(|n| n.parse::<u64>().ok()))
        else {
            eprintln!("usage: insert_cpu memvfs|{{memory,disk}}-{{strict,relaxed,balanced}} N");
            std::process::exit(2);
        };
        let result = if which == "memvfs" {
            bench_sql::block_on(run(MemvfsBackend::default(), n))
        } else {
            // Our six configurations, by the names the suites give them (`ours-memory-balanced`, ...).
            let Some(ours) = OursBackend::all(&std::env::temp_dir())
                .into_iter()
                .find(|b| b.name() == format!("ours-{which}"))
            else {
                eprintln!("insert_cpu: unknown backend {which}");
                std::process::exit(2);
            };
            bench_sql::block_on(run(ours, n))
        };
        if let Err(e) = result {
            eprintln!("insert_cpu: {e}");
            std::process::exit(1);
        }
    }

    async fn run(mut backend: impl SqlBackend, n: u64) -> Result<(), Box<dyn std::error::Error>> {
        backend.prepare().await?;
        let conn = backend.open().await?;
        conn.execute_batch("CREATE TABLE t1(a INTEGER, b INTEGER, c VARCHAR(100));")?;
        for i in 0..n {
            let b = i.wrapping_mul(7919) % 100_000;
            conn.execute_batch(&format!(
                "INSERT INTO t1 VALUES({i},{b},'one hundred twenty three thousand four hundred');"
            ))?;
        }
        backend.close(conn).await?;
        backend.cleanup().await?;
        Ok(())
    }
}
