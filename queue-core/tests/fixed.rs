//! The no-heap tier, `tally_queue::fixed`: the heap queue's contract where it applies, the
//! waiter slots and what a wait gets without one, fairness, deadlines, cancellation at
//! every await point, and many threads at once.
#![cfg(not(loom))]

mod common;

use std::collections::HashSet;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{
    assert_pending, counting_waker, expect_panic, expect_ready, panicking_waker, poll_once,
    poll_with, scaled, waker_fn, within, Task,
};
use futures_lite::future::block_on;
use tally_queue::fixed::{
    FixedGetError, FixedGetTimeoutError, FixedJoinTimeoutError, FixedPutError,
    FixedPutTimeoutError, FixedQueue, NoWaiterSlot, Waiting,
};
use tally_queue::{Ledger, Outcome, TryGetError, TryPutError};

fn waiting(getters: usize, putters: usize, joiners: usize) -> Waiting {
    Waiting {
        getters,
        putters,
        joiners,
    }
}

fn ledger(accepted: u64, buffered: u64, in_flight: u64, ended: [u64; 5]) -> Ledger {
    let mut ledger = Ledger::default();
    ledger.accepted = accepted;
    ledger.buffered = buffered;
    ledger.in_flight = in_flight;
    [
        ledger.succeeded,
        ledger.rejected,
        ledger.uncertain,
        ledger.abandoned,
        ledger.discarded,
    ] = ended;
    ledger
}

// ---------------------------------------------------------------------- the contract

static STATIC: FixedQueue<u32, 4, 2> = FixedQueue::new();

#[test]
fn a_static_queue_counts_every_outcome() {
    for n in 0..4 {
        assert_eq!(STATIC.try_put(n).unwrap().get(), u64::from(n));
    }
    STATIC.try_get().unwrap().succeed();
    STATIC.try_get().unwrap().reject();
    STATIC.try_get().unwrap().resolve(Outcome::Uncertain);
    drop(STATIC.try_get().unwrap());
    assert_eq!(STATIC.ledger(), ledger(4, 0, 0, [1, 1, 1, 1, 0]));
    assert_eq!(block_on(STATIC.join()).unwrap(), STATIC.ledger());
}

#[test]
fn a_refused_put_hands_the_item_back_and_draws_no_id() {
    let queue = FixedQueue::<String, 2>::new();
    queue.try_put("a".into()).unwrap();
    queue.try_put("b".into()).unwrap();
    let Err(TryPutError::Full(item)) = queue.try_put("c".into()) else {
        panic!("a full queue refuses");
    };
    assert_eq!(item, "c");
    queue.try_get().unwrap().succeed();
    assert_eq!(
        queue.try_put("c".into()).unwrap().get(),
        2,
        "ids stay contiguous"
    );
    queue.shutdown();
    let Err(TryPutError::ShutDown(item)) = queue.try_put("d".into()) else {
        panic!("a shut-down queue refuses");
    };
    assert_eq!(item, "d");
    assert_eq!(queue.ledger().accepted, 3);
}

#[test]
fn items_come_out_in_id_order_across_many_laps() {
    let queue = FixedQueue::<u64, 4>::new();
    let mut next = 0;
    for lap in 0..scaled(100, 10) as u64 {
        for i in 0..3 {
            assert_eq!(queue.try_put(lap * 3 + i).unwrap().get(), lap * 3 + i);
        }
        for _ in 0..3 {
            let job = queue.try_get().unwrap();
            assert_eq!((job.id().get(), *job), (next, next));
            job.succeed();
            next += 1;
        }
    }
    assert!(queue.ledger().is_balanced());
}

