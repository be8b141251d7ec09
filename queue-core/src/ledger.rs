//! What was accepted, what is pending, and how everything else ended.

use core::fmt;

use crate::buffer::Counts;
use crate::outcome::Outcome;
use crate::sync::{AtomicU64, Ordering};

/// A snapshot of a queue's accounting, from [`Queue::ledger`](crate::Queue::ledger) or
/// returned by [`Queue::join`](crate::Queue::join).
///
/// Every accepted item is in exactly one place at any quiescent point (no operation
/// running), so there
///
/// ```text
/// accepted == buffered + in_flight + succeeded + rejected + uncertain + abandoned + discarded
/// ```
///
/// ([`Ledger::is_balanced`]). `accepted`, `buffered` and `in_flight` come from the buffer's
/// counts (items put, items taken out, endings). `rejected`, `uncertain`, `abandoned` and
/// `discarded` come from counters of their own, each bumped before its ending is counted.
/// `succeeded`, the common ending, has no counter: it is the buffer's endings minus the
/// other four, so a successful resolve costs no atomic operation beyond the ending itself.
/// The identity therefore no longer checks two bookkeepings against each other: a missed or
/// doubled ending shifts `succeeded` instead of unbalancing the ledger. The other four
/// outcomes are still counted independently of the endings, so a test that keeps its own
/// record of what ended how can check them (the fault runs and the loom models do). While
/// operations run, a snapshot reads the counts one after the other and may be off by the
/// items in motion: endings in progress can show under their outcome with as many
/// successes fewer (up to `n` for a [`Queue::shutdown_now`](crate::Queue::shutdown_now)
/// discarding `n` items), and a retry in progress can read `accepted` one low.
///
/// An empty buffer or a returned `join` does not say the work succeeded; `succeeded` does.
///
/// The struct is `#[non_exhaustive]`, so a field added later (a new way for a job to end)
/// is not a breaking change. Its fields stay public to read; to build one (a test's
/// expected ledger, an adapter's), start from [`Ledger::default`] and set the fields:
///
/// ```
/// let mut expected = tally_queue::Ledger::default();
/// expected.accepted = 1;
/// expected.succeeded = 1;
/// let queue = tally_queue::Queue::unbounded();
/// queue.try_put(()).unwrap();
/// queue.try_get().unwrap().succeed();
/// assert_eq!(queue.ledger(), expected);
/// ```
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
///
/// let queue = Queue::unbounded();
/// for n in 0..4 {
///     queue.try_put(n).unwrap();
/// }
/// queue.try_get().unwrap().succeed();
/// queue.try_get().unwrap().reject();
/// let held = queue.try_get().unwrap();
/// let drained = queue.shutdown_now();
/// assert_eq!(drained.len(), 1);
///
/// let ledger = queue.ledger();
/// assert_eq!(ledger.accepted, 4);
/// assert_eq!((ledger.buffered, ledger.in_flight), (0, 1));
/// assert_eq!((ledger.succeeded, ledger.rejected, ledger.discarded), (1, 1, 1));
/// assert_eq!(ledger.unfinished(), 1);
/// assert!(ledger.is_balanced());
/// drop(held); // recorded as abandoned
/// assert_eq!(queue.ledger().abandoned, 1);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Ledger {
    /// Items the queue accepted (puts that returned a [`JobId`](crate::JobId)).
    ///
    /// On an unbounded, journaled or above-65,536 queue this can read one higher for
    /// an instant per put racing a shutdown: such a put has drawn its id when the closed
    /// buffer refuses it, and counts as accepted until it takes the id back, just before
    /// it returns [`TryPutError::ShutDown`](crate::TryPutError::ShutDown). On a ring-backed
    /// queue a snapshot taken while a [`retry`](crate::Delivery::retry) runs can read one
    /// lower (the retry is counted, its new place not yet) or one higher (the other way
    /// round). A snapshot taken while no put or retry is running is exact, as is the
    /// ledger a join returns once it finds the queue settled.
    pub accepted: u64,
    /// Items waiting in the buffer.
    pub buffered: u64,
    /// Items delivered to a consumer and not yet resolved.
    pub in_flight: u64,
    /// Deliveries resolved as [`Outcome::Succeeded`].
    pub succeeded: u64,
    /// Deliveries resolved as [`Outcome::Rejected`].
    pub rejected: u64,
    /// Deliveries resolved as [`Outcome::Uncertain`].
    pub uncertain: u64,
    /// Deliveries dropped without an outcome (early return, panic unwinding). Under
    /// [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver) only the last allowed
    /// delivery counts here (the item is then a [`DeadLetter`](crate::DeadLetter)); an
    /// abandoned delivery that goes back counts as `buffered` again, and the redeliveries
    /// themselves are counted outside the ledger
    /// ([`Queue::redeliveries`](crate::Queue::redeliveries)).
    pub abandoned: u64,
    /// Buffered items removed by [`Queue::shutdown_now`](crate::Queue::shutdown_now) and
    /// handed back to its caller, never processed; under the redelivery policy, also
    /// deliveries abandoned after it (kept as dead letters).
    pub discarded: u64,
}

