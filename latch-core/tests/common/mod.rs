//! Helpers shared by the latch integration tests: a runtime-free sleep and a noop poll.
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

#[cfg(feature = "std")]
use tally_latch::CountDownLatch;

/// Loop bounds scaled down under Miri, which runs thousands of times slower.
pub(crate) const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// A deadline future that needs no runtime: a thread sleeps, then opens a latch. Dropping
/// the future wakes and joins the thread, so no test leaves a thread behind.
#[cfg(feature = "std")]
pub(crate) fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
    let done = Arc::new(CountDownLatch::new(1));
    let cancel = Arc::new(CountDownLatch::new(1));
    let thread = thread::spawn({
        let (done, cancel) = (done.clone(), cancel.clone());
        move || {
            let _ = cancel.wait_blocking_timeout(duration);
            done.count_down();
        }
    });
    let sleeper = Sleeper {
        cancel,
        thread: Some(thread),
    };
    async move {
        let _sleeper = sleeper;
        done.wait().await
    }
}

#[cfg(feature = "std")]
struct Sleeper {
    cancel: Arc<CountDownLatch>,
    thread: Option<thread::JoinHandle<()>>,
}

#[cfg(feature = "std")]
impl Drop for Sleeper {
    fn drop(&mut self) {
        self.cancel.count_down();
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// Polls `future` once with a waker that does nothing.
pub(crate) fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
}

/// Runs `victim` on its own thread and fails the test if it has not finished within
/// `seconds`, so a hang fails rather than stalling the suite. Returns the victim's result;
/// a panic in the victim is re-raised here.
pub(crate) fn within<T: Send + 'static>(
    seconds: u64,
    what: &str,
    victim: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, finished) = std::sync::mpsc::channel();
    let handle = thread::spawn(move || {
        let outcome = victim();
        let _ = done.send(());
        outcome
    });
    match finished.recv_timeout(Duration::from_secs(seconds)) {
        Ok(()) => handle.join().unwrap(),
        // The victim panicked: its channel end dropped without a message.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Ok(outcome) => outcome,
            Err(panic) => std::panic::resume_unwind(panic),
        },
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still blocked after {seconds} s")
        }
    }
}

/// A waker that counts its wake-ups.
#[derive(Default)]
pub(crate) struct CountingWaker {
    pub(crate) wakes: AtomicUsize,
}

impl CountingWaker {
    pub(crate) fn new() -> (Arc<Self>, Waker) {
        let counting = Arc::new(Self::default());
        (counting.clone(), Waker::from(counting))
    }

    pub(crate) fn wakes(&self) -> usize {
        self.wakes.load(Ordering::SeqCst)
    }
}

impl std::task::Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker whose `wake` panics, as a buggy executor's might.
pub(crate) struct PanickingWaker;

impl std::task::Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("waker panicked");
    }
}

/// Polls `future` once with `waker`.
pub(crate) fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// A deadline future that runs `fire` when first polled, then is ready: the work it does
/// lands in the same poll in which the deadline fires.
pub(crate) fn deadline_that(fire: impl FnOnce() + Unpin) -> impl Future<Output = ()> + Unpin {
    let mut fire = Some(fire);
    std::future::poll_fn(move |_| {
        if let Some(fire) = fire.take() {
            fire();
        }
        Poll::Ready(())
    })
}
