//! Which buffer holds a queue's items, behind one interface: the ring of `ring.rs`, or
//! the growable buffer of `growable.rs`.
//!
//! The ring serves every limit it can hold (buffered or unfinished items, up to
//! [`MAX_SLOTS`](crate::ring::MAX_SLOTS)). Its three words carry the ids, the closed flag,
//! the bound and the ledger's in-flight and unfinished counts, so a put, a get and an
//! ending each cost one locked instruction. Unbounded queues and larger bounds use the
//! growable buffer (see the ring's module docs for why).
//!
//! So does a journaled queue, whatever its bound: its journal hears of an acceptance
//! before any get can take the item, which needs the id before the item is published. The
//! ring draws the id and claims the slot in one step and publishes a few instructions
//! later; running the journal (user code, which may call back into the queue) inside that
//! window would leave gets spinning on it. [`Buffer::for_journal`] moves a queue onto the
//! growable buffer when a journal is installed, before the queue is shared.
//!
//! Both count tickets (ids) drawn, items taken out and endings (the growable buffer also
//! counts puts revoked by a shutdown). The ledger's buffered and in-flight counts are their
//! differences ([`Counts`]).

use alloc::vec::Vec;

use crate::growable::Growable;
use crate::job_id::JobId;
use crate::ring::{Counted, Kind, Nothing, Refused, Ring};
use crate::slots::Limit;
use crate::sync::{AtomicU64, Ordering};
use crate::waiters::Wake;

/// A put the buffer refused; the item comes back.
#[derive(Debug)]
pub(crate) enum PutRefused<T> {
    /// The limit is reached (counting the slots owed to woken putters).
    Full(T),
    /// The buffer is closed.
    Closed(T),
    /// The put drew `id`, then found the buffer closed (growable only): the id is never
    /// used, and the revocation counts as an ending, which may have freed a slot and
    /// settled the queue.
    Revoked {
        item: T,
        id: JobId,
        freed: bool,
        settled: bool,
    },
}

/// An item a get took out.
#[derive(Debug)]
pub(crate) struct Taken<T> {
    pub(crate) id: JobId,
    pub(crate) item: T,
    /// Whether to wake a putter for the slot the take freed (a buffered limit).
    pub(crate) putters: Wake,
}

/// What some endings did.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ended {
    /// Nothing is unfinished now. A ring looks only when joiners are counted or the caller
    /// asked (`watch_settled`), and reads `false` otherwise: the look reads the producers'
    /// word.
    pub(crate) settled: bool,
    /// Whether to wake the joiners: only if the endings settled the queue (`settled`),
    /// which [`wakes_anyone`](Ended::wakes_anyone) relies on.
    pub(crate) joiners: Wake,
    /// Whether to wake putters for the slots the endings freed (an unfinished limit).
    pub(crate) putters: Wake,
}

impl Ended {
    /// Whether the endings concern any waiter: they settled the queue (the joiners, and
    /// the getters under redelivery) or freed a slot. One test of two fields: joiners are
    /// woken only by a settling ending.
    #[inline]
    pub(crate) fn wakes_anyone(&self) -> bool {
        debug_assert!(self.settled || self.joiners == Wake::No);
        self.settled || self.putters != Wake::No
    }
}

/// The ledger's counts that the buffer keeps (a snapshot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Items accepted so far.
    pub(crate) accepted: u64,
    /// Items in the buffer.
    pub(crate) buffered: u64,
    /// Items taken out and not ended: in deliveries, or in the redelivery lane.
    pub(crate) in_flight: u64,
}

enum Engine<T> {
    Ring(Ring<T>),
    Growable(Growable<T>),
}

/// A queue's buffer; see the module docs.
pub(crate) struct Buffer<T> {
    engine: Engine<T>,
    limit: Limit,
    /// Items a retry put back into the ring. Each took a ticket of its own, which is not
    /// an acceptance.
    requeued: AtomicU64,
}

