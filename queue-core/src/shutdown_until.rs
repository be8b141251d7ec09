//! [`ShutdownUntil`]: drain or abort, decided by a deadline.

use alloc::vec::Vec;
use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

use crate::job_id::JobId;
use crate::join::Join;
use crate::ledger::Ledger;
use crate::queue::Queue;

/// How [`Queue::shutdown_until`](crate::Queue::shutdown_until) ended.
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// queue.try_put("never taken").unwrap();
/// let closed = futures_lite::future::block_on(queue.shutdown_until(async {}));
/// assert!(!closed.drained_in_time);
/// assert_eq!(closed.returned.len(), 1);
/// assert_eq!(closed.ledger.discarded, 1);
/// ```
#[non_exhaustive]
pub struct Closed<T> {
    /// The ledger when the policy finished: settled if the drain finished in time;
    /// otherwise deliveries still in flight show as `in_flight`, and must still end.
    pub ledger: Ledger,
    /// The items the immediate shutdown drained and handed back, with their ids; empty if
    /// the drain finished in time.
    pub returned: Vec<(JobId, T)>,
    /// Whether every accepted item ended before the deadline.
    pub drained_in_time: bool,
}

impl<T> fmt::Debug for Closed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed")
            .field("ledger", &self.ledger)
            .field("returned", &self.returned.len())
            .field("drained_in_time", &self.drained_in_time)
            .finish()
    }
}

pin_project! {
    /// The future returned by [`Queue::shutdown_until`](crate::Queue::shutdown_until).
    ///
    /// # Cancel safety
    ///
    /// Dropped after its first poll, the queue stays shut down gracefully; dropped before,
    /// it changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let closing = queue.shutdown_until(async {});
    /// assert_eq!(format!("{closing:?}"), "ShutdownUntil { .. }");
    /// assert!(futures_lite::future::block_on(closing).drained_in_time);
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct ShutdownUntil<'a, T, D> {
        join: Join<'a, T>,
        started: bool,
        #[pin]
        deadline: D,
    }
}

impl<'a, T, D> ShutdownUntil<'a, T, D> {
    pub(crate) fn new(queue: &'a Queue<T>, deadline: D) -> Self {
        Self {
            join: queue.join(),
            started: false,
            deadline,
        }
    }
}

impl<T, D: Future> Future for ShutdownUntil<'_, T, D> {
    type Output = Closed<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Closed<T>> {
        let this = self.project();
        let queue = this.join.queue();
        if !*this.started {
            *this.started = true;
            queue.shutdown();
        }
        if let Poll::Ready(ledger) = Pin::new(&mut *this.join).poll(cx) {
            return Poll::Ready(Closed {
                ledger,
                returned: Vec::new(),
                drained_in_time: true,
            });
        }
        if this.deadline.poll(cx).is_pending() {
            return Poll::Pending;
        }
        // The deadline's poll may have ended the last job: check once more (this also gives
        // the join's registration up).
        if let Ok(ledger) = this.join.last_try() {
            return Poll::Ready(Closed {
                ledger,
                returned: Vec::new(),
                drained_in_time: true,
            });
        }
        let returned = queue.shutdown_now();
        Poll::Ready(Closed {
            // A drain that the abort itself finished (nothing was in flight) still counts
            // as not in time: the returned items were never processed.
            ledger: queue.ledger(),
            returned,
            drained_in_time: false,
        })
    }
}

impl<T, D> fmt::Debug for ShutdownUntil<'_, T, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ShutdownUntil { .. }")
    }
}
