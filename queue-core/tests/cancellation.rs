//! Futures dropped at every await point lose nothing: for every `k`, a future is polled
//! `k` times (with the queue changing between polls) and then dropped, and the accounting
//! is checked against the test's own record.

mod common;

use core::task::Poll;

use common::poll_once;
use tally_queue::Queue;

/// A put on a full queue, with a slot freed after the first poll and the queue shut down
/// after the third. Dropped after `k` polls, the item was accepted exactly when a poll
/// returned `Ok`.
#[test]
fn put_dropped_at_every_poll() {
    for k in 0..6 {
        let queue = Queue::bounded(1).unwrap();
        queue.try_put(0u32).unwrap();
        let mut put = queue.put(1);
        let mut accepted = None;
        let mut refused = None;
        for i in 0..k {
            if accepted.is_some() || refused.is_some() {
                break;
            }
            match poll_once(&mut put) {
                Poll::Ready(Ok(id)) => accepted = Some(id),
                Poll::Ready(Err(err)) => refused = Some(err.into_inner()),
                Poll::Pending => {}
            }
            if i == 0 {
                queue.try_get().unwrap().succeed();
            }
            if i == 2 {
                queue.shutdown();
            }
        }
        drop(put);
        let ledger = queue.ledger();
        let mut buffered: Vec<_> = Vec::new();
        while let Ok(delivery) = queue.try_get() {
            buffered.push((delivery.id(), delivery.succeed()));
        }
        // Item 0 may still be buffered (k = 0); item 1 is there exactly when accepted.
        let ones: Vec<_> = buffered.into_iter().filter(|&(_, n)| n == 1).collect();
        match (accepted, refused) {
            (Some(id), None) => {
                assert_eq!(ledger.accepted, 2, "k={k}");
                assert_eq!(ones, vec![(id, 1)], "k={k}");
            }
            (None, refused) => {
                assert_eq!(ledger.accepted, 1, "k={k}");
                assert!(ones.is_empty(), "k={k}");
                assert!(refused.is_none() || refused == Some(1), "k={k}");
            }
            (Some(_), Some(_)) => unreachable!(),
        }
        assert!(queue.ledger().is_balanced(), "k={k}");
    }
}

/// Getters waiting on an empty queue, woken by puts and dropped at every point: every
/// item is delivered exactly once, to a getter that returned it or to a later `try_get`.
#[test]
fn get_dropped_at_every_poll() {
    for k in 0..6 {
        for drop_after_put in [false, true] {
            let queue = Queue::<usize>::unbounded();
            let mut get = queue.get();
            let mut delivered = Vec::new();
            let mut ids = Vec::new();
            for i in 0..k {
                if let Poll::Ready(res) = poll_once(&mut get) {
                    delivered.push(res.unwrap().succeed());
                    get = queue.get();
                }
                if i % 2 == 0 {
                    ids.push(queue.try_put(i).unwrap());
                }
            }
            if drop_after_put {
                ids.push(queue.try_put(100).unwrap());
            }
            drop(get);
            while let Ok(delivery) = queue.try_get() {
                delivered.push(delivery.succeed());
            }
            let mut expected: Vec<_> = (0..k).filter(|i| i % 2 == 0).collect();
            if drop_after_put {
                expected.push(100);
            }
            delivered.sort_unstable();
            expected.sort_unstable();
            assert_eq!(delivered, expected, "k={k}");
            let ledger = queue.ledger();
            assert_eq!(ledger.accepted, ids.len() as u64);
            assert_eq!(ledger.succeeded, ids.len() as u64);
            assert!(ledger.is_balanced());
        }
    }
}

/// A join dropped at any point changes nothing, and a later join still sees the zero.
#[test]
fn join_dropped_at_every_poll() {
    for k in 0..4 {
        let queue = Queue::unbounded();
        queue.try_put(1).unwrap();
        let held = queue.try_get().unwrap();
        let mut join = queue.join();
        for _ in 0..k {
            assert!(poll_once(&mut join).is_pending());
        }
        drop(join);
        held.succeed();
        assert!(poll_once(&mut queue.join()).is_ready());
    }
}

/// A put woken by a freed slot and dropped passes its wake-up on: the other waiting put
/// proceeds.
#[test]
fn dropped_woken_put_passes_wakeup() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let mut a = queue.put(1);
    let mut b = queue.put(2);
    assert!(poll_once(&mut a).is_pending());
    assert!(poll_once(&mut b).is_pending());
    queue.try_get().unwrap().succeed();
    drop(a);
    assert!(matches!(poll_once(&mut b), Poll::Ready(Ok(_))));
}
