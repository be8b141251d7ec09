//! Errors: each says what went wrong in lowercase, without a trailing period, none needs
//! `E: Debug` to be debugged, and each is a `core::error::Error` (so also without `std`).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The timeout of a [`CountDownLatch`](crate::CountDownLatch) or
/// [`FailableLatch`](crate::FailableLatch): the deadline came before the latch ended.
///
/// # Examples
///
/// ```
/// use tally_latch::{CountDownLatch, TimedOut};
///
/// let latch = CountDownLatch::new(1);
/// assert_eq!(futures_lite::future::block_on(latch.wait_until(async {})), Err(TimedOut));
/// assert_eq!(TimedOut.to_string(), "timed out waiting for the latch to open");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedOut;

impl fmt::Display for TimedOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out waiting for the latch to open")
    }
}

/// A latch count above [`MAX_COUNT`](crate::MAX_COUNT).
///
/// # Examples
///
/// ```
/// use tally_latch::CountDownLatch;
///
/// let error = CountDownLatch::try_new(usize::MAX).unwrap_err();
/// assert_eq!(error.count(), usize::MAX);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountTooLarge {
    pub(crate) count: usize,
}

impl CountTooLarge {
    /// The count that was asked for.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl fmt::Display for CountTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "latch count {} exceeds the maximum of {}",
            self.count,
            crate::MAX_COUNT
        )
    }
}

/// A counter name that a [`TrackingLatch`](crate::TrackingLatch) cannot take.
/// Non-exhaustive: a `match` needs a wildcard arm.
///
/// # Examples
///
/// ```
/// use tally_latch::{NameError, TrackingLatch};
///
/// let error = TrackingLatch::new(["a", "b", "a"]).unwrap_err();
/// assert_eq!(error, NameError::Duplicate("a".into()));
/// assert_eq!(error.to_string(), "duplicate counter name `a`");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NameError {
    /// The same name was given twice at construction.
    Duplicate(String),
    /// No counter has this name.
    Unknown(String),
    /// A [`Counter`](crate::Counter) handle for this name was already handed out.
    Claimed(String),
    /// This counter has already reported, so a handle for it would be meaningless.
    Reported(String),
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(name) => write!(f, "duplicate counter name `{name}`"),
            Self::Unknown(name) => write!(f, "unknown counter name `{name}`"),
            Self::Claimed(name) => write!(f, "counter `{name}` already has a handle"),
            Self::Reported(name) => write!(f, "counter `{name}` has already reported"),
        }
    }
}

/// Why a [`TrackingLatch`](crate::TrackingLatch) failed: what its waiters get.
///
/// Non-exhaustive, so that a new way to fail is not a breaking change: a `match` needs a
/// wildcard arm (or use [`counter`](Self::counter) and [`error`](Self::error)); the
/// variants themselves can still be built and matched field by field.
///
/// A `Failure<E>` is a `core::error::Error` whenever `E` prints (`String` and `&str`
/// included); its message ends with the error's, and it has no
/// [`source`](core::error::Error::source). Where `E` is itself an error, so that it can be
/// found in an error chain by its type, [`into_chained`](Self::into_chained) makes it the
/// source instead.
///
/// # Examples
///
/// ```
/// use tally_latch::{Failure, TrackingLatch};
///
/// let latch = TrackingLatch::new(["db"]).unwrap();
/// drop(latch.counter("db").unwrap()); // dropped without reporting
/// let failure = futures_lite::future::block_on(latch.wait()).unwrap_err();
/// assert_eq!(failure.counter(), Some("db"));
/// assert!(matches!(failure, Failure::Abandoned { .. }));
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure<E> {
    /// A counter (or, with `counter: None`, the latch's owner) failed with an error.
    Failed {
        /// The counter that failed, if the failure came through a counter.
        counter: Option<Cow<'static, str>>,
        /// The error it failed with.
        error: E,
    },
    /// A counter's handle was dropped without reporting: its task returned early or
    /// panicked.
    Abandoned {
        /// The counter that never reported.
        counter: Cow<'static, str>,
        /// Whether the handle was dropped while its thread was panicking (always `false`
        /// without the `std` feature).
        panicking: bool,
    },
}

