//! [`Registry`]: a count of live role guards that tells when the last one leaves.

use crate::sync::{AtomicUsize, Ordering};

/// The most guards of one role alive at once.
const MAX_LIVE: usize = usize::MAX / 2;

/// How many guards of one role (producers) are alive.
///
/// A queue that never registered one never sees a last exit, which is what keeps such a
/// queue behaving as if the role did not exist.
///
/// Edges: a registration past [`MAX_LIVE`] panics and leaves the count as it was (it
/// cannot happen without `usize::MAX / 2` live guards); an unregistration is only ever
/// paired with a registration, so the count never goes below zero.
#[derive(Debug)]
pub(crate) struct Registry {
    live: AtomicUsize,
}

impl Registry {
    pub(crate) fn new() -> Self {
        Registry {
            live: AtomicUsize::new(0),
        }
    }

    /// Counts one more guard in.
    ///
    /// # Panics
    ///
    /// If [`MAX_LIVE`] guards are alive already.
    pub(crate) fn register(&self) {
        // Relaxed: a registration publishes nothing; the unregistration that may end the
        // role is a read-modify-write of the same word, so it sees this one.
        let before = self.live.fetch_add(1, Ordering::Relaxed);
        if before >= MAX_LIVE {
            // Relaxed: undoing our own increment.
            self.live.fetch_sub(1, Ordering::Relaxed);
            panic!("too many guards registered on one queue");
        }
    }

    /// Counts one guard out; returns whether it was the last one alive.
    pub(crate) fn unregister(&self) -> bool {
        // AcqRel: Release publishes this guard's work (its puts) to whoever acts on the
        // last exit; Acquire makes the last one see every earlier guard's work.
        let before = self.live.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(before >= 1, "an unregistration without a registration");
        before == 1
    }

    /// The number of live guards.
    pub(crate) fn live(&self) -> usize {
        // Acquire: an observer.
        self.live.load(Ordering::Acquire)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_last_exit_is_reported_once() {
        let registry = Registry::new();
        assert_eq!(registry.live(), 0);
        registry.register();
        registry.register();
        assert_eq!(registry.live(), 2);
        assert!(!registry.unregister());
        assert!(registry.unregister());
        assert_eq!(registry.live(), 0);
        registry.register();
        assert!(registry.unregister());
    }

    #[cfg(feature = "std")]
    #[test]
    fn an_overflowing_registration_panics_and_changes_nothing() {
        let registry = Registry {
            live: AtomicUsize::new(MAX_LIVE),
        };
        let caught = std::panic::catch_unwind(|| registry.register());
        assert!(caught.is_err());
        assert_eq!(registry.live(), MAX_LIVE);
    }
}