#[test]
fn a_dropped_delivery_is_abandoned_and_its_item_dropped() {
    let queue = FixedQueue::<Arc<()>, 2>::new();
    let item = Arc::new(());
    queue.try_put(Arc::clone(&item)).unwrap();
    let job = queue.try_get().unwrap();
    assert_eq!(queue.ledger().in_flight, 1);
    drop(job);
    assert_eq!(Arc::strong_count(&item), 1);
    assert_eq!(queue.ledger(), ledger(1, 0, 0, [0, 0, 0, 1, 0]));
}

#[test]
fn a_delivery_unwound_by_a_panic_is_abandoned() {
    let queue = FixedQueue::<u8, 2>::new();
    queue.try_put(1).unwrap();
    expect_panic(|| {
        let _job = queue.try_get().unwrap();
        panic!("the handler failed");
    });
    assert_eq!(queue.ledger().abandoned, 1);
    assert!(block_on(queue.join()).is_ok());
}

#[test]
fn a_dropped_queue_drops_its_buffered_items() {
    let item = Arc::new(());
    {
        let queue = FixedQueue::<Arc<()>, 4>::new();
        for _ in 0..3 {
            queue.try_put(Arc::clone(&item)).unwrap();
        }
        queue.try_get().unwrap().succeed();
    }
    assert_eq!(Arc::strong_count(&item), 1);
}

// ---------------------------------------------------------------------- shutdown

#[test]
fn a_graceful_shutdown_wakes_a_waiting_put_to_refuse_and_lets_gets_drain() {
    let queue = FixedQueue::<u8, 2, 2>::new();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut put = Task::new(Box::pin(queue.put(3)));
    assert!(put.run().is_none());
    let mut get = Task::new(Box::pin(async {
        let mut seen = Vec::new();
        while let Ok(job) = queue.get().await {
            seen.push(job.succeed());
        }
        seen
    }));
    // A get takes one item at once, which frees a slot for the waiting put...
    // (it takes both, and waits for more), and the put is woken for the slot...
    assert!(get.run().is_none());
    assert_eq!(put.wake_ups(), 1);
    // ...but the queue shuts down before it runs: it is refused with its item.
    assert!(queue.shutdown());
    assert!(matches!(put.run(), Some(Err(FixedPutError::ShutDown(3)))));
    let seen = get.run().expect("the shutdown woke the get, which ends");
    assert_eq!(seen, [1, 2]);
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
    assert!(queue.ledger().is_balanced());
}

#[test]
fn shutdown_now_hands_out_the_buffered_items_and_gets_refuse() {
    let queue = FixedQueue::<&str, 4>::new();
    let ids: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|item| queue.try_put(item).unwrap())
        .collect();
    let held = queue.try_get().unwrap();
    let mut drained = queue.shutdown_now();
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert_eq!(block_on(queue.get()).unwrap_err(), FixedGetError::ShutDown);
    assert_eq!(drained.next(), Some((ids[1], "b")));
    assert_eq!(queue.ledger(), ledger(3, 1, 1, [0, 0, 0, 0, 1]));
    assert_eq!(drained.next(), Some((ids[2], "c")));
    assert_eq!(drained.next(), None);
    assert_eq!(drained.next(), None);
    drop(drained);
    // In flight, untouched: it still has to end.
    assert!(block_on(queue.join_until(async {})).is_err());
    held.uncertain();
    assert_eq!(
        block_on(queue.join()).unwrap(),
        ledger(3, 0, 0, [0, 0, 1, 0, 2])
    );
}

#[test]
fn a_dropped_drain_discards_the_rest_and_settles_a_waiting_join() {
    let queue = FixedQueue::<Arc<()>, 4>::new();
    let item = Arc::new(());
    for _ in 0..3 {
        queue.try_put(Arc::clone(&item)).unwrap();
    }
    let mut join = Task::new(Box::pin(queue.join()));
    assert!(join.run().is_none());
    let drained = queue.shutdown_now();
    assert!(join.run().is_none(), "the drain has handed out nothing yet");
    drop(drained);
    assert_eq!(Arc::strong_count(&item), 1);
    let ledger = join.run().expect("the last discard woke the join").unwrap();
    assert_eq!(ledger.discarded, 3);
}

