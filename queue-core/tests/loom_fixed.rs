//! loom models of the fixed tier's waiter slots: a full set of slots, a slot freed by a
//! dropped wait, a shutdown racing a registration, and the hand-offs between two waiters.
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p
//! tally-queue --test loom_fixed`.
//!
//! Under `cfg(loom)` the queue runs on loom's atomics and cells, and each slot's
//! `atomic-waker` cell is a loom mutex with the same contract (`src/fixed/waker.rs`). A
//! lost wake-up shows as a deadlock: `block_on` parks its thread until its waker fires.
#![cfg(loom)]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use loom::future::block_on;
use loom::sync::Arc;
use loom::thread;
use tally_queue::fixed::{FixedGetError, FixedPutError, FixedQueue, Waiting};

fn idle() -> Waiting {
    Waiting::default()
}

/// Polls `future` once with a waker that does nothing.
fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// One getter slot, held by a waiting get; a second get on another thread races a put: it
/// takes the item or is refused at once (never left waiting), and if it was refused, the
/// get holding the slot has the item on its next poll.
#[test]
fn a_full_set_of_slots_refuses_the_extra_wait() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 1>::new());
        let mut holder = Box::pin(queue.get());
        assert!(poll_once(holder.as_mut()).is_pending());
        let extra = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || match block_on(queue.get()) {
                Ok(job) => Some(job.succeed()),
                Err(FixedGetError::NoWaiterSlot(refused)) => {
                    assert_eq!(refused.slots, 1);
                    None
                }
                Err(other) => panic!("{other:?}"),
            })
        };
        queue.try_put(1).unwrap();
        match extra.join().unwrap() {
            Some(item) => assert_eq!(item, 1),
            None => {
                let Poll::Ready(Ok(job)) = poll_once(holder.as_mut()) else {
                    panic!("the item was handed to the get holding the slot");
                };
                assert_eq!(job.succeed(), 1);
            }
        }
        drop(holder);
        assert_eq!(queue.waiting(), idle());
        assert_eq!(queue.ledger().succeeded, 1);
    });
}

/// A waiting get is handed an item and dropped before it runs, while a second get on
/// another thread retries until the one slot is free: the second get always gets the item
/// (the hand-off the dropped get was woken for is passed on, or revoked so that a try sees
/// the item free), and the slot is free at the end.
#[test]
fn a_slot_freed_by_a_dropped_wait_serves_the_next() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 1>::new());
        let mut leaver = Box::pin(queue.get());
        assert!(poll_once(leaver.as_mut()).is_pending());
        let waiter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || loop {
                match block_on(queue.get()) {
                    Ok(job) => break job.succeed(),
                    Err(FixedGetError::NoWaiterSlot(_)) => thread::yield_now(),
                    Err(other) => panic!("{other:?}"),
                }
            })
        };
        queue.try_put(1).unwrap();
        drop(leaver);
        assert_eq!(waiter.join().unwrap(), 1);
        assert_eq!(queue.waiting(), idle());
        let ledger = queue.ledger();
        assert_eq!((ledger.succeeded, ledger.buffered), (1, 0));
    });
}

/// A shutdown races a get that is registering: the get always returns `ShutDown`.
#[test]
fn a_shutdown_races_a_registering_get() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 1>::new());
        let getter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || block_on(queue.get()).map(|job| job.succeed()))
        };
        assert!(queue.shutdown());
        assert_eq!(getter.join().unwrap(), Err(FixedGetError::ShutDown));
        assert_eq!(queue.waiting(), idle());
    });
}

/// An immediate shutdown races a put that is registering on a full queue: the put gets its
/// item back, the drain hands out the two buffered ones.
#[test]
fn a_shutdown_now_races_a_registering_put() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 1>::new());
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let putter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || block_on(queue.put(3)))
        };
        let drained: Vec<_> = queue.shutdown_now().map(|(_, item)| item).collect();
        assert_eq!(drained, [1, 2]);
        assert!(matches!(
            putter.join().unwrap(),
            Err(FixedPutError::ShutDown(3))
        ));
        assert_eq!(queue.ledger().discarded, 2);
        assert_eq!(queue.waiting(), idle());
    });
}

/// A get waits and is handed an item (its notification counted pending in the ring word);
/// a second get registers on another thread while a second put races it: the put must
/// not skip the second get because of the first one's pending notification, so each get
/// gets one item.
#[test]
fn two_puts_hand_off_to_two_waiting_gets() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 2>::new());
        let mut first = pin!(queue.get());
        assert!(poll_once(first.as_mut()).is_pending());
        queue.try_put(1).unwrap();
        let second = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || block_on(queue.get()).unwrap().succeed())
        };
        queue.try_put(2).unwrap();
        // The second get never depends on the first (it takes the item not kept, or is
        // handed one), so it is joined first: the model explores the race above, not the
        // two takes against each other.
        let second = second.join().unwrap();
        let Poll::Ready(Ok(job)) = poll_once(first.as_mut()) else {
            panic!("the first get was handed an item");
        };
        let mut got = [job.succeed(), second];
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
        assert_eq!(queue.waiting(), idle());
    });
}

/// A join races the get and the last ending on another thread: it always returns, with
/// the item counted.
#[test]
fn a_join_races_the_last_ending() {
    loom::model(|| {
        let queue = Arc::new(FixedQueue::<u8, 2, 1>::new());
        queue.try_put(1).unwrap();
        let resolver = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_get().unwrap().reject())
        };
        let ledger = block_on(queue.join()).unwrap();
        assert_eq!((ledger.rejected, ledger.in_flight), (1, 0));
        assert_eq!(resolver.join().unwrap(), 1);
        assert_eq!(queue.waiting(), idle());
    });
}
