//! What the loom models of the heap queue share (`tests/loom_puts_and_gets.rs`,
//! `tests/loom_endings.rs`): a waker a driving thread waits on, the driving loops that
//! make a lost wake-up a deadlock loom reports, a wait registered before a race, and a
//! journal that keeps its events.

use std::sync::Arc;

use tally_queue::{JobEvent, Journal};

/// A waker for loom models: a loom `Notify` that the thread driving its future waits on
/// (see [`drive`]).
#[derive(Default)]
pub(crate) struct Woken(loom::sync::Notify);

impl std::task::Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify();
    }
}

/// Polls `future` until it is ready, waiting between polls until its waker fires (as
/// `loom::future::block_on` does): a lost wake-up leaves the thread blocked, and loom
/// reports the model deadlocked. (A thread that yielded until its waker fired would stay
/// runnable: loom would explore it spinning until the branch limit instead.)
pub(crate) fn drive<F: std::future::Future + Unpin>(future: &mut F) -> F::Output {
    let woken = Arc::new(Woken::default());
    drive_with(future, &woken, &std::task::Waker::from(Arc::clone(&woken)))
}

/// [`drive`] with a waker of the caller's, which must notify `woken` when it runs.
pub(crate) fn drive_with<F: std::future::Future + Unpin>(
    future: &mut F,
    woken: &Woken,
    waker: &std::task::Waker,
) -> F::Output {
    use std::task::{Context, Poll};
    loop {
        if let Poll::Ready(out) =
            std::pin::Pin::new(&mut *future).poll(&mut Context::from_waker(waker))
        {
            return out;
        }
        woken.0.wait();
    }
}

/// `future` after one poll (with a waker that does nothing) that found it must wait: a
/// wait registered before the race, so that a model explores what wakes it rather than
/// its registration.
pub(crate) fn waiting<F: std::future::Future + Unpin>(mut future: F) -> F {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    let poll = std::pin::Pin::new(&mut future).poll(&mut context);
    assert!(poll.is_pending(), "the wait had nothing to wait for");
    future
}

/// A journal for the models: every event, in the order recorded.
#[derive(Default)]
pub(crate) struct Events(pub(crate) loom::sync::Mutex<Vec<JobEvent>>);

impl Journal for Events {
    fn record(&self, event: JobEvent) {
        self.0.lock().unwrap().push(event);
    }
}
