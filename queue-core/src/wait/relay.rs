//! Wakers run after event-listener's lock is released, on the notifying thread.
//!
//! event-listener calls a listener's waker inside its notify loop, with its list lock held,
//! and bumps its count of notified listeners only after `wake()` returns. A user waker run
//! there can hurt the queue three ways: one that re-enters the queue (a `try_put`, a
//! `shutdown`, an executor that polls the woken task inline) locks the same list again and
//! deadlocks; one that panics leaves the notify loop half done (the later listeners are not
//! woken) and the notified count one short, which later underflows when the listener
//! leaves; and one whose `Drop` runs there has the same problems.
//!
//! So event-listener never holds a user waker. An async wait registers a [`Relay`]: a waker
//! of the queue's own that, when event-listener wakes it, only queues itself on the queue's
//! [`Deferred`] list (a lock-free push, no user code). The thread that notified then calls
//! [`Deferred::wake_all`] once event-listener has returned, which calls the user wakers
//! outside every lock, and finishes all of them even if some panic. Blocking waits park
//! the thread (event-listener's unparker runs no user code) and need no relay.

use alloc::sync::Arc;
use alloc::task::Wake;
use core::task::Waker;

use concurrent_queue::{ConcurrentQueue, PushError};

use crate::unwind::each_despite_panics;

/// The relays woken under event-listener's lock, waiting for their notifier to wake their
/// task. One per queue, shared by its three classes of waiters.
///
/// Most notifications wake one relay, and its notifier takes it straight back out, so
/// the list is two of concurrent-queue's queues: a one-slot queue for that common case (a
/// compare-exchange and a release each way, no block to walk), and an unbounded one for
/// the relays woken while the slot is taken. Which of the two a relay waits in does not
/// matter: a drain wakes them all, in no promised order.
pub(crate) struct Deferred {
    first: ConcurrentQueue<Arc<Relay>>,
    rest: ConcurrentQueue<Arc<Relay>>,
}

impl Deferred {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Deferred {
            first: ConcurrentQueue::bounded(1),
            rest: ConcurrentQueue::unbounded(),
        })
    }

    /// Wakes the task of every relay queued so far, outside every lock.
    ///
    /// Called by every notifier after event-listener returns, so a relay queued by a
    /// notification is woken by that notifier, or earlier by another one draining at the
    /// same time. A panicking waker does not stop the others; the first panic then reaches
    /// the caller.
    #[inline]
    pub(crate) fn wake_all(&self) {
        // Both queues are empty unless a relay was woken: cheap checks (plain loads) keep
        // the notification path free of the pops' fences.
        if self.first.is_empty() && self.rest.is_empty() {
            return;
        }
        self.wake_queued();
    }

    /// Drops every relay still queued, waking nobody. A queued relay holds this list, so
    /// the queue calls this as it goes, or the two would keep each other alive.
    pub(crate) fn discard(&self) {
        each_despite_panics(|| self.pop(), drop);
    }

    #[cold]
    fn wake_queued(&self) {
        each_despite_panics(|| self.pop(), |relay| relay.task.wake_by_ref());
    }

    /// Queues a woken relay. Never fails: neither queue is ever closed, and the unbounded
    /// one is never full. (A failed push would hand the relay back inside the error and
    /// drop it, which is harmless too.)
    fn push(&self, relay: Arc<Relay>) {
        if let Err(PushError::Full(relay)) = self.first.push(relay) {
            let _ = self.rest.push(relay);
        }
    }

    /// Takes a queued relay. Each queue is looked at (a plain load) before it is popped,
    /// so the pops that end a drain cost no fence: a relay queued after the look is
    /// drained by its own notifier, as in `wake_all`.
    fn pop(&self) -> Option<Arc<Relay>> {
        [&self.first, &self.rest].into_iter().find_map(|queue| {
            if queue.is_empty() {
                None
            } else {
                queue.pop().ok()
            }
        })
    }
}

/// The waker event-listener holds for one async wait: the task's waker, and the list it
/// queues itself on when woken.
pub(crate) struct Relay {
    task: Waker,
    deferred: Arc<Deferred>,
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        let deferred = Arc::clone(&self.deferred);
        deferred.push(self);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.deferred.push(Arc::clone(self));
    }
}

