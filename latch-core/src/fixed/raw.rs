//! [`RawFixed`]: the one state machine under every fixed latch, and [`RawFixedWait`], the
//! one wait loop over it.

use core::fmt;
use core::task::{Poll, Waker};

use super::slots::WaiterSlots;
use super::waker::AtomicWaker;
use crate::sync::atomic::{AtomicUsize, Ordering};

/// `fail` has claimed the latch: nothing counts any more, the error is being stored.
const FAILING: usize = 1;
/// The error is stored: the latch has failed for good.
const FAILED: usize = 1 << 1;
/// The pending count (or, for the tracking latch, the pending set) lives above the flags.
const SHIFT: u32 = 2;

/// The largest count a [`FixedLatch`](super::FixedLatch) or
/// [`FixedFailableLatch`](super::FixedFailableLatch) can start with, `2^30 - 1`, on every
/// target: the state word keeps two flag bits and the rest must fit in 32 bits.
///
/// # Examples
///
/// ```
/// use tally_latch::fixed::{FixedLatch, MAX_COUNT};
///
/// assert_eq!(MAX_COUNT, (1 << 30) - 1);
/// assert!(FixedLatch::<1>::try_new(MAX_COUNT).is_ok());
/// assert!(FixedLatch::<1>::try_new(MAX_COUNT + 1).is_err());
/// ```
pub const MAX_COUNT: usize = (u32::MAX >> SHIFT) as usize;

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing is pending any more.
    Open,
    /// The failure is stored and published.
    Failed,
    /// The latch was still counting and every waiter slot was taken.
    NoSlot,
}

/// The state of a latch as one load saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Still counting (or failing, but not failed yet); `pending` is never zero here.
    Counting {
        pending: usize,
    },
    Open,
    Failed,
}

/// The pending work, the failure flags and the waiter slots of one fixed latch.
///
/// The `pending` field is a count for the plain and failable latches and a set of counter
/// bits for the tracking latch; either way it only shrinks, by a compare-exchange that
/// refuses once it is zero or a failure has been claimed. So "open" (zero, no flag) and
/// "failed" are final, and a snapshot of the word is consistent: a tracking latch that is
/// not open always has at least one pending bit.
pub struct RawFixed<S: ?Sized> {
    /// `pending << SHIFT | FAILED | FAILING`. `FAILING` and `FAILED` are only ever set.
    state: AtomicUsize,
    slots: WaiterSlots<S>,
}

/// The slot-count-free form every latch's raw core coerces to.
pub(crate) type Raw = RawFixed<[AtomicWaker]>;

impl<const W: usize> RawFixed<[AtomicWaker; W]> {
    crate::sync::const_fn! {
        /// A latch with `pending` outstanding (zero: open); the caller has checked that it
        /// fits, `pending <= MAX_COUNT`.
        pub(crate) fn new(pending: usize) -> Self {
            Self {
                state: AtomicUsize::new(pending << SHIFT),
                slots: WaiterSlots::new(),
            }
        }
    }
}

impl Raw {
    /// The state as one load sees it.
    #[inline]
    pub(crate) fn status(&self) -> Status {
        // Acquire: pairs with the Release of the count-down that emptied `pending` and of
        // `FAILED`, so a caller that sees the end sees what the counters (or the failer)
        // did before it.
        status_of(self.state.load(Ordering::Acquire))
    }

    /// The pending count or set; frozen once the latch fails.
    pub(crate) fn pending(&self) -> usize {
        // Acquire: as in `status`.
        self.state.load(Ordering::Acquire) >> SHIFT
    }

    /// Whether a failure was claimed; it may still be on its way to being published.
    pub(crate) fn failure_claimed(&self) -> bool {
        // Acquire: as in `status`.
        self.state.load(Ordering::Acquire) & FAILING != 0
    }

