//! [`Deliveries`]: a queue's consumer side as a `Stream`.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{ready, Context, Poll};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use futures_core::Stream;

use crate::face::get::Get;
use crate::handle::delivery::Delivery;
use crate::queue::Queue;

#[cfg(target_has_atomic = "ptr")]
use crate::face::get::GetOwned;
#[cfg(target_has_atomic = "ptr")]
use crate::handle::delivery::OwnedDelivery;

impl<T> Queue<T> {
    /// The deliveries as a [`Stream`](futures_core::Stream): each item is the next
    /// [`Delivery`], and the stream ends once the queue is shut down and empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::StreamExt;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.shutdown();
    /// let ids: Vec<u64> = futures_lite::future::block_on(
    ///     queue.deliveries().map(|job| { let id = job.id(); job.succeed(); id.get() }).collect(),
    /// );
    /// assert_eq!(ids, [0]);
    /// ```
    pub fn deliveries(&self) -> Deliveries<'_, T> {
        Deliveries::new(self)
    }

    /// As [`deliveries`](Queue::deliveries), for a queue in an `Arc`: the stream and its
    /// [`OwnedDelivery`]s can move into `'static` tasks.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::StreamExt;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(5).unwrap();
    /// queue.shutdown();
    /// let mut jobs = queue.deliveries_owned();
    /// let job = futures_lite::future::block_on(jobs.next()).unwrap();
    /// assert_eq!(job.succeed(), 5);
    /// assert!(futures_lite::future::block_on(jobs.next()).is_none());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn deliveries_owned(self: &Arc<Self>) -> OwnedDeliveries<T> {
        OwnedDeliveries::new(Arc::clone(self))
    }
}

/// The deliveries of a queue as a [`Stream`], from [`Queue::deliveries`]: each item is the
/// next [`Delivery`], and the stream ends once the queue is shut down and its buffer is
/// empty.
///
/// Each `next()` is one [`get`](Queue::get), with the same promises: no item is lost when
/// the stream (or a pending `next()`) is dropped, and waiting consumers are served as
/// `get` serves them.
///
/// # Examples
///
/// ```
/// use futures_lite::StreamExt;
///
/// let queue = tally_queue::Queue::unbounded();
/// for n in 1..=3 {
///     queue.try_put(n).unwrap();
/// }
/// queue.shutdown();
/// let mut jobs = queue.deliveries();
/// let mut sum = 0;
/// futures_lite::future::block_on(async {
///     while let Some(job) = jobs.next().await {
///         sum += job.succeed();
///     }
/// });
/// assert_eq!(sum, 6);
/// ```
#[must_use = "streams do nothing unless polled"]
pub struct Deliveries<'a, T> {
    // One get, polled again for each item: a get that returned holds nothing (no listener,
    // no turn), so its next poll is a fresh get.
    get: Get<'a, T>,
}

impl<'a, T> Deliveries<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Deliveries { get: queue.get() }
    }
}

impl<'a, T> Stream for Deliveries<'a, T> {
    type Item = Delivery<'a, T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let got = ready!(Pin::new(&mut self.get_mut().get).poll(cx));
        Poll::Ready(got.ok())
    }
}

impl<T> fmt::Debug for Deliveries<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Deliveries { .. }")
    }
}

/// As [`Deliveries`], holding the queue through an `Arc` and yielding
/// [`OwnedDelivery`]s, for `'static` tasks; from [`Queue::deliveries_owned`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use futures_lite::StreamExt;
///
/// let queue = Arc::new(tally_queue::Queue::unbounded());
/// queue.try_put("job").unwrap();
/// queue.shutdown();
/// let jobs = queue.deliveries_owned();
/// let done = std::thread::spawn(move || {
///     futures_lite::future::block_on(jobs.map(|job| job.succeed()).collect::<Vec<_>>())
/// });
/// assert_eq!(done.join().unwrap(), ["job"]);
/// ```
#[cfg(target_has_atomic = "ptr")]
#[must_use = "streams do nothing unless polled"]
pub struct OwnedDeliveries<T> {
    // As in `Deliveries`: one get, polled again for each item. Reusing it also keeps the
    // stream's one reference to the queue, instead of a new `Arc` clone per item.
    get: GetOwned<T>,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> OwnedDeliveries<T> {
    pub(crate) fn new(queue: Arc<Queue<T>>) -> Self {
        OwnedDeliveries {
            get: GetOwned::new(queue),
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Stream for OwnedDeliveries<T> {
    type Item = OwnedDelivery<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let got = ready!(Pin::new(&mut self.get_mut().get).poll(cx));
        Poll::Ready(got.ok())
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedDeliveries<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedDeliveries { .. }")
    }
}
