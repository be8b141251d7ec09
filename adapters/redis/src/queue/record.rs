//! Durable records of endings that need a reader: uncertain outcomes and dead letters.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use tally_queue::JobId;

/// One record from [`Queue::uncertain`](crate::Queue::uncertain) or
/// [`Queue::dead_letters`](crate::Queue::dead_letters): which job, which attempt, who held
/// it, why, when, and the item's bytes (decode them with
/// [`Queue::decode`](crate::Queue::decode)).
///
/// Records stay on the server until [`Queue::remove_record`](crate::Queue::remove_record)
/// removes them: that is the reconciler's "done".
///
/// # Examples
///
/// ```
/// use tally_redis::Record;
/// use tally_queue::JobId;
///
/// let record = Record {
///     key: "1-0".into(),
///     job: JobId::from_raw(4),
///     attempt: 2,
///     consumer: "w1".into(),
///     reason: "uncertain".into(),
///     at_ms: 0,
///     bytes: b"job".to_vec(),
/// };
/// assert_eq!(record.to_string(), "#4 attempt 2 held by w1: uncertain");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Record {
    /// The record's own id in its stream, for paging and removal.
    pub key: String,
    /// The job.
    pub job: JobId,
    /// The attempt it ended on.
    pub attempt: u64,
    /// The consumer that held it (or that reclaimed it, for a lease that expired).
    pub consumer: String,
    /// Why it is here.
    pub reason: String,
    /// When, in milliseconds since the Unix epoch, by the server's clock.
    pub at_ms: u64,
    /// The item's bytes.
    pub bytes: Vec<u8>,
}

impl fmt::Debug for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Record")
            .field("key", &self.key)
            .field("job", &self.job)
            .field("attempt", &self.attempt)
            .field("consumer", &self.consumer)
            .field("reason", &self.reason)
            .field("at_ms", &self.at_ms)
            .field("len", &self.bytes.len())
            .finish()
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} attempt {} held by {}: {}",
            self.job, self.attempt, self.consumer, self.reason
        )
    }
}

/// Which list of records.
///
/// # Examples
///
/// ```
/// assert_ne!(tally_redis::Records::Uncertain, tally_redis::Records::Dead);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Records {
    /// Deliveries resolved as uncertain.
    Uncertain,
    /// Dead letters: deliveries that ended without an outcome and kept their item.
    Dead,
}
