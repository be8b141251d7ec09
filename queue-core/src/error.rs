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
/// use tally_queue::{Queue, ZeroCapacity};
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

/// The item-carrying refusals, written once: each put error is an enum of some of these
/// variants, each holding the refused item.
macro_rules! put_error {
    (
        $(#[$attr:meta])*
        pub enum $Name:ident {
            $( $(#[$vattr:meta])* $Variant:ident => $is:ident, $message:literal, )+
        }
        into_inner: $into_inner_example:literal
    ) => {
        $(#[$attr])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $Name<T> {
            $( $(#[$vattr])* $Variant(T), )+
        }

        impl<T> $Name<T> {
            /// Takes the refused item back.
            ///
            /// # Examples
            ///
            #[doc = $into_inner_example]
            #[inline]
            pub fn into_inner(self) -> T {
                match self {
                    $( $Name::$Variant(item) => item, )+
                }
            }

            $(
                #[doc = concat!("Whether the refusal was [`", stringify!($Name), "::", stringify!($Variant), "`].")]
                #[inline]
                #[must_use]
                pub fn $is(&self) -> bool {
                    matches!(self, $Name::$Variant(_))
                }
            )+
        }

        impl<T> fmt::Debug for $Name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( $Name::$Variant(_) => f.write_str(concat!(stringify!($Variant), "(..)")), )+
                }
            }
        }

        impl<T> fmt::Display for $Name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(match self {
                    $( $Name::$Variant(_) => $message, )+
                })
            }
        }

        impl<T> core::error::Error for $Name<T> {}
    };
}
pub(crate) use put_error;

put_error! {
    /// [`Queue::try_put`](crate::Queue::try_put) refused the item; it comes back inside.
    ///
    /// Refusals are checked in this order: shut down, then no workers, then full (CPython
    /// also checks shutdown before fullness).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{Queue, TryPutError};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put("a").unwrap();
    /// let err = queue.try_put("b").unwrap_err();
    /// assert!(matches!(err, TryPutError::Full("b")));
    /// assert!(err.is_full());
    /// assert_eq!(err.to_string(), "queue is full");
    /// assert_eq!(format!("{err:?}"), "Full(..)");
    /// assert_eq!(err.into_inner(), "b");
    /// ```
    pub enum TryPutError {
        /// The queue is at capacity; the waiting forms wait instead.
        Full => is_full, "queue is full",
        /// The queue was shut down ([`Queue::shutdown`](crate::Queue::shutdown) or
        /// [`Queue::shutdown_now`](crate::Queue::shutdown_now)); it accepts nothing more.
        ShutDown => is_shut_down, "queue is shut down",
        /// The queue had workers ([`Queue::worker`](crate::Queue::worker)) and the last one
        /// is gone; nobody would take the item. Puts succeed again once a new worker
        /// registers.
        NoWorkers => is_no_workers, "queue has no workers left",
    }
    into_inner: "```\nlet queue = tally_queue::Queue::unbounded();\nqueue.shutdown();\nassert_eq!(queue.try_put(5).unwrap_err().into_inner(), 5);\n```"
}

put_error! {
    /// A waiting put ([`Queue::put`](crate::Queue::put),
    /// [`Queue::put_blocking`](crate::Queue::put_blocking)) was refused; the item comes back
    /// inside. A waiting put is never refused for being full: it waits.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{PutError, Queue};
    ///
    /// let queue = Queue::unbounded();
    /// queue.shutdown();
    /// let err = futures_lite::future::block_on(queue.put("late")).unwrap_err();
    /// assert!(matches!(err, PutError::ShutDown("late")));
    /// assert_eq!(err.to_string(), "queue is shut down");
    /// ```
    pub enum PutError {
        /// The queue is or got shut down (a put waiting on a full queue is woken by either
        /// kind of shutdown).
        ShutDown => is_shut_down, "queue is shut down",
        /// The last worker left (see [`Queue::worker`](crate::Queue::worker)).
        NoWorkers => is_no_workers, "queue has no workers left",
    }
    into_inner: "```\nlet queue = tally_queue::Queue::unbounded();\nqueue.shutdown();\nlet refused = futures_lite::future::block_on(queue.put(5)).unwrap_err();\nassert_eq!(refused.into_inner(), 5);\n```"
}

put_error! {
    /// A put with a deadline ([`Queue::put_until`](crate::Queue::put_until),
    /// [`Queue::put_blocking_timeout`](crate::Queue::put_blocking_timeout)) was refused or
    /// timed out; the item comes back inside, and nothing was accepted.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_queue::{PutTimeoutError, Queue};
    ///
    /// let queue = Queue::bounded(1).unwrap();
    /// queue.try_put(1).unwrap();
    /// let err = futures_lite::future::block_on(queue.put_until(2, async {})).unwrap_err();
    /// assert!(matches!(err, PutTimeoutError::TimedOut(2)));
    /// assert!(err.is_timed_out());
    /// assert_eq!(err.to_string(), "timed out waiting for room in the queue");
    /// ```
    pub enum PutTimeoutError {
        /// The deadline came before room did.
        TimedOut => is_timed_out, "timed out waiting for room in the queue",
        /// As [`PutError::ShutDown`].
        ShutDown => is_shut_down, "queue is shut down",
        /// As [`PutError::NoWorkers`].
        NoWorkers => is_no_workers, "queue has no workers left",
    }
    into_inner: "```\nlet queue = tally_queue::Queue::bounded(1).unwrap();\nqueue.try_put(1).unwrap();\nlet refused = futures_lite::future::block_on(queue.put_until(5, async {})).unwrap_err();\nassert_eq!(refused.into_inner(), 5);\n```"
}

impl<T> From<PutError<T>> for TryPutError<T> {
    fn from(error: PutError<T>) -> Self {
        match error {
            PutError::ShutDown(item) => TryPutError::ShutDown(item),
            PutError::NoWorkers(item) => TryPutError::NoWorkers(item),
        }
    }
}

impl<T> From<PutError<T>> for PutTimeoutError<T> {
    fn from(error: PutError<T>) -> Self {
        match error {
            PutError::ShutDown(item) => PutTimeoutError::ShutDown(item),
            PutError::NoWorkers(item) => PutTimeoutError::NoWorkers(item),
        }
    }
}

/// [`Queue::try_get`](crate::Queue::try_get) found nothing to deliver.
///
/// # Examples
///
/// ```
/// use tally_queue::{Queue, TryGetError};
///
/// let queue = Queue::<u8>::unbounded();
/// assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
/// queue.shutdown();
/// assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
/// assert_eq!(TryGetError::ShutDown.to_string(), "queue is shut down and empty");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
// A word wide: a `Result` of a delivery keeps the error in the word that holds the item,
// and a narrower error would make every move of the result split that word.
#[repr(usize)]
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
/// use tally_queue::{GetError, Queue};
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
/// use tally_queue::{GetTimeoutError, Queue};
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
/// let queue = tally_queue::Queue::unbounded();
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
    /// let queue = tally_queue::Queue::<u8>::unbounded();
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
