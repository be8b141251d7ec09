//! A delivered item on lease, resolved once, fenced by its attempt.

pub(crate) mod error;

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;
use core::ops::Deref;
use core::time::Duration;

use tally_queue::{Backoff, JobEvent, JobId, Outcome};

use crate::codec::Codec;
use crate::queue::delivery::error::{KeepAliveError, ResolveError, RetryError};
use crate::queue::engine::{Dropped, Engine, How, Resolve, Resolved, Retried};
use crate::queue::entry_id::EntryKey;
use crate::server::error::Error;

/// One delivered item, held on a lease by this process: the across-processes form of
/// [`tally_queue::Delivery`].
///
/// Resolve it exactly once with [`succeed`](Delivery::succeed),
/// [`reject`](Delivery::reject), [`uncertain`](Delivery::uncertain) or
/// [`resolve`](Delivery::resolve), or put it back with [`retry`](Delivery::retry). The
/// resolve is **fenced**: it counts only if this
/// consumer still holds this attempt on the server. If the lease expired and the job was
/// handed out again, it returns [`ResolveError::Stale`] and nothing is counted. For long
/// work, call [`keep_alive`](Delivery::keep_alive) within each lease.
///
/// Dropped unresolved, the delivery is handed to the maintenance future
/// ([`Queue::maintain`](crate::Queue::maintain)), which ends it by the queue's
/// [`AbandonPolicy`](crate::AbandonPolicy); if that never runs (the process died), the
/// lease expires and the same policy applies then.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) -> Result<(), Box<dyn std::error::Error>> {
/// let job = queue.get().await?;
/// println!("{} attempt {}: {} bytes", job.id(), job.attempt(), job.len());
/// job.succeed().await?;
/// # Ok(()) }
/// ```
pub struct Delivery<C: Codec> {
    pub(crate) engine: Arc<Engine<C>>,
    pub(crate) entry: String,
    /// `entry` as a key of the handle's held entries.
    pub(crate) key: EntryKey,
    pub(crate) id: JobId,
    /// The entry's delivery count: the fence of its resolves, retries and renewals.
    pub(crate) attempt: u64,
    /// The job's deliveries before this entry (earlier entries of a retried job).
    pub(crate) earlier: u64,
    /// `None` once resolved (or refused as stale).
    pub(crate) item: Option<C::Item>,
    /// The tokens of calls with this delivery's resolve (or retry) whose replies were
    /// lost: a repeat looks their records up.
    pub(crate) lost: alloc::vec::Vec<u64>,
    /// When this handle took it (for the time in flight).
    #[cfg(feature = "metrics")]
    pub(crate) taken: std::time::Instant,
}

impl<C: Codec> Delivery<C> {
    /// The job's id, the one its put returned.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// assert!(job.id().get() < 1 << 63);
    /// # }
    /// ```
    pub fn id(&self) -> JobId {
        self.id
    }

    /// Which delivery of this job this is: 1 at first, one more after each way a delivery
    /// comes back (a [`retry`](Delivery::retry), a lease that expired, a drop), as in
    /// process. Under [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver),
    /// `max_attempts` bounds them all: a retry of the last allowed delivery is refused
    /// ([`RetryError::Exhausted`](crate::RetryError::Exhausted)), and a lease of it that
    /// expires makes a dead letter.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// assert!(job.attempt() >= 1);
    /// # }
    /// ```
    pub fn attempt(&self) -> u64 {
        self.earlier + self.attempt
    }

    /// The item.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// let _bytes: &Vec<u8> = job.item();
    /// # }
    /// ```
    pub fn item(&self) -> &C::Item {
        match &self.item {
            Some(item) => item,
            // Every method that takes the item out consumes `self` or puts it back.
            None => unreachable!("a live delivery holds its item"),
        }
    }

    /// Resolves as [`Outcome::Succeeded`] and returns the item.
    ///
    /// # Errors
    ///
    /// [`ResolveError::Stale`] if this attempt no longer holds the job (not counted);
    /// [`ResolveError::Gone`] if the queue's keys are gone; [`ResolveError::Redis`] with
    /// the delivery back if the server was unreachable, refused, or the reply was lost:
    /// call again, a repeat is never counted twice.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let item = queue.get().await.unwrap().succeed().await.unwrap();
    /// # drop(item); }
    /// ```
    pub async fn succeed(self) -> Result<C::Item, ResolveError<C>> {
        self.resolve(Outcome::Succeeded).await
    }

    /// Resolves as [`Outcome::Rejected`] and returns the item.
    ///
    /// # Errors
    ///
    /// As [`succeed`](Delivery::succeed).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.get().await.unwrap().reject().await.unwrap();
    /// # }
    /// ```
    pub async fn reject(self) -> Result<C::Item, ResolveError<C>> {
        self.resolve(Outcome::Rejected).await
    }

    /// Resolves as [`Outcome::Uncertain`] and returns the item. A durable record is kept
    /// for reconciliation ([`Queue::uncertain`](crate::Queue::uncertain)).
    ///
    /// # Errors
    ///
    /// As [`succeed`](Delivery::succeed).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.get().await.unwrap().uncertain().await.unwrap();
    /// # }
    /// ```
    pub async fn uncertain(self) -> Result<C::Item, ResolveError<C>> {
        self.resolve(Outcome::Uncertain).await
    }

