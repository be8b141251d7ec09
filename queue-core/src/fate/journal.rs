//! The optional observer of every job event: [`Journal`], the events it sees
//! ([`JobEvent`]), and the guard that calls it so that its panics cost the queue nothing.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;

use crate::job_id::JobId;
use crate::outcome::Outcome;
use crate::sync::{AtomicUsize, Ordering};

/// One event in the life of a job, as a [`Journal`] sees it.
///
/// A job's events, in the order they happen to it:
///
/// ```text
/// Accepted ─┬─> Delivered ─┬─> Ended                         (final)
///           │              ├─> Abandoned ─┬─ (Abandon policy: final)
///           │              │              ├─> Ended(Uncertain) (Uncertain policy: final)
///           │              │              ├─> Redelivered ──> Delivered ...
///           │              │              ├─> DeadLettered    (final)
///           │              │              └─> Redelivered ─> Discarded ─┬─ (drained: final)
///           │              │                                            └─> DeadLettered
///           │              ├─> Retried ───> Delivered ...
///           │              ├─> Retried ───> RetryRefused ──> (still in flight)
///           │              └─> RetryRefused ──────────────> (still in flight)
///           ├─> Discarded                                    (final: drained)
///           └─> Discarded ─> DeadLettered { attempts: 0 }    (final: landed after a drain)
/// ```
///
/// Each `Delivered` carries the delivery's number, one more than the delivery before it,
/// however that one came back.
///
/// # Examples
///
/// ```
/// use tally_queue::JobEvent;
///
/// let queue = tally_queue::Queue::<u8>::unbounded();
/// let id = queue.try_put(1).unwrap();
/// let event = JobEvent::Delivered { id, attempt: 1 };
/// assert_eq!(event.id(), id);
/// assert!(!event.is_final());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobEvent {
    /// A put accepted the job. Recorded just before the item enters the buffer, so that
    /// no get can record its delivery first.
    Accepted(JobId),
    /// A get handed the job out, as its delivery number `attempt` (from 1).
    Delivered {
        /// The job.
        id: JobId,
        /// Which delivery of this id it is.
        attempt: u32,
    },
    /// The delivery was resolved with `outcome`.
    Ended {
        /// The job.
        id: JobId,
        /// How it ended.
        outcome: Outcome,
    },
    /// The delivery was dropped unresolved (`panicking`: while its thread panicked). Final
    /// under [`AbandonPolicy::Abandon`](crate::AbandonPolicy::Abandon); under
    /// `Redeliver`, `Redelivered` or `DeadLettered` follows; under
    /// [`Uncertain`](crate::AbandonPolicy::Uncertain), `Ended` with
    /// [`Outcome::Uncertain`] follows.
    Abandoned {
        /// The job.
        id: JobId,
        /// Whether the delivery was dropped during a panic.
        panicking: bool,
    },
    /// [`Delivery::retry`](crate::Delivery::retry) is putting the job back for its next
    /// delivery. Recorded before the item goes back; if the queue takes no returns any
    /// more (a shutdown came in between), [`RetryRefused`](JobEvent::RetryRefused)
    /// follows.
    Retried(JobId),
    /// The retry was refused (its attempts were used up, or the queue was shut down); the
    /// delivery is still in flight, with its attempt.
    RetryRefused(JobId),
    /// Under `Redeliver`, the abandoned job goes back for delivery number `attempt`.
    /// Recorded before it can be taken again; if an immediate shutdown closed the queue
    /// to returns, `Discarded` and `DeadLettered` follow.
    Redelivered {
        /// The job.
        id: JobId,
        /// The delivery number it will be delivered as.
        attempt: u32,
    },
    /// An immediate shutdown drained the job (it is returned to the caller; final), or the
    /// job came back after the drain (then `DeadLettered` follows): under `Redeliver`, a
    /// delivery abandoned after it; or a put that raced the drain and landed after it.
    Discarded(JobId),
    /// The job became a [`DeadLetter`](crate::DeadLetter) after `attempts` deliveries (0
    /// for a put that landed after an immediate shutdown's drain).
    DeadLettered {
        /// The job.
        id: JobId,
        /// How many times it was delivered.
        attempts: u32,
    },
}

