//! [`FixedWait`] and [`FixedWaitUntil`]: the futures every fixed latch's waits return.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::kind::FixedKind;
use super::raw::RawFixedWait;

/// The future returned by `wait()` on a fixed latch; it resolves to [`FixedKind::Output`].
///
/// On a latch that has ended it is ready on its first poll, with one atomic load and no
/// waiter slot. Otherwise it takes a slot on its first poll and holds it until it returns
/// `Ready` or is dropped; with every slot taken it returns the `NoWaiterSlot` error at once.
///
/// # Cancel safety
///
/// Dropping it gives its slot back and changes nothing else.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::FixedLatch;
///
/// static LATCH: FixedLatch<1> = FixedLatch::new(1);
/// let wait = LATCH.wait();
/// LATCH.count_down();
/// assert_eq!(futures_lite::future::block_on(wait), Ok(()));
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct FixedWait<'a, L: FixedKind> {
    latch: &'a L,
    raw: RawFixedWait<'a>,
}

impl<'a, L: FixedKind> FixedWait<'a, L> {
    pub(crate) fn new(latch: &'a L) -> Self {
        Self {
            latch,
            raw: latch.raw().wait(),
        }
    }

    #[inline]
    fn poll_latch(&mut self, cx: &mut Context<'_>) -> Poll<L::Output<'a>> {
        let slots = self.raw.slots();
        self.raw
            .poll(cx.waker())
            .map(|outcome| self.latch.output(outcome, slots))
    }
}

impl<'a, L: FixedKind> Future for FixedWait<'a, L> {
    type Output = L::Output<'a>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_latch(cx)
    }
}

impl<L: FixedKind> fmt::Debug for FixedWait<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedWait").finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// The future returned by `wait_until(deadline)` on a fixed latch; it resolves to
    /// [`FixedKind::Timed`].
    ///
    /// The latch is polled before the deadline, and once the deadline has fired the latch
    /// is checked once more, so a latch that ended by then (even one the deadline future
    /// itself finished) reports how it ended, never a timeout. A timeout reports what was
    /// still pending at that last check. Either way the wait gives its slot back when it
    /// returns, so a finished `FixedWaitUntil` that is kept alive holds nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping it gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::{FixedLatch, FixedTimedOut, FixedTimeoutError};
    ///
    /// static LATCH: FixedLatch<1> = FixedLatch::new(1);
    /// // A deadline that counts the latch down when it fires: not a timeout.
    /// let deadline = async { LATCH.count_down(); };
    /// assert_eq!(futures_lite::future::block_on(LATCH.wait_until(deadline)), Ok(()));
    /// ```
    #[must_use = "futures do nothing unless polled"]
    pub struct FixedWaitUntil<'a, L: FixedKind, D> {
        wait: FixedWait<'a, L>,
        #[pin]
        deadline: D,
    }
}

impl<'a, L: FixedKind, D> FixedWaitUntil<'a, L, D> {
    pub(crate) fn new(latch: &'a L, deadline: D) -> Self {
        Self {
            wait: FixedWait::new(latch),
            deadline,
        }
    }
}

impl<'a, L: FixedKind, D: Future> Future for FixedWaitUntil<'a, L, D> {
    type Output = L::Timed<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.wait.poll_latch(cx) {
            return Poll::Ready(L::in_time(output));
        }
        if this.deadline.poll(cx).is_pending() {
            return Poll::Pending;
        }
        let latch = this.wait.latch;
        let slots = this.wait.raw.slots();
        Poll::Ready(match this.wait.raw.after_deadline() {
            Ok(outcome) => L::in_time(latch.output(outcome, slots)),
            Err(pending) => latch.timed_out(pending),
        })
    }
}

impl<L: FixedKind, D> fmt::Debug for FixedWaitUntil<'_, L, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedWaitUntil").finish_non_exhaustive()
    }
}
