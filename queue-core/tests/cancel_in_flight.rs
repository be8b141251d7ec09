//! Cooperative cancellation of in-flight work: `cancel_in_flight`, `abort`, and each
//! delivery's `is_cancelled` / `cancelled()`.

mod common;

#[cfg(feature = "std")]
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
#[cfg(feature = "std")]
use std::sync::Barrier;
#[cfg(feature = "std")]
use std::thread;

#[cfg(feature = "std")]
use futures_lite::future::{block_on, or};
use tally_queue::Queue;
#[cfg(feature = "std")]
use tally_queue::{JobId, Outcome};

use common::{
    assert_pending, counting_waker, expect_panic, expect_ready, panicking_waker, poll_with,
    waker_fn, within,
};

/// The seed's scenario: an abort while handlers run. Each handler races its (endless) work
/// against `cancelled()`, sees the request, and ends uncertain; the abort returns the
/// buffered rest; the ids of the two sets cover every accepted id exactly once.
#[test]
#[cfg(feature = "std")]
fn abort_while_handlers_run_ends_them_uncertain() {
    const HANDLERS: usize = 3;
    let queue = Queue::unbounded();
    let accepted: BTreeSet<JobId> = (0..10).map(|n| queue.try_put(n).unwrap()).collect();
    let started = Barrier::new(HANDLERS + 1);
    let (uncertain, drained) = thread::scope(|s| {
        let handlers: Vec<_> = (0..HANDLERS)
            .map(|_| {
                s.spawn(|| {
                    let job = queue.get_blocking().unwrap();
                    let id = job.id();
                    started.wait();
                    let stopped = block_on(or(
                        async {
                            job.cancelled().await;
                            true
                        },
                        async { std::future::pending::<bool>().await },
                    ));
                    assert!(stopped && job.is_cancelled());
                    job.resolve(Outcome::Uncertain);
                    id
                })
            })
            .collect();
        started.wait();
        let drained = queue.abort();
        let uncertain: BTreeSet<JobId> = handlers.into_iter().map(|h| h.join().unwrap()).collect();
        (uncertain, drained)
    });
    let drained_ids: BTreeSet<JobId> = drained.iter().map(|(id, _)| *id).collect();
    assert_eq!(uncertain.len(), HANDLERS);
    assert_eq!(drained.len(), 10 - HANDLERS);
    assert!(uncertain.is_disjoint(&drained_ids));
    assert_eq!(&uncertain | &drained_ids, accepted);
    let ledger = queue.join_blocking();
    assert_eq!(ledger.uncertain, HANDLERS as u64);
    assert_eq!(ledger.discarded, (10 - HANDLERS) as u64);
    assert!(ledger.is_balanced());
}

/// A request is not a shutdown: puts are still accepted, and every delivery handed out
/// afterwards (plain, owned, after a retry) sees the request on its first check.
#[test]
fn deliveries_handed_out_after_the_request_see_it_at_once() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(1).unwrap();
    assert!(queue.cancel_in_flight());
    assert!(!queue.is_shut_down());
    queue.try_put(2).unwrap();
    let first = queue.try_get().unwrap();
    assert!(first.is_cancelled());
    assert_eq!(expect_ready(&mut Box::pin(first.cancelled())), ());
    let again = first.retry().unwrap();
    // The next get serves a returned item.
    let retried = queue.try_get_owned().unwrap();
    assert_eq!(retried.id(), again);
    assert!(retried.is_cancelled());
    expect_ready(&mut Box::pin(retried.cancelled()));
    retried.succeed();
    let fresh = queue.try_get().unwrap();
    assert!(fresh.is_cancelled());
    fresh.reject();
    let ledger = queue.ledger();
    assert_eq!((ledger.succeeded, ledger.rejected), (1, 1));
    assert!(ledger.is_balanced());
}

/// A cancellation request ends nothing by itself: the delivery stays in flight and `join`
/// keeps waiting until the handler resolves it.
#[test]
fn a_request_never_ends_a_delivery() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    queue.cancel_in_flight();
    assert_eq!(queue.ledger().in_flight, 1);
    assert!(queue.try_get().is_err());
    let mut join = Box::pin(queue.join());
    assert_pending(&mut join);
    job.uncertain();
    assert_eq!(expect_ready(&mut join).uncertain, 1);
}

