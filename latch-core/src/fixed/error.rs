//! The errors of the fixed tier. None of them allocates: names are `&'static str` and a
//! timeout's pending set is a copy of the latch's state bits.

use core::fmt;

/// A wait found the latch still counting and every waiter slot held by another wait.
///
/// A fixed latch has `W` slots (its const parameter). A wait holds one only while it is
/// parked, so a later wait succeeds once another finishes or is dropped; on a latch that has
/// already ended every wait succeeds at once, slots or not.
///
/// # Examples
///
/// ```
/// use core::future::Future;
/// use core::pin::pin;
/// use core::task::{Context, Waker};
/// use tally_latch::fixed::{FixedLatch, NoWaiterSlot};
///
/// let latch = FixedLatch::<1>::new(1);
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut first = pin!(latch.wait());
/// assert!(first.as_mut().poll(&mut cx).is_pending()); // holds the only slot
/// let second = futures_lite::future::block_on(latch.wait());
/// assert_eq!(second, Err(NoWaiterSlot { slots: 1 }));
/// assert_eq!(second.unwrap_err().to_string(), "every waiter slot is taken (the latch has 1)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoWaiterSlot {
    /// How many slots the latch has.
    pub slots: usize,
}

impl fmt::Display for NoWaiterSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "every waiter slot is taken (the latch has {})",
            self.slots
        )
    }
}

/// A deadline passed before a [`FixedLatch`](super::FixedLatch) or
/// [`FixedFailableLatch`](super::FixedFailableLatch) opened.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedLatch, FixedTimedOut, FixedTimeoutError};
///
/// let latch = FixedLatch::<1>::new(3);
/// let result = futures_lite::future::block_on(latch.wait_until(async {}));
/// assert_eq!(result, Err(FixedTimeoutError::TimedOut(FixedTimedOut { remaining: 3 })));
/// assert_eq!(result.unwrap_err().to_string(), "timed out with 3 count-downs to go");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedTimedOut {
    /// The count when the deadline fired; never zero (an open latch is not a timeout).
    pub remaining: usize,
}

impl fmt::Display for FixedTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = if self.remaining == 1 {
            "count-down"
        } else {
            "count-downs"
        };
        write!(f, "timed out with {} {unit} to go", self.remaining)
    }
}

/// A deadline passed before a [`FixedTrackingLatch`](super::FixedTrackingLatch) opened; the
/// counters that had not reported.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedTimedWaitError, FixedTrackingLatch};
///
/// static READY: FixedTrackingLatch<3, ()> = FixedTrackingLatch::new(["timer", "radio", "sensor"]);
/// READY.count_down_for("radio").unwrap();
/// let Err(FixedTimedWaitError::TimedOut(pending)) =
///     futures_lite::future::block_on(READY.wait_until(async {}))
/// else {
///     unreachable!()
/// };
/// assert!(pending.names().eq(["timer", "sensor"]));
/// assert_eq!(pending.to_string(), "timed out waiting for: timer, sensor");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FixedStillPending<const N: usize> {
    pub(crate) names: [&'static str; N],
    /// Bit `i` set: `names[i]` had not reported. Never zero.
    pub(crate) pending: usize,
}

impl<const N: usize> FixedStillPending<N> {
    /// The names of the counters that had not reported, in the latch's order; at least one.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + Clone + '_ {
        pending_names(&self.names, self.pending)
    }

    /// How many counters had not reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::{FixedTimedWaitError, FixedTrackingLatch};
    ///
    /// let latch = FixedTrackingLatch::<2, ()>::new(["a", "b"]);
    /// match futures_lite::future::block_on(latch.wait_until(async {})) {
    ///     Err(FixedTimedWaitError::TimedOut(pending)) => assert_eq!(pending.len(), 2),
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    #[allow(clippy::len_without_is_empty)] // never empty
    pub fn len(&self) -> usize {
        self.pending.count_ones() as usize
    }
}

