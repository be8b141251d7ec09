//! Which buffer holds a queue's fresh items, behind one interface: the ring of
//! `raw/ring.rs`, the block list of `raw/list.rs`, or the growable buffer of
//! `growable.rs`.
//!
//! The ring serves every limit it can hold (buffered or unfinished items, up to
//! [`MAX_SLOTS`](ring::MAX_SLOTS)). Its three words carry the ids, the closed flag, the
//! bound and the ledger's in-flight and unfinished counts, so a put, a get and an ending
//! each cost one locked instruction. The list serves unbounded queues with words laid out
//! the same way, at the same cost. Bounds above `MAX_SLOTS` use the growable buffer.
//!
//! So does a journaled queue, whatever its bound: its journal hears of an acceptance
//! before any get can take the item, which needs the id before the item is published. The
//! ring draws the id and claims the slot in one step and publishes a few instructions
//! later; running the journal (user code, which may call back into the queue) inside that
//! window would leave gets spinning on it, and so would the list's. [`Buffer::for_journal`]
//! moves a queue onto the growable buffer when a journal is installed, before the queue is
//! shared.
//!
//! Both count ids drawn (every one an accepted item), items taken out and endings: the
//! ledger's counts ([`Counts`]).

pub(crate) mod growable;
pub(crate) mod moves;
#[allow(unsafe_code)]
pub(crate) mod raw;
pub(crate) mod slots;

pub(crate) use self::raw::{list, ring};

use alloc::vec::Vec;

use self::growable::Growable;
use self::list::List;
use self::ring::{BoxedRing, Kind, Ring};
use self::slots::Limit;
use crate::job_id::JobId;
use crate::wait::counted::Counted;
use crate::wait::waiters::Wake;

pub(crate) use self::moves::{Ended, Nothing, PutRefused, Taken};

/// The buffer's counts, read in this order: endings, takes, ids (see `tally.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Endings: resolutions, abandonments, discards.
    pub(crate) ended: u64,
    /// Items taken out of the buffer (by gets and drains).
    pub(crate) taken: u64,
    /// Ids drawn: items accepted.
    pub(crate) accepted: u64,
}

/// Tagged apart from its variants (`repr(u8)`), so that telling the ring from the other
/// buffers is one compare, never merged into their own branches; and two-way, so that
/// the code after a ring's put, get or ending is not merged with two other buffers'.
#[repr(u8)]
enum Store<T> {
    Ring(BoxedRing<T>),
    Other(Other<T>),
}

/// The buffers other than the ring.
#[repr(u8)]
enum Other<T> {
    List(List<T>),
    Growable(Growable<T>),
}

/// A queue's buffer; see the module docs.
pub(crate) struct Buffer<T> {
    store: Store<T>,
    limit: Limit,
    /// Whether an ending concerns anyone but the joiners a ring counts: its caller watches
    /// for the queue settling (`watch_settled`), or endings free slots (an unfinished
    /// limit). Without it, a ring's ending that reads no joiner is done. The ring and the
    /// list keep a copy in their endings' word, which an ending reads anyway.
    watch_endings: bool,
}

