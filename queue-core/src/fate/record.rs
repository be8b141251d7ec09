//! [`Record`]: a ready [`Journal`] that keeps each id's current state and final outcome.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::journal::{JobEvent, Journal};
use crate::job_id::JobId;
use crate::outcome::Outcome;

/// Where a job is, as far as a [`Record`] has seen.
///
/// # Examples
///
/// ```
/// use tally_queue::{JobState, Outcome};
///
/// assert!(JobState::InFlight { attempt: 1 }.is_pending());
/// assert!(!JobState::Ended(Outcome::Succeeded).is_pending());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Waiting for delivery number `attempt` (fresh, or back for another attempt).
    Buffered {
        /// The delivery number it will be delivered as.
        attempt: u32,
    },
    /// Delivered as delivery number `attempt`, not yet ended.
    InFlight {
        /// Which delivery it is.
        attempt: u32,
    },
    /// Resolved with an outcome.
    Ended(Outcome),
    /// Dropped unresolved and not redelivered (final under `Abandon`; under `Uncertain`
    /// the job goes on to `Ended(Outcome::Uncertain)` at once).
    Abandoned {
        /// Whether the delivery was dropped during a panic.
        panicking: bool,
    },
    /// Drained by an immediate shutdown and handed back, or abandoned after one under
    /// `Redeliver` (then kept in the dead letters, reason `ShutDownNow`).
    Discarded,
    /// A dead letter after `attempts` deliveries (under `Redeliver`).
    DeadLettered {
        /// How many times it was delivered.
        attempts: u32,
    },
}

impl JobState {
    /// Whether the job still needs an ending (buffered or in flight).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::JobState::Buffered { attempt: 1 }.is_pending());
    /// ```
    #[must_use]
    pub fn is_pending(&self) -> bool {
        matches!(self, JobState::Buffered { .. } | JobState::InFlight { .. })
    }
}

/// A ready [`Journal`]: an in-memory record of each id's current [`JobState`], for a small
/// service or a test that must answer "which ids ended uncertain or abandoned, and which
/// are still in flight?". Install it through an `Arc` and keep a clone to ask it.
///
/// Memory: one map entry per accepted id, kept after the id ends, until
/// [`take_finished`](Record::take_finished) removes the ended ones. The queue calls it under
/// a mutex of its own (std only); each query takes that mutex and copies what it answers.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use tally_queue::{JobState, Outcome, Queue, Record};
///
/// let record = Arc::new(Record::new());
/// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
/// let ok = queue.try_put("ok").unwrap();
/// let unsure = queue.try_put("unsure").unwrap();
/// let running = queue.try_put("running").unwrap();
/// let lost = queue.try_put("lost").unwrap();
/// queue.try_get().unwrap().succeed();
/// queue.try_get().unwrap().uncertain();
/// let held = queue.try_get().unwrap();
/// drop(queue.try_get().unwrap());
///
/// assert_eq!(record.uncertain(), vec![unsure]);
/// assert_eq!(record.abandoned(), vec![lost]);
/// assert_eq!(record.in_flight(), vec![running]);
/// assert_eq!(record.state(ok), Some(JobState::Ended(Outcome::Succeeded)));
/// held.succeed();
/// assert!(record.pending().is_empty());
/// ```
#[derive(Default)]
pub struct Record {
    jobs: Mutex<BTreeMap<JobId, JobState>>,
}

