//! The latch half of the suite every runtime adapter passes. The including test file
//! provides `block_on` (its runtime) and imports its crate's `LatchExt`. Every timed wait
//! is created inside the `async` block that `block_on` runs, as tokio's timer requires.

use std::thread;
use std::time::{Duration, Instant};

use tally_latch::{CountDownLatch, FailableLatch, Failure, TimedOut, TrackingLatch};

use super::{block_on, LatchExt};

/// The timeout the tests expect to fire.
const SHORT: Duration = Duration::from_millis(50);
/// A timeout that must not fire: the latch answers long before.
const LONG: Duration = Duration::from_secs(30);
/// "On time": a generous bound for a timeout or an answer, far above scheduling noise.
const MARGIN: Duration = Duration::from_secs(5);

#[test]
fn count_down_timeout_fires_on_time_and_keeps_the_count() {
    let latch = CountDownLatch::new(2);
    latch.count_down();
    let start = Instant::now();
    assert_eq!(
        block_on(async { latch.wait_timeout(SHORT).await }),
        Err(TimedOut)
    );
    let elapsed = start.elapsed();
    assert!(elapsed >= SHORT, "fired early, after {elapsed:?}");
    assert!(elapsed < MARGIN, "fired late, after {elapsed:?}");
    assert_eq!(latch.count(), 1);
    assert!(!latch.is_open());
    // The timed-out wait left nothing behind: the latch still opens as usual.
    latch.count_down();
    assert_eq!(block_on(async { latch.wait_timeout(SHORT).await }), Ok(()));
}

#[test]
fn count_down_opens_before_the_timeout() {
    let latch = CountDownLatch::new(1);
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(20));
            latch.count_down();
        });
        assert_eq!(block_on(async { latch.wait_timeout(LONG).await }), Ok(()));
    });
    assert!(start.elapsed() < MARGIN);
}

#[test]
fn an_open_latch_wins_over_a_zero_timeout() {
    let latch = CountDownLatch::new(0);
    assert_eq!(
        block_on(async { latch.wait_timeout(Duration::ZERO).await }),
        Ok(())
    );
}

#[test]
fn failable_timeout_fires_on_time_and_keeps_the_count() {
    let latch = FailableLatch::<&str>::new(3);
    latch.count_down();
    let start = Instant::now();
    assert_eq!(
        block_on(async { latch.wait_timeout(SHORT).await }),
        Err(TimedOut)
    );
    let elapsed = start.elapsed();
    assert!(elapsed >= SHORT && elapsed < MARGIN, "{elapsed:?}");
    assert_eq!(latch.count(), 2);
    assert_eq!(latch.error(), None);
}

#[test]
fn failable_failure_wins_over_a_later_timeout() {
    let latch = FailableLatch::<&str>::new(2);
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(20));
            latch.fail("shard 2: connection refused").unwrap();
        });
        assert_eq!(
            block_on(async { latch.wait_timeout(LONG).await }),
            Ok(Err("shard 2: connection refused"))
        );
    });
    assert!(start.elapsed() < MARGIN);
    // Once failed, even an expired timeout reports the failure.
    assert_eq!(
        block_on(async { latch.wait_timeout(Duration::ZERO).await }),
        Ok(Err("shard 2: connection refused"))
    );
}

#[test]
fn tracking_timeout_lists_exactly_the_stalled_counters() {
    let latch = TrackingLatch::new(["consumer", "cache-warmer", "http", "metrics"]).unwrap();
    latch.count_down_for("consumer").unwrap();
    latch.count_down_for("http").unwrap();
    let start = Instant::now();
    // The outer `Err` is the timeout: the counters still pending.
    let pending = block_on(async { latch.wait_timeout(SHORT).await }).unwrap_err();
    let elapsed = start.elapsed();
    assert!(elapsed >= SHORT && elapsed < MARGIN, "{elapsed:?}");
    assert_eq!(pending.names(), ["cache-warmer", "metrics"]);
    assert_eq!(
        pending.to_string(),
        "timed out waiting for: cache-warmer, metrics"
    );
    // Unchanged by the timeout.
    assert_eq!(latch.count(), 2);
    assert_eq!(latch.pending(), ["cache-warmer", "metrics"]);

    latch.count_down_for("metrics").unwrap();
    let pending = block_on(async { latch.wait_timeout(SHORT).await }).unwrap_err();
    assert_eq!(pending.names(), ["cache-warmer"]);
    latch.count_down_for("cache-warmer").unwrap();
    assert_eq!(
        block_on(async { latch.wait_timeout(SHORT).await }),
        Ok(Ok(()))
    );
}

#[test]
fn tracking_counter_that_panics_fails_the_wait_by_name() {
    let latch = TrackingLatch::new(["consumer", "http"]).unwrap();
    latch.count_down_for("consumer").unwrap();
    thread::scope(|s| {
        let http = latch.counter("http").unwrap();
        let crashed = s.spawn(move || {
            let _http = http;
            thread::sleep(Duration::from_millis(20));
            panic!("bind failed");
        });
        match block_on(async { latch.wait_timeout(LONG).await }) {
            Ok(Err(Failure::Abandoned { counter, panicking })) => {
                assert_eq!(counter, "http");
                assert!(panicking);
            }
            other => panic!("expected the http counter's failure, got {other:?}"),
        }
        assert!(crashed.join().is_err());
    });
}
