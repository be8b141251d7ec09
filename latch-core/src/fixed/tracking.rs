//! [`FixedTrackingLatch`]: a no-heap failable latch whose counters are a fixed set of names.

use core::fmt;

use super::error::{
    pending_names, DuplicateCounter, FixedStillPending, FixedTimedWaitError, FixedWaitError,
    NoWaiterSlot, UnknownCounter,
};
use super::failure::RawFailable;
use super::kind::{sealed::Sealed, FixedKind};
use super::raw::{Outcome, Raw, Status};
use super::slots::CheckWaiters;
use super::{FixedWait, FixedWaitUntil};

/// The most counters a [`FixedTrackingLatch`] can have: one state bit each, and the state
/// word keeps two flag bits of 32 on every target.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::MAX_COUNTERS;
///
/// assert_eq!(MAX_COUNTERS, 30);
/// ```
pub const MAX_COUNTERS: usize = 30;

/// Refuses `N > MAX_COUNTERS` when a tracking latch type is instantiated.
struct CheckCounters<const N: usize>;

impl<const N: usize> CheckCounters<N> {
    const OK: () = assert!(
        N <= MAX_COUNTERS,
        "a fixed tracking latch has at most tally_latch::fixed::MAX_COUNTERS counters"
    );
}

/// A failable latch with no heap, built from `N` distinct counter names known at compile
/// time, with `W` waiter slots.
///
/// Each name counts once: a duplicate report is harmless, an unknown name is an error, and
/// [`pending`](Self::pending) lists who has not reported. A wait whose deadline passes
/// names exactly the counters still pending ([`FixedStillPending`]), always at least one:
/// the pending set and the latch's status are one atomic word, read once.
///
/// The names can be a `const` array, or come from an enum:
///
/// ```
/// use tally_latch::fixed::FixedTrackingLatch;
///
/// #[derive(Clone, Copy)]
/// enum Part { Clock, Radio }
///
/// impl Part {
///     const ALL: [&'static str; 2] = ["clock", "radio"];
///     const fn name(self) -> &'static str {
///         Self::ALL[self as usize]
///     }
/// }
///
/// static READY: FixedTrackingLatch<2, ()> = FixedTrackingLatch::new(Part::ALL);
/// READY.count_down_for(Part::Radio.name()).unwrap();
/// assert!(READY.pending().eq([Part::Clock.name()]));
/// ```
///
/// # Limits
///
/// - **Counters:** at most [`MAX_COUNTERS`] (30), checked at compile time; duplicate names
///   make `new` panic (a compile-time error in a `static`) and `try_new` return
///   [`DuplicateCounter`].
/// - **Waiters:** as for [`FixedLatch`](super::FixedLatch): at most `W` parked waits, one more
///   gets [`FixedWaitError::NoWaiterSlot`] at once, and a finished wait holds no slot.
/// - **Interrupts** may call every method. [`count_down_for`](Self::count_down_for) compares
///   the name with each counter's (at most 30 string comparisons), then does one
///   compare-exchange.
///
/// There are no counter handles (the heap tier's [`Counter`](crate::Counter) fails the
/// latch when dropped) and no count-down observer; use
/// [`TrackingLatch`](crate::TrackingLatch) with `alloc` for those.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedTimedWaitError, FixedTrackingLatch};
///
/// static READY: FixedTrackingLatch<3, &str> =
///     FixedTrackingLatch::new(["timer", "radio", "sensor"]);
///
/// READY.count_down_for("timer").unwrap();
/// READY.count_down_for("radio").unwrap();
/// let error = futures_lite::future::block_on(READY.wait_until(async {})).unwrap_err();
/// assert_eq!(error.to_string(), "timed out waiting for: sensor");
/// ```
pub struct FixedTrackingLatch<const N: usize, E, const W: usize = 1> {
    names: [&'static str; N],
    /// Pending bit `i` set: `names[i]` has not reported.
    inner: RawFailable<E, W>,
}

impl<const N: usize, E, const W: usize> FixedTrackingLatch<N, E, W> {
    crate::sync::const_fn! {
        /// A latch that opens once every named counter has reported; `N == 0` starts open.
        ///
        /// # Panics
        ///
        /// If a name is listed twice (in a `static`, a compile-time error). `N` above
        /// [`MAX_COUNTERS`] and `W` outside `1..=MAX_WAITERS` are always compile-time
        /// errors.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::fixed::FixedTrackingLatch;
        ///
        /// static READY: FixedTrackingLatch<2, (), 2> = FixedTrackingLatch::new(["a", "b"]);
        /// assert_eq!(READY.count(), 2);
        /// ```
        pub fn new(names: [&'static str; N]) -> Self {
            if find_duplicate(&names).is_some() {
                panic!("a fixed tracking latch's counter names must be distinct");
            }
            Self::build(names)
        }
    }

    crate::sync::const_fn! {
        /// A latch over `names`, or an error naming a name listed twice.
        ///
        /// # Errors
        ///
        /// [`DuplicateCounter`] if a name appears more than once.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::fixed::{DuplicateCounter, FixedTrackingLatch};
        ///
        /// assert!(FixedTrackingLatch::<2, ()>::try_new(["a", "b"]).is_ok());
        /// let error = FixedTrackingLatch::<2, ()>::try_new(["a", "a"]).unwrap_err();
        /// assert_eq!(error, DuplicateCounter { name: "a" });
        /// ```
        pub fn try_new(names: [&'static str; N]) -> Result<Self, DuplicateCounter> {
            if let Some(name) = find_duplicate(&names) {
                return Err(DuplicateCounter { name });
            }
            Ok(Self::build(names))
        }
    }

    crate::sync::const_fn! {
        fn build(names: [&'static str; N]) -> Self {
            let () = CheckCounters::<N>::OK;
            let () = CheckWaiters::<W>::OK;
            Self {
                names,
                // N <= 30: every counter's bit set.
                inner: RawFailable::new((1 << N) - 1),
            }
        }
    }

    fn raw(&self) -> &Raw {
        self.inner.raw()
    }

    /// The number of counters that have not reported; frozen once a failure is claimed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<2, ()>::new(["a", "b"]);
    /// latch.count_down_for("a").unwrap();
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw().pending().count_ones() as usize
    }

    /// Whether every counter has reported (before any failure).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<1, ()>::new(["a"]);
    /// latch.count_down_for("a").unwrap();
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
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<1, &str>::new(["a"]);
    /// latch.fail("no clock").unwrap();
    /// assert_eq!(latch.error(), Some(&"no clock"));
    /// ```
    pub fn error(&self) -> Option<&E> {
        self.inner.error()
    }

    /// How many waits are parked on the latch right now (at most `W`).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<1, ()>::new(["a"]);
    /// assert_eq!(latch.waiting(), 0);
    /// ```
    pub fn waiting(&self) -> usize {
        self.raw().waiting()
    }

    /// Every counter name, in the order the latch was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<2, ()>::new(["b", "a"]);
    /// assert_eq!(latch.names(), &["b", "a"]);
    /// ```
    pub fn names(&self) -> &[&'static str; N] {
        &self.names
    }

    /// The counters that have not reported, in the order the latch was built with (one
    /// snapshot of the state word).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<3, ()>::new(["a", "b", "c"]);
    /// latch.count_down_for("b").unwrap();
    /// assert!(latch.pending().eq(["a", "c"]));
    /// ```
    pub fn pending(&self) -> impl Iterator<Item = &'static str> + Clone + '_ {
        pending_names(&self.names, self.raw().pending())
    }

    /// Reports for the counter called `name`; the last report wakes every parked waiter.
    /// Returns whether this call counted: `false` for a duplicate report (harmless) or once
    /// a failure has been claimed.
    ///
    /// # Errors
    ///
    /// [`UnknownCounter`] if no counter has this name; nothing is counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::{FixedTrackingLatch, UnknownCounter};
    ///
    /// let latch = FixedTrackingLatch::<2, ()>::new(["a", "b"]);
    /// assert_eq!(latch.count_down_for("a"), Ok(true));
    /// assert_eq!(latch.count_down_for("a"), Ok(false)); // duplicate: harmless
    /// assert_eq!(latch.count_down_for("z"), Err(UnknownCounter { name: "z" }));
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count_down_for<'n>(&self, name: &'n str) -> Result<bool, UnknownCounter<'n>> {
        let Some(index) = self.names.iter().position(|&known| known == name) else {
            return Err(UnknownCounter { name });
        };
        let bit = 1 << index;
        Ok(self
            .raw()
            .settle(|pending| (pending & bit != 0).then_some(pending & !bit)))
    }

