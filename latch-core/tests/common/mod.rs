//! Helpers shared by the latch integration tests: a runtime-free sleep and a noop poll.
#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

use latch_core::CountDownLatch;

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

struct Sleeper {
    cancel: Arc<CountDownLatch>,
    thread: Option<thread::JoinHandle<()>>,
}

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
