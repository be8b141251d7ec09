//! The buffer of a queue neither the ring nor the list serves (bounded above
//! [`MAX_SLOTS`](super::ring::MAX_SLOTS), or journaled; see `buffer/mod.rs`):
//! concurrent-queue's buffer of `(JobId, T)`, the slot counter of `slots.rs`, and the
//! three counts the ring keeps in its words (ids drawn, items taken, endings).
//!
//! The endings' word is laid out as the ring's `ended`: the count above the waiter fields
//! of `wait/counted.rs`, a 39-bit wrapping count read back in full against the takes, and
//! the joiners counted below it. So an ending reads the joiners in its own `fetch_add`,
//! as on the ring, and needs no fence to see them.
//!
//! # Accepting, closing and draining
//!
//! The closed flag lives in the word ids are drawn from (`issued`), as it lives in the
//! ring's `tail`: a put draws its id with one compare-exchange that fails once the flag is
//! set, and a put that drew an id is accepted: its push cannot fail (the inner queue is
//! never closed, and a bounded one has the slot the put took first). So `accepted` is the
//! count of ids drawn and never goes down.
//!
//! Between drawing its id and pushing its item, a put of a journaled queue runs the
//! journal (user code: the journal hears of the acceptance before any get can take the
//! item), so nothing may wait for a put to finish:
//!
//! - A get that finds nothing after a shutdown reports the end only once every id drawn
//!   was taken ([`take`](Growable::take)); until then an item is on its way, and its put
//!   notifies the getters after pushing it, as every put does. The get that takes the
//!   last item of a closed buffer says so ([`Taken::last`]), so the caller wakes the
//!   getters that were waiting for it.
//! - The drain of an immediate shutdown takes what is there and does not wait. A put
//!   still on its way when the drain ran lands after it: it checks
//!   [`drained`](Growable::drained) after its push and its notification of the getters
//!   (a read-modify-write of the getters' word), and takes what it finds
//!   ([`take_late`](Growable::take_late)), for its caller to end as discarded. The drain
//!   marks the buffer drained before it makes a read-modify-write of the same word and
//!   then pops (see [`drain`](Growable::drain)), so either the put's check sees the mark
//!   or the drain's pops see the put's item.

use alloc::vec::Vec;

use concurrent_queue::{ConcurrentQueue, PopError, PushError};

use super::moves::{Ended, Nothing, PutRefused, Taken};
use super::ring::{distance, ticket_of, widen, word_at, TICKET_SHIFT};
use super::slots::{Limit, Slots};
use crate::job_id::JobId;
use crate::sync::{uninterrupted, AtomicU64, AtomicUsize, Ordering};
use crate::unwind::each_despite_panics;
use crate::wait::counted::{anyone_in, Counted};
use crate::wait::waiters::Wake;

/// `issued`: no id is drawn once set.
const CLOSED: u64 = 1;
/// One id drawn, in `issued`.
const ID: u64 = 2;

/// See the module docs.
///
/// `issued - taken` items are buffered or on their way in (a put between its id and its
/// push), and `taken - ended` are out in deliveries; `issued - ended` are unfinished.
pub(crate) struct Growable<T> {
    /// Never closed: the closed flag is in `issued`.
    items: ConcurrentQueue<(JobId, T)>,
    /// A put takes a slot before it draws its id, so the push that follows never finds a
    /// bounded buffer full and ids have no gaps.
    slots: Slots,
    /// Ids drawn (in units of [`ID`]) and [`CLOSED`].
    issued: AtomicU64,
    /// Items taken out of the buffer (by gets, the drain and late puts).
    taken: AtomicU64,
    /// Endings (from bit [`TICKET_SHIFT`] up, wrapping) and the joiners' waiter fields
    /// (see the module docs).
    ended: AtomicU64,
    /// Set by the drain of an immediate shutdown (see the module docs).
    drained: AtomicUsize,
}

