//! The one wait loop every future in this crate runs, and the registration it keeps.

use core::mem::ManuallyDrop;
use core::task::{Context, Poll};

use super::list::Key;
use super::turn::Turn;
use super::waiters::Class;

/// How a wait sleeps between attempts.
pub(crate) enum Sleep<'a, 'b> {
    /// Returns `Pending`; the task's waker waits in the class's list.
    Task(&'a mut Context<'b>),
    /// Parks the thread until notified.
    #[cfg(feature = "std")]
    Thread,
}

/// One wait: nothing until its first attempt fails, then a [`Registration`].
///
/// Invariant, for every future built on it: once the future has returned `Ready`, or its
/// deadline has been handled, it holds no registration, so no listener (no notification is
/// kept from the waiters behind it), no turn and no waker.
///
/// The common case, a first attempt that succeeds, touches nothing but the `None` here;
/// dropping the future then costs one check.
#[derive(Default)]
pub(crate) struct Wait {
    /// `ManuallyDrop` only so that the compiler writes no drop of its own for the field:
    /// that drop stayed out of line, a call per future. `Drop for Wait` takes the
    /// registration out (safe code, through `DerefMut`), which leaves nothing to drop.
    registration: ManuallyDrop<Option<Registration>>,
}

impl Wait {
    /// As [`Registration::poll`]; the first attempt is made before anything is set up.
    #[inline]
    pub(crate) fn poll<R>(
        &mut self,
        waiters: Class<'_>,
        sleep: &mut Sleep<'_, '_>,
        mut attempt: impl FnMut(&mut Turn<'_>) -> Option<R>,
    ) -> Poll<R> {
        if self.is_new() {
            if let Some(ready) = attempt(&mut Turn::none()) {
                return Poll::Ready(ready);
            }
        }
        self.poll_registered(waiters, sleep, attempt)
    }

    /// Whether the wait holds no registration (none of its attempts has failed yet, or it
    /// is done, see the invariant above): its next poll starts with an attempt made before
    /// anything is set up, and it has nothing to release.
    ///
    /// A hot caller makes that first attempt itself, through a function it inlines, and
    /// calls [`poll_registered`](Wait::poll_registered) only if it fails: the common case
    /// then builds its result where the caller returns it, instead of in a closure's frame
    /// the caller copies it out of.
    #[inline(always)]
    pub(crate) fn is_new(&self) -> bool {
        self.registration.is_none()
    }

    /// As [`poll`](Wait::poll), for a wait that is not [new](Wait::is_new) or whose first
    /// attempt has just failed.
    pub(crate) fn poll_registered<R>(
        &mut self,
        waiters: Class<'_>,
        sleep: &mut Sleep<'_, '_>,
        attempt: impl FnMut(&mut Turn<'_>) -> Option<R>,
    ) -> Poll<R> {
        // A wait with no registration yet is here because its first attempt failed.
        let failed = self.registration.is_none();
        let registration = self.registration.get_or_insert_with(Registration::default);
        let poll = registration.poll(waiters, sleep, failed, attempt);
        if poll.is_ready() {
            self.release(|| waiters);
        }
        poll
    }

    /// As [`Registration::last_try`]; afterwards the wait holds nothing.
    ///
    /// The registration stays in the wait until the attempt has returned: an attempt that
    /// panics leaves the turn it did not redeem with the wait, whose future's drop then
    /// passes it on (taken out first, a panic dropped it with the turn, and that turn was
    /// owed to nobody for good).
    pub(crate) fn last_try<R>(
        &mut self,
        waiters: Class<'_>,
        attempt: impl FnOnce(&mut Turn<'_>) -> Option<R>,
    ) -> Option<R> {
        let Some(registration) = &mut *self.registration else {
            return attempt(&mut Turn::none());
        };
        let done = registration.last_try(waiters, attempt);
        self.release(|| waiters);
        done
    }

    /// Gives the registration up, if there is one (see [`Registration::release`]). The
    /// class is asked for only then: a wait that holds none (never polled, served at its
    /// first attempt, or done) costs its future's drop one check.
    #[inline]
    pub(crate) fn release<'a>(&mut self, waiters: impl FnOnce() -> Class<'a>) {
        // Checked before the take, so the common drop only reads; taken before the release,
        // so a waker that panics inside it cannot leave the turns to be passed on twice.
        if self.registration.is_some() {
            if let Some(mut registration) = self.registration.take() {
                registration.release(waiters());
            }
        }
    }
}

impl Drop for Wait {
    /// Every future [releases](Wait::release) its registration in its own drop, so none is
    /// left here: a registration does not know its class, and one left here would leave
    /// its node in the list, where a notification it drew would be lost.
    #[inline]
    fn drop(&mut self) {
        debug_assert!(
            self.registration
                .as_ref()
                .is_none_or(|registration| registration.listener.is_none()),
            "a wait dropped without releasing its registration"
        );
    }
}

/// A wait's registration with a class of [`Waiters`]: its node in the class's list, if
/// one is registered, and the turns it holds.
#[derive(Default)]
struct Registration {
    listener: Option<Key>,
    /// Turns this waiter was woken for and has not used (see `turns.rs`): while it holds
    /// one, its attempts may take what is owed to woken waiters.
    held: usize,
}

impl Registration {
    /// Tries `attempt`; while it has nothing, waits on `waiters` and tries again. `failed`:
    /// the caller's own first attempt has just failed, so the first step is to register.
    ///
    /// No wake-up can be lost: a listener is registered *before* the attempt that decides
    /// to wait (the first attempt only skips the registration when it succeeds), and every
    /// notifier publishes its state before notifying, so either the notifier sees this
    /// listener, or this attempt sees the state the notifier published (see [`Waiters`] for
    /// why a skipped notification keeps this true). A notification that arrives between
    /// the attempt and the wait is stored in the listener and ends the wait at once.
    ///
    /// A listener that fired is looked at *before* the next attempt, so that the attempt
    /// holds the turn the notification granted: an attempt made without it could take an
    /// item it was not owed and leave the turn to be passed on, a wake-up for nothing.
    ///
    /// The listener is counted out of `waiters` whenever it leaves the list here: consumed
    /// by a wake-up or discarded on success. A future dropped while it holds one must call
    /// [`release`](Wait::release).
    ///
    /// Waiters are served in arrival order. A waiter that succeeds consumes its
    /// notification (the listener is discarded, not dropped): passed on, it would wake the
    /// next waiter for nothing, and that waiter would re-register behind every younger one.
    /// A hand-off notification (`notify_additional(1)`) held by a future that is dropped
    /// instead is passed on, with its turn, by the future's release
    /// ([`Class::settle`]), so a cancelled waiter does not swallow the wake-up another one
    /// needed.
    ///
    /// Level-triggered: a wake-up only means "try again"; the loop returns only when
    /// `attempt` returns a value.
    fn poll<R>(
        &mut self,
        waiters: Class<'_>,
        sleep: &mut Sleep<'_, '_>,
        failed: bool,
        mut attempt: impl FnMut(&mut Turn<'_>) -> Option<R>,
    ) -> Poll<R> {
        // A blocking wait whose first attempt failed tries again for a moment before it
        // registers (see `spin`).
        #[cfg(feature = "std")]
        if failed && matches!(sleep, Sleep::Thread) {
            if let Some(ready) = self.spin(&mut attempt) {
                return Poll::Ready(ready);
            }
        }
        // A listener inserted by this poll already holds this poll's waker.
        let mut fresh = false;
        if failed && self.listener.is_none() {
            let listener = match sleep {
                Sleep::Task(context) => waiters.listen_with(context.waker()),
                #[cfg(feature = "std")]
                Sleep::Thread => waiters.listen(),
            };
            self.listener = Some(listener.key());
            fresh = true;
        }
        match sleep {
            Sleep::Task(context) => loop {
                // Polled first: a notification that came is this attempt's turn; one that
                // has not leaves the task's waker registered for it, before the attempt.
                // A listener inserted just before is not looked at: it holds this task's
                // waker, and a notification that reached it since will wake the task, whose
                // next poll then finds it (this attempt, made without its turn, may find
                // nothing: the item is owed to the woken waiter, which is this one).
                let mut waiting = self.listener.is_some();
                if waiting && !fresh && self.poll_listener(waiters, context).is_ready() {
                    self.woken(waiters);
                    waiting = false;
                }
                if let Some(ready) = self.attempt(&mut attempt) {
                    return Poll::Ready(ready);
                }
                if waiting {
                    return Poll::Pending;
                }
                // Registered, the next round's attempt is the re-check.
                self.listener = Some(waiters.listen_with(context.waker()).key());
                fresh = true;
            },
            #[cfg(feature = "std")]
            Sleep::Thread => loop {
                if let Some(ready) = self.attempt(&mut attempt) {
                    return Poll::Ready(ready);
                }
                match self.listener.take() {
                    // Registered, the next attempt is the re-check.
                    None => self.listener = Some(waiters.listen().key()),
                    Some(registered) => {
                        waiters.wait(registered);
                        self.woken(waiters);
                    }
                }
            },
        }
    }

    /// One attempt, with a turn if the waiter holds one. The attempt uses the turn up,
    /// whatever it finds: it redeems it through the [`Turn`], which lowers `held` at that
    /// instant (so a panic in the attempt leaves `held` right, see `turn.rs`).
    #[inline]
    fn attempt<R>(&mut self, attempt: &mut impl FnMut(&mut Turn<'_>) -> Option<R>) -> Option<R> {
        let mut turn = Turn::of(&mut self.held);
        let done = attempt(&mut turn);
        debug_assert!(!turn.is_held(), "an attempt uses its turn up");
        done
    }

    /// A blocking wait's attempts before it registers: after pauses of 1, 2, 4 ... 64 spin
    /// hints, then after 4 yields of the thread, as crossbeam's `Backoff::snooze` paces
    /// them. An item (a slot) that comes within those few microseconds is taken without
    /// the lock trips of a registration, the park, and the notifier's unpark, each a
    /// system call: the thread on the other side of a busy queue is usually that close.
    /// The attempts hold no turn (the wait holds none before it registers), so they take
    /// only what is not owed, as a try does.
    ///
    /// Under loom one attempt: each attempt's loads multiply the schedules, and more of
    /// the same attempt checks nothing new.
    #[cfg(feature = "std")]
    #[cold]
    fn spin<R>(&mut self, attempt: &mut impl FnMut(&mut Turn<'_>) -> Option<R>) -> Option<R> {
        #[cfg(not(loom))]
        const STEPS: u32 = 11;
        #[cfg(loom)]
        const STEPS: u32 = 1;
        for step in 0..STEPS {
            if step <= 6 {
                for _ in 0..1u32 << step {
                    core::hint::spin_loop();
                }
            } else {
                // Not reached under loom (one step).
                #[cfg(not(loom))]
                std::thread::yield_now();
            }
            if let Some(ready) = self.attempt(attempt) {
                return Some(ready);
            }
        }
        None
    }

    /// The listener fired and has left the event's list: the waiter holds the turn its
    /// notification granted, for its next attempt. If that attempt finds nothing (a try
    /// that raced the grant took the item), the turn is gone with the item, and the waiter
    /// waits again like any other.
    #[inline]
    fn woken(&mut self, waiters: Class<'_>) {
        self.listener = None;
        self.held += 1;
        waiters.left(true);
    }

    /// Looks at the registered listener, leaving the task's waker in it if it was not
    /// notified.
    #[inline]
    fn poll_listener(&mut self, waiters: Class<'_>, context: &mut Context<'_>) -> Poll<()> {
        let key = self.listener.expect("a listener is registered");
        waiters.poll(key, context.waker())
    }

    /// One last attempt, for a wait whose deadline has fired; the caller then gives the
    /// registration up, whatever the attempt returned.
    fn last_try<R>(
        &mut self,
        waiters: Class<'_>,
        attempt: impl FnOnce(&mut Turn<'_>) -> Option<R>,
    ) -> Option<R> {
        // A notification that arrived since the last poll grants its turn to this try.
        if let Some(registered) = self.listener.take() {
            let notified = waiters.discard(registered);
            self.held += usize::from(notified);
            waiters.left(notified);
        }
        let mut turn = Turn::of(&mut self.held);
        let done = attempt(&mut turn);
        debug_assert!(!turn.is_held(), "an attempt uses its turn up");
        done
    }

    /// Gives the registration up: the turns it holds, and a notification its listener
    /// holds, pass to the next waiters, and the waker is dropped.
    #[cold]
    fn release(&mut self, waiters: Class<'_>) {
        if self.listener.is_some() || self.held != 0 {
            waiters.settle(&mut self.listener, self.held);
            self.held = 0;
        }
    }
}
