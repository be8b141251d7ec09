//! How accepted items ended, as a test's own records saw them, and the ledger a settled
//! queue must report for those ends.

use std::collections::HashMap;

use tally_queue::{Ledger, Outcome};

/// How one accepted item ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    Succeeded,
    Rejected,
    Uncertain,
    /// Dropped unresolved under `Abandon`.
    Abandoned,
    /// Drained by an immediate shutdown and handed back.
    Discarded,
    /// Under `Redeliver`: its last allowed delivery was abandoned; a dead letter with
    /// reason `Exhausted` (abandoned in the ledger).
    DeadLettered,
    /// Under `Redeliver`: abandoned after an immediate shutdown; a dead letter with reason
    /// `ShutDownNow` (discarded in the ledger).
    DeadDiscarded,
}

impl From<Outcome> for End {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Succeeded => End::Succeeded,
            Outcome::Rejected => End::Rejected,
            Outcome::Uncertain => End::Uncertain,
        }
    }
}

/// How many items ended each way: a tally kept apart from the queue's ledger.
#[derive(Debug, Default)]
pub struct Ends(HashMap<End, u64>);

impl Ends {
    /// Counts one item that ended as `end`.
    pub fn record(&mut self, end: End) {
        *self.0.entry(end).or_default() += 1;
    }

    /// The items that ended as `end`.
    pub fn count(&self, end: End) -> u64 {
        self.0.get(&end).copied().unwrap_or(0)
    }

    /// The ledger a settled queue (nothing buffered, nothing in flight) must report after
    /// accepting `accepted` items that ended as counted here.
    pub fn settled_ledger(&self, accepted: u64) -> Ledger {
        let mut ledger = Ledger::default();
        ledger.accepted = accepted;
        ledger.buffered = 0;
        ledger.in_flight = 0;
        ledger.succeeded = self.count(End::Succeeded);
        ledger.rejected = self.count(End::Rejected);
        ledger.uncertain = self.count(End::Uncertain);
        ledger.abandoned = self.count(End::Abandoned) + self.count(End::DeadLettered);
        ledger.discarded = self.count(End::Discarded) + self.count(End::DeadDiscarded);
        ledger
    }
}
