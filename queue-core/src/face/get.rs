//! The futures returned by [`Queue::get`] and [`Queue::get_owned`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::engine::Handout;
use crate::error::{GetError, GetTimeoutError, TryGetError};
use crate::fate::Steward;
use crate::handle::delivery::Delivery;
use crate::queue::Queue;
use crate::wait::deadline::{Operation, Until};
use crate::wait::registration::{Sleep, Wait};
use crate::wait::turn::Turn;

#[cfg(target_has_atomic = "ptr")]
use crate::handle::delivery::OwnedDelivery;

impl<T> Queue<T> {
    /// Waits for an item and delivers it.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and its
    /// buffer is empty. Items buffered before a graceful shutdown are still delivered.
    ///
    /// Under [`AbandonPolicy::Redeliver`], a delivery in flight may still come back, so
    /// after a graceful shutdown a get on the empty queue waits until nothing is unfinished
    /// (then `ShutDown`) or a redelivered item arrives. A task that holds a delivery and
    /// gets again waits on itself: end a delivery before the next get.
    ///
    /// # Cancel safety
    ///
    /// Cancel-safe: the item is taken out of the buffer only in the poll that returns it,
    /// so a dropped `get` never loses an item (it stays buffered for another getter), and a
    /// wake-up it received passes to the next waiting getter.
    ///
    /// # Fairness
    ///
    /// Waiting gets are woken in the order they started waiting, one per item put, and the
    /// item is kept for the get it woke: neither [`try_get`](Queue::try_get) nor a get that
    /// has not waited yet can take it (they take only items beyond those kept). The
    /// exception is one try that found the item an instant before its hand-off was counted
    /// (a later item's hand-off is counted before the item is put, so it cannot take two);
    /// the woken get then waits again for the next item. A woken get does not lose its
    /// claim by being slow; dropped, it passes it on.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_lite::future::block_on;
    ///
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(42).unwrap();
    /// let delivery = block_on(queue.get()).unwrap();
    /// assert_eq!(*delivery, 42);
    /// delivery.succeed();
    /// ```
    ///
    /// [`AbandonPolicy::Redeliver`]: crate::AbandonPolicy::Redeliver
    pub fn get(&self) -> Get<'_, T> {
        Get::new(&self.steward)
    }

    /// Delivers an item if one is buffered now.
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`] if the buffer is empty and the queue open, or if every
    /// buffered item is kept for a waiting get that was woken for it and has not run yet (a
    /// `try_get` does not overtake a waiting [`get`](Queue::get)); [`TryGetError::ShutDown`]
    /// if it is empty and shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryGetError};
    ///
    /// let queue = Queue::unbounded();
    /// assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    /// queue.try_put("x").unwrap();
    /// queue.try_get().unwrap().succeed();
    /// ```
    pub fn try_get(&self) -> Result<Delivery<'_, T>, TryGetError> {
        let steward = &self.steward;
        steward.take(&mut Turn::none(), |handout, item| {
            Delivery::new(steward, handout, item)
        })
    }

    /// Delivers an item, blocking the thread until one is buffered.
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and
    /// its buffer is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = tally_queue::Queue::unbounded();
    /// queue.try_put(1).unwrap();
    /// queue.shutdown();
    /// assert_eq!(queue.get_blocking().unwrap().succeed(), 1);
    /// assert!(queue.get_blocking().is_err());
    /// ```
    #[cfg(feature = "std")]
    pub fn get_blocking(&self) -> Result<Delivery<'_, T>, crate::GetError> {
        self.get().wait()
    }

    /// As [`get_blocking`](Queue::get_blocking), giving up after `timeout`.
    ///
    /// The get is tried once more after the timeout, so an item that arrived while the
    /// thread slept is delivered rather than reported as a timeout.
    ///
    /// # Errors
    ///
    /// As [`get_until`](Queue::get_until):
    /// [`GetTimeoutError::TimedOut`](crate::GetTimeoutError::TimedOut) or
    /// [`GetTimeoutError::ShutDown`](crate::GetTimeoutError::ShutDown).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Queue::unbounded();
    /// let waited = queue.get_blocking_timeout(Duration::from_millis(10));
    /// assert_eq!(waited.unwrap_err(), GetTimeoutError::TimedOut);
    /// queue.try_put("job").unwrap();
    /// let job = queue.get_blocking_timeout(Duration::from_millis(10)).unwrap();
    /// assert_eq!(job.succeed(), "job");
    /// ```
    #[cfg(feature = "std")]
    pub fn get_blocking_timeout(
        &self,
        timeout: core::time::Duration,
    ) -> Result<Delivery<'_, T>, crate::GetTimeoutError> {
        crate::wait::park::block_for(self.get(), timeout)
    }

    /// Like [`get`](Self::get), but gives up when `deadline` (any future) completes first.
    ///
    /// # Errors
    ///
    /// [`GetTimeoutError::ShutDown`](crate::GetTimeoutError::ShutDown) once the queue is
    /// shut down and empty, or [`GetTimeoutError::TimedOut`](crate::GetTimeoutError::TimedOut)
    /// if the deadline came first.
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Self::get): no item is lost.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Queue::<u8>::unbounded();
    /// let result = futures_lite::future::block_on(queue.get_until(async {}));
    /// assert_eq!(result.unwrap_err(), GetTimeoutError::TimedOut);
    /// ```
    pub fn get_until<D: Future>(&self, deadline: D) -> Until<Get<'_, T>, D> {
        Until::new(self.get(), deadline)
    }

    /// As [`get`](Queue::get), for a queue in an `Arc`: the delivery owns a clone of the
    /// `Arc`, so it can move into a `'static` task.
    ///
    /// Only on targets with pointer-sized atomic compare-and-swap (where `alloc::sync::Arc`
    /// exists).
    ///
    /// # Errors
    ///
    /// [`GetError::ShutDown`](crate::GetError::ShutDown) once the queue is shut down and
    /// its buffer is empty.
    ///
    /// # Cancel safety
    ///
    /// As [`get`](Queue::get): a dropped `get_owned` never loses an item.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use futures_lite::future::block_on;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(3).unwrap();
    /// let delivery = block_on(queue.get_owned()).unwrap();
    /// std::thread::spawn(move || delivery.succeed()).join().unwrap();
    /// assert_eq!(queue.ledger().succeeded, 1);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn get_owned(self: &Arc<Self>) -> GetOwned<T> {
        GetOwned::new(Arc::clone(self))
    }

    /// As [`try_get`](Queue::try_get), returning an [`OwnedDelivery`].
    ///
    /// # Errors
    ///
    /// [`TryGetError::Empty`] or [`TryGetError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// let queue = Arc::new(tally_queue::Queue::unbounded());
    /// queue.try_put(3).unwrap();
    /// let delivery = queue.try_get_owned().unwrap();
    /// assert_eq!(delivery.succeed(), 3);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn try_get_owned(self: &Arc<Self>) -> Result<OwnedDelivery<T>, TryGetError> {
        self.steward.take(&mut Turn::none(), |handout, item| {
            OwnedDelivery::new(Arc::clone(self), handout, item)
        })
    }

    /// Like [`get_owned`](Self::get_owned), but gives up when `deadline` (any future)
    /// completes first.
    ///
    /// # Errors
    ///
    /// As [`get_until`](Self::get_until).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tally_queue::{GetTimeoutError, Queue};
    ///
    /// let queue = Arc::new(Queue::<u8>::unbounded());
    /// let result = futures_lite::future::block_on(queue.get_owned_until(async {}));
    /// assert_eq!(result.unwrap_err(), GetTimeoutError::TimedOut);
    /// ```
    #[cfg(target_has_atomic = "ptr")]
    pub fn get_owned_until<D: Future>(self: &Arc<Self>, deadline: D) -> Until<GetOwned<T>, D> {
        Until::new(self.get_owned(), deadline)
    }
}

