#![cfg(target_arch = "wasm32")]
// Test data uses small, deliberate narrowing casts (random names, indices).
#![allow(clippy::cast_possible_truncation)]
//! Browser tests of shared volumes (`Sharing::Shared`): several installs of one OPFS directory
//! take turns through the Web Lock, hand the access handles over when asked and idle, and catch
//! up from the log. The installs live in one dedicated worker here (each with its own volume,
//! VFS and connections, exactly as in separate tabs: nothing is shared but OPFS, the Web Lock
//! and the BroadcastChannel); the page-level tests drive separate tabs.

use opfs_vfs::sqlite::rusqlite::{Connection, ErrorCode, OpenFlags};
use opfs_vfs::web::{install, InstallOptions, Installed, Sharing};
use opfs_vfs::{BufferMode, Durability};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn unique(tag: &str) -> String {
    let r = (js_sys::Math::random() * 1e12) as u64;
    format!("test-share-{tag}-{r:x}")
}

async fn holder(dir: &str, name: &str, mode: BufferMode) -> Installed {
    install(InstallOptions {
        vfs_name: format!("{dir}-{name}"),
        directory: dir.to_owned(),
        buffer_mode: mode,
        durability: Durability::Strict,
        sharing: Sharing::Shared,
        busy_timeout: std::time::Duration::from_secs(10),
        ..InstallOptions::default()
    })
    .await
    .unwrap_or_else(|e| panic!("install {name}: {e}"))
}

fn connect(inst: &Installed) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let c = Connection::open_with_flags_and_vfs("shared.db", flags, inst.vfs_name()).unwrap();
    c.busy_timeout(std::time::Duration::ZERO).unwrap();
    c
}

fn count(c: &Connection) -> i64 {
    c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

#[wasm_bindgen_test]
async fn a_second_install_takes_the_volume_over_and_hands_it_back() {
    for mode in [BufferMode::Memory, BufferMode::Disk] {
        let dir = unique(&format!("turns-{mode:?}"));
        let a = holder(&dir, "a", mode).await;
        let ca = connect(&a);
        ca.execute_batch(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t(v) VALUES ('a1');",
        )
        .unwrap();
        // B's install asks; A is idle, so it hands the volume over.
        let b = holder(&dir, "b", mode).await;
        assert!(b.is_held() && !a.is_held());
        let cb = connect(&b);
        assert_eq!(count(&cb), 1, "B sees A's commit");
        cb.execute("INSERT INTO t(v) VALUES ('b1')", []).unwrap();
        // A without the volume: SQLite gets SQLITE_BUSY, and the VFS says why.
        let e = ca
            .execute("INSERT INTO t(v) VALUES ('nope')", [])
            .unwrap_err();
        assert_eq!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy), "{e}");
        let why = a.vfs().unwrap().last_error().unwrap_or_default();
        assert!(why.contains("another tab or worker"), "{why}");
        // A takes it back: it catches up from the log (B's one commit).
        let n = a
            .run(|| {
                ca.execute("INSERT INTO t(v) VALUES ('a2')", []).unwrap();
                count(&ca)
            })
            .await
            .unwrap();
        assert_eq!(n, 3);
        let st = a.share_stats().unwrap();
        assert_eq!(st.acquisitions, 1, "{st:?}");
        assert!(!st.last_catch_up.reloaded, "{st:?}");
        assert!(st.last_catch_up.commits >= 1, "{st:?}");
        web_sys::console::log_1(
            &format!(
                "{mode:?}: hand-over {:.2} ms here, take-over {:.2} ms, wait {:.2} ms, catch-up {:?}; B: {:?}",
                st.last_release_ms,
                st.last_acquire_ms,
                st.last_wait_ms,
                st.last_catch_up,
                b.share_stats()
            )
            .into(),
        );
        let integrity: String = ca
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok");
        drop(ca);
        drop(cb);
        let mut a = a;
        let mut b = b;
        b.close().unwrap();
        a.wipe().await.unwrap();
    }
}

/// Three holders interleave 500 autocommit INSERTs each, and some multi-statement
/// transactions; every holder sees exactly all rows at the end.
#[wasm_bindgen_test]
async fn three_holders_interleave_inserts() {
    let dir = unique("three");
    let hs = [
        holder(&dir, "h0", BufferMode::Memory).await,
        holder(&dir, "h1", BufferMode::Disk).await,
        holder(&dir, "h2", BufferMode::Memory).await,
    ];
    // Opening a connection may create the database file: do it while holding the volume.
    let mut cs: Vec<Connection> = Vec::new();
    for h in &hs {
        cs.push(h.run(|| connect(h)).await.unwrap());
    }
    hs[0]
        .run(|| {
            cs[0]
                .execute_batch(
                    "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, who INTEGER, i INTEGER)",
                )
                .unwrap()
        })
        .await
        .unwrap();
    let mut expected = 0i64;
    for i in 0..500i64 {
        for (k, (h, c)) in hs.iter().zip(&cs).enumerate() {
            h.run(|| {
                c.execute("INSERT INTO t(who, i) VALUES (?1, ?2)", (k as i64, i))
                    .unwrap()
            })
            .await
            .unwrap();
            expected += 1;
        }
        if i % 100 == 0 {
            let k = (i / 100) as usize % 3;
            hs[k]
                .run(|| {
                    cs[k]
                        .execute_batch(
                            "BEGIN; INSERT INTO t(who, i) VALUES (9, -1); \
                             INSERT INTO t(who, i) VALUES (9, -2); COMMIT;",
                        )
                        .unwrap()
                })
                .await
                .unwrap();
            expected += 2;
        }
    }
    for (h, c) in hs.iter().zip(&cs) {
        let (n, ok) = h
            .run(|| {
                let n: i64 = c
                    .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
                    .unwrap();
                let ok: String = c
                    .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                    .unwrap();
                (n, ok)
            })
            .await
            .unwrap();
        assert_eq!((n, ok.as_str()), (expected, "ok"));
    }
    let stats: Vec<_> = hs.iter().map(|h| h.share_stats().unwrap()).collect();
    web_sys::console::log_1(&format!("three holders: {stats:?}").into());
    drop(cs);
    let [h0, mut h1, mut h2] = hs;
    h1.close().unwrap();
    h2.close().unwrap();
    let mut h0 = h0;
    h0.wipe().await.unwrap();
}

/// pause() hands the volume over on purpose; resume() takes it back.
#[wasm_bindgen_test]
async fn pause_and_resume() {
    let dir = unique("pause");
    let a = holder(&dir, "a", BufferMode::Memory).await;
    let ca = connect(&a);
    ca.execute_batch("CREATE TABLE t(v); INSERT INTO t VALUES (1);")
        .unwrap();
    a.pause().unwrap();
    assert!(!a.is_held());
    let b = holder(&dir, "b", BufferMode::Memory).await;
    let cb = connect(&b);
    cb.execute("INSERT INTO t VALUES (2)", []).unwrap();
    a.resume().await.unwrap();
    assert!(a.is_held() && !b.is_held());
    assert_eq!(count(&ca), 2);
    drop(ca);
    drop(cb);
    let mut b = b;
    b.close().unwrap();
    let mut a = a;
    a.wipe().await.unwrap();
}
