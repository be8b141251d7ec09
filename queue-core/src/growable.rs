//! The buffer of a queue the ring does not serve (unbounded, bounded above
//! [`MAX_SLOTS`](crate::ring::MAX_SLOTS), or journaled; see `buffer.rs`):
//! concurrent-queue's buffer of `(JobId, T)`, the slot counter of `slots.rs`, the three
//! counts the ring keeps in its words (ids drawn, items taken, endings), and a count of the
//! puts a shutdown revoked after they drew their id.

use alloc::vec::Vec;

use concurrent_queue::{ConcurrentQueue, PopError, PushError};

use crate::buffer::{Counts, Ended, PutRefused, Taken};
use crate::job_id::JobId;
use crate::ring::{Nothing, MAX_SLOTS};
use crate::slots::{Limit, Slots};
use crate::sync::{uninterrupted, AtomicU64, Ordering};
use crate::unwind::each_despite_panics;
use crate::waiters::Wake;

/// See the module docs.
///
/// `issued - revoked - taken` items are buffered and `taken - (ended - revoked)` are out
/// in deliveries; `issued - ended` are unfinished.
pub(crate) struct Growable<T> {
    /// Closed by shutdown: a push after `close` fails, which is what makes "accepted" and
    /// "shut down" exclusive.
    items: ConcurrentQueue<(JobId, T)>,
    /// A put takes a slot before it draws its id, so the push that follows never finds the
    /// buffer full and ids have no gaps from full-buffer retries.
    slots: Slots,
    /// Ids drawn: the next put's id.
    issued: AtomicU64,
    /// Items taken out of the buffer (by gets and the drain), minus those put back.
    taken: AtomicU64,
    /// Endings, revocations included.
    ended: AtomicU64,
    /// Puts that drew an id and found the buffer closed (a shutdown ran in between).
    revoked: AtomicU64,
}