    /// Resolves with `outcome` and returns the item.
    ///
    /// # Errors
    ///
    /// As [`succeed`](Delivery::succeed). A repeat with a different outcome than the one
    /// that counted returns [`ResolveError::Stale`]: the first one stands.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// use tally_queue::Outcome;
    /// queue.get().await.unwrap().resolve(Outcome::Rejected).await.unwrap();
    /// # }
    /// ```
    pub async fn resolve(self, outcome: Outcome) -> Result<C::Item, ResolveError<C>> {
        let how = How::of(outcome);
        let resolve = Resolve {
            entry: &self.entry,
            key: &self.key,
            attempt: self.attempt,
            how,
            reason: "",
            lost: &self.lost,
        };
        let result = self.engine.step(core::slice::from_ref(&resolve), 0).await;
        match result {
            Ok((mut resolved, _, _)) => match resolved.pop() {
                Some(resolved) => self.answer(outcome, resolved),
                None => Err(ResolveError::Redis {
                    error: Error::Protocol("no answer to a resolve".into()),
                    delivery: Box::new(self),
                }),
            },
            Err((error, token)) => Err(self.failed(error, token)),
        }
    }

    /// The delivery handed back after a resolve that failed (`token`: its call), or
    /// `Gone` with its item.
    pub(crate) fn failed(mut self, error: Error, token: u64) -> ResolveError<C> {
        match error {
            Error::Gone => ResolveError::Gone(self.take()),
            error => {
                if error.is_unknown() {
                    self.lost.push(token);
                }
                ResolveError::Redis {
                    delivery: Box::new(self),
                    error,
                }
            }
        }
    }

    /// The delivery's end by the server's answer to its resolve.
    pub(crate) fn answer(
        mut self,
        outcome: Outcome,
        resolved: Resolved,
    ) -> Result<C::Item, ResolveError<C>> {
        match resolved {
            Resolved::Counted => Ok(self.ended(outcome)),
            // The first call counted; its reply was lost.
            Resolved::Repeat(word) if word == How::of(outcome).word() => Ok(self.ended(outcome)),
            Resolved::Repeat(_) | Resolved::Stale => Err(ResolveError::Stale(self.take())),
        }
    }

    /// Puts the job back in the stream under the same id, as the in-process
    /// [`tally_queue::Delivery::retry`]: it counts as buffered again (accepted once, no
    /// ending counted), goes to the back of the stream, and comes back as the next attempt.
    /// One script fences it (only the current holder of this attempt may retry), acks and
    /// deletes the entry, and appends a new one with the same id and item bytes and the
    /// job's deliveries so far.
    ///
    /// Refused, with the delivery handed back still held, after any shutdown (graceful
    /// or immediate, as in process), when a bounded queue's buffer is full, and under
    /// [`AbandonPolicy::Redeliver`](crate::AbandonPolicy::Redeliver) when this is the
    /// job's last allowed attempt.
    ///
    /// # Errors
    ///
    /// [`RetryError::Stale`] if this attempt no longer holds the job (nothing changed);
    /// [`RetryError::Gone`] if the queue's keys are gone;
    /// [`RetryError::ShutDown`], [`RetryError::Full`] or [`RetryError::Exhausted`] with the
    /// delivery back;
    /// [`RetryError::Redis`] with the delivery back if the server was unreachable or the
    /// reply was lost: call again, a repeat of a retry that happened changes nothing more.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// let id = job.id();
    /// assert_eq!(job.retry().await.unwrap(), id);
    /// let again = queue.get().await.unwrap();
    /// assert_eq!((again.id(), again.attempt()), (id, 2));
    /// # }
    /// ```
    pub async fn retry(self) -> Result<JobId, RetryError<C>> {
        self.retry_delayed(0).await
    }

    /// As [`retry`](Delivery::retry), but the job is not delivered again before `delay`
    /// has passed by the server's clock: until then it waits among the delayed jobs
    /// (counted buffered; [`shutdown_now`](crate::Queue::shutdown_now) hands it back with
    /// the rest). Once due, the next get that runs the step script delivers it: at once
    /// when the queue is idle, within a quarter of a lease when gets find other jobs. A
    /// zero `delay` is [`retry`](Delivery::retry).
    ///
    /// # Errors
    ///
    /// As [`retry`](Delivery::retry).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// let id = job.retry_after(Duration::from_secs(5)).await.unwrap();
    /// assert_eq!(queue.ledger().await.unwrap().buffered, 1);
    /// let again = queue.get().await.unwrap(); // five seconds later
    /// assert_eq!(again.id(), id);
    /// # }
    /// ```
    pub async fn retry_after(self, delay: Duration) -> Result<JobId, RetryError<C>> {
        self.retry_delayed(millis(delay)).await
    }

