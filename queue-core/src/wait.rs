//! The one wait loop every future in this crate runs.

use core::task::Poll;

use event_listener::{EventListener, Listener};
use event_listener_strategy::Strategy;

use crate::waiters::Waiters;

/// Tries `attempt`; while it has nothing, waits on `waiters` and tries again.
///
/// No wake-up can be lost: a listener is registered *before* the attempt that decides to
/// wait (the first attempt only skips the registration when it succeeds), and every
/// notifier publishes its state before notifying, so either the notifier sees this
/// listener, or this attempt sees the state the notifier published (see [`Waiters`] for
/// why a skipped notification keeps this true). A notification that arrives between the
/// attempt and the wait is stored in the listener and ends the wait at once.
///
/// The listener is counted out of `waiters` whenever it leaves the list here: consumed by
/// a wake-up or discarded on success. A future dropped while it holds one must call
/// [`Waiters::forget`].
///
/// Waiters are served in arrival order. A waiter that succeeds consumes its notification
/// (the listener is discarded, not dropped): passed on, it would wake the next waiter for
/// nothing, and that waiter would re-register behind every younger one. A hand-off
/// notification (`notify_additional(1)`) held by a future that is dropped instead is passed
/// on by event-listener to the next listener, so a cancelled waiter does not swallow the
/// wake-up another one needed.
///
/// Level-triggered: a wake-up only means "try again"; the loop returns only when
/// `attempt` returns a value.
#[inline]
pub(crate) fn poll_until<'a, S, R>(
    listener: &mut Option<EventListener>,
    waiters: &Waiters,
    strategy: &mut S,
    context: &mut S::Context,
    mut attempt: impl FnMut() -> Option<R>,
) -> Poll<R>
where
    S: Strategy<'a>,
{
    loop {
        if let Some(ready) = attempt() {
            // The notification, if one arrived, was for this success: consume it.
            if let Some(registered) = listener.take() {
                registered.discard();
                waiters.left();
            }
            return Poll::Ready(ready);
        }
        if listener.is_some() {
            match strategy.poll(listener, context) {
                // A listener that fired has been consumed by the strategy.
                Poll::Ready(()) => {
                    if listener.is_none() {
                        waiters.left();
                    }
                }
                Poll::Pending => return Poll::Pending,
            }
        } else {
            *listener = Some(waiters.listen());
        }
    }
}
