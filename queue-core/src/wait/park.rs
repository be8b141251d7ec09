//! Timed blocking: a queue operation polled on the calling thread, which parks between
//! polls, until the operation finishes or a deadline passes.

use alloc::sync::Arc;
use alloc::task::Wake;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::thread::{self, Thread};
use std::time::Instant;

use super::deadline::Operation;

/// Wakes the parked thread.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `operation` until it finishes or `timeout` has passed, parking in between.
///
/// The operation is polled once more after the deadline: a timeout is reported only by a
/// poll that started after the deadline and still could not finish, so work that became
/// possible while the thread slept is done, not reported as timed out. A timeout too long
/// to represent as an `Instant` waits without one.
pub(crate) fn block_for<F: Operation>(mut operation: F, timeout: Duration) -> F::Timed {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut context = Context::from_waker(&waker);
    let deadline = Instant::now().checked_add(timeout);
    loop {
        let polled_at = Instant::now();
        if let Poll::Ready(output) = Pin::new(&mut operation).poll(&mut context) {
            return F::in_time(output);
        }
        match deadline {
            None => thread::park(),
            Some(deadline) if polled_at >= deadline => return operation.timed_out(),
            // A wake-up, a spurious unpark or the deadline ends the park; the loop polls
            // again in every case.
            Some(deadline) => thread::park_timeout(deadline.saturating_duration_since(polled_at)),
        }
    }
}
