//! SQLite's five lock levels, for the handles of one VFS instance.
//!
//! Every handle keeps its own level; the table keeps, per file name, what all handles hold
//! together (how many hold SHARED or more, and whether RESERVED, PENDING and EXCLUSIVE are
//! taken). The rules are those of `os_unix.c` for locks inside one process:
//! - SHARED is refused while someone holds PENDING or EXCLUSIVE (a writer is waiting or writing);
//! - RESERVED is refused while someone else holds it (one writer at a time);
//! - EXCLUSIVE first takes PENDING (stopping new readers), then is refused while other handles
//!   still hold SHARED; the handle keeps PENDING and SQLite retries.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use rsqlite_vfs::LockLevel;

use super::SharedVolume;
use crate::storage::Storage;

thread_local! {
    /// Lock tables by volume (the address of its `Rc<RefCell<Volume>>`): every VFS registered
    /// over one volume shares one table. An entry lives as long as a registration holds it, and
    /// a registration holds the volume, so an address is not reused while its entry lives.
    static TABLES: RefCell<HashMap<usize, Weak<RefCell<LockTable>>>> = RefCell::new(HashMap::new());
}

/// The lock table of `volume`, shared with every other registration over it.
pub(crate) fn table_for<S: Storage>(volume: &SharedVolume<S>) -> Rc<RefCell<LockTable>> {
    let key = Rc::as_ptr(volume) as *const () as usize;
    TABLES.with(|t| {
        let mut t = t.borrow_mut();
        t.retain(|_, w| w.strong_count() > 0);
        if let Some(table) = t.get(&key).and_then(Weak::upgrade) {
            return table;
        }
        let table = Rc::new(RefCell::new(LockTable::default()));
        t.insert(key, Rc::downgrade(&table));
        table
    })
}

/// What all handles of one name hold together.
#[derive(Debug, Default)]
struct Entry {
    /// Open handles of this name (the entry lives while any is open).
    handles: usize,
    /// Handles at SHARED or above.
    shared: usize,
    reserved: bool,
    pending: bool,
    exclusive: bool,
}

/// The per-handle half: the level and whether this handle took RESERVED itself (a handle can go
/// from SHARED to EXCLUSIVE directly, e.g. to roll back a hot journal, without it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Held {
    pub(crate) level: LockLevel,
    reserved: bool,
}

impl Held {
    pub(crate) const NONE: Held = Held {
        level: LockLevel::None,
        reserved: false,
    };
}

/// Why a lock was refused (becomes the `SQLITE_BUSY` message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Conflict {
    /// A writer is committing or waiting to (PENDING or EXCLUSIVE held elsewhere).
    Writer,
    /// Another connection already holds RESERVED (is writing a transaction).
    Reserved,
    /// Other connections still read (hold SHARED).
    Readers,
}

impl Conflict {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Conflict::Writer => "another connection is writing it (holds PENDING or EXCLUSIVE)",
            Conflict::Reserved => "another connection has a write transaction (holds RESERVED)",
            Conflict::Readers => "other connections are still reading it (hold SHARED)",
        }
    }
}

/// Lock state of every open file name of a VFS instance.
#[derive(Debug, Default)]
pub(crate) struct LockTable {
    entries: HashMap<Rc<str>, Entry>,
}

impl LockTable {
    /// A handle of `name` was opened.
    pub(crate) fn attach(&mut self, name: &Rc<str>) {
        self.entries.entry(name.clone()).or_default().handles += 1;
    }

    /// A handle of `name` was closed; releases whatever it held.
    pub(crate) fn detach(&mut self, name: &Rc<str>, held: &mut Held) {
        self.unlock(name, held, LockLevel::None);
        if let Some(e) = self.entries.get_mut(name) {
            e.handles = e.handles.saturating_sub(1);
            if e.handles == 0 {
                self.entries.remove(name);
            }
        }
    }

