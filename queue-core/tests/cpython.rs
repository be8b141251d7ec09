//! CPython 3.13.0 `Lib/test/test_asyncio/test_queues.py`, ported: the join cases (J1-J4),
//! the shutdown cases (S1-S5) and the cancellation family. Where this queue is stronger,
//! the test asserts its behaviour and says what CPython does.

mod common;

use core::sync::atomic::{AtomicU64, Ordering};

use common::{assert_pending, expect_ready, poll_once};
use futures_lite::future::{self, block_on};
use tally_queue::{GetError, PutError, Queue, TryGetError, TryPutError};

/// J1 `test_task_done_underflow`: CPython raises `ValueError` for a `task_done` with
/// nothing outstanding. Here an acknowledgement needs a `Delivery`, which only a get can
/// produce and which is consumed by its resolution, so neither an acknowledgement without
/// an item nor a second one can be written. What is left to check: no delivery appears
/// out of nothing, and the counts never go below zero.
#[test]
fn cpython_task_done_underflow() {
    let queue = Queue::<u8>::unbounded();
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
    assert_eq!(queue.unfinished(), 0);
    let ledger = queue.ledger();
    assert_eq!(ledger, Default::default());
}

/// J2 `test_task_done`: put 0..99, two workers sum and acknowledge, `join` returns only
/// after the sum is 4950; then the workers stop (CPython cancels them; here a graceful
/// shutdown ends their loops).
#[test]
fn cpython_task_done() {
    let queue = Queue::unbounded();
    let sum = AtomicU64::new(0);
    for n in 0..100u64 {
        queue.try_put(n).unwrap();
    }
    let worker = || async {
        while let Ok(delivery) = queue.get().await {
            future::yield_now().await;
            sum.fetch_add(*delivery, Ordering::Relaxed);
            delivery.succeed();
        }
    };
    let check = async {
        let ledger = queue.join().await;
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
        assert_eq!(ledger.succeeded, 100);
        queue.shutdown();
    };
    block_on(future::zip(check, future::zip(worker(), worker())));
    assert!(queue.ledger().is_balanced());
}

/// The blocking twin of J2, with threads.
#[test]
#[cfg(feature = "std")]
fn cpython_task_done_threads() {
    let queue = Queue::unbounded();
    let sum = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Ok(delivery) = queue.get_blocking() {
                    sum.fetch_add(*delivery, Ordering::Relaxed);
                    delivery.succeed();
                }
            });
        }
        for n in 0..100u64 {
            queue.put_blocking(n).unwrap();
        }
        let ledger = queue.join_blocking();
        assert_eq!(sum.load(Ordering::Relaxed), 4950);
        assert_eq!(ledger.succeeded, 100);
        queue.shutdown();
    });
}

/// J3 `test_join_empty_queue`: two joins on an empty queue both return at once.
#[test]
fn cpython_join_empty_queue() {
    let queue = Queue::<u8>::unbounded();
    assert_eq!(expect_ready(&mut queue.join()).accepted, 0);
    assert_eq!(expect_ready(&mut queue.join()).accepted, 0);
}

/// J4 `test_format`: the debug form shows the capacity and the pending-acknowledgement
/// count (CPython: `<Queue maxsize=1 _queue=['data'] tasks=1>`).
#[test]
fn cpython_format() {
    let queue = Queue::bounded(1).unwrap();
    assert_eq!(
        format!("{queue:?}"),
        "Queue { capacity: Some(1), len: 0, unfinished: 0, shut_down: false, .. }"
    );
    queue.try_put("data").unwrap();
    assert_eq!(
        format!("{queue:?}"),
        "Queue { capacity: Some(1), len: 1, unfinished: 1, shut_down: false, .. }"
    );
}

/// S1 `test_format` after shutdown (CPython: `... tasks=1 shutdown>`).
#[test]
fn cpython_format_shutdown() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put("data").unwrap();
    queue.shutdown();
    assert_eq!(
        format!("{queue:?}"),
        "Queue { capacity: Some(1), len: 1, unfinished: 1, shut_down: true, .. }"
    );
}

/// S2 `test_shutdown_empty`.
#[test]
fn cpython_shutdown_empty() {
    let queue = Queue::<&str>::unbounded();
    let mut getter = queue.get();
    assert_pending(&mut getter);
    queue.shutdown();
    assert_eq!(queue.len(), 0);
    expect_ready(&mut queue.join());
    assert_eq!(expect_ready(&mut getter).unwrap_err(), GetError::ShutDown);

    assert!(matches!(
        block_on(queue.put("data")),
        Err(PutError::ShutDown("data"))
    ));
    assert!(matches!(
        queue.try_put("data"),
        Err(TryPutError::ShutDown("data"))
    ));
    assert_eq!(block_on(queue.get()).unwrap_err(), GetError::ShutDown);
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
}