/// The names whose bit is set in `pending`, in order.
pub(crate) fn pending_names<'a>(
    names: &'a [&'static str],
    pending: usize,
) -> impl Iterator<Item = &'static str> + Clone + 'a {
    names
        .iter()
        .enumerate()
        .filter(move |&(i, _)| pending & (1 << i) != 0)
        .map(|(_, &name)| name)
}

impl<const N: usize> fmt::Debug for FixedStillPending<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FixedStillPending")
            .field(&NameList(self))
            .finish()
    }
}

struct NameList<'a, const N: usize>(&'a FixedStillPending<N>);

impl<const N: usize> fmt::Debug for NameList<'_, N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.names()).finish()
    }
}

impl<const N: usize> fmt::Display for FixedStillPending<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out waiting for: ")?;
        for (i, name) in self.names().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

/// How a timed wait on a [`FixedLatch`](super::FixedLatch) ended without the latch opening.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedLatch, FixedTimeoutError};
///
/// let latch = FixedLatch::<1>::new(1);
/// let error = futures_lite::future::block_on(latch.wait_until(async {})).unwrap_err();
/// assert!(matches!(error, FixedTimeoutError::TimedOut(t) if t.remaining == 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixedTimeoutError {
    /// The deadline came first.
    TimedOut(FixedTimedOut),
    /// Every waiter slot was taken.
    NoWaiterSlot(NoWaiterSlot),
}

impl fmt::Display for FixedTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TimedOut(timed_out) => fmt::Display::fmt(timed_out, f),
            Self::NoWaiterSlot(no_slot) => fmt::Display::fmt(no_slot, f),
        }
    }
}

/// How a wait on a [`FixedFailableLatch`](super::FixedFailableLatch) or
/// [`FixedTrackingLatch`](super::FixedTrackingLatch) ended without the latch opening.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedFailableLatch, FixedWaitError};
///
/// let latch = FixedFailableLatch::<&str, 1>::new(2);
/// latch.fail("crc error").unwrap();
/// let error = futures_lite::future::block_on(latch.wait()).unwrap_err();
/// assert_eq!(error, FixedWaitError::Failed(&"crc error"));
/// assert_eq!(error.to_string(), "latch failed: crc error");
/// ```
#[derive(PartialEq, Eq)]
pub enum FixedWaitError<'a, E> {
    /// The latch failed with this error.
    Failed(&'a E),
    /// Every waiter slot was taken.
    NoWaiterSlot(NoWaiterSlot),
}

impl<E> fmt::Debug for FixedWaitError<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(_) => f.debug_tuple("Failed").finish_non_exhaustive(),
            Self::NoWaiterSlot(no_slot) => f.debug_tuple("NoWaiterSlot").field(no_slot).finish(),
        }
    }
}

impl<E: fmt::Display> fmt::Display for FixedWaitError<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(error) => write!(f, "latch failed: {error}"),
            Self::NoWaiterSlot(no_slot) => fmt::Display::fmt(no_slot, f),
        }
    }
}

/// How a timed wait on a [`FixedFailableLatch`](super::FixedFailableLatch) (`T` is
/// [`FixedTimedOut`]) or a [`FixedTrackingLatch`](super::FixedTrackingLatch) (`T` is
/// [`FixedStillPending`]) ended without the latch opening.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedFailableLatch, FixedTimedWaitError, FixedTimedOut};
///
/// let latch = FixedFailableLatch::<&str, 1>::new(2);
/// let error = futures_lite::future::block_on(latch.wait_until(async {})).unwrap_err();
/// assert_eq!(error, FixedTimedWaitError::TimedOut(FixedTimedOut { remaining: 2 }));
/// ```
#[derive(PartialEq, Eq)]
pub enum FixedTimedWaitError<'a, E, T> {
    /// The latch failed with this error (before the deadline, or by the time it fired).
    Failed(&'a E),
    /// The deadline came first.
    TimedOut(T),
    /// Every waiter slot was taken.
    NoWaiterSlot(NoWaiterSlot),
}

