//! The records kept on the server: uncertain outcomes and dead letters, read and removed.

use alloc::vec::Vec;

use crate::codec::Codec;
use crate::queue::record::{Record, Records};
use crate::queue::Queue;
use crate::server::error::Error;

// Named only by the docs.
#[cfg(doc)]
use tally_queue::AbandonPolicy;

impl<C: Codec> Queue<C> {
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
        self.engine.records(Records::Uncertain, after, count).await
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
        self.engine.records(Records::Dead, after, count).await
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
        self.engine.remove_record(which, key).await
    }
}