impl<T> Buffer<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        let store = match (limit.ring_bound(), limit) {
            (Some(bound), _) => Store::Ring(Ring::new(bound)),
            (None, Limit::None) => Store::Other(Other::List(List::new())),
            (None, _) => Store::Other(Other::Growable(Growable::new(limit))),
        };
        let mut buffer = Buffer {
            store,
            limit,
            watch_endings: false,
        };
        buffer.watch_settled(false);
        buffer
    }

    /// Whether every ending must say if it settled the queue, joiners or not (see
    /// [`Ended::settled`]). Only for a queue not shared yet.
    pub(crate) fn watch_settled(&mut self, watch: bool) {
        let watch = watch || matches!(self.limit, Limit::Unfinished(_));
        self.watch_endings = watch;
        match &mut self.store {
            Store::Ring(ring) => ring.watch_settled(watch),
            Store::Other(Other::List(list)) => list.watch_settled(watch),
            Store::Other(Other::Growable(_)) => {}
        }
    }

    /// Moves the items onto the growable buffer, under the same ids, for a queue whose
    /// journal is being installed (see the module docs). Only for a queue not shared yet.
    pub(crate) fn for_journal(&mut self) {
        let (closed, drained, ended, (taken, accepted)) = match &self.store {
            Store::Ring(ring) => (
                ring.is_closed(),
                ring.drain(),
                ring.ended(),
                ring.progress(),
            ),
            Store::Other(Other::List(list)) => (
                list.is_closed(),
                list.drain(),
                list.ended(),
                list.progress(),
            ),
            Store::Other(Other::Growable(_)) => return,
        };
        let items = drained
            .into_iter()
            .map(|(id, item)| (JobId::new(id), item))
            .collect();
        let growable = Growable::resume(self.limit, accepted, taken, ended, items);
        if closed {
            // A queue shut down before its journal was installed stays shut down.
            growable.close();
        }
        self.store = Store::Other(Other::Growable(growable));
    }

    pub(crate) fn limit(&self) -> Limit {
        self.limit
    }

    /// Where the ring counts the getters or the putters, if the buffer is a ring that does
    /// (putters only under a buffered limit: the slots of an unfinished limit are freed by
    /// endings, whose word has no room for their `pending` field).
    #[inline]
    pub(crate) fn counted(&self, kind: Kind) -> Option<Counted<'_>> {
        debug_assert!(kind != Kind::Joiners, "see `joiners`");
        match (&self.store, kind, self.limit) {
            (Store::Ring(_), Kind::Putters, Limit::Unfinished(_)) => None,
            (Store::Ring(ring), _, _) => Some(ring.counted(kind)),
            // Puts never wait on an unbounded list.
            (Store::Other(Other::List(list)), Kind::Getters, _) => Some(list.counted(kind)),
            (Store::Other(_), _, _) => None,
        }
    }

    /// Where the joiners are counted: in the endings' word, of either buffer.
    #[inline]
    pub(crate) fn joiners(&self) -> Counted<'_> {
        match &self.store {
            Store::Ring(ring) => ring.counted(Kind::Joiners),
            Store::Other(Other::List(list)) => list.counted(Kind::Joiners),
            Store::Other(Other::Growable(growable)) => growable.joiners(),
        }
    }

    /// Buffers `item` under a fresh id, leaving `owed` free slots alone (the slots the
    /// putter turns of `turns.rs` keep for woken putters; zero or less: none). `accepted`
    /// runs with the id before the item can be taken, on the growable buffer; the ring,
    /// which a journaled queue does not use, does not call it. Returns the id and whether
    /// to wake a getter.
    #[inline]
    pub(crate) fn put(
        &self,
        item: T,
        owed: i64,
        accepted: impl FnOnce(JobId),
    ) -> Result<(JobId, Wake), PutRefused<T>> {
        match &self.store {
            // A ring's queue has no journal (see the module docs): nobody to tell.
            Store::Ring(ring) => ring.try_put(item, owed),
            // A list's queue has no journal either; an unbounded list owes no slot.
            Store::Other(Other::List(list)) => list.try_put(item),
            Store::Other(Other::Growable(growable)) => growable
                .put(item, owed, accepted)
                .map(|id| (id, Wake::Check)),
        }
    }

    /// After a put and its notification of the getters: if items may have landed after
    /// an immediate shutdown's drain (the growable buffer; see `growable.rs`), calls
    /// `late` and hands them to the handler it returns. Returns whether it did.
    #[inline]
    pub(crate) fn after_put<L: FnMut(JobId, T)>(&self, late: impl FnOnce() -> L) -> bool {
        match &self.store {
            Store::Ring(_) | Store::Other(Other::List(_)) => false,
            Store::Other(Other::Growable(growable)) => {
                if !growable.drained() {
                    return false;
                }
                growable.take_late(late());
                true
            }
        }
    }

    /// The ring, if the buffer is one.
    #[inline(always)]
    pub(crate) fn ring(&self) -> Option<&BoxedRing<T>> {
        match &self.store {
            Store::Ring(ring) => Some(ring),
            Store::Other(_) => None,
        }
    }

    /// The list, if the buffer is one.
    #[inline(always)]
    pub(crate) fn list(&self) -> Option<&List<T>> {
        match &self.store {
            Store::Other(Other::List(list)) => Some(list),
            _ => None,
        }
    }

    /// The growable buffer, if the buffer is one.
    #[inline(always)]
    pub(crate) fn growable(&self) -> Option<&Growable<T>> {
        match &self.store {
            Store::Other(Other::Growable(growable)) => Some(growable),
            _ => None,
        }
    }

    /// Takes the oldest item, leaving `owed()` items alone (see [`Ring::try_get`] and
    /// [`Growable::take`]; zero or less: none).
    #[inline(always)]
    pub(crate) fn take(&self, owed: impl Fn() -> i64) -> Result<Taken<T>, Nothing> {
        match &self.store {
            Store::Ring(ring) => ring.try_get(owed),
            Store::Other(Other::List(list)) => list.try_get(owed),
            Store::Other(Other::Growable(growable)) => growable.take(owed),
        }
    }

    /// Records `n` endings (resolutions, abandonments, discards). `None`: they concern
    /// nobody, which a ring or a list decides from the ending's own read-modify-write and
    /// one flag.
    #[inline(always)]
    pub(crate) fn end(&self, n: u64) -> Option<Ended> {
        match &self.store {
            Store::Ring(ring) => ring
                .end_watched(n)
                .map(|(settled, joiners)| self.ended_in_word(settled, joiners)),
            Store::Other(Other::List(list)) => list
                .end(n)
                .map(|(settled, joiners)| self.ended_in_word(settled, joiners)),
            Store::Other(Other::Growable(growable)) => growable.end(n, self.watch_endings),
        }
    }

    /// What an ending on the ring or the list that concerns someone did, from what its
    /// read-modify-write read.
    #[inline(always)]
    fn ended_in_word(&self, settled: bool, joiners: bool) -> Ended {
        Ended {
            settled,
            joiners: Wake::counted_if(settled && joiners),
            putters: Wake::check_if(matches!(self.limit, Limit::Unfinished(_))),
        }
    }

    /// Items buffered or in flight.
    #[inline]
    pub(crate) fn unfinished(&self) -> u64 {
        match &self.store {
            Store::Ring(ring) => ring.unfinished(),
            Store::Other(Other::List(list)) => list.unfinished(),
            Store::Other(Other::Growable(growable)) => growable.unfinished(),
        }
    }

    /// The counts, with `between` run after the endings are read and before the rest,
    /// with the endings (see `tally.rs` for why that order).
    pub(crate) fn counts<X>(&self, between: impl FnOnce(u64) -> X) -> (Counts, X) {
        let (ended, x, (taken, accepted)) = match &self.store {
            Store::Ring(ring) => {
                let ended = ring.ended();
                let x = between(ended);
                (ended, x, ring.progress())
            }
            Store::Other(Other::List(list)) => {
                let ended = list.ended();
                let x = between(ended);
                (ended, x, list.progress())
            }
            Store::Other(Other::Growable(growable)) => {
                let ended = growable.ended();
                let x = between(ended);
                (ended, x, growable.progress())
            }
        };
        let counts = Counts {
            ended,
            taken,
            accepted,
        };
        (counts, x)
    }

    /// Items buffered (a snapshot).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        match &self.store {
            Store::Ring(ring) => ring.len() as usize,
            Store::Other(Other::List(list)) => list.len() as usize,
            Store::Other(Other::Growable(growable)) => growable.len(),
        }
    }

    /// Closes the buffer: no put succeeds from now on.
    pub(crate) fn close(&self) {
        match &self.store {
            Store::Ring(ring) => {
                ring.close();
            }
            Store::Other(Other::List(list)) => {
                list.close();
            }
            Store::Other(Other::Growable(growable)) => growable.close(),
        }
    }

    /// Closes the buffer and takes every buffered item, in order. Frees their slots (a
    /// buffered limit), but does not count them ended. `fence` runs before the first
    /// take: the caller's read-modify-write of the getters' word, which the growable
    /// buffer needs (see `growable.rs`).
    pub(crate) fn drain(&self, fence: impl FnOnce()) -> Vec<(JobId, T)> {
        match &self.store {
            Store::Ring(ring) => ring
                .drain()
                .into_iter()
                .map(|(id, item)| (JobId::new(id), item))
                .collect(),
            Store::Other(Other::List(list)) => list
                .drain()
                .into_iter()
                .map(|(id, item)| (JobId::new(id), item))
                .collect(),
            Store::Other(Other::Growable(growable)) => growable.drain(fence),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// A ring and a growable buffer for `limit`, both watching for the queue settling.
    fn both(limit: Limit) -> [Buffer<u32>; 2] {
        let mut ring = Buffer::new(limit);
        assert!(matches!(ring.store, Store::Ring(_)));
        let mut growable = Buffer::new(limit);
        growable.store = Store::Other(Other::Growable(Growable::new(limit)));
        for buffer in [&mut ring, &mut growable] {
            buffer.watch_settled(true);
        }
        [ring, growable]
    }

    fn counts(ended: u64, taken: u64, accepted: u64) -> Counts {
        Counts {
            ended,
            taken,
            accepted,
        }
    }

    #[test]
    fn both_stores_count_alike() {
        for buffer in both(Limit::Buffered(2)) {
            let (a, _) = buffer.put(1, 0, |_| {}).unwrap();
            let (b, _) = buffer.put(2, 0, |_| {}).unwrap();
            assert_eq!((a.get(), b.get()), (0, 1));
            assert!(matches!(buffer.put(3, 0, |_| {}), Err(PutRefused::Full(3))));
            let taken = buffer.take(|| 0).unwrap();
            assert_ne!(taken.putters, Wake::Reserved, "no putter is counted");
            assert_eq!((taken.id, taken.item), (a, 1));
            assert_eq!(buffer.counts(|_| ()).0, counts(0, 1, 2));
            assert_eq!(buffer.unfinished(), 2);
            let next = buffer.take(|| 0).unwrap();
            assert_eq!(next.id, b);
            let ended = buffer.end(1).expect("watched");
            assert!(!ended.settled);
            assert_eq!((ended.joiners, ended.putters), (Wake::No, Wake::No));
            assert!(buffer.end(1).expect("watched").settled);
            assert_eq!(buffer.counts(|_| ()).0, counts(2, 2, 2));
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
            let taken = buffer.take(|| 0).unwrap();
            assert_eq!(taken.putters, Wake::No);
            assert!(matches!(buffer.put(2, 0, |_| {}), Err(PutRefused::Full(2))));
            let ended = buffer.end(1).expect("watched");
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
            let drained = buffer.drain(|| {});
            assert_eq!(drained.iter().map(|e| e.1).collect::<Vec<_>>(), [1, 2]);
            assert!(matches!(buffer.take(|| 0), Err(Nothing::Closed)));
            assert!(matches!(buffer.take(|| 0), Err(Nothing::Closed)));
            assert!(matches!(
                buffer.put(3, 0, |_| {}),
                Err(PutRefused::Closed(3))
            ));
            assert_eq!(buffer.counts(|_| ()).0, counts(0, 2, 2));
            assert!(buffer.end(2).expect("watched").settled);
        }
    }

    #[test]
    fn an_unbounded_journaled_queue_moves_its_items_and_ids_off_the_list() {
        let buffer = Buffer::new(Limit::None);
        assert!(matches!(buffer.store, Store::Other(Other::List(_))));
        let n = list::CAP as u32 + 2;
        for item in 0..n {
            let (id, wake) = buffer.put(item, 0, |_| {}).unwrap();
            assert_eq!((id.get(), wake), (u64::from(item), Wake::No));
        }
        assert!(
            buffer.counted(Kind::Getters).is_some(),
            "counted in the list's tail"
        );
        assert!(buffer.counted(Kind::Putters).is_none(), "puts never wait");
        let first = buffer.take(|| 0).unwrap();
        assert_eq!(first.id.get(), 0);
        assert!(buffer.end(1).is_none(), "nobody to tell");
        let mut buffer = buffer;
        buffer.for_journal();
        assert!(matches!(buffer.store, Store::Other(Other::Growable(_))));
        assert_eq!(buffer.counts(|_| ()).0, counts(1, 1, u64::from(n)));
        let (id, _) = buffer.put(99, 0, |_| {}).unwrap();
        assert_eq!(id.get(), u64::from(n), "after the list's ids");
        let order: Vec<_> = core::iter::from_fn(|| buffer.take(|| 0).ok())
            .map(|taken| taken.id.get())
            .collect();
        assert_eq!(order, (1..=u64::from(n)).collect::<Vec<_>>());
    }

    #[test]
    fn a_journaled_queue_moves_its_items_and_ids_off_the_ring() {
        let buffer = Buffer::new(Limit::Buffered(4));
        for item in 0..3 {
            buffer.put(item, 0, |_| {}).unwrap();
        }
        let first = buffer.take(|| 0).unwrap();
        buffer.end(1);
        let mut buffer = buffer;
        buffer.for_journal();
        assert!(matches!(buffer.store, Store::Other(Other::Growable(_))));
        assert_eq!(first.id.get(), 0);
        assert_eq!(buffer.counts(|_| ()).0, counts(1, 1, 3));
        let mut accepted = None;
        let (id, _) = buffer.put(9, 0, |id| accepted = Some(id)).unwrap();
        assert_eq!(accepted, Some(id));
        assert_eq!(id.get(), 3, "after the ring's three ids");
        let order: Vec<_> = core::iter::from_fn(|| buffer.take(|| 0).ok())
            .map(|taken| (taken.id.get(), taken.item))
            .collect();
        assert_eq!(order, [(1, 1), (2, 2), (3, 9)]);
        assert_eq!(buffer.counts(|_| ()).0, counts(1, 4, 4));
    }
}
