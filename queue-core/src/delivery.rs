//! A delivered item that must end exactly once.

use core::fmt;
use core::ops::{Deref, DerefMut};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::cancel::Cancelled;
use crate::job_id::JobId;
use crate::journal::JobEvent;
use crate::outcome::Outcome;
use crate::queue::Queue;

/// The state both delivery types share; `Q` is how the queue is held.
///
/// `item` is `Some` until the delivery ends; `Drop` records an unresolved delivery as
/// abandoned. The methods that end it take `item` out first, so `Drop` then does nothing.
struct Lease<T, Q: Deref<Target = Queue<T>>> {
    queue: Q,
    id: JobId,
    /// Which delivery of this id this is, from 1 (see `Delivery::attempt`): a `u32`, kept
    /// as a word so that no part of the lease is written narrower than it is later read
    /// (a move of the lease reads it a word or more at a time).
    attempt: u64,
    item: Option<T>,
}

/// What a get hands a new delivery besides its item: the id, and which delivery of that
/// id it is (1 unless the item was redelivered).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handout {
    pub(crate) id: JobId,
    pub(crate) attempt: u32,
}

impl<T, Q: Deref<Target = Queue<T>>> Lease<T, Q> {
    #[inline]
    fn new(queue: Q, handout: Handout, item: T) -> Self {
        Lease {
            queue,
            id: handout.id,
            attempt: u64::from(handout.attempt),
            item: Some(item),
        }
    }

    /// Which delivery of this id this is.
    #[inline]
    fn attempt(&self) -> u32 {
        // Lossless: the word was made from a `u32`.
        self.attempt as u32
    }
}

impl<T, Q: Deref<Target = Queue<T>>> Lease<T, Q> {
    #[inline]
    fn item(&self) -> &T {
        self.item
            .as_ref()
            .expect("a delivery holds its item until it is consumed")
    }

    #[inline]
    fn item_mut(&mut self) -> &mut T {
        self.item
            .as_mut()
            .expect("a delivery holds its item until it is consumed")
    }

    // Always: every resolve runs it, and left to itself the compiler keeps it out of line
    // (8 of the floor's 193 instructions per message were its call and return).
    #[inline(always)]
    fn resolve(mut self, outcome: Outcome) -> T {
        let id = self.id;
        // While the item is still in this delivery, and before the ledger counts the
        // ending (so a join that returns has it recorded).
        self.queue.note(|| JobEvent::Ended { id, outcome });
        let item = self
            .item
            .take()
            .expect("a delivery holds its item until it is consumed");
        crate::events::ended(self.id, outcome);
        self.queue.end_delivery(Some(outcome));
        item
    }

    fn retry(mut self) -> Result<JobId, Self> {
        let id = self.id;
        // Before the push (once pushed, a getter may record the next delivery), and while
        // the item is still in this delivery.
        self.queue.note(|| JobEvent::Retried(id));
        let item = self
            .item
            .take()
            .expect("a delivery holds its item until it is consumed");
        match self.queue.requeue(self.id, item) {
            Ok(()) => {
                crate::events::retried(self.id);
                Ok(self.id)
            }
            Err(item) => {
                // Back in the delivery before any waker or journal runs.
                self.item = Some(item);
                self.queue.note(|| JobEvent::RetryRefused(id));
                self.queue.wake_signalled();
                Err(self)
            }
        }
    }
}

impl<T, Q: Deref<Target = Queue<T>>> Drop for Lease<T, Q> {
    #[inline]
    fn drop(&mut self) {
        if self.item.is_some() {
            self.abandoned();
        }
    }
}

impl<T, Q: Deref<Target = Queue<T>>> Lease<T, Q> {
    /// The drop of a delivery that still holds its item: records it abandoned and ends
    /// it as the queue's policy says. Out of line, so that the drop of a resolved
    /// delivery is one check.
    #[cold]
    fn abandoned(&mut self) {
        #[cfg(feature = "std")]
        let panicking = std::thread::panicking();
        #[cfg(not(feature = "std"))]
        let panicking = false;
        crate::events::abandoned(self.id, panicking);
        let id = self.id;
        self.queue.note(|| JobEvent::Abandoned { id, panicking });
        if self.queue.redelivers() {
            let item = self.item.take().expect("the drop checked it");
            self.queue.abandon(self.id, self.attempt(), item, panicking);
        } else if self.queue.abandons_uncertain() {
            // Recorded abandoned (above), then ended: one final event, before the
            // ledger counts it, as a resolve does. The item is dropped with the
            // delivery, after the ledger (as under `Abandon`).
            let outcome = Outcome::Uncertain;
            self.queue.note(|| JobEvent::Ended { id, outcome });
            crate::events::ended(id, outcome);
            self.queue.end_delivery(Some(outcome));
        } else {
            self.queue.end_delivery(None);
        }
    }
}

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
            self.lease.queue.cancellation().is_requested()
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
            Cancelled::new(self.lease.queue.cancellation()).wait()
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
            self.lease.id
        }

        /// Which delivery of this id this is: 1 for the first, one more for each
        /// redelivery under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver).
        ///
        /// A [`retry`](Delivery::retry) is the handler's own decision and puts the item
        /// back through the buffer, which carries no attempt: the retried item comes back
        /// as attempt 1.
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
/// [`retry`](Delivery::retry) puts it back in the buffer under the same id. Dropped
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
    lease: Lease<T, &'a Queue<T>>,
}

impl<'a, T> Delivery<'a, T> {
    #[inline]
    pub(crate) fn new(queue: &'a Queue<T>, handout: Handout, item: T) -> Self {
        Delivery {
            lease: Lease::new(queue, handout, item),
        }
    }

    delivery_methods!(Delivery);

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
        Cancelled::new(self.lease.queue.cancellation())
    }

    /// Puts the item back in the buffer under the same id; it counts as buffered again.
    ///
    /// The item goes to the back of the buffer, behind items with larger ids: after a
    /// retry, ids no longer follow buffer order (see [`JobId`]).
    ///
    /// # Errors
    ///
    /// The delivery comes back, still in flight, if the queue is shut down, or if it is
    /// bounded by buffered items and full. It then still has to be resolved.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// let id = queue.try_put(1).unwrap();
    /// assert_eq!(queue.try_get().unwrap().retry().unwrap(), id);
    /// assert_eq!(queue.ledger().buffered, 1);
    /// let again = queue.try_get().unwrap();
    /// queue.shutdown();
    /// let again = again.retry().unwrap_err();
    /// again.reject();
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
            .field("id", &self.lease.id)
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
        Cancelled::new(self.lease.queue.cancellation())
    }

    /// Puts the item back in the buffer under the same id; see [`Delivery::retry`].
    ///
    /// # Errors
    ///
    /// The delivery comes back, still in flight, if the queue is shut down or full.
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
            .field("id", &self.lease.id)
            .finish_non_exhaustive()
    }
}