impl<T> Growable<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        Self::resume(limit, 0, 0, 0, Vec::new())
    }

    /// A buffer that carries on where another left off: `issued` ids were drawn, `taken`
    /// items taken out and `ended` ended, and `items` are buffered, in order (a queue
    /// moving off the ring before it is shared; its items were taken out of the ring and
    /// count as not taken here).
    pub(crate) fn resume(
        limit: Limit,
        issued: u64,
        taken: u64,
        ended: u64,
        items: Vec<(JobId, T)>,
    ) -> Self {
        let buffered = items.len() as u64;
        let items_queue = match limit {
            Limit::Buffered(n) | Limit::Unfinished(n) if n <= super::ring::MAX_SLOTS => {
                ConcurrentQueue::bounded(n)
            }
            _ => ConcurrentQueue::unbounded(),
        };
        let taken = taken - buffered;
        let held = match limit {
            Limit::Unfinished(_) => issued - ended,
            _ => buffered,
        };
        let growable = Growable {
            items: items_queue,
            slots: Slots::with_taken(limit, held as usize),
            issued: AtomicU64::new(issued * ID),
            taken: AtomicU64::new(taken),
            ended: AtomicU64::new(word_at(ended)),
            drained: AtomicUsize::new(0),
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
        owed: i64,
        accepted: impl FnOnce(JobId),
    ) -> Result<JobId, PutRefused<T>> {
        if !self.slots.try_take(owed.max(0) as usize) {
            return Err(PutRefused::Full(item));
        }
        let Some(id) = self.draw() else {
            // The slot goes back unused; every waiting put was woken by the shutdown.
            self.slots.give_back(1);
            return Err(PutRefused::Closed(item));
        };
        // Without `std` nothing catches a journal's panic: should `accepted` unwind, the
        // item is pushed all the same (its id is drawn, so it counts as accepted).
        let pushed = Pushed {
            buffer: self,
            entry: Some((id, item)),
        };
        accepted(id);
        drop(pushed);
        Ok(id)
    }

    /// Draws the next id, unless the buffer is closed.
    #[inline]
    fn draw(&self) -> Option<JobId> {
        // Relaxed: the compare-exchange below validates it.
        let mut now = self.issued.load(Ordering::Relaxed);
        loop {
            if now & CLOSED != 0 {
                return None;
            }
            // Relaxed: the id only has to be unique and drawn before the close, which is
            // a read-modify-write of this word; the item travels through the inner queue.
            match self.issued.compare_exchange_weak(
                now,
                now + ID,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(JobId::new(now / ID)),
                Err(seen) => now = seen,
            }
        }
    }

    /// Takes the oldest item, leaving `owed()` items alone: the items the getter turns
    /// (`turns.rs`) keep for woken getters. `owed` is read after the count of items
    /// pushed, which sees every turn granted before those pushes (a put grants the turn of
    /// the getter it wakes after its push, so that turn covers the items pushed after it).
    ///
    /// After a close, reports [`Nothing::Closed`] only once every id drawn was taken (see
    /// the module docs).
    #[inline]
    pub(crate) fn take(&self, owed: impl Fn() -> i64) -> Result<Taken<T>, Nothing> {
        // The inner queue's length is read with sequentially consistent loads of its
        // indices, which read from the pushes' own claims. Nothing counted is nothing to
        // take: a pop now could find an item pushed after this read, whose turn the read
        // below would not see.
        let available = self.items.len() as u64;
        if available == 0 {
            return Err(self.nothing());
        }
        let owed = owed();
        if owed > 0 && available <= owed as u64 {
            return Err(Nothing::Empty);
        }
        let Ok((id, item)) = self.pop() else {
            return Err(self.nothing());
        };
        Ok(self.took(id, item))
    }

    /// Counts an item taken, and says whether it was the last one of a closed buffer.
    #[inline]
    fn took(&self, id: JobId, item: T) -> Taken<T> {
        // SeqCst, with the read of `issued` below, the close, and the two reads of
        // `nothing`: in their single total order, either this read sees the close (and
        // this take tells the getters if it was the last), or the close comes after this
        // count, and so does a getter's read of `taken` after it saw the close.
        let taken = self.taken.fetch_add(1, Ordering::SeqCst) + 1;
        let putters = Wake::check_if(self.slots.freed_by_get() && self.slots.give_back(1));
        // SeqCst: see above.
        let issued = self.issued.load(Ordering::SeqCst);
        Taken {
            id,
            item,
            putters,
            last: issued & CLOSED != 0 && taken == issued / ID,
        }
    }

    /// Why a pop found nothing: closed if no item can come any more.
    #[cold]
    fn nothing(&self) -> Nothing {
        // SeqCst (both reads): see `took`.
        let issued = self.issued.load(Ordering::SeqCst);
        if issued & CLOSED == 0 {
            return Nothing::Empty;
        }
        if self.taken.load(Ordering::SeqCst) == issued / ID {
            Nothing::Closed
        } else {
            // An item is on its way (its put drew an id before the close), or another get
            // popped it and has not counted it yet.
            Nothing::Empty
        }
    }

    /// Records `n` endings. `None`: they concern nobody (no joiner counted, no slot
    /// freed, and the caller does not `watch` for the queue settling), as on the ring;
    /// settling is looked at only otherwise.
    #[inline]
    pub(crate) fn end(&self, n: u64, watch: bool) -> Option<Ended> {
        // AcqRel: releases this ending (and the work before it) to joiners that acquire
        // `ended`; acquires the earlier endings, so the `issued` read below is not behind
        // any id they ended; reads the joiners counted in this word.
        let before = self.ended.fetch_add(n << TICKET_SHIFT, Ordering::AcqRel);
        let joiners = anyone_in(before);
        if !(joiners || watch || self.slots.freed_by_ending()) {
            return None;
        }
        Some(self.ended_for(before, n, joiners, watch))
    }

    /// The rest of [`end`](Growable::end) for endings that may concern someone, out of
    /// line: most endings concern nobody.
    #[inline(never)]
    fn ended_for(&self, before: u64, n: u64, joiners: bool, watch: bool) -> Ended {
        let settled = (joiners || watch) && {
            // Acquire: an id drawn and ended by another thread is seen with its ending.
            let issued = self.issued.load(Ordering::Acquire) / ID;
            distance(issued, ticket_of(before) + n) == 0
        };
        let freed = self.slots.freed_by_ending() && self.slots.give_back(n as usize);
        Ended {
            settled,
            joiners: Wake::counted_if(settled && joiners),
            putters: Wake::check_if(freed),
        }
    }

    /// Where the joiners are counted: in the endings' word (see the module docs).
    #[inline]
    pub(crate) fn joiners(&self) -> Counted<'_> {
        Counted::in_word(&self.ended, false)
    }

    /// Items buffered or in flight.
    pub(crate) fn unfinished(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so a zero also shows the work that
        // ended, and the `issued` read below is not behind it.
        let ended = ticket_of(self.ended.load(Ordering::Acquire));
        // Acquire: as in `end`.
        let issued = self.issued.load(Ordering::Acquire) / ID;
        distance(issued, ended)
    }

    /// Endings so far; the first read of the ledger's snapshot (see `tally.rs`).
    pub(crate) fn ended(&self) -> u64 {
        // Acquire: pairs with the endings' AcqRel, so the reads that follow see the take
        // of every item ended.
        let ended = ticket_of(self.ended.load(Ordering::Acquire));
        // SeqCst: as in `progress`, which reads it next.
        let taken = self.taken.load(Ordering::SeqCst);
        // Endings never pass takes: widened below the takes read now.
        widen(ended, taken).min(taken)
    }

    /// Items taken out and ids drawn (items accepted), read in that order.
    pub(crate) fn progress(&self) -> (u64, u64) {
        // SeqCst (both): as in `nothing`; each read is not behind the one before it (a take
        // happens after its item's id was drawn).
        let taken = self.taken.load(Ordering::SeqCst);
        let accepted = self.issued.load(Ordering::SeqCst) / ID;
        (taken, accepted.max(taken))
    }

    /// Items pushed and not taken (a snapshot).
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Closes the buffer: no id is drawn from now on.
    pub(crate) fn close(&self) {
        // SeqCst: see `took`; it also releases the close to the gets that read `issued`
        // and acquires the draws before it.
        self.issued.fetch_or(CLOSED, Ordering::SeqCst);
    }

    /// Closes the buffer and takes every buffered item, in order. `fence` runs between
    /// marking the buffer drained and the first pop: it is the caller's read-modify-write
    /// of the getters' word (see the module docs).
    pub(crate) fn drain(&self, fence: impl FnOnce()) -> Vec<(JobId, T)> {
        self.close();
        // Relaxed: published by the fence's read-modify-write, which a late put's
        // notification reads from (see the module docs).
        self.drained.store(1, Ordering::Relaxed);
        fence();
        let mut drained = Vec::with_capacity(self.len());
        while let Ok((id, item)) = self.pop() {
            drained.push((id, item));
            // Counted one by one, as a get counts: a get that finds the buffer empty then
            // sees every popped item counted, or is told by the last one.
            self.took_by_drain();
        }
        drained
    }

    fn took_by_drain(&self) {
        // SeqCst: as in `took` (after the close, so no getter waits to be told).
        self.taken.fetch_add(1, Ordering::SeqCst);
        if self.slots.freed_by_get() {
            self.slots.give_back(1);
        }
    }

    /// Whether an immediate shutdown drained the buffer (for a put, after its push and its
    /// notification of the getters; see the module docs).
    #[inline]
    pub(crate) fn drained(&self) -> bool {
        // Relaxed: ordered by the caller's read-modify-write of the getters' word.
        self.drained.load(Ordering::Relaxed) != 0
    }

    /// Takes the items that landed after the drain: the put that finds the buffer drained
    /// hands them to `late`, to be ended as discarded.
    #[cold]
    pub(crate) fn take_late(&self, mut late: impl FnMut(JobId, T)) {
        while let Ok((id, item)) = self.pop() {
            self.took_by_drain();
            late(id, item);
        }
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
    /// propagates). The inner queue's own destructor would stop at the first panic and
    /// leak the rest.
    fn drop(&mut self) {
        let items = &self.items;
        each_despite_panics(|| items.pop().ok(), drop);
    }
}

