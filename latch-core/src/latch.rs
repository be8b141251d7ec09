//! What the three latch types share: the trait the generic wait futures are written over.

use crate::raw::{RawLatch, Terminal};

/// A countdown latch: [`CountDownLatch`](crate::CountDownLatch),
/// [`FailableLatch`](crate::FailableLatch) or [`TrackingLatch`](crate::TrackingLatch).
///
/// The trait is sealed. It names what a latch's [`Wait`](crate::futures::Wait) and
/// [`WaitUntil`](crate::futures::WaitUntil) futures resolve to, so one future type serves
/// every latch.
///
/// # Examples
///
/// ```
/// use latch_core::{CountDownLatch, Latch};
///
/// // Generic over any latch: wait, whatever the latch reports.
/// async fn gate<L: Latch>(latch: &L) -> L::Output<'_> {
///     latch.wait().await
/// }
///
/// let latch = CountDownLatch::new(0);
/// futures_lite::future::block_on(gate(&latch));
/// ```
pub trait Latch: sealed::Sealed {
    /// What [`Latch::wait`] resolves to.
    type Output<'a>
    where
        Self: 'a;

    /// What [`Latch::wait_until`] resolves to: the wait's output, or a timeout.
    type Timed<'a>
    where
        Self: 'a;

    /// Waits until the latch opens (or fails, for the latches that can).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing: the count stays, other waiters still wake.
    fn wait(&self) -> crate::futures::Wait<'_, Self>
    where
        Self: Sized,
    {
        crate::futures::Wait::new(self)
    }

    /// Waits until the latch opens, or until `deadline` completes, whichever comes first.
    ///
    /// `deadline` is any future: a `tokio::time::sleep`, an `async_io::Timer`, an
    /// `embassy_time::Timer`. The latch is polled first, and checked once more after the
    /// deadline fires, so a latch that has ended by then reports how it ended, not a
    /// timeout. A timed-out wait changes nothing.
    fn wait_until<D: core::future::Future>(
        &self,
        deadline: D,
    ) -> crate::futures::WaitUntil<'_, Self, D>
    where
        Self: Sized,
    {
        crate::futures::WaitUntil::new(self, deadline)
    }
}

pub(crate) mod sealed {
    use super::*;

    /// The hooks the wait futures need; private, so no type outside this crate is a latch.
    pub trait Sealed {
        /// The state machine underneath.
        fn raw(&self) -> &RawLatch;

        /// The wait's output for how the latch ended.
        fn output(&self, terminal: Terminal) -> <Self as Latch>::Output<'_>
        where
            Self: Latch;

        /// The timed wait's output when the latch answered first.
        fn in_time<'a>(output: <Self as Latch>::Output<'a>) -> <Self as Latch>::Timed<'a>
        where
            Self: Latch + 'a;

        /// The timed wait's output when the deadline came first and the latch had not
        /// ended when checked again; `None` if no timeout can be reported yet because the
        /// latch is in the middle of ending (a tracking latch whose every counter has
        /// reported, failing), so the wait goes on until it has ended.
        fn timed_out(&self) -> Option<<Self as Latch>::Timed<'_>>
        where
            Self: Latch;
    }
}
