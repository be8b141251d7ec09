//! [`Latch`]: the trait that code generic over every latch, and the named futures, are
//! written against.

use crate::heap::raw::{RawLatch, Terminal};

/// A countdown latch: [`CountDownLatch`](crate::CountDownLatch),
/// [`FailableLatch`](crate::FailableLatch) or [`TrackingLatch`](crate::TrackingLatch).
///
/// The trait is sealed. It names what a latch's [`Wait`](crate::futures::Wait) resolves
/// to, [`Output`](Self::Output), and what its timed wait reports when the deadline comes
/// first, [`Timeout`](Self::Timeout): a timed wait resolves to
/// `Result<Self::Output, Self::Timeout>`, as `tokio::time::timeout` does, so generic code
/// tells a timeout from how the latch ended by the outer `Result`, and
/// `latch.wait_until(deadline).await??` sends both through `?`.
///
/// Every output and timeout is owned and, when the latch's error type is, `'static`: a
/// failure reaches each waiter as its own clone of the error.
///
/// | latch | `Output` | `Timeout` |
/// |---|---|---|
/// | `CountDownLatch` | `()` | [`TimedOut`](crate::TimedOut) |
/// | `FailableLatch<E>` | `Result<(), E>` | [`TimedOut`](crate::TimedOut) |
/// | `TrackingLatch<E>` | `Result<(), Failure<E>>` | [`StillPending`](crate::StillPending) |
///
/// # Examples
///
/// ```
/// use tally_latch::{CountDownLatch, Latch};
///
/// // Generic over any latch: a timeout is the outer `Err`, whatever the latch.
/// async fn gate<L: Latch>(latch: &L) -> Option<L::Output> {
///     latch.wait_until(async {}).await.ok()
/// }
///
/// let latch = CountDownLatch::new(1);
/// assert_eq!(futures_lite::future::block_on(gate(&latch)), None);
/// latch.count_down();
/// assert_eq!(futures_lite::future::block_on(gate(&latch)), Some(()));
/// ```
pub trait Latch: sealed::Sealed {
    /// What [`Latch::wait`] resolves to: how the latch ended.
    type Output;

    /// What [`Latch::wait_until`] reports (as its `Err`) when the deadline came first.
    type Timeout;

    /// Waits until the latch opens (or fails, for the latches that can): the
    /// [`wait`](crate::LatchOf::wait) every latch has, for generic code.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing: the count stays, other waiters still wake.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{FailableLatch, Latch};
    ///
    /// let latch = FailableLatch::new(1);
    /// latch.fail("boom").unwrap();
    /// assert_eq!(futures_lite::future::block_on(Latch::wait(&latch)), Err("boom"));
    /// ```
    fn wait(&self) -> crate::heap::futures::Wait<'_, Self>
    where
        Self: Sized,
    {
        crate::heap::futures::Wait::new(self)
    }

    /// Waits until the latch opens, or until `deadline` completes, whichever comes first:
    /// `Ok` with how the latch ended, or `Err` with the timeout. The
    /// [`wait_until`](crate::LatchOf::wait_until) every latch has, for generic code.
    ///
    /// `deadline` is any future: a `tokio::time::sleep`, an `async_io::Timer`, an
    /// `embassy_time::Timer`. The latch is polled first, and checked once more after the
    /// deadline fires, so a latch that has ended by then reports how it ended, not a
    /// timeout. A timed-out wait changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{Latch, TrackingLatch};
    ///
    /// let latch = TrackingLatch::new(["slow"]).unwrap();
    /// let timeout = futures_lite::future::block_on(Latch::wait_until(&latch, async {}));
    /// assert_eq!(timeout.unwrap_err().names(), ["slow"]);
    /// ```
    fn wait_until<D: core::future::Future>(
        &self,
        deadline: D,
    ) -> crate::heap::futures::WaitUntil<'_, Self, D>
    where
        Self: Sized,
    {
        crate::heap::futures::WaitUntil::new(self, deadline)
    }

    /// Like [`wait`](Self::wait), for a latch in an [`Arc`](alloc::sync::Arc): the future
    /// owns a clone of the `Arc`, so it can move into a spawned `'static` task. The
    /// [`wait_owned`](crate::LatchOf::wait_owned) every latch has, for generic code.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::{CountDownLatch, Latch};
    ///
    /// let latch = Arc::new(CountDownLatch::new(1));
    /// let wait = Latch::wait_owned(&latch);
    /// let waiter = std::thread::spawn(move || futures_lite::future::block_on(wait));
    /// latch.count_down();
    /// waiter.join().unwrap();
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    fn wait_owned(self: &alloc::sync::Arc<Self>) -> crate::heap::futures::WaitOwned<Self>
    where
        Self: Sized,
    {
        crate::heap::futures::WaitOwned::new(self.clone())
    }
}

pub(crate) mod sealed {
    use super::*;

    /// The hooks the wait futures need; private, so no type outside this crate is a latch.
    /// [`LatchOf`](crate::LatchOf) is the one implementation, which asks its kind.
    pub trait Sealed {
        /// The state machine underneath.
        fn raw(&self) -> &RawLatch;

        /// The wait's output for how the latch ended.
        fn output(&self, terminal: Terminal) -> <Self as Latch>::Output
        where
            Self: Latch;

        /// The timeout to report when the deadline came first and the latch had not ended
        /// when checked again; `None` while the latch is in the middle of ending (see the
        /// kinds' `Ends::timed_out`).
        fn timed_out(&self) -> Option<<Self as Latch>::Timeout>
        where
            Self: Latch;
    }
}
