//! The raw fixed queue: the heap queue's ring and tally, inline, and the three classes of
//! waiter slots; every operation the faces call.
//!
//! # Where an item is
//!
//! As on the heap queue (`engine/mod.rs`), without the lane (nothing comes back): an
//! accepted item is in the ring under the id its put drew, or in the hands of a
//! [`FixedDelivery`](super::FixedDelivery), or ended: counted once under one outcome in the
//! [`Tally`], or handed out by a drain ([`FixedDrain`](super::FixedDrain)) as discarded.
//! The ledger snapshot is the heap queue's (`engine/tally.rs`), over the same ring words.
//!
//! # Waking
//!
//! A put hands one item to a getter, a get one slot to a putter, an ending that settles the
//! queue wakes every joiner, a shutdown wakes every getter and putter. Each runs after the
//! change is complete and counted; a get builds its delivery before any waker runs, so a
//! panicking waker unwinds through a live delivery, which ends as abandoned.
//!
//! # Interrupts
//!
//! Nothing here waits for another operation to finish a step: the ring's put and get each
//! run as one step no interrupt handler enters (`sync::uninterrupted` under the
//! `critical-section` feature), every other change is one atomic read-modify-write or a
//! loop of compare-exchanges that a handler's own change only makes retry, and a waker cell
//! that a handler wakes while thread mode registers in it leaves the wake-up to the
//! registration. So a handler may call any operation on a queue that the code it
//! interrupted is in the middle of.

use super::waiters::{Class, Kind, Waiters};
use super::waker::AtomicWaker;
use crate::engine::buffer::moves::{Nothing, PutRefused};
use crate::engine::buffer::ring::{self, Ring, Slot};
use crate::engine::tally::{self, Tally};
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::outcome::Outcome;
use crate::sync::{AtomicUsize, Ordering};
use crate::unwind::each_despite_panics;
use crate::wait::turn::Turn;
use crate::wait::wake::Wake;

/// What a fixed queue keeps beside its ring: the ledger's outcome counters, the drain flag
/// and the waiters. The waiters' cells come last, so that `State<[[AtomicWaker; 3]; W]>`
/// can be unsized.
pub(crate) struct State<S: ?Sized> {
    tally: Tally,
    /// Non-zero once an immediate shutdown began: gets refuse from then on, and what is
    /// left in the ring belongs to the drains.
    drained: AtomicUsize,
    waiters: Waiters<S>,
}

impl<const W: usize> State<[[AtomicWaker; 3]; W]> {
    crate::const_fn! {
        /// Nothing counted, `W` free slots per class.
        pub(crate) fn new() -> Self {
            State {
                tally: Tally::new(),
                drained: AtomicUsize::new(0),
                waiters: Waiters::new(),
            }
        }
    }
}

/// A fixed queue with its sizes erased: what every face, future and handle holds.
pub(crate) struct Raw<'a, T> {
    ring: &'a Ring<T, [Slot<T>]>,
    state: &'a State<[[AtomicWaker; 3]]>,
}

impl<T> Clone for Raw<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Raw<'_, T> {}

impl<'a, T> Raw<'a, T> {
    #[inline(always)]
    pub(crate) fn new(ring: &'a Ring<T, [Slot<T>]>, state: &'a State<[[AtomicWaker; 3]]>) -> Self {
        Raw { ring, state }
    }