#[test]
fn a_get_woken_by_shutdown_now_is_refused() {
    let queue = FixedQueue::<u8, 2>::new();
    let mut get = Task::new(Box::pin(queue.get()));
    assert!(get.run().is_none());
    assert_eq!(queue.shutdown_now().count(), 0);
    assert_eq!(get.run().unwrap().unwrap_err(), FixedGetError::ShutDown);
}

// ---------------------------------------------------------------------- waits and slots

#[test]
fn a_put_waits_for_room_and_a_get_for_an_item() {
    let queue = FixedQueue::<u8, 2>::new();
    let mut get = Task::new(Box::pin(queue.get()));
    assert!(get.run().is_none());
    assert_eq!(queue.waiting(), waiting(1, 0, 0));
    queue.try_put(1).unwrap();
    assert_eq!(get.wake_ups(), 1);
    assert_eq!(*get.run().unwrap().unwrap(), 1);
    assert_eq!(queue.waiting(), waiting(0, 0, 0));

    queue.try_put(2).unwrap();
    queue.try_put(3).unwrap();
    let mut put = Task::new(Box::pin(queue.put(4)));
    assert!(put.run().is_none());
    assert_eq!(queue.waiting(), waiting(0, 1, 0));
    queue.try_get().unwrap().succeed();
    assert_eq!(put.run().unwrap().unwrap().get(), 3);
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
}

#[test]
fn a_join_waits_until_every_item_ended() {
    let queue = FixedQueue::<u8, 2>::new();
    queue.try_put(1).unwrap();
    let mut join = Task::new(Box::pin(queue.join()));
    assert!(join.run().is_none());
    let job = queue.try_get().unwrap();
    assert!(join.run().is_none());
    assert_eq!(join.wake_ups(), 0, "only the settling ending wakes a join");
    job.reject();
    assert_eq!(join.run().unwrap().unwrap().rejected, 1);
}

#[test]
fn a_wait_without_a_free_slot_is_refused_at_once_for_every_kind() {
    let queue = FixedQueue::<u8, 2, 1>::new();
    let no_slot = NoWaiterSlot { slots: 1 };

    let mut first = pin!(queue.get());
    assert!(poll_once(&mut first).is_pending());
    assert_eq!(
        block_on(queue.get()).unwrap_err(),
        FixedGetError::NoWaiterSlot(no_slot)
    );
    assert_eq!(
        block_on(queue.get_until(std::future::pending::<()>())).unwrap_err(),
        FixedGetTimeoutError::NoWaiterSlot(no_slot)
    );

    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut held = pin!(queue.put(3));
    assert!(poll_once(&mut held).is_pending());
    assert!(matches!(
        block_on(queue.put(4)),
        Err(FixedPutError::NoWaiterSlot(4))
    ));
    assert!(matches!(
        block_on(queue.put_until(5, std::future::pending::<()>())),
        Err(FixedPutTimeoutError::NoWaiterSlot(5))
    ));

    let mut join = pin!(queue.join());
    assert!(poll_once(&mut join).is_pending());
    assert_eq!(block_on(queue.join()).unwrap_err(), no_slot);
    assert_eq!(
        block_on(queue.join_until(std::future::pending::<()>())).unwrap_err(),
        FixedJoinTimeoutError::NoWaiterSlot(no_slot)
    );
    assert_eq!(queue.waiting(), waiting(1, 1, 1));
}

#[test]
fn a_wait_that_can_finish_needs_no_slot() {
    let queue = FixedQueue::<u8, 2, 1>::new();
    let mut parked = pin!(queue.join());
    queue.try_put(1).unwrap();
    assert!(poll_once(&mut parked).is_pending());
    // Every joiner slot is taken, but an item is there: a get needs no slot.
    let job = block_on(queue.get()).unwrap();
    assert_eq!(block_on(queue.put(2)).unwrap().get(), 1);
    job.succeed();
    queue.try_get().unwrap().succeed();
    assert!(block_on(queue.join()).is_ok(), "settled: no slot needed");
    assert!(expect_ready(&mut parked).is_ok());
}

