//! The named futures returned by [`FixedQueue`](super::FixedQueue)'s waiting methods:
//! [`FixedPut`], [`FixedGet`] and [`FixedJoin`], each over the one wait loop of `wait.rs`.
//! Their `_until` forms are [`Until`](crate::futures::Until) over these.
//!
//! # Examples
//!
//! ```
//! use tally_queue::fixed::{futures::FixedJoin, FixedQueue};
//!
//! let queue = FixedQueue::<u8, 2>::new();
//! let join: FixedJoin<'_, u8> = queue.join();
//! assert_eq!(format!("{join:?}"), "FixedJoin { .. }");
//! assert_eq!(futures_lite::future::block_on(join).unwrap().accepted, 0);
//! ```

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use super::delivery::FixedDelivery;
use super::error::{
    FixedGetError, FixedGetTimeoutError, FixedJoinTimeoutError, FixedPutError,
    FixedPutTimeoutError, NoWaiterSlot,
};
use super::raw::Raw;
use super::wait::FixedWait;
use crate::error::{JoinTimedOut, TryGetError, TryPutError};
use crate::job_id::JobId;
use crate::ledger::Ledger;
use crate::wait::deadline::Operation;
use crate::wait::turn::Turn;

// ---------------------------------------------------------------------------------- put

/// The future returned by [`FixedQueue::put`](super::FixedQueue::put): resolves to the
/// item's [`JobId`] once accepted, or to a [`FixedPutError`] holding the item.
///
/// Owns the item until it is accepted: dropping the future unresolved drops the item and
/// accepts nothing, and gives its putter slot back.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{futures::FixedPut, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// let put: FixedPut<'_, u8> = queue.put(1);
/// assert_eq!(format!("{put:?}"), "FixedPut { .. }");
/// assert_eq!(futures_lite::future::block_on(put).unwrap().get(), 0);
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct FixedPut<'a, T> {
    raw: Raw<'a, T>,
    /// `None` once the future has resolved.
    item: Option<T>,
    wait: FixedWait,
}

/// One try at putting `item`; `None` (with the item back in place) means "no room for this
/// putter now, wait".
#[inline(always)]
fn put_attempt<T>(
    raw: Raw<'_, T>,
    turn: &mut Turn<'_>,
    item: &mut Option<T>,
) -> Option<Result<JobId, FixedPutError<T>>> {
    let value = item.take().expect("`FixedPut` polled after it completed");
    match raw.put(turn, value) {
        Ok(id) => Some(Ok(id)),
        Err(TryPutError::Full(value)) => {
            *item = Some(value);
            None
        }
        Err(refused) => Some(Err(FixedPutError::ShutDown(refused.into_inner()))),
    }
}

impl<'a, T> FixedPut<'a, T> {
    pub(crate) fn new(raw: Raw<'a, T>, item: T) -> Self {
        FixedPut {
            raw,
            item: Some(item),
            wait: FixedWait::new(),
        }
    }
}

impl<T> Future for FixedPut<'_, T> {
    type Output = Result<JobId, FixedPutError<T>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let raw = this.raw;
        let item = &mut this.item;
        this.wait
            .poll(raw.putters(), cx.waker(), |turn| {
                put_attempt(raw, turn, item)
            })
            .map(|done| match done {
                Ok(done) => done,
                Err(NoWaiterSlot { .. }) => Err(FixedPutError::NoWaiterSlot(
                    item.take()
                        .expect("a put that has not resolved still owns its item"),
                )),
            })
    }
}

// `FixedPut` owns no pinned data: the item moves with the future.
impl<T> Unpin for FixedPut<'_, T> {}

impl<T> Drop for FixedPut<'_, T> {
    fn drop(&mut self) {
        if !self.wait.is_idle() {
            self.wait.release(self.raw.putters());
        }
    }
}

impl<T> fmt::Debug for FixedPut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FixedPut { .. }")
    }
}

