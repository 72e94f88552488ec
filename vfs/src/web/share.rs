//! Many tabs, one volume: [`Sharing::Shared`](super::Sharing::Shared).
//!
//! Only one context (tab or worker) at a time holds the volume. Holders take turns through an
//! exclusive Web Lock named `opfs-vfs:<directory>`:
//! - the holder keeps the lock until another context asks — a message on a `BroadcastChannel`
//!   of the same name — and it is idle: no [`HoldGuard`] alive, no SQLite connection inside a
//!   transaction (no SQLite lock held). Then it commits what was changed outside a transaction
//!   (a database a connection created, filesystem-API writes), makes everything durable
//!   ([`Volume::release`]), releases its storage and the Web Lock;
//! - a context that wants the volume posts the request and waits for the Web Lock (granted in
//!   request order, so every context gets its turn), takes its storage back and catches up:
//!   [`Volume::resume`] reads only the log written since it last held the volume.
//!
//! Releasing and taking back the storage depends on the browser
//! ([`HandleMode`](crate::storage::HandleMode)): where access handles can be concurrent
//! (Chromium's `readwrite-unsafe`), every context keeps its two handles open and the Web Lock
//! alone keeps them from running at once (a released storage refuses every call), so a
//! hand-off closes and opens nothing; where they are exclusive (Firefox), the giver closes
//! them before it releases the lock and the taker opens them again.
//!
//! A tab that dies holding the volume (killed, crashed, closed) releases both with its worker:
//! the browser frees the handles and the Web Lock; the next holder catches up, applying the dead
//! tab's committed frames and voiding its uncommitted ones. Nothing acknowledged is lost beyond
//! what the durability level allows for a tab crash (`Strict`, `Relaxed`: nothing).
//!
//! The sync VFS meets the async lock here: SQL runs while the volume is held; a context that does
//! not hold it gets `SQLITE_BUSY` ("released to another tab") from the VFS, and acquires it first
//! with [`super::Installed::acquire`] (or [`super::Installed::run`]).

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};
use std::time::Duration;

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_time::Instant;

use crate::storage::StorageError;
use crate::CatchUp;

use super::InstallError;
use crate::storage::OpfsStorage;
use crate::Volume;

type VolumeCell = RefCell<Volume<OpfsStorage>>;
type MessageHandler = Closure<dyn FnMut(JsValue)>;

/// What a context did to share the volume, for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShareStats {
    /// Times this context handed the volume over.
    pub releases: u64,
    /// Times it took the volume over (after the first install).
    pub acquisitions: u64,
    /// Requests from other contexts received.
    pub requests_seen: u64,
    /// Milliseconds the last hand-over took here (flush, release the storage — close two
    /// exclusive handles — and the lock).
    pub last_release_ms: f64,
    /// Milliseconds the last take-over took (from the lock being granted: open two handles,
    /// catch up).
    pub last_acquire_ms: f64,
    /// Milliseconds from asking to holding, the last time (waiting for the other holder too).
    pub last_wait_ms: f64,
    /// What the last catch-up read.
    pub last_catch_up: CatchUp,
    /// When the steps of the last hand-over and take-over happened here.
    pub times: ShareTimes,
}

/// When (ms on `performance.now()`'s clock; 0: not yet) this context last passed each step
/// of a hand-off, as giver or taker. Contexts of one worker share the clock, so a benchmark
/// running two installs in one worker can subtract one's times from the other's.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShareTimes {
    /// Taker: `acquire` started waiting (before the Web Lock request).
    pub asked: f64,
    /// Taker: the request message was posted.
    pub posted: f64,
    /// Taker: the Web Lock was requested (after the message).
    pub requested: f64,
    /// Taker: the Web Lock's callback ran (the lock was granted).
    pub granted: f64,
    /// Taker: the waiting future resumed after the grant.
    pub woke: f64,
    /// Taker: the storage was back (both exclusive access handles open again).
    pub opened: f64,
    /// Taker: the catch-up was done (holding).
    pub held: f64,
    /// Giver: the request message arrived.
    pub message: f64,
    /// Giver: the hand-over started (the idle check ran).
    pub check: f64,
    /// Giver: everything was durable (`Volume::release` returned).
    pub durable: f64,
    /// Giver: the storage was released (both exclusive access handles closed).
    pub closed: f64,
    /// Giver: the Web Lock was released.
    pub unlocked: f64,
}

