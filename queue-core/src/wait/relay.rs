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
//! of the queue's own that, when event-listener wakes it, only queues itself (no user
//! code). The thread that notified then calls [`Deferred::wake_all`] once event-listener
//! has returned, which calls the user wakers outside every lock, and finishes all of them
//! even if some panic. Blocking waits park the thread (event-listener's unparker runs no
//! user code) and need no relay.
//!
//! Where a woken relay queues itself:
//! - with `std`, on a list of the notifying thread's own (`local.rs`): event-listener then
//!   wakes under a lock the notifying thread took, on that thread, so the list needs no
//!   atomic. A relay is also kept for reuse there: a wait whose relay nobody else holds any
//!   more leaves it as the thread's spare, and the thread's next wait takes it, so a wait
//!   allocates no relay of its own in the common case;
//! - without `std`, event-listener may apply a notification on whichever thread holds its
//!   list at the time, so relays queue on a list the queue shares ([`Deferred`]), two of
//!   concurrent-queue's queues, and a relay is allocated per wait.

use alloc::sync::Arc;
use alloc::task::Wake;
use core::task::Waker;

#[cfg(not(feature = "std"))]
use concurrent_queue::{ConcurrentQueue, PushError};

#[cfg(feature = "std")]
use super::local;
#[cfg(not(feature = "std"))]
use crate::unwind::each_despite_panics;

/// Where the relays woken for one queue wait for their notifier to wake their task. One per
/// queue, shared by its classes of waiters.
///
/// With `std` it holds nothing: each notifying thread keeps its own list (see the module
/// docs), and [`wake_all`](Deferred::wake_all) drains the calling thread's.
///
/// Without `std`, most notifications wake one relay, and its notifier takes it straight
/// back out, so the list is two of concurrent-queue's queues: a one-slot queue for that
/// common case (a compare-exchange and a release each way, no block to walk), and an
/// unbounded one for the relays woken while the slot is taken. Which of the two a relay
/// waits in does not matter: a drain wakes them all, in no promised order.
pub(crate) struct Deferred {
    #[cfg(not(feature = "std"))]
    first: ConcurrentQueue<Arc<Relay>>,
    #[cfg(not(feature = "std"))]
    rest: ConcurrentQueue<Arc<Relay>>,
}

impl Deferred {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Deferred {
            #[cfg(not(feature = "std"))]
            first: ConcurrentQueue::bounded(1),
            #[cfg(not(feature = "std"))]
            rest: ConcurrentQueue::unbounded(),
        })
    }

    /// Wakes the task of every relay queued so far, outside every lock.
    ///
    /// Called by every notifier after event-listener returns, so a relay queued by a
    /// notification is woken by that notifier (without `std`, or earlier by another one
    /// draining at the same time). A panicking waker does not stop the others; the first
    /// panic then reaches the caller.
    #[inline]
    pub(crate) fn wake_all(&self) {
        #[cfg(feature = "std")]
        local::wake_all();
        // Both queues are empty unless a relay was woken: cheap checks (plain loads) keep
        // the notification path free of the pops' fences.
        #[cfg(not(feature = "std"))]
        if !(self.first.is_empty() && self.rest.is_empty()) {
            self.wake_queued();
        }
    }

    /// Drops every relay still queued for this queue, waking nobody. Without `std` a queued
    /// relay holds this list, so the queue calls this as it goes, or the two would keep
    /// each other alive. With `std` a relay holds no queue: one left on a thread's list
    /// (its notifier unwound before draining) is woken by that thread's next drain.
    pub(crate) fn discard(&self) {
        #[cfg(not(feature = "std"))]
        each_despite_panics(|| self.pop(), drop);
    }

    #[cfg(not(feature = "std"))]
    #[cold]
    fn wake_queued(&self) {
        each_despite_panics(|| self.pop(), |relay| relay.wake_task());
    }

    /// Queues a woken relay. Never fails: neither queue is ever closed, and the unbounded
    /// one is never full. (A failed push would hand the relay back inside the error and
    /// drop it, which is harmless too.)
    #[cfg(not(feature = "std"))]
    fn push(&self, relay: Arc<Relay>) {
        if let Err(PushError::Full(relay)) = self.first.push(relay) {
            let _ = self.rest.push(relay);
        }
    }

    /// Takes a queued relay. Each queue is looked at (a plain load) before it is popped,
    /// so the pops that end a drain cost no fence: a relay queued after the look is
    /// drained by its own notifier, as in `wake_all`.
    #[cfg(not(feature = "std"))]
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

/// The waker event-listener holds for one async wait: the task's waker (and, without
/// `std`, the list it queues itself on when woken).
pub(crate) struct Relay {
    task: Waker,
    #[cfg(not(feature = "std"))]
    deferred: Arc<Deferred>,
}

impl Relay {
    /// A relay for `task`: this thread's spare one if it has one (with `std`), else a new
    /// one.
    #[cfg_attr(feature = "std", allow(unused_variables))]
    fn new(deferred: &Arc<Deferred>, task: &Waker) -> Arc<Relay> {
        #[cfg(feature = "std")]
        if let Some(mut spare) = local::take_spare() {
            // A spare is only ever kept while nothing else refers to it (see `recycle`), and
            // nothing can get a new reference to it while it is kept, so this always holds.
            if let Some(relay) = Arc::get_mut(&mut spare) {
                relay.task.clone_from(task);
                return spare;
            }
        }
        Arc::new(Relay {
            task: task.clone(),
            #[cfg(not(feature = "std"))]
            deferred: Arc::clone(deferred),
        })
    }

