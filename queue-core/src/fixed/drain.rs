//! [`FixedDrain`]: the items an immediate shutdown drains, handed out one at a time.

use core::fmt;

use super::raw::Raw;
use crate::job_id::JobId;

/// The items [`FixedQueue::shutdown_now`](super::FixedQueue::shutdown_now) drains: an
/// iterator of `(JobId, T)` in id order, each item counted
/// [discarded](crate::Ledger::discarded) as it is handed out.
///
/// The queue is shut down and every get refuses from the moment `shutdown_now` returns, so
/// what the buffer holds then belongs to the drain; it stays counted buffered until the
/// iterator hands it out. Dropping the iterator drains the rest (dropping those items, each
/// counted discarded), so a [`join`](super::FixedQueue::join) waits for the drain to be
/// consumed or dropped. A drain that is leaked (`mem::forget`) leaves its items buffered
/// for good.
///
/// It holds no items itself, so it costs a few words wherever it lives (an interrupt
/// handler's stack, say), whatever the queue's capacity.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::FixedQueue;
///
/// static JOBS: FixedQueue<&str, 4> = FixedQueue::new();
/// let a = JOBS.try_put("a").unwrap();
/// let b = JOBS.try_put("b").unwrap();
/// let mut drained = JOBS.shutdown_now();
/// assert_eq!(drained.next(), Some((a, "a")));
/// assert_eq!(JOBS.ledger().buffered, 1, "b is still to be handed out");
/// drop(drained); // drains the rest
/// assert_eq!(JOBS.ledger().discarded, 2);
/// let _ = b;
/// ```
#[must_use = "the drained items are handed out by iterating; dropping the drain discards them"]
pub struct FixedDrain<'a, T> {
    raw: Raw<'a, T>,
    /// Items handed out so far; `None` once the drain found the buffer empty.
    handed_out: Option<usize>,
}

impl<'a, T> FixedDrain<'a, T> {
    pub(crate) fn new(raw: Raw<'a, T>) -> Self {
        FixedDrain {
            raw,
            handed_out: Some(0),
        }
    }
}

impl<T> Iterator for FixedDrain<'_, T> {
    type Item = (JobId, T);

    fn next(&mut self) -> Option<(JobId, T)> {
        let handed_out = self.handed_out.as_mut()?;
        match self.raw.drain_one() {
            Some(drained) => {
                *handed_out += 1;
                Some(drained)
            }
            None => {
                crate::events::drained("", *handed_out);
                self.handed_out = None;
                None
            }
        }
    }
}

impl<T> Drop for FixedDrain<'_, T> {
    /// Drains the rest; if one item's `Drop` panics, the rest stay buffered.
    fn drop(&mut self) {
        for (_, item) in self.by_ref() {
            drop(item);
        }
    }
}

impl<T> fmt::Debug for FixedDrain<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FixedDrain { .. }")
    }
}
