//! Deadline variants: `put_until`, `get_until`, `join_until` and `shutdown_until`. The
//! deadlines here are futures the test controls (ready, pending, or opened by another
//! thread), so no assertion depends on wall-clock time.

mod common;

use std::future::{pending, ready};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::thread;

use common::{assert_pending, expect_ready, poll_once};
use futures_lite::future::block_on;
use tally_queue::{GetTimeoutError, JobId, Outcome, PutTimeoutError, Queue};

/// A deadline that completes once the returned closure has been called. The tests poll by
/// hand, so it needs no waker.
fn manual_deadline() -> (impl std::future::Future<Output = ()>, impl FnOnce()) {
    let fired = Arc::new(AtomicBool::new(false));
    let flag = fired.clone();
    let deadline = futures_lite::future::poll_fn(move |_| {
        if fired.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    (deadline, move || flag.store(true, Ordering::SeqCst))
}

#[test]
fn timed_out_put_returns_the_item_and_accepts_nothing() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let before = queue.ledger();
    let (deadline, fire) = manual_deadline();
    let mut put = Box::pin(queue.put_until(2, deadline));
    assert_pending(&mut put);
    fire();
    match expect_ready(&mut put) {
        Err(PutTimeoutError::TimedOut(item)) => assert_eq!(item, 2),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(queue.ledger(), before);
    assert_eq!(queue.len(), 1);
}

#[test]
fn put_until_succeeds_when_room_comes_first() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let mut put = Box::pin(queue.put_until(2, pending::<()>()));
    assert_pending(&mut put);
    queue.try_get().unwrap().succeed();
    assert_eq!(expect_ready(&mut put).unwrap().get(), 1);
}

#[test]
fn an_operation_that_can_finish_wins_over_a_ready_deadline() {
    let queue = Queue::unbounded();
    assert!(block_on(queue.put_until("x", ready(()))).is_ok());
    let delivery = block_on(queue.get_until(ready(()))).unwrap();
    assert_eq!(*delivery, "x");
    delivery.succeed();
    assert_eq!(block_on(queue.join_until(ready(()))).unwrap().succeeded, 1);
}

#[test]
fn get_until_times_out_then_sees_shutdown() {
    let queue = Queue::<u8>::unbounded();
    assert_eq!(
        block_on(queue.get_until(ready(()))).unwrap_err(),
        GetTimeoutError::TimedOut
    );
    assert_eq!(
        GetTimeoutError::TimedOut.to_string(),
        "timed out waiting for an item"
    );
    queue.shutdown();
    assert_eq!(
        block_on(queue.get_until(pending::<()>())).unwrap_err(),
        GetTimeoutError::ShutDown
    );
}

#[test]
fn get_owned_until_delivers_across_threads() {
    let queue = Arc::new(Queue::<i32>::unbounded());
    let getter = {
        let queue = queue.clone();
        thread::spawn(move || block_on(queue.get_owned_until(pending::<()>())).map(|d| d.succeed()))
    };
    queue.try_put(7).unwrap();
    assert_eq!(getter.join().unwrap(), Ok(7));
}

#[test]
fn join_until_reports_the_ledger_at_the_deadline() {
    let queue = Queue::unbounded();
    for n in 0..3 {
        queue.try_put(n).unwrap();
    }
    let held = queue.try_get().unwrap();
    let timed_out = block_on(queue.join_until(ready(()))).unwrap_err();
    let ledger = timed_out.ledger();
    assert_eq!(
        (ledger.accepted, ledger.buffered, ledger.in_flight),
        (3, 2, 1)
    );
    assert_eq!(timed_out.to_string(), "timed out with 3 jobs unfinished");
    // The timed-out join changed nothing.
    assert_eq!(queue.ledger(), ledger);
    held.resolve(Outcome::Rejected);
    while let Ok(delivery) = queue.try_get() {
        delivery.succeed();
    }
    let settled = block_on(queue.join_until(pending::<()>())).unwrap();
    assert_eq!((settled.succeeded, settled.rejected), (2, 1));
}

/// The seed's "choose drain or abort": workers keep up, the drain finishes in time.
#[test]
#[cfg(feature = "std")]
fn shutdown_until_drains_in_time() {
    let queue = Arc::new(Queue::<i32>::bounded(4).unwrap());
    let worker = {
        let queue = queue.clone();
        thread::spawn(move || {
            let _worker = queue.worker();
            while let Ok(job) = queue.get_blocking() {
                job.succeed();
            }
        })
    };
    for n in 0..20 {
        queue.put_blocking(n).unwrap();
    }
    let closed = block_on(queue.shutdown_until(pending::<()>()));
    worker.join().unwrap();
    assert!(closed.drained_in_time);
    assert!(closed.returned.is_empty());
    assert_eq!((closed.ledger.accepted, closed.ledger.succeeded), (20, 20));
    assert!(queue.is_shut_down());
}

/// The seed's "choose drain or abort": nobody drains, the deadline aborts. Buffered items
/// come back with their ids; the held delivery is asked to stop and must still end.
#[test]
fn shutdown_until_aborts_at_the_deadline() {
    let queue = Queue::unbounded();
    let ids: Vec<JobId> = ["held", "a", "b"]
        .into_iter()
        .map(|item| queue.try_put(item).unwrap())
        .collect();
    let held = queue.try_get().unwrap();
    let (deadline, fire) = manual_deadline();
    let mut closing = Box::pin(queue.shutdown_until(deadline));
    assert_pending(&mut closing);
    // The first poll shut the queue down gracefully: no new puts.
    assert!(queue.try_put("late").unwrap_err().is_shut_down());
    fire();
    let closed = expect_ready(&mut closing);
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(ids[1], "a"), (ids[2], "b")]);
    assert_eq!(
        (closed.ledger.in_flight, closed.ledger.discarded),
        (1, 2),
        "{:?}",
        closed.ledger
    );
    assert!(closed.ledger.is_balanced());
    assert!(held.is_cancelled());
    held.succeed();
    assert_eq!(block_on(queue.join()).succeeded, 1);
}

/// Each deadline variant dropped after k polls, for every k, loses nothing: a put accepts
/// nothing unless it returned, a get leaves its item buffered.
#[test]
fn dropping_deadline_futures_at_any_poll_loses_nothing() {
    for polls in 0..4 {
        let queue = Queue::bounded(1).unwrap();
        queue.try_put(0).unwrap();
        {
            let mut put = Box::pin(queue.put_until(1, pending::<()>()));
            for _ in 0..polls {
                assert!(poll_once(&mut put).is_pending());
            }
        }
        assert_eq!(queue.ledger().accepted, 1);
        {
            let empty = Queue::<u8>::unbounded();
            let mut get = Box::pin(empty.get_until(pending::<()>()));
            for _ in 0..polls {
                assert!(poll_once(&mut get).is_pending());
            }
            drop(get);
            empty.try_put(9).unwrap();
            assert_eq!(empty.try_get().unwrap().succeed(), 9);
        }
        let delivery = queue.try_get().unwrap();
        assert_eq!(delivery.succeed(), 0);
    }
}
