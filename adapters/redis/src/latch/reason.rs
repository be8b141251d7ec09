//! Why a counter (or the latch's owner) failed a latch across processes.

use alloc::string::String;
use core::fmt;

/// Why a counter (or the latch's owner) failed a latch across processes: the `E` of its
/// [`Failure`](tally_latch::Failure).
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
        /// The holder's id (see [`Counter::holder`](crate::Counter::holder)).
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
