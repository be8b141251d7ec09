//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Polls `future` once with a waker that does nothing.
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(future).poll(&mut cx)
}

/// Polls once and expects `Pending`.
#[track_caller]
pub fn assert_pending<F: Future + Unpin>(future: &mut F) {
    assert!(
        poll_once(future).is_pending(),
        "expected the future to wait"
    );
}

/// Polls once and expects `Ready`.
#[track_caller]
pub fn expect_ready<F: Future + Unpin>(future: &mut F) -> F::Output {
    match poll_once(future) {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("expected the future to be ready"),
    }
}

/// Iteration counts scaled down under Miri.
pub const fn scaled(normal: usize, miri: usize) -> usize {
    if cfg!(miri) {
        miri
    } else {
        normal
    }
}

/// Runs `victim` on its own thread and fails the test if it does not return within
/// `seconds`: a hang becomes a failure instead of a stuck CI job. (The stuck thread is left
/// behind; the test process ends without it.)
#[track_caller]
pub fn within<R: Send + 'static>(seconds: u64, victim: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(victim());
    });
    match result.recv_timeout(std::time::Duration::from_secs(seconds)) {
        Ok(value) => value,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("hang: the victim did not finish within {seconds} s")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the victim panicked")
        }
    }
}
