//! The batch verbs through the fate layer: each item is stamped, journaled and delivered
//! as a single put or take does it, over the raw queue's batch moves (`engine/batch.rs`).

use alloc::vec::Vec;

use super::journal::JobEvent;
#[cfg(feature = "metrics")]
use super::stamp::{refused, taken};
#[cfg(feature = "metrics")]
use super::stamp::{stamp, unstamp, Slot};
use super::Steward;
use crate::engine::Handout;
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::wait::turn::Turn;

impl<T> Steward<T> {
    /// Puts the items of `items` until it is empty or one is refused (see
    /// [`RawQueue::put_many`](crate::engine::RawQueue::put_many)); each accepted id goes
    /// onto `ids`, and the items after a refused one stay in `items`.
    pub(crate) fn put_many(
        &self,
        turn: &mut Turn<'_>,
        items: &mut Vec<T>,
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        // Without `metrics` the slot is the item, and the caller's vector is used as it is.
        #[cfg(not(feature = "metrics"))]
        let slots = items;
        #[cfg(feature = "metrics")]
        let mut stamped = StampedRest {
            slots: items.drain(..).map(stamp).collect(),
            items,
        };
        #[cfg(feature = "metrics")]
        let slots = &mut stamped.slots;
        let put = self.raw.put_many(
            turn,
            slots,
            |id| self.note(|| JobEvent::Accepted(id)),
            || self.bury_late_items(),
            ids,
        );
        #[cfg(feature = "metrics")]
        drop(stamped);
        #[cfg(feature = "metrics")]
        let put = put.map_err(refused);
        put
    }

    /// Takes up to `max` items (`max` > 0), each wrapped in its delivery and pushed onto
    /// `out`; the journal hears of each delivery once it exists (see
    /// [`RawQueue::take_many`](crate::engine::RawQueue::take_many)).
    pub(crate) fn take_many<D>(
        &self,
        turn: &mut Turn<'_>,
        max: usize,
        mut wrap: impl FnMut(Handout, T) -> D,
        out: &mut Vec<D>,
    ) -> Result<usize, TryGetError> {
        #[cfg(feature = "metrics")]
        let wrap = {
            let keys = &self.keys;
            move |handout, slot| taken(keys, slot, |item| wrap(handout, item))
        };
        #[cfg(not(feature = "metrics"))]
        let wrap = move |handout, item| wrap(handout, item);
        let Some(journal) = &self.journal else {
            return self
                .raw
                .take_many(turn, max, wrap, None::<fn(Handout)>, out);
        };
        let _motion = self.transition();
        let delivered = |handout: Handout| {
            journal.record(JobEvent::Delivered {
                id: handout.id,
                attempt: handout.attempt,
            });
        };
        self.raw.take_many(turn, max, wrap, Some(delivered), out)
    }
}

/// The stamped items of a batch put, handed back unstamped to the caller's vector when
/// dropped: the items the put did not place, after it or as a panic in user code (a
/// subscriber, the journal) unwinds it.
#[cfg(feature = "metrics")]
struct StampedRest<'v, T> {
    slots: Vec<Slot<T>>,
    items: &'v mut Vec<T>,
}

#[cfg(feature = "metrics")]
impl<T> Drop for StampedRest<'_, T> {
    fn drop(&mut self) {
        self.items.extend(self.slots.drain(..).map(unstamp));
    }
}