    /// Fails the latch with `error`, waking every parked waiter.
    ///
    /// # Errors
    ///
    /// Hands `error` back if the latch had already opened or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<1, &str>::new(["a"]);
    /// assert_eq!(latch.fail("shutting down"), Ok(()));
    /// assert_eq!(latch.fail("again"), Err("again"));
    /// ```
    pub fn fail(&self, error: E) -> Result<(), E> {
        self.inner.fail(error)
    }

    /// Waits until every counter has reported (`Ok`) or the latch fails.
    ///
    /// # Errors
    ///
    /// [`FixedWaitError::Failed`], or [`FixedWaitError::NoWaiterSlot`] if the latch is
    /// still counting and all `W` slots are taken.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<1, ()>::new(["a"]);
    /// latch.count_down_for("a").unwrap();
    /// assert_eq!(futures_lite::future::block_on(latch.wait()), Ok(()));
    /// ```
    pub fn wait(&self) -> FixedWait<'_, Self> {
        FixedWait::new(self)
    }

    /// Waits until the latch opens or fails, or `deadline` (any future) completes. After
    /// the deadline fires the latch is checked once more; a timeout names the counters
    /// pending at that check, at least one.
    ///
    /// # Errors
    ///
    /// [`FixedTimedWaitError::Failed`], [`FixedTimedWaitError::TimedOut`] with a
    /// [`FixedStillPending`], or [`FixedTimedWaitError::NoWaiterSlot`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedTrackingLatch;
    ///
    /// let latch = FixedTrackingLatch::<2, ()>::new(["a", "b"]);
    /// latch.count_down_for("a").unwrap();
    /// // The deadline reports the last counter as it fires: the latch has opened.
    /// let deadline = async { latch.count_down_for("b").unwrap(); };
    /// assert_eq!(futures_lite::future::block_on(latch.wait_until(deadline)), Ok(()));
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> FixedWaitUntil<'_, Self, D> {
        FixedWaitUntil::new(self, deadline)
    }
}

