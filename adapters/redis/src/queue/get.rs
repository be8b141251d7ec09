//! Taking jobs out: one or many, now, waiting, or until a deadline.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::future::Future;

use futures_lite::future;
use tally_queue::JobEvent;

use crate::codec::Codec;
use crate::queue::delivery::Delivery;
use crate::queue::engine::{Found, Then};
use crate::queue::error::{GetError, TryGetError};
use crate::queue::Queue;
use crate::server::error::Error;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::options::Options;
#[cfg(doc)]
use crate::queue::status::Status;
#[cfg(doc)]
use tally_queue::AbandonPolicy;

impl<C: Codec> Queue<C> {
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
        let mut got = self.try_get_many(1).await?;
        got.pop().ok_or(TryGetError::Empty)
    }

    /// Waits for the next job.
    ///
    /// Reads with a plain `XREADGROUP`; every quarter of a lease, and when that read finds
    /// nothing, with a script instead, which first reclaims expired leases and moves
    /// delayed jobs that are due into the stream. When there is nothing,
    /// blocks on the server (`XREAD … BLOCK` on the stream, on the handle's one blocking
    /// connection) for up to one [poll interval](Options::poll) at a time. An entry the
    /// codec cannot decode is dead-lettered with its bytes (counted abandoned) and
    /// skipped; an entry something else wrote to the stream is dead-lettered too (counted
    /// in [`Status::foreign`], outside the ledger).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future never loses a job. If the server had already handed an entry to
    /// this consumer, the next get on this handle delivers it (same attempt), also when
    /// the dropped call reaches the server only later, within the
    /// [repeat window](Options::repeat_window) (later than that, the job's lease expires
    /// and it ends by the [policy](crate::AbandonPolicy)).
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
        let mut got = self.get_many(1).await?;
        got.pop()
            .ok_or_else(|| GetError::Redis(Error::Protocol("an empty get".into())))
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
        let mut got = self.get_many_until(1, deadline).await?;
        got.pop()
            .ok_or_else(|| GetError::Redis(Error::Protocol("an empty get".into())))
    }

    /// Hands out up to `max` jobs that are ready, without blocking on the server: each is
    /// its own [`Delivery`], with its own attempt, lease and fence, as from
    /// [`try_get`](Queue::try_get). One `XREADGROUP` for the batch.
    ///
    /// # Errors
    ///
    /// As [`try_get`](Queue::try_get): [`TryGetError::Empty`] if none is ready.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// for job in queue.try_get_many(100).await.unwrap_or_default() {
    ///     job.succeed().await.unwrap();
    /// }
    /// # }
    /// ```
    pub async fn try_get_many(&self, max: usize) -> Result<Vec<Delivery<C>>, TryGetError> {
        let max = max.max(1);
        let _getting = self.engine.getting.lock().await;
        let (_, found, then) = self
            .engine
            .step(&[], max)
            .await
            .map_err(|(error, _)| TryGetError::Redis(error))?;
        match then {
            _ if !found.is_empty() => Ok(self.deliveries(found)),
            Then::ShutDown => Err(TryGetError::ShutDown),
            _ => Err(TryGetError::Empty),
        }
    }

    /// Waits for jobs and hands out up to `max` of them (at least one): the batch form of
    /// [`get`](Queue::get), holding up to `max` leases at once. Each is its own
    /// [`Delivery`]; resolve them one by one, or together with
    /// [`resolve_many`](Queue::resolve_many) or
    /// [`resolve_and_get`](Queue::resolve_and_get). Keep `max` to what the handler can
    /// finish within a lease: every lease runs from the moment of the get.
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Queue::get).
    ///
    /// # Errors
    ///
    /// As [`get`](Queue::get).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use tally_queue::Outcome;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// while let Ok(jobs) = queue.get_many(100).await {
    ///     let done = jobs.into_iter().map(|job| (job, Outcome::Succeeded)).collect();
    ///     queue.resolve_many(done).await.unwrap();
    /// }
    /// # }
    /// ```
    pub async fn get_many(&self, max: usize) -> Result<Vec<Delivery<C>>, GetError> {
        self.get_many_until(max, future::pending::<()>()).await
    }

    /// As [`get_many`](Queue::get_many), giving up at `deadline` with
    /// [`GetError::TimedOut`]. When the deadline fires, one more non-blocking get is tried.
    ///
    /// # Errors
    ///
    /// As [`get_many`](Queue::get_many), and [`GetError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let deadline = async_io::Timer::after(std::time::Duration::from_millis(100));
    /// let jobs = queue.get_many_until(10, deadline).await.unwrap_or_default();
    /// # drop(jobs); }
    /// ```
    pub async fn get_many_until<D: Future>(
        &self,
        max: usize,
        deadline: D,
    ) -> Result<Vec<Delivery<C>>, GetError> {
        let max = max.max(1);
        let got = future::or(async { Some(self.get_waiting(max).await) }, async {
            deadline.await;
            None
        })
        .await;
        match got {
            Some(result) => result,
            None => match self.try_get_many(max).await {
                Ok(deliveries) => Ok(deliveries),
                Err(TryGetError::Empty) => Err(GetError::TimedOut),
                Err(TryGetError::ShutDown) => Err(GetError::ShutDown),
                Err(TryGetError::Redis(error)) => Err(GetError::Redis(error)),
            },
        }
    }

    async fn get_waiting(&self, max: usize) -> Result<Vec<Delivery<C>>, GetError> {
        let _getting = self.engine.getting.lock().await;
        loop {
            let (_, found, then) = self
                .engine
                .step(&[], max)
                .await
                .map_err(|(error, _)| GetError::Redis(error))?;
            if !found.is_empty() {
                return Ok(self.deliveries(found));
            }
            match then {
                Then::ShutDown => return Err(GetError::ShutDown),
                Then::Empty(after) => self
                    .engine
                    .wait_for_entries(&after)
                    .await
                    .map_err(GetError::Redis)?,
                Then::Items => {}
            }
        }
    }

    pub(super) fn deliveries(&self, found: Vec<Found<C::Item>>) -> Vec<Delivery<C>> {
        found
            .into_iter()
            .map(|found| {
                let Found {
                    entry,
                    key,
                    id,
                    attempt,
                    earlier,
                    item,
                } = found;
                self.engine.journal.note(|| JobEvent::Delivered {
                    id,
                    attempt: u32::try_from(earlier + attempt).unwrap_or(u32::MAX),
                });
                // An entry delivered for the first time was added when the job became
                // buffered (put, or put back by a retry); a later delivery was reclaimed
                // from a holder.
                #[cfg(feature = "metrics")]
                if attempt == 1 {
                    let waited = crate::queue::metrics::since_entry(&entry);
                    self.engine.metrics.buffered_for(waited);
                }
                Delivery {
                    engine: Arc::clone(&self.engine),
                    entry,
                    key,
                    id,
                    attempt,
                    earlier,
                    item: Some(item),
                    lost: Vec::new(),
                    #[cfg(feature = "metrics")]
                    taken: std::time::Instant::now(),
                }
            })
            .collect()
    }
}
