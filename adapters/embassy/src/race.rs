//! The one timing rule every timed future here shares.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use embassy_time::Timer;

/// Polls `future`, then `timer`: `Ready(Some(output))` if the future is done (even when the
/// timer has also fired, so an answer that is there is never reported as a timeout),
/// `Ready(None)` if only the timer is, `Pending` otherwise.
pub(crate) fn race<F: Future>(
    future: Pin<&mut F>,
    timer: Pin<&mut Timer>,
    cx: &mut Context<'_>,
) -> Poll<Option<F::Output>> {
    if let Poll::Ready(output) = future.poll(cx) {
        return Poll::Ready(Some(output));
    }
    timer.poll(cx).map(|()| None)
}
