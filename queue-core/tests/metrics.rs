//! The `metrics` feature: `record_metrics` sets every figure to the ledger's, under the
//! queue's label; each take records the item's time buffered and each delivery's end its
//! time in flight.
#![cfg(feature = "metrics")]

use std::collections::HashMap;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Waker};

use metrics::{Key, KeyName, Metadata, SharedString, Unit};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tally_queue::{AbandonPolicy, Outcome, Queue};

/// The figures of each queue, by label and then by name (with `/outcome` for the ended
/// counters), from one snapshot (a snapshot takes the counters' increments since the last).
fn figures(snapshotter: &Snapshotter) -> HashMap<String, HashMap<String, DebugValue>> {
    let mut by_label: HashMap<String, HashMap<String, DebugValue>> = HashMap::new();
    for (key, _, _, value) in snapshotter.snapshot().into_vec() {
        let Some(label) = key.key().labels().find(|l| l.key() == "queue") else {
            continue;
        };
        let name = match key.key().labels().find(|l| l.key() == "outcome") {
            Some(outcome) => format!("{}/{}", key.key().name(), outcome.value()),
            None => key.key().name().to_string(),
        };
        by_label
            .entry(label.value().to_string())
            .or_default()
            .insert(name, value);
    }
    by_label
}

fn counter(figures: &HashMap<String, DebugValue>, name: &str) -> u64 {
    match figures.get(name) {
        Some(DebugValue::Counter(n)) => *n,
        other => panic!("{name}: {other:?}"),
    }
}

fn gauge(figures: &HashMap<String, DebugValue>, name: &str) -> f64 {
    match figures.get(name) {
        Some(DebugValue::Gauge(x)) => x.into_inner(),
        other => panic!("{name}: {other:?}"),
    }
}

fn histogram_len(figures: &HashMap<String, DebugValue>, name: &str) -> usize {
    match figures.get(name) {
        Some(DebugValue::Histogram(samples)) => samples.len(),
        None => 0,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn record_metrics_matches_the_ledger_for_every_outcome_per_label() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let jobs = Queue::unbounded()
            .with_label("jobs")
            .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
        let other = Queue::unbounded().with_label("other");
        for n in 0..8 {
            jobs.try_put(n).unwrap();
        }
        other.try_put(0).unwrap();
        jobs.try_get().unwrap().succeed();
        jobs.try_get().unwrap().reject();
        jobs.try_get().unwrap().resolve(Outcome::Uncertain);
        drop(jobs.try_get().unwrap()); // redelivered
        let again = jobs.try_get().unwrap();
        assert_eq!(again.attempt(), 2);
        drop(again); // its last attempt: a dead letter, abandoned
        let _held = jobs
            .try_get()
            .unwrap()
            .retry_at(std::future::pending::<()>())
            .unwrap();
        let in_flight = jobs.try_get().unwrap();
        jobs.record_metrics();
        other.record_metrics();

        let ledger = jobs.ledger();
        let mut all = figures(&snapshotter);
        let seen = all.remove("jobs").unwrap();
        assert_eq!(
            counter(&seen, "tally_queue_accepted_total"),
            ledger.accepted
        );
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/succeeded"),
            ledger.succeeded
        );
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/rejected"),
            ledger.rejected
        );
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/uncertain"),
            ledger.uncertain
        );
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/abandoned"),
            ledger.abandoned
        );
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/discarded"),
            ledger.discarded
        );
        assert_eq!(gauge(&seen, "tally_queue_buffered"), ledger.buffered as f64);
        assert_eq!(
            gauge(&seen, "tally_queue_in_flight"),
            ledger.in_flight as f64
        );
        assert_eq!(counter(&seen, "tally_queue_redelivered_total"), 1);
        assert_eq!(gauge(&seen, "tally_queue_dead_letters"), 1.0);
        assert_eq!(
            (
                ledger.accepted,
                ledger.succeeded,
                ledger.rejected,
                ledger.uncertain
            ),
            (8, 1, 1, 1)
        );
        // One held retry and two never taken are buffered; one is in flight.
        assert_eq!(
            (ledger.abandoned, ledger.buffered, ledger.in_flight),
            (1, 3, 1)
        );
        // Six deliveries ended (three resolved, two dropped, one retried).
        assert_eq!(histogram_len(&seen, "tally_queue_in_flight_seconds"), 6);
        // Seven takes (the redelivered item twice), each after its time buffered.
        assert_eq!(histogram_len(&seen, "tally_queue_buffered_seconds"), 7);

        // The other queue's figures are its own.
        let theirs = all.remove("other").unwrap();
        assert_eq!(counter(&theirs, "tally_queue_accepted_total"), 1);
        assert_eq!(gauge(&theirs, "tally_queue_buffered"), 1.0);

        // A shutdown_now: the discards show at the next recording.
        drop(in_flight);
        let drained = jobs.shutdown_now();
        jobs.record_metrics();
        let seen = figures(&snapshotter).remove("jobs").unwrap();
        let ledger = jobs.ledger();
        assert_eq!(drained.len() as u64, ledger.discarded);
        // A snapshot reports a counter's rise since the last one: the discards, from 0.
        assert_eq!(
            counter(&seen, "tally_queue_ended_total/discarded"),
            ledger.discarded
        );
        assert_eq!(gauge(&seen, "tally_queue_buffered"), 0.0);
    });
}

