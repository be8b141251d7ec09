//! The failure every call can return: talking to the server. A transport failure says
//! whether the command may have run.

use alloc::string::String;
use core::fmt;

/// A failure talking to the server.
///
/// [`Error::is_unknown`] tells the one case where the command may have run: it was sent
/// and no reply came back. Every other variant means nothing was changed.
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
///     "the keys are gone from the server (deleted or evicted, or the server lost or rewound its data)"
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
    /// The server refused the command (an error reply, `OOM` under `maxmemory` among them);
    /// it changed nothing: every script checks its keys and preconditions before its first
    /// write.
    Server(redis::RedisError),
    /// The server refused the connection: it needs a password (or a user and password)
    /// that the client did not give, or gave wrong. Nothing was sent.
    Auth(redis::RedisError),
    /// The keys are gone: someone deleted them, the server evicted one, or the server lost
    /// or rewound its data (a restart without the append-only file, or ids seen going
    /// back). Nothing was changed, and nothing will be: a rewound queue or latch is never
    /// used again (delete its keys to start afresh).
    Gone,
    /// A key holds something this crate did not write there (another type, or an entry
    /// of another shape): something else changed the server's data. Nothing was changed.
    Foreign {
        /// The key.
        key: String,
        /// What it holds.
        found: String,
    },
    /// The server's settings can lose, rewind or evict the keys, and the handle was not
    /// opened in best-effort mode ([`Options::best_effort`](crate::Options::best_effort),
    /// [`LatchOptions::best_effort`](crate::LatchOptions::best_effort)). Nothing was sent
    /// but the check.
    UnsafeServer {
        /// The setting (`appendonly`, `maxmemory-policy`).
        setting: String,
        /// Its value on the server.
        value: String,
    },
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

    /// Whether calling again can help: the server was unreachable, or the reply was lost.
    /// A refusal, a missing password, gone keys, foreign data and unsafe settings stay as
    /// they are until someone changes the server.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!tally_redis::Error::Gone.is_transient());
    /// ```
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::Unavailable(_) | Error::Unknown(_))
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
            Error::Auth(error) => write!(
                f,
                "redis refused the connection: it needs a password, and none or a wrong one \
                 was given (put it in the URL: redis://:password@host/, \
                 redis://user:password@host/ or redis+unix:///path?pass=password): {error}"
            ),
            Error::Gone => f.write_str(
                "the keys are gone from the server (deleted or evicted, or the server lost or \
                 rewound its data)",
            ),
            Error::Foreign { key, found } => write!(
                f,
                "{key} holds {found}, not what this crate wrote there: something else changed \
                 the server's data; nothing was changed"
            ),
            Error::UnsafeServer { setting, value } => write!(
                f,
                "redis runs with {setting} {value}, under which it can lose, rewind or evict \
                 the keys (the promises need appendonly yes and maxmemory-policy noeviction); \
                 open with best_effort(true) to accept that"
            ),
            Error::Protocol(what) => write!(f, "unexpected reply from redis: {what}"),
        }
    }
}

impl core::error::Error for Error {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Error::Unavailable(error)
            | Error::Unknown(error)
            | Error::Server(error)
            | Error::Auth(error) => Some(error),
            Error::Gone
            | Error::Foreign { .. }
            | Error::UnsafeServer { .. }
            | Error::Protocol(_) => None,
        }
    }
}
