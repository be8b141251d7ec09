//! loom models of the queue's races. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p queue-core --test loom --release`.
#![cfg(loom)]
// Test programs are std programs; `core::`/`alloc::` paths add nothing here.
#![allow(clippy::std_instead_of_alloc, clippy::std_instead_of_core)]

use std::sync::Arc;

use loom::thread;
use queue_core::{GetError, PutError, Queue};

/// put vs get+resolve vs join: a join that starts after the put returned comes back only
/// once the item was resolved, whatever the interleaving (level-triggered, no lost
/// wake-up).
#[test]
fn put_get_resolve_join() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.get_blocking().unwrap().succeed())
        };
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1u8).unwrap())
        };
        producer.join().unwrap();
        let ledger = queue.join_blocking();
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
        assert_eq!(consumer.join().unwrap(), 1);
        assert!(queue.ledger().is_balanced());
    });
}

/// put vs graceful shutdown vs a waiting get: an accepted item is always delivered; the
/// getter sees `ShutDown` only if nothing was accepted.
#[test]
fn put_vs_shutdown_vs_get() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.get_blocking().map(|d| d.succeed()))
        };
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(7u8))
        };
        queue.shutdown();
        let put = producer.join().unwrap();
        let got = consumer.join().unwrap();
        match put {
            Ok(_) => assert_eq!(got, Ok(7)),
            Err(err) => {
                assert!(matches!(err, PutError::ShutDown(7)));
                assert_eq!(got, Err(GetError::ShutDown));
            }
        }
        let ledger = queue.join_blocking();
        assert!(ledger.is_balanced());
        assert_eq!(ledger.accepted, u64::from(put.is_ok()));
    });
}

/// shutdown_now vs a woken getter: an accepted item is delivered or drained, exactly once,
/// never lost.
#[test]
fn shutdown_now_vs_woken_getter() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.get_blocking().map(|d| d.succeed()).ok())
        };
        let put = queue.try_put(9u8);
        let drainer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.shutdown_now())
        };
        let drained = drainer.join().unwrap();
        let got = consumer.join().unwrap();
        assert!(put.is_ok());
        let delivered = usize::from(got == Some(9));
        assert_eq!(delivered + drained.len(), 1);
        let ledger = queue.join_blocking();
        assert_eq!(
            (ledger.succeeded, ledger.discarded),
            (delivered as u64, drained.len() as u64)
        );
        assert!(ledger.is_balanced());
    });
}

/// A put blocked on a full queue vs a get that frees the slot vs shutdown: the put either
/// lands or gets its item back, and never hangs.
#[test]
fn blocked_put_vs_get_vs_shutdown() {
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(1).unwrap());
        queue.try_put(1u8).unwrap();
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.put_blocking(2))
        };
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_get().map(|d| d.succeed()).ok())
        };
        queue.shutdown();
        let put = producer.join().unwrap();
        let got = consumer.join().unwrap();
        assert!(matches!(put, Ok(_) | Err(PutError::ShutDown(2))));
        let drained = queue.shutdown_now();
        let ledger = queue.join_blocking();
        assert_eq!(ledger.accepted, 1 + u64::from(put.is_ok()));
        assert_eq!(ledger.succeeded + ledger.discarded, ledger.accepted);
        assert_eq!(
            drained.len() + usize::from(got.is_some()),
            ledger.accepted as usize
        );
    });
}

/// The last worker leaving vs a put blocked on a full queue: the put wakes with its item.
#[test]
fn worker_exit_vs_blocked_put() {
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(1).unwrap());
        queue.try_put(1u8).unwrap();
        let worker = queue.worker_owned();
        let exiting = thread::spawn(move || drop(worker));
        let put = queue.put_blocking(2);
        exiting.join().unwrap();
        assert!(matches!(put, Err(PutError::NoWorkers(2))));
        assert_eq!(queue.ledger().buffered, 1);
    });
}

/// A get that registers, is cancelled, and waits again, vs a put: the cancelled waiter is
/// counted out without hiding the second wait from the put's notification.
#[test]
fn cancelled_get_vs_put() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(3u8).unwrap())
        };
        let mut context = Context::from_waker(Waker::noop());
        let mut first = Box::pin(queue.get());
        let got = match first.as_mut().poll(&mut context) {
            Poll::Ready(delivery) => delivery.unwrap().succeed(),
            Poll::Pending => {
                drop(first);
                queue.get_blocking().unwrap().succeed()
            }
        };
        producer.join().unwrap();
        assert_eq!(got, 3);
        assert!(queue.join_blocking().is_balanced());
    });
}

/// The last two producers leaving at once vs a waiting worker: exactly one exit shuts the
/// queue down, the item put before it is delivered, and the worker then stops.
#[test]
fn last_producers_leave_vs_waiting_worker() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let first = queue.producer_owned();
        let second = first.clone();
        let worker = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Ok(job) = queue.get_blocking() {
                    got.push(job.succeed());
                }
                got
            })
        };
        let leaving = thread::spawn(move || {
            first.queue().try_put(1).unwrap();
            drop(first);
        });
        drop(second);
        leaving.join().unwrap();
        assert_eq!(worker.join().unwrap(), [1]);
        assert!(queue.is_shut_down());
        assert!(queue.join_blocking().is_balanced());
    });
}