pub(crate) struct Share {
    pub(crate) lock_name: String,
    channel: JsValue,
    _onmessage: RefCell<Option<MessageHandler>>,
    /// Resolves the promise the Web Lock's callback returned: releases the lock.
    release_lock: RefCell<Option<Function>>,
    pub(crate) holding: Cell<bool>,
    wanted: Cell<bool>,
    guards: Cell<usize>,
    /// An acquisition in flight (concurrent `acquire` calls share it).
    acquiring: RefCell<Option<Promise>>,
    check_scheduled: Cell<bool>,
    volume: RefCell<Weak<VolumeCell>>,
    /// Whether a SQLite connection of this context holds a lock (is inside a transaction).
    locks_held: RefCell<Option<Box<dyn Fn() -> bool>>>,
    self_ref: RefCell<Weak<Share>>,
    pub(crate) stats: Cell<ShareStats>,
    busy_timeout: Duration,
}

impl std::fmt::Debug for Share {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Share")
            .field("lock", &self.lock_name)
            .field("holding", &self.holding.get())
            .field("wanted", &self.wanted.get())
            .field("guards", &self.guards.get())
            .finish()
    }
}

fn global() -> JsValue {
    js_sys::global().into()
}

fn get(target: &JsValue, key: &str) -> Result<JsValue, InstallError> {
    Reflect::get(target, &JsValue::from_str(key)).map_err(|e| unsupported(key, &e))
}

fn unsupported(what: &str, e: &JsValue) -> InstallError {
    InstallError::Unsupported {
        message: format!(
            "sharing a volume between tabs needs Web Locks and BroadcastChannel ({what}: {e:?})"
        ),
    }
}

fn call(target: &JsValue, method: &str, args: &[&JsValue]) -> Result<JsValue, InstallError> {
    let f: Function = get(target, method)?
        .dyn_into()
        .map_err(|v| unsupported(method, &v))?;
    let arr = js_sys::Array::new();
    for a in args {
        arr.push(a);
    }
    Reflect::apply(&f, target, &arr).map_err(|e| unsupported(method, &e))
}

/// Requests the exclusive Web Lock `name`. Returns a promise resolved when it is granted (or
/// rejected when `signal` aborts the request) and the function that releases it.
fn lock_request(
    name: &str,
    signal: &JsValue,
    granted_at: Rc<Cell<f64>>,
) -> Result<(Promise, Function), InstallError> {
    let mut release: Option<Function> = None;
    let held = Promise::new(&mut |resolve, _reject| release = Some(resolve));
    let release = release.ok_or_else(|| unsupported("Promise", &JsValue::NULL))?;
    let locks = get(&get(&global(), "navigator")?, "locks")?;
    if locks.is_undefined() {
        return Err(unsupported("navigator.locks", &JsValue::UNDEFINED));
    }
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"mode".into(), &"exclusive".into());
    if !signal.is_undefined() {
        let _ = Reflect::set(&opts, &"signal".into(), signal);
    }
    let mut outcome: Result<(), InstallError> = Ok(());
    let granted = Promise::new(&mut |resolve, reject| {
        let held = held.clone();
        // Called once, when the lock is granted; the lock stays held until `held` settles.
        let granted_at = granted_at.clone();
        let cb = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
            granted_at.set(super::now_ms());
            let _ = resolve.call0(&JsValue::NULL);
            held.into()
        });
        match call(&locks, "request", &[&JsValue::from_str(name), &opts, &cb]) {
            Ok(p) => {
                // A request aborted before it was granted rejects: hand that to `granted`.
                let reject2 = reject.clone();
                let on_err = Closure::once_into_js(move |e: JsValue| {
                    let _ = reject2.call1(&JsValue::NULL, &e);
                });
                let _ = call(&p, "catch", &[&on_err]);
            }
            Err(e) => outcome = Err(e),
        }
    });
    outcome?;
    Ok((granted, release))
}

/// While waiting for the lock, the request is posted again this often: a context that took
/// the lock after the first message had not heard it.
const ASK_AGAIN_MS: u32 = 200;

/// Resolves after `d` (setTimeout).
async fn sleep(d: Duration) {
    super::sleep(d).await
}

