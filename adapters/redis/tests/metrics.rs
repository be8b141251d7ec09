//! The `metrics` feature against a real server: `record_metrics` sets the figures to the
//! ledger's, under tally-queue's names with the label `queue`, and the histograms hold one
//! sample per first attempt taken and per delivery ended. Each test runs on tokio and on
//! smol (each half with a queue of its own name: the recorder is the process's).

mod common;

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use common::{open, options, Rt};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tally_queue::Outcome;

/// The process's recorder, installed once.
fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        metrics::set_global_recorder(recorder).expect("the only recorder");
        snapshotter
    })
}

/// Every figure recorded so far, by metric name (`/outcome` for the ended counters) and
/// queue: a snapshot drains the histograms of every queue, so their samples gather here.
fn figures(name: &str) -> Vec<(String, DebugValue)> {
    static SEEN: Mutex<BTreeMap<(String, String), DebugValue>> = Mutex::new(BTreeMap::new());
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    for (key, _, _, value) in snapshotter().snapshot().into_vec() {
        let label = |wanted: &str| {
            key.key()
                .labels()
                .find(|l| l.key() == wanted)
                .map(|l| l.value().to_string())
        };
        let metric = match label("outcome") {
            Some(outcome) => format!("{}/{outcome}", key.key().name()),
            None => key.key().name().to_string(),
        };
        let queue = label("queue").unwrap_or_default();
        match (seen.get_mut(&(metric.clone(), queue.clone())), value) {
            (Some(DebugValue::Histogram(all)), DebugValue::Histogram(more)) => all.extend(more),
            (_, value) => {
                seen.insert((metric, queue), value);
            }
        }
    }
    seen.iter()
        .filter(|((_, queue), _)| queue == name)
        .map(|((metric, _), value)| {
            let value = match value {
                DebugValue::Counter(n) => DebugValue::Counter(*n),
                DebugValue::Gauge(g) => DebugValue::Gauge(*g),
                DebugValue::Histogram(samples) => DebugValue::Histogram(samples.clone()),
            };
            (metric.clone(), value)
        })
        .collect()
}

fn value<'a>(figures: &'a [(String, DebugValue)], metric: &str) -> &'a DebugValue {
    &figures
        .iter()
        .find(|(name, _)| name == metric)
        .unwrap_or_else(|| panic!("no {metric} in {figures:?}"))
        .1
}

fn samples(figures: &[(String, DebugValue)], metric: &str) -> usize {
    match value(figures, metric) {
        DebugValue::Histogram(samples) => samples.len(),
        other => panic!("{metric} is not a histogram: {other:?}"),
    }
}

/// Five jobs: two succeed, one is rejected, one is dropped unresolved (abandoned by the
/// maintenance pass, kept as a dead letter), one stays buffered. The recorded figures
/// equal the ledger's.
async fn record_metrics_sets_the_ledger(rt: Rt) {
    let _ = snapshotter();
    let server = server!();
    let name = format!("metered-{rt:?}");
    let queue = open(&server, &name, options()).await;
    let ids = queue
        .put_many(vec![vec![1], vec![2], vec![3], vec![4], vec![5]])
        .await;
    assert_eq!(ids.unwrap().len(), 5);
    let mut jobs = queue.get_many(4).await.unwrap();
    assert_eq!(jobs.len(), 4);
    let dropped = jobs.pop().unwrap();
    let rejected = jobs.pop().unwrap();
    let done = jobs
        .into_iter()
        .map(|job| (job, Outcome::Succeeded))
        .collect();
    queue.resolve_many(done).await.unwrap();
    rejected.reject().await.unwrap();
    drop(dropped);
    // The maintenance pass ends the dropped delivery (abandoned, a dead letter).
    queue.maintain_once().await.unwrap();

    let status = queue.record_metrics().await.unwrap();
    let ledger = status.ledger;
    assert_eq!(
        (
            ledger.accepted,
            ledger.succeeded,
            ledger.rejected,
            ledger.abandoned
        ),
        (5, 2, 1, 1)
    );
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    let figures = figures(&name);
    for (metric, expected) in [
        ("tally_queue_accepted_total", DebugValue::Counter(5)),
        ("tally_queue_ended_total/succeeded", DebugValue::Counter(2)),
        ("tally_queue_ended_total/rejected", DebugValue::Counter(1)),
        ("tally_queue_ended_total/abandoned", DebugValue::Counter(1)),
        ("tally_queue_ended_total/uncertain", DebugValue::Counter(0)),
        ("tally_queue_ended_total/discarded", DebugValue::Counter(0)),
        ("tally_queue_buffered", DebugValue::Gauge(1.0.into())),
        ("tally_queue_in_flight", DebugValue::Gauge(0.0.into())),
        ("tally_queue_redelivered_total", DebugValue::Counter(0)),
        ("tally_queue_dead_letters", DebugValue::Gauge(1.0.into())),
    ] {
        assert_eq!(value(&figures, metric), &expected, "{metric}");
    }
    // Four first attempts taken, four deliveries ended (the dropped one too).
    assert_eq!(samples(&figures, "tally_queue_buffered_seconds"), 4);
    assert_eq!(samples(&figures, "tally_queue_in_flight_seconds"), 4);
}

on_both!(record_metrics_sets_the_ledger);
