//! The queue across processes: the face ([`Queue`]) over its engine
//! ([`engine`](crate::queue::engine)), with the types its verbs hand out.

pub(crate) mod delivery;
pub(crate) mod drained;
pub(crate) mod engine;
pub(crate) mod error;
mod get;
pub(crate) mod in_flight;
pub(crate) mod journal;
mod kept;
pub(crate) mod keys;
mod ledger;
#[cfg(feature = "metrics")]
pub(crate) mod metrics;
pub(crate) mod options;
mod put;
pub(crate) mod record;
mod resolve;
mod shutdown;
pub(crate) mod status;
pub(crate) mod worker;

use alloc::string::ToString;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::time::Duration;

use tally_queue::{JobEvent, JobId, Journal, Outcome};

use crate::codec::{Codec, CodecError};
use crate::queue::engine::{Dropped, Engine, How, Resolve, Resolved, RESOLVE_CHUNK};
use crate::queue::error::OpenError;
use crate::queue::options::Options;
use crate::queue::worker::Worker;
use crate::server::error::Error;
use crate::server::names::name_problem;
use tally_queue::AbandonPolicy;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::error::GetError;
#[cfg(doc)]
use crate::queue::record::Record;
#[cfg(doc)]
use tally_queue::Ledger;

/// The acknowledgement-counting work queue, shared by many processes through one Redis
/// stream and consumer group.
///
/// A `Queue` is one process's handle (one consumer in the group, with its own
/// connections); clone it to share it between tasks. Every state change is one script on
/// the server, so the [`Ledger`] is exact at every instant:
///
/// ```text
/// accepted == buffered + in_flight + succeeded + rejected + uncertain + abandoned + discarded
/// ```
///
/// The verbs are [`tally_queue::Queue`]'s, made fallible (the network can fail) and
/// asynchronous. See the crate docs for the guarantees and their limits.
///
/// # Examples
///
/// ```no_run
/// use tally_redis::{Bytes, Options, Queue};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = redis::Client::open("redis+unix:///run/redis/redis.sock")?;
/// let queue = Queue::open(client, "mail", Bytes, Options::new()).await?;
/// let id = queue.put(b"hello".to_vec()).await?;
/// let job = queue.get().await?;
/// assert_eq!(job.id(), id);
/// job.succeed().await?;
/// queue.shutdown().await?;
/// assert!(queue.join().await?.is_balanced());
/// # Ok(()) }
/// ```
pub struct Queue<C: Codec> {
    engine: Arc<Engine<C>>,
}

impl<C: Codec> Clone for Queue<C> {
    fn clone(&self) -> Self {
        Queue {
            engine: Arc::clone(&self.engine),
        }
    }
}

impl<C: Codec> fmt::Debug for Queue<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.engine.name)
            .field("consumer", &self.engine.consumer)
            .finish_non_exhaustive()
    }
}

impl<C: Codec> Queue<C> {
    /// Opens the queue `name` on the server behind `client`, creating it if it does not
    /// exist. Capacity, lease and redelivery policy are fixed at creation; opening an
    /// existing queue with other values is refused.
    ///
    /// # Errors
    ///
    /// [`OpenError::BadName`] for a name outside `[A-Za-z0-9_.:-]{1,100}`,
    /// [`OpenError::BadOption`] for an option out of range, [`OpenError::Mismatch`], or
    /// the transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tally_redis::{AbandonPolicy, Json, Options, Queue};
    /// use core::time::Duration;
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379")?;
    /// let options = Options::new()
    ///     .bounded(1000)
    ///     .lease(Duration::from_secs(10))
    ///     .abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    /// let queue = Queue::open(client, "thumbnails", Json::<String>::new(), options).await?;
    /// # drop(queue); Ok(()) }
    /// ```
    pub async fn open(
        client: redis::Client,
        name: &str,
        codec: C,
        options: Options,
    ) -> Result<Self, OpenError> {
        if let Some(why) = name_problem(name) {
            return Err(OpenError::BadName {
                name: name.to_string(),
                why,
            });
        }
        let stored = options.check()?;
        let backoff = options.stored_backoff()?;
        let engine = Engine::new(client, name, codec, options);
        engine.open(stored, &backoff).await?;
        Ok(Queue {
            engine: Arc::new(engine),
        })
    }

