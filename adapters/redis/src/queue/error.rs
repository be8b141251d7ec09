//! The errors of the queue's own verbs. A refused item always comes back inside the
//! error.

use alloc::string::String;
use core::fmt;

use tally_queue::Ledger;

use crate::codec::CodecError;
use crate::server::error::Error;

/// [`Queue::open`](crate::Queue::open) refused.
///
/// # Examples
///
/// ```
/// use tally_redis::{Bytes, OpenError, Options, Queue};
///
/// let client = redis::Client::open("redis://127.0.0.1:1").unwrap();
/// let error = futures_lite::future::block_on(
///     Queue::open(client, "two words", Bytes, Options::new()),
/// )
/// .unwrap_err();
/// assert!(matches!(error, OpenError::BadName { .. }));
/// assert_eq!(
///     error.to_string(),
///     "bad queue name \"two words\": only ASCII letters, digits, '_', '-', '.' and ':' are allowed"
/// );
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
    /// The name cannot be used in keys.
    BadName {
        /// The name given.
        name: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// An option is out of range.
    BadOption(&'static str),
    /// The queue exists with other settings; a queue's settings are fixed at creation.
    Mismatch {
        /// The setting (`cap`, `lease_ms`, `max_att`, `repeat_ms`, `backoff`, `version`).
        /// `max_att` is the [`AbandonPolicy`](crate::AbandonPolicy): 0 for `Abandon`, -1
        /// for `Uncertain`, the attempt limit for `Redeliver`; `backoff` is the
        /// [redelivery backoff](crate::Options::redelivery_backoff) (`none`, or its jitter,
        /// seed and ceilings in ns).
        field: String,
        /// The stored value.
        stored: String,
        /// The value asked for.
        given: String,
    },
    /// The server could not be reached or refused.
    Redis(Error),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::BadName { name, why } => write!(f, "bad queue name {name:?}: {why}"),
            OpenError::BadOption(what) => write!(f, "bad option: {what}"),
            OpenError::Mismatch {
                field,
                stored,
                given,
            } => write!(
                f,
                "the queue exists with {field} = {stored}, not {given}; settings are fixed at creation"
            ),
            OpenError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for OpenError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            OpenError::Redis(error) => Some(error),
            _ => None,
        }
    }
}

impl From<Error> for OpenError {
    fn from(error: Error) -> Self {
        OpenError::Redis(error)
    }
}

/// A put was refused or its fate is unknown; the item comes back inside.
///
/// The first four variants mirror [`tally_queue::PutError`]. The others are new across
/// processes: the codec refused, the encoded item is too large, the server could not be
/// reached or refused ([`PutError::Failed`]: not accepted), or the reply was lost
/// ([`PutError::Unknown`]: it may have been accepted; use
/// [`Queue::put_keyed`](crate::Queue::put_keyed) to make a repeat safe).
///
/// # Examples
///
/// ```
/// use tally_redis::PutError;
///
/// let error = PutError::Full("job");
/// assert!(error.is_full());
/// assert_eq!(error.to_string(), "queue is full");
/// assert_eq!(error.into_inner(), "job");
/// // The error it wraps is its source.
/// let failed = PutError::Failed { item: "job", error: tally_redis::Error::Gone };
/// assert!(core::error::Error::source(&failed).is_some());
/// ```
#[non_exhaustive]
pub enum PutError<T> {
    /// The buffer is at capacity (only [`Queue::try_put`](crate::Queue::try_put)).
    Full(T),
    /// The queue was shut down; it accepts nothing more.
    ShutDown(T),
    /// The queue had workers and none is alive now.
    NoWorkers(T),
    /// The deadline of [`Queue::put_until`](crate::Queue::put_until) came before room did.
    TimedOut(T),
    /// The codec could not encode the item.
    Encode {
        /// The item.
        item: T,
        /// Why.
        error: CodecError,
    },
    /// The encoded item is larger than [`Options::max_item_bytes`](crate::Options::max_item_bytes).
    TooLarge {
        /// The item.
        item: T,
        /// Its encoded size in bytes.
        size: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The server could not be reached, or refused: the item was not accepted.
    Failed {
        /// The item.
        item: T,
        /// Why.
        error: Error,
    },
    /// The reply was lost: the item may or may not have been accepted.
    Unknown {
        /// The item.
        item: T,
        /// Why.
        error: Error,
    },
}

impl<T> PutError<T> {
    /// Takes the item back.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::PutError::ShutDown(5).into_inner(), 5);
    /// ```
    pub fn into_inner(self) -> T {
        match self {
            PutError::Full(item)
            | PutError::ShutDown(item)
            | PutError::NoWorkers(item)
            | PutError::TimedOut(item)
            | PutError::Encode { item, .. }
            | PutError::TooLarge { item, .. }
            | PutError::Failed { item, .. }
            | PutError::Unknown { item, .. } => item,
        }
    }

    /// Whether the refusal was [`PutError::Full`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_redis::PutError::Full(1).is_full());
    /// ```
    pub fn is_full(&self) -> bool {
        matches!(self, PutError::Full(_))
    }

    /// Whether the refusal was [`PutError::ShutDown`].
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(tally_redis::PutError::ShutDown(1).is_shut_down());
    /// ```
    pub fn is_shut_down(&self) -> bool {
        matches!(self, PutError::ShutDown(_))
    }

    /// Whether the item may have been accepted ([`PutError::Unknown`]).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!tally_redis::PutError::Full(1).is_unknown());
    /// ```
    pub fn is_unknown(&self) -> bool {
        matches!(self, PutError::Unknown { .. })
    }

