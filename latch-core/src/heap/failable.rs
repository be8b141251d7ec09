//! [`FailableLatch`]: a countdown latch whose first failure releases every waiter.

use alloc::boxed::Box;
use core::fmt;

use once_cell::race::OnceBox;

use crate::heap::error::{CountTooLarge, TimedOut};
use crate::heap::latch_of::{sealed, LatchOf};
use crate::heap::raw::{RawLatch, Terminal};

/// A countdown latch with a failure path: [`fail`](FailableLatch::fail) releases every
/// waiter with the first error, so a crashed counter cannot leave waiters blocked forever.
///
/// The latch ends exactly once, open or failed. Failures after it opened, and every failure
/// after the first, are refused and hand their error back. The error is stored once (in a
/// box, on the failure path only), [`error`](FailableLatch::error) lends it, and every
/// waiter gets its own clone (`E: Clone`; fail with an `Arc<YourError>` for one that is
/// not).
///
/// Counting and waiting work as on [`CountDownLatch`](crate::CountDownLatch); prefer a task
/// tracker or a join set when the counted events are the completions of tasks you own, and a
/// barrier when the same tasks wait for each other in cycles.
///
/// # Examples
///
/// ```
/// use tally_latch::FailableLatch;
///
/// let latch = FailableLatch::new(3);
/// latch.count_down();
/// latch.fail("shard 2: connection refused").unwrap();
/// assert_eq!(
///     futures_lite::future::block_on(latch.wait()),
///     Err("shard 2: connection refused")
/// );
/// ```
pub type FailableLatch<E> = LatchOf<Failable<E>>;

/// The kind of a [`FailableLatch<E>`]: a count and the first error, stored once (in a box,
/// on the failure path only). A [`TrackingLatch<E>`](crate::TrackingLatch) keeps one too,
/// for its [`Failure<E>`](crate::Failure).
///
/// # Examples
///
/// ```
/// use tally_latch::{kind::Failable, FailableLatch, LatchOf};
///
/// let latch: LatchOf<Failable<&str>> = FailableLatch::new(1);
/// latch.fail("down").unwrap();
/// assert_eq!(latch.error(), Some(&"down"));
/// ```
pub struct Failable<E> {
    /// Written once, by the caller that claimed the failure, before `FAILED` is published.
    error: OnceBox<E>,
}

impl<E> LatchOf<Failable<E>> {
    crate::sync::const_fn! {
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
        /// use tally_latch::FailableLatch;
        ///
        /// static STARTUP: FailableLatch<&str> = FailableLatch::new(3);
        /// assert_eq!(STARTUP.count(), 3);
        /// ```
        pub fn new(count: usize) -> Self {
            Self {
                raw: RawLatch::new(count),
                kind: Failable::new(),
            }
        }
    }

    crate::sync::const_fn! {
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
        /// use tally_latch::FailableLatch;
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

    /// The error the latch failed with, if it failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::new(1);
    /// assert_eq!(latch.error(), None);
    /// latch.fail(42).unwrap();
    /// assert_eq!(latch.error(), Some(&42));
    /// ```
    pub fn error(&self) -> Option<&E> {
        self.kind.error(&self.raw)
    }

    /// Counts down by one and, on the move to zero, releases every waiter.
    ///
    /// Never blocks and never goes below zero. Returns whether this call counted: `false`
    /// once the latch is open or has failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down());
    /// ```
    #[inline]
    pub fn count_down(&self) -> bool {
        self.count_down_unnamed()
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
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::new(2);
    /// assert_eq!(latch.fail("first"), Ok(()));
    /// assert_eq!(latch.fail("second"), Err("second"));
    /// assert_eq!(latch.error(), Some(&"first"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        self.kind.fail(&self.raw, error)?;
        #[cfg(feature = "tracing")]
        crate::heap::trace::failed(self.raw.label, "failed", None, core::any::type_name::<E>());
        Ok(())
    }
}

impl<E> Failable<E> {
    crate::sync::const_fn! {
        /// No error yet.
        pub(crate) fn new() -> Self {
            Self {
                error: OnceBox::new(),
            }
        }
    }

    /// Fails `raw` with `error`, without a `tracing` event (each caller emits its own):
    /// claims the latch, stores the error, then publishes the failure and wakes every
    /// waiter. Hands `error` back if the latch had already opened or failed.
    pub(crate) fn fail(&self, raw: &RawLatch, error: E) -> Result<(), E> {
        let mut error = Some(error);
        raw.fail_with(|| {
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

    /// The error `raw` failed with, if it failed.
    pub(crate) fn error(&self, raw: &RawLatch) -> Option<&E> {
        match raw.terminal() {
            Some(Terminal::Failed) => Some(self.stored()),
            _ => None,
        }
    }

    /// The stored error; only called once `FAILED` is seen.
    fn stored(&self) -> &E {
        self.error
            .get()
            .expect("`FAILED` is published only after the error is stored")
    }
}

impl<E> sealed::Kind for Failable<E> {
    const NAME: &'static str = "FailableLatch";

    fn fmt_fields(&self, raw: &RawLatch, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("status", &raw.status().as_str());
    }
}

impl<E: Clone> sealed::Ends for Failable<E> {
    type Output = Result<(), E>;
    type Timeout = TimedOut;

    #[inline]
    fn output(&self, terminal: Terminal) -> Result<(), E> {
        match terminal {
            Terminal::Open => Ok(()),
            Terminal::Failed => Err(self.stored().clone()),
        }
    }

    fn timed_out(&self, _: &RawLatch) -> Option<TimedOut> {
        Some(TimedOut)
    }
}

impl<E> fmt::Debug for Failable<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Failable").finish_non_exhaustive()
    }
}
