//! The latch's stream of count-down events, readable by any process.

use alloc::string::String;
use core::fmt;

use crate::server::error::Error;
use crate::server::reply::Entry;

/// What happened.
///
/// # Examples
///
/// ```
/// assert_eq!(tally_redis::EventKind::Reported.to_string(), "reported");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EventKind {
    /// The latch was created.
    Created,
    /// A holder claimed a counter.
    Claimed,
    /// A counter reported (counted once).
    Reported,
    /// A counter's lease expired and, by [`OnExpiry::Reclaim`](crate::OnExpiry::Reclaim),
    /// it can be claimed again.
    Released,
    /// The latch failed (the first failure).
    Failed,
    /// The last counter reported.
    Opened,
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EventKind::Created => "created",
            EventKind::Claimed => "claimed",
            EventKind::Reported => "reported",
            EventKind::Released => "released",
            EventKind::Failed => "failed",
            EventKind::Opened => "opened",
        })
    }
}

/// One entry of a latch's event stream, from
/// [`TrackingLatch::events`](crate::TrackingLatch::events).
///
/// # Examples
///
/// ```no_run
/// # async fn demo(latch: tally_redis::TrackingLatch) {
/// for event in latch.events(None, 100).await.unwrap() {
///     println!("{event}");
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LatchEvent {
    /// The stream entry id: pass it as `after` to read on.
    pub id: String,
    /// What happened.
    pub kind: EventKind,
    /// The counter it concerns (empty for created and opened, and for the owner's fail).
    pub counter: String,
    /// The holder involved, if any.
    pub holder: String,
    /// The server's clock, in milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Counters that had not reported, just after.
    pub left: u64,
}

impl fmt::Display for LatchEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.id, self.kind)?;
        if !self.counter.is_empty() {
            write!(f, " `{}`", self.counter)?;
        }
        write!(f, ", {} left", self.left)
    }
}

impl LatchEvent {
    pub(crate) fn parse((id, fields): Entry) -> Result<LatchEvent, Error> {
        let mut event = LatchEvent {
            id,
            kind: EventKind::Created,
            counter: String::new(),
            holder: String::new(),
            at_ms: 0,
            left: 0,
        };
        for (name, value) in fields {
            let text = String::from_utf8_lossy(&value).into_owned();
            match name.as_str() {
                "e" => {
                    event.kind = match text.as_str() {
                        "created" => EventKind::Created,
                        "claimed" => EventKind::Claimed,
                        "reported" => EventKind::Reported,
                        "released" => EventKind::Released,
                        "failed" => EventKind::Failed,
                        "opened" => EventKind::Opened,
                        other => {
                            return Err(Error::Protocol(alloc::format!(
                                "unknown latch event {other:?}"
                            )))
                        }
                    }
                }
                "c" => event.counter = text,
                "h" => event.holder = text,
                "t" => event.at_ms = text.parse().unwrap_or(0),
                "left" => event.left = text.parse().unwrap_or(0),
                _ => {}
            }
        }
        Ok(event)
    }
}
