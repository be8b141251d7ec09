//! `retry_at`: a retry that waits for a deadline before the item can be delivered again,
//! and its futures [`RetryAt`] and [`RetryAtOwned`].
//!
//! The queue takes no time of its own: the caller hands it a deadline future (a runtime's
//! sleep, an embedded timer; the adapters' `retry_after` and `retry_backoff` pass their
//! runtime's), and the returned future, polled by some task, moves the item into the lane
//! when the deadline passes.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use pin_project_lite::pin_project;

use crate::fate::holding::Ticket;
use crate::fate::{Owner, Steward};
use crate::handle::delivery::Delivery;
#[cfg(target_has_atomic = "ptr")]
use crate::handle::delivery::OwnedDelivery;
use crate::job_id::JobId;
#[cfg(target_has_atomic = "ptr")]
use crate::queue::Queue;

/// A held item's claim: moves it into the lane once, when due or when dropped.
struct Hold<T, O: Owner<T>> {
    owner: O,
    id: JobId,
    /// `None` once the item has moved on.
    ticket: Option<Ticket>,
    _item: core::marker::PhantomData<fn(T)>,
}

impl<T, O: Owner<T>> Hold<T, O> {
    fn new(owner: O, id: JobId, ticket: Ticket) -> Self {
        Hold {
            owner,
            id,
            ticket: Some(ticket),
            _item: core::marker::PhantomData,
        }
    }

    fn release(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.owner.steward().release(ticket);
        }
    }

    fn poll_with<F: Future>(&mut self, deadline: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<()> {
        if self.ticket.is_none() {
            return Poll::Ready(());
        }
        match deadline.poll(cx) {
            Poll::Ready(_) => {
                self.release();
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T, O: Owner<T>> Drop for Hold<T, O> {
    fn drop(&mut self) {
        // Dropped before the deadline (a cancelled timer task, a runtime shutting down):
        // the item is due at once, never lost.
        self.release();
    }
}

pin_project! {
    /// The item of a delivery retried with [`Delivery::retry_at`], held back until the
    /// deadline future resolves: polled to completion, it moves the item into the queue for
    /// its next delivery. Dropped before that, it moves the item at once, so nothing is
    /// lost when a timer task is cancelled or its runtime shuts down.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put("job").unwrap();
    /// let retry = queue.try_get().unwrap().retry_at(async {}).unwrap();
    /// assert_eq!(format!("{retry:?}"), "RetryAt { id: JobId(0), .. }");
    /// block_on(retry);
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// ```
    #[must_use = "the item is due when this future completes or is dropped"]
    pub struct RetryAt<'a, T, F> {
        hold: Hold<T, &'a Steward<T>>,
        #[pin]
        deadline: F,
    }
}

impl<T, F> RetryAt<'_, T, F> {
    /// The id of the held item.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// let id = queue.try_put(1).unwrap();
    /// let retry = queue.try_get().unwrap().retry_at(std::future::pending::<()>()).unwrap();
    /// assert_eq!(retry.id(), id);
    /// ```
    #[must_use]
    pub fn id(&self) -> JobId {
        self.hold.id
    }
}

impl<T, F: Future> Future for RetryAt<'_, T, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        this.hold.poll_with(this.deadline, cx)
    }
}

impl<T, F> fmt::Debug for RetryAt<'_, T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryAt")
            .field("id", &self.hold.id)
            .finish_non_exhaustive()
    }
}

