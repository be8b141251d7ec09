//! The errors of the fixed tier's waits: those of the heap queue, plus the refusal of a
//! wait that finds every waiter slot of its kind taken. None of them allocates.

use core::fmt;

use crate::error::{put_error, GetError, JoinTimedOut};

/// A wait found every waiter slot of its kind taken (getters, putters or joiners).
///
/// A [`FixedQueue`](super::FixedQueue) has `W` slots of each kind (its last const
/// parameter). A wait holds one only while it waits, so a later wait finds one free once
/// another finishes or is dropped; a wait that can finish at once (an item is there, room
/// is there, nothing is unfinished) needs none.
///
/// # Examples
///
/// ```
/// use core::future::Future;
/// use core::pin::pin;
/// use core::task::{Context, Waker};
/// use tally_queue::fixed::{FixedGetError, FixedQueue, NoWaiterSlot};
///
/// let queue = FixedQueue::<u8, 2, 1>::new();
/// let mut cx = Context::from_waker(Waker::noop());
/// let mut first = pin!(queue.get());
/// assert!(first.as_mut().poll(&mut cx).is_pending()); // holds the only getter slot
/// let second = futures_lite::future::block_on(queue.get()).unwrap_err();
/// assert_eq!(second, FixedGetError::NoWaiterSlot(NoWaiterSlot { slots: 1 }));
/// assert_eq!(
///     second.to_string(),
///     "every waiter slot of its kind is taken (the queue has 1 per kind)"
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NoWaiterSlot {
    /// How many slots the queue has for each kind of waiter.
    pub slots: usize,
}

impl fmt::Display for NoWaiterSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "every waiter slot of its kind is taken (the queue has {} per kind)",
            self.slots
        )
    }
}

impl core::error::Error for NoWaiterSlot {}

put_error! {
    /// A [`FixedQueue::put`](super::FixedQueue::put) was refused; the item comes back
    /// inside. A waiting put is never refused for being full: it waits (in a slot).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::{FixedPutError, FixedQueue};
    ///
    /// let queue = FixedQueue::<&str, 2>::new();
    /// queue.shutdown();
    /// let err = futures_lite::future::block_on(queue.put("late")).unwrap_err();
    /// assert!(matches!(err, FixedPutError::ShutDown("late")));
    /// assert_eq!(err.to_string(), "queue is shut down");
    /// ```
    pub enum FixedPutError {
        /// The queue is or got shut down (a put waiting on a full queue is woken by either
        /// kind of shutdown).
        ShutDown => is_shut_down, "queue is shut down",
        /// The queue was full and every putter slot was taken ([`NoWaiterSlot`]).
        NoWaiterSlot => is_no_waiter_slot, "queue is full and every putter slot is taken",
    }
    into_inner: "```\nuse tally_queue::fixed::FixedQueue;\n\nlet queue = FixedQueue::<u8, 2>::new();\nqueue.shutdown();\nlet refused = futures_lite::future::block_on(queue.put(5)).unwrap_err();\nassert_eq!(refused.into_inner(), 5);\n```"
}

put_error! {
    /// A [`FixedQueue::put_until`](super::FixedQueue::put_until) was refused or timed out;
    /// the item comes back inside, and nothing was accepted.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::fixed::{FixedPutTimeoutError, FixedQueue};
    ///
    /// let queue = FixedQueue::<u8, 2>::new();
    /// queue.try_put(1).unwrap();
    /// queue.try_put(2).unwrap();
    /// let err = futures_lite::future::block_on(queue.put_until(3, async {})).unwrap_err();
    /// assert!(matches!(err, FixedPutTimeoutError::TimedOut(3)));
    /// assert_eq!(err.to_string(), "timed out waiting for room in the queue");
    /// ```
    pub enum FixedPutTimeoutError {
        /// The deadline came before room did.
        TimedOut => is_timed_out, "timed out waiting for room in the queue",
        /// As [`FixedPutError::ShutDown`].
        ShutDown => is_shut_down, "queue is shut down",
        /// As [`FixedPutError::NoWaiterSlot`].
        NoWaiterSlot => is_no_waiter_slot, "queue is full and every putter slot is taken",
    }
    into_inner: "```\nuse tally_queue::fixed::FixedQueue;\n\nlet queue = FixedQueue::<u8, 2>::new();\nqueue.try_put(1).unwrap();\nqueue.try_put(2).unwrap();\nlet refused = futures_lite::future::block_on(queue.put_until(5, async {})).unwrap_err();\nassert_eq!(refused.into_inner(), 5);\n```"
}

