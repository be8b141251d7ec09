//! Under tokio's paused clock the timeouts follow virtual time: an hour-long timeout fires
//! at once in real time, exactly when the virtual clock reaches it.

use std::time::Duration;

use tally_latch::{CountDownLatch, TimedOut, TrackingLatch};
use tally_queue::{PutTimeoutError, Queue};
use tally_tokio::{LatchExt, QueueExt};
use tokio::time::Instant;

const HOUR: Duration = Duration::from_secs(3600);

#[tokio::test(start_paused = true)]
async fn a_latch_timeout_fires_on_virtual_time() {
    let latch = CountDownLatch::new(1);
    let start = Instant::now();
    assert_eq!(latch.wait_timeout(HOUR).await, Err(TimedOut));
    assert_eq!(start.elapsed(), HOUR);
    assert_eq!(latch.count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_count_down_before_the_virtual_deadline_wins() {
    let latch = std::sync::Arc::new(TrackingLatch::new(["a", "b"]).unwrap());
    let counter = latch.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(10)).await;
        counter.count_down_for("a").unwrap();
    });
    let start = Instant::now();
    match latch.wait_timeout(HOUR).await {
        Err(pending) => assert_eq!(pending.names(), ["b"]),
        Ok(ended) => panic!("expected a timeout naming b, got {ended:?}"),
    }
    assert_eq!(start.elapsed(), HOUR);
}

#[tokio::test(start_paused = true)]
async fn a_queue_timeout_fires_on_virtual_time() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let start = Instant::now();
    assert!(matches!(
        queue.put_timeout(2, HOUR).await,
        Err(PutTimeoutError::TimedOut(2))
    ));
    assert_eq!(start.elapsed(), HOUR);
    let closed = queue.shutdown_timeout(HOUR).await;
    assert_eq!(start.elapsed(), 2 * HOUR);
    assert_eq!(closed.returned.len(), 1);
}