    /// Shrinks `pending` to `step(pending)`, unless the latch is open or a failure has been
    /// claimed, or `step` returns `None` (nothing of this caller's is pending). Returns
    /// whether it did; the call that empties `pending` wakes every waiter.
    #[inline]
    pub(crate) fn settle(&self, step: impl Fn(usize) -> Option<usize>) -> bool {
        // Relaxed: only a first guess for the compare-exchange, which re-reads the word.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let pending = state >> SHIFT;
            if state & FAILING != 0 || pending == 0 {
                return false;
            }
            let Some(next) = step(pending) else {
                return false;
            };
            // Release on success: publishes this counter's work to the waiters the last
            // count-down releases (each later count-down's read-modify-write continues the
            // release sequence). Relaxed on failure: the loop retries with what it read.
            match self.state.compare_exchange_weak(
                state,
                next << SHIFT,
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    if next == 0 {
                        self.slots.wake_all();
                    }
                    return true;
                }
                Err(actual) => state = actual,
            }
        }
    }

    /// Sets `FAILING` while the latch is still counting, which freezes `pending`. Returns
    /// whether this call claimed the failure; the claimant must then store its error and
    /// call [`publish_failure`](Self::publish_failure).
    pub(crate) fn claim_failure(&self) -> bool {
        // Relaxed: the claim only decides which caller stores the error; the error is
        // published by the Release of `FAILED`.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            if state & FAILING != 0 || state >> SHIFT == 0 {
                return false;
            }
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

    /// Publishes the claimed failure and wakes every waiter.
    pub(crate) fn publish_failure(&self) {
        // Release: publishes the stored error to the waiters that see `FAILED`.
        self.state.fetch_or(FAILED, Ordering::Release);
        self.slots.wake_all();
    }

    /// How many waits hold a slot right now.
    pub(crate) fn waiting(&self) -> usize {
        self.slots.claimed()
    }

    /// The wait loop over this latch.
    pub(crate) fn wait(&self) -> RawFixedWait<'_> {
        RawFixedWait {
            raw: self,
            slot: None,
        }
    }
}

impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFixed")
            .field("status", &self.status())
            .field("waiting", &self.waiting())
            .finish()
    }
}

fn status_of(state: usize) -> Status {
    if state & FAILED != 0 {
        Status::Failed
    } else if state >> SHIFT == 0 {
        // Claiming a failure needs something pending, so no `FAILING` flag can be set here.
        Status::Open
    } else {
        Status::Counting {
            pending: state >> SHIFT,
        }
    }
}

fn ended(status: Status) -> Option<Outcome> {
    match status {
        Status::Counting { .. } => None,
        Status::Open => Some(Outcome::Open),
        Status::Failed => Some(Outcome::Failed),
    }
}

/// The wait loop, written once: every wait and timed wait of the tier polls this.
///
/// It holds a waiter slot only between a poll that returned `Pending` and the next poll
/// that returns `Ready` (or its drop), so a finished wait, dropped or not, holds nothing.
pub(crate) struct RawFixedWait<'a> {
    raw: &'a Raw,
    slot: Option<usize>,
}

impl RawFixedWait<'_> {
    /// Polls the latch: `Ready` once it has ended, or at once with `NoSlot` if it is still
    /// counting and every waiter slot is held by another wait.
    ///
    /// No wake-up can be lost. The ending transition first changes the state word, then
    /// wakes every slot's cell. This wait first registers `waker` in its slot, then reads
    /// the state word. atomic-waker orders a `register` and a `wake` on one cell: either
    /// the wake finds this waker (and wakes it), or the register comes after the wake, and
    /// then the state change that preceded the wake is visible to the read that follows the
    /// register, which returns `Ready`. A poll that had claimed its slot earlier registers
    /// the current waker again, so a task that moved to another waker is not lost either.
    pub(crate) fn poll(&mut self, waker: &Waker) -> Poll<Outcome> {
        loop {
            // Fast path: an ended latch answers with one load and never touches a slot.
            if let Some(outcome) = ended(self.raw.status()) {
                self.release();
                return Poll::Ready(outcome);
            }
            let Some(slot) = self.slot else {
                match self.raw.slots.claim() {
                    Some(slot) => self.slot = Some(slot),
                    // The latch may have ended while the slots were full; if so, say how.
                    None => {
                        return Poll::Ready(ended(self.raw.status()).unwrap_or(Outcome::NoSlot))
                    }
                }
                continue;
            };
            self.raw.slots.register(slot, waker);
            if let Some(outcome) = ended(self.raw.status()) {
                self.release();
                return Poll::Ready(outcome);
            }
            return Poll::Pending;
        }
    }

    /// Ends the wait after its deadline fired: checks the latch once more (a deadline future
    /// may itself have finished the work) and gives the slot back. `Err(pending)` is a
    /// timeout with the pending count or set read by that same check, never zero.
    pub(crate) fn after_deadline(&mut self) -> Result<Outcome, usize> {
        let status = self.raw.status();
        self.release();
        match status {
            Status::Counting { pending } => Err(pending),
            Status::Open => Ok(Outcome::Open),
            Status::Failed => Ok(Outcome::Failed),
        }
    }

    /// The slot count of the latch, for the error of a wait that found none free.
    pub(crate) fn slots(&self) -> usize {
        self.raw.slots.len()
    }

    fn release(&mut self) {
        if let Some(slot) = self.slot.take() {
            self.raw.slots.release(slot);
        }
    }
}

