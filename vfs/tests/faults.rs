#![cfg(not(target_arch = "wasm32"))]
//! A fault at every storage call of a commit, a spilling transaction, a checkpoint, a close and
//! a mount: the result the volume reports must match what it shows live, what a restarted
//! process mounts, and what a power loss leaves.
//!
//! For each scenario, buffer mode and durability level, a dry run counts the scenario's
//! physical calls; then for every call `k` and two effects (a platform error; a short write,
//! which other calls see as an error), the scenario runs with call `k` failing once. Then:
//! - reported success: the live state is the new one; a restarted process sees it (Strict,
//!   Relaxed; Balanced may not have written it yet); a power loss keeps it under Strict;
//! - reported failure, volume not poisoned: nothing of it took effect — live, after a restart,
//!   and after any power loss the state is the old one; the volume keeps working (a further
//!   commit succeeds and survives power loss);
//! - `CommitUnknown` or a poisoned volume: the live state is the new one (a commit) or either;
//!   after a restart or a power loss, old or new, never anything else; reads keep working.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{diff, model_write, pattern, read_state, Model};
use opfs_vfs::storage::StorageError;
use opfs_vfs::testing::{CrashMode, CrashStorage, Fault, FaultEffect, FaultOp};
use opfs_vfs::{BufferMode, Durability, Error, Volume, VolumeOptions};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    Commit,
    Spill,
    /// The spill's transaction with tail links: its spills (Disk mode) and its commit
    /// (Memory mode) go to the data file's tail.
    Link,
    Checkpoint,
    Close,
    Mount,
}

fn options(mode: BufferMode, durability: Durability) -> VolumeOptions {
    VolumeOptions {
        buffer_mode: mode,
        durability,
        max_flush_delay: std::time::Duration::from_secs(3600),
        write_buffer_bytes: 16 << 10,
        checkpoint_bytes: 1 << 30,
        disk_cache_bytes: 0,
        ..VolumeOptions::default()
    }
}

/// A volume with committed, flushed files: some checkpointed, some only in the log.
fn setup(mode: BufferMode, durability: Durability) -> (CrashStorage, Model) {
    let st = CrashStorage::new();
    let mut v = Volume::mount(st.clone(), options(mode, durability)).unwrap();
    let mut m = Model::new();
    for (name, len, seed) in [("a", 10_000, 1), ("b", 300, 2), ("c", 20_000, 3)] {
        let id = v.create(name).unwrap();
        v.write(id, 0, &pattern(len, seed)).unwrap();
        m.insert(name.into(), pattern(len, seed));
    }
    v.commit().unwrap();
    v.checkpoint().unwrap();
    let a = v.open("a").unwrap();
    v.write(a, 9000, &pattern(3000, 4)).unwrap();
    model_write(m.get_mut("a").unwrap(), 9000, &pattern(3000, 4));
    v.flush().unwrap();
    let st2 = v.into_storage_unflushed();
    drop(st2);
    (CrashStorage::from_image(&st.current_image()), m)
}

/// The scenario's changes, applied to the model.
fn expected(s: Scenario, before: &Model) -> Model {
    let mut m = before.clone();
    match s {
        Scenario::Commit => {
            model_write(m.get_mut("a").unwrap(), 4100, b"partial page write");
            m.insert("d".into(), pattern(5000, 5));
            m.remove("b");
            let c = m.remove("c").unwrap();
            m.insert("c2".into(), c);
        }
        Scenario::Spill | Scenario::Link => {
            model_write(m.get_mut("c").unwrap(), 1000, &pattern(100_000, 6));
        }
        Scenario::Checkpoint | Scenario::Close | Scenario::Mount => {}
    }
    m
}

/// What running the scenario reported.
struct Ran {
    result: Result<(), Error>,
    /// The volume afterwards (none after close, or a failed mount).
    volume: Option<Volume<CrashStorage>>,
}

