//! The queue across processes: the face ([`Queue`]) over its engine
//! ([`engine`](crate::queue::engine)), with the types its verbs hand out.

pub(crate) mod delivery;
pub(crate) mod drained;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod journal;
pub(crate) mod keys;
pub(crate) mod options;
pub(crate) mod record;
pub(crate) mod status;
pub(crate) mod worker;

use alloc::string::ToString;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::pin::pin;
use core::time::Duration;

use futures_lite::future;
use tally_queue::{JobEvent, JobId, Journal, Ledger};

use crate::codec::{Codec, CodecError};
use crate::queue::delivery::Delivery;
use crate::queue::drained::Drained;
use crate::queue::drained::ShutdownNowError;
use crate::queue::engine::{Engine, Found, How, Resolved};
use crate::queue::error::{GetError, JoinError, OpenError, PutError, TryGetError};
use crate::queue::options::Options;
use crate::queue::record::{Record, Records};
use crate::queue::status::Status;
use crate::queue::worker::Worker;
use crate::server::error::Error;
use crate::server::names::name_problem;
use tally_queue::AbandonPolicy;

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
    inner: Arc<Engine<C>>,
}

impl<C: Codec> Clone for Queue<C> {
    fn clone(&self) -> Self {
        Queue {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<C: Codec> fmt::Debug for Queue<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("name", &self.inner.name)
            .field("consumer", &self.inner.consumer)
            .finish_non_exhaustive()
    }
}

/// Sets the orphan flag if a get is cancelled (or its reply lost) after its command may
/// have handed an entry to this consumer.
struct OrphanGuard<'a, C: Codec> {
    inner: &'a Engine<C>,
    armed: bool,
}

impl<'a, C: Codec> OrphanGuard<'a, C> {
    fn new(inner: &'a Engine<C>) -> Self {
        OrphanGuard { inner, armed: true }
    }

    fn settle<T>(mut self, result: &Result<T, Error>) {
        self.armed = matches!(result, Err(error) if error.is_unknown());
    }
}

