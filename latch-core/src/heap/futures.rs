//! The named futures the latches return: [`Wait`] from `wait()`, [`WaitOwned`] from
//! `wait_owned()` and [`WaitUntil`] from `wait_until(deadline)`.

// After the futures: the typed layer of the wait loop they poll (how the latch ended, as
// the latch's output), which the blocking waits drive too.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::heap::latch::{sealed::Sealed, Latch};
use crate::heap::raw::{RawHandle, RawLatch, RawWait};

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
/// use tally_latch::CountDownLatch;
///
/// let latch = CountDownLatch::new(1);
/// let wait = latch.wait();
/// latch.count_down();
/// futures_lite::future::block_on(wait);
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct Wait<'a, L: Latch> {
    raw: RawWait<&'a L>,
}

impl<'a, L: Latch> Wait<'a, L> {
    pub(crate) fn new(latch: &'a L) -> Self {
        Self {
            raw: RawWait::new(latch),
        }
    }

    /// The wait loop underneath, for the timed and blocking forms.
    pub(crate) fn raw(&mut self) -> &mut RawWait<&'a L> {
        &mut self.raw
    }

    /// Blocks the thread until the latch ends.
    #[cfg(feature = "std")]
    pub(crate) fn block(self) -> L::Output {
        self.raw.block()
    }

    /// Blocks the thread until the latch ends or `timeout` passes.
    #[cfg(feature = "std")]
    pub(crate) fn block_for(self, timeout: core::time::Duration) -> Result<L::Output, L::Timeout> {
        self.raw.block_for(timeout)
    }
}

impl<L: Latch> Future for Wait<'_, L> {
    type Output = L::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().raw.poll_output(cx)
    }
}

impl<L: Latch> fmt::Debug for Wait<'_, L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wait").finish_non_exhaustive()
    }
}

/// The future returned by `wait_owned()` on a latch in an
/// [`Arc`](alloc::sync::Arc): as [`Wait`], but it owns a clone of the `Arc`, so it is
/// `'static` (when the latch type is) and can move into a spawned task, as tokio-util's
/// `CancellationToken::cancelled_owned` can.
///
/// # Cancel safety
///
/// Dropping it changes nothing, as for [`Wait`].
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tally_latch::FailableLatch;
///
/// let latch = Arc::new(FailableLatch::<&str>::new(1));
/// let wait = latch.wait_owned(); // borrows nothing
/// latch.fail("boom").unwrap();
/// assert_eq!(futures_lite::future::block_on(wait), Err("boom"));
/// ```
#[cfg(target_has_atomic = "ptr")]
#[must_use = "futures do nothing unless polled"]
pub struct WaitOwned<L: Latch> {
    raw: RawWait<alloc::sync::Arc<L>>,
}

#[cfg(target_has_atomic = "ptr")]
impl<L: Latch> WaitOwned<L> {
    pub(crate) fn new(latch: alloc::sync::Arc<L>) -> Self {
        Self {
            raw: RawWait::new(latch),
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<L: Latch> Future for WaitOwned<L> {
    type Output = L::Output;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().raw.poll_output(cx)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<L: Latch> fmt::Debug for WaitOwned<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WaitOwned").finish_non_exhaustive()
    }
}

pin_project_lite::pin_project! {
    /// The future returned by `wait_until(deadline)` on any latch; it resolves to
    /// `Result<L::Output, L::Timeout>`: `Ok` with how the latch ended, `Err` with the
    /// timeout ([`Latch::Output`], [`Latch::Timeout`]).
    ///
    /// The latch is polled before the deadline, and checked once more after the deadline
    /// fires (even if the deadline's own poll ended it), so a latch that has ended by then
    /// reports how it ended, not a timeout. The timeout is decided at that check: a tracking
    /// latch names the counters whose count-down had not landed, at least one. Once it has
    /// returned, the future holds no waker slot, whether or not it is dropped.
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

/// How a wait reaches its latch: a borrow for [`Wait`], an `Arc` for [`WaitOwned`].
pub(crate) trait LatchRef: RawHandle {
    /// The latch type waited on.
    type Latch: Latch;

    /// The latch.
    fn latch(&self) -> &Self::Latch;
}

impl<L: Latch> RawHandle for &L {
    #[inline]
    fn raw(&self) -> &RawLatch {
        Sealed::raw(*self)
    }
}

impl<L: Latch> LatchRef for &L {
    type Latch = L;

    #[inline]
    fn latch(&self) -> &L {
        self
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<L: Latch> RawHandle for alloc::sync::Arc<L> {
    #[inline]
    fn raw(&self) -> &RawLatch {
        Sealed::raw(&**self)
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<L: Latch> LatchRef for alloc::sync::Arc<L> {
    type Latch = L;

    #[inline]
    fn latch(&self) -> &L {
        self
    }
}

/// The typed layer of the wait loop: how the latch ended, as the latch's output.
impl<H: LatchRef> RawWait<H> {
    /// The latch this future waits on.
    #[inline]
    fn typed(&self) -> &H::Latch {
        self.handle().latch()
    }

    /// Polls without blocking; `Poll::Pending` means still counting.
    #[inline]
    pub(crate) fn poll_output(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<<H::Latch as Latch>::Output> {
        self.poll_terminal(cx)
            .map(|terminal| self.typed().output(terminal))
    }

    /// Blocks the thread until the latch ends.
    #[cfg(feature = "std")]
    pub(crate) fn block(mut self) -> <H::Latch as Latch>::Output {
        let terminal = crate::heap::blocking::block(&mut self);
        self.typed().output(terminal)
    }

    /// Blocks the thread until the latch ends or `timeout` passes; a timeout too long to
    /// represent as an `Instant` waits without one.
    #[cfg(feature = "std")]
    #[allow(clippy::type_complexity)]
    pub(crate) fn block_for(
        mut self,
        timeout: core::time::Duration,
    ) -> Result<<H::Latch as Latch>::Output, <H::Latch as Latch>::Timeout> {
        let Some(deadline) = std::time::Instant::now().checked_add(timeout) else {
            return Ok(self.block());
        };
        match crate::heap::blocking::block_until(&mut self, deadline) {
            Some(terminal) => Ok(self.typed().output(terminal)),
            // Still counting at the deadline; or ending, with no timeout to report: then
            // the end is moments away (a failure being stored).
            None => match self.typed().timed_out() {
                Some(timeout) => Err(timeout),
                None => Ok(self.block()),
            },
        }
    }

    /// Checks the latch once more after a deadline fired, without registering: how it
    /// ended, or the timeout to report, or `Pending` while no timeout can be reported yet
    /// (then the waker parked by the last poll stays, to hear the end).
    #[allow(clippy::type_complexity)]
    pub(crate) fn poll_expired(
        &mut self,
    ) -> Poll<Result<<H::Latch as Latch>::Output, <H::Latch as Latch>::Timeout>> {
        let outcome = match self.latch().terminal() {
            Some(terminal) => Ok(self.typed().output(terminal)),
            None => match self.typed().timed_out() {
                Some(timeout) => Err(timeout),
                None => match self.latch().terminal() {
                    Some(terminal) => Ok(self.typed().output(terminal)),
                    None => return Poll::Pending,
                },
            },
        };
        self.release();
        Poll::Ready(outcome)
    }
}
