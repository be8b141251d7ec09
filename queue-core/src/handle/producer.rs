//! Producer guards: how a queue knows its producers are still there.

use core::fmt;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::queue::Queue;

impl<T> Queue<T> {
    /// Registers a producer: when the last registered producer is gone (its guard dropped,
    /// or unwound by a panic), the queue shuts down gracefully, so workers drain the buffer
    /// and then see [`GetError::ShutDown`](crate::GetError::ShutDown) instead of waiting
    /// for items that will never come.
    ///
    /// A queue that never registered a producer never shuts down by itself. Once the last
    /// producer has left, the shutdown is final: a producer registered later holds a guard
    /// on a shut-down queue, whose puts are refused. So register every producer before any
    /// of them can finish (take all the guards, then spawn the tasks), or hand out clones of
    /// a guard you keep until the others exist.
    ///
    /// # Panics
    ///
    /// If `usize::MAX / 2` producers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{GetError, Queue};
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Queue::unbounded();
    /// let producer = queue.producer();
    /// producer.queue().try_put("last job").unwrap();
    /// drop(producer);
    /// assert_eq!(block_on(queue.get()).unwrap().succeed(), "last job");
    /// assert_eq!(block_on(queue.get()).unwrap_err(), GetError::ShutDown);
    /// ```
    pub fn producer(&self) -> Producer<'_, T> {
        self.steward.raw().register_producer();
        Producer::new(self)
    }

    /// As [`producer`](Queue::producer), for a queue in an `Arc`: the guard owns a clone of
    /// the `Arc`, so it can move into a `'static` task.
    ///
    /// # Panics
    ///
    /// If `usize::MAX / 2` producers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let producer = queue.producer_owned();
    /// assert_eq!(queue.producers(), 1);
    /// std::thread::spawn(move || drop(producer)).join().unwrap();
    /// assert!(queue.is_shut_down());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn producer_owned(self: &Arc<Self>) -> OwnedProducer<T> {
        self.steward.raw().register_producer();
        OwnedProducer::new(Arc::clone(self))
    }

    /// The number of live [`Producer`] guards.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let producer = queue.producer();
    /// let second = producer.clone();
    /// assert_eq!(queue.producers(), 2);
    /// drop((producer, second));
    /// assert_eq!(queue.producers(), 0);
    /// ```
    #[must_use]
    pub fn producers(&self) -> usize {
        self.steward.raw().producers()
    }

    /// A producer guard left; the last one shuts the queue down.
    fn producer_left(&self) {
        if self.steward.raw().unregister_producer() {
            crate::events::last_producer_left(self.steward.raw().label());
            self.steward.shutdown();
        }
    }
}

/// A registered producer, from [`Queue::producer`]. While at least one is alive the queue
/// behaves as usual; when the last one drops (the producer returned, or panicked and
/// unwound), the queue shuts down gracefully: buffered items are still delivered, then
/// [`get`](Queue::get) returns [`GetError::ShutDown`](crate::GetError::ShutDown), so
/// workers drain and stop instead of waiting for items that will never come.
///
/// Cloning a guard registers one more producer, so a guard can be handed to each producer
/// task, as an `async_channel::Sender` is. A queue that never registered a producer never
/// shuts down by itself.
///
/// This mirrors [`Worker`](crate::Worker): the queue keeps one type with every verb, and
/// each role is a guard that says the role is still alive. A split into sender and
/// receiver halves would have to duplicate `join`, `ledger` and the shutdowns on both.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::bounded(4).unwrap();
/// std::thread::scope(|s| {
///     let producer = queue.producer();
///     for n in 0..3 {
///         let producer = producer.clone();
///         s.spawn(move || producer.queue().put_blocking(n).unwrap());
///     }
///     drop(producer);
///     s.spawn(|| {
///         let _worker = queue.worker();
///         // Ends when the last producer is gone and the buffer is drained.
///         while let Ok(job) = queue.get_blocking() {
///             job.succeed();
///         }
///     });
/// });
/// assert!(queue.is_shut_down());
/// assert_eq!(queue.ledger().succeeded, 3);
/// ```
pub struct Producer<'a, T> {
    queue: &'a Queue<T>,
}

impl<'a, T> Producer<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Producer { queue }
    }

    /// The queue this guard produces into.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// let producer = queue.producer();
    /// producer.queue().try_put(1).unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    #[must_use]
    pub fn queue(&self) -> &'a Queue<T> {
        self.queue
    }
}

impl<T> Clone for Producer<'_, T> {
    /// Registers one more producer.
    fn clone(&self) -> Self {
        self.queue.producer()
    }
}

impl<T> Drop for Producer<'_, T> {
    fn drop(&mut self) {
        self.queue.producer_left();
    }
}

impl<T> fmt::Debug for Producer<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Producer { .. }")
    }
}

/// As [`Producer`], holding the queue through an `Arc` so it can move into a `'static`
/// task; from [`Queue::producer_owned`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// let queue = Arc::new(tally_queue::Queue::unbounded());
/// let producer = queue.producer_owned();
/// std::thread::spawn(move || {
///     producer.queue().try_put("job").unwrap();
/// })
/// .join()
/// .unwrap();
/// // The last producer is gone: the queue is shut down, the job still buffered.
/// assert!(queue.is_shut_down());
/// assert_eq!(queue.try_get().unwrap().succeed(), "job");
/// ```
#[cfg(target_has_atomic = "ptr")]
pub struct OwnedProducer<T> {
    queue: Arc<Queue<T>>,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> OwnedProducer<T> {
    pub(crate) fn new(queue: Arc<Queue<T>>) -> Self {
        OwnedProducer { queue }
    }

    /// The queue this guard produces into.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let producer = queue.producer_owned();
    /// assert!(Arc::ptr_eq(producer.queue(), &queue));
    /// ```
    #[must_use]
    pub fn queue(&self) -> &Arc<Queue<T>> {
        &self.queue
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Clone for OwnedProducer<T> {
    /// Registers one more producer.
    fn clone(&self) -> Self {
        self.queue.producer_owned()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Drop for OwnedProducer<T> {
    fn drop(&mut self) {
        self.queue.producer_left();
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedProducer { .. }")
    }
}
