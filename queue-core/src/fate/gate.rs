//! [`ReportGate`]: lets a shutdown report read the journal's ids in flight and the ledger
//! at one instant, so that the two agree.
//!
//! A job moves in or out of flight in two steps, each seen by a different reader: the
//! raw queue's counts change, and the journal hears of it (a get is counted, then noted
//! `Delivered`; an ending is noted, then counted; a retry or redelivery is noted, then
//! returned). A report made between the two steps would find the ids and the ledger one
//! apart. The ledger alone passes through "in flight" too, where the journal never does:
//! a drain's items are taken out (as a get would), then counted discarded; a put that
//! landed after a drain takes its item back out, then buries it. (A held retry leaves the
//! held count before it enters the lane, under the store's lock; a report comes after an
//! immediate shutdown, which takes that lock to close the store, so it never sees one
//! between the two.) So on a queue whose journal keeps ids, every such move is a *transition* that
//! [`enter`](ReportGate::enter)s the gate before its first step and leaves after its
//! second; a report [`hold`](ReportGate::hold)s new transitions off, waits for those in
//! progress to leave, and reads both.
//!
//! The two counters follow Dekker's pattern: a transition raises `in_motion`, then reads
//! `reporting`; a report raises `reporting`, then reads `in_motion` (all `SeqCst`). In
//! their single total order one of the two reads sees the other's raise: a transition
//! that slipped in is waited for, and one that came later waits for the report.
//!
//! A journal may call back into the queue from inside either (a transition's journal call
//! that makes a report or another transition, a report's journal call that takes an
//! item). With `std` the gate knows, per thread, which gates the thread is in motion on
//! or reporting on: a nested transition goes ahead, and a report made from inside a
//! transition of the same queue says at once that it cannot get its instant (`None`);
//! every other wait lasts as long as it must. Without `std` there is no thread-local to
//! know it by, so both waits are bounded: a report that cannot get its instant says so,
//! and a transition held off for too long goes ahead, which the report then sees.

use crate::sync::{back_off, AtomicUsize, Ordering};

/// Without `std`, how many steps of [`back_off`] a wait takes before it gives up.
#[cfg(not(feature = "std"))]
const PATIENCE: u32 = 1 << 16;

/// With `std` a wait gives up only when it would wait for its own thread (see the module
/// docs): in practice never.
#[cfg(feature = "std")]
const PATIENCE: u32 = u32::MAX - 1;

/// What the calling thread is doing at which gates (by address), under `std`.
#[cfg(feature = "std")]
mod this_thread {
    extern crate std;

    use alloc::vec::Vec;
    use core::cell::RefCell;

    std::thread_local! {
        static IN_MOTION: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
        static REPORTING: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    /// Whether this thread is in a transition at `gate`.
    pub(super) fn in_motion(gate: usize) -> bool {
        IN_MOTION.with(|gates| gates.borrow().contains(&gate))
    }

    /// Whether this thread is making a report at `gate`.
    pub(super) fn reporting(gate: usize) -> bool {
        REPORTING.with(|gates| gates.borrow().contains(&gate))
    }

    pub(super) fn enter(gate: usize) {
        IN_MOTION.with(|gates| gates.borrow_mut().push(gate));
    }

    pub(super) fn leave(gate: usize) {
        IN_MOTION.with(|gates| remove(&mut gates.borrow_mut(), gate));
    }

    pub(super) fn start_report(gate: usize) {
        REPORTING.with(|gates| gates.borrow_mut().push(gate));
    }

    pub(super) fn end_report(gate: usize) {
        REPORTING.with(|gates| remove(&mut gates.borrow_mut(), gate));
    }

    fn remove(gates: &mut Vec<usize>, gate: usize) {
        if let Some(at) = gates.iter().rposition(|&g| g == gate) {
            gates.swap_remove(at);
        }
    }
}

/// See the module docs.
#[derive(Debug)]
pub(crate) struct ReportGate {
    /// Transitions between their two steps.
    in_motion: AtomicUsize,
    /// Reports holding transitions off.
    reporting: AtomicUsize,
    /// Raised by a transition that went ahead while a report held transitions off (one
    /// nested in the report's own journal call, or one that waited too long): that
    /// report's instant is broken.
    broken: AtomicUsize,
}

/// A transition in progress; it leaves the gate when dropped (also while unwinding, so a
/// panicking waker or journal cannot leave reports waiting).
#[must_use = "the transition leaves the gate when this is dropped"]
pub(crate) struct InMotion<'a>(Option<&'a ReportGate>);

