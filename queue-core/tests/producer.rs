//! Producer guards: the last producer to leave shuts the queue down gracefully, so
//! workers drain and stop instead of hanging on producers that are gone.

mod common;

use std::sync::Arc;

use common::within;
use futures_lite::future::block_on;
use tally_queue::{GetError, Queue, TryGetError, TryPutError};

#[test]
fn a_queue_without_producers_never_shuts_down_by_itself() {
    let queue = Queue::<u8>::unbounded();
    assert_eq!(queue.producers(), 0);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    assert!(!queue.is_shut_down());
}

#[test]
fn the_last_producer_leaving_shuts_down_gracefully() {
    let queue = Queue::unbounded();
    let first = queue.producer();
    let second = first.clone();
    assert_eq!(queue.producers(), 2);
    first.queue().try_put(1).unwrap();
    drop(first);
    assert!(!queue.is_shut_down(), "one producer is still alive");
    second.queue().try_put(2).unwrap();
    drop(second);
    assert!(queue.is_shut_down());
    // Buffered items are still delivered, then gets end.
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert!(matches!(queue.try_put(3), Err(TryPutError::ShutDown(3))));
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.succeeded), (2, 2));
}

/// A worker waiting on an empty queue wakes when the last producer leaves.
#[test]
fn a_waiting_worker_is_released_by_the_last_producer() {
    let queue = Arc::new(Queue::<u32>::unbounded());
    let producer = queue.producer_owned();
    let worker = {
        let queue = Arc::clone(&queue);
        std::thread::spawn(move || block_on(queue.get()).map(|job| job.succeed()))
    };
    std::thread::sleep(std::time::Duration::from_millis(20));
    drop(producer);
    let got = within(5, move || worker.join().unwrap());
    assert_eq!(got, Err(GetError::ShutDown));
}

/// The user's program: a pool of workers and producers that panic half-way. Without
/// producer guards the workers would wait for ever; with them the pool drains and stops,
/// and the ledger accounts for every accepted job.
#[test]
#[cfg(feature = "std")]
fn panicking_producers_do_not_hang_the_pool() {
    let ledger = within(10, || {
        let queue = Arc::new(Queue::<u32>::bounded(4).unwrap());
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let queue = Arc::clone(&queue);
                std::thread::spawn(move || {
                    let _worker = queue.worker_owned();
                    let mut done = 0;
                    while let Ok(job) = queue.get_blocking() {
                        job.succeed();
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        // Every producer exists before any starts: one that finished before the next was
        // made would be the last to leave, and its leaving would shut the queue down.
        let handles: Vec<_> = (0..3).map(|_| queue.producer_owned()).collect();
        let producers: Vec<_> = handles
            .into_iter()
            .zip(0..)
            .map(|(producer, p)| {
                std::thread::spawn(move || {
                    for n in 0..10 {
                        if p == 1 && n == 5 {
                            panic!("producer {p} fails half-way");
                        }
                        producer.queue().put_blocking(p * 100 + n).unwrap();
                    }
                })
            })
            .collect();
        let panicked = producers
            .into_iter()
            .map(|handle| handle.join().is_err())
            .filter(|&panicked| panicked)
            .count();
        assert_eq!(panicked, 1);
        let done: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
        assert_eq!(done, 25);
        queue.join_blocking()
    });
    assert_eq!((ledger.accepted, ledger.succeeded), (25, 25));
    assert!(ledger.is_balanced());
}

#[test]
fn producers_and_the_stream_end_a_pool_together() {
    use futures_lite::StreamExt;

    let queue = Queue::<u32>::bounded(2).unwrap();
    let total = within(5, move || {
        let queue = Arc::new(queue);
        let producer = queue.producer_owned();
        let consumer = {
            let mut jobs = queue.deliveries_owned();
            std::thread::spawn(move || {
                block_on(async {
                    let mut total = 0;
                    while let Some(job) = jobs.next().await {
                        total += job.succeed();
                    }
                    total
                })
            })
        };
        for n in 1..=10 {
            block_on(producer.queue().put(n)).unwrap();
        }
        drop(producer);
        consumer.join().unwrap()
    });
    assert_eq!(total, 55);
}
