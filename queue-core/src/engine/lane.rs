//! The lane: items that come back for another delivery (a [`retry`], or a redelivery
//! under the redelivery policy), with their ids and the attempt they will be delivered as.
//!
//! Returned items travel beside the buffer, not through it: a graceful shutdown closes
//! the buffer (which is what makes "accepted" and "shut down" exclusive) while a returned
//! item was accepted long ago; a returned item takes no slot of a bounded buffer (it was
//! already counted when it was first taken, and a dropped delivery cannot wait for room);
//! and a ring slot holds an item alone, its id being its ticket.
//!
//! While the lane holds items, gets alternate between it and the buffer
//! ([`serves_next`](Lane::serves_next)): returned items go out oldest first, every other
//! delivery, so a returned item waits for at most twice as many deliveries as there are
//! returned items ahead of it (and one more), however large the fresh backlog; and fresh
//! items keep moving even if every delivery comes back.
//!
//! The lane is closed by an immediate shutdown (and by a graceful one when no return may
//! come after it), before it is drained, so a return racing the drain either
//! lands in the lane (and the drain hands it back) or finds it closed (and its caller
//! deals with the item): never both, never neither.
//!
//! [`retry`]: crate::Delivery::retry

use alloc::vec::Vec;

use concurrent_queue::{ConcurrentQueue, PushError};

use crate::job_id::JobId;
use crate::sync::{AtomicUsize, Ordering};
use crate::unwind::each_despite_panics;

/// An item on its way back, with the attempt it will be delivered as.
#[derive(Debug)]
pub(crate) struct Returned<T> {
    pub(crate) id: JobId,
    pub(crate) attempt: u32,
    pub(crate) item: T,
}

/// See the module docs.
pub(crate) struct Lane<T> {
    items: ConcurrentQueue<Returned<T>>,
    /// Items in the lane or on their way in: raised before a push (lowered again if the
    /// push fails), lowered before a pop (raised again if it finds nothing), so it never
    /// counts an item on its way out. Every get reads it (one load of a line that only
    /// returns write), so an empty lane costs a get nothing else; the ledger counts these
    /// items as buffered (see `tally.rs`).
    len: AtomicUsize,
    /// Gets that found the lane holding items: the even ones serve it.
    turn: AtomicUsize,
}

impl<T> Lane<T> {
    pub(crate) fn new() -> Self {
        Lane {
            items: ConcurrentQueue::unbounded(),
            len: AtomicUsize::new(0),
            turn: AtomicUsize::new(0),
        }
    }

    /// Puts a returned item at the back of the lane, or hands it back if the lane is
    /// closed.
    pub(crate) fn push(&self, returned: Returned<T>) -> Result<(), Returned<T>> {
        // A closed lane refuses before it counts: a refused item never left flight, so no
        // ledger snapshot may count it buffered. (A push racing the close itself may still
        // be counted for that moment, as any item on its way in is.)
        if self.items.is_closed() {
            return Err(returned);
        }
        // Release: a ledger snapshot that acquires this count sees the item's take (it
        // happened before the item came back), so the snapshot counts no returned item it
        // has not seen taken (see `tally.rs`). The push carries the item's own ordering,
        // and the getters' notification that follows orders both before a waiting get's
        // re-check.
        self.len.fetch_add(1, Ordering::Release);
        match self.items.push(returned) {
            Ok(()) => Ok(()),
            Err(PushError::Closed(returned) | PushError::Full(returned)) => {
                // Relaxed: undoing our own count.
                self.len.fetch_sub(1, Ordering::Relaxed);
                Err(returned)
            }
        }
    }

    /// Whether the lane may hold an item: the check every get makes.
    #[inline(always)]
    pub(crate) fn may_hold(&self) -> bool {
        // Relaxed: a get that misses an item here either was not waiting (it tried too
        // early, which is no loss) or has counted itself in as a waiter after the return's
        // notification claimed the getters' word, and that read-modify-write orders the
        // push before its re-check (see `waiters.rs`).
        self.len.load(Ordering::Relaxed) != 0
    }

    /// Whether this get serves the lane (every other get that found it holding items).
    #[inline]
    pub(crate) fn serves_next(&self) -> bool {
        // Relaxed: a fairness count; the pop carries the item's ordering.
        self.turn.fetch_add(1, Ordering::Relaxed) % 2 == 0
    }

    /// Items in the lane or on their way in (a snapshot).
    pub(crate) fn len(&self) -> usize {
        // Acquire: an observer; see `tally.rs` for the order of the ledger's reads.
        self.len.load(Ordering::Acquire)
    }

    /// The oldest returned item.
    pub(crate) fn pop(&self) -> Option<Returned<T>> {
        // Lowered first, and never below zero, so the count never reads more items than
        // the lane holds. Relaxed (both): the pop carries the item's ordering.
        self.len
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .ok()?;
        match self.items.pop() {
            Ok(returned) => Some(returned),
            Err(_) => {
                // The item counted is still being pushed, or failed to be.
                // Relaxed: as above.
                self.len.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Closes the lane: returns from now on are handed back.
    pub(crate) fn close(&self) {
        self.items.close();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.items.is_closed()
    }

    /// Takes every item in the lane (after a close, every item it will ever hold, once the
    /// pushes that raced the close are counted).
    pub(crate) fn drain(&self) -> Vec<Returned<T>> {
        let mut drained = Vec::new();
        while let Some(returned) = self.pop() {
            drained.push(returned);
        }
        drained
    }
}

impl<T> Drop for Lane<T> {
    /// Drops every item, even if some item's `Drop` panics (see the queue's `Drop`).
    fn drop(&mut self) {
        let items = &self.items;
        each_despite_panics(|| items.pop().ok(), drop);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn returned(id: u64, attempt: u32) -> Returned<&'static str> {
        Returned {
            id: JobId::new(id),
            attempt,
            item: "x",
        }
    }

    #[test]
    fn the_lane_serves_every_other_get() {
        let lane = Lane::<u8>::new();
        let served: Vec<bool> = (0..6).map(|_| lane.serves_next()).collect();
        assert_eq!(served, [true, false, true, false, true, false]);
    }

    #[test]
    fn returns_come_out_oldest_first_and_are_counted() {
        let lane = Lane::new();
        assert!(!lane.may_hold());
        assert!(lane.pop().is_none());
        lane.push(returned(4, 2)).unwrap();
        lane.push(returned(1, 3)).unwrap();
        assert!(lane.may_hold());
        assert_eq!(lane.len(), 2);
        let first = lane.pop().unwrap();
        assert_eq!((first.id.get(), first.attempt), (4, 2));
        assert_eq!(lane.len(), 1);
        assert_eq!(lane.pop().unwrap().id.get(), 1);
        assert!(lane.pop().is_none());
        assert_eq!(lane.len(), 0);
    }

    #[test]
    fn a_closed_lane_hands_returns_back_and_drains_what_it_holds() {
        let lane = Lane::new();
        lane.push(returned(0, 2)).unwrap();
        lane.close();
        assert!(lane.is_closed());
        assert_eq!(lane.push(returned(1, 2)).unwrap_err().id.get(), 1);
        let drained = lane.drain();
        assert_eq!(drained.len(), 1);
        assert_eq!(lane.len(), 0);
    }
}