impl<E> Failure<E> {
    /// The counter the failure names, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::Failure;
    ///
    /// let failure: Failure<()> = Failure::Abandoned { counter: "http".into(), panicking: true };
    /// assert_eq!(failure.counter(), Some("http"));
    /// ```
    pub fn counter(&self) -> Option<&str> {
        match self {
            Self::Failed { counter, .. } => counter.as_deref(),
            Self::Abandoned { counter, .. } => Some(counter),
        }
    }

    /// The error, for a failure that carries one.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::Failure;
    ///
    /// let failure = Failure::Failed { counter: None, error: 7 };
    /// assert_eq!(failure.error(), Some(&7));
    /// ```
    pub fn error(&self) -> Option<&E> {
        match self {
            Self::Failed { error, .. } => Some(error),
            Self::Abandoned { .. } => None,
        }
    }
}

impl<E> Failure<E> {
    /// This failure as a link of an error chain: a [`ChainedFailure`], whose message leaves
    /// the error out and whose [`source`](core::error::Error::source) is the error.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::error::Error;
    /// use std::num::ParseIntError;
    /// use tally_latch::{Failure, TrackingLatch};
    ///
    /// async fn gate(ready: &TrackingLatch<ParseIntError>) -> Result<(), Box<dyn Error>> {
    ///     ready.wait().await.map_err(Failure::into_chained)?;
    ///     Ok(())
    /// }
    ///
    /// let ready = TrackingLatch::new_failable(["config"]).unwrap();
    /// let port = "80a".parse::<u16>().unwrap_err();
    /// ready.counter("config").unwrap().fail(port).unwrap();
    /// let error = futures_lite::future::block_on(gate(&ready)).unwrap_err();
    /// assert_eq!(error.to_string(), "counter `config` failed");
    /// let source = error.source().unwrap();
    /// assert!(source.is::<ParseIntError>());
    /// assert_eq!(source.to_string(), "invalid digit found in string");
    /// ```
    pub fn into_chained(self) -> ChainedFailure<E> {
        ChainedFailure(self)
    }

    /// Writes what failed, without the error a `Failed` failure carries.
    fn fmt_without_error(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed {
                counter: Some(counter),
                ..
            } => write!(f, "counter `{counter}` failed"),
            Self::Failed { counter: None, .. } => f.write_str("latch failed"),
            Self::Abandoned {
                counter,
                panicking: true,
            } => write!(f, "counter `{counter}` panicked before reporting"),
            Self::Abandoned { counter, .. } => {
                write!(f, "counter `{counter}` was dropped without reporting")
            }
        }
    }

    /// The error of a `Failed` failure built by this crate from a caller's error.
    pub(crate) fn into_error(self) -> E {
        match self {
            Failure::Failed { error, .. } => error,
            Failure::Abandoned { .. } => unreachable!("only `Failed` carries a caller's error"),
        }
    }
}

impl<E> fmt::Debug for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Failed { counter, .. } => f
                .debug_struct("Failed")
                .field("counter", counter)
                .finish_non_exhaustive(),
            Self::Abandoned { counter, panicking } => f
                .debug_struct("Abandoned")
                .field("counter", counter)
                .field("panicking", panicking)
                .finish(),
        }
    }
}

impl<E: fmt::Display> fmt::Display for Failure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_without_error(f)?;
        match self {
            Self::Failed { error, .. } => write!(f, ": {error}"),
            Self::Abandoned { .. } => Ok(()),
        }
    }
}

