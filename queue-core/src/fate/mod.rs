//! The fate layer: what becomes of each job, between the faces and the raw queue.
//!
//! The [`Steward`] holds the raw queue (`engine/`) and decides, by policy, where an item
//! goes when its delivery does not end by itself: back into the raw queue's lane for
//! another attempt, or into the dead letters. It tells the journal of every event in causal
//! order, and keeps the cancellation request. It never reaches into the buffer: every move
//! of an item is one call of the raw queue, and every event is noted before the move that
//! makes it visible to someone else.
//!
//! - `policy.rs`: [`AbandonPolicy`](crate::AbandonPolicy), the public choice;
//! - `backoff.rs`: [`Backoff`](crate::Backoff), how long a job waits before its next
//!   attempt (pure data, shared with the Redis queue);
//! - `dead_letter.rs`: [`DeadLetter`](crate::DeadLetter) and the list that keeps them;
//! - `journal.rs`: [`Journal`](crate::Journal), [`JobEvent`](crate::JobEvent) and the
//!   guard that calls it;
//! - `record.rs` (std): [`Record`](crate::Record), a ready journal;
//! - `cancel.rs`: the cancellation request and its waiters;
//! - `holding.rs`: the items retried with a delay, held back until they are due;
//! - `redelay.rs`: [`Redelivery`](crate::Redelivery), an abandoned delivery's item held
//!   back the same way by the queue's redelivery schedule;
//! - `stamp.rs`: what the raw queue holds for an item (with the `metrics` feature, the
//!   instant it became buffered).
//!
//! # Attempts
//!
//! An item's attempt counts its deliveries and never goes back: every way a delivery comes
//! back (a [`retry`](crate::Delivery::retry), a drop, a panic) hands the next delivery the
//! next number. Under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver),
//! `max_attempts` bounds them all: a retry of the last allowed delivery is refused, and an
//! abandonment of it makes a dead letter, so a job that keeps failing reaches the dead
//! letters within `max_attempts` deliveries.

pub(crate) mod backoff;
mod batch;
pub(crate) mod cancel;
pub(crate) mod dead_letter;
pub(crate) mod gate;
pub(crate) mod holding;
pub(crate) mod journal;
pub(crate) mod policy;
#[cfg(feature = "std")]
pub(crate) mod record;
#[cfg(target_has_atomic = "ptr")]
pub(crate) mod redelay;
pub(crate) mod stamp;

use alloc::vec::Vec;

use self::cancel::Cancellation;
use self::dead_letter::{DeadLetter, DeadLetters, DeadReason};
use self::gate::{InMotion, ReportGate};
use self::holding::{Held, Holding, Released, Ticket};
use self::journal::{JobEvent, Journaled};
use self::policy::AbandonPolicy;
#[cfg(feature = "metrics")]
use self::stamp::{record_buffered, refused, split};
use self::stamp::{stamp, unstamp, Keys, Slot};
use crate::engine::buffer::slots::Limit;
use crate::engine::{Handout, RawQueue};
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::outcome::Outcome;
use crate::sync::{AtomicU64, Ordering};
use crate::wait::turn::Turn;

/// Whatever keeps a queue's steward alive for a handle: a borrow, or an `Arc` of the
/// queue (for `'static` handles).
pub(crate) trait Owner<T> {
    fn steward(&self) -> &Steward<T>;
}

impl<T> Owner<T> for &Steward<T> {
    #[inline(always)]
    fn steward(&self) -> &Steward<T> {
        self
    }
}

/// The fate layer over a raw queue; see the module docs.
pub(crate) struct Steward<T> {
    raw: RawQueue<Slot<T>>,
    policy: AbandonPolicy,
    dead: DeadLetters<T>,
    /// The items retried with a delay, until they are due (counted buffered).
    holding: Holding<Slot<T>>,
    /// Redeliveries so far; kept outside the ledger, whose identity counts ids, not
    /// deliveries.
    redelivered: AtomicU64,
    /// The observer of every job event, if one was installed.
    journal: Option<Journaled>,
    /// Whether in-flight work was asked to stop, and the deliveries waiting to hear it.
    cancellation: Cancellation,
    /// Lets a shutdown report read the journal's ids and the ledger at one instant.
    gate: ReportGate,
    /// The keys of the queue's histograms (`metrics`; nothing without it).
    keys: Keys,
    /// Where abandoned deliveries wait before their redelivery, if anywhere.
    #[cfg(target_has_atomic = "ptr")]
    redelay: Option<redelay::Redelay>,
}

