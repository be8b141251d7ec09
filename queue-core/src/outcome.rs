//! How one delivered item ended.

use core::fmt;

/// How the work on one delivered item ended, as reported by the consumer.
///
/// A [`Delivery`](crate::Delivery) is resolved with one of these exactly once. A delivery
/// dropped without one is recorded as *abandoned* (see [`Ledger`](crate::Ledger)), which is
/// not an `Outcome` a consumer can choose.
///
/// # Examples
///
/// ```
/// use tally_queue::{Outcome, Queue};
///
/// let queue = Queue::unbounded();
/// queue.try_put(7).unwrap();
/// let delivery = queue.try_get().unwrap();
/// assert_eq!(delivery.resolve(Outcome::Uncertain), 7);
/// assert_eq!(queue.ledger().uncertain, 1);
/// assert_eq!(Outcome::Uncertain.to_string(), "uncertain");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The work was done and its effect is known to have happened.
    Succeeded,
    /// The work was refused or failed, and its effect is known not to have happened.
    Rejected,
    /// The effect is unknown: a timeout after sending a request, a lost connection after a
    /// write. Someone has to reconcile it.
    Uncertain,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Rejected => "rejected",
            Outcome::Uncertain => "uncertain",
        })
    }
}
