//! `AbandonPolicy`: abandoned deliveries redelivered under their id, then dead-lettered;
//! and `Abandon`, today's behaviour, unchanged.

mod common;

#[cfg(feature = "std")]
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::thread;
#[cfg(feature = "std")]
use std::time::Duration;

use tally_queue::{AbandonPolicy, DeadReason, GetError, JobId, Queue, TryGetError, ZeroAttempts};

use common::{assert_pending, expect_ready, poll_once, Task};
#[cfg(feature = "std")]
use common::{panicking_worker, within};

fn redelivering<T>(max_attempts: u32) -> Queue<T> {
    Queue::unbounded().with_abandon_policy(AbandonPolicy::redeliver(max_attempts).unwrap())
}

/// The seed's scenario: a poison item that panics its consumer every time is redelivered
/// up to the limit, then dead-lettered with its item, id, attempts and reason; the other
/// items succeed; nothing is lost and nothing counts twice.
#[test]
#[cfg(feature = "std")]
fn a_poison_item_is_redelivered_up_to_the_limit_then_dead_lettered() {
    let queue = Arc::new(redelivering::<u32>(3));
    let ids: Vec<JobId> = (0..5).map(|n| queue.try_put(n).unwrap()).collect();
    queue.shutdown();
    let seen = within(10, {
        let queue = Arc::clone(&queue);
        move || panicking_worker(&queue, 2)
    });
    let poison: Vec<u32> = seen
        .iter()
        .filter(|(id, _)| *id == ids[2])
        .map(|(_, attempt)| *attempt)
        .collect();
    assert_eq!(poison, [1, 2, 3]);
    assert_eq!(seen.len(), 4 + 3);
    let dead = queue.take_dead_letters();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].id, dead[0].attempts, dead[0].item), (ids[2], 3, 2));
    assert_eq!(dead[0].reason, DeadReason::Exhausted { panicking: true });
    let ledger = queue.ledger();
    assert_eq!(ledger.accepted, 5);
    assert_eq!((ledger.succeeded, ledger.abandoned), (4, 1));
    assert!(ledger.is_balanced());
    assert_eq!(queue.redeliveries(), 2);
}

/// Under `Abandon` (the default) a panicking consumer is counted abandoned and its item
/// dropped, as before: no redelivery, no dead letter.
#[test]
fn a_panicking_consumer_under_abandon_stays_as_today() {
    struct Tracked(Arc<AtomicUsize>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let queue = Queue::unbounded();
    assert_eq!(queue.abandon_policy(), AbandonPolicy::Abandon);
    queue.try_put(Tracked(drops.clone())).unwrap();
    thread::scope(|s| {
        let job = queue.try_get().unwrap();
        assert_eq!(job.attempt(), 1);
        let handler = s.spawn(move || {
            let _job = job;
            panic!("consumer fails");
        });
        assert!(handler.join().is_err());
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(matches!(queue.try_get(), Err(TryGetError::Empty)));
    assert!(queue.take_dead_letters().is_empty());
    assert_eq!(queue.redeliveries(), 0);
    let ledger = queue.ledger();
    assert_eq!((ledger.abandoned, ledger.in_flight), (1, 0));
    assert!(ledger.is_balanced());
}

/// Bad input: `max_attempts = 0` is refused at construction with a clear error.
#[test]
fn zero_attempts_is_a_construction_error() {
    assert_eq!(AbandonPolicy::redeliver(0), Err(ZeroAttempts));
    assert_eq!(ZeroAttempts.to_string(), "max_attempts must be at least 1");
}

/// After a graceful shutdown a redelivered item is still delivered: a getter on the
/// shut-down, empty queue waits while a delivery is in flight, and gets the item when that
/// delivery is abandoned; once everything ended it gets `ShutDown`.
#[test]
fn after_a_graceful_shutdown_a_redelivered_item_is_still_delivered() {
    let queue = redelivering::<u8>(2);
    let id = queue.try_put(7).unwrap();
    let first = queue.try_get().unwrap();
    queue.shutdown();
    assert!(matches!(queue.try_get(), Err(TryGetError::Empty)));
    let mut get = Box::pin(queue.get());
    assert_pending(&mut get);
    drop(first);
    let again = expect_ready(&mut get).unwrap();
    assert_eq!((again.id(), again.attempt(), *again), (id, 2, 7));
    drop(get);
    let mut last = Box::pin(queue.get());
    assert_pending(&mut last);
    again.succeed();
    assert_eq!(expect_ready(&mut last).unwrap_err(), GetError::ShutDown);
    assert!(matches!(queue.try_get(), Err(TryGetError::ShutDown)));
    let ledger = queue.ledger();
    assert_eq!((ledger.succeeded, ledger.abandoned), (1, 0));
    assert!(ledger.is_balanced());
}

/// The same across threads with the blocking form: the waiting getter is woken by the
/// redelivery, and another by the final ending; neither hangs.
#[test]
#[cfg(feature = "std")]
fn blocked_getters_after_a_graceful_shutdown_wake_for_the_redelivery_and_the_end() {
    let queue = Arc::new(redelivering::<u8>(2));
    queue.try_put(1).unwrap();
    let held = queue.try_get_owned().unwrap();
    queue.shutdown();
    let getter = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            let job = queue.get_blocking().unwrap();
            let attempt = job.attempt();
            job.succeed();
            (attempt, queue.get_blocking().is_err())
        })
    };
    thread::sleep(std::time::Duration::from_millis(20));
    drop(held);
    assert_eq!(within(5, move || getter.join().unwrap()), (2, true));
}

