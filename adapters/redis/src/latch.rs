//! The tracking latch across processes: the face ([`TrackingLatch`]) over its engine
//! ([`engine`](crate::latch::engine)), with the types its verbs hand out.

pub(crate) mod counter;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod event;
mod keys;
pub(crate) mod options;
pub(crate) mod reason;
pub(crate) mod snapshot;

use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::fmt;
use core::future::Future;
use core::time::Duration;

use futures_lite::future;
use tally_latch::{NameError, StillPending};

use crate::latch::counter::Counter;
use crate::latch::engine::{holder_id, Claimed, LatchEngine, Outcome};
use crate::latch::error::{ClaimError, CreateError, LatchWaitError};
use crate::latch::event::LatchEvent;
use crate::latch::options::LatchOptions;
use crate::latch::snapshot::{LatchState, Snapshot};
use crate::server::error::Error;
use crate::server::names::name_problem;

/// [`tally_latch::TrackingLatch`] across processes: a latch of named counters on one Redis
/// server, that any process can claim counters of, report to, and wait on.
///
/// Readiness gating across replicas: "a migration ran once", "N shard loaders on N
/// machines reported", "N consumers registered". Each counter is claimed by one process
/// on a lease ([`claim`](TrackingLatch::claim) → [`Counter`]), counts once when it
/// reports, and the last report opens the latch. What is new across processes:
///
/// - **A killed holder is noticed.** A process killed before it reports runs no `Drop`;
///   its lease expires and the next sweep (run by every waiter and every maintenance
///   future) fails the latch naming the counter, with
///   [`Reason::LeaseExpired`](crate::Reason::LeaseExpired), or by
///   [`OnExpiry::Reclaim`](crate::OnExpiry::Reclaim) makes it claimable again.
/// - **Every state change is one script**, so the count, each counter's state and the
///   first failure move together: a report counts exactly once, also when it is repeated
///   after a lost reply.
/// - **Wake-ups are latency, not truth.** A wait re-reads the state after every wake-up
///   on the event stream and at least once per [poll interval](LatchOptions::poll).
///
/// Failures, timeouts and name errors are tally-latch's types, with its wording
/// ([`Failure`](tally_latch::Failure), [`StillPending`], [`NameError`]). Unlike
/// `Redisson`'s `RCountDownLatch`, counters have names, a latch can fail, and a dead
/// holder is detected.
///
/// # Keys
///
/// A latch named `boot` uses `{latch:boot}:spec` (a hash: the latch's state, each
/// counter's state, holder and time, and the first failure), `{latch:boot}:lease:<name>`
/// (one key per claimed counter, with a PX TTL, renewed by the maintenance future) and
/// `{latch:boot}:events` (a stream of created, claimed, reported, released, failed and
/// opened). All share one hash tag, so one cluster slot.
///
/// # Examples
///
/// ```no_run
/// use tally_redis::{LatchOptions, TrackingLatch};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let client = redis::Client::open("redis+unix:///run/redis/redis.sock")?;
/// let latch = TrackingLatch::open(client, "boot", ["migration", "cache"], LatchOptions::new()).await?;
/// let background = latch.clone();
/// smol::spawn(async move { background.maintain(async_io::Timer::after).await }).detach();
///
/// let migration = latch.claim("migration").await?;
/// // ... migrate ...
/// migration.report().await?;
///
/// // In any process:
/// let deadline = async_io::Timer::after(std::time::Duration::from_secs(30));
/// latch.wait_until(deadline).await?; // or "timed out waiting for: cache"
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct TrackingLatch {
    engine: Arc<LatchEngine>,
}

impl fmt::Debug for TrackingLatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackingLatch")
            .field("name", &self.engine.name)
            .field("names", &self.engine.names)
            .finish_non_exhaustive()
    }
}

