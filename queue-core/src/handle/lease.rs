//! The state both delivery types share: the item, its id and attempt, and whatever keeps
//! the queue alive. A lease ends exactly once, by a resolve, a retry, or its drop.

use crate::engine::Handout;
use crate::fate::holding::Ticket;
use crate::fate::journal::JobEvent;
use crate::fate::{Owner, Steward};
use crate::job_id::JobId;
use crate::outcome::Outcome;

/// `item` is `Some` until the delivery ends; `Drop` hands an unresolved delivery to the
/// steward as abandoned. The methods that end it take `item` out first, so `Drop` then
/// does nothing.
pub(crate) struct Lease<T, O: Owner<T>> {
    owner: O,
    id: JobId,
    /// Which delivery of this id this is, from 1 (see `Delivery::attempt`): a `u32`, kept
    /// as a word so that no part of the lease is written narrower than it is later read
    /// (a move of the lease reads it a word or more at a time).
    attempt: u64,
    item: Option<T>,
    /// When the item was handed out, for the time in flight.
    #[cfg(feature = "metrics")]
    since: std::time::Instant,
}

impl<T, O: Owner<T>> Lease<T, O> {
    #[inline]
    pub(crate) fn new(owner: O, handout: Handout, item: T) -> Self {
        Lease {
            owner,
            id: handout.id,
            attempt: u64::from(handout.attempt),
            item: Some(item),
            #[cfg(feature = "metrics")]
            since: std::time::Instant::now(),
        }
    }

    #[inline]
    pub(crate) fn steward(&self) -> &Steward<T> {
        self.owner.steward()
    }

    #[inline]
    pub(crate) fn owner(&self) -> &O {
        &self.owner
    }

    #[inline]
    pub(crate) fn id(&self) -> JobId {
        self.id
    }

    #[inline]
    pub(crate) fn attempt(&self) -> u32 {
        // Lossless: the word was made from a `u32`.
        self.attempt as u32
    }

    #[inline]
    pub(crate) fn item(&self) -> &T {
        self.item
            .as_ref()
            .expect("a delivery holds its item until it is consumed")
    }

    #[inline]
    pub(crate) fn item_mut(&mut self) -> &mut T {
        self.item
            .as_mut()
            .expect("a delivery holds its item until it is consumed")
    }

    /// Ends the delivery with `outcome`. The item leaves the lease first, so that the
    /// lease's drop does nothing; the steward guards it while the ending goes on.
    // Always: on the hot path.
    #[inline(always)]
    pub(crate) fn resolve(mut self, outcome: Outcome) -> T {
        let item = self
            .item
            .take()
            .expect("a delivery holds its item until it is consumed");
        let attempt = self.attempt();
        self.owner
            .steward()
            .resolve(self.id, attempt, outcome, item)
    }

    /// Puts the item back for its next attempt; refused (the lease comes back, still in
    /// flight) when the policy allows no further attempt or the queue takes no returns.
    pub(crate) fn retry(self) -> Result<JobId, Self> {
        let id = self.id;
        self.send_back(|steward, id, attempt, take_item, put_back| {
            steward
                .retry(id, attempt, take_item, put_back)
                .then_some(())
        })
        .map(|(_, ())| id)
    }

    /// As [`retry`](Lease::retry), but the item is held back until the steward's
    /// `release` with the ticket returned here (see `fate/holding.rs`); the owner comes
    /// along, to keep the queue alive for that call.
    pub(crate) fn hold(self) -> Result<(O, Ticket), Self>
    where
        O: Clone,
    {
        self.send_back(|steward, id, attempt, take_item, put_back| {
            steward.hold(id, attempt, take_item, put_back)
        })
        .map(|(lease, ticket)| (lease.owner.clone(), ticket))
    }

    /// What a retry and a held retry share: refused if the policy allows no further
    /// attempt; otherwise `send` takes the item out of this delivery (the journal hears of
    /// it while the item is still here) and, if the queue refuses it, puts it back, and
    /// the lease comes back with it. Once the item is out, the lease's drop does nothing.
    fn send_back<R>(
        mut self,
        send: impl FnOnce(
            &Steward<T>,
            JobId,
            u32,
            &mut dyn FnMut() -> T,
            &mut dyn FnMut(T),
        ) -> Option<R>,
    ) -> Result<(Self, R), Self> {
        let (id, attempt) = (self.id, self.attempt());
        let steward = self.owner.steward();
        if !steward.may_retry(attempt) {
            steward.note(|| JobEvent::RetryRefused(id));
            return Err(self);
        }
        let slot = core::cell::Cell::new(self.item.take());
        let sent = send(
            steward,
            id,
            attempt,
            &mut || {
                slot.take()
                    .expect("a delivery holds its item until it is consumed")
            },
            &mut |item| slot.set(Some(item)),
        );
        match sent {
            Some(r) => Ok((self, r)),
            None => {
                self.item = slot.take();
                Err(self)
            }
        }
    }
}

impl<T, O: Owner<T>> Drop for Lease<T, O> {
    #[inline]
    fn drop(&mut self) {
        if let Some(item) = self.item.take() {
            // The lease's parts, not the lease: a lease whose address is never taken
            // stays in registers, and the drop of a resolved one folds away.
            self.owner.steward().dropped(self.id, self.attempt(), item);
        }
        // Every lease drops once, whichever way it ended.
        #[cfg(feature = "metrics")]
        crate::metrics::delivery_ended(self.steward().keys(), self.since.elapsed());
    }
}
