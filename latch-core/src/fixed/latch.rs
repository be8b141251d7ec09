//! [`FixedLatch`]: a countdown latch with no heap, for `static`s and interrupt handlers.

use core::fmt;

use super::error::{FixedCountTooLarge, FixedTimedOut, FixedTimeoutError, NoWaiterSlot};
use super::kind::{sealed::Sealed, FixedKind};
use super::raw::{Outcome, Raw, RawFixed, Status, MAX_COUNT};
use super::slots::CheckWaiters;
use super::waker::AtomicWaker;
use super::{FixedWait, FixedWaitUntil};

/// A one-shot countdown latch that needs no allocator, with `W` waiter slots.
///
/// `new` is a `const fn`, so the latch lives in a `static`; the latch is its whole storage
/// (one state word, one claim word and `W` `atomic-waker` cells). Counters call
/// [`count_down`](Self::count_down); the move to zero wakes every parked waiter. Everything
/// a counter did before its `count_down` happens-before the return of the waits it releases.
///
/// # Limits
///
/// - **Waiters:** at most `W` waits (1 by default, up to
///   [`MAX_WAITERS`](super::MAX_WAITERS)) can be parked at once. One more, while the latch is
///   still counting, returns [`NoWaiterSlot`] on its first poll; it never replaces another
///   waiter's waker and never hangs. A wait holds its slot only while parked: once it has
///   returned `Ready` (in any form, timed or not, dropped or not) the slot is free again,
///   and waits on an ended latch need no slot at all.
/// - **Count:** at most [`MAX_COUNT`](super::MAX_COUNT).
/// - **Interrupts** may call every method: `count_down`, `count`, `is_open`, `waiting`, and
///   polling or dropping a wait. None blocks, takes a lock or allocates; the opening
///   `count_down` runs the `W` wakers on the interrupt's stack (embassy's wakers only mark a
///   task ready). A waker that calls back into the latch is fine: the latch has ended
///   before any waker runs, and nothing is locked.
///
/// Use [`CountDownLatch`](crate::CountDownLatch) (with `alloc`) for any number of waiters.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::FixedLatch;
///
/// /// Opens after three ticks of a timer interrupt.
/// static BOOT: FixedLatch = FixedLatch::new(3);
///
/// fn on_tick() {
///     BOOT.count_down();
/// }
///
/// for _ in 0..3 {
///     on_tick();
/// }
/// assert_eq!(futures_lite::future::block_on(BOOT.wait()), Ok(()));
/// ```
pub struct FixedLatch<const W: usize = 1> {
    raw: RawFixed<[AtomicWaker; W]>,
}

