//! The futures returned by [`Queue::get`] and [`Queue::get_owned`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

#[cfg(target_has_atomic = "ptr")]
use alloc::sync::Arc;

use crate::delivery::Delivery;
use crate::delivery::Handout;
use crate::error::{GetError, TryGetError};
use crate::queue::Queue;
use crate::wait::{Sleep, Wait};

#[cfg(target_has_atomic = "ptr")]
use crate::delivery::OwnedDelivery;

/// The shared body of both get futures: take an item (wrapped in its delivery before any
/// waker runs), or wait on the getters' event. The first attempt is inlined here (see
/// [`Wait::is_new`]).
#[inline(always)]
fn poll_take<T, D>(
    queue: &Queue<T>,
    wait: &mut Wait,
    sleep: &mut Sleep<'_, '_>,
    wrap: impl Fn(Handout, T) -> D,
) -> Poll<Result<D, GetError>> {
    if wait.is_new() {
        if let Some(ready) = attempt(queue, false, &wrap) {
            return Poll::Ready(ready);
        }
    }
    wait.poll_registered(queue.getters(), sleep, |turn| attempt(queue, turn, &wrap))
}

/// One try at taking an item (`turn`: the getter holds a turn, see `turns.rs`); `None`
/// means "nothing for this getter now, wait".
#[inline(always)]
fn attempt<T, D>(
    queue: &Queue<T>,
    turn: bool,
    wrap: impl Fn(Handout, T) -> D,
) -> Option<Result<D, GetError>> {
    match queue.take(turn, wrap) {
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
    queue: &'a Queue<T>,
    wait: Wait,
}

impl<'a, T> Get<'a, T> {
    pub(crate) fn new(queue: &'a Queue<T>) -> Self {
        Get {
            queue,
            wait: Wait::default(),
        }
    }

    #[inline(always)]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<Delivery<'a, T>, GetError>> {
        let queue = self.queue;
        poll_take(queue, &mut self.wait, sleep, |id, item| {
            Delivery::new(queue, id, item)
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
        let queue = self.queue;
        self.wait.last_try(queue.getters(), |turn| {
            attempt(queue, turn, |id, item| Delivery::new(queue, id, item))
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
        self.wait.release(|| self.queue.getters());
    }
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
        poll_take(queue, &mut self.wait, sleep, |id, item| {
            OwnedDelivery::new(Arc::clone(queue), id, item)
        })
    }

    /// The deadline fired: one last try, then the registration is given up.
    pub(crate) fn last_try(&mut self) -> Option<Result<OwnedDelivery<T>, GetError>> {
        let queue = &self.queue;
        self.wait.last_try(queue.getters(), |turn| {
            attempt(queue, turn, |id, item| {
                OwnedDelivery::new(Arc::clone(queue), id, item)
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
    fn drop(&mut self) {
        self.wait.release(|| self.queue.getters());
    }
}

#[cfg(target_has_atomic = "ptr")]
impl<T> fmt::Debug for GetOwned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GetOwned { .. }")
    }
}
