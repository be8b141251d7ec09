//! `CountDownLatch`: the seed's checks, the JSR166 `CountDownLatchTest` ports, cancellation
//! and cross-thread use.

mod common;

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::task::Poll;
use std::thread;
use std::time::{Duration, Instant};

use common::{poll_once, scaled, sleep};
use futures_lite::future::block_on;
use tally_latch::{CountDownLatch, Latch, TimedOut, MAX_COUNT};

#[test]
fn starts_open_at_zero() {
    let latch = CountDownLatch::new(0);
    assert!(latch.is_open());
    assert!(!latch.count_down());
    assert_eq!(poll_once(&mut latch.wait()), Poll::Ready(()));
}

#[test]
fn lives_in_a_static() {
    static LATCH: CountDownLatch = CountDownLatch::new(2);
    let counters: Vec<_> = (0..2)
        .map(|_| thread::spawn(|| LATCH.count_down()))
        .collect();
    LATCH.wait_blocking();
    let counted: Vec<bool> = counters.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(counted, [true, true]);
}

/// Seed: "with count 3, two count_down() calls leave waiters blocked and the third releases
/// all of them at once."
#[test]
fn seed_third_count_down_releases_all_waiters() {
    let latch = CountDownLatch::new(3);
    let mut waiters: Vec<_> = (0..4).map(|_| latch.wait()).collect();
    for _ in 0..2 {
        assert!(latch.count_down());
        for waiter in &mut waiters {
            assert_eq!(poll_once(waiter), Poll::Pending);
        }
    }
    assert!(latch.count_down());
    for waiter in &mut waiters {
        assert_eq!(poll_once(waiter), Poll::Ready(()));
    }
}

/// Seed: three shards finishing at 10, 20 and 30 ms release four waiters together, at the
/// moment the last shard counts down. Order and togetherness are asserted; the only
/// wall-clock margin is a generous one on how long after the last count-down they woke.
#[test]
fn seed_three_shards_release_four_waiters_together() {
    let latch = Arc::new(CountDownLatch::new(3));
    let released = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let (latch, released) = (latch.clone(), released.clone());
            thread::spawn(move || {
                block_on(latch.wait());
                released.fetch_add(1, Ordering::SeqCst);
                Instant::now()
            })
        })
        .collect();
    let shards: Vec<_> = [10, 20, 30]
        .into_iter()
        .map(|ms| {
            let (latch, released) = (latch.clone(), released.clone());
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(ms));
                let before = released.load(Ordering::SeqCst);
                let at = Instant::now();
                latch.count_down();
                (ms, before, at)
            })
        })
        .collect();
    let mut shard_results: Vec<_> = shards.into_iter().map(|s| s.join().unwrap()).collect();
    shard_results.sort_by_key(|&(_, _, at)| at);
    let last = shard_results[2].2;
    // No waiter had been released before any count-down, including the last one.
    for &(ms, before, _) in &shard_results {
        assert_eq!(before, 0, "a waiter left before shard {ms} ms counted down");
    }
    assert!(last.duration_since(start) >= Duration::from_millis(30));
    for waiter in waiters {
        let woke = waiter.join().unwrap();
        assert!(woke >= last, "a waiter woke before the last count-down");
        assert!(
            woke.duration_since(last) < Duration::from_secs(5),
            "waiters were not released with the last count-down"
        );
    }
    assert_eq!(released.load(Ordering::SeqCst), 4);
}

/// Seed: "Extra calls after zero are ignored rather than going negative."
#[test]
fn seed_extra_count_downs_are_harmless() {
    let latch = CountDownLatch::new(2);
    assert!(latch.count_down());
    assert!(latch.count_down());
    for _ in 0..10 {
        assert!(!latch.count_down());
    }
    assert_eq!(latch.count(), 0);
    assert!(latch.is_open());
}

/// Seed pitfall: counting down from another thread. No `call_soon_threadsafe` is needed.
#[test]
fn seed_count_down_from_other_threads() {
    let n = scaled(64, 4);
    let latch = Arc::new(CountDownLatch::new(n));
    let counted = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let (latch, counted) = (latch.clone(), counted.clone());
            thread::spawn(move || {
                counted.fetch_add(1, Ordering::Relaxed);
                latch.count_down()
            })
        })
        .collect();
    block_on(latch.wait());
    // Everything the counters did before counting down is visible to the released waiter.
    assert_eq!(counted.load(Ordering::Relaxed), n);
    assert!(threads.into_iter().all(|t| t.join().unwrap()));
}

/// Many threads race to count down past zero: exactly `n` calls count, the count never
/// wraps.
#[test]
fn racing_count_downs_count_exactly_n() {
    let n = scaled(1000, 20);
    let latch = Arc::new(CountDownLatch::new(n));
    let threads = 4;
    let start = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let (latch, start) = (latch.clone(), start.clone());
            thread::spawn(move || {
                start.wait();
                (0..n).filter(|_| latch.count_down()).count()
            })
        })
        .collect();
    let counted: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(counted, n);
    assert_eq!(latch.count(), 0);
}

