//! Producer guards: how a queue knows its producers are still there.

use core::fmt;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::queue::Queue;

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
        self.queue.unregister_producer();
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
        self.queue.unregister_producer();
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedProducer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedProducer { .. }")
    }
}
