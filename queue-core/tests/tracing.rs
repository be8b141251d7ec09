//! The `tracing` events of the crate docs' table, captured by a subscriber of the test's
//! own. Run with `cargo test -p tally-queue --features tracing --test tracing`.
#![cfg(feature = "tracing")]

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use tally_queue::{AbandonPolicy, Outcome, Queue};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Records each event as `LEVEL message field=value ...`.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target() == "tally_queue"
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = Line(event.metadata().level().to_string());
        event.record(&mut line);
        self.0.lock().unwrap().push(line.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(Level::TRACE.into())
    }
}

fn captured(run: impl FnOnce()) -> Vec<String> {
    let capture = Capture::default();
    tracing::subscriber::with_default(capture.clone(), run);
    let lines = capture.0.lock().unwrap().clone();
    lines
}

#[test]
fn every_job_event_of_the_table_is_emitted() {
    let lines = captured(|| {
        let queue = Queue::unbounded();
        let worker = queue.worker();
        for n in 0..5 {
            queue.try_put(n).unwrap();
        }
        queue.try_get().unwrap().succeed();
        queue.try_get().unwrap().resolve(Outcome::Uncertain);
        drop(queue.try_get().unwrap());
        queue.try_get().unwrap().retry().unwrap();
        queue.shutdown_now();
        drop(worker);
    });
    let expected = [
        "TRACE job accepted id=0",
        "TRACE job accepted id=1",
        "TRACE job accepted id=2",
        "TRACE job accepted id=3",
        "TRACE job accepted id=4",
        "TRACE job delivered id=0 attempt=1",
        "DEBUG job ended id=0 outcome=succeeded",
        "TRACE job delivered id=1 attempt=1",
        "DEBUG job ended id=1 outcome=uncertain",
        "TRACE job delivered id=2 attempt=1",
        "WARN job abandoned id=2 panicking=false",
        "TRACE job delivered id=3 attempt=1",
        "DEBUG job retried id=3",
        "DEBUG queue shut down unfinished=2",
        "DEBUG job discarded id=4",
        "DEBUG job discarded id=3",
        "DEBUG queue drained discarded=2",
        "DEBUG last worker left",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn the_last_producer_is_reported_before_the_shutdown_it_causes() {
    let lines = captured(|| {
        let queue = Queue::<u8>::unbounded();
        drop(queue.producer());
    });
    assert_eq!(
        lines,
        [
            "DEBUG last producer left",
            "DEBUG queue shut down unfinished=0"
        ]
    );
}

#[test]
fn redelivery_events_carry_the_attempt() {
    let lines = captured(|| {
        let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
        queue.try_put(0).unwrap();
        queue.try_put(1).unwrap();
        drop(queue.try_get().unwrap());
        // The returned item is served before the fresh one.
        drop(queue.try_get().unwrap());
        queue.try_get().unwrap().succeed();
        let held = queue.try_put(2).map(|_| queue.try_get().unwrap()).unwrap();
        queue.shutdown_now();
        drop(held);
    });
    let expected = [
        "TRACE job accepted id=0",
        "TRACE job accepted id=1",
        "TRACE job delivered id=0 attempt=1",
        "WARN job abandoned id=0 panicking=false",
        "DEBUG job redelivered id=0 attempt=2",
        "TRACE job delivered id=0 attempt=2",
        "WARN job abandoned id=0 panicking=false",
        "WARN job dead-lettered id=0 attempts=2",
        "TRACE job delivered id=1 attempt=1",
        "DEBUG job ended id=1 outcome=succeeded",
        "TRACE job accepted id=2",
        "TRACE job delivered id=2 attempt=1",
        "DEBUG queue shut down unfinished=1",
        "DEBUG queue drained discarded=0",
        "WARN job abandoned id=2 panicking=false",
        "DEBUG job discarded id=2",
        "WARN job dead-lettered id=2 attempts=1",
    ];
    assert_eq!(lines, expected);
}

#[test]
fn an_uncertain_abandonment_is_abandoned_then_ended() {
    let lines = captured(|| {
        let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::Uncertain);
        queue.try_put(0).unwrap();
        drop(queue.try_get().unwrap());
        assert_eq!(queue.ledger().uncertain, 1);
    });
    assert_eq!(
        lines,
        [
            "TRACE job accepted id=0",
            "TRACE job delivered id=0 attempt=1",
            "WARN job abandoned id=0 panicking=false",
            "DEBUG job ended id=0 outcome=uncertain",
        ]
    );
}
