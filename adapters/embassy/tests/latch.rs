//! `LatchExt` on the host: embassy-time's std driver supplies the clock.

use std::thread;

use embassy_time::{Duration, Instant};
use futures_lite::future::block_on;
use tally_embassy::LatchExt;
use tally_latch::{CountDownLatch, FailableLatch, TimedOut, TrackingLatch};

const SHORT: Duration = Duration::from_millis(20);
const LONG: Duration = Duration::from_secs(10);

#[test]
fn count_down_times_out_and_keeps_its_count() {
    let latch = CountDownLatch::new(2);
    latch.count_down();
    let start = Instant::now();
    assert_eq!(block_on(latch.wait_timeout(SHORT)), Err(TimedOut));
    assert!(start.elapsed() >= SHORT);
    assert_eq!(latch.count(), 1);
}

#[test]
fn count_down_opens_before_the_timeout() {
    let latch = CountDownLatch::new(1);
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(core::time::Duration::from_millis(10));
            latch.count_down();
        });
        assert_eq!(block_on(latch.wait_timeout(LONG)), Ok(()));
    });
}

#[test]
fn an_open_latch_wins_over_a_zero_timeout() {
    let latch = CountDownLatch::new(0);
    assert_eq!(
        block_on(latch.wait_timeout(Duration::from_ticks(0))),
        Ok(())
    );
}

#[test]
fn failable_reports_failure_or_timeout() {
    let latch = FailableLatch::<&str>::new(1);
    assert_eq!(block_on(latch.wait_timeout(SHORT)), Err(TimedOut));
    latch.fail("disk").unwrap();
    assert_eq!(block_on(latch.wait_timeout(LONG)), Ok(Err("disk")));
}

#[test]
fn tracking_timeout_names_the_stalled_counter() {
    let latch = TrackingLatch::new(["radio", "sensor", "storage"]).unwrap();
    latch.count_down_for("radio").unwrap();
    latch.count_down_for("storage").unwrap();
    let pending = block_on(latch.wait_timeout(SHORT)).unwrap_err();
    assert_eq!(pending.names(), ["sensor"]);
    latch.count_down_for("sensor").unwrap();
    assert_eq!(block_on(latch.wait_timeout(SHORT)), Ok(Ok(())));
}