impl Drop for InMotion<'_> {
    #[inline]
    fn drop(&mut self) {
        if let Some(gate) = self.0 {
            #[cfg(feature = "std")]
            this_thread::leave(gate.address());
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
            broken: AtomicUsize::new(0),
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

    /// This gate's address, the thread-locals' key.
    #[cfg(feature = "std")]
    fn address(&self) -> usize {
        core::ptr::from_ref(self) as usize
    }

    /// Whether the calling thread must not wait at this gate: it is the one reporting
    /// (for a transition), or already in a transition (for a transition or a report).
    fn own_thread_holds(&self, reporting: bool) -> bool {
        #[cfg(feature = "std")]
        return this_thread::in_motion(self.address())
            || (reporting && this_thread::reporting(self.address()));
        #[cfg(not(feature = "std"))]
        {
            let _ = reporting;
            false
        }
    }

    #[cold]
    fn enter_gated(&self) -> InMotion<'_> {
        let mut waited = 0;
        let mut steps = 0;
        let nested = self.own_thread_holds(true);
        #[cfg(feature = "std")]
        this_thread::enter(self.address());
        loop {
            // SeqCst (both): Dekker's pattern with `hold` (see the module docs).
            self.in_motion.fetch_add(1, Ordering::SeqCst);
            if self.reporting.load(Ordering::SeqCst) == 0 {
                return InMotion(Some(self));
            }
            if nested || steps >= PATIENCE {
                // SeqCst: read by the report after its read, with `in_motion`.
                self.broken.store(1, Ordering::SeqCst);
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
        if self.own_thread_holds(false) {
            // A report from inside this thread's own transition would wait for itself.
            return None;
        }
        // SeqCst: Dekker's pattern with `enter` (see the module docs).
        if self.reporting.fetch_add(1, Ordering::SeqCst) == 0 {
            // SeqCst: as below. The first report clears what an earlier one left.
            self.broken.store(0, Ordering::SeqCst);
        }
        #[cfg(feature = "std")]
        this_thread::start_report(self.address());
        let mut waited = 0;
        let mut steps = 0;
        // SeqCst: as above.
        while self.in_motion.load(Ordering::SeqCst) != 0 && steps < PATIENCE {
            waited = back_off(waited);
            steps += 1;
        }
        let quiet = self.in_motion.load(Ordering::SeqCst) == 0;
        let read = quiet.then(read);
        // A transition that went ahead (nested in the report's own journal call, or after
        // waiting too long) may have run meanwhile.
        let still =
            self.in_motion.load(Ordering::SeqCst) == 0 && self.broken.load(Ordering::SeqCst) == 0;
        #[cfg(feature = "std")]
        this_thread::end_report(self.address());
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
    fn a_report_from_inside_a_transition_of_its_own_thread_does_not_wait_for_itself() {
        let gate = ReportGate::new();
        let motion = gate.enter(true);
        #[cfg(feature = "std")]
        assert_eq!(gate.hold(|| 7), None, "it would wait for itself");
        let nested = gate.enter(true);
        drop((nested, motion));
        assert_eq!(gate.hold(|| 8), Some(8));
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_transition_from_inside_a_report_goes_ahead_and_voids_it() {
        let gate = ReportGate::new();
        let read = gate.hold(|| {
            let _inner = gate.enter(true);
            9
        });
        assert_eq!(
            read, None,
            "the report's instant was broken by its own transition"
        );
    }

    #[cfg(feature = "std")]
    #[test]
    fn a_transition_leaves_while_the_report_waits() {
        extern crate std;
        let gate = ReportGate::new();
        let motion = gate.enter(true);
        std::thread::scope(|s| {
            let report = s.spawn(|| gate.hold(|| 9));
            std::thread::sleep(core::time::Duration::from_millis(5));
            drop(motion);
            assert_eq!(report.join().unwrap(), Some(9));
        });
    }
}
