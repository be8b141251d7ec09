//! Putting jobs in: one at a time, delayed, keyed and in batches, waiting for room or
//! not.

use alloc::vec::Vec;
use core::future::Future;
use core::pin::pin;
use core::time::Duration;

use futures_lite::future;
use tally_queue::JobId;

use crate::codec::Codec;
use crate::queue::error::PutError;
use crate::queue::Queue;
use crate::server::error::Error;

// Named only by the docs.
#[cfg(doc)]
use crate::queue::options::Options;

impl<C: Codec> Queue<C> {
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
        one(self.engine.put_batch(alloc::vec![item], None).await)
    }

    /// Accepts `item` as a delayed job: it is not delivered before `delay` has passed by
    /// the server's clock (`TIME`, the clock the leases follow). Until then it is counted
    /// buffered (and toward the [capacity](Options::bounded)), `join` waits for it, and
    /// [`shutdown_now`](Queue::shutdown_now) hands it back with the rest; a graceful
    /// [`shutdown`](Queue::shutdown) drains once it has been delivered and ended. Once
    /// due, the next get that runs the step script moves it into the stream: at once when
    /// a get finds nothing else (a waiting get re-reads every [poll
    /// interval](Options::poll)), within a quarter of a lease when gets find other jobs.
    /// Its id is drawn now, in order with every other put.
    ///
    /// # Errors
    ///
    /// As [`try_put`](Queue::try_put): [`PutError::Full`] if the queue is bounded and
    /// full (this does not wait).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let id = queue.put_after(b"reminder".to_vec(), Duration::from_secs(60)).await.unwrap();
    /// assert_eq!(queue.ledger().await.unwrap().buffered, 1);
    /// assert!(queue.try_get().await.is_err()); // not due yet
    /// # drop(id); }
    /// ```
    pub async fn put_after(
        &self,
        item: C::Item,
        delay: Duration,
    ) -> Result<JobId, PutError<C::Item>> {
        let ms = crate::queue::delivery::millis(delay);
        one(self
            .engine
            .put_later(alloc::vec![item], false, ms, None)
            .await
            .map(|(ids, _)| ids))
    }

    /// Accepts `item` as a delayed job due at `when`, by the server's clock (a time in
    /// the past is due at once): as [`put_after`](Queue::put_after).
    ///
    /// # Errors
    ///
    /// As [`put_after`](Queue::put_after).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let tomorrow = SystemTime::now() + Duration::from_secs(24 * 3600);
    /// let id = queue.put_at(b"report".to_vec(), tomorrow).await.unwrap();
    /// # drop(id); }
    /// ```
    pub async fn put_at(
        &self,
        item: C::Item,
        when: std::time::SystemTime,
    ) -> Result<JobId, PutError<C::Item>> {
        let since_epoch = when
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        let ms = crate::queue::delivery::millis(since_epoch);
        one(self
            .engine
            .put_later(alloc::vec![item], true, ms, None)
            .await
            .map(|(ids, _)| ids))
    }

    /// Accepts a batch of delayed jobs, or refuses it whole, in one script: each is due
    /// once `delay` has passed by the server's clock, as with
    /// [`put_after`](Queue::put_after), and the ids are contiguous and in the order of
    /// `items`, as with [`try_put_many`](Queue::try_put_many). An empty batch is accepted
    /// without a call.
    ///
    /// # Errors
    ///
    /// As [`try_put_many`](Queue::try_put_many), with every item back: it does not wait
    /// for room.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let reminders = (0..10u8).map(|n| vec![n]);
    /// let ids = queue.put_many_after(reminders, Duration::from_secs(60)).await.unwrap();
    /// assert_eq!(ids.len(), 10);
    /// assert_eq!(queue.ledger().await.unwrap().buffered, 10);
    /// # }
    /// ```
    pub async fn put_many_after<I>(
        &self,
        items: I,
        delay: Duration,
    ) -> Result<Vec<JobId>, PutError<Vec<C::Item>>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let items: Vec<C::Item> = items.into_iter().collect();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let ms = crate::queue::delivery::millis(delay);
        let (ids, _) = self.engine.put_later(items, false, ms, None).await?;
        Ok(ids)
    }

    /// As [`put_many_after`](Queue::put_many_after), every job due at `when` by the
    /// server's clock, as with [`put_at`](Queue::put_at).
    ///
    /// # Errors
    ///
    /// As [`put_many_after`](Queue::put_many_after).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let in_an_hour = SystemTime::now() + Duration::from_secs(3600);
    /// let ids = queue.put_many_at([b"a".to_vec(), b"b".to_vec()], in_an_hour).await.unwrap();
    /// assert_eq!(ids[1].get(), ids[0].get() + 1);
    /// # }
    /// ```
    pub async fn put_many_at<I>(
        &self,
        items: I,
        when: std::time::SystemTime,
    ) -> Result<Vec<JobId>, PutError<Vec<C::Item>>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let items: Vec<C::Item> = items.into_iter().collect();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let since_epoch = when
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        let ms = crate::queue::delivery::millis(since_epoch);
        let (ids, _) = self.engine.put_later(items, true, ms, None).await?;
        Ok(ids)
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
        one(self
            .put_inner(alloc::vec![item], None, future::pending::<()>())
            .await)
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
        one(self.put_inner(alloc::vec![item], None, deadline).await)
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
        let keys = [key.to_string()];
        one(self
            .put_inner(alloc::vec![item], Some(&keys), future::pending::<()>())
            .await)
    }

    /// As [`put_after`](Queue::put_after), with an idempotency key as
    /// [`put_keyed`](Queue::put_keyed) has: the first put with a key is accepted, delayed,
    /// and every later keyed put with the same key (delayed or not, within the
    /// [repeat window](Options::repeat_window)) returns the same id without adding
    /// anything, whatever its delay. A lost reply or a failed connection is tried again
    /// here (three tries in all).
    ///
    /// # Errors
    ///
    /// As [`put_after`](Queue::put_after).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let hour = Duration::from_secs(3600);
    /// let first = queue.put_keyed_after("invoice-9", b"remind".to_vec(), hour).await.unwrap();
    /// let again = queue.put_keyed_after("invoice-9", b"remind".to_vec(), hour).await.unwrap();
    /// assert_eq!(first, again);
    /// assert_eq!(queue.ledger().await.unwrap().buffered, 1);
    /// # }
    /// ```
    pub async fn put_keyed_after(
        &self,
        key: &str,
        item: C::Item,
        delay: Duration,
    ) -> Result<JobId, PutError<C::Item>> {
        let ms = crate::queue::delivery::millis(delay);
        self.later_keyed(key, item, false, ms).await
    }

    /// As [`put_at`](Queue::put_at), with an idempotency key as
    /// [`put_keyed_after`](Queue::put_keyed_after) has.
    ///
    /// # Errors
    ///
    /// As [`put_after`](Queue::put_after).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::{Duration, SystemTime};
    ///
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let tomorrow = SystemTime::now() + Duration::from_secs(24 * 3600);
    /// let id = queue.put_keyed_at("report-2026-12-08", b"report".to_vec(), tomorrow).await.unwrap();
    /// # drop(id); }
    /// ```
    pub async fn put_keyed_at(
        &self,
        key: &str,
        item: C::Item,
        when: std::time::SystemTime,
    ) -> Result<JobId, PutError<C::Item>> {
        let since_epoch = when
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO);
        let ms = crate::queue::delivery::millis(since_epoch);
        self.later_keyed(key, item, true, ms).await
    }

    /// A keyed delayed put, tried again after a lost reply or a failed connection (a
    /// repeat with the key is safe), three tries in all.
    async fn later_keyed(
        &self,
        key: &str,
        item: C::Item,
        at: bool,
        ms: u64,
    ) -> Result<JobId, PutError<C::Item>> {
        let keys = [key.to_string()];
        let mut items = alloc::vec![item];
        let mut lost = 0;
        loop {
            match self.engine.put_later(items, at, ms, Some(&keys)).await {
                Err(PutError::Unknown { item: back, error })
                | Err(PutError::Failed {
                    item: back,
                    error: error @ Error::Unavailable(_),
                }) => {
                    lost += 1;
                    if lost >= 3 {
                        return one(Err(PutError::from_redis(back, error)));
                    }
                    items = back;
                }
                other => return one(other.map(|(ids, _)| ids)),
            }
        }
    }

    /// Accepts a batch of items now, or refuses it whole, never waiting for room: one
    /// script on the server, the ids contiguous and in the order of `items`, the ledger
    /// moved once. An empty batch is accepted at once.
    ///
    /// # Errors
    ///
    /// As [`try_put`](Queue::try_put), with every item back. A bounded queue refuses a
    /// batch that does not fit whole with [`PutError::Full`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let ids = queue.try_put_many([b"a".to_vec(), b"b".to_vec()]).await.unwrap();
    /// assert_eq!(ids[1].get(), ids[0].get() + 1);
    /// # }
    /// ```
    pub async fn try_put_many<I>(&self, items: I) -> Result<Vec<JobId>, PutError<Vec<C::Item>>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let items: Vec<C::Item> = items.into_iter().collect();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.engine.put_batch(items, None).await
    }

    /// Accepts a batch of items, waiting while the queue has no room for all of them
    /// (as [`put`](Queue::put)): one script per attempt, the ids contiguous and in the
    /// order of `items`. This is the fast way to put many jobs: the server runs one script
    /// for the batch instead of one per job.
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put), with every item back. On a bounded queue, a batch larger
    /// than the capacity can never fit and is refused at once with [`PutError::Full`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let jobs = (0..100u8).map(|n| vec![n]);
    /// let ids = queue.put_many(jobs).await.unwrap();
    /// assert_eq!(ids.len(), 100);
    /// # }
    /// ```
    pub async fn put_many<I>(&self, items: I) -> Result<Vec<JobId>, PutError<Vec<C::Item>>>
    where
        I: IntoIterator<Item = C::Item>,
    {
        let items: Vec<C::Item> = items.into_iter().collect();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.put_inner(items, None, future::pending::<()>()).await
    }

    /// As [`put_many`](Queue::put_many), each item with an idempotency key (as
    /// [`put_keyed`](Queue::put_keyed)): an item whose key is known (within the repeat
    /// window), or repeated earlier in the batch, gets that job's id and adds nothing; the
    /// others are accepted with contiguous ids. The ids come back in the order of
    /// `items`. A lost reply is tried again here (three tries in all).
    ///
    /// # Errors
    ///
    /// As [`put_many`](Queue::put_many).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// let orders = [("order-1", b"a".to_vec()), ("order-2", b"b".to_vec())];
    /// let ids = queue.put_many_keyed(orders.clone()).await.unwrap();
    /// assert_eq!(queue.put_many_keyed(orders).await.unwrap(), ids);
    /// # }
    /// ```
    pub async fn put_many_keyed<K, I>(&self, items: I) -> Result<Vec<JobId>, PutError<Vec<C::Item>>>
    where
        K: AsRef<str>,
        I: IntoIterator<Item = (K, C::Item)>,
    {
        let (keys, items): (Vec<String>, Vec<C::Item>) = items
            .into_iter()
            .map(|(key, item)| (key.as_ref().to_string(), item))
            .unzip();
        if items.is_empty() {
            return Ok(Vec::new());
        }
        self.put_inner(items, Some(&keys), future::pending::<()>())
            .await
    }

    async fn put_inner<D: Future>(
        &self,
        mut items: Vec<C::Item>,
        keys: Option<&[String]>,
        deadline: D,
    ) -> Result<Vec<JobId>, PutError<Vec<C::Item>>> {
        if let Some(capacity) = self.engine.options.capacity {
            if items.len() as u64 > capacity {
                return Err(PutError::Full(items));
            }
        }
        let mut deadline = pin!(deadline);
        let mut expired = false;
        let mut lost = 0;
        loop {
            match self.engine.put_batch(items, keys).await {
                Err(PutError::Full(back)) => items = back,
                // With keys, a repeat is safe: try again after a lost reply or a failed
                // connection, and keep saying "unknown" if the last try is lost too.
                Err(PutError::Unknown { item: back, error })
                | Err(PutError::Failed {
                    item: back,
                    error: error @ Error::Unavailable(_),
                }) if keys.is_some() => {
                    lost += 1;
                    if lost >= 3 {
                        return Err(PutError::from_redis(back, error));
                    }
                    items = back;
                    continue;
                }
                other => return other,
            }
            if expired {
                return Err(PutError::TimedOut(items));
            }
            let wait = async {
                self.engine.wait_for_wake("$").await.ok();
                false
            };
            let fired = async {
                deadline.as_mut().await;
                true
            };
            expired = future::or(fired, wait).await;
        }
    }
}

/// A one-item batch's result, as the single-item verbs return it.
fn one<T>(result: Result<Vec<JobId>, PutError<Vec<T>>>) -> Result<JobId, PutError<T>> {
    match result {
        Ok(mut ids) => ids
            .pop()
            .ok_or_else(|| unreachable!("a batch of one has one id")),
        Err(error) => Err(error.map(|mut items| match items.pop() {
            Some(item) => item,
            None => unreachable!("a batch of one comes back whole"),
        })),
    }
}
