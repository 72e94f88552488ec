#![cfg(target_arch = "wasm32")]
//! OPFS sync access handles exist only in dedicated workers: in a shared worker, opening a volume or
//! installing the VFS must fail with a clear error, not panic or hang. (This file runs
//! `run_in_shared_worker` on purpose; every other browser test runs in a dedicated worker.)

use opfs_vfs::storage::{OpfsStorage, StorageError, NEED_DEDICATED_WORKER};
use opfs_vfs::web::{install, InstallError, InstallOptions};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_shared_worker);

#[wasm_bindgen_test]
async fn opening_a_volume_needs_a_dedicated_worker() {
    match OpfsStorage::open("test-env-shared_worker").await {
        Err(StorageError::Platform { message, .. }) => assert_eq!(message, NEED_DEDICATED_WORKER),
        other => panic!("expected the dedicated-worker error, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn install_needs_a_dedicated_worker() {
    let options = InstallOptions {
        vfs_name: "test-env-shared_worker".into(),
        directory: "test-env-shared_worker".into(),
        ..InstallOptions::default()
    };
    match install(options).await {
        Err(InstallError::Unsupported { message }) => {
            assert!(message.contains(NEED_DEDICATED_WORKER), "{message}")
        }
        other => panic!("expected InstallError::Unsupported, got {other:?}"),
    }
}
