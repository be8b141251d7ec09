//! The `tracing` events of every latch type, seen by a minimal subscriber. Run with
//! `cargo test -p tally-latch --features tracing --test tracing`.
#![cfg(feature = "tracing")]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One event: its message and its other fields, all as text.
type Seen = (String, BTreeMap<String, String>);

/// Records every event with all its fields.
#[derive(Clone, Default)]
struct Recorder {
    events: Arc<Mutex<Vec<Seen>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        assert_eq!(event.metadata().target(), "tally_latch");
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let message = fields.remove("message").unwrap_or_default();
        self.events.lock().unwrap().push((message, fields));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

fn recorded(run: impl FnOnce()) -> Vec<Seen> {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), run);
    let events = recorder.events.lock().unwrap().clone();
    events
}

fn field<'a>(event: &'a Seen, name: &str) -> &'a str {
    event.1.get(name).map(String::as_str).unwrap_or("<missing>")
}

#[test]
fn count_down_latch_traces_count_downs_and_opening_with_its_label() {
    let events = recorded(|| {
        let latch = CountDownLatch::new(2).with_label("shards");
        latch.count_down();
        latch.count_down();
    });
    let messages: Vec<_> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        messages,
        ["latch count-down", "latch count-down", "latch opened"]
    );
    assert!(events.iter().all(|e| field(e, "label") == "shards"));
    assert_eq!(field(&events[1], "remaining"), "0");
}

#[test]
fn failable_latch_traces_its_failure_with_the_reason() {
    let events = recorded(|| {
        let latch = FailableLatch::new(2).with_label("replicas");
        latch.fail("quorum lost").unwrap();
        let _ = latch.fail("again"); // refused: no second event
    });
    assert_eq!(events.len(), 1);
    let failed = &events[0];
    assert_eq!(failed.0, "latch failed");
    assert_eq!(field(failed, "label"), "replicas");
    assert_eq!(field(failed, "reason"), "failed");
    assert_eq!(field(failed, "error_type"), "&str");
}

#[test]
fn tracking_latch_traces_a_dropped_counter_by_name_once() {
    let events = recorded(|| {
        let latch = TrackingLatch::new(["db", "http"])
            .unwrap()
            .with_label("readiness");
        latch.count_down_for("http").unwrap();
        drop(latch.counter("db").unwrap());
    });
    let messages: Vec<_> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(messages, ["latch count-down", "latch failed"]);
    assert!(events.iter().all(|e| field(e, "label") == "readiness"));
    assert_eq!(field(&events[0], "counter"), "http");
    assert_eq!(field(&events[1], "counter"), "db");
    assert_eq!(field(&events[1], "reason"), "abandoned");
}
