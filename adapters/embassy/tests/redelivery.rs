//! `Redeliveries` and `RedeliveryExt` on the host: embassy-time's std driver supplies the
//! clock, critical-section's std implementation the table's lock.

use core::future::Future;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use embassy_executor::{Executor, Spawner};
use embassy_time::{with_timeout, Duration, Instant, Timer};
use futures_lite::future::{self, block_on};
use tally_embassy::{Redeliveries, RedeliveryExt};
use tally_queue::{AbandonPolicy, Backoff, Queue, TryGetError};

const SHORT: Duration = Duration::from_millis(20);
const LONG: Duration = Duration::from_secs(3600);
/// A test that should finish in milliseconds fails after this instead of hanging.
const LIMIT: Duration = Duration::from_secs(10);

fn fixed(delay: Duration) -> Backoff {
    Backoff::fixed(core::time::Duration::from_micros(delay.as_micros()))
}

/// Runs `body` while `table` is served, failing after `LIMIT`.
fn served<const N: usize, F: Future>(table: &Redeliveries<N>, body: F) -> F::Output {
    let runner = async { table.run().await };
    block_on(with_timeout(LIMIT, future::or(runner, body))).expect("timed out")
}

#[test]
fn a_redelivery_waits_its_delay_counted_buffered_then_comes_at_attempt_plus_one() {
    static TABLE: Redeliveries<4> = Redeliveries::new();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(fixed(SHORT), &TABLE);
    let id = queue.try_put("flaky").unwrap();
    let start = Instant::now();
    drop(queue.try_get().unwrap());
    assert_eq!(TABLE.len(), 1);
    let ledger = queue.ledger();
    assert_eq!((ledger.buffered, ledger.in_flight), (1, 0));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    let again = served(&TABLE, queue.get()).unwrap();
    assert!(start.elapsed() >= SHORT);
    assert_eq!((again.id(), again.attempt()), (id, 2));
    assert!(TABLE.is_empty());
    again.succeed();
    queue.shutdown();
    assert!(served(&TABLE, queue.join()).is_balanced());
    assert_eq!(TABLE.released_at_once(), 0);
}

#[test]
fn the_last_attempt_abandoned_is_a_dead_letter_without_a_delay() {
    static TABLE: Redeliveries<4> = Redeliveries::new();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
        .with_redelivery_backoff(fixed(SHORT), &TABLE);
    queue.try_put(1).unwrap();
    drop(queue.try_get().unwrap());
    let last = served(&TABLE, queue.get()).unwrap();
    assert_eq!(last.attempt(), 2);
    drop(last);
    assert!(TABLE.is_empty());
    assert_eq!(queue.take_dead_letters().len(), 1);
}

#[test]
fn shutdown_now_hands_a_held_item_back_and_its_release_does_nothing() {
    static TABLE: Redeliveries<4> = Redeliveries::new();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(fixed(SHORT), &TABLE);
    let id = queue.try_put("held").unwrap();
    drop(queue.try_get().unwrap());
    assert_eq!(TABLE.len(), 1);
    assert_eq!(queue.shutdown_now(), [(id, "held")]);
    // The claim comes due and is released into a queue that took its item back.
    served(&TABLE, async {
        while !TABLE.is_empty() {
            Timer::after(Duration::from_millis(1)).await;
        }
    });
    assert_eq!(queue.len(), 0);
    let ledger = queue.ledger();
    assert_eq!((ledger.buffered, ledger.discarded), (0, 1));
    assert!(queue.is_settled());
}

#[test]
fn a_full_table_releases_a_new_claim_at_once_and_counts_it() {
    static TABLE: Redeliveries<2> = Redeliveries::new();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(fixed(LONG), &TABLE);
    for item in ["a", "b", "c"] {
        queue.try_put(item).unwrap();
    }
    for _ in 0..3 {
        drop(queue.try_get().unwrap());
    }
    assert_eq!((TABLE.len(), TABLE.released_at_once()), (2, 1));
    let third = queue.try_get().unwrap();
    assert_eq!((*third, third.attempt()), ("c", 2));
    third.succeed();
    assert_eq!(queue.ledger().buffered, 2);
}

#[test]
fn dropping_the_table_releases_its_claims() {
    let (sender, claims) = mpsc::channel();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_delay(move |redelivery| sender.send(redelivery).unwrap());
    let id = queue.try_put(7).unwrap();
    drop(queue.try_get().unwrap());
    let table = Redeliveries::<4>::new();
    table.hold(claims.try_recv().unwrap(), Instant::now() + LONG);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    drop(table);
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 2));
    again.succeed();
}

