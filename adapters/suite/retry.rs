//! The delayed-retry half of the suite every runtime adapter with a host timer passes. The
//! including test file provides `block_on` (its runtime) and imports its crate's
//! `RetryExt`. Every timer is created inside the `async` block that `block_on` runs, as
//! tokio's requires.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tally_queue::{AbandonPolicy, Backoff, Queue, TryGetError};

use super::{block_on, RetryExt};

/// The delay the tests expect to be waited out.
const SHORT: Duration = Duration::from_millis(50);
/// A delay that must not be waited out.
const LONG: Duration = Duration::from_secs(30);
/// "On time": a generous bound, far above scheduling noise.
const MARGIN: Duration = Duration::from_secs(5);

#[test]
fn retry_after_holds_the_item_back_for_the_delay() {
    let queue = Queue::unbounded();
    let id = queue.try_put("job").unwrap();
    let start = Instant::now();
    block_on(async {
        let held = queue.try_get().unwrap().retry_after(SHORT).unwrap();
        let ledger = queue.ledger();
        assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
        assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
        held.await;
    });
    let elapsed = start.elapsed();
    assert!(elapsed >= SHORT && elapsed < MARGIN, "after {elapsed:?}");
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 2));
    again.succeed();
    assert!(queue.ledger().is_balanced());
}

#[test]
fn retry_backoff_waits_the_policy_delay_for_the_attempt() {
    let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    queue.try_put(1).unwrap();
    // 50 ms after the first delivery, 100 ms after the second.
    let backoff = Backoff::exponential(SHORT, LONG);
    let start = Instant::now();
    block_on(async {
        for _ in 0..2 {
            queue
                .try_get()
                .unwrap()
                .retry_backoff(&backoff)
                .unwrap()
                .await;
        }
        let elapsed = start.elapsed();
        assert!(
            elapsed >= SHORT * 3 && elapsed < MARGIN,
            "after {elapsed:?}"
        );
        let last = queue.try_get().unwrap();
        assert_eq!(last.attempt(), 3);
        // No fourth attempt: the delivery comes back, still in flight.
        let last = last.retry_backoff(&backoff).unwrap_err();
        last.reject();
    });
    assert!(queue.is_settled());
}

#[test]
fn a_retry_dropped_before_its_delay_lets_the_item_go_at_once() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    block_on(async {
        let borrowed = queue.try_get().unwrap().retry_after(LONG).unwrap();
        let owned = queue.try_get_owned().unwrap().retry_after(LONG).unwrap();
        assert_eq!(queue.ledger().buffered, 2);
        drop(borrowed);
        drop(owned);
    });
    let mut items: Vec<_> = (0..2)
        .map(|_| {
            let job = queue.try_get().unwrap();
            assert_eq!(job.attempt(), 2);
            job.succeed()
        })
        .collect();
    items.sort_unstable();
    assert_eq!(items, [1, 2]);
}

#[test]
fn shutdown_now_hands_an_item_back_before_its_delay() {
    let queue = Queue::unbounded();
    let id = queue.try_put("held").unwrap();
    let start = Instant::now();
    let drained = block_on(async {
        let held = queue.try_get().unwrap().retry_after(LONG).unwrap();
        let drained = queue.shutdown_now();
        drop(held);
        drained
    });
    assert!(start.elapsed() < MARGIN);
    assert_eq!(drained, [(id, "held")]);
    assert_eq!(queue.ledger().discarded, 1);
}
