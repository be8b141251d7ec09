//! The future returned by [`Queue::put`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::error::{PutError, PutTimeoutError, TryPutError};
use crate::fate::Steward;
use crate::job_id::JobId;
use crate::queue::Queue;
use crate::wait::deadline::{Operation, Until};
use crate::wait::registration::{Sleep, Wait};
use crate::wait::turn::Turn;

impl<T> Queue<T> {
    /// Puts `item` in the buffer, waiting for a slot while the queue is full.
    ///
    /// Resolves to the item's [`JobId`] once accepted.
    ///
    /// # Errors
    ///
    /// The item comes back inside the error: [`PutError::ShutDown`] if the queue is or gets
    /// shut down (a put waiting on a full queue is woken by either kind of shutdown),
    /// [`PutError::NoWorkers`] if the last worker left (see [`worker`](Queue::worker)). A
    /// waiting put is never refused for being full.
    ///
    /// # Cancel safety
    ///
    /// The future owns the item. Dropping it before it resolved means the item was not
    /// accepted (it is dropped with the future); nothing is accepted unless the future
    /// returned `Ok`. A slot freed for a dropped put passes to the next waiting put.
    ///
    /// # Fairness
    ///
    /// Waiting puts are woken in the order they started waiting, one per freed slot, and
    /// the slot is kept for the put it woke (see [`try_put`](Queue::try_put)): neither a
    /// `try_put` nor a put that has not waited yet can take it. The exception is one try
    /// that found the slot an instant before its hand-off was counted (a later slot's
    /// hand-off is counted before the slot is freed, so it cannot take two); the woken put
    /// then waits again for the next freed slot.
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
    /// let queue = tally_queue::Queue::bounded(1).unwrap();
    /// let id = block_on(queue.put("job")).unwrap();
    /// assert_eq!(queue.try_get().unwrap().succeed(), "job");
    /// assert_eq!(id.get(), 0);
    /// ```
    pub fn put(&self, item: T) -> Put<'_, T> {
        Put::new(&self.steward, item)
    }

    /// Puts `item` in the buffer if there is room now.
    ///
    /// # Errors
    ///
    /// The item comes back inside the error, checked in this order:
    /// [`TryPutError::ShutDown`], [`TryPutError::NoWorkers`], [`TryPutError::Full`].
    ///
    /// `Full` also when every free slot is kept for a waiting put that was woken for it and
    /// has not run yet: a `try_put` does not overtake a waiting [`put`](Queue::put).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// assert_eq!(queue.try_put('a').unwrap().get(), 0);
    /// assert!(matches!(queue.try_put('b'), Err(TryPutError::Full('b'))));
    /// queue.shutdown();
    /// // Shutdown is checked before fullness.
    /// assert!(matches!(queue.try_put('c'), Err(TryPutError::ShutDown('c'))));
    /// ```
    #[inline]
    pub fn try_put(&self, item: T) -> Result<JobId, TryPutError<T>> {
        self.steward.put(&mut Turn::none(), item)
    }

    /// Puts `item` in the buffer, blocking the thread while the queue is full.
    ///
    /// # Errors
    ///
    /// As [`put`](Queue::put): [`PutError::ShutDown`] or [`PutError::NoWorkers`] with the
    /// item inside.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::bounded(1).unwrap();
    /// std::thread::scope(|s| {
    ///     s.spawn(|| queue.put_blocking(1).unwrap());
    ///     s.spawn(|| queue.put_blocking(2).unwrap());
    ///     for _ in 0..2 {
    ///         queue.get_blocking().unwrap().succeed();
    ///     }
    /// });
    /// assert_eq!(queue.ledger().succeeded, 2);
    /// ```
    #[cfg(feature = "std")]
    pub fn put_blocking(&self, item: T) -> Result<JobId, PutError<T>> {
        self.put(item).wait()
    }

    /// As [`put_blocking`](Queue::put_blocking), giving up after `timeout`.
    ///
    /// The put is tried once more after the timeout, so a slot that came free while the
    /// thread slept is taken rather than reported as a timeout.
    ///
    /// # Errors
    ///
    /// As [`put_until`](Queue::put_until): [`PutTimeoutError::TimedOut`] with the item if no
    /// slot came free in time, or [`PutTimeoutError::ShutDown`] /
    /// [`PutTimeoutError::NoWorkers`] with the item.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// let refused = queue.put_blocking_timeout(2, Duration::from_millis(10));
    /// assert!(matches!(refused, Err(PutTimeoutError::TimedOut(2))));
    /// queue.try_get().unwrap().succeed();
    /// assert!(queue.put_blocking_timeout(2, Duration::from_millis(10)).is_ok());
    /// ```
    #[cfg(feature = "std")]
    pub fn put_blocking_timeout(
        &self,
        item: T,
        timeout: core::time::Duration,
    ) -> Result<JobId, PutTimeoutError<T>> {
        crate::wait::park::block_for(self.put(item), timeout)
    }

    /// Like [`put`](Self::put), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// As [`put`](Self::put) ([`PutTimeoutError::ShutDown`](crate::PutTimeoutError::ShutDown),
    /// [`PutTimeoutError::NoWorkers`](crate::PutTimeoutError::NoWorkers)), plus
    /// [`PutTimeoutError::TimedOut`](crate::PutTimeoutError::TimedOut) with the item if the
    /// deadline came before room did; a timed-out put accepted nothing.
    ///
    /// # Cancel safety
    ///
    /// As [`put`](Self::put).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put("first").unwrap();
    /// let refused = futures_lite::future::block_on(queue.put_until("second", async {}));
    /// assert!(matches!(refused, Err(PutTimeoutError::TimedOut("second"))));
    /// assert_eq!(queue.ledger().accepted, 1);
    /// ```
    pub fn put_until<D: Future>(&self, item: T, deadline: D) -> Until<Put<'_, T>, D> {
        Until::new(self.put(item), deadline)
    }
}