impl Ledger {
    /// Items that still need an ending: `buffered + in_flight`, computed as `accepted`
    /// minus everything that ended. This is what [`Queue::join`](crate::Queue::join) waits
    /// to see reach zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(()).unwrap();
    /// assert_eq!(queue.ledger().unfinished(), 1);
    /// ```
    #[must_use]
    pub fn unfinished(&self) -> u64 {
        self.accepted.saturating_sub(self.ended())
    }

    /// Items that ended, in any way: resolved, abandoned or discarded.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(()).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// assert_eq!(queue.ledger().ended(), 1);
    /// ```
    #[must_use]
    pub fn ended(&self) -> u64 {
        self.succeeded + self.rejected + self.uncertain + self.abandoned + self.discarded
    }

    /// Whether the accounting identity holds:
    /// `accepted == buffered + in_flight + succeeded + rejected + uncertain + abandoned + discarded`.
    ///
    /// Always true of a snapshot taken while no operation runs. Since `succeeded` is
    /// derived from the others (see the type's docs), on a snapshot of a running queue it
    /// is false only when the snapshot read more outcomes ahead of their endings than it
    /// counted successes, or read `accepted` behind the buffer's counts (a retry, or a put
    /// revoked by a shutdown, in progress).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(()).unwrap();
    /// let _held = queue.try_get().unwrap();
    /// assert!(queue.ledger().is_balanced());
    /// ```
    #[must_use]
    pub fn is_balanced(&self) -> bool {
        self.accepted == self.buffered + self.in_flight + self.ended()
    }
}

impl fmt::Display for Ledger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "accepted {}: {} buffered, {} in flight, {} succeeded, {} rejected, {} uncertain, \
             {} abandoned, {} discarded",
            self.accepted,
            self.buffered,
            self.in_flight,
            self.succeeded,
            self.rejected,
            self.uncertain,
            self.abandoned,
            self.discarded
        )
    }
}

/// The outcome counters behind a [`Ledger`]; the buffer keeps the rest (`buffer.rs`).
///
/// Each ending other than a success bumps its outcome's counter here before the buffer
/// counts the ending, so a joiner that sees the queue settled sees every outcome; successes
/// are the endings left over (see [`Ledger`]).
///
/// Edges: the counters are not checked for wrapping (2^64 endings do not happen).
#[derive(Debug)]
pub(crate) struct Tally {
    rejected: AtomicU64,
    uncertain: AtomicU64,
    abandoned: AtomicU64,
    discarded: AtomicU64,
}

impl Tally {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Tally {
            rejected: AtomicU64::new(0),
            uncertain: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
        }
    }

    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Tally {
            rejected: AtomicU64::new(0),
            uncertain: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
        }
    }

    /// Counts one delivery resolved with `outcome` (`None`: abandoned). A success is
    /// counted by its ending alone.
    #[inline]
    pub(crate) fn resolve(&self, outcome: Option<Outcome>) {
        let counter = match outcome {
            Some(Outcome::Succeeded) => return,
            Some(Outcome::Rejected) => &self.rejected,
            Some(Outcome::Uncertain) => &self.uncertain,
            None => &self.abandoned,
        };
        // Relaxed: the buffer's ending that follows releases it.
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `n` items discarded.
    pub(crate) fn discard(&self, n: u64) {
        if n != 0 {
            // Relaxed: as in `resolve`.
            self.discarded.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The ledger, from the buffer's counts taken before the outcomes (`buffer.rs`).
    pub(crate) fn snapshot(&self, counts: Counts) -> Ledger {
        // Acquire (each): pairs with the endings that released them. Read after the
        // buffer's counts, so each includes every outcome among the endings counted there.
        let rejected = self.rejected.load(Ordering::Acquire);
        let uncertain = self.uncertain.load(Ordering::Acquire);
        let abandoned = self.abandoned.load(Ordering::Acquire);
        let discarded = self.discarded.load(Ordering::Acquire);
        let ended = counts
            .accepted
            .saturating_sub(counts.buffered + counts.in_flight);
        Ledger {
            accepted: counts.accepted,
            buffered: counts.buffered,
            in_flight: counts.in_flight,
            succeeded: ended.saturating_sub(rejected + uncertain + abandoned + discarded),
            rejected,
            uncertain,
            abandoned,
            discarded,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn counts(accepted: u64) -> Counts {
        Counts {
            accepted,
            ..Counts::default()
        }
    }

    #[test]
    fn snapshot_counts_each_outcome_separately() {
        let tally = Tally::new();
        for outcome in [
            Some(Outcome::Succeeded),
            Some(Outcome::Rejected),
            Some(Outcome::Uncertain),
            None,
        ] {
            tally.resolve(outcome);
        }
        tally.discard(0);
        tally.discard(2);
        let ledger = tally.snapshot(counts(6));
        assert_eq!(
            (
                ledger.succeeded,
                ledger.rejected,
                ledger.uncertain,
                ledger.abandoned,
                ledger.discarded
            ),
            (1, 1, 1, 1, 2)
        );
        assert!(ledger.is_balanced());
        assert_eq!(
            tally.snapshot(counts(7)).succeeded,
            2,
            "successes are the rest"
        );
        // Outcomes read ahead of their endings: no negative success, and the snapshot
        // says it is off.
        let ahead = tally.snapshot(counts(4));
        assert_eq!(ahead.succeeded, 0);
        assert!(!ahead.is_balanced());
    }
}
