//! `Duration` timeouts for [`tally_latch`] and [`tally_queue`] on tokio's timer.
//!
//! The cores race every wait against a deadline future of the caller's choosing; this crate
//! supplies [`tokio::time::sleep`], so tokio users write
//! `latch.wait_timeout(Duration::from_secs(60))` and keep the cores' own futures and
//! errors:
//!
//! - [`LatchExt`], for every latch: `wait_timeout`. A [`TrackingLatch`]'s timeout names
//!   exactly the counters that had not reported; a [`FailableLatch`]'s failure wins over a
//!   timeout that comes later.
//! - [`QueueExt`], for a [`Queue`]: `put_timeout` (a timed-out put hands its item back),
//!   `get_timeout`, `get_owned_timeout` (for a queue in an `Arc`: a `'static` delivery for
//!   a spawned task), `join_timeout` (a timed-out join carries the ledger at the deadline),
//!   and `shutdown_timeout`, the "drain or abort" policy.
//! - [`RetryExt`], for a [`Delivery`] or an [`OwnedDelivery`]: `retry_after` and
//!   `retry_backoff` (with a [`Backoff`]), a retry held back on tokio's timer: the item
//!   counts as buffered until the delay is over, and the returned future, spawned or
//!   awaited, lets it go then (or at once if dropped, so a runtime shutting down loses
//!   nothing).
//! - [`RedeliveryExt`], for a [`Queue`]: `with_redelivery_backoff`, redeliveries held back
//!   on tokio's timer: a delivery dropped unresolved under
//!   [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy) comes back after the
//!   [`Backoff`]'s delay, counted buffered meanwhile (see
//!   [`Queue::with_redelivery_delay`]).
//!
//! The dependencies on tokio are its `time` feature and, for the sleeps of
//! [`RedeliveryExt`], which are spawned, its `rt` feature. The timer belongs to the
//! runtime, so these methods must be called from inside a tokio runtime with the time driver enabled
//! (`#[tokio::main]`, or a `Builder` with `enable_time`), or they panic, as
//! [`tokio::time::sleep`] does. Under a paused clock (`start_paused`) the timeouts follow
//! tokio's virtual time.
//!
//! The same methods, with the same names, exist in `tally-smol` (async-io's timer) and
//! `tally-async-std`.
//!
//! # Examples
//!
//! ```
//! use std::time::Duration;
//!
//! use tally_tokio::LatchExt;
//! use tally_latch::TrackingLatch;
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let ready = TrackingLatch::new(["consumer", "cache-warmer", "http"]).unwrap();
//!     ready.count_down_for("consumer").unwrap();
//!     ready.count_down_for("http").unwrap();
//!     // A timeout is the outer `Err`; a `TrackingLatch`'s names the counters still pending.
//!     let pending = ready.wait_timeout(Duration::from_millis(10)).await.unwrap_err();
//!     assert_eq!(pending.names(), ["cache-warmer"]);
//! }
//! ```
//!
//! [`TrackingLatch`]: tally_latch::TrackingLatch
//! [`FailableLatch`]: tally_latch::FailableLatch
//! [`Queue`]: tally_queue::Queue
//! [`Delivery`]: tally_queue::Delivery
//! [`OwnedDelivery`]: tally_queue::OwnedDelivery
//! [`Backoff`]: tally_queue::Backoff
//! [`Queue::with_redelivery_delay`]: tally_queue::Queue::with_redelivery_delay
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The README's examples run as doctests too.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;

use tally_latch::futures::WaitUntil;
use tally_latch::Latch;
use tally_queue::futures::{Get, GetOwned, Join, Put, RetryAt, RetryAtOwned, ShutdownUntil, Until};
use tally_queue::{Backoff, Delivery, OwnedDelivery, Queue};
use tokio::time::{sleep, Sleep};