impl<T> Buffer<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        let engine = match limit.ring_bound() {
            Some(bound) => Engine::Ring(Ring::counting(bound)),
            None => Engine::Growable(Growable::new(limit)),
        };
        Buffer {
            engine,
            limit,
            requeued: AtomicU64::new(0),
        }
    }

    /// Moves the items onto the growable buffer, under the same ids, for a queue whose
    /// journal is being installed (see the module docs). Only for a queue not
    /// shared yet: no delivery is alive, so whatever was taken and not ended sits in the
    /// redelivery lane.
    pub(crate) fn for_journal(&mut self) {
        let Engine::Ring(ring) = &self.engine else {
            return;
        };
        let (next_id, _, in_flight) = ring.counts();
        let closed = ring.is_closed();
        let items = ring
            .drain()
            .into_iter()
            .map(|(id, item)| (JobId::new(id), item))
            .collect();
        let growable = Growable::resume(self.limit, next_id, in_flight, items);
        if closed {
            // A queue shut down before its journal was installed stays shut down.
            growable.close();
        }
        self.engine = Engine::Growable(growable);
    }

    pub(crate) fn limit(&self) -> Limit {
        self.limit
    }

    /// Where the ring counts the waiters of `kind`, if the buffer is a ring that does
    /// (putters only under a buffered limit: the slots of an unfinished limit are freed by
    /// endings, whose word has no room for them).
    #[inline]
    pub(crate) fn counted(&self, kind: Kind) -> Option<Counted<'_>> {
        match (&self.engine, kind, self.limit) {
            (Engine::Ring(_), Kind::Putters, Limit::Unfinished(_)) => None,
            (Engine::Ring(ring), _, _) => Some(ring.counted(kind)),
            (Engine::Growable(_), _, _) => None,
        }
    }

    /// Buffers `item` under a fresh id, leaving `owed` free slots alone (the slots the
    /// putter turns of `turns.rs` keep for woken putters). `accepted` runs with the id:
    /// before the item can be taken on the growable buffer, after it on the ring (which
    /// a journaled queue does not use). Returns the id and whether to wake a getter.
    #[inline]
    pub(crate) fn put(
        &self,
        item: T,
        owed: usize,
        accepted: impl FnOnce(JobId),
    ) -> Result<(JobId, Wake), PutRefused<T>> {
        match &self.engine {
            Engine::Ring(ring) => match ring.try_put_leaving(item, owed as u64) {
                Ok(put) => {
                    let id = JobId::new(put.id);
                    accepted(id);
                    Ok((id, Wake::reserved_if(put.notify_getter)))
                }
                Err(Refused::Full(item)) => Err(PutRefused::Full(item)),
                Err(Refused::Closed(item)) => Err(PutRefused::Closed(item)),
            },
            Engine::Growable(growable) => growable
                .put(item, owed, accepted)
                .map(|id| (id, Wake::Check)),
        }
    }

    /// Takes the oldest item.
    #[inline]
    pub(crate) fn take(&self) -> Result<Taken<T>, Nothing> {
        match &self.engine {
            Engine::Ring(ring) => ring.try_get().map(|taken| Taken {
                id: JobId::new(taken.id),
                item: taken.item,
                putters: Wake::reserved_if(taken.notify_putter),
            }),
            Engine::Growable(growable) => growable.take(),
        }
    }

    /// Puts an item taken out back at the end, under its old id, leaving `owed` free slots
    /// alone. Returns whether to wake a getter (on the ring, as the claim read it) and
    /// whether to check for putters: on the ring under an unfinished limit,
    /// the retry counts the item twice for an instant (its new ticket is claimed before
    /// its delivery is ended), and a put that saw that instant may be waiting for a slot
    /// that is free again. Refused
    /// (with whether a slot came free for the putters): closed, or a buffered limit
    /// reached.
    pub(crate) fn requeue(
        &self,
        id: JobId,
        item: T,
        owed: usize,
    ) -> Result<(Wake, Wake), (T, bool)> {
        match &self.engine {
            Engine::Ring(ring) => {
                // Counted before the ring's ending of the delivery (a Release), so a
                // snapshot that sees that ending sees this count (see `counts`).
                // Relaxed: the ending orders it.
                self.requeued.fetch_add(1, Ordering::Relaxed);
                match ring.try_requeue_leaving(id.get(), item, owed as u64) {
                    Ok(put) => {
                        let room = match self.limit {
                            Limit::Unfinished(n) => ring.unfinished() < n as u64,
                            _ => false,
                        };
                        Ok((Wake::reserved_if(put.notify_getter), Wake::check_if(room)))
                    }
                    Err(Refused::Full(item) | Refused::Closed(item)) => {
                        // Relaxed: as above; no ticket was claimed.
                        self.requeued.fetch_sub(1, Ordering::Relaxed);
                        Err((item, false))
                    }
                }
            }
            Engine::Growable(growable) => growable
                .requeue(id, item, owed)
                .map(|()| (Wake::Check, Wake::No)),
        }
    }

    /// Records `n` endings (resolutions, abandonments, discards). `watch_settled`: the
    /// caller needs [`Ended::settled`] even when no joiner is counted.
    #[inline]
    pub(crate) fn end(&self, n: u64, watch_settled: bool) -> Ended {
        match &self.engine {
            Engine::Ring(ring) => {
                let (settled, joiners) = ring.end_counted(n, watch_settled);
                Ended {
                    settled,
                    joiners: Wake::counted_if(settled && joiners),
                    putters: Wake::check_if(matches!(self.limit, Limit::Unfinished(_))),
                }
            }
            Engine::Growable(growable) => growable.end(n),
        }
    }

    /// Items buffered or in flight.
    #[inline]
    pub(crate) fn unfinished(&self) -> u64 {
        match &self.engine {
            Engine::Ring(ring) => ring.unfinished(),
            Engine::Growable(growable) => growable.unfinished(),
        }
    }

    /// A snapshot of the counts.
    pub(crate) fn counts(&self) -> Counts {
        match &self.engine {
            Engine::Ring(ring) => {
                let (tickets, buffered, in_flight) = ring.counts();
                // Relaxed: read after the ring's Acquire of `ended`, so every retry whose
                // ending that read saw is counted (a retry counts here first).
                let requeued = self.requeued.load(Ordering::Relaxed);
                Counts {
                    accepted: tickets.saturating_sub(requeued),
                    buffered,
                    in_flight,
                }
            }
            Engine::Growable(growable) => {
                // Relaxed: only the ring counted retries, before the buffer moved here.
                let requeued = self.requeued.load(Ordering::Relaxed);
                let counts = growable.counts();
                Counts {
                    accepted: counts.accepted.saturating_sub(requeued),
                    ..counts
                }
            }
        }
    }

    /// Items buffered (a snapshot).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        match &self.engine {
            Engine::Ring(ring) => ring.len() as usize,
            Engine::Growable(growable) => growable.len(),
        }
    }

    /// Closes the buffer: no put succeeds from now on.
    pub(crate) fn close(&self) {
        match &self.engine {
            Engine::Ring(ring) => {
                ring.close();
            }
            Engine::Growable(growable) => growable.close(),
        }
    }

    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        match &self.engine {
            Engine::Ring(ring) => ring.is_closed(),
            Engine::Growable(growable) => growable.is_closed(),
        }
    }

    /// Closes the buffer and takes every buffered item, in order. Frees their slots (a
    /// buffered limit), but does not count them ended.
    pub(crate) fn drain(&self) -> Vec<(JobId, T)> {
        match &self.engine {
            Engine::Ring(ring) => ring
                .drain()
                .into_iter()
                .map(|(id, item)| (JobId::new(id), item))
                .collect(),
            Engine::Growable(growable) => growable.drain(),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn both(limit: Limit) -> [Buffer<u32>; 2] {
        let ring = Buffer::new(limit);
        assert!(matches!(ring.engine, Engine::Ring(_)));
        let growable = Buffer {
            engine: Engine::Growable(Growable::new(limit)),
            limit,
            requeued: AtomicU64::new(0),
        };
        [ring, growable]
    }

    fn counts(accepted: u64, buffered: u64, in_flight: u64) -> Counts {
        Counts {
            accepted,
            buffered,
            in_flight,
        }
    }

    #[test]
    fn both_engines_count_alike() {
        for buffer in both(Limit::Buffered(2)) {
            let (a, _) = buffer.put(1, 0, |_| {}).unwrap();
            let (b, _) = buffer.put(2, 0, |_| {}).unwrap();
            assert_eq!((a.get(), b.get()), (0, 1));
            assert!(matches!(buffer.put(3, 0, |_| {}), Err(PutRefused::Full(3))));
            let taken = buffer.take().unwrap();
            assert_ne!(taken.putters, Wake::Reserved, "no putter is counted");
            assert_eq!((taken.id, taken.item), (a, 1));
            assert_eq!(buffer.counts(), counts(2, 1, 1));
            buffer.requeue(taken.id, taken.item, 0).unwrap();
            assert_eq!(buffer.counts(), counts(2, 2, 0));
            assert_eq!(buffer.unfinished(), 2);
            let next = buffer.take().unwrap();
            assert_eq!(next.id, b);
            let ended = buffer.end(1, true);
            assert!(!ended.settled);
            assert_eq!((ended.joiners, ended.putters), (Wake::No, Wake::No));
            let again = buffer.take().unwrap();
            assert_eq!((again.id, again.item), (a, 1));
            assert!(buffer.end(1, true).settled);
            assert_eq!(buffer.counts(), counts(2, 0, 0));
        }
    }

    #[test]
    fn owed_slots_are_left_alone() {
        for buffer in both(Limit::Buffered(2)) {
            buffer.put(1, 1, |_| {}).unwrap();
            assert!(matches!(buffer.put(2, 1, |_| {}), Err(PutRefused::Full(2))));
            buffer.put(2, 0, |_| {}).unwrap();
        }
    }

    #[test]
    fn an_unfinished_limit_is_freed_by_endings() {
        for buffer in both(Limit::Unfinished(1)) {
            buffer.put(1, 0, |_| {}).unwrap();
            let taken = buffer.take().unwrap();
            assert_eq!(taken.putters, Wake::No);
            assert!(matches!(buffer.put(2, 0, |_| {}), Err(PutRefused::Full(2))));
            let ended = buffer.end(1, true);
            assert!(ended.settled);
            assert_eq!(ended.putters, Wake::Check);
            buffer.put(2, 0, |_| {}).unwrap();
        }
    }

    #[test]
    fn a_closed_buffer_refuses_and_drains() {
        for buffer in both(Limit::Buffered(4)) {
            buffer.put(1, 0, |_| {}).unwrap();
            buffer.put(2, 0, |_| {}).unwrap();
            let drained = buffer.drain();
            assert_eq!(drained.iter().map(|e| e.1).collect::<Vec<_>>(), [1, 2]);
            assert!(buffer.is_closed());
            assert!(matches!(buffer.take(), Err(Nothing::Closed)));
            assert!(matches!(
                buffer.put(3, 0, |_| {}),
                Err(PutRefused::Closed(3) | PutRefused::Revoked { item: 3, .. })
            ));
            assert!(buffer.end(2, true).settled);
        }
    }

    #[test]
    fn a_journaled_queue_moves_its_items_and_ids_off_the_ring() {
        let buffer = Buffer::new(Limit::Buffered(4));
        for item in 0..3 {
            buffer.put(item, 0, |_| {}).unwrap();
        }
        let first = buffer.take().unwrap();
        buffer.requeue(first.id, first.item, 0).unwrap();
        let second = buffer.take().unwrap();
        buffer.end(1, true);
        let mut buffer = buffer;
        buffer.for_journal();
        assert!(matches!(buffer.engine, Engine::Growable(_)));
        assert_eq!(second.id.get(), 1);
        assert_eq!(buffer.counts(), counts(3, 2, 0));
        let mut accepted = None;
        let (id, _) = buffer.put(9, 0, |id| accepted = Some(id)).unwrap();
        assert_eq!(accepted, Some(id));
        assert_eq!(id.get(), 4, "after the ring's four tickets");
        let order: Vec<_> = core::iter::from_fn(|| buffer.take().ok())
            .map(|taken| (taken.id.get(), taken.item))
            .collect();
        assert_eq!(order, [(2, 2), (0, 0), (4, 9)]);
        assert_eq!(buffer.counts(), counts(4, 0, 3));
    }
}
