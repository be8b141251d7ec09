//! The wakers a notification took out of a waiter list, kept until their notifier wakes
//! them, outside every lock.
//!
//! A notification marks its waiters in their list and takes their wakers out under the
//! list's lock (`list.rs`); the notifier puts them here, and wakes them with
//! [`Deferred::wake_all`] once it has finished what it was changing: a shutdown or an
//! ending signals every class first and wakes once at the end, so a panicking waker can
//! neither skip a class nor interrupt a state change.
//!
//! A hand-off of one item or slot (`Class::notify_for` in `waiters.rs`) reaches at most one
//! waiter, once its change is done: its waker waits in a slot on the notifier's stack
//! instead, and is woken as soon as the list's lock is released.
//!
//! Where the wakers wait:
//! - with `std`, on a list of the notifying thread's own (`local.rs`): the notifier is the
//!   thread that took them out, so the list needs no atomic;
//! - without `std`, on a list the queue's classes share ([`Deferred`]), two of
//!   concurrent-queue's queues.

use alloc::sync::Arc;
use core::task::Waker;

#[cfg(not(feature = "std"))]
use concurrent_queue::{ConcurrentQueue, PushError};

#[cfg(feature = "std")]
use super::local;
use crate::unwind::each_despite_panics;

/// Where the wakers taken out for one queue wait for their notifier to wake them. One per
/// queue, shared by its classes of waiters.
///
/// With `std` it holds nothing: each notifying thread keeps its own list (see the module
/// docs), and [`wake_all`](Deferred::wake_all) drains the calling thread's.
///
/// Without `std`, most notifications take one waker, and its notifier takes it straight
/// back out, so the list is two of concurrent-queue's queues: a one-slot queue for that
/// common case (a compare-exchange and a release each way, no block to walk), and an
/// unbounded one for the wakers taken while the slot is full. Which of the two a waker
/// waits in does not matter: a drain wakes them all, in no promised order.
pub(crate) struct Deferred {
    #[cfg(not(feature = "std"))]
    first: ConcurrentQueue<Waker>,
    #[cfg(not(feature = "std"))]
    rest: ConcurrentQueue<Waker>,
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

    /// Keeps the wakers one notification takes out, under the list's lock: `notify` runs
    /// with a sink that only stores them (no user code), and the returned [`Orphans`]
    /// holds any this could not store, for the caller to wake once the lock is released.
    #[inline]
    pub(crate) fn keep(&self, notify: impl FnOnce(&mut dyn FnMut(Waker)) -> usize) -> usize {
        let mut orphans = Orphans::default();
        let reached = notify(&mut |waker| self.push(waker, &mut orphans));
        orphans.wake();
        reached
    }

    /// Stores a taken waker; one that cannot be (with `std`, the thread is exiting and its
    /// list is gone, so no drain would ever run it) goes to `orphans`.
    #[inline]
    fn push(&self, waker: Waker, orphans: &mut Orphans) {
        #[cfg(feature = "std")]
        if let Err(waker) = local::push(waker) {
            orphans.0.push(waker);
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = orphans;
            if let Err(PushError::Full(waker)) = self.first.push(waker) {
                // Never fails: the unbounded queue is never closed nor full.
                let _ = self.rest.push(waker);
            }
        }
    }

    /// Wakes every waker kept so far, outside every lock.
    ///
    /// Called by every notifier once it is done, so a waker kept by a notification is
    /// woken by that notifier (without `std`, or earlier by another one draining at the
    /// same time). A panicking waker does not stop the others; the first panic then
    /// reaches the caller.
    #[inline]
    pub(crate) fn wake_all(&self) {
        #[cfg(feature = "std")]
        local::wake_all();
        // Both queues are empty unless a waker was kept: cheap checks (plain loads) keep
        // the notification path free of the pops' fences.
        #[cfg(not(feature = "std"))]
        if !(self.first.is_empty() && self.rest.is_empty()) {
            self.wake_queued();
        }
    }

    #[cfg(not(feature = "std"))]
    #[cold]
    fn wake_queued(&self) {
        each_despite_panics(|| self.pop(), Waker::wake);
    }

    /// Takes a kept waker. Each queue is looked at (a plain load) before it is popped, so
    /// the pops that end a drain cost no fence: a waker kept after the look is drained by
    /// its own notifier, as in `wake_all`.
    #[cfg(not(feature = "std"))]
    fn pop(&self) -> Option<Waker> {
        [&self.first, &self.rest].into_iter().find_map(|queue| {
            if queue.is_empty() {
                None
            } else {
                queue.pop().ok()
            }
        })
    }
}

/// Wakers that could not be kept (see [`Deferred::push`]): woken by the notifier as soon
/// as the list's lock is released. Empty, it allocates nothing.
#[derive(Default)]
struct Orphans(#[cfg(feature = "std")] alloc::vec::Vec<Waker>);

impl Orphans {
    #[inline]
    fn wake(self) {
        #[cfg(feature = "std")]
        if !self.0.is_empty() {
            let mut orphans = self.0.into_iter();
            each_despite_panics(|| orphans.next(), Waker::wake);
        }
    }
}
