//! The queue: a buffer of `(JobId, T)`, a ledger, and three classes of waiters.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::future::Future;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::buffer::{Buffer, Ended, PutRefused};
use crate::cancel::Cancellation;
use crate::dead_letter::DeadLetter;
use crate::delivery::{Delivery, Handout};
#[cfg(feature = "std")]
use crate::error::PutTimeoutError;
use crate::error::{PutError, TryGetError, TryPutError, ZeroCapacity};
use crate::get::Get;
use crate::job_id::JobId;
use crate::join::Join;
use crate::journal::{JobEvent, Journal, Journaled};
use crate::ledger::{Ledger, Tally};
use crate::lifecycle::{Lifecycle, Refusal};
use crate::outcome::Outcome;
use crate::policy::AbandonPolicy;
use crate::producer::Producer;
use crate::put::Put;
use crate::redelivery::{Fate, Redelivery};
use crate::registry::Registry;
#[cfg(target_has_atomic = "ptr")]
use crate::relay::Deferred;
use crate::ring::{Kind, Nothing};
use crate::shutdown_until::ShutdownUntil;
use crate::slots::Limit;
use crate::stream::Deliveries;
use crate::until::Until;
use crate::waiters::{Class, Waiters, Wake};
use crate::worker::Worker;

#[cfg(target_has_atomic = "ptr")]
use crate::delivery::OwnedDelivery;
#[cfg(target_has_atomic = "ptr")]
use crate::get::GetOwned;
#[cfg(target_has_atomic = "ptr")]
use crate::producer::OwnedProducer;
#[cfg(target_has_atomic = "ptr")]
use crate::stream::OwnedDeliveries;
#[cfg(target_has_atomic = "ptr")]
use crate::worker::OwnedWorker;

/// An acknowledgement-counting work queue: every accepted item is delivered with its
/// [`JobId`], every delivery ends exactly once with an [`Outcome`] (or as abandoned), and
/// the [`Ledger`] says what was accepted, what is pending, what was discarded and what
/// actually succeeded.
///
/// The verbs are `asyncio.Queue`'s: [`put`](Queue::put), [`get`](Queue::get),
/// [`join`](Queue::join), [`shutdown`](Queue::shutdown). Each waiting verb comes in three
/// forms: `try_x` never waits, `x()` returns a future, `x_blocking()` blocks the thread
/// (`std` only). The futures need no particular runtime.
///
/// Compared with `async-channel`, a get hands out a [`Delivery`] guard rather than the bare
/// item, and the queue counts how each delivery ends; with a `TaskTracker` or a `WaitGroup`,
/// the count is tied to items, not to tasks, so a forgotten or doubled acknowledgement
/// cannot be written.
///
/// `Queue<T>` is `Send + Sync` when `T: Send`. Share it by reference (scoped threads,
/// `block_on`) or through an `Arc` (then [`get_owned`](Queue::get_owned) and
/// [`worker_owned`](Queue::worker_owned) give `'static` guards).
///
/// # Examples
///
/// ```
/// use tally_queue::Queue;
/// use futures_lite::future::block_on;
///
/// let queue = Queue::bounded(2).unwrap();
/// block_on(async {
///     let id = queue.put("job").await.unwrap();
///     let delivery = queue.get().await.unwrap();
///     assert_eq!((delivery.id(), *delivery), (id, "job"));
///     delivery.succeed();
///     let ledger = queue.join().await;
///     assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
/// });
/// ```
pub struct Queue<T> {
    /// The buffered items with their ids, the limit, and the counts of items put, taken
    /// out and ended. Closed by shutdown: no put succeeds after `close`, which is what
    /// makes "accepted" and "shut down" exclusive.
    buffer: Buffer<T>,
    /// Shut down, orphaned, and the worker count.
    lifecycle: Lifecycle,
    /// The outcome counters.
    tally: Tally,
    /// Waiting gets: notified once per put, and all at once on shutdown.
    getters: Waiters,
    /// Waiting puts: notified once per freed slot, and all at once on shutdown and when the
    /// last worker leaves.
    putters: Waiters,
    /// Waiting joins: notified all at once when the unfinished count reaches zero.
    joiners: Waiters,
    /// Live [`Producer`] guards; the last one to leave shuts the queue down.
    producers: Registry,
    /// Whether in-flight work was asked to stop, and the deliveries waiting to hear it.
    cancellation: Cancellation,
    /// The redelivery lane and dead letters, under [`AbandonPolicy::Redeliver`]; `None`
    /// under [`AbandonPolicy::Abandon`], so that policy costs one branch on the paths it
    /// touches (an abandonment, an empty pop, an ending that settles the queue).
    redelivery: Option<Box<Redelivery<T>>>,
    /// Under [`AbandonPolicy::Uncertain`]: an abandoned delivery ends as uncertain. Read
    /// only on the abandon path (a delivery dropped unresolved), never on a get or a
    /// resolve.
    abandons_uncertain: bool,
    /// The observer of every job event, if one was installed.
    journal: Option<Journaled>,
}

impl<T> Queue<T> {
    /// A queue that holds at most `capacity` buffered items; a [`put`](Queue::put) on a
    /// full queue waits for a slot.
    ///
    /// Capacities up to 65 536 preallocate a ring buffer of that many slots; larger ones
    /// (up to `usize::MAX`, which is accepted) allocate as items arrive and enforce the
    /// same bound.
    ///
    /// A bounded buffer does not bound the work in progress: items already delivered do not
    /// count. To bound buffered plus in-flight items, use
    /// [`with_unfinished_limit`](Queue::with_unfinished_limit).
    ///
    /// # Errors
    ///
    /// [`ZeroCapacity`] if `capacity` is 0 (not read as "unbounded").
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// assert!(matches!(queue.try_put(2), Err(TryPutError::Full(2))));
    /// assert!(Queue::<u8>::bounded(0).is_err());
    /// assert_eq!(Queue::<u8>::bounded(usize::MAX).unwrap().capacity(), Some(usize::MAX));
    /// ```
    pub fn bounded(capacity: usize) -> Result<Self, ZeroCapacity> {
        if capacity == 0 {
            return Err(ZeroCapacity);
        }
        Ok(Self::with_limit(Limit::Buffered(capacity)))
    }

    /// A queue whose puts wait while `limit` items are unfinished: buffered, or delivered
    /// and not yet resolved. This bounds the work in progress, not only the buffer; a slot
    /// comes back when its item ends (resolved, abandoned or discarded).
    ///
    /// A [`retry`](crate::Delivery::retry) keeps its item's slot. On a queue without a
    /// journal and a limit of up to 65,536 it holds a second one for an instant (its new place is taken before its delivery
    /// ends): a [`try_put`](Queue::try_put) in that instant can find the queue full, and
    /// a waiting put is woken once the retry is done.
    ///
    /// # Errors
    ///
    /// [`ZeroCapacity`] if `limit` is 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::with_unfinished_limit(1).unwrap();
    /// queue.try_put("a").unwrap();
    /// let held = queue.try_get().unwrap();
    /// // The buffer is empty, but one item is still in flight.
    /// assert!(queue.try_put("b").unwrap_err().is_full());
    /// held.succeed();
    /// queue.try_put("b").unwrap();
    /// ```
    pub fn with_unfinished_limit(limit: usize) -> Result<Self, ZeroCapacity> {
        if limit == 0 {
            return Err(ZeroCapacity);
        }
        Ok(Self::with_limit(Limit::Unfinished(limit)))
    }

    /// A queue without a bound; puts never wait.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// for n in 0..1000 {
    ///     queue.try_put(n).unwrap();
    /// }
    /// assert_eq!(queue.len(), 1000);
    /// assert_eq!(queue.capacity(), None);
    /// ```
    #[must_use]
    pub fn unbounded() -> Self {
        Self::with_limit(Limit::None)
    }