/// After an immediate shutdown, a redelivered item still buffered is drained and
/// returned; a delivery abandoned after it is discarded into the dead letters. Getters see
/// `ShutDown` at once.
#[test]
fn after_an_immediate_shutdown_redeliveries_are_returned_as_discarded() {
    let queue = redelivering::<&str>(3);
    let a = queue.try_put("a").unwrap();
    let b = queue.try_put("b").unwrap();
    let c = queue.try_put("c").unwrap();
    drop(queue.try_get().unwrap()); // "a" redelivered, attempt 2
    let held = queue.try_get().unwrap(); // "a" again: returned items come first
    assert_eq!((held.id(), held.attempt()), (a, 2));
    drop(queue.try_get().unwrap()); // "b" redelivered, attempt 2
    let mut get = Box::pin(queue.get());
    assert_eq!(queue.len(), 2);
    let drained = queue.shutdown_now();
    assert_eq!(drained, vec![(c, "c"), (b, "b")]);
    assert_eq!(expect_ready(&mut get).unwrap_err(), GetError::ShutDown);
    drop(held);
    let dead = queue.take_dead_letters();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].id, dead[0].attempts, dead[0].item), (a, 2, "a"));
    assert_eq!(dead[0].reason, DeadReason::ShutDownNow);
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.discarded, ledger.abandoned, ledger.in_flight),
        (3, 0, 0)
    );
    assert!(ledger.is_balanced());
    assert!(queue.is_settled());
}

/// A redelivered item never counts twice: many workers abandoning at random, the ledger
/// balances with one entry per id, every id ends exactly once (succeeded or
/// dead-lettered), and the attempts seen per id are 1, 2, ... in order.
#[test]
#[cfg(feature = "std")]
fn redelivery_under_concurrency_counts_each_id_once() {
    let rounds = common::scaled(400, 40);
    let queue = Arc::new(redelivering::<usize>(3));
    let attempts = Arc::new(std::sync::Mutex::new(BTreeMap::<JobId, Vec<u32>>::new()));
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let queue = Arc::clone(&queue);
            let attempts = Arc::clone(&attempts);
            thread::spawn(move || {
                let mut n: usize = w;
                while let Ok(job) = queue.get_blocking() {
                    attempts
                        .lock()
                        .unwrap()
                        .entry(job.id())
                        .or_default()
                        .push(job.attempt());
                    n = n.wrapping_mul(31).wrapping_add(7);
                    if (*job + n) % 3 == 0 {
                        drop(job);
                    } else {
                        job.succeed();
                    }
                }
            })
        })
        .collect();
    for n in 0..rounds {
        queue.try_put(n).unwrap();
    }
    queue.shutdown();
    for worker in workers {
        within(20, move || worker.join().unwrap());
    }
    let ledger = queue.join_blocking();
    let dead = queue.take_dead_letters();
    assert_eq!(ledger.accepted, rounds as u64);
    assert!(ledger.is_balanced());
    assert_eq!(ledger.abandoned, dead.len() as u64);
    assert_eq!(ledger.succeeded + ledger.abandoned, rounds as u64);
    let attempts = attempts.lock().unwrap();
    assert_eq!(attempts.len(), rounds);
    let mut redeliveries = 0;
    for seen in attempts.values() {
        let expected: Vec<u32> = (1..=seen.len() as u32).collect();
        assert_eq!(*seen, expected);
        redeliveries += seen.len() as u64 - 1;
    }
    assert_eq!(queue.redeliveries(), redeliveries);
    for letter in &dead {
        assert_eq!(letter.attempts, 3);
        assert_eq!(attempts[&letter.id].len(), 3);
    }
}

