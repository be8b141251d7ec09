//! [`FixedDelivery`]: an item a fixed queue delivered, which must end exactly once.

use core::fmt;
use core::ops::{Deref, DerefMut};

use super::raw::Raw;
use crate::job_id::JobId;
use crate::outcome::Outcome;

/// An item delivered by [`FixedQueue::get`](super::FixedQueue::get) or
/// [`FixedQueue::try_get`](super::FixedQueue::try_get), which must end exactly once.
///
/// It derefs to the item. It ends by consuming itself:
/// [`succeed`](FixedDelivery::succeed), [`reject`](FixedDelivery::reject),
/// [`uncertain`](FixedDelivery::uncertain) or [`resolve`](FixedDelivery::resolve) record
/// the outcome and give the item back. Dropped without any of these (an early return, a
/// panic unwinding), it is recorded as *abandoned* and the item is dropped: a `join` does
/// not hang on a forgotten acknowledgement and nothing counts as a success by accident.
/// Resolving after a shutdown is allowed (and needed: a shutdown does not end deliveries).
///
/// As the heap queue's [`Delivery`](crate::Delivery), without `retry`, `attempt` and
/// cancellation (see [the tier's docs](super#what-the-fixed-tier-leaves-out)). Ending one
/// is a few atomic operations and may happen in an interrupt handler.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::FixedQueue;
///
/// static JOBS: FixedQueue<u32, 4> = FixedQueue::new();
/// JOBS.try_put(7).unwrap();
/// let mut job = JOBS.try_get().unwrap();
/// *job += 1;
/// assert_eq!(job.succeed(), 8);
/// assert_eq!(JOBS.ledger().succeeded, 1);
/// ```
pub struct FixedDelivery<'a, T> {
    raw: Raw<'a, T>,
    id: JobId,
    /// `Some` until the delivery ends; `Drop` ends it as abandoned if it is still there.
    item: Option<T>,
}

impl<'a, T> FixedDelivery<'a, T> {
    #[inline]
    pub(crate) fn new(raw: Raw<'a, T>, id: JobId, item: T) -> Self {
        FixedDelivery {
            raw,
            id,
            item: Some(item),
        }
    }

    /// The item's id, as returned by the put that accepted it.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<(), 2>::new();
    /// let id = queue.try_put(()).unwrap();
    /// assert_eq!(queue.try_get().unwrap().id(), id);
    /// ```
    #[inline]
    #[must_use]
    pub fn id(&self) -> JobId {
        self.id
    }

    /// Ends the delivery with `outcome` and returns the item.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{fixed::FixedQueue, Outcome};
    ///
    /// let queue = FixedQueue::<&str, 2>::new();
    /// queue.try_put("x").unwrap();
    /// assert_eq!(queue.try_get().unwrap().resolve(Outcome::Rejected), "x");
    /// assert_eq!(queue.ledger().rejected, 1);
    /// ```
    #[inline]
    pub fn resolve(mut self, outcome: Outcome) -> T {
        let item = self
            .item
            .take()
            .expect("a delivery holds its item until it ends");
        // The ledger counts the ending first: a subscriber that panics at the event then
        // unwinds a delivery that has ended, and leaves nothing in flight for good.
        self.raw.end(Some(outcome));
        crate::events::ended("", self.id, outcome);
        item
    }

    /// Ends the delivery as [`Outcome::Succeeded`] and returns the item.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// assert_eq!(queue.ledger().succeeded, 1);
    /// ```
    #[inline]
    pub fn succeed(self) -> T {
        self.resolve(Outcome::Succeeded)
    }

    /// Ends the delivery as [`Outcome::Rejected`] and returns the item.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().reject();
    /// assert_eq!(queue.ledger().rejected, 1);
    /// ```
    #[inline]
    pub fn reject(self) -> T {
        self.resolve(Outcome::Rejected)
    }

    /// Ends the delivery as [`Outcome::Uncertain`] (the external effect is unknown) and
    /// returns the item.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::fixed::FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().uncertain();
    /// assert_eq!(queue.ledger().uncertain, 1);
    /// ```
    #[inline]
    pub fn uncertain(self) -> T {
        self.resolve(Outcome::Uncertain)
    }

    #[cold]
    fn abandoned(&mut self) {
        #[cfg(feature = "std")]
        let panicking = std::thread::panicking();
        #[cfg(not(feature = "std"))]
        let panicking = false;
        let item = self.item.take();
        // Counted first, as in `resolve`.
        self.raw.end(None);
        crate::events::abandoned("", self.id, panicking);
        // Dropped after the ledger counted its ending.
        drop(item);
    }
}

impl<T> Drop for FixedDelivery<'_, T> {
    #[inline]
    fn drop(&mut self) {
        if self.item.is_some() {
            self.abandoned();
        }
    }
}

impl<T> Deref for FixedDelivery<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.item
            .as_ref()
            .expect("a delivery holds its item until it ends")
    }
}

impl<T> DerefMut for FixedDelivery<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.item
            .as_mut()
            .expect("a delivery holds its item until it ends")
    }
}

impl<T> fmt::Debug for FixedDelivery<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedDelivery")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}