    /// Installs `journal`, the in-process queue's observer ([`tally_queue::Journal`]), on
    /// this handle and its clones: from now on it sees, with their [`JobId`]s, the
    /// [`JobEvent`]s of what this handle does, so one observer (a
    /// [`tally_queue::Record`], say) answers "which ids ended how, which are in flight"
    /// here as in process. Install it right after [`open`](Queue::open).
    ///
    /// What it sees, in the order this handle saw it: `Accepted` once the server accepted a
    /// put (so another process's delivery of the job can come first); `Delivered` with its
    /// attempt; `Ended` once a resolve counted (not for `Stale`); `Retried` or
    /// `RetryRefused`; `Abandoned` when a delivery is dropped unresolved, then, under
    /// [`AbandonPolicy::Uncertain`], `Ended` with `Uncertain` once the maintenance future
    /// ended it; `Discarded` for each item [`shutdown_now`](Queue::shutdown_now) returns.
    /// A job's fate decided elsewhere is not seen: its redelivery or dead letter after an
    /// expired lease is decided by whichever process reclaims it (that one records the new
    /// `Delivered`), and a job another handle resolves is that handle's event. A journal
    /// per process is a per-process view; the ledger and the records on the server are
    /// the whole.
    ///
    /// A panicking journal is caught and counted ([`journal_panics`](Queue::journal_panics)).
    ///
    /// # Panics
    ///
    /// If this handle (or a clone) already has a journal.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use tally_queue::Record;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let record = Arc::new(Record::new());
    /// let queue = queue.with_journal(Arc::clone(&record));
    /// let id = queue.put(b"job".to_vec()).await.unwrap();
    /// queue.get().await.unwrap().uncertain().await.unwrap();
    /// assert_eq!(record.uncertain(), [id]);
    /// # }
    /// ```
    #[must_use = "returns the queue with its journal"]
    pub fn with_journal(self, journal: impl Journal + 'static) -> Self {
        assert!(
            self.engine.journal.install(alloc::boxed::Box::new(journal)),
            "a journal was already installed on this queue handle"
        );
        self
    }

    /// How many times the journal panicked (each time the operation went on, and that
    /// event was lost to the journal). 0 without a journal.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert_eq!(queue.journal_panics(), 0);
    /// # }
    /// ```
    pub fn journal_panics(&self) -> usize {
        self.engine.journal.panics()
    }

