#![cfg(target_arch = "wasm32")]
//! Browser smoke test of both suites, in a dedicated worker: the lifecycle (20 files) on every
//! browser backend once, the baseline once more with each rename method forced where the
//! browser has it, and the raw OPFS workloads with tiny N and M. Checks that every verification
//! passed (no backend has an `error`) and that every figure is finite and sane, then that the
//! summaries `bench_results` computes from them are there. Proves the suites work; the figures
//! are not results.
//!
//! Run: `WASM_BINDGEN_TEST_TIMEOUT=300 wasm-pack test --headless --chrome --firefox
//! --mode no-install bench-fs`.
//!
//! The full-size run (1,000 files × 1 KiB, N = 2,000, M = 200, 1 warm-up + 5 runs) is the
//! `full_run` test, compiled in only when `BENCH_FS_FULL` is set at build time; it prints the
//! JSON with `console_log!` (add `-- --nocapture` to see it):
//! `BENCH_FS_FULL=1 WASM_BINDGEN_TEST_TIMEOUT=3600 wasm-pack test --release --headless
//! --chrome --mode no-install bench-fs -- --nocapture full_run`.

use bench_fs::config::{Config, Level, LifecycleConfig, Mode, RenameMethod};
use bench_fs::result::{CallSeries, FsResult, Phase};
use bench_fs::{browser, Progress, SuiteKind};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// A directory no other test (or earlier run) uses.
fn unique_dir(tag: &str) -> String {
    // A random integer below 1e12: fits a u64.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let r = (js_sys::Math::random() * 1e12) as u64;
    format!("bench-fs-test-{tag}-{r:x}")
}

fn check_lifecycle(result: &FsResult, files: u32, expected_backends: &[&str]) {
    let l = result.lifecycle.as_ref().expect("lifecycle ran");
    assert_eq!(l.files, files);
    let names: Vec<&str> = l.backends.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, expected_backends);
    for b in &l.backends {
        assert!(b.error.is_none(), "{}: {:?}", b.name, b.error);
        assert_eq!(b.runs.len(), 1, "{}", b.name);
        let run = &b.runs[0];
        let phases: Vec<Phase> = run.phases.iter().map(|p| p.phase).collect();
        assert_eq!(phases, Phase::ALL, "{}", b.name);
        for p in &run.phases {
            assert!(
                p.ms.is_finite() && p.ms >= 0.0,
                "{} {}: {}",
                b.name,
                p.phase,
                p.ms
            );
        }
        assert!(run.total_ms.is_finite() && run.total_ms > 0.0, "{}", b.name);
        let ours = b.name.starts_with("ours");
        assert_eq!(b.storage, if ours { "opfs" } else { "opfs-file-per-file" });
        if ours {
            let c = |p: Phase| run.phase(p).unwrap().counters.expect("ours counts");
            let written: u64 = Phase::ALL.iter().map(|&p| c(p).bytes_written).sum();
            assert!(written >= u64::from(files) * 1024, "{}: {written}", b.name);
            assert!(c(Phase::Reopen).reads >= 1, "{}: mount reads", b.name);
            assert_eq!(c(Phase::Read).writes, 0, "{}: reads write nothing", b.name);
            if b.name.ends_with("strict") {
                assert!(
                    c(Phase::Create).flushes >= 1,
                    "{}: strict commit flushes",
                    b.name
                );
            }
        } else {
            assert!(run.phases.iter().all(|p| p.counters.is_none()));
            assert!(
                b.rename_method.is_some(),
                "{}: rename method recorded",
                b.name
            );
        }
    }
    assert_eq!(l.rounds.len(), 1);
    assert_eq!(l.rounds[0].order.len(), expected_backends.len());
}

fn check_series(s: &CallSeries) {
    assert!(s.calls > 0, "{}", s.name);
    assert_eq!(s.samples_us.len(), s.calls as usize, "{}", s.name);
    for v in &s.samples_us {
        assert!(v.is_finite() && *v >= 0.0, "{}: {v}", s.name);
    }
    let st = s.stats;
    for v in [
        st.total_us,
        st.mean_us,
        st.p50_us,
        st.p90_us,
        st.p99_us,
        st.max_us,
        st.first_us,
    ] {
        assert!(v.is_finite() && v >= 0.0, "{}: {st:?}", s.name);
    }
    assert!(st.p50_us <= st.p90_us && st.p90_us <= st.p99_us && st.p99_us <= st.max_us);
}