/// A `Duration` timeout on any latch ([`CountDownLatch`](tally_latch::CountDownLatch),
/// [`FailableLatch`](tally_latch::FailableLatch), [`TrackingLatch`](tally_latch::TrackingLatch)).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// use tally_tokio::LatchExt;
/// use tally_latch::{CountDownLatch, TimedOut};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let latch = CountDownLatch::new(1);
/// assert_eq!(latch.wait_timeout(Duration::from_millis(5)).await, Err(TimedOut));
/// assert_eq!(latch.count(), 1); // a timed-out wait changes nothing
/// latch.count_down();
/// assert_eq!(latch.wait_timeout(Duration::from_millis(5)).await, Ok(()));
/// # });
/// ```
pub trait LatchExt: Latch + Sized {
    /// Waits until the latch opens (or fails), or until `timeout` has passed: the core's
    /// [`Latch::wait_until`] with a [`tokio::time::sleep`] as the deadline.
    ///
    /// It resolves to `Result<L::Output, L::Timeout>`, as `tokio::time::timeout` does: `Ok`
    /// with how the latch ended, `Err` with the timeout. That is `Result<(), TimedOut>` for
    /// a `CountDownLatch`, `Result<Result<(), E>, TimedOut>` for a `FailableLatch<E>` and
    /// `Result<Result<(), Failure<E>>, StillPending>` for a `TrackingLatch<E>`, whose
    /// `StillPending` lists the counters still pending; `wait_timeout(t).await??` sends both
    /// through `?`. The latch is polled before the timer, so a latch that has ended by the
    /// deadline reports how.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing: the count stays, other waiters still wake.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime with the time driver enabled, as [`tokio::time::sleep`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::LatchExt;
    /// use tally_latch::FailableLatch;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let latch = FailableLatch::new(2);
    /// latch.fail("disk full").unwrap();
    /// let result = latch.wait_timeout(Duration::from_secs(60)).await;
    /// assert_eq!(result, Ok(Err("disk full"))); // ended before the deadline: `Ok(how)`
    /// # });
    /// ```
    fn wait_timeout(&self, timeout: Duration) -> WaitUntil<'_, Self, Sleep> {
        self.wait_until(sleep(timeout))
    }
}

impl<L: Latch> LatchExt for L {}

/// `Duration` timeouts on a [`Queue`]: the core's `*_until` methods with a
/// [`tokio::time::sleep`] as the deadline.
///
/// Every method panics outside a tokio runtime with the time driver enabled, as
/// [`tokio::time::sleep`] does. Cancel safety is the core's: a dropped `put_timeout` drops
/// its item unaccepted, a dropped `get_timeout` loses no item, a dropped `join_timeout`
/// changes nothing.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// use tally_tokio::QueueExt;
/// use tally_queue::{GetTimeoutError, PutTimeoutError, Queue};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let queue = Queue::bounded(1).unwrap();
/// let short = Duration::from_millis(5);
/// assert_eq!(queue.get_timeout(short).await.unwrap_err(), GetTimeoutError::TimedOut);
/// queue.put_timeout("job", short).await.unwrap();
/// // Full: the timed-out put hands its item back.
/// assert_eq!(queue.put_timeout("extra", short).await.unwrap_err().into_inner(), "extra");
/// queue.get_timeout(short).await.unwrap().succeed();
/// assert_eq!(queue.join_timeout(short).await.unwrap().succeeded, 1);
/// # });
/// ```
pub trait QueueExt<T> {
    /// Waits for room for at most `timeout` ([`Queue::put_until`]).
    ///
    /// # Errors
    ///
    /// As [`Queue::put`], plus `PutTimeoutError::TimedOut(item)`, which hands the item back.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// let refused = queue.put_timeout(2, Duration::from_millis(5)).await;
    /// assert!(matches!(refused, Err(PutTimeoutError::TimedOut(2))));
    /// assert_eq!(queue.ledger().accepted, 1);
    /// # });
    /// ```
    fn put_timeout(&self, item: T, timeout: Duration) -> Until<Put<'_, T>, Sleep>;