#[test]
fn a_runner_dropped_mid_sleep_leaves_its_claims_held_for_the_next() {
    static TABLE: Redeliveries<4> = Redeliveries::new();
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
        .with_redelivery_backoff(fixed(Duration::from_millis(100)), &TABLE);
    queue.try_put(1).unwrap();
    drop(queue.try_get().unwrap());
    // Polled once, the runner goes to sleep on the claim's timer, and is dropped there.
    assert!(block_on(future::poll_once(TABLE.run())).is_none());
    assert_eq!((TABLE.len(), queue.ledger().buffered), (1, 1));
    assert_eq!(served(&TABLE, queue.get()).unwrap().attempt(), 2);
}

// Holds race the runner from another thread, for Miri and ThreadSanitizer. The runner's
// thread is polled every millisecond, so the wake-ups are the executor test's to check.
#[test]
fn claims_held_on_another_thread_than_the_runner_all_come_back() {
    static TABLE: Redeliveries<8> = Redeliveries::new();
    const JOBS: u32 = 40;
    let stop = AtomicBool::new(false);
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
        .with_redelivery_backoff(fixed(Duration::from_millis(1)), &TABLE);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let stopped = async {
                while !stop.load(Ordering::Acquire) {
                    Timer::after(Duration::from_millis(1)).await;
                }
            };
            served(&TABLE, stopped);
        });
        for job in 0..JOBS {
            queue.try_put(job).unwrap();
            drop(queue.try_get().unwrap());
            let again = block_on(with_timeout(LIMIT, queue.get())).expect("timed out");
            let again = again.unwrap();
            assert_eq!((*again, again.attempt()), (job, 2));
            again.succeed();
        }
        stop.store(true, Ordering::Release);
    });
    assert_eq!(queue.ledger().succeeded, u64::from(JOBS));
    assert_eq!((TABLE.len(), TABLE.released_at_once()), (0, 0));
}

// The executor polls a task only when it is woken, so these tests see a runner that a
// claim failed to wake (`block_on` with `or` polls the runner whenever the body wakes).
static REDELIVERIES: Redeliveries<4> = Redeliveries::new();
/// How many claims the schedule below has held: the first waits an hour.
static HELD: AtomicUsize = AtomicUsize::new(0);
static DONE: AtomicBool = AtomicBool::new(false);

#[embassy_executor::task]
async fn redeliver() -> ! {
    REDELIVERIES.run().await
}

#[embassy_executor::task]
async fn worker(queue: &'static Queue<u32>) {
    // The runner goes to sleep with nothing held: the first claim must wake it.
    Timer::after(Duration::from_millis(5)).await;
    drop(queue.try_get().unwrap());
    // Now it sleeps until the first claim's hour is up: each claim due sooner must wake it.
    Timer::after(Duration::from_millis(5)).await;
    let mut done = 0;
    while done < 3 {
        let delivery = with_timeout(Duration::from_secs(2), queue.get())
            .await
            .expect("a claim due sooner did not wake the runner")
            .unwrap();
        if delivery.attempt() == 1 {
            drop(delivery);
        } else {
            delivery.succeed();
            done += 1;
        }
    }
    DONE.store(true, Ordering::Release);
}

#[test]
fn claims_due_sooner_wake_the_runner_on_the_embassy_std_executor() {
    let queue = Queue::unbounded()
        .with_abandon_policy(AbandonPolicy::redeliver(2).unwrap())
        .with_redelivery_delay(|redelivery| {
            let delay = match HELD.fetch_add(1, Ordering::Relaxed) {
                0 => LONG,
                _ => Duration::from_millis(5),
            };
            REDELIVERIES.hold(redelivery, Instant::now() + delay);
        });
    let late = queue.try_put(0).unwrap();
    for job in 1..=3 {
        queue.try_put(job).unwrap();
    }
    let queue: &'static Queue<u32> = Box::leak(Box::new(queue));
    let executor: &'static mut Executor = Box::leak(Box::new(Executor::new()));
    let start = Instant::now();
    executor.run_until(
        |spawner: Spawner| {
            spawner.spawn(redeliver().unwrap());
            spawner.spawn(worker(queue).unwrap());
        },
        || DONE.load(Ordering::Acquire),
    );
    assert!(start.elapsed() < LONG);
    let ledger = queue.ledger();
    assert_eq!((ledger.succeeded, ledger.buffered), (3, 1));
    assert_eq!(REDELIVERIES.len(), 1);
    assert_eq!(queue.shutdown_now(), [(late, 0)]);
}
