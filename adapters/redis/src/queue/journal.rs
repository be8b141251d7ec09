//! A handle's [`Journal`]: the in-process queue's observer, called with the events this
//! handle causes, a panic caught and counted as the in-process queue does.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use tally_queue::{JobEvent, JobId, Journal};

/// The journal installed on a handle (and its clones), if any.
#[derive(Default)]
pub(crate) struct Journaled {
    journal: OnceLock<Box<dyn Journal>>,
    panics: AtomicUsize,
}

impl Journaled {
    /// Installs `journal`; `false` if one already was.
    pub(crate) fn install(&self, journal: Box<dyn Journal>) -> bool {
        self.journal.set(journal).is_ok()
    }

    /// Records the event `event` builds, if a journal is installed (the event is built
    /// only then).
    pub(crate) fn note(&self, event: impl FnOnce() -> JobEvent) {
        if let Some(journal) = self.journal.get() {
            let event = event();
            if catch_unwind(AssertUnwindSafe(|| journal.record(event))).is_err() {
                // Relaxed: a statistic.
                self.panics.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The journal's ids in flight; `None` without a journal, with one that keeps none,
    /// or if it panicked (counted).
    pub(crate) fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        let journal = self.journal.get()?;
        catch_unwind(AssertUnwindSafe(|| journal.in_flight_ids())).unwrap_or_else(|_| {
            // Relaxed: a statistic.
            self.panics.fetch_add(1, Ordering::Relaxed);
            None
        })
    }

    pub(crate) fn panics(&self) -> usize {
        // Relaxed: a statistic.
        self.panics.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Journaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journaled")
            .field("installed", &self.journal.get().is_some())
            .field("panics", &self.panics())
            .finish()
    }
}
