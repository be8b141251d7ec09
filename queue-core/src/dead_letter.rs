//! [`DeadLetter`]: an item the queue gave up redelivering, kept for its owner.

use core::fmt;

use crate::job_id::JobId;

/// Why an item became a [`DeadLetter`].
///
/// # Examples
///
/// ```
/// use tally_queue::DeadReason;
///
/// assert_eq!(DeadReason::Exhausted { panicking: true }.to_string(), "attempts exhausted (panicking)");
/// assert_eq!(DeadReason::ShutDownNow.to_string(), "abandoned after an immediate shutdown");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeadReason {
    /// Its last allowed delivery was abandoned (`panicking`: dropped during a panic).
    /// Counted as abandoned in the [`Ledger`](crate::Ledger).
    Exhausted {
        /// Whether the last delivery was dropped while its thread panicked.
        panicking: bool,
    },
    /// A delivery was abandoned after [`Queue::shutdown_now`](crate::Queue::shutdown_now)
    /// (or [`Queue::abort`](crate::Queue::abort)); it would have been redelivered, but the
    /// buffer was already drained. Counted as discarded in the [`Ledger`](crate::Ledger).
    ShutDownNow,
}

impl fmt::Display for DeadReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadReason::Exhausted { panicking: false } => f.write_str("attempts exhausted"),
            DeadReason::Exhausted { panicking: true } => {
                f.write_str("attempts exhausted (panicking)")
            }
            DeadReason::ShutDownNow => f.write_str("abandoned after an immediate shutdown"),
        }
    }
}

/// An item the queue stopped redelivering, with its id, how many times it was delivered,
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
    /// How many times it was delivered (the last delivery's [`attempt`](crate::Delivery::attempt)).
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
