//! The one state machine under every latch, and the one wait loop over it.
//!
//! [`CountDownLatch`](crate::CountDownLatch), [`FailableLatch`](crate::FailableLatch) and
//! [`TrackingLatch`](crate::TrackingLatch) are thin types over [`RawLatch`], so the
//! counting, failing and waking rules live here once.

use core::fmt;
use core::task::{Context, Poll};

use alloc::boxed::Box;
use once_cell::race::OnceBox;

use crate::heap::error::CountTooLarge;
use crate::heap::waiters::{Parked, Waiters};
use crate::sync::atomic::{AtomicUsize, Ordering};

/// Some wait has parked (or is about to), so the terminal transition must wake the
/// waiters. Without it, opening a latch nobody waited on takes no lock.
const WAITING: usize = 1;
/// The error is stored: the latch has failed for good (set only together with `FAILING`).
const FAILED: usize = 1 << 2;
/// The count lives above the flag bits (bit 1 is unused).
const SHIFT: u32 = 3;
/// One count, in state units.
const ONE: usize = 1 << SHIFT;
/// The count is stored biased by `BIAS`, so that a count-down which takes an open latch
/// below zero (and puts it back) never wraps: an open latch with such dips in flight reads
/// `BIAS - k * ONE`, still below every counting state.
const BIAS: usize = 1 << (usize::BITS - 2);
/// `fail` has claimed the latch: the count is frozen and the error is being stored. The
/// top bit, above every biased count, so that a failing latch (even with refused
/// count-downs dipping its count) is above every counting state.
const FAILING: usize = 1 << (usize::BITS - 1);
/// The lowest counting state: a count of one.
const COUNTING_FROM: usize = BIAS + ONE;

/// The largest count a latch can start with: `usize::MAX >> 5`, since the low three bits
/// of the state word hold flags, the top bit marks a failing latch, and the bit below it
/// biases the count so that "still counting" is one range compare.
///
/// # Examples
///
/// ```
/// use tally_latch::{CountDownLatch, MAX_COUNT};
///
/// assert_eq!(MAX_COUNT, usize::MAX >> 5);
/// assert_eq!(CountDownLatch::try_new(MAX_COUNT).unwrap().count(), MAX_COUNT);
/// assert!(CountDownLatch::try_new(MAX_COUNT + 1).is_err());
/// ```
pub const MAX_COUNT: usize = usize::MAX >> (SHIFT + 2);

/// How a latch ended: every latch ends in exactly one of these, once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// The count reached zero.
    Open,
    /// A failure was recorded first.
    Failed,
}

/// What a latch is doing now: still counting, failing (claimed, error not yet stored), or
/// ended one way or the other. Every latch type's `Debug` prints this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Above zero, not failed.
    Counting,
    /// A failure has claimed the latch and is being stored.
    Failing,
    /// The count reached zero.
    Open,
    /// A failure was recorded first.
    Failed,
}

impl Status {
    /// The lowercase word `Debug` prints.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Counting => "counting",
            Self::Failing => "failing",
            Self::Open => "open",
            Self::Failed => "failed",
        }
    }
}

/// The count, the flags and the waiters of one latch.
pub struct RawLatch {
    /// `FAILING | (BIAS + count << SHIFT) | FAILED | WAITING`. `FAILING` and `FAILED` are
    /// only ever set, never cleared. The count only goes down, except that a count-down
    /// which finds the latch open or failing puts back the one it took: while it does, the
    /// count may be one below its final value per such call in flight (below zero, it dips
    /// under `BIAS`), and every reader treats that as the final value. So "zero" and
    /// "failed" are final. Counting states are exactly `COUNTING_FROM..FAILING`.
    state: AtomicUsize,
    /// Woken once, all together, by the transition to open or failed. Allocated by the
    /// first wait that parks (one allocation per latch, none per wait), so a latch nobody
    /// waits on allocates nothing.
    waiters: OnceBox<Waiters>,
    /// The user's name for this latch, in its `tracing` events, its metrics and `Debug`;
    /// empty if unset. Kept only under the `tracing` or `metrics` feature, so that a latch
    /// is two words without them.
    #[cfg(any(feature = "tracing", feature = "metrics"))]
    pub(crate) label: &'static str,
}

impl RawLatch {
    crate::sync::const_fn! {
        /// `count`, or an error if it exceeds [`MAX_COUNT`]: the one check behind every
        /// latch type's `new` and `try_new`. (It hands back the count, not a `RawLatch`: a
        /// `const fn` cannot yet take a `Result` holding a type with drop glue apart.)
        pub(crate) fn try_count(count: usize) -> Result<usize, CountTooLarge> {
            if count > MAX_COUNT {
                return Err(CountTooLarge { count });
            }
            Ok(count)
        }
    }

