//! Shutting the queue down: gracefully, or now with the undelivered items handed back.

use alloc::vec::Vec;

use tally_queue::{JobEvent, JobId};

use crate::codec::Codec;
use crate::queue::drained::Drained;
use crate::queue::drained::ShutdownNowError;
use crate::queue::Queue;
use crate::server::error::Error;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::error::GetError;
#[cfg(doc)]
use tally_queue::AbandonPolicy;

impl<C: Codec> Queue<C> {
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
        self.engine.shutdown().await
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
            match self.engine.drain_step().await {
                Ok(chunk) if chunk.is_empty() => return Ok(drained),
                Ok(chunk) => {
                    for (id, _) in &chunk {
                        let id = *id;
                        self.engine.journal.note(|| JobEvent::Discarded(id));
                    }
                    drained.extend(chunk);
                }
                Err(error) => return Err(ShutdownNowError { drained, error }),
            }
        }
    }
}
