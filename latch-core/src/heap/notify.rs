//! The terminal notification, hardened against the user code it runs: wakers that panic and
//! wakers that re-enter the latch.
//!
//! event-listener calls each waker inside its notify loop, with the waiter list's lock held.
//! Two things follow, and this module answers both.
//!
//! - **A panicking waker.** The panic leaves the loop with the rest of the list unwoken, and
//!   with the list's count of notified entries one short (it is bumped after `wake`
//!   returns). A non-additional `notify(usize::MAX)` would then subtract a stale count, and
//!   the entry's later removal would take the count below zero (a panic in an innocent
//!   waiter, under overflow checks). So [`notify_all`] notifies with `notify_additional`,
//!   and after each caught panic parks one listener for good, notified and counted, which
//!   balances the entry whose count was lost. It costs one listener (a small allocation,
//!   kept for the life of the process, with the latch's waiter list it points to) per
//!   panicking waker; it is the price of a bug in user code, and the only way to keep
//!   event-listener's count right from outside.
//! - **A re-entrant waker**, or an executor that polls the woken task inline from `wake`.
//!   Everything a re-entrant call does on an ended latch is lock-free (a count-down or a
//!   failure is refused, a fresh wait is ready on its first load), except dropping the
//!   woken wait's listener, which takes the list's lock again. Under `std`, a listener
//!   released on a thread that is inside a terminal notification is handed to that
//!   notification, which drops it once the lock is free. Without `std` there is no
//!   thread-local to find the notification through, so an executor that polls inline from
//!   `wake` is not supported there (it would spin on, or find borrowed, the list's lock).

use event_listener::{Event, EventListener};

/// Wakes every listener of `event`, even if some wakers panic. Under `std`, every panic is
/// caught so that the rest of the list is still woken; the first is then resumed, unless
/// this thread is already unwinding (then it is dropped, since a second panic would abort).
/// Listeners that the woken wakers release on this thread are dropped after the lock is
/// free (see the module docs).
#[cfg(feature = "std")]
pub(crate) fn notify_all(event: &Event) {
    use core::panic::AssertUnwindSafe;
    use std::panic::{catch_unwind, resume_unwind};

    let scope = DeferScope::enter();
    let mut first_panic = None;
    loop {
        match catch_unwind(AssertUnwindSafe(|| event.notify_additional(usize::MAX))) {
            Ok(_) => break,
            Err(panic) => {
                rebalance(event);
                first_panic.get_or_insert(panic);
            }
        }
    }
    drop(scope);
    if let Some(panic) = first_panic {
        if !std::thread::panicking() {
            resume_unwind(panic);
        }
    }
}

/// Wakes every listener of `event`. Without `std` a panic cannot be caught: a guard
/// finishes the notification while the panic unwinds (a second panicking waker in the same
/// notification then aborts, as any panic during unwinding does).
#[cfg(not(feature = "std"))]
pub(crate) fn notify_all(event: &Event) {
    struct Finish<'a>(&'a Event);

    impl Drop for Finish<'_> {
        fn drop(&mut self) {
            rebalance(self.0);
            self.0.notify_additional(usize::MAX);
        }
    }

    let finish = Finish(event);
    event.notify_additional(usize::MAX);
    core::mem::forget(finish);
}

/// Runs `then`, then wakes every listener of `event`; if `then` panics, the listeners are
/// woken while the panic unwinds, so user code that runs before the notification cannot
/// leave waiters asleep on an ended latch.
#[inline]
pub(crate) fn notify_all_after(event: &Event, then: impl FnOnce()) {
    struct NotifyOnDrop<'a>(&'a Event);

    impl Drop for NotifyOnDrop<'_> {
        fn drop(&mut self) {
            notify_all(self.0);
        }
    }

    let notify = NotifyOnDrop(event);
    then();
    drop(notify);
}

/// After a waker panicked in the middle of event-listener's loop: parks one listener that
/// the retried notification wakes and counts, and that is never removed, so the list's
/// count of notified entries matches again.
fn rebalance(event: &Event) {
    park(event.listen());
}

/// Keeps `listener` for the life of the process. Under `std` it lives in a static, so it
/// stays reachable (and leak checkers such as Miri's see it as kept, not lost).
#[cfg(all(feature = "std", not(loom)))]
fn park(listener: EventListener) {
    static PARKED: std::sync::Mutex<alloc::vec::Vec<EventListener>> =
        std::sync::Mutex::new(alloc::vec::Vec::new());
    PARKED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(listener);
}

/// Keeps `listener` for the life of the process.
#[cfg(any(not(feature = "std"), loom))]
fn park(listener: EventListener) {
    core::mem::forget(listener);
}

/// Gives up a listener that has served its wait. Inside a terminal notification on this
/// thread, the listener is dropped when that notification ends, since dropping it takes the
/// list's lock that the notification holds.
#[cold]
pub(crate) fn release(listener: EventListener) {
    #[cfg(feature = "std")]
    let listener = DEFERRED
        .try_with(|deferred| match deferred.borrow_mut().as_mut() {
            Some(deferred) => {
                deferred.push(listener);
                None
            }
            None => Some(listener),
        })
        // The thread-local is gone only while the thread exits; no notification runs then.
        .unwrap_or(None);
    // Dropped outside the borrow: a drop can pass a notification on, which runs a waker.
    drop(listener);
}

#[cfg(all(feature = "std", not(loom)))]
std::thread_local! {
    /// `Some` while this thread is inside a terminal notification: the listeners released
    /// meanwhile, to drop once it ends.
    static DEFERRED: core::cell::RefCell<Option<alloc::vec::Vec<EventListener>>> =
        const { core::cell::RefCell::new(None) };
}

#[cfg(all(feature = "std", loom))]
loom::thread_local! {
    static DEFERRED: core::cell::RefCell<Option<alloc::vec::Vec<EventListener>>> =
        core::cell::RefCell::new(None);
}

/// The outermost terminal notification on this thread; a nested one (a waker that ends
/// another latch) leaves the deferred listeners to it, since they may belong to the outer
/// notification's list, whose lock is still held.
#[cfg(feature = "std")]
struct DeferScope {
    outermost: bool,
}

#[cfg(feature = "std")]
impl DeferScope {
    fn enter() -> Self {
        let outermost = DEFERRED
            .try_with(|deferred| {
                let mut deferred = deferred.borrow_mut();
                let outermost = deferred.is_none();
                if outermost {
                    *deferred = Some(alloc::vec::Vec::new());
                }
                outermost
            })
            .unwrap_or(false);
        Self { outermost }
    }
}

#[cfg(feature = "std")]
impl Drop for DeferScope {
    fn drop(&mut self) {
        if self.outermost {
            // Taken out first, then dropped with no borrow held (see `release`).
            let deferred = DEFERRED
                .try_with(|deferred| deferred.borrow_mut().take())
                .unwrap_or(None);
            drop(deferred);
        }
    }
}
