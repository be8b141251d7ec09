//! A registered consumer, kept alive by heartbeats.

use alloc::string::String;
use alloc::sync::Arc;
use core::fmt;

use crate::codec::Codec;
use crate::queue::engine::Engine;
use crate::server::error::Error;

/// A worker registration, from [`Queue::worker`](crate::Queue::worker): the
/// across-processes form of [`tally_queue::Worker`].
///
/// While a queue has had workers and none is alive, puts are refused with
/// [`PutError::NoWorkers`](crate::PutError::NoWorkers), so producers do not fill a queue
/// nobody reads. A worker is alive while its heartbeat is fresh: the maintenance future
/// ([`Queue::maintain`](crate::Queue::maintain)) refreshes it; a process that dies stops
/// refreshing, and the worker expires one lease later. Dropped, the worker is removed by
/// the maintenance future; [`retire`](Worker::retire) removes it at once.
///
/// # Examples
///
/// ```no_run
/// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) -> Result<(), tally_redis::Error> {
/// let worker = queue.worker().await?;
/// while let Ok(job) = queue.get().await {
///     job.succeed().await.ok();
/// }
/// worker.retire().await?;
/// # Ok(()) }
/// ```
pub struct Worker<C: Codec> {
    pub(crate) engine: Arc<Engine<C>>,
    pub(crate) member: String,
}

impl<C: Codec> Worker<C> {
    /// Removes the registration now.
    ///
    /// # Errors
    ///
    /// A transport failure; the registration then expires with its heartbeat.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// queue.worker().await.unwrap().retire().await.unwrap();
    /// # }
    /// ```
    pub async fn retire(mut self) -> Result<(), Error> {
        let member = core::mem::take(&mut self.member);
        self.engine.local().workers.retain(|m| *m != member);
        self.engine
            .workers(false, core::slice::from_ref(&member))
            .await
    }
}

impl<C: Codec> Drop for Worker<C> {
    fn drop(&mut self) {
        if self.member.is_empty() {
            return;
        }
        let mut local = self.engine.local();
        local.workers.retain(|m| *m != self.member);
        local.retired.push(core::mem::take(&mut self.member));
        drop(local);
        self.engine.wake.notify(1);
    }
}

impl<C: Codec> fmt::Debug for Worker<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Worker")
            .field("member", &self.member)
            .finish()
    }
}
