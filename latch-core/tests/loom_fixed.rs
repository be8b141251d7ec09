//! loom models of the fixed tier: count-down vs wait, slot claim vs release vs opening,
//! fail vs count-down vs wait, and a timed wait's deadline vs the last report. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release -p tally-latch --test
//! loom_fixed`.
//!
//! Under `cfg(loom)` the latches use loom's atomics and `UnsafeCell`, and each waiter slot's
//! `atomic-waker` cell is replaced by a loom mutex with the same contract (atomic-waker has
//! no loom support; see `src/fixed/waker.rs`).
#![cfg(loom)]
#![allow(unsafe_code)] // loom cells model the data a counter publishes

use loom::future::block_on;
use loom::sync::Arc;
use loom::thread;

use tally_latch::fixed::{
    FixedFailableLatch, FixedLatch, FixedTimedWaitError, FixedTrackingLatch, FixedWaitError,
    NoWaiterSlot,
};

/// Two counters race a waiter: the waiter always wakes and sees zero; its slot is free.
#[test]
fn count_downs_race_a_waiter() {
    loom::model(|| {
        let latch = Arc::new(FixedLatch::<1>::new(2));
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                thread::spawn(move || assert!(latch.count_down()))
            })
            .collect();
        assert_eq!(block_on(latch.wait()), Ok(()));
        assert_eq!(latch.count(), 0);
        assert_eq!(latch.waiting(), 0);
        counters.into_iter().for_each(|c| c.join().unwrap());
    });
}

/// Two waiters in two slots, one count-down: both wake.
#[test]
fn one_count_down_releases_two_slotted_waiters() {
    loom::model(|| {
        let latch = Arc::new(FixedLatch::<2>::new(1));
        let other = {
            let latch = latch.clone();
            thread::spawn(move || block_on(latch.wait()))
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        assert_eq!(block_on(latch.wait()), Ok(()));
        assert_eq!(other.join().unwrap(), Ok(()));
        assert!(counter.join().unwrap());
    });
}

/// What a counter wrote before counting down is visible to the waiter it released.
#[test]
fn count_down_happens_before_wait_returns() {
    loom::model(|| {
        let latch = Arc::new(FixedLatch::<1>::new(1));
        let data = Arc::new(loom::cell::UnsafeCell::new(0));
        let writer = {
            let (latch, data) = (latch.clone(), data.clone());
            thread::spawn(move || {
                data.with_mut(|value| {
                    // SAFETY: only this thread writes, before the count-down that the
                    // reader waits for.
                    unsafe { *value = 42 }
                });
                latch.count_down();
            })
        };
        block_on(latch.wait()).unwrap();
        // SAFETY: the wait returned, so the write happened-before this read.
        assert_eq!(data.with(|value| unsafe { *value }), 42);
        writer.join().unwrap();
    });
}

/// A wait that parks and is dropped races another waiter for the one slot and the opening
/// count-down. The second waiter, retrying while the slot is taken, always ends `Ok`; the
/// slot is free at the end (a released slot is never left claimed, and a new claimant is
/// never left unwoken by the previous owner's release).
#[test]
fn a_released_slot_races_a_new_claimant_and_the_opening() {
    loom::model(|| {
        let latch = Arc::new(FixedLatch::<1>::new(1));
        let leaver = {
            let latch = latch.clone();
            thread::spawn(move || {
                let mut wait = Box::pin(latch.wait());
                let waker = std::task::Waker::noop();
                let _ = wait
                    .as_mut()
                    .poll_unpin(&mut std::task::Context::from_waker(waker));
                drop(wait);
            })
        };
        let waiter = {
            let latch = latch.clone();
            thread::spawn(move || loop {
                match block_on(latch.wait()) {
                    Ok(()) => break,
                    Err(NoWaiterSlot { slots: 1 }) => thread::yield_now(),
                    Err(other) => panic!("{other:?}"),
                }
            })
        };
        latch.count_down();
        leaver.join().unwrap();
        waiter.join().unwrap();
        assert_eq!(latch.waiting(), 0);
    });
}

/// A failure races the last count-down and a waiter: exactly one of them ends the latch,
/// the waiter sees that one (with the stored error), and the loser is refused.
#[test]
fn fail_races_count_down_and_a_waiter() {
    loom::model(|| {
        let latch = Arc::new(FixedFailableLatch::<u32, 1>::new(1));
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        let failer = {
            let latch = latch.clone();
            thread::spawn(move || latch.fail(7))
        };
        let outcome = block_on(latch.wait());
        let counted = counter.join().unwrap();
        let failed = failer.join().unwrap();
        match outcome {
            Ok(()) => {
                assert!(counted);
                assert_eq!(failed, Err(7));
            }
            Err(FixedWaitError::Failed(error)) => {
                assert_eq!(*error, 7);
                assert!(!counted);
                assert_eq!(failed, Ok(()));
            }
            Err(other) => panic!("{other:?}"),
        }
    });
}

/// A timed wait whose deadline fires while another thread makes the last report: it ends
/// `Ok`, or times out naming exactly that counter (never nobody), and holds no slot after.
#[test]
fn a_deadline_races_the_last_report() {
    loom::model(|| {
        let latch = Arc::new(FixedTrackingLatch::<2, (), 1>::new(["a", "b"]));
        latch.count_down_for("a").unwrap();
        let reporter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down_for("b").unwrap())
        };
        // The deadline is ready at its first poll: the latch is polled, then checked once
        // more after the deadline.
        match block_on(latch.wait_until(async {})) {
            Ok(()) => assert!(latch.is_open()),
            Err(FixedTimedWaitError::TimedOut(pending)) => {
                assert!(pending.names().eq(["b"]));
            }
            Err(other) => panic!("{other:?}"),
        }
        assert_eq!(latch.waiting(), 0);
        assert!(reporter.join().unwrap());
    });
}

/// A parked timed wait woken by the opening, racing a deadline set by another thread: the
/// wait always ends, with `Ok` once the latch is open.
#[test]
fn a_parked_timed_wait_races_opening_and_deadline() {
    loom::model(|| {
        let latch = Arc::new(FixedFailableLatch::<(), 1>::new(1));
        let deadline = Arc::new(FixedLatch::<1>::new(1));
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        let timer = {
            let deadline = deadline.clone();
            thread::spawn(move || deadline.count_down())
        };
        let result = block_on(latch.wait_until(deadline.wait()));
        assert!(counter.join().unwrap());
        timer.join().unwrap();
        match result {
            Ok(()) => {}
            Err(FixedTimedWaitError::TimedOut(timed_out)) => assert_eq!(timed_out.remaining, 1),
            Err(other) => panic!("{other:?}"),
        }
        assert_eq!(latch.waiting(), 0);
    });
}

trait PollUnpin: std::future::Future + Unpin {
    fn poll_unpin(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(self).poll(cx)
    }
}

impl<F: std::future::Future + Unpin> PollUnpin for F {}
