//! Blocking waits: the shared wait loop polled with a waker that unparks this thread, which
//! parks between polls, until the latch ends or a deadline passes.

use alloc::sync::Arc;
use core::task::{Context, Poll, Waker};
use std::time::Instant;

#[cfg(loom)]
use loom::thread;
#[cfg(not(loom))]
use std::thread;

use crate::heap::raw::{RawHandle, RawWait, Terminal};

/// Wakes a thread parked in a blocking wait.
struct Unpark(thread::Thread);

impl alloc::task::Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A waker that unparks the current thread.
fn unpark_this_thread() -> Waker {
    Waker::from(Arc::new(Unpark(thread::current())))
}

/// Blocks until the latch ends.
pub(crate) fn block<H: RawHandle>(wait: &mut RawWait<H>) -> Terminal {
    let waker = unpark_this_thread();
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(terminal) = wait.poll_terminal(&mut context) {
            return terminal;
        }
        // A wake-up between the poll and here leaves the token, so this returns at once;
        // a spurious return only polls again.
        thread::park();
    }
}

/// Blocks until the latch ends (`Some`) or `deadline` passes (`None`). A latch that ended
/// exactly at the deadline reports how it ended.
#[cfg(not(loom))]
pub(crate) fn block_until<H: RawHandle>(
    wait: &mut RawWait<H>,
    deadline: Instant,
) -> Option<Terminal> {
    let waker = unpark_this_thread();
    let mut context = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(terminal) = wait.poll_terminal(&mut context) {
            return Some(terminal);
        }
        let now = Instant::now();
        if now >= deadline {
            return wait.latch().terminal();
        }
        thread::park_timeout(deadline - now);
    }
}

/// Under loom, which has no timed park: the deadline is modelled as already passed after
/// one poll, the case whose re-check the models explore.
#[cfg(loom)]
pub(crate) fn block_until<H: RawHandle>(
    wait: &mut RawWait<H>,
    _deadline: Instant,
) -> Option<Terminal> {
    let waker = unpark_this_thread();
    let mut context = Context::from_waker(&waker);
    match wait.poll_terminal(&mut context) {
        Poll::Ready(terminal) => Some(terminal),
        Poll::Pending => wait.latch().terminal(),
    }
}
