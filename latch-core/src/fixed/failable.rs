//! [`FixedFailableLatch`]: a no-heap countdown latch whose first failure releases every waiter.

use core::fmt;

use super::error::{
    FixedCountTooLarge, FixedTimedOut, FixedTimedWaitError, FixedWaitError, NoWaiterSlot,
};
use super::failure::RawFailable;
use super::kind::{sealed::Sealed, FixedKind};
use super::raw::{Outcome, Raw, Status, MAX_COUNT};
use super::slots::CheckWaiters;
use super::{FixedWait, FixedWaitUntil};

/// A countdown latch with a failure path that needs no allocator, with `W` waiter slots.
///
/// [`fail`](Self::fail) releases every waiter with the first error; later failures, and
/// failures after the latch opened, hand their error back. The error is stored inside the
/// latch (no box) and lent to every waiter as `&E`; it is dropped with the latch.
///
/// # Limits
///
/// As for [`FixedLatch`](super::FixedLatch): at most `W` parked waits, and one more gets
/// [`FixedWaitError::NoWaiterSlot`] at once; a finished wait holds no slot; the count is at
/// most [`MAX_COUNT`](super::MAX_COUNT).
///
/// **Interrupts** may call every method, `fail` included: it moves `error` into the latch
/// and wakes the waiters, with no lock and no allocation. A failure claimed by one context
/// and still being stored when another context (say, a higher-priority interrupt) polls a
/// wait is not yet visible to it: the latch reads as counting until the store is published,
/// a few instructions later, and that wait is woken then.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedFailableLatch, FixedWaitError};
///
/// #[derive(Debug, PartialEq)]
/// enum LinkError { Crc, Timeout }
///
/// static LINK_UP: FixedFailableLatch<LinkError> = FixedFailableLatch::new(3);
///
/// // In the receive interrupt:
/// LINK_UP.count_down();
/// LINK_UP.fail(LinkError::Crc).unwrap();
///
/// let error = futures_lite::future::block_on(LINK_UP.wait()).unwrap_err();
/// assert_eq!(error, FixedWaitError::Failed(&LinkError::Crc));
/// assert_eq!(LINK_UP.fail(LinkError::Timeout), Err(LinkError::Timeout)); // only the first counts
/// ```
pub struct FixedFailableLatch<E, const W: usize = 1> {
    inner: RawFailable<E, W>,
}

impl<E, const W: usize> FixedFailableLatch<E, W> {
    crate::sync::const_fn! {
        /// A latch that opens after `count` count-downs unless it fails first; `new(0)`
        /// starts open.
        ///
        /// # Panics
        ///
        /// If `count` exceeds [`MAX_COUNT`](super::MAX_COUNT) (in a `static`, a compile-time
        /// error). `W` outside `1..=MAX_WAITERS` is always a compile-time error.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::fixed::FixedFailableLatch;
        ///
        /// static STARTUP: FixedFailableLatch<&str, 2> = FixedFailableLatch::new(3);
        /// assert_eq!(STARTUP.count(), 3);
        /// ```
        pub fn new(count: usize) -> Self {
            let () = CheckWaiters::<W>::OK;
            assert!(count <= MAX_COUNT, "count exceeds tally_latch::fixed::MAX_COUNT");
            Self {
                inner: RawFailable::new(count),
            }
        }
    }

    crate::sync::const_fn! {
        /// A latch that opens after `count` count-downs, or an error if `count` exceeds
        /// [`MAX_COUNT`](super::MAX_COUNT).
        ///
        /// # Errors
        ///
        /// [`FixedCountTooLarge`] if `count > MAX_COUNT`.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::fixed::{FixedFailableLatch, MAX_COUNT};
        ///
        /// assert!(FixedFailableLatch::<(), 1>::try_new(MAX_COUNT + 1).is_err());
        /// ```
        pub fn try_new(count: usize) -> Result<Self, FixedCountTooLarge> {
            if count > MAX_COUNT {
                return Err(FixedCountTooLarge { count });
            }
            Ok(Self::new(count))
        }
    }

    fn raw(&self) -> &Raw {
        self.inner.raw()
    }