    /// Waits for an item for at most `timeout` ([`Queue::get_until`]).
    ///
    /// # Errors
    ///
    /// `GetTimeoutError::TimedOut` if the timeout came first, `GetTimeoutError::ShutDown`
    /// if the queue is shut down and empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::Queue;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::unbounded();
    /// queue.try_put("job").unwrap();
    /// let job = queue.get_timeout(Duration::from_millis(5)).await.unwrap();
    /// assert_eq!(*job, "job");
    /// job.succeed();
    /// # });
    /// ```
    fn get_timeout(&self, timeout: Duration) -> Until<Get<'_, T>, Sleep>;

    /// Waits for an item for at most `timeout`, on a queue held in an [`Arc`]
    /// ([`Queue::get_owned_until`]): the [`OwnedDelivery`] is
    /// `'static`, so a spawned task can take it and hold it.
    ///
    /// # Errors
    ///
    /// As [`get_timeout`](QueueExt::get_timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Arc::new(Queue::unbounded());
    /// queue.try_put("job").unwrap();
    /// let worker = tokio::spawn({
    ///     let queue = Arc::clone(&queue);
    ///     async move {
    ///         let job = queue.get_owned_timeout(Duration::from_millis(5)).await?;
    ///         Ok::<_, GetTimeoutError>(job.succeed())
    ///     }
    /// });
    /// assert_eq!(worker.await.unwrap(), Ok("job"));
    /// let empty = queue.get_owned_timeout(Duration::from_millis(5)).await;
    /// assert_eq!(empty.unwrap_err(), GetTimeoutError::TimedOut);
    /// # });
    /// ```
    fn get_owned_timeout(self: &Arc<Self>, timeout: Duration) -> Until<GetOwned<T>, Sleep>;

    /// Waits for at most `timeout` until every accepted item has ended
    /// ([`Queue::join_until`]).
    ///
    /// # Errors
    ///
    /// `JoinTimedOut`, carrying the ledger at the deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::Queue;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::unbounded();
    /// queue.try_put("job").unwrap();
    /// let timed_out = queue.join_timeout(Duration::from_millis(5)).await.unwrap_err();
    /// assert_eq!(timed_out.ledger().buffered, 1);
    /// # });
    /// ```
    fn join_timeout(&self, timeout: Duration) -> Until<Join<'_, T>, Sleep>;

    /// Drain or abort ([`Queue::shutdown_until`]): shuts the queue down gracefully, waits
    /// up to `timeout` for the drain, and if it has not finished by then, shuts down
    /// immediately and requests cancellation of the work in flight. The
    /// [`Closed`](tally_queue::Closed) it resolves to holds the ledger, the items handed
    /// back, whether the drain finished in time, and the ids still in flight (if the
    /// queue's journal keeps them).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::Queue;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::unbounded();
    /// queue.try_put("never taken").unwrap();
    /// let closed = queue.shutdown_timeout(Duration::from_millis(5)).await;
    /// assert!(!closed.drained_in_time);
    /// assert_eq!(closed.returned[0].1, "never taken");
    /// assert_eq!(closed.ledger.discarded, 1);
    /// # });
    /// ```
    fn shutdown_timeout(&self, timeout: Duration) -> ShutdownUntil<'_, T, Sleep>;

    /// The shutdown policy with a grace period ([`ShutdownUntil::with_grace`]): drains
    /// for up to `drain`; then discards the buffer and requests cancellation of the work
    /// in flight; then waits up to `grace` more for that work to end; then reports what is
    /// still in flight, by id if the queue's journal keeps ids.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// use tally_tokio::QueueExt;
    /// use tally_queue::{Queue, Record};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::unbounded().with_journal(Arc::new(Record::new()));
    /// let stuck = queue.try_put("ignores cancellation").unwrap();
    /// let job = queue.try_get().unwrap();
    /// let closed = queue
    ///     .shutdown_timeout_with_grace(Duration::from_millis(5), Duration::from_millis(5))
    ///     .await;
    /// assert!(!closed.drained_in_time && job.is_cancelled());
    /// assert_eq!(closed.in_flight_ids, Some(vec![stuck]));
    /// job.uncertain();
    /// # });
    /// ```
    fn shutdown_timeout_with_grace(
        &self,
        drain: Duration,
        grace: Duration,
    ) -> ShutdownUntil<'_, T, Sleep, Sleep>;
}

