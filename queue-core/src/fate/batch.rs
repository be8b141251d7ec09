//! The batch verbs through the fate layer: each item is stamped, journaled and delivered
//! as a single put or take does it, over the raw queue's batch moves (`engine/batch.rs`).

use alloc::vec::Vec;

use super::journal::JobEvent;
#[cfg(feature = "metrics")]
use super::stamp::{refused, taken};
use super::stamp::{stamp, unstamp};
use super::Steward;
use crate::engine::Handout;
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;

impl<T> Steward<T> {
    /// Puts items from `items` until it runs out or one is refused (see
    /// [`RawQueue::put_many`](crate::engine::RawQueue::put_many)); each accepted id goes
    /// onto `ids`.
    pub(crate) fn put_many(
        &self,
        turn: bool,
        items: &mut impl Iterator<Item = T>,
        ids: &mut Vec<JobId>,
    ) -> Result<(), TryPutError<T>> {
        let put = self.raw.put_many(
            turn,
            &mut items.map(stamp),
            |id| self.note(|| JobEvent::Accepted(id)),
            |id, slot| self.bury_late(id, unstamp(slot)),
            ids,
        );
        #[cfg(feature = "metrics")]
        let put = put.map_err(refused);
        put
    }

    /// Takes up to `max` items (`max` > 0), each wrapped in its delivery and pushed onto
    /// `out`; the journal hears of each delivery once it exists (see
    /// [`RawQueue::take_many`](crate::engine::RawQueue::take_many)).
    pub(crate) fn take_many<D>(
        &self,
        turn: bool,
        max: usize,
        mut wrap: impl FnMut(Handout, T) -> D,
        out: &mut Vec<D>,
    ) -> Result<usize, TryGetError> {
        #[cfg(feature = "metrics")]
        let wrap = {
            let keys = &self.keys;
            move |handout, slot| wrap(handout, taken(keys, slot))
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