#[test]
fn huge_count_is_refused_not_wrapped() {
    assert_eq!(
        CountDownLatch::try_new(MAX_COUNT).unwrap().count(),
        MAX_COUNT
    );
    let error = CountDownLatch::try_new(MAX_COUNT + 1).unwrap_err();
    assert_eq!(error.count(), MAX_COUNT + 1);
    assert!(error.to_string().contains("exceeds the maximum"));
    assert!(CountDownLatch::try_new(usize::MAX).is_err());
    let latch = CountDownLatch::new(MAX_COUNT);
    assert!(latch.count_down());
    assert_eq!(latch.count(), MAX_COUNT - 1);
}

#[test]
#[should_panic(expected = "latch count exceeds")]
fn new_panics_on_huge_count() {
    let _ = CountDownLatch::new(usize::MAX);
}

// ---- JSR166 CountDownLatchTest (OpenJDK), ported ----

/// JSR166 1 (`testConstructor`): a negative count is refused. Ours takes `usize`, so a
/// negative count cannot be written; the only invalid input left is a count above
/// `MAX_COUNT`, refused by `try_new`.
#[test]
fn jsr166_constructor() {
    assert!(CountDownLatch::try_new(MAX_COUNT + 1).is_err());
}

/// JSR166 2 (`testGetCount`).
#[test]
fn jsr166_get_count() {
    let latch = CountDownLatch::new(2);
    assert_eq!(latch.count(), 2);
    latch.count_down();
    assert_eq!(latch.count(), 1);
}

/// JSR166 3 (`testCountDown`).
#[test]
fn jsr166_count_down() {
    let latch = CountDownLatch::new(1);
    assert_eq!(latch.count(), 1);
    latch.count_down();
    assert_eq!(latch.count(), 0);
    latch.count_down();
    assert_eq!(latch.count(), 0);
}

/// JSR166 4 (`testAwait`): a waiter on a latch of 2 stays blocked after one count-down and
/// wakes after the second, seeing count 0.
#[test]
fn jsr166_await() {
    let latch = Arc::new(CountDownLatch::new(2));
    let (entered, woke) = (
        Arc::new(CountDownLatch::new(1)),
        Arc::new(AtomicUsize::new(0)),
    );
    let waiter = {
        let (latch, entered, woke) = (latch.clone(), entered.clone(), woke.clone());
        thread::spawn(move || {
            entered.count_down();
            latch.wait_blocking();
            woke.store(1, Ordering::SeqCst);
            latch.count()
        })
    };
    entered.wait_blocking();
    latch.count_down();
    // The waiter cannot have woken: the latch is still at 1.
    assert_eq!(latch.count(), 1);
    assert_eq!(woke.load(Ordering::SeqCst), 0);
    latch.count_down();
    assert_eq!(waiter.join().unwrap(), 0);
}

/// JSR166 5 (`testTimedAwait`): the same with a long timeout reports success.
#[test]
fn jsr166_timed_await() {
    let latch = Arc::new(CountDownLatch::new(2));
    let waiter = {
        let latch = latch.clone();
        thread::spawn(move || {
            let blocking = latch.wait_blocking_timeout(Duration::from_secs(60));
            let asynchronous = block_on(latch.wait_until(sleep(Duration::from_secs(60))));
            (blocking, asynchronous, latch.count())
        })
    };
    latch.count_down();
    latch.count_down();
    assert_eq!(waiter.join().unwrap(), (Ok(()), Ok(()), 0));
}

/// JSR166 6-7 (`testAwait_Interruptible`, `testTimedAwait_Interruptible`): interruption is
/// dropping the wait future. The count is unchanged and other waiters are unaffected.
#[test]
fn jsr166_interrupted_wait_changes_nothing() {
    let latch = CountDownLatch::new(1);
    let mut survivor = latch.wait();
    assert_eq!(poll_once(&mut survivor), Poll::Pending);
    {
        let mut interrupted = latch.wait();
        assert_eq!(poll_once(&mut interrupted), Poll::Pending);
        let mut timed = latch.wait_until(std::future::pending::<()>());
        assert!(poll_once(&mut Box::pin(&mut timed)).is_pending());
    }
    assert_eq!(latch.count(), 1);
    latch.count_down();
    assert_eq!(poll_once(&mut survivor), Poll::Ready(()));
}

