//! The batch verbs: [`Queue::put_many`], [`Queue::get_many`] and their forms (`try_`,
//! `_blocking`, `_until` a deadline, `_owned`), with the futures [`PutMany`] and
//! [`GetMany`].
//!
//! The shape follows tokio's `recv_many`: the caller lends vectors, which a batch moves
//! items out of or pushes onto, and which the caller can reuse from batch to batch.
//!
//! A put batch takes its items from a `Vec<T>`, not an iterator: it must know how many
//! items it has before it claims room for them, so that the buffer can claim room for
//! several items in one step, and nothing it did not accept may leave the caller's hands
//! (an item read from an iterator could not go back into it). So the vector keeps what
//! was not accepted (the refused item comes back in the error, as from a single put), the
//! ids drawn are pushed onto a `Vec<JobId>`, and a waiting put batch holds no item of its
//! own: dropped, it loses nothing. A get batch pushes its deliveries onto a `Vec` and
//! returns how many.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;
use alloc::vec::Vec;

use crate::engine::Handout;
use crate::error::{
    GetError, GetTimeoutError, PutError, PutTimeoutError, TryGetError, TryPutError,
};
use crate::fate::Steward;
use crate::handle::delivery::Delivery;
#[cfg(target_has_atomic = "ptr")]
use crate::handle::delivery::OwnedDelivery;
use crate::job_id::JobId;
use crate::queue::Queue;
use crate::wait::deadline::{Operation, Until};
use crate::wait::registration::{Sleep, Wait};
use crate::wait::turn::Turn;

use self::rest::Rest;

mod rest;

impl<T> Queue<T> {
    /// Puts the items of `items` while there is room now, oldest first, pushing the id of
    /// each accepted item onto `ids`; stops at the first item refused.
    ///
    /// Accepted items are moved out of `items`; whatever was not accepted stays there, so
    /// the vector is the rest of the batch after any outcome (the refused item excepted,
    /// which comes back in the error). Each item is accepted or refused as by
    /// [`try_put`](Queue::try_put) (the same checks, the same turn rule: the batch takes
    /// no slot kept for a woken put), and getters are woken in one pass once the batch is
    /// placed, as many as items were accepted (a batch larger than the room the queue
    /// reports moves in steps of that room, with a pass per step). Until that pass, the
    /// batch's items are as an item whose hand-off is not counted yet (see
    /// [`get`](Queue::get)'s fairness): a `try_get` may take them, and a get the pass then
    /// wakes for one of them waits for the next item.
    ///
    /// Returns how many items were accepted. `ids` is only extended, never cleared: clear
    /// it between batches to reuse it, as `items` can be refilled and reused.
    ///
    /// # Errors
    ///
    /// The first item refused, taken out of `items`, with the reason
    /// [`try_put`](Queue::try_put) would give ([`TryPutError::ShutDown`],
    /// [`TryPutError::NoWorkers`], [`TryPutError::Full`]). The items before it were
    /// accepted (their ids are in `ids`); the items after it are still in `items`.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(3).unwrap();
    /// let mut items = vec!["a", "b", "c", "d", "e"];
    /// let mut ids = Vec::new();
    /// let refused = queue.try_put_many(&mut items, &mut ids);
    /// assert!(matches!(refused, Err(TryPutError::Full("d"))));
    /// assert_eq!(ids.len(), 3);
    /// // The rest of the batch is still in the vector.
    /// assert_eq!(items, ["e"]);
    /// ```
    pub fn try_put_many(
        &self,
        items: &mut Vec<T>,
        ids: &mut Vec<JobId>,
    ) -> Result<usize, TryPutError<T>> {
        let before = ids.len();
        Rest::new(items).put(&self.steward, &mut Turn::none(), ids)?;
        Ok(ids.len() - before)
    }