impl<T> QueueExt<T> for Queue<T> {
    fn put_timeout(&self, item: T, timeout: Duration) -> Until<Put<'_, T>, Sleep> {
        self.put_until(item, sleep(timeout))
    }

    fn get_timeout(&self, timeout: Duration) -> Until<Get<'_, T>, Sleep> {
        self.get_until(sleep(timeout))
    }

    fn get_owned_timeout(self: &Arc<Self>, timeout: Duration) -> Until<GetOwned<T>, Sleep> {
        self.get_owned_until(sleep(timeout))
    }

    fn join_timeout(&self, timeout: Duration) -> Until<Join<'_, T>, Sleep> {
        self.join_until(sleep(timeout))
    }

    fn shutdown_timeout(&self, timeout: Duration) -> ShutdownUntil<'_, T, Sleep> {
        self.shutdown_until(sleep(timeout))
    }
    fn shutdown_timeout_with_grace(
        &self,
        drain: Duration,
        grace: Duration,
    ) -> ShutdownUntil<'_, T, Sleep, Sleep> {
        // Both timers start now, so the grace one ends `grace` after the drain one.
        self.shutdown_until(sleep(drain))
            .with_grace(sleep(drain.saturating_add(grace)))
    }
}

/// A retry held back on tokio's timer, for a [`Delivery`] or an [`OwnedDelivery`]
/// ([`Delivery::retry_at`] with [`tokio::time::sleep`]).
///
/// The item counts as buffered until the delay is over; the returned future lets it go
/// then. Spawn it (`tokio::spawn`, for an [`OwnedDelivery`]) so the worker goes on, or
/// await it. Dropped before the delay is over (an aborted task, a runtime shutting down),
/// it lets the item go at once: nothing is lost. Attempts never reset, and under
/// [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy::Redeliver) a delayed retry
/// counts toward `max_attempts` as a plain one does. Like the timeouts, these must be
/// called inside a tokio runtime with the time driver enabled.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use tally_tokio::RetryExt;
/// use tally_queue::{Backoff, Queue};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let queue = Arc::new(Queue::unbounded());
/// queue.try_put("flaky").unwrap();
/// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30));
/// let job = queue.get_owned().await.unwrap();
/// tokio::spawn(job.retry_backoff(&backoff).unwrap()); // back in 1 s
/// assert_eq!(queue.ledger().buffered, 1);
/// assert!(queue.try_get().is_err());
/// let again = queue.get().await.unwrap(); // the paused clock runs ahead to the delay
/// assert_eq!(again.attempt(), 2);
/// again.succeed();
/// # });
/// ```
pub trait RetryExt: Sized {
    /// The future that holds the item back: [`RetryAt`] or [`RetryAtOwned`] on a
    /// [`Sleep`].
    type Held;

    /// Puts the item back for its next delivery after `delay`.
    ///
    /// # Errors
    ///
    /// As [`Delivery::retry`]: the delivery comes back, still in flight, on the last
    /// attempt the policy allows or once the queue takes no returns.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::RetryExt;
    /// use tally_queue::Queue;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let queue = Queue::unbounded();
    /// queue.try_put("job").unwrap();
    /// let held = queue.try_get().unwrap().retry_after(Duration::from_millis(5)).unwrap();
    /// held.await; // here the worker waits; spawn an owned delivery's instead
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// # });
    /// ```
    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self>;

