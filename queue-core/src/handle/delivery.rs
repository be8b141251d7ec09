//! A delivered item that must end exactly once.

use core::fmt;
use core::ops::{Deref, DerefMut};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use super::lease::Lease;
use crate::engine::Handout;
use crate::fate::cancel::Cancelled;
use crate::fate::Steward;
use crate::job_id::JobId;
use crate::outcome::Outcome;
#[cfg(target_has_atomic = "ptr")]
use crate::queue::Queue;

macro_rules! delivery_methods {
    ($Type:ident) => {
        /// Whether cancellation of the queue's in-flight work was requested
        /// ([`Queue::cancel_in_flight`] or [`Queue::abort`]), before or after this delivery
        /// was handed out. A request only: the delivery still has to end.
        ///
        /// One atomic load; cheap enough to check between steps of a long job.
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// queue.try_put(1).unwrap();
        /// let job = queue.try_get().unwrap();
        /// assert!(!job.is_cancelled());
        /// queue.cancel_in_flight();
        /// assert!(job.is_cancelled());
        /// job.uncertain();
        /// ```
        #[inline]
        #[must_use]
        pub fn is_cancelled(&self) -> bool {
            self.lease.steward().cancellation().is_requested()
        }

        /// Blocks the thread until cancellation of the queue's in-flight work is requested
        /// (returns at once if it already was).
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// queue.try_put(1).unwrap();
        /// let job = queue.try_get().unwrap();
        /// std::thread::scope(|s| {
        ///     s.spawn(|| queue.abort());
        ///     job.cancelled_blocking();
        /// });
        /// job.uncertain();
        /// ```
        #[cfg(feature = "std")]
        pub fn cancelled_blocking(&self) {
            Cancelled::new(self.lease.steward().cancellation()).wait()
        }

        /// The item's id, as returned by the put that accepted it.
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// let id = queue.try_put(()).unwrap();
        /// assert_eq!(queue.try_get().unwrap().id(), id);
        /// ```
        #[inline]
        #[must_use]
        pub fn id(&self) -> JobId {
            self.lease.id()
        }

        /// Which delivery of this id this is: 1 for the first, one more for each time it
        /// came back, by a [`retry`](Delivery::retry) or, under
        /// [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver), a redelivery.
        /// It never goes back.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_queue::{AbandonPolicy, Queue};
        ///
        /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
        /// queue.try_put("job").unwrap();
        /// let first = queue.try_get().unwrap();
        /// assert_eq!(first.attempt(), 1);
        /// drop(first); // abandoned: redelivered
        /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
        /// ```
        #[inline]
        #[must_use]
        pub fn attempt(&self) -> u32 {
            self.lease.attempt()
        }

        /// Ends the delivery with `outcome` and returns the item.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_queue::{Outcome, Queue};
        ///
        /// let queue = Queue::unbounded();
        /// queue.try_put("x").unwrap();
        /// assert_eq!(queue.try_get().unwrap().resolve(Outcome::Rejected), "x");
        /// assert_eq!(queue.ledger().rejected, 1);
        /// ```
        #[inline]
        pub fn resolve(self, outcome: Outcome) -> T {
            self.lease.resolve(outcome)
        }

        /// Ends the delivery as [`Outcome::Succeeded`] and returns the item.
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// queue.try_put(1).unwrap();
        /// queue.try_get().unwrap().succeed();
        /// assert_eq!(queue.ledger().succeeded, 1);
        /// ```
        #[inline]
        pub fn succeed(self) -> T {
            self.lease.resolve(Outcome::Succeeded)
        }

        /// Ends the delivery as [`Outcome::Rejected`] and returns the item.
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// queue.try_put(1).unwrap();
        /// queue.try_get().unwrap().reject();
        /// assert_eq!(queue.ledger().rejected, 1);
        /// ```
        #[inline]
        pub fn reject(self) -> T {
            self.lease.resolve(Outcome::Rejected)
        }

        /// Ends the delivery as [`Outcome::Uncertain`] (the external effect is unknown) and
        /// returns the item.
        ///
        /// # Examples
        ///
        /// ```
        /// let queue = tally_queue::Queue::unbounded();
        /// queue.try_put(1).unwrap();
        /// queue.try_get().unwrap().uncertain();
        /// assert_eq!(queue.ledger().uncertain, 1);
        /// ```
        #[inline]
        pub fn uncertain(self) -> T {
            self.lease.resolve(Outcome::Uncertain)
        }
    };
}