impl TrackingLatch {
    /// Opens the latch `name` with these counter names, creating it if it does not exist.
    /// Creating is idempotent: opening again with the same set of names (in any order)
    /// and the same lease and policy is fine. An empty list makes a latch that starts
    /// open.
    ///
    /// # Errors
    ///
    /// [`CreateError::BadName`] for a latch or counter name outside
    /// `[A-Za-z0-9_.:-]{1,100}`, [`CreateError::Name`] with [`NameError::Duplicate`],
    /// [`CreateError::BadOption`], [`CreateError::NamesDiffer`] if the latch exists with
    /// another set of names, [`CreateError::Mismatch`] for another lease or policy, or the
    /// transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tally_redis::{LatchOptions, OnExpiry, TrackingLatch};
    /// use core::time::Duration;
    ///
    /// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = redis::Client::open("redis://127.0.0.1:6379")?;
    /// let options = LatchOptions::new().lease(Duration::from_secs(5)).on_expiry(OnExpiry::Reclaim);
    /// let shards = (0..8).map(|n| format!("shard-{n}"));
    /// let latch = TrackingLatch::open(client, "shards-loaded", shards, options).await?;
    /// # drop(latch); Ok(()) }
    /// ```
    pub async fn open<I>(
        client: redis::Client,
        name: &str,
        names: I,
        options: LatchOptions,
    ) -> Result<TrackingLatch, CreateError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        if let Some(why) = name_problem(name) {
            return Err(CreateError::BadName {
                name: name.to_string(),
                why,
            });
        }
        let names: Vec<String> = names
            .into_iter()
            .map(|name| name.as_ref().to_string())
            .collect();
        for counter in &names {
            if let Some(why) = name_problem(counter) {
                return Err(CreateError::BadName {
                    name: counter.clone(),
                    why,
                });
            }
        }
        let mut sorted: Vec<&String> = names.iter().collect();
        sorted.sort_unstable();
        if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(CreateError::Name(NameError::Duplicate(pair[0].clone())));
        }
        options.check()?;
        let engine = LatchEngine::new(client, name, names, options);
        let mut reply = engine.create().await?;
        match reply.status.as_str() {
            "created" | "ok" => {}
            "names" => {
                let stored = reply.text()?;
                return Err(CreateError::NamesDiffer {
                    stored: stored
                        .split(',')
                        .filter(|n| !n.is_empty())
                        .map(ToString::to_string)
                        .collect(),
                    given: engine.names.clone(),
                });
            }
            "mismatch" => {
                let field = reply.text()?;
                let stored = reply.text()?;
                let given = match field.as_str() {
                    "lease_ms" => engine.lease_ms().to_string(),
                    "policy" => options.on_expiry.word().to_string(),
                    _ => "1".to_string(),
                };
                return Err(CreateError::Mismatch {
                    field,
                    stored,
                    given,
                });
            }
            _ => return Err(reply.unexpected().into()),
        }
        Ok(TrackingLatch {
            engine: Arc::new(engine),
        })
    }

    /// The latch's name.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(latch: tally_redis::TrackingLatch) {
    /// assert_eq!(latch.name(), "boot");
    /// # }
    /// ```
    pub fn name(&self) -> &str {
        &self.engine.name
    }

    /// The counter names, in the order this handle was opened with.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(latch: tally_redis::TrackingLatch) {
    /// assert_eq!(latch.names(), ["migration", "cache"]);
    /// # }
    /// ```
    pub fn names(&self) -> &[String] {
        &self.engine.names
    }

    /// The options this handle was opened with.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # fn demo(latch: tally_redis::TrackingLatch) {
    /// println!("lease {:?}", latch.options().get_lease());
    /// # }
    /// ```
    pub fn options(&self) -> &LatchOptions {
        &self.engine.options
    }

    /// Claims the counter `name` for this process, on a lease that
    /// [`maintain`](TrackingLatch::maintain) renews. Sweeps expired leases first. A lost
    /// reply or a failed connection is tried again (three tries in all, recognized as a
    /// repeat on the server), so the answer is exact unless the server stays unreachable.
    /// Then the claim may still land later: the next `claim` of the same name on this
    /// handle recognizes it as its own, and otherwise the maintenance pass gives it up
    /// (so it cannot hold the counter until its lease fails the latch).
    ///
    /// # Errors
    ///
    /// [`ClaimError::Name`] with [`NameError::Unknown`], [`NameError::Claimed`] (a live
    /// lease holds it, here or in another process) or [`NameError::Reported`];
    /// [`ClaimError::Failed`] if the latch failed; or the transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let counter = latch.claim("cache").await.unwrap();
    /// assert!(latch.claim("cache").await.is_err());
    /// counter.report().await.unwrap();
    /// # }
    /// ```
    pub async fn claim(&self, name: &str) -> Result<Counter, ClaimError> {
        // A claim of this name on this handle whose reply was lost is made again under
        // its holder id: if it landed late, the server recognizes it as the same claim.
        let holder = {
            let mut local = self.engine.local();
            match local.unknown.iter().position(|(n, _)| n == name) {
                Some(at) => local.unknown.remove(at).1,
                None => holder_id(),
            }
        };
        // A repeat with the same holder id is recognized, so a lost reply or a failed
        // connection is tried again here (three tries in all).
        let mut tries = 0;
        let claimed = loop {
            match self.engine.claim(name, &holder).await {
                Ok(claimed) => break claimed,
                Err(error @ (Error::Unknown(_) | Error::Unavailable(_))) => {
                    tries += 1;
                    if tries >= 3 {
                        self.engine.local().unknown.push((name.to_string(), holder));
                        self.engine.wake.notify(1);
                        return Err(ClaimError::Redis(error));
                    }
                }
                Err(error) => return Err(ClaimError::Redis(error)),
            }
        };
        match claimed {
            Claimed::Ok => Ok(Counter {
                engine: Arc::clone(&self.engine),
                name: name.to_string(),
                holder,
                armed: true,
            }),
            Claimed::Unknown => Err(ClaimError::Name(NameError::Unknown(name.to_string()))),
            Claimed::Held => Err(ClaimError::Name(NameError::Claimed(name.to_string()))),
            Claimed::Reported => Err(ClaimError::Name(NameError::Reported(name.to_string()))),
            Claimed::Failed(failure) => Err(ClaimError::Failed(failure)),
            Claimed::Void => Err(ClaimError::Redis(Error::Protocol(
                "a claim under a holder id this handle gave up".into(),
            ))),
        }
    }

    /// Fails the latch as its owner (no counter named), with `message`. Whether this was
    /// the first failure (`false`: it had already failed or opened).
    ///
    /// # Errors
    ///
    /// The transport failure ([`Error::is_unknown`]: it may have happened; calling again
    /// is harmless).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// assert!(latch.fail("deploy cancelled").await.unwrap());
    /// assert!(!latch.fail("again").await.unwrap());
    /// # }
    /// ```
    pub async fn fail(&self, message: &str) -> Result<bool, Error> {
        match self.engine.fail("", "", "error", message, false).await? {
            Outcome::Counted(_) => Ok(true),
            _ => Ok(false),
        }
    }

    /// One atomic snapshot: the latch's state, each counter's, and the first failure
    /// (after sweeping expired leases).
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let snapshot = latch.snapshot().await.unwrap();
    /// println!("{}: {} left", snapshot.state, snapshot.left);
    /// # }
    /// ```
    pub async fn snapshot(&self) -> Result<Snapshot, Error> {
        self.engine.state().await
    }

    /// The counters that have not reported, in the order the latch was created with.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// println!("waiting for {:?}", latch.pending().await.unwrap());
    /// # }
    /// ```
    pub async fn pending(&self) -> Result<Vec<String>, Error> {
        let snapshot = self.engine.state().await?;
        Ok(snapshot.pending().into_iter().map(String::from).collect())
    }

    /// From creation to opening (the server's clock), if the latch opened.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// latch.wait().await.unwrap();
    /// println!("ready after {:?}", latch.time_to_open().await.unwrap().unwrap());
    /// # }
    /// ```
    pub async fn time_to_open(&self) -> Result<Option<Duration>, Error> {
        Ok(self.engine.state().await?.time_to_open())
    }

    /// The count-down events after `after` (an event id; `None`: from the start), oldest
    /// first, at most `count`: created, claimed, reported, released, failed, opened. The
    /// diagnostic hook across replicas (the stream keeps about the last 10,000).
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let mut after = None;
    /// loop {
    ///     let events = latch.events(after.as_deref(), 100).await.unwrap();
    ///     let Some(last) = events.last() else { break };
    ///     after = Some(last.id.clone());
    ///     for event in &events {
    ///         println!("{event}");
    ///     }
    /// }
    /// # }
    /// ```
    pub async fn events(
        &self,
        after: Option<&str>,
        count: usize,
    ) -> Result<Vec<LatchEvent>, Error> {
        self.engine.events(after, count).await
    }

    /// The verdict of a snapshot: `Some` once the latch opened or failed.
    fn settled(snapshot: Snapshot) -> Result<Option<()>, LatchWaitError> {
        match snapshot.state {
            LatchState::Open => Ok(Some(())),
            LatchState::Failed => match snapshot.failure {
                Some(failure) => Err(LatchWaitError::Failed(failure)),
                None => Err(LatchWaitError::Redis(Error::Protocol(
                    "a failed latch without a failure".into(),
                ))),
            },
            LatchState::Waiting => Ok(None),
        }
    }

    /// Waits until every counter has reported (`Ok`) or the latch fails.
    ///
    /// Level-triggered: it sweeps expired leases and reads the state, then blocks on the
    /// event stream (`XREAD BLOCK`, on a dedicated connection) for at most one
    /// [poll interval](LatchOptions::poll), and reads again after every wake-up. So a
    /// killed holder is noticed within its lease plus one poll interval.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future changes nothing.
    ///
    /// # Errors
    ///
    /// [`LatchWaitError::Failed`] with the first failure, or [`LatchWaitError::Redis`]
    /// (waiting again is safe: the next read starts afresh, on a new connection).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// match latch.wait().await {
    ///     Ok(()) => println!("ready"),
    ///     Err(error) => println!("not ready: {error}"),
    /// }
    /// # }
    /// ```
    pub async fn wait(&self) -> Result<(), LatchWaitError> {
        loop {
            let snapshot = self.engine.state().await?;
            let last = snapshot.last_event.clone();
            if Self::settled(snapshot)?.is_some() {
                return Ok(());
            }
            self.engine.wait_for_event(&last).await?;
        }
    }

    /// As [`wait`](TrackingLatch::wait), giving up at `deadline` (any future: a runtime's
    /// sleep). When the deadline fires the state is read once more, so a timeout is
    /// reported only if counters are still pending, and it names exactly them.
    ///
    /// # Errors
    ///
    /// As [`wait`](TrackingLatch::wait), and [`LatchWaitError::TimedOut`] with
    /// [`StillPending`] ("timed out waiting for: a, b").
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let deadline = async_io::Timer::after(std::time::Duration::from_secs(10));
    /// if let Err(tally_redis::LatchWaitError::TimedOut(pending)) = latch.wait_until(deadline).await {
    ///     println!("missing: {:?}", pending.names());
    /// }
    /// # }
    /// ```
    pub async fn wait_until<D: Future>(&self, deadline: D) -> Result<(), LatchWaitError> {
        let waited = future::or(async { Some(self.wait().await) }, async {
            deadline.await;
            None
        })
        .await;
        if let Some(result) = waited {
            return result;
        }
        let snapshot = self.engine.state().await?;
        let pending: Vec<String> = snapshot.pending().into_iter().map(String::from).collect();
        match Self::settled(snapshot)? {
            Some(()) => Ok(()),
            None => Err(LatchWaitError::TimedOut(StillPending::new(pending))),
        }
    }

    /// One pass of background work: gives up the claims whose replies were lost and that
    /// were not made again, renews the leases of this handle's live counters, fails the
    /// latch for each counter dropped unreported (naming it, as
    /// [`Failure::Abandoned`](tally_latch::Failure::Abandoned)), and sweeps expired leases.
    /// Work that failed is kept for the next pass.
    ///
    /// # Errors
    ///
    /// The first transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// latch.maintain_once().await.unwrap();
    /// # }
    /// ```
    pub async fn maintain_once(&self) -> Result<(), Error> {
        let engine = &self.engine;
        let (held, dropped, unknown) = {
            let mut local = engine.local();
            (
                local.held.clone(),
                core::mem::take(&mut local.dropped),
                core::mem::take(&mut local.unknown),
            )
        };
        let mut first_error = None;
        // Claims whose replies were lost and that the application has not made again:
        // given up, so that one that landed does not hold its counter until its lease
        // fails the latch.
        let mut unknown = unknown.into_iter();
        while let Some((name, holder)) = unknown.next() {
            if let Err(error) = engine.release_unknown(&name, &holder).await {
                let mut local = engine.local();
                local.unknown.push((name, holder));
                local.unknown.extend(unknown);
                first_error.get_or_insert(error);
                break;
            }
        }
        match engine.heartbeat(&held).await {
            Ok(lost) => {
                // A lost lease stays lost: its handle's report will be refused as stale.
                for name in lost {
                    for (n, holder) in held.iter().filter(|(n, _)| *n == name) {
                        engine.release(n, holder);
                    }
                }
            }
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
        let mut dropped = dropped.into_iter();
        for gone in dropped.by_ref() {
            let sent = engine
                .fail(&gone.name, &gone.holder, "abandoned", "", gone.panicking)
                .await;
            if let Err(error) = sent {
                let mut local = engine.local();
                local.dropped.push(gone);
                local.dropped.extend(dropped);
                first_error.get_or_insert(error);
                break;
            }
        }
        if let Err(error) = engine.state().await {
            first_error.get_or_insert(error);
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// The background work, forever: [`maintain_once`](TrackingLatch::maintain_once)
    /// every third of a lease, and at once when a counter is dropped unreported. It always
    /// sleeps between passes, and backs off after a failed one. The crate spawns nothing: run this future on the runtime of your choice, with its sleep
    /// (`sleep(d)` must complete after `d`). Without it, leases are not renewed: a claimed
    /// counter's lease expires and its latch fails (or the counter is released).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(latch: tally_redis::TrackingLatch) {
    /// let background = latch.clone();
    /// smol::spawn(async move { background.maintain(async_io::Timer::after).await }).detach();
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
                !local.dropped.is_empty() || !local.unknown.is_empty()
            },
            || async { self.maintain_once().await.is_ok() },
            sleep,
        )
        .await
    }
}