    /// Drops the relay of a finished wait: with `std`, if nothing else refers to it any more
    /// (event-listener dropped its waker, no thread's list holds it), its task's waker is
    /// dropped and the relay kept as this thread's spare.
    #[inline]
    fn recycle(relay: Arc<Relay>) {
        #[cfg(feature = "std")]
        {
            let mut relay = relay;
            if let Some(alone) = Arc::get_mut(&mut relay) {
                alone.task = Waker::noop().clone();
                local::keep_spare(relay);
            }
        }
        #[cfg(not(feature = "std"))]
        drop(relay);
    }

    /// Wakes the task this relay stands for.
    #[inline]
    pub(super) fn wake_task(&self) {
        self.task.wake_by_ref();
    }
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        #[cfg(feature = "std")]
        if let Err(relay) = local::push(self) {
            // The thread is exiting and its list is gone: no drain would ever run it.
            relay.wake_task();
        }
        #[cfg(not(feature = "std"))]
        {
            let deferred = Arc::clone(&self.deferred);
            deferred.push(self);
        }
    }

    fn wake_by_ref(self: &Arc<Self>) {
        Arc::clone(self).wake();
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
                let relay = Relay::new(deferred, task);
                let waker = Waker::from(Arc::clone(&relay));
                self.current.replace((relay, waker))
            }
        };
        let (_, waker) = self.current.as_ref().expect("a relay was just stored");
        (waker, stale)
    }

    /// Gives the relay up (and with it, possibly, the last reference to the task's waker).
    /// Called once the listener is gone, so event-listener holds no waker of it any more.
    #[inline]
    pub(crate) fn clear(&mut self) {
        if let Some((relay, waker)) = self.current.take() {
            drop(waker);
            Relay::recycle(relay);
        }
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
    fn relays_woken_together_are_all_woken_once_in_order() {
        let deferred = Deferred::new();
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        struct Noting(usize, Arc<std::sync::Mutex<Vec<usize>>>);
        impl Wake for Noting {
            fn wake(self: Arc<Self>) {
                self.1.lock().unwrap().push(self.0);
            }
        }
        let tasks: Vec<Waker> = (0..3)
            .map(|index| Waker::from(Arc::new(Noting(index, Arc::clone(&order)))))
            .collect();
        let mut slots: Vec<RelaySlot> = (0..3).map(|_| RelaySlot::default()).collect();
        for (task, slot) in tasks.iter().zip(&mut slots) {
            slot.waker_for(&deferred, task).0.wake_by_ref();
        }
        assert!(order.lock().unwrap().is_empty());
        deferred.wake_all();
        assert_eq!(*order.lock().unwrap(), [0, 1, 2], "oldest first, once each");
        deferred.wake_all();
        assert_eq!(order.lock().unwrap().len(), 3);
    }

    /// A waker run by a drain that wakes another relay (as a re-entrant `try_put` does)
    /// has it woken by the same drain.
    #[test]
    fn a_relay_woken_during_a_drain_is_woken_by_it() {
        let deferred = Deferred::new();
        let (count, inner_task) = CountingWaker::new();
        let mut inner = RelaySlot::default();
        let inner_relay = inner.waker_for(&deferred, &inner_task).0.clone();
        struct Chain(Waker);
        impl Wake for Chain {
            fn wake(self: Arc<Self>) {
                self.0.wake_by_ref();
            }
        }
        let outer_task = Waker::from(Arc::new(Chain(inner_relay)));
        let mut outer = RelaySlot::default();
        outer.waker_for(&deferred, &outer_task).0.wake_by_ref();
        deferred.wake_all();
        assert_eq!(count.wakes(), 1);
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

    /// A finished wait's relay, held by nothing else, is the thread's next wait's relay,
    /// with the task's waker dropped in between; one still referred to is not reused.
    #[test]
    fn a_finished_waits_relay_is_reused_once_nothing_refers_to_it() {
        let deferred = Deferred::new();
        let (count, task) = CountingWaker::new();
        drop(local::take_spare());

        let mut slot = RelaySlot::default();
        slot.waker_for(&deferred, &task);
        let first = Arc::as_ptr(&slot.current.as_ref().unwrap().0);
        slot.clear();
        let spare = local::take_spare().expect("the relay was kept");
        assert_eq!(Arc::as_ptr(&spare), first);
        assert_eq!(Arc::strong_count(&count), 2, "the task's waker was dropped");
        local::keep_spare(spare);

        let mut slot = RelaySlot::default();
        slot.waker_for(&deferred, &task);
        assert_eq!(Arc::as_ptr(&slot.current.as_ref().unwrap().0), first);
        // Woken and not drained: the thread's list holds it, so it is not kept.
        slot.current.as_ref().unwrap().1.wake_by_ref();
        slot.clear();
        assert!(local::take_spare().is_none());
        deferred.wake_all();
        assert_eq!(count.wakes(), 1);
    }
}