#[cfg(target_has_atomic = "ptr")]
pin_project! {
    /// As [`RetryAt`], holding the queue through an `Arc`, so that it can be spawned as a
    /// `'static` task; from [`OwnedDelivery::retry_at`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put("job").unwrap();
    /// let retry = queue.try_get_owned().unwrap().retry_at(async {}).unwrap();
    /// std::thread::spawn(move || block_on(retry)).join().unwrap();
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// ```
    #[must_use = "the item is due when this future completes or is dropped"]
    pub struct RetryAtOwned<T, F> {
        hold: Hold<T, Arc<Queue<T>>>,
        #[pin]
        deadline: F,
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T, F> RetryAtOwned<T, F> {
    /// The id of the held item.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// let id = queue.try_put(1).unwrap();
    /// let retry = queue.try_get_owned().unwrap().retry_at(std::future::pending::<()>()).unwrap();
    /// assert_eq!(retry.id(), id);
    /// ```
    #[must_use]
    pub fn id(&self) -> JobId {
        self.hold.id
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T, F: Future> Future for RetryAtOwned<T, F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        this.hold.poll_with(this.deadline, cx)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T, F> fmt::Debug for RetryAtOwned<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryAtOwned")
            .field("id", &self.hold.id)
            .finish_non_exhaustive()
    }
}

impl<'a, T> Delivery<'a, T> {
    /// Puts the item back under the same id for its next delivery, as
    /// [`retry`](Delivery::retry) does, but not before `deadline` resolves: until then the
    /// item is held back, and the returned future, polled to completion, lets it go.
    ///
    /// - **Ledger**: a held item counts as buffered (as on the Redis queue), and in
    ///   [`Queue::len`](crate::Queue::len); `join` waits for it.
    /// - **Attempts** never reset: the next delivery is numbered one higher, and under
    ///   [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver) this counts toward
    ///   `max_attempts` as a plain retry does.
    /// - **Nothing is lost**: the future dropped before the deadline (a cancelled timer
    ///   task, a runtime shutting down, a panic in the deadline) lets the item go at once.
    /// - **Shutdown**: [`Queue::shutdown_now`](crate::Queue::shutdown_now) hands held
    ///   items back with the rest, counted discarded (the future then does nothing). A
    ///   graceful [`Queue::shutdown`](crate::Queue::shutdown) lets them go at once (the
    ///   drain does not wait for their deadlines), except under `Redeliver`, whose gets
    ///   wait for returns anyway.
    ///   Either way the future, once its item is gone, only waits out its deadline (or its
    ///   drop) and does nothing more.
    ///
    /// The deadline is any future (its output is ignored): a runtime's sleep (the
    /// adapters' `retry_after` and `retry_backoff` supply their runtime's timer), or an
    /// embedded timer. The caller awaits the returned future or spawns it as a task. Pair
    /// it with a [`Backoff`](crate::Backoff) to space the attempts.
    ///
    /// # Errors
    ///
    /// As [`retry`](Delivery::retry): the delivery comes back, still in flight, on the
    /// last attempt `Redeliver` allows and once the queue takes no returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put("flaky").unwrap();
    /// // A deadline that passes at its second poll (a runtime's sleep in real code).
    /// let deadline = futures_lite::future::yield_now();
    /// let retry = queue.try_get().unwrap().retry_at(deadline).unwrap();
    /// assert_eq!(queue.ledger().buffered, 1); // held: buffered, not yet deliverable
    /// assert!(queue.try_get().is_err());
    /// block_on(retry);
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// ```
    pub fn retry_at<F: Future>(self, deadline: F) -> Result<RetryAt<'a, T, F>, Self> {
        let id = self.id();
        match self.into_lease().hold() {
            Ok((steward, ticket)) => Ok(RetryAt {
                hold: Hold::new(steward, id, ticket),
                deadline,
            }),
            Err(lease) => Err(Delivery::from_lease(lease)),
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> OwnedDelivery<T> {
    /// Puts the item back after `deadline`; see [`Delivery::retry_at`]. The future holds
    /// the queue, so it can be spawned as a `'static` task.
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
    /// queue.try_put(1).unwrap();
    /// let retry = queue.try_get_owned().unwrap().retry_at(std::future::pending::<()>()).unwrap();
    /// assert_eq!(queue.ledger().buffered, 1);
    /// drop(retry); // the timer task is gone: the item is due at once
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// ```
    pub fn retry_at<F: Future>(self, deadline: F) -> Result<RetryAtOwned<T, F>, Self> {
        let id = self.id();
        match self.into_lease().hold() {
            Ok((queue, ticket)) => Ok(RetryAtOwned {
                hold: Hold::new(queue, id, ticket),
                deadline,
            }),
            Err(lease) => Err(OwnedDelivery::from_lease(lease)),
        }
    }
}
