//! The one wait loop every future in this crate runs, and the registration it keeps.

use core::future::Future;
use core::task::{Context, Poll};

use event_listener::{EventListener, Listener};

#[cfg(target_has_atomic = "ptr")]
use crate::relay::RelaySlot;
use crate::waiters::Waiters;

/// How a wait sleeps between attempts.
pub(crate) enum Sleep<'a, 'b> {
    /// Returns `Pending`; the task is woken through a relay (see `relay.rs`).
    Task(&'a mut Context<'b>),
    /// Parks the thread until notified.
    #[cfg(feature = "std")]
    Thread,
}

/// One wait's registration with a class of [`Waiters`]: the listener, if one is registered,
/// and the relay waker event-listener holds for it.
///
/// Invariant, for every future built on it: once the future has returned `Ready`, or its
/// deadline has been handled, it holds no listener (so no notification is kept from the
/// waiters behind it) and no waker.
#[derive(Default)]
pub(crate) struct Wait {
    listener: Option<EventListener>,
    /// Turns this waiter was woken for and has not used (see `turns.rs`): while it holds
    /// one, its attempts may take what is owed to woken waiters.
    held: usize,
    #[cfg(target_has_atomic = "ptr")]
    relay: RelaySlot,
}

impl Wait {
    /// Tries `attempt`; while it has nothing, waits on `waiters` and tries again.
    ///
    /// No wake-up can be lost: a listener is registered *before* the attempt that decides
    /// to wait (the first attempt only skips the registration when it succeeds), and every
    /// notifier publishes its state before notifying, so either the notifier sees this
    /// listener, or this attempt sees the state the notifier published (see [`Waiters`] for
    /// why a skipped notification keeps this true). A notification that arrives between
    /// the attempt and the wait is stored in the listener and ends the wait at once.
    ///
    /// The listener is counted out of `waiters` whenever it leaves the list here: consumed
    /// by a wake-up or discarded on success. A future dropped while it holds one must call
    /// [`release`](Wait::release).
    ///
    /// Waiters are served in arrival order. A waiter that succeeds consumes its
    /// notification (the listener is discarded, not dropped): passed on, it would wake the
    /// next waiter for nothing, and that waiter would re-register behind every younger one.
    /// A hand-off notification (`notify_additional(1)`) held by a future that is dropped
    /// instead is passed on by event-listener to the next listener, so a cancelled waiter
    /// does not swallow the wake-up another one needed.
    ///
    /// Level-triggered: a wake-up only means "try again"; the loop returns only when
    /// `attempt` returns a value.
    #[inline]
    pub(crate) fn poll<R>(
        &mut self,
        waiters: &Waiters,
        sleep: &mut Sleep<'_, '_>,
        mut attempt: impl FnMut(bool) -> Option<R>,
    ) -> Poll<R> {
        loop {
            let turn = self.held != 0;
            if let Some(ready) = attempt(turn) {
                // An attempt made with a turn used it up (the take redeemed it).
                self.held -= usize::from(turn);
                self.finish(waiters);
                return Poll::Ready(ready);
            }
            if self.listener.is_none() {
                self.listener = Some(waiters.listen());
                continue;
            }
            let fired = match sleep {
                Sleep::Task(context) => self.poll_listener(waiters, context).is_ready(),
                #[cfg(feature = "std")]
                Sleep::Thread => {
                    if let Some(registered) = self.listener.take() {
                        registered.wait();
                    }
                    true
                }
            };
            if !fired {
                return Poll::Pending;
            }
            // A listener that fired has left the event's list; the waiter now holds the
            // turn its notification granted. If its next attempt finds nothing (a try that
            // raced the grant took the item), it keeps the turn and waits again.
            self.listener = None;
            self.held += 1;
            waiters.left();
        }
    }

    /// Polls the registered listener with a relay for the task's waker.
    #[inline]
    fn poll_listener(&mut self, waiters: &Waiters, context: &mut Context<'_>) -> Poll<()> {
        let listener = self.listener.as_mut().expect("a listener is registered");
        #[cfg(target_has_atomic = "ptr")]
        {
            let (relay, stale) = self.relay.waker_for(waiters.deferred(), context.waker());
            let poll = core::pin::Pin::new(listener).poll(&mut Context::from_waker(relay));
            // Dropped only now, after event-listener swapped it out under its lock.
            drop(stale);
            poll
        }
        #[cfg(not(target_has_atomic = "ptr"))]
        {
            // No `Arc` on this target, so no relay: event-listener holds the task's own
            // waker (see the crate docs for what a waker may do there).
            let _ = waiters;
            core::pin::Pin::new(listener).poll(context)
        }
    }

    /// The attempt succeeded: pass on any turn still held (a notification that arrived
    /// meanwhile was for an item or slot this waiter did not take), and let go of the
    /// waker.
    #[inline]
    fn finish(&mut self, waiters: &Waiters) {
        self.release(waiters);
    }

    /// One last attempt, for a wait whose deadline has fired: if it succeeds, the wait
    /// finishes as [`poll`](Wait::poll) would; if not, the wait is released. Either way it
    /// holds nothing afterwards.
    pub(crate) fn last_try<R>(
        &mut self,
        waiters: &Waiters,
        attempt: impl FnOnce(bool) -> Option<R>,
    ) -> Option<R> {
        // A notification that arrived since the last poll grants its turn to this try.
        if let Some(registered) = self.listener.take() {
            self.held += usize::from(registered.discard());
            waiters.left();
        }
        let turn = self.held != 0;
        let done = attempt(turn);
        if done.is_some() {
            self.held -= usize::from(turn);
            self.finish(waiters);
        } else {
            self.release(waiters);
        }
        done
    }

    /// Gives the registration up: the turns it holds, and a notification its listener
    /// holds, pass to the next waiters, and the waker is dropped. Free for a wait that
    /// never registered (the common case: the first attempt succeeded).
    #[inline]
    pub(crate) fn release(&mut self, waiters: &Waiters) {
        #[cfg(target_has_atomic = "ptr")]
        let relay = self.relay.is_set();
        #[cfg(not(target_has_atomic = "ptr"))]
        let relay = false;
        if self.listener.is_some() || self.held != 0 || relay {
            self.release_registered(waiters);
        }
    }

    #[cold]
    #[inline(never)]
    fn release_registered(&mut self, waiters: &Waiters) {
        if self.listener.is_some() || self.held != 0 {
            waiters.settle(&mut self.listener, self.held);
            self.held = 0;
        }
        #[cfg(target_has_atomic = "ptr")]
        self.relay.clear();
    }
}
