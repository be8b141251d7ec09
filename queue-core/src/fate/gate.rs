//! [`ReportGate`]: lets a shutdown report read the journal's ids in flight and the ledger
//! at one instant, so that the two agree.
//!
//! A job moves in or out of flight in two steps, each seen by a different reader: the
//! raw queue's counts change, and the journal hears of it (a get is counted, then noted
//! `Delivered`; an ending is noted, then counted; a retry or redelivery is noted, then
//! returned). A report made between the two steps would find the ids and the ledger one
//! apart. So on a queue whose journal keeps ids, every such move is a *transition* that
//! [`enter`](ReportGate::enter)s the gate before its first step and leaves after its
//! second; a report [`hold`](ReportGate::hold)s new transitions off, waits for those in
//! progress to leave, and reads both.
//!
//! The two counters follow Dekker's pattern: a transition raises `in_motion`, then reads
//! `reporting`; a report raises `reporting`, then reads `in_motion` (all `SeqCst`). In
//! their single total order one of the two reads sees the other's raise: a transition
//! that slipped in is waited for, and one that came later waits for the report.
//!
//! Both waits are bounded, since a journal may call back into the queue from inside
//! either (a transition's journal call that asks for a report, a report's journal call
//! that takes an item): a report that cannot get its instant says so (`None`), and a
//! transition held off for too long goes ahead, which the report then sees.

use crate::sync::{back_off, AtomicUsize, Ordering};

/// How many steps of [`back_off`] a wait takes before it gives up (past its first few
/// spins, each step yields the thread with `std`).
const PATIENCE: u32 = 4096;

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ReportGate {
    /// Transitions between their two steps.
    in_motion: AtomicUsize,
    /// Reports holding transitions off.
    reporting: AtomicUsize,
}

/// A transition in progress; it leaves the gate when dropped (also while unwinding, so a
/// panicking waker or journal cannot leave reports waiting).
#[must_use = "the transition leaves the gate when this is dropped"]
pub(crate) struct InMotion<'a>(Option<&'a ReportGate>);

impl Drop for InMotion<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(gate) = self.0 {
            // SeqCst: a report that reads zero after this sees the transition's two steps.
            gate.in_motion.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl ReportGate {
    pub(crate) fn new() -> Self {
        ReportGate {
            in_motion: AtomicUsize::new(0),
            reporting: AtomicUsize::new(0),
        }
    }

    /// Enters a transition, if `gated` (the queue's journal keeps ids); otherwise costs a
    /// branch.
    #[inline]
    pub(crate) fn enter(&self, gated: bool) -> InMotion<'_> {
        if !gated {
            return InMotion(None);
        }
        self.enter_gated()
    }

    #[cold]
    fn enter_gated(&self) -> InMotion<'_> {
        let mut waited = 0;
        let mut steps = 0;
        loop {
            // SeqCst (both): Dekker's pattern with `hold` (see the module docs).
            self.in_motion.fetch_add(1, Ordering::SeqCst);
            if self.reporting.load(Ordering::SeqCst) == 0 || steps >= PATIENCE {
                return InMotion(Some(self));
            }
            // A report is reading: step aside until it is done.
            self.in_motion.fetch_sub(1, Ordering::SeqCst);
            // Relaxed: only a hint of when to try again; the loop re-checks with SeqCst.
            while self.reporting.load(Ordering::Relaxed) != 0 && steps < PATIENCE {
                waited = back_off(waited);
                steps += 1;
            }
        }
    }

    /// Runs `read` while no transition is in progress, and returns what it read; `None`
    /// if transitions kept going (see the module docs for when).
    pub(crate) fn hold<R>(&self, read: impl FnOnce() -> R) -> Option<R> {
        // SeqCst: Dekker's pattern with `enter` (see the module docs).
        self.reporting.fetch_add(1, Ordering::SeqCst);
        let mut waited = 0;
        let mut steps = 0;
        // SeqCst: as above.
        while self.in_motion.load(Ordering::SeqCst) != 0 && steps < PATIENCE {
            waited = back_off(waited);
            steps += 1;
        }
        let quiet = self.in_motion.load(Ordering::SeqCst) == 0;
        let read = quiet.then(read);
        // A transition that went ahead after waiting too long may have run meanwhile.
        let still = self.in_motion.load(Ordering::SeqCst) == 0;
        // SeqCst: as above; the held-off transitions go ahead once this is lowered.
        self.reporting.fetch_sub(1, Ordering::SeqCst);
        read.filter(|_| still)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn an_ungated_transition_touches_nothing() {
        let gate = ReportGate::new();
        let motion = gate.enter(false);
        assert_eq!(gate.hold(|| 7), Some(7));
        drop(motion);
    }

    #[test]
    fn a_report_waits_for_a_transition_in_progress_and_gives_up_in_the_end() {
        let gate = ReportGate::new();
        let motion = gate.enter(true);
        assert_eq!(gate.hold(|| 7), None, "the transition never leaves");
        drop(motion);
        assert_eq!(gate.hold(|| 8), Some(8));
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_transition_leaves_while_the_report_waits() {
        extern crate std;
        let gate = ReportGate::new();
        let motion = gate.enter(true);
        std::thread::scope(|s| {
            let report = s.spawn(|| gate.hold(|| 9));
            std::thread::sleep(std::time::Duration::from_millis(5));
            drop(motion);
            assert_eq!(report.join().unwrap(), Some(9));
        });
    }
}
