//! [`CountDownLatch`]: opens once a fixed number of events have happened.

use core::fmt;

use crate::heap::error::{CountTooLarge, TimedOut};
use crate::heap::latch_of::{sealed, LatchOf};
use crate::heap::raw::{RawLatch, Terminal};

/// A one-shot latch that opens when its count reaches zero.
///
/// Counters call [`count_down`](CountDownLatch::count_down), which never blocks; any number
/// of tasks or threads [`wait`](CountDownLatch::wait), and all are released together on the
/// move to zero. Everything a counter did before its `count_down` happens-before the return
/// of the waits it releases. The latch never resets.
///
/// `new` is a `const fn`, so a latch can live in a `static`. A negative count cannot be
/// written (`usize`); a count above [`MAX_COUNT`](crate::MAX_COUNT) is refused by
/// [`try_new`](CountDownLatch::try_new).
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
pub type CountDownLatch = LatchOf<CountDown>;

/// The kind of a [`CountDownLatch`]: a count and nothing else, so the latch can only open.
///
/// # Examples
///
/// ```
/// use tally_latch::{kind::CountDown, CountDownLatch, LatchOf};
///
/// let latch: LatchOf<CountDown> = CountDownLatch::new(1);
/// assert_eq!(latch.count(), 1);
/// ```
#[derive(Debug)]
pub struct CountDown(());

impl LatchOf<CountDown> {
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
                kind: CountDown(()),
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
        self.count_down_unnamed()
    }
}

impl sealed::Kind for CountDown {
    const NAME: &'static str = "CountDownLatch";

    fn fmt_fields(&self, raw: &RawLatch, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("open", &raw.terminal().is_some());
    }
}

impl sealed::Ends for CountDown {
    type Output = ();
    type Timeout = TimedOut;

    #[inline]
    fn output(&self, terminal: Terminal) {
        debug_assert_eq!(terminal, Terminal::Open, "a count-down latch cannot fail");
    }

    fn timed_out(&self, _: &RawLatch) -> Option<Self::Timeout> {
        Some(TimedOut)
    }
}
