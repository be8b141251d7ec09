//! [`Names`]: a tracking latch's named counters, each with a report state that only moves
//! forward.
//!
//! A counter is `PENDING` until its handle is claimed (`CLAIMED`) or it reports. A report
//! first claims the counter's one count-down (`REPORTING`: later reports are duplicates),
//! and marks it `REPORTED` once that count-down has landed in the latch's state word (or
//! was refused by a latch that had ended). Until then the counter is still pending, so a
//! timeout that races the report names it.

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::ToString;
use alloc::vec::Vec;

use crate::heap::error::NameError;
use crate::sync::atomic::{AtomicU8, Ordering};

/// The counter has neither reported nor been handed out.
const PENDING: u8 = 0;
/// A [`Counter`](crate::Counter) handle owns the report.
const CLAIMED: u8 = 1;
/// The counter's report has been claimed but its count-down has not landed yet.
const REPORTING: u8 = 2;
/// The counter's count-down has landed (or was refused by an ended latch).
const REPORTED: u8 = 3;

/// The counters of one tracking latch, in the order it was built with.
pub(crate) struct Names {
    counters: Box<[Slot]>,
    /// Indices into `counters`, sorted by name, for lookup and duplicate detection.
    by_name: Box<[usize]>,
}

struct Slot {
    name: Cow<'static, str>,
    /// `PENDING`, `CLAIMED`, `REPORTING` or `REPORTED`; only ever moves forward.
    state: AtomicU8,
}

// The methods that building a latch and a report call are `#[inline]`: the latch code that
// calls them is generic, so it is compiled in the user's crate, which could not inline
// them otherwise.
impl Names {
    /// The counters called `names`, all pending; an error names the first name given twice
    /// (in sorted order).
    #[inline]
    pub(crate) fn new<I>(names: I) -> Result<Self, NameError>
    where
        I: IntoIterator,
        I::Item: Into<Cow<'static, str>>,
    {
        let counters: Box<[Slot]> = names
            .into_iter()
            .map(|name| Slot {
                name: name.into(),
                state: AtomicU8::new(PENDING),
            })
            .collect();
        let mut by_name: Vec<usize> = (0..counters.len()).collect();
        by_name.sort_unstable_by(|&a, &b| counters[a].name.cmp(&counters[b].name));
        if let Some(pair) = by_name
            .windows(2)
            .find(|pair| counters[pair[0]].name == counters[pair[1]].name)
        {
            return Err(NameError::Duplicate(counters[pair[0]].name.to_string()));
        }
        Ok(Self {
            counters,
            by_name: by_name.into_boxed_slice(),
        })
    }

