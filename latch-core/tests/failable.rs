//! `FailableLatch`: the first failure releases every waiter; later ones are refused.

mod common;

use std::sync::{Arc, Barrier};
use std::task::Poll;
use std::thread;
use std::time::Duration;

use common::{poll_once, scaled, sleep};
use futures_lite::future::block_on;
use tally_latch::{FailableLatch, TimedOut};

/// Seed: "make one shard raise; every waiter receives the error within one loop iteration."
#[test]
fn seed_failing_shard_reaches_every_waiter() {
    let latch = FailableLatch::new(3);
    let mut waiters: Vec<_> = (0..4).map(|_| latch.wait()).collect();
    latch.count_down();
    for waiter in &mut waiters {
        assert_eq!(poll_once(waiter), Poll::Pending);
    }
    latch.fail("shard 2 failed: connection reset").unwrap();
    for waiter in &mut waiters {
        assert_eq!(
            poll_once(waiter),
            Poll::Ready(Err("shard 2 failed: connection reset"))
        );
    }
}

#[test]
fn failure_reaches_blocked_threads() {
    let latch = Arc::new(FailableLatch::new(2));
    let waiters: Vec<_> = (0..4)
        .map(|i| {
            let latch = latch.clone();
            thread::spawn(move || {
                if i % 2 == 0 {
                    latch.wait_blocking()
                } else {
                    block_on(latch.wait())
                }
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(10));
    latch.fail(String::from("boom")).unwrap();
    // Each waiter owns its clone of the error.
    for waiter in waiters {
        assert_eq!(waiter.join().unwrap(), Err(String::from("boom")));
    }
}

#[test]
fn first_failure_wins_and_later_ones_come_back() {
    let latch = FailableLatch::new(1);
    assert_eq!(latch.fail(1), Ok(()));
    assert_eq!(latch.fail(2), Err(2));
    assert_eq!(latch.error(), Some(&1));
    assert!(!latch.count_down());
    assert_eq!(latch.count(), 1);
    assert!(!latch.is_open());
}

#[test]
fn failure_after_opening_is_refused() {
    let latch = FailableLatch::new(1);
    latch.count_down();
    assert_eq!(latch.fail("late"), Err("late"));
    assert_eq!(block_on(latch.wait()), Ok(()));
    assert_eq!(latch.error(), None);
}

#[test]
fn zero_latch_cannot_fail() {
    let latch = FailableLatch::new(0);
    assert_eq!(latch.fail(()), Err(()));
    assert!(latch.is_open());
}

/// Failures and count-downs race from many threads: the latch ends exactly one way, every
/// refused error comes back to its caller, and every waiter sees the same ending.
#[test]
fn racing_failures_and_count_downs_end_exactly_once() {
    for round in 0..scaled(200, 4) {
        let latch = Arc::new(FailableLatch::new(2));
        let start = Arc::new(Barrier::new(4));
        let failers: Vec<_> = (0..2)
            .map(|i| {
                let (latch, start) = (latch.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    latch.fail(round * 10 + i)
                })
            })
            .collect();
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let (latch, start) = (latch.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    latch.count_down()
                })
            })
            .collect();
        let fails: Vec<_> = failers.into_iter().map(|t| t.join().unwrap()).collect();
        let counted = counters
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&c| c)
            .count();
        let accepted: Vec<_> = fails.iter().filter(|r| r.is_ok()).collect();
        let wait = block_on(latch.wait());
        match wait {
            Ok(()) => {
                assert_eq!(counted, 2);
                assert!(accepted.is_empty());
                assert!(latch.is_open());
            }
            Err(error) => {
                assert_eq!(accepted.len(), 1, "exactly one failure is accepted");
                let refused: Vec<_> = fails.iter().filter_map(|r| r.err()).collect();
                assert_eq!(refused.len(), 1);
                assert_ne!(refused[0], error, "the refused error is the other one");
                assert_eq!(latch.count(), 2 - counted);
            }
        }
    }
}

/// A failure that comes before the deadline wins over the timeout.
#[test]
fn failure_wins_over_a_later_deadline() {
    let latch = Arc::new(FailableLatch::new(1));
    let failer = {
        let latch = latch.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            latch.fail("down").unwrap();
        })
    };
    let result = block_on(latch.wait_until(sleep(Duration::from_secs(60))));
    assert_eq!(result, Ok(Err("down")));
    failer.join().unwrap();
}

#[test]
fn timed_out_wait_changes_nothing() {
    let latch = FailableLatch::<()>::new(2);
    assert_eq!(
        block_on(latch.wait_until(sleep(Duration::from_millis(5)))),
        Err(TimedOut)
    );
    assert_eq!(
        latch.wait_blocking_timeout(Duration::from_millis(5)),
        Err(TimedOut)
    );
    assert_eq!(latch.count(), 2);
    assert_eq!(latch.error(), None);
}

#[test]
fn errors_format_without_debug_bounds() {
    struct Opaque;
    let latch = FailableLatch::new(1);
    let _ = latch.fail(Opaque);
    assert_eq!(
        format!("{latch:?}"),
        "FailableLatch { count: 1, status: \"failed\" }"
    );
    // Waiting needs `Clone` (each waiter gets its own error), not `Debug` or `Display`.
    #[derive(Clone)]
    struct Silent;
    let timeout = block_on(FailableLatch::<Silent>::new(1).wait_until(async {}));
    assert_eq!(timeout.err(), Some(TimedOut));
}

/// The error a waiter gets is owned and `'static`: `?` carries it into a boxed error (or
/// `anyhow::Error`) from a latch the function only borrows.
#[test]
fn failure_propagates_with_question_mark() {
    #[derive(Clone, Debug)]
    struct Refused;
    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("connection refused")
        }
    }
    impl std::error::Error for Refused {}

    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    async fn started(latch: &FailableLatch<Refused>) -> Result<(), BoxError> {
        latch.wait().await?;
        Ok(())
    }
    async fn started_in_time(latch: &FailableLatch<Refused>) -> Result<(), BoxError> {
        latch.wait_until(async {}).await??;
        Ok(())
    }
    let latch = FailableLatch::new(1);
    latch.fail(Refused).unwrap();
    let error = block_on(started(&latch)).unwrap_err();
    assert_eq!(error.to_string(), "connection refused");
    let error = block_on(started_in_time(&latch)).unwrap_err();
    assert_eq!(error.to_string(), "connection refused");
    let timed_out = block_on(started_in_time(&FailableLatch::new(1))).unwrap_err();
    assert_eq!(
        timed_out.to_string(),
        "timed out waiting for the latch to open"
    );
}
