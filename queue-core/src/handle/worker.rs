//! Worker guards: how a queue knows its consumers are still there.

use core::fmt;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::queue::Queue;

impl<T> Queue<T> {
    /// Registers a worker: a consumer whose disappearance should stop producers from
    /// waiting forever.
    ///
    /// While at least one [`Worker`] guard is alive, nothing changes. When the last one is
    /// dropped (the worker returned, or panicked and unwound), the queue is *orphaned*:
    /// puts waiting on a full queue wake with [`PutError::NoWorkers`] and their item, and
    /// every later put is refused the same way until a new worker registers. Buffered items
    /// stay in the buffer and in the ledger, for whoever shuts the queue down
    /// ([`shutdown_now`](Queue::shutdown_now) returns them) or for a new worker.
    ///
    /// A queue that never had a worker accepts puts as usual, so producers may start first.
    ///
    /// # Panics
    ///
    /// If more than `usize::MAX / 4` workers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap(); // no worker yet: accepted
    /// let worker = queue.worker();
    /// drop(worker); // the last worker leaves
    /// assert!(matches!(queue.try_put(2), Err(TryPutError::NoWorkers(2))));
    /// assert_eq!(queue.len(), 1); // still buffered
    /// let _again = queue.worker();
    /// assert!(queue.try_put(3).unwrap_err().is_full());
    /// ```
    ///
    /// [`PutError::NoWorkers`]: crate::PutError::NoWorkers
    pub fn worker(&self) -> Worker<'_, T> {
        self.steward.raw().register_worker();
        Worker::new(self)
    }

    /// As [`worker`](Queue::worker), for a queue in an `Arc`: the guard owns a clone of the
    /// `Arc`, so it can move into a `'static` task.
    ///
    /// # Panics
    ///
    /// If more than `usize::MAX / 4` workers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let worker = queue.worker_owned();
    /// assert_eq!(queue.workers(), 1);
    /// std::thread::spawn(move || drop(worker)).join().unwrap();
    /// assert!(queue.try_put(1).unwrap_err().is_no_workers());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn worker_owned(self: &Arc<Self>) -> OwnedWorker<T> {
        self.steward.raw().register_worker();
        OwnedWorker::new(Arc::clone(self))
    }

    /// The number of live [`Worker`] guards.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let _w = queue.worker();
    /// assert_eq!(queue.workers(), 1);
    /// ```
    #[must_use]
    pub fn workers(&self) -> usize {
        self.steward.raw().workers()
    }
}
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

impl<T> Clone for Worker<'_, T> {
    /// Registers one more worker on the same queue.
    fn clone(&self) -> Self {
        self.queue.worker()
    }
}

impl<T> Drop for Worker<'_, T> {
    fn drop(&mut self) {
        self.queue.steward.raw().unregister_worker();
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
impl<T> Clone for OwnedWorker<T> {
    /// Registers one more worker on the same queue.
    fn clone(&self) -> Self {
        self.queue.worker_owned()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Drop for OwnedWorker<T> {
    fn drop(&mut self) {
        self.queue.steward.raw().unregister_worker();
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for OwnedWorker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OwnedWorker { .. }")
    }
}
