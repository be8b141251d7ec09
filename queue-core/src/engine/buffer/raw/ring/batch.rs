//! Batch claims: several tickets in one compare-exchange of `tail` (puts) or `head`
//! (gets), so that a batch of `k` items costs one locked instruction on each side instead
//! of `k`.
//!
//! A claim of `n` tickets is what `n` single claims in a row would be, made at once: it
//! is taken only when each of the `n` single claims would succeed at that instant (the
//! bound leaves room for all of them and every slot is free for its ticket, for a put;
//! every item is written and none is owed to a woken getter, for a get), and the waiter
//! fields of the word are updated as the `n` claims would update them
//! ([`with_notifications`]). Between the claim and the publication of its last slot the
//! claimer only moves bytes, as a single put or get does: the items are moved in or out
//! with no user code (the caller's `push` of each taken item must not run any, nor panic:
//! the caller reserves the room first), and every slot claimed is published before the
//! call returns, so no slot is left claimed for ever. A thread that finds one of these
//! slots mid-move waits for it as it waits for a single put or get (see "Progress" in the
//! module docs).
//!
//! Each batch runs as one step that no interrupt handler can enter midway
//! ([`uninterrupted`]), as single puts and gets do.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
#[cfg(feature = "alloc")]
use core::mem::MaybeUninit;

#[cfg(feature = "alloc")]
use super::behind;
#[cfg(feature = "alloc")]
use super::CLOSED;
use super::{distance, stamp_of, ticket_of, Bound, Ring, Storage, TICKET};
use crate::engine::buffer::moves::Nothing;
use crate::job_id::JobId;
use crate::sync::{back_off, uninterrupted, Ordering};
use crate::wait::counted::with_notifications;

/// What a batch put found instead of room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The bound is reached (counting the slots owed to woken putters).
    Full,
    /// The ring is closed.
    Closed,
}

impl<T, S: ?Sized + Storage<T>> Ring<T, S> {
    /// Buffers as many items from the front of `items` as there is room for now, leaving
    /// `owed` free slots alone, in one claim; pushes their ids (their full tickets) onto
    /// `ids`, which must have room for them already. Returns how many were placed (at least
    /// one) and how many getters the claim counted a notification for (see
    /// [`Wake::Reserved`](crate::wait::wake::Wake::Reserved)).
    #[cfg(feature = "alloc")]
    pub(crate) fn try_put_many(
        &self,
        items: &mut Vec<T>,
        owed: u64,
        ids: &mut Vec<JobId>,
    ) -> Result<(usize, usize), NoRoom> {
        debug_assert!(!items.is_empty());
        debug_assert!(ids.capacity() - ids.len() >= items.len());
        uninterrupted(|| self.put_many_unguarded(items, owed, ids))
    }

