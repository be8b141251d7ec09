//! [`FailableLatch`]: a countdown latch whose first failure releases every waiter.

use alloc::boxed::Box;
use core::fmt;

use once_cell::race::OnceBox;

use crate::error::{CountTooLarge, WaitError};
use crate::futures::{Wait, WaitUntil};
use crate::latch::{sealed::Sealed, Latch};
use crate::raw::{RawLatch, Terminal};

/// A countdown latch with a failure path: [`fail`](Self::fail) releases every waiter with the
/// first error, so a crashed counter cannot leave waiters blocked forever.
///
/// The latch ends exactly once, open or failed. Failures after it opened, and every failure
/// after the first, are refused and hand their error back. Waiters see `Err(&E)`; the error
/// is stored once (in a box, on the failure path only) and lent to every waiter.
///
/// Counting and waiting work as on [`CountDownLatch`](crate::CountDownLatch); prefer a task
/// tracker or a join set when the counted events are the completions of tasks you own, and a
/// barrier when the same tasks wait for each other in cycles.
///
/// # Examples
///
/// ```
/// use latch_core::FailableLatch;
///
/// let latch = FailableLatch::new(3);
/// latch.count_down();
/// latch.fail("shard 2: connection refused").unwrap();
/// assert_eq!(
///     futures_lite::future::block_on(latch.wait()),
///     Err(&"shard 2: connection refused")
/// );
/// ```
pub struct FailableLatch<E> {
    raw: RawLatch,
    /// Written once, by the caller that claimed the failure, before `FAILED` is published.
    error: OnceBox<E>,
}

impl<E> FailableLatch<E> {
    crate::const_fn! {
        /// A latch that opens after `count` count-downs unless it fails first; `new(0)`
        /// starts open.
        ///
        /// # Panics
        ///
        /// If `count` exceeds [`MAX_COUNT`](crate::MAX_COUNT); [`try_new`](Self::try_new) returns an error
        /// instead.
        ///
        /// # Examples
        ///
        /// ```
        /// use latch_core::FailableLatch;
        ///
        /// static STARTUP: FailableLatch<&str> = FailableLatch::new(3);
        /// assert_eq!(STARTUP.count(), 3);
        /// ```
        pub fn new(count: usize) -> Self {
            Self {
                raw: RawLatch::new(count),
                error: OnceBox::new(),
            }
        }
    }

    crate::const_fn! {
        /// A latch that opens after `count` count-downs, or an error if `count` exceeds
        /// [`MAX_COUNT`](crate::MAX_COUNT).
        ///
        /// # Errors
        ///
        /// [`CountTooLarge`] if `count > MAX_COUNT`.
        ///
        /// # Examples
        ///
        /// ```
        /// use latch_core::FailableLatch;
        ///
        /// assert!(FailableLatch::<()>::try_new(usize::MAX).is_err());
        /// ```
        pub fn try_new(count: usize) -> Result<Self, CountTooLarge> {
            match RawLatch::try_count(count) {
                Ok(count) => Ok(Self::new(count)),
                Err(error) => Err(error),
            }
        }
    }

