//! The batch moves of the raw queue: many puts, or many takes, with one pass of
//! notifications at the end.
//!
//! Each item moves as a single put or take would move it (the same checks, the same turn
//! rule, the same order of the lane and the buffer), so every invariant of the module docs
//! holds item by item. On the ring, the items of a batch are claimed together: one
//! compare-exchange for as many tickets as the batch can take, which is what as many
//! single claims in a row would do at that instant (see `buffer/raw/ring/batch.rs`). The
//! wake-ups the items ask for are summed and sent in one pass after the last move (one
//! notification call, one run of the woken wakers), and the caller's per-call work
//! (futures, journal gate) is paid once per batch.
//!
//! The ring's batch claims move items with no user code between the claim and the last
//! publication, so they are used only where handing an item out runs none: not with the
//! `metrics` feature (a take records a histogram through the user's recorder) nor with
//! `tracing` (an event per item, emitted as the item moves). There, and on the growable
//! buffer, a batch moves item by item.
//!
//! Deferring a notification is what a thread preempted between its claim and its
//! notification already does: a getter the claim counted has its notification on the way
//! (the claim's pending count keeps others from repeating it) and a getter that was not
//! counted re-checks the buffer after counting itself in. No user code runs while an item
//! is between two places: wakers run only in the final pass, journal hooks run as they do
//! for a single move.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use core::marker::PhantomData;

use super::buffer::ring::batch::NoRoom;
use super::buffer::slots::Limit;
use super::buffer::PutRefused;
use super::{refused, Handout, RawQueue};
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::wait::turn::Turn;
use crate::wait::waiters::{Class, Wake};

/// Whether handing an item out runs no user code, so the ring may claim a batch at once
/// (see the module docs).
const RING_BATCHES: bool = !cfg!(feature = "metrics") && !cfg!(feature = "tracing");

/// Wake-ups asked for by the moves of one batch, summed by kind (see [`Wake`]).
#[derive(Default)]
struct Wakes {
    counted: usize,
    reserved: usize,
    check: usize,
}

impl Wakes {
    #[inline(always)]
    fn add(&mut self, wake: Wake) {
        match wake {
            Wake::No => {}
            Wake::Counted => self.counted += 1,
            Wake::Reserved => self.reserved += 1,
            Wake::Check => self.check += 1,
        }
    }

    /// Signals `class` for every wake-up summed, without running any user code. Returns
    /// whether anyone was reached.
    #[inline]
    fn signal(&self, class: Class<'_>) -> bool {
        let mut reached = false;
        if self.reserved != 0 {
            reached |= class.signal_for(Wake::Reserved, self.reserved);
        }
        if self.counted != 0 {
            reached |= class.signal_for(Wake::Counted, self.counted);
        }
        if self.check != 0 {
            reached |= class.signal_for(Wake::Check, self.check);
        }
        reached
    }
}

impl<T> RawQueue<T> {
    /// How many items a put batch may find room for now: a hint that sizes a batch's
    /// step, read from counts that move meanwhile (`usize::MAX` if unbounded).
    #[inline]
    pub(crate) fn room_hint(&self) -> usize {
        match self.limit() {
            Limit::None => usize::MAX,
            Limit::Buffered(bound) => bound.saturating_sub(self.len()),
            Limit::Unfinished(bound) => {
                bound.saturating_sub(usize::try_from(self.unfinished()).unwrap_or(usize::MAX))
            }
        }
    }