impl<T> Operation for FixedPut<'_, T> {
    type Timed = Result<JobId, FixedPutTimeoutError<T>>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(FixedPutTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        let raw = self.raw;
        let item = &mut self.item;
        match self
            .wait
            .last_try(raw.putters(), |turn| put_attempt(raw, turn, item))
        {
            Some(done) => done.map_err(FixedPutTimeoutError::from),
            None => Err(FixedPutTimeoutError::TimedOut(
                item.take()
                    .expect("a put that has not resolved still owns its item"),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------- get

/// The future returned by [`FixedQueue::get`](super::FixedQueue::get): resolves to a
/// [`FixedDelivery`], or to a [`FixedGetError`].
///
/// The item is taken out of the buffer only in the poll that returns it, so a dropped
/// `FixedGet` never loses an item; it gives its getter slot back, and a hand-off it was
/// woken for passes to the next waiting getter.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{futures::FixedGet, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// queue.try_put(3).unwrap();
/// let get: FixedGet<'_, u8> = queue.get();
/// assert_eq!(futures_lite::future::block_on(get).unwrap().succeed(), 3);
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct FixedGet<'a, T> {
    raw: Raw<'a, T>,
    wait: FixedWait,
}

/// One try at taking an item; `None` means "nothing for this getter now, wait".
#[inline(always)]
fn get_attempt<'a, T>(
    raw: Raw<'a, T>,
    turn: &mut Turn<'_>,
) -> Option<Result<FixedDelivery<'a, T>, FixedGetError>> {
    match raw.take(turn, |id, item| FixedDelivery::new(raw, id, item)) {
        Ok(delivery) => Some(Ok(delivery)),
        Err(TryGetError::Empty) => None,
        Err(TryGetError::ShutDown) => Some(Err(FixedGetError::ShutDown)),
    }
}

impl<'a, T> FixedGet<'a, T> {
    pub(crate) fn new(raw: Raw<'a, T>) -> Self {
        FixedGet {
            raw,
            wait: FixedWait::new(),
        }
    }
}

impl<'a, T> Future for FixedGet<'a, T> {
    type Output = Result<FixedDelivery<'a, T>, FixedGetError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let raw = this.raw;
        this.wait
            .poll(raw.getters(), cx.waker(), |turn| get_attempt(raw, turn))
            .map(|done| done.unwrap_or_else(|refused| Err(FixedGetError::NoWaiterSlot(refused))))
    }
}

impl<T> Drop for FixedGet<'_, T> {
    fn drop(&mut self) {
        if !self.wait.is_idle() {
            self.wait.release(self.raw.getters());
        }
    }
}

impl<T> fmt::Debug for FixedGet<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FixedGet { .. }")
    }
}

impl<'a, T> Operation for FixedGet<'a, T> {
    type Timed = Result<FixedDelivery<'a, T>, FixedGetTimeoutError>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(FixedGetTimeoutError::from)
    }

    fn timed_out(&mut self) -> Self::Timed {
        let raw = self.raw;
        match self
            .wait
            .last_try(raw.getters(), |turn| get_attempt(raw, turn))
        {
            Some(done) => done.map_err(FixedGetTimeoutError::from),
            None => Err(FixedGetTimeoutError::TimedOut),
        }
    }
}

// --------------------------------------------------------------------------------- join

/// The future returned by [`FixedQueue::join`](super::FixedQueue::join): resolves to the
/// [`Ledger`] once every accepted item has ended, or to [`NoWaiterSlot`].
///
/// Level-triggered: it checks the count itself after every wake-up. Dropping it gives its
/// joiner slot back and changes nothing else.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{futures::FixedJoin, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// queue.try_put(1).unwrap();
/// queue.try_get().unwrap().reject();
/// let join: FixedJoin<'_, u8> = queue.join();
/// assert_eq!(futures_lite::future::block_on(join).unwrap().rejected, 1);
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct FixedJoin<'a, T> {
    raw: Raw<'a, T>,
    wait: FixedWait,
}

/// The ledger, if nothing is unfinished.
#[inline]
fn join_attempt<T>(raw: Raw<'_, T>) -> Option<Ledger> {
    (raw.unfinished() == 0).then(|| raw.ledger())
}

impl<'a, T> FixedJoin<'a, T> {
    pub(crate) fn new(raw: Raw<'a, T>) -> Self {
        FixedJoin {
            raw,
            wait: FixedWait::new(),
        }
    }
}

impl<T> Future for FixedJoin<'_, T> {
    type Output = Result<Ledger, NoWaiterSlot>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let raw = this.raw;
        this.wait
            .poll(raw.joiners(), cx.waker(), |_| join_attempt(raw))
    }
}

impl<T> Drop for FixedJoin<'_, T> {
    fn drop(&mut self) {
        if !self.wait.is_idle() {
            self.wait.release(self.raw.joiners());
        }
    }
}

impl<T> fmt::Debug for FixedJoin<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FixedJoin { .. }")
    }
}

impl<T> Operation for FixedJoin<'_, T> {
    type Timed = Result<Ledger, FixedJoinTimeoutError>;

    fn in_time(output: Self::Output) -> Self::Timed {
        output.map_err(FixedJoinTimeoutError::NoWaiterSlot)
    }

    fn timed_out(&mut self) -> Self::Timed {
        let raw = self.raw;
        match self.wait.last_try(raw.joiners(), |_| join_attempt(raw)) {
            Some(ledger) => Ok(ledger),
            None => Err(FixedJoinTimeoutError::TimedOut(JoinTimedOut {
                ledger: raw.ledger(),
            })),
        }
    }
}
