//! The latch's errors. Failures, timeouts and name errors are tally-latch's own types
//! ([`Failure`], [`StillPending`], [`NameError`]), so the wording is the same in process
//! and across processes; what is new is the transport failure ([`Error`]).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use tally_latch::{Failure, NameError, StillPending};

use crate::error::Error;
use crate::latch::counter::Counter;

/// Why a counter (or the latch's owner) failed a latch across processes: the `E` of its
/// [`Failure`].
///
/// # Examples
///
/// ```
/// use tally_redis::Reason;
/// use tally_latch::Failure;
///
/// let failure = Failure::Failed {
///     counter: Some("loader-2".into()),
///     error: Reason::LeaseExpired { holder: "c42-1".into() },
/// };
/// assert_eq!(
///     failure.to_string(),
///     "counter `loader-2` failed: its lease expired before it reported (holder `c42-1` died or stalled)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// A counter or the owner failed the latch with this message.
    Error(String),
    /// The counter's holder stopped renewing its lease before it reported: its process
    /// died (a `kill -9` runs no `Drop`) or stalled past the lease.
    LeaseExpired {
        /// The holder's id (see [`Counter::holder`]).
        holder: String,
    },
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Error(message) => f.write_str(message),
            Reason::LeaseExpired { holder } => write!(
                f,
                "its lease expired before it reported (holder `{holder}` died or stalled)"
            ),
        }
    }
}

/// [`TrackingLatch::open`](crate::TrackingLatch::open) refused.
///
/// # Examples
///
/// ```
/// use tally_redis::{CreateError, LatchOptions, TrackingLatch};
/// use tally_latch::NameError;
///
/// let client = redis::Client::open("redis://127.0.0.1:1").unwrap();
/// let error = futures_lite::future::block_on(
///     TrackingLatch::open(client, "boot", ["db", "db"], LatchOptions::new()),
/// )
/// .unwrap_err();
/// assert!(matches!(&error, CreateError::Name(NameError::Duplicate(name)) if name == "db"));
/// assert_eq!(error.to_string(), "duplicate counter name `db`");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CreateError {
    /// The latch name or a counter name cannot be used in keys.
    BadName {
        /// The name given.
        name: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// A counter name appears twice.
    Name(NameError),
    /// An option is out of range.
    BadOption(&'static str),
    /// The latch exists with another set of counter names.
    NamesDiffer {
        /// The names stored on the server, in their order.
        stored: Vec<String>,
        /// The names asked for.
        given: Vec<String>,
    },
    /// The latch exists with another setting; settings are fixed at creation.
    Mismatch {
        /// The setting (`lease_ms`, `policy`, `version`).
        field: String,
        /// The stored value.
        stored: String,
        /// The value asked for.
        given: String,
    },
    /// The server could not be reached or refused.
    Redis(Error),
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::BadName { name, why } => write!(f, "bad latch or counter name {name:?}: {why}"),
            CreateError::Name(error) => fmt::Display::fmt(error, f),
            CreateError::BadOption(what) => write!(f, "bad option: {what}"),
            CreateError::NamesDiffer { stored, given } => write!(
                f,
                "the latch exists with counters [{}], not [{}]",
                stored.join(", "),
                given.join(", ")
            ),
            CreateError::Mismatch {
                field,
                stored,
                given,
            } => write!(
                f,
                "the latch exists with {field} = {stored}, not {given}; settings are fixed at creation"
            ),
            CreateError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for CreateError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            CreateError::Redis(error) => Some(error),
            CreateError::Name(error) => Some(error),
            _ => None,
        }
    }
}

impl From<Error> for CreateError {
    fn from(error: Error) -> Self {
        CreateError::Redis(error)
    }
}

/// [`TrackingLatch::claim`](crate::TrackingLatch::claim) refused.
///
/// # Examples
///
/// ```
/// use tally_redis::ClaimError;
/// use tally_latch::NameError;
///
/// let error = ClaimError::Name(NameError::Claimed("db".into()));
/// assert_eq!(error.to_string(), "counter `db` already has a handle");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ClaimError {
    /// [`NameError::Unknown`]: no such counter; [`NameError::Claimed`]: a live lease
    /// holds it (in this or another process); [`NameError::Reported`]: it already
    /// reported.
    Name(NameError),
    /// The latch has failed; nothing can be claimed.
    Failed(Failure<Reason>),
    /// The server could not be reached, refused, or the reply of the last of three tries
    /// was lost (then the claim may have been made: its lease expires unrenewed, and by
    /// the [`OnExpiry`] policy the latch fails or the counter becomes claimable again).
    ///
    /// [`OnExpiry`]: crate::OnExpiry
    Redis(Error),
}

impl fmt::Display for ClaimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClaimError::Name(error) => fmt::Display::fmt(error, f),
            ClaimError::Failed(failure) => fmt::Display::fmt(failure, f),
            ClaimError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for ClaimError {}

/// A report or fail through a [`Counter`] that was not counted, or whose reply was lost.
///
/// # Examples
///
/// ```
/// assert_eq!(
///     tally_redis::ReportError::Stale.to_string(),
///     "stale counter handle: its lease expired and the counter was released or failed"
/// );
/// ```
#[non_exhaustive]
pub enum ReportError {
    /// The latch failed before this report: nothing was counted.
    Failed(Failure<Reason>),
    /// This handle no longer holds the counter: its lease expired and the sweep released
    /// it ([`OnExpiry::Reclaim`](crate::OnExpiry::Reclaim)) or failed the latch.
    Stale,
    /// The server could not be reached, refused, or the reply was lost. The handle comes
    /// back: reporting again is safe (a repeat of a report that counted is recognized and
    /// not counted twice).
    Redis {
        /// The handle, to report again.
        counter: Box<Counter>,
        /// Why.
        error: Error,
    },
}

impl fmt::Debug for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Failed(failure) => f.debug_tuple("Failed").field(failure).finish(),
            ReportError::Stale => f.write_str("Stale"),
            ReportError::Redis { error, .. } => write!(f, "Redis {{ error: {error:?}, .. }}"),
        }
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Failed(failure) => write!(f, "not counted, {failure}"),
            ReportError::Stale => f.write_str(
                "stale counter handle: its lease expired and the counter was released or failed",
            ),
            ReportError::Redis { error, .. } => write!(f, "report not confirmed: {error}"),
        }
    }
}

impl core::error::Error for ReportError {}

/// How a wait on a [`TrackingLatch`](crate::TrackingLatch) ended without the latch
/// opening.
///
/// # Examples
///
/// ```
/// use tally_redis::LatchWaitError;
/// use tally_latch::StillPending;
///
/// let error = LatchWaitError::TimedOut(StillPending::new(["cache", "http"]));
/// assert_eq!(error.to_string(), "timed out waiting for: cache, http");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum LatchWaitError {
    /// The latch failed; the first failure, naming its counter.
    Failed(Failure<Reason>),
    /// The deadline came first; exactly these counters had not reported.
    TimedOut(StillPending),
    /// The server could not be reached, refused, or the reply was lost. Waiting again is
    /// safe: a wait changes nothing but sweeps expired leases.
    Redis(Error),
}

impl fmt::Display for LatchWaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LatchWaitError::Failed(failure) => fmt::Display::fmt(failure, f),
            LatchWaitError::TimedOut(pending) => fmt::Display::fmt(pending, f),
            LatchWaitError::Redis(error) => fmt::Display::fmt(error, f),
        }
    }
}

impl core::error::Error for LatchWaitError {}

impl From<Error> for LatchWaitError {
    fn from(error: Error) -> Self {
        LatchWaitError::Redis(error)
    }
}