    /// Puts the item back after the delay `backoff` gives for this delivery's attempt,
    /// with the job's id as the jitter key ([`Backoff::delay_for`]).
    ///
    /// # Errors
    ///
    /// As [`retry_after`](RetryExt::retry_after).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_tokio::RetryExt;
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
    /// queue.try_put("flaky").unwrap();
    /// let backoff = Backoff::fixed(Duration::from_secs(1));
    /// queue.try_get().unwrap().retry_backoff(&backoff).unwrap().await;
    /// let last = queue.try_get().unwrap();
    /// assert_eq!(last.attempt(), 2);
    /// let last = last.retry_backoff(&backoff).unwrap_err(); // no third attempt
    /// last.reject();
    /// # });
    /// ```
    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self>;
}

impl<'a, T> RetryExt for Delivery<'a, T> {
    type Held = RetryAt<'a, T, Sleep>;

    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self> {
        self.retry_at(sleep(delay))
    }

    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self> {
        let delay = backoff.delay_for(self.attempt(), self.id().get());
        self.retry_after(delay)
    }
}

impl<T> RetryExt for OwnedDelivery<T> {
    type Held = RetryAtOwned<T, Sleep>;

    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self> {
        self.retry_at(sleep(delay))
    }

    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self> {
        let delay = backoff.delay_for(self.attempt(), self.id().get());
        self.retry_after(delay)
    }
}

/// Redeliveries on tokio's timer, for a [`Queue`] under
/// [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// use tally_queue::{AbandonPolicy, Backoff, Queue};
/// use tally_tokio::RedeliveryExt;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
/// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30));
/// let queue = Queue::unbounded()
///     .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
///     .with_redelivery_backoff(backoff);
/// queue.try_put("flaky").unwrap();
/// drop(queue.get().await.unwrap()); // a worker gave up on it: back in 1 s
/// assert_eq!(queue.ledger().buffered, 1);
/// assert!(queue.try_get().is_err());
/// let again = queue.get().await.unwrap(); // the paused clock runs ahead to the delay
/// assert_eq!(again.attempt(), 2);
/// again.succeed();
/// # });
/// ```
pub trait RedeliveryExt<T> {
    /// Makes each redelivery wait the delay `backoff` gives after the abandoned delivery
    /// (with the job's id as the jitter key, as [`RetryExt::retry_backoff`] does), on a
    /// sleep spawned on the current tokio runtime; returns the queue in an `Arc`. What
    /// the held item counts as, and what shutdowns do with it, is
    /// [`Queue::with_redelivery_delay`]'s contract.
    ///
    /// Each sleep is a task on the runtime this is called in, whatever thread later drops
    /// a delivery. If that runtime shuts down, its pending sleeps are dropped and their
    /// items come back at once (as they do for a sleep spawned after the shutdown): nothing
    /// waits for a timer that will never fire.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime, as [`tokio::runtime::Handle::current`] does; the runtime
    /// needs its time driver for the sleeps, as [`tokio::time::sleep`] does.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    /// use tally_tokio::RedeliveryExt;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap().block_on(async {
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_backoff(Backoff::fixed(Duration::from_millis(100)));
    /// queue.try_put(1).unwrap();
    /// let start = tokio::time::Instant::now();
    /// drop(queue.get().await.unwrap());
    /// queue.get().await.unwrap().succeed();
    /// assert_eq!(start.elapsed(), Duration::from_millis(100));
    /// # });
    /// ```
    fn with_redelivery_backoff(self, backoff: Backoff) -> Arc<Queue<T>>;
}

impl<T: Send + 'static> RedeliveryExt<T> for Queue<T> {
    fn with_redelivery_backoff(self, backoff: Backoff) -> Arc<Queue<T>> {
        let runtime = tokio::runtime::Handle::current();
        self.with_redelivery_delay(move |redelivery| {
            let delay = redelivery.delay(&backoff);
            // A sleep dropped unfinished drops its claim, which lets the item go at once.
            drop(runtime.spawn(async move {
                sleep(delay).await;
                redelivery.release();
            }));
        })
    }
}
