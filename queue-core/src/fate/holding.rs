//! The items held back until they are due: retried with a delay
//! ([`Delivery::retry_at`](crate::Delivery::retry_at)), waiting outside the lane.
//!
//! A held item is counted buffered, as a returned item is (see `engine/mod.rs`'s
//! `ledger_holding`): the count is raised once the item is held and lowered before it
//! moves on, into the lane when it is due, or out of the queue when an immediate shutdown
//! takes it.
//!
//! Each held item is filed under a ticket that the deadline future keeps; the future, when
//! its deadline passes or when it is dropped, moves that one item into the lane. A
//! shutdown closes the store: an immediate one takes every held item (to hand back), a
//! graceful one under a policy that takes no returns after it moves every held item into
//! the lane at once, before the lane closes, so the drain delivers them.
//!
//! The store is a map under a lock: a held item must be found by its ticket, and every one
//! of them must be found by a shutdown, which no lock-free queue of the field offers. The
//! lock is held for a map insert or removal and a push into the lane; no user code runs
//! under it (items are dropped, and getters woken, after it is released). It is
//! `std::sync::Mutex` with `std`, a critical section with `critical-section` (so that an
//! interrupt handler may retry with a delay), and otherwise a spinning flag, which, as the
//! buffer's steps, an interrupt handler must not meet halfway (see the crate docs).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::engine::RawQueue;
use crate::job_id::JobId;
use crate::sync::{AtomicU64, Ordering};
use crate::unwind::each_despite_panics;

/// The key a held item is filed under; kept by the future that moves it on.
pub(crate) type Ticket = u64;

/// A held item: the id, the number of the delivery it waits for, and the item.
pub(crate) struct Held<T> {
    pub(crate) id: JobId,
    pub(crate) attempt: u32,
    pub(crate) item: T,
}

struct State<T> {
    items: BTreeMap<Ticket, Held<T>>,
    next: Ticket,
    /// No item may be held any more: a shutdown took or moved them.
    closed: bool,
}

/// The store; see the module docs.
pub(crate) struct Holding<T> {
    state: Lock<State<T>>,
    /// The number of items in `items`, for the ledger, which reads it without the lock.
    count: AtomicU64,
}

/// What [`Holding::release`] did with a ticket's item.
pub(crate) enum Released<T> {
    /// Moved into the lane; a getter is to be told.
    Returned,
    /// Nothing was held under the ticket any more (a shutdown took or moved it).
    Gone,
    /// The lane was closed: the caller keeps the item, no longer counted held.
    Refused(Held<T>),
}

impl<T> Holding<T> {
    pub(crate) fn new() -> Self {
        Holding {
            state: Lock::new(State {
                items: BTreeMap::new(),
                next: 0,
                closed: false,
            }),
            count: AtomicU64::new(0),
        }
    }

    /// Holds `held`; hands it back if the store is closed.
    pub(crate) fn hold(&self, held: Held<T>) -> Result<Ticket, Held<T>> {
        self.state.with(|state| {
            if state.closed {
                return Err(held);
            }
            let ticket = state.next;
            state.next += 1;
            state.items.insert(ticket, held);
            // Release: a ledger that reads the count sees the item's take (see `tally.rs`).
            self.count.fetch_add(1, Ordering::Release);
            Ok(ticket)
        })
    }

    /// Moves the item held under `ticket` into `raw`'s lane, without waking anyone.
    pub(crate) fn release(&self, ticket: Ticket, raw: &RawQueue<T>) -> Released<T> {
        self.state.with(|state| {
            let Some(held) = state.items.remove(&ticket) else {
                return Released::Gone;
            };
            self.lower(1);
            match raw.give_back_unannounced(held.id, held.attempt, held.item) {
                Ok(()) => Released::Returned,
                Err(item) => Released::Refused(Held { item, ..held }),
            }
        })
    }

