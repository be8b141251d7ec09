//! [`WaiterSlots`]: a fixed number of waker cells, each claimed by at most one wait.

use core::task::Waker;

use super::waker::AtomicWaker;
use crate::sync::atomic::{AtomicUsize, Ordering};

/// The most waiter slots a fixed latch can have: the slots' claim bits fit in one `u32`.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedLatch, MAX_WAITERS};
///
/// assert_eq!(MAX_WAITERS, 32);
/// static WIDE: FixedLatch<MAX_WAITERS> = FixedLatch::new(1);
/// assert_eq!(WIDE.waiting(), 0);
/// ```
pub const MAX_WAITERS: usize = 32;

/// Refuses `W` outside `1..=MAX_WAITERS` when a latch type is instantiated.
pub(crate) struct CheckWaiters<const W: usize>;

impl<const W: usize> CheckWaiters<W> {
    /// Evaluated at compile time by every constructor.
    pub(crate) const OK: () = assert!(
        W >= 1 && W <= MAX_WAITERS,
        "a fixed latch has between 1 and tally_latch::fixed::MAX_WAITERS waiter slots"
    );
}

/// `wakers[i]` belongs to the wait that set bit `i` of `claimed`, for as long as it is set.
///
/// A wait claims a slot on its first poll that finds the latch still counting and gives it
/// back as soon as it finishes (in any form) or is dropped, so a slot is held only by a wait
/// that is parked right now. Generic over the cells so that `WaiterSlots<[AtomicWaker; W]>`
/// coerces to the `W`-free `WaiterSlots<[AtomicWaker]>` the wait loop is written over.
pub(crate) struct WaiterSlots<S: ?Sized> {
    /// Bit `i` set: slot `i` is claimed. Bits at and above the number of cells stay clear.
    claimed: AtomicUsize,
    wakers: S,
}

impl<const W: usize> WaiterSlots<[AtomicWaker; W]> {
    crate::sync::const_fn! {
        /// `W` free slots.
        pub(crate) fn new() -> Self {
            Self {
                claimed: AtomicUsize::new(0),
                wakers: new_wakers(),
            }
        }
    }
}

#[cfg(not(loom))]
const fn new_wakers<const W: usize>() -> [AtomicWaker; W] {
    [const { AtomicWaker::new() }; W]
}

#[cfg(loom)]
fn new_wakers<const W: usize>() -> [AtomicWaker; W] {
    core::array::from_fn(|_| AtomicWaker::new())
}

impl WaiterSlots<[AtomicWaker]> {
    /// Claims the lowest free slot, or `None` if every slot is taken.
    pub(crate) fn claim(&self) -> Option<usize> {
        let all = usize::MAX >> (usize::BITS as usize - self.wakers.len());
        // Relaxed: only a first guess for the compare-exchange, which re-reads the word.
        let mut claimed = self.claimed.load(Ordering::Relaxed);
        loop {
            let free = !claimed & all;
            if free == 0 {
                return None;
            }
            let slot = free.trailing_zeros() as usize;
            // Acquire on success: pairs with the Release in `release`, so the previous
            // owner's `take` of this cell happens-before our `register` on it. Relaxed on
            // failure: the loop only retries with the value it read.
            match self.claimed.compare_exchange_weak(
                claimed,
                claimed | 1 << slot,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(slot),
                Err(actual) => claimed = actual,
            }
        }
    }

    /// Stores `waker` in `slot`, which the caller holds; it replaces the one stored before.
    pub(crate) fn register(&self, slot: usize, waker: &Waker) {
        self.wakers[slot].register(waker);
    }

    /// Gives `slot`, which the caller holds, back: its waker is taken out, then the slot is
    /// marked free. The taken waker is dropped only after that, so a waker whose drop
    /// panics cannot leave the slot claimed.
    pub(crate) fn release(&self, slot: usize) {
        let waker = self.wakers[slot].take();
        // Release: our `take` happens-before the next claimant's `register` (see `claim`).
        self.claimed.fetch_and(!(1 << slot), Ordering::Release);
        drop(waker);
    }

    /// How many slots are claimed right now.
    pub(crate) fn claimed(&self) -> usize {
        // Relaxed: a diagnostic snapshot; nothing is read on the strength of it.
        self.claimed.load(Ordering::Relaxed).count_ones() as usize
    }

    /// The number of slots.
    pub(crate) fn len(&self) -> usize {
        self.wakers.len()
    }

    /// Wakes the waker in every slot, claimed or not (an empty cell costs two atomic
    /// operations). If a waker panics, the slots after it are still woken while the panic
    /// unwinds; a second panic from those wakers aborts, as any panic in a destructor
    /// during unwinding does.
    pub(crate) fn wake_all(&self) {
        let mut rest = WakeRest {
            wakers: &self.wakers,
            next: 0,
        };
        while let Some(waker) = rest.wakers.get(rest.next) {
            rest.next += 1;
            waker.wake();
        }
    }
}

/// Wakes `wakers[next..]` when dropped: after a normal `wake_all` that is nothing; after a
/// panicking waker it is every slot the loop had not reached.
struct WakeRest<'a> {
    wakers: &'a [AtomicWaker],
    next: usize,
}

impl Drop for WakeRest<'_> {
    fn drop(&mut self) {
        for waker in &self.wakers[self.next..] {
            waker.wake();
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn slots<const W: usize>() -> WaiterSlots<[AtomicWaker; W]> {
        WaiterSlots::new()
    }

    #[test]
    fn claims_lowest_free_slot_until_full() {
        let slots = slots::<3>();
        let slots: &WaiterSlots<[AtomicWaker]> = &slots;
        assert_eq!(slots.claim(), Some(0));
        assert_eq!(slots.claim(), Some(1));
        assert_eq!(slots.claim(), Some(2));
        assert_eq!(slots.claim(), None);
        assert_eq!(slots.claimed(), 3);
        slots.release(1);
        assert_eq!(slots.claimed(), 2);
        assert_eq!(slots.claim(), Some(1));
    }

    #[test]
    fn thirty_two_slots_use_every_bit() {
        let slots = slots::<MAX_WAITERS>();
        let slots: &WaiterSlots<[AtomicWaker]> = &slots;
        for expected in 0..MAX_WAITERS {
            assert_eq!(slots.claim(), Some(expected));
        }
        assert_eq!(slots.claim(), None);
    }

    #[test]
    fn release_drops_the_registered_waker() {
        let slots = slots::<1>();
        let slots: &WaiterSlots<[AtomicWaker]> = &slots;
        let slot = slots.claim().unwrap();
        slots.register(slot, Waker::noop());
        slots.release(slot);
        assert!(slots.wakers[0].take().is_none());
    }
}