/// A [`Failure`] as a link of an error chain: its message says what failed, without the
/// error, and its [`source`](core::error::Error::source) is the error. Made by
/// [`Failure::into_chained`] (or `From`).
///
/// Reporters that walk the chain (such as `anyhow`'s `{:#}` and `{:?}`) print each link's
/// message once, and the error can be found in the chain by its type
/// (`anyhow::Error::chain`, then `downcast_ref`). `Failure<E>` itself prints the error in
/// its message and returns no source, since an error that did both would be printed twice
/// by those reporters; and it is an error for every `E` that prints, where this one needs
/// `E: Error + 'static`.
///
/// # Examples
///
/// ```
/// use std::error::Error;
/// use std::fmt;
/// use tally_latch::TrackingLatch;
///
/// #[derive(Clone, Debug)]
/// struct Refused;
/// impl fmt::Display for Refused {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
///         f.write_str("connection refused")
///     }
/// }
/// impl Error for Refused {}
///
/// let ready = TrackingLatch::new_failable(["db", "http"]).unwrap();
/// ready.counter("db").unwrap().fail(Refused).unwrap();
/// let failure = futures_lite::future::block_on(ready.wait()).unwrap_err();
///
/// let error: Box<dyn Error + Send + Sync> = failure.into_chained().into();
/// assert_eq!(error.to_string(), "counter `db` failed");
/// let source = error.source().unwrap();
/// assert_eq!(source.to_string(), "connection refused");
/// assert!(source.is::<Refused>());
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ChainedFailure<E>(Failure<E>);

impl<E> ChainedFailure<E> {
    /// The failure.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::Failure;
    ///
    /// let chained = Failure::Failed { counter: Some("db".into()), error: std::fmt::Error }
    ///     .into_chained();
    /// assert_eq!(chained.failure().counter(), Some("db"));
    /// ```
    pub fn failure(&self) -> &Failure<E> {
        &self.0
    }

    /// The failure, taken back out.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::Failure;
    ///
    /// let failure = Failure::Failed { counter: None, error: std::fmt::Error };
    /// assert_eq!(failure.clone().into_chained().into_failure(), failure);
    /// ```
    pub fn into_failure(self) -> Failure<E> {
        self.0
    }
}

impl<E> From<Failure<E>> for ChainedFailure<E> {
    fn from(failure: Failure<E>) -> Self {
        failure.into_chained()
    }
}

impl<E> fmt::Debug for ChainedFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ChainedFailure").field(&self.0).finish()
    }
}

impl<E> fmt::Display for ChainedFailure<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt_without_error(f)
    }
}

/// The timeout of a [`TrackingLatch`](crate::TrackingLatch): the counters whose count-down
/// had not landed when the deadline passed, at least one. It prints for every error type
/// `E`, since it holds none.
///
/// # Examples
///
/// ```
/// use tally_latch::TrackingLatch;
///
/// let latch = TrackingLatch::new(["shard-1", "shard-2"]).unwrap();
/// latch.count_down_for("shard-1").unwrap();
/// let pending = futures_lite::future::block_on(latch.wait_until(async {})).unwrap_err();
/// assert_eq!(pending.names(), ["shard-2"]);
/// assert_eq!(pending.to_string(), "timed out waiting for: shard-2");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StillPending {
    pub(crate) names: Vec<Cow<'static, str>>,
}

impl StillPending {
    /// The timeout naming `names`, for latches built outside this crate (a latch across
    /// processes reads its pending counters from a server).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_latch::StillPending;
    ///
    /// let pending = StillPending::new(["db", "http"]);
    /// assert_eq!(pending.names(), ["db", "http"]);
    /// assert_eq!(pending.to_string(), "timed out waiting for: db, http");
    /// ```
    pub fn new<I>(names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<Cow<'static, str>>,
    {
        Self {
            names: names.into_iter().map(Into::into).collect(),
        }
    }

    /// The names, in the order the latch was built with.
    ///
    /// # Examples
    ///
    /// ```
    /// # use tally_latch::TrackingLatch;
    /// let latch = TrackingLatch::new(["a", "b"]).unwrap();
    /// let pending = futures_lite::future::block_on(latch.wait_until(async {})).unwrap_err();
    /// assert_eq!(pending.names(), ["a", "b"]);
    /// ```
    pub fn names(&self) -> &[Cow<'static, str>] {
        &self.names
    }
}

impl fmt::Display for StillPending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timed out waiting for: ")?;
        for (i, name) in self.names.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        Ok(())
    }
}

impl core::error::Error for TimedOut {}
impl core::error::Error for CountTooLarge {}
impl core::error::Error for NameError {}
impl<E: fmt::Display> core::error::Error for Failure<E> {}
impl<E: core::error::Error + 'static> core::error::Error for ChainedFailure<E> {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        self.0
            .error()
            .map(|error| error as &(dyn core::error::Error + 'static))
    }
}
impl core::error::Error for StillPending {}