    /// The number of count-downs still needed; frozen once a failure is claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<(), 1>::new(2);
    /// latch.count_down();
    /// latch.fail(()).unwrap();
    /// assert!(!latch.count_down()); // refused: the latch has failed
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw().pending()
    }

    /// Whether the count reached zero (before any failure).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<(), 1>::new(1);
    /// latch.count_down();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.raw().status() == Status::Open
    }

    /// The error the latch failed with, if it failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<u8, 1>::new(1);
    /// assert_eq!(latch.error(), None);
    /// latch.fail(42).unwrap();
    /// assert_eq!(latch.error(), Some(&42));
    /// ```
    pub fn error(&self) -> Option<&E> {
        self.inner.error()
    }

    /// How many waits are parked on the latch right now (at most `W`).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<(), 1>::new(1);
    /// assert_eq!(latch.waiting(), 0);
    /// ```
    pub fn waiting(&self) -> usize {
        self.raw().waiting()
    }

    /// Counts down by one and, on the move to zero, wakes every parked waiter.
    ///
    /// Never blocks or allocates; callable from an interrupt handler. Returns whether this
    /// call counted: `false` once the latch is open or a failure has been claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<(), 1>::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down());
    /// ```
    #[inline]
    pub fn count_down(&self) -> bool {
        self.raw().settle(|pending| Some(pending - 1))
    }

    /// Fails the latch with `error` and wakes every parked waiter with it.
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<&str, 1>::new(2);
    /// assert_eq!(latch.fail("first"), Ok(()));
    /// assert_eq!(latch.fail("second"), Err("second"));
    /// assert_eq!(latch.error(), Some(&"first"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        self.inner.fail(error)
    }

    /// Waits until the latch opens (`Ok`) or fails.
    ///
    /// # Errors
    ///
    /// [`FixedWaitError::Failed`] with the first error, or [`FixedWaitError::NoWaiterSlot`]
    /// if the latch is still counting and all `W` slots are taken.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedFailableLatch;
    ///
    /// let latch = FixedFailableLatch::<(), 1>::new(1);
    /// latch.count_down();
    /// assert_eq!(futures_lite::future::block_on(latch.wait()), Ok(()));
    /// ```
    pub fn wait(&self) -> FixedWait<'_, Self> {
        FixedWait::new(self)
    }

    /// Waits until the latch opens or fails, or `deadline` (any future) completes. After
    /// the deadline fires the latch is checked once more, so an ending latch always wins.
    ///
    /// # Errors
    ///
    /// [`FixedTimedWaitError::Failed`], [`FixedTimedWaitError::TimedOut`] with the count
    /// left, or [`FixedTimedWaitError::NoWaiterSlot`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::{FixedFailableLatch, FixedTimedWaitError};
    ///
    /// let latch = FixedFailableLatch::<&str, 1>::new(1);
    /// // A deadline that fails the latch as it fires: the failure is reported.
    /// let result = futures_lite::future::block_on(latch.wait_until(async {
    ///     latch.fail("brown-out").unwrap();
    /// }));
    /// assert_eq!(result, Err(FixedTimedWaitError::Failed(&"brown-out")));
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> FixedWaitUntil<'_, Self, D> {
        FixedWaitUntil::new(self, deadline)
    }
}

impl<E, const W: usize> FixedKind for FixedFailableLatch<E, W> {
    type Output<'a>
        = Result<(), FixedWaitError<'a, E>>
    where
        E: 'a;
    type Timed<'a>
        = Result<(), FixedTimedWaitError<'a, E, FixedTimedOut>>
    where
        E: 'a;
}

impl<E, const W: usize> Sealed for FixedFailableLatch<E, W> {
    fn raw(&self) -> &Raw {
        self.inner.raw()
    }

    fn output(&self, outcome: Outcome, slots: usize) -> <Self as FixedKind>::Output<'_> {
        match outcome {
            Outcome::Open => Ok(()),
            Outcome::Failed => Err(FixedWaitError::Failed(self.inner.failed_error())),
            Outcome::NoSlot => Err(FixedWaitError::NoWaiterSlot(NoWaiterSlot { slots })),
        }
    }

    fn in_time<'a>(output: <Self as FixedKind>::Output<'a>) -> <Self as FixedKind>::Timed<'a>
    where
        Self: 'a,
    {
        output.map_err(Into::into)
    }

    fn timed_out(&self, pending: usize) -> <Self as FixedKind>::Timed<'_> {
        Err(FixedTimedWaitError::TimedOut(FixedTimedOut {
            remaining: pending,
        }))
    }
}

impl<E, const W: usize> fmt::Debug for FixedFailableLatch<E, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.raw().status() {
            Status::Open => "open",
            Status::Failed => "failed",
            Status::Counting { .. } if self.raw().failure_claimed() => "failing",
            Status::Counting { .. } => "counting",
        };
        f.debug_struct("FixedFailableLatch")
            .field("count", &self.count())
            .field("status", &status)
            .field("waiting", &self.waiting())
            .field("slots", &W)
            .finish()
    }
}
