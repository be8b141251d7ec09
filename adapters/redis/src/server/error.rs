//! The failure every call can return: talking to the server. A transport failure says
//! whether the command may have run.

use alloc::string::String;
use core::fmt;

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
