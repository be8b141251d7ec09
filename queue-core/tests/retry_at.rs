//! `retry_at`: a retry held back until a deadline future resolves. The held item counts as
//! buffered, is never lost (the future dropped at any poll lets it go), comes back from
//! `shutdown_now`, and its attempts never reset.

mod common;

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};
use std::sync::Arc;

use common::{assert_pending, expect_ready, poll_once, within};
#[cfg(feature = "std")]
use tally_queue::Record;
use tally_queue::{AbandonPolicy, GetError, Queue, TryGetError};

/// A deadline that passes at its `n + 1`-th poll.
struct After(usize);

impl Future for After {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 == 0 {
            return Poll::Ready(());
        }
        self.0 -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn a_held_item_is_buffered_and_comes_back_when_due() {
    let queue = Queue::unbounded();
    let id = queue.try_put("job").unwrap();
    let mut retry = queue.try_get().unwrap().retry_at(After(2)).unwrap();
    let ledger = queue.ledger();
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    assert!(ledger.is_balanced());
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.unfinished(), 1);
    for _ in 0..2 {
        assert_pending(&mut retry);
        assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    }
    expect_ready(&mut retry);
    // Polled again after completion: nothing more happens.
    expect_ready(&mut retry);
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt(), *again), (id, 2, "job"));
    again.succeed();
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.buffered),
        (1, 1, 0)
    );
}

#[test]
fn dropped_at_every_poll_the_item_is_due_at_once() {
    for polls in 0..4 {
        let queue = Queue::unbounded();
        let id = queue.try_put(polls).unwrap();
        let mut retry = queue.try_get().unwrap().retry_at(After(10)).unwrap();
        for _ in 0..polls {
            assert_pending(&mut retry);
        }
        assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
        drop(retry);
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.buffered, ledger.in_flight),
            (1, 0),
            "after {polls} polls"
        );
        let again = queue.try_get().unwrap();
        assert_eq!((again.id(), again.attempt()), (id, 2));
        again.succeed();
        assert!(queue.is_settled());
    }
}

#[test]
fn an_owned_retry_dropped_at_every_poll_loses_nothing() {
    for polls in 0..4 {
        let queue = Arc::new(Queue::unbounded());
        queue.try_put(polls).unwrap();
        let mut retry = queue.try_get_owned().unwrap().retry_at(After(10)).unwrap();
        for _ in 0..polls {
            assert_pending(&mut retry);
        }
        drop(retry);
        assert_eq!(queue.try_get().unwrap().attempt(), 2);
    }
}

#[test]
fn a_deadline_that_panics_lets_the_item_go() {
    struct Boom;
    impl Future for Boom {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            panic!("timer failed")
        }
    }
    let queue = Queue::unbounded();
    queue.try_put(7).unwrap();
    let mut retry = queue.try_get().unwrap().retry_at(Boom).unwrap();
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = poll_once(&mut retry);
    }));
    assert!(polled.is_err());
    drop(retry);
    assert_eq!(*queue.try_get().unwrap(), 7);
}

#[test]
fn shutdown_now_hands_held_items_back() {
    let queue = Queue::unbounded();
    let fresh = queue.try_put("fresh").unwrap();
    let held = queue.try_put("held").unwrap();
    // Take "fresh" and "held" in order, hold "held", put "fresh" back in the buffer's place.
    let first = queue.try_get().unwrap();
    let second = queue.try_get().unwrap();
    assert_eq!(second.id(), held);
    let mut retry = second.retry_at(After(10)).unwrap();
    first.retry().unwrap();
    let drained = queue.shutdown_now();
    assert_eq!(drained, [(fresh, "fresh"), (held, "held")]);
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.discarded, ledger.buffered, ledger.in_flight),
        (2, 0, 0)
    );
    assert!(ledger.is_balanced());
    // The future finds nothing to let go, at its deadline or dropped.
    assert_pending(&mut retry);
    drop(retry);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert!(queue.take_dead_letters().is_empty());
}

#[test]
fn after_shutdown_now_a_retry_at_is_refused() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    queue.shutdown_now();
    let job = job.retry_at(After(0)).unwrap_err();
    assert_eq!(job.attempt(), 1);
    job.reject();
    assert!(queue.is_settled());
}

