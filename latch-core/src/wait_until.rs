//! [`WaitUntil`]: a latch wait raced against any deadline future.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::latch::Latch;
use crate::wait::Wait;

pin_project_lite::pin_project! {
    /// The future returned by `wait_until(deadline)` on any latch; it resolves to
    /// `Result<L::Output, L::Timeout>`: `Ok` with how the latch ended, `Err` with the
    /// timeout ([`Latch::Output`], [`Latch::Timeout`]).
    ///
    /// The latch is polled before the deadline, and checked once more after the deadline
    /// fires (even if the deadline's own poll ended it), so a latch that has ended by then
    /// reports how it ended, not a timeout. The timeout is decided at that check: a tracking
    /// latch names the counters whose count-down had not landed, at least one. Once it has
    /// returned, the future holds no listener, whether or not it is dropped.
    ///
    /// # Cancel safety
    ///
    /// Dropping it changes nothing, as for [`Wait`].
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, TimedOut};
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
        // Set once the deadline has completed; it is not polled again.
        expired: bool,
    }
}

impl<'a, L: Latch, D> WaitUntil<'a, L, D> {
    pub(crate) fn new(latch: &'a L, deadline: D) -> Self {
        Self {
            wait: Wait::new(latch),
            deadline,
            expired: false,
        }
    }
}

impl<L: Latch, D: Future> Future for WaitUntil<'_, L, D> {
    type Output = Result<L::Output, L::Timeout>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.wait.raw().poll_output(cx) {
            return Poll::Ready(Ok(output));
        }
        if !*this.expired {
            core::task::ready!(this.deadline.poll(cx));
            *this.expired = true;
        }
        // The deadline's poll may itself have ended the latch (or another thread did,
        // meanwhile): look again before calling it a timeout.
        this.wait.raw().poll_expired()
    }
}

impl<L: Latch, D> fmt::Debug for WaitUntil<'_, L, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitUntil").finish_non_exhaustive()
    }
}