/// A recorder whose histograms panic at their first sample (every other figure is dropped).
#[derive(Default)]
struct PanicAtFirstSample(Arc<AtomicBool>);

struct Sample(Arc<AtomicBool>);

impl metrics::HistogramFn for Sample {
    fn record(&self, _: f64) {
        if !self.0.swap(true, Ordering::SeqCst) {
            panic!("a recorder panics at its first sample");
        }
    }
}

impl metrics::Recorder for PanicAtFirstSample {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> metrics::Counter {
        metrics::Counter::noop()
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> metrics::Histogram {
        metrics::Histogram::from_arc(Arc::new(Sample(self.0.clone())))
    }
}

struct Count(Arc<AtomicUsize>);

impl std::task::Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A recorder that panics midway through a batch get: the slot the batch freed still
/// wakes the waiting put, and the item whose time buffered was being recorded is in a
/// delivery, which the unwinding ends as abandoned (the ledger stays exact).
#[test]
fn a_recorder_panicking_midway_through_a_batch_get_loses_no_wake_up_nor_item() {
    let recorder = PanicAtFirstSample::default();
    metrics::with_local_recorder(&recorder, || {
        let queue = Queue::bounded(2).unwrap();
        queue
            .try_put_many(&mut vec![0, 1], &mut Vec::new())
            .unwrap();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        let mut put = pin!(queue.put(2));
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let mut batch = Vec::new();
        let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_get_many(&mut batch, 2)));
        assert!(unwound.is_err(), "the recorder panicked");
        drop(batch);
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the put was woken");
        let ledger = queue.ledger();
        assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_ready());
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.buffered), (3, 2), "{ledger}");
    });
}

/// A recorder that panics in a single get: the item is in its delivery, which the
/// unwinding ends as abandoned, and the slot it freed wakes the waiting put.
#[test]
fn a_recorder_panicking_in_a_get_loses_no_wake_up_nor_item() {
    let recorder = PanicAtFirstSample::default();
    metrics::with_local_recorder(&recorder, || {
        let queue = Queue::bounded(1).unwrap();
        queue.try_put(0).unwrap();
        let woken = Arc::new(AtomicUsize::new(0));
        let waker = Waker::from(Arc::new(Count(woken.clone())));
        let mut put = pin!(queue.put(9));
        assert!(put
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        let unwound = catch_unwind(AssertUnwindSafe(|| drop(queue.try_get())));
        assert!(unwound.is_err(), "the recorder panicked");
        let ledger = queue.ledger();
        assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
        assert_eq!(woken.load(Ordering::SeqCst), 1, "the put was woken");
    });
}

/// A recorder that panics in the take of a woken get, which holds the turn its
/// notification granted: the take has used (redeemed) that turn, so the get's release must
/// not pass it on as well. Passed on again, the turns owed read one lower than the turns
/// woken gets hold, and the next woken get's item is left open to a try (the turn rule:
/// an item put for a woken get is kept for it).
#[test]
fn a_recorder_panicking_in_a_woken_gets_take_leaves_the_next_woken_gets_item_kept() {
    let armed = Arc::new(AtomicBool::new(true));
    let recorder = PanicAtFirstSample(armed.clone());
    metrics::with_local_recorder(&recorder, || {
        let queue = Queue::unbounded();
        let noop = &mut Context::from_waker(Waker::noop());

        // The rule as it holds without a panic: a woken get's item is kept from a try.
        let mut get = Box::pin(queue.get());
        assert!(get.as_mut().poll(noop).is_pending());
        queue.try_put(0).unwrap();
        assert!(
            queue.try_get().is_err(),
            "the item is kept for the woken get"
        );
        match get.as_mut().poll(noop) {
            std::task::Poll::Ready(Ok(job)) => assert_eq!(job.succeed(), 0),
            other => panic!("the woken get takes its item: {:?}", other.is_ready()),
        }
        drop(get);

        // A woken get whose take panics (in the recorder, after the item left the buffer).
        let mut get = Box::pin(queue.get());
        assert!(get.as_mut().poll(noop).is_pending());
        queue.try_put(1).unwrap();
        armed.store(false, Ordering::SeqCst);
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let _ = get.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        }));
        assert!(unwound.is_err(), "the recorder panicked");
        drop(get);

        // The next woken get's item must be kept for it as before.
        let mut get = Box::pin(queue.get());
        assert!(get.as_mut().poll(noop).is_pending());
        queue.try_put(2).unwrap();
        let barged = queue.try_get().map(|job| job.succeed());
        assert!(
            barged.is_err(),
            "a try took item {barged:?}, put for a woken get, after a panicking take"
        );
        match get.as_mut().poll(noop) {
            std::task::Poll::Ready(Ok(job)) => assert_eq!(job.succeed(), 2),
            other => panic!("the woken get takes its item: {:?}", other.is_ready()),
        };
    });
}
