//! Worker guards: how a queue knows its consumers are still there.

use core::fmt;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::queue::Queue;

/// A registered consumer, from [`Queue::worker`]. While at least one is alive the queue
/// behaves as usual; when the last one drops (returned, or panicked and unwound), waiting
/// and later puts are refused with [`PutError::NoWorkers`](crate::PutError::NoWorkers)
/// until a new worker registers.
///
/// Hold it for as long as the consumer loop runs, typically as the first line of the
/// worker task.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::<u32>::bounded(1).unwrap();
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         let _worker = queue.worker();
///         while let Ok(delivery) = queue.get_blocking() {
///             delivery.succeed();
///         }
///     });
///     for n in 0..10 {
///         queue.put_blocking(n).unwrap();
///     }
///     queue.shutdown();
/// });
/// assert_eq!(queue.ledger().succeeded, 10);
/// ```
pub struct Worker<'a, T> {
    queue: &'a Queue<T>,
}

impl<'a, T> Worker<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Worker { queue }
    }

    /// The queue this worker consumes.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let worker = queue.worker();
    /// assert!(std::ptr::eq(worker.queue(), &queue));
    /// ```
    #[must_use]
    pub fn queue(&self) -> &'a Queue<T> {
        self.queue
    }
}

impl<T> Drop for Worker<'_, T> {
    fn drop(&mut self) {
        self.queue.unregister_worker();
    }
}

impl<T> fmt::Debug for Worker<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Worker { .. }")
    }
}

/// As [`Worker`], holding the queue through an `Arc`; from [`Queue::worker_owned`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
/// let worker = queue.worker_owned();
/// assert_eq!(worker.queue().workers(), 1);
/// ```
#[cfg(target_has_atomic = "ptr")]
pub struct OwnedWorker<T> {
    queue: Arc<Queue<T>>,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> OwnedWorker<T> {
    pub(crate) fn new(queue: Arc<Queue<T>>) -> Self {
        OwnedWorker { queue }
    }

    /// The queue this worker consumes.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let worker = queue.worker_owned();
    /// assert!(Arc::ptr_eq(worker.queue(), &queue));
    /// ```
    #[must_use]
    pub fn queue(&self) -> &Arc<Queue<T>> {
        &self.queue
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Drop for OwnedWorker<T> {
    fn drop(&mut self) {
        self.queue.unregister_worker();
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedWorker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedWorker { .. }")
    }
}