/// An accepted item on its way into the growable buffer, pushed when dropped: once the
/// journal heard of it, or as the journal's panic unwinds the put.
struct Pushed<'b, T> {
    buffer: &'b Growable<T>,
    entry: Option<(JobId, T)>,
}

impl<T> Drop for Pushed<'_, T> {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            if let Err(PushError::Closed(_) | PushError::Full(_)) = self.buffer.push(entry) {
                unreachable!("the inner queue is never closed, and the slot was taken")
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn counts(buffer: &Growable<impl Sized>) -> (u64, u64, u64) {
        let ended = buffer.ended();
        let (taken, accepted) = buffer.progress();
        (accepted, taken, ended)
    }

    #[test]
    fn a_closed_buffer_refuses_without_drawing_an_id() {
        for limit in [Limit::None, Limit::Buffered(2), Limit::Unfinished(2)] {
            let buffer = Growable::new(limit);
            buffer.put("kept", 0, |_| {}).unwrap();
            buffer.close();
            assert!(
                matches!(
                    buffer.put("late", 0, |_| {}),
                    Err(PutRefused::Closed("late"))
                ),
                "{limit:?}"
            );
            assert_eq!(buffer.slots.taken(), usize::from(limit != Limit::None));
            assert_eq!(counts(&buffer), (1, 0, 0), "{limit:?}");
            assert_eq!(buffer.unfinished(), 1, "{limit:?}");
            assert_eq!(buffer.drain(|| {}), [(JobId::new(0), "kept")], "{limit:?}");
        }
    }

    #[test]
    fn a_closed_buffer_is_final_only_once_every_drawn_id_was_taken() {
        let buffer = Growable::new(Limit::None);
        buffer.put(1, 0, |_| {}).unwrap();
        // A put that drew its id and has not pushed yet: drawn by hand here.
        let on_its_way = buffer.draw().unwrap();
        buffer.close();
        let first = buffer.take(|| 0).ok().unwrap();
        assert!(!first.last, "one drawn id is not taken yet");
        assert_eq!(buffer.take(|| 0).err(), Some(Nothing::Empty));
        buffer.push((on_its_way, 2)).unwrap();
        let second = buffer.take(|| 0).ok().unwrap();
        assert!(second.last);
        assert_eq!(buffer.take(|| 0).err(), Some(Nothing::Closed));
    }

    #[test]
    fn a_put_that_lands_after_the_drain_finds_it_drained() {
        let buffer = Growable::new(Limit::Buffered(4));
        buffer.put('a', 0, |_| {}).unwrap();
        // A put between its id and its push, by hand: its slot, then its id.
        assert!(buffer.slots.try_take(0));
        let on_its_way = buffer.draw().unwrap();
        let mut fenced = false;
        assert_eq!(buffer.drain(|| fenced = true), [(JobId::new(0), 'a')]);
        assert!(fenced);
        buffer.push((on_its_way, 'b')).unwrap();
        assert!(buffer.drained());
        let mut late = Vec::new();
        buffer.take_late(|id, item| late.push((id, item)));
        assert_eq!(late, [(JobId::new(1), 'b')]);
        assert_eq!(buffer.slots.taken(), 0);
        assert_eq!(counts(&buffer), (2, 2, 0));
        assert_eq!(buffer.take(|| 0).err(), Some(Nothing::Closed));
    }

    #[test]
    fn items_owed_to_woken_getters_are_left_alone() {
        let buffer = Growable::new(Limit::None);
        buffer.put('a', 0, |_| {}).unwrap();
        assert_eq!(buffer.take(|| 1).err(), Some(Nothing::Empty));
        buffer.put('b', 0, |_| {}).unwrap();
        assert_eq!(
            buffer.take(|| 1).ok().unwrap().item,
            'a',
            "two buffered, one owed"
        );
        assert_eq!(buffer.take(|| 1).err(), Some(Nothing::Empty));
        assert_eq!(buffer.take(|| 0).ok().unwrap().item, 'b');
    }

    #[test]
    fn an_ending_reads_the_joiners_counted_in_its_word() {
        let buffer = Growable::new(Limit::None);
        for item in 0..2 {
            buffer.put(item, 0, |_| {}).unwrap();
            buffer.take(|| 0).ok().unwrap();
        }
        assert!(buffer.end(1, false).is_none(), "nobody to tell");
        let ended = buffer.end(1, true).expect("watched");
        assert!(ended.settled);
        assert_eq!(ended.joiners, Wake::No, "no joiner counted");
        buffer.put(2, 0, |_| {}).unwrap();
        buffer.take(|| 0).ok().unwrap();
        let joiners = buffer.joiners();
        joiners.count_in();
        assert_eq!(
            buffer.unfinished(),
            1,
            "the count-in left the endings alone"
        );
        let ended = buffer.end(1, false).expect("a joiner is counted");
        assert!(ended.settled);
        assert_eq!(ended.joiners, Wake::Counted);
        joiners.count_out();
        assert_eq!(counts(&buffer), (3, 3, 3));
        assert_eq!(buffer.unfinished(), 0);
    }

    #[test]
    fn endings_are_counted_in_full_across_the_wrap() {
        let start = super::super::ring::TICKET_MASK - 1;
        let buffer = Growable::resume(Limit::None, start, start, start, Vec::new());
        for item in 0..4 {
            buffer.put(item, 0, |_| {}).unwrap();
            buffer.take(|| 0).ok().unwrap();
        }
        assert_eq!(buffer.unfinished(), 4);
        assert!(!buffer.end(3, true).unwrap().settled);
        assert!(buffer.end(1, true).unwrap().settled);
        assert_eq!(counts(&buffer), (start + 4, start + 4, start + 4));
        assert_eq!(buffer.unfinished(), 0);
    }

    #[test]
    fn a_resumed_buffer_carries_its_counts_and_order() {
        let items = alloc::vec![(JobId::new(3), 'c'), (JobId::new(5), 'e')];
        // Six ids drawn; all six taken out of the old buffer (two of them just now, to
        // move them), five ended: two buffered, one in flight... of six drawn, three ended.
        let buffer = Growable::resume(Limit::Unfinished(4), 6, 6, 3, items);
        assert_eq!(buffer.slots.taken(), 3, "buffered and in flight hold slots");
        assert_eq!(counts(&buffer), (6, 4, 3));
        assert_eq!(buffer.put('g', 0, |_| {}).ok(), Some(JobId::new(6)));
        assert!(matches!(
            buffer.put('h', 0, |_| {}),
            Err(PutRefused::Full('h'))
        ));
        let first = buffer.take(|| 0).ok().unwrap();
        assert_eq!((first.id, first.item), (JobId::new(3), 'c'));
    }
}