    /// Puts every item of `items`, oldest first, waiting for room while the queue is full,
    /// pushing the id of each accepted item onto `ids`; resolves to how many were
    /// accepted, once `items` is empty.
    ///
    /// Each poll places as many items as there is room for, with one pass of wake-ups for
    /// the getters (per step, as for [`try_put_many`](Queue::try_put_many)), and waits as
    /// [`put`](Queue::put) does for the rest (in the same order as waiting puts, one freed
    /// slot at a time).
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put): [`PutError::ShutDown`] or [`PutError::NoWorkers`] with the
    /// first item refused, taken out of `items`. The items before it were accepted (their
    /// ids are in `ids`); the items after it are still in `items`.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the future holds no item. Dropped, it leaves the items accepted so far
    /// accepted (their ids in `ids`) and every other item in `items`; a slot freed for it
    /// passes to the next waiting put.
    ///
    /// # Panics
    ///
    /// Polling the future again after it returned `Ready` panics.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::<i32>::bounded(2).unwrap();
    /// let mut ids = Vec::new();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| {
    ///         let mut batch = Vec::new();
    ///         let mut seen = 0;
    ///         while seen < 5 {
    ///             seen += queue.get_many_blocking(&mut batch, 2).unwrap();
    ///             for job in batch.drain(..) {
    ///                 job.succeed();
    ///             }
    ///         }
    ///     });
    ///     let mut items = (0..5).collect();
    ///     assert_eq!(block_on(queue.put_many(&mut items, &mut ids)), Ok(5));
    ///     assert!(items.is_empty());
    /// });
    /// assert_eq!(ids.iter().map(|id| id.get()).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    /// assert_eq!(queue.ledger().succeeded, 5);
    /// ```
    pub fn put_many<'b>(
        &self,
        items: &'b mut Vec<T>,
        ids: &'b mut Vec<JobId>,
    ) -> PutMany<'_, 'b, T> {
        PutMany {
            steward: &self.steward,
            rest: Rest::new(items),
            ids,
            accepted: 0,
            done: false,
            wait: Wait::default(),
        }
    }

    /// As [`put_many`](Queue::put_many), blocking the thread while the queue is full.
    ///
    /// # Errors
    ///
    /// As [`put_many`](Queue::put_many).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// let mut ids = Vec::new();
    /// assert_eq!(queue.put_many_blocking(&mut vec![1, 2, 3], &mut ids), Ok(3));
    /// assert_eq!(queue.ledger().buffered, 3);
    /// ```
    #[cfg(feature = "std")]
    pub fn put_many_blocking(
        &self,
        items: &mut Vec<T>,
        ids: &mut Vec<JobId>,
    ) -> Result<usize, PutError<T>> {
        let mut put = self.put_many(items, ids);
        loop {
            if let Poll::Ready(done) = put.poll_with(&mut Sleep::Thread) {
                return done;
            }
        }
    }

    /// As [`put_many`](Queue::put_many), giving up when `deadline` (any future) completes
    /// first. After the deadline fires the batch is tried once more, so room that came in
    /// time is used.
    ///
    /// # Errors
    ///
    /// As [`put_many`](Queue::put_many) ([`PutTimeoutError::ShutDown`],
    /// [`PutTimeoutError::NoWorkers`]), plus [`PutTimeoutError::TimedOut`] with the first
    /// item not accepted, taken out of `items`, if the deadline came before room for it.
    /// In every case the items before it were accepted (their ids are in `ids`) and the
    /// items after it are still in `items`.
    ///
    /// # Cancel safety
    ///
    /// As [`put_many`](Queue::put_many): dropped, it leaves every item not accepted in
    /// `items`.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(2).unwrap();
    /// let (mut items, mut ids) = (vec![1, 2, 3, 4], Vec::new());
    /// let late = block_on(queue.put_many_until(&mut items, &mut ids, async {}));
    /// assert!(matches!(late, Err(PutTimeoutError::TimedOut(3))));
    /// assert_eq!((ids.len(), items), (2, vec![4]));
    /// ```
    pub fn put_many_until<'b, D: Future>(
        &self,
        items: &'b mut Vec<T>,
        ids: &'b mut Vec<JobId>,
        deadline: D,
    ) -> Until<PutMany<'_, 'b, T>, D> {
        Until::new(self.put_many(items, ids), deadline)
    }

    /// Delivers up to `max` buffered items now, pushing their deliveries onto `deliveries`;
    /// returns how many.
    ///
    /// Each is a full [`Delivery`], with its own id and attempt, that must end as any
    /// other does. Items come as successive [`try_get`](Queue::try_get)s would take them:
    /// returned items and fresh ones alternate while returned items wait, and no item kept
    /// for a woken [`get`](Queue::get) is taken. Putters waiting for the slots freed are
    /// woken in one pass once the batch is out. `deliveries` is only extended, never
    /// cleared. `max == 0` takes nothing and returns `Ok(0)`.
    ///
    /// # Errors
    ///
    /// As [`try_get`](Queue::try_get), only when nothing was delivered:
    /// [`TryGetError::Empty`] or [`TryGetError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryGetError};
    ///
    /// let queue = Queue::unbounded();
    /// queue.try_put_many(&mut vec![1, 2, 3, 4, 5], &mut Vec::new()).unwrap();
    /// let mut batch = Vec::new();
    /// assert_eq!(queue.try_get_many(&mut batch, 3), Ok(3));
    /// assert_eq!(batch.iter().map(|job| **job).collect::<Vec<_>>(), [1, 2, 3]);
    /// for job in batch.drain(..) {
    ///     job.succeed();
    /// }
    /// assert_eq!(queue.try_get_many(&mut batch, 3), Ok(2));
    /// for job in batch.drain(..) {
    ///     job.reject();
    /// }
    /// assert_eq!(queue.try_get_many(&mut batch, 3), Err(TryGetError::Empty));
    /// ```
    pub fn try_get_many<'a>(
        &'a self,
        deliveries: &mut Vec<Delivery<'a, T>>,
        max: usize,
    ) -> Result<usize, TryGetError> {
        if max == 0 {
            return Ok(0);
        }
        let steward = &self.steward;
        steward.take_many(
            &mut Turn::none(),
            max,
            |handout, item| Delivery::new(steward, handout, item),
            deliveries,
        )
    }

    /// Waits for at least one item, then delivers up to `max` buffered items at once,
    /// pushing their deliveries onto `deliveries`; resolves to how many.
    ///
    /// As [`try_get_many`](Queue::try_get_many) once items are there; while there are
    /// none, it waits as [`get`](Queue::get) does, and a batch woken for one item takes that
    /// item and whatever else is buffered and not kept for another woken get. `max == 0`
    /// resolves to `Ok(0)` at once.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`] once the queue is shut down and empty, as for
    /// [`get`](Queue::get); a batch that delivered anything returns `Ok`.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe, as tokio's `recv_many`: items leave the queue only in the poll that
    /// returns them, so a dropped `get_many` takes nothing, and a wake-up it received
    /// passes to the next waiting get.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put_many(&mut vec!["a", "b"], &mut Vec::new()).unwrap();
    /// let mut batch = Vec::new();
    /// assert_eq!(block_on(queue.get_many(&mut batch, 10)), Ok(2));
    /// for job in batch.drain(..) {
    ///     job.succeed();
    /// }
    /// queue.shutdown();
    /// assert!(block_on(queue.get_many(&mut batch, 10)).is_err());
    /// ```
    pub fn get_many<'a, 'b>(
        &'a self,
        deliveries: &'b mut Vec<Delivery<'a, T>>,
        max: usize,
    ) -> GetMany<'a, 'b, T> {
        GetMany {
            steward: &self.steward,
            deliveries,
            max,
            wait: Wait::default(),
        }
    }

    /// As [`get_many`](Queue::get_many), giving up when `deadline` (any future) completes
    /// first. After the deadline fires the batch is tried once more, so items that came in
    /// time are delivered.
    ///
    /// # Errors
    ///
    /// As [`get_many`](Queue::get_many) ([`GetTimeoutError::ShutDown`]), plus
    /// [`GetTimeoutError::TimedOut`] if the deadline came before any item; a timed-out
    /// batch took nothing.
    ///
    /// # Cancel safety
    ///
    /// As [`get_many`](Queue::get_many): a dropped `get_many_until` takes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Queue::unbounded();
    /// let mut batch = Vec::new();
    /// let late = block_on(queue.get_many_until(&mut batch, 8, async {}));
    /// assert_eq!(late, Err(GetTimeoutError::TimedOut));
    /// queue.try_put_many(&mut vec![1, 2], &mut Vec::new()).unwrap();
    /// assert_eq!(block_on(queue.get_many_until(&mut batch, 8, async {})), Ok(2));
    /// for job in batch.drain(..) {
    ///     job.succeed();
    /// }
    /// ```
    pub fn get_many_until<'a, 'b, D: Future>(
        &'a self,
        deliveries: &'b mut Vec<Delivery<'a, T>>,
        max: usize,
        deadline: D,
    ) -> Until<GetMany<'a, 'b, T>, D> {
        Until::new(self.get_many(deliveries, max), deadline)
    }

    /// As [`get_many`](Queue::get_many), blocking the thread until an item is there.
    ///
    /// # Errors
    ///
    /// As [`get_many`](Queue::get_many).
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put_many(&mut vec![0, 1, 2], &mut Vec::new()).unwrap();
    /// let mut batch = Vec::new();
    /// assert_eq!(queue.get_many_blocking(&mut batch, 8), Ok(3));
    /// for job in batch.drain(..) {
    ///     job.succeed();
    /// }
    /// ```
    #[cfg(feature = "std")]
    pub fn get_many_blocking<'a>(
        &'a self,
        deliveries: &mut Vec<Delivery<'a, T>>,
        max: usize,
    ) -> Result<usize, GetError> {
        let mut get = self.get_many(deliveries, max);
        loop {
            if let Poll::Ready(done) = get.poll_with(&mut Sleep::Thread) {
                return done;
            }
        }
    }

    /// As [`get_many`](Queue::get_many), for a queue in an `Arc`: each delivery is an
    /// [`OwnedDelivery`], which can move into a `'static` task.
    ///
    /// # Errors
    ///
    /// As [`get_many`](Queue::get_many).
    ///
    /// # Cancel safety
    ///
    /// As [`get_many`](Queue::get_many): a dropped `get_many_owned` takes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put_many(&mut vec![1, 2], &mut Vec::new()).unwrap();
    /// let mut batch = Vec::new();
    /// assert_eq!(block_on(queue.get_many_owned(&mut batch, 8)), Ok(2));
    /// let worker = std::thread::spawn(move || {
    ///     for job in batch {
    ///         job.succeed();
    ///     }
    /// });
    /// worker.join().unwrap();
    /// assert_eq!(queue.ledger().succeeded, 2);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn get_many_owned<'b>(
        self: &Arc<Self>,
        deliveries: &'b mut Vec<OwnedDelivery<T>>,
        max: usize,
    ) -> GetManyOwned<'b, T> {
        GetManyOwned {
            queue: Arc::clone(self),
            deliveries,
            max,
            wait: Wait::default(),
        }
    }

    /// As [`try_get_many`](Queue::try_get_many), for a queue in an `Arc`: each delivery is
    /// an [`OwnedDelivery`], which can move into a `'static` task.
    ///
    /// # Errors
    ///
    /// As [`try_get_many`](Queue::try_get_many).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put_many(&mut vec![0, 1, 2, 3], &mut Vec::new()).unwrap();
    /// let mut batch = Vec::new();
    /// assert_eq!(queue.try_get_many_owned(&mut batch, 4), Ok(4));
    /// let worker = std::thread::spawn(move || {
    ///     for job in batch {
    ///         job.succeed();
    ///     }
    /// });
    /// worker.join().unwrap();
    /// assert_eq!(queue.ledger().succeeded, 4);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn try_get_many_owned(
        self: &Arc<Self>,
        deliveries: &mut Vec<OwnedDelivery<T>>,
        max: usize,
    ) -> Result<usize, TryGetError> {
        if max == 0 {
            return Ok(0);
        }
        self.steward.take_many(
            &mut Turn::none(),
            max,
            |handout, item| OwnedDelivery::new(Arc::clone(self), handout, item),
            deliveries,
        )
    }
}