/// The future returned by [`Queue::put`]: resolves to the item's [`JobId`] once
/// accepted, or to a [`PutError`] holding the item.
///
/// Owns the item until it is accepted: dropping the future unresolved drops the item
/// and accepts nothing.
///
/// # Examples
///
/// ```
/// let queue = tally_queue::Queue::bounded(1).unwrap();
/// let put: tally_queue::futures::Put<'_, u8> = queue.put(1);
/// assert_eq!(futures_lite::future::block_on(put).unwrap().get(), 0);
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Put<'a, T> {
    steward: &'a Steward<T>,
    // `None` once the future has resolved.
    item: Option<T>,
    wait: Wait,
}

/// One try at putting `item` (`turn`: the putter holds a turn, see `turns.rs`); `None`
/// (with the item back in its slot) means "no room for this putter now, wait".
#[inline(always)]
fn attempt<T>(
    steward: &Steward<T>,
    turn: &mut Turn<'_>,
    item: &mut Option<T>,
) -> Option<Result<JobId, PutError<T>>> {
    let value = item.take().expect("`Put` polled after it completed");
    match steward.put(turn, value) {
        Ok(id) => Some(Ok(id)),
        Err(TryPutError::Full(value)) => {
            *item = Some(value);
            None
        }
        Err(TryPutError::ShutDown(value)) => Some(Err(PutError::ShutDown(value))),
        Err(TryPutError::NoWorkers(value)) => Some(Err(PutError::NoWorkers(value))),
    }
}

impl<'a, T> Put<'a, T> {
    pub(crate) fn new(steward: &'a Steward<T>, item: T) -> Self {
        Put {
            steward,
            item: Some(item),
            wait: Wait::default(),
        }
    }

    #[inline(always)]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<JobId, PutError<T>>> {
        let steward = self.steward;
        let item = &mut self.item;
        // The first attempt is inlined here (see `Wait::is_new`).
        if self.wait.is_new() {
            if let Some(ready) = attempt(steward, &mut Turn::none(), item) {
                return Poll::Ready(ready);
            }
        }
        self.wait
            .poll_registered(steward.raw().putters(), sleep, |turn| {
                attempt(steward, turn, item)
            })
    }

    /// Blocks the thread until the put resolves.
    #[cfg(feature = "std")]
    pub(crate) fn wait(mut self) -> Result<JobId, PutError<T>> {
        loop {
            if let Poll::Ready(done) = self.poll_with(&mut Sleep::Thread) {
                return done;
            }
        }
    }

    /// The deadline fired: one last try; if there is still no room, the registration is
    /// given up and the item comes back as [`PutTimeoutError::TimedOut`].
    pub(crate) fn last_try(&mut self) -> Result<JobId, PutTimeoutError<T>> {
        let steward = self.steward;
        let item = &mut self.item;
        match self
            .wait
            .last_try(steward.raw().putters(), |turn| attempt(steward, turn, item))
        {
            Some(done) => done.map_err(PutTimeoutError::from),
            None => Err(PutTimeoutError::TimedOut(
                item.take()
                    .expect("a put that has not resolved still owns its item"),
            )),
        }
    }
}

impl<T> Future for Put<'_, T> {
    type Output = Result<JobId, PutError<T>>;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// `Put` owns no pinned data: the item moves with the future.
impl<T> Unpin for Put<'_, T> {}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
impl<T> Drop for Put<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Only a put that waited holds a registration: the common drop is this check, and
        // the release stays out of line, so the drop is inlined where the future ends.
        if !self.wait.is_new() {
            release(&mut self.wait, self.steward);
        }
    }
}

/// Gives up a put's registration (see [`Wait::release`]).
#[cold]
#[inline(never)]
fn release<T>(wait: &mut Wait, steward: &Steward<T>) {
    wait.release(|| steward.raw().putters());
}

impl<T> fmt::Debug for Put<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Put { .. }")
    }
}

impl<T> Operation for Put<'_, T> {
    type Timed = Result<JobId, PutTimeoutError<T>>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(PutTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        self.last_try()
    }
}