    crate::sync::const_fn! {
        /// A latch at `count`.
        ///
        /// # Panics
        ///
        /// If `count` exceeds [`MAX_COUNT`] (in a `static`, at compile time).
        pub(crate) fn new(count: usize) -> Self {
            let Ok(count) = Self::try_count(count) else {
                panic!("latch count exceeds tally_latch::MAX_COUNT");
            };
            Self {
                state: AtomicUsize::new(BIAS + (count << SHIFT)),
                waiters: OnceBox::new(),
                #[cfg(any(feature = "tracing", feature = "metrics"))]
                label: "",
            }
        }
    }

    /// What the latch is doing now.
    pub(crate) fn status(&self) -> Status {
        // Acquire: as in `terminal`.
        status_of(self.state.load(Ordering::Acquire))
    }

    /// The current count. It stops changing once the latch opens or fails, but for the dip
    /// of a refused count-down on a failed latch, which lasts until that call returns.
    pub(crate) fn count(&self) -> usize {
        // Acquire: a caller that sees zero may act on what the counters published.
        count_of(self.state.load(Ordering::Acquire))
    }

    /// How the latch ended, or `None` while it is still counting (or failing).
    #[inline]
    pub(crate) fn terminal(&self) -> Option<Terminal> {
        // Acquire: pairs with the Release of the final count-down or of `FAILED`, so a
        // waiter that returns sees everything the counters (or the failer) did before.
        terminal_of(self.state.load(Ordering::Acquire))
    }

    /// Counts down by one unless the latch is already open or failing. When this call
    /// counts, `then(remaining)` runs after the decrement and, if it opened the latch,
    /// before the waiters are woken, so they see whatever `then` recorded. If `then`
    /// panics on the opening count-down, the waiters are woken as the panic unwinds.
    #[inline]
    pub(crate) fn count_down_then(&self, then: impl FnOnce(usize)) -> bool {
        // One unconditional read-modify-write: no compare-exchange loop to retry under
        // contention. AcqRel: Release publishes this counter's work to the waiters the last
        // count-down releases; Acquire pairs with a waiter's `WAITING` registration (the
        // slab's lock orders the wakers themselves).
        let state = self.state.fetch_sub(ONE, Ordering::AcqRel);
        if !counting(state) {
            // The latch is open or failing, and must not move: put the count back. Readers
            // meanwhile see an open latch (any count at or below zero is zero) or a failing
            // one (whose count no longer decides anything).
            // Relaxed: nothing is published; as a read-modify-write it continues the release
            // sequence of the transition that ended the latch.
            self.state.fetch_add(ONE, Ordering::Relaxed);
            return false;
        }
        // A counting state carries no flag but `WAITING`, so "this call opened the latch
        // and someone waits" is one compare.
        if state == COUNTING_FROM | WAITING {
            // `then` is user code (an observer): if it panics, the guard still wakes every
            // waiter of the latch that is now open.
            self.open_and_wake(|| then(0));
        } else {
            // In range, so no wrap: the count this call left.
            then((state - COUNTING_FROM) >> SHIFT);
        }
        true
    }

    /// Fails the latch unless it is already open or failing: claims it, runs `store` (which
    /// records the error), then publishes the failure and wakes every waiter. Returns
    /// whether this call failed the latch; `store` runs only if it did.
    pub(crate) fn fail_with(&self, store: impl FnOnce()) -> bool {
        if !self.claim() {
            return false;
        }
        store();
        // AcqRel: Release publishes the stored error to waiters that see `FAILED`; Acquire
        // pairs with a waiter's `WAITING` registration.
        let state = self.state.fetch_or(FAILED, Ordering::AcqRel);
        if state & WAITING != 0 {
            self.waiters().wake_all();
        }
        true
    }

    /// Sets `FAILING` while the latch is still counting, which freezes the count. Returns
    /// whether it did; `false` once the latch is open or failing, both final, so a stale
    /// read of either is still right.
    fn claim(&self) -> bool {
        // Relaxed: only a first guess for the compare-exchange, which re-reads the word.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if !counting(state) {
                return false;
            }
            // Relaxed on success: the claim only decides which caller fails the latch; the
            // error is published by the Release of `FAILED`. Relaxed on failure: the loop
            // only retries with the value it read.
            match self.state.compare_exchange_weak(
                state,
                state | FAILING,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(actual) => state = actual,
            }
        }
    }

    /// Runs `then`, then wakes every waiter of the latch this call opened: out of line, so
    /// the count-down's fast path stays small.
    #[cold]
    #[inline(never)]
    fn open_and_wake(&self, then: impl FnOnce()) {
        self.waiters().wake_all_after(then);
    }

    /// The waiter list, allocated by the first wait that parks.
    #[inline]
    fn waiters(&self) -> &Waiters {
        self.waiters.get_or_init(|| Box::new(Waiters::new()))
    }

    /// Sets `WAITING` and re-checks the state in one read-modify-write.
    fn register(&self) -> Option<Terminal> {
        // AcqRel: Release orders this registration before whichever terminal transition
        // comes later in this word's modification order (that transition reads `WAITING`
        // and wakes the waiters); Acquire as in `terminal` if the latch already ended.
        terminal_of(self.state.fetch_or(WAITING, Ordering::AcqRel))
    }
}