/// S3 `test_shutdown_nonempty`.
#[test]
fn cpython_shutdown_nonempty() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put("data").unwrap();
    let mut joiner = queue.join();
    let mut putter = queue.put("data2");
    assert_pending(&mut joiner);
    assert_pending(&mut putter);

    queue.shutdown();
    assert_eq!(queue.len(), 1);
    // CPython: the putter raises `QueueShutDown`; here it also gets "data2" back.
    assert!(matches!(
        expect_ready(&mut putter),
        Err(PutError::ShutDown("data2"))
    ));
    let delivery = queue.try_get().unwrap();
    assert_eq!(*delivery, "data");
    // Taken but not acknowledged: the joiner still waits.
    assert_pending(&mut joiner);

    assert!(queue.try_put("data3").unwrap_err().is_shut_down());
    assert!(block_on(queue.put("data3")).unwrap_err().is_shut_down());
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert_eq!(block_on(queue.get()).unwrap_err(), GetError::ShutDown);

    delivery.succeed();
    let ledger = expect_ready(&mut joiner);
    assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
}

/// S4 `test_shutdown_immediate`.
#[test]
fn cpython_shutdown_immediate() {
    let queue = Queue::unbounded();
    let id = queue.try_put("data").unwrap();
    let mut joiner = queue.join();
    assert_pending(&mut joiner);

    // CPython discards the item silently; here it comes back, recorded as discarded.
    assert_eq!(queue.shutdown_now(), vec![(id, "data")]);
    assert_eq!(queue.len(), 0);
    let ledger = expect_ready(&mut joiner);
    assert_eq!((ledger.accepted, ledger.discarded), (1, 1));

    assert!(queue.try_put("data").unwrap_err().is_shut_down());
    assert!(block_on(queue.put("data")).unwrap_err().is_shut_down());
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);
    assert_eq!(block_on(queue.get()).unwrap_err(), GetError::ShutDown);
}

/// S5 `test_shutdown_immediate_with_unfinished`.
#[test]
fn cpython_shutdown_immediate_with_unfinished() {
    let queue = Queue::unbounded();
    queue.try_put("data").unwrap();
    let second = queue.try_put("data").unwrap();
    let mut joiner = queue.join();
    let held = queue.try_get().unwrap();
    assert_pending(&mut joiner);

    assert_eq!(queue.shutdown_now(), vec![(second, "data")]);
    assert_pending(&mut joiner);
    // Resolving after the shutdown is allowed, and releases the joiner.
    held.succeed();
    let ledger = expect_ready(&mut joiner);
    assert_eq!((ledger.succeeded, ledger.discarded), (1, 1));
}

/// Cancellation family, `test_cancelled_getters_not_being_held_in_self_getters` and
/// `test_get_cancelled_race`: a getter woken by a put and then cancelled does not take the
/// item with it; the next getter gets it.
#[test]
fn cpython_get_cancelled_race() {
    let queue = Queue::unbounded();
    let mut first = queue.get();
    let mut second = queue.get();
    assert_pending(&mut first);
    assert_pending(&mut second);
    queue.try_put("a").unwrap(); // wakes `first`
    drop(first); // cancelled before it ran: its wake-up passes to `second`
    let delivery = expect_ready(&mut second).unwrap();
    assert_eq!(*delivery, "a");
    delivery.succeed();
    assert_eq!(queue.ledger().succeeded, 1);
}

/// `test_cancelled_get_one_pending_reader` / `test_why_are_getters_waiting`: one pending
/// reader, cancelled; the item stays buffered.
#[test]
fn cpython_cancelled_get_one_pending_reader() {
    let queue = Queue::unbounded();
    let mut getter = queue.get();
    assert_pending(&mut getter);
    queue.try_put(1).unwrap();
    drop(getter);
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
}

/// `test_cancelled_get_many_pending_readers` and `test_get_with_waiting_putters`: many
/// pending readers, some cancelled; the others receive exactly the items put.
#[test]
fn cpython_cancelled_get_many_pending_readers() {
    let queue = Queue::unbounded();
    let mut getters: Vec<_> = (0..6).map(|_| queue.get()).collect();
    for getter in &mut getters {
        assert_pending(getter);
    }
    for n in 0..4 {
        queue.try_put(n).unwrap();
    }
    // Cancel every other getter, including some that were woken.
    let mut kept = Vec::new();
    for (i, getter) in getters.into_iter().enumerate() {
        if i % 2 == 1 {
            kept.push(getter);
        }
    }
    let mut got = Vec::new();
    for mut getter in kept {
        if let core::task::Poll::Ready(res) = poll_once(&mut getter) {
            got.push(res.unwrap().succeed());
        }
    }
    while let Ok(delivery) = queue.try_get() {
        got.push(delivery.succeed());
    }
    got.sort_unstable();
    assert_eq!(got, vec![0, 1, 2, 3]);
}