/// The shared body of both get futures: take an item (wrapped in its delivery before any
/// waker runs), or wait on the getters' event. The first attempt is inlined here (see
/// [`Wait::is_new`]).
#[inline(always)]
fn poll_take<T, D>(
    steward: &Steward<T>,
    wait: &mut Wait,
    sleep: &mut Sleep<'_, '_>,
    wrap: impl Fn(Handout, T) -> D,
) -> Poll<Result<D, GetError>> {
    if wait.is_new() {
        if let Some(ready) = attempt(steward, &mut Turn::none(), &wrap) {
            return Poll::Ready(ready);
        }
    }
    wait.poll_registered(steward.raw().getters(), sleep, |turn| {
        attempt(steward, turn, &wrap)
    })
}

/// One try at taking an item (`turn`: the getter holds a turn, see `turns.rs`); `None`
/// means "nothing for this getter now, wait".
#[inline(always)]
fn attempt<T, D>(
    steward: &Steward<T>,
    turn: &mut Turn<'_>,
    wrap: impl Fn(Handout, T) -> D,
) -> Option<Result<D, GetError>> {
    match steward.take(turn, wrap) {
        Ok(delivery) => Some(Ok(delivery)),
        Err(TryGetError::ShutDown) => Some(Err(GetError::ShutDown)),
        Err(TryGetError::Empty) => None,
    }
}

