//! The queue's figures through the `metrics` facade (the `metrics` feature): the names,
//! in one place (and in the crate docs' table), and the calls that record them. Without
//! the feature this module is not built.

use alloc::vec;
use core::time::Duration;

use metrics::{Key, Label, Level, Metadata};

use crate::ledger::Ledger;

pub(crate) use crate::metric_names::{
    ACCEPTED, BUFFERED, BUFFERED_SECONDS, DEAD_LETTERS, ENDED, IN_FLIGHT, IN_FLIGHT_SECONDS,
    REDELIVERED,
};

/// Records a ledger snapshot of the queue `label` (see `Queue::record_metrics`).
pub(crate) fn record(label: &'static str, ledger: &Ledger, redeliveries: u64, dead_letters: usize) {
    metrics::counter!(ACCEPTED, "queue" => label).absolute(ledger.accepted);
    for (outcome, count) in [
        ("succeeded", ledger.succeeded),
        ("rejected", ledger.rejected),
        ("uncertain", ledger.uncertain),
        ("abandoned", ledger.abandoned),
        ("discarded", ledger.discarded),
    ] {
        metrics::counter!(ENDED, "queue" => label, "outcome" => outcome).absolute(count);
    }
    // Lossy above 2^53 jobs, which a gauge of a live queue never reaches.
    metrics::gauge!(BUFFERED, "queue" => label).set(ledger.buffered as f64);
    metrics::gauge!(IN_FLIGHT, "queue" => label).set(ledger.in_flight as f64);
    metrics::counter!(REDELIVERED, "queue" => label).absolute(redeliveries);
    metrics::gauge!(DEAD_LETTERS, "queue" => label).set(dead_letters as f64);
}

/// Where the histograms are recorded from.
const METADATA: Metadata<'static> = Metadata::new("tally_queue", Level::INFO, Some(module_path!()));

/// The keys of a queue's histograms, built once per label: recording through them
/// allocates nothing (the macros would build a key, and allocate, at every call).
pub(crate) struct Keys {
    buffered_seconds: Key,
    in_flight_seconds: Key,
}

impl Keys {
    pub(crate) fn new(label: &'static str) -> Self {
        let key = |name: &'static str| {
            Key::from_parts(name, vec![Label::from_static_parts("queue", label)])
        };
        Keys {
            buffered_seconds: key(BUFFERED_SECONDS),
            in_flight_seconds: key(IN_FLIGHT_SECONDS),
        }
    }
}

/// An item of the queue whose keys are `keys` was taken after `waited` buffered.
pub(crate) fn buffered_for(keys: &Keys, waited: Duration) {
    metrics::with_recorder(|recorder| {
        recorder
            .register_histogram(&keys.buffered_seconds, &METADATA)
            .record(waited.as_secs_f64());
    });
}

/// A delivery of the queue whose keys are `keys` ended (resolved, retried or dropped)
/// after `held`.
pub(crate) fn delivery_ended(keys: &Keys, held: Duration) {
    metrics::with_recorder(|recorder| {
        recorder
            .register_histogram(&keys.in_flight_seconds, &METADATA)
            .record(held.as_secs_f64());
    });
}
