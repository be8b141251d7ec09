//! Fairness: a woken waiter gets what it was woken for; tries and newcomers cannot take
//! it, however often they try; waiters are woken in arrival order.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::thread;

#[cfg(feature = "std")]
use common::within;
use common::{counting_waker, poll_once, poll_with, Task};
use tally_queue::{AbandonPolicy, Queue, TryGetError, TryPutError};

/// The attack, made deterministic: after every put, a barging `try_get` runs
/// before the woken getter is polled. The getter must be served every time.
#[test]
fn a_barging_try_get_cannot_take_a_woken_getters_item() {
    // Under Miri, which takes about 40 ms a round, 50 rounds check the same steps for UB.
    const ROUNDS: usize = common::scaled(1_000, 50);
    let queue = Queue::unbounded();
    let mut served = 0;
    let mut barged = 0;
    for n in 0..ROUNDS {
        let (waker, woken) = counting_waker();
        let mut get = Box::pin(queue.get());
        assert!(poll_with(&mut get, &waker).is_pending());
        queue.try_put(n).unwrap();
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        match queue.try_get() {
            Ok(delivery) => {
                barged += 1;
                delivery.succeed();
            }
            Err(err) => assert_eq!(err, TryGetError::Empty),
        }
        if let Poll::Ready(Ok(delivery)) = poll_with(&mut get, &waker) {
            assert_eq!(delivery.succeed(), n);
            served += 1;
        }
    }
    assert_eq!((served, barged), (ROUNDS, 0));
}

/// A new `get` that arrives after the put cannot overtake the woken one either.
#[test]
fn a_newcomer_get_cannot_take_a_woken_getters_item() {
    let queue = Queue::unbounded();
    let (waker, _) = counting_waker();
    let mut woken = Box::pin(queue.get());
    assert!(poll_with(&mut woken, &waker).is_pending());
    queue.try_put(1).unwrap();
    let mut newcomer = Box::pin(queue.get());
    assert!(
        poll_once(&mut newcomer).is_pending(),
        "the newcomer overtook"
    );
    let Poll::Ready(Ok(delivery)) = poll_with(&mut woken, &waker) else {
        panic!("the woken get must take its item");
    };
    assert_eq!(delivery.succeed(), 1);
    // Items beyond those owed are free for anyone: item 2 wakes the newcomer, item 3 is
    // free. Turns limit how many items a try may take, not which: it takes the oldest.
    queue.try_put(2).unwrap();
    queue.try_put(3).unwrap();
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
    assert!(queue.try_get().is_err());
    let Poll::Ready(Ok(delivery)) = poll_once(&mut newcomer) else {
        panic!("the woken newcomer must take the item left");
    };
    assert_eq!(delivery.succeed(), 3);
}

/// Puts: after a get frees a slot for a waiting put, a barging `try_put` finds the queue
/// full, and the woken put lands.
#[test]
fn a_barging_try_put_cannot_take_a_woken_putters_slot() {
    // Under Miri, which takes about 40 ms a round, 50 rounds check the same steps for UB.
    const ROUNDS: usize = common::scaled(1_000, 50);
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(usize::MAX).unwrap();
    let mut served = 0;
    for n in 0..ROUNDS {
        let (waker, woken) = counting_waker();
        let mut put = Box::pin(queue.put(n));
        assert!(poll_with(&mut put, &waker).is_pending());
        queue.try_get().unwrap().succeed();
        assert_eq!(woken.load(Ordering::SeqCst), 1);
        assert!(matches!(queue.try_put(0), Err(TryPutError::Full(0))));
        if let Poll::Ready(Ok(_)) = poll_with(&mut put, &waker) {
            served += 1;
        }
    }
    assert_eq!(served, ROUNDS);
}

/// Waiters are woken in arrival order, one per item.
#[test]
fn getters_are_woken_in_arrival_order() {
    let queue = Queue::unbounded();
    let wakers: Vec<_> = (0..3).map(|_| counting_waker()).collect();
    let mut gets: Vec<_> = (0..3).map(|_| Box::pin(queue.get())).collect();
    for (get, (waker, _)) in gets.iter_mut().zip(&wakers) {
        assert!(poll_with(get, waker).is_pending());
    }
    for n in 0..3 {
        queue.try_put(n).unwrap();
        let woken: Vec<_> = wakers
            .iter()
            .map(|(_, count)| count.load(Ordering::SeqCst))
            .collect();
        let expected: Vec<_> = (0..3).map(|i| usize::from(i <= n)).collect();
        assert_eq!(woken, expected, "after put {n}");
    }
}