impl fmt::Debug for RawLatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.load(Ordering::Acquire);
        let mut f = f.debug_struct("RawLatch");
        // The label shows only once set, so unlabelled latches print as before.
        #[cfg(any(feature = "tracing", feature = "metrics"))]
        if !self.label.is_empty() {
            f.field("label", &self.label);
        }
        f.field("count", &count_of(state))
            .field("status", &status_of(state).as_str())
            .finish()
    }
}

/// Whether a latch in `state` still counts: a count above zero, and not failing. One range
/// compare, thanks to the bias: below are the open states (dips included), above the
/// failing and failed ones.
#[inline]
fn counting(state: usize) -> bool {
    state.wrapping_sub(COUNTING_FROM) < FAILING - COUNTING_FROM
}

/// The count in `state`, reading a count briefly below zero as zero.
#[inline]
fn count_of(state: usize) -> usize {
    ((state & !FAILING).saturating_sub(BIAS)) >> SHIFT
}

#[inline]
fn status_of(state: usize) -> Status {
    if state & FAILED != 0 {
        Status::Failed
    } else if state & FAILING != 0 {
        // Claimed but not yet stored. The count was above zero at the claim; it can only
        // dip below that while a count-down puts it back, which must not read as open.
        Status::Failing
    } else if state < COUNTING_FROM {
        Status::Open
    } else {
        Status::Counting
    }
}

#[inline]
fn terminal_of(state: usize) -> Option<Terminal> {
    // The open check first, for the waits' fast path: below every counting state is only
    // an open latch (a failing one has the top bit set).
    if state < COUNTING_FROM {
        Some(Terminal::Open)
    } else if state & FAILED != 0 {
        Some(Terminal::Failed)
    } else {
        None
    }
}

/// How a wait reaches the state machine it waits on. The wait loop is generic over it, so
/// it knows nothing of the latch types built on top (their futures hold a borrow or an
/// `Arc` of the latch).
pub(crate) trait RawHandle: Unpin {
    /// The state machine.
    fn raw(&self) -> &RawLatch;
}

/// The wait loop, written once: every async, blocking and timed wait, borrowed or owned,
/// polls this.
pub(crate) struct RawWait<H: RawHandle> {
    handle: H,
    /// The waiters' slot this wait's waker is parked in, from its first pending poll until
    /// it finishes or is dropped.
    slot: Option<usize>,
}

impl<H: RawHandle> RawWait<H> {
    /// A wait on `handle`'s latch that has not parked yet.
    #[inline]
    pub(crate) fn new(handle: H) -> Self {
        Self { handle, slot: None }
    }

    /// What this future waits through.
    #[inline]
    pub(crate) fn handle(&self) -> &H {
        &self.handle
    }

    /// The state machine this future waits on.
    #[inline]
    pub(crate) fn latch(&self) -> &RawLatch {
        self.handle.raw()
    }

    /// Gives up the slot, if any: a wait that has finished holds none, so it can neither
    /// swallow nor receive a wake-up, whether or not it is dropped.
    #[inline]
    pub(crate) fn release(&mut self) {
        if let Some(slot) = self.slot.take() {
            // Once the latch has ended, the terminal notification takes every waker (it
            // runs, since this wait set or saw `WAITING` before parking): nothing to give
            // back.
            if self.latch().terminal().is_none() {
                self.latch().waiters().leave(slot);
            }
        }
    }

    /// How the latch ended, or `Pending` with this wait's waker parked to hear the end.
    #[inline]
    pub(crate) fn poll_terminal(&mut self, cx: &mut Context<'_>) -> Poll<Terminal> {
        // Acquire: as in `terminal`.
        let state = self.latch().state.load(Ordering::Acquire);
        // Fast path: an ended latch answers with one load and no allocation.
        if let Some(terminal) = terminal_of(state) {
            // The slot, if any, left with the terminal notification's wakers. Checked
            // first, so the common case writes nothing and the drop glue sees no slot.
            if self.slot.is_some() {
                self.slot = None;
            }
            return Poll::Ready(terminal);
        }
        self.park(state, cx)
    }