impl<const W: usize> FixedLatch<W> {
    crate::sync::const_fn! {
        /// A latch that opens after `count` count-downs; `new(0)` starts open.
        ///
        /// # Panics
        ///
        /// If `count` exceeds [`MAX_COUNT`](super::MAX_COUNT) (in a `static`, a compile-time
        /// error). `W` outside `1..=MAX_WAITERS` is always a compile-time error.
        ///
        /// # Examples
        ///
        /// ```
        /// use tally_latch::fixed::FixedLatch;
        ///
        /// static TWO_WAITERS: FixedLatch<2> = FixedLatch::new(5);
        /// assert_eq!(TWO_WAITERS.count(), 5);
        /// ```
        pub fn new(count: usize) -> Self {
            let () = CheckWaiters::<W>::OK;
            assert!(count <= MAX_COUNT, "count exceeds tally_latch::fixed::MAX_COUNT");
            Self {
                raw: RawFixed::new(count),
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
        /// use tally_latch::fixed::{FixedLatch, MAX_COUNT};
        ///
        /// assert!(FixedLatch::<1>::try_new(MAX_COUNT + 1).is_err());
        /// ```
        pub fn try_new(count: usize) -> Result<Self, FixedCountTooLarge> {
            if count > MAX_COUNT {
                return Err(FixedCountTooLarge { count });
            }
            Ok(Self::new(count))
        }
    }

    fn raw(&self) -> &Raw {
        &self.raw
    }

    /// The number of count-downs still needed.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedLatch;
    ///
    /// let latch = FixedLatch::<1>::new(2);
    /// latch.count_down();
    /// assert_eq!(latch.count(), 1);
    /// ```
    pub fn count(&self) -> usize {
        self.raw().pending()
    }

    /// Whether the count has reached zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedLatch;
    ///
    /// let latch = FixedLatch::<1>::new(1);
    /// assert!(!latch.is_open());
    /// latch.count_down();
    /// assert!(latch.is_open());
    /// ```
    pub fn is_open(&self) -> bool {
        self.raw().status() == Status::Open
    }

    /// How many waits are parked on the latch right now, each holding one of the `W` slots.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::future::Future;
    /// use core::pin::pin;
    /// use core::task::{Context, Waker};
    /// use tally_latch::fixed::FixedLatch;
    ///
    /// let latch = FixedLatch::<2>::new(1);
    /// let mut wait = pin!(latch.wait());
    /// assert!(wait.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_pending());
    /// assert_eq!(latch.waiting(), 1);
    /// latch.count_down();
    /// assert!(wait.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_ready());
    /// assert_eq!(latch.waiting(), 0); // a finished wait holds no slot
    /// ```
    pub fn waiting(&self) -> usize {
        self.raw().waiting()
    }

    /// Counts down by one and, on the move to zero, wakes every parked waiter.
    ///
    /// Never blocks, never allocates, never goes below zero; callable from an interrupt
    /// handler. Returns whether this call counted: `false` once the latch is open.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedLatch;
    ///
    /// let latch = FixedLatch::<1>::new(1);
    /// assert!(latch.count_down());
    /// assert!(!latch.count_down());
    /// ```
    #[inline]
    pub fn count_down(&self) -> bool {
        self.raw().settle(|pending| Some(pending - 1))
    }

    /// Waits until the latch opens.
    ///
    /// # Errors
    ///
    /// [`NoWaiterSlot`] if the latch is still counting and all `W` slots are held by other
    /// waits; the latch is unchanged.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::FixedLatch;
    ///
    /// let latch = FixedLatch::<1>::new(1);
    /// latch.count_down();
    /// assert_eq!(futures_lite::future::block_on(latch.wait()), Ok(()));
    /// ```
    pub fn wait(&self) -> FixedWait<'_, Self> {
        FixedWait::new(self)
    }

    /// Waits until the latch opens or `deadline` (any future: an `embassy_time::Timer`, a
    /// runtime's sleep) completes. After the deadline fires the latch is checked once more,
    /// so an open latch always wins.
    ///
    /// # Errors
    ///
    /// [`FixedTimeoutError::TimedOut`] with the count left, or
    /// [`FixedTimeoutError::NoWaiterSlot`]; the latch is unchanged.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives its slot back and changes nothing else.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::fixed::{FixedLatch, FixedTimedOut, FixedTimeoutError};
    ///
    /// let latch = FixedLatch::<1>::new(1);
    /// let result = futures_lite::future::block_on(latch.wait_until(async {}));
    /// assert_eq!(result, Err(FixedTimeoutError::TimedOut(FixedTimedOut { remaining: 1 })));
    /// assert_eq!(latch.waiting(), 0);
    /// ```
    pub fn wait_until<D: core::future::Future>(&self, deadline: D) -> FixedWaitUntil<'_, Self, D> {
        FixedWaitUntil::new(self, deadline)
    }
}

impl<const W: usize> FixedKind for FixedLatch<W> {
    type Output<'a> = Result<(), NoWaiterSlot>;
    type Timed<'a> = Result<(), FixedTimeoutError>;
}

impl<const W: usize> Sealed for FixedLatch<W> {
    fn raw(&self) -> &Raw {
        &self.raw
    }

    fn output(&self, outcome: Outcome, slots: usize) -> <Self as FixedKind>::Output<'_> {
        match outcome {
            Outcome::NoSlot => Err(NoWaiterSlot { slots }),
            Outcome::Open | Outcome::Failed => {
                debug_assert_eq!(outcome, Outcome::Open, "a plain latch cannot fail");
                Ok(())
            }
        }
    }

    fn in_time<'a>(output: <Self as FixedKind>::Output<'a>) -> <Self as FixedKind>::Timed<'a>
    where
        Self: 'a,
    {
        output.map_err(FixedTimeoutError::NoWaiterSlot)
    }

    fn timed_out(&self, pending: usize) -> <Self as FixedKind>::Timed<'_> {
        Err(FixedTimeoutError::TimedOut(FixedTimedOut {
            remaining: pending,
        }))
    }
}

impl<const W: usize> fmt::Debug for FixedLatch<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixedLatch")
            .field("count", &self.count())
            .field("open", &self.is_open())
            .field("waiting", &self.waiting())
            .field("slots", &W)
            .finish()
    }
}
