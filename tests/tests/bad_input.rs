//! Bad input: each is refused with a clear error and changes nothing (no count moves, no
//! waiter wakes, nothing is accepted, the latch does not fail).

mod reliability;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use futures_lite::future::block_on;
use reliability::scaled;
use tally_latch::{CountDownLatch, FailableLatch, NameError, TrackingLatch, MAX_COUNT};
use tally_queue::{Ledger, Queue, ZeroCapacity};

fn pending<F: Future>(future: std::pin::Pin<&mut F>) -> bool {
    future
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending()
}

#[test]
fn duplicate_counter_names_are_refused_naming_the_duplicate() {
    let error = TrackingLatch::new(["db", "cache", "http", "cache"]).unwrap_err();
    assert_eq!(error, NameError::Duplicate("cache".into()));
    assert_eq!(error.to_string(), "duplicate counter name `cache`");
    let error = TrackingLatch::new(vec![String::from("x"); 3]).unwrap_err();
    assert_eq!(error, NameError::Duplicate("x".into()));
    // Names differing only in case are distinct.
    assert!(TrackingLatch::new(["a", "A"]).is_ok());
}

#[test]
fn unknown_counter_names_are_refused_and_change_nothing() {
    let latch = TrackingLatch::new(["db", "cache"]).unwrap();
    latch.count_down_for("db").unwrap();
    let mut wait = pin!(latch.wait());
    assert!(pending(wait.as_mut()));

    for bad in ["", "DB", "db ", "http", "cache\0"] {
        let error = latch.count_down_for(bad).unwrap_err();
        assert_eq!(error, NameError::Unknown(bad.into()));
        assert_eq!(error.to_string(), format!("unknown counter name `{bad}`"));
        assert_eq!(
            latch.counter(bad).unwrap_err(),
            NameError::Unknown(bad.into())
        );
    }
    // No side effects: the count, the pending list, the state and the waiter are as before.
    assert_eq!(latch.count(), 1);
    assert_eq!(latch.pending(), ["cache"]);
    assert!(!latch.is_open());
    assert!(latch.failure().is_none());
    assert!(pending(wait.as_mut()));

    // A second handle for a claimed name, or a handle for a reported one, is refused too.
    let handle = latch.counter("cache").unwrap();
    assert_eq!(
        latch.counter("cache").unwrap_err(),
        NameError::Claimed("cache".into())
    );
    assert_eq!(
        latch.counter("db").unwrap_err(),
        NameError::Reported("db".into())
    );
    assert_eq!(latch.count(), 1);
    assert!(handle.report());
    assert_eq!(
        wait.as_mut().poll(&mut Context::from_waker(Waker::noop())),
        Poll::Ready(Ok(()))
    );
}

#[test]
fn zero_capacity_is_refused_not_read_as_unbounded() {
    assert_eq!(Queue::<u8>::bounded(0).unwrap_err(), ZeroCapacity);
    assert_eq!(
        Queue::<u8>::with_unfinished_limit(0).unwrap_err(),
        ZeroCapacity
    );
    assert_eq!(ZeroCapacity.to_string(), "capacity must be at least 1");
    // The smallest valid capacity holds exactly one item.
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    assert!(queue.try_put(2).unwrap_err().is_full());
}

#[test]
fn huge_latch_counts_are_refused_by_try_new() {
    for count in [usize::MAX, MAX_COUNT + 1] {
        let error = CountDownLatch::try_new(count).unwrap_err();
        assert_eq!(error.count(), count);
        assert_eq!(
            error.to_string(),
            format!("latch count {count} exceeds the maximum of {MAX_COUNT}")
        );
        let error = FailableLatch::<()>::try_new(count).unwrap_err();
        assert_eq!(error.count(), count);
    }
    // The largest count is accepted and counts down by one, not wrapping.
    let latch = CountDownLatch::try_new(MAX_COUNT).unwrap();
    assert_eq!(latch.count(), MAX_COUNT);
    assert!(latch.count_down());
    assert_eq!(latch.count(), MAX_COUNT - 1);
    assert!(!latch.is_open());
    assert!(latch
        .wait_blocking_timeout(std::time::Duration::ZERO)
        .is_err());
    let failable = FailableLatch::<()>::try_new(MAX_COUNT).unwrap();
    assert!(failable.count_down());
    assert_eq!(failable.count(), MAX_COUNT - 1);
}

#[test]
#[should_panic(expected = "latch count exceeds tally_latch::MAX_COUNT")]
fn huge_latch_count_panics_in_new() {
    let _ = CountDownLatch::new(usize::MAX);
}

#[test]
fn usize_max_capacity_is_accepted_and_bounds_nothing_in_practice() {
    let queue = Queue::bounded(usize::MAX).unwrap();
    assert_eq!(queue.capacity(), Some(usize::MAX));
    let n = scaled(100_000, 100);
    for i in 0..n {
        queue.try_put(i).unwrap();
    }
    assert_eq!(queue.len() as u64, n);
    for i in 0..n {
        let delivery = queue.try_get().unwrap();
        assert_eq!(*delivery, i);
        delivery.succeed();
    }
    let ledger = block_on(queue.join());
    assert_eq!(ledger, {
        let mut ledger = Ledger::default();
        ledger.accepted = n;
        ledger.succeeded = n;
        ledger
    });
    let limited = Queue::<u8>::with_unfinished_limit(usize::MAX).unwrap();
    assert_eq!(limited.capacity(), Some(usize::MAX));
    limited.try_put(1).unwrap();
    assert_eq!(limited.unfinished(), 1);
}
