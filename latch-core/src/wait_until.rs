//! [`WaitUntil`]: a latch wait raced against any deadline future.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::latch::Latch;
use crate::wait::Wait;

pin_project_lite::pin_project! {
    /// The future returned by `wait_until(deadline)` on any latch; it resolves to
    /// [`Latch::Timed`].
    ///
    /// The latch is polled before the deadline, so a latch that has ended by the time the
    /// deadline fires reports how it ended, not a timeout. The timeout is decided when the
    /// deadline completes: a tracking latch names the counters pending at that moment.
    ///
    /// # Cancel safety
    ///
    /// Dropping it changes nothing, as for [`Wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::{CountDownLatch, TimedOut};
    ///
    /// let latch = CountDownLatch::new(1);
    /// // Any future can be the deadline; a ready one times out at once.
    /// let result = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(result, Err(TimedOut));
    /// assert_eq!(latch.count(), 1);
    /// ```
    #[must_use = "futures do nothing unless polled"]
    pub struct WaitUntil<'a, L: Latch, D> {
        wait: Wait<'a, L>,
        #[pin]
        deadline: D,
    }
}

impl<'a, L: Latch, D> WaitUntil<'a, L, D> {
    pub(crate) fn new(latch: &'a L, deadline: D) -> Self {
        Self {
            wait: Wait::new(latch),
            deadline,
        }
    }
}

impl<'a, L: Latch, D: Future> Future for WaitUntil<'a, L, D> {
    type Output = L::Timed<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.wait.poll_latch(cx) {
            return Poll::Ready(L::in_time(output));
        }
        match this.deadline.poll(cx) {
            Poll::Ready(_) => Poll::Ready(this.wait.latch().timed_out()),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<L: Latch, D> fmt::Debug for WaitUntil<'_, L, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitUntil").finish_non_exhaustive()
    }
}
