//! `RetryExt` on the host: embassy-time's std driver supplies the clock.

use std::sync::Arc;

use embassy_time::{Duration, Instant};
use futures_lite::future::block_on;
use tally_embassy::RetryExt;
use tally_queue::{AbandonPolicy, Backoff, Queue, TryGetError};

const SHORT: Duration = Duration::from_millis(20);

#[test]
fn retry_after_holds_the_item_back_for_the_delay() {
    let queue = Queue::unbounded();
    let id = queue.try_put(1).unwrap();
    let start = Instant::now();
    let held = queue.try_get().unwrap().retry_after(SHORT).unwrap();
    assert_eq!(queue.ledger().buffered, 1);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    block_on(held);
    assert!(start.elapsed() >= SHORT);
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 2));
    again.succeed();
}

#[test]
fn retry_backoff_counts_toward_max_attempts() {
    let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(2).unwrap());
    queue.try_put(1).unwrap();
    let backoff = Backoff::fixed(core::time::Duration::from_millis(20));
    let start = Instant::now();
    block_on(queue.try_get().unwrap().retry_backoff(&backoff).unwrap());
    assert!(start.elapsed() >= SHORT);
    let last = queue.try_get().unwrap();
    assert_eq!(last.attempt(), 2);
    last.retry_backoff(&backoff).unwrap_err().reject();
    assert!(queue.is_settled());
}

#[test]
fn a_dropped_retry_and_shutdown_now_lose_nothing() {
    let queue = Arc::new(Queue::unbounded());
    let first = queue.try_put("first").unwrap();
    let second = queue.try_put("second").unwrap();
    let long = Duration::from_secs(3600);
    let owned = queue.try_get_owned().unwrap().retry_after(long).unwrap();
    let borrowed = queue.try_get().unwrap().retry_after(long).unwrap();
    drop(owned); // due at once
    assert_eq!(queue.shutdown_now(), [(first, "first"), (second, "second")]);
    drop(borrowed);
    assert_eq!(queue.ledger().discarded, 2);
}