    fn with_limit(limit: Limit) -> Self {
        // One list of woken relays for the three classes, so that one drain after a
        // transition that signals several classes wakes them all.
        #[cfg(target_has_atomic = "ptr")]
        let deferred = Deferred::new();
        #[cfg(target_has_atomic = "ptr")]
        let waiters = || Waiters::new(&deferred);
        #[cfg(not(target_has_atomic = "ptr"))]
        let waiters = Waiters::new;
        Queue {
            buffer: Buffer::new(limit),
            lifecycle: Lifecycle::new(),
            tally: Tally::new(),
            getters: waiters(),
            putters: waiters(),
            joiners: waiters(),
            producers: Registry::new(),
            cancellation: Cancellation::new(waiters()),
            redelivery: None,
            abandons_uncertain: false,
            journal: None,
        }
    }

    /// Installs `journal`, which from now on sees every [`JobEvent`] of this queue with
    /// its [`JobId`]; see [`Journal`] for when it is called and what it may do. Consumes
    /// and returns the queue, so the journal is in place before the queue is shared. A
    /// second call replaces the first journal.
    ///
    /// Without a journal, each event costs the queue one branch.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{JobState, Outcome, Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let id = queue.try_put("job").unwrap();
    /// assert_eq!(record.state(id), Some(JobState::Buffered { attempt: 1 }));
    /// queue.try_get().unwrap().uncertain();
    /// assert_eq!(record.state(id), Some(JobState::Ended(Outcome::Uncertain)));
    /// assert_eq!(record.uncertain(), vec![id]);
    /// ```
    #[must_use]
    pub fn with_journal(mut self, journal: impl Journal + 'static) -> Self {
        self.journal = Some(Journaled::new(Box::new(journal)));
        // The journal hears of an acceptance before the item can be taken (see
        // `buffer.rs`).
        self.buffer.for_journal();
        self
    }

    /// How many calls of the installed [`Journal`] panicked (each was caught; the queue
    /// went on, and that event was lost to the journal). 0 without a journal, and always
    /// 0 without `std` (where a panic is not caught).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{JobEvent, Journal, Queue};
    ///
    /// struct Fragile;
    /// impl Journal for Fragile {
    ///     fn record(&self, event: JobEvent) {
    ///         if let JobEvent::Accepted(_) = event {
    ///             panic!("disk full");
    ///         }
    ///     }
    /// }
    /// let queue = Queue::unbounded().with_journal(Fragile);
    /// queue.try_put(1).unwrap(); // accepted all the same
    /// assert_eq!(queue.journal_panics(), 1);
    /// assert_eq!(queue.try_get().unwrap().succeed(), 1);
    /// ```
    #[must_use]
    pub fn journal_panics(&self) -> usize {
        self.journal.as_ref().map_or(0, Journaled::panics)
    }

    /// Records an event in the journal, if one is installed. The event is built only then.
    #[inline(always)]
    pub(crate) fn note(&self, event: impl FnOnce() -> JobEvent) {
        if let Some(journal) = &self.journal {
            journal.record(event());
        }
    }

