//! The future returned by [`Queue::put`].

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use crate::error::{PutError, PutTimeoutError, TryPutError};
use crate::job_id::JobId;
use crate::queue::Queue;
use crate::wait::{Sleep, Wait};

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
    queue: &'a Queue<T>,
    // `None` once the future has resolved.
    item: Option<T>,
    wait: Wait,
}

/// One try at putting `item` (`turn`: the putter holds a turn, see `turns.rs`); `None`
/// (with the item back in its slot) means "no room for this putter now, wait".
#[inline(always)]
fn attempt<T>(
    queue: &Queue<T>,
    turn: bool,
    item: &mut Option<T>,
) -> Option<Result<JobId, PutError<T>>> {
    let value = item.take().expect("`Put` polled after it completed");
    match queue.put_now(turn, value) {
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
    pub(crate) fn new(queue: &'a Queue<T>, item: T) -> Self {
        Put {
            queue,
            item: Some(item),
            wait: Wait::default(),
        }
    }

    #[inline(always)]
    fn poll_with(&mut self, sleep: &mut Sleep<'_, '_>) -> Poll<Result<JobId, PutError<T>>> {
        let queue = self.queue;
        let item = &mut self.item;
        // The first attempt is inlined here (see `Wait::is_new`).
        if self.wait.is_new() {
            if let Some(ready) = attempt(queue, false, item) {
                return Poll::Ready(ready);
            }
        }
        self.wait
            .poll_registered(queue.putters(), sleep, |turn| attempt(queue, turn, item))
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
        let queue = self.queue;
        let item = &mut self.item;
        match self
            .wait
            .last_try(queue.putters(), |turn| attempt(queue, turn, item))
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

    #[inline]
    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().poll_with(&mut Sleep::Task(context))
    }
}

// `Put` owns no pinned data: the item moves with the future.
impl<T> Unpin for Put<'_, T> {}

// A future dropped while it waits counts its waiter out and passes on its wake-up.
impl<T> Drop for Put<'_, T> {
    fn drop(&mut self) {
        self.wait.release(|| self.queue.putters());
    }
}

impl<T> fmt::Debug for Put<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Put { .. }")
    }
}