    #[inline(always)]
    fn ring(self) -> &'a Ring<T, [Slot<T>]> {
        self.ring
    }

    // ------------------------------------------------------------------------ classes

    #[inline]
    pub(crate) fn getters(self) -> Class<'a> {
        let counted = self.ring().counted(ring::Kind::Getters);
        self.state.waiters.class(Kind::Getters, counted)
    }

    #[inline]
    pub(crate) fn putters(self) -> Class<'a> {
        let counted = self.ring().counted(ring::Kind::Putters);
        self.state.waiters.class(Kind::Putters, counted)
    }

    #[inline]
    pub(crate) fn joiners(self) -> Class<'a> {
        let counted = self.ring().counted(ring::Kind::Joiners);
        self.state.waiters.class(Kind::Joiners, counted)
    }

    // ------------------------------------------------------------------------ put

    /// One put attempt. `turn`: the caller is a woken put holding a turn, which may take a
    /// slot kept for woken puts (anyone else leaves those alone).
    #[inline]
    pub(crate) fn put(self, turn: &mut Turn<'_>, item: T) -> Result<JobId, TryPutError<T>> {
        let putters = self.putters();
        let owed = if turn.is_held() {
            0
        } else {
            putters.turns().owed_signed()
        };
        match self.ring().try_put(item, owed) {
            Ok((id, getters)) => {
                // Hand-off: one more item for one more getter. Then the event (user code:
                // a subscriber that panics unwinds a put whose getter was told), and the
                // turn last (a panic before it leaves the turn with the waiting put, whose
                // drop passes it on), as on the heap queue.
                if getters != Wake::No {
                    self.getters().hand_off(getters);
                }
                crate::events::accepted("", id);
                if turn.is_held() {
                    self.putter_turn_used(turn);
                }
                Ok(id)
            }
            Err(refused) => {
                // A final answer or a slot lost to a racing try: the turn is used up.
                turn.redeem(putters.turns());
                Err(match refused {
                    PutRefused::Full(item) => TryPutError::Full(item),
                    PutRefused::Closed(item) => TryPutError::ShutDown(item),
                })
            }
        }
    }

    /// A woken put placed its item: its turn is redeemed; a slot left over after the turns
    /// still owed goes to one more putter (a try refused meanwhile may have gone to sleep).
    #[cold]
    fn putter_turn_used(self, turn: &mut Turn<'_>) {
        let putters = self.putters();
        if !turn.redeem(putters.turns()) {
            return;
        }
        let room = self.capacity().saturating_sub(self.len());
        if room > putters.turns().owed() {
            putters.hand_off(Wake::Check);
        }
    }

    // ------------------------------------------------------------------------ get

    /// One get attempt: takes the oldest item, wraps it (`wrap` builds the delivery), and
    /// only then wakes a putter for the slot it freed. `turn`: as for [`put`](Raw::put).
    #[inline(always)]
    pub(crate) fn take<D>(
        self,
        turn: &mut Turn<'_>,
        wrap: impl FnOnce(JobId, T) -> D,
    ) -> Result<D, TryGetError> {
        // Acquire: pairs with the drain's Release, so a get that refuses here is ordered
        // after the start of the drain (an observer's view only: the drain's items are
        // taken through the ring either way, once each).
        if self.state.drained.load(Ordering::Acquire) != 0 {
            turn.redeem(self.getters().turns());
            return Err(TryGetError::ShutDown);
        }
        // Read by the ring once it sees an item, so it sees every turn granted before that
        // item was published (see `Ring::try_get`).
        let held = turn.is_held();
        let owed = || if held { 0 } else { self.owed_to_woken() };
        match self.ring().try_get(owed) {
            Ok(taken) => {
                // The item goes into its delivery before anything runs that could panic or
                // call back (a delivery unwound ends as abandoned); then the putter for the
                // freed slot, the event, and the turn last, as on the heap queue.
                let delivery = wrap(taken.id, taken.item);
                if taken.putters != Wake::No {
                    self.putters().hand_off(taken.putters);
                }
                crate::events::delivered("", taken.id, 1);
                if turn.is_held() {
                    self.getter_turn_used(turn);
                }
                Ok(delivery)
            }
            Err(nothing) => {
                turn.redeem(self.getters().turns());
                Err(match nothing {
                    Nothing::Empty => TryGetError::Empty,
                    Nothing::Closed => TryGetError::ShutDown,
                })
            }
        }
    }

    /// The items a getter without a turn leaves alone: the turns owed to woken getters.
    /// None once the queue is shut down: then the ring only drains, and a getter held back
    /// could sleep through the end (a shutdown wakes only the getters waiting when it
    /// comes).
    #[inline]
    fn owed_to_woken(self) -> i64 {
        let owed = self.getters().turns().owed_signed();
        if owed <= 0 || self.ring().is_closed() {
            return 0;
        }
        owed
    }

    /// A woken get took its item: as [`putter_turn_used`](Raw::putter_turn_used), for an
    /// item left over.
    #[cold]
    fn getter_turn_used(self, turn: &mut Turn<'_>) {
        let getters = self.getters();
        if !turn.redeem(getters.turns()) {
            return;
        }
        if self.len() > getters.turns().owed() {
            getters.hand_off(Wake::Check);
        }
    }

    // --------------------------------------------------------------------- endings

    /// Records the end of an in-flight item (`None`: abandoned) and, if that settled the
    /// queue, wakes the joiners. The ledger counts it before any waker runs.
    #[inline]
    pub(crate) fn end(self, outcome: Option<Outcome>) {
        self.state.tally.resolve(outcome);
        self.ended(1);
    }

    /// Counts `n` endings whose outcomes are counted.
    #[inline]
    fn ended(self, n: u64) {
        let (settled, joiners) = self.ring().end(n, false);
        if settled && joiners {
            self.joiners().wake_all();
        }
    }

    // --------------------------------------------------------------------- shutdown

    /// Refuses puts from now on, and wakes every waiting put (to refuse) and get (to
    /// drain, then refuse). Returns whether this call shut the queue down.
    pub(crate) fn shut_down(self) -> bool {
        let first = self.ring().close();
        if first {
            crate::events::shut_down("", self.ring().unfinished());
        }
        // Both classes are woken even if a putter's waker panics.
        let mut classes = [self.putters(), self.getters()].into_iter();
        each_despite_panics(|| classes.next(), Class::wake_all);
        first
    }

    /// Shuts down and makes every later get refuse: what the ring holds now is left for
    /// [`drain_one`](Raw::drain_one).
    pub(crate) fn start_drain(self) {
        self.shut_down();
        // Release: see `take`.
        self.state.drained.store(1, Ordering::Release);
    }

    /// Takes the oldest item left in a closed ring, counted discarded before it is
    /// returned; `None` once the ring is empty.
    pub(crate) fn drain_one(self) -> Option<(JobId, T)> {
        let taken = self.ring().take_drained().ok()?;
        crate::events::discarded("", taken.id);
        self.state.tally.discard(1);
        self.ended(1);
        Some((taken.id, taken.item))
    }

    // ----------------------------------------------------------------- observation

    /// A snapshot of the counts, read as the heap queue's is (see `tally.rs`).
    pub(crate) fn ledger(self) -> Ledger {
        let ended = self.ring().ended();
        let outcomes = self.state.tally.outcomes(ended);
        let (taken, accepted) = self.ring().progress();
        tally::ledger(outcomes, 0, taken, accepted)
    }

    /// Items buffered or in flight.
    #[inline]
    pub(crate) fn unfinished(self) -> u64 {
        self.ring().unfinished()
    }

    /// Items buffered (a snapshot).
    #[inline]
    pub(crate) fn len(self) -> usize {
        self.ring().len() as usize
    }

    /// The bound: the ring's slot count.
    #[inline]
    pub(crate) fn capacity(self) -> usize {
        self.ring().slot_count()
    }

    pub(crate) fn is_shut_down(self) -> bool {
        self.ring().is_closed()
    }
}