    #[cfg(feature = "alloc")]
    fn put_many_unguarded(
        &self,
        items: &mut Vec<T>,
        owed: u64,
        ids: &mut Vec<JobId>,
    ) -> Result<(usize, usize), NoRoom> {
        let want = items.len() as u64;
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut tail = self.tail.0.load(Ordering::Relaxed);
        loop {
            if tail & CLOSED != 0 {
                return Err(NoRoom::Closed);
            }
            let ticket = ticket_of(tail);
            // The bound, as `room` reads it for a single put.
            let used = self.used(ticket);
            let limit = self.bound.get().saturating_sub(owed);
            if behind(used) {
                // `tail` was read stale: a get (or an ending) already passed it.
                waited = back_off(waited);
                // Relaxed: re-read for the loop, which validates it.
                tail = self.tail.0.load(Ordering::Relaxed);
                continue;
            }
            if used >= limit {
                return Err(NoRoom::Full);
            }
            // Every slot must be free for its ticket: the prefix that is.
            let room = want.min(limit - used);
            let mut free = 0;
            while free < room {
                let ticket = ticket.wrapping_add(free);
                // Acquire: pairs with the Release store of the get that emptied the slot,
                // so the write below comes after its read.
                let stamp = self.slot(ticket).stamp().load(Ordering::Acquire);
                if stamp != stamp_of(ticket) {
                    break;
                }
                free += 1;
            }
            if free == 0 {
                // Another put took this ticket (`tail` is stale), or the get of the item one
                // lap back claimed it and is still moving it out.
                waited = back_off(waited);
                // Relaxed: re-read for the loop, which validates it.
                tail = self.tail.0.load(Ordering::Relaxed);
                continue;
            }
            let (next, notify) = with_notifications(tail.wrapping_add(free * TICKET), free);
            // Acquire: as for a single put's claim (the getters counted here counted
            // themselves in with an AcqRel read-modify-write of this word); the stamps'
            // Release stores below publish the items.
            match self.tail.0.compare_exchange_weak(
                tail,
                next,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    for (offset, item) in (0..free).zip(items.drain(..free as usize)) {
                        let ticket = ticket.wrapping_add(offset);
                        let slot = self.slot(ticket);
                        slot.item().with_mut(|cell| {
                            // SAFETY: the compare-exchange gave this thread the ticket,
                            // and its stamp, acquired above, says the slot is empty for
                            // it: no other thread touches the item until the store below.
                            unsafe { cell.write(MaybeUninit::new(item)) };
                        });
                        // Release: publishes the item to the get that acquires this stamp.
                        slot.stamp()
                            .store(stamp_of(ticket).wrapping_add(1), Ordering::Release);
                    }
                    let first = self.full(ticket);
                    // The claim's tickets include one that moves `base`: moved to the
                    // first of them, which lags that one by less than a batch.
                    let low = u64::from(stamp_of(ticket));
                    if low == 0 || low + free > 1 << 32 {
                        self.move_base(first);
                    }
                    ids.extend((0..free).map(|offset| JobId::new(first.wrapping_add(offset))));
                    return Ok((free as usize, notify as usize));
                }
                Err(now) => tail = now,
            }
        }
    }

    /// Takes up to `max` of the oldest items (at least one), leaving `owed()` items alone
    /// (as [`try_get`](Ring::try_get)), in one claim; hands each to `push` with its id,
    /// oldest first. `push` must neither run user code nor panic. Returns how many were
    /// taken and how many putters the claim counted a notification for (under a buffered
    /// bound).
    pub(crate) fn try_get_many(
        &self,
        max: u64,
        owed: impl Fn() -> u64,
        push: impl FnMut(JobId, T),
    ) -> Result<(usize, usize), Nothing> {
        debug_assert!(max != 0);
        uninterrupted(|| self.take_many_unguarded(max, owed, push))
    }

    fn take_many_unguarded(
        &self,
        max: u64,
        owed: impl Fn() -> u64,
        mut push: impl FnMut(JobId, T),
    ) -> Result<(usize, usize), Nothing> {
        let mut waited = 0;
        // Relaxed: the compare-exchange below validates it.
        let mut head = self.consumers.head.load(Ordering::Relaxed);
        loop {
            let ticket = ticket_of(head);
            // The written prefix.
            let mut written = 0;
            while written < max {
                let ticket = ticket.wrapping_add(written);
                // Acquire: pairs with the put's Release store, so the item is written.
                let stamp = self.slot(ticket).stamp().load(Ordering::Acquire);
                if stamp != stamp_of(ticket.wrapping_add(1)) {
                    break;
                }
                written += 1;
            }
            if written == 0 {
                // Acquire: as in `take_unguarded`.
                let stamp = self.slot(ticket).stamp().load(Ordering::Acquire);
                if stamp == stamp_of(ticket) {
                    // The slot waits for the put of this ticket: empty, or that put is
                    // between its claim and its stamp (waited for, as a single get does).
                    if let Some(nothing) = self.nothing_at(ticket) {
                        return Err(nothing);
                    }
                }
                // Else another get took this ticket: `head` is stale.
                waited = back_off(waited);
                // Relaxed: re-read for the loop, which validates it.
                head = self.consumers.head.load(Ordering::Relaxed);
                continue;
            }
            let mut take = written;
            let owed = owed();
            if owed != 0 {
                // Relaxed: the puts of these items claimed their tickets before the stamps
                // acquired above, so this read sees at least those tickets.
                let buffered = distance(ticket_of(self.tail.0.load(Ordering::Relaxed)), ticket);
                if buffered <= owed {
                    return Err(Nothing::Empty);
                }
                take = take.min(buffered - owed);
            }
            // Putters wait here only for a slot a get frees.
            let next = head.wrapping_add(take * TICKET);
            let (next, notify) = match self.bound {
                Bound::Buffered(_) => with_notifications(next, take),
                Bound::Unfinished(_) => (next, 0),
            };
            // Acquire: as for a single get's claim, for the putters counted here; the
            // stamps' Release stores below hand the slots to the next puts.
            match self.consumers.head.compare_exchange_weak(
                head,
                next,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    let first = self.full(ticket);
                    for offset in 0..take {
                        let ticket = ticket.wrapping_add(offset);
                        let slot = self.slot(ticket);
                        let item = slot.item().with(|cell| {
                            // SAFETY: the compare-exchange gave this thread the ticket,
                            // whose put wrote the item before the Release store of the
                            // stamp acquired above; no other thread touches it until the
                            // store below, which makes the slot empty again, so the value
                            // is read out exactly once.
                            unsafe { (*cell).assume_init_read() }
                        });
                        // Release: the next put into this slot writes after this read.
                        slot.stamp().store(
                            stamp_of(ticket)
                                .wrapping_add(1)
                                .wrapping_add(stamp_of(self.mask)),
                            Ordering::Release,
                        );
                        push(JobId::new(first.wrapping_add(offset)), item);
                    }
                    return Ok((take as usize, notify as usize));
                }
                Err(now) => head = now,
            }
        }
    }
}

#[cfg(all(test, feature = "alloc", not(loom)))]
mod tests;

#[cfg(all(test, feature = "alloc", loom))]
mod loom_models;
