//! [`AbandonPolicy`]: what happens to a delivery dropped unresolved.

use core::fmt;
use core::num::NonZeroU32;

/// What the queue does with a [`Delivery`](crate::Delivery) dropped without an outcome (an
/// early return, a panicking consumer), installed with
/// [`Queue::with_abandon_policy`](crate::Queue::with_abandon_policy).
///
/// # Examples
///
/// ```
/// use tally_queue::AbandonPolicy;
///
/// assert_eq!(AbandonPolicy::default(), AbandonPolicy::Abandon);
/// let policy = AbandonPolicy::redeliver(3).unwrap();
/// assert_eq!(policy.max_attempts(), Some(3));
/// assert!(AbandonPolicy::redeliver(0).is_err());
/// assert_eq!(AbandonPolicy::Uncertain.max_attempts(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AbandonPolicy {
    /// Counted abandoned in the [`Ledger`](crate::Ledger); the item is dropped with the
    /// delivery. The default, and the behaviour of a queue without a policy.
    #[default]
    Abandon,
    /// The item goes back into the queue under its id, delivered again with
    /// [`attempt`](crate::Delivery::attempt) one higher, until its `max_attempts`-th
    /// delivery; if that one is abandoned too it is dead-lettered: counted abandoned, the
    /// item kept for [`Queue::take_dead_letters`](crate::Queue::take_dead_letters).
    ///
    /// Every delivery counts, however the one before it came back: an abandonment or a
    /// [`retry`](crate::Delivery::retry) (which is refused on the last allowed delivery).
    /// So a job that keeps failing, by panics, drops or retries in any mix, becomes a dead
    /// letter within `max_attempts` deliveries.
    Redeliver {
        /// How many deliveries one id gets in all, retries included; 1 dead-letters on the
        /// first abandonment and refuses every retry.
        max_attempts: NonZeroU32,
    },
    /// Ended as [`Outcome::Uncertain`](crate::Outcome::Uncertain), for effects that must
    /// not repeat (a payment, an e-mail): a delivery dropped unresolved may have done part
    /// of its work, so it is never delivered again, and it is counted
    /// [`uncertain`](crate::Ledger::uncertain) in the [`Ledger`](crate::Ledger), where
    /// reconciliation looks, instead of abandoned. As under `Abandon`, the item is dropped
    /// with the delivery (a consumer that must keep it resolves the delivery itself).
    ///
    /// A [`Journal`](crate::Journal) sees [`Abandoned`](crate::JobEvent::Abandoned) (the
    /// delivery was dropped, and whether it panicked), then
    /// [`Ended`](crate::JobEvent::Ended) with `Outcome::Uncertain`, the final event; a
    /// [`Record`](crate::Record) ends in `JobState::Ended(Outcome::Uncertain)`.
    ///
    /// The name is the outcome the delivery ends with, as in the ledger; the Redis adapter
    /// takes the same policy for deliveries whose holder's lease expired.
    Uncertain,
}

impl AbandonPolicy {
    /// [`AbandonPolicy::Redeliver`] with `max_attempts` deliveries in all.
    ///
    /// # Errors
    ///
    /// [`ZeroAttempts`] if `max_attempts` is 0: an item must be delivered at least once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, ZeroAttempts};
    ///
    /// assert!(matches!(AbandonPolicy::redeliver(2), Ok(AbandonPolicy::Redeliver { .. })));
    /// assert_eq!(AbandonPolicy::redeliver(0), Err(ZeroAttempts));
    /// ```
    pub fn redeliver(max_attempts: u32) -> Result<Self, ZeroAttempts> {
        NonZeroU32::new(max_attempts)
            .map(|max_attempts| AbandonPolicy::Redeliver { max_attempts })
            .ok_or(ZeroAttempts)
    }

    /// The attempt limit, for [`AbandonPolicy::Redeliver`] (`None` for the others, which
    /// deliver each id once).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::AbandonPolicy;
    ///
    /// assert_eq!(AbandonPolicy::Abandon.max_attempts(), None);
    /// assert_eq!(AbandonPolicy::Uncertain.max_attempts(), None);
    /// assert_eq!(AbandonPolicy::redeliver(5).unwrap().max_attempts(), Some(5));
    /// ```
    #[must_use]
    pub fn max_attempts(&self) -> Option<u32> {
        match self {
            AbandonPolicy::Abandon | AbandonPolicy::Uncertain => None,
            AbandonPolicy::Redeliver { max_attempts } => Some(max_attempts.get()),
        }
    }
}

/// The error of [`AbandonPolicy::redeliver`] for `max_attempts = 0`.
///
/// # Examples
///
/// ```
/// let err = tally_queue::AbandonPolicy::redeliver(0).unwrap_err();
/// assert_eq!(err.to_string(), "max_attempts must be at least 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZeroAttempts;

impl fmt::Display for ZeroAttempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("max_attempts must be at least 1")
    }
}

impl core::error::Error for ZeroAttempts {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn zero_is_refused_and_one_is_the_smallest_limit() {
        assert_eq!(AbandonPolicy::redeliver(0), Err(ZeroAttempts));
        assert_eq!(AbandonPolicy::redeliver(1).unwrap().max_attempts(), Some(1));
        assert_eq!(AbandonPolicy::default().max_attempts(), None);
    }
}
