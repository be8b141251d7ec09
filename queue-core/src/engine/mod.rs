//! The raw queue: every atomic of the queue's state and every place an item can be, with
//! no public face, no journal and no policy.
//!
//! # Where an item is
//!
//! An accepted item is in exactly one place at every moment:
//!
//! - **buffered**: in the buffer (`buffer/`: the ring, or the growable buffer), under the
//!   id its put drew; or in the **lane** (`lane.rs`), returned by a delivery for another
//!   attempt, with its id and that attempt's number;
//! - **in flight**: in the hands of whoever took it (a [`Delivery`](crate::Delivery)),
//!   which must end it;
//! - **ended**: counted once, under one outcome ([`Tally`](tally::Tally)), or handed back
//!   by a drain.
//!
//! The ledger's counts follow the moves: a put accepts (one id drawn), a take moves an
//! item from the buffer into flight, a return moves it from flight into the lane and a
//! take from the lane back, an ending counts it ended. The snapshot in `tally.rs` reads
//! them in an order that makes every snapshot balance.
//!
//! # Invariants
//!
//! - Every accepted id is in exactly one place; a returned item keeps its id.
//! - A get's turn covers every place a get can take from: the lane and the buffer. While
//!   returned items wait, every other get serves the lane: a returned item waits only for
//!   the returned items ahead of it (twice their number of deliveries, at most), never for
//!   the fresh backlog, and fresh items keep moving even if every delivery comes back.
//! - "Accepted" and "shut down" are exclusive: the buffer's closed flag is in the word ids
//!   are drawn from, so a put either drew its id before the close or is refused.
//! - A get reports the end only when nothing can come any more: the buffer is closed and
//!   empty, and the lane is empty and either closed or unable to receive (nothing is
//!   unfinished that could come back).
//! - No user code (waker, journal, item `Drop`) runs while an item is between two places;
//!   every count a change moves is moved before any waker runs.
//!
//! # Waking
//!
//! Each change wakes whom it concerns, after it is complete: a put one getter, a take one
//! putter (buffered limit), an ending one putter (unfinished limit) and, if it settled
//! the queue, every joiner; a return one getter; a shutdown everyone. The waiter classes,
//! their counts and turns are in `wait/`.

mod batch;
pub(crate) mod buffer;
pub(crate) mod lane;
pub(crate) mod lifecycle;
pub(crate) mod registry;
pub(crate) mod tally;

use core::cell::Cell;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use alloc::vec::Vec;

use self::buffer::ring::{BoxedRing, Kind};
use self::buffer::slots::Limit;
use self::buffer::{Buffer, Nothing, PutRefused};
use self::lane::{Lane, Returned};
use self::lifecycle::{Lifecycle, Refusal};
use self::registry::Registry;
use self::tally::Tally;
use crate::error::{PutError, TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::outcome::Outcome;
use crate::sync::{fence, Ordering};
#[cfg(target_has_atomic = "ptr")]
use crate::wait::deferred::Deferred;
use crate::wait::turn::Turn;
use crate::wait::waiters::{Class, Waiters, Wake};

/// What a take asks of its caller once the item is in its delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct After {
    /// Whether to wake a putter for the slot the take freed.
    putters: Wake,
    /// The buffer is closed and this was its last item: tell the waiting getters.
    last: bool,
}

impl After {
    /// Nothing to do.
    const NOTHING: After = After {
        putters: Wake::No,
        last: false,
    };
}

impl<T> Returned<T> {
    /// A returned item as a take hands it out: it held no slot of its own in the buffer,
    /// so its take frees none.
    #[inline]
    fn handed_out(self) -> (Handout, T, After) {
        let handout = Handout {
            id: self.id,
            attempt: self.attempt,
        };
        (handout, self.item, After::NOTHING)
    }
}

/// What a get hands out besides the item: its id and which delivery of it this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handout {
    pub(crate) id: JobId,
    pub(crate) attempt: u32,
}

/// The raw queue; see the module docs.
pub(crate) struct RawQueue<T> {
    /// The fresh items with their ids, the limit, and the counts of ids drawn, items
    /// taken out and endings.
    buffer: Buffer<T>,
    /// The returned items.
    lane: Lane<T>,
    /// The outcome counters.
    tally: Tally,
    /// Shut down, orphaned, and the worker count.
    lifecycle: Lifecycle,
    /// Live producer guards; the last one to leave shuts the queue down.
    producers: Registry,
    /// Waiting gets: notified once per item put or returned, and all at once on shutdown.
    getters: Waiters,
    /// Waiting puts: notified once per freed slot, and all at once on shutdown and when the
    /// last worker leaves.
    putters: Waiters,
    /// Waiting joins: notified all at once when the unfinished count reaches zero.
    joiners: Waiters,
    /// Returns may come after a graceful shutdown (the redelivery policy): the lane stays
    /// open until an immediate one, and gets on a shut-down, empty queue wait while
    /// anything is unfinished (it could come back). Otherwise a shutdown closes the lane.
    returns_after_shutdown: bool,
    /// The wakers signalled and not yet woken, which every class of this queue shares
    /// (with `std`, each notifying thread's own list stands in for it, see `deferred.rs`).
    #[cfg(target_has_atomic = "ptr")]
    deferred: Arc<Deferred>,
    /// The user's name for the queue, carried by every event; empty if unset.
    label: &'static str,
}

