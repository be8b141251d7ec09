//! The `metrics` feature: `record_metrics` sets each latch's figures under its label, and
//! a tracking latch records its time to open as it opens.
#![cfg(feature = "metrics")]

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};

/// Every figure of one snapshot as `(name, latch label, value)`.
fn figures(snapshotter: &Snapshotter) -> Vec<(String, String, DebugValue)> {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let label = key.key().labels().find(|l| l.key() == "latch").unwrap();
            (key.key().name().to_owned(), label.value().to_owned(), value)
        })
        .collect()
}

fn find<'f>(
    figures: &'f [(String, String, DebugValue)],
    name: &str,
    label: &str,
) -> &'f DebugValue {
    &figures
        .iter()
        .find(|(n, l, _)| n == name && l == label)
        .unwrap_or_else(|| panic!("no {name} for {label}"))
        .2
}

fn gauge(value: f64) -> DebugValue {
    DebugValue::Gauge(value.into())
}

#[test]
fn each_latch_reports_pending_open_and_failed_under_its_label() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let shards = CountDownLatch::new(3).with_label("shards");
        let startup = FailableLatch::<&str>::new(2).with_label("startup");
        let ready = TrackingLatch::new(["db", "http"])
            .unwrap()
            .with_label("ready");
        shards.count_down();
        startup.fail("disk full").unwrap();
        ready.count_down_for("db").unwrap();
        shards.record_metrics();
        startup.record_metrics();
        ready.record_metrics();
        let seen = figures(&snapshotter);
        assert_eq!(find(&seen, "tally_latch_pending", "shards"), &gauge(2.0));
        assert_eq!(find(&seen, "tally_latch_open", "shards"), &gauge(0.0));
        assert_eq!(find(&seen, "tally_latch_failed", "startup"), &gauge(1.0));
        assert_eq!(find(&seen, "tally_latch_pending", "ready"), &gauge(1.0));
        assert!(!seen
            .iter()
            .any(|(n, ..)| n == "tally_latch_time_to_open_seconds"));

        ready.count_down_for("http").unwrap();
        ready.record_metrics();
        let seen = figures(&snapshotter);
        assert_eq!(find(&seen, "tally_latch_open", "ready"), &gauge(1.0));
        assert_eq!(find(&seen, "tally_latch_pending", "ready"), &gauge(0.0));
        let time_to_open = ready.time_to_open().unwrap().as_secs_f64();
        match find(&seen, "tally_latch_time_to_open_seconds", "ready") {
            DebugValue::Histogram(samples) => {
                assert_eq!(samples.len(), 1);
                assert_eq!(samples[0].into_inner(), time_to_open);
            }
            other => panic!("{other:?}"),
        }
    });
}
