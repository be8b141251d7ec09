//! What a thread keeps for its async waits (std): the relays woken on it whose tasks it has
//! not woken yet, and one spare relay for its next wait.
//!
//! With `std`, event-listener (5.x) notifies under a lock taken by the notifying thread (a
//! mutex, or a critical section), so a relay it wakes is woken on the thread that called
//! into it, and that thread runs the user wakers once event-listener has returned (see
//! `relay.rs`). A list of its own, touched by nobody else, then does what a shared list
//! would, with no atomic: a push and a pop are a borrow of a thread-local cell.
//!
//! The spare relay is one a finished wait held alone: the next wait on the thread takes it
//! instead of allocating one.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::cell::{Cell, RefCell};

use super::relay::Relay;
use crate::unwind::each_despite_panics;

#[cfg(not(loom))]
std::thread_local! {
    /// Relays woken on this thread, oldest first, whose tasks are not woken yet.
    static WOKEN: RefCell<VecDeque<Arc<Relay>>> = const { RefCell::new(VecDeque::new()) };
    /// A relay no waker refers to, for this thread's next wait.
    static SPARE: Cell<Option<Arc<Relay>>> = const { Cell::new(None) };
}

#[cfg(loom)]
loom::thread_local! {
    static WOKEN: RefCell<VecDeque<Arc<Relay>>> = RefCell::new(VecDeque::new());
    static SPARE: Cell<Option<Arc<Relay>>> = Cell::new(None);
}

/// Queues a relay event-listener has just woken, for this thread's next
/// [`wake_all`]. Returns it if the thread's list is gone (the thread is exiting and its
/// thread-locals are being destroyed): the caller then wakes its task at once.
pub(super) fn push(relay: Arc<Relay>) -> Result<(), Arc<Relay>> {
    let mut relay = Some(relay);
    match WOKEN.try_with(|woken| {
        if let Some(relay) = relay.take() {
            woken.borrow_mut().push_back(relay);
        }
    }) {
        Ok(()) => Ok(()),
        Err(_) => Err(relay.expect("the list was not reached")),
    }
}

/// Wakes the task of every relay queued on this thread, oldest first, outside every lock.
///
/// Every notifier calls this after event-listener returns, so a relay queued by a
/// notification is woken by that notifier before it returns. A waker that re-enters the
/// queue and notifies again drains the same list from inside; each relay is taken once. A
/// panicking waker does not stop the others; the first panic then reaches the caller.
///
/// Out of line: it is called only after a notification reached someone; inlined, its
/// thread-local access would sit in every notifying path, those that notify nobody too.
#[inline(never)]
pub(super) fn wake_all() {
    // Empty unless a relay was woken since the last drain.
    if WOKEN
        .try_with(|woken| !woken.borrow().is_empty())
        .unwrap_or(false)
    {
        wake_queued();
    }
}

#[cold]
fn wake_queued() {
    // Borrowed only for each pop: a waker that notifies again pushes and drains in between.
    let next = || {
        WOKEN
            .try_with(|woken| woken.borrow_mut().pop_front())
            .ok()
            .flatten()
    };
    each_despite_panics(next, |relay| relay.wake_task());
}

/// Takes this thread's spare relay, if it has one.
#[inline]
pub(super) fn take_spare() -> Option<Arc<Relay>> {
    SPARE.try_with(Cell::take).ok().flatten()
}

/// Keeps `relay` as this thread's spare, if it has none; otherwise it is dropped.
#[inline]
pub(super) fn keep_spare(relay: Arc<Relay>) {
    let mut relay = Some(relay);
    let _ = SPARE.try_with(|spare| {
        let kept = spare.take().or_else(|| relay.take());
        spare.set(kept);
    });
}
