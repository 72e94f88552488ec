#![cfg(target_arch = "wasm32")]
//! The hand-off suite (`bench_sql::handoff`) in a dedicated worker, both browsers: the quick
//! preset's size, then the full preset's hand-offs per round; every statement follows a
//! hand-off, every read sees exactly the committed rows, the summary pairs each workload with
//! the floor of the same rounds, and the figures are logged (`--nocapture` shows them).
//!
//! ```sh
//! WASM_BINDGEN_TEST_TIMEOUT=600 wasm-pack test --headless --chrome --firefox --mode no-install \
//!     bench-sql --test browser_handoff -- --nocapture
//! ```

use bench_results::handoff::{HandoffSection, FLOOR, TWO_WRITERS, WRITER_READER};
use bench_results::{Bootstrap, Verifications};
use bench_sql::browser::random_tag;
use bench_sql::handoff::{run_handoff, HandoffPlan};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

async fn run(handoffs: u32, runs: u32, warmup: u32) -> (HandoffSection, f64) {
    let plan = HandoffPlan {
        handoffs,
        floor_cycles: handoffs,
        runs,
        warmup,
        order_seed: 7,
        root: format!("bench-sql-test/handoff-{}", random_tag()),
    };
    let mut parts = 0;
    let start = web_time::Instant::now();
    let mut s = run_handoff(&plan, &mut |p| {
        if p.ms.is_some() {
            parts += 1;
            assert_eq!(p.done, parts);
        }
        assert_eq!(p.total, 3 * (runs + warmup));
    })
    .await;
    let wall = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(parts, 3 * (runs + warmup), "every part reported its end");
    s.summarize(&Bootstrap::default());
    (s, wall)
}

/// Checks what every run of the suite must satisfy and logs the figures.
fn check(s: &HandoffSection, handoffs: u32, runs: u32, warmup: u32, wall_ms: f64) {
    assert_eq!(s.error, None);
    let mut v = Verifications::default();
    s.verify(&mut v);
    assert!(v.all_passed && v.passed.len() == 2, "{v:?}");
    assert_eq!(s.rounds.len(), (runs + warmup) as usize);
    for r in &s.rounds {
        assert_eq!(r.order.len(), 3);
        assert_eq!(r.floor.as_ref().unwrap().cycles, handoffs);
        assert_eq!(r.workloads.len(), 2);
        for w in &r.workloads {
            assert_eq!(w.handoffs, handoffs, "{}", w.workload);
            assert_eq!(w.acquire_ms.len(), handoffs as usize);
            assert_eq!(w.mismatches, 0);
            // Every take-over catches up from the log: the two writers each replay at least
            // the other's one commit (the first, the solo loop's commits as well).
            if w.workload == TWO_WRITERS {
                assert!(w.catch_up_commits >= u64::from(handoffs - 1), "{w:?}");
            }
            assert!(w.bytes_read > 0 && w.catch_up_log_bytes > 0, "{w:?}");
        }
    }
    let sum = s.summary.as_ref().unwrap();
    let floor = sum.floor_ms.unwrap();
    assert_eq!(floor.n, runs as usize);
    let mut lines = vec![format!(
        "hand-off suite, {handoffs} hand-offs/round, {runs} rounds (+{warmup} warm-up), {:.1} s in all; {FLOOR}: {:.3} ms per close+reopen of 2 handles (min {:.3}, max {:.3})",
        wall_ms / 1e3,
        floor.median,
        floor.min,
        floor.max
    )];
    for name in [TWO_WRITERS, WRITER_READER] {
        let w = sum.workloads.iter().find(|w| w.workload == name).unwrap();
        let h = w.handoff_ms.unwrap();
        let r = w.ratio_to_floor.unwrap();
        assert_eq!((h.n, r.n), (runs as usize, runs as usize));
        assert!(h.median > 0.0, "a hand-off costs something: {h:?}");
        let g = s.goals.iter().find(|g| g.backend == name).unwrap();
        lines.push(format!(
            "{name}: hand-off {:.3} ms (min {:.3}, max {:.3}); step {:.3} ms, solo step {:.3} ms; acquire {:.3} ms, release {:.3} ms, take-over {:.3} ms; calls/hand-off {:.1}, bytes read/hand-off {:.0}, written {:.0}, log replayed {:.0}; catch-ups that reloaded (a checkpoint) {}; ÷ floor {:.2} [{}, {}] → {}",
            h.median,
            h.min,
            h.max,
            w.step_ms.unwrap().median,
            w.solo_step_ms.unwrap().median,
            w.acquire_ms.unwrap().median,
            w.release_ms.unwrap().median,
            w.take_over_ms.unwrap().median,
            w.calls_per_handoff.unwrap().median,
            w.bytes_read_per_handoff.unwrap().median,
            w.bytes_written_per_handoff.unwrap().median,
            w.catch_up_bytes_per_handoff.unwrap().median,
            w.reloads,
            r.median,
            r.lo.map_or("–".into(), |x| format!("{x:.2}")),
            r.hi.map_or("–".into(), |x| format!("{x:.2}")),
            g.verdict.as_str()
        ));
    }
    let text = lines.join("\n");
    web_sys_log(&text);
}

fn web_sys_log(text: &str) {
    wasm_bindgen_test::console_log!("{text}");
}

/// The quick preset's size (`web/src/config.rs`): 4 hand-offs, 6 rounds, no warm-up.
#[wasm_bindgen_test]
async fn quick_size() {
    let (s, wall) = run(4, 6, 0).await;
    check(&s, 4, 6, 0, wall);
}

/// Longer rounds (40 hand-offs, past the log's checkpoints in Firefox) after a warm-up. The
/// full preset's figures (100 hand-offs × 12 rounds: ~31 s in Chromium, ~113 s in Firefox)
/// come from the benchmark page, not from a test.
#[wasm_bindgen_test]
async fn longer_rounds() {
    let (s, wall) = run(40, 2, 1).await;
    check(&s, 40, 2, 1, wall);
}
