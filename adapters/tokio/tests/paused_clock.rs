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

/// Redeliveries wait the backoff's delays on virtual time, counted buffered meanwhile, and
/// the attempts run out into a dead letter.
#[tokio::test(start_paused = true)]
async fn redeliveries_wait_the_backoff_on_virtual_time() {
    use tally_queue::{AbandonPolicy, Backoff};
    use tally_tokio::RedeliveryExt;

    let backoff = Backoff::exponential(Duration::from_secs(1), HOUR);
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(backoff);
    queue.try_put("poison").unwrap();
    let start = Instant::now();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let job = queue.get().await.unwrap();
        seen.push((job.attempt(), start.elapsed()));
        drop(job);
    }
    let s = Duration::from_secs;
    assert_eq!(seen, [(1, s(0)), (2, s(1)), (3, s(3))]);
    let ledger = queue.ledger();
    assert_eq!((ledger.abandoned, ledger.buffered), (1, 0), "{ledger}");
    assert_eq!(queue.take_dead_letters().len(), 1);
}

/// A runtime shut down while a redelivery sleeps, or before one is spawned, loses nothing:
/// the item comes back at once.
#[test]
fn a_runtime_shut_down_lets_its_held_redeliveries_go_at_once() {
    use tally_queue::{AbandonPolicy, Backoff};
    use tally_tokio::RedeliveryExt;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let queue = runtime.block_on(async {
        Queue::unbounded()
            .with_abandon_policy(AbandonPolicy::redeliver(5).unwrap())
            .with_redelivery_backoff(Backoff::fixed(HOUR))
    });
    queue.try_put(1).unwrap();
    runtime.block_on(async { drop(queue.try_get().unwrap()) });
    assert_eq!(queue.ledger().buffered, 1);
    assert!(queue.try_get().is_err(), "held for an hour");
    drop(runtime);
    let again = queue.try_get().expect("let go when the runtime shut down");
    assert_eq!(again.attempt(), 2);
    // Abandoned after the shutdown: the sleep spawned on the dead runtime is dropped.
    drop(again);
    let third = queue.try_get().expect("let go at once");
    assert_eq!((third.attempt(), third.succeed()), (3, 1));
    assert!(queue.ledger().is_balanced());
}