impl<T> From<FixedPutError<T>> for FixedPutTimeoutError<T> {
    fn from(error: FixedPutError<T>) -> Self {
        match error {
            FixedPutError::ShutDown(item) => FixedPutTimeoutError::ShutDown(item),
            FixedPutError::NoWaiterSlot(item) => FixedPutTimeoutError::NoWaiterSlot(item),
        }
    }
}

/// A [`FixedQueue::get`](super::FixedQueue::get) ended without an item.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{FixedGetError, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// queue.shutdown();
/// let err = futures_lite::future::block_on(queue.get()).unwrap_err();
/// assert_eq!(err, FixedGetError::ShutDown);
/// assert_eq!(err.to_string(), "queue is shut down and empty");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedGetError {
    /// The queue is shut down and its buffer is empty: nothing will ever arrive.
    ShutDown,
    /// The queue was empty and every getter slot was taken.
    NoWaiterSlot(NoWaiterSlot),
}

impl From<GetError> for FixedGetError {
    fn from(error: GetError) -> Self {
        match error {
            GetError::ShutDown => FixedGetError::ShutDown,
        }
    }
}

impl fmt::Display for FixedGetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixedGetError::ShutDown => fmt::Display::fmt(&GetError::ShutDown, f),
            FixedGetError::NoWaiterSlot(refused) => fmt::Display::fmt(refused, f),
        }
    }
}

impl core::error::Error for FixedGetError {}

/// A [`FixedQueue::get_until`](super::FixedQueue::get_until) that got no item.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{FixedGetTimeoutError, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// let err = futures_lite::future::block_on(queue.get_until(async {})).unwrap_err();
/// assert_eq!(err, FixedGetTimeoutError::TimedOut);
/// assert_eq!(err.to_string(), "timed out waiting for an item");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedGetTimeoutError {
    /// The deadline came before an item.
    TimedOut,
    /// As [`FixedGetError::ShutDown`].
    ShutDown,
    /// As [`FixedGetError::NoWaiterSlot`].
    NoWaiterSlot(NoWaiterSlot),
}

impl From<FixedGetError> for FixedGetTimeoutError {
    fn from(error: FixedGetError) -> Self {
        match error {
            FixedGetError::ShutDown => FixedGetTimeoutError::ShutDown,
            FixedGetError::NoWaiterSlot(refused) => FixedGetTimeoutError::NoWaiterSlot(refused),
        }
    }
}

impl fmt::Display for FixedGetTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixedGetTimeoutError::TimedOut => f.write_str("timed out waiting for an item"),
            FixedGetTimeoutError::ShutDown => fmt::Display::fmt(&GetError::ShutDown, f),
            FixedGetTimeoutError::NoWaiterSlot(refused) => fmt::Display::fmt(refused, f),
        }
    }
}

impl core::error::Error for FixedGetTimeoutError {}

/// A [`FixedQueue::join_until`](super::FixedQueue::join_until) that returned before every
/// accepted item had ended.
///
/// # Examples
///
/// ```
/// use tally_queue::fixed::{FixedJoinTimeoutError, FixedQueue};
///
/// let queue = FixedQueue::<u8, 2>::new();
/// queue.try_put(1).unwrap();
/// let err = futures_lite::future::block_on(queue.join_until(async {})).unwrap_err();
/// let FixedJoinTimeoutError::TimedOut(late) = err else { unreachable!() };
/// assert_eq!(late.ledger().buffered, 1);
/// assert_eq!(err.to_string(), "timed out with 1 job unfinished");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedJoinTimeoutError {
    /// The deadline came first; holds the ledger as it stood then.
    TimedOut(JoinTimedOut),
    /// Items were unfinished and every joiner slot was taken.
    NoWaiterSlot(NoWaiterSlot),
}

impl fmt::Display for FixedJoinTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixedJoinTimeoutError::TimedOut(late) => fmt::Display::fmt(late, f),
            FixedJoinTimeoutError::NoWaiterSlot(refused) => fmt::Display::fmt(refused, f),
        }
    }
}

impl core::error::Error for FixedJoinTimeoutError {}
