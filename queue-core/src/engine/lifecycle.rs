//! The lifecycle word: shut down, orphaned (had workers, has none), and the worker count,
//! in one `usize` so that registering, leaving and shutting down are each one atomic step
//! and a put reads all of it with one load.
//!
//! With the ring, shutting down also sets the ring's `CLOSED` bit, and that bit, in the
//! word a put claims its ticket from, is what makes "accepted" and "shut down" exclusive;
//! the flag here is for the cheap observers (`is_shut_down`) and for queues whose buffer
//! is not a ring.

use crate::sync::{AtomicUsize, Ordering};

/// The queue was shut down (either way).
const SHUT_DOWN: usize = 1;
/// The queue had workers and has none now.
const ORPHANED: usize = 1 << 1;
/// One registered worker; the count lives in the bits above `ORPHANED`.
const WORKER: usize = 1 << 2;

/// Why the lifecycle refuses a put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    ShutDown,
    NoWorkers,
}

/// `SHUT_DOWN | ORPHANED | workers * WORKER`.
///
/// Edges: at most `usize::MAX / 4` workers (more panics, before the word changes); a queue
/// that never had a worker is not orphaned, so producers may start first; a new worker
/// clears `ORPHANED`.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    state: AtomicUsize,
}

impl Lifecycle {
    pub(crate) fn new() -> Self {
        Lifecycle {
            state: AtomicUsize::new(0),
        }
    }

    /// Whether a put is refused now, and why (shut down wins over orphaned).
    #[inline]
    pub(crate) fn refusal(&self) -> Option<Refusal> {
        // Acquire: pairs with the AcqRel updates, so a refusal is ordered after the
        // shutdown or worker exit that caused it.
        let state = self.state.load(Ordering::Acquire);
        if state & SHUT_DOWN != 0 {
            Some(Refusal::ShutDown)
        } else if state & ORPHANED != 0 {
            Some(Refusal::NoWorkers)
        } else {
            None
        }
    }

    /// Marks the queue shut down; returns whether this call did it.
    pub(crate) fn shut_down(&self) -> bool {
        // AcqRel: releases the flag to the puts that acquire it; acquires a concurrent
        // shutdown so only one caller reports it.
        self.state.fetch_or(SHUT_DOWN, Ordering::AcqRel) & SHUT_DOWN == 0
    }

    #[inline]
    pub(crate) fn is_shut_down(&self) -> bool {
        // Acquire: an observer.
        self.state.load(Ordering::Acquire) & SHUT_DOWN != 0
    }

    /// As [`is_shut_down`](Lifecycle::is_shut_down), for a caller that must not miss a
    /// shutdown whose wake-ups it does not see: either this reads the shutdown, or the
    /// shutdown comes later in the word's order and acquires what the caller did before.
    #[inline]
    pub(crate) fn is_shut_down_ordered(&self) -> bool {
        // AcqRel, as a read-modify-write that changes nothing: it takes its place in the
        // word's modification order, so a shutdown ordered after it (its `fetch_or` reads
        // this write) acquires the caller's earlier writes and passes them to the waiters
        // it wakes.
        self.state.fetch_or(0, Ordering::AcqRel) & SHUT_DOWN != 0
    }

    /// Registers a worker and clears `ORPHANED`.
    ///
    /// # Panics
    ///
    /// If `usize::MAX / 4` workers are registered already.
    pub(crate) fn register_worker(&self) {
        // Relaxed: the compare-exchange below validates it.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let next = state
                .checked_add(WORKER)
                .expect("too many workers registered on one queue")
                & !ORPHANED;
            // AcqRel: releases the registration to puts that read the word; acquires the
            // previous exit so the count is consistent.
            match self
                .state
                .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => state = now,
            }
        }
    }

    /// Unregisters a worker. Returns whether it was the last one (the queue is orphaned
    /// now: waiting puts must wake to be refused).
    ///
    /// `before_orphaning` runs before each attempt to store an orphaned word, so that what
    /// it does is released with the exit (the queue marks its putters' word there). It may
    /// run for an attempt that then fails, a worker having registered meanwhile.
    pub(crate) fn unregister_worker(&self, before_orphaning: impl Fn()) -> bool {
        // Relaxed: the compare-exchange below validates it.
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert!(state / WORKER > 0, "a worker left that never registered");
            let mut next = state - WORKER;
            if next / WORKER == 0 {
                next |= ORPHANED;
                before_orphaning();
            }
            // AcqRel: releases this exit to puts that read the word.
            match self
                .state
                .compare_exchange_weak(state, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return next & ORPHANED != 0,
                Err(now) => state = now,
            }
        }
    }

    /// Live workers.
    pub(crate) fn workers(&self) -> usize {
        // Acquire: an observer.
        self.state.load(Ordering::Acquire) / WORKER
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn producers_may_start_before_workers() {
        let life = Lifecycle::new();
        assert_eq!(life.refusal(), None);
        assert_eq!(life.workers(), 0);
    }

    #[test]
    fn the_last_worker_leaving_orphans_and_a_new_one_adopts() {
        let life = Lifecycle::new();
        life.register_worker();
        life.register_worker();
        assert_eq!(life.workers(), 2);
        assert!(!life.unregister_worker(|| ()));
        assert_eq!(life.refusal(), None);
        assert!(life.unregister_worker(|| ()));
        assert_eq!(life.refusal(), Some(Refusal::NoWorkers));
        life.register_worker();
        assert_eq!(life.refusal(), None);
        assert_eq!(life.workers(), 1);
    }

    #[test]
    fn shutdown_is_reported_once_and_wins_over_orphaned() {
        let life = Lifecycle::new();
        life.register_worker();
        assert!(life.unregister_worker(|| ()));
        assert!(life.shut_down());
        assert!(!life.shut_down());
        assert!(life.is_shut_down());
        assert_eq!(life.refusal(), Some(Refusal::ShutDown));
        // Workers still register and leave after a shutdown.
        life.register_worker();
        assert_eq!(life.workers(), 1);
        assert!(life.is_shut_down());
    }

    #[test]
    #[should_panic(expected = "too many workers")]
    fn too_many_workers_panics_before_the_word_changes() {
        let life = Lifecycle {
            state: AtomicUsize::new(usize::MAX & !(WORKER - 1)),
        };
        life.register_worker();
    }
}
