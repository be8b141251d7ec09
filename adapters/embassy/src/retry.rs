//! [`RetryExt`]: a retry held back on an embassy timer.

use embassy_time::{Duration, Timer};
use tally_queue::futures::RetryAt;
#[cfg(target_has_atomic = "ptr")]
use tally_queue::futures::RetryAtOwned;
#[cfg(target_has_atomic = "ptr")]
use tally_queue::OwnedDelivery;
use tally_queue::{Backoff, Delivery};

/// A retry held back on an [`embassy_time::Timer`], for a [`Delivery`] or (on targets with
/// pointer-sized atomics) an [`OwnedDelivery`]: [`Delivery::retry_at`] with the timer as
/// the deadline.
///
/// The item counts as buffered until the delay is over; the returned future lets it go
/// then. Await it, or hand it to a task that polls it (embassy tasks are static, so a
/// task that takes many retries keeps them in its own collection); dropped before the
/// delay is over, it lets the item go at once, so nothing is lost. Attempts never reset,
/// and under [`AbandonPolicy::Redeliver`](tally_queue::AbandonPolicy::Redeliver) a delayed
/// retry counts toward `max_attempts` as a plain one does.
///
/// # Examples
///
/// ```
/// use embassy_time::Duration;
/// use tally_embassy::RetryExt;
/// use tally_queue::Queue;
///
/// futures_lite::future::block_on(async {
///     let queue = Queue::unbounded();
///     queue.try_put("sensor reading").unwrap();
///     let held = queue.try_get().unwrap().retry_after(Duration::from_millis(5)).unwrap();
///     assert_eq!(queue.ledger().buffered, 1);
///     held.await;
///     assert_eq!(queue.try_get().unwrap().attempt(), 2);
/// });
/// ```
pub trait RetryExt: Sized {
    /// The future that holds the item back: [`RetryAt`] (or `RetryAtOwned`) on a
    /// [`Timer`].
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
    /// use embassy_time::Duration;
    /// use tally_embassy::RetryExt;
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap().retry_after(Duration::from_secs(60)).unwrap();
    /// drop(held); // the task holding it is gone: the item is due at once
    /// assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// ```
    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self>;

    /// Puts the item back after the delay `backoff` gives for this delivery's attempt,
    /// with the job's id as the jitter key ([`Backoff::delay_for`]), rounded up to the
    /// next embassy tick.
    ///
    /// # Errors
    ///
    /// As [`retry_after`](RetryExt::retry_after).
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use tally_embassy::RetryExt;
    /// use tally_queue::{Backoff, Queue};
    ///
    /// futures_lite::future::block_on(async {
    ///     let queue = Queue::unbounded();
    ///     queue.try_put(1).unwrap();
    ///     let backoff = Backoff::exponential(Duration::from_millis(2), Duration::from_millis(50));
    ///     queue.try_get().unwrap().retry_backoff(&backoff).unwrap().await;
    ///     assert_eq!(queue.try_get().unwrap().attempt(), 2);
    /// });
    /// ```
    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self>;
}

/// A `core` duration as an embassy one, rounded up to the next microsecond, and saturated.
pub(crate) fn embassy_duration(delay: core::time::Duration) -> Duration {
    let micros = delay.as_nanos().div_ceil(1_000);
    Duration::from_micros(u64::try_from(micros).unwrap_or(u64::MAX))
}

impl<'a, T> RetryExt for Delivery<'a, T> {
    type Held = RetryAt<'a, T, Timer>;

    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self> {
        self.retry_at(Timer::after(delay))
    }

    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self> {
        let delay = backoff.delay_for(self.attempt(), self.id().get());
        self.retry_after(embassy_duration(delay))
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> RetryExt for OwnedDelivery<T> {
    type Held = RetryAtOwned<T, Timer>;

    fn retry_after(self, delay: Duration) -> Result<Self::Held, Self> {
        self.retry_at(Timer::after(delay))
    }

    fn retry_backoff(self, backoff: &Backoff) -> Result<Self::Held, Self> {
        let delay = backoff.delay_for(self.attempt(), self.id().get());
        self.retry_after(embassy_duration(delay))
    }
}