/// Runs the scenario; `start` is called when its calls begin (after the mount that precedes it,
/// or before the mount that is the scenario).
fn run(
    s: Scenario,
    st: &CrashStorage,
    opts: &VolumeOptions,
    start: &dyn Fn(),
) -> Result<Ran, Error> {
    if s == Scenario::Mount {
        start();
        return Ok(match Volume::mount(st.clone(), opts.clone()) {
            Ok(v) => Ran {
                result: Ok(()),
                volume: Some(v),
            },
            Err(e) => Ran {
                result: Err(e),
                volume: None,
            },
        });
    }
    let mut v = Volume::mount(st.clone(), opts.clone())?;
    // Calls from here on belong to the scenario.
    start();
    let result = match s {
        Scenario::Commit => (|| {
            let a = v.open("a")?;
            v.write(a, 4100, b"partial page write")?;
            let d = v.create("d")?;
            v.write(d, 0, &pattern(5000, 5))?;
            v.delete("b")?;
            v.rename("c", "c2")?;
            v.commit()
        })(),
        Scenario::Spill | Scenario::Link => {
            let r = (|| {
                let c = v.open("c")?;
                let data = pattern(100_000, 6);
                for (i, chunk) in data.chunks(7000).enumerate() {
                    v.write(c, 1000 + (i * 7000) as u64, chunk)?;
                }
                Ok(())
            })();
            // A failed write (it may need to read a partly overwritten page) changes nothing;
            // the transaction's earlier writes stay open: the application rolls back, as
            // SQLite does.
            match r {
                Ok(()) => v.commit(),
                Err(e) => {
                    v.rollback();
                    Err(e)
                }
            }
        }
        Scenario::Checkpoint => v.checkpoint(),
        Scenario::Close => {
            return Ok(Ran {
                result: v.close().map(drop),
                volume: None,
            })
        }
        Scenario::Mount => unreachable!(),
    };
    Ok(Ran {
        result,
        volume: Some(v),
    })
}

fn mount_state(img: opfs_vfs::storage::MemoryStorage, mode: BufferMode) -> Result<Model, String> {
    let mut v =
        Volume::mount(img, options(mode, Durability::Strict)).map_err(|e| format!("mount: {e}"))?;
    read_state(&mut v).map_err(|e| format!("read: {e}"))
}

fn case(
    s: Scenario,
    mode: BufferMode,
    durability: Durability,
    k: u64,
    effect: &FaultEffect,
) -> Result<(), String> {
    let (st, before) = setup(mode, durability);
    let after = expected(s, &before);
    let mut opts = options(mode, durability);
    if s == Scenario::Link {
        opts.link_min_bytes = Some(16 << 10);
    }
    let inject = || {
        st.inject(Fault {
            op: FaultOp::Any,
            file: None,
            skip: k,
            effect: effect.clone(),
            sticky: false,
        })
    };
    let ran = run(s, &st, &opts, &inject).map_err(|e| format!("setup mount failed: {e}"))?;
    st.clear_faults();
    let failed = ran.result.is_err();
    let unknown = matches!(ran.result, Err(Error::CommitUnknown { .. }));
    let poisoned = ran.volume.as_ref().is_some_and(|v| v.poisoned().is_some())
        || matches!(ran.result, Err(Error::Poisoned { .. }));
    if let Err(e) = &ran.result {
        let fine = matches!(
            e,
            Error::Io { .. }
                | Error::OutOfSpace { .. }
                | Error::CommitUnknown { .. }
                | Error::Poisoned { .. }
        );
        if !fine {
            return Err(format!("unexpected error kind: {e:?}"));
        }
    }
    let either = |m: &Model| *m == before || *m == after;
    // Live.
    let mut volume = ran.volume;
    if let Some(v) = volume.as_mut() {
        let live = read_state(v).map_err(|e| format!("reads after the fault failed: {e}"))?;
        let ok = if !failed || unknown {
            live == after
        } else if poisoned || s == Scenario::Checkpoint {
            either(&live)
        } else {
            live == before
        };
        if !ok {
            return Err(format!(
                "live state after {:?}: {} (vs old: {})",
                ran.result,
                diff(&live, &after),
                diff(&live, &before)
            ));
        }
        v.check_invariants()
            .map_err(|e| format!("invariant: {e}"))?;
    }
    // A restarted process.
    let restarted = mount_state(st.current_image(), mode)
        .map_err(|e| format!("restart after {:?}: {e}", ran.result))?;
    let ok = match (&ran.result, durability) {
        (Ok(()), Durability::Strict | Durability::Relaxed) => restarted == after,
        (Ok(()), Durability::Balanced) => either(&restarted),
        (Err(_), _) if unknown || poisoned => either(&restarted),
        (Err(_), _) => restarted == before || before == after,
    };
    if !ok {
        return Err(format!(
            "a restarted process sees the wrong state after {:?}: {} (vs old: {})",
            ran.result,
            diff(&restarted, &after),
            diff(&restarted, &before)
        ));
    }
    // Power losses.
    for (n, mode_) in [
        CrashMode::DropAll,
        CrashMode::KeepAll,
        CrashMode::Random,
        CrashMode::Random,
    ]
    .into_iter()
    .enumerate()
    {
        let img = st.crash(k * 16 + n as u64, mode_);
        let got = mount_state(img, mode).map_err(|e| format!("power loss ({mode_:?}): {e}"))?;
        let ok = match &ran.result {
            Ok(()) if durability == Durability::Strict => got == after,
            Err(_) if !unknown && !poisoned => got == before || before == after,
            _ => either(&got),
        };
        if !ok {
            return Err(format!(
                "power loss ({mode_:?}) after {:?} shows {} (vs old: {})",
                ran.result,
                diff(&got, &after),
                diff(&got, &before)
            ));
        }
    }
    // The volume keeps working.
    if let Some(mut v) = volume.filter(|v| v.poisoned().is_none()) {
        let id = v
            .create("post")
            .map_err(|e| format!("create after the fault: {e}"))?;
        v.write(id, 0, b"post").map_err(|e| e.to_string())?;
        v.flush()
            .map_err(|e| format!("flush after the fault: {e}"))?;
        let got = mount_state(st.crash(99, CrashMode::DropAll), mode)?;
        if got.get("post").map(Vec::as_slice) != Some(&b"post"[..]) {
            return Err("a commit flushed after the fault was lost".into());
        }
    }
    Ok(())
}

