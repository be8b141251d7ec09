//! [`LatchOf`]: the one type behind [`CountDownLatch`](crate::CountDownLatch),
//! [`FailableLatch`](crate::FailableLatch) and [`TrackingLatch`](crate::TrackingLatch), with
//! the methods they share written once.
//!
//! A latch is a [`RawLatch`] and a kind `K`: what that latch keeps besides its count (a
//! stored error, a table of counter names) and how its end reads to a waiter. The reads,
//! the label and every wait are generic over the kind; each kind's file adds its
//! constructors and its own verbs (`count_down`, `fail`, `count_down_for`, ...).

use core::fmt;

use crate::heap::futures::{Wait, WaitUntil};
use crate::heap::latch::{sealed::Sealed, Latch};
use crate::heap::raw::{RawLatch, Terminal};

/// A countdown latch of kind `K`: [`CountDownLatch`](crate::CountDownLatch) is
/// `LatchOf<CountDown>`, [`FailableLatch<E>`](crate::FailableLatch) is
/// `LatchOf<Failable<E>>` and [`TrackingLatch<E>`](crate::TrackingLatch) is
/// `LatchOf<Tracking<E>>` (the kinds are in [`kind`](crate::kind)).
///
/// The methods every latch has are written here once: [`count`](Self::count),
/// [`is_open`](Self::is_open), the label, and the waits ([`wait`](Self::wait),
/// [`wait_owned`](Self::wait_owned), [`wait_until`](Self::wait_until),
/// [`wait_blocking`](Self::wait_blocking),
/// [`wait_blocking_timeout`](Self::wait_blocking_timeout)), which resolve to the latch's
/// [`Latch::Output`] and time out with its [`Latch::Timeout`]. Constructors and the ways to
/// count down or fail are each kind's own; see the three latch types. Use those names:
/// `LatchOf` is how they share their code, and is rarely named itself.
///
/// # Examples
///
/// ```
/// use tally_latch::kind::{CountDown, Failable};
/// use tally_latch::{CountDownLatch, FailableLatch, LatchOf};
///
/// let plain: LatchOf<CountDown> = CountDownLatch::new(1);
/// let failable: LatchOf<Failable<&str>> = FailableLatch::new(1);
/// plain.count_down();
/// failable.fail("down").unwrap();
/// // The same `wait`, resolving to each latch's own output.
/// assert_eq!(futures_lite::future::block_on(plain.wait()), ());
/// assert_eq!(futures_lite::future::block_on(failable.wait()), Err("down"));
/// ```
pub struct LatchOf<K> {
    pub(crate) raw: RawLatch,
    pub(crate) kind: K,
}

/// The kind of a [`LatchOf`]: [`CountDown`](crate::kind::CountDown),
/// [`Failable<E>`](crate::kind::Failable) or [`Tracking<E>`](crate::kind::Tracking).
///
/// The trait is sealed: the three kinds are the only ones.
///
/// # Examples
///
/// ```
/// use tally_latch::kind::Kind;
/// use tally_latch::LatchOf;
///
/// // Generic over every latch, whatever it can end with.
/// fn progress<K: Kind>(latch: &LatchOf<K>) -> String {
///     format!("{} to go", latch.count())
/// }
///
/// assert_eq!(progress(&tally_latch::CountDownLatch::new(2)), "2 to go");
/// ```
pub trait Kind: sealed::Kind {}

impl<K: sealed::Kind> Kind for K {}

pub(crate) mod sealed {
    use core::fmt;

    use crate::heap::raw::{RawLatch, Terminal};

    /// What the shared methods need from every kind; private, so no type outside this crate
    /// is a kind.
    pub trait Kind {
        /// The latch's name in its `Debug` output.
        const NAME: &'static str;

        /// Adds the kind's fields to the latch's `Debug` output, after its count.
        fn fmt_fields(&self, raw: &RawLatch, f: &mut fmt::DebugStruct<'_, '_>);
    }