/// A woken getter dropped before it ran passes its turn on: the next waiter is woken and
/// served, and with nobody left the item is free again for `try_get`.
#[test]
fn a_dropped_woken_getter_passes_its_turn_on() {
    let queue = Queue::unbounded();
    let (waker, _) = counting_waker();
    let mut first = Box::pin(queue.get());
    assert!(poll_with(&mut first, &waker).is_pending());
    let (second_waker, second_woken) = counting_waker();
    let mut second = Box::pin(queue.get());
    assert!(poll_with(&mut second, &second_waker).is_pending());
    queue.try_put(1).unwrap();
    drop(first);
    assert_eq!(second_woken.load(Ordering::SeqCst), 1);
    assert!(
        queue.try_get().is_err(),
        "the item is owed to the second getter"
    );
    drop(second);
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
}

/// Under a barging thread that calls `try_get` in a loop, a blocked `get_blocking` is
/// still served: every item put while it waits is one it may get.
#[test]
#[cfg(feature = "std")]
fn a_blocked_get_is_served_despite_a_barging_thread() {
    // Under Miri (which interprets the spinning barger step by step) fewer rounds keep the
    // run within its time limit; the rounds natively are what test the fairness.
    const ROUNDS: u32 = if cfg!(miri) { 20 } else { 200 };
    let served = within(20, || {
        let queue = Arc::new(Queue::<u32>::unbounded());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let barger = {
            let (queue, stop) = (queue.clone(), stop.clone());
            thread::spawn(move || {
                let mut taken = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(delivery) = queue.try_get() {
                        delivery.succeed();
                        taken += 1;
                    }
                }
                taken
            })
        };
        let mut served = 0;
        for n in 0..ROUNDS {
            let getter = {
                let queue = queue.clone();
                thread::spawn(move || queue.get_blocking().map(|d| d.succeed()))
            };
            // Put until the getter has its item; a barger that raced a grant may take one
            // now and then, never all of them.
            let mut puts = 0;
            while !getter.is_finished() {
                queue.try_put(n).unwrap();
                puts += 1;
                thread::sleep(std::time::Duration::from_micros(200));
                assert!(puts < 1_000, "the blocked get was starved");
            }
            if getter.join().unwrap().is_ok() {
                served += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        barger.join().unwrap();
        served
    });
    assert_eq!(served, ROUNDS);
}

/// Issue 31, finding 5: a get woken for a returned item keeps it: neither a barging
/// `try_get` nor a newcomer `get` takes it, and the woken get takes it when it runs. Every
/// kind of queue; the item sent back both ways (redelivered, retried).
#[test]
fn neither_a_try_get_nor_a_newcomer_takes_a_returned_item_a_get_was_woken_for() {
    let mut failures = Vec::new();
    for (redeliver, newcomer) in [(true, false), (true, true), (false, false), (false, true)] {
        for (kind, queue) in common::every_kind::<u32>(AbandonPolicy::redeliver(3).unwrap()) {
            let case = format!(
                "{kind}, {}, {}",
                if redeliver { "redelivered" } else { "retried" },
                if newcomer {
                    "a newcomer get"
                } else {
                    "try_get"
                }
            );
            let id = queue.try_put(1).unwrap();
            let held = queue.try_get().unwrap();
            let mut woken = Task::new(Box::pin(queue.get()));
            assert!(woken.run().is_none(), "{case}: nothing to take yet");
            if redeliver {
                drop(held);
            } else {
                held.retry().unwrap();
            }
            assert_eq!(
                woken.wake_ups(),
                1,
                "{case}: the returned item wakes the get"
            );
            let barged = if newcomer {
                let mut get = Box::pin(queue.get());
                match poll_once(&mut get) {
                    Poll::Ready(got) => Some(got.unwrap()),
                    Poll::Pending => None,
                }
            } else {
                match queue.try_get() {
                    Ok(got) => Some(got),
                    Err(TryGetError::Empty) => None,
                    Err(other) => panic!("{case}: {other:?}"),
                }
            };
            if let Some(barged) = barged {
                failures.push(format!(
                    "{case}: took {} (attempt {}), the item the get was woken for",
                    barged.id(),
                    barged.attempt()
                ));
                barged.succeed();
                continue;
            }
            match woken.run() {
                Some(Ok(job)) => {
                    assert_eq!(job.id(), id, "{case}");
                    job.succeed();
                }
                other => failures.push(format!("{case}: the woken get got {other:?}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 31, finding 5, the empty-buffer hole: a try that reads the buffer empty passes the
/// turn check, and takes an item put after that read. While a get woken for an item has not
/// run yet, a thread loops on `try_get`, and the test puts one item at a time, each after
/// the last was taken; the woken get is polled only when an item stays (and, if the barger
/// took that one too, once more after one more put). The barging thread may take at most
/// one item in a round (a try that read the count an instant before the hand-off was
/// counted), never a streak, and the woken get is served.
#[test]
fn a_try_get_loop_cannot_take_a_streak_of_items_put_for_a_woken_get() {
    // Up to this many rounds per queue, within a time budget (a busy machine runs fewer).
    let rounds = common::scaled(5_000, 5);
    let mut failures = Vec::new();
    for (kind, queue) in [
        ("unbounded", Queue::unbounded()),
        ("bounded(4)", Queue::bounded(4).unwrap()),
    ] {
        let (run, streaks, longest) = streaks_of_a_try_get_loop(Arc::new(queue), rounds);
        if !streaks.is_empty() {
            failures.push(format!(
                "{kind}: in {} of {run} rounds a try_get loop took more than one item put \
                 while a woken get had not run, or left it nothing (longest streak {longest}; \
                 (streak, served): {:?})",
                streaks.len(),
                &streaks[..streaks.len().min(10)]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The rounds of `a_try_get_loop_cannot_take_a_streak_of_items_put_for_a_woken_get` on
/// `queue`, up to `rounds` or 700 ms: how many ran, each round's (streak, served) where
/// the barger took more than one item or the woken get was not served, and the longest
/// streak.
///
/// What the barger took is read from the queue, not from a count the barger keeps: a take
/// and the barger's count of it are two steps, and a count that lands in the next round
/// would make that round put on past the item the barger left.
fn streaks_of_a_try_get_loop(
    queue: Arc<Queue<usize>>,
    rounds: usize,
) -> (usize, Vec<(usize, bool)>, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let barger = {
        let (queue, stop) = (queue.clone(), stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(job) = queue.try_get() {
                    job.succeed();
                }
            }
        })
    };
    let mut streaks = Vec::new();
    let mut longest = 0;
    let budget = std::time::Instant::now();
    let mut round = 0;
    while round < rounds && budget.elapsed() < std::time::Duration::from_millis(700) {
        round += 1;
        // Whatever an earlier round left.
        while let Ok(job) = queue.try_get() {
            job.succeed();
        }
        let mut woken = Task::new(Box::pin(queue.get()));
        if let Some(job) = woken.run() {
            job.unwrap().succeed();
            continue;
        }
        // Put while the barger keeps taking, up to 100 items, one at a time: each put
        // lands in an empty buffer, and the round ends at the first item left there.
        let mut streak = 0;
        let mut left = false;
        for n in 0..common::scaled(100, 5) {
            queue.try_put(n).unwrap();
            // Wait a moment for the barger; an item it leaves is the woken get's.
            let mut spins = 0;
            while !queue.is_empty() && spins < common::scaled(2_000, 100) {
                std::hint::spin_loop();
                spins += 1;
            }
            if !queue.is_empty() {
                left = true;
                break;
            }
            streak += 1;
        }
        assert!(
            woken.wake_ups() >= 1,
            "round {round}: the first put wakes the get"
        );
        // An item the barger left is owed to the woken get, which now runs.
        let mut serve = || match woken.run() {
            Some(Ok(job)) => {
                job.succeed();
                true
            }
            Some(Err(e)) => panic!("round {round}: {e:?}"),
            None => false,
        };
        let mut served = left && serve();
        if !served {
            // The barger took the item after all (a try that read the turns an instant
            // before the hand-off), or every item: the woken get keeps its claim on the
            // next one.
            streak += usize::from(left);
            queue.try_put(usize::MAX).unwrap();
            served = serve();
        }
        longest = longest.max(streak);
        if streak > 1 || !served {
            streaks.push((streak, served));
        }
    }
    stop.store(true, Ordering::Relaxed);
    barger.join().unwrap();
    (round, streaks, longest)
}
