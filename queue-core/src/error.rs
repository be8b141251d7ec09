//! Errors. A refused item always comes back inside the error.

use core::fmt;

use crate::ledger::Ledger;

/// [`Queue::bounded`](crate::Queue::bounded) was asked for a capacity of zero.
///
/// A zero capacity is refused rather than read as "unbounded" (as CPython's
/// `asyncio.Queue(maxsize=0)` does): ask for [`Queue::unbounded`](crate::Queue::unbounded)
/// by name.
///
/// # Examples
///
/// ```
/// use queue_core::{Queue, ZeroCapacity};
///
/// assert_eq!(Queue::<u8>::bounded(0).unwrap_err(), ZeroCapacity);
/// assert_eq!(ZeroCapacity.to_string(), "capacity must be at least 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ZeroCapacity;

impl fmt::Display for ZeroCapacity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("capacity must be at least 1")
    }
}

impl core::error::Error for ZeroCapacity {}

/// A put was refused; the item comes back inside.
///
/// Refusals are checked in this order: shut down, then no workers, then full (CPython
/// also checks shutdown before fullness).
///
/// # Examples
///
/// ```
/// use queue_core::{PutError, Queue};
///
/// let queue = Queue::bounded(1).unwrap();
/// queue.try_put("a").unwrap();
/// let err = queue.try_put("b").unwrap_err();
/// assert!(matches!(err, PutError::Full("b")));
/// assert_eq!(err.to_string(), "queue is full");
/// assert_eq!(err.into_inner(), "b");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum PutError<T> {
    /// The buffer is at capacity. Only [`Queue::try_put`](crate::Queue::try_put) returns
    /// this; the waiting forms wait instead.
    Full(T),
    /// The queue was shut down ([`Queue::shutdown`](crate::Queue::shutdown) or
    /// [`Queue::shutdown_now`](crate::Queue::shutdown_now)); it accepts nothing more.
    ShutDown(T),
    /// The queue had workers ([`Queue::worker`](crate::Queue::worker)) and the last one is
    /// gone; nobody would take the item. Puts succeed again once a new worker registers.
    NoWorkers(T),
    /// The deadline of [`Queue::put_until`](crate::Queue::put_until) came before room did.
    TimedOut(T),
}

impl<T> PutError<T> {
    /// Takes the refused item back.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::unbounded();
    /// queue.shutdown();
    /// assert_eq!(queue.try_put(5).unwrap_err().into_inner(), 5);
    /// ```
    #[inline]
    pub fn into_inner(self) -> T {
        match self {
            PutError::Full(item)
            | PutError::ShutDown(item)
            | PutError::NoWorkers(item)
            | PutError::TimedOut(item) => item,
        }
    }

    /// Whether the refusal was [`PutError::Full`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// assert!(queue.try_put(2).unwrap_err().is_full());
    /// ```
    #[inline]
    pub fn is_full(&self) -> bool {
        matches!(self, PutError::Full(_))
    }

    /// Whether the refusal was [`PutError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::unbounded();
    /// queue.shutdown();
    /// assert!(queue.try_put(1).unwrap_err().is_shut_down());
    /// ```
    #[inline]
    pub fn is_shut_down(&self) -> bool {
        matches!(self, PutError::ShutDown(_))
    }

    /// Whether the refusal was [`PutError::NoWorkers`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::unbounded();
    /// drop(queue.worker());
    /// assert!(queue.try_put(1).unwrap_err().is_no_workers());
    /// ```
    #[inline]
    pub fn is_no_workers(&self) -> bool {
        matches!(self, PutError::NoWorkers(_))
    }

    /// Whether the refusal was [`PutError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// let err = futures_lite::future::block_on(queue.put_until(2, async {})).unwrap_err();
    /// assert!(err.is_timed_out());
    /// assert_eq!(err.into_inner(), 2);
    /// ```
    #[inline]
    pub fn is_timed_out(&self) -> bool {
        matches!(self, PutError::TimedOut(_))
    }
}

impl<T> fmt::Debug for PutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PutError::Full(_) => f.write_str("Full(..)"),
            PutError::ShutDown(_) => f.write_str("ShutDown(..)"),
            PutError::NoWorkers(_) => f.write_str("NoWorkers(..)"),
            PutError::TimedOut(_) => f.write_str("TimedOut(..)"),
        }
    }
}