    /// How a kind's latch ends, for the waits (a kind that ends with an error needs it to be
    /// `Clone`, since every waiter gets its own).
    pub trait Ends: Kind {
        /// What a wait resolves to.
        type Output;

        /// What a timed wait reports when the deadline came first.
        type Timeout;

        /// The wait's output for how the latch ended.
        fn output(&self, terminal: Terminal) -> Self::Output;

        /// The timeout to report when the deadline came first and the latch had not ended
        /// when checked again; `None` if no timeout can be reported yet because the latch
        /// is in the middle of ending (a tracking latch whose every counter has reported,
        /// failing), so the wait goes on until it has ended.
        fn timed_out(&self, raw: &RawLatch) -> Option<Self::Timeout>;
    }
}

impl<K: sealed::Ends> Latch for LatchOf<K> {
    type Output = K::Output;
    type Timeout = K::Timeout;
}

impl<K: sealed::Ends> Sealed for LatchOf<K> {
    #[inline]
    fn raw(&self) -> &RawLatch {
        &self.raw
    }

    #[inline]
    fn output(&self, terminal: Terminal) -> <Self as Latch>::Output {
        self.kind.output(terminal)
    }

    fn timed_out(&self) -> Option<<Self as Latch>::Timeout> {
        self.kind.timed_out(&self.raw)
    }
}

/// The reads and the label, for every latch.
impl<K> LatchOf<K> {
    /// The number of count-downs still needed; for a
    /// [`TrackingLatch`](crate::TrackingLatch), the number of counters that have not
    /// reported.
    ///
    /// Frozen once the latch fails (each refused count-down still running on another thread
    /// can show it one lower until it returns).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// let latch = CountDownLatch::new(2);
    /// latch.count_down();
    /// assert_eq!(latch.count(), 1);
    ///
    /// let latch = FailableLatch::new(2);
    /// latch.count_down();
    /// latch.fail(()).unwrap();
    /// assert!(!latch.count_down()); // refused: the latch has failed
    /// assert_eq!(latch.count(), 1);
    ///
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw.count()
    }

    /// Whether the latch has opened: its count reached zero (for a
    /// [`TrackingLatch`](crate::TrackingLatch), every counter reported) before any failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert!(!latch.is_open());
    /// latch.count_down();
    /// assert!(latch.is_open());
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// latch.count_down();
    /// assert!(latch.is_open());
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.raw.terminal() == Some(Terminal::Open)
    }

    /// Names this latch in its `tracing` events (the `label` field) and its `Debug`
    /// output. Without the `tracing` feature the label is not kept (a
    /// [`CountDownLatch`](crate::CountDownLatch) stays two words) and this does nothing, so
    /// code that sets one builds either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// static SHARDS: CountDownLatch = CountDownLatch::new(3).with_label("shards-loaded");
    /// assert_eq!(SHARDS.count(), 3);
    ///
    /// static STARTUP: FailableLatch<()> = FailableLatch::<()>::new(3).with_label("startup");
    /// assert_eq!(STARTUP.count(), 3);
    ///
    /// let ready = TrackingLatch::new(["db", "http"]).unwrap().with_label("readiness");
    /// assert_eq!(ready.count(), 2);
    /// ```
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

    /// The label set by [`with_label`](Self::with_label); empty if none was.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// assert_eq!(CountDownLatch::new(3).label(), "");
    /// assert_eq!(CountDownLatch::new(3).with_label("ready").label(), "ready");
    /// assert_eq!(FailableLatch::<()>::new(3).label(), "");
    /// assert_eq!(FailableLatch::<()>::new(3).with_label("ready").label(), "ready");
    /// let ready = TrackingLatch::new(["a"]).unwrap().with_label("readiness");
    /// assert_eq!(ready.label(), "readiness");
    /// ```
    #[cfg(feature = "tracing")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
    pub fn label(&self) -> &'static str {
        self.raw.label
    }

    /// Counts down by one without a counter name, with its `tracing` event: the
    /// `count_down` of the latches that have one.
    #[inline]
    pub(crate) fn count_down_unnamed(&self) -> bool {
        self.raw.count_down_then(|remaining| {
            #[cfg(feature = "tracing")]
            crate::heap::trace::count_down(self.raw.label, remaining);
            let _ = remaining;
        })
    }
}