impl<T> Growable<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        Self::resume(limit, 0, 0, Vec::new())
    }

    /// A buffer that carries on where another left off: `next_id` is the next put's id,
    /// `in_flight` items are out in deliveries, and `items` are buffered, in order (a
    /// queue moving off the ring before it is shared).
    pub(crate) fn resume(
        limit: Limit,
        next_id: u64,
        in_flight: u64,
        items: Vec<(JobId, T)>,
    ) -> Self {
        let buffered = items.len() as u64;
        let buffer = match limit {
            Limit::Buffered(n) | Limit::Unfinished(n) if n <= MAX_SLOTS => {
                ConcurrentQueue::bounded(n)
            }
            _ => ConcurrentQueue::unbounded(),
        };
        let taken = match limit {
            Limit::Unfinished(_) => buffered + in_flight,
            _ => buffered,
        };
        let growable = Growable {
            items: buffer,
            slots: Slots::with_taken(limit, taken as usize),
            issued: AtomicU64::new(next_id),
            taken: AtomicU64::new(next_id - buffered),
            ended: AtomicU64::new(next_id - buffered - in_flight),
            revoked: AtomicU64::new(0),
        };
        for entry in items {
            if growable.items.push(entry).is_err() {
                unreachable!("the buffer holds every item its limit allows");
            }
        }
        growable
    }

    /// Buffers `item` under a fresh id, leaving `owed` free slots alone (see
    /// `Slots::try_take`). `accepted` runs with the id before the item is visible to gets.
    #[inline]
    pub(crate) fn put(
        &self,
        item: T,
        owed: usize,
        accepted: impl FnOnce(JobId),
    ) -> Result<JobId, PutRefused<T>> {
        if !self.slots.try_take(owed) {
            return Err(PutRefused::Full(item));
        }
        // Relaxed: the id only has to be unique; the item travels through the buffer.
        let id = JobId::new(self.issued.fetch_add(1, Ordering::Relaxed));
        accepted(id);
        match self.push((id, item)) {
            Ok(()) => Ok(id),
            Err(PushError::Closed((_, item)) | PushError::Full((_, item))) => {
                // Closed: a shutdown ran between the caller's state check and the push.
                // (Full cannot happen: the slot taken above guarantees room.)
                // Relaxed: counted before the ending below, which releases it.
                self.revoked.fetch_add(1, Ordering::Relaxed);
                // The ending gives the slot back under an unfinished limit.
                let ended = self.end(1);
                let freed = ended.putters != Wake::No
                    || (self.slots.freed_by_get() && self.slots.give_back(1));
                Err(PutRefused::Revoked {
                    item,
                    id,
                    freed,
                    settled: ended.settled,
                })
            }
        }
    }

    /// Takes the oldest item.
    #[inline]
    pub(crate) fn take(&self) -> Result<Taken<T>, Nothing> {
        let (id, item) = match self.pop() {
            Ok(entry) => entry,
            Err(_) if self.items.is_closed() => {
                // No push succeeds after `close`, so a pop after seeing the buffer closed
                // is final. (Reading "closed" only after the first pop could have missed a
                // push that landed between that pop and the close.)
                self.pop().map_err(|_| Nothing::Closed)?
            }
            Err(_) => return Err(Nothing::Empty),
        };
        // Relaxed: a count; the ending that follows the delivery releases it.
        self.taken.fetch_add(1, Ordering::Relaxed);
        let putters = Wake::check_if(self.slots.freed_by_get() && self.slots.give_back(1));
        Ok(Taken { id, item, putters })
    }

    /// Puts an item taken out back at the end of the buffer, under its old id, leaving
    /// `owed` free slots alone. Refused (with whether a slot came free for the putters):
    /// shut down, or a buffered limit reached.
    pub(crate) fn requeue(&self, id: JobId, item: T, owed: usize) -> Result<(), (T, bool)> {
        // An unfinished limit already counts this item; a buffered limit needs a slot.
        let needs_slot = self.slots.freed_by_get();
        if needs_slot && !self.slots.try_take(owed) {
            return Err((item, false));
        }
        // Relaxed: before the push, so a get that takes it again counts it again.
        self.taken.fetch_sub(1, Ordering::Relaxed);
        match self.push((id, item)) {
            Ok(()) => Ok(()),
            Err(PushError::Closed((_, item)) | PushError::Full((_, item))) => {
                // Relaxed: as above.
                self.taken.fetch_add(1, Ordering::Relaxed);
                Err((item, needs_slot && self.slots.give_back(1)))
            }
        }
    }

    /// Records `n` endings.
    #[inline]
    pub(crate) fn end(&self, n: u64) -> Ended {
        // AcqRel: releases this ending (and the work before it) to joiners that acquire
        // `ended`; acquires the earlier endings, so the `issued` read below is not behind
        // any id they ended.
        let ended = self.ended.fetch_add(n, Ordering::AcqRel) + n;
        // Acquire: an id drawn and ended by another thread is seen with its ending.
        let settled = ended == self.issued.load(Ordering::Acquire);
        let freed = self.slots.freed_by_ending() && self.slots.give_back(n as usize);
        Ended {
            settled,
            joiners: Wake::check_if(settled),
            putters: Wake::check_if(freed),
        }
    }

    /// Items buffered or in flight.
    pub(crate) fn unfinished(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so a zero also shows the work that
        // ended, and the `issued` read below is not behind it.
        let ended = self.ended.load(Ordering::Acquire);
        // Acquire: as in `end`.
        let issued = self.issued.load(Ordering::Acquire);
        issued.saturating_sub(ended)
    }

    /// A snapshot of the counts (see the type's docs); read endings first, so no count
    /// reads negative.
    pub(crate) fn counts(&self) -> Counts {
        // Acquire (all four): an observer; each later read is not behind the earlier ones
        // (an ending is counted after its take, a take after its put, a revocation before
        // its ending).
        let ended = self.ended.load(Ordering::Acquire);
        let revoked = self.revoked.load(Ordering::Acquire);
        let taken = self.taken.load(Ordering::Acquire);
        let issued = self.issued.load(Ordering::Acquire);
        Counts {
            accepted: issued.saturating_sub(revoked),
            buffered: issued.saturating_sub(revoked + taken),
            in_flight: taken.saturating_sub(ended.saturating_sub(revoked)),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn close(&self) {
        self.items.close();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.items.is_closed()
    }

    /// Closes the buffer and takes every buffered item, in order.
    pub(crate) fn drain(&self) -> Vec<(JobId, T)> {
        self.close();
        let mut drained = Vec::with_capacity(self.len());
        while let Ok(taken) = self.take() {
            drained.push((taken.id, taken.item));
        }
        drained
    }

    /// A push that no interrupt handler can enter midway (see [`uninterrupted`]): in
    /// concurrent-queue, a pop that finds a push half done waits for its write, and a push
    /// waits for one that is installing the next block.
    #[inline]
    fn push(&self, entry: (JobId, T)) -> Result<(), PushError<(JobId, T)>> {
        uninterrupted(|| self.items.push(entry))
    }

    /// A pop that no interrupt handler can enter midway: a pop that finds another one
    /// moving the head to the next block waits for it.
    #[inline]
    fn pop(&self) -> Result<(JobId, T), PopError> {
        uninterrupted(|| self.items.pop())
    }
}

impl<T> Drop for Growable<T> {
    /// Drops every buffered item, even if some item's `Drop` panics (the first panic then
    /// propagates). The buffer's own destructor would stop at the first panic and leak the
    /// rest.
    fn drop(&mut self) {
        let items = &self.items;
        each_despite_panics(|| items.pop().ok(), drop);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn revoked<T>(refused: Result<JobId, PutRefused<T>>) -> (T, JobId, bool, bool) {
        match refused {
            Err(PutRefused::Revoked {
                item,
                id,
                freed,
                settled,
            }) => (item, id, freed, settled),
            Ok(id) => panic!("accepted as {id} by a closed buffer"),
            Err(_) => panic!("refused without drawing an id"),
        }
    }

    #[test]
    fn a_put_that_finds_the_buffer_closed_gives_its_slot_back_once() {
        for limit in [Limit::Buffered(2), Limit::Unfinished(2)] {
            let buffer = Growable::new(limit);
            buffer.put("kept", 0, |_| {}).unwrap();
            buffer.close();
            let (item, id, freed, settled) = revoked(buffer.put("late", 0, |_| {}));
            assert_eq!((item, id.get()), ("late", 1), "{limit:?}");
            assert!(freed, "{limit:?}: the slot came back");
            assert!(!settled, "{limit:?}: one item is still buffered");
            assert_eq!(buffer.slots.taken(), 1, "{limit:?}: one give-back, not two");
            let counts = buffer.counts();
            assert_eq!(
                (counts.accepted, counts.buffered, counts.in_flight),
                (1, 1, 0),
                "{limit:?}"
            );
            assert_eq!(buffer.unfinished(), 1, "{limit:?}");
            assert_eq!(buffer.drain(), [(JobId::new(0), "kept")], "{limit:?}");
        }
    }

    #[test]
    fn the_last_revocation_settles_an_empty_buffer() {
        let buffer = Growable::new(Limit::None);
        buffer.close();
        let (_, id, freed, settled) = revoked(buffer.put(7, 0, |_| {}));
        assert_eq!(id.get(), 0);
        assert!(!freed, "an unbounded buffer has no slots");
        assert!(settled);
        assert_eq!(buffer.unfinished(), 0);
        assert_eq!(buffer.counts().accepted, 0);
    }

    #[test]
    fn a_resumed_buffer_carries_its_counts_and_order() {
        let items = alloc::vec![(JobId::new(3), 'c'), (JobId::new(5), 'e')];
        let buffer = Growable::resume(Limit::Unfinished(4), 6, 1, items);
        assert_eq!(buffer.slots.taken(), 3, "buffered and in flight hold slots");
        let counts = buffer.counts();
        assert_eq!(
            (counts.accepted, counts.buffered, counts.in_flight),
            (6, 2, 1)
        );
        assert_eq!(buffer.put('g', 0, |_| {}).ok(), Some(JobId::new(6)));
        assert!(matches!(
            buffer.put('h', 0, |_| {}),
            Err(PutRefused::Full('h'))
        ));
        let first = buffer.take().ok().unwrap();
        assert_eq!((first.id, first.item), (JobId::new(3), 'c'));
    }
}