    /// The slow path of [`poll_terminal`](Self::poll_terminal): the latch counted at
    /// `state`; parks this wait's waker, unless the latch ends meanwhile.
    #[inline(never)]
    fn park(&mut self, state: usize, cx: &mut Context<'_>) -> Poll<Terminal> {
        let latch = self.handle.raw();
        // No wake-up can be lost. `WAITING` is set, by this wait or (seen in a counting
        // state) by an earlier one, before the terminal transition in the word's order, and
        // is never cleared; so that transition wakes the waiters. It does so by closing the
        // slab under its lock: if that comes first, `park` finds the slab closed, and the
        // lock makes the ended state visible here; if it comes later, it takes this waker.
        if state & WAITING == 0 {
            if let Some(terminal) = latch.register() {
                return Poll::Ready(terminal);
            }
        }
        match latch.waiters().park(self.slot, cx.waker()) {
            Parked::In(slot) => {
                self.slot = Some(slot);
                Poll::Pending
            }
            Parked::Closed => {
                self.slot = None;
                Poll::Ready(
                    latch
                        .terminal()
                        .expect("the slab is closed only after the latch ends"),
                )
            }
        }
    }
}

impl<H: RawHandle> Drop for RawWait<H> {
    #[inline]
    fn drop(&mut self) {
        self.release();
    }
}

impl<H: RawHandle> fmt::Debug for RawWait<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wait").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every state a latch of `count` can be in, with `dips` refused count-downs in flight.
    fn states(count: usize, dips: usize) -> [usize; 4] {
        let word = BIAS + (count << SHIFT) - dips * ONE;
        [
            word,
            word | WAITING,
            word | FAILING,
            word | FAILING | FAILED | WAITING,
        ]
    }

    #[test]
    fn counting_is_exactly_a_count_above_zero_and_not_failing() {
        for count in [1, 2, MAX_COUNT - 1, MAX_COUNT] {
            let [plain, waiting, failing, failed] = states(count, 0);
            assert!(counting(plain) && counting(waiting), "count {count}");
            assert!(!counting(failing) && !counting(failed), "count {count}");
            assert_eq!(status_of(plain), Status::Counting);
            assert_eq!(status_of(failing), Status::Failing);
            assert_eq!(status_of(failed), Status::Failed);
            assert_eq!(count_of(plain), count);
            assert_eq!(count_of(failed), count);
        }
        let [open, waiting, ..] = states(0, 0);
        assert!(!counting(open) && !counting(waiting));
        assert_eq!(status_of(waiting), Status::Open);
    }

    /// Refused count-downs in flight take an open latch, or a failing one, below zero for
    /// a moment: it must still read as open (or failing) with a count of zero, never as
    /// counting.
    #[test]
    fn dips_below_zero_never_read_as_counting() {
        for dips in [1, 2, 1000] {
            let [open, waiting, ..] = states(0, dips);
            assert!(!counting(open) && !counting(waiting));
            assert_eq!(status_of(open), Status::Open);
            assert_eq!(count_of(waiting), 0);
            let [_, _, failing, failed] = states(1, dips + 1);
            assert!(!counting(failing) && !counting(failed));
            assert_eq!(status_of(failing), Status::Failing);
            assert_eq!(status_of(failed), Status::Failed);
            assert_eq!(count_of(failing), 0);
        }
    }

    #[test]
    fn count_check_lives_once() {
        assert_eq!(RawLatch::try_count(MAX_COUNT), Ok(MAX_COUNT));
        assert_eq!(
            RawLatch::try_count(MAX_COUNT + 1),
            Err(CountTooLarge {
                count: MAX_COUNT + 1
            })
        );
        let latch = RawLatch::new(MAX_COUNT);
        assert!(latch.count_down_then(|remaining| assert_eq!(remaining, MAX_COUNT - 1)));
        assert_eq!(latch.status(), Status::Counting);
    }

    #[test]
    fn status_follows_the_latch() {
        let latch = RawLatch::new(1);
        assert_eq!(latch.status(), Status::Counting);
        assert!(latch.count_down_then(|remaining| assert_eq!(remaining, 0)));
        assert_eq!(latch.status(), Status::Open);
        assert!(!latch.count_down_then(|_| unreachable!("refused")));
        assert_eq!(latch.count(), 0);
        let failed = RawLatch::new(2);
        assert!(failed.fail_with(|| ()));
        assert_eq!(failed.status(), Status::Failed);
        assert!(!failed.count_down_then(|_| unreachable!("refused")));
        assert_eq!(failed.count(), 2);
    }
}
