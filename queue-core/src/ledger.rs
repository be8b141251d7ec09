//! What was accepted, what is pending, and how everything else ended.

use core::fmt;

/// A snapshot of a queue's accounting, from [`Queue::ledger`](crate::Queue::ledger) or
/// returned by [`Queue::join`](crate::Queue::join).
///
/// Every accepted item is in exactly one place, so every snapshot balances:
///
/// ```text
/// accepted == buffered + in_flight + succeeded + rejected + uncertain + abandoned + discarded
/// ```
///
/// ([`Ledger::is_balanced`]).
///
/// **Counters and gauges.** The six counts `accepted`, `succeeded`, `rejected`,
/// `uncertain`, `abandoned` and `discarded` never decrease from one snapshot to the next,
/// whoever takes them, so a metrics exporter can publish them as counters. `buffered` and
/// `in_flight` are gauges: they move both ways and are never above `accepted`.
///
/// **Exact at rest.** A snapshot taken while no operation runs is exact, as is the ledger
/// a [`join`](crate::Queue::join) returns. While operations run, a snapshot reads the
/// counts one after the other, and an item in motion is counted once, in one of the two
/// places it is moving between: a resolve on its way shows under its outcome (rejected,
/// uncertain, abandoned, discarded) with its item no longer in flight, or still in flight
/// (a success).
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
    /// Items the queue accepted (puts that returned a [`JobId`](crate::JobId)), counted
    /// once each, however often they were delivered.
    pub accepted: u64,
    /// Items waiting to be delivered: fresh ones, and ones that came back for another
    /// attempt (a [`retry`](crate::Delivery::retry), a redelivery, or a
    /// [`retry_at`](crate::Delivery::retry_at) whose deadline has not passed yet).
    pub buffered: u64,
    /// Items delivered to a consumer and not yet resolved.
    pub in_flight: u64,
    /// Deliveries resolved as [`Outcome::Succeeded`].
    ///
    /// [`Outcome::Succeeded`]: crate::Outcome::Succeeded
    pub succeeded: u64,
    /// Deliveries resolved as [`Outcome::Rejected`].
    ///
    /// [`Outcome::Rejected`]: crate::Outcome::Rejected
    pub rejected: u64,
    /// Deliveries resolved as [`Outcome::Uncertain`].
    ///
    /// [`Outcome::Uncertain`]: crate::Outcome::Uncertain
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
    /// Always true of a snapshot the queue made (see the type's docs); a ledger built or
    /// changed by hand may not be.
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