impl<T> Steward<T> {
    pub(crate) fn new(limit: Limit) -> Self {
        let raw = RawQueue::new(limit);
        let cancellation = Cancellation::new(raw.new_waiters());
        Steward {
            raw,
            policy: AbandonPolicy::Abandon,
            dead: DeadLetters::new(),
            holding: Holding::new(),
            redelivered: AtomicU64::new(0),
            journal: None,
            cancellation,
            gate: ReportGate::new(),
            keys: stamp::keys(""),
            #[cfg(target_has_atomic = "ptr")]
            redelay: None,
        }
    }

    /// The raw queue, for what the faces only read or count (observers, roles, waiters).
    #[inline(always)]
    pub(crate) fn raw(&self) -> &RawQueue<Slot<T>> {
        &self.raw
    }

    // -------------------------------------------------------------- configuration

    /// Installs `journal`. Only for a queue not shared yet; every item stays where it is.
    pub(crate) fn set_journal(&mut self, journal: Journaled) {
        self.journal = Some(journal);
        self.raw.observe();
        debug_assert!(
            !self.raw.is_ring(),
            "an observed queue is never on the ring"
        );
    }

    /// Installs `policy`. Only for a queue not shared yet; every item stays where it is
    /// (returned items stay in the lane, dead letters stay kept).
    pub(crate) fn set_policy(&mut self, policy: AbandonPolicy) {
        self.policy = policy;
        self.raw
            .set_returns_after_shutdown(matches!(policy, AbandonPolicy::Redeliver { .. }));
    }

    /// Installs the redelivery schedule. Only for a queue not shared yet; every item stays
    /// where it is.
    #[cfg(target_has_atomic = "ptr")]
    pub(crate) fn set_redelay(&mut self, redelay: redelay::Redelay) {
        self.redelay = Some(redelay);
    }

    /// Names the queue in its events. Only for a queue not shared yet.
    pub(crate) fn set_label(&mut self, label: &'static str) {
        self.raw.set_label(label);
        self.keys = stamp::keys(label);
    }

    /// The keys of the queue's histograms.
    #[cfg(feature = "metrics")]
    #[inline(always)]
    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    pub(crate) fn policy(&self) -> AbandonPolicy {
        self.policy
    }

    pub(crate) fn journal(&self) -> Option<&Journaled> {
        self.journal.as_ref()
    }