impl Share {
    pub(crate) fn new(directory: &str, busy_timeout: Duration) -> Result<Rc<Share>, InstallError> {
        let lock_name = format!("opfs-vfs:{directory}");
        let ctor: Function = get(&global(), "BroadcastChannel")?
            .dyn_into()
            .map_err(|v| unsupported("BroadcastChannel", &v))?;
        let args = js_sys::Array::of1(&JsValue::from_str(&lock_name));
        let channel =
            Reflect::construct(&ctor, &args).map_err(|e| unsupported("BroadcastChannel", &e))?;
        let share = Rc::new(Share {
            lock_name,
            channel,
            _onmessage: RefCell::new(None),
            release_lock: RefCell::new(None),
            holding: Cell::new(false),
            wanted: Cell::new(false),
            guards: Cell::new(0),
            acquiring: RefCell::new(None),
            check_scheduled: Cell::new(false),
            volume: RefCell::new(Weak::new()),
            locks_held: RefCell::new(None),
            self_ref: RefCell::new(Weak::new()),
            stats: Cell::new(ShareStats::default()),
            busy_timeout,
        });
        *share.self_ref.borrow_mut() = Rc::downgrade(&share);
        let weak = Rc::downgrade(&share);
        let onmessage = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
            let data = Reflect::get(&ev, &"data".into()).unwrap_or(JsValue::UNDEFINED);
            if data.as_string().as_deref() == Some("want") {
                if let Some(s) = weak.upgrade() {
                    let t = super::now_ms();
                    s.bump(|st| {
                        st.requests_seen += 1;
                        st.times.message = t;
                    });
                    s.wanted.set(true);
                    // Hand over from this task, not a timer's: the message handler runs
                    // between the worker's tasks, so no call into the volume is under way (an
                    // idle check refuses if one were: the volume is borrowed), and a busy
                    // holder looks again later (`check_idle`).
                    s.check_idle();
                }
            }
        });
        let _ = Reflect::set(&share.channel, &"onmessage".into(), onmessage.as_ref());
        *share._onmessage.borrow_mut() = Some(onmessage);
        Ok(share)
    }

    pub(crate) fn bind(&self, volume: &Rc<VolumeCell>, locks_held: Box<dyn Fn() -> bool>) {
        *self.volume.borrow_mut() = Rc::downgrade(volume);
        *self.locks_held.borrow_mut() = Some(locks_held);
    }

    fn bump(&self, f: impl FnOnce(&mut ShareStats)) {
        let mut s = self.stats.get();
        f(&mut s);
        self.stats.set(s);
    }

    /// Asks the holder to hand over, waits for the Web Lock (up to `timeout`, if given).
    /// Returns the function that releases the lock.
    pub(crate) async fn wait_for_lock(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Function, InstallError> {
        let controller = Reflect::get(&global(), &"AbortController".into())
            .ok()
            .and_then(|c| c.dyn_into::<Function>().ok())
            .and_then(|c| Reflect::construct(&c, &js_sys::Array::new()).ok());
        let signal = controller
            .as_ref()
            .and_then(|c| Reflect::get(c, &"signal".into()).ok())
            .unwrap_or(JsValue::UNDEFINED);
        let asked = super::now_ms();
        // Ask first, then request the lock: the message's trip to the holder overlaps with
        // queuing the request (each goes through the browser; Chromium 156 here: the request
        // call ~0.2 ms, the message ~0.3 ms), and the holder takes a millisecond or more
        // (flush, close two handles) before
        // it releases, by which time the request is queued. If it is not, the lock is free
        // when the request arrives and is granted at once; if the holder took the lock back
        // meanwhile, it hears the request repeated below.
        let _ = call(&self.channel, "postMessage", &[&JsValue::from_str("want")]);
        let posted = super::now_ms();
        let granted_at = Rc::new(Cell::new(0.0));
        let (granted, release) = lock_request(&self.lock_name, &signal, granted_at.clone())?;
        let requested = super::now_ms();
        self.bump(|s| {
            s.times.asked = asked;
            s.times.posted = posted;
            s.times.requested = requested;
        });
        // 0: pending, 1: granted, 2: rejected (aborted).
        let state = Rc::new(Cell::new(0u8));
        let (s1, s2) = (state.clone(), state.clone());
        let on_ok = Closure::once_into_js(move |_: JsValue| {
            s1.set(1);
            JsValue::NULL
        });
        let on_err = Closure::once_into_js(move |_: JsValue| {
            s2.set(2);
            JsValue::NULL
        });
        let watched: Promise = call(&granted, "then", &[&on_ok, &on_err])?
            .dyn_into()
            .map_err(|v| unsupported("Promise.then", &v))?;
        let start = Instant::now();
        loop {
            let mut timer = JsValue::UNDEFINED;
            let tick = Promise::new(&mut |resolve, _| {
                let g = global();
                if let Ok(f) = get(&g, "setTimeout").and_then(|f| {
                    f.dyn_into::<Function>()
                        .map_err(|v| unsupported("setTimeout", &v))
                }) {
                    timer = f
                        .call2(&g, &resolve, &JsValue::from(ASK_AGAIN_MS))
                        .unwrap_or(JsValue::UNDEFINED);
                }
            });
            let either = Promise::race(&js_sys::Array::of2(&watched, &tick));
            let _ = JsFuture::from(either).await;
            // Granted (or aborted) before the tick: cancel it, so that no timer per hand-off
            // is left to fire later.
            if state.get() != 0 && !timer.is_undefined() {
                let _ = call(&global(), "clearTimeout", &[&timer]);
            }
            match state.get() {
                1 => {
                    let woke = super::now_ms();
                    self.bump(|s| {
                        s.times.granted = granted_at.get();
                        s.times.woke = woke;
                    });
                    return Ok(release);
                }
                2 => {
                    return Err(InstallError::Busy {
                        message: format!("the request for {:?} was aborted", self.lock_name),
                    })
                }
                _ => {}
            }
            if timeout.is_some_and(|t| start.elapsed() >= t) {
                if let Some(c) = &controller {
                    let _ = call(c, "abort", &[]);
                }
                return Err(InstallError::Busy {
                    message: format!(
                        "the volume {:?} is held by another tab or worker that did not hand it \
                         over within {timeout:?} (a page kept in the back-forward cache with its \
                         worker? terminate the worker on pagehide)",
                        self.lock_name
                    ),
                });
            }
            // Ask again: a context that took the lock meanwhile has not heard us yet.
            let _ = call(&self.channel, "postMessage", &[&JsValue::from_str("want")]);
        }
    }
}