impl<E, T: fmt::Debug> fmt::Debug for FixedTimedWaitError<'_, E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(_) => f.debug_tuple("Failed").finish_non_exhaustive(),
            Self::TimedOut(timed_out) => f.debug_tuple("TimedOut").field(timed_out).finish(),
            Self::NoWaiterSlot(no_slot) => f.debug_tuple("NoWaiterSlot").field(no_slot).finish(),
        }
    }
}

impl<E: fmt::Display, T: fmt::Display> fmt::Display for FixedTimedWaitError<'_, E, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed(error) => write!(f, "latch failed: {error}"),
            Self::TimedOut(timed_out) => fmt::Display::fmt(timed_out, f),
            Self::NoWaiterSlot(no_slot) => fmt::Display::fmt(no_slot, f),
        }
    }
}

impl<'a, E, T> From<FixedWaitError<'a, E>> for FixedTimedWaitError<'a, E, T> {
    fn from(error: FixedWaitError<'a, E>) -> Self {
        match error {
            FixedWaitError::Failed(error) => Self::Failed(error),
            FixedWaitError::NoWaiterSlot(no_slot) => Self::NoWaiterSlot(no_slot),
        }
    }
}

/// A count above [`MAX_COUNT`](super::MAX_COUNT) was refused.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedLatch, FixedCountTooLarge, MAX_COUNT};
///
/// let error = FixedLatch::<1>::try_new(MAX_COUNT + 1).unwrap_err();
/// assert_eq!(error, FixedCountTooLarge { count: MAX_COUNT + 1 });
/// assert_eq!(error.to_string(), "count 1073741824 exceeds the fixed latch maximum of 1073741823");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedCountTooLarge {
    /// The count that was asked for.
    pub count: usize,
}

impl fmt::Display for FixedCountTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "count {} exceeds the fixed latch maximum of {}",
            self.count,
            super::MAX_COUNT
        )
    }
}

/// A name given to [`FixedTrackingLatch::count_down_for`](super::FixedTrackingLatch::count_down_for)
/// that is not one of the latch's counters; nothing was counted.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedTrackingLatch, UnknownCounter};
///
/// let latch = FixedTrackingLatch::<1, ()>::new(["timer"]);
/// let error = latch.count_down_for("tmier").unwrap_err();
/// assert_eq!(error, UnknownCounter { name: "tmier" });
/// assert_eq!(error.to_string(), "no counter named `tmier`");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownCounter<'n> {
    /// The name that matched no counter.
    pub name: &'n str,
}

impl fmt::Display for UnknownCounter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no counter named `{}`", self.name)
    }
}

/// A tracking latch was built with a name listed twice (a latch for 2 with 3 names would
/// open early, or never).
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{DuplicateCounter, FixedTrackingLatch};
///
/// let error = FixedTrackingLatch::<2, ()>::try_new(["uart", "uart"]).unwrap_err();
/// assert_eq!(error, DuplicateCounter { name: "uart" });
/// assert_eq!(error.to_string(), "counter `uart` is listed twice");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DuplicateCounter {
    /// The name that appears more than once.
    pub name: &'static str,
}

impl fmt::Display for DuplicateCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "counter `{}` is listed twice", self.name)
    }
}

impl core::error::Error for NoWaiterSlot {}
impl core::error::Error for FixedTimedOut {}
impl<const N: usize> core::error::Error for FixedStillPending<N> {}
impl core::error::Error for FixedTimeoutError {}
impl<E: fmt::Display> core::error::Error for FixedWaitError<'_, E> {}
impl<E: fmt::Display, T: fmt::Display + fmt::Debug> core::error::Error
    for FixedTimedWaitError<'_, E, T>
{
}
impl core::error::Error for FixedCountTooLarge {}
impl core::error::Error for UnknownCounter<'_> {}
impl core::error::Error for DuplicateCounter {}