    /// How many counters there are.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.counters.len()
    }

    /// The name of counter `index`.
    #[inline]
    pub(crate) fn name(&self, index: usize) -> &Cow<'static, str> {
        &self.counters[index].name
    }

    /// Every name, in order.
    #[inline]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Cow<'static, str>> {
        self.counters.iter().map(|slot| &slot.name)
    }

    /// The index of the counter called `name`.
    #[inline]
    pub(crate) fn index(&self, name: &str) -> Result<usize, NameError> {
        self.by_name
            .binary_search_by(|&index| (*self.counters[index].name).cmp(name))
            .map(|position| self.by_name[position])
            .map_err(|_| NameError::Unknown(name.to_string()))
    }

    /// Claims the one handle of the counter called `name`, which must be pending.
    pub(crate) fn claim(&self, name: &str) -> Result<usize, NameError> {
        let index = self.index(name)?;
        // Relaxed: the claim only decides which caller gets the one handle for this name.
        match self.counters[index].state.compare_exchange(
            PENDING,
            CLAIMED,
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => Ok(index),
            Err(CLAIMED) => Err(NameError::Claimed(name.to_string())),
            Err(_) => Err(NameError::Reported(name.to_string())),
        }
    }

    /// Claims counter `index`'s one count-down: `true` for its first report, whose caller
    /// must then count down and call [`reported`](Self::reported); `false` for a duplicate.
    #[inline]
    pub(crate) fn start_report(&self, index: usize) -> bool {
        // Relaxed: the claim only decides which report for this name counts; the latch's
        // own state word carries the happens-before from counters to waiters.
        self.counters[index]
            .state
            .fetch_max(REPORTING, Ordering::Relaxed)
            < REPORTING
    }

    /// Marks counter `index` reported: its count-down has landed in the latch's state word,
    /// or was refused by a latch that had ended.
    #[inline]
    pub(crate) fn reported(&self, index: usize) {
        // Release: a reader that sees `REPORTED` (Acquire, in `pending`) also sees this
        // counter's count-down in the latch's state word, so a list with nobody pending
        // implies a latch that has ended or is failing.
        self.counters[index]
            .state
            .store(REPORTED, Ordering::Release);
    }

    /// Whether counter `index` has started to report.
    #[inline]
    pub(crate) fn has_reported(&self, index: usize) -> bool {
        // Relaxed: a stale `false` only costs a failure that the latch then refuses.
        self.counters[index].state.load(Ordering::Relaxed) >= REPORTING
    }

    /// The counters whose count-down has not landed, in order: one reporting at this moment
    /// on another thread is still pending. Nobody is pending on a latch that has `opened`,
    /// even while its last reporter has yet to mark its counter.
    #[inline]
    pub(crate) fn pending(&self, opened: bool) -> impl Iterator<Item = &Cow<'static, str>> {
        // Acquire: pairs with the Release store of `REPORTED` in `reported`, so a counter
        // seen as reported has its count-down visible in the latch's state word.
        self.counters
            .iter()
            .filter(move |slot| !opened && slot.state.load(Ordering::Acquire) != REPORTED)
            .map(|slot| &slot.name)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn names(list: &[&'static str]) -> Names {
        Names::new(list.iter().copied()).unwrap()
    }

    fn pending(names: &Names) -> Vec<&str> {
        names.pending(false).map(|name| &**name).collect()
    }

    #[test]
    fn a_name_given_twice_is_refused() {
        let error = Names::new(["b", "a", "b"]).err();
        assert_eq!(error, Some(NameError::Duplicate("b".into())));
        assert!(Names::new(Vec::<&'static str>::new()).is_ok());
    }

    #[test]
    fn lookup_by_name_keeps_the_given_order() {
        let names = names(&["c", "a", "b"]);
        assert_eq!(names.index("c"), Ok(0));
        assert_eq!(names.index("b"), Ok(2));
        assert_eq!(names.index("z"), Err(NameError::Unknown("z".into())));
        assert_eq!(
            names.iter().map(|name| &**name).collect::<Vec<_>>(),
            ["c", "a", "b"]
        );
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn a_counter_reports_once_and_is_pending_until_it_has() {
        let names = names(&["a", "b"]);
        assert!(names.start_report(0));
        assert!(!names.start_report(0), "a duplicate report");
        assert!(names.has_reported(0));
        // Claimed but not landed: still pending.
        assert_eq!(pending(&names), ["a", "b"]);
        names.reported(0);
        assert_eq!(pending(&names), ["b"]);
        assert_eq!(
            names.pending(true).count(),
            0,
            "an open latch has nobody pending"
        );
    }

    #[test]
    fn a_handle_is_handed_out_once_and_not_after_a_report() {
        let names = names(&["a", "b"]);
        assert_eq!(names.claim("a"), Ok(0));
        assert_eq!(names.claim("a"), Err(NameError::Claimed("a".into())));
        assert!(names.start_report(0), "the handle's report counts");
        assert!(names.start_report(1));
        assert_eq!(names.claim("b"), Err(NameError::Reported("b".into())));
        assert_eq!(names.claim("z"), Err(NameError::Unknown("z".into())));
    }
}
