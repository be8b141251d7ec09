//! What was accepted, what is pending, and how everything else ended.

use core::fmt;

use crate::outcome::Outcome;
use crate::sync::{AtomicU64, AtomicUsize, Ordering};

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
/// ([`Ledger::is_balanced`]). The fields are kept by separate counters (`buffered` is the
/// buffer's own length), so this identity is a real check. While operations run, a
/// snapshot reads the counters one after the other and may be off by the items in motion.
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
    /// For an instant this can read one higher per put racing a shutdown: such a put has
    /// drawn its id when the closed buffer refuses it, and counts as accepted until it
    /// takes the id back, just before it returns [`TryPutError::ShutDown`](crate::TryPutError::ShutDown).
    /// A snapshot taken while no put is running is exact.
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
    /// Always true of a snapshot taken while no operation runs.
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

/// The live counters behind a [`Ledger`].
///
/// `issued` doubles as the id sequence and the accepted count; `ended` is the one counter
/// every ending (resolution, abandonment, discard, and a revoked id) goes through, so that
/// "unfinished is zero" is `ended == issued` and the last ending cannot miss it (all endings
/// are read-modify-writes of one location, so the last one sees all the others).
///
/// Edges: the `u64` counters are not checked for wrapping (2^64 puts do not happen);
/// `in_flight` is a `usize` gauge bounded by the number of live deliveries.
#[derive(Debug)]
pub(crate) struct Tally {
    /// Ids handed out, including revoked ones.
    issued: AtomicU64,
    /// Ids drawn by a put that then found the buffer closed; never accepted.
    revoked: AtomicU64,
    /// Every ending, plus every revoked id.
    ended: AtomicU64,
    in_flight: AtomicUsize,
    succeeded: AtomicU64,
    rejected: AtomicU64,
    uncertain: AtomicU64,
    abandoned: AtomicU64,
    discarded: AtomicU64,
}

impl Tally {
    #[cfg(not(loom))]
    pub(crate) const fn new() -> Self {
        Tally {
            issued: AtomicU64::new(0),
            revoked: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            succeeded: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            uncertain: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
        }
    }

    #[cfg(loom)]
    pub(crate) fn new() -> Self {
        Tally {
            issued: AtomicU64::new(0),
            revoked: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            succeeded: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            uncertain: AtomicU64::new(0),
            abandoned: AtomicU64::new(0),
            discarded: AtomicU64::new(0),
        }
    }

    /// Draws the next id. Called before the item enters the buffer, so `ended <= issued`
    /// always holds.
    #[inline]
    pub(crate) fn issue(&self) -> u64 {
        // Relaxed: the id only needs to be unique; the buffer push that follows publishes
        // the item, and the `ended` read-modify-writes order the accounting.
        self.issued.fetch_add(1, Ordering::Relaxed)
    }

    /// A put drew an id and then found the buffer closed. Returns whether this ending made
    /// the unfinished count zero.
    #[cold]
    pub(crate) fn revoke(&self) -> bool {
        // Relaxed: a statistic; `end` below orders it.
        self.revoked.fetch_add(1, Ordering::Relaxed);
        self.end(1)
    }