/// A wait's relay, kept across polls so that a task polled again with the same waker
/// registers the same relay (event-listener then keeps it, without a new allocation).
#[derive(Default)]
pub(crate) struct RelaySlot {
    current: Option<(Arc<Relay>, Waker)>,
}

impl RelaySlot {
    /// The relay waker for `task`, made anew only when the task's waker changed. The
    /// previous relay, if replaced, is returned so the caller can drop it after
    /// event-listener has swapped it out: event-listener then never drops the last
    /// reference to a user waker under its lock.
    #[inline]
    pub(crate) fn waker_for(
        &mut self,
        deferred: &Arc<Deferred>,
        task: &Waker,
    ) -> (&Waker, Option<(Arc<Relay>, Waker)>) {
        let stale = match &self.current {
            Some((relay, _)) if relay.task.will_wake(task) => None,
            _ => {
                let relay = Arc::new(Relay {
                    task: task.clone(),
                    deferred: Arc::clone(deferred),
                });
                let waker = Waker::from(Arc::clone(&relay));
                self.current.replace((relay, waker))
            }
        };
        let (_, waker) = self.current.as_ref().expect("a relay was just stored");
        (waker, stale)
    }

    /// Drops the relay (and with it, possibly, the last reference to the task's waker).
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.current = None;
    }
}

#[cfg(all(test, feature = "std", not(loom)))]
mod tests {
    use super::*;
    use crate::wait::counting_waker::CountingWaker;
    use alloc::vec::Vec;

    #[test]
    fn a_woken_relay_wakes_its_task_only_when_drained() {
        let deferred = Deferred::new();
        let (count, task) = CountingWaker::new();
        let mut slot = RelaySlot::default();
        let (relay, stale) = slot.waker_for(&deferred, &task);
        assert!(stale.is_none());
        relay.wake_by_ref();
        let owned: Waker = relay.clone();
        owned.wake();
        assert_eq!(count.wakes(), 0);
        deferred.wake_all();
        assert_eq!(count.wakes(), 2);
        deferred.wake_all();
        assert_eq!(count.wakes(), 2);
    }

    #[test]
    fn relays_woken_together_are_all_woken_once_and_discard_drops_them() {
        let deferred = Deferred::new();
        let tasks: Vec<_> = (0..3).map(|_| CountingWaker::new()).collect();
        let mut slots: Vec<RelaySlot> = (0..3).map(|_| RelaySlot::default()).collect();
        // Three relays woken before any drain: one waits in the one-slot queue, two in
        // the unbounded one.
        for ((_, task), slot) in tasks.iter().zip(&mut slots) {
            slot.waker_for(&deferred, task).0.wake_by_ref();
        }
        assert!(!deferred.first.is_empty());
        assert_eq!(deferred.rest.len(), 2);
        deferred.wake_all();
        for (count, _) in &tasks {
            assert_eq!(count.wakes(), 1);
        }
        assert!(deferred.first.is_empty() && deferred.rest.is_empty());
        // Queued again, then discarded: dropped without a wake-up, and the relays'
        // references to the list go with them.
        for ((_, task), slot) in tasks.iter().zip(&mut slots) {
            slot.waker_for(&deferred, task).0.wake_by_ref();
        }
        drop(slots);
        deferred.discard();
        for (count, _) in &tasks {
            assert_eq!(count.wakes(), 1);
        }
        assert_eq!(Arc::strong_count(&deferred), 1);
    }

    #[test]
    fn the_same_task_keeps_its_relay() {
        let deferred = Deferred::new();
        let task = CountingWaker::new().1;
        let mut slot = RelaySlot::default();
        let first = slot.waker_for(&deferred, &task).0.clone();
        let (again, stale) = slot.waker_for(&deferred, &task);
        // `will_wake` compares vtable addresses, which Miri does not keep unique, so the
        // cache is only best effort there (a miss costs an allocation, nothing else).
        if !cfg!(miri) {
            assert!(again.will_wake(&first) && stale.is_none());
        }
        let other = CountingWaker::new().1;
        let (changed, stale) = slot.waker_for(&deferred, &other);
        assert!(!changed.will_wake(&first) && stale.is_some());
    }
}
