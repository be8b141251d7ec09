//! Redeliveries that wait: under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy), a
//! queue given a schedule ([`Queue::with_redelivery_delay`](crate::Queue::with_redelivery_delay))
//! holds an abandoned delivery's item back, as a retry with a delay is held (counted
//! buffered, see `holding.rs`), and hands the schedule a [`Redelivery`]: the claim that
//! moves the item into the lane when released or dropped.
//!
//! The queue takes no time of its own: the schedule decides when to release, on a runtime's
//! timer (the adapters' `with_redelivery_backoff` spawn a sleep), an embedded timer, or a
//! test's hand. A claim dropped unreleased (a timer task cancelled, a runtime shut down, a
//! schedule that panics) releases at once: an item is never stranded. A claim that outlives
//! its queue releases nothing: the held item went with the queue, as its buffered items
//! did.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;
use core::time::Duration;

use super::backoff::Backoff;
use super::holding::Ticket;
use crate::job_id::JobId;

/// Moves the item held under a ticket into the lane, if its queue still exists.
pub(crate) type Release = Arc<dyn Fn(Ticket) + Send + Sync>;

/// What the queue calls with each held redelivery.
pub(crate) type Schedule = Box<dyn Fn(Redelivery) + Send + Sync>;

/// A queue's redelivery schedule and the way back into it.
pub(crate) struct Redelay {
    pub(crate) release: Release,
    pub(crate) schedule: Schedule,
}

/// A redelivery held back by the queue's schedule
/// ([`Queue::with_redelivery_delay`](crate::Queue::with_redelivery_delay)): the item of an
/// abandoned delivery, counted buffered, waiting for this claim to let it go.
///
/// [`release`](Redelivery::release) moves the item into the queue for delivery number
/// [`attempt`](Redelivery::attempt); so does dropping the claim, so that a cancelled timer
/// task or a runtime shutting down loses nothing. After an immediate shutdown took the
/// item back (it is among the items [`shutdown_now`](crate::Queue::shutdown_now) returns),
/// or once the queue is dropped, releasing does nothing.
///
/// # Examples
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tally_queue::{AbandonPolicy, Queue, Redelivery};
///
/// let waiting = Arc::new(Mutex::new(Vec::<Redelivery>::new()));
/// let schedule = Arc::clone(&waiting);
/// let queue = Queue::unbounded()
///     .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
///     .with_redelivery_delay(move |redelivery| schedule.lock().unwrap().push(redelivery));
/// queue.try_put("flaky").unwrap();
/// drop(queue.try_get().unwrap()); // abandoned: held back, counted buffered
/// assert_eq!(queue.ledger().buffered, 1);
/// assert!(queue.try_get().is_err());
/// let redelivery = waiting.lock().unwrap().pop().unwrap();
/// assert_eq!(redelivery.attempt(), 2);
/// redelivery.release(); // a timer would do this when the delay is over
/// let again = queue.try_get().unwrap();
/// assert_eq!(again.attempt(), 2);
/// again.succeed();
/// ```
pub struct Redelivery {
    release: Release,
    /// `None` once released.
    ticket: Option<Ticket>,
    id: JobId,
    attempt: u32,
}

impl Redelivery {
    pub(crate) fn new(release: Release, ticket: Ticket, id: JobId, attempt: u32) -> Self {
        Redelivery {
            release,
            ticket: Some(ticket),
            id,
            attempt,
        }
    }

    /// The job's id.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let ids = Arc::new(Mutex::new(Vec::new()));
    /// let seen = Arc::clone(&ids);
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_delay(move |redelivery| seen.lock().unwrap().push(redelivery.id()));
    /// let id = queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap()); // the claim is dropped by the schedule: due at once
    /// assert_eq!(*ids.lock().unwrap(), [id]);
    /// queue.try_get().unwrap().succeed();
    /// ```
    #[must_use]
    pub fn id(&self) -> JobId {
        self.id
    }

    /// The number of the delivery the item waits for: one more than the delivery that was
    /// abandoned.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(5).unwrap())
    ///     .with_redelivery_delay(|redelivery| assert!(redelivery.attempt() >= 2));
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// drop(queue.try_get().unwrap());
    /// assert_eq!(queue.try_get().unwrap().attempt(), 3);
    /// ```
    #[must_use]
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The delay `backoff` gives after the abandoned delivery (number
    /// [`attempt`](Redelivery::attempt) − 1), with the job's id as the jitter key, as
    /// [`Backoff::delay_for`] reckons it for a retry: what the adapters'
    /// `with_redelivery_backoff` wait before releasing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{AbandonPolicy, Backoff, Queue};
    ///
    /// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(60));
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(5).unwrap())
    ///     .with_redelivery_delay(move |redelivery| {
    ///         let expected = Duration::from_secs(1 << (redelivery.attempt() - 2));
    ///         assert_eq!(redelivery.delay(&backoff), expected);
    ///     });
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap()); // waits 1 s after delivery 1
    /// drop(queue.try_get().unwrap()); // 2 s after delivery 2
    /// ```
    #[must_use]
    pub fn delay(&self, backoff: &Backoff) -> Duration {
        backoff.delay_for(self.attempt.saturating_sub(1), self.id.get())
    }

    /// Moves the item into the queue for its next delivery now.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use tally_queue::{AbandonPolicy, Queue};
    ///
    /// let held = Arc::new(Mutex::new(None));
    /// let slot = Arc::clone(&held);
    /// let queue = Queue::unbounded()
    ///     .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
    ///     .with_redelivery_delay(move |redelivery| *slot.lock().unwrap() = Some(redelivery));
    /// queue.try_put(1).unwrap();
    /// drop(queue.try_get().unwrap());
    /// assert!(queue.try_get().is_err());
    /// held.lock().unwrap().take().unwrap().release();
    /// queue.try_get().unwrap().succeed();
    /// ```
    pub fn release(mut self) {
        self.let_go();
    }

    fn let_go(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            (self.release)(ticket);
        }
    }
}

// Dropped unreleased (a cancelled timer task, a runtime shutting down, a panic in the
// schedule): the item is due at once, never stranded.
impl Drop for Redelivery {
    fn drop(&mut self) {
        self.let_go();
    }
}

impl fmt::Debug for Redelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redelivery")
            .field("id", &self.id)
            .field("attempt", &self.attempt)
            .field("released", &self.ticket.is_none())
            .finish()
    }
}