#[test]
fn a_slot_freed_by_a_dropped_wait_serves_the_next() {
    let queue = FixedQueue::<u8, 2, 1>::new();
    {
        let mut first = pin!(queue.get());
        assert!(poll_once(&mut first).is_pending());
        assert_eq!(queue.waiting(), waiting(1, 0, 0));
    }
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
    let mut second = Task::new(Box::pin(queue.get()));
    assert!(second.run().is_none());
    queue.try_put(7).unwrap();
    assert_eq!(second.run().unwrap().unwrap().succeed(), 7);
}

#[test]
fn a_finished_wait_kept_alive_holds_no_slot() {
    let queue = FixedQueue::<u8, 2, 1>::new();
    let mut get = pin!(queue.get_until(async {}));
    assert_eq!(
        expect_ready(&mut get).unwrap_err(),
        FixedGetTimeoutError::TimedOut
    );
    let mut join = pin!(queue.join());
    queue.try_put(1).unwrap();
    assert!(poll_once(&mut join).is_pending());
    queue.try_get().unwrap().succeed();
    assert!(expect_ready(&mut join).is_ok());
    // Both finished futures are still alive here.
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
    let mut again = pin!(queue.get());
    assert!(
        poll_once(&mut again).is_pending(),
        "the getter slot is free"
    );
}

#[test]
fn a_deadline_is_checked_once_more_before_a_timeout() {
    let queue = FixedQueue::<u8, 2>::new();
    // The deadline itself puts the item: the get delivers it.
    let job = block_on(queue.get_until(async {
        queue.try_put(9).unwrap();
    }))
    .unwrap();
    assert_eq!(job.succeed(), 9);
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let id = block_on(queue.put_until(3, async {
        queue.try_get().unwrap().succeed();
    }))
    .unwrap();
    assert_eq!(id.get(), 3);
    let ledger = block_on(queue.join_until(async {
        while let Ok(job) = queue.try_get() {
            job.succeed();
        }
    }))
    .unwrap();
    assert_eq!(ledger.succeeded, 4);
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
}

// ---------------------------------------------------------------------- fairness

#[test]
fn an_item_handed_to_a_woken_get_is_kept_for_it() {
    let queue = FixedQueue::<u8, 4>::new();
    let mut get = Task::new(Box::pin(queue.get()));
    assert!(get.run().is_none());
    queue.try_put(1).unwrap();
    assert_eq!(
        queue.try_get().unwrap_err(),
        TryGetError::Empty,
        "the item is kept for the woken get"
    );
    let mut newcomer = pin!(queue.get_until(async {}));
    assert!(
        expect_ready(&mut newcomer).is_err(),
        "nor can a new get take it"
    );
    // A second item is not kept: a try takes one (the oldest: a turn keeps a count of
    // items, not a particular one), and the woken get the other.
    queue.try_put(2).unwrap();
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    assert_eq!(get.run().unwrap().unwrap().succeed(), 2);
}

#[test]
fn a_slot_handed_to_a_woken_put_is_kept_for_it() {
    let queue = FixedQueue::<u8, 2>::new();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut put = Task::new(Box::pin(queue.put(3)));
    assert!(put.run().is_none());
    queue.try_get().unwrap().succeed();
    assert!(
        queue.try_put(9).unwrap_err().is_full(),
        "the slot is kept for the woken put"
    );
    assert_eq!(put.run().unwrap().unwrap().get(), 2);
}

