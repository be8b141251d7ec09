//! The waiters of one heap latch: their wakers in a slab behind a lock, taken all at once by
//! the terminal transition and woken after the lock is released.
//!
//! A wait stores a clone of its waker in a free slot on its first pending poll (the slab
//! grows like a `Vec`, so a wait allocates nothing of its own) and keeps the slot's index.
//! The terminal notification closes the slab and takes every waker out in one critical
//! section, then wakes them with no lock held. Two things follow.
//!
//! - **User code never runs under the lock.** A waker that re-enters the latch, or an
//!   executor that polls the woken task inline from `wake`, finds the latch ended and the
//!   slab closed; nothing it does can wait on the lock the notification holds.
//! - **A panicking waker** cannot leave the others asleep: the rest are still woken (under
//!   `std` each panic is caught and the first is resumed afterwards; without `std` a guard
//!   wakes the rest while the panic unwinds).
//!
//! A finished or dropped wait gives its slot back only while the latch still counts: once
//! the latch has ended, the slab is closed (or about to be) and its wakers leave with it.
//!
//! The lock: `std`'s mutex; without `std`, a critical section with the `critical-section`
//! feature (so a count-down in an interrupt handler cannot deadlock against a thread that
//! holds it), else spin's spinlock. Its critical sections are short and run no user code
//! but a waker's `clone`.

use alloc::vec::Vec;
use core::task::Waker;

/// The wakers of the waits parked on one latch.
pub(crate) struct Waiters {
    list: Lock,
}

#[cfg(loom)]
type Lock = loom::sync::Mutex<List>;
#[cfg(all(not(loom), feature = "std"))]
type Lock = std::sync::Mutex<List>;
#[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
type Lock = critical_section::Mutex<core::cell::RefCell<List>>;
#[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
type Lock = spin::Mutex<List>;

struct List {
    /// `wakers[i]` is the waker of the wait that holds slot `i`, or `None` if `i` is free.
    wakers: Vec<Option<Waker>>,
    /// The free slots below `wakers.len()`.
    free: Vec<usize>,
    /// Set by the terminal notification, which took every waker: nothing is stored after.
    closed: bool,
}

/// Whether a wait holds a slot now, after [`Waiters::park`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parked {
    /// The waker is stored in this slot.
    In(usize),
    /// The slab is closed: the latch has ended.
    Closed,
}

impl Waiters {
    /// No waiters.
    pub(crate) fn new() -> Self {
        let list = List {
            wakers: Vec::new(),
            free: Vec::new(),
            closed: false,
        };
        #[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
        let list = core::cell::RefCell::new(list);
        Self {
            list: Lock::new(list),
        }
    }

    /// Runs `f` on the slab, under the lock.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(&mut List) -> R) -> R {
        #[cfg(loom)]
        return f(&mut self.list.lock().unwrap());
        // A panic under the lock (only the allocator's) leaves the slab consistent: every
        // step below is one push, pop or store.
        #[cfg(all(not(loom), feature = "std"))]
        return f(&mut self
            .list
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner));
        #[cfg(all(not(loom), not(feature = "std"), feature = "critical-section"))]
        return critical_section::with(|cs| f(&mut self.list.borrow_ref_mut(cs)));
        #[cfg(all(not(loom), not(feature = "std"), not(feature = "critical-section")))]
        return f(&mut self.list.lock());
    }

    /// Stores `waker` in `slot` (a slot this wait already holds) or in a new one.
    pub(crate) fn park(&self, slot: Option<usize>, waker: &Waker) -> Parked {
        let (parked, replaced) = self.with(|list| {
            if list.closed {
                return (Parked::Closed, None);
            }
            if let Some(slot) = slot {
                let stored = &mut list.wakers[slot];
                if stored
                    .as_ref()
                    .is_some_and(|stored| stored.will_wake(waker))
                {
                    return (Parked::In(slot), None);
                }
                return (Parked::In(slot), stored.replace(waker.clone()));
            }
            let slot = match list.free.pop() {
                Some(slot) => {
                    list.wakers[slot] = Some(waker.clone());
                    slot
                }
                None => {
                    list.wakers.push(Some(waker.clone()));
                    list.wakers.len() - 1
                }
            };
            (Parked::In(slot), None)
        });
        // Dropped with no lock held: a waker's drop is user code.
        drop(replaced);
        parked
    }

    /// Gives `slot` back, unless the slab is closed (then its waker has left with the
    /// others).
    pub(crate) fn leave(&self, slot: usize) {
        let waker = self.with(|list| {
            if list.closed {
                return None;
            }
            list.free.push(slot);
            list.wakers[slot].take()
        });
        // Dropped with no lock held, as in `park`.
        drop(waker);
    }

    /// Closes the slab and takes every waker out, for the terminal notification.
    fn close(&self) -> Vec<Option<Waker>> {
        let (wakers, free) = self.with(|list| {
            list.closed = true;
            (
                core::mem::take(&mut list.wakers),
                core::mem::take(&mut list.free),
            )
        });
        drop(free);
        wakers
    }

    /// Wakes every parked wait, for good, even if some wakers panic. Under `std`, every panic
    /// is caught so that the rest are still woken; the first is then resumed, unless this
    /// thread is already unwinding (then it is dropped, since a second panic would abort).
    #[cfg(feature = "std")]
    pub(crate) fn wake_all(&self) {
        use core::panic::AssertUnwindSafe;
        use std::panic::{catch_unwind, resume_unwind};

        let mut first_panic = None;
        for waker in self.close().into_iter().flatten() {
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                first_panic.get_or_insert(panic);
            }
        }
        if let Some(panic) = first_panic {
            if !std::thread::panicking() {
                resume_unwind(panic);
            }
        }
    }

    /// Wakes every parked wait, for good. Without `std` a panic cannot be caught: a guard
    /// wakes the rest while the panic unwinds (a second panicking waker in the same
    /// notification then aborts, as any panic during unwinding does).
    #[cfg(not(feature = "std"))]
    pub(crate) fn wake_all(&self) {
        struct WakeRest(alloc::vec::IntoIter<Option<Waker>>);

        impl Drop for WakeRest {
            fn drop(&mut self) {
                self.0.by_ref().flatten().for_each(Waker::wake);
            }
        }

        let mut rest = WakeRest(self.close().into_iter());
        // A panic leaves the rest in the guard, which wakes them as it unwinds.
        for waker in rest.0.by_ref().flatten() {
            waker.wake();
        }
    }

    /// Runs `then`, then wakes every parked wait; if `then` panics, the waits are woken
    /// while the panic unwinds, so user code that runs before the notification cannot leave
    /// waiters asleep on an ended latch.
    #[inline]
    pub(crate) fn wake_all_after(&self, then: impl FnOnce()) {
        struct WakeOnDrop<'a>(&'a Waiters);

        impl Drop for WakeOnDrop<'_> {
            fn drop(&mut self) {
                self.0.wake_all();
            }
        }

        let wake = WakeOnDrop(self);
        then();
        drop(wake);
    }
}