/// The first name that appears twice in `names`, if any; `const` for `new` in a `static`.
const fn find_duplicate(names: &[&'static str]) -> Option<&'static str> {
    let mut i = 0;
    while i < names.len() {
        let mut j = i + 1;
        while j < names.len() {
            if same(names[i], names[j]) {
                return Some(names[i]);
            }
            j += 1;
        }
        i += 1;
    }
    None
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl<const N: usize, E, const W: usize> FixedKind for FixedTrackingLatch<N, E, W> {
    type Output<'a>
        = Result<(), FixedWaitError<'a, E>>
    where
        E: 'a;
    type Timed<'a>
        = Result<(), FixedTimedWaitError<'a, E, FixedStillPending<N>>>
    where
        E: 'a;
}

impl<const N: usize, E, const W: usize> Sealed for FixedTrackingLatch<N, E, W> {
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
        debug_assert_ne!(pending, 0, "a counting latch has a pending counter");
        Err(FixedTimedWaitError::TimedOut(FixedStillPending {
            names: self.names,
            pending,
        }))
    }
}

impl<const N: usize, E, const W: usize> fmt::Debug for FixedTrackingLatch<N, E, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Pending<'a, const N: usize>(&'a [&'static str; N], usize);
        impl<const N: usize> fmt::Debug for Pending<'_, N> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list()
                    .entries(pending_names(self.0, self.1))
                    .finish()
            }
        }
        let status = match self.raw().status() {
            Status::Open => "open",
            Status::Failed => "failed",
            Status::Counting { .. } => "counting",
        };
        f.debug_struct("FixedTrackingLatch")
            .field("status", &status)
            .field("pending", &Pending(&self.names, self.raw().pending()))
            .field("waiting", &self.waiting())
            .field("slots", &W)
            .finish()
    }
}
