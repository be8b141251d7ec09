//! The queue across processes: the face ([`Queue`]) over its engine
//! ([`engine`](crate::queue::engine)), with the types its verbs hand out. This file holds
//! the handle itself (open, journal, names, options); its verbs live one concept per file
//! (`put`, `get`, `resolve`, `ledger`, `shutdown`, `kept`, `maintain`), each calling down
//! into the engine only.

pub(crate) mod delivery;
pub(crate) mod drained;
pub(crate) mod engine;
mod entry_id;
pub(crate) mod error;
mod get;
pub(crate) mod in_flight;
pub(crate) mod journal;
mod kept;
pub(crate) mod keys;
mod ledger;
mod maintain;
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
use core::fmt;

use tally_queue::{JobId, Journal};

use crate::codec::{Codec, CodecError};
use crate::queue::engine::Engine;
use crate::queue::error::OpenError;
use crate::queue::options::Options;
use crate::server::names::name_problem;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::error::GetError;
#[cfg(doc)]
use crate::queue::record::Record;
#[cfg(doc)]
use tally_queue::AbandonPolicy;
#[cfg(doc)]
use tally_queue::JobEvent;
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
}
