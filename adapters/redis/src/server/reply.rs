//! Reading script replies.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use redis::Value;

use crate::server::error::Error;

/// A script reply: an array whose first element is a status word.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: String,
    rest: alloc::vec::IntoIter<Value>,
}

impl Reply {
    pub(crate) fn parse(value: Value) -> Result<Self, Error> {
        let Value::Array(items) = value else {
            return Err(Error::Protocol(format!("expected an array, got {value:?}")));
        };
        let mut rest = items.into_iter();
        let status = match rest.next() {
            Some(first) => text(first)?,
            None => return Err(Error::Protocol("empty reply".into())),
        };
        match status.as_str() {
            "gone" => Err(Error::Gone),
            "foreign" => {
                let mut reply = Reply { status, rest };
                let key = reply.text()?;
                let found = reply.text()?;
                Err(Error::Foreign { key, found })
            }
            _ => Ok(Reply { status, rest }),
        }
    }

    pub(crate) fn left(&self) -> usize {
        self.rest.len()
    }

    pub(crate) fn bytes(&mut self) -> Result<Vec<u8>, Error> {
        match self.rest.next() {
            Some(Value::BulkString(bytes)) => Ok(bytes),
            Some(Value::SimpleString(text)) => Ok(text.into_bytes()),
            Some(Value::Int(n)) => Ok(format!("{n}").into_bytes()),
            other => Err(Error::Protocol(format!("expected bytes, got {other:?}"))),
        }
    }

    pub(crate) fn text(&mut self) -> Result<String, Error> {
        match self.rest.next() {
            Some(value) => text(value),
            None => Err(Error::Protocol("reply too short".into())),
        }
    }

    pub(crate) fn int(&mut self) -> Result<u64, Error> {
        match self.rest.next() {
            Some(Value::Int(n)) if n >= 0 => Ok(n as u64),
            Some(Value::BulkString(bytes)) => core::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| Error::Protocol("expected a number".into())),
            other => Err(Error::Protocol(format!("expected a number, got {other:?}"))),
        }
    }

    /// The next value as it came.
    pub(crate) fn value(&mut self) -> Result<Value, Error> {
        self.rest
            .next()
            .ok_or_else(|| Error::Protocol("reply too short".into()))
    }

    pub(crate) fn unexpected(&self) -> Error {
        Error::Protocol(format!("unexpected status {:?}", self.status))
    }
}

pub(crate) fn text(value: Value) -> Result<String, Error> {
    match value {
        Value::BulkString(bytes) => {
            String::from_utf8(bytes).map_err(|_| Error::Protocol("expected utf-8 text".into()))
        }
        Value::SimpleString(text) => Ok(text),
        Value::VerbatimString { text, .. } => Ok(text),
        Value::Okay => Ok("OK".into()),
        Value::Int(n) => Ok(format!("{n}")),
        other => Err(Error::Protocol(format!("expected text, got {other:?}"))),
    }
}

/// A stream entry: its id and its fields.
pub(crate) type Entry = (String, Vec<(String, Vec<u8>)>);

/// A stream entry as `XRANGE`/`XREADGROUP` return it.
pub(crate) fn entry(value: Value) -> Result<Entry, Error> {
    let Value::Array(mut parts) = value else {
        return Err(Error::Protocol("expected a stream entry".into()));
    };
    if parts.len() != 2 {
        return Err(Error::Protocol("expected a stream entry".into()));
    }
    let fields = parts.pop().unwrap_or_default();
    let id = text(parts.pop().unwrap_or_default())?;
    let Value::Array(fields) = fields else {
        return Err(Error::Protocol("expected stream fields".into()));
    };
    let mut out = Vec::with_capacity(fields.len() / 2);
    let mut fields = fields.into_iter();
    while let (Some(name), Some(value)) = (fields.next(), fields.next()) {
        let value = match value {
            Value::BulkString(bytes) => bytes,
            other => text(other)?.into_bytes(),
        };
        out.push((text(name)?, value));
    }
    Ok((id, out))
}
