//! The outcome counters, and the snapshot that turns them and the buffer's counts into a
//! [`Ledger`].
//!
//! # What a snapshot promises
//!
//! Every snapshot balances (`accepted == buffered + in_flight + succeeded + rejected +
//! uncertain + abandoned + discarded`), its gauges (`buffered`, `in_flight`) are never
//! above `accepted`, and its six counts never go down from one snapshot to the next, taken
//! by any observers in any order. One taken while no operation runs is exact.
//!
//! The counts change one at a time, so a snapshot of a running queue reads them one after
//! the other, in an order where each read is at least what the reads before it imply:
//!
//! 1. `ended`, the buffer's endings (an Acquire, which pairs with every ending's release);
//! 2. the four outcome counters. Each ending other than a success bumps its counter before
//!    the buffer counts it, so these include every such ending read in 1, and perhaps some
//!    on their way (the bumps are releases, so a snapshot that reads one sees its item's
//!    take);
//! 3. `succeeded` = `ended - others`, a lower bound of the successes among the endings read
//!    in 1; raised to the highest such bound any snapshot has seen (`floor`, one
//!    `fetch_max` here, none on a resolve), so it never goes down;
//! 4. the items in the lane (returned, not ended; see `lane.rs`; its count is raised with
//!    a release, so a snapshot that reads it sees those items' takes);
//! 5. `taken`, the items taken out of the buffer: every item counted in 2, 3 and 4 was
//!    taken before it was counted there;
//! 6. `accepted`, the ids drawn: every item taken was accepted first.
//!
//! Then `in_flight = taken - succeeded - others - lane` and
//! `buffered = accepted - taken + lane`, both never negative by the order above, and the
//! identity holds by construction. An ending on its way shows under its outcome with its
//! item no longer in flight, a success on its way shows in flight until its ending counts.

use crate::ledger::Ledger;
use crate::outcome::Outcome;
use crate::sync::{AtomicU64, Ordering};

/// The outcome counters behind a [`Ledger`]; the buffer keeps the rest (`buffer/mod.rs`).
///
/// Each ending other than a success bumps its outcome's counter here before the buffer
/// counts the ending, so a joiner that sees the queue settled sees every outcome; successes
/// are the endings left over (see the module docs), so a success costs no counter.
///
/// Edges: the counters are not checked for wrapping (2^64 endings do not happen).
#[derive(Debug)]
pub(crate) struct Tally {
    rejected: AtomicU64,
    uncertain: AtomicU64,
    abandoned: AtomicU64,
    discarded: AtomicU64,
    /// The most successes a snapshot has reported (see the module docs).
    floor: AtomicU64,
}

/// The outcome counts of one snapshot (step 2 and 3 of the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcomes {
    pub(crate) succeeded: u64,
    pub(crate) rejected: u64,
    pub(crate) uncertain: u64,
    pub(crate) abandoned: u64,
    pub(crate) discarded: u64,
}

impl Outcomes {
    /// Every ending these counts account for.
    pub(crate) fn ended(&self) -> u64 {
        self.succeeded + self.rejected + self.uncertain + self.abandoned + self.discarded
    }
}

impl Tally {
    crate::const_fn! {
        pub(crate) fn new() -> Self {
            Tally {
                rejected: AtomicU64::new(0),
                uncertain: AtomicU64::new(0),
                abandoned: AtomicU64::new(0),
                discarded: AtomicU64::new(0),
                floor: AtomicU64::new(0),
            }
        }
    }

    /// Counts one delivery resolved with `outcome` (`None`: abandoned), before its ending
    /// is counted. A success is counted by its ending alone.
    #[inline]
    pub(crate) fn resolve(&self, outcome: Option<Outcome>) {
        let counter = match outcome {
            Some(Outcome::Succeeded) => return,
            Some(Outcome::Rejected) => &self.rejected,
            Some(Outcome::Uncertain) => &self.uncertain,
            None => &self.abandoned,
        };
        // Release: a snapshot that acquires this count, possibly ahead of the ending,
        // sees the item's take (it happened before its delivery ended; see the module
        // docs).
        counter.fetch_add(1, Ordering::Release);
    }

    /// Counts `n` items discarded, before their endings are counted.
    pub(crate) fn discard(&self, n: u64) {
        if n != 0 {
            // Release: as in `resolve`.
            self.discarded.fetch_add(n, Ordering::Release);
        }
    }

    /// Steps 2 and 3 of the module docs, for `ended` endings read just before.
    pub(crate) fn outcomes(&self, ended: u64) -> Outcomes {
        // Acquire (each): pairs with the endings that released them; read after `ended`,
        // so each includes every outcome among the endings counted there.
        let rejected = self.rejected.load(Ordering::Acquire);
        let uncertain = self.uncertain.load(Ordering::Acquire);
        let abandoned = self.abandoned.load(Ordering::Acquire);
        let discarded = self.discarded.load(Ordering::Acquire);
        let bound = ended.saturating_sub(rejected + uncertain + abandoned + discarded);
        // AcqRel: the acquire half brings what the snapshot that raised the floor read
        // (the takes of those successes), so this snapshot's later read of the takes is
        // not behind them; the release half passes this snapshot's reads on likewise.
        let floor = self.floor.fetch_max(bound, Ordering::AcqRel);
        Outcomes {
            succeeded: floor.max(bound),
            rejected,
            uncertain,
            abandoned,
            discarded,
        }
    }
}

/// Steps 4 to 6 of the module docs: the ledger from the outcomes, the items in the lane,
/// the items taken and the items accepted, read in that order.
pub(crate) fn ledger(outcomes: Outcomes, lane: u64, taken: u64, accepted: u64) -> Ledger {
    let accepted = accepted.max(taken);
    let settled = outcomes.ended() + lane;
    debug_assert!(taken >= settled, "{outcomes:?}, lane {lane}, taken {taken}");
    Ledger {
        accepted,
        buffered: accepted - taken + lane,
        in_flight: taken.saturating_sub(settled),
        succeeded: outcomes.succeeded,
        rejected: outcomes.rejected,
        uncertain: outcomes.uncertain,
        abandoned: outcomes.abandoned,
        discarded: outcomes.discarded,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_counts_each_outcome_and_balances() {
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
        let outcomes = tally.outcomes(6);
        assert_eq!(
            outcomes,
            Outcomes {
                succeeded: 1,
                rejected: 1,
                uncertain: 1,
                abandoned: 1,
                discarded: 2
            }
        );
        let ledger = ledger(outcomes, 1, 8, 9);
        assert_eq!(
            (ledger.accepted, ledger.buffered, ledger.in_flight),
            (9, 2, 1)
        );
        assert!(ledger.is_balanced());
    }

    #[test]
    fn successes_never_go_down_when_outcomes_run_ahead_of_their_endings() {
        let tally = Tally::new();
        assert_eq!(tally.outcomes(5).succeeded, 5);
        // Three rejections counted, their endings not yet: the bound alone would read 2.
        for _ in 0..3 {
            tally.resolve(Some(Outcome::Rejected));
        }
        let ahead = tally.outcomes(5);
        assert_eq!((ahead.succeeded, ahead.rejected), (5, 3));
        let ledger = ledger(ahead, 0, 8, 8);
        assert!(ledger.is_balanced());
        assert_eq!(
            ledger.in_flight, 0,
            "the three rejections are on their way out"
        );
        // Their endings land.
        assert_eq!(tally.outcomes(8).succeeded, 5);
    }
}
