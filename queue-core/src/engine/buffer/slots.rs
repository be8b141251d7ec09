//! The limit and slot logic: what a capacity bounds, which buffer serves it, and the slot
//! counter for the buffers that do not bound themselves.
//!
//! A limit that the ring can hold ([`Limit::ring_bound`]: bounded by buffered or unfinished
//! items, up to [`MAX_SLOTS`]) is enforced by the ring's own words, with no counter here:
//! that is what takes the slot counter's two locked instructions off the put and the get.
//! Every other bound (above `MAX_SLOTS`, and any bound of a journaled queue: those use a
//! growable buffer) is enforced by [`Slots`]: a put takes a slot before it draws its
//! ticket, a get (buffered limit) or an ending (unfinished limit) gives it back. An
//! unbounded queue needs none.

use super::ring::{Bound, MAX_SLOTS};
use crate::sync::{AtomicUsize, Ordering};

/// What a capacity bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Nothing: puts never wait.
    None,
    /// Buffered items: a slot is taken by a put and given back by a get.
    Buffered(usize),
    /// Unfinished items (buffered + in flight): a slot is taken by a put and given back
    /// when the item ends (resolved, abandoned or discarded).
    Unfinished(usize),
}

impl Limit {
    /// The ring bound that serves this limit, if a ring can: a bounded limit of at most
    /// [`MAX_SLOTS`] (the ring preallocates `n.next_power_of_two()` slots).
    pub(crate) fn ring_bound(self) -> Option<Bound> {
        match self {
            Limit::Buffered(n) if n <= MAX_SLOTS => Some(Bound::Buffered(n as u64)),
            Limit::Unfinished(n) if n <= MAX_SLOTS => Some(Bound::Unfinished(n as u64)),
            _ => None,
        }
    }

    /// The bound, `None` if unbounded.
    pub(crate) fn capacity(self) -> Option<usize> {
        match self {
            Limit::None => None,
            Limit::Buffered(n) | Limit::Unfinished(n) => Some(n),
        }
    }
}

/// The slot counter of a limit the buffer does not enforce itself.
///
/// `taken` is never above the limit and is given back exactly once per slot taken; with
/// [`Limit::None`] it stays zero and every take succeeds.
#[derive(Debug)]
pub(crate) struct Slots {
    limit: Limit,
    taken: AtomicUsize,
}

impl Slots {
    #[cfg(all(test, not(loom)))]
    pub(crate) fn new(limit: Limit) -> Self {
        Slots {
            limit,
            taken: AtomicUsize::new(0),
        }
    }

    #[cfg(all(test, not(loom)))]
    pub(crate) fn limit(&self) -> Limit {
        self.limit
    }

    /// A counter with `taken` slots already taken (a queue moving its items to a
    /// growable buffer).
    pub(crate) fn with_taken(limit: Limit, taken: usize) -> Self {
        let taken = if limit == Limit::None { 0 } else { taken };
        Slots {
            limit,
            taken: AtomicUsize::new(taken),
        }
    }

    /// Takes a slot, leaving `owed` free slots alone (those the putter turns of
    /// `turns.rs` keep for woken putters); `false` if the limit is reached.
    #[inline]
    pub(crate) fn try_take(&self, owed: usize) -> bool {
        let max = match self.limit {
            Limit::None => return true,
            Limit::Buffered(n) | Limit::Unfinished(n) => n.saturating_sub(owed),
        };
        // Relaxed: the counter only arbitrates slots; the items travel through the buffer,
        // and a waiting putter re-checks it after registering, which the waiter count
        // orders against the notification that follows every give-back.
        let mut taken = self.taken.load(Ordering::Relaxed);
        loop {
            if taken >= max {
                return false;
            }
            // Relaxed: as above.
            match self.taken.compare_exchange_weak(
                taken,
                taken + 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => taken = now,
            }
        }
    }

    /// Gives `n` slots back. Returns whether any came back (then `n` putters may proceed).
    #[inline]
    pub(crate) fn give_back(&self, n: usize) -> bool {
        if self.limit == Limit::None || n == 0 {
            return false;
        }
        // Relaxed: see `try_take`; the caller's notification orders it before any putter's
        // re-check.
        let before = self.taken.fetch_sub(n, Ordering::Relaxed);
        debug_assert!(before >= n, "more slots given back than taken");
        true
    }

    /// Whether a get gives a slot back (a buffered limit).
    pub(crate) fn freed_by_get(&self) -> bool {
        matches!(self.limit, Limit::Buffered(_))
    }

    /// Whether an ending gives a slot back (an unfinished limit).
    pub(crate) fn freed_by_ending(&self) -> bool {
        matches!(self.limit, Limit::Unfinished(_))
    }

    /// Slots taken now (a snapshot).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn taken(&self) -> usize {
        // Relaxed: a snapshot.
        self.taken.load(Ordering::Relaxed)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn small_bounded_limits_go_to_the_ring() {
        assert_eq!(Limit::Buffered(1).ring_bound(), Some(Bound::Buffered(1)));
        assert_eq!(
            Limit::Unfinished(MAX_SLOTS).ring_bound(),
            Some(Bound::Unfinished(MAX_SLOTS as u64))
        );
        assert_eq!(Limit::Buffered(MAX_SLOTS + 1).ring_bound(), None);
        assert_eq!(Limit::Buffered(usize::MAX).ring_bound(), None);
        assert_eq!(Limit::None.ring_bound(), None);
        assert_eq!(Limit::None.capacity(), None);
        assert_eq!(Limit::Unfinished(3).capacity(), Some(3));
    }

    #[test]
    fn a_slot_counter_stops_at_its_limit_and_takes_back_what_it_gave() {
        let slots = Slots::new(Limit::Buffered(2));
        assert!(slots.try_take(0));
        assert!(slots.try_take(0));
        assert!(!slots.try_take(0));
        assert_eq!(slots.taken(), 2);
        assert!(slots.give_back(1));
        assert!(slots.try_take(0));
        assert!(!slots.give_back(0));
        assert!(slots.give_back(2));
        assert_eq!(slots.taken(), 0);
        assert!(!slots.try_take(2), "both free slots are owed");
        assert!(slots.try_take(1));
        assert!(!slots.try_take(1), "the one free slot left is owed");
        assert!(slots.give_back(1));
        assert!(slots.freed_by_get() && !slots.freed_by_ending());
    }

    #[test]
    fn no_limit_never_refuses_and_counts_nothing() {
        let slots = Slots::new(Limit::None);
        for _ in 0..10 {
            assert!(slots.try_take(0));
        }
        assert_eq!(slots.taken(), 0);
        assert!(!slots.give_back(3));
        assert_eq!(slots.limit(), Limit::None);
        assert!(!slots.freed_by_get() && !slots.freed_by_ending());
    }

    #[test]
    fn an_unfinished_limit_is_freed_by_endings() {
        let slots = Slots::new(Limit::Unfinished(1));
        assert!(slots.try_take(0));
        assert!(!slots.try_take(0));
        assert!(slots.freed_by_ending() && !slots.freed_by_get());
    }

    #[cfg(feature = "std")]
    #[test]
    fn racing_takes_never_exceed_the_limit() {
        extern crate std;
        let slots = Slots::new(Limit::Buffered(3));
        let won: usize = std::thread::scope(|s| {
            let handles: alloc::vec::Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..4).filter(|_| slots.try_take(0)).count()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(won, 3);
        assert_eq!(slots.taken(), 3);
    }
}
