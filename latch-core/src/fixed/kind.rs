//! What the fixed latches share: the trait their wait futures are written over.

use super::raw::{Outcome, Raw};

/// A fixed latch: [`FixedLatch`](super::FixedLatch),
/// [`FixedFailableLatch`](super::FixedFailableLatch) or
/// [`FixedTrackingLatch`](super::FixedTrackingLatch).
///
/// The trait is sealed. It names what a latch's [`FixedWait`](super::FixedWait) and
/// [`FixedWaitUntil`](super::FixedWaitUntil) resolve to, so one future type serves all three.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedKind, FixedLatch};
///
/// async fn gate<L: FixedKind>(latch: &L) -> L::Output<'_> {
///     latch.wait().await
/// }
///
/// let latch = FixedLatch::<1>::new(0);
/// assert_eq!(futures_lite::future::block_on(gate(&latch)), Ok(()));
/// ```
pub trait FixedKind: sealed::Sealed {
    /// What a wait resolves to.
    type Output<'a>
    where
        Self: 'a;

    /// What a wait with a deadline resolves to.
    type Timed<'a>
    where
        Self: 'a;

    /// Waits until the latch ends; see each latch's `wait`.
    fn wait(&self) -> super::FixedWait<'_, Self>
    where
        Self: Sized,
    {
        super::FixedWait::new(self)
    }

    /// Waits until the latch ends or `deadline` completes; see each latch's `wait_until`.
    fn wait_until<D: core::future::Future>(&self, deadline: D) -> super::FixedWaitUntil<'_, Self, D>
    where
        Self: Sized,
    {
        super::FixedWaitUntil::new(self, deadline)
    }
}

pub(crate) mod sealed {
    use super::*;

    /// The hooks the wait futures need; private, so no type outside this crate is one.
    pub trait Sealed {
        /// The state machine underneath.
        fn raw(&self) -> &Raw;

        /// The wait's output for how it ended; `slots` is the latch's slot count.
        fn output(&self, outcome: Outcome, slots: usize) -> <Self as FixedKind>::Output<'_>
        where
            Self: FixedKind;

        /// The timed wait's output when the latch answered (or had no slot).
        fn in_time<'a>(output: <Self as FixedKind>::Output<'a>) -> <Self as FixedKind>::Timed<'a>
        where
            Self: FixedKind + 'a;

        /// The timed wait's output when the deadline fired with `pending` still pending.
        fn timed_out(&self, pending: usize) -> <Self as FixedKind>::Timed<'_>
        where
            Self: FixedKind;
    }
}
