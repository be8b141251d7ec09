//! The errors of the latch's own verbs. Failures, timeouts and name errors are
//! tally-latch's own types ([`Failure`], [`StillPending`], [`NameError`]), so the wording
//! is the same in process and across processes; what is new is the transport failure
//! ([`Error`]).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use tally_latch::{Failure, NameError, StillPending};

use crate::latch::reason::Reason;
use crate::server::error::Error;

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
/// assert!(core::error::Error::source(&error).is_some());
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

impl core::error::Error for ClaimError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ClaimError::Name(error) => Some(error),
            ClaimError::Failed(failure) => Some(failure),
            ClaimError::Redis(error) => Some(error),
        }
    }
}

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
/// assert!(core::error::Error::source(&error).is_some());
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

impl core::error::Error for LatchWaitError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            LatchWaitError::Failed(failure) => Some(failure),
            LatchWaitError::TimedOut(pending) => Some(pending),
            LatchWaitError::Redis(error) => Some(error),
        }
    }
}

impl From<Error> for LatchWaitError {
    fn from(error: Error) -> Self {
        LatchWaitError::Redis(error)
    }
}
