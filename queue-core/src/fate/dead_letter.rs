//! [`DeadLetter`]: an item the queue gave up delivering, kept for its owner, and the list
//! that keeps them.

use alloc::vec::Vec;
use core::fmt;

use concurrent_queue::ConcurrentQueue;

use crate::job_id::JobId;
use crate::unwind::each_despite_panics;

/// Why an item became a [`DeadLetter`].
///
/// # Examples
///
/// ```
/// use tally_queue::DeadReason;
///
/// assert_eq!(DeadReason::Exhausted { panicking: true }.to_string(), "attempts exhausted (panicking)");
/// assert_eq!(DeadReason::ShutDownNow.to_string(), "came back after an immediate shutdown");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeadReason {
    /// Its last allowed delivery was abandoned (`panicking`: dropped during a panic).
    /// Counted as abandoned in the [`Ledger`](crate::Ledger).
    Exhausted {
        /// Whether the last delivery was dropped while its thread panicked.
        panicking: bool,
    },
    /// The item came back after [`Queue::shutdown_now`](crate::Queue::shutdown_now) (or
    /// [`Queue::abort`](crate::Queue::abort)) had drained the queue: a delivery abandoned
    /// after it that would have been redelivered, or a put that raced the drain and
    /// landed after it (then `attempts` is 0). Counted as discarded in the
    /// [`Ledger`](crate::Ledger).
    ShutDownNow,
}

impl fmt::Display for DeadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadReason::Exhausted { panicking: false } => f.write_str("attempts exhausted"),
            DeadReason::Exhausted { panicking: true } => {
                f.write_str("attempts exhausted (panicking)")
            }
            DeadReason::ShutDownNow => f.write_str("came back after an immediate shutdown"),
        }
    }
}

/// An item the queue stopped delivering, with its id, how many times it was delivered,
/// and why; from [`Queue::take_dead_letters`](crate::Queue::take_dead_letters).
///
/// # Examples
///
/// ```
/// use tally_queue::{AbandonPolicy, DeadReason, Queue};
///
/// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(1).unwrap());
/// let id = queue.try_put("poison").unwrap();
/// drop(queue.try_get().unwrap()); // abandoned on its only attempt
/// let dead = queue.take_dead_letters();
/// assert_eq!((dead[0].id, dead[0].attempts, dead[0].item), (id, 1, "poison"));
/// assert_eq!(dead[0].reason, DeadReason::Exhausted { panicking: false });
/// ```
pub struct DeadLetter<T> {
    /// The id its put returned.
    pub id: JobId,
    /// How many times it was delivered (the last delivery's
    /// [`attempt`](crate::Delivery::attempt)); 0 for a put that landed after a drain.
    pub attempts: u32,
    /// Why the queue stopped redelivering it.
    pub reason: DeadReason,
    /// The item itself.
    pub item: T,
}

impl<T> fmt::Debug for DeadLetter<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeadLetter")
            .field("id", &self.id)
            .field("attempts", &self.attempts)
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

/// The dead letters kept until their owner takes them: never closed, unbounded (see
/// [`Queue::take_dead_letters`](crate::Queue::take_dead_letters) for the bound).
pub(crate) struct DeadLetters<T> {
    letters: ConcurrentQueue<DeadLetter<T>>,
}

impl<T> DeadLetters<T> {
    pub(crate) fn new() -> Self {
        DeadLetters {
            letters: ConcurrentQueue::unbounded(),
        }
    }

    /// Keeps `letter`.
    pub(crate) fn bury(&self, letter: DeadLetter<T>) {
        // Never fails: the list is unbounded and never closed.
        let _ = self.letters.push(letter);
    }

    /// Takes every letter kept so far, oldest first.
    pub(crate) fn take(&self) -> Vec<DeadLetter<T>> {
        let mut taken = Vec::with_capacity(self.letters.len());
        while let Ok(letter) = self.letters.pop() {
            taken.push(letter);
        }
        taken
    }

    pub(crate) fn len(&self) -> usize {
        self.letters.len()
    }
}

impl<T> Drop for DeadLetters<T> {
    /// Drops every letter, even if some item's `Drop` panics (see the queue's `Drop`).
    fn drop(&mut self) {
        let letters = &self.letters;
        each_despite_panics(|| letters.pop().ok(), drop);
    }
}
