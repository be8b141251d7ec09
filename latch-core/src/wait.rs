//! [`Wait`] and [`WaitOwned`]: the futures every latch's `wait()` and `wait_owned()`
//! return, and the typed wait loop they share with the timed and blocking waits.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use event_listener_strategy::{EventListenerFuture, NonBlocking};

use crate::latch::{sealed::Sealed, Latch};
use crate::raw::{LatchRef, RawWait};

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

/// The typed layer of the wait loop: how the latch ended, as the latch's output.
impl<H: LatchRef> RawWait<H> {
    /// Polls without blocking; `Poll::Pending` means still counting.
    #[inline]
    pub(crate) fn poll_output(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<<H::Latch as Latch>::Output> {
        Pin::new(&mut *self)
            .poll_with_strategy(&mut NonBlocking::default(), cx)
            .map(|terminal| self.typed().output(terminal))
    }

    /// Blocks the thread until the latch ends.
    #[cfg(feature = "std")]
    pub(crate) fn block(mut self) -> <H::Latch as Latch>::Output {
        let mut strategy = event_listener_strategy::Blocking::default();
        loop {
            // `Blocking` parks until the listener is notified, so this loops only to
            // re-check after a wake-up.
            if let Poll::Ready(terminal) =
                Pin::new(&mut self).poll_with_strategy(&mut strategy, &mut ())
            {
                return self.typed().output(terminal);
            }
        }
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
        match crate::blocking::block_until(&mut self, deadline) {
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
    /// (then the listener registered by the last poll stays, to hear the end).
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