/// `test_cancelled_put` / `test_cancelled_puts_not_being_held_in_self_putters`: a blocked
/// putter that is cancelled did not enqueue, and does not hold the freed slot hostage.
#[test]
fn cpython_cancelled_put() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let mut cancelled = queue.put(1);
    let mut waiting = queue.put(2);
    assert_pending(&mut cancelled);
    assert_pending(&mut waiting);
    queue.try_get().unwrap().succeed(); // frees a slot, wakes `cancelled`
    drop(cancelled); // its wake-up passes to `waiting`
    assert_eq!(expect_ready(&mut waiting).unwrap().get(), 1);
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.succeeded), (2, 2));
}

/// `test_cancelled_put_silence_value_error_exception` family: a putter woken after a slot
/// freed and cancelled before it ran either enqueued or did not, never both.
#[test]
fn cpython_cancelled_put_either_or() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let mut putter = queue.put(1);
    assert_pending(&mut putter);
    queue.try_get().unwrap().succeed();
    drop(putter);
    // Not polled after the slot freed: not enqueued.
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.ledger().accepted, 1);
    queue.try_put(3).unwrap();
}

/// `test_put_cancelled_race` / `test_blocking_put_wait` with capacity 2: a putter blocked
/// behind 0 and 1 enqueues 2 after them; order is kept.
#[test]
fn cpython_put_order_with_blocked_putter() {
    let queue = Queue::bounded(2).unwrap();
    queue.try_put(0).unwrap();
    queue.try_put(1).unwrap();
    let mut putter = queue.put(2);
    assert_pending(&mut putter);
    assert_eq!(queue.try_get().unwrap().succeed(), 0);
    expect_ready(&mut putter).unwrap();
    assert_eq!(queue.try_get().unwrap().succeed(), 1);
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
}

/// `test_nonblocking_put_exception` / `test_get_nowait_empty`: `put_nowait` on a full
/// queue and `get_nowait` on an empty one.
#[test]
fn cpython_nowait_full_and_empty() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    assert!(matches!(queue.try_put(2), Err(TryPutError::Full(2))));
    queue.try_get().unwrap().succeed();
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::Empty);
}

/// `put_nowait` checks shutdown before fullness: a full, shut-down queue says shut down.
#[test]
fn cpython_shutdown_checked_before_full() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    queue.shutdown();
    assert!(matches!(queue.try_put(2), Err(TryPutError::ShutDown(2))));
    assert_eq!(queue.ledger().accepted, 1);
}

/// Shutdown wakes all blocked getters; each refuses once the buffer is empty, or takes a
/// remaining item.
#[test]
fn cpython_shutdown_wakes_all_getters() {
    let queue = Queue::<u8>::unbounded();
    let mut getters: Vec<_> = (0..3).map(|_| queue.get()).collect();
    for getter in &mut getters {
        assert_pending(getter);
    }
    queue.shutdown();
    for getter in &mut getters {
        assert_eq!(expect_ready(getter).unwrap_err(), GetError::ShutDown);
    }
}

/// A getter woken by a put that had not resumed when an immediate shutdown ran: CPython
/// 3.13.0 loses that item to the drain (the getter raises `QueueShutDown`, the item is
/// gone, `_unfinished_tasks` is 0). Here the drain returns it.
#[test]
fn cpython_woken_getter_vs_immediate_shutdown() {
    let queue = Queue::unbounded();
    let mut getter = queue.get();
    assert_pending(&mut getter);
    let id = queue.try_put("x").unwrap();
    let drained = queue.shutdown_now();
    assert_eq!(drained, vec![(id, "x")]);
    assert_eq!(expect_ready(&mut getter).unwrap_err(), GetError::ShutDown);
    assert_eq!(queue.ledger().discarded, 1);
}

/// Immediate after graceful still drains; shutdown is idempotent.
#[test]
fn cpython_immediate_after_graceful() {
    let queue = Queue::unbounded();
    let id = queue.try_put(1).unwrap();
    assert!(queue.shutdown());
    assert!(!queue.shutdown());
    assert_eq!(queue.shutdown_now(), vec![(id, 1)]);
    assert!(queue.shutdown_now().is_empty());
}

/// Graceful shutdown does not wake joiners; the count decides.
#[test]
fn cpython_graceful_shutdown_does_not_release_join() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let mut joiner = queue.join();
    assert_pending(&mut joiner);
    queue.shutdown();
    assert_pending(&mut joiner);
    queue.try_get().unwrap().succeed();
    expect_ready(&mut joiner);
}