    /// Closes the store and moves every held item into `raw`'s lane, oldest hold first,
    /// without waking anyone. Returns how many moved and those the lane refused.
    pub(crate) fn release_all(&self, raw: &RawQueue<T>) -> (usize, Vec<Held<T>>) {
        let mut refused = Vec::new();
        let moved = self.state.with(|state| {
            state.closed = true;
            let mut moved = 0;
            while let Some((_, held)) = state.items.pop_first() {
                self.lower(1);
                match raw.give_back_unannounced(held.id, held.attempt, held.item) {
                    Ok(()) => moved += 1,
                    Err(item) => refused.push(Held { item, ..held }),
                }
            }
            moved
        });
        (moved, refused)
    }

    /// Closes the store and takes every held item, oldest hold first; they are no longer
    /// counted held.
    pub(crate) fn take_all(&self) -> Vec<Held<T>> {
        self.state.with(|state| {
            state.closed = true;
            let items = core::mem::take(&mut state.items);
            self.lower(items.len() as u64);
            items.into_values().collect()
        })
    }

    /// The number of items held. Acquire: pairs with the raise in `hold`.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }

    /// Lowers the count before the items move on. Release: a ledger that sees them in
    /// their next place sees them gone from here, so none is counted twice.
    fn lower(&self, n: u64) {
        if n != 0 {
            self.count.fetch_sub(n, Ordering::Release);
        }
    }
}

impl<T> Drop for Holding<T> {
    fn drop(&mut self) {
        let items = self.state.with(|state| core::mem::take(&mut state.items));
        let mut items = items.into_values();
        each_despite_panics(|| items.next(), drop);
    }
}

// ---------------------------------------------------------------------------- the lock

/// `std::sync::Mutex`, without poisoning: nothing under it can panic but an allocation.
#[cfg(all(not(loom), feature = "std", not(feature = "critical-section")))]
struct Lock<S>(std::sync::Mutex<S>);

#[cfg(all(not(loom), feature = "std", not(feature = "critical-section")))]
impl<S> Lock<S> {
    fn new(state: S) -> Self {
        Lock(std::sync::Mutex::new(state))
    }

    fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        let mut guard = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    }
}

/// loom's mutex, so the models explore the store's interleavings.
#[cfg(loom)]
struct Lock<S>(loom::sync::Mutex<S>);

#[cfg(loom)]
impl<S> Lock<S> {
    fn new(state: S) -> Self {
        Lock(loom::sync::Mutex::new(state))
    }

    fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        f(&mut self.0.lock().unwrap())
    }
}

/// A critical section: an interrupt handler never meets the store locked.
#[cfg(all(not(loom), feature = "critical-section"))]
struct Lock<S>(critical_section::Mutex<core::cell::RefCell<S>>);

#[cfg(all(not(loom), feature = "critical-section"))]
impl<S> Lock<S> {
    fn new(state: S) -> Self {
        Lock(critical_section::Mutex::new(core::cell::RefCell::new(
            state,
        )))
    }

    fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        critical_section::with(|cs| f(&mut self.0.borrow_ref_mut(cs)))
    }
}

/// A spinning hand-off, for `no_std` without `critical-section` (see the module docs): the
/// state sits in a one-slot queue, and whoever pops it holds the lock until it pushes it
/// back.
#[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
struct Lock<S>(concurrent_queue::ConcurrentQueue<S>);

#[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
impl<S> Lock<S> {
    fn new(state: S) -> Self {
        let slot = concurrent_queue::ConcurrentQueue::bounded(1);
        // Never fails: the slot is empty and open.
        let _ = slot.push(state);
        Lock(slot)
    }

    fn with<R>(&self, f: impl FnOnce(&mut S) -> R) -> R {
        /// Puts the state back on the way out, even if `f` unwinds.
        struct Unlock<'l, S>(&'l concurrent_queue::ConcurrentQueue<S>, Option<S>);
        impl<S> Drop for Unlock<'_, S> {
            fn drop(&mut self) {
                if let Some(state) = self.1.take() {
                    // Never fails: the slot is empty while the state is out.
                    let _ = self.0.push(state);
                }
            }
        }
        let state = loop {
            match self.0.pop() {
                Ok(state) => break state,
                Err(_) => core::hint::spin_loop(),
            }
        };
        let mut unlock = Unlock(&self.0, Some(state));
        f(unlock.1.as_mut().expect("put back only on the way out"))
    }
}