impl<T> RawQueue<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        // One list of signalled wakers for every class, so that one drain after a transition
        // that signals several classes wakes them all.
        #[cfg(target_has_atomic = "ptr")]
        let deferred = Deferred::new();
        #[cfg(target_has_atomic = "ptr")]
        let waiters = || Waiters::new(&deferred);
        #[cfg(not(target_has_atomic = "ptr"))]
        let waiters = Waiters::new;
        let buffer = Buffer::new(limit);
        let putters = waiters();
        // A put that finds the putters' word unmarked with nothing owed checks a ring's
        // bound by the slot's stamp alone: the word is marked where that is not the bound
        // check (the other buffers do not look).
        if buffer.ring().is_some_and(|ring| !ring.puts_by_stamp()) {
            putters.turns().mark();
        }
        RawQueue {
            buffer,
            lane: Lane::new(),
            tally: Tally::new(),
            lifecycle: Lifecycle::new(),
            producers: Registry::new(),
            getters: waiters(),
            putters,
            joiners: waiters(),
            returns_after_shutdown: false,
            #[cfg(target_has_atomic = "ptr")]
            deferred,
            label: "",
        }
    }

    /// A class of waiters of its own (counted in its own word) that shares this queue's
    /// list of signalled wakers: for the cancellation waiters.
    pub(crate) fn new_waiters(&self) -> Waiters {
        #[cfg(target_has_atomic = "ptr")]
        return Waiters::new(&self.deferred);
        #[cfg(not(target_has_atomic = "ptr"))]
        Waiters::new()
    }

    // -------------------------------------------------------------- configuration

    /// Makes acceptances observable: from now on the buffer is one that lets a put's
    /// `accepted` hook run before the item can be taken (see `buffer/mod.rs`). Only for a
    /// queue not shared yet.
    pub(crate) fn observe(&mut self) {
        self.buffer.for_journal();
    }

    /// Whether returns may come after a graceful shutdown (see the field). Only for a
    /// queue not shared yet; a queue already shut down keeps its lane as it is.
    pub(crate) fn set_returns_after_shutdown(&mut self, returns: bool) {
        self.returns_after_shutdown = returns;
        // Settling concerns the getters only while returns can come after a shutdown
        // (see `getters_at_end`).
        self.buffer.watch_settled(returns);
    }

    /// Names the queue in its events. Only for a queue not shared yet.
    pub(crate) fn set_label(&mut self, label: &'static str) {
        self.label = label;
    }

    /// The name set with [`set_label`](RawQueue::set_label); empty if none was.
    #[inline(always)]
    pub(crate) fn label(&self) -> &'static str {
        self.label
    }

    pub(crate) fn limit(&self) -> Limit {
        self.buffer.limit()
    }

    /// Whether the buffer is the ring. An observed queue is never on the ring
    /// ([`observe`](RawQueue::observe) moves it off), so a layer above that keeps an
    /// observer answers "observed?" with this look, the one its take or ending makes
    /// anyway.
    #[inline(always)]
    pub(crate) fn is_ring(&self) -> bool {
        self.buffer.ring().is_some()
    }

    // ------------------------------------------------------------------------ put

    /// One put attempt. `turn`: the caller is a woken put holding a turn, which may take
    /// a slot owed to woken puts (see `turns.rs`). `accepted` runs with the id before the
    /// item can be taken (observed queues) or right after (the ring). If items landed
    /// after an immediate shutdown's drain, this one's included, `late` is called before
    /// they are taken back out, and the handler it returns receives them, for the caller
    /// to end as discarded.
    ///
    /// Always inlined, and small: the common put (no turn held, nothing owed, the
    /// putters' word unmarked, on the ring or the list) is a load of that word and the
    /// buffer's put; everything else is in functions of its own (`put_on_ring`,
    /// `put_other`) that the compiler may keep out of line, so that the common put stays
    /// inlined into its caller however the crate is split into codegen units.
    #[inline(always)]
    pub(crate) fn put<L: FnMut(JobId, T)>(
        &self,
        turn: &mut Turn<'_>,
        item: T,
        accepted: impl FnOnce(JobId),
        late: impl FnOnce() -> L,
    ) -> Result<JobId, TryPutError<T>> {
        // One load of the putters' word answers the common put (see `put_with`). A ring
        // then checks its bound by the slot's stamp alone (the word is marked where that
        // is not the bound check, see `new`); the list has no bound. Neither has a journal
        // to tell, nor lands an item after a drain (see `buffer/mod.rs`).
        let clear = !turn.is_held() && self.putters.turns().gate().is_clear();
        if let Some(ring) = self.buffer.ring() {
            if clear {
                return self.put_done(ring.try_put_by_stamp(item));
            }
            return self.put_on_ring(ring, turn.if_held(), item);
        }
        if clear {
            if let Some(list) = self.buffer.list() {
                return self.put_done(list.try_put(item));
            }
        }
        self.put_other(turn.if_held(), item, accepted, late)
    }

    /// The end of a common put (see [`put`](RawQueue::put)): a getter told of the item,
    /// or the refusal.
    #[inline(always)]
    fn put_done(&self, put: Result<(JobId, Wake), PutRefused<T>>) -> Result<JobId, TryPutError<T>> {
        match put {
            Ok((id, getters)) => {
                // Hand-off: one more item means one more getter can proceed.
                if getters != Wake::No {
                    self.getters().notify_for(getters, 1);
                }
                // The event once the getters are told (see `put_with`).
                crate::events::accepted(self.label, id);
                Ok(id)
            }
            Err(PutRefused::Full(item)) => Err(TryPutError::Full(item)),
            // A shutdown closed the buffer after the putters' word was read.
            Err(PutRefused::Closed(item)) => Err(TryPutError::ShutDown(item)),
        }
    }

    /// [`put`](RawQueue::put) on the ring, with a turn, or with slots owed or the
    /// putters' word marked. Generic over the item type alone, so that every caller of
    /// every queue of `T` shares one copy.
    #[inline]
    fn put_on_ring(
        &self,
        ring: &BoxedRing<T>,
        turn: Option<&mut Turn<'_>>,
        item: T,
    ) -> Result<JobId, TryPutError<T>> {
        // A ring's queue has no journal (see `buffer/mod.rs`), and nothing lands after its
        // drain. With nothing owed (`None`) and the word unmarked, `try_put` checks the
        // bound by the slot's stamp alone (see `new`).
        self.put_with(
            turn,
            item,
            |item, owed| ring.try_put(item, owed.unwrap_or(0)),
            || false,
        )
    }

    /// [`put`](RawQueue::put) on the list or the growable buffer, with or without a turn,
    /// whatever the putters' word says.
    #[inline]
    fn put_other<L: FnMut(JobId, T)>(
        &self,
        turn: Option<&mut Turn<'_>>,
        item: T,
        accepted: impl FnOnce(JobId),
        late: impl FnOnce() -> L,
    ) -> Result<JobId, TryPutError<T>> {
        // The list has a copy of its own, whose branches the compiler keeps apart from the
        // growable buffer's. Nothing lands after its drain, and it owes no slot (its queue
        // is unbounded).
        if let Some(list) = self.buffer.list() {
            return self.put_with(turn, item, |item, _| list.try_put(item), || false);
        }
        // And the growable buffer, whose put runs `accepted` before the item can be taken
        // and is answered with a look for a drain it landed after.
        match self.buffer.growable() {
            Some(growable) => {
                // Taken by the look after the put, or by the guard below as a panic unwinds it.
                let late = Cell::new(Some(late));
                self.put_with(
                    turn,
                    item,
                    |item, owed| {
                        // Without `std` nothing catches a journal's panic, which `accepted`
                        // may raise once the id is drawn: the growable buffer then buffers
                        // the item all the same, and this guard tells the getters of it and
                        // looks for a drain it landed after.
                        let unwinding = UnwoundPut {
                            queue: self,
                            late: &late,
                        };
                        let put = growable.put(item, owed.unwrap_or(0), accepted);
                        core::mem::forget(unwinding);
                        put.map(|id| (id, Wake::Check))
                    },
                    || late.take().is_some_and(|late| self.buffer.after_put(late)),
                )
            }
            None => unreachable!("a buffer is a ring, a list or a growable buffer"),
        }
    }

    /// [`put`](RawQueue::put) through `put_in`, the buffer's put, and `after_put`, its look
    /// for items landed after a drain. `put_in` is given the slots to leave alone (zero or
    /// less: none), or `None` when nothing is owed and the putters' word is unmarked (see
    /// `new`).
    #[inline(always)]
    fn put_with(
        &self,
        turn: Option<&mut Turn<'_>>,
        item: T,
        put_in: impl FnOnce(T, Option<i64>) -> Result<(JobId, Wake), PutRefused<T>>,
        after_put: impl FnOnce() -> bool,
    ) -> Result<JobId, TryPutError<T>> {
        // One load of the putters' word answers the common put: unmarked, the lifecycle
        // refuses nothing (a shutdown and the last worker leaving mark it first), and with
        // nothing owed either, the put needs no other look.
        let gate = self.putters.turns().gate();
        let held = turn.is_some();
        let owed = if gate.is_clear() && !held {
            None
        } else {
            if gate.is_marked() {
                if let Some(refusal) = self.lifecycle.refusal() {
                    // A final answer uses the turn up.
                    if let Some(turn) = turn {
                        turn.redeem(self.putters.turns());
                    }
                    return Err(refused(refusal, item).into());
                }
            }
            // Without a turn, the slots owed to woken puts are not free: a `try_put` or a
            // new put cannot take the slot a woken put was woken for.
            Some(if held { 0 } else { gate.owed_signed() })
        };
        match put_in(item, owed) {
            Ok((id, getters)) => {
                // Hand-off: one more item means one more getter can proceed.
                match getters {
                    Wake::No => {}
                    // The growable buffer's puts: their notification is the read-modify-write
                    // after which a put looks for a drain it landed after.
                    Wake::Check => {
                        self.getters().notify_for(getters, 1);
                        if after_put() {
                            self.wake_getters_at_end();
                        }
                    }
                    _ => self.getters().notify_for(getters, 1),
                }
                // The event once the getters are told: a subscriber that panics unwinds a
                // put whose item is buffered and announced. The turn last: a panic before
                // it leaves the turn with the waiting put, whose drop passes it on (see
                // `registration.rs`), so it is given up once either way.
                crate::events::accepted(self.label, id);
                if let Some(turn) = turn {
                    self.putter_turn_used(turn);
                }
                Ok(id)
            }
            Err(PutRefused::Full(item)) => {
                // The slot went to a try that raced the grant: the turn is gone with it (and
                // a slot freed meanwhile that it kept a try from taking is told of).
                if let Some(turn) = turn {
                    self.putter_turn_used(turn);
                }
                Err(TryPutError::Full(item))
            }
            // A shutdown closed the buffer after the lifecycle check.
            Err(PutRefused::Closed(item)) => {
                if let Some(turn) = turn {
                    turn.redeem(self.putters.turns());
                }
                Err(TryPutError::ShutDown(item))
            }
        }
    }

    // ------------------------------------------------------------------------ get

    /// Takes the next item (the lane first, then the buffer), counts it in flight and
    /// wraps it (`wrap`), calls `delivered` if given (an observed queue), and only then
    /// frees its slot and wakes a waiting put: the waker, user code, runs while the item
    /// is in a live delivery, whose unwinding would end it as abandoned.
    ///
    /// `turn`: the caller is a woken get holding a turn, which may take an item owed to
    /// woken gets (see `turns.rs`); anyone else takes only items not owed.
    ///
    /// Always inlined, so that the delivery is built where the caller's future returns it.
    #[inline(always)]
    pub(crate) fn take<D>(
        &self,
        turn: &mut Turn<'_>,
        wrap: impl FnOnce(Handout, T) -> D,
        delivered: Option<impl FnOnce(Handout)>,
    ) -> Result<D, TryGetError> {
        // The common take: a getter without a turn, on an unobserved queue with nothing
        // returned, takes a fresh item. The ring has a copy of its own, whose branches the
        // compiler keeps apart from the growable buffer's; it is looked for first, so that
        // a caller that just asked the same (the fate layer's journal check) is answered
        // by that look, before the lane's atomic load would make it look again.
        let owed = || self.owed_to_woken();
        if let Some(ring) = self.buffer.ring() {
            if !(turn.is_held() || delivered.is_some() || self.lane.may_hold()) {
                return match ring.try_get(owed) {
                    Ok(taken) => self.hand_out_fresh(taken, wrap),
                    Err(nothing) => self.take_after_nothing(nothing, wrap),
                };
            }
        } else if !(turn.is_held() || delivered.is_some() || self.lane.may_hold()) {
            return match self.buffer.take(owed) {
                Ok(taken) => self.hand_out_fresh(taken, wrap),
                Err(nothing) => self.take_after_nothing(nothing, wrap),
            };
        }
        self.take_any(turn.if_held(), wrap, delivered)
    }

    /// Hands out a fresh item taken by a getter without a turn on an unobserved queue.
    #[inline(always)]
    fn hand_out_fresh<D>(
        &self,
        taken: buffer::Taken<T>,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        if taken.putters == Wake::No && !taken.last {
            let handout = Handout {
                id: taken.id,
                attempt: 1,
            };
            // The item goes into its delivery before the event (user code) runs: a
            // delivery unwound by it ends as abandoned.
            let delivery = wrap(handout, taken.item);
            crate::events::delivered(self.label, taken.id, 1);
            return Ok(delivery);
        }
        self.took_fresh(taken, wrap)
    }

    /// [`hand_out_fresh`](RawQueue::hand_out_fresh) for a take that asks more of the
    /// caller once its delivery exists: a putter to wake, or the end to tell.
    #[inline]
    fn took_fresh<D>(
        &self,
        taken: buffer::Taken<T>,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        let handout = Handout {
            id: taken.id,
            attempt: 1,
        };
        let after = After {
            putters: taken.putters,
            last: taken.last,
        };
        let delivery = wrap(handout, taken.item);
        self.after_take(handout, after, None::<fn(Handout)>);
        // Last: a subscriber that panics unwinds a delivery whose wake-ups are sent.
        crate::events::delivered(self.label, handout.id, 1);
        Ok(delivery)
    }

    /// The buffer had nothing for a getter without a turn on an unobserved queue: a
    /// returned item if one came meanwhile, or the answer (see `nothing_buffered`).
    #[cold]
    fn take_after_nothing<D>(
        &self,
        nothing: Nothing,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        let (handout, item, after) = self.nothing_buffered(nothing, None)?;
        let delivery = wrap(handout, item);
        debug_assert_eq!(after, After::NOTHING, "a returned item frees no slot");
        crate::events::delivered(self.label, handout.id, handout.attempt);
        Ok(delivery)
    }

    /// [`take`](RawQueue::take) from every place, for a woken getter, an observed queue,
    /// or while returned items wait.
    #[inline(always)]
    fn take_any<D>(
        &self,
        mut turn: Option<&mut Turn<'_>>,
        wrap: impl FnOnce(Handout, T) -> D,
        delivered: Option<impl FnOnce(Handout)>,
    ) -> Result<D, TryGetError> {
        let (handout, item, after) = self.take_item(turn.as_deref_mut())?;
        // The item first goes into its delivery; only then does anything run that could
        // panic or call back (wakers, the journal, a subscriber), and a delivery unwound by
        // it ends as abandoned. The event comes last, once the wake-ups are sent.
        let delivery = wrap(handout, item);
        if !(after == After::NOTHING && delivered.is_none()) {
            self.after_take(handout, after, delivered);
        }
        crate::events::delivered(self.label, handout.id, handout.attempt);
        // The turn is redeemed last: a panic before this (the journal, a subscriber, a
        // waker) leaves it with the waiting get, whose drop passes it on (see
        // `registration.rs`), so it is given up once either way.
        if let Some(turn) = turn {
            self.getter_turn_used(turn);
        }
        Ok(delivery)
    }

    /// Takes the next item out of the lane or the buffer, with its handout and what its
    /// take asks of the caller once the item is in its delivery.
    #[inline(always)]
    fn take_item(&self, turn: Option<&mut Turn<'_>>) -> Result<(Handout, T, After), TryGetError> {
        // A woken getter's turn is redeemed once it has its item (see `getter_turn_used`),
        // so that no try takes the item it was woken for while it takes it.
        // The items a getter without a turn leaves alone: those owed to woken getters,
        // wherever they are (the lane's count against them first). Read by the buffer once
        // it sees an item, so it sees every turn granted before that item was published.
        let held = turn.is_some();
        let owed = || if held { 0 } else { self.owed_to_woken() };
        if self.lane.may_hold() && self.lane.serves_next() {
            if let Some(returned) = self.take_returned(held) {
                return Ok(returned.handed_out());
            }
        }
        match self.buffer.take(owed) {
            Ok(taken) => {
                let handout = Handout {
                    id: taken.id,
                    attempt: 1,
                };
                let after = After {
                    putters: taken.putters,
                    last: taken.last,
                };
                Ok((handout, taken.item, after))
            }
            Err(nothing) => self.nothing_buffered(nothing, turn),
        }
    }

    /// What a take asks of the caller once its delivery exists: tells an observed queue's
    /// journal, wakes a putter for the slot it freed and the getters if the end came. (A
    /// woken get's turn is redeemed by the caller, last.)
    ///
    /// The wake-ups are sent also if the journal panics (without `std` nothing catches its
    /// panics): a guard sends them as the panic unwinds.
    #[inline(never)]
    fn after_take(&self, handout: Handout, after: After, delivered: Option<impl FnOnce(Handout)>) {
        let wakes = TakeWakes { queue: self, after };
        if let Some(delivered) = delivered {
            delivered(handout);
        }
        drop(wakes);
    }

    /// Wakes a putter for the slot a take freed, and the getters if it was the end; then
    /// gives back `answer`.
    fn after_wakes<D>(&self, putters: Wake, last: bool, answer: D) -> D {
        if putters != Wake::No {
            self.putters().notify_for(putters, 1);
        }
        if last {
            self.wake_getters_at_end();
        }
        answer
    }

    /// The items a getter without a turn leaves alone in the buffer: the turns owed to
    /// woken getters, less the returned items waiting for them. None once the queue is
    /// shut down: then the buffer only drains, and a getter held back could sleep through
    /// the end (a shutdown wakes only the getters waiting when it comes).
    ///
    /// Zero or less means none (see `Turns::owed_signed`).
    #[inline]
    fn owed_to_woken(&self) -> i64 {
        let owed = self.getters.turns().owed_signed();
        if owed <= 0 || self.is_shut_down() {
            return 0;
        }
        // No overflow: both counts are at most `isize::MAX`, and `owed` is positive.
        owed - self.lane.len() as i64
    }

    /// The oldest returned item, unless the getter has no turn and every item waiting is
    /// owed to a woken getter.
    #[inline]
    fn take_returned(&self, turn: bool) -> Option<Returned<T>> {
        // As `owed_to_woken`, against everything waiting (the lane and the buffer).
        if !turn && !self.getters.turns().lets_pass(|| self.len()) && !self.is_shut_down() {
            return None;
        }
        self.lane.pop()
    }

    /// A woken getter took its item (or found none): its turn is redeemed, and the getter
    /// stops holding it in the same step (see `turn.rs`), before the wake-up below runs a
    /// waker. A try refused while the turn was counted may have gone to sleep with an item
    /// left over; if any is, a getter is told (only one with no notification coming: see
    /// `waiters.rs`).
    #[cold]
    fn getter_turn_used(&self, turn: &mut Turn<'_>) {
        let getters = self.getters();
        if !turn.redeem(getters.turns()) {
            return;
        }
        // SeqCst: pairs with the fence after a registration (see `Class::listen`), so that
        // either a registering getter's re-check reads this redemption or this look reads
        // its count-in and the item it re-checks for.
        fence(Ordering::SeqCst);
        if self.len() > getters.turns().owed() {
            getters.notify_additional(1);
        }
    }

    /// A woken putter placed its item: as [`getter_turn_used`](RawQueue::getter_turn_used),
    /// for a slot left over.
    #[cold]
    fn putter_turn_used(&self, turn: &mut Turn<'_>) {
        let putters = self.putters();
        if !turn.redeem(putters.turns()) {
            return;
        }
        // SeqCst: as in `getter_turn_used`, for a registering putter and the slot.
        fence(Ordering::SeqCst);
        if self.room() > putters.turns().owed() {
            putters.notify_additional(1);
        }
    }

    /// Free slots (a snapshot; `usize::MAX` without a limit).
    fn room(&self) -> usize {
        match self.buffer.limit() {
            Limit::None => usize::MAX,
            Limit::Buffered(n) => n.saturating_sub(self.buffer.len()),
            Limit::Unfinished(n) => n.saturating_sub(self.unfinished() as usize),
        }
    }

    /// The buffer had nothing: a returned item, if there is one. Shut down and empty, the
    /// answer is final only if nothing can come back: the lane is empty and closed, or
    /// nothing is unfinished.
    #[cold]
    fn nothing_buffered(
        &self,
        nothing: Nothing,
        turn: Option<&mut Turn<'_>>,
    ) -> Result<(Handout, T, After), TryGetError> {
        // Looked at after the buffer: an item returned before this look is in the lane, or
        // was taken; a pop after seeing the lane closed is final.
        let closed = self.lane.is_closed();
        if let Some(returned) = self.take_returned(turn.is_some()) {
            return Ok(returned.handed_out());
        }
        match nothing {
            Nothing::Closed if closed || !self.returns_after_shutdown || self.is_settled() => {
                if let Some(turn) = turn {
                    turn.redeem(self.getters.turns());
                }
                Err(TryGetError::ShutDown)
            }
            // Nothing to take (a try that raced the grant took the item): the turn is gone
            // with the item; the getter waits again like any other.
            // If an item came meanwhile that this turn kept a try from taking, the
            // redemption tells a getter.
            Nothing::Empty | Nothing::Closed => {
                if let Some(turn) = turn {
                    self.getter_turn_used(turn);
                }
                Err(TryGetError::Empty)
            }
        }
    }

    // ---------------------------------------------------------------------- returns

    /// Puts an item taken out back for another delivery, numbered `attempt`, at the back
    /// of the lane, and wakes a getter for it. Hands the item back if the lane is closed
    /// (an immediate shutdown, or a graceful one when no return may come after it).
    pub(crate) fn give_back(&self, id: JobId, attempt: u32, item: T) -> Result<(), T> {
        self.give_back_unannounced(id, attempt, item)?;
        self.announce_returns(1);
        Ok(())
    }

    /// The first half of [`give_back`](RawQueue::give_back): the item goes into the lane,
    /// and no getter is woken, so no user code runs; the caller then calls
    /// [`announce_returns`](RawQueue::announce_returns) for it, outside any lock it holds.
    pub(crate) fn give_back_unannounced(&self, id: JobId, attempt: u32, item: T) -> Result<(), T> {
        let returned = Returned { id, attempt, item };
        self.lane.push(returned).map_err(|returned| returned.item)
    }

    /// The second half of [`give_back`](RawQueue::give_back), for `n` items put into the
    /// lane: wakes a getter for each.
    pub(crate) fn announce_returns(&self, n: usize) {
        if n != 0 {
            // Hand-off: one more item for one more getter.
            self.getters().notify_additional(n);
        }
    }

    // --------------------------------------------------------------------- endings

    /// Records the end of an in-flight item (`None`: abandoned). The ledger and the slot
    /// are settled before any waker runs, so a panicking waker leaks neither.
    ///
    /// Always inlined: the ending of each buffer stays a straight path in the resolve.
    #[inline(always)]
    pub(crate) fn end(&self, outcome: Option<Outcome>) {
        self.tally.resolve(outcome);
        self.ended(1);
    }

    /// Records `n` in-flight or buffered items discarded (handed back by a drain, or kept
    /// as dead letters).
    pub(crate) fn discard(&self, n: usize) {
        if n != 0 {
            self.tally.discard(n as u64);
            self.ended(n as u64);
        }
    }

    /// Counts `n` items ended (their outcomes already counted), and wakes whoever that
    /// concerns: putters if it freed slots, the joiners if it settled the queue.
    #[inline(always)]
    fn ended(&self, n: u64) {
        if let Some(ended) = self.buffer.end(n) {
            if ended.wakes_anyone() {
                self.wake_for_ended(ended, n as usize);
            }
        }
    }

    /// The waking half of [`ended`](RawQueue::ended), out of line: most endings concern
    /// nobody.
    #[inline(never)]
    fn wake_for_ended(&self, ended: buffer::Ended, n: usize) {
        let putters = ended.putters != Wake::No && self.putters().signal_for(ended.putters, n);
        let joiners = ended.joiners != Wake::No && self.joiners().signal_all_for(ended.joiners);
        let getters = ended.settled && self.getters_at_end();
        if putters | joiners | getters {
            self.wake_signalled();
        }
    }

    /// Gets on a shut-down, empty queue that wait for returns are told once nothing can
    /// come back (the queue settled). Marks them.
    ///
    /// The ending that settled the queue and a graceful shutdown race: this reads the
    /// lifecycle after the ending's write to `ended`, and a getter woken by the shutdown
    /// reads `ended` after the shutdown's write to the lifecycle. With plain loads each
    /// could miss the other's write, and the getter would sleep on a settled queue with
    /// nobody left to wake it; so this look is a read-modify-write
    /// ([`Lifecycle::is_shut_down_ordered`]).
    #[inline]
    fn getters_at_end(&self) -> bool {
        self.returns_after_shutdown
            && self.lifecycle.is_shut_down_ordered()
            && self.getters().signal_all()
    }

    /// Tells every waiting getter to look again: the buffer's last item was taken, or a
    /// put found the buffer drained. Rare: only after a shutdown.
    #[cold]
    fn wake_getters_at_end(&self) {
        self.getters().notify_all();
    }

    // --------------------------------------------------------------------- shutdown

    /// Refuses puts from now on, and wakes every waiting put (to refuse) and get (to
    /// drain, then refuse). Returns whether this call shut the queue down.
    pub(crate) fn shut_down(&self) -> bool {
        // Marked before the lifecycle says "shut down": a put that starts after anyone saw
        // that (an observer, a batch put's refusal) sees the mark and looks (see
        // `put_with`); the buffer's close below is what refuses the puts that did not look.
        self.putters.turns().mark();
        let first = self.lifecycle.shut_down();
        if !self.returns_after_shutdown {
            self.lane.close();
        }
        // Closing the buffer is what makes it final: a put that passed the lifecycle check
        // before this line either drew its id before the close or is refused with its item.
        self.buffer.close();
        // Both classes are signalled before any waker runs, so a panicking putter waker
        // cannot leave the getters asleep.
        let putters = self.putters().signal_all();
        let getters = self.getters().signal_all();
        if putters | getters {
            self.wake_signalled();
        }
        first
    }

    /// Shuts down, closes the lane, and takes every buffered and returned item, in that
    /// order. The items are not counted ended yet: the caller records them, then
    /// [`discard`](RawQueue::discard)s them.
    pub(crate) fn drain(&self) -> Vec<(JobId, T)> {
        // Closed before the shutdown wakes the getters, so a getter woken by it sees that
        // nothing can come back any more.
        self.lane.close();
        self.shut_down();
        let mut drained = self.buffer.drain(|| {
            // A read-modify-write of the getters' word between marking the buffer drained
            // and its first pop (see `growable.rs`).
            self.getters().signal_all();
        });
        drained.extend(self.lane.drain().into_iter().map(|r| (r.id, r.item)));
        // Getters that waited for a put on its way in look again, and the wakers of every
        // waiter signalled above run.
        self.getters().signal_all();
        self.wake_signalled();
        drained
    }

    // -------------------------------------------------------------- roles

    pub(crate) fn register_worker(&self) {
        self.lifecycle.register_worker();
    }

    /// A worker left; if it was the last, the waiting puts are told (to refuse).
    pub(crate) fn unregister_worker(&self) {
        // Marked before the exit that orphans the queue is in the lifecycle (see `shut_down`).
        // An exit raced by a new worker may mark and then not orphan the queue: its puts
        // then look at the lifecycle for good, which is slower, not wrong.
        if self
            .lifecycle
            .unregister_worker(|| self.putters.turns().mark())
        {
            crate::events::last_worker_left(self.label);
            // Terminal for the waiting puts: wake them all to refuse.
            self.putters().notify_all();
        }
    }

    pub(crate) fn workers(&self) -> usize {
        self.lifecycle.workers()
    }

    pub(crate) fn register_producer(&self) {
        self.producers.register();
    }

    /// A producer left; returns whether it was the last.
    pub(crate) fn unregister_producer(&self) -> bool {
        self.producers.unregister()
    }

    pub(crate) fn producers(&self) -> usize {
        self.producers.live()
    }

    // ---------------------------------------------------------------- observation

    /// A snapshot of the counts (see `tally.rs` for what it promises), for a queue that
    /// also holds taken items back outside the lane until they are due (`held`, read
    /// right after the lane): each is counted buffered, as a returned item is. The holder raises its count (with a
    /// release) once the item is held, and lowers it before the item moves on into the
    /// lane or is counted ended, so the order of `tally.rs` holds: no item is counted
    /// twice, and none is counted held before its take.
    pub(crate) fn ledger_holding(&self, held: impl FnOnce() -> u64) -> Ledger {
        let (counts, (outcomes, returned)) = self.buffer.counts(|ended| {
            let outcomes = self.tally.outcomes(ended);
            let lane = self.lane.len() as u64;
            (outcomes, lane + held())
        });
        tally::ledger(outcomes, returned, counts.taken, counts.accepted)
    }

    pub(crate) fn unfinished(&self) -> u64 {
        self.buffer.unfinished()
    }

    #[inline]
    pub(crate) fn is_settled(&self) -> bool {
        self.buffer.unfinished() == 0
    }

    /// Items buffered or returned.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.buffer.len() + self.lane.len()
    }

    #[inline]
    pub(crate) fn is_shut_down(&self) -> bool {
        self.lifecycle.is_shut_down()
    }

    // --------------------------------------------------------------------- waiters

    #[inline]
    pub(crate) fn getters(&self) -> Class<'_> {
        self.getters.counted_in(self.buffer.counted(Kind::Getters))
    }

    #[inline]
    pub(crate) fn putters(&self) -> Class<'_> {
        self.putters.counted_in(self.buffer.counted(Kind::Putters))
    }

    #[inline]
    pub(crate) fn joiners(&self) -> Class<'_> {
        self.joiners.counted_in(Some(self.buffer.joiners()))
    }

    /// Runs the wakers of every async wait signalled so far, of any class, outside every
    /// lock (see `deferred.rs`). A panicking waker does not stop the others.
    #[inline]
    pub(crate) fn wake_signalled(&self) {
        // The classes share one list: draining it through any of them drains all.
        self.getters().wake_deferred();
    }
}

