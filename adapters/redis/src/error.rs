//! Errors. A refused item always comes back inside the error; a transport failure says
//! whether the command may have run.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use tally_queue::Ledger;

use crate::codec::{Codec, CodecError};
use crate::delivery::Delivery;

/// A failure talking to the server.
///
/// [`Error::is_unknown`] tells the one case where the command may have run: it was sent
/// and no reply came back.
///
/// # Examples
///
/// ```
/// use tally_redis::Error;
///
/// let error = Error::Gone;
/// assert!(!error.is_unknown());
/// assert_eq!(
///     error.to_string(),
///     "the queue's keys are gone from the server (deleted, or the server lost its data)"
/// );
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No connection could be made; nothing was sent.
    Unavailable(redis::RedisError),
    /// The command was sent and its reply was lost (connection dropped, response timeout):
    /// it may or may not have run.
    Unknown(redis::RedisError),
    /// The server answered with an error; the command did not change anything.
    Server(redis::RedisError),
    /// The queue's keys are gone: someone deleted them, or the server restarted without
    /// its data. Nothing was changed.
    Gone,
    /// The server answered something this crate does not understand (not a queue made by
    /// this crate, or a newer version).
    Protocol(String),
}

impl Error {
    /// Whether the command may have run (its reply was lost).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!tally_redis::Error::Protocol("x".into()).is_unknown());
    /// ```
    pub fn is_unknown(&self) -> bool {
        matches!(self, Error::Unknown(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(error) => write!(f, "redis is unavailable: {error}"),
            Error::Unknown(error) => write!(
                f,
                "lost the reply from redis, the command may or may not have run: {error}"
            ),
            Error::Server(error) => write!(f, "redis refused the command: {error}"),
            Error::Gone => f.write_str(
                "the queue's keys are gone from the server (deleted, or the server lost its data)",
            ),
            Error::Protocol(what) => write!(f, "unexpected reply from redis: {what}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Unavailable(error) | Error::Unknown(error) | Error::Server(error) => Some(error),
            Error::Gone | Error::Protocol(_) => None,
        }
    }
}

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
        /// The setting (`cap`, `lease_ms`, `max_att`, `version`). `max_att` is the
        /// [`AbandonPolicy`](crate::AbandonPolicy): 0 for `Abandon`, -1 for `Uncertain`,
        /// the attempt limit for `Redeliver`.
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

impl<T> core::error::Error for PutError<T> {}

/// [`Queue::try_get`](crate::Queue::try_get) found nothing to deliver, or failed.
///
/// # Examples
///
/// ```
/// assert_eq!(tally_redis::TryGetError::Empty.to_string(), "queue is empty");
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

impl core::error::Error for TryGetError {}

/// A waiting get ended without an item.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     tally_redis::GetError::ShutDown.to_string(),
///     "queue is shut down and empty"
/// );
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

impl core::error::Error for GetError {}

/// A resolve that was not counted, or whose reply was lost.
///
/// # Examples
///
/// ```
/// use tally_redis::{Bytes, ResolveError};
///
/// let error: ResolveError<Bytes> = ResolveError::Stale(b"job".to_vec());
/// assert_eq!(
///     error.to_string(),
///     "stale delivery: its lease expired and the job was handed out again, so this resolve was not counted"
/// );
/// ```
#[non_exhaustive]
pub enum ResolveError<C: Codec> {
    /// This attempt lost its lease and the job was reclaimed (or already ended another
    /// way): nothing was counted. The item comes back.
    Stale(C::Item),
    /// The server could not be reached, refused, or the reply was lost. The delivery comes
    /// back: resolving it again is safe (a repeat of a resolve that did count is
    /// recognized and not counted twice).
    Redis {
        /// The delivery, to resolve again.
        delivery: Box<Delivery<C>>,
        /// Why.
        error: Error,
    },
}

impl<C: Codec> fmt::Debug for ResolveError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Stale(_) => f.write_str("Stale(..)"),
            ResolveError::Redis { error, .. } => write!(f, "Redis {{ error: {error:?}, .. }}"),
        }
    }
}

impl<C: Codec> fmt::Display for ResolveError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::Stale(_) => f.write_str(
                "stale delivery: its lease expired and the job was handed out again, so this resolve was not counted",
            ),
            ResolveError::Redis { error, .. } => write!(f, "resolve not confirmed: {error}"),
        }
    }
}

impl<C: Codec> core::error::Error for ResolveError<C> {}

