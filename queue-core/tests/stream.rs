//! The consumer side as a `Stream` of deliveries.

mod common;

use std::pin::Pin;

use common::{assert_pending, poll_once};
use futures_core::Stream;
use futures_lite::future::block_on;
use futures_lite::StreamExt;
use tally_queue::Queue;

#[test]
fn the_stream_yields_each_item_then_ends_at_shutdown() {
    let queue = Queue::unbounded();
    for n in 0..5 {
        queue.try_put(n).unwrap();
    }
    queue.shutdown();
    let items: Vec<_> = block_on(queue.deliveries().map(|job| job.succeed()).collect());
    assert_eq!(items, [0, 1, 2, 3, 4]);
    assert_eq!(queue.ledger().succeeded, 5);
}

#[test]
fn a_dropped_pending_next_loses_nothing() {
    let queue = Queue::unbounded();
    {
        let mut jobs = queue.deliveries();
        let mut next = jobs.next();
        assert_pending(&mut next);
    }
    queue.try_put("kept").unwrap();
    let mut jobs = queue.deliveries();
    let job = block_on(jobs.next()).unwrap();
    assert_eq!(job.succeed(), "kept");
}

#[test]
fn a_waiting_stream_is_woken_by_a_put() {
    let queue = Queue::unbounded();
    let mut jobs = queue.deliveries();
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(Pin::new(&mut jobs).poll_next(&mut context).is_pending());
    queue.try_put(7).unwrap();
    match Pin::new(&mut jobs).poll_next(&mut context) {
        std::task::Poll::Ready(Some(job)) => assert_eq!(job.succeed(), 7),
        other => panic!("expected the item, got {:?}", other.map(|o| o.is_some())),
    }
    queue.shutdown();
    assert!(matches!(
        poll_once(&mut jobs.next()),
        std::task::Poll::Ready(None)
    ));
}

#[test]
fn a_stream_after_the_end_stays_ended() {
    let queue = Queue::<u8>::unbounded();
    queue.shutdown();
    let mut jobs = queue.deliveries();
    assert!(block_on(jobs.next()).is_none());
    assert!(block_on(jobs.next()).is_none());
}