    /// The ids in flight as this handle's journal keeps them
    /// ([`Journal::in_flight_ids`]); `None` without a journal or with one that keeps no
    /// ids. Only this handle's deliveries: [`ledger`](Queue::ledger) counts every process's.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert_eq!(queue.in_flight_ids(), None); // no journal installed
    /// # }
    /// ```
    pub fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        self.engine.journal.in_flight_ids()
    }

    /// The queue's name.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert_eq!(queue.name(), "mail");
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.engine.name
    }

    /// This handle's consumer name in the group (unique per handle).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert!(!queue.consumer().is_empty());
    /// # }
    /// ```
    pub fn consumer(&self) -> &str {
        &self.engine.consumer
    }

    /// The options this handle was opened with.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert_eq!(queue.options().get_capacity(), None);
    /// # }
    /// ```
    pub fn options(&self) -> &Options {
        &self.engine.options
    }

    /// Decodes an item's bytes (from a [`Record`]) with this queue's codec.
    ///
    /// # Errors
    ///
    /// The codec's error.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert_eq!(queue.decode(b"x").unwrap(), b"x");
    /// # }
    /// ```
    pub fn decode(&self, bytes: &[u8]) -> Result<C::Item, CodecError> {
        self.engine.codec.decode(bytes)
    }

    /// Registers a worker (see [`Worker`]); run [`maintain`](Queue::maintain) to keep its
    /// heartbeat fresh.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let _worker = queue.worker().await.unwrap();
    /// # }
    /// ```
    pub async fn worker(&self) -> Result<Worker<C>, Error> {
        let member = self.engine.worker_member();
        self.engine
            .workers(true, core::slice::from_ref(&member))
            .await?;
        self.engine.local().workers.push(member.clone());
        Ok(Worker {
            engine: Arc::clone(&self.engine),
            member,
        })
    }

    /// One pass of background work: removes dropped workers, refreshes the heartbeats of
    /// live ones, ends the deliveries dropped unresolved (by the [`AbandonPolicy`]),
    /// sweeps expired leases that will not be delivered again (policy `Abandon` or
    /// `Uncertain`, last attempt, or after `shutdown_now`), and removes from the group the
    /// consumers (one per handle) that hold nothing and were idle for two leases. Work that failed is kept
    /// for the next pass.
    ///
    /// # Errors
    ///
    /// The first transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.maintain_once().await.unwrap();
    /// # }
    /// ```
    pub async fn maintain_once(&self) -> Result<(), Error> {
        let engine = &self.engine;
        let (retired, live, dropped) = {
            let mut local = engine.local();
            (
                core::mem::take(&mut local.retired),
                local.workers.clone(),
                core::mem::take(&mut local.dropped),
            )
        };
        let mut first_error = None;
        if let Err(error) = engine.workers(false, &retired).await {
            engine.local().retired.extend(retired);
            first_error.get_or_insert(error);
        }
        if let Err(error) = engine.workers(true, &live).await {
            first_error.get_or_insert(error);
        }
        if let Err(error) = self.end_dropped(dropped).await {
            first_error.get_or_insert(error);
        }
        if let Err(error) = engine.sweep().await {
            first_error.get_or_insert(error);
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Ends the deliveries dropped unresolved, by the policy: under `Abandon` and
    /// `Uncertain` in scripts of up to a chunk each; under `Redeliver` each is released
    /// for the next reclaim. What failed is kept for the next pass.
    async fn end_dropped(&self, dropped: Vec<Dropped>) -> Result<(), Error> {
        let engine = &self.engine;
        let (how, reason) = match engine.options.abandon_policy {
            AbandonPolicy::Abandon => (How::Abandoned, "abandoned: dropped unresolved"),
            AbandonPolicy::Uncertain => (
                How::Uncertain,
                "abandoned: dropped unresolved, ended uncertain",
            ),
            AbandonPolicy::Redeliver { .. } => {
                let mut dropped = dropped.into_iter();
                while let Some(lost) = dropped.next() {
                    if let Err(error) = engine.hold(&lost.entry, lost.attempt, false).await {
                        let mut local = engine.local();
                        local.dropped.push(lost);
                        local.dropped.extend(dropped);
                        return Err(error);
                    }
                    engine.local().held.remove(&lost.entry);
                }
                return Ok(());
            }
        };
        let mut dropped = dropped;
        while !dropped.is_empty() {
            let rest = dropped.split_off(dropped.len().min(RESOLVE_CHUNK));
            let resolves: Vec<Resolve<'_>> = dropped
                .iter()
                .map(|lost| Resolve {
                    entry: &lost.entry,
                    attempt: lost.attempt,
                    how,
                    reason,
                    lost: &lost.lost,
                })
                .collect();
            match engine.step(&resolves, 0).await {
                Ok((resolved, _, _)) => {
                    for (lost, resolved) in dropped.iter().zip(resolved) {
                        let counted = matches!(resolved, Resolved::Counted | Resolved::Repeat(_));
                        if counted && how == How::Uncertain {
                            let id = lost.id;
                            engine.journal.note(|| JobEvent::Ended {
                                id,
                                outcome: Outcome::Uncertain,
                            });
                        }
                    }
                }
                Err((error, token)) => {
                    let mut local = engine.local();
                    for lost in &mut dropped {
                        if error.is_unknown() {
                            lost.lost.push(token);
                        }
                    }
                    local.dropped.extend(dropped);
                    local.dropped.extend(rest);
                    return Err(error);
                }
            }
            dropped = rest;
        }
        Ok(())
    }

    /// The background work, forever: [`maintain_once`](Queue::maintain_once) every third
    /// of a lease, and at once when a delivery or worker is dropped. It always sleeps
    /// between passes (at least a millisecond), and after a failed pass (the server down,
    /// the keys gone) it backs off, from a tenth of that period up to the period, so it
    /// neither hogs its executor nor floods the server. The crate spawns nothing: run this
    /// future on the runtime of your choice, with its sleep (`sleep(d)` must complete
    /// after `d`).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let background = queue.clone();
    /// smol::spawn(async move {
    ///     background.maintain(|d| async_io::Timer::after(d)).await
    /// })
    /// .detach();
    /// # }
    /// ```
    pub async fn maintain<F, S>(&self, sleep: F) -> Infallible
    where
        F: FnMut(Duration) -> S,
        S: Future,
    {
        let engine = &self.engine;
        crate::server::maintenance::every_third_of_a_lease(
            engine.options.lease,
            &engine.wake,
            || {
                let local = engine.local();
                !local.dropped.is_empty() || !local.retired.is_empty()
            },
            || async { self.maintain_once().await.is_ok() },
            sleep,
        )
        .await
    }
}
