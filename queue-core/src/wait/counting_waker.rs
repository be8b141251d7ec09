//! A waker that counts its wake-ups, for the crate's unit tests.

use alloc::sync::Arc;
use alloc::task::Wake;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::Waker;

/// Counts the wake-ups of the wakers made from it.
pub(crate) struct CountingWaker(AtomicUsize);

impl CountingWaker {
    /// A counter at zero, and a waker that counts into it.
    pub(crate) fn new() -> (Arc<Self>, Waker) {
        let count = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        (count, waker)
    }

    /// The wake-ups so far.
    pub(crate) fn wakes(&self) -> usize {
        // SeqCst: a test counter, read after the wakes it counts.
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // SeqCst: a test counter.
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}