/// The waits, for every latch. Each resolves to how the latch ended, its [`Latch::Output`]:
///
/// | latch | a wait gets | a timed wait that expires gets |
/// |---|---|---|
/// | [`CountDownLatch`](crate::CountDownLatch) | `()` | [`TimedOut`](crate::TimedOut) |
/// | [`FailableLatch<E>`](crate::FailableLatch) | `Ok(())`, or `Err` with the first error | [`TimedOut`](crate::TimedOut) |
/// | [`TrackingLatch<E>`](crate::TrackingLatch) | `Ok(())`, or `Err` with the [`Failure`](crate::Failure) | [`StillPending`](crate::StillPending), naming the counters |
///
/// A timed wait resolves to `Result<Output, Timeout>`, as `tokio::time::timeout` does:
/// `Ok` with how the latch ended, `Err` with the timeout.
///
/// Each waiter gets its own clone of the error (so `E: Clone`), owned and, for an
/// `E: 'static`, `'static`: `?` carries it into `anyhow::Error` or a boxed error. A clone
/// per waiter, on the failure path only, keeps the latch free of reference counting, which
/// targets without atomic compare-and-swap (`thumbv6m`) lack; for an error that is costly to
/// clone, or not `Clone`, fail with an `Arc<YourError>`.
impl<K> LatchOf<K>
where
    Self: Latch,
{
    /// Waits until the latch ends: opens or (for the latches that can) fails.
    ///
    /// On a latch that has already ended the future is ready on its first poll, with one
    /// atomic load and no allocation.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing: the count stays, other waiters still wake.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// let latch = CountDownLatch::new(1);
    /// latch.count_down();
    /// block_on(latch.wait());
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// latch.count_down();
    /// assert_eq!(block_on(latch.wait()), Ok(()));
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// latch.count_down_for("a").unwrap();
    /// assert!(block_on(latch.wait()).is_ok());
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
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// let latch = Arc::new(CountDownLatch::new(1));
    /// let waiter = std::thread::spawn({
    ///     let wait = latch.wait_owned();
    ///     move || futures_lite::future::block_on(wait)
    /// });
    /// latch.count_down();
    /// waiter.join().unwrap();
    ///
    /// let latch = Arc::new(FailableLatch::new(1));
    /// let waiter = std::thread::spawn({
    ///     let wait = latch.wait_owned();
    ///     move || futures_lite::future::block_on(wait)
    /// });
    /// latch.fail("shard 3 is gone").unwrap();
    /// assert_eq!(waiter.join().unwrap(), Err("shard 3 is gone"));
    ///
    /// let ready = Arc::new(TrackingLatch::new(["http"]).unwrap());
    /// let gate = std::thread::spawn({
    ///     let wait = ready.wait_owned();
    ///     move || futures_lite::future::block_on(wait).is_ok()
    /// });
    /// ready.count_down_for("http").unwrap();
    /// assert!(gate.join().unwrap());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn wait_owned(self: &alloc::sync::Arc<Self>) -> crate::heap::futures::WaitOwned<Self> {
        crate::heap::futures::WaitOwned::new(self.clone())
    }

    /// Waits until the latch ends or `deadline` completes, whichever is first: `Ok` with
    /// how the latch ended, `Err` with the timeout if the deadline came first.
    ///
    /// `deadline` is any future (a runtime's sleep, an embedded timer). The latch is polled
    /// first, so an ended latch wins a tie, and it is checked once more after the deadline
    /// fires, so a latch that ended before then (a failure too, or a count-down made by
    /// the deadline's own poll) reports how it ended, not a timeout.
    ///
    /// # Errors
    ///
    /// The latch's [`Latch::Timeout`] if the deadline came first:
    /// [`TimedOut`](crate::TimedOut), or for a [`TrackingLatch`](crate::TrackingLatch) a
    /// [`StillPending`](crate::StillPending) naming exactly the counters whose count-down
    /// had not landed when the deadline fired (at least one: a latch that ended meanwhile
    /// reports how). A timed-out wait changes nothing.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_latch::{CountDownLatch, FailableLatch, TimedOut, TrackingLatch};
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert_eq!(block_on(latch.wait_until(async {})), Err(TimedOut));
    /// latch.count_down();
    /// assert_eq!(block_on(latch.wait_until(async {})), Ok(()));
    ///
    /// let latch = FailableLatch::new(1);
    /// assert_eq!(block_on(latch.wait_until(async {})), Err(TimedOut));
    /// latch.fail("down").unwrap();
    /// assert_eq!(block_on(latch.wait_until(async {})), Ok(Err("down")));
    ///
    /// let latch = TrackingLatch::new(["shard-6", "shard-7"]).unwrap();
    /// latch.count_down_for("shard-6").unwrap();
    /// let pending = block_on(latch.wait_until(async {})).unwrap_err();
    /// assert_eq!(pending.to_string(), "timed out waiting for: shard-7");
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> WaitUntil<'_, Self, D> {
        WaitUntil::new(self, deadline)
    }

    /// Blocks the thread until the latch ends, and returns how it ended.
    ///
    /// # Errors
    ///
    /// For the latches that can fail, the failure: the first error of a
    /// [`FailableLatch`](crate::FailableLatch), the [`Failure`](crate::Failure) of a
    /// [`TrackingLatch`](crate::TrackingLatch).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
    ///
    /// let latch = Arc::new(CountDownLatch::new(1));
    /// let counter = latch.clone();
    /// std::thread::spawn(move || counter.count_down());
    /// latch.wait_blocking();
    ///
    /// let latch = FailableLatch::new(1);
    /// latch.fail("boom").unwrap();
    /// assert_eq!(latch.wait_blocking(), Err("boom"));
    ///
    /// let latch = TrackingLatch::new(["a"]).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| latch.count_down_for("a").unwrap());
    ///     latch.wait_blocking().unwrap();
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn wait_blocking(&self) -> <Self as Latch>::Output {
        self.wait().block()
    }

    /// Blocks the thread until the latch ends or `timeout` passes: `Ok` with how the latch
    /// ended, `Err` with the timeout if it passed first. A timeout too long to represent as
    /// an `Instant` waits without one.
    ///
    /// # Errors
    ///
    /// As for [`wait_until`](Self::wait_until): the latch's [`Latch::Timeout`]. A timed-out
    /// wait changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_latch::{CountDownLatch, FailableLatch, TimedOut, TrackingLatch};
    ///
    /// let latch = CountDownLatch::new(1);
    /// assert_eq!(latch.wait_blocking_timeout(Duration::from_millis(10)), Err(TimedOut));
    /// assert_eq!(latch.count(), 1);
    ///
    /// let latch = FailableLatch::<()>::new(1);
    /// assert_eq!(latch.wait_blocking_timeout(Duration::from_millis(5)), Err(TimedOut));
    ///
    /// let latch = TrackingLatch::new(["slow"]).unwrap();
    /// let pending = latch.wait_blocking_timeout(Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(pending.to_string(), "timed out waiting for: slow");
    /// ```
    #[cfg(feature = "std")]
    #[allow(clippy::type_complexity)]
    pub fn wait_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<<Self as Latch>::Output, <Self as Latch>::Timeout> {
        self.wait().block_for(timeout)
    }
}

impl<K: Kind> fmt::Debug for LatchOf<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct(K::NAME);
        // The label shows only once set, so unlabelled latches print as before.
        #[cfg(feature = "tracing")]
        if !self.raw.label.is_empty() {
            f.field("label", &self.raw.label);
        }
        f.field("count", &self.count());
        self.kind.fmt_fields(&self.raw, &mut f);
        f.finish()
    }
}
