//! [`FailableLatch`]: a countdown latch whose first failure releases every waiter.

use alloc::boxed::Box;
use core::fmt;

use once_cell::race::OnceBox;

use crate::heap::error::{CountTooLarge, TimedOut};
#[cfg(target_has_atomic = "ptr")]
use crate::heap::futures::WaitOwned;
use crate::heap::futures::{Wait, WaitUntil};
use crate::heap::latch::{sealed::Sealed, Latch};
use crate::heap::raw::{RawLatch, Terminal};

/// A countdown latch with a failure path: [`fail`](Self::fail) releases every waiter with the
/// first error, so a crashed counter cannot leave waiters blocked forever.
///
/// The latch ends exactly once, open or failed. Failures after it opened, and every failure
/// after the first, are refused and hand their error back. The error is stored once (in a
/// box, on the failure path only), [`error`](Self::error) lends it, and every waiter gets
/// its own clone (`E: Clone`; fail with an `Arc<YourError>` for one that is not).
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
pub struct FailableLatch<E> {
    raw: RawLatch,
    /// Written once, by the caller that claimed the failure, before `FAILED` is published.
    error: OnceBox<E>,
}

impl<E> FailableLatch<E> {
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
                error: OnceBox::new(),
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

    /// The number of count-downs still needed; frozen once the latch fails (each refused
    /// count-down still running on another thread can show it one lower until it returns).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
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
    /// use tally_latch::FailableLatch;
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
    /// use tally_latch::FailableLatch;
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
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down());
    /// ```
    #[inline]
    pub fn count_down(&self) -> bool {
        self.raw.count_down_then(|remaining| {
            #[cfg(feature = "tracing")]
            crate::heap::trace::count_down(self.raw.label, remaining);
            let _ = remaining;
        })
    }

    /// Names this latch in its `tracing` events (the `label` field) and its `Debug`
    /// output. Without the `tracing` feature the label is not kept (the latch stays two
    /// words) and this does nothing, so code that sets one builds either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
    ///
    /// static SHARDS: FailableLatch<()> = FailableLatch::<()>::new(3).with_label("shards-loaded");
    /// assert_eq!(SHARDS.count(), 3);
    /// ```
    #[cfg(not(loom))]
    #[must_use = "returns the latch with the label set"]
    #[cfg_attr(not(feature = "tracing"), allow(unused_mut))]
    pub const fn with_label(mut self, label: &'static str) -> Self {
        #[cfg(feature = "tracing")]
        {
            self.raw.label = label;
        }
        let _ = label;
        self
    }

    /// Names this latch in its `tracing` events and `Debug` output.
    #[cfg(loom)]
    #[must_use = "returns the latch with the label set"]
    #[cfg_attr(not(feature = "tracing"), allow(unused_mut))]
    pub fn with_label(mut self, label: &'static str) -> Self {
        #[cfg(feature = "tracing")]
        {
            self.raw.label = label;
        }
        let _ = label;
        self
    }

    /// The label set by [`with_label`](Self::with_label); empty if none was.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
    ///
    /// assert_eq!(FailableLatch::<()>::new(3).label(), "");
    /// assert_eq!(FailableLatch::<()>::new(3).with_label("ready").label(), "ready");
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn label(&self) -> &'static str {
        self.raw.label
    }

    /// The state machine underneath, for the types built on this one.
    pub(crate) fn raw_latch(&self) -> &RawLatch {
        &self.raw
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
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::new(2);
    /// assert_eq!(latch.fail("first"), Ok(()));
    /// assert_eq!(latch.fail("second"), Err("second"));
    /// assert_eq!(latch.error(), Some(&"first"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        self.fail_quietly(error)?;
        #[cfg(feature = "tracing")]
        crate::heap::trace::failed(self.raw.label, "failed", None, core::any::type_name::<E>());
        Ok(())
    }

    /// [`fail`](Self::fail) without its `tracing` event, for the types built on this one,
    /// which emit their own.
    pub(crate) fn fail_quietly(&self, error: E) -> Result<(), E> {
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

    /// The stored error; only called once `FAILED` is seen.
    fn stored_error(&self) -> &E {
        self.error
            .get()
            .expect("`FAILED` is published only after the error is stored")
    }
}