/// A [`Delivery::retry`](crate::Delivery::retry) that did not put the job back, or whose
/// reply was lost. Each refusal hands the delivery back, still held: it still has to end.
///
/// # Examples
///
/// ```
/// use tally_redis::{Bytes, RetryError};
///
/// let error: RetryError<Bytes> = RetryError::Stale(b"job".to_vec());
/// assert_eq!(
///     error.to_string(),
///     "stale delivery: its lease expired and the job was handed out again, so this retry changed nothing"
/// );
/// ```
#[non_exhaustive]
pub enum RetryError<C: Codec> {
    /// This attempt lost its lease and the job was reclaimed (or already ended another
    /// way): nothing changed and nothing was counted. The item comes back.
    Stale(C::Item),
    /// The queue is shut down (gracefully or not), as in process: nothing changed. The
    /// delivery comes back, still held: resolve it.
    ShutDown(Box<Delivery<C>>),
    /// The queue is bounded and its buffer is full: nothing changed. The delivery comes
    /// back, still held.
    Full(Box<Delivery<C>>),
    /// The server could not be reached, refused, or the reply was lost. The delivery comes
    /// back: retrying it again is safe (a repeat of a retry that did happen is recognized
    /// and changes nothing more).
    Redis {
        /// The delivery, to retry or resolve again.
        delivery: Box<Delivery<C>>,
        /// Why.
        error: Error,
    },
}

impl<C: Codec> RetryError<C> {
    /// The delivery handed back, if this refusal has one (all but `Stale`).
    ///
    /// # Examples
    ///
    /// ```
    /// let error: tally_redis::RetryError<tally_redis::Bytes> =
    ///     tally_redis::RetryError::Stale(vec![]);
    /// assert!(error.into_delivery().is_none());
    /// ```
    pub fn into_delivery(self) -> Option<Delivery<C>> {
        match self {
            RetryError::Stale(_) => None,
            RetryError::ShutDown(delivery)
            | RetryError::Full(delivery)
            | RetryError::Redis { delivery, .. } => Some(*delivery),
        }
    }
}

impl<C: Codec> fmt::Debug for RetryError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryError::Stale(_) => f.write_str("Stale(..)"),
            RetryError::ShutDown(_) => f.write_str("ShutDown(..)"),
            RetryError::Full(_) => f.write_str("Full(..)"),
            RetryError::Redis { error, .. } => write!(f, "Redis {{ error: {error:?}, .. }}"),
        }
    }
}

impl<C: Codec> fmt::Display for RetryError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryError::Stale(_) => f.write_str(
                "stale delivery: its lease expired and the job was handed out again, so this retry changed nothing",
            ),
            RetryError::ShutDown(_) => f.write_str("retry refused: the queue is shut down"),
            RetryError::Full(_) => f.write_str("retry refused: the queue is full"),
            RetryError::Redis { error, .. } => write!(f, "retry not confirmed: {error}"),
        }
    }
}

impl<C: Codec> core::error::Error for RetryError<C> {}

/// [`Delivery::keep_alive`](crate::Delivery::keep_alive) did not extend the lease.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     tally_redis::KeepAliveError::Stale.to_string(),
///     "stale delivery: its lease already expired and the job was handed out again"
/// );
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum KeepAliveError {
    /// The lease had already expired and the job was reclaimed.
    Stale,
    /// The server could not be reached, refused, or the reply was lost.
    Redis(Error),
}

impl fmt::Display for KeepAliveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeepAliveError::Stale => f.write_str(
                "stale delivery: its lease already expired and the job was handed out again",
            ),
            KeepAliveError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for KeepAliveError {}

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

impl core::error::Error for JoinError {}

/// A [`Queue::shutdown_now`](crate::Queue::shutdown_now) that failed part way; the items
/// it had already taken out come back inside.
///
/// The queue is closed (if the first step ran). Items moved out but not yet returned stay
/// on the server, and the next `shutdown_now` returns them.
///
/// # Examples
///
/// ```
/// use tally_redis::{Error, ShutdownNowError};
///
/// let error: ShutdownNowError<u8> = ShutdownNowError { drained: Vec::new(), error: Error::Gone };
/// assert!(error.to_string().starts_with("shutdown_now stopped after 0 items: "));
/// ```
pub struct ShutdownNowError<T> {
    /// The items taken out so far, with their ids.
    pub drained: alloc::vec::Vec<(tally_queue::JobId, crate::drained::Drained<T>)>,
    /// Why it stopped.
    pub error: Error,
}

impl<T> fmt::Debug for ShutdownNowError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShutdownNowError")
            .field("drained", &self.drained.len())
            .field("error", &self.error)
            .finish()
    }
}

impl<T> fmt::Display for ShutdownNowError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shutdown_now stopped after {} items: {}",
            self.drained.len(),
            self.error
        )
    }
}

impl<T> core::error::Error for ShutdownNowError<T> {}
