//! A queue's full snapshot: the ledger and what lies outside it.

use core::fmt;

use tally_queue::Ledger;

/// Where a queue stands in its life.
///
/// # Examples
///
/// ```
/// assert_eq!(tally_redis::State::Draining.to_string(), "draining");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Accepting puts.
    Open,
    /// Shut down gracefully: no puts, the buffer and redeliveries are still delivered.
    Draining,
    /// No puts and nothing more to deliver: after `shutdown_now`, or once a graceful
    /// shutdown has drained (every accepted job ended).
    Closed,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Open => "open",
            State::Draining => "draining",
            State::Closed => "closed",
        })
    }
}

/// One atomic snapshot from [`Queue::status`](crate::Queue::status).
///
/// `ledger` is exact (one script read it): `buffered` is the stream's length minus its
/// pending list, `in_flight` the pending list. A delivery whose process died stays in
/// `in_flight` until its lease expires and it is reclaimed. The other counters are outside
/// the ledger's identity.
///
/// # Examples
///
/// ```
/// use tally_redis::{State, Status};
/// use tally_queue::Ledger;
///
/// let status = Status {
///     state: State::Open,
///     ledger: Ledger::default(),
///     redelivered: 0,
///     stale: 0,
///     dead_lettered: 0,
///     workers: 0,
///     foreign: 0,
///     clock_steps: 0,
/// };
/// assert!(status.ledger.is_balanced());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status {
    /// The queue's state.
    pub state: State,
    /// The ledger.
    pub ledger: Ledger,
    /// Deliveries handed out again after a lease expired or a delivery was dropped.
    pub redelivered: u64,
    /// Resolves and retries refused as stale (not counted in the ledger); a stale one
    /// repeated after a lost reply counts again.
    pub stale: u64,
    /// Records written to the dead-letter list for accepted jobs (also counted in
    /// `ledger.abandoned`, or in `ledger.discarded` for a lease that expired after
    /// `shutdown_now`). Foreign entries are counted in `foreign` instead.
    pub dead_lettered: u64,
    /// Registered workers whose heartbeat has not expired.
    pub workers: u64,
    /// Entries something else added to the stream (never accepted, so outside the
    /// ledger), removed and kept as dead letters ([`Record::is_foreign`](crate::Record::is_foreign)).
    pub foreign: u64,
    /// Steps of the server's clock the handles saw (each moved the leases with it).
    pub clock_steps: u64,
}