/// The waits: each waiter gets its own clone of the error, so the error is owned and, for
/// an `E: 'static`, `'static` (`?` into `anyhow::Error` or a boxed error works). A clone per
/// waiter, on the failure path only, keeps the latch free of reference counting, which
/// targets without atomic compare-and-swap (`thumbv6m`) lack; for an error that is costly
/// to clone, or not `Clone`, fail with an `Arc<YourError>`.
impl<E: Clone> FailableLatch<E> {
    /// Waits until the latch opens (`Ok`) or fails (`Err` with the first error).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// latch.count_down();
    /// assert_eq!(futures_lite::future::block_on(latch.wait()), Ok(()));
    /// ```
    pub fn wait(&self) -> Wait<'_, Self> {
        Wait::new(self)
    }

    /// Like [`wait`](Self::wait), for a latch in an [`Arc`](alloc::sync::Arc): the future
    /// owns a clone of the `Arc`, for a spawned `'static` task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = Arc::new(FailableLatch::new(1));
    /// let waiter = std::thread::spawn({
    ///     let wait = latch.wait_owned();
    ///     move || futures_lite::future::block_on(wait)
    /// });
    /// latch.fail("shard 3 is gone").unwrap();
    /// assert_eq!(waiter.join().unwrap(), Err("shard 3 is gone"));
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn wait_owned(self: &alloc::sync::Arc<Self>) -> WaitOwned<Self> {
        WaitOwned::new(self.clone())
    }

    /// Waits until the latch opens or fails, or `deadline` (any future) completes: `Ok`
    /// with how the latch ended, `Err(TimedOut)` if the deadline came first.
    ///
    /// A failure that happens before the deadline fires (or during its last poll) wins
    /// over the timeout.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] if the deadline came first; a timed-out wait changes nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{FailableLatch, TimedOut};
    ///
    /// let latch = FailableLatch::new(1);
    /// let result = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(result, Err(TimedOut));
    /// latch.fail("down").unwrap();
    /// let result = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(result, Ok(Err("down")));
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
    /// use tally_latch::FailableLatch;
    ///
    /// let latch = FailableLatch::new(1);
    /// latch.fail("boom").unwrap();
    /// assert_eq!(latch.wait_blocking(), Err("boom"));
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking(&self) -> Result<(), E> {
        self.wait().block()
    }

    /// Blocks the thread until the latch opens or fails, or `timeout` passes.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] if the timeout passed first; a timed-out wait changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_latch::{FailableLatch, TimedOut};
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert_eq!(latch.wait_blocking_timeout(Duration::from_millis(5)), Err(TimedOut));
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Result<(), E>, TimedOut> {
        self.wait().block_for(timeout)
    }
}

impl<E: Clone> Latch for FailableLatch<E> {
    type Output = Result<(), E>;
    type Timeout = TimedOut;
}

impl<E: Clone> Sealed for FailableLatch<E> {
    fn raw(&self) -> &RawLatch {
        self.raw_latch()
    }

    fn output(&self, terminal: Terminal) -> <Self as Latch>::Output {
        match terminal {
            Terminal::Open => Ok(()),
            Terminal::Failed => Err(self.stored_error().clone()),
        }
    }

    fn timed_out(&self) -> Option<<Self as Latch>::Timeout> {
        Some(TimedOut)
    }
}

impl<E> fmt::Debug for FailableLatch<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("FailableLatch");
        // The label shows only once set, so unlabelled latches print as before.
        #[cfg(feature = "tracing")]
        if !self.label().is_empty() {
            f.field("label", &self.label());
        }
        f.field("count", &self.count())
            .field("status", &self.raw.status().as_str())
            .finish()
    }
}