/// The future returned by [`Queue::put_many`]: resolves to how many items were accepted
/// once its vector is empty, or to a [`PutError`] holding the first item refused.
///
/// Holds no item: the items not accepted yet stay in the caller's vector.
///
/// # Examples
///
/// ```
/// let queue = tally_queue::Queue::unbounded();
/// let (mut items, mut ids) = (vec![1, 2, 3], Vec::new());
/// let put: tally_queue::futures::PutMany<'_, '_, u8> = queue.put_many(&mut items, &mut ids);
/// assert_eq!(futures_lite::future::block_on(put), Ok(3));
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct PutMany<'a, 'b, T> {
    steward: &'a Steward<T>,
    /// The caller's vector, handed back in order when the future is dropped.
    rest: Rest<'b, T>,
    ids: &'b mut Vec<JobId>,
    /// Items accepted so far.
    accepted: usize,
    done: bool,
    wait: Wait,
}

/// One try at placing the batch (`turn`: the putter holds a turn, see `turns.rs`); `None`
/// means "no room for the next item now, wait" (with that item back in front of the
/// rest).
#[inline]
fn put_attempt<T>(
    steward: &Steward<T>,
    turn: &mut Turn<'_>,
    rest: &mut Rest<'_, T>,
    ids: &mut Vec<JobId>,
) -> Option<Result<(), PutError<T>>> {
    match rest.put(steward, turn, ids) {
        Ok(()) => Some(Ok(())),
        Err(TryPutError::Full(item)) => {
            // A batch that found the queue full waits with its item in front.
            rest.put_back(item);
            None
        }
        Err(TryPutError::ShutDown(item)) => Some(Err(PutError::ShutDown(item))),
        Err(TryPutError::NoWorkers(item)) => Some(Err(PutError::NoWorkers(item))),
    }
}