    /// An item left the buffer for a consumer.
    #[inline]
    pub(crate) fn deliver(&self) {
        // Relaxed: a gauge for snapshots; nothing synchronizes through it.
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// An in-flight item went back into the buffer.
    #[inline]
    pub(crate) fn undeliver(&self) {
        // Relaxed: a gauge for snapshots; nothing synchronizes through it.
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
    }

    /// An in-flight item ended with `outcome` (`None`: abandoned). Returns whether this
    /// ending made the unfinished count zero.
    #[inline]
    pub(crate) fn resolve(&self, outcome: Option<Outcome>) -> bool {
        let counter = match outcome {
            Some(Outcome::Succeeded) => &self.succeeded,
            Some(Outcome::Rejected) => &self.rejected,
            Some(Outcome::Uncertain) => &self.uncertain,
            None => &self.abandoned,
        };
        // Relaxed: statistics; `end` below carries the ordering joiners rely on.
        counter.fetch_add(1, Ordering::Relaxed);
        // Relaxed: a gauge for snapshots.
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.end(1)
    }

    /// `n` buffered items were drained and handed back. Returns whether this made the
    /// unfinished count zero.
    pub(crate) fn discard(&self, n: u64) -> bool {
        if n == 0 {
            return false;
        }
        // Relaxed: a statistic; `end` below orders it.
        self.discarded.fetch_add(n, Ordering::Relaxed);
        self.end(n)
    }

    /// An in-flight item was discarded (abandoned after an immediate shutdown, under the
    /// redelivery policy). Returns whether this made the unfinished count zero.
    #[cold]
    pub(crate) fn discard_in_flight(&self) -> bool {
        // Relaxed: a statistic and a gauge; `end` below orders them.
        self.discarded.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.end(1)
    }

    /// Records `n` endings and tells whether they brought the unfinished count to zero.
    #[inline]
    fn end(&self, n: u64) -> bool {
        // AcqRel: release this ending (and the work before it) to joiners that acquire
        // `ended`; acquire the earlier endings so the last one sees every id they ended.
        let ended = self.ended.fetch_add(n, Ordering::AcqRel) + n;
        // Acquire: every id that has ended was issued before its item reached the buffer, so
        // this read sees at least `ended`; equal means nothing is left.
        ended == self.issued.load(Ordering::Acquire)
    }

    /// Whether every accepted item has ended.
    #[inline]
    pub(crate) fn is_settled(&self) -> bool {
        self.unfinished() == 0
    }

    /// Accepted minus ended. Reads `ended` before `issued`: both only grow and
    /// `ended <= issued`, so a zero here means there was an instant with nothing unfinished.
    #[inline]
    pub(crate) fn unfinished(&self) -> u64 {
        // Acquire: pairs with the AcqRel endings, so a joiner that sees zero also sees the
        // effects of the work that ended.
        let ended = self.ended.load(Ordering::Acquire);
        // Acquire: read after `ended`; see above.
        let issued = self.issued.load(Ordering::Acquire);
        issued.saturating_sub(ended)
    }

    /// Reads every counter; `buffered` comes from the buffer itself.
    pub(crate) fn snapshot(&self, buffered: usize) -> Ledger {
        // Acquire throughout: observers; a snapshot is exact only at quiescent points.
        let issued = self.issued.load(Ordering::Acquire);
        let revoked = self.revoked.load(Ordering::Acquire);
        Ledger {
            accepted: issued.saturating_sub(revoked),
            buffered: buffered as u64,
            in_flight: self.in_flight.load(Ordering::Acquire) as u64,
            succeeded: self.succeeded.load(Ordering::Acquire),
            rejected: self.rejected.load(Ordering::Acquire),
            uncertain: self.uncertain.load(Ordering::Acquire),
            abandoned: self.abandoned.load(Ordering::Acquire),
            discarded: self.discarded.load(Ordering::Acquire),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn ending_the_last_item_reports_zero() {
        let tally = Tally::new();
        tally.issue();
        tally.issue();
        tally.deliver();
        assert!(!tally.resolve(Some(Outcome::Succeeded)));
        assert_eq!(tally.unfinished(), 1);
        assert!(tally.discard(1));
        assert!(tally.is_settled());
        assert!(!tally.discard(0));
    }

    #[test]
    fn revoked_ids_are_not_accepted() {
        let tally = Tally::new();
        tally.issue();
        assert!(tally.revoke());
        let ledger = tally.snapshot(0);
        assert_eq!(ledger.accepted, 0);
        assert!(ledger.is_balanced());
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
            tally.issue();
            tally.deliver();
            tally.resolve(outcome);
        }
        let ledger = tally.snapshot(0);
        assert_eq!(
            (
                ledger.succeeded,
                ledger.rejected,
                ledger.uncertain,
                ledger.abandoned
            ),
            (1, 1, 1, 1)
        );
        assert_eq!((ledger.accepted, ledger.in_flight), (4, 0));
        assert!(ledger.is_balanced());
    }
}
