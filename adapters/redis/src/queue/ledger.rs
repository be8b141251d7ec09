//! What a handle reads of the queue: the ledger, the status, the jobs in flight, the
//! metrics, and join.

use alloc::vec::Vec;
use core::future::Future;

use futures_lite::future;
use tally_queue::Ledger;

use crate::codec::Codec;
use crate::queue::error::JoinError;
use crate::queue::in_flight::InFlight;
use crate::queue::status::Status;
use crate::queue::Queue;
use crate::server::error::Error;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::options::Options;

impl<C: Codec> Queue<C> {
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
        Ok(self.engine.status().await?.0.ledger)
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
        Ok(self.engine.status().await?.0)
    }

    /// The jobs in flight, oldest entry first: each job's id, attempt, holder and lease
    /// age, and whether its holder is alive (see [`InFlight`]). "Jobs stuck in running"
    /// is answered here: a job whose holder is not alive is reclaimed once its lease
    /// expires (by the next get that looks for expired leases, or by the next
    /// maintenance pass if it is not to be delivered again or waits a
    /// [redelivery backoff](crate::Options::redelivery_backoff)).
    ///
    /// Read in pages of 1,000, each one atomic snapshot: a job that moves between two
    /// pages can be listed twice or not at all.
    ///
    /// # Errors
    ///
    /// The transport failure.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let stuck = queue.in_flight().await.unwrap();
    /// for job in stuck.iter().filter(|job| !job.holder_alive) {
    ///     println!("{:?} attempt {}: {} is gone", job.id, job.attempt, job.holder);
    /// }
    /// # }
    /// ```
    pub async fn in_flight(&self) -> Result<Vec<InFlight>, Error> {
        const PAGE: usize = 1000;
        let mut all = Vec::new();
        loop {
            let after = all
                .last()
                .map_or("-", |last: &InFlight| last.entry.as_str());
            let page = self.engine.in_flight(after, PAGE).await?;
            let done = page.len() < PAGE;
            all.extend(page);
            if done {
                return Ok(all);
            }
        }
    }

    /// Records a [`status`](Queue::status) snapshot through the `metrics` facade, under
    /// `tally-queue`'s metric names (tabled in its crate docs) with the label `queue` =
    /// the queue's [`name`](Queue::name): `accepted` and each outcome as counters (set to
    /// the ledger's figure), `buffered` and `in flight` as gauges, the redeliveries, and
    /// the dead letters kept (read just after the snapshot). Returns the snapshot.
    ///
    /// Call it where the figures are read (in the scrape handler, before rendering): they
    /// then equal the ledger on the server at that instant, whichever process moved it,
    /// and a job costs nothing for them. Two histograms are recorded as jobs move through
    /// this handle: `tally_queue_in_flight_seconds` as each delivery ends (resolved,
    /// retried or dropped), and `tally_queue_buffered_seconds` as each first attempt is
    /// taken: from the server's clock when the job was put, put back, or (a delayed job)
    /// moved into the stream once due, to this host's clock when taken (a skew between
    /// the two adds to it).
    ///
    /// # Errors
    ///
    /// The transport failure; nothing is recorded then.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// // In the scrape handler, before the exporter renders:
    /// let status = queue.record_metrics().await.unwrap();
    /// assert!(status.ledger.is_balanced());
    /// # }
    /// ```
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub async fn record_metrics(&self) -> Result<Status, Error> {
        let status = self.engine.status().await?.0;
        let dead_kept = self.engine.dead_kept().await?;
        crate::queue::metrics::record(&self.engine.name, &status, dead_kept);
        Ok(status)
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
            let (status, last) = self.engine.status().await?;
            if status.ledger.unfinished() == 0 {
                return Ok(status.ledger);
            }
            self.engine.wait_for_wake(&last).await?;
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
}