fn in_use() -> InstallError {
    InstallError::Busy {
        message: "the volume is in use by a call further up the stack".into(),
    }
}

/// Keeps the volume held while alive (see [`super::Installed::acquire`]).
#[derive(Debug)]
pub struct HoldGuard {
    share: Rc<Share>,
}

impl Drop for HoldGuard {
    fn drop(&mut self) {
        let n = self.share.guards.get().saturating_sub(1);
        self.share.guards.set(n);
        if n == 0 && self.share.wanted.get() {
            self.share.schedule_check(Duration::ZERO);
        }
    }
}

impl Share {
    fn schedule_check(&self, after: Duration) {
        if self.check_scheduled.replace(true) {
            return;
        }
        let weak = self.self_ref.borrow().clone();
        let cb = Closure::once_into_js(move || {
            if let Some(s) = weak.upgrade() {
                s.check_scheduled.set(false);
                s.check_idle();
            }
        });
        let g = global();
        let ok = get(&g, "setTimeout")
            .and_then(|f| {
                f.dyn_into::<Function>()
                    .map_err(|v| unsupported("setTimeout", &v))
            })
            .and_then(|f| {
                f.call2(&g, &cb, &JsValue::from(after.as_millis() as f64))
                    .map_err(|e| unsupported("setTimeout", &e))
            })
            .is_ok();
        if !ok {
            self.check_scheduled.set(false);
        }
    }

    /// Hands the volume over if someone asked and this context is idle; else checks again soon.
    fn check_idle(&self) {
        if !self.holding.get() || !self.wanted.get() || self.guards.get() > 0 {
            return;
        }
        let t = super::now_ms();
        self.bump(|s| s.times.check = t);
        match self.release_now() {
            Ok(true) => {}
            // Busy (a transaction is open): look again in a moment.
            Ok(false) | Err(_) => self.schedule_check(Duration::from_millis(5)),
        }
    }

