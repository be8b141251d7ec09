//! The batch verbs of the no-heap tier: [`FixedQueue::try_put_many`] and
//! [`FixedQueue::try_get_many`].
//!
//! With no heap there is no vector to lend, so the batch is what the caller owns: a put
//! batch pulls its items from an iterator the caller keeps (an array's, a `heapless`
//! vector's drain, a generator), which holds the rest of the batch after any outcome, and
//! reports each id to a callback; a get batch hands each delivery to a callback as it is
//! taken. Each item moves as [`try_put`](FixedQueue::try_put) or
//! [`try_get`](FixedQueue::try_get) moves it, one after the other (the same checks, the
//! same turn rule, a wake-up per item that needs one): a batch here saves the caller's
//! loop, not the engine's work per item.

use super::delivery::FixedDelivery;
use super::queue::FixedQueue;
use crate::error::{TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::wait::turn::Turn;

impl<T, const N: usize, const W: usize> FixedQueue<T, N, W> {
    /// Puts items pulled from `items` while there is room now, oldest first, calling
    /// `accepted` with the id of each item accepted; stops when `items` runs out or at the
    /// first item refused.
    ///
    /// Only the items it places and the one it refuses are pulled from `items`, so the
    /// iterator still holds the rest of the batch after any outcome. Each item is accepted
    /// or refused as by [`try_put`](FixedQueue::try_put), and `accepted` runs right after
    /// its item is placed.
    ///
    /// Returns how many items were accepted.
    ///
    /// # Errors
    ///
    /// The first item refused, with the reason [`try_put`](FixedQueue::try_put) would give
    /// ([`TryPutError::Full`] or [`TryPutError::ShutDown`]). The items before it were
    /// accepted; the items after it are still in `items`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{fixed::FixedQueue, TryPutError};
    ///
    /// let queue = FixedQueue::<u8, 4>::new();
    /// let mut items = [1, 2, 3, 4, 5, 6].into_iter();
    /// let mut ids = [0; 4];
    /// let mut placed = 0;
    /// let refused = queue.try_put_many(&mut items, |id| {
    ///     ids[placed] = id.get();
    ///     placed += 1;
    /// });
    /// assert!(matches!(refused, Err(TryPutError::Full(5))));
    /// assert_eq!(ids, [0, 1, 2, 3]);
    /// // The rest of the batch is still in the iterator.
    /// assert_eq!(items.next(), Some(6));
    /// ```
    pub fn try_put_many<I: Iterator<Item = T>>(
        &self,
        items: &mut I,
        mut accepted: impl FnMut(JobId),
    ) -> Result<usize, TryPutError<T>> {
        let raw = self.raw();
        let mut placed = 0;
        for item in items {
            accepted(raw.put(&mut Turn::none(), item)?);
            placed += 1;
        }
        Ok(placed)
    }

    /// Delivers up to `max` buffered items now, handing each delivery to `each` as it is
    /// taken, oldest first; returns how many.
    ///
    /// Items come as successive [`try_get`](FixedQueue::try_get)s would take them (no item
    /// kept for a woken [`get`](FixedQueue::get) is taken), and each is a full
    /// [`FixedDelivery`] that must end as any other does: `each` may end it at once, or
    /// keep it (in a `heapless` vector, an array of `Option`s). `max == 0` takes nothing
    /// and returns `Ok(0)`.
    ///
    /// # Errors
    ///
    /// As [`try_get`](FixedQueue::try_get), only when nothing was delivered:
    /// [`TryGetError::Empty`] or [`TryGetError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{fixed::FixedQueue, TryGetError};
    ///
    /// let queue = FixedQueue::<u32, 8>::new();
    /// queue.try_put_many(&mut (1..=5), |_| {}).unwrap();
    /// let mut sum = 0;
    /// let taken = queue.try_get_many(3, |job| sum += job.succeed());
    /// assert_eq!((taken, sum), (Ok(3), 6));
    /// assert_eq!(queue.try_get_many(8, |job| sum += job.succeed()), Ok(2));
    /// assert_eq!(queue.try_get_many(8, |job| sum += job.succeed()), Err(TryGetError::Empty));
    /// assert_eq!(sum, 15);
    /// assert!(queue.ledger().is_balanced());
    /// ```
    pub fn try_get_many<'q>(
        &'q self,
        max: usize,
        mut each: impl FnMut(FixedDelivery<'q, T>),
    ) -> Result<usize, TryGetError> {
        let raw = self.raw();
        let mut taken = 0;
        while taken < max {
            match raw.take(&mut Turn::none(), |id, item| {
                FixedDelivery::new(raw, id, item)
            }) {
                Ok(delivery) => {
                    taken += 1;
                    each(delivery);
                }
                Err(_) if taken > 0 => break,
                Err(nothing) => return Err(nothing),
            }
        }
        Ok(taken)
    }
}