#[test]
fn a_woken_get_dropped_before_it_ran_passes_its_item_on() {
    let queue = FixedQueue::<u8, 2, 2>::new();
    let mut first = Task::new(Box::pin(queue.get()));
    let mut second = Task::new(Box::pin(queue.get()));
    assert!(first.run().is_none());
    assert!(second.run().is_none());
    queue.try_put(1).unwrap();
    assert_eq!((first.wake_ups(), second.wake_ups()), (1, 0));
    drop(first);
    assert_eq!(second.wake_ups(), 1, "the hand-off passed on");
    assert_eq!(second.run().unwrap().unwrap().succeed(), 1);
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
}

/// A get that waits again at once after each item does not keep another waiting get from
/// its turn: hand-offs go round the slots.
#[test]
fn a_getter_that_comes_straight_back_does_not_starve_the_other() {
    let queue = FixedQueue::<u8, 2, 2>::new();
    let eager = Arc::new(AtomicUsize::new(0));
    let mut eager_task = Task::new(Box::pin({
        let eager = Arc::clone(&eager);
        let queue = &queue;
        async move {
            while let Ok(job) = queue.get().await {
                job.succeed();
                eager.fetch_add(1, Ordering::Relaxed);
            }
        }
    }));
    let mut patient = Task::new(Box::pin(queue.get()));
    assert!(eager_task.run().is_none());
    assert!(patient.run().is_none());
    let mut patient_got = None;
    for item in 0..4 {
        queue.try_put(item).unwrap();
        eager_task.run();
        if let Some(job) = patient.run() {
            patient_got = Some(job.unwrap().succeed());
            break;
        }
    }
    assert!(patient_got.is_some(), "within W = 2 hand-offs");
    assert!(eager.load(Ordering::Relaxed) <= 1);
}

// ---------------------------------------------------------------------- wakers

#[test]
fn a_waker_may_call_back_into_the_queue() {
    static QUEUE: FixedQueue<u8, 4> = FixedQueue::new();
    let queue = &QUEUE;
    let reentrant = waker_fn(move || {
        // Runs inside the `try_put` that woke it.
        let _ = queue.try_put(99);
        queue.shutdown();
    });
    let mut get = pin!(queue.get());
    assert!(poll_with(&mut get, &reentrant).is_pending());
    within(10, move || {
        queue.try_put(1).unwrap();
    });
    assert!(queue.is_shut_down());
    assert_eq!(expect_ready(&mut get).unwrap().succeed(), 1);
    assert_eq!(queue.ledger().accepted, 2);
}

#[test]
fn a_panicking_waker_does_not_keep_shutdown_from_waking_the_others() {
    // Two puts wait on a full queue; the first one's waker panics.
    let queue = FixedQueue::<u8, 2, 2>::new();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut first = pin!(queue.put(3));
    assert!(poll_with(&mut first, &panicking_waker()).is_pending());
    let (waker, woken) = counting_waker();
    let mut second = pin!(queue.put(4));
    assert!(poll_with(&mut second, &waker).is_pending());
    expect_panic(|| queue.shutdown());
    assert!(queue.is_shut_down());
    assert_eq!(woken.load(Ordering::SeqCst), 1);
    assert!(matches!(
        expect_ready(&mut second),
        Err(FixedPutError::ShutDown(4))
    ));
    assert!(matches!(
        expect_ready(&mut first),
        Err(FixedPutError::ShutDown(3))
    ));
}

// ---------------------------------------------------------------------- cancellation