    /// As [`retry_after`](Delivery::retry_after), with the delay `backoff` gives after
    /// this attempt failed: [`Backoff::delay_for`] with this attempt and the job's id as
    /// the key, so the delay grows with the attempts (a retry counts toward them) and the
    /// jitter spreads jobs that failed together. Every process with the same policy draws
    /// the same delay for the same job and attempt.
    ///
    /// # Errors
    ///
    /// As [`retry`](Delivery::retry).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tally_queue::{Backoff, Jitter};
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let backoff = Backoff::exponential(Duration::from_secs(1), Duration::from_secs(60))
    ///     .with_jitter(Jitter::Equal);
    /// let job = queue.get().await.unwrap();
    /// let (id, attempt) = (job.id(), job.attempt());
    /// job.retry_backoff(&backoff).await.unwrap(); // back within 1 s after attempt 1
    /// let again = queue.get().await.unwrap();
    /// assert_eq!((again.id(), again.attempt()), (id, attempt + 1));
    /// # }
    /// ```
    pub async fn retry_backoff(self, backoff: &Backoff) -> Result<JobId, RetryError<C>> {
        let attempt = u32::try_from(self.attempt()).unwrap_or(u32::MAX);
        let delay = backoff.delay_for(attempt, self.id.get());
        self.retry_delayed(millis(delay)).await
    }

    async fn retry_delayed(mut self, delay_ms: u64) -> Result<JobId, RetryError<C>> {
        match self
            .engine
            .retry(&self.entry, self.attempt, &self.lost, delay_ms)
            .await
        {
            Ok(Retried::Done) => {
                drop(self.take());
                let id = self.id;
                self.engine.journal.note(|| JobEvent::Retried(id));
                Ok(id)
            }
            Ok(Retried::Stale) => Err(RetryError::Stale(self.take())),
            Ok(Retried::ShutDown) => {
                self.refused();
                Err(RetryError::ShutDown(Box::new(self)))
            }
            Ok(Retried::Full) => {
                self.refused();
                Err(RetryError::Full(Box::new(self)))
            }
            Ok(Retried::Spent) => {
                self.refused();
                Err(RetryError::Exhausted(Box::new(self)))
            }
            Err((Error::Gone, _)) => Err(RetryError::Gone(self.take())),
            Err((error, token)) => {
                if error.is_unknown() {
                    self.lost.push(token);
                }
                Err(RetryError::Redis {
                    delivery: Box::new(self),
                    error,
                })
            }
        }
    }

    /// Resets the lease, for work that runs longer than one lease. Call it well within
    /// each lease (a third of it is a good period). Counts nothing.
    ///
    /// # Errors
    ///
    /// [`KeepAliveError::Stale`] if the lease had already expired and the job was
    /// reclaimed: stop the work, its resolve will not count.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let job = queue.get().await.unwrap();
    /// job.keep_alive().await.unwrap();
    /// job.succeed().await.unwrap();
    /// # }
    /// ```
    pub async fn keep_alive(&self) -> Result<(), KeepAliveError> {
        match self.engine.hold(&self.entry, self.attempt, true).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(KeepAliveError::Stale),
            Err(error) => Err(KeepAliveError::Redis(error)),
        }
    }

    /// The item of a delivery whose ending counted, recorded in the journal.
    pub(crate) fn ended(&mut self, outcome: Outcome) -> C::Item {
        let id = self.id;
        self.engine.journal.note(|| JobEvent::Ended { id, outcome });
        self.take()
    }

    /// A refused retry, recorded in the journal: the delivery is still in flight.
    fn refused(&self) {
        let id = self.id;
        self.engine.journal.note(|| JobEvent::RetryRefused(id));
    }

    pub(crate) fn take(&mut self) -> C::Item {
        match self.item.take() {
            Some(item) => item,
            None => unreachable!("a live delivery holds its item"),
        }
    }
}

impl<C: Codec> Deref for Delivery<C> {
    type Target = C::Item;

    fn deref(&self) -> &C::Item {
        self.item()
    }
}

impl<C: Codec> Drop for Delivery<C> {
    fn drop(&mut self) {
        // Every delivery ends here once: resolved, retried, or dropped unresolved.
        #[cfg(feature = "metrics")]
        self.engine.metrics.delivery_ended(self.taken.elapsed());
        if self.item.is_some() {
            let (id, panicking) = (self.id, std::thread::panicking());
            self.engine
                .journal
                .note(|| JobEvent::Abandoned { id, panicking });
            self.engine.local().dropped.push(Dropped {
                entry: core::mem::take(&mut self.entry),
                key: core::mem::replace(&mut self.key, EntryKey::Id(0, 0)),
                id,
                attempt: self.attempt,
                lost: core::mem::take(&mut self.lost),
            });
            self.engine.wake.notify(1);
        }
    }
}

impl<C: Codec> fmt::Debug for Delivery<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("id", &self.id)
            .field("attempt", &self.attempt())
            .finish_non_exhaustive()
    }
}

/// A delay in whole milliseconds, rounded up (a nonzero delay never becomes none).
pub(crate) fn millis(delay: Duration) -> u64 {
    let ms = delay.as_millis();
    let up = u128::from(!delay.subsec_nanos().is_multiple_of(1_000_000));
    u64::try_from(ms + up).unwrap_or(u64::MAX)
}
