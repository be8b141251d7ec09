//! The errors of a delivery's verbs. Each refusal that leaves the job held hands the
//! delivery back.

use alloc::boxed::Box;
use core::fmt;

use crate::codec::Codec;
use crate::queue::delivery::Delivery;
use crate::server::error::Error;

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
    /// The queue's keys are gone ([`Error::Gone`]): nothing was counted, and nothing ever
    /// will be, so the delivery is not handed back to resolve again. The item comes back.
    Gone(C::Item),
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
            ResolveError::Gone(_) => f.write_str("Gone(..)"),
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
            ResolveError::Gone(_) => write!(f, "resolve not counted: {}", Error::Gone),
            ResolveError::Redis { error, .. } => write!(f, "resolve not confirmed: {error}"),
        }
    }
}

impl<C: Codec> core::error::Error for ResolveError<C> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ResolveError::Redis { error, .. } => Some(error),
            _ => None,
        }
    }
}

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
    /// The queue's keys are gone ([`Error::Gone`]): nothing changed. The item comes back.
    Gone(C::Item),
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
    /// The delivery handed back, if this refusal has one (all but `Stale` and `Gone`).
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
            RetryError::Stale(_) | RetryError::Gone(_) => None,
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
            RetryError::Gone(_) => f.write_str("Gone(..)"),
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
            RetryError::Gone(_) => write!(f, "retry not done: {}", Error::Gone),
            RetryError::ShutDown(_) => f.write_str("retry refused: the queue is shut down"),
            RetryError::Full(_) => f.write_str("retry refused: the queue is full"),
            RetryError::Redis { error, .. } => write!(f, "retry not confirmed: {error}"),
        }
    }
}

impl<C: Codec> core::error::Error for RetryError<C> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            RetryError::Redis { error, .. } => Some(error),
            _ => None,
        }
    }
}

/// [`Delivery::keep_alive`](crate::Delivery::keep_alive) did not extend the lease.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     tally_redis::KeepAliveError::Stale.to_string(),
///     "stale delivery: its lease already expired and the job was handed out again"
/// );
/// let error = tally_redis::KeepAliveError::Redis(tally_redis::Error::Gone);
/// assert!(core::error::Error::source(&error).is_some());
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

impl core::error::Error for KeepAliveError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            KeepAliveError::Redis(error) => Some(error),
            KeepAliveError::Stale => None,
        }
    }
}

/// A [`Queue::resolve_many`](crate::Queue::resolve_many) or
/// [`Queue::resolve_and_get`](crate::Queue::resolve_and_get) whose script failed: the
/// server could not be reached, refused, or the reply was lost. The deliveries it did not
/// answer for come back with their outcomes: resolving them again is safe (a repeat of a
/// resolve that did count is recognized and not counted twice).
///
/// # Examples
///
/// ```
/// use tally_redis::{Bytes, Error, ResolveManyError};
///
/// let error: ResolveManyError<Bytes> = ResolveManyError {
///     answered: Vec::new(),
///     resolves: Vec::new(),
///     error: Error::Gone,
/// };
/// assert!(error.to_string().starts_with("0 resolves not confirmed: "));
/// assert!(core::error::Error::source(&error).is_some());
/// ```
pub struct ResolveManyError<C: Codec> {
    /// The answers of the chunks that went through before (a long batch is sent in
    /// chunks), in order.
    pub answered: alloc::vec::Vec<Result<C::Item, ResolveError<C>>>,
    /// The deliveries not answered for, each with its outcome, to resolve again.
    pub resolves: alloc::vec::Vec<(Delivery<C>, tally_queue::Outcome)>,
    /// Why.
    pub error: Error,
}

impl<C: Codec> fmt::Debug for ResolveManyError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResolveManyError")
            .field("answered", &self.answered.len())
            .field("resolves", &self.resolves.len())
            .field("error", &self.error)
            .finish()
    }
}

impl<C: Codec> fmt::Display for ResolveManyError<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} resolves not confirmed: {}",
            self.resolves.len(),
            self.error
        )
    }
}

impl<C: Codec> core::error::Error for ResolveManyError<C> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        Some(&self.error)
    }
}