/// An item delivered by [`Queue::get`], [`Queue::try_get`] or [`Queue::get_blocking`],
/// which must end exactly once.
///
/// It derefs to the item. It ends by consuming itself: [`succeed`](Delivery::succeed),
/// [`reject`](Delivery::reject), [`uncertain`](Delivery::uncertain) or
/// [`resolve`](Delivery::resolve) record the outcome and give the item back;
/// [`retry`](Delivery::retry) puts it back under the same id for another attempt. Dropped
/// without any of these (an early return, a panic unwinding), it is recorded as
/// *abandoned* (or, by the queue's [`AbandonPolicy`](crate::AbandonPolicy), redelivered or
/// ended uncertain): `join` does not hang on a forgotten acknowledgement and nothing counts
/// as a success by accident. Resolving after a shutdown is allowed (and needed: shutdown does
/// not end deliveries).
///
/// There is no free-standing `task_done`: an acknowledgement without a delivery, or a
/// second acknowledgement of one, cannot be written.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// queue.try_put(String::from("job")).unwrap();
/// let mut delivery = queue.try_get().unwrap();
/// delivery.push_str("-edited");
/// assert_eq!(delivery.len(), 10);
/// let item = delivery.succeed();
/// assert_eq!(item, "job-edited");
/// ```
pub struct Delivery<'a, T> {
    lease: Lease<T, &'a Steward<T>>,
}

impl<'a, T> Delivery<'a, T> {
    #[inline]
    pub(crate) fn new(steward: &'a Steward<T>, handout: Handout, item: T) -> Self {
        Delivery {
            lease: Lease::new(steward, handout, item),
        }
    }

    delivery_methods!(Delivery);

    /// The lease, for the verbs that consume the delivery outside this file.
    pub(crate) fn into_lease(self) -> Lease<T, &'a Steward<T>> {
        self.lease
    }

    /// Back from [`into_lease`](Delivery::into_lease).
    pub(crate) fn from_lease(lease: Lease<T, &'a Steward<T>>) -> Self {
        Delivery { lease }
    }

    /// A future that resolves once cancellation of the queue's in-flight work is requested
    /// (at once if it already was); see [`Cancelled`]. Creating it allocates nothing.
    ///
    /// It borrows the queue, not the delivery, so a `select!` branch can resolve the
    /// delivery while the future is still alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::{block_on, or};
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let job = queue.try_get().unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| queue.cancel_in_flight());
    ///     let stop = job.cancelled();
    ///     // The handler's work never finishes by itself here.
    ///     let cancelled = block_on(or(async { stop.await; true }, std::future::pending()));
    ///     assert!(cancelled);
    /// });
    /// job.reject();
    /// ```
    #[inline]
    pub fn cancelled(&self) -> Cancelled<'a> {
        let steward: &'a Steward<T> = self.lease.owner();
        Cancelled::new(steward.cancellation())
    }

    /// Puts the item back under the same id for its next delivery, numbered one higher
    /// ([`attempt`](Delivery::attempt)); it counts as buffered again.
    ///
    /// Returned items are delivered before fresh ones, oldest return first (see
    /// [`Queue::get`](crate::Queue::get)), and take no slot of a bounded queue: the item
    /// was counted when it was first taken.
    ///
    /// # Errors
    ///
    /// The delivery comes back, still in flight (it then still has to be resolved):
    ///
    /// - under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver), if this is
    ///   the last delivery `max_attempts` allows: a retry counts as an attempt, as an
    ///   abandonment does, so a job that keeps failing reaches the dead letters;
    /// - after [`Queue::shutdown_now`](crate::Queue::shutdown_now), and after a graceful
    ///   [`Queue::shutdown`](crate::Queue::shutdown) unless the policy is `Redeliver` (whose
    ///   gets wait for returns until nothing is unfinished).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::unbounded();
    /// let id = queue.try_put(1).unwrap();
    /// assert_eq!(queue.try_get().unwrap().retry().unwrap(), id);
    /// assert_eq!(queue.ledger().buffered, 1);
    /// let again = queue.try_get().unwrap();
    /// assert_eq!(again.attempt(), 2);
    /// queue.shutdown();
    /// let again = again.retry().unwrap_err();
    /// again.reject();
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
    /// queue.try_put("flaky").unwrap();
    /// queue.try_get().unwrap().retry().unwrap();
    /// let last = queue.try_get().unwrap();
    /// assert_eq!(last.attempt(), 2);
    /// let last = last.retry().unwrap_err(); // no third attempt
    /// drop(last); // its last attempt abandoned: a dead letter
    /// assert_eq!(queue.take_dead_letters().len(), 1);
    /// ```
    pub fn retry(self) -> Result<JobId, Self> {
        self.lease.retry().map_err(|lease| Delivery { lease })
    }
}

