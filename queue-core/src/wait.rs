//! The one wait loop every future in this crate runs.

use core::task::Poll;

use event_listener::{Event, EventListener};
use event_listener_strategy::Strategy;

/// Tries `attempt`; while it has nothing, waits on `event` and tries again.
///
/// No wake-up can be lost: a listener is registered *before* the attempt that decides to
/// wait (the first attempt only skips the registration when it succeeds). `listen()` emits
/// a `SeqCst` fence after registering and every `notify` emits one before looking for
/// listeners, so either the notifier sees this listener, or this attempt sees the state the
/// notifier published before notifying. A notification that arrives between the attempt
/// and the wait is stored in the listener and ends the wait at once.
///
/// Hand-off notifications (`notify_additional(1)`) passed to a listener whose future is
/// then dropped are passed on by event-listener to the next listener, so a cancelled waiter
/// does not swallow the wake-up another one needed.
///
/// Level-triggered: a wake-up only means "try again"; the loop returns only when
/// `attempt` returns a value.
#[inline]
pub(crate) fn poll_until<'a, S, R>(
    listener: &mut Option<EventListener>,
    event: &Event,
    strategy: &mut S,
    context: &mut S::Context,
    mut attempt: impl FnMut() -> Option<R>,
) -> Poll<R>
where
    S: Strategy<'a>,
{
    loop {
        if let Some(ready) = attempt() {
            // A listener that was registered and not needed is dropped here; if it had been
            // notified, dropping it passes the notification on.
            *listener = None;
            return Poll::Ready(ready);
        }
        if listener.is_some() {
            match strategy.poll(listener, context) {
                Poll::Ready(()) => {}
                Poll::Pending => return Poll::Pending,
            }
        } else {
            *listener = Some(event.listen());
        }
    }
}