    /// Releases now if idle: makes everything durable, releases the storage (closing exclusive
    /// handles) and the Web Lock. `Ok(false)`: not idle.
    pub(crate) fn release_now(&self) -> Result<bool, InstallError> {
        if !self.holding.get() {
            return Ok(true);
        }
        let Some(volume) = self.volume.borrow().upgrade() else {
            return Ok(false);
        };
        if self.locks_held.borrow().as_ref().is_none_or(|f| f()) {
            return Ok(false);
        }
        let start = Instant::now();
        let Ok(mut vol) = volume.try_borrow_mut() else {
            return Ok(false);
        };
        // No SQLite transaction is open (no lock held): what is uncommitted was changed outside
        // one (a file a connection created at open, filesystem-API writes): commit it, so the
        // next holder sees it.
        if vol.has_uncommitted() && vol.commit().is_err() {
            return Ok(false);
        }
        match vol.release() {
            Ok(()) => {}
            // Acknowledged commits not yet written stay ours until they are (a full quota).
            Err(crate::Error::OutOfSpace { .. }) => return Ok(false),
            // A failed flush poisons; what was written is visible to the next holder.
            Err(_) => {}
        }
        let durable = super::now_ms();
        vol.storage_mut().release();
        drop(vol);
        let closed = super::now_ms();
        self.holding.set(false);
        self.wanted.set(false);
        if let Some(release) = self.release_lock.borrow_mut().take() {
            let _ = release.call0(&JsValue::NULL);
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let unlocked = super::now_ms();
        self.bump(|s| {
            s.releases += 1;
            s.last_release_ms = ms;
            s.times.durable = durable;
            s.times.closed = closed;
            s.times.unlocked = unlocked;
        });
        Ok(true)
    }

    pub(crate) fn set_held(&self, release: Function) {
        *self.release_lock.borrow_mut() = Some(release);
        self.holding.set(true);
    }

    /// Waits until this context holds the volume; returns a guard that keeps it held.
    pub(crate) async fn acquire(self: &Rc<Self>) -> Result<HoldGuard, InstallError> {
        loop {
            if self.holding.get() {
                self.guards.set(self.guards.get() + 1);
                return Ok(HoldGuard {
                    share: self.clone(),
                });
            }
            let in_flight = self.acquiring.borrow().clone();
            if let Some(p) = in_flight {
                let _ = JsFuture::from(p).await;
                continue;
            }
            let me = self.clone();
            let fut = async move {
                let r = me.take_over().await;
                *me.acquiring.borrow_mut() = None;
                r.map(|()| JsValue::NULL)
                    .map_err(|e| JsValue::from_str(&e.to_string()))
            };
            let p = wasm_bindgen_futures::future_to_promise(fut);
            *self.acquiring.borrow_mut() = Some(p.clone());
            if let Err(e) = JsFuture::from(p).await {
                return Err(InstallError::Busy {
                    message: e.as_string().unwrap_or_else(|| format!("{e:?}")),
                });
            }
        }
    }

    /// Waits for the lock, opens the handles again, catches up.
    async fn take_over(&self) -> Result<(), InstallError> {
        let asked = Instant::now();
        let release = self.wait_for_lock(None).await?;
        let start = Instant::now();
        let volume = self.volume.borrow().upgrade().ok_or(InstallError::Closed)?;
        // Reopen the handles (concurrent ones are still open: nothing to do); the previous
        // holder closed exclusive ones before releasing the lock, but a browser may free them a
        // moment late: retry while busy, up to the busy timeout.
        let mut pause = Duration::from_millis(2);
        loop {
            let reopen = volume
                .try_borrow()
                .map_err(|_| in_use())?
                .storage()
                .reopen();
            match reopen.await {
                Ok(handles) => {
                    volume
                        .try_borrow_mut()
                        .map_err(|_| in_use())?
                        .storage_mut()
                        .install(handles);
                    let t = super::now_ms();
                    self.bump(|s| s.times.opened = t);
                    break;
                }
                Err(StorageError::Busy { .. }) if start.elapsed() + pause <= self.busy_timeout => {
                    sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(e) => {
                    let _ = release.call0(&JsValue::NULL);
                    return Err(InstallError::from(e));
                }
            }
        }
        let up = volume.try_borrow_mut().map_err(|_| in_use())?.resume();
        let up = match up {
            Ok(up) => up,
            Err(e) => {
                let _ = release.call0(&JsValue::NULL);
                return Err(e.into());
            }
        };
        self.set_held(release);
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let wait = asked.elapsed().as_secs_f64() * 1000.0;
        let held = super::now_ms();
        self.bump(|s| {
            s.times.held = held;
            s.acquisitions += 1;
            s.last_acquire_ms = ms;
            s.last_wait_ms = wait;
            s.last_catch_up = up;
        });
        // Someone may have asked meanwhile.
        if self.wanted.get() {
            self.schedule_check(Duration::ZERO);
        }
        Ok(())
    }

    pub(crate) fn close_channel(&self) {
        let _ = call(&self.channel, "close", &[]);
        if let Some(release) = self.release_lock.borrow_mut().take() {
            let _ = release.call0(&JsValue::NULL);
        }
        self.holding.set(false);
    }
}