impl<T> Deref for Delivery<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.lease.item()
    }
}

impl<T> DerefMut for Delivery<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.lease.item_mut()
    }
}

impl<T> fmt::Debug for Delivery<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("id", &self.lease.id())
            .finish_non_exhaustive()
    }
}

/// As [`Delivery`], holding the queue through an `Arc` so it can move into a `'static`
/// task; from [`Queue::get_owned`] or [`Queue::try_get_owned`].
///
/// Only on targets with pointer-sized atomic compare-and-swap.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// let queue = Arc::new(tally_queue::Queue::unbounded());
/// queue.try_put(2).unwrap();
/// let delivery = queue.try_get_owned().unwrap();
/// let handle = std::thread::spawn(move || *delivery * 10 + delivery.succeed());
/// assert_eq!(handle.join().unwrap(), 22);
/// ```
#[cfg(target_has_atomic = "ptr")]
pub struct OwnedDelivery<T> {
    lease: Lease<T, Arc<Queue<T>>>,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> OwnedDelivery<T> {
    #[inline]
    pub(crate) fn new(queue: Arc<Queue<T>>, handout: Handout, item: T) -> Self {
        OwnedDelivery {
            lease: Lease::new(queue, handout, item),
        }
    }

    delivery_methods!(OwnedDelivery);

    /// The lease, for the verbs that consume the delivery outside this file.
    pub(crate) fn into_lease(self) -> Lease<T, Arc<Queue<T>>> {
        self.lease
    }

    /// Back from [`into_lease`](OwnedDelivery::into_lease).
    pub(crate) fn from_lease(lease: Lease<T, Arc<Queue<T>>>) -> Self {
        OwnedDelivery { lease }
    }

    /// A future that resolves once cancellation of the queue's in-flight work is requested
    /// (at once if it already was); see [`Cancelled`]. Creating it allocates nothing.
    ///
    /// It borrows this delivery (which holds the queue), so end the delivery after the
    /// future is gone: let the `select!` return which branch won, then resolve.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::future::{block_on, or};
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(1).unwrap();
    /// let job = queue.try_get_owned().unwrap();
    /// let handler = std::thread::spawn(move || {
    ///     let cancelled = block_on(or(async { job.cancelled().await; true }, std::future::pending()));
    ///     assert!(cancelled);
    ///     job.uncertain()
    /// });
    /// queue.cancel_in_flight();
    /// assert_eq!(handler.join().unwrap(), 1);
    /// ```
    #[inline]
    pub fn cancelled(&self) -> Cancelled<'_> {
        Cancelled::new(self.lease.steward().cancellation())
    }

    /// Puts the item back under the same id for its next delivery; see
    /// [`Delivery::retry`].
    ///
    /// # Errors
    ///
    /// As [`Delivery::retry`]: the delivery comes back, still in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// let id = queue.try_put(1).unwrap();
    /// assert_eq!(queue.try_get_owned().unwrap().retry().unwrap(), id);
    /// ```
    pub fn retry(self) -> Result<JobId, Self> {
        self.lease.retry().map_err(|lease| OwnedDelivery { lease })
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Deref for OwnedDelivery<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        self.lease.item()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> DerefMut for OwnedDelivery<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.lease.item_mut()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedDelivery<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedDelivery")
            .field("id", &self.lease.id())
            .finish_non_exhaustive()
    }
}