impl Drop for RawFixedWait<'_> {
    fn drop(&mut self) {
        self.release();
    }
}

impl fmt::Debug for RawFixedWait<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawFixedWait")
            .field("slot", &self.slot)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn raw<const W: usize>(pending: usize) -> RawFixed<[AtomicWaker; W]> {
        RawFixed::new(pending)
    }

    #[test]
    fn settles_down_to_open_and_no_further() {
        let raw = raw::<1>(2);
        let raw: &Raw = &raw;
        assert!(raw.settle(|p| Some(p - 1)));
        assert_eq!(raw.status(), Status::Counting { pending: 1 });
        assert!(raw.settle(|p| Some(p - 1)));
        assert_eq!(raw.status(), Status::Open);
        assert!(!raw.settle(|p| Some(p - 1)));
        assert!(!raw.claim_failure());
    }

    #[test]
    fn a_claimed_failure_freezes_pending() {
        let raw = raw::<1>(2);
        let raw: &Raw = &raw;
        assert!(raw.claim_failure());
        assert!(!raw.claim_failure());
        assert!(!raw.settle(|p| Some(p - 1)));
        // Claimed but not published: still counting as far as waiters can tell.
        assert_eq!(raw.status(), Status::Counting { pending: 2 });
        raw.publish_failure();
        assert_eq!(raw.status(), Status::Failed);
        assert_eq!(raw.pending(), 2);
    }

    #[test]
    fn a_refusing_step_changes_nothing() {
        let raw = raw::<1>(0b101);
        let raw: &Raw = &raw;
        let clear = |bit: usize| move |p: usize| (p & bit != 0).then_some(p & !bit);
        assert!(!raw.settle(clear(0b010)));
        assert!(raw.settle(clear(0b100)));
        assert!(!raw.settle(clear(0b100)));
        assert_eq!(raw.pending(), 0b001);
    }

    #[test]
    fn a_wait_holds_its_slot_only_while_pending() {
        let raw = raw::<1>(1);
        let raw: &Raw = &raw;
        let mut first = raw.wait();
        assert_eq!(first.poll(Waker::noop()), Poll::Pending);
        assert_eq!(raw.waiting(), 1);
        let mut second = raw.wait();
        assert_eq!(second.poll(Waker::noop()), Poll::Ready(Outcome::NoSlot));
        assert!(raw.settle(|p| Some(p - 1)));
        assert_eq!(first.poll(Waker::noop()), Poll::Ready(Outcome::Open));
        assert_eq!(raw.waiting(), 0);
        assert_eq!(second.poll(Waker::noop()), Poll::Ready(Outcome::Open));
    }

    #[test]
    fn after_deadline_reports_pending_and_frees_the_slot() {
        let raw = raw::<1>(3);
        let raw: &Raw = &raw;
        let mut wait = raw.wait();
        assert_eq!(wait.poll(Waker::noop()), Poll::Pending);
        assert_eq!(wait.after_deadline(), Err(3));
        assert_eq!(raw.waiting(), 0);
    }
}