/// JSR166 8 (`testAwaitTimeout`): a short timeout reports a timeout, took at least the
/// timeout, and leaves the count at 1.
#[test]
fn jsr166_await_timeout() {
    let latch = CountDownLatch::new(1);
    let timeout = Duration::from_millis(20);

    let start = Instant::now();
    assert_eq!(latch.wait_blocking_timeout(timeout), Err(TimedOut));
    assert!(start.elapsed() >= timeout);

    let start = Instant::now();
    assert_eq!(block_on(latch.wait_until(sleep(timeout))), Err(TimedOut));
    assert!(start.elapsed() >= timeout);

    assert_eq!(latch.count(), 1);
}

/// JSR166 9 (`testToString`): the debug form shows the count.
#[test]
fn jsr166_to_string() {
    let latch = CountDownLatch::new(2);
    assert_eq!(
        format!("{latch:?}"),
        "CountDownLatch { count: 2, open: false }"
    );
    latch.count_down();
    latch.count_down();
    assert_eq!(
        format!("{latch:?}"),
        "CountDownLatch { count: 0, open: true }"
    );
    assert_eq!(format!("{:?}", latch.wait()), "Wait { .. }");
}

// ---- cancellation ----

/// A wait future dropped after every possible number of polls, at every point of the
/// count-down, leaves the count and the other waiters untouched.
#[test]
fn dropping_a_wait_after_any_number_of_polls_changes_nothing() {
    for polls in 0..4 {
        for count_downs_before_drop in 0..3 {
            let latch = CountDownLatch::new(3);
            let mut other = latch.wait();
            assert!(poll_once(&mut other).is_pending());
            let mut doomed = latch.wait();
            for i in 0..polls {
                if i == 1 {
                    latch.count_down();
                }
                let _ = poll_once(&mut doomed);
            }
            let counted_while_polling = usize::from(polls > 1);
            for _ in 0..count_downs_before_drop {
                latch.count_down();
            }
            drop(doomed);
            let expected = 3usize.saturating_sub(counted_while_polling + count_downs_before_drop);
            assert_eq!(latch.count(), expected);
            while latch.count_down() {}
            assert_eq!(poll_once(&mut other), Poll::Ready(()));
        }
    }
}

/// A wait that was notified and then dropped does not swallow the wake-up of another.
#[test]
fn notified_then_dropped_waiter_loses_no_wake_up() {
    let latch = Arc::new(CountDownLatch::new(1));
    let mut dropped = latch.wait();
    assert!(poll_once(&mut dropped).is_pending());
    let blocked = {
        let latch = latch.clone();
        thread::spawn(move || latch.wait_blocking())
    };
    latch.count_down();
    drop(dropped);
    blocked.join().unwrap();
}

// ---- blocking and async pairs, generic use ----

#[test]
fn blocking_and_async_waits_agree() {
    let latch = Arc::new(CountDownLatch::new(1));
    let blocking = {
        let latch = latch.clone();
        thread::spawn(move || latch.wait_blocking())
    };
    let asynchronous = {
        let latch = latch.clone();
        thread::spawn(move || block_on(latch.wait()))
    };
    latch.count_down();
    blocking.join().unwrap();
    asynchronous.join().unwrap();
}

#[test]
fn generic_code_waits_through_the_latch_trait() {
    async fn wait_any<L: Latch>(latch: &L) -> L::Output {
        Latch::wait(latch).await
    }
    /// Generic code tells a timeout from how the latch ended by the outer `Result`.
    async fn timed_out<L: Latch>(latch: &L) -> bool {
        Latch::wait_until(latch, async {}).await.is_err()
    }
    let latch = CountDownLatch::new(1);
    assert!(block_on(timed_out(&latch)));
    latch.count_down();
    block_on(wait_any(&latch));
    assert!(!block_on(timed_out(&latch)));
}

/// Plain writes a counter made before counting down are visible to the waiter it released.
/// Nothing but the latch orders the slots, so Miri and ThreadSanitizer report a data race
/// if the latch's orderings were too weak.
#[test]
fn happens_before_from_counters_to_waiters() {
    struct Slots([UnsafeCell<usize>; 2]);
    // SAFETY: slot `i` is written only by writer `i`, before its count-down, and read only
    // after the wait that those count-downs release.
    unsafe impl Sync for Slots {}

    let rounds = scaled(200, 5);
    for _ in 0..rounds {
        let latch = Arc::new(CountDownLatch::new(2));
        let slots = Arc::new(Slots([UnsafeCell::new(0), UnsafeCell::new(0)]));
        let writers: Vec<_> = (0..2)
            .map(|i| {
                let (latch, slots) = (latch.clone(), slots.clone());
                thread::spawn(move || {
                    // SAFETY: see `Slots`.
                    unsafe { *slots.0[i].get() = i + 1 };
                    latch.count_down();
                })
            })
            .collect();
        latch.wait_blocking();
        // SAFETY: see `Slots`.
        let seen = unsafe { [*slots.0[0].get(), *slots.0[1].get()] };
        assert_eq!(seen, [1, 2]);
        writers.into_iter().for_each(|w| w.join().unwrap());
    }
}
