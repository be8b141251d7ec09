//! The seed's action checklist: graceful drain; immediate discard with no consumer;
//! immediate discard while a consumer holds work; a worker that panics; a producer blocked
//! at capacity during shutdown; an external operation whose result is unknown.

mod common;

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
#[cfg(feature = "std")]
use std::sync::Mutex;

use common::{assert_pending, expect_ready};
use futures_lite::future::block_on;
#[cfg(feature = "std")]
use tally_queue::PutError;
use tally_queue::{Outcome, Queue};

#[test]
#[cfg(feature = "std")]
fn checklist_graceful_drain() {
    let queue = Queue::<u64>::bounded(4).unwrap();
    let seen = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let _worker = queue.worker();
                while let Ok(delivery) = queue.get_blocking() {
                    seen.lock().unwrap().push(delivery.id());
                    delivery.succeed();
                }
            });
        }
        for n in 0..50 {
            queue.put_blocking(n).unwrap();
        }
        queue.shutdown();
    });
    let ledger = queue.join_blocking();
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    assert_eq!(
        seen.iter().map(|id| id.get()).collect::<Vec<_>>(),
        (0..50).collect::<Vec<_>>()
    );
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.discarded),
        (50, 50, 0)
    );
    assert!(ledger.is_balanced());
}

#[test]
fn checklist_immediate_discard_no_consumer() {
    let queue = Queue::unbounded();
    let ids: Vec<_> = (0..5).map(|n| queue.try_put(n).unwrap()).collect();
    let drained = queue.shutdown_now();
    assert_eq!(drained.iter().map(|(id, _)| *id).collect::<Vec<_>>(), ids);
    assert_eq!(
        drained.iter().map(|(_, n)| *n).collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    let ledger = block_on(queue.join());
    assert_eq!(
        (ledger.accepted, ledger.discarded, ledger.succeeded),
        (5, 5, 0)
    );
    assert!(ledger.is_balanced());
}

#[test]
fn checklist_immediate_discard_while_consumer_holds_work() {
    let queue = Queue::unbounded();
    for n in 0..3 {
        queue.try_put(n).unwrap();
    }
    let held = queue.try_get().unwrap();
    let drained = queue.shutdown_now();
    assert_eq!(drained.len(), 2);
    let mut joiner = queue.join();
    assert_pending(&mut joiner);
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.discarded), (1, 2));
    assert!(ledger.is_balanced());
    held.resolve(Outcome::Succeeded);
    let ledger = expect_ready(&mut joiner);
    assert_eq!((ledger.succeeded, ledger.discarded), (1, 2));
}

#[test]
#[cfg(feature = "std")]
fn checklist_worker_panics() {
    let queue = Queue::bounded(1).unwrap();
    std::thread::scope(|s| {
        let worker = s.spawn(|| {
            let _worker = queue.worker();
            let delivery = queue.get_blocking().unwrap();
            assert_eq!(*delivery, 0);
            // The handler fails once 1 is buffered: a worker that died before the put
            // of 1 landed would have it refused too (no workers).
            while queue.is_empty() {
                std::thread::yield_now();
            }
            panic!("handler failed on {}", *delivery);
        });
        queue.put_blocking(0).unwrap();
        queue.put_blocking(1).unwrap(); // buffered once the worker took 0
                                        // Blocks on the full queue until the worker is gone.
        let refused = queue.put_blocking(2);
        assert!(matches!(refused, Err(PutError::NoWorkers(2))));
        assert!(worker.join().is_err());
    });
    // The panicking worker's delivery is abandoned, not counted as success; the buffered
    // item stays for whoever shuts the queue down.
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.accepted, ledger.abandoned, ledger.buffered),
        (2, 1, 1)
    );
    assert!(queue.try_put(3).unwrap_err().is_no_workers());
    let drained = queue.shutdown_now();
    assert_eq!(
        drained.into_iter().map(|(_, n)| n).collect::<Vec<_>>(),
        vec![1]
    );
    let ledger = queue.join_blocking();
    assert_eq!(
        (ledger.abandoned, ledger.discarded, ledger.succeeded),
        (1, 1, 0)
    );
}

#[test]
fn checklist_worker_panics_catch_unwind() {
    let queue = Queue::unbounded();
    queue.try_put("boom").unwrap();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let _worker = queue.worker();
        let delivery = queue.try_get().unwrap();
        if *delivery == "boom" {
            panic!("handler failed");
        }
        delivery.succeed();
    }));
    assert!(result.is_err());
    assert_eq!(queue.ledger().abandoned, 1);
    assert_eq!(queue.workers(), 0);
    assert!(queue.try_put("next").unwrap_err().is_no_workers());
}

#[test]
#[cfg(feature = "std")]
fn checklist_producer_blocked_at_capacity_during_shutdown() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put("first").unwrap();
    std::thread::scope(|s| {
        let producer = s.spawn(|| queue.put_blocking("second"));
        // The queue stays full, so the producer cannot finish before the shutdown, however
        // the threads are scheduled; the pause only makes it likely to be asleep by then.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(queue.shutdown());
        let refused = producer.join().unwrap();
        assert!(matches!(refused, Err(PutError::ShutDown("second"))));
    });
    // Async form.
    let queue = Queue::bounded(1).unwrap();
    queue.try_put("first").unwrap();
    let mut putter = queue.put("second");
    assert_pending(&mut putter);
    queue.shutdown();
    assert!(matches!(
        expect_ready(&mut putter),
        Err(PutError::ShutDown("second"))
    ));
    assert_eq!(queue.try_get().unwrap().succeed(), "first");
}

#[test]
fn checklist_uncertain_outcome() {
    let queue = Queue::unbounded();
    let mut ledger_by_id = BTreeMap::new();
    for n in 0..3 {
        ledger_by_id.insert(queue.try_put(n).unwrap(), n);
    }
    // An external call timed out after the request was sent: the effect is unknown.
    let first = queue.try_get().unwrap();
    let uncertain_id = first.id();
    first.uncertain();
    queue.try_get().unwrap().succeed();
    queue.try_get().unwrap().reject();
    let ledger = block_on(queue.join());
    assert_eq!(
        (ledger.succeeded, ledger.rejected, ledger.uncertain),
        (1, 1, 1)
    );
    assert_eq!(ledger_by_id[&uncertain_id], 0);
    assert_eq!(
        ledger.to_string(),
        "accepted 3: 0 buffered, 0 in flight, 1 succeeded, 1 rejected, 1 uncertain, \
         0 abandoned, 0 discarded"
    );
}