/// Drops each waiting future at each of its await points (before its first poll, while it
/// waits, after it was woken and before it ran) and checks that nothing is lost: every
/// item is delivered or still buffered, every slot is free again, and a hand-off the
/// dropped future was woken for reaches the waiter behind it.
#[test]
fn dropping_a_wait_at_any_point_loses_nothing() {
    for point in 0..3 {
        let queue = FixedQueue::<u8, 2, 2>::new();
        let mut behind = Task::new(Box::pin(queue.get()));
        {
            let mut get = Task::new(Box::pin(queue.get()));
            if point >= 1 {
                assert!(get.run().is_none());
            }
            assert!(behind.run().is_none());
            if point >= 2 {
                queue.try_put(1).unwrap();
            }
        }
        if point < 2 {
            queue.try_put(1).unwrap();
        }
        assert_eq!(behind.run().unwrap().unwrap().succeed(), 1, "point {point}");
        assert_eq!(queue.waiting(), waiting(0, 0, 0), "point {point}");
        assert_eq!(queue.ledger(), ledger(1, 0, 0, [1, 0, 0, 0, 0]));

        let queue = FixedQueue::<u8, 2, 2>::new();
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let mut behind = Task::new(Box::pin(queue.put(4)));
        {
            let mut put = Task::new(Box::pin(queue.put(3)));
            if point >= 1 {
                assert!(put.run().is_none());
            }
            assert!(behind.run().is_none());
            if point >= 2 {
                queue.try_get().unwrap().succeed();
            }
        }
        if point < 2 {
            queue.try_get().unwrap().succeed();
        }
        assert_eq!(behind.run().unwrap().unwrap().get(), 2, "point {point}");
        assert_eq!(queue.waiting(), waiting(0, 0, 0));
        assert_eq!(
            queue.ledger().accepted,
            3,
            "the dropped put accepted nothing"
        );

        let queue = FixedQueue::<u8, 2, 2>::new();
        queue.try_put(1).unwrap();
        {
            let mut join = Task::new(Box::pin(queue.join()));
            if point >= 1 {
                assert!(join.run().is_none());
            }
            if point >= 2 {
                queue.try_get().unwrap().succeed();
            }
        }
        assert_eq!(queue.waiting(), waiting(0, 0, 0));
    }
}

// ---------------------------------------------------------------------- threads

/// Producers on threads put with `put` (waiting for room) and `try_put`, consumers on
/// threads get with `get` and resolve; a shutdown ends it. Every id is delivered once and
/// the ledger balances.
#[test]
fn threads_lose_and_duplicate_nothing() {
    const PRODUCERS: usize = 2;
    const CONSUMERS: usize = 2;
    let per_producer = scaled(2_000, 30) as u32;
    static QUEUE: FixedQueue<u32, 4, 2> = FixedQueue::new();
    let queue = &QUEUE;
    let seen = within(60, move || {
        std::thread::scope(|s| {
            let consumers: Vec<_> = (0..CONSUMERS)
                .map(|_| {
                    s.spawn(|| {
                        let mut seen = Vec::new();
                        block_on(async {
                            while let Ok(job) = queue.get().await {
                                seen.push(job.id());
                                if *job % 7 == 0 {
                                    job.reject();
                                } else {
                                    job.succeed();
                                }
                            }
                        });
                        seen
                    })
                })
                .collect();
            let producers: Vec<_> = (0..PRODUCERS as u32)
                .map(|p| {
                    s.spawn(move || {
                        for n in 0..per_producer {
                            let item = p * per_producer + n;
                            if n % 2 == 0 {
                                block_on(queue.put(item)).unwrap();
                            } else {
                                let mut item = item;
                                loop {
                                    match queue.try_put(item) {
                                        Ok(_) => break,
                                        Err(refused) => {
                                            item = refused.into_inner();
                                            std::thread::yield_now();
                                        }
                                    }
                                }
                            }
                        }
                    })
                })
                .collect();
            for producer in producers {
                producer.join().unwrap();
            }
            queue.shutdown();
            consumers
                .into_iter()
                .flat_map(|c| c.join().unwrap())
                .collect::<Vec<_>>()
        })
    });
    let total = u64::from(per_producer) * PRODUCERS as u64;
    let distinct: HashSet<_> = seen.iter().copied().collect();
    assert_eq!(seen.len() as u64, total);
    assert_eq!(distinct.len() as u64, total);
    let ledger = block_on(queue.join()).unwrap();
    assert_eq!(ledger.accepted, total);
    assert_eq!(ledger.succeeded + ledger.rejected, total);
    assert!(ledger.is_balanced());
    assert_eq!(queue.waiting(), waiting(0, 0, 0));
}