impl<C: Codec> Drop for OrphanGuard<'_, C> {
    fn drop(&mut self) {
        if self.armed {
            self.inner.local().orphans = true;
        }
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
        let inner = Engine::new(client, name, codec, options);
        inner.open(stored).await?;
        Ok(Queue {
            inner: Arc::new(inner),
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
            self.inner.journal.install(alloc::boxed::Box::new(journal)),
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
        self.inner.journal.panics()
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
        self.inner.journal.in_flight_ids()
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
        &self.inner.name
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
        &self.inner.consumer
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
        &self.inner.options
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
        self.inner.codec.decode(bytes)
    }

    /// Accepts `item` now or refuses it, never waiting for room.
    ///
    /// # Errors
    ///
    /// The item comes back inside every [`PutError`]. [`PutError::Unknown`] means the
    /// reply was lost and the item may have been accepted: a blind repeat may run the job
    /// twice. [`put_keyed`](Queue::put_keyed) makes repeats safe.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// match queue.try_put(b"job".to_vec()).await {
    ///     Ok(id) => println!("accepted as {id}"),
    ///     Err(error) => {
    ///         println!("{error}");
    ///         let _item_back: Vec<u8> = error.into_inner();
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn try_put(&self, item: C::Item) -> Result<JobId, PutError<C::Item>> {
        self.inner.put_once(item, None).await
    }

    /// Accepts `item`, waiting while the queue is full.
    ///
    /// A full queue is re-tried after each ending on the server and at least once per
    /// [poll interval](Options::poll) (deliveries free room without a wake-up).
    ///
    /// # Errors
    ///
    /// As [`try_put`](Queue::try_put), without [`PutError::Full`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let id = queue.put(b"job".to_vec()).await.unwrap();
    /// # drop(id); }
    /// ```
    pub async fn put(&self, item: C::Item) -> Result<JobId, PutError<C::Item>> {
        self.put_inner(item, None, future::pending::<()>()).await
    }

    /// As [`put`](Queue::put), giving up at `deadline` (any future: a runtime's sleep)
    /// with [`PutError::TimedOut`] and the item back.
    ///
    /// The deadline is checked between attempts, never during one, so the item is never
    /// lost to a deadline: once it fires, the put is tried once more.
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put), and [`PutError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let deadline = async_io::Timer::after(std::time::Duration::from_secs(1));
    /// match queue.put_until(b"job".to_vec(), deadline).await {
    ///     Err(error) if matches!(error, tally_redis::PutError::TimedOut(_)) => {}
    ///     other => drop(other),
    /// }
    /// # }
    /// ```
    pub async fn put_until<D: Future>(
        &self,
        item: C::Item,
        deadline: D,
    ) -> Result<JobId, PutError<C::Item>> {
        self.put_inner(item, None, deadline).await
    }

    /// As [`put`](Queue::put), with an idempotency key: the first put with a key is
    /// accepted, and every later put with the same key (within the
    /// [repeat window](Options::repeat_window)) returns the same id without adding
    /// anything. A lost reply or a failed connection is tried again here (three tries in
    /// all), so the answer is exact unless the server stays unreachable; then the error
    /// comes back with the item, and a later call with the same key is still safe.
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let first = queue.put_keyed("order-17", b"ship".to_vec()).await.unwrap();
    /// let again = queue.put_keyed("order-17", b"ship".to_vec()).await.unwrap();
    /// assert_eq!(first, again);
    /// # }
    /// ```
    pub async fn put_keyed(&self, key: &str, item: C::Item) -> Result<JobId, PutError<C::Item>> {
        self.put_inner(item, Some(key), future::pending::<()>())
            .await
    }

    async fn put_inner<D: Future>(
        &self,
        mut item: C::Item,
        key: Option<&str>,
        deadline: D,
    ) -> Result<JobId, PutError<C::Item>> {
        let mut deadline = pin!(deadline);
        let mut expired = false;
        let mut lost = 0;
        loop {
            match self.inner.put_once(item, key).await {
                Err(PutError::Full(back)) => item = back,
                // With a key, a repeat is safe: try again after a lost reply or a failed
                // connection, and keep saying "unknown" if the last try is lost too.
                Err(PutError::Unknown { item: back, error })
                | Err(PutError::Failed {
                    item: back,
                    error: error @ Error::Unavailable(_),
                }) if key.is_some() => {
                    lost += 1;
                    if lost >= 3 {
                        return Err(PutError::from_redis(back, error));
                    }
                    item = back;
                    continue;
                }
                other => return other,
            }
            if expired {
                return Err(PutError::TimedOut(item));
            }
            let wait = async {
                self.inner.wait_for_wake("$").await.ok();
                false
            };
            let fired = async {
                deadline.as_mut().await;
                true
            };
            expired = future::or(fired, wait).await;
        }
    }

    /// Hands out the next job if one is ready, without blocking on the server: first an
    /// expired lease to reclaim (by the [`AbandonPolicy`]), then a new entry.
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`], [`TryGetError::ShutDown`] (shut down and nothing left to
    /// deliver; while draining, that includes nothing in flight that could come back), or
    /// the transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// if let Ok(job) = queue.try_get().await {
    ///     job.succeed().await.unwrap();
    /// }
    /// # }
    /// ```
    pub async fn try_get(&self) -> Result<Delivery<C>, TryGetError> {
        let _getting = self.inner.getting.lock().await;
        let guard = OrphanGuard::new(&self.inner);
        let found = self.inner.get_step().await;
        guard.settle(&found);
        match found {
            Ok(Found::Item {
                entry,
                id,
                attempt,
                item,
            }) => Ok(self.delivery(entry, id, attempt, item)),
            Ok(Found::Empty) => Err(TryGetError::Empty),
            Ok(Found::ShutDown) => Err(TryGetError::ShutDown),
            Err(error) => Err(TryGetError::Redis(error)),
        }
    }

    /// Waits for the next job.
    ///
    /// Blocks on the server (`XREADGROUP … BLOCK`, on a dedicated connection) for up to one
    /// [poll interval](Options::poll) at a time, re-reading the state and reclaiming
    /// expired leases between blocks. An entry the codec cannot decode is dead-lettered
    /// with its bytes (counted abandoned) and skipped.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future never loses a job. If the server had already handed an entry to
    /// this consumer, the next get on this handle delivers it (same attempt); if no get
    /// comes before its lease expires, it is reclaimed as a lost delivery.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`], or the transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// while let Ok(job) = queue.get().await {
    ///     job.succeed().await.unwrap();
    /// }
    /// # }
    /// ```
    pub async fn get(&self) -> Result<Delivery<C>, GetError> {
        let _getting = self.inner.getting.lock().await;
        loop {
            let guard = OrphanGuard::new(&self.inner);
            let found = self.inner.get_step().await;
            guard.settle(&found);
            match found.map_err(GetError::Redis)? {
                Found::Item {
                    entry,
                    id,
                    attempt,
                    item,
                } => return Ok(self.delivery(entry, id, attempt, item)),
                Found::ShutDown => return Err(GetError::ShutDown),
                Found::Empty => {}
            }
            let guard = OrphanGuard::new(&self.inner);
            let found = self.inner.get_blocking_step().await;
            guard.settle(&found);
            if let Found::Item {
                entry,
                id,
                attempt,
                item,
            } = found.map_err(GetError::Redis)?
            {
                return Ok(self.delivery(entry, id, attempt, item));
            }
        }
    }

    /// As [`get`](Queue::get), giving up at `deadline` with [`GetError::TimedOut`]. When
    /// the deadline fires, one more non-blocking get is tried.
    ///
    /// # Errors
    ///
    /// As [`get`](Queue::get), and [`GetError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let deadline = async_io::Timer::after(std::time::Duration::from_millis(100));
    /// match queue.get_until(deadline).await {
    ///     Ok(job) => drop(job.succeed().await),
    ///     Err(tally_redis::GetError::TimedOut) => {}
    ///     Err(other) => panic!("{other}"),
    /// }
    /// # }
    /// ```
    pub async fn get_until<D: Future>(&self, deadline: D) -> Result<Delivery<C>, GetError> {
        let got = future::or(async { Some(self.get().await) }, async {
            deadline.await;
            None
        })
        .await;
        match got {
            Some(result) => result,
            None => match self.try_get().await {
                Ok(delivery) => Ok(delivery),
                Err(TryGetError::Empty) => Err(GetError::TimedOut),
                Err(TryGetError::ShutDown) => Err(GetError::ShutDown),
                Err(TryGetError::Redis(error)) => Err(GetError::Redis(error)),
            },
        }
    }

    fn delivery(
        &self,
        entry: alloc::string::String,
        id: JobId,
        attempt: u64,
        item: C::Item,
    ) -> Delivery<C> {
        self.inner.journal.note(|| JobEvent::Delivered {
            id,
            attempt: u32::try_from(attempt).unwrap_or(u32::MAX),
        });
        Delivery {
            inner: Arc::clone(&self.inner),
            entry,
            id,
            attempt,
            item: Some(item),
        }
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
        let member = self.inner.worker_member();
        self.inner
            .workers(true, core::slice::from_ref(&member))
            .await?;
        self.inner.local().workers.push(member.clone());
        Ok(Worker {
            inner: Arc::clone(&self.inner),
            member,
        })
    }

    /// One atomic snapshot of the ledger.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert!(queue.ledger().await.unwrap().is_balanced());
    /// # }
    /// ```
    pub async fn ledger(&self) -> Result<Ledger, Error> {
        Ok(self.inner.status().await?.0.ledger)
    }

    /// One atomic snapshot of the ledger, the state and the counters outside the ledger.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let status = queue.status().await.unwrap();
    /// println!("{} ({}), {} redelivered", status.ledger, status.state, status.redelivered);
    /// # }
    /// ```
    pub async fn status(&self) -> Result<Status, Error> {
        Ok(self.inner.status().await?.0)
    }

    /// Waits until every accepted job has ended and returns the ledger. Level-triggered:
    /// it re-reads the ledger after each wake-up on the server and at least once per
    /// [poll interval](Options::poll).
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.shutdown().await.unwrap();
    /// let ledger = queue.join().await.unwrap();
    /// assert_eq!(ledger.unfinished(), 0);
    /// # }
    /// ```
    pub async fn join(&self) -> Result<Ledger, Error> {
        loop {
            let (status, last) = self.inner.status().await?;
            if status.ledger.unfinished() == 0 {
                return Ok(status.ledger);
            }
            self.inner.wait_for_wake(&last).await?;
        }
    }

    /// As [`join`](Queue::join), giving up at `deadline` with the ledger as it then
    /// stands (read once more after the deadline fired).
    ///
    /// # Errors
    ///
    /// [`JoinError::TimedOut`], or the transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let deadline = async_io::Timer::after(std::time::Duration::from_secs(5));
    /// if let Err(tally_redis::JoinError::TimedOut(ledger)) = queue.join_until(deadline).await {
    ///     println!("still unfinished: {}", ledger.unfinished());
    /// }
    /// # }
    /// ```
    pub async fn join_until<D: Future>(&self, deadline: D) -> Result<Ledger, JoinError> {
        let joined = future::or(async { Some(self.join().await) }, async {
            deadline.await;
            None
        })
        .await;
        match joined {
            Some(result) => result.map_err(JoinError::Redis),
            None => {
                let ledger = self.ledger().await.map_err(JoinError::Redis)?;
                if ledger.unfinished() == 0 {
                    Ok(ledger)
                } else {
                    Err(JoinError::TimedOut(ledger))
                }
            }
        }
    }

    /// Shuts down gracefully: no new puts; the buffer is still delivered, and so is
    /// anything in flight that comes back (a lease that expires, a drop under
    /// [`AbandonPolicy::Redeliver`]). Getters get [`GetError::ShutDown`] once nothing is
    /// buffered or in flight. Whether this call changed the state.
    ///
    /// # Errors
    ///
    /// The transport failure ([`Error::is_unknown`]: it may have happened; calling again is
    /// harmless).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert!(queue.shutdown().await.unwrap());
    /// assert!(!queue.shutdown().await.unwrap());
    /// # }
    /// ```
    pub async fn shutdown(&self) -> Result<bool, Error> {
        self.inner.shutdown().await
    }

    /// Shuts down immediately and returns every undelivered item with its id, each counted
    /// discarded. Each item is either delivered (before) or returned here, never both.
    /// Deliveries in flight are untouched and must still be resolved; one whose lease
    /// expires from now on is discarded and kept as a dead letter.
    ///
    /// Items move out in chunks through a list of this handle's own: if a reply is lost,
    /// the error returns what was received, and the next `shutdown_now` on this handle
    /// returns the rest.
    ///
    /// # Errors
    ///
    /// [`ShutdownNowError`], with the items drained so far.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// for (id, item) in queue.shutdown_now().await.unwrap() {
    ///     println!("{id} was never delivered: {:?}", item.ok());
    /// }
    /// # }
    /// ```
    pub async fn shutdown_now(
        &self,
    ) -> Result<Vec<(JobId, Drained<C::Item>)>, ShutdownNowError<C::Item>> {
        let mut drained = Vec::new();
        loop {
            match self.inner.drain_step().await {
                Ok(chunk) if chunk.is_empty() => return Ok(drained),
                Ok(chunk) => {
                    for (id, _) in &chunk {
                        let id = *id;
                        self.inner.journal.note(|| JobEvent::Discarded(id));
                    }
                    drained.extend(chunk);
                }
                Err(error) => return Err(ShutdownNowError { drained, error }),
            }
        }
    }

    /// Records from the list of uncertain outcomes, oldest first, after the record with key
    /// `after` (`None`: from the start), at most `count`.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// for record in queue.uncertain(None, 100).await.unwrap() {
    ///     println!("reconcile {record}");
    ///     queue.remove_record(tally_redis::Records::Uncertain, &record.key).await.unwrap();
    /// }
    /// # }
    /// ```
    pub async fn uncertain(&self, after: Option<&str>, count: usize) -> Result<Vec<Record>, Error> {
        self.inner.records(Records::Uncertain, after, count).await
    }

    /// Records from the dead-letter list (see [`AbandonPolicy`]), oldest first, as
    /// [`uncertain`](Queue::uncertain).
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// for record in queue.dead_letters(None, 100).await.unwrap() {
    ///     println!("{record}: {:?}", queue.decode(&record.bytes));
    /// }
    /// # }
    /// ```
    pub async fn dead_letters(
        &self,
        after: Option<&str>,
        count: usize,
    ) -> Result<Vec<Record>, Error> {
        self.inner.records(Records::Dead, after, count).await
    }

    /// Removes one record (reconciled). Whether it was there.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// assert!(!queue.remove_record(tally_redis::Records::Dead, "0-1").await.unwrap());
    /// # }
    /// ```
    pub async fn remove_record(&self, which: Records, key: &str) -> Result<bool, Error> {
        self.inner.remove_record(which, key).await
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
        let inner = &self.inner;
        let (retired, live, dropped) = {
            let mut local = inner.local();
            (
                core::mem::take(&mut local.retired),
                local.workers.clone(),
                core::mem::take(&mut local.dropped),
            )
        };
        let mut first_error = None;
        if let Err(error) = inner.workers(false, &retired).await {
            inner.local().retired.extend(retired);
            first_error.get_or_insert(error);
        }
        if let Err(error) = inner.workers(true, &live).await {
            first_error.get_or_insert(error);
        }
        let mut dropped = dropped.into_iter();
        for lost in dropped.by_ref() {
            let ended = match inner.options.abandon_policy {
                AbandonPolicy::Abandon => inner
                    .resolve(
                        &lost.entry,
                        lost.attempt,
                        How::Abandoned,
                        "abandoned: dropped unresolved",
                    )
                    .await
                    .map(drop),
                AbandonPolicy::Uncertain => inner
                    .resolve(
                        &lost.entry,
                        lost.attempt,
                        How::Uncertain,
                        "abandoned: dropped unresolved, ended uncertain",
                    )
                    .await
                    .map(|resolved| {
                        if let Resolved::Counted | Resolved::Repeat(_) = resolved {
                            let id = lost.id;
                            inner.journal.note(|| JobEvent::Ended {
                                id,
                                outcome: tally_queue::Outcome::Uncertain,
                            });
                        }
                    }),
                AbandonPolicy::Redeliver { .. } => {
                    inner.hold(&lost.entry, lost.attempt, false).await.map(drop)
                }
            };
            match ended {
                Ok(()) => {
                    inner.local().held.remove(&lost.entry);
                }
                Err(error) => {
                    let mut local = inner.local();
                    local.dropped.push(lost);
                    local.dropped.extend(dropped);
                    first_error.get_or_insert(error);
                    break;
                }
            }
        }
        if let Err(error) = inner.sweep().await {
            first_error.get_or_insert(error);
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The background work, forever: [`maintain_once`](Queue::maintain_once) every third
    /// of a lease, and at once when a delivery or worker is dropped. Transport failures
    /// are retried on the next pass. The crate spawns nothing: run this future on the
    /// runtime of your choice, with its sleep (`sleep(d)` must complete after `d`).
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
        let inner = &self.inner;
        crate::server::maintenance::every_third_of_a_lease(
            inner.options.lease,
            &inner.wake,
            || {
                let local = inner.local();
                !local.dropped.is_empty() || !local.retired.is_empty()
            },
            || async {
                self.maintain_once().await.ok();
            },
            sleep,
        )
        .await
    }
}
