//! An item taken out by an immediate shutdown.

use core::fmt;

use crate::codec::CodecError;
use crate::server::error::Error;

/// One item taken out by [`Queue::shutdown_now`](crate::Queue::shutdown_now): decoded, or
/// its bytes if the codec could not decode them (nothing is dropped).
///
/// # Examples
///
/// ```
/// use tally_redis::Drained;
///
/// let item: Drained<u8> = Drained::Item(3);
/// assert_eq!(item.ok(), Some(3));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub enum Drained<T> {
    /// The decoded item.
    Item(T),
    /// Bytes the codec refused, with its reason.
    Undecodable {
        /// The stored bytes.
        bytes: alloc::vec::Vec<u8>,
        /// Why they did not decode.
        error: CodecError,
    },
}

impl<T> Drained<T> {
    /// The item, if it decoded.
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{CodecError, Drained};
    ///
    /// let bad: Drained<u8> = Drained::Undecodable { bytes: vec![1], error: CodecError::new("x") };
    /// assert_eq!(bad.ok(), None);
    /// ```
    pub fn ok(self) -> Option<T> {
        match self {
            Drained::Item(item) => Some(item),
            Drained::Undecodable { .. } => None,
        }
    }
}

impl<T> fmt::Debug for Drained<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drained::Item(_) => f.write_str("Item(..)"),
            Drained::Undecodable { bytes, error } => f
                .debug_struct("Undecodable")
                .field("len", &bytes.len())
                .field("error", error)
                .finish(),
        }
    }
}

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
    pub drained: alloc::vec::Vec<(tally_queue::JobId, crate::queue::drained::Drained<T>)>,
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