/// An immediate shutdown races getters on threads: every item is delivered or drained,
/// once.
#[test]
fn shutdown_now_racing_gets_hands_each_item_out_once() {
    for _ in 0..scaled(50, 3) {
        let queue = &FixedQueue::<u32, 8, 2>::new();
        for item in 0..8 {
            queue.try_put(item).unwrap();
        }
        let (got, drained) = std::thread::scope(|s| {
            let getters: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let mut got = Vec::new();
                        while let Ok(job) = block_on(queue.get()) {
                            got.push(job.succeed());
                        }
                        got
                    })
                })
                .collect();
            let drained: Vec<_> = queue.shutdown_now().map(|(_, item)| item).collect();
            let got: Vec<_> = getters
                .into_iter()
                .flat_map(|g| g.join().unwrap())
                .collect();
            (got, drained)
        });
        let mut all: Vec<_> = got.iter().chain(&drained).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..8).collect::<Vec<_>>());
        let ledger = queue.ledger();
        assert_eq!(ledger.succeeded, got.len() as u64);
        assert_eq!(ledger.discarded, drained.len() as u64);
        assert!(ledger.is_balanced());
    }
}

// ---------------------------------------------------------------------- size

/// The size the docs state for x86-64 (`benches/tests/sizes.rs` sets it beside
/// embassy-sync's `Channel`, and the no-heap firmware checks the one for thumbv7em).
#[cfg(target_arch = "x86_64")]
#[test]
fn the_size_the_docs_state() {
    assert_eq!(std::mem::size_of::<FixedQueue<u32, 16, 2>>(), 896);
}

#[test]
fn the_debug_output_names_the_bounds() {
    let queue = FixedQueue::<u8, 2, 1>::new();
    let text = format!("{queue:?}");
    assert!(
        text.starts_with("FixedQueue { capacity: 2, slots: 1, ledger: "),
        "{text}"
    );
    let mut get = pin!(queue.get());
    assert_pending(&mut get);
    assert_eq!(format!("{get:?}"), "FixedGet { .. }");
    assert_eq!(format!("{:?}", queue.shutdown_now()), "FixedDrain { .. }");
}

#[test]
fn a_put_batch_pulls_only_what_it_places_and_refuses() {
    let queue = FixedQueue::<u32, 4>::new();
    let mut ids = Vec::new();
    assert_eq!(
        queue.try_put_many(&mut (0..3), |id| ids.push(id.get())),
        Ok(3)
    );
    let mut rest = 3..10;
    let refused = queue.try_put_many(&mut rest, |id| ids.push(id.get()));
    assert!(matches!(refused, Err(TryPutError::Full(4))));
    assert_eq!(ids, [0, 1, 2, 3]);
    assert_eq!(rest.next(), Some(5), "the items after the refused one stay");
    assert_eq!(queue.try_put_many(&mut std::iter::empty(), |_| {}), Ok(0));
    queue.shutdown();
    assert!(matches!(
        queue.try_put_many(&mut (7..9), |_| panic!("nothing is accepted")),
        Err(TryPutError::ShutDown(7))
    ));
    assert_eq!(queue.ledger(), ledger(4, 4, 0, [0; 5]));
}

#[test]
fn a_put_batch_takes_no_slot_kept_for_a_woken_put() {
    let queue = FixedQueue::<u8, 2>::new();
    queue.try_put_many(&mut [1, 2].into_iter(), |_| {}).unwrap();
    let mut put = Task::new(Box::pin(queue.put(3)));
    assert!(put.run().is_none());
    queue.try_get().unwrap().succeed();
    assert!(matches!(
        queue.try_put_many(&mut [8, 9].into_iter(), |_| {}),
        Err(TryPutError::Full(8))
    ));
    assert_eq!(put.run().unwrap().unwrap().get(), 2);
}