impl Record {
    /// An empty record.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::Record::new().pending().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Record::default()
    }

    /// The map, even if a panic elsewhere poisoned the mutex (every update leaves it
    /// consistent: one insert or remove).
    fn jobs(&self) -> MutexGuard<'_, BTreeMap<JobId, JobState>> {
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The state of `id`, or `None` if it was never accepted (or was taken by
    /// [`take_finished`](Record::take_finished)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{JobState, Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let id = queue.try_put(1).unwrap();
    /// let job = queue.try_get().unwrap();
    /// assert_eq!(record.state(id), Some(JobState::InFlight { attempt: 1 }));
    /// job.reject();
    /// ```
    #[must_use]
    pub fn state(&self, id: JobId) -> Option<JobState> {
        self.jobs().get(&id).copied()
    }

    /// Every id in a state matching `filter`, in id order.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{JobState, Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let id = queue.try_put(1).unwrap();
    /// assert_eq!(record.ids(|state| matches!(state, JobState::Buffered { .. })), vec![id]);
    /// ```
    #[must_use]
    pub fn ids(&self, mut filter: impl FnMut(&JobState) -> bool) -> Vec<JobId> {
        self.jobs()
            .iter()
            .filter(|(_, state)| filter(state))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Ids delivered and not yet ended.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::Record::new().in_flight().is_empty());
    /// ```
    #[must_use]
    pub fn in_flight(&self) -> Vec<JobId> {
        self.ids(|state| matches!(state, JobState::InFlight { .. }))
    }

    /// Ids buffered or in flight: still needing an ending.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::Record::new().pending().is_empty());
    /// ```
    #[must_use]
    pub fn pending(&self) -> Vec<JobId> {
        self.ids(JobState::is_pending)
    }

    /// Ids resolved as [`Outcome::Uncertain`]: those whose external effect needs
    /// reconciling (with those dropped unresolved under
    /// [`AbandonPolicy::Uncertain`](crate::AbandonPolicy::Uncertain)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::Record::new().uncertain().is_empty());
    /// ```
    #[must_use]
    pub fn uncertain(&self) -> Vec<JobId> {
        self.ids(|state| *state == JobState::Ended(Outcome::Uncertain))
    }

    /// Ids abandoned for good: dropped unresolved under `Abandon`, or dead-lettered under
    /// `Redeliver` (their effect, too, may need reconciling).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_queue::Record::new().abandoned().is_empty());
    /// ```
    #[must_use]
    pub fn abandoned(&self) -> Vec<JobId> {
        self.ids(|state| {
            matches!(
                state,
                JobState::Abandoned { .. } | JobState::DeadLettered { .. }
            )
        })
    }

    /// Removes and returns every id that has ended (any state but buffered or in flight),
    /// with its final state, in id order: the way to keep the record's memory bounded.
    ///
    /// Under `Redeliver`, an id in `Abandoned` may still be redelivered (its
    /// `Redelivered` event comes right after), and under `Uncertain` it goes on to
    /// `Ended(Outcome::Uncertain)` right after: take finished ids once the queue is
    /// settled, or under `Abandon`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{JobState, Outcome, Queue, Record};
    ///
    /// let record = Arc::new(Record::new());
    /// let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    /// let id = queue.try_put(1).unwrap();
    /// queue.try_get().unwrap().succeed();
    /// assert_eq!(record.take_finished(), vec![(id, JobState::Ended(Outcome::Succeeded))]);
    /// assert_eq!(record.state(id), None);
    /// ```
    pub fn take_finished(&self) -> Vec<(JobId, JobState)> {
        let mut jobs = self.jobs();
        let finished: Vec<(JobId, JobState)> = jobs
            .iter()
            .filter(|(_, state)| !state.is_pending())
            .map(|(id, state)| (*id, *state))
            .collect();
        for (id, _) in &finished {
            jobs.remove(id);
        }
        finished
    }

    /// The state after `event`, given the state before it.
    fn next(before: Option<JobState>, event: JobEvent) -> JobState {
        let attempt = match before {
            Some(JobState::Buffered { attempt } | JobState::InFlight { attempt }) => attempt,
            _ => 1,
        };
        match event {
            JobEvent::Accepted(_) => JobState::Buffered { attempt: 1 },
            JobEvent::Delivered { attempt, .. } => JobState::InFlight { attempt },
            JobEvent::Ended { outcome, .. } => JobState::Ended(outcome),
            JobEvent::Abandoned { panicking, .. } => JobState::Abandoned { panicking },
            // A retry comes back as the next attempt (see `Delivery::attempt`).
            JobEvent::Retried(_) => JobState::Buffered {
                attempt: attempt.saturating_add(1),
            },
            // Refused outright (still in flight), or after its `Retried` (which counted
            // the next attempt): either way the delivery stays in flight as it was.
            JobEvent::RetryRefused(_) => match before {
                Some(JobState::Buffered { attempt }) => JobState::InFlight {
                    attempt: attempt.saturating_sub(1).max(1),
                },
                _ => JobState::InFlight { attempt },
            },
            JobEvent::Redelivered { attempt, .. } => JobState::Buffered { attempt },
            JobEvent::Discarded(_) => JobState::Discarded,
            // Discarded by an immediate shutdown, then kept as a dead letter: the ledger
            // counts it discarded, and so does the record.
            JobEvent::DeadLettered { .. } if before == Some(JobState::Discarded) => {
                JobState::Discarded
            }
            JobEvent::DeadLettered { attempts, .. } => JobState::DeadLettered { attempts },
        }
    }
}

impl Journal for Record {
    fn record(&self, event: JobEvent) {
        let id = event.id();
        let mut jobs = self.jobs();
        let before = jobs.get(&id).copied();
        jobs.insert(id, Record::next(before, event));
    }

    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        Some(self.in_flight())
    }
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let jobs = self.jobs();
        let pending = jobs.values().filter(|state| state.is_pending()).count();
        f.debug_struct("Record")
            .field("ids", &jobs.len())
            .field("pending", &pending)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_retry_that_is_refused_goes_back_in_flight_with_its_attempt() {
        let record = Record::new();
        let id = JobId::new(1);
        record.record(JobEvent::Accepted(id));
        record.record(JobEvent::Delivered { id, attempt: 2 });
        record.record(JobEvent::Retried(id));
        assert_eq!(record.state(id), Some(JobState::Buffered { attempt: 3 }));
        record.record(JobEvent::RetryRefused(id));
        assert_eq!(record.state(id), Some(JobState::InFlight { attempt: 2 }));
        // Refused outright (its attempts used up): no `Retried` first.
        record.record(JobEvent::RetryRefused(id));
        assert_eq!(record.state(id), Some(JobState::InFlight { attempt: 2 }));
    }

    #[test]
    fn redelivery_then_dead_letter() {
        let record = Record::new();
        let id = JobId::new(4);
        record.record(JobEvent::Accepted(id));
        record.record(JobEvent::Delivered { id, attempt: 1 });
        record.record(JobEvent::Abandoned {
            id,
            panicking: true,
        });
        assert_eq!(record.abandoned(), [id]);
        record.record(JobEvent::Redelivered { id, attempt: 2 });
        assert_eq!(record.pending(), [id]);
        record.record(JobEvent::Delivered { id, attempt: 2 });
        record.record(JobEvent::Abandoned {
            id,
            panicking: false,
        });
        record.record(JobEvent::DeadLettered { id, attempts: 2 });
        assert_eq!(record.abandoned(), [id]);
        assert_eq!(
            record.take_finished(),
            [(id, JobState::DeadLettered { attempts: 2 })]
        );
    }
}