    /// Puts the items of `items`, oldest first, until it is empty or one is refused,
    /// pushing each accepted id onto `ids`. `turn`: the caller is a woken put holding a
    /// turn, used by the first item (the rest leave the slots owed to woken puts alone,
    /// as any put without a turn does). `accepted` and `late` as for
    /// [`put`](RawQueue::put).
    ///
    /// Returns the refused item with its reason (taken out of `items`, which keeps the
    /// items after it), or `Ok` once `items` is empty. A panic in user code midway leaves
    /// the items not placed yet in `items`, in order. Every getter the accepted items
    /// concern is notified in one pass before returning, refused or not.
    pub(crate) fn put_many<L: FnMut(JobId, T)>(
        &self,
        turn: &mut Turn<'_>,
        items: &mut Vec<T>,
        mut accepted: impl FnMut(JobId),
        late: impl FnOnce() -> L,
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        if turn.is_held() && items.is_empty() {
            // Nothing to place: the turn goes to the next waiting put.
            self.putter_turn_used(turn);
            return Ok(());
        }
        if RING_BATCHES && self.buffer.ring().is_some() {
            if turn.is_held() {
                // The turn's item goes first, as a single put with the turn would go.
                let first = items.remove(0);
                ids.push(self.put(turn, first, &mut accepted, late)?);
            }
            return self.put_many_claimed(items, ids);
        }
        let putters = self.putters();
        // Sends the wake-ups the puts ask for when it is dropped: after the batch, or as a
        // panic in user code (a subscriber) unwinds.
        let mut pass = PutPass {
            queue: self,
            getters: Wakes::default(),
            late: Some(late),
            _late: PhantomData,
        };
        // The items not placed yet stay the caller's, also as a panic unwinds.
        let mut unplaced = Unplaced::new(items);
        let mut refused_at = None;
        while let Some(item) = unplaced.left.pop_front() {
            if let Some(refusal) = self.lifecycle.refusal() {
                turn.redeem(putters.turns());
                refused_at = Some(refused(refusal, item).into());
                break;
            }
            let owed = if turn.is_held() {
                0
            } else {
                putters.turns().owed_signed()
            };
            // Only the growable buffer's put calls `accepted`, once the id is drawn, and it
            // answers every item it buffers with `Wake::Check`: that wake-up is counted
            // before the journal hears of the item. Without `std` nothing catches the
            // journal's panic, which then unwinds a put whose item is buffered all the same
            // (see `Growable::put`); the pass still tells the getters of it, and looks for
            // a drain it landed after.
            let put = self.buffer.put(item, owed, |id| {
                pass.getters.add(Wake::Check);
                accepted(id);
            });
            match put {
                Ok((id, wake)) => {
                    ids.push(id);
                    if wake != Wake::Check {
                        pass.getters.add(wake);
                    }
                    crate::events::accepted(self.label, id);
                    // After the event: a panic in it leaves the turn with the waiting put,
                    // whose drop passes it on (see `registration.rs`), so it is given up
                    // once either way.
                    if turn.is_held() {
                        self.putter_turn_used(turn);
                    }
                }
                Err(PutRefused::Full(item)) => {
                    if turn.is_held() {
                        self.putter_turn_used(turn);
                    }
                    refused_at = Some(TryPutError::Full(item));
                    break;
                }
                Err(PutRefused::Closed(item)) => {
                    turn.redeem(putters.turns());
                    refused_at = Some(TryPutError::ShutDown(item));
                    break;
                }
            }
        }
        // The items after a refused one go back to the caller before any waker runs.
        drop(unplaced);
        drop(pass);
        match refused_at {
            Some(refused) => Err(refused),
            None => Ok(()),
        }
    }

    /// [`put_many`](RawQueue::put_many) on the ring, for a caller without a turn: the
    /// items are claimed as many at a time as the ring has room for.
    fn put_many_claimed(
        &self,
        items: &mut Vec<T>,
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        let ring = self.buffer.ring().expect("called on a ring");
        let putters = self.putters();
        let mut reserved = 0;
        // Reserved here, so that no push in the claim allocates (see `ring/batch.rs`).
        ids.reserve(items.len());
        let answer = loop {
            if items.is_empty() {
                break Ok(());
            }
            if let Some(refusal) = self.lifecycle.refusal() {
                break Err(refused(refusal, items.remove(0)).into());
            }
            match ring.try_put_many(items, putters.turns().owed() as u64, ids) {
                Ok((_, notify)) => reserved += notify,
                Err(NoRoom::Full) => break Err(TryPutError::Full(items.remove(0))),
                Err(NoRoom::Closed) => break Err(TryPutError::ShutDown(items.remove(0))),
            }
        };
        // One pass: as many getters as the claims counted, then their wakers.
        if reserved != 0 && self.getters().signal_for(Wake::Reserved, reserved) {
            self.wake_signalled();
        }
        answer
    }

