//! `RetryExt` on smol: the shared suite in `adapters/suite/retry.rs`.

use core::future::Future;

use tally_smol::RetryExt;

fn block_on<F: Future>(future: F) -> F::Output {
    futures_lite::future::block_on(future)
}

#[path = "../../suite/retry.rs"]
mod suite;

/// Redeliveries wait their backoff on a smol executor; an executor dropped with a
/// redelivery still sleeping lets the item go at once.
#[test]
fn redeliveries_wait_on_the_executor_and_an_executor_dropped_loses_nothing() {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use tally_queue::{AbandonPolicy, Backoff, Queue};
    use tally_smol::RedeliveryExt;

    let executor = Arc::new(smol::Executor::new());
    // The schedule does not keep the executor alive: with it gone, a held redelivery is
    // dropped, which lets the item go at once.
    let spawner = Arc::downgrade(&executor);
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(Backoff::fixed(Duration::from_millis(20)), move |held| {
            if let Some(executor) = spawner.upgrade() {
                executor.spawn(held).detach();
            }
        });
    queue.try_put(1).unwrap();
    let start = Instant::now();
    drop(queue.try_get().unwrap());
    let again = smol::block_on(executor.run(queue.get())).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(20));
    assert_eq!(again.attempt(), 2);
    // Abandoned again, and the executor goes away before the delay is over: its task,
    // dropped with it, lets the item go.
    drop(again);
    assert!(queue.try_get().is_err(), "held");
    drop(executor);
    let third = queue
        .try_get()
        .expect("let go when the executor was dropped");
    assert_eq!((third.attempt(), third.succeed()), (3, 1));
    assert!(queue.ledger().is_balanced());
}