impl JobEvent {
    /// The job the event is about.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::<u8>::unbounded();
    /// let id = queue.try_put(1).unwrap();
    /// assert_eq!(tally_queue::JobEvent::Accepted(id).id(), id);
    /// ```
    #[must_use]
    pub fn id(&self) -> JobId {
        match *self {
            JobEvent::Accepted(id)
            | JobEvent::Retried(id)
            | JobEvent::RetryRefused(id)
            | JobEvent::Discarded(id)
            | JobEvent::Delivered { id, .. }
            | JobEvent::Ended { id, .. }
            | JobEvent::Abandoned { id, .. }
            | JobEvent::Redelivered { id, .. }
            | JobEvent::DeadLettered { id, .. } => id,
        }
    }

    /// Whether nothing more happens to the job after this event, whatever the policy.
    /// ([`Abandoned`](JobEvent::Abandoned) is final only under `Abandon`, so it is not
    /// counted here: under `Uncertain` an `Ended` follows it, the final one; a `Discarded`
    /// after a `Redelivered` is followed by `DeadLettered`.)
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{JobEvent, Outcome};
    ///
    /// let id = tally_queue::Queue::<u8>::unbounded().try_put(1).unwrap();
    /// assert!(JobEvent::Ended { id, outcome: Outcome::Rejected }.is_final());
    /// assert!(!JobEvent::Accepted(id).is_final());
    /// ```
    #[must_use]
    pub fn is_final(&self) -> bool {
        matches!(self, JobEvent::Ended { .. } | JobEvent::DeadLettered { .. })
    }
}

/// An observer of every [`JobEvent`], installed with
/// [`Queue::with_journal`](crate::Queue::with_journal).
///
/// # When it is called
///
/// On the thread that made the change, with no lock of this crate held (the waiter lists'
/// included), and never while an item is between two owners: a job's events are recorded in
/// the order they happen to that job (the causal order): `Accepted` before the item enters
/// the buffer, so before any `Delivered`; `Delivered` once the delivery exists; an ending
/// before the ledger counts it, so a [`join`](crate::Queue::join) that returns has every
/// ending recorded. Events of different jobs, recorded by different threads, have no
/// order among them.
///
/// # What it may do
///
/// - **Panic**: the panic is caught (with `std`) and counted
///   ([`Queue::journal_panics`](crate::Queue::journal_panics)); the operation goes on as if
///   the call had returned, nothing is lost and nobody hangs. That event is lost to the
///   journal. Without `std` there is no `catch_unwind`: a panicking journal there unwinds
///   through the queue operation (or aborts, with `panic = "abort"`); do not panic.
/// - **Call back into the queue** (through a `Weak` it was given, say): it may, since no
///   lock is held. Those calls record their own events, from inside the outer call, so they
///   reach the journal nested inside the outer event's call; a journal that puts on every
///   event recurses without end, as any re-entrant callback would.
/// - **Block**: it should not; it runs inside someone else's queue operation.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use tally_queue::{JobEvent, Journal, Queue};
///
/// /// Counts final events.
/// #[derive(Default)]
/// struct Finals(AtomicU64);
/// impl Journal for Finals {
///     fn record(&self, event: JobEvent) {
///         if event.is_final() {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let finals = Arc::new(Finals::default());
/// let queue = Queue::unbounded().with_journal(Arc::clone(&finals));
/// queue.try_put(1).unwrap();
/// queue.try_get().unwrap().reject();
/// assert_eq!(finals.0.load(Ordering::Relaxed), 1);
/// ```
pub trait Journal: Send + Sync {
    /// Records one event.
    fn record(&self, event: JobEvent);

    /// The ids delivered and not yet ended, in id order, if this journal keeps them;
    /// `None` (the default) if not. [`Queue::in_flight_ids`](crate::Queue::in_flight_ids)
    /// and the shutdown report ([`Closed`](crate::Closed)) ask for them. Called with no
    /// lock of the queue held; a panic here is caught and counted as in
    /// [`record`](Journal::record), and answers `None`.
    ///
    /// Asked once when the journal is installed, to learn whether it keeps ids: the
    /// answer then (`Some` or `None`) must hold for the journal's life. A queue whose
    /// journal keeps ids makes each move of a job in or out of flight one step for the
    /// report, so that the report's ids and ledger agree.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{JobEvent, Journal, Record};
    ///
    /// struct Quiet;
    /// impl Journal for Quiet {
    ///     fn record(&self, _: JobEvent) {}
    /// }
    /// assert_eq!(Quiet.in_flight_ids(), None);
    /// assert_eq!(Record::new().in_flight_ids(), Some(vec![]));
    /// ```
    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        None
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<J: Journal + ?Sized> Journal for alloc::sync::Arc<J> {
    fn record(&self, event: JobEvent) {
        (**self).record(event);
    }

    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        (**self).in_flight_ids()
    }
}