#[wasm_bindgen_test]
async fn smoke_every_backend_and_raw_workloads() {
    let mut config = Config::smoke();
    config.dir = unique_dir("smoke");
    config.lifecycle = Some(LifecycleConfig {
        files: 20,
        buffer_modes: vec![Mode::Disk, Mode::Memory],
        durabilities: vec![Level::Strict, Level::Relaxed],
        ..LifecycleConfig::default()
    });
    let mut events: Vec<Progress> = Vec::new();
    let result = browser::run_browser(&config, &mut |p| events.push(p))
        .await
        .unwrap_or_else(|e| panic!("run_browser: {e}"));

    check_lifecycle(
        &result,
        20,
        &[
            "ours-disk-strict",
            "ours-disk-relaxed",
            "ours-memory-strict",
            "ours-memory-relaxed",
            "files-opfs",
        ],
    );

    let raw = result.raw.as_ref().expect("raw ran");
    assert_eq!(raw.runs.len(), 1);
    let run = &raw.runs[0];
    let names: Vec<&str> = run.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "small-append",
            "small-overwrite",
            "chunked-append (64 KiB)",
            "chunked-append (64 KiB): flush",
            "chunked-append (1 MiB)",
            "chunked-append (1 MiB): flush",
            "append+flush",
            "append+flush: flush",
            "overwrite+flush",
            "overwrite+flush: flush",
            "commit-sized overwrite+flush",
            "commit-sized overwrite+flush: flush",
            "engine commit (Strict)",
            "engine commit: raw pair",
            "engine commit: outside its calls",
            "engine commit in memory: back to back",
            "engine commit in memory: after a raw pair",
            "bulk append+flush",
            "bulk append+flush: flush",
            "bulk grown+flush",
            "bulk grown+flush: flush",
            "bulk overwrite+flush",
            "bulk overwrite+flush: flush",
            "new-file: create+open",
            "new-file: first write",
            "new-file: close",
            "new-file: delete",
            "new-file: full cycle",
        ]
    );
    for s in &run.series {
        check_series(s);
    }
    let calls = |name: &str| run.series.iter().find(|s| s.name == name).unwrap().calls;
    assert_eq!(calls("small-append"), 64);
    assert_eq!(calls("chunked-append (64 KiB)"), 4); // 64 × 4 KiB = 256 KiB
    assert_eq!(calls("chunked-append (1 MiB)"), 1);
    assert_eq!(calls("chunked-append (1 MiB): flush"), 1);
    assert_eq!(calls("new-file: full cycle"), 4);
    assert_eq!(calls("overwrite+flush"), calls("append+flush"));
    for bulk in [
        "bulk append+flush",
        "bulk grown+flush",
        "bulk overwrite+flush",
    ] {
        assert_eq!(calls(bulk), bench_fs::raw::BULK_PAIRS, "{bulk}");
    }
    assert_eq!(calls("commit-sized overwrite+flush"), calls("append+flush"));
    assert_eq!(calls("engine commit (Strict)"), calls("append+flush"));
    assert_eq!(calls("engine commit: raw pair"), calls("append+flush"));
    // Whole workloads take measurable time even at a coarse timer step.
    let new_file = run
        .series
        .iter()
        .find(|s| s.name == "new-file: full cycle")
        .unwrap();
    assert!(new_file.stats.total_us > 0.0);

    // Progress: every unit reported once, in order.
    assert_eq!(
        events.len(),
        5 + 12,
        "5 lifecycle backends + 12 raw workloads"
    );
    assert_eq!(events.last().unwrap().done, events.last().unwrap().total);
    assert_eq!(events[0].suite, SuiteKind::Lifecycle);
    assert_eq!(events.last().unwrap().suite, SuiteKind::Raw);

    // The summaries the document computes from these samples.
    let mut lifecycle = result.lifecycle.clone().unwrap();
    let mut raw = result.raw.clone().unwrap();
    raw.summarize();
    lifecycle.summarize(Some(&raw), &bench_results::Bootstrap::default());
    assert_eq!(raw.summary.as_ref().unwrap().len(), 28);
    assert!(raw.derived.as_ref().unwrap().new_file_cycle_us.is_some());
    assert!(raw
        .derived
        .as_ref()
        .unwrap()
        .engine_commit_over_pair
        .is_some());
    assert!(raw.derived.as_ref().unwrap().cpu_after_pair.is_some());
    // The engine volume timed its calls: a commit's time outside them is less than its time.
    let mean = |name: &str| raw.mean_us(name).unwrap();
    let outside = mean(bench_results::raw::ENGINE_OUTSIDE_SERIES);
    assert!(
        outside < mean(bench_results::raw::ENGINE_COMMIT_SERIES),
        "outside its calls {outside} µs"
    );
    assert_eq!(lifecycle.floors.len(), 4, "create, write, delete, flush");
    for b in &lifecycle.backends {
        assert!(b.summary.is_some());
        assert_eq!(b.ratios.is_some(), b.name != "files-opfs", "{}", b.name);
    }
    console_log!(
        "bench-fs smoke: {} series, floors {:?}",
        raw.summary.as_ref().unwrap().len(),
        lifecycle.floors
    );
}