/// A handler waiting on another thread (async and blocking forms) is woken by the
/// request; a hang would fail the test.
#[test]
#[cfg(feature = "std")]
fn waiting_handlers_are_woken_by_the_request() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let asynchronous = queue.try_get_owned().unwrap();
    let blocking = queue.try_get_owned().unwrap();
    let ready = Arc::new(Barrier::new(3));
    let a = {
        let ready = ready.clone();
        thread::spawn(move || {
            ready.wait();
            block_on(asynchronous.cancelled());
            asynchronous.uncertain()
        })
    };
    let b = {
        let ready = ready.clone();
        thread::spawn(move || {
            ready.wait();
            blocking.cancelled_blocking();
            blocking.uncertain()
        })
    };
    ready.wait();
    thread::sleep(std::time::Duration::from_millis(20));
    queue.cancel_in_flight();
    let ended = within(5, move || (a.join().unwrap(), b.join().unwrap()));
    assert_eq!(ended, (1, 2));
    assert_eq!(queue.ledger().uncertain, 2);
}

/// A dropped `cancelled()` future gives its registration up: the request still wakes the
/// others, and nothing stays registered.
#[test]
fn a_dropped_cancelled_future_holds_nothing() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let (waker, woken) = counting_waker();
    let mut dropped = Box::pin(job.cancelled());
    assert!(poll_with(&mut dropped, &waker).is_pending());
    let mut kept = Box::pin(job.cancelled());
    assert!(poll_with(&mut kept, &waker).is_pending());
    drop(dropped);
    queue.cancel_in_flight();
    assert_eq!(woken.load(Ordering::SeqCst), 1);
    expect_ready(&mut kept);
    job.uncertain();
}

/// A panicking waker does not keep the request from the other handlers: every waiting
/// `cancelled()` is woken, then the panic reaches the caller, with the request made.
#[test]
fn a_panicking_waker_does_not_hide_the_request_from_others() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let mut panicking = Box::pin(job.cancelled());
    assert!(poll_with(&mut panicking, &panicking_waker()).is_pending());
    let (waker, woken) = counting_waker();
    let mut calm: Vec<_> = (0..3).map(|_| Box::pin(job.cancelled())).collect();
    for waiting in &mut calm {
        assert!(poll_with(waiting, &waker).is_pending());
    }
    expect_panic(|| queue.cancel_in_flight());
    assert_eq!(woken.load(Ordering::SeqCst), 3);
    assert!(job.is_cancelled());
    for waiting in &mut calm {
        expect_ready(waiting);
    }
    job.uncertain();
}

/// A waker that re-enters the queue (puts, cancels again, shuts down) from inside the
/// request's wake-up does not deadlock.
#[test]
fn a_waker_that_reenters_the_queue_does_not_deadlock() {
    let accepted = within(5, || {
        let queue = Arc::new(Queue::unbounded());
        queue.try_put(0).unwrap();
        let job = queue.try_get_owned().unwrap();
        let inner = Arc::downgrade(&queue);
        let waker = waker_fn(move || {
            if let Some(queue) = inner.upgrade() {
                let _ = queue.try_put(1);
                queue.cancel_in_flight();
                queue.abort();
            }
        });
        let mut waiting = Box::pin(job.cancelled());
        assert!(poll_with(&mut waiting, &waker).is_pending());
        queue.cancel_in_flight();
        expect_ready(&mut waiting);
        drop(waiting);
        job.uncertain();
        queue.ledger()
    });
    assert_eq!((accepted.accepted, accepted.discarded), (2, 1));
    assert!(accepted.is_balanced());
}

/// `abort` is `shutdown_now` plus `cancel_in_flight`: the queue refuses puts, the drained
/// items come back, and the request is made.
#[test]
fn abort_shuts_down_drains_and_requests() {
    let queue = Queue::unbounded();
    let a = queue.try_put('a').unwrap();
    let held = queue.try_get().unwrap();
    let b = queue.try_put('b').unwrap();
    assert_eq!(queue.abort(), vec![(b, 'b')]);
    assert!(queue.is_shut_down() && queue.is_cancel_requested());
    assert!(queue.try_put('c').unwrap_err().is_shut_down());
    assert!(queue.abort().is_empty());
    assert_eq!(held.id(), a);
    held.uncertain();
    assert!(queue.ledger().is_balanced());
}