    /// Enters a move of a job in or out of flight (see `gate.rs`): a step for the reports
    /// when the journal keeps ids, nothing otherwise.
    #[inline]
    fn transition(&self) -> InMotion<'_> {
        self.gate
            .enter(self.journal.as_ref().is_some_and(Journaled::keeps_ids))
    }

    /// Records an event in the journal, if one is installed. The event is built only then.
    #[inline(always)]
    pub(crate) fn note(&self, event: impl FnOnce() -> JobEvent) {
        if let Some(journal) = &self.journal {
            journal.record(event());
        }
    }

    // ----------------------------------------------------------------- put and take

    /// One put attempt (see [`RawQueue::put`]): the journal hears of the acceptance
    /// before the item can be taken, and an item that landed after an immediate shutdown's
    /// drain becomes a dead letter, taken back out and buried in one transition.
    #[inline(always)]
    pub(crate) fn put(&self, turn: &mut Turn<'_>, item: T) -> Result<JobId, TryPutError<T>> {
        let put = self.raw.put(
            turn,
            stamp(item),
            |id| self.note(|| JobEvent::Accepted(id)),
            || self.bury_late_items(),
        );
        // Without `metrics` the slot is the item: the call above is the whole put.
        #[cfg(feature = "metrics")]
        let put = put.map_err(refused);
        put
    }

    /// For the items of a put that landed after an immediate shutdown's drain: enters a
    /// transition before they are taken back out, and buries each (see `gate.rs`).
    #[cold]
    fn bury_late_items(&self) -> impl FnMut(JobId, Slot<T>) + '_ {
        let motion = self.transition();
        move |id, slot| {
            let _motion = &motion;
            self.bury_late(id, unstamp(slot));
        }
    }

    /// A put that raced an immediate shutdown's drain landed after it: its item is kept
    /// as a dead letter, discarded, as a redelivery would be.
    #[cold]
    fn bury_late(&self, id: JobId, item: T) {
        crate::events::discarded(self.raw.label(), id);
        self.note(|| JobEvent::Discarded(id));
        self.note(|| JobEvent::DeadLettered { id, attempts: 0 });
        self.dead.bury(DeadLetter {
            id,
            attempts: 0,
            reason: DeadReason::ShutDownNow,
            item,
        });
        self.raw.discard(1);
    }

    /// One get attempt (see [`RawQueue::take`]); the journal hears of the delivery once it
    /// exists.
    #[inline(always)]
    pub(crate) fn take<D>(
        &self,
        turn: &mut Turn<'_>,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        // Without `metrics` the slot is the item, and `wrap` takes it as it is.
        #[cfg(not(feature = "metrics"))]
        return self.take_wrapped(turn, wrap);
        // With it, the time buffered is recorded once the take is over (its wake-ups
        // sent): a recorder that panics unwinds a delivery, and strands no one.
        #[cfg(feature = "metrics")]
        {
            let (delivery, since) = self.take_wrapped(turn, |handout, slot| {
                split(slot, |item| wrap(handout, item))
            })?;
            record_buffered(&self.keys, since);
            Ok(delivery)
        }
    }

    /// [`take`](Steward::take) of the slot as the raw queue holds it.
    #[inline(always)]
    fn take_wrapped<D>(
        &self,
        turn: &mut Turn<'_>,
        wrap: impl FnOnce(Handout, Slot<T>) -> D,
    ) -> Result<D, TryGetError> {
        // A queue on the ring has no journal (installing one moves it off the ring): the
        // look at the buffer that the take makes anyway answers for the journal.
        if self.raw.is_ring() {
            return self.raw.take(turn, wrap, None::<fn(Handout)>);
        }
        let Some(journal) = &self.journal else {
            return self.raw.take(turn, wrap, None::<fn(Handout)>);
        };
        let _motion = self.transition();
        let delivered = |handout: Handout| {
            journal.record(JobEvent::Delivered {
                id: handout.id,
                attempt: handout.attempt,
            });
        };
        self.raw.take(turn, wrap, Some(delivered))
    }

    // -------------------------------------------------------------------- endings

    /// Delivery number `attempt` of `id`, whose item the caller took out of it, ends with
    /// `outcome`; gives the item back.
    #[inline(always)]
    pub(crate) fn resolve(&self, id: JobId, attempt: u32, outcome: Outcome, item: T) -> T {
        // As in `take_wrapped`: on the ring, no journal.
        if self.raw.is_ring() || self.journal.is_none() {
            self.count_ended(id, outcome);
            return item;
        }
        self.resolve_journaled(id, attempt, outcome, item)
    }

    /// [`resolve`](Steward::resolve) with a journal: the journal hears of the ending
    /// before the ledger counts it, so a join that returns has it recorded. Meanwhile a
    /// guard holds the item, which ends it as abandoned if the journal panics, as the
    /// drop of a delivery that still held it would.
    ///
    /// Always inlined: a call here costs a journaled resolve more than its guard.
    #[inline(always)]
    fn resolve_journaled(&self, id: JobId, attempt: u32, outcome: Outcome, item: T) -> T {
        // Made before the transition, so dropped after it: an abandonment enters one of
        // its own.
        let unended = Unended {
            steward: self,
            id,
            attempt,
            item: Some(item),
        };
        let _motion = self.transition();
        self.note(|| JobEvent::Ended { id, outcome });
        let item = unended.disarm();
        self.count_ended(id, outcome);
        item
    }

    /// Counts a delivery of `id` ended with `outcome`, once the journal heard of it.
    #[inline(always)]
    fn count_ended(&self, id: JobId, outcome: Outcome) {
        // The ledger first: a subscriber that panics at the event then unwinds a delivery
        // that has ended, and leaves nothing in flight for good.
        self.raw.end(Some(outcome));
        crate::events::ended(self.raw.label(), id, outcome);
    }

    /// Delivery number `attempt` of `id` was dropped unresolved. Decides by policy where
    /// the item goes (back for another attempt, or into the dead letters) and puts it
    /// there before any waker runs; otherwise hands it back to be dropped, after the
    /// ledger counted the ending.
    #[cold]
    pub(crate) fn abandon(&self, id: JobId, attempt: u32, item: T, panicking: bool) -> Option<T> {
        let _motion = self.transition();
        // The events first (an Uncertain ending is told abandoned, then ended). A
        // subscriber or a journal that panics at them unwinds with the item, which goes
        // nowhere: the guard then ends the delivery as abandoned, so that nothing stays in
        // flight for good.
        let unwinding = EndedAbandoned(&self.raw);
        crate::events::abandoned(self.raw.label(), id, panicking);
        self.note(|| JobEvent::Abandoned { id, panicking });
        core::mem::forget(unwinding);
        match self.policy {
            AbandonPolicy::Abandon => {
                self.raw.end(None);
                Some(item)
            }
            AbandonPolicy::Uncertain => {
                // Recorded abandoned (above), then ended: one final event, before the
                // ledger counts it, as a resolve does.
                let outcome = Outcome::Uncertain;
                self.note(|| JobEvent::Ended { id, outcome });
                self.count_ended(id, outcome);
                Some(item)
            }
            AbandonPolicy::Redeliver { max_attempts } => {
                if attempt >= max_attempts.get() {
                    self.exhausted(id, attempt, item, DeadReason::Exhausted { panicking });
                    return None;
                }
                let next = attempt.saturating_add(1);
                // Before the return: once in the lane, another getter may record its
                // delivery.
                self.note(|| JobEvent::Redelivered { id, attempt: next });
                #[cfg(target_has_atomic = "ptr")]
                if let Some(redelay) = &self.redelay {
                    let held = self.hold_redelivery(id, attempt, item);
                    // The schedule is user code: it runs once the move is over.
                    drop(_motion);
                    if let Some(ticket) = held {
                        let release = alloc::sync::Arc::clone(&redelay.release);
                        (redelay.schedule)(redelay::Redelivery::new(release, ticket, id, next));
                    }
                    return None;
                }
                match self.raw.give_back(id, next, stamp(item)).map_err(unstamp) {
                    Ok(()) => {
                        crate::events::redelivered(self.raw.label(), id, next);
                        // Relaxed: a statistic.
                        self.redelivered.fetch_add(1, Ordering::Relaxed);
                    }
                    // The lane was closed by an immediate shutdown.
                    Err(item) => self.discarded_late(id, attempt, item),
                }
                None
            }
        }
    }

    /// Delivery number `attempt` of `id` was dropped, or a panic unwound its ending,
    /// before it ended: [`abandon`](Steward::abandon), with whether a panic is unwinding.
    #[cold]
    pub(crate) fn dropped(&self, id: JobId, attempt: u32, item: T) {
        #[cfg(feature = "std")]
        let panicking = std::thread::panicking();
        #[cfg(not(feature = "std"))]
        let panicking = false;
        let left = self.abandon(id, attempt, item, panicking);
        // An item nobody keeps is dropped after the ledger counted its ending.
        drop(left);
    }

    /// Holds back delivery number `attempt` of `id`, abandoned, for the redelivery
    /// schedule; `None` if an immediate shutdown closed the store (the item is then a
    /// dead letter, counted discarded, as a return refused by the lane is).
    #[cfg(target_has_atomic = "ptr")]
    fn hold_redelivery(&self, id: JobId, attempt: u32, item: T) -> Option<Ticket> {
        let next = attempt.saturating_add(1);
        let held = Held {
            id,
            attempt: next,
            item: stamp(item),
        };
        match self.holding.hold(held) {
            Ok(ticket) => {
                crate::events::redelivered(self.raw.label(), id, next);
                // Relaxed: a statistic.
                self.redelivered.fetch_add(1, Ordering::Relaxed);
                Some(ticket)
            }
            Err(held) => {
                self.discarded_late(id, attempt, unstamp(held.item));
                None
            }
        }
    }

    /// The last allowed delivery was abandoned: a dead letter, counted abandoned.
    fn exhausted(&self, id: JobId, attempts: u32, item: T, reason: DeadReason) {
        crate::events::dead_lettered(self.raw.label(), id, attempts);
        self.note(|| JobEvent::DeadLettered { id, attempts });
        self.dead.bury(DeadLetter {
            id,
            attempts,
            reason,
            item,
        });
        self.raw.end(None);
    }

    /// An abandoned delivery came back after an immediate shutdown drained the queue: a
    /// dead letter, counted discarded.
    fn discarded_late(&self, id: JobId, attempts: u32, item: T) {
        crate::events::discarded(self.raw.label(), id);
        crate::events::dead_lettered(self.raw.label(), id, attempts);
        self.note(|| JobEvent::Discarded(id));
        self.note(|| JobEvent::DeadLettered { id, attempts });
        self.dead.bury(DeadLetter {
            id,
            attempts,
            reason: DeadReason::ShutDownNow,
            item,
        });
        self.raw.discard(1);
    }

    /// Whether delivery number `attempt` may be retried: under the redelivery policy, only
    /// below `max_attempts`.
    #[inline]
    pub(crate) fn may_retry(&self, attempt: u32) -> bool {
        match self.policy {
            AbandonPolicy::Redeliver { max_attempts } => attempt < max_attempts.get(),
            AbandonPolicy::Abandon | AbandonPolicy::Uncertain => true,
        }
    }

    /// Puts delivery number `attempt` of `id` back for attempt `attempt + 1`: the journal
    /// hears of it while the item is still in the delivery (`take_item` takes it out
    /// afterwards). If the queue takes no returns any more, `put_back` puts the item back
    /// into the delivery before the journal hears of the refusal, and this returns
    /// `false`.
    pub(crate) fn retry(
        &self,
        id: JobId,
        attempt: u32,
        take_item: impl FnOnce() -> T,
        put_back: impl FnOnce(T),
    ) -> bool {
        let _motion = self.transition();
        self.note(|| JobEvent::Retried(id));
        match self
            .raw
            .give_back(id, attempt.saturating_add(1), stamp(take_item()))
            .map_err(unstamp)
        {
            Ok(()) => {
                crate::events::retried(self.raw.label(), id);
                true
            }
            Err(item) => {
                put_back(item);
                self.note(|| JobEvent::RetryRefused(id));
                false
            }
        }
    }

    /// As [`retry`](Steward::retry), but the item is held back (counted buffered) until
    /// [`release`](Steward::release) is called with the ticket this returns; `None` if the
    /// queue takes no returns any more (the item was put back first).
    pub(crate) fn hold(
        &self,
        id: JobId,
        attempt: u32,
        take_item: impl FnOnce() -> T,
        put_back: impl FnOnce(T),
    ) -> Option<Ticket> {
        let _motion = self.transition();
        self.note(|| JobEvent::Retried(id));
        let held = Held {
            id,
            attempt: attempt.saturating_add(1),
            item: stamp(take_item()),
        };
        match self.holding.hold(held) {
            Ok(ticket) => {
                crate::events::retried(self.raw.label(), id);
                Some(ticket)
            }
            Err(held) => {
                put_back(unstamp(held.item));
                self.note(|| JobEvent::RetryRefused(id));
                None
            }
        }
    }

    /// The item held under `ticket` is due: it moves into the lane and a getter is woken.
    /// Nothing happens if a shutdown took or moved it already.
    pub(crate) fn release(&self, ticket: Ticket) {
        match self.holding.release(ticket, &self.raw) {
            Released::Returned => self.raw.announce_returns(1),
            Released::Gone => {}
            Released::Refused(held) => self.held_refused(held),
        }
    }

    /// The lane refused a held item (it closed without the store closing first, which the
    /// shutdowns here rule out): a dead letter, counted discarded, never lost.
    #[cold]
    fn held_refused(&self, held: Held<Slot<T>>) {
        self.discarded_late(held.id, held.attempt.saturating_sub(1), unstamp(held.item));
    }

    // --------------------------------------------------------------------- shutdown

    /// Refuses puts from now on. Returns whether this call shut the queue down.
    pub(crate) fn shutdown(&self) -> bool {
        if !matches!(self.policy, AbandonPolicy::Redeliver { .. }) {
            // The lane closes with the shutdown: the held items go into it at once, so the
            // drain delivers them (a graceful shutdown does not wait for their delays).
            let (moved, refused) = self.holding.release_all(&self.raw);
            self.raw.announce_returns(moved);
            refused.into_iter().for_each(|held| self.held_refused(held));
        }
        let first = self.raw.shut_down();
        if first {
            crate::events::shut_down(self.raw.label(), self.raw.unfinished());
        }
        first
    }

    /// Shuts down and drains the buffer, the lane and the held items, in that order; the
    /// drained items come back with their ids, counted discarded.
    pub(crate) fn shutdown_now(&self) -> Vec<(JobId, T)> {
        // A transition: from the drain until the discards are counted, the ledger counts
        // the drained items in flight (taken, not ended).
        let _motion = self.transition();
        let first = !self.raw.is_shut_down();
        // Before the lane closes: an item due meanwhile is either still held (taken here)
        // or in the lane (drained below), and none can be held afterwards.
        let held = self.holding.take_all();
        let mut drained = self.raw.drain();
        drained.extend(held.into_iter().map(|held| (held.id, held.item)));
        #[cfg(feature = "metrics")]
        let drained: Vec<(JobId, T)> = drained
            .into_iter()
            .map(|(id, slot)| (id, unstamp(slot)))
            .collect();
        if first {
            crate::events::shut_down(self.raw.label(), self.raw.unfinished());
        }
        // Before the endings count: a join that returns has them recorded.
        if self.journal.is_some() {
            for (id, _) in &drained {
                self.note(|| JobEvent::Discarded(*id));
            }
        }
        self.raw.discard(drained.len());
        for (id, _) in &drained {
            crate::events::discarded(self.raw.label(), *id);
        }
        crate::events::drained(self.raw.label(), drained.len());
        drained
    }

    /// Asks the work in flight to stop. Returns whether this was the first request.
    pub(crate) fn cancel_in_flight(&self) -> bool {
        let (first, signalled) = self.cancellation.request();
        if signalled {
            self.raw.wake_signalled();
        }
        first
    }

    pub(crate) fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }

    // ---------------------------------------------------------------- observation

    pub(crate) fn ledger(&self) -> Ledger {
        self.raw.ledger_holding(|| self.holding.count())
    }

    /// Items waiting to be delivered: buffered, returned, or held until due.
    pub(crate) fn len(&self) -> usize {
        self.raw.len() + self.holding.count() as usize
    }

    /// The ledger with the ids in flight, as of one instant: the ids agree with the
    /// ledger's `in_flight` (see `gate.rs`). `None` for the ids (unless nothing is in
    /// flight) if the journal keeps none, or none is installed, or the report could not
    /// get its instant.
    pub(crate) fn report(&self) -> (Ledger, Option<Vec<JobId>>) {
        let unknown = |ledger: Ledger| {
            let ids = (ledger.in_flight == 0).then(Vec::new);
            (ledger, ids)
        };
        match &self.journal {
            Some(journal) if journal.keeps_ids() => {
                let read = || (self.ledger(), journal.in_flight_ids());
                match self.gate.hold(read) {
                    Some((ledger, Some(ids))) if ids.len() as u64 == ledger.in_flight => {
                        (ledger, Some(ids))
                    }
                    // The journal stopped answering, or disagrees with the queue's counts
                    // (it missed events: its `record` panicked), or transitions kept going.
                    _ => unknown(self.ledger()),
                }
            }
            _ => unknown(self.ledger()),
        }
    }

    /// The ids in flight, from the journal.
    pub(crate) fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        self.journal.as_ref().and_then(Journaled::in_flight_ids)
    }

    pub(crate) fn take_dead_letters(&self) -> Vec<DeadLetter<T>> {
        self.dead.take()
    }

    pub(crate) fn dead_letters(&self) -> usize {
        self.dead.len()
    }

    pub(crate) fn redeliveries(&self) -> u64 {
        // Relaxed: a statistic.
        self.redelivered.load(Ordering::Relaxed)
    }
}

/// The item of a delivery whose ending the journal is hearing of (see
/// [`Steward::resolve`]): dropped before [`disarm`](Unended::disarm), by a panic in the
/// journal, it ends the delivery as abandoned.
struct Unended<'s, T> {
    steward: &'s Steward<T>,
    id: JobId,
    attempt: u32,
    item: Option<T>,
}

impl<T> Unended<'_, T> {
    /// The item, for its ending to go on.
    fn disarm(mut self) -> T {
        self.item
            .take()
            .expect("the guard holds the item until it is disarmed")
    }
}

impl<T> Drop for Unended<'_, T> {
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            self.steward.dropped(self.id, self.attempt, item);
        }
    }
}

/// Ends a delivery as abandoned when dropped: by a panic at the events of an abandonment,
/// before the item went anywhere (see [`Steward::abandon`]). Forgotten otherwise.
struct EndedAbandoned<'q, T>(&'q RawQueue<T>);

impl<T> Drop for EndedAbandoned<'_, T> {
    fn drop(&mut self) {
        self.0.end(None);
    }
}
