//! The errors of a counter's verbs: a refusal that leaves the counter held hands it back.

use alloc::boxed::Box;
use core::fmt;

use tally_latch::Failure;

use crate::latch::counter::Counter;
use crate::latch::reason::Reason;
use crate::server::error::Error;

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
    /// The latch's keys are gone ([`Error::Gone`]: deleted, evicted, or the server lost
    /// or rewound its data): nothing was counted, and nothing will be, so the handle is
    /// not handed back to report again.
    Gone,
    /// This handle no longer holds the counter: its lease expired and the sweep released
    /// it ([`OnExpiry::Reclaim`](crate::OnExpiry::Reclaim)) or failed the latch.
    Stale,
    /// The server could not be reached, refused, or the reply was lost. The handle comes
    /// back: reporting again is safe (when [`Error::is_transient`], it can also help) (a repeat of a report that counted is recognized and
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
            ReportError::Gone => f.write_str("Gone"),
            ReportError::Redis { error, .. } => write!(f, "Redis {{ error: {error:?}, .. }}"),
        }
    }
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Failed(failure) => write!(f, "not counted, {failure}"),
            ReportError::Gone => write!(f, "not counted: {}", Error::Gone),
            ReportError::Stale => f.write_str(
                "stale counter handle: its lease expired and the counter was released or failed",
            ),
            ReportError::Redis { error, .. } => write!(f, "report not confirmed: {error}"),
        }
    }
}

impl core::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            ReportError::Failed(failure) => Some(failure),
            ReportError::Redis { error, .. } => Some(error),
            ReportError::Gone | ReportError::Stale => None,
        }
    }
}