/// The queue's installed journal and the count of its panics.
pub(crate) struct Journaled {
    journal: Box<dyn Journal>,
    panics: AtomicUsize,
    /// Whether the journal answers [`in_flight_ids`](Journal::in_flight_ids), asked once
    /// when it is installed: then a shutdown report reads those ids and the ledger at one
    /// instant (see `gate.rs`).
    keeps_ids: bool,
}

impl Journaled {
    pub(crate) fn new(journal: Box<dyn Journal>) -> Self {
        let mut journaled = Journaled {
            journal,
            panics: AtomicUsize::new(0),
            keeps_ids: false,
        };
        journaled.keeps_ids = journaled.in_flight_ids().is_some();
        journaled
    }

    /// Whether the journal keeps the ids in flight.
    #[inline]
    pub(crate) fn keeps_ids(&self) -> bool {
        self.keeps_ids
    }

    /// Calls the journal; a panic is caught and counted (with `std`).
    #[inline(never)]
    pub(crate) fn record(&self, event: JobEvent) {
        #[cfg(feature = "std")]
        {
            let call = core::panic::AssertUnwindSafe(|| self.journal.record(event));
            if std::panic::catch_unwind(call).is_err() {
                // Relaxed: a statistic.
                self.panics.fetch_add(1, Ordering::Relaxed);
            }
        }
        #[cfg(not(feature = "std"))]
        self.journal.record(event);
    }

    /// Asks the journal for the ids in flight; a panic is caught and counted (with `std`).
    #[inline(never)]
    pub(crate) fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        #[cfg(feature = "std")]
        {
            let call = core::panic::AssertUnwindSafe(|| self.journal.in_flight_ids());
            std::panic::catch_unwind(call).unwrap_or_else(|_| {
                // Relaxed: a statistic.
                self.panics.fetch_add(1, Ordering::Relaxed);
                None
            })
        }
        #[cfg(not(feature = "std"))]
        self.journal.in_flight_ids()
    }

    pub(crate) fn panics(&self) -> usize {
        // Relaxed: a statistic.
        self.panics.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for Journaled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Journaled")
            .field("panics", &self.panics())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(loom), feature = "std"))]
mod tests {
    use super::*;
    use alloc::sync::Arc;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Keep(Mutex<alloc::vec::Vec<JobEvent>>);
    impl Journal for Keep {
        fn record(&self, event: JobEvent) {
            if matches!(event, JobEvent::Retried(_)) {
                panic!("a journal that panics");
            }
            self.0.lock().unwrap().push(event);
        }
    }

    #[test]
    fn a_panicking_journal_is_caught_and_counted() {
        let keep = Arc::new(Keep::default());
        let journaled = Journaled::new(Box::new(Arc::clone(&keep)));
        let id = JobId::new(3);
        journaled.record(JobEvent::Accepted(id));
        journaled.record(JobEvent::Retried(id));
        journaled.record(JobEvent::Discarded(id));
        assert_eq!(journaled.panics(), 1);
        assert_eq!(
            *keep.0.lock().unwrap(),
            [JobEvent::Accepted(id), JobEvent::Discarded(id)]
        );
    }

    #[test]
    fn every_event_names_its_id() {
        let id = JobId::new(9);
        for event in [
            JobEvent::Accepted(id),
            JobEvent::Delivered { id, attempt: 2 },
            JobEvent::Ended {
                id,
                outcome: Outcome::Succeeded,
            },
            JobEvent::Abandoned {
                id,
                panicking: true,
            },
            JobEvent::Retried(id),
            JobEvent::RetryRefused(id),
            JobEvent::Redelivered { id, attempt: 2 },
            JobEvent::Discarded(id),
            JobEvent::DeadLettered { id, attempts: 2 },
        ] {
            assert_eq!(event.id(), id);
        }
    }
}