#[test]
fn a_graceful_shutdown_lets_held_items_go_at_once() {
    let queue = Queue::unbounded();
    queue.try_put("held").unwrap();
    let retry = queue.try_get().unwrap().retry_at(After(100)).unwrap();
    queue.shutdown();
    // The drain does not wait for the deadline.
    let again = queue.try_get().unwrap();
    assert_eq!(again.attempt(), 2);
    again.succeed();
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    drop(retry); // nothing left to let go
    let ledger = queue.ledger();
    assert_eq!((ledger.succeeded, ledger.buffered), (1, 0));
}

#[test]
fn under_redeliver_a_graceful_shutdown_waits_for_the_deadline() {
    let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    queue.try_put("held").unwrap();
    let mut retry = queue.try_get().unwrap().retry_at(After(1)).unwrap();
    queue.shutdown();
    let mut get = queue.get();
    assert_pending(&mut get);
    let mut join = queue.join();
    assert_pending(&mut join);
    assert_pending(&mut retry);
    expect_ready(&mut retry);
    let again = expect_ready(&mut get).unwrap();
    assert_eq!(again.attempt(), 2);
    again.succeed();
    assert_eq!(expect_ready(&mut join).succeeded, 1);
    assert_eq!(
        expect_ready(&mut queue.get()).unwrap_err(),
        GetError::ShutDown
    );
}

#[test]
fn attempts_never_reset_and_count_toward_max_attempts() {
    let queue = Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(3).unwrap());
    queue.try_put("flaky").unwrap();
    for attempt in 1..=2 {
        let job = queue.try_get().unwrap();
        assert_eq!(job.attempt(), attempt);
        drop(job.retry_at(After(0)).unwrap()); // due at once
    }
    let last = queue.try_get().unwrap();
    assert_eq!(last.attempt(), 3);
    let last = last.retry_at(After(0)).unwrap_err(); // no fourth attempt
    drop(last); // its last attempt abandoned: a dead letter
    let dead = queue.take_dead_letters();
    assert_eq!((dead.len(), dead[0].attempts), (1, 3));
    assert!(queue.ledger().is_balanced());
}

#[test]
#[cfg(feature = "std")]
fn a_waiting_get_is_woken_when_the_item_is_due() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(5).unwrap();
    let retry = queue.try_get_owned().unwrap().retry_at(After(3)).unwrap();
    let got = within(10, move || {
        let getter = {
            let queue = queue.clone();
            std::thread::spawn(move || {
                queue
                    .get_blocking()
                    .map(|job| (job.attempt(), job.succeed()))
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        futures_lite::future::block_on(retry);
        getter.join().unwrap()
    });
    assert_eq!(got.unwrap(), (2, 5));
}

#[test]
#[cfg(feature = "std")]
fn the_journal_hears_the_retry_and_the_next_delivery() {
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(record.clone());
    let id = queue.try_put(1).unwrap();
    let retry = queue.try_get().unwrap().retry_at(After(0)).unwrap();
    assert_eq!(record.in_flight(), []);
    futures_lite::future::block_on(retry);
    let job = queue.try_get().unwrap();
    assert_eq!(record.in_flight(), [id]);
    job.succeed();
}

#[test]
fn held_items_race_shutdown_now_and_none_is_lost() {
    let rounds = common::scaled(200, 4);
    within(60, move || {
        for _ in 0..rounds {
            let queue = Arc::new(Queue::unbounded());
            for n in 0..8 {
                queue.try_put(n).unwrap();
            }
            let mut timers = Vec::new();
            while let Ok(job) = queue.try_get_owned() {
                timers.push(job.retry_at(After(1)).unwrap());
            }
            let stopper = {
                let queue = queue.clone();
                std::thread::spawn(move || queue.shutdown_now())
            };
            let releaser = std::thread::spawn(move || {
                for timer in timers {
                    futures_lite::future::block_on(timer);
                }
            });
            releaser.join().unwrap();
            // Every item was either still held (taken by the drain) or due and in the
            // lane (drained too): the drain hands back all of them, and none is left.
            let mut seen: Vec<i32> = stopper
                .join()
                .unwrap()
                .into_iter()
                .map(|(_, n)| n)
                .collect();
            assert!(queue.take_dead_letters().is_empty());
            assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
            seen.sort_unstable();
            assert_eq!(seen, (0..8).collect::<Vec<_>>());
            let ledger = queue.ledger();
            assert!(ledger.is_balanced());
            assert_eq!((ledger.buffered, ledger.in_flight), (0, 0));
        }
    });
}
