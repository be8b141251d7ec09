//! The batch moves of the raw queue: many puts, or many takes, with one pass of
//! notifications at the end.
//!
//! Each item moves exactly as a single put or take moves it (the same claim of the
//! buffer or the lane, the same turn rule, the same order of the lane and the buffer), so
//! every invariant of the module docs holds item by item. What a batch saves is the rest:
//! the wake-ups its items ask for are summed and sent in one pass after the last move
//! (one notification call, one run of the woken wakers), and the caller's per-call work
//! (futures, journal gate, result wrapping) is paid once per batch.
//!
//! Deferring a notification is what a thread preempted between its claim and its
//! notification already does: a getter the claim counted has its notification on the way
//! (the claim's pending count keeps others from repeating it) and a getter that was not
//! counted re-checks the buffer after counting itself in. No user code runs while an item
//! is between two places: wakers run only in the final pass, journal hooks run as they do
//! for a single move.

use alloc::vec::Vec;

use super::{refused, Handout, RawQueue};
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::wait::waiters::{Class, Wake};

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
    /// Puts the items of `items`, oldest first, until it is empty or one is refused,
    /// pushing each accepted id onto `ids`. `turn`: the caller is a woken put holding a
    /// turn, used by the first item (the rest leave the slots owed to woken puts alone,
    /// as any put without a turn does). `accepted` and `late` as for
    /// [`put`](RawQueue::put).
    ///
    /// Returns the refused item with its reason (taken out of `items`, which keeps the
    /// items after it), or `Ok` once `items` is empty. Every getter the accepted items
    /// concern is notified in one pass before returning, refused or not.
    pub(crate) fn put_many(
        &self,
        turn: bool,
        items: &mut Vec<T>,
        mut accepted: impl FnMut(JobId),
        late: impl FnMut(JobId, T),
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        let putters = self.putters();
        let mut turn = turn;
        let mut getters = Wakes::default();
        let mut refused_at = None;
        let mut drain = items.drain(..);
        for item in drain.by_ref() {
            if let Some(refusal) = self.lifecycle.refusal() {
                if turn {
                    putters.turns().redeem();
                }
                refused_at = Some(refused(refusal, item).into());
                break;
            }
            let owed = if turn { 0 } else { putters.turns().owed() };
            match self.buffer.put(item, owed, &mut accepted) {
                Ok((id, wake)) => {
                    crate::events::accepted(self.label, id);
                    ids.push(id);
                    getters.add(wake);
                    if turn {
                        turn = false;
                        self.putter_turn_used();
                    }
                }
                Err(super::PutRefused::Full(item)) => {
                    if turn {
                        self.putter_turn_used();
                    }
                    refused_at = Some(TryPutError::Full(item));
                    break;
                }
                Err(super::PutRefused::Closed(item)) => {
                    if turn {
                        putters.turns().redeem();
                    }
                    refused_at = Some(TryPutError::ShutDown(item));
                    break;
                }
            }
        }
        // The items after a refused one stay with the caller (cold: only on a refusal).
        let rest: Vec<T> = if refused_at.is_some() {
            drain.by_ref().collect()
        } else {
            Vec::new()
        };
        drop(drain);
        items.extend(rest);
        // One pass: as many getters as items, then their wakers.
        if getters.signal(self.getters()) {
            self.wake_signalled();
        }
        // The growable buffer's puts look for a drain they landed after once their
        // notification (a read-modify-write of the getters' word) is made: one look covers
        // every item put before it.
        if getters.check != 0 && self.buffer.after_put(late) {
            self.wake_getters_at_end();
        }
        match refused_at {
            Some(refused) => Err(refused),
            None => Ok(()),
        }
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
        turn: bool,
        max: usize,
        mut wrap: impl FnMut(Handout, T) -> D,
        mut delivered: Option<impl FnMut(Handout)>,
        out: &mut Vec<D>,
    ) -> Result<usize, TryGetError> {
        debug_assert!(max != 0, "the face answers a batch of none");
        let mut putters = Wakes::default();
        let mut last = false;
        let mut taken = 0;
        // The first take may use the turn; a failed one has redeemed it (see
        // `nothing_buffered`).
        let (handout, item, after) = self.take_item(turn)?;
        let mut next = Some((handout, item, after));
        while let Some((handout, item, after)) = next.take() {
            crate::events::delivered(self.label, handout.id, handout.attempt);
            out.push(wrap(handout, item));
            taken += 1;
            if let Some(delivered) = &mut delivered {
                delivered(handout);
            }
            putters.add(after.putters);
            last |= after.last;
            if taken == 1 && turn {
                // Redeemed before the next take, which would otherwise leave this turn's
                // item to itself; a try refused meanwhile is told of below.
                self.getters().turns().redeem();
            }
            if taken < max {
                next = self.take_item(false).ok();
            }
        }
        // One pass: the putters for the slots freed, the getters if the end came or an
        // item is left that the redeemed turn kept a try from taking.
        let mut reached = putters.signal(self.putters());
        if turn && self.len() > self.getters().turns().owed() {
            reached |= self.getters().signal_additional(1);
        }
        if last {
            reached |= self.getters().signal_all();
        }
        if reached {
            self.wake_signalled();
        }
        Ok(taken)
    }
}
