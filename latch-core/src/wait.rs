//! [`Wait`]: the future every latch's `wait()` returns.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use event_listener_strategy::{EventListenerFuture, NonBlocking};

use crate::latch::Latch;
use crate::raw::RawWait;

/// The future returned by `wait()` on any latch; it resolves to [`Latch::Output`].
///
/// On a latch that has already ended it is ready on its first poll, with one atomic load
/// and no allocation.
///
/// # Cancel safety
///
/// Dropping it changes nothing: the count stays, and every other waiter still wakes.
///
/// # Examples
///
/// ```
/// use latch_core::CountDownLatch;
///
/// let latch = CountDownLatch::new(1);
/// let wait = latch.wait();
/// latch.count_down();
/// futures_lite::future::block_on(wait);
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct Wait<'a, L: Latch> {
    latch: &'a L,
    raw: RawWait<'a>,
}

impl<'a, L: Latch> Wait<'a, L> {
    pub(crate) fn new(latch: &'a L) -> Self {
        Self {
            latch,
            raw: latch.raw().wait(),
        }
    }

    /// Polls the shared wait loop without blocking; `Poll::Pending` means still counting.
    #[inline]
    pub(crate) fn poll_latch(&mut self, cx: &mut Context<'_>) -> Poll<L::Output<'a>> {
        Pin::new(&mut self.raw)
            .poll_with_strategy(&mut NonBlocking::default(), cx)
            .map(|terminal| self.latch.output(terminal))
    }

    /// Blocks the thread until the latch ends.
    #[cfg(feature = "std")]
    pub(crate) fn block(self) -> L::Output<'a> {
        self.latch.output(self.raw.wait())
    }

    /// Blocks the thread until the latch ends or `timeout` passes; a timeout too long to
    /// represent as an `Instant` waits without one.
    #[cfg(feature = "std")]
    pub(crate) fn block_for(mut self, timeout: core::time::Duration) -> L::Timed<'a> {
        let Some(deadline) = std::time::Instant::now().checked_add(timeout) else {
            let latch = self.latch;
            return L::in_time(latch.output(self.raw.wait()));
        };
        let latch = self.latch;
        match crate::blocking::block_until(&mut self.raw, deadline) {
            Some(terminal) => L::in_time(latch.output(terminal)),
            // Still counting at the deadline; or ending, with no timeout to report: then
            // the end is moments away (a failure being stored).
            None => latch
                .timed_out()
                .unwrap_or_else(|| L::in_time(latch.output(self.raw.wait()))),
        }
    }

    /// Checks the latch once more after a deadline fired, without registering: how it
    /// ended, or the timeout to report, or `Pending` while no timeout can be reported yet
    /// (then the listener registered by the last poll stays, to hear the end).
    pub(crate) fn poll_expired(&mut self) -> Poll<L::Timed<'a>> {
        let latch = self.latch;
        let outcome = match self.raw.latch().terminal() {
            Some(terminal) => L::in_time(latch.output(terminal)),
            None => match latch.timed_out() {
                Some(timed_out) => timed_out,
                None => match self.raw.latch().terminal() {
                    Some(terminal) => L::in_time(latch.output(terminal)),
                    None => return Poll::Pending,
                },
            },
        };
        self.raw.release();
        Poll::Ready(outcome)
    }
}

impl<'a, L: Latch> Future for Wait<'a, L> {
    type Output = L::Output<'a>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_latch(cx)
    }
}

impl<L: Latch> fmt::Debug for Wait<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wait").finish_non_exhaustive()
    }
}
