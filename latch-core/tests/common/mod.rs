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

/// A deadline future that needs no runtime: a thread sleeps, then opens a latch.
pub(crate) fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
    let done = Arc::new(CountDownLatch::new(1));
    let opener = done.clone();
    thread::spawn(move || {
        thread::sleep(duration);
        opener.count_down();
    });
    async move { done.wait().await }
}

/// Polls `future` once with a waker that does nothing.
pub(crate) fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
}