    /// Installs what happens to a delivery dropped unresolved (see [`AbandonPolicy`]);
    /// a queue without one behaves as [`AbandonPolicy::Abandon`]. Consumes and returns the
    /// queue, so the policy is fixed before the queue is shared.
    ///
    /// Under [`AbandonPolicy::Redeliver`], where each state sits:
    ///
    /// - a redelivered item is *buffered* again in the [`Ledger`] (it has not ended, and
    ///   is counted once, under its id); [`len`](Queue::len) counts it. Redeliveries are
    ///   counted outside the ledger, by [`redeliveries`](Queue::redeliveries);
    /// - an item whose last attempt was abandoned is *abandoned* in the ledger and kept as
    ///   a [`DeadLetter`] until [`take_dead_letters`](Queue::take_dead_letters);
    /// - a delivery abandoned after an immediate shutdown is *discarded* in the ledger and
    ///   kept as a [`DeadLetter`] with [`DeadReason::ShutDownNow`](crate::DeadReason).
    ///
    /// And how it meets shutdown: after a graceful [`shutdown`](Queue::shutdown), a
    /// redelivered item is still delivered (it was accepted), so a get on a shut-down,
    /// empty queue returns `ShutDown` only once nothing is unfinished (no delivery in
    /// flight could come back); until then it waits ([`try_get`](Queue::try_get) says
    /// `Empty`). After [`shutdown_now`](Queue::shutdown_now), redelivered items still
    /// buffered are drained with the rest, and a delivery abandoned later is discarded
    /// into the dead letters.
    ///
    /// Under [`AbandonPolicy::Uncertain`], a delivery dropped unresolved is counted
    /// *uncertain* in the ledger at once (its item dropped with it, as under `Abandon`),
    /// before or after any shutdown: nothing is redelivered, kept or discarded, so the
    /// queue meets shutdown exactly as under `Abandon`.
    ///
    /// Redelivered items go to the front of the line only in the sense that a get takes
    /// them when the buffer is empty: they queue behind the buffered items. They never
    /// wait for a slot: a bounded buffer can hold, beyond its capacity, as many
    /// redelivered items as there were deliveries in flight.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::bounded(8).unwrap().with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
    /// let id = queue.try_put("flaky").unwrap();
    /// drop(queue.try_get().unwrap()); // attempt 1 abandoned
    /// assert_eq!(queue.ledger().buffered, 1);
    /// let again = queue.try_get().unwrap();
    /// assert_eq!((again.id(), again.attempt()), (id, 2));
    /// again.succeed();
    /// let ledger = queue.ledger();
    /// assert_eq!((ledger.accepted, ledger.succeeded, ledger.abandoned), (1, 1, 0));
    /// assert_eq!(queue.redeliveries(), 1);
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::Uncertain);
    /// queue.try_put("charge card").unwrap();
    /// drop(queue.try_get().unwrap()); // may have charged: never again
    /// let ledger = queue.ledger();
    /// assert_eq!((ledger.uncertain, ledger.abandoned, ledger.buffered), (1, 0, 0));
    /// ```
    #[must_use]
    pub fn with_abandon_policy(mut self, policy: AbandonPolicy) -> Self {
        self.redelivery = match policy {
            AbandonPolicy::Abandon | AbandonPolicy::Uncertain => None,
            AbandonPolicy::Redeliver { max_attempts } => {
                Some(Box::new(Redelivery::new(max_attempts)))
            }
        };
        self.abandons_uncertain = policy == AbandonPolicy::Uncertain;
        self
    }

    /// The policy installed with [`with_abandon_policy`](Queue::with_abandon_policy).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// assert_eq!(Queue::<u8>::unbounded().abandon_policy(), AbandonPolicy::Abandon);
    /// let policy = AbandonPolicy::redeliver(4).unwrap();
    /// assert_eq!(Queue::<u8>::unbounded().with_abandon_policy(policy).abandon_policy(), policy);
    /// ```
    #[must_use]
    pub fn abandon_policy(&self) -> AbandonPolicy {
        match &self.redelivery {
            None if self.abandons_uncertain => AbandonPolicy::Uncertain,
            None => AbandonPolicy::Abandon,
            Some(redelivery) => AbandonPolicy::redeliver(redelivery.max_attempts())
                .expect("the limit was valid when installed"),
        }
    }

    /// Takes the dead letters kept so far (oldest first): items whose last allowed
    /// delivery was abandoned, or that were abandoned after an immediate shutdown, with
    /// their ids, attempts and reason. Always empty under [`AbandonPolicy::Abandon`].
    ///
    /// [`shutdown_now`](Queue::shutdown_now) returns the buffered items; the dead letters
    /// stay here, for this call (after `join` returns, every one is here).
    ///
    /// Memory: each dead letter holds its item until taken, so the list grows by one entry
    /// per dead-lettered id and is bounded only by the number of accepted ids. Nothing is
    /// dropped or refused past any size: take them regularly (or after `join`). Each take
    /// allocates one `Vec` of the letters taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, DeadReason, Queue};
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(1).unwrap());
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// let dead = queue.take_dead_letters();
    /// assert_eq!(dead.len(), 1);
    /// assert_eq!(dead[0].reason, DeadReason::Exhausted { panicking: false });
    /// assert!(queue.take_dead_letters().is_empty());
    /// assert_eq!(queue.ledger().abandoned, 1);
    /// ```
    pub fn take_dead_letters(&self) -> Vec<DeadLetter<T>> {
        match &self.redelivery {
            Some(redelivery) => redelivery.take_dead(),
            None => Vec::new(),
        }
    }

    /// How many dead letters wait for [`take_dead_letters`](Queue::take_dead_letters).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert_eq!(queue.dead_letters(), 0);
    /// ```
    #[must_use]
    pub fn dead_letters(&self) -> usize {
        self.redelivery.as_ref().map_or(0, |r| r.dead_len())
    }

    /// How many times an abandoned delivery was put back for another attempt, under
    /// [`AbandonPolicy::Redeliver`]. Outside the [`Ledger`], whose identity counts each id
    /// once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    /// queue.try_put(()).unwrap();
    /// drop(queue.try_get().unwrap());
    /// drop(queue.try_get().unwrap());
    /// assert_eq!(queue.redeliveries(), 2);
    /// ```
    #[must_use]
    pub fn redeliveries(&self) -> u64 {
        self.redelivery.as_ref().map_or(0, |r| r.redelivered())
    }

    // ----------------------------------------------------------------------------- put

    /// Puts `item` in the buffer, waiting for a slot while the queue is full.
    ///
    /// Resolves to the item's [`JobId`] once accepted.
    ///
    /// # Errors
    ///
    /// The item comes back inside the error: [`PutError::ShutDown`] if the queue is or gets
    /// shut down (a put waiting on a full queue is woken by either kind of shutdown),
    /// [`PutError::NoWorkers`] if the last worker left (see [`worker`](Queue::worker)). A
    /// waiting put is never refused for being full.
    ///
    /// # Cancel safety
    ///
    /// The future owns the item. Dropping it before it resolved means the item was not
    /// accepted (it is dropped with the future); nothing is accepted unless the future
    /// returned `Ok`. A slot freed for a dropped put passes to the next waiting put.
    ///
    /// # Fairness
    ///
    /// Waiting puts are woken in the order they started waiting, one per freed slot, and
    /// the slot is kept for the put it woke (see [`try_put`](Queue::try_put)): neither a
    /// `try_put` nor a put that has not waited yet can take it. The exception is a try that
    /// read the slot count an instant before the hand-off was counted; the woken put then
    /// keeps its claim and takes the next free slot before any try can.
    ///
    /// # Panics
    ///
    /// Polling the future again after it returned `Ready` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::bounded(1).unwrap();
    /// let id = block_on(queue.put("job")).unwrap();
    /// assert_eq!(queue.try_get().unwrap().succeed(), "job");
    /// assert_eq!(id.get(), 0);
    /// ```
    pub fn put(&self, item: T) -> Put<'_, T> {
        Put::new(self, item)
    }

    /// Puts `item` in the buffer if there is room now.
    ///
    /// # Errors
    ///
    /// The item comes back inside the error, checked in this order:
    /// [`TryPutError::ShutDown`], [`TryPutError::NoWorkers`], [`TryPutError::Full`].
    ///
    /// `Full` also when every free slot is kept for a waiting put that was woken for it and
    /// has not run yet: a `try_put` does not overtake a waiting [`put`](Queue::put).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// assert_eq!(queue.try_put('a').unwrap().get(), 0);
    /// assert!(matches!(queue.try_put('b'), Err(TryPutError::Full('b'))));
    /// queue.shutdown();
    /// // Shutdown is checked before fullness.
    /// assert!(matches!(queue.try_put('c'), Err(TryPutError::ShutDown('c'))));
    /// ```
    pub fn try_put(&self, item: T) -> Result<JobId, TryPutError<T>> {
        self.put_now(false, item)
    }

    /// One put attempt; `turn`: the caller is a woken put holding a turn, which may take a
    /// slot owed to woken puts (see `turns.rs`).
    #[inline]
    pub(crate) fn put_now(&self, turn: bool, item: T) -> Result<JobId, TryPutError<T>> {
        if turn {
            // Redeemed before the slot is claimed, never after (see `take`). Every outcome
            // but "full" uses the turn up.
            self.putters().turns().redeem();
        }
        if let Some(refusal) = self.lifecycle.refusal() {
            return Err(refused(refusal, item).into());
        }
        // Without a turn, the slots owed to woken puts are not free: a `try_put` or a new
        // put cannot take the slot a woken put was woken for.
        let owed = if turn {
            0
        } else {
            self.putters().turns().owed()
        };
        // The journal hears of the id before the item can be taken: once buffered, a
        // getter may record the delivery.
        let accepted = |id| self.note(|| JobEvent::Accepted(id));
        match self.buffer.put(item, owed, accepted) {
            Ok((id, getters)) => {
                crate::events::accepted(id);
                // Hand-off: one more item means one more getter can proceed. (The class
                // is built only when there is someone to tell.)
                if getters != Wake::No {
                    self.getters().notify_for(getters, 1);
                }
                Ok(id)
            }
            Err(PutRefused::Full(item)) => {
                if turn {
                    // The slot went to a try that raced the grant: the putter keeps its
                    // turn.
                    self.putters().turns().grant(1);
                }
                Err(TryPutError::Full(item))
            }
            // A shutdown closed the buffer after the lifecycle check.
            Err(PutRefused::Closed(item)) => Err(TryPutError::ShutDown(item)),
            Err(PutRefused::Revoked {
                item,
                id,
                freed,
                settled,
            }) => {
                // The id was drawn and is never used. Every count is settled before any
                // waker runs.
                self.note(|| JobEvent::Revoked(id));
                let putters = freed && self.putters().signal_additional(1);
                let joiners = settled && self.joiners().signal_all();
                let getters = settled && self.settled_getters();
                if putters | joiners | getters {
                    self.wake_signalled();
                }
                Err(TryPutError::ShutDown(item))
            }
        }
    }

    /// Puts `item` in the buffer, blocking the thread while the queue is full.
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put): [`PutError::ShutDown`] or [`PutError::NoWorkers`] with the
    /// item inside.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::bounded(1).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| queue.put_blocking(1).unwrap());
    ///     s.spawn(|| queue.put_blocking(2).unwrap());
    ///     for _ in 0..2 {
    ///         queue.get_blocking().unwrap().succeed();
    ///     }
    /// });
    /// assert_eq!(queue.ledger().succeeded, 2);
    /// ```
    #[cfg(feature = "std")]
    pub fn put_blocking(&self, item: T) -> Result<JobId, PutError<T>> {
        self.put(item).wait()
    }

    /// As [`put_blocking`](Queue::put_blocking), giving up after `timeout`.
    ///
    /// The put is tried once more after the timeout, so a slot that came free while the
    /// thread slept is taken rather than reported as a timeout.
    ///
    /// # Errors
    ///
    /// As [`put_until`](Queue::put_until): [`PutTimeoutError::TimedOut`] with the item if no
    /// slot came free in time, or [`PutTimeoutError::ShutDown`] /
    /// [`PutTimeoutError::NoWorkers`] with the item.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// let refused = queue.put_blocking_timeout(2, Duration::from_millis(10));
    /// assert!(matches!(refused, Err(PutTimeoutError::TimedOut(2))));
    /// queue.try_get().unwrap().succeed();
    /// assert!(queue.put_blocking_timeout(2, Duration::from_millis(10)).is_ok());
    /// ```
    #[cfg(feature = "std")]
    pub fn put_blocking_timeout(
        &self,
        item: T,
        timeout: core::time::Duration,
    ) -> Result<JobId, PutTimeoutError<T>> {
        crate::park::block_for(self.put(item), timeout)
    }

    /// Like [`put`](Self::put), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// As [`put`](Self::put) ([`PutTimeoutError::ShutDown`](crate::PutTimeoutError::ShutDown),
    /// [`PutTimeoutError::NoWorkers`](crate::PutTimeoutError::NoWorkers)), plus
    /// [`PutTimeoutError::TimedOut`](crate::PutTimeoutError::TimedOut) with the item if the
    /// deadline came before room did; a timed-out put accepted nothing.
    ///
    /// # Cancel safety
    ///
    /// As [`put`](Self::put).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put("first").unwrap();
    /// let refused = futures_lite::future::block_on(queue.put_until("second", async {}));
    /// assert!(matches!(refused, Err(PutTimeoutError::TimedOut("second"))));
    /// assert_eq!(queue.ledger().accepted, 1);
    /// ```
    pub fn put_until<D: Future>(&self, item: T, deadline: D) -> Until<Put<'_, T>, D> {
        Until::new(self.put(item), deadline)
    }

    /// Runs the wakers of every async wait signalled so far, of any class, outside every
    /// lock (see `relay.rs`). A panicking waker does not stop the others.
    #[inline]
    pub(crate) fn wake_signalled(&self) {
        // The three classes share one list: draining it through any of them drains all.
        self.getters().wake_deferred();
    }

    // ----------------------------------------------------------------------------- get

    /// Waits for an item and delivers it.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and its
    /// buffer is empty. Items buffered before a graceful shutdown are still delivered.
    ///
    /// Under [`AbandonPolicy::Redeliver`], a delivery in flight may still come back, so
    /// after a graceful shutdown a get on the empty queue waits until nothing is unfinished
    /// (then `ShutDown`) or a redelivered item arrives. A task that holds a delivery and
    /// gets again waits on itself: end a delivery before the next get.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the item is taken out of the buffer only in the poll that returns it,
    /// so a dropped `get` never loses an item (it stays buffered for another getter), and a
    /// wake-up it received passes to the next waiting getter.
    ///
    /// # Fairness
    ///
    /// Waiting gets are woken in the order they started waiting, one per item put, and the
    /// item is kept for the get it woke: neither [`try_get`](Queue::try_get) nor a get that
    /// has not waited yet can take it (they take only items beyond those kept). The
    /// exception is a try that read the count an instant before the hand-off was counted;
    /// the woken get then keeps its claim and takes the next item before any try can. A
    /// woken get does not lose its claim by being slow; dropped, it passes it on.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(42).unwrap();
    /// let delivery = block_on(queue.get()).unwrap();
    /// assert_eq!(*delivery, 42);
    /// delivery.succeed();
    /// ```
    pub fn get(&self) -> Get<'_, T> {
        Get::new(self)
    }

    /// Delivers an item if one is buffered now.
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`] if the buffer is empty and the queue open, or if every
    /// buffered item is kept for a waiting get that was woken for it and has not run yet (a
    /// `try_get` does not overtake a waiting [`get`](Queue::get)); [`TryGetError::ShutDown`]
    /// if it is empty and shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryGetError};
    ///
    /// let queue = Queue::unbounded();
    /// assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    /// queue.try_put("x").unwrap();
    /// queue.try_get().unwrap().succeed();
    /// ```
    pub fn try_get(&self) -> Result<Delivery<'_, T>, TryGetError> {
        self.take(false, |handout, item| Delivery::new(self, handout, item))
    }

    /// Delivers an item, blocking the thread until one is buffered.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and
    /// its buffer is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.shutdown();
    /// assert_eq!(queue.get_blocking().unwrap().succeed(), 1);
    /// assert!(queue.get_blocking().is_err());
    /// ```
    #[cfg(feature = "std")]
    pub fn get_blocking(&self) -> Result<Delivery<'_, T>, crate::GetError> {
        self.get().wait()
    }

    /// As [`get_blocking`](Queue::get_blocking), giving up after `timeout`.
    ///
    /// The get is tried once more after the timeout, so an item that arrived while the
    /// thread slept is delivered rather than reported as a timeout.
    ///
    /// # Errors
    ///
    /// As [`get_until`](Queue::get_until):
    /// [`GetTimeoutError::TimedOut`](crate::GetTimeoutError::TimedOut) or
    /// [`GetTimeoutError::ShutDown`](crate::GetTimeoutError::ShutDown).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Queue::unbounded();
    /// let waited = queue.get_blocking_timeout(Duration::from_millis(10));
    /// assert_eq!(waited.unwrap_err(), GetTimeoutError::TimedOut);
    /// queue.try_put("job").unwrap();
    /// let job = queue.get_blocking_timeout(Duration::from_millis(10)).unwrap();
    /// assert_eq!(job.succeed(), "job");
    /// ```
    #[cfg(feature = "std")]
    pub fn get_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Delivery<'_, T>, crate::GetTimeoutError> {
        crate::park::block_for(self.get(), timeout)
    }

    /// Like [`get`](Self::get), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// [`GetTimeoutError::ShutDown`](crate::GetTimeoutError::ShutDown) once the queue is
    /// shut down and empty, or [`GetTimeoutError::TimedOut`](crate::GetTimeoutError::TimedOut)
    /// if the deadline came first.
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Self::get): no item is lost.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Queue::<u8>::unbounded();
    /// let result = futures_lite::future::block_on(queue.get_until(async {}));
    /// assert_eq!(result.unwrap_err(), GetTimeoutError::TimedOut);
    /// ```
    pub fn get_until<D: Future>(&self, deadline: D) -> Until<Get<'_, T>, D> {
        Until::new(self.get(), deadline)
    }

    /// Takes the next item out of the buffer, counts it as in flight and wraps it in its
    /// delivery (`wrap`), and only then frees its slot and wakes a waiting put: the waker,
    /// user code, runs while the item is in a live delivery, whose unwinding would record
    /// it as abandoned.
    ///
    /// `turn`: the caller is a woken get holding a turn, which may take an item owed to
    /// woken gets (see `turns.rs`); anyone else takes only items not owed.
    ///
    /// Always inlined, so that the delivery is built where the caller's future returns it
    /// (see `Wait::is_new`).
    #[inline(always)]
    pub(crate) fn take<D>(
        &self,
        turn: bool,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        let turns = self.getters().turns();
        if turn {
            // Redeemed before the pop, never after: a turn still counted while its item is
            // already taken would hold back an item nobody is owed.
            turns.redeem();
        } else if !turns.lets_pass(|| self.buffer.len()) && !self.buffer.is_closed() {
            // Every buffered item is owed to a woken get. (After a shutdown the buffer
            // only drains, and the gate is moot.)
            return Err(TryGetError::Empty);
        }
        let (id, item, putters) = match self.pop() {
            Ok(taken) => (taken.id, taken.item, taken.putters),
            Err(empty) => {
                let redelivered = self.take_redelivered(empty, wrap);
                if turn && redelivered.as_ref().err() == Some(&TryGetError::Empty) {
                    // Nothing to take after all (a try that raced the grant took it): the
                    // getter keeps its turn.
                    turns.grant(1);
                }
                // A final answer uses the turn up.
                return redelivered;
            }
        };
        let handout = Handout { id, attempt: 1 };
        if putters == Wake::No && self.journal.is_none() {
            // Nothing runs before the caller has the delivery: built in place, not built
            // first and then moved past the calls below (a move the compiler makes through
            // the stack, with loads wider than the stores that wrote it).
            return Ok(wrap(handout, item));
        }
        let delivery = wrap(handout, item);
        self.note(|| JobEvent::Delivered { id, attempt: 1 });
        if putters != Wake::No {
            self.putters().notify_for(putters, 1);
        }
        Ok(delivery)
    }

    /// The buffer had nothing: a redelivered item, if the policy keeps any. A redelivered
    /// item holds no slot, so none is given back.
    #[cold]
    fn take_redelivered<D>(
        &self,
        empty: TryGetError,
        wrap: impl FnOnce(Handout, T) -> D,
    ) -> Result<D, TryGetError> {
        let Some(redelivery) = &self.redelivery else {
            return Err(empty);
        };
        if let Some((id, attempt, item)) = redelivery.pop() {
            crate::events::delivered(id, attempt);
            let delivery = wrap(Handout { id, attempt }, item);
            self.note(|| JobEvent::Delivered { id, attempt });
            return Ok(delivery);
        }
        match empty {
            // Shut down and empty: final only if nothing can come back, i.e. the lane is
            // closed (an immediate shutdown) or nothing is unfinished. (Checked after the
            // lane: an item redelivered before this check is in the lane or was popped.)
            TryGetError::ShutDown if !redelivery.is_closed() && !self.is_settled() => {
                Err(TryGetError::Empty)
            }
            other => Err(other),
        }
    }

    /// Takes the next item out of the buffer (which counts it in flight); wakes nobody.
    #[inline]
    fn pop(&self) -> Result<crate::buffer::Taken<T>, TryGetError> {
        let taken = self.buffer.take().map_err(|nothing| match nothing {
            Nothing::Empty => TryGetError::Empty,
            Nothing::Closed => TryGetError::ShutDown,
        })?;
        crate::events::delivered(taken.id, 1);
        Ok(taken)
    }

    // ------------------------------------------------------------- deliveries ending

    /// Records the end of an in-flight item (`None`: abandoned). The ledger and the slot
    /// are settled before any waker runs, so a panicking waker leaks neither.
    #[inline]
    pub(crate) fn end_delivery(&self, outcome: Option<Outcome>) {
        self.tally.resolve(outcome);
        self.ended_one();
    }

    /// Counts one in-flight item ended (its outcome already counted), and wakes whoever
    /// that concerns: a putter if it freed a slot, the joiners if it settled the queue.
    #[inline]
    fn ended_one(&self) {
        // Settling concerns the getters only under redelivery (see `settled_getters`).
        let ended = self.buffer.end(1, self.redelivery.is_some());
        if ended.wakes_anyone() {
            self.wake_for_ended(ended);
        }
    }

    /// The waking half of [`ended_one`](Queue::ended_one), out of line: most endings
    /// concern nobody.
    #[inline(never)]
    fn wake_for_ended(&self, ended: Ended) {
        let putters = ended.putters != Wake::No && self.putters().signal_for(ended.putters, 1);
        let joiners = ended.joiners != Wake::No && self.joiners().signal_all_for(ended.joiners);
        let getters = ended.settled && self.settled_getters();
        if putters | joiners | getters {
            self.wake_signalled();
        }
    }

    /// Under the redelivery policy, gets on a shut-down, empty queue wait while something
    /// is unfinished (it could come back); once settled, they are told. Marks them.
    #[inline]
    fn settled_getters(&self) -> bool {
        self.redelivery.is_some() && self.is_shut_down() && self.getters().signal_all()
    }

    /// Whether abandoned deliveries are redelivered (the policy is
    /// [`AbandonPolicy::Redeliver`]).
    #[inline]
    pub(crate) fn redelivers(&self) -> bool {
        self.redelivery.is_some()
    }

    /// Whether abandoned deliveries end as uncertain (the policy is
    /// [`AbandonPolicy::Uncertain`]).
    #[inline]
    pub(crate) fn abandons_uncertain(&self) -> bool {
        self.abandons_uncertain
    }

    /// A delivery number `attempt` of `id` was dropped unresolved under the redelivery
    /// policy: the item goes back into the lane, or into the dead letters, before any
    /// waker runs.
    #[cold]
    pub(crate) fn abandon(&self, id: JobId, attempt: u32, item: T, panicking: bool) {
        let redelivery = self
            .redelivery
            .as_ref()
            .expect("called only under the redelivery policy");
        let fate = redelivery.abandon(
            id,
            attempt,
            item,
            panicking,
            // Before the push: once in the lane, another getter may record its delivery.
            |next| self.note(|| JobEvent::Redelivered { id, attempt: next }),
        );
        match fate {
            Fate::Redelivered(next) => {
                crate::events::redelivered(id, next);
                // Hand-off: one more item for one more getter.
                self.getters().notify_additional(1);
            }
            Fate::Exhausted => {
                crate::events::dead_lettered(id, attempt);
                self.note(|| JobEvent::DeadLettered {
                    id,
                    attempts: attempt,
                });
                self.end_delivery(None);
            }
            Fate::Discarded => {
                crate::events::discarded(id);
                crate::events::dead_lettered(id, attempt);
                self.note(|| JobEvent::Discarded(id));
                self.note(|| JobEvent::DeadLettered {
                    id,
                    attempts: attempt,
                });
                self.tally.discard(1);
                self.ended_one();
            }
        }
    }

    /// Puts an in-flight item back in the buffer, or hands it back if the queue is shut
    /// down or (for a buffered limit) full.
    ///
    /// A refusal wakes nobody: the caller puts the item back into its delivery first, then
    /// calls [`wake_signalled`](Queue::wake_signalled).
    pub(crate) fn requeue(&self, id: JobId, item: T) -> Result<(), T> {
        // A retry takes no slot owed to a woken put.
        let owed = self.putters().turns().owed();
        match self.buffer.requeue(id, item, owed) {
            Ok((getters, putters)) => {
                // Signal both classes before waking either (see `Waiters`).
                let getters = self.getters().signal_for(getters, 1);
                if self.putters().signal_for(putters, 1) | getters {
                    self.wake_signalled();
                }
                Ok(())
            }
            Err((item, freed)) => {
                if freed {
                    self.putters().signal_additional(1);
                }
                Err(item)
            }
        }
    }

    // ---------------------------------------------------------------- owned variants

    /// As [`get`](Queue::get), for a queue in an `Arc`: the delivery owns a clone of the
    /// `Arc`, so it can move into a `'static` task.
    ///
    /// Only on targets with pointer-sized atomic compare-and-swap (where `alloc::sync::Arc`
    /// exists).
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and
    /// its buffer is empty.
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Queue::get): a dropped `get_owned` never loses an item.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(3).unwrap();
    /// let delivery = block_on(queue.get_owned()).unwrap();
    /// std::thread::spawn(move || delivery.succeed()).join().unwrap();
    /// assert_eq!(queue.ledger().succeeded, 1);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn get_owned(self: &Arc<Self>) -> GetOwned<T> {
        GetOwned::new(Arc::clone(self))
    }

    /// As [`try_get`](Queue::try_get), returning an [`OwnedDelivery`].
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`] or [`TryGetError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(3).unwrap();
    /// let delivery = queue.try_get_owned().unwrap();
    /// assert_eq!(delivery.succeed(), 3);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn try_get_owned(self: &Arc<Self>) -> Result<OwnedDelivery<T>, TryGetError> {
        self.take(false, |handout, item| {
            OwnedDelivery::new(Arc::clone(self), handout, item)
        })
    }

    /// Like [`get_owned`](Self::get_owned), but gives up when `deadline` (any future)
    /// completes first.
    ///
    /// # Errors
    ///
    /// As [`get_until`](Self::get_until).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Arc::new(Queue::<u8>::unbounded());
    /// let result = futures_lite::future::block_on(queue.get_owned_until(async {}));
    /// assert_eq!(result.unwrap_err(), GetTimeoutError::TimedOut);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn get_owned_until<D: Future>(self: &Arc<Self>, deadline: D) -> Until<GetOwned<T>, D> {
        Until::new(self.get_owned(), deadline)
    }

    // ---------------------------------------------------------------------- streams

    /// The deliveries as a [`Stream`](futures_core::Stream): each item is the next
    /// [`Delivery`], and the stream ends once the queue is shut down and empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::StreamExt;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.shutdown();
    /// let ids: Vec<u64> = futures_lite::future::block_on(
    ///     queue.deliveries().map(|job| { let id = job.id(); job.succeed(); id.get() }).collect(),
    /// );
    /// assert_eq!(ids, [0]);
    /// ```
    pub fn deliveries(&self) -> Deliveries<'_, T> {
        Deliveries::new(self)
    }

    /// As [`deliveries`](Queue::deliveries), for a queue in an `Arc`: the stream and its
    /// [`OwnedDelivery`]s can move into `'static` tasks.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::StreamExt;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(5).unwrap();
    /// queue.shutdown();
    /// let mut jobs = queue.deliveries_owned();
    /// let job = futures_lite::future::block_on(jobs.next()).unwrap();
    /// assert_eq!(job.succeed(), 5);
    /// assert!(futures_lite::future::block_on(jobs.next()).is_none());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn deliveries_owned(self: &Arc<Self>) -> OwnedDeliveries<T> {
        OwnedDeliveries::new(Arc::clone(self))
    }

    // -------------------------------------------------------------------- producers

    /// Registers a producer: when the last registered producer is gone (its guard dropped,
    /// or unwound by a panic), the queue shuts down gracefully, so workers drain the buffer
    /// and then see [`GetError::ShutDown`](crate::GetError::ShutDown) instead of waiting
    /// for items that will never come.
    ///
    /// A queue that never registered a producer never shuts down by itself. Once the last
    /// producer has left, the shutdown is final: a producer registered later holds a guard
    /// on a shut-down queue, whose puts are refused. So register every producer before any
    /// of them can finish (take all the guards, then spawn the tasks), or hand out clones of
    /// a guard you keep until the others exist.
    ///
    /// # Panics
    ///
    /// If `usize::MAX / 2` producers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{GetError, Queue};
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Queue::unbounded();
    /// let producer = queue.producer();
    /// producer.queue().try_put("last job").unwrap();
    /// drop(producer);
    /// assert_eq!(block_on(queue.get()).unwrap().succeed(), "last job");
    /// assert_eq!(block_on(queue.get()).unwrap_err(), GetError::ShutDown);
    /// ```
    pub fn producer(&self) -> Producer<'_, T> {
        self.producers.register();
        Producer::new(self)
    }

    /// As [`producer`](Queue::producer), for a queue in an `Arc`: the guard owns a clone of
    /// the `Arc`, so it can move into a `'static` task.
    ///
    /// # Panics
    ///
    /// If `usize::MAX / 2` producers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let producer = queue.producer_owned();
    /// assert_eq!(queue.producers(), 1);
    /// std::thread::spawn(move || drop(producer)).join().unwrap();
    /// assert!(queue.is_shut_down());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn producer_owned(self: &Arc<Self>) -> OwnedProducer<T> {
        self.producers.register();
        OwnedProducer::new(Arc::clone(self))
    }

    /// The number of live [`Producer`] guards.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let producer = queue.producer();
    /// let second = producer.clone();
    /// assert_eq!(queue.producers(), 2);
    /// drop((producer, second));
    /// assert_eq!(queue.producers(), 0);
    /// ```
    #[must_use]
    pub fn producers(&self) -> usize {
        self.producers.live()
    }

    pub(crate) fn unregister_producer(&self) {
        if self.producers.unregister() {
            crate::events::last_producer_left();
            self.shutdown();
        }
    }

    // ---------------------------------------------------------------------- workers

    /// Registers a worker: a consumer whose disappearance should stop producers from
    /// waiting forever.
    ///
    /// While at least one [`Worker`] guard is alive, nothing changes. When the last one is
    /// dropped (the worker returned, or panicked and unwound), the queue is *orphaned*:
    /// puts waiting on a full queue wake with [`PutError::NoWorkers`] and their item, and
    /// every later put is refused the same way until a new worker registers. Buffered items
    /// stay in the buffer and in the ledger, for whoever shuts the queue down
    /// ([`shutdown_now`](Queue::shutdown_now) returns them) or for a new worker.
    ///
    /// A queue that never had a worker accepts puts as usual, so producers may start first.
    ///
    /// # Panics
    ///
    /// If more than `usize::MAX / 4` workers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap(); // no worker yet: accepted
    /// let worker = queue.worker();
    /// drop(worker); // the last worker leaves
    /// assert!(matches!(queue.try_put(2), Err(TryPutError::NoWorkers(2))));
    /// assert_eq!(queue.len(), 1); // still buffered
    /// let _again = queue.worker();
    /// assert!(queue.try_put(3).unwrap_err().is_full());
    /// ```
    pub fn worker(&self) -> Worker<'_, T> {
        self.register_worker();
        Worker::new(self)
    }

    /// As [`worker`](Queue::worker), for a queue in an `Arc`: the guard owns a clone of the
    /// `Arc`, so it can move into a `'static` task.
    ///
    /// # Panics
    ///
    /// If more than `usize::MAX / 4` workers are alive at once.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::<u8>::unbounded());
    /// let worker = queue.worker_owned();
    /// assert_eq!(queue.workers(), 1);
    /// std::thread::spawn(move || drop(worker)).join().unwrap();
    /// assert!(queue.try_put(1).unwrap_err().is_no_workers());
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn worker_owned(self: &Arc<Self>) -> OwnedWorker<T> {
        self.register_worker();
        OwnedWorker::new(Arc::clone(self))
    }

    /// The number of live [`Worker`] guards.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let _w = queue.worker();
    /// assert_eq!(queue.workers(), 1);
    /// ```
    #[must_use]
    pub fn workers(&self) -> usize {
        self.lifecycle.workers()
    }

    fn register_worker(&self) {
        self.lifecycle.register_worker();
    }

    pub(crate) fn unregister_worker(&self) {
        if self.lifecycle.unregister_worker() {
            crate::events::last_worker_left();
            // Terminal for the waiting puts: wake them all to refuse.
            self.putters().notify_all();
        }
    }

    // --------------------------------------------------------------------- shutdown

    /// Shuts the queue down gracefully: puts are refused from now on (with their item,
    /// including puts waiting on a full queue, which wake), buffered items stay available,
    /// and gets return [`GetError::ShutDown`](crate::GetError::ShutDown) once the buffer is
    /// empty. Items in flight still have to be resolved.
    ///
    /// Idempotent; returns whether this call did the shutting down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// assert!(queue.shutdown());
    /// assert!(!queue.shutdown());
    /// assert!(queue.try_put(2).unwrap_err().is_shut_down());
    /// assert_eq!(queue.try_get().unwrap().succeed(), 1); // still available
    /// assert!(queue.try_get().is_err());
    /// ```
    pub fn shutdown(&self) -> bool {
        let first = self.lifecycle.shut_down();
        // Closing the buffer is what makes it final: a put that passed the lifecycle check
        // before this line either landed before the close or is refused with its item.
        self.buffer.close();
        // Terminal: wake every waiting put (to refuse) and get (to drain, then refuse).
        // Both classes are signalled before any waker runs, so a panicking putter waker
        // cannot leave the getters asleep.
        let putters = self.putters().signal_all();
        let getters = self.getters().signal_all();
        if putters | getters {
            self.wake_signalled();
        }
        if first {
            crate::events::shut_down(self.unfinished());
        }
        first
    }

    /// Shuts the queue down immediately: as [`shutdown`](Queue::shutdown), and also drains
    /// the buffer, returning the drained items with their ids. Each is recorded as
    /// discarded. Items in flight are untouched and still have to be resolved.
    ///
    /// A getter racing the drain either takes an item (it is then in flight) or the drain
    /// returns it: each item leaves the buffer exactly once. Calling it after a graceful
    /// shutdown still drains.
    ///
    /// (CPython's `shutdown(immediate=True)` drops the drained items; they come back here
    /// so the caller can reconcile them.)
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// let a = queue.try_put("a").unwrap();
    /// let b = queue.try_put("b").unwrap();
    /// assert_eq!(queue.shutdown_now(), vec![(a, "a"), (b, "b")]);
    /// assert_eq!(queue.ledger().discarded, 2);
    /// assert!(queue.shutdown_now().is_empty());
    /// ```
    pub fn shutdown_now(&self) -> Vec<(JobId, T)> {
        // Closed before the shutdown wakes the getters, so a getter woken by it sees that
        // nothing can be redelivered any more.
        if let Some(redelivery) = &self.redelivery {
            redelivery.close();
        }
        self.shutdown();
        let mut drained = self.buffer.drain();
        if let Some(redelivery) = &self.redelivery {
            while let Some((id, _, item)) = redelivery.pop() {
                drained.push((id, item));
            }
        }
        let count = drained.len();
        // Before the endings count: a join that returns has them recorded.
        if self.journal.is_some() {
            for (id, _) in &drained {
                self.note(|| JobEvent::Discarded(*id));
            }
        }
        self.tally.discard(count as u64);
        // The drain freed their slots (whatever the limit counts).
        let freed = count != 0 && self.buffer.limit() != Limit::None;
        let putters = freed && self.putters().signal_additional(count);
        let joiners = count != 0 && {
            let ended = self.buffer.end(count as u64, false);
            self.joiners().signal_all_for(ended.joiners)
        };
        if putters | joiners {
            self.wake_signalled();
        }
        for (id, _) in &drained {
            crate::events::discarded(*id);
        }
        crate::events::drained(count);
        drained
    }

    /// Requests cooperative cancellation of the work in flight: every [`Delivery`] (and
    /// [`OwnedDelivery`]) then reports [`is_cancelled`](Delivery::is_cancelled), and its
    /// [`cancelled`](Delivery::cancelled) future resolves.
    ///
    /// A request, never a forced ending: each delivery still ends as its handler decides
    /// (typically [`uncertain`](Delivery::uncertain) or [`reject`](Delivery::reject), or a
    /// [`retry`](Delivery::retry)), and until then counts as in flight. The buffer and
    /// admission are untouched: this is not a shutdown (for both at once, see
    /// [`abort`](Queue::abort)).
    ///
    /// The request is permanent: it covers the deliveries in flight now and every delivery
    /// handed out later (an item still buffered, a retried one), which see it at once.
    /// Every waiting `cancelled` future is woken, even if some waker panics (the first
    /// panic then propagates, after every waiter was woken).
    ///
    /// Idempotent; returns whether this call made the request.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put("running").unwrap();
    /// queue.try_put("later").unwrap();
    /// let running = queue.try_get().unwrap();
    /// assert!(!running.is_cancelled());
    /// assert!(queue.cancel_in_flight());
    /// assert!(!queue.cancel_in_flight());
    /// assert!(running.is_cancelled());
    /// // Handed out after the request: it sees it at once.
    /// assert!(queue.try_get().unwrap().is_cancelled());
    /// assert!(!queue.is_shut_down());
    /// ```
    pub fn cancel_in_flight(&self) -> bool {
        let (first, signalled) = self.cancellation.request();
        if signalled {
            self.wake_signalled();
        }
        first
    }

    /// Whether cancellation of in-flight work was requested
    /// ([`cancel_in_flight`](Queue::cancel_in_flight) or [`abort`](Queue::abort)).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert!(!queue.is_cancel_requested());
    /// queue.cancel_in_flight();
    /// assert!(queue.is_cancel_requested());
    /// ```
    #[must_use]
    pub fn is_cancel_requested(&self) -> bool {
        self.cancellation.is_requested()
    }

    /// Aborts all work: shuts down immediately, draining the buffer as
    /// [`shutdown_now`](Queue::shutdown_now) does (and returning the same thing: the
    /// drained items with their ids, each recorded as discarded), then requests
    /// cancellation of the deliveries in flight as
    /// [`cancel_in_flight`](Queue::cancel_in_flight) does.
    ///
    /// In-flight deliveries still have to end; [`join`](Queue::join) waits for them, and
    /// their handlers see [`Delivery::is_cancelled`].
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::Queue;
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put("running").unwrap();
    /// let waiting = queue.try_put("waiting").unwrap();
    /// let running = queue.try_get().unwrap();
    /// assert_eq!(queue.abort(), vec![(waiting, "waiting")]);
    /// block_on(running.cancelled());
    /// running.uncertain();
    /// let ledger = block_on(queue.join());
    /// assert_eq!((ledger.uncertain, ledger.discarded), (1, 1));
    /// ```
    pub fn abort(&self) -> Vec<(JobId, T)> {
        let drained = self.shutdown_now();
        self.cancel_in_flight();
        drained
    }

    /// Drain or abort, decided by a deadline: shuts down gracefully, waits for every
    /// accepted item to end, and if `deadline` (any future) completes first, shuts down
    /// immediately, hands the drained items back and requests cancellation of the work in
    /// flight ([`abort`](Queue::abort)). With a grace period
    /// ([`with_grace`](ShutdownUntil::with_grace)), it then waits for that work to end
    /// until the grace period is over; without one it reports at once. The report
    /// ([`Closed`](crate::Closed)) names the ids still in flight, if a journal keeps them.
    ///
    /// The graceful shutdown happens on the first poll. Cancellation is a request: work
    /// still in flight when the report is made shows as `in_flight` in its ledger and
    /// must still end.
    ///
    /// # Cancel safety
    ///
    /// Dropped after its first poll, the queue stays shut down gracefully.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// let closed = futures_lite::future::block_on(queue.shutdown_until(std::future::pending::<()>()));
    /// assert!(closed.drained_in_time);
    /// assert_eq!(closed.ledger.succeeded, 1);
    ///
    /// // Past the deadline, a handler that ignores cancellation is named in the report.
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let stuck = queue.try_put(2).unwrap();
    /// let job = queue.try_get().unwrap();
    /// let closed = futures_lite::future::block_on(queue.shutdown_until(async {}));
    /// assert!(!closed.drained_in_time && job.is_cancelled());
    /// assert_eq!(closed.in_flight_ids, Some(vec![stuck]));
    /// job.uncertain();
    /// ```
    pub fn shutdown_until<D: Future>(&self, deadline: D) -> ShutdownUntil<'_, T, D> {
        ShutdownUntil::new(self, deadline)
    }

    /// The ids of the deliveries in flight, in id order, as the installed
    /// [`Journal`] keeps them ([`Journal::in_flight_ids`]; [`Record`](crate::Record) does).
    /// `None` without a journal, or with one that keeps no ids: the queue itself counts
    /// deliveries ([`ledger`](Queue::ledger)) but keeps no per-job state.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{Queue, Record};
    ///
    /// let queue = Queue::unbounded().with_journal(Arc::new(Record::new()));
    /// let id = queue.try_put("job").unwrap();
    /// let job = queue.try_get().unwrap();
    /// assert_eq!(queue.in_flight_ids(), Some(vec![id]));
    /// job.succeed();
    /// assert_eq!(queue.in_flight_ids(), Some(vec![]));
    /// assert_eq!(Queue::<u8>::unbounded().in_flight_ids(), None);
    /// ```
    #[must_use]
    pub fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        self.journal.as_ref().and_then(Journaled::in_flight_ids)
    }

    /// Whether the queue was shut down (either way).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// assert!(!queue.is_shut_down());
    /// queue.shutdown();
    /// assert!(queue.is_shut_down());
    /// ```
    #[must_use]
    pub fn is_shut_down(&self) -> bool {
        self.lifecycle.is_shut_down()
    }

    // ------------------------------------------------------------------------- join

    /// Waits until every accepted item has ended (resolved, abandoned or discarded), then
    /// returns a ledger snapshot.
    ///
    /// Level-triggered: it checks the count itself after every wake-up and returns only
    /// when it saw zero; at zero it returns on the first poll. Puts that land after the
    /// zero may show in the returned ledger.
    ///
    /// A graceful shutdown does not end `join` by itself: items still buffered or in flight
    /// keep it waiting. An immediate shutdown ends it if the drain leaves nothing in flight.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().reject();
    /// let ledger = block_on(queue.join());
    /// assert_eq!((ledger.succeeded, ledger.rejected), (0, 1));
    /// ```
    pub fn join(&self) -> Join<'_, T> {
        Join::new(self)
    }

    /// As [`join`](Queue::join), blocking the thread.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| queue.get_blocking().unwrap().succeed());
    ///     assert_eq!(queue.join_blocking().succeeded, 1);
    /// });
    /// ```
    #[cfg(feature = "std")]
    pub fn join_blocking(&self) -> Ledger {
        self.join().wait()
    }

    /// As [`join_blocking`](Queue::join_blocking), giving up after `timeout`.
    ///
    /// The count is checked once more after the timeout, so work that ended while the
    /// thread slept is reported as settled, not as a timeout.
    ///
    /// # Errors
    ///
    /// [`JoinTimedOut`](crate::JoinTimedOut), holding the ledger at the timeout, if items
    /// were still unfinished then.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// let late = queue.join_blocking_timeout(Duration::from_millis(10)).unwrap_err();
    /// assert_eq!(late.ledger().in_flight, 1);
    /// held.succeed();
    /// assert_eq!(queue.join_blocking_timeout(Duration::from_millis(10)).unwrap().succeeded, 1);
    /// ```
    #[cfg(feature = "std")]
    pub fn join_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Ledger, crate::JoinTimedOut> {
        crate::park::block_for(self.join(), timeout)
    }

    /// Like [`join`](Self::join), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// [`JoinTimedOut`](crate::JoinTimedOut), holding the ledger at the deadline, if items
    /// were still unfinished then.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// let err = futures_lite::future::block_on(queue.join_until(async {})).unwrap_err();
    /// assert_eq!(err.ledger().in_flight, 1);
    /// held.succeed();
    /// assert!(futures_lite::future::block_on(queue.join_until(async {})).is_ok());
    /// ```
    pub fn join_until<D: Future>(&self, deadline: D) -> Until<Join<'_, T>, D> {
        Until::new(self.join(), deadline)
    }

    // ---------------------------------------------------------------- observation

    /// A snapshot of the accounting. Exact when no operation is running; see [`Ledger`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// assert_eq!(queue.ledger().buffered, 1);
    /// ```
    #[must_use]
    pub fn ledger(&self) -> Ledger {
        let mut counts = self.buffer.counts();
        // The redelivery lane holds items taken out and not ended, which are buffered.
        let lane = self.redelivery.as_ref().map_or(0, |r| r.len()) as u64;
        let lane = lane.min(counts.in_flight);
        counts.buffered += lane;
        counts.in_flight -= lane;
        self.tally.snapshot(counts)
    }

    /// Accepted items that have not ended yet (buffered + in flight): the count
    /// [`join`](Queue::join) waits on.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let held = queue.try_get().unwrap();
    /// assert_eq!(queue.unfinished(), 1);
    /// held.succeed();
    /// assert_eq!(queue.unfinished(), 0);
    /// ```
    #[must_use]
    pub fn unfinished(&self) -> u64 {
        self.buffer.unfinished()
    }

    /// Whether [`join`](Queue::join) would return now: every accepted item has ended
    /// (resolved, abandoned or discarded), so [`unfinished`](Queue::unfinished) is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// assert!(queue.is_settled());
    /// queue.try_put(1).unwrap();
    /// assert!(!queue.is_settled());
    /// queue.try_get().unwrap().succeed();
    /// assert!(queue.is_settled());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_settled(&self) -> bool {
        self.buffer.unfinished() == 0
    }

    /// The number of buffered items.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// assert_eq!(queue.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.buffer.len() + self.redelivery.as_ref().map_or(0, |r| r.len())
    }

    /// Whether the buffer is empty. That says nothing about work in flight: see
    /// [`unfinished`](Queue::unfinished).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// let _held = queue.try_get().unwrap();
    /// assert!(queue.is_empty());
    /// assert_eq!(queue.unfinished(), 1);
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bound given at construction (buffered items, or unfinished items for
    /// [`with_unfinished_limit`](Queue::with_unfinished_limit)); `None` if unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_queue::Queue::<u8>::bounded(8).unwrap().capacity(), Some(8));
    /// ```
    #[must_use]
    pub fn capacity(&self) -> Option<usize> {
        self.buffer.limit().capacity()
    }

    #[inline]
    pub(crate) fn getters(&self) -> Class<'_> {
        self.getters.counted_in(self.buffer.counted(Kind::Getters))
    }

    #[inline]
    pub(crate) fn putters(&self) -> Class<'_> {
        self.putters.counted_in(self.buffer.counted(Kind::Putters))
    }

    #[inline]
    pub(crate) fn joiners(&self) -> Class<'_> {
        self.joiners.counted_in(self.buffer.counted(Kind::Joiners))
    }

    pub(crate) fn cancellation(&self) -> &Cancellation {
        &self.cancellation
    }
}

/// The error for a put the lifecycle refuses.
#[cold]
fn refused<T>(refusal: Refusal, item: T) -> PutError<T> {
    match refusal {
        Refusal::ShutDown => PutError::ShutDown(item),
        Refusal::NoWorkers => PutError::NoWorkers(item),
    }
}

impl<T> fmt::Debug for Queue<T> {
    /// Shows the capacity, the unfinished (pending-acknowledgement) count and the shut-down
    /// state, like CPython's `<Queue maxsize=.. tasks=.. shutdown>`; does not need
    /// `T: Debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Queue");
        match self.buffer.limit() {
            Limit::None => s.field("capacity", &None::<usize>),
            Limit::Buffered(n) => s.field("capacity", &Some(n)),
            Limit::Unfinished(n) => s.field("unfinished_limit", &n),
        };
        s.field("len", &self.len())
            .field("unfinished", &self.unfinished())
            .field("shut_down", &self.is_shut_down())
            .finish_non_exhaustive()
    }
}
