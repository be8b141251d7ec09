//! An item taken out by an immediate shutdown.

use core::fmt;

use crate::codec::CodecError;

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