/// How a delivered item comes back to the queue.
#[derive(Clone, Copy, Debug)]
enum Back {
    /// Dropped unresolved under `AbandonPolicy::Redeliver`.
    Redelivered,
    /// `Delivery::retry`.
    Retried,
}

/// Sends a delivery back the way `back` says.
fn send_back<T>(delivery: tally_queue::Delivery<'_, T>, back: Back) -> Result<(), String> {
    match back {
        Back::Redelivered => drop(delivery),
        Back::Retried => {
            delivery
                .retry()
                .map_err(|_| "the retry was refused".to_string())?;
        }
    }
    Ok(())
}

/// Every kind of queue, holding items sent back both ways.
fn each_kind_and_way_back() -> Vec<(String, Queue<u32>, Back)> {
    let policy = AbandonPolicy::redeliver(3).unwrap();
    let mut cases = Vec::new();
    for back in [Back::Redelivered, Back::Retried] {
        for (kind, queue) in common::every_kind(policy) {
            cases.push((format!("{kind}, {back:?}"), queue, back));
        }
    }
    cases
}

/// A get polled as an executor would poll it.
type Getter<'q> = Task<std::pin::Pin<Box<tally_queue::futures::Get<'q, u32>>>>;

/// Polls getter `i` if it is new or was woken, and keeps what it was served.
fn step<'q>(
    i: usize,
    tasks: &mut [Getter<'q>; 2],
    served: &mut [Option<tally_queue::Delivery<'q, u32>>; 2],
) -> Result<(), String> {
    if served[i].is_none() {
        if let Some(got) = tasks[i].run() {
            served[i] = Some(got.map_err(|e| format!("get {i} failed: {e:?}"))?);
        }
    }
    Ok(())
}

/// The hang, with the getters as tasks an executor polls only when woken: get 0 waits, a
/// put wakes it, and before it runs an item in flight comes back. That item's wake-up
/// would go to a getter that already has one coming, so it can be skipped; get 1, arriving
/// then, finds the buffered item owed to get 0 and waits. When get 0 has run, the item
/// that came back must still reach get 1 (and the caller's `join` must return).
fn a_returned_item_reaches_a_waiting_get(queue: &Queue<u32>, back: Back) -> Result<(), String> {
    let b = queue.try_put(0).unwrap();
    let held = queue.try_get().unwrap();
    let mut tasks = [
        Task::new(Box::pin(queue.get())),
        Task::new(Box::pin(queue.get())),
    ];
    let mut served = [None, None];
    step(0, &mut tasks, &mut served)?;
    let a = queue.try_put(1).unwrap();
    send_back(held, back)?;
    // Get 1 arrives before get 0 runs.
    step(1, &mut tasks, &mut served)?;
    // An executor's loop: poll whoever was woken, until nobody was.
    for _ in 0..8 {
        step(0, &mut tasks, &mut served)?;
        step(1, &mut tasks, &mut served)?;
    }
    if let Some(asleep) = served.iter().position(Option::is_none) {
        return Err(format!(
            "get {asleep} sleeps (woken {} times) while the queue holds {} item(s); ledger {}",
            tasks[asleep].wake_ups(),
            queue.len(),
            queue.ledger()
        ));
    }
    let mut ids: Vec<JobId> = served
        .into_iter()
        .flatten()
        .map(|job| {
            let id = job.id();
            job.succeed();
            id
        })
        .collect();
    ids.sort();
    let mut expected = vec![a, b];
    expected.sort();
    if ids != expected {
        return Err(format!("delivered {ids:?}, accepted {expected:?}"));
    }
    Ok(())
}

/// Issue 31, finding 1 (hang), on every kind of queue, both ways back: a returned item is
/// delivered to a get that is waiting.
#[test]
fn a_returned_item_is_delivered_to_a_waiting_get_on_every_kind_of_queue() {
    let mut failures = Vec::new();
    for (case, queue, back) in each_kind_and_way_back() {
        let result = a_returned_item_reaches_a_waiting_get(&queue, back);
        // Nothing else runs: the join is ready now or never.
        let joined = poll_once(&mut Box::pin(queue.join()));
        match (result, joined) {
            (Ok(()), Poll::Ready(_)) => {}
            (Err(why), _) => failures.push(format!("{case}: {why}")),
            (Ok(()), Poll::Pending) => {
                failures.push(format!("{case}: join not ready: {}", queue.ledger()))
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 31, finding 1 as the issue saw it: a `get_blocking` asleep on its thread while the
/// returned item's wake-up is skipped, and `join` timing out. Every kind, both ways back,
/// each case on its own thread, each wait with a time limit.
#[test]
#[cfg(feature = "std")]
fn a_returned_item_wakes_a_sleeping_get_blocking_and_join_returns() {
    fn case(queue: Arc<Queue<u32>>, back: Back) -> Result<(), String> {
        queue.try_put(0).unwrap();
        let held = queue.try_get().unwrap();
        let mut first = Task::new(Box::pin(queue.get()));
        if first.run().is_some() {
            return Err("the first get found an item in an empty queue".into());
        }
        queue.try_put(1).unwrap();
        send_back(held, back)?;
        let sleeper = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let start = std::time::Instant::now();
                let got = queue.get_blocking_timeout(Duration::from_secs(2));
                let waited = start.elapsed();
                let job = got.map_err(|e| format!("{e:?}"))?;
                job.succeed();
                if waited >= Duration::from_secs(2) {
                    return Err(format!("served only by its final try after {waited:?}"));
                }
                Ok(())
            })
        };
        // Time for the sleeper to find nothing it may take and go to sleep.
        thread::sleep(Duration::from_millis(50));
        match first.run() {
            Some(Ok(job)) => {
                job.succeed();
            }
            other => return Err(format!("the woken get was not served: {other:?}")),
        }
        let joined = queue.join_blocking_timeout(Duration::from_millis(500));
        let slept = sleeper.join().unwrap();
        match (joined, slept) {
            (Ok(ledger), Ok(())) if ledger.succeeded == 2 => Ok(()),
            (joined, slept) => Err(format!(
                "join: {:?}; the sleeping get_blocking: {slept:?}",
                joined.map_err(|late| late.ledger().to_string())
            )),
        }
    }
    let failures: Vec<String> = thread::scope(|s| {
        let runs: Vec<_> = each_kind_and_way_back()
            .into_iter()
            .map(|(name, queue, back)| (name, s.spawn(move || case(Arc::new(queue), back))))
            .collect();
        runs.into_iter()
            .filter_map(|(name, run)| {
                run.join()
                    .unwrap()
                    .err()
                    .map(|why| format!("{name}: {why}"))
            })
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 31, finding 2 (poison loop): with `redeliver(2)`, a handler that alternates
/// `retry()` and a crash sees attempts 1 and 2, and then the job is a dead letter;
/// whichever comes first. On every kind of queue.
#[test]
fn attempts_never_reset_so_a_job_that_retries_and_crashes_is_dead_lettered() {
    let mut failures = Vec::new();
    for retry_first in [true, false] {
        for (kind, queue) in common::every_kind::<&str>(AbandonPolicy::redeliver(2).unwrap()) {
            let id = queue.try_put("poison").unwrap();
            let mut attempts = Vec::new();
            // At most 10 deliveries: a loop shows as more than 2.
            while attempts.len() < 10 {
                let Ok(job) = queue.try_get() else { break };
                attempts.push(job.attempt());
                if (attempts.len() % 2 == 1) == retry_first {
                    // A refused retry leaves the delivery in flight: then it crashes.
                    drop(job.retry());
                } else {
                    drop(job);
                }
            }
            let dead = queue.take_dead_letters();
            let ledger = queue.ledger();
            let dead: Vec<_> = dead.iter().map(|d| (d.id, d.attempts, d.reason)).collect();
            let expected = [(id, 2, DeadReason::Exhausted { panicking: false })];
            if attempts != [1, 2]
                || dead != expected
                || ledger.abandoned != 1
                || !ledger.is_balanced()
                || ledger.unfinished() != 0
            {
                failures.push(format!(
                    "{kind}, retry first: {retry_first}: attempts {attempts:?}, dead letters \
                     {dead:?}, ledger {ledger}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 31, finding 2: `attempt()` goes up by one across every way a job comes back
/// (retries and redeliveries mixed), never down, and the job is delivered at most
/// `max_attempts` times.
#[test]
fn attempt_rises_by_one_per_delivery_across_retries_and_redeliveries() {
    let queue = redelivering::<u8>(5);
    let id = queue.try_put(1).unwrap();
    let mut attempts = Vec::new();
    while attempts.len() < 20 {
        let Ok(job) = queue.try_get() else { break };
        assert_eq!(job.id(), id);
        attempts.push(job.attempt());
        match attempts.len() % 3 {
            0 => drop(job),
            _ => drop(job.retry()),
        }
    }
    assert_eq!(
        attempts,
        [1, 2, 3, 4, 5],
        "one job's attempts, delivery by delivery"
    );
    assert_eq!(queue.take_dead_letters().len(), 1);
}

/// Issue 31, finding 2: a `retry()` on the last allowed attempt is refused; the delivery
/// comes back still in flight, its attempt unchanged; resolving it ends the job, dropping
/// it makes it a dead letter.
#[test]
fn a_retry_on_the_last_allowed_attempt_is_refused_and_stays_in_flight() {
    for resolve in [false, true] {
        let queue = redelivering::<&str>(2);
        let id = queue.try_put("job").unwrap();
        drop(queue.try_get().unwrap());
        let last = queue.try_get().unwrap();
        assert_eq!(last.attempt(), 2);
        let last = match last.retry() {
            Err(last) => last,
            Ok(_) => panic!(
                "a retry on the last allowed attempt was accepted: the queue now holds {} item(s), \
                 and the next delivery is attempt {:?}",
                queue.len(),
                queue.try_get().map(|job| job.attempt()).ok()
            ),
        };
        assert_eq!((last.id(), last.attempt()), (id, 2));
        let ledger = queue.ledger();
        assert_eq!((ledger.in_flight, ledger.buffered), (1, 0));
        assert!(matches!(queue.try_get(), Err(TryGetError::Empty)));
        if resolve {
            last.succeed();
            assert_eq!(queue.ledger().succeeded, 1);
            assert!(queue.take_dead_letters().is_empty());
        } else {
            drop(last);
            let dead = queue.take_dead_letters();
            assert_eq!((dead.len(), dead[0].attempts), (1, 2));
            assert_eq!(queue.ledger().abandoned, 1);
        }
        assert!(queue.is_settled());
    }
}

/// Issue 31, finding 2, under the default policy: each retry is one more attempt.
#[test]
fn under_abandon_a_retried_job_comes_back_as_the_next_attempt() {
    for (kind, queue) in common::every_kind::<u8>(AbandonPolicy::Abandon) {
        queue.try_put(7).unwrap();
        let mut attempts = Vec::new();
        for _ in 0..3 {
            let job = queue.try_get().unwrap();
            attempts.push(job.attempt());
            job.retry().unwrap();
        }
        queue.try_get().unwrap().succeed();
        assert_eq!(attempts, [1, 2, 3], "{kind}");
    }
}

/// Issue 31, finding 7 (starved redeliveries): a producer keeps the buffer at `k` items
/// (one put per delivery); an item that comes back while `k` are buffered goes behind those
/// `k` and ahead of every later put, so it is delivered within the next `k + 1` deliveries.
/// Every kind, both ways back.
#[test]
fn a_returned_item_waits_only_behind_the_items_buffered_when_it_came_back() {
    const K: u32 = 3;
    let limit = common::scaled(1_000, 50);
    let mut failures = Vec::new();
    for (case, queue, back) in each_kind_and_way_back() {
        let returned = queue.try_put(u32::MAX).unwrap();
        let held = queue.try_get().unwrap();
        let mut next = 0;
        while next < K {
            queue.try_put(next).unwrap();
            next += 1;
        }
        if let Err(why) = send_back(held, back) {
            failures.push(format!("{case}: {why}"));
            continue;
        }
        let mut position = None;
        for delivered in 1..=limit {
            let job = queue.try_get().unwrap();
            let id = job.id();
            job.succeed();
            if id == returned {
                position = Some(delivered);
                break;
            }
            // The steady producer.
            queue.try_put(next).unwrap();
            next += 1;
        }
        match position {
            Some(n) if n <= K as usize + 1 => {}
            Some(n) => failures.push(format!("{case}: delivered as number {n}")),
            None => failures.push(format!(
                "{case}: not delivered in {limit} deliveries ({} items put after it)",
                next - K
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ------------------------------------------------------- redeliveries that wait

/// A queue whose redelivery schedule keeps every claim for the test to release.
fn scheduled<T: Send + 'static>(
    max_attempts: u32,
) -> (
    Arc<Queue<T>>,
    Arc<std::sync::Mutex<Vec<tally_queue::Redelivery>>>,
) {
    let claims = Arc::new(std::sync::Mutex::new(Vec::new()));
    let keep = Arc::clone(&claims);
    let queue = redelivering(max_attempts)
        .with_redelivery_delay(move |claim| keep.lock().unwrap().push(claim));
    (queue, claims)
}

#[test]
fn a_held_redelivery_counts_buffered_keeps_its_attempt_and_join_waits_for_it() {
    let (queue, claims) = scheduled::<u32>(3);
    let id = queue.try_put(7).unwrap();
    drop(queue.try_get().unwrap());
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.buffered, ledger.in_flight, ledger.abandoned),
        (1, 0, 0),
        "{ledger}"
    );
    assert_eq!(queue.len(), 1);
    assert_eq!(
        queue.try_get().unwrap_err(),
        TryGetError::Empty,
        "held back"
    );
    let mut join = Task::new(Box::pin(queue.join()));
    assert!(join.run().is_none(), "join waits for the held item");
    let claim = claims.lock().unwrap().pop().unwrap();
    assert_eq!((claim.id(), claim.attempt()), (id, 2));
    claim.release();
    let again = queue.try_get().unwrap();
    assert_eq!((again.id(), again.attempt()), (id, 2));
    drop(again);
    // The last allowed delivery, abandoned, is a dead letter at once: no claim.
    claims.lock().unwrap().pop().unwrap().release();
    drop(queue.try_get().unwrap());
    assert!(claims.lock().unwrap().is_empty());
    let dead = queue.take_dead_letters();
    assert_eq!((dead[0].id, dead[0].attempts), (id, 3));
    assert_eq!(queue.redeliveries(), 2);
    let ledger = join.run().expect("settled");
    assert_eq!((ledger.accepted, ledger.abandoned), (1, 1), "{ledger}");
    assert!(ledger.is_balanced());
}

#[test]
fn shutdown_now_hands_back_a_held_redelivery_and_its_claim_then_does_nothing() {
    let (queue, claims) = scheduled::<u32>(3);
    let id = queue.try_put(7).unwrap();
    queue.try_put(8).unwrap();
    drop(queue.try_get().unwrap());
    let drained = queue.shutdown_now();
    assert_eq!(drained.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [8, 7]);
    assert_eq!(drained[1].0, id);
    claims.lock().unwrap().pop().unwrap().release();
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    let ledger = queue.ledger();
    assert_eq!((ledger.discarded, ledger.buffered), (2, 0), "{ledger}");
    assert!(ledger.is_balanced());
    // A delivery abandoned after the drain finds the store closed: a dead letter, counted
    // discarded, never lost.
    let (queue, claims) = scheduled::<u32>(3);
    queue.try_put(9).unwrap();
    let late = queue.try_get().unwrap();
    assert!(queue.shutdown_now().is_empty());
    drop(late);
    assert!(claims.lock().unwrap().is_empty());
    let dead = queue.take_dead_letters();
    assert_eq!((dead[0].item, dead[0].reason), (9, DeadReason::ShutDownNow));
    assert_eq!(queue.ledger().discarded, 1);
}

#[test]
fn a_graceful_shutdown_keeps_a_redelivery_held_until_released_then_drains_it() {
    let (queue, claims) = scheduled::<u32>(3);
    queue.try_put(7).unwrap();
    drop(queue.try_get().unwrap());
    queue.shutdown();
    assert_eq!(
        queue.try_get().unwrap_err(),
        TryGetError::Empty,
        "still held"
    );
    claims.lock().unwrap().pop().unwrap().release();
    assert_eq!(queue.try_get().unwrap().succeed(), 7);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert!(queue.ledger().is_balanced());
}

#[test]
fn a_claim_dropped_or_a_schedule_that_panics_lets_the_item_go_at_once() {
    let queue = redelivering::<u32>(3).with_redelivery_delay(drop);
    queue.try_put(1).unwrap();
    drop(queue.try_get().unwrap());
    assert_eq!(
        queue.try_get().unwrap().attempt(),
        2,
        "dropped claim: due at once"
    );
    let queue = redelivering::<u32>(3).with_redelivery_delay(|_| panic!("a schedule that panics"));
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(job)));
    assert!(unwound.is_err());
    let again = queue.try_get().unwrap();
    assert_eq!((again.attempt(), again.succeed()), (2, 1));
    assert!(queue.ledger().is_balanced());
}

#[test]
fn a_claim_that_outlives_its_queue_releases_nothing_and_the_item_is_dropped_with_it() {
    struct Counted(Arc<AtomicUsize>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let (queue, claims) = scheduled::<Counted>(3);
    queue.try_put(Counted(Arc::clone(&dropped))).unwrap();
    drop(queue.try_get().unwrap());
    assert_eq!(dropped.load(Ordering::SeqCst), 0, "held, not dropped");
    drop(queue);
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "dropped with the queue");
    claims.lock().unwrap().pop().unwrap().release();
}

#[test]
#[cfg(feature = "std")]
fn held_redeliveries_from_many_workers_all_come_back_and_the_ledger_balances() {
    let queue = redelivering::<u32>(3).with_redelivery_delay(|claim| {
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(1));
            claim.release();
        });
    });
    let jobs = common::scaled(200, 10) as u32;
    for n in 0..jobs {
        queue.try_put(n).unwrap();
    }
    let succeeded = within(30, {
        let queue = Arc::clone(&queue);
        move || {
            let workers: Vec<_> = (0..2)
                .map(|_| {
                    let queue = Arc::clone(&queue);
                    thread::spawn(move || {
                        let mut done = 0;
                        while let Ok(job) = queue.get_blocking() {
                            // Every job fails its first delivery.
                            if job.attempt() == 1 {
                                drop(job);
                            } else {
                                job.succeed();
                                done += 1;
                            }
                        }
                        done
                    })
                })
                .collect();
            let ledger = queue.join_blocking();
            queue.shutdown();
            let done: u32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
            (done, ledger)
        }
    });
    assert_eq!(succeeded.0, jobs);
    assert_eq!(succeeded.1.succeeded, u64::from(jobs));
    assert!(succeeded.1.is_balanced());
    assert_eq!(queue.redeliveries(), u64::from(jobs));
}