#[test]
fn a_get_batch_takes_up_to_max_in_order_and_no_item_kept_for_a_woken_get() {
    let queue = FixedQueue::<u32, 8>::new();
    assert_eq!(
        queue.try_get_many(4, |_| panic!("empty")),
        Err(TryGetError::Empty)
    );
    queue.try_put_many(&mut (0..5), |_| {}).unwrap();
    assert_eq!(queue.try_get_many(0, |_| panic!("max 0")), Ok(0));
    let mut seen = Vec::new();
    assert_eq!(queue.try_get_many(3, |job| seen.push(job.succeed())), Ok(3));
    assert_eq!(queue.try_get_many(8, |job| seen.push(job.succeed())), Ok(2));
    assert_eq!(seen, [0, 1, 2, 3, 4]);
    let mut get = Task::new(Box::pin(queue.get()));
    assert!(get.run().is_none());
    queue.try_put(5).unwrap();
    assert_eq!(
        queue.try_get_many(8, |_| panic!("kept for the woken get")),
        Err(TryGetError::Empty)
    );
    queue.try_put_many(&mut (6..8), |_| {}).unwrap();
    // Two items past the kept one: the batch takes them (the oldest first: a turn keeps
    // a count of items), and the woken get the last.
    assert_eq!(queue.try_get_many(8, |job| seen.push(job.succeed())), Ok(2));
    assert_eq!(get.run().unwrap().unwrap().succeed(), 7);
    assert_eq!(seen, [0, 1, 2, 3, 4, 5, 6]);
    queue.shutdown();
    assert_eq!(queue.try_get_many(8, |_| {}), Err(TryGetError::ShutDown));
    assert!(queue.ledger().is_balanced());
}

#[test]
fn a_get_batch_whose_callback_panics_abandons_that_delivery_and_keeps_the_rest() {
    let queue = FixedQueue::<u8, 4>::new();
    queue.try_put_many(&mut (0..4), |_| {}).unwrap();
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        queue.try_get_many(4, |job| {
            if *job == 1 {
                panic!("the caller's callback panics");
            }
            job.succeed();
        })
    }));
    assert!(unwound.is_err());
    assert_eq!(queue.ledger(), ledger(4, 2, 0, [1, 0, 0, 1, 0]));
    assert_eq!(queue.try_get_many(4, |job| _ = job.succeed()), Ok(2));
}

/// A woken get redeems its turn with its item, then wakes a waiting put for the slot it
/// freed, whose waker panics. The turn was used once: the get's drop must not pass it on
/// again, or the turns owed read one low, and the next woken get's item is left open to a
/// try.
#[test]
fn a_waker_panicking_after_a_woken_get_redeemed_its_turn_passes_nothing_on() {
    let queue = FixedQueue::<u32, 2>::new();
    let mut get = Box::pin(queue.get());
    assert_pending(&mut get);
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut put = Box::pin(queue.put(0));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    expect_panic(|| poll_once(&mut get));
    drop(get);
    assert!(matches!(poll_once(&mut put), std::task::Poll::Ready(Ok(_))));
    queue.try_get().unwrap().succeed();
    queue.try_get().unwrap().succeed();

    let mut get = Box::pin(queue.get());
    assert_pending(&mut get);
    queue.try_put(3).unwrap();
    let barged = queue.try_get().map(|job| job.succeed());
    assert!(
        barged.is_err(),
        "a try took item {barged:?}, put for a woken get, after a panicking wake-up"
    );
    match poll_once(&mut get) {
        std::task::Poll::Ready(Ok(job)) => assert_eq!(job.succeed(), 3),
        other => panic!("the woken get takes its item: {:?}", other.is_ready()),
    };
}