    /// Takes up to `max` items (at least one; the lane and the buffer served as single
    /// takes serve them), wraps each in its delivery (`wrap`) and pushes it onto `out`,
    /// calling `delivered` with each, then notifies in one pass the putters for the slots
    /// freed and the getters if the end came. Returns how many were taken.
    ///
    /// `turn`: the caller is a woken get holding a turn, used by the first item; the
    /// others leave the items owed to woken gets alone, as a get without a turn does.
    ///
    /// # Errors
    ///
    /// As [`take`](RawQueue::take), only if nothing was taken: a batch that took some
    /// items and then found nothing more returns what it took.
    pub(crate) fn take_many<D>(
        &self,
        turn: &mut Turn<'_>,
        max: usize,
        mut wrap: impl FnMut(Handout, T) -> D,
        mut delivered: Option<impl FnMut(Handout)>,
        out: &mut Vec<D>,
    ) -> Result<usize, TryGetError> {
        debug_assert!(max != 0, "the face answers a batch of none");
        if RING_BATCHES && !turn.is_held() && delivered.is_none() && !self.lane.may_hold() {
            if let Some(ring) = self.buffer.ring() {
                // A claim takes no more than the ring holds, whatever `max` asks for.
                let max = max.min(ring.slot_count());
                // Reserved here, so that no push in the claim allocates.
                out.reserve(max);
                // Zero or less means none (see `owed_to_woken`).
                let owed = || self.owed_to_woken().max(0) as u64;
                let push = |id, item| {
                    out.push(wrap(Handout { id, attempt: 1 }, item));
                };
                return match ring.try_get_many(max as u64, owed, push) {
                    Ok((taken, notify)) => {
                        if notify != 0 && self.putters().signal_for(Wake::Reserved, notify) {
                            self.wake_signalled();
                        }
                        Ok(taken)
                    }
                    // A returned item, if one came meanwhile, or the answer.
                    Err(nothing) => {
                        let (handout, item, after) = self.nothing_buffered(nothing, None)?;
                        debug_assert!(after.putters == Wake::No && !after.last);
                        out.push(wrap(handout, item));
                        Ok(1)
                    }
                };
            }
        }
        // The first take may use the turn; a failed one has redeemed it (see
        // `nothing_buffered`).
        let (handout, item, after) = self.take_item(turn.if_held())?;
        // Sends the wake-ups the takes ask for when it is dropped: at the end of the batch,
        // or as a panic in user code (a subscriber, a recorder, the journal) unwinds.
        let mut pass = TakePass {
            queue: self,
            putters: Wakes::default(),
            last: false,
            turn: false,
        };
        let mut taken = 0;
        let mut next = Some((handout, item, after));
        while let Some((handout, item, after)) = next.take() {
            // The take's wake-ups first go into the pass and the item into its delivery
            // (whose wrapping records nothing before the delivery exists); only then does
            // user code run, and a delivery unwound by it ends as abandoned.
            pass.putters.add(after.putters);
            pass.last |= after.last;
            out.push(wrap(handout, item));
            taken += 1;
            crate::events::delivered(self.label, handout.id, handout.attempt);
            if let Some(delivered) = &mut delivered {
                delivered(handout);
            }
            if taken == 1 && turn.is_held() {
                // After the event and the journal: a panic in them leaves the turn with the
                // waiting get, whose drop passes it on (see `registration.rs`), so it is
                // given up once either way. Before the next take, which would otherwise
                // leave this turn's item to itself; a try refused meanwhile is told of by
                // the pass.
                pass.turn = turn.redeem(self.getters().turns());
            }
            if taken < max {
                if RING_BATCHES && delivered.is_none() && !self.lane.may_hold() {
                    if let Some(ring) = self.buffer.ring() {
                        // The rest of the batch in one claim, as the first take of a
                        // batch without a turn makes it (no more than the ring holds).
                        let rest = (max - taken).min(ring.slot_count());
                        out.reserve(rest);
                        // Zero or less means none (see `owed_to_woken`).
                        let owed = || self.owed_to_woken().max(0) as u64;
                        let push = |id, item| out.push(wrap(Handout { id, attempt: 1 }, item));
                        if let Ok((more, notify)) = ring.try_get_many(rest as u64, owed, push) {
                            taken += more;
                            pass.putters.reserved += notify;
                        }
                        break;
                    }
                }
                next = self.take_item(None).ok();
            }
        }
        drop(pass);
        Ok(taken)
    }
}