impl<T> fmt::Display for PutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PutError::Full(_) => "queue is full",
            PutError::ShutDown(_) => "queue is shut down",
            PutError::NoWorkers(_) => "queue has no workers left",
            PutError::TimedOut(_) => "timed out waiting for room in the queue",
        })
    }
}

impl<T> core::error::Error for PutError<T> {}

/// [`Queue::try_get`](crate::Queue::try_get) found nothing to deliver.
///
/// # Examples
///
/// ```
/// use queue_core::{Queue, TryGetError};
///
/// let queue = Queue::<u8>::unbounded();
/// assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
/// queue.shutdown();
/// assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
/// assert_eq!(TryGetError::ShutDown.to_string(), "queue is shut down and empty");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TryGetError {
    /// The buffer is empty for now; the queue is still open.
    Empty,
    /// The queue is shut down and its buffer is empty: nothing will ever arrive.
    ShutDown,
}

impl fmt::Display for TryGetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TryGetError::Empty => "queue is empty",
            TryGetError::ShutDown => "queue is shut down and empty",
        })
    }
}

impl core::error::Error for TryGetError {}

/// A waiting get ended without an item: the queue is shut down and its buffer is empty.
///
/// # Examples
///
/// ```
/// use queue_core::{GetError, Queue};
///
/// let queue = Queue::<u8>::unbounded();
/// queue.shutdown();
/// let err = futures_lite::future::block_on(queue.get()).unwrap_err();
/// assert_eq!(err, GetError::ShutDown);
/// assert_eq!(err.to_string(), "queue is shut down and empty");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GetError {
    /// The queue is shut down and its buffer is empty: nothing will ever arrive.
    ShutDown,
}

impl fmt::Display for GetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("queue is shut down and empty")
    }
}

impl core::error::Error for GetError {}

/// A [`Queue::get_until`](crate::Queue::get_until) that got no item.
///
/// # Examples
///
/// ```
/// use queue_core::{GetTimeoutError, Queue};
///
/// let queue = Queue::<u8>::unbounded();
/// let err = futures_lite::future::block_on(queue.get_until(async {})).unwrap_err();
/// assert_eq!(err, GetTimeoutError::TimedOut);
/// assert_eq!(err.to_string(), "timed out waiting for an item");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GetTimeoutError {
    /// The deadline came before an item.
    TimedOut,
    /// The queue is shut down and its buffer is empty: nothing will ever arrive.
    ShutDown,
}

impl From<GetError> for GetTimeoutError {
    fn from(error: GetError) -> Self {
        match error {
            GetError::ShutDown => GetTimeoutError::ShutDown,
        }
    }
}

impl fmt::Display for GetTimeoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetTimeoutError::TimedOut => f.write_str("timed out waiting for an item"),
            GetTimeoutError::ShutDown => fmt::Display::fmt(&GetError::ShutDown, f),
        }
    }
}

impl core::error::Error for GetTimeoutError {}

/// The deadline of [`Queue::join_until`](crate::Queue::join_until) came before every
/// accepted item had ended; holds the ledger as it stood at the deadline.
///
/// # Examples
///
/// ```
/// let queue = queue_core::Queue::unbounded();
/// queue.try_put("job").unwrap();
/// let err = futures_lite::future::block_on(queue.join_until(async {})).unwrap_err();
/// assert_eq!(err.ledger().buffered, 1);
/// assert_eq!(err.to_string(), "timed out with 1 job unfinished");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JoinTimedOut {
    pub(crate) ledger: Ledger,
}

impl JoinTimedOut {
    /// The ledger at the deadline.
    ///
    /// # Examples
    ///
    /// ```
    /// let queue = queue_core::Queue::<u8>::unbounded();
    /// queue.try_put(1).unwrap();
    /// let err = futures_lite::future::block_on(queue.join_until(async {})).unwrap_err();
    /// assert_eq!(err.ledger().unfinished(), 1);
    /// ```
    pub fn ledger(&self) -> Ledger {
        self.ledger
    }
}

impl fmt::Display for JoinTimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unfinished = self.ledger.unfinished();
        let jobs = if unfinished == 1 { "job" } else { "jobs" };
        write!(f, "timed out with {unfinished} {jobs} unfinished")
    }
}

impl core::error::Error for JoinTimedOut {}
