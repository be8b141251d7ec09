//! [`Queue`]: the public type, its constructors, its configuration and its observers.
//! The verbs are in `face/`, the handles in `handle/`; all of them call down into the fate
//! layer (`fate/`) and the raw queue (`engine/`).

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::engine::buffer::slots::Limit;
use crate::error::ZeroCapacity;
use crate::fate::journal::{Journal, Journaled};
use crate::fate::policy::AbandonPolicy;
#[cfg(target_has_atomic = "ptr")]
use crate::fate::Owner;
use crate::fate::Steward;
use crate::job_id::JobId;
use crate::ledger::Ledger;

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
///
/// [`Delivery`]: crate::Delivery
/// [`Outcome`]: crate::Outcome
pub struct Queue<T> {
    /// Every job's fate, over the raw queue that holds the items and the counts.
    pub(crate) steward: Steward<T>,
}

impl<T> Queue<T> {
    /// A queue that holds at most `capacity` buffered items; a [`put`](Queue::put) on a
    /// full queue waits for a slot.
    ///
    /// Capacities up to 65 536 allocate their buffer once, here; larger ones (up to
    /// `usize::MAX`, which is accepted) allocate as items arrive and enforce the same
    /// bound.
    ///
    /// A bounded buffer does not bound the work in progress: items already delivered do not
    /// count. To bound buffered plus in-flight items, use
    /// [`with_unfinished_limit`](Queue::with_unfinished_limit). Items that come back for
    /// another attempt ([`retry`](crate::Delivery::retry), a redelivery) take no slot: they
    /// were counted when first taken, so the queue can hold, beyond its capacity, as many
    /// of them as there were deliveries in flight.
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
    /// An item that comes back for another attempt ([`retry`](crate::Delivery::retry), a
    /// redelivery) keeps its slot: it is still unfinished.
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
        Queue {
            steward: Steward::new(limit),
        }
    }

    /// Installs `journal`, which from now on sees every [`JobEvent`] of this queue with
    /// its [`JobId`]; see [`Journal`] for when it is called and what it may do. Consumes
    /// and returns the queue, so the journal is in place before the queue is shared. A
    /// second call replaces the first journal. Every item the queue holds stays where it
    /// is.
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
    ///
    /// [`JobEvent`]: crate::JobEvent
    #[must_use]
    pub fn with_journal(mut self, journal: impl Journal + 'static) -> Self {
        self.steward.set_journal(Journaled::new(Box::new(journal)));
        self
    }

    /// Names this queue in its `tracing` events (the `label` field of each) and its
    /// `Debug` output, as `with_label` names a latch in `tally-latch`, so that the events of several queues in one service can be told
    /// apart. Under the `metrics` feature the label is also the `queue` label of every
    /// metric the queue records. Consumes and returns the queue, so the label is set
    /// before the queue is shared; a second call replaces the first label.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded().with_label("thumbnails");
    /// assert_eq!(queue.label(), "thumbnails");
    /// assert!(format!("{queue:?}").starts_with(r#"Queue { label: "thumbnails", "#));
    /// ```
    #[must_use = "returns the queue with the label set"]
    pub fn with_label(mut self, label: &'static str) -> Self {
        self.steward.set_label(label);
        self
    }

    /// The label set with [`with_label`](Queue::with_label); empty if none was.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::Queue;
    ///
    /// assert_eq!(Queue::<u8>::unbounded().label(), "");
    /// assert_eq!(Queue::<u8>::unbounded().with_label("mail").label(), "mail");
    /// ```
    #[must_use]
    pub fn label(&self) -> &'static str {
        self.steward.raw().label()
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
        self.steward.journal().map_or(0, Journaled::panics)
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
        self.steward.in_flight_ids()
    }

    /// Installs what happens to a delivery dropped unresolved (see [`AbandonPolicy`]);
    /// a queue without one behaves as [`AbandonPolicy::Abandon`]. Consumes and returns the
    /// queue, so the policy is fixed before the queue is shared; every item the queue
    /// holds stays where it is (buffered, returned, or kept as a dead letter).
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
    /// redelivered (or retried) item is still delivered (it was accepted), so a get on a
    /// shut-down, empty queue returns `ShutDown` only once nothing is unfinished (no
    /// delivery in flight could come back); until then it waits
    /// ([`try_get`](Queue::try_get) says `Empty`). After [`shutdown_now`](Queue::shutdown_now), redelivered items still
    /// buffered are drained with the rest, and a delivery abandoned later is discarded
    /// into the dead letters.
    ///
    /// Under [`AbandonPolicy::Uncertain`], a delivery dropped unresolved is counted
    /// *uncertain* in the ledger at once (its item dropped with it, as under `Abandon`),
    /// before or after any shutdown: nothing is redelivered, kept or discarded, so the
    /// queue meets shutdown exactly as under `Abandon`.
    ///
    /// A redelivered item goes to the front of the line: gets serve returned items (retried
    /// or redelivered) before fresh ones, oldest return first, so its wait is bounded by
    /// the returned items ahead of it, never by fresh puts. It never waits for a slot: a
    /// bounded buffer can hold, beyond its capacity, as many returned items as there were
    /// deliveries in flight.
    ///
    /// `max_attempts` bounds every delivery of an id: a [`retry`](crate::Delivery::retry)
    /// counts as an attempt as a drop does, so a job that keeps failing, however it fails,
    /// becomes a dead letter within `max_attempts` deliveries.
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
    ///
    /// [`DeadLetter`]: crate::DeadLetter
    #[must_use]
    pub fn with_abandon_policy(mut self, policy: AbandonPolicy) -> Self {
        self.steward.set_policy(policy);
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
        self.steward.policy()
    }

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
        self.steward.ledger()
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
        self.steward.raw().unfinished()
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
        self.steward.raw().is_settled()
    }

    /// The number of items waiting to be delivered: fresh ones, ones that came back for
    /// another attempt, and ones retried with a delay that is not over yet.
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
        self.steward.len()
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
        self.steward.raw().limit().capacity()
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Owner<T> for Arc<Queue<T>> {
    #[inline(always)]
    fn steward(&self) -> &Steward<T> {
        &self.steward
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Queue");
        // The label shows only once set, as a latch's does.
        let label = self.label();
        if !label.is_empty() {
            s.field("label", &label);
        }
        match self.steward.raw().limit() {
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
