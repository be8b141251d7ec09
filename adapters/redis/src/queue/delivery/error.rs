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