    /// The number of count-downs still needed; frozen once the latch fails (each refused
    /// count-down still running on another thread can show it one lower until it returns).
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::new(2);
    /// latch.count_down();
    /// latch.fail(()).unwrap();
    /// assert!(!latch.count_down()); // refused: the latch has failed
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw.count()
    }

    /// Whether the count reached zero (before any failure).
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// latch.count_down();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.raw.terminal() == Some(Terminal::Open)
    }

    /// The error the latch failed with, if it failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::new(1);
    /// assert_eq!(latch.error(), None);
    /// latch.fail(42).unwrap();
    /// assert_eq!(latch.error(), Some(&42));
    /// ```
    pub fn error(&self) -> Option<&E> {
        match self.raw.terminal() {
            Some(Terminal::Failed) => Some(self.stored_error()),
            _ => None,
        }
    }

    /// Counts down by one and, on the move to zero, releases every waiter.
    ///
    /// Never blocks and never goes below zero. Returns whether this call counted: `false`
    /// once the latch is open or has failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down());
    /// ```
    #[inline]
    pub fn count_down(&self) -> bool {
        self.raw.count_down_then(|_| ())
    }

    /// Counts down, running `then(remaining)` before any waiter wakes if this call counted.
    pub(crate) fn count_down_then(&self, then: impl FnOnce(usize)) -> bool {
        self.raw.count_down_then(then)
    }

    /// Fails the latch with `error`, releasing every waiter with it.
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed: only the first failure
    /// counts, and a failure after opening changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::new(2);
    /// assert_eq!(latch.fail("first"), Ok(()));
    /// assert_eq!(latch.fail("second"), Err("second"));
    /// assert_eq!(latch.error(), Some(&"first"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        let mut error = Some(error);
        self.raw.fail_with(|| {
            if let Some(error) = error.take() {
                let stored = self.error.set(Box::new(error)).is_ok();
                debug_assert!(stored, "only the caller that claimed the failure stores");
            }
        });
        match error {
            None => Ok(()),
            Some(refused) => Err(refused),
        }
    }

    /// Waits until the latch opens (`Ok`) or fails (`Err` with the first error).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// latch.count_down();
    /// assert_eq!(futures_lite::future::block_on(latch.wait()), Ok(()));
    /// ```
    pub fn wait(&self) -> Wait<'_, Self> {
        Wait::new(self)
    }

    /// Waits until the latch opens or fails, or `deadline` (any future) completes.
    ///
    /// A failure that happens before the deadline fires wins over the timeout.
    ///
    /// # Errors
    ///
    /// [`WaitError::Failed`] with the first error, or [`WaitError::TimedOut`]; a timed-out
    /// wait changes nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::{FailableLatch, WaitError};
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// let result = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(result, Err(WaitError::TimedOut));
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> WaitUntil<'_, Self, D> {
        WaitUntil::new(self, deadline)
    }

    /// Blocks the thread until the latch opens or fails.
    ///
    /// # Errors
    ///
    /// The first error, if the latch failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use latch_core::FailableLatch;
    ///
    /// let latch = FailableLatch::new(1);
    /// latch.fail("boom").unwrap();
    /// assert_eq!(latch.wait_blocking(), Err(&"boom"));
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking(&self) -> Result<(), &E> {
        self.wait().block()
    }

    /// Blocks the thread until the latch opens or fails, or `timeout` passes.
    ///
    /// # Errors
    ///
    /// [`WaitError::Failed`] or [`WaitError::TimedOut`]; a timed-out wait changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use latch_core::{FailableLatch, WaitError};
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert_eq!(
    ///     latch.wait_blocking_timeout(Duration::from_millis(5)),
    ///     Err(WaitError::TimedOut)
    /// );
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<(), WaitError<'_, E>> {
        self.wait().block_for(timeout)
    }

    fn stored_error(&self) -> &E {
        self.error
            .get()
            .expect("`FAILED` is published only after the error is stored")
    }
}

impl<E> Latch for FailableLatch<E> {
    type Output<'a>
        = Result<(), &'a E>
    where
        E: 'a;
    type Timed<'a>
        = Result<(), WaitError<'a, E>>
    where
        E: 'a;
}

impl<E> Sealed for FailableLatch<E> {
    fn raw(&self) -> &RawLatch {
        &self.raw
    }

    fn output(&self, terminal: Terminal) -> <Self as Latch>::Output<'_> {
        match terminal {
            Terminal::Open => Ok(()),
            Terminal::Failed => Err(self.stored_error()),
        }
    }

    fn in_time<'a>(output: <Self as Latch>::Output<'a>) -> <Self as Latch>::Timed<'a>
    where
        Self: 'a,
    {
        output.map_err(WaitError::Failed)
    }

    fn timed_out(&self) -> Option<<Self as Latch>::Timed<'_>> {
        Some(Err(WaitError::TimedOut))
    }
}

impl<E> fmt::Debug for FailableLatch<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FailableLatch")
            .field("count", &self.count())
            .field("status", &self.raw.status().as_str())
            .finish()
    }
}
