//! Worker guards: dead workers must not hang producers.

mod common;

use std::sync::Arc;

use common::{assert_pending, expect_ready};
use tally_queue::{PutError, Queue, TryPutError};

#[test]
fn never_had_a_worker_accepts() {
    let queue = Queue::bounded(2).unwrap();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    assert!(queue.try_put(3).unwrap_err().is_full());
    assert_eq!(queue.workers(), 0);
}

#[test]
fn last_worker_leaving_wakes_blocked_putter() {
    let queue = Queue::bounded(1).unwrap();
    let first = queue.worker();
    let second = queue.worker();
    assert_eq!(queue.workers(), 2);
    queue.try_put(1).unwrap();
    let mut putter = queue.put(2);
    assert_pending(&mut putter);
    drop(first);
    assert_pending(&mut putter); // one worker is still there
    drop(second);
    assert!(matches!(
        expect_ready(&mut putter),
        Err(PutError::NoWorkers(2))
    ));
    // Buffered items stay.
    assert_eq!(queue.ledger().buffered, 1);
}

#[test]
fn new_worker_reopens() {
    let queue = Queue::unbounded();
    drop(queue.worker());
    assert!(matches!(queue.try_put(1), Err(TryPutError::NoWorkers(1))));
    let _worker = queue.worker();
    queue.try_put(2).unwrap();
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
}

#[test]
fn shutdown_is_reported_before_no_workers() {
    let queue = Queue::unbounded();
    drop(queue.worker());
    queue.shutdown();
    assert!(queue.try_put(1).unwrap_err().is_shut_down());
}

#[test]
#[cfg(feature = "std")]
fn owned_worker_in_thread() {
    let queue = Arc::new(Queue::<u32>::bounded(1).unwrap());
    let worker = queue.worker_owned();
    let consumer = {
        let queue = Arc::clone(&queue);
        std::thread::spawn(move || {
            let _worker = worker;
            for _ in 0..3 {
                queue.get_blocking().unwrap().succeed();
            }
        })
    };
    for n in 0..3 {
        queue.put_blocking(n).unwrap();
    }
    consumer.join().unwrap();
    assert!(matches!(queue.put_blocking(9), Err(PutError::NoWorkers(9))));
    assert_eq!(queue.ledger().succeeded, 3);
    assert_eq!(
        format!("{worker:?}", worker = queue.worker()),
        "Worker { .. }"
    );
}

/// The crate docs say "Both guards are `Clone`, each clone one more registration". A
/// cloned worker guard registers one more worker: the queue is orphaned only when the last
/// of them is gone.
#[test]
fn worker_guards_are_clone_each_clone_one_more_registration() {
    let queue = Queue::<u8>::bounded(1).unwrap();
    let worker = queue.worker();
    let second = worker.clone();
    assert_eq!(queue.workers(), 2);
    drop(worker);
    queue.try_put(1).unwrap();
    drop(second);
    assert!(matches!(queue.try_put(2), Err(TryPutError::NoWorkers(2))));

    let queue = Arc::new(Queue::<u8>::unbounded());
    let worker = queue.worker_owned();
    let second = worker.clone();
    assert_eq!(queue.workers(), 2);
    drop((worker, second));
    assert_eq!(queue.workers(), 0);
}

/// The other guard of the same sentence: producer guards are `Clone` too.
#[test]
fn producer_guards_are_clone() {
    let queue = Arc::new(Queue::<u8>::unbounded());
    let producer = queue.producer();
    let owned = queue.producer_owned();
    let clones = (producer.clone(), owned.clone());
    assert_eq!(queue.producers(), 4);
    drop((producer, owned, clones));
    assert!(queue.is_shut_down());
}