/// A take's wake-ups, sent when dropped: after the journal heard of the delivery, or as a
/// panic in it unwinds.
struct TakeWakes<'q, T> {
    queue: &'q RawQueue<T>,
    after: After,
}

impl<T> Drop for TakeWakes<'_, T> {
    #[inline]
    fn drop(&mut self) {
        let After { putters, last } = self.after;
        self.queue.after_wakes(putters, last, ());
    }
}

/// For an item that a growable buffer buffered while a journal's panic unwound its put
/// (see `Growable::put`), what the put would have done after it: tells the getters, then
/// looks for an immediate shutdown's drain the item landed after, whose items `late`
/// buries (the journal may have shut the queue down itself). Forgotten when the put
/// returns.
struct UnwoundPut<'q, T, L: FnMut(JobId, T), F: FnOnce() -> L> {
    queue: &'q RawQueue<T>,
    late: &'q Cell<Option<F>>,
}

impl<T, L: FnMut(JobId, T), F: FnOnce() -> L> Drop for UnwoundPut<'_, T, L, F> {
    fn drop(&mut self) {
        let queue = self.queue;
        // The notification first: it is the read-modify-write after which a put looks for
        // a drain (see `growable.rs`).
        queue.getters().notify_for(Wake::Check, 1);
        if let Some(late) = self.late.take() {
            if queue.buffer.after_put(late) {
                queue.wake_getters_at_end();
            }
        }
    }
}

/// The error for a put the lifecycle refuses.
#[cold]
fn refused<T>(refusal: Refusal, item: T) -> PutError<T> {
    match refusal {
        Refusal::ShutDown => PutError::ShutDown(item),
        Refusal::NoWorkers => PutError::NoWorkers(item),
    }
}
