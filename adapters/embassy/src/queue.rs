//! [`QueueExt`]: `Duration` timeouts for a [`Queue`].

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use embassy_time::{Duration, Timer};
#[cfg(target_has_atomic = "ptr")]
use tally_queue::futures::GetOwned;
use tally_queue::futures::{Get, Join, Put, ShutdownUntil, Until};
use tally_queue::Queue;

/// Timed `put`, `get`, `join` and shutdown on a [`Queue`], with an
/// [`embassy_time::Timer`] as the deadline of the core's `*_until` methods.
///
/// # Examples
///
/// ```
/// use tally_embassy::QueueExt;
/// use embassy_time::Duration;
/// use tally_queue::{GetTimeoutError, PutTimeoutError, Queue};
///
/// futures_lite::future::block_on(async {
///     let queue = Queue::bounded(1).unwrap();
///     assert_eq!(
///         queue.get_timeout(Duration::from_millis(5)).await.unwrap_err(),
///         GetTimeoutError::TimedOut
///     );
///     queue.put_timeout("job", Duration::from_millis(5)).await.unwrap();
///     // Full: the timed-out put hands its item back.
///     let refused = queue.put_timeout("extra", Duration::from_millis(5)).await;
///     assert_eq!(refused.unwrap_err().into_inner(), "extra");
///     queue.get_timeout(Duration::from_millis(5)).await.unwrap().succeed();
///     let ledger = queue.join_timeout(Duration::from_millis(5)).await.unwrap();
///     assert_eq!(ledger.succeeded, 1);
/// });
/// ```
pub trait QueueExt<T> {
    /// Waits for room for at most `timeout` ([`Queue::put_until`]); a timed-out put hands
    /// the item back in `PutTimeoutError::TimedOut`.
    fn put_timeout(&self, item: T, timeout: Duration) -> Until<Put<'_, T>, Timer>;

    /// Waits for an item for at most `timeout` ([`Queue::get_until`]).
    fn get_timeout(&self, timeout: Duration) -> Until<Get<'_, T>, Timer>;

    /// Waits for an item for at most `timeout`, on a queue held in an [`Arc`]
    /// ([`Queue::get_owned_until`]): the [`OwnedDelivery`](tally_queue::OwnedDelivery) is
    /// `'static`, so a spawned task can take it and hold it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use tally_embassy::QueueExt;
    /// use embassy_time::Duration;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Arc::new(Queue::unbounded());
    /// queue.try_put("job").unwrap();
    /// let worker = std::thread::spawn({
    ///     let queue = Arc::clone(&queue);
    ///     move || {
    ///         let job = futures_lite::future::block_on(
    ///             queue.get_owned_timeout(Duration::from_millis(5)),
    ///         )?;
    ///         Ok::<_, GetTimeoutError>(job.succeed())
    ///     }
    /// });
    /// assert_eq!(worker.join().unwrap(), Ok("job"));
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    fn get_owned_timeout(self: &Arc<Self>, timeout: Duration) -> Until<GetOwned<T>, Timer>;

    /// Waits for at most `timeout` until every accepted item has ended
    /// ([`Queue::join_until`]); a timeout carries the ledger at the deadline.
    fn join_timeout(&self, timeout: Duration) -> Until<Join<'_, T>, Timer>;

    /// Drain or abort ([`Queue::shutdown_until`]): shuts down gracefully, and if the
    /// drain takes longer than `timeout`, immediately, handing the drained items back and
    /// requesting cancellation of the work in flight.
    fn shutdown_timeout(&self, timeout: Duration) -> ShutdownUntil<'_, T, Timer>;

    /// The shutdown policy with a grace period ([`ShutdownUntil::with_grace`]): drains
    /// for up to `drain`; then discards the buffer and requests cancellation of the work
    /// in flight; then waits up to `grace` more for that work to end; then reports what is
    /// still in flight, by id if the queue's journal keeps ids.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use embassy_time::Duration;
    /// use tally_embassy::QueueExt;
    /// use tally_queue::{Queue, Record};
    ///
    /// let queue = Queue::unbounded().with_journal(Arc::new(Record::new()));
    /// let stuck = queue.try_put("ignores cancellation").unwrap();
    /// let job = queue.try_get().unwrap();
    /// let closing =
    ///     queue.shutdown_timeout_with_grace(Duration::from_millis(5), Duration::from_millis(5));
    /// let closed = futures_lite::future::block_on(closing);
    /// assert!(!closed.drained_in_time && job.is_cancelled());
    /// assert_eq!(closed.in_flight_ids, Some(vec![stuck]));
    /// job.uncertain();
    /// ```
    fn shutdown_timeout_with_grace(
        &self,
        drain: Duration,
        grace: Duration,
    ) -> ShutdownUntil<'_, T, Timer, Timer>;
}

impl<T> QueueExt<T> for Queue<T> {
    fn put_timeout(&self, item: T, timeout: Duration) -> Until<Put<'_, T>, Timer> {
        self.put_until(item, Timer::after(timeout))
    }

    fn get_timeout(&self, timeout: Duration) -> Until<Get<'_, T>, Timer> {
        self.get_until(Timer::after(timeout))
    }

    #[cfg(target_has_atomic = "ptr")]
    fn get_owned_timeout(self: &Arc<Self>, timeout: Duration) -> Until<GetOwned<T>, Timer> {
        self.get_owned_until(Timer::after(timeout))
    }

    fn join_timeout(&self, timeout: Duration) -> Until<Join<'_, T>, Timer> {
        self.join_until(Timer::after(timeout))
    }

    fn shutdown_timeout(&self, timeout: Duration) -> ShutdownUntil<'_, T, Timer> {
        self.shutdown_until(Timer::after(timeout))
    }

    fn shutdown_timeout_with_grace(
        &self,
        drain: Duration,
        grace: Duration,
    ) -> ShutdownUntil<'_, T, Timer, Timer> {
        // Both timers start now, so the grace one ends `grace` after the drain one.
        let end = drain.checked_add(grace).unwrap_or(Duration::MAX);
        self.shutdown_until(Timer::after(drain))
            .with_grace(Timer::after(end))
    }
}