/// The baseline with each rename method forced: copy always works; move where the browser has
/// `FileSystemFileHandle.move()`.
#[wasm_bindgen_test]
async fn baseline_rename_methods() {
    for method in [RenameMethod::Copy, RenameMethod::Move] {
        let mut config = Config::smoke();
        config.dir = unique_dir("rename");
        config.raw = None;
        config.lifecycle = Some(LifecycleConfig {
            files: 10,
            buffer_modes: Vec::new(),
            baseline_rename: method,
            ..LifecycleConfig::default()
        });
        let (name, used) = match method {
            RenameMethod::Copy => ("files-opfs-copy", "copy+removeEntry"),
            _ => ("files-opfs-move", "move"),
        };
        match browser::run_browser(&config, &mut |_| {}).await {
            Ok(result) => {
                check_lifecycle(&result, 10, &[name]);
                let b = &result.lifecycle.as_ref().unwrap().backends[0];
                assert_eq!(b.rename_method.as_deref(), Some(used));
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

/// A second `run_browser` in the same directory after the first finished works (everything
/// was closed and removed).
#[wasm_bindgen_test]
async fn runs_leave_nothing_behind() {
    let mut config = Config::smoke();
    config.dir = unique_dir("twice");
    config.raw = None;
    config.lifecycle = Some(LifecycleConfig {
        files: 4,
        buffer_modes: vec![Mode::Memory],
        ..LifecycleConfig::default()
    });
    for _ in 0..2 {
        browser::run_browser(&config, &mut |_| {})
            .await
            .unwrap_or_else(|e| panic!("run_browser: {e}"));
    }
}

/// The full-size browser run, only when built with `BENCH_FS_FULL` set (see the module docs).
#[wasm_bindgen_test]
async fn full_run() {
    if option_env!("BENCH_FS_FULL").is_none() {
        return;
    }
    let mut config = Config {
        dir: unique_dir("full"),
        ..Config::default()
    };
    if let Some(files) = option_env!("BENCH_FS_FILES").and_then(|f| f.parse().ok()) {
        config.lifecycle.as_mut().unwrap().files = files;
    }
    if let Some(runs) = option_env!("BENCH_FS_RUNS").and_then(|f| f.parse().ok()) {
        config.runs = runs;
    }
    let result = browser::run_browser(&config, &mut |p| {
        console_log!(
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
    .await
    .unwrap_or_else(|e| panic!("run_browser: {e}"));
    let mut doc = bench_results::Document::new(
        String::new(),
        bench_results::RunConfig {
            preset: "bench-fs full_run".to_owned(),
            suites: vec![bench_results::Suite::Fs, bench_results::Suite::Raw],
            runs: config.runs,
            warmup: config.warmup,
            seed: bench_fs::config::DEFAULT_SEED,
            sql_scale: 1,
            files: config.lifecycle.as_ref().map_or(0, |l| l.files),
            file_size_bytes: bench_fs::config::DEFAULT_FILE_SIZE,
            raw_small_calls: bench_fs::config::DEFAULT_SMALL_CALLS,
            raw_cycle_calls: bench_fs::config::DEFAULT_CYCLE_CALLS,
            order_seed: Some(config.order_seed),
            ..bench_results::RunConfig::default()
        },
        bench_results::Environment::default(),
    );
    doc.fs = result.lifecycle;
    doc.raw = result.raw;
    doc.summarize(&bench_results::Bootstrap::default());
    console_log!(
        "BENCH_FS_JSON_BEGIN\n{}\nBENCH_FS_JSON_END",
        doc.to_json().unwrap()
    );
}