/// The future returned by [`Queue::get`]: resolves to a [`Delivery`], or to
/// [`GetError::ShutDown`] once the queue is shut down and empty.
///
/// Cancel-safe: an item leaves the buffer only in the poll that returns it.
///
/// # Examples
///
/// ```
/// let queue = tally_queue::Queue::unbounded();
/// queue.try_put(1).unwrap();
/// let get: tally_queue::futures::Get<'_, i32> = queue.get();
/// futures_lite::future::block_on(get).unwrap().succeed();
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Get<'a, T> {
    steward: &'a Steward<T>,
    wait: Wait,
}

impl<'a, T> Get<'a, T> {
    pub(crate) fn new(steward: &'a Steward<T>) -> Self {
        Get {
            steward,
            wait: Wait::default(),
        }
    }

    #[inline(always)]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<Delivery<'a, T>, GetError>> {
        let steward = self.steward;
        poll_take(steward, &mut self.wait, sleep, |handout, item| {
            Delivery::new(steward, handout, item)
        })
    }

    /// Blocks the thread until the get resolves.
    #[cfg(feature = "std")]
    pub(crate) fn wait(mut self) -> Result<Delivery<'a, T>, GetError> {
        loop {
            if let Poll::Ready(done) = self.poll_with(&mut Sleep::Thread) {
                return done;
            }
        }
    }

    /// The deadline fired: one last try, then the registration is given up.
    pub(crate) fn last_try(&mut self) -> Option<Result<Delivery<'a, T>, GetError>> {
        let steward = self.steward;
        self.wait.last_try(steward.raw().getters(), |turn| {
            attempt(steward, turn, |handout, item| {
                Delivery::new(steward, handout, item)
            })
        })
    }
}

impl<'a, T> Future for Get<'a, T> {
    type Output = Result<Delivery<'a, T>, GetError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
impl<T> Drop for Get<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Only a get that waited holds a registration: the common drop is this check, and
        // the release stays out of line, so the drop is inlined where the future ends.
        if !self.wait.is_new() {
            release(&mut self.wait, self.steward);
        }
    }
}

/// Gives up a get's registration (see [`Wait::release`]).
#[cold]
#[inline(never)]
fn release<T>(wait: &mut Wait, steward: &Steward<T>) {
    wait.release(|| steward.raw().getters());
}

impl<T> fmt::Debug for Get<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Get { .. }")
    }
}

/// The future returned by [`Queue::get_owned`]: as [`Get`], resolving to an
/// [`OwnedDelivery`] that can move into a `'static` task.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
///
/// let queue = Arc::new(tally_queue::Queue::unbounded());
/// queue.try_put(1).unwrap();
/// let get: tally_queue::futures::GetOwned<i32> = queue.get_owned();
/// futures_lite::future::block_on(get).unwrap().succeed();
/// ```
#[cfg(target_has_atomic = "ptr")]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct GetOwned<T> {
    queue: Arc<Queue<T>>,
    wait: Wait,
}

#[cfg(target_has_atomic = "ptr")]
impl<T> GetOwned<T> {
    pub(crate) fn new(queue: Arc<Queue<T>>) -> Self {
        GetOwned {
            queue,
            wait: Wait::default(),
        }
    }

    #[inline(always)]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<OwnedDelivery<T>, GetError>> {
        let queue = &self.queue;
        poll_take(&queue.steward, &mut self.wait, sleep, |handout, item| {
            OwnedDelivery::new(Arc::clone(queue), handout, item)
        })
    }

    /// The deadline fired: one last try, then the registration is given up.
    pub(crate) fn last_try(&mut self) -> Option<Result<OwnedDelivery<T>, GetError>> {
        let queue = &self.queue;
        self.wait.last_try(queue.steward.raw().getters(), |turn| {
            attempt(&queue.steward, turn, |handout, item| {
                OwnedDelivery::new(Arc::clone(queue), handout, item)
            })
        })
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Future for GetOwned<T> {
    type Output = Result<OwnedDelivery<T>, GetError>;

    #[inline]
    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
#[cfg(target_has_atomic = "ptr")]
impl<T> Drop for GetOwned<T> {
    #[inline]
    fn drop(&mut self) {
        // As for `Get`.
        if !self.wait.is_new() {
            release(&mut self.wait, &self.queue.steward);
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for GetOwned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GetOwned { .. }")
    }
}

impl<'a, T> Operation for Get<'a, T> {
    type Timed = Result<Delivery<'a, T>, GetTimeoutError>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(GetTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        match self.last_try() {
            Some(done) => Self::in_time(done),
            None => Err(GetTimeoutError::TimedOut),
        }
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> Operation for GetOwned<T> {
    type Timed = Result<OwnedDelivery<T>, GetTimeoutError>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(GetTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        match self.last_try() {
            Some(done) => Self::in_time(done),
            None => Err(GetTimeoutError::TimedOut),
        }
    }
}
