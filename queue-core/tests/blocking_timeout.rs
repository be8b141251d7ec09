//! Timed blocking forms: `put_blocking_timeout`, `get_blocking_timeout` and
//! `join_blocking_timeout` give up after a `Duration`, check once more after it, and hand
//! a refused item back.

mod common;

use std::time::{Duration, Instant};

use common::within;
use tally_queue::{GetTimeoutError, PutTimeoutError, Queue};

const SHORT: Duration = Duration::from_millis(30);

#[test]
fn a_timed_out_put_hands_its_item_back_and_accepts_nothing() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let started = Instant::now();
    let refused = queue.put_blocking_timeout(2, SHORT);
    assert!(started.elapsed() >= SHORT);
    assert!(matches!(refused, Err(PutTimeoutError::TimedOut(2))));
    assert_eq!(queue.ledger().accepted, 1);
    // The timed-out put left no waiter behind: a slot freed now goes to the next put.
    queue.try_get().unwrap().succeed();
    assert!(queue.put_blocking_timeout(3, SHORT).is_ok());
}

#[test]
fn a_timed_get_is_served_by_a_put_from_another_thread() {
    let job = within(5, || {
        let queue = std::sync::Arc::new(Queue::unbounded());
        let putter = {
            let queue = std::sync::Arc::clone(&queue);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                queue.try_put("late").unwrap();
            })
        };
        let job = queue
            .get_blocking_timeout(Duration::from_secs(3))
            .map(|job| job.succeed());
        putter.join().unwrap();
        job
    });
    assert_eq!(job, Ok("late"));
}

#[test]
fn a_timed_get_on_a_shut_down_queue_says_so() {
    let queue = Queue::<u8>::unbounded();
    queue.shutdown();
    assert_eq!(
        queue.get_blocking_timeout(SHORT).unwrap_err(),
        GetTimeoutError::ShutDown
    );
}

#[test]
fn a_timed_join_reports_the_ledger_at_the_timeout() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let held = queue.try_get().unwrap();
    let late = queue.join_blocking_timeout(SHORT).unwrap_err();
    assert_eq!(late.ledger().in_flight, 1);
    held.reject();
    assert_eq!(queue.join_blocking_timeout(SHORT).unwrap().rejected, 1);
}

#[test]
fn a_zero_timeout_still_tries_once() {
    let queue = Queue::unbounded();
    queue.try_put(9).unwrap();
    let job = queue.get_blocking_timeout(Duration::ZERO).unwrap();
    assert_eq!(job.succeed(), 9);
    assert!(queue.join_blocking_timeout(Duration::ZERO).is_ok());
    assert!(queue.put_blocking_timeout(10, Duration::ZERO).is_ok());
}

#[test]
fn an_unrepresentable_timeout_waits_without_one() {
    let queue = Queue::unbounded();
    queue.try_put(4).unwrap();
    let job = queue.get_blocking_timeout(Duration::MAX).unwrap();
    assert_eq!(job.succeed(), 4);
}
