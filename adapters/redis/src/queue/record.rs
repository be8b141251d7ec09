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
    /// The job; [`JobId::from_raw`]`(u64::MAX)` for a foreign entry (see
    /// [`is_foreign`](Record::is_foreign)), which has none.
    pub job: JobId,
    /// The attempt it ended on.
    pub attempt: u64,
    /// The consumer that held it (for a lease that expired: the one that held it until
    /// then).
    pub consumer: String,
    /// Why it is here.
    pub reason: String,
    /// When, in milliseconds since the Unix epoch, by the server's clock.
    pub at_ms: u64,
    /// The item's bytes (for a foreign entry: its fields, one `name=value` a line).
    pub bytes: Vec<u8>,
}

impl Record {
    /// Whether this is a dead letter of a foreign entry: an entry something else added to
    /// the queue's stream, which this crate never accepted (it is counted in
    /// [`Status::foreign`](crate::Status::foreign), not in the ledger).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// # async fn demo(queue: tally_redis::Queue<tally_redis::Bytes>) {
    /// for record in queue.dead_letters(None, 100).await.unwrap() {
    ///     if record.is_foreign() {
    ///         println!("not ours: {}", record.reason);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn is_foreign(&self) -> bool {
        self.job == JobId::from_raw(u64::MAX)
    }

    /// A record from its stream entry.
    pub(crate) fn from_fields((key, fields): (String, Vec<(String, Vec<u8>)>)) -> Record {
        let mut record = Record {
            key,
            job: JobId::from_raw(u64::MAX),
            attempt: 0,
            consumer: String::new(),
            reason: String::new(),
            at_ms: 0,
            bytes: Vec::new(),
        };
        for (name, value) in fields {
            let text = || String::from_utf8_lossy(&value).into_owned();
            match name.as_str() {
                "j" => record.job = JobId::from_raw(text().parse().unwrap_or(u64::MAX)),
                "a" => record.attempt = text().parse().unwrap_or(0),
                "c" => record.consumer = text(),
                "why" => record.reason = text(),
                "t" => record.at_ms = text().parse().unwrap_or(0),
                "p" => record.bytes = value,
                _ => {}
            }
        }
        record
    }
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
