//! [`CountDownLatch`]: opens once a fixed number of events have happened.

use core::fmt;

use crate::heap::error::{CountTooLarge, TimedOut};
use crate::heap::futures::{Wait, WaitUntil};
use crate::heap::latch::{sealed::Sealed, Latch};
use crate::heap::raw::{RawLatch, Terminal};

/// A one-shot latch that opens when its count reaches zero.
///
/// Counters call [`count_down`](Self::count_down), which never blocks; any number of tasks
/// or threads [`wait`](Self::wait), and all are released together on the move to zero.
/// Everything a counter did before its `count_down` happens-before the return of the waits
/// it releases. The latch never resets.
///
/// `new` is a `const fn`, so a latch can live in a `static`. A negative count cannot be
/// written (`usize`); a count above [`MAX_COUNT`](crate::MAX_COUNT) is refused by [`try_new`](Self::try_new).
///
/// **Latch, barrier or task tracker?** A latch counts *events*: the counters and the waiters
/// are different tasks, and counters never wait. `async_lock::Barrier` makes the *same* N
/// tasks wait for each other and cycles for repeated phases. If the events are simply the
/// completion of tasks you spawned, a join set or `tokio_util::task::TaskTracker` already
/// waits for them. A latch earns its place when the events are not task completions: N
/// components becoming ready while they keep running, N acknowledgements arriving.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tally_latch::CountDownLatch;
///
/// let latch = Arc::new(CountDownLatch::new(3));
/// let shards: Vec<_> = (0..3)
///     .map(|_| {
///         let latch = latch.clone();
///         std::thread::spawn(move || {
///             // ... load a shard ...
///             latch.count_down();
///         })
///     })
///     .collect();
/// futures_lite::future::block_on(latch.wait());
/// assert!(latch.is_open());
/// # for shard in shards { shard.join().unwrap(); }
/// ```
pub struct CountDownLatch {
    raw: RawLatch,
}

impl CountDownLatch {
    crate::sync::const_fn! {
        /// A latch that opens after `count` count-downs; `new(0)` starts open.
        ///
        /// # Panics
        ///
        /// If `count` exceeds [`MAX_COUNT`](crate::MAX_COUNT); use [`try_new`](Self::try_new) to get an error
        /// instead. In a `static` this is a compile-time error.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::CountDownLatch;
        ///
        /// static READY: CountDownLatch = CountDownLatch::new(2);
        /// assert_eq!(READY.count(), 2);
        /// assert!(CountDownLatch::new(0).is_open());
        /// ```
        pub fn new(count: usize) -> Self {
            Self {
                raw: RawLatch::new(count),
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
        /// use tally_latch::{CountDownLatch, MAX_COUNT};
        ///
        /// assert!(CountDownLatch::try_new(MAX_COUNT).is_ok());
        /// assert!(CountDownLatch::try_new(MAX_COUNT + 1).is_err());
        /// ```
        pub fn try_new(count: usize) -> Result<Self, CountTooLarge> {
            match RawLatch::try_count(count) {
                Ok(count) => Ok(Self::new(count)),
                Err(error) => Err(error),
            }
        }
    }

    /// The number of count-downs still needed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = CountDownLatch::new(2);
    /// latch.count_down();
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw.count()
    }

    /// Whether the count has reached zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert!(!latch.is_open());
    /// latch.count_down();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.raw.terminal().is_some()
    }

    /// Counts down by one and, on the move to zero, releases every waiter.
    ///
    /// Never blocks and never goes below zero. Returns whether this call counted: `false`
    /// once the latch is open, so a duplicate report is harmless and visible.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down()); // already open: nothing to count
    /// assert_eq!(latch.count(), 0);
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
    /// use tally_latch::CountDownLatch;
    ///
    /// static SHARDS: CountDownLatch = CountDownLatch::new(3).with_label("shards-loaded");
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
    /// use tally_latch::CountDownLatch;
    ///
    /// assert_eq!(CountDownLatch::new(3).label(), "");
    /// assert_eq!(CountDownLatch::new(3).with_label("ready").label(), "ready");
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn label(&self) -> &'static str {
        self.raw.label
    }

    /// Waits until the latch opens.
    ///
    /// On an open latch the future is ready on its first poll, with one atomic load and no
    /// allocation.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing: the count stays, other waiters still wake.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = CountDownLatch::new(1);
    /// latch.count_down();
    /// futures_lite::future::block_on(latch.wait());
    /// ```
    pub fn wait(&self) -> Wait<'_, Self> {
        Wait::new(self)
    }

    /// Like [`wait`](Self::wait), for a latch in an [`Arc`](alloc::sync::Arc): the future
    /// owns a clone of the `Arc`, so it can move into a spawned `'static` task.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = Arc::new(CountDownLatch::new(1));
    /// let waiter = std::thread::spawn({
    ///     let wait = latch.wait_owned();
    ///     move || futures_lite::future::block_on(wait)
    /// });
    /// latch.count_down();
    /// waiter.join().unwrap();
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn wait_owned(self: &alloc::sync::Arc<Self>) -> crate::heap::futures::WaitOwned<Self> {
        crate::heap::futures::WaitOwned::new(self.clone())
    }

    /// Waits until the latch opens or `deadline` completes, whichever is first.
    ///
    /// `deadline` is any future (a runtime's sleep, an embedded timer); the latch is polled
    /// first, so an open latch wins a tie.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] if the deadline came first. The count is unchanged.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, TimedOut};
    ///
    /// let latch = CountDownLatch::new(1);
    /// let timed_out = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(timed_out, Err(TimedOut));
    /// latch.count_down();
    /// assert_eq!(futures_lite::future::block_on(latch.wait_until(async {})), Ok(()));
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> WaitUntil<'_, Self, D> {
        WaitUntil::new(self, deadline)
    }

    /// Blocks the thread until the latch opens.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::CountDownLatch;
    ///
    /// let latch = Arc::new(CountDownLatch::new(1));
    /// let counter = latch.clone();
    /// std::thread::spawn(move || counter.count_down());
    /// latch.wait_blocking();
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking(&self) {
        self.wait().block()
    }

    /// Blocks the thread until the latch opens or `timeout` passes.
    ///
    /// # Errors
    ///
    /// [`TimedOut`] if the timeout passed first. The count is unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_latch::{CountDownLatch, TimedOut};
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert_eq!(latch.wait_blocking_timeout(Duration::from_millis(10)), Err(TimedOut));
    /// assert_eq!(latch.count(), 1);
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking_timeout(&self, timeout: core::time::Duration) -> Result<(), TimedOut> {
        self.wait().block_for(timeout)
    }
}

impl Latch for CountDownLatch {
    type Output = ();
    type Timeout = TimedOut;
}

impl Sealed for CountDownLatch {
    fn raw(&self) -> &RawLatch {
        &self.raw
    }

    fn output(&self, terminal: Terminal) {
        debug_assert_eq!(terminal, Terminal::Open, "a count-down latch cannot fail");
    }

    fn timed_out(&self) -> Option<<Self as Latch>::Timeout> {
        Some(TimedOut)
    }
}

impl fmt::Debug for CountDownLatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("CountDownLatch");
        // The label shows only once set, so unlabelled latches print as before.
        #[cfg(feature = "tracing")]
        if !self.label().is_empty() {
            f.field("label", &self.label());
        }
        f.field("count", &self.count())
            .field("open", &self.is_open())
            .finish()
    }
}