/// The wake-ups owed by the takes of a batch get so far, sent in one pass when dropped.
struct TakePass<'q, T> {
    queue: &'q RawQueue<T>,
    /// For the putters, for the slots freed.
    putters: Wakes,
    /// The end came: every getter is told.
    last: bool,
    /// The batch redeemed a woken get's turn (after its first item's event).
    turn: bool,
}

impl<T> Drop for TakePass<'_, T> {
    fn drop(&mut self) {
        let queue = self.queue;
        // The putters for the slots freed, the getters if the end came or an item is left
        // that the redeemed turn kept a try from taking.
        let mut reached = self.putters.signal(queue.putters());
        if self.turn && queue.len() > queue.getters().turns().owed() {
            reached |= queue.getters().signal_additional(1);
        }
        if self.last {
            reached |= queue.getters().signal_all();
        }
        if reached {
            queue.wake_signalled();
        }
    }
}

/// The items of a batch put not placed yet, taken out of the caller's vector front first
/// and handed back to it, in order, when dropped: after the batch, or as a panic in user
/// code (a subscriber, the journal) unwinds, so that no item is dropped with the batch.
/// Neither move allocates (a `VecDeque` made from a `Vec` and back keeps its buffer).
struct Unplaced<'v, T> {
    items: &'v mut Vec<T>,
    left: VecDeque<T>,
}

impl<'v, T> Unplaced<'v, T> {
    #[inline]
    fn new(items: &'v mut Vec<T>) -> Self {
        let left = VecDeque::from(core::mem::take(items));
        Unplaced { items, left }
    }
}

impl<T> Drop for Unplaced<'_, T> {
    #[inline]
    fn drop(&mut self) {
        *self.items = Vec::from(core::mem::take(&mut self.left));
    }
}

/// The wake-ups owed by the puts of a batch so far, sent in one pass when dropped.
struct PutPass<'q, T, L: FnMut(JobId, T), F: FnOnce() -> L> {
    queue: &'q RawQueue<T>,
    /// For the getters, one per item placed.
    getters: Wakes,
    /// What buries the items that landed after an immediate shutdown's drain.
    late: Option<F>,
    _late: PhantomData<fn() -> L>,
}

impl<T, L: FnMut(JobId, T), F: FnOnce() -> L> Drop for PutPass<'_, T, L, F> {
    fn drop(&mut self) {
        let queue = self.queue;
        // One pass: as many getters as items, then their wakers.
        if self.getters.signal(queue.getters()) {
            queue.wake_signalled();
        }
        // The growable buffer's puts look for a drain they landed after once their
        // notification (a read-modify-write of the getters' word) is made: one look covers
        // every item put before it.
        if self.getters.check != 0 {
            if let Some(late) = self.late.take() {
                if queue.buffer.after_put(late) {
                    queue.wake_getters_at_end();
                }
            }
        }
    }
}
