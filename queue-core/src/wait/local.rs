//! What a thread keeps for its waits (std): the wakers its notifications took out and it
//! has not woken yet, and the waker that unparks it, for its blocking waits.
//!
//! A notification takes its waiters' wakers out of their list on the notifying thread,
//! and that thread wakes them once it has finished its change (see `deferred.rs`). A list
//! of its own, touched by nobody else, does that with no atomic: a push and a pop are a
//! borrow of a thread-local cell.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::task::Wake;
use core::cell::{Cell, RefCell};
use core::task::Waker;

use crate::unwind::each_despite_panics;

#[cfg(not(loom))]
use std::thread::{self, Thread};

#[cfg(loom)]
use loom::thread::{self, Thread};

#[cfg(not(loom))]
std::thread_local! {
    /// Wakers taken out on this thread, oldest first, not woken yet.
    static WOKEN: RefCell<VecDeque<Waker>> = const { RefCell::new(VecDeque::new()) };
    /// Unparks this thread: a blocking wait's waker.
    static UNPARK: Waker = unparker();
    /// Whether `WOKEN` may hold a waker: set by every push, cleared by the drain that
    /// finds it empty. A `Cell<bool>` has no destructor, so it is readable at any point of
    /// the thread's life without asking whether its locals are gone, and a drain with
    /// nothing kept costs one load.
    static KEPT: Cell<bool> = const { Cell::new(false) };
}

#[cfg(loom)]
loom::thread_local! {
    static WOKEN: RefCell<VecDeque<Waker>> = RefCell::new(VecDeque::new());
    static UNPARK: Waker = unparker();
    static KEPT: Cell<bool> = Cell::new(false);
}

/// Wakes a parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

fn unparker() -> Waker {
    Waker::from(Arc::new(Unpark(thread::current())))
}

/// Runs `f` with a waker that unparks this thread: the thread's own, or a new one while the
/// thread is exiting and its own is gone.
pub(super) fn with_unparker<R>(f: impl FnOnce(&Waker) -> R) -> R {
    let mut f = Some(f);
    let done = UNPARK.try_with(|waker| (f.take().expect("called once"))(waker));
    match done {
        Ok(done) => done,
        Err(_) => (f.take().expect("not called"))(&unparker()),
    }
}

/// Parks this thread until it is unparked (or spuriously).
pub(super) fn park() {
    thread::park();
}

/// Keeps a waker a notification has just taken out, for this thread's next [`wake_all`].
/// Returns it if the thread's list is gone (the thread is exiting and its thread-locals
/// are being destroyed): the caller then wakes it as soon as the list's lock is released.
#[inline]
pub(super) fn push(waker: Waker) -> Result<(), Waker> {
    let mut waker = Some(waker);
    match WOKEN.try_with(|woken| {
        if let Some(waker) = waker.take() {
            woken.borrow_mut().push_back(waker);
        }
    }) {
        Ok(()) => {
            KEPT.with(|kept| kept.set(true));
            Ok(())
        }
        Err(_) => Err(waker.expect("the list was not reached")),
    }
}

/// Wakes every waker kept on this thread, oldest first, outside every lock.
///
/// Every notifier calls this once it is done, so a waker kept by a notification is woken
/// by that notifier before it returns. A waker that re-enters the queue and notifies again
/// drains the same list from inside; each waker is taken once. A panicking waker does not
/// stop the others; the first panic then reaches the caller.
///
/// Called only after a notification reached someone; with nothing kept it is one load of
/// [`KEPT`].
#[inline]
pub(super) fn wake_all() {
    // Set by every push since the drain that last found the list empty.
    if KEPT.with(Cell::get) {
        wake_queued();
    }
}

#[cold]
#[inline(never)]
fn wake_queued() {
    // Borrowed only for each pop: a waker that notifies again pushes and drains in between.
    let next = || {
        let waker = WOKEN
            .try_with(|woken| woken.borrow_mut().pop_front())
            .ok()
            .flatten();
        if waker.is_none() {
            // Empty (or gone, with the thread's other locals): nothing is kept until the
            // next push.
            KEPT.with(|kept| kept.set(false));
        }
        waker
    };
    each_despite_panics(next, Waker::wake);
}