impl<T> PutMany<'_, '_, T> {
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<usize, PutError<T>>> {
        assert!(!self.done, "`PutMany` polled after it completed");
        let steward = self.steward;
        let before = self.ids.len();
        let (rest, ids) = (&mut self.rest, &mut *self.ids);
        let mut ready = None;
        if self.wait.is_new() {
            ready = put_attempt(steward, &mut Turn::none(), rest, ids);
        }
        let poll = match ready {
            Some(done) => Poll::Ready(done),
            None => self
                .wait
                .poll_registered(steward.raw().putters(), sleep, |turn| {
                    put_attempt(steward, turn, rest, ids)
                }),
        };
        self.accepted += self.ids.len() - before;
        match poll {
            Poll::Ready(done) => {
                self.done = true;
                Poll::Ready(done.map(|()| self.accepted))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T> Operation for PutMany<'_, '_, T> {
    type Timed = Result<usize, PutTimeoutError<T>>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(PutTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        let steward = self.steward;
        let before = self.ids.len();
        let (rest, ids) = (&mut self.rest, &mut *self.ids);
        let last = self.wait.last_try(steward.raw().putters(), |turn| {
            put_attempt(steward, turn, rest, ids)
        });
        self.accepted += self.ids.len() - before;
        self.done = true;
        match last {
            Some(done) => done.map(|()| self.accepted).map_err(PutTimeoutError::from),
            None => Err(PutTimeoutError::TimedOut(
                self.rest
                    .take_first()
                    .expect("a batch that waits has an item in front"),
            )),
        }
    }
}

impl<T> Future for PutMany<'_, '_, T> {
    type Output = Result<usize, PutError<T>>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
impl<T> Drop for PutMany<'_, '_, T> {
    fn drop(&mut self) {
        self.wait.release(|| self.steward.raw().putters());
    }
}

impl<T> fmt::Debug for PutMany<'_, '_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PutMany")
            .field("accepted", &self.accepted)
            .field("left", &self.rest.len())
            .finish_non_exhaustive()
    }
}

/// The future returned by [`Queue::get_many`]: resolves to how many deliveries it pushed
/// (at least one), or to [`GetError::ShutDown`] once the queue is shut down and empty.
///
/// Cancel-safe: items leave the queue only in the poll that returns them.
///
/// # Examples
///
/// ```
/// let queue = tally_queue::Queue::unbounded();
/// queue.try_put(1).unwrap();
/// let mut batch = Vec::new();
/// let get: tally_queue::futures::GetMany<'_, '_, i32> = queue.get_many(&mut batch, 4);
/// assert_eq!(futures_lite::future::block_on(get), Ok(1));
/// batch.pop().unwrap().succeed();
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct GetMany<'a, 'b, T> {
    steward: &'a Steward<T>,
    deliveries: &'b mut Vec<Delivery<'a, T>>,
    max: usize,
    wait: Wait,
}

/// One try at taking a batch, each item wrapped by `wrap`; `None` means "nothing for this
/// getter now, wait".
#[inline]
fn get_attempt<T, D>(
    steward: &Steward<T>,
    turn: &mut Turn<'_>,
    max: usize,
    wrap: impl FnMut(Handout, T) -> D,
    out: &mut Vec<D>,
) -> Option<Result<usize, GetError>> {
    match steward.take_many(turn, max, wrap, out) {
        Ok(n) => Some(Ok(n)),
        Err(TryGetError::ShutDown) => Some(Err(GetError::ShutDown)),
        Err(TryGetError::Empty) => None,
    }
}

/// The shared body of both batch get futures: a first attempt made before anything is
/// set up, then a registered wait.
#[inline]
fn poll_many<T, D>(
    steward: &Steward<T>,
    wait: &mut Wait,
    sleep: &mut Sleep<'_, '_>,
    max: usize,
    mut wrap: impl FnMut(Handout, T) -> D,
    out: &mut Vec<D>,
) -> Poll<Result<usize, GetError>> {
    if wait.is_new() {
        if let Some(ready) = get_attempt(steward, &mut Turn::none(), max, &mut wrap, out) {
            return Poll::Ready(ready);
        }
    }
    wait.poll_registered(steward.raw().getters(), sleep, |turn| {
        get_attempt(steward, turn, max, &mut wrap, out)
    })
}

impl<'a, T> GetMany<'a, '_, T> {
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<usize, GetError>> {
        if self.max == 0 {
            return Poll::Ready(Ok(0));
        }
        let (steward, max, out) = (self.steward, self.max, &mut *self.deliveries);
        let wrap = |handout, item| Delivery::new(steward, handout, item);
        poll_many(steward, &mut self.wait, sleep, max, wrap, out)
    }
}

impl<'a, T> Operation for GetMany<'a, '_, T> {
    type Timed = Result<usize, GetTimeoutError>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(GetTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        if self.max == 0 {
            return Ok(0);
        }
        let (steward, max, out) = (self.steward, self.max, &mut *self.deliveries);
        let wrap = |handout, item| Delivery::new(steward, handout, item);
        match self.wait.last_try(steward.raw().getters(), |turn| {
            get_attempt(steward, turn, max, wrap, out)
        }) {
            Some(done) => Self::in_time(done),
            None => Err(GetTimeoutError::TimedOut),
        }
    }
}

impl<T> Future for GetMany<'_, '_, T> {
    type Output = Result<usize, GetError>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
impl<T> Drop for GetMany<'_, '_, T> {
    fn drop(&mut self) {
        self.wait.release(|| self.steward.raw().getters());
    }
}

impl<T> fmt::Debug for GetMany<'_, '_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetMany")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

/// The future returned by [`Queue::get_many_owned`]: as [`GetMany`], pushing
/// [`OwnedDelivery`]s, which can move into `'static` tasks.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// let queue = Arc::new(tally_queue::Queue::unbounded());
/// queue.try_put(1).unwrap();
/// let mut batch = Vec::new();
/// let get: tally_queue::futures::GetManyOwned<'_, i32> = queue.get_many_owned(&mut batch, 4);
/// assert_eq!(futures_lite::future::block_on(get), Ok(1));
/// batch.pop().unwrap().succeed();
/// ```
#[cfg(target_has_atomic = "ptr")]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct GetManyOwned<'b, T> {
    queue: Arc<Queue<T>>,
    deliveries: &'b mut Vec<OwnedDelivery<T>>,
    max: usize,
    wait: Wait,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Future for GetManyOwned<'_, T> {
    type Output = Result<usize, GetError>;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if this.max == 0 {
            return Poll::Ready(Ok(0));
        }
        let queue = &this.queue;
        let wrap = |handout, item| OwnedDelivery::new(Arc::clone(queue), handout, item);
        poll_many(
            &queue.steward,
            &mut this.wait,
            &mut Sleep::Task(context),
            this.max,
            wrap,
            this.deliveries,
        )
    }
}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
#[cfg(target_has_atomic = "ptr")]
impl<T> Drop for GetManyOwned<'_, T> {
    fn drop(&mut self) {
        self.wait.release(|| self.queue.steward.raw().getters());
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for GetManyOwned<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetManyOwned")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}
