//! [`Until`]: a queue operation raced against any deadline future, and [`Operation`],
//! what each waiting face implements to be raced so (`face/`).

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use pin_project_lite::pin_project;

/// Sealed: only the crate's own operations can be raced against a deadline.
pub(crate) mod sealed {
    /// What a queue operation resolves to when its deadline comes first.
    pub trait Operation: core::future::Future + Unpin {
        /// The output of the operation raced against a deadline.
        type Timed;
        /// The operation finished first.
        fn in_time(output: Self::Output) -> Self::Timed;
        /// The deadline finished first: the operation is tried once more, and if it still
        /// cannot finish it is abandoned (its registration given up) and anything it still
        /// owns (a put's item) comes back in the result.
        fn timed_out(&mut self) -> Self::Timed;
    }
}
pub(crate) use sealed::Operation;

pin_project! {
    /// A queue operation raced against a deadline: the future returned by
    /// [`Queue::put_until`](crate::Queue::put_until),
    /// [`Queue::get_until`](crate::Queue::get_until) and
    /// [`Queue::join_until`](crate::Queue::join_until).
    ///
    /// The operation is polled first, so one that can finish when the deadline fires still
    /// finishes; and when the deadline is ready, the operation is tried once more (the
    /// deadline's own poll may have made room, delivered an item or ended the last job), so
    /// a timeout is reported only if it still cannot finish. The deadline is any future: a
    /// runtime's sleep, an embedded timer.
    ///
    /// Once it has returned `Ready`, in time or not, the wrapped operation holds no
    /// listener and no waker: an `Until` kept alive after it finished (pinned in the
    /// caller's scope, or in a struct field) does not hold back a wake-up another waiter
    /// needs.
    ///
    /// # Cancel safety
    ///
    /// As for the operation it wraps: a dropped `put_until` drops its item unaccepted, a
    /// dropped `get_until` loses no item, a dropped `join_until` changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{futures::Until, GetTimeoutError, Queue};
    ///
    /// let queue = Queue::<u8>::unbounded();
    /// let get: Until<_, _> = queue.get_until(async {});
    /// assert_eq!(futures_lite::future::block_on(get).unwrap_err(), GetTimeoutError::TimedOut);
    /// ```
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Until<F, D> {
        operation: F,
        #[pin]
        deadline: D,
    }
}

impl<F, D> Until<F, D> {
    pub(crate) fn new(operation: F, deadline: D) -> Self {
        Self {
            operation,
            deadline,
        }
    }
}

impl<F: Operation, D: Future> Future for Until<F, D> {
    type Output = F::Timed;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Timed> {
        let this = self.project();
        if let Poll::Ready(output) = Pin::new(&mut *this.operation).poll(cx) {
            return Poll::Ready(F::in_time(output));
        }
        match this.deadline.poll(cx) {
            Poll::Ready(_) => Poll::Ready(this.operation.timed_out()),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<F, D> fmt::Debug for Until<F, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Until { .. }")
    }
}