    /// The same refusal, with the item (or items) mapped.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> PutError<U> {
        match self {
            PutError::Full(item) => PutError::Full(f(item)),
            PutError::ShutDown(item) => PutError::ShutDown(f(item)),
            PutError::NoWorkers(item) => PutError::NoWorkers(f(item)),
            PutError::TimedOut(item) => PutError::TimedOut(f(item)),
            PutError::Encode { item, error } => PutError::Encode {
                item: f(item),
                error,
            },
            PutError::TooLarge { item, size, limit } => PutError::TooLarge {
                item: f(item),
                size,
                limit,
            },
            PutError::Failed { item, error } => PutError::Failed {
                item: f(item),
                error,
            },
            PutError::Unknown { item, error } => PutError::Unknown {
                item: f(item),
                error,
            },
        }
    }

    pub(crate) fn from_redis(item: T, error: Error) -> Self {
        if error.is_unknown() {
            PutError::Unknown { item, error }
        } else {
            PutError::Failed { item, error }
        }
    }
}

impl<T> fmt::Debug for PutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PutError::Full(_) => f.write_str("Full(..)"),
            PutError::ShutDown(_) => f.write_str("ShutDown(..)"),
            PutError::NoWorkers(_) => f.write_str("NoWorkers(..)"),
            PutError::TimedOut(_) => f.write_str("TimedOut(..)"),
            PutError::Encode { error, .. } => write!(f, "Encode {{ error: {error:?}, .. }}"),
            PutError::TooLarge { size, limit, .. } => {
                write!(f, "TooLarge {{ size: {size}, limit: {limit}, .. }}")
            }
            PutError::Failed { error, .. } => write!(f, "Failed {{ error: {error:?}, .. }}"),
            PutError::Unknown { error, .. } => write!(f, "Unknown {{ error: {error:?}, .. }}"),
        }
    }
}

impl<T> fmt::Display for PutError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PutError::Full(_) => f.write_str("queue is full"),
            PutError::ShutDown(_) => f.write_str("queue is shut down"),
            PutError::NoWorkers(_) => f.write_str("queue has no workers left"),
            PutError::TimedOut(_) => f.write_str("timed out waiting for room in the queue"),
            PutError::Encode { error, .. } => write!(f, "could not encode the item: {error}"),
            PutError::TooLarge { size, limit, .. } => {
                write!(f, "item is {size} bytes encoded, over the limit of {limit}")
            }
            PutError::Failed { error, .. } => write!(f, "item not accepted: {error}"),
            PutError::Unknown { error, .. } => {
                write!(f, "unknown whether the item was accepted: {error}")
            }
        }
    }
}

impl<T> core::error::Error for PutError<T> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            PutError::Encode { error, .. } => Some(error),
            PutError::Failed { error, .. } | PutError::Unknown { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// [`Queue::try_get`](crate::Queue::try_get) found nothing to deliver, or failed.
///
/// # Examples
///
/// ```
/// assert_eq!(tally_redis::TryGetError::Empty.to_string(), "queue is empty");
/// let error = tally_redis::TryGetError::Redis(tally_redis::Error::Gone);
/// assert!(core::error::Error::source(&error).is_some());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum TryGetError {
    /// Nothing to deliver now; the queue is still open (or draining with work in flight).
    Empty,
    /// The queue is shut down and nothing is left to deliver.
    ShutDown,
    /// The server could not be reached, refused, or the reply was lost.
    Redis(Error),
}

impl fmt::Display for TryGetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TryGetError::Empty => f.write_str("queue is empty"),
            TryGetError::ShutDown => f.write_str("queue is shut down and empty"),
            TryGetError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for TryGetError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            TryGetError::Redis(error) => Some(error),
            _ => None,
        }
    }
}

/// A waiting get ended without an item.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     tally_redis::GetError::ShutDown.to_string(),
///     "queue is shut down and empty"
/// );
/// let error = tally_redis::GetError::Redis(tally_redis::Error::Gone);
/// assert!(core::error::Error::source(&error).is_some());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum GetError {
    /// The queue is shut down and nothing is left to deliver.
    ShutDown,
    /// The deadline of [`Queue::get_until`](crate::Queue::get_until) came first.
    TimedOut,
    /// The server could not be reached, refused, or the reply was lost.
    Redis(Error),
}

impl fmt::Display for GetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GetError::ShutDown => f.write_str("queue is shut down and empty"),
            GetError::TimedOut => f.write_str("timed out waiting for an item"),
            GetError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for GetError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            GetError::Redis(error) => Some(error),
            _ => None,
        }
    }
}

/// A [`Queue::join_until`](crate::Queue::join_until) that did not see every job end.
///
/// # Examples
///
/// ```
/// use tally_redis::JoinError;
/// use tally_queue::Ledger;
///
/// let mut ledger = Ledger::default();
/// ledger.accepted = 1;
/// ledger.buffered = 1;
/// assert_eq!(JoinError::TimedOut(ledger).to_string(), "timed out with 1 job unfinished");
/// assert!(core::error::Error::source(&JoinError::Redis(tally_redis::Error::Gone)).is_some());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum JoinError {
    /// The deadline came first; the ledger as it stood then.
    TimedOut(Ledger),
    /// The server could not be reached, refused, or the reply was lost.
    Redis(Error),
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JoinError::TimedOut(ledger) => {
                let unfinished = ledger.unfinished();
                let jobs = if unfinished == 1 { "job" } else { "jobs" };
                write!(f, "timed out with {unfinished} {jobs} unfinished")
            }
            JoinError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for JoinError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            JoinError::Redis(error) => Some(error),
            _ => None,
        }
    }
}