#[test]
fn a_fault_at_every_call_is_reported_truthfully() {
    let effects = [
        FaultEffect::Fail(StorageError::Platform {
            op: "any",
            name: "InvalidStateError".into(),
            message: "injected".into(),
        }),
        FaultEffect::ShortWrite,
    ];
    let mut failures = Vec::new();
    let mut cases = 0;
    for s in [
        Scenario::Commit,
        Scenario::Spill,
        Scenario::Link,
        Scenario::Checkpoint,
        Scenario::Close,
        Scenario::Mount,
    ] {
        for mode in [BufferMode::Memory, BufferMode::Disk] {
            for durability in [
                Durability::Strict,
                Durability::Relaxed,
                Durability::Balanced,
            ] {
                // Dry run: how many calls the scenario makes.
                let (st, _) = setup(mode, durability);
                let mut o = options(mode, durability);
                if s == Scenario::Link {
                    o.link_min_bytes = Some(16 << 10);
                }
                let ran = run(s, &st, &o, &|| st.clear_counts()).unwrap();
                if s == Scenario::Link {
                    let linked = ran.volume.as_ref().map_or(0, |v| v.stats().linked_commits);
                    assert!(linked > 0, "{mode:?} {durability:?}: no tail link");
                }
                assert!(
                    ran.result.is_ok(),
                    "{s:?} {mode:?} {durability:?}: dry run failed"
                );
                let calls = st.counts().calls;
                assert!(calls > 0, "{s:?} made no call");
                for k in 0..calls {
                    for effect in &effects {
                        cases += 1;
                        let r =
                            catch_unwind(AssertUnwindSafe(|| case(s, mode, durability, k, effect)))
                                .unwrap_or_else(|p| {
                                    Err(format!(
                                        "PANIC: {}",
                                        p.downcast_ref::<String>()
                                            .cloned()
                                            .or_else(|| p
                                                .downcast_ref::<&str>()
                                                .map(|s| s.to_string()))
                                            .unwrap_or_default()
                                    ))
                                });
                        if let Err(e) = r {
                            failures.push(format!(
                                "{s:?} {mode:?} {durability:?}, call {k} of {calls} fails \
                                 ({effect:?}): {e}"
                            ));
                        }
                    }
                }
            }
        }
    }
    println!("fault cases: {cases}, failing: {}", failures.len());
    assert!(
        failures.is_empty(),
        "{} of {cases} cases failed; first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(15)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
