//! How items become bytes on the server and back.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
#[cfg(feature = "json")]
use core::marker::PhantomData;

/// Turns items into bytes for the stream and back.
///
/// A [`Queue`](crate::Queue) stores only bytes; the codec decides their format. An encode
/// error refuses the put and hands the item back; a decode error on a delivery ends that
/// entry as a dead letter with its bytes kept (see [`Queue::get`](crate::Queue::get)).
///
/// # Examples
///
/// ```
/// use tally_redis::{Codec, CodecError};
///
/// /// Numbers as decimal text.
/// #[derive(Clone, Debug)]
/// struct Decimal;
///
/// impl Codec for Decimal {
///     type Item = u64;
///     fn encode(&self, item: &u64) -> Result<Vec<u8>, CodecError> {
///         Ok(item.to_string().into_bytes())
///     }
///     fn decode(&self, bytes: &[u8]) -> Result<u64, CodecError> {
///         core::str::from_utf8(bytes)
///             .ok()
///             .and_then(|text| text.parse().ok())
///             .ok_or_else(|| CodecError::new("not a decimal number"))
///     }
/// }
///
/// assert_eq!(Decimal.decode(&Decimal.encode(&42).unwrap()).unwrap(), 42);
/// assert_eq!(Decimal.decode(b"x").unwrap_err().to_string(), "not a decimal number");
/// ```
pub trait Codec: Send + Sync + 'static {
    /// The item type.
    type Item: Send + 'static;

    /// The bytes that represent `item`.
    ///
    /// # Errors
    ///
    /// When `item` cannot be represented.
    fn encode(&self, item: &Self::Item) -> Result<Vec<u8>, CodecError>;

    /// The item that `bytes` represent.
    ///
    /// # Errors
    ///
    /// When `bytes` are not a valid encoding.
    fn decode(&self, bytes: &[u8]) -> Result<Self::Item, CodecError>;

    /// As [`decode`](Codec::decode), given the bytes to keep: a codec whose item can
    /// reuse them (as [`Bytes`] does) saves a copy. Deliveries are decoded through this;
    /// by default it calls `decode`.
    ///
    /// # Errors
    ///
    /// As [`decode`](Codec::decode).
    ///
    /// # Examples
    ///
    /// ```
    /// use tally_redis::{Bytes, Codec};
    ///
    /// let bytes = b"job".to_vec();
    /// let at = bytes.as_ptr();
    /// let item = Bytes.decode_owned(bytes).unwrap();
    /// assert_eq!(item, b"job");
    /// assert_eq!(item.as_ptr(), at, "the same buffer, not a copy");
    /// ```
    fn decode_owned(&self, bytes: Vec<u8>) -> Result<Self::Item, CodecError> {
        self.decode(&bytes)
    }
}

/// A codec could not encode or decode; says why.
///
/// # Examples
///
/// ```
/// let error = tally_redis::CodecError::new("bad byte at 3");
/// assert_eq!(error.to_string(), "bad byte at 3");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodecError(String);

impl CodecError {
    /// An error with this message (lowercase, no trailing period).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::CodecError::new("too deep").message(), "too deep");
    /// ```
    pub fn new(message: impl Into<String>) -> Self {
        CodecError(message.into())
    }

    /// The message.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(tally_redis::CodecError::new("x").message(), "x");
    /// ```
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for CodecError {}

/// The identity codec: items are byte vectors, stored as they are.
///
/// # Examples
///
/// ```
/// use tally_redis::{Bytes, Codec};
///
/// assert_eq!(Bytes.encode(&b"job".to_vec()).unwrap(), b"job");
/// assert_eq!(Bytes.decode(b"job").unwrap(), b"job");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bytes;

impl Codec for Bytes {
    type Item = Vec<u8>;

    fn encode(&self, item: &Vec<u8>) -> Result<Vec<u8>, CodecError> {
        Ok(item.clone())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Vec<u8>, CodecError> {
        Ok(bytes.to_vec())
    }

    fn decode_owned(&self, bytes: Vec<u8>) -> Result<Vec<u8>, CodecError> {
        Ok(bytes)
    }
}

/// JSON through serde (feature `json`).
///
/// # Examples
///
/// ```
/// use tally_redis::{Codec, Json};
///
/// let codec = Json::<(u32, String)>::new();
/// let bytes = codec.encode(&(7, "mail".to_string())).unwrap();
/// assert_eq!(bytes, br#"[7,"mail"]"#);
/// assert_eq!(codec.decode(&bytes).unwrap(), (7, "mail".to_string()));
/// assert!(codec.decode(b"{").is_err());
/// ```
#[cfg(feature = "json")]
pub struct Json<T>(PhantomData<fn() -> T>);

#[cfg(feature = "json")]
impl<T> Json<T> {
    /// The JSON codec for `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// let _codec = tally_redis::Json::<u8>::new();
    /// ```
    pub const fn new() -> Self {
        Json(PhantomData)
    }
}

#[cfg(feature = "json")]
impl<T> Default for Json<T> {
    fn default() -> Self {
        Json::new()
    }
}

#[cfg(feature = "json")]
impl<T> Clone for Json<T> {
    fn clone(&self) -> Self {
        Json::new()
    }
}

#[cfg(feature = "json")]
impl<T> fmt::Debug for Json<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Json")
    }
}

#[cfg(feature = "json")]
impl<T> Codec for Json<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned + Send + 'static,
{
    type Item = T;

    fn encode(&self, item: &T) -> Result<Vec<u8>, CodecError> {
        serde_json::to_vec(item).map_err(|error| CodecError::new(alloc::format!("json: {error}")))
    }

    fn decode(&self, bytes: &[u8]) -> Result<T, CodecError> {
        serde_json::from_slice(bytes)
            .map_err(|error| CodecError::new(alloc::format!("json: {error}")))
    }
}
