//! loom models of the latch state machine: count-down vs wait vs fail, and handle drop vs
//! wait. Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p latch-core
//! --test loom --release`.
#![cfg(loom)]
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // tests run on std
#![allow(unsafe_code)] // loom cells model the data a counter publishes

use loom::future::block_on;
use loom::sync::Arc;
use loom::thread;

use latch_core::{CountDownLatch, FailableLatch, Failure, TrackingLatch};

/// Two counters race a waiter: the waiter always wakes (no lost wake-up) and sees zero.
#[test]
fn count_downs_race_a_waiter() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(2));
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                thread::spawn(move || assert!(latch.count_down()))
            })
            .collect();
        block_on(latch.wait());
        assert_eq!(latch.count(), 0);
        counters.into_iter().for_each(|c| c.join().unwrap());
    });
}

/// Two waiters, one counter: both wake.
#[test]
fn one_count_down_releases_two_waiters() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let other = {
            let latch = latch.clone();
            thread::spawn(move || block_on(latch.wait()))
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        block_on(latch.wait());
        other.join().unwrap();
        assert!(counter.join().unwrap());
    });
}

/// The writes a counter made before counting down are visible to the waiter it released.
#[test]
fn count_down_happens_before_wait_returns() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let data = Arc::new(loom::cell::UnsafeCell::new(0));
        let writer = {
            let (latch, data) = (latch.clone(), data.clone());
            thread::spawn(move || {
                data.with_mut(|value| {
                    // SAFETY: only this thread writes, before the count-down that the
                    // reader's wait synchronizes with; loom checks that claim.
                    unsafe { *value = 42 }
                });
                latch.count_down();
            })
        };
        block_on(latch.wait());
        // SAFETY: the wait returned, so the write happened-before this read.
        let value = data.with(|value| unsafe { *value });
        assert_eq!(value, 42);
        writer.join().unwrap();
    });
}

/// A failure races the last count-down and a waiter: the latch ends exactly one way, the
/// waiter sees that way, and a refused failure hands its error back. A count-down after
/// the claim dips the count to zero and puts it back, which must not read as open.
#[test]
fn fail_races_count_down_and_wait() {
    loom::model(|| {
        let latch = Arc::new(FailableLatch::new(1));
        let failer = {
            let latch = latch.clone();
            thread::spawn(move || latch.fail(7))
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        let seen = block_on(latch.wait()).map_err(|e| *e);
        let failed = failer.join().unwrap();
        let counted = counter.join().unwrap();
        match seen {
            Ok(()) => {
                assert!(counted);
                assert_eq!(failed, Err(7));
                assert_eq!(latch.count(), 0);
            }
            Err(error) => {
                assert_eq!(error, 7);
                assert_eq!(failed, Ok(()));
                assert!(!counted);
                assert_eq!(latch.count(), 1, "the failure froze the count");
            }
        }
    });
}

/// One count-down too many: the extra one takes the count below zero and puts it back,
/// and meanwhile nobody sees the latch closed again or the count above zero.
#[test]
fn extra_count_down_never_reopens() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                thread::spawn(move || latch.count_down())
            })
            .collect();
        block_on(latch.wait());
        assert!(latch.is_open());
        assert_eq!(latch.count(), 0);
        let counted: Vec<bool> = counters.into_iter().map(|c| c.join().unwrap()).collect();
        assert_eq!(counted.iter().filter(|&&c| c).count(), 1);
        assert_eq!(latch.count(), 0);
    });
}

/// A counter handle dropped without reporting races a waiter and another counter: the
/// waiter never hangs, and a failure names the dropped counter.
#[test]
fn handle_drop_races_wait() {
    loom::model(|| {
        // A std `Arc`: the handles hold one, and its count needs no modelling.
        let latch = std::sync::Arc::new(TrackingLatch::<()>::new(["a", "b"]).unwrap());
        let a = latch.counter_owned("a").unwrap();
        let b = latch.counter_owned("b").unwrap();
        let dropper = thread::spawn(move || drop(a));
        let reporter = thread::spawn(move || b.report());
        let outcome = block_on(latch.wait()).map_err(Clone::clone);
        assert_eq!(
            outcome,
            Err(Failure::Abandoned {
                counter: "a".into(),
                panicking: false
            })
        );
        dropper.join().unwrap();
        reporter.join().unwrap();
    });
}