    /// Whether any handle holds any lock (SHARED or more) on any file: a transaction is open.
    pub(crate) fn any_held(&self) -> bool {
        self.entries
            .values()
            .any(|e| e.shared > 0 || e.reserved || e.pending || e.exclusive)
    }

    /// Whether any handle holds RESERVED or more.
    pub(crate) fn reserved(&self, name: &str) -> bool {
        self.entries
            .get(name)
            .is_some_and(|e| e.reserved || e.pending || e.exclusive)
    }

    /// Raises `held` to `level` (no-op if already there).
    pub(crate) fn lock(
        &mut self,
        name: &Rc<str>,
        held: &mut Held,
        level: LockLevel,
    ) -> Result<(), Conflict> {
        if held.level >= level {
            return Ok(());
        }
        let e = self.entries.entry(name.clone()).or_default();
        match level {
            LockLevel::None => Ok(()),
            LockLevel::Shared => {
                if e.pending || e.exclusive {
                    return Err(Conflict::Writer);
                }
                e.shared += 1;
                held.level = LockLevel::Shared;
                Ok(())
            }
            LockLevel::Reserved => {
                if e.reserved {
                    return Err(Conflict::Reserved);
                }
                e.reserved = true;
                held.reserved = true;
                held.level = LockLevel::Reserved;
                Ok(())
            }
            LockLevel::Pending | LockLevel::Exclusive => {
                if held.level < LockLevel::Pending {
                    if e.pending || e.exclusive {
                        return Err(Conflict::Writer);
                    }
                    e.pending = true;
                    held.level = LockLevel::Pending;
                }
                if level == LockLevel::Pending {
                    return Ok(());
                }
                // Only this handle may still hold SHARED.
                if e.shared > 1 {
                    return Err(Conflict::Readers);
                }
                e.exclusive = true;
                held.level = LockLevel::Exclusive;
                Ok(())
            }
        }
    }

    /// Lowers `held` to `level` (SHARED or NONE; no-op if already there or below).
    pub(crate) fn unlock(&mut self, name: &str, held: &mut Held, level: LockLevel) {
        if held.level <= level {
            return;
        }
        if let Some(e) = self.entries.get_mut(name) {
            if held.reserved {
                e.reserved = false;
            }
            if held.level >= LockLevel::Pending {
                e.pending = false;
            }
            if held.level == LockLevel::Exclusive {
                e.exclusive = false;
            }
            if level == LockLevel::None && held.level >= LockLevel::Shared {
                e.shared = e.shared.saturating_sub(1);
            }
        }
        held.reserved = false;
        held.level = level;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_excludes_readers_and_writers() {
        let mut t = LockTable::default();
        let n: Rc<str> = Rc::from("db");
        let (mut a, mut b) = (Held::NONE, Held::NONE);
        t.attach(&n);
        t.attach(&n);
        t.lock(&n, &mut a, LockLevel::Shared).unwrap();
        t.lock(&n, &mut b, LockLevel::Shared).unwrap();
        t.lock(&n, &mut a, LockLevel::Reserved).unwrap();
        assert_eq!(
            t.lock(&n, &mut b, LockLevel::Reserved),
            Err(Conflict::Reserved)
        );
        assert!(t.reserved("db"));
        // a waits for b's SHARED: keeps PENDING, new readers are refused.
        assert_eq!(
            t.lock(&n, &mut a, LockLevel::Exclusive),
            Err(Conflict::Readers)
        );
        assert_eq!(a.level, LockLevel::Pending);
        t.unlock("db", &mut b, LockLevel::None);
        assert_eq!(t.lock(&n, &mut b, LockLevel::Shared), Err(Conflict::Writer));
        t.lock(&n, &mut a, LockLevel::Exclusive).unwrap();
        t.unlock("db", &mut a, LockLevel::Shared);
        assert!(!t.reserved("db"));
        t.lock(&n, &mut b, LockLevel::Shared).unwrap();
        t.detach(&n, &mut a);
        t.detach(&n, &mut b);
        assert!(t.entries.is_empty());
    }
}
