//! The queue's figures through the `metrics` facade (the `metrics` feature), under the
//! names of `tally-queue`'s own feature, so one dashboard reads both. Without the feature
//! this module is not built.

use alloc::string::String;
use alloc::vec;
use core::time::Duration;

use metrics::{Key, Label, Level, Metadata};

use crate::queue::status::Status;

/// Jobs accepted (counter).
const ACCEPTED: &str = "tally_queue_accepted_total";
/// Jobs ended, by `outcome` (counter).
const ENDED: &str = "tally_queue_ended_total";
/// Jobs buffered (gauge).
const BUFFERED: &str = "tally_queue_buffered";
/// Jobs in flight (gauge).
const IN_FLIGHT: &str = "tally_queue_in_flight";
/// Redeliveries of jobs whose lease expired (counter).
const REDELIVERED: &str = "tally_queue_redelivered_total";
/// Dead letters kept, not yet removed (gauge).
const DEAD_LETTERS: &str = "tally_queue_dead_letters";
/// Seconds from becoming buffered (put, or put back by a retry) to being taken
/// (histogram).
const BUFFERED_SECONDS: &str = "tally_queue_buffered_seconds";
/// Seconds from a delivery to its end: resolved, retried or dropped (histogram).
const IN_FLIGHT_SECONDS: &str = "tally_queue_in_flight_seconds";

/// Records a status snapshot of the queue `name`, with `dead_kept` dead letters kept.
pub(crate) fn record(name: &str, status: &Status, dead_kept: u64) {
    let ledger = &status.ledger;
    let queue = String::from(name);
    metrics::counter!(ACCEPTED, "queue" => queue.clone()).absolute(ledger.accepted);
    for (outcome, count) in [
        ("succeeded", ledger.succeeded),
        ("rejected", ledger.rejected),
        ("uncertain", ledger.uncertain),
        ("abandoned", ledger.abandoned),
        ("discarded", ledger.discarded),
    ] {
        metrics::counter!(ENDED, "queue" => queue.clone(), "outcome" => outcome).absolute(count);
    }
    // Lossy above 2^53 jobs, which a gauge of a live queue never reaches.
    metrics::gauge!(BUFFERED, "queue" => queue.clone()).set(ledger.buffered as f64);
    metrics::gauge!(IN_FLIGHT, "queue" => queue.clone()).set(ledger.in_flight as f64);
    metrics::counter!(REDELIVERED, "queue" => queue.clone()).absolute(status.redelivered);
    metrics::gauge!(DEAD_LETTERS, "queue" => queue).set(dead_kept as f64);
}

/// Where the histograms are recorded from.
const METADATA: Metadata<'static> = Metadata::new("tally_redis", Level::INFO, Some(module_path!()));

/// The keys of a queue's histograms, built once per handle: recording through them
/// allocates nothing.
#[derive(Debug)]
pub(crate) struct Keys {
    buffered_seconds: Key,
    in_flight_seconds: Key,
}

impl Keys {
    pub(crate) fn new(name: &str) -> Self {
        let key = |metric: &'static str| {
            Key::from_parts(metric, vec![Label::new("queue", String::from(name))])
        };
        Keys {
            buffered_seconds: key(BUFFERED_SECONDS),
            in_flight_seconds: key(IN_FLIGHT_SECONDS),
        }
    }

    /// A job was taken after `waited` buffered.
    pub(crate) fn buffered_for(&self, waited: Duration) {
        metrics::with_recorder(|recorder| {
            recorder
                .register_histogram(&self.buffered_seconds, &METADATA)
                .record(waited.as_secs_f64());
        });
    }

    /// A delivery ended (resolved, retried or dropped) after `held`.
    pub(crate) fn delivery_ended(&self, held: Duration) {
        metrics::with_recorder(|recorder| {
            recorder
                .register_histogram(&self.in_flight_seconds, &METADATA)
                .record(held.as_secs_f64());
        });
    }
}

/// How long the entry `entry` (an id `<ms>-<seq>`: the server's clock when it was added)
/// waited until now by this host's clock; zero if the clocks disagree the other way.
pub(crate) fn since_entry(entry: &str) -> Duration {
    let added = entry
        .split('-')
        .next()
        .and_then(|ms| ms.parse::<u64>().ok())
        .unwrap_or(0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    Duration::from_millis(now.saturating_sub(added))
}
