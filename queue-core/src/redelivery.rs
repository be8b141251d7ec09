//! The machinery of [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver): a lane
//! of redelivered items beside the buffer, the dead letters, and the redelivery count.
//!
//! Redelivered items travel in their own lane, not the buffer, for two reasons: they carry
//! their attempt number, and a graceful shutdown closes the buffer (which is what makes
//! "accepted" and "shut down" exclusive) while a redelivered item was accepted long ago and
//! must still be delivered. The lane is closed only by an immediate shutdown, before it is
//! drained, so a redelivery racing the drain either lands in the lane (and the drain
//! returns it) or finds it closed (and the item becomes a dead letter, discarded): never
//! both, never neither.

use alloc::vec::Vec;
use core::num::NonZeroU32;

use concurrent_queue::{ConcurrentQueue, PushError};

use crate::dead_letter::{DeadLetter, DeadReason};
use crate::job_id::JobId;
use crate::sync::{AtomicU64, Ordering};
use crate::unwind::each_despite_panics;

/// What became of an abandoned delivery's item.
pub(crate) enum Fate {
    /// Back in the lane for another attempt, which it carries.
    Redelivered(u32),
    /// Its attempts are used up; now a dead letter.
    Exhausted,
    /// The lane was closed by an immediate shutdown; now a dead letter.
    Discarded,
}

pub(crate) struct Redelivery<T> {
    max_attempts: NonZeroU32,
    /// Redelivered items with the attempt they will be delivered as.
    lane: ConcurrentQueue<(JobId, u32, T)>,
    /// Never closed; unbounded (see `Queue::take_dead_letters` for the bound).
    dead: ConcurrentQueue<DeadLetter<T>>,
    /// Redeliveries so far; kept outside the ledger, whose identity counts ids, not
    /// deliveries.
    redelivered: AtomicU64,
}

impl<T> Redelivery<T> {
    pub(crate) fn new(max_attempts: NonZeroU32) -> Self {
        Redelivery {
            max_attempts,
            lane: ConcurrentQueue::unbounded(),
            dead: ConcurrentQueue::unbounded(),
            redelivered: AtomicU64::new(0),
        }
    }

    pub(crate) fn max_attempts(&self) -> u32 {
        self.max_attempts.get()
    }

    /// Decides the fate of an item whose delivery number `attempt` was abandoned, and puts
    /// it where that fate says (the lane or the dead letters). Runs no user code; the item
    /// is never dropped here. `on_redeliver` runs with the next attempt's number before the
    /// item goes into the lane (where another getter may take it at once), so the journal
    /// hears of the redelivery before the delivery. (In the ledger an item in the lane is
    /// buffered: the queue counts the lane's length out of its in-flight count.)
    pub(crate) fn abandon(
        &self,
        id: JobId,
        attempt: u32,
        item: T,
        panicking: bool,
        on_redeliver: impl FnOnce(u32),
    ) -> Fate {
        if attempt >= self.max_attempts.get() {
            self.bury(id, attempt, DeadReason::Exhausted { panicking }, item);
            return Fate::Exhausted;
        }
        let next = attempt + 1;
        on_redeliver(next);
        match self.lane.push((id, next, item)) {
            Ok(()) => {
                // Relaxed: a statistic.
                self.redelivered.fetch_add(1, Ordering::Relaxed);
                Fate::Redelivered(next)
            }
            Err(PushError::Closed((id, _, item)) | PushError::Full((id, _, item))) => {
                // (Full cannot happen: the lane is unbounded.)
                self.bury(id, attempt, DeadReason::ShutDownNow, item);
                Fate::Discarded
            }
        }
    }

    fn bury(&self, id: JobId, attempts: u32, reason: DeadReason, item: T) {
        // Never fails: the list is unbounded and never closed.
        let _ = self.dead.push(DeadLetter {
            id,
            attempts,
            reason,
            item,
        });
    }

    /// The next redelivered item, with the attempt it is delivered as.
    #[inline]
    pub(crate) fn pop(&self) -> Option<(JobId, u32, T)> {
        self.lane.pop().ok()
    }

    /// Whether an immediate shutdown closed the lane.
    pub(crate) fn is_closed(&self) -> bool {
        self.lane.is_closed()
    }

    /// Closes the lane: redeliveries from now on become dead letters.
    pub(crate) fn close(&self) {
        self.lane.close();
    }

    pub(crate) fn len(&self) -> usize {
        self.lane.len()
    }

    pub(crate) fn take_dead(&self) -> Vec<DeadLetter<T>> {
        let mut taken = Vec::with_capacity(self.dead.len());
        while let Ok(letter) = self.dead.pop() {
            taken.push(letter);
        }
        taken
    }

    pub(crate) fn dead_len(&self) -> usize {
        self.dead.len()
    }

    pub(crate) fn redelivered(&self) -> u64 {
        // Relaxed: a statistic.
        self.redelivered.load(Ordering::Relaxed)
    }
}

impl<T> Drop for Redelivery<T> {
    /// Drops every item of the lane and the dead letters, even if some item's `Drop`
    /// panics (see `Queue`'s `Drop`).
    fn drop(&mut self) {
        let lane = &self.lane;
        each_despite_panics(|| lane.pop().ok(), drop);
        let dead = &self.dead;
        each_despite_panics(|| dead.pop().ok(), drop);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn limit(n: u32) -> Redelivery<&'static str> {
        Redelivery::new(NonZeroU32::new(n).unwrap())
    }

    #[test]
    fn attempts_below_the_limit_go_back_then_the_item_is_buried() {
        let redelivery = limit(2);
        let id = JobId::new(7);
        let mut moved = false;
        let fate = redelivery.abandon(id, 1, "x", false, |_| moved = true);
        assert!(matches!(fate, Fate::Redelivered(2)) && moved);
        assert_eq!(redelivery.pop().map(|(id, a, _)| (id, a)), Some((id, 2)));
        let fate = redelivery.abandon(id, 2, "x", true, |_| unreachable!());
        assert!(matches!(fate, Fate::Exhausted));
        let dead = redelivery.take_dead();
        assert_eq!((dead[0].id, dead[0].attempts, dead[0].item), (id, 2, "x"));
        assert_eq!(dead[0].reason, DeadReason::Exhausted { panicking: true });
        assert_eq!(redelivery.redelivered(), 1);
    }

    #[test]
    fn a_closed_lane_buries_the_item_as_discarded() {
        let redelivery = limit(3);
        redelivery.close();
        let mut moved = false;
        let fate = redelivery.abandon(JobId::new(1), 1, "y", false, |_| moved = true);
        assert!(matches!(fate, Fate::Discarded) && moved);
        assert!(redelivery.pop().is_none());
        assert_eq!(redelivery.take_dead()[0].reason, DeadReason::ShutDownNow);
        assert_eq!(redelivery.redelivered(), 0);
    }
}
