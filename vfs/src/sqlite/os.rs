//! Platform services for SQLite: clock, randomness, sleep. Stateless apart from an atomic PRNG
//! state, so they are safe to call from any thread (SQLite may call them before our own
//! thread check could run).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rsqlite_vfs::{OsCallback, VfsError, VfsErrorCode, VfsResult};

/// The services of every VFS instance.
#[derive(Debug)]
pub(crate) struct Os;

pub(crate) static OS: Os = Os;

/// splitmix64 state; 0 = not seeded yet.
static RANDOM_STATE: AtomicU64 = AtomicU64::new(0);

fn seed() -> u64 {
    // Natively `RandomState` draws its keys from the OS; in the browser it may be fixed, so the
    // clock is mixed in too. SQLite only needs this for temp names, journal nonces and
    // random()/randomblob(): not cryptographic, but different per run.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = web_time::SystemTime::now()
        .duration_since(web_time::SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    h.write_u128(now);
    h.write_usize(&RANDOM_STATE as *const AtomicU64 as usize);
    h.finish() | 1
}

fn next_random() -> u64 {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    if RANDOM_STATE.load(Ordering::Relaxed) == 0 {
        // Losing this race is fine: someone else seeded it.
        let _ = RANDOM_STATE.compare_exchange(0, seed(), Ordering::Relaxed, Ordering::Relaxed);
    }
    let mut z = RANDOM_STATE
        .fetch_add(GAMMA, Ordering::Relaxed)
        .wrapping_add(GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl OsCallback for Os {
    /// Returns at once: whoever holds the lock SQLite is waiting for runs on this same thread
    /// (the VFS is bound to one thread) and cannot release it while we sleep.
    fn sleep(&self, _dur: Duration) {}

    fn random(&self, buf: &mut [u8]) -> usize {
        for chunk in buf.chunks_mut(8) {
            let r = next_random().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        buf.len()
    }

    fn epoch_timestamp_in_ms(&self) -> VfsResult<i64> {
        let d = web_time::SystemTime::now()
            .duration_since(web_time::SystemTime::UNIX_EPOCH)
            .map_err(|_| VfsError::new(VfsErrorCode::Error, "clock before 1970".into()))?;
        i64::try_from(d.as_millis())
            .map_err(|_| VfsError::new(VfsErrorCode::Error, "clock out of range".into()))
    }
}
