//! loom models of what becomes of a delivered item on the heap queue: its ending
//! (resolved, retried, abandoned and redelivered, cancelled), the joins and the waits for
//! settling that endings wake, an immediate shutdown's drain racing a return, and the
//! ledger that counts them. Puts and gets meeting are `tests/loom_puts_and_gets.rs`. Run
//! with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test -p tally-queue --test
//! loom_endings --release`.
#![cfg(loom)]

mod loom_common;

use std::sync::Arc;

use loom::thread;
use loom_common::{drive, waiting, Events};
use tally_queue::{AbandonPolicy, DeadReason, GetError, OwnedDelivery, Queue};

/// put vs get+resolve vs join: a join that starts after the put returned comes back only
/// once the item was resolved, whatever the interleaving (level-triggered, no lost
/// wake-up).
#[test]
fn put_get_resolve_join() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.get_blocking().unwrap().succeed())
        };
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1u8).unwrap())
        };
        producer.join().unwrap();
        let ledger = queue.join_blocking();
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
        assert_eq!(consumer.join().unwrap(), 1);
        assert!(queue.ledger().is_balanced());
    });
}

/// Cancellation vs a delivery being handed out (and awaiting `cancelled()`): whatever the
/// interleaving, the handler's `cancelled()` completes (no lost wake-up: loom reports a
/// handler stuck waiting as a deadlock), and once the request has returned every delivery,
/// including one handed out later, reports `is_cancelled`.
#[test]
fn cancel_in_flight_vs_delivery_handed_out() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let handler = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let job = queue.try_get_owned().unwrap();
                let mut cancelled = Box::pin(job.cancelled());
                drive(&mut cancelled);
                drop(cancelled);
                assert!(job.is_cancelled());
                job.uncertain()
            })
        };
        let requester = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.cancel_in_flight())
        };
        assert!(requester.join().unwrap());
        // Taken after the request returned (the handler may or may not have taken its own).
        let later = queue.try_get().unwrap();
        assert!(later.is_cancelled());
        let later = later.uncertain();
        assert_eq!(handler.join().unwrap() + later, 3);
        let ledger = queue.join_blocking();
        assert_eq!(ledger.uncertain, 2);
        assert!(ledger.is_balanced());
    });
}

/// A retry vs a worker that takes the retried item and succeeds vs a join: the join
/// returns with the item succeeded, whichever of the retry's steps the worker's ending
/// lands between. The item was retried once before the race, so the lane has carried an
/// item and this retry does not race concurrent-queue's first-block install.
#[test]
fn retry_vs_worker_vs_join() {
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(2).unwrap());
        queue.try_put(1u8).unwrap();
        assert!(queue.try_get_owned().unwrap().retry().is_ok());
        let delivery = queue.try_get_owned().unwrap();
        let retrier = thread::spawn(move || delivery.retry().is_ok());
        // The worker spins rather than waits: the model is about the ending and the
        // joiner, and a waiting getter would multiply its interleavings.
        let worker = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || loop {
                match queue.try_get() {
                    Ok(delivery) => break delivery.succeed(),
                    Err(_) => thread::yield_now(),
                }
            })
        };
        let ledger = queue.join_blocking();
        assert!(retrier.join().unwrap());
        assert_eq!(worker.join().unwrap(), 1);
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
        assert!(ledger.is_balanced());
    });
}

/// A retry under an unfinished limit vs a put that waits for room: the retried item holds
/// its one place, so the put (the second unfinished item of two) gets in.
#[test]
fn retry_vs_blocked_put_at_an_unfinished_limit() {
    loom::model(|| {
        let queue = Arc::new(Queue::with_unfinished_limit(2).unwrap());
        queue.try_put(1u8).unwrap();
        let delivery = queue.try_get_owned().unwrap();
        let retrier = thread::spawn(move || delivery.retry().is_ok());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.put_blocking(2).is_ok())
        };
        assert!(retrier.join().unwrap());
        assert!(producer.join().unwrap());
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.buffered), (2, 2));
    });
}

/// A retry that a shutdown refuses vs a join whose deadline has passed: the join reports
/// the delivery still in flight, whichever of the retry's steps its last check reads
/// between.
#[test]
fn refused_retry_vs_timed_join() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(2).unwrap());
        queue.try_put(1u8).unwrap();
        let delivery = queue.try_get_owned().unwrap();
        queue.shutdown();
        let retrier = thread::spawn(move || delivery.retry().err().unwrap());
        let mut join = std::pin::pin!(queue.join_until(async {}));
        let Poll::Ready(joined) = join.as_mut().poll(&mut Context::from_waker(Waker::noop()))
        else {
            panic!("a join whose deadline has passed is ready at its first poll");
        };
        let delivery = retrier.join().unwrap();
        let timed_out = joined.expect_err("the delivery was in flight throughout");
        assert_eq!(timed_out.ledger().in_flight, 1);
        assert_eq!(delivery.succeed(), 1);
    });
}

// ------------------------------------------------------------------ the engine's invariants

/// Monotone counters: an observer takes two ledger snapshots while a worker puts, takes,
/// succeeds, takes and rejects. Each of the six counts of a later snapshot is at least the
/// earlier one's; every snapshot balances, and its gauges are at most `accepted`.
fn ledger_snapshots_never_go_down(queue: fn() -> Queue<u8>) {
    loom::model(move || {
        let queue = Arc::new(queue());
        queue.try_put(1).unwrap();
        let worker = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                queue.try_put(2).unwrap();
                queue.try_get().unwrap().succeed();
                queue.try_get().unwrap().reject();
            })
        };
        let first = queue.ledger();
        let second = queue.ledger();
        worker.join().unwrap();
        let last = queue.ledger();
        for ledger in [&first, &second, &last] {
            assert!(ledger.is_balanced(), "{ledger:?}");
            assert!(ledger.buffered <= ledger.accepted, "{ledger:?}");
            assert!(ledger.in_flight <= ledger.accepted, "{ledger:?}");
        }
        for (earlier, later) in [(&first, &second), (&second, &last)] {
            let counts = |l: &tally_queue::Ledger| {
                [
                    l.accepted,
                    l.succeeded,
                    l.rejected,
                    l.uncertain,
                    l.abandoned,
                    l.discarded,
                ]
            };
            let (before, after) = (counts(earlier), counts(later));
            assert!(
                before.iter().zip(&after).all(|(b, a)| b <= a),
                "a count went down: {earlier:?} then {later:?}"
            );
        }
        assert_eq!(
            (
                last.accepted,
                last.succeeded,
                last.rejected,
                last.buffered,
                last.in_flight
            ),
            (2, 1, 1, 0, 0)
        );
    });
}

/// [`ledger_snapshots_never_go_down`] on the ring, whose put and take step the counts in
/// its words.
#[test]
fn ledger_snapshots_never_go_down_on_the_ring() {
    ledger_snapshots_never_go_down(|| Queue::bounded(2).unwrap());
}

/// [`ledger_snapshots_never_go_down`] on the unbounded list.
#[test]
fn ledger_snapshots_never_go_down_on_the_list() {
    ledger_snapshots_never_go_down(Queue::unbounded);
}

/// [`ledger_snapshots_never_go_down`] on the growable buffer (a journaled unbounded queue),
/// whose counts are words of their own.
#[test]
fn ledger_snapshots_never_go_down_on_the_journaled_growable_buffer() {
    ledger_snapshots_never_go_down(|| Queue::unbounded().with_journal(Arc::new(Events::default())));
}

/// A queue whose abandoned deliveries come back for a second attempt, on the ring.
fn redelivering() -> Arc<Queue<u8>> {
    let policy = AbandonPolicy::redeliver(2).unwrap();
    Arc::new(Queue::bounded(1).unwrap().with_abandon_policy(policy))
}

/// A queue under `Redeliver { max_attempts: 3 }` on the ring, and the second delivery of
/// its one item (put as 1, delivered and dropped once before): the lane has carried an
/// item already, so a model's return does not race the lane's first push, which installs
/// the lane's first block (concurrent-queue's own step, checked by its own loom tests).
fn redelivered_once() -> (Arc<Queue<u8>>, OwnedDelivery<u8>) {
    let policy = AbandonPolicy::redeliver(3).unwrap();
    let queue = Arc::new(Queue::bounded(1).unwrap().with_abandon_policy(policy));
    queue.try_put(1).unwrap();
    drop(queue.try_get_owned().unwrap());
    let second = queue.try_get_owned().unwrap();
    assert_eq!(second.attempt(), 2);
    (queue, second)
}

/// What a delivery was: its attempt and its item, once resolved as succeeded.
fn succeed_noting_attempt(delivery: tally_queue::Delivery<'_, u8>) -> (u32, u8) {
    (delivery.attempt(), delivery.succeed())
}

/// A returned item (`give_back`) vs a get registering to wait for work: the get is woken
/// for the item in the lane, however its registration and re-check interleave with the
/// return's push and notification (a lost wake-up deadlocks the model), and gets it as
/// its second attempt.
fn returned_item_vs_registering_get(give_back: fn(OwnedDelivery<u8>)) {
    loom::model(move || {
        let queue = redelivering();
        queue.try_put(1).unwrap();
        let first = queue.try_get_owned().unwrap();
        let returner = thread::spawn(move || give_back(first));
        let got = queue.get_blocking().map(succeed_noting_attempt);
        returner.join().unwrap();
        assert_eq!(got, Ok((2, 1)), "delivered as attempt 2");
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
        assert!(ledger.is_balanced());
    });
}

/// [`returned_item_vs_registering_get`] for an item redelivered after its delivery was
/// dropped.
#[test]
fn redelivered_item_vs_registering_get() {
    returned_item_vs_registering_get(drop);
}

/// [`returned_item_vs_registering_get`] for a retried item.
#[test]
fn retried_item_vs_registering_get() {
    returned_item_vs_registering_get(|delivery| {
        assert!(delivery.retry().is_ok());
    });
}

/// The lane inside the turn check: an item comes back (`give_back`) to a get that waits
/// for work (registered before), which the return wakes and grants its turn; then the
/// woken get races a barging `try_get`. The barger never takes the returned item the get
/// was woken for, and the get takes it, as its next attempt (a get left asleep beside it
/// deadlocks the model). (The return racing a get's registration is
/// [`returned_item_vs_registering_get`].)
fn returned_item_vs_woken_get_vs_barging_try_get(give_back: fn(OwnedDelivery<u8>)) {
    use std::future::Future;
    use std::task::{Context, Waker};
    loom::model(move || {
        let (queue, first) = redelivered_once();
        let mut get = queue.get_owned();
        let pending = std::pin::Pin::new(&mut get).poll(&mut Context::from_waker(Waker::noop()));
        assert!(pending.is_pending(), "nothing to take before the return");
        give_back(first);
        let getter = thread::spawn(move || {
            drive(&mut get)
                .ok()
                .map(|delivery| (delivery.attempt(), delivery.succeed()))
        });
        let barged = queue.try_get().ok().map(succeed_noting_attempt);
        if barged.is_some() {
            // Nothing is left for the get: a shutdown lets it return, and the model fail
            // below rather than deadlock.
            queue.shutdown();
        }
        let got = getter.join().unwrap();
        assert_eq!(barged, None, "the barger took the woken get's item");
        assert_eq!(got, Some((3, 1)), "the woken get took it, as attempt 3");
        let ledger = queue.join_blocking();
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1));
        assert!(ledger.is_balanced());
    });
}

/// [`returned_item_vs_woken_get_vs_barging_try_get`] for an item redelivered after its
/// delivery was dropped.
#[test]
fn redelivered_item_vs_woken_get_vs_barging_try_get() {
    returned_item_vs_woken_get_vs_barging_try_get(drop);
}

/// [`returned_item_vs_woken_get_vs_barging_try_get`] for a retried item.
#[test]
fn retried_item_vs_woken_get_vs_barging_try_get() {
    returned_item_vs_woken_get_vs_barging_try_get(|delivery| {
        assert!(delivery.retry().is_ok());
    });
}

/// A delivery abandoned under `Redeliver` vs `shutdown_now`: its return races the lane's
/// close and drain. The item ends exactly once: handed back by the drain, or refused by
/// the closed lane and kept as a dead letter (`ShutDownNow`); the ledger counts it
/// discarded and balances.
#[test]
fn abandoned_delivery_vs_shutdown_now() {
    loom::model(|| {
        let queue = Arc::new(
            Queue::<u8>::bounded(1)
                .unwrap()
                .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap()),
        );
        let id = queue.try_put(5).unwrap();
        let held = queue.try_get_owned().unwrap();
        let abandoner = thread::spawn(move || drop(held));
        let drained = queue.shutdown_now();
        abandoner.join().unwrap();
        let dead = queue.take_dead_letters();
        assert_eq!(drained.len() + dead.len(), 1, "the item ends exactly once");
        if let Some(letter) = dead.first() {
            assert_eq!(
                (letter.id, letter.reason, letter.item),
                (id, DeadReason::ShutDownNow, 5)
            );
        }
        if let Some(entry) = drained.first() {
            assert_eq!(*entry, (id, 5));
        }
        let ledger = queue.join_blocking();
        assert_eq!((ledger.discarded, ledger.abandoned), (1, 0));
        assert!(ledger.is_balanced());
    });
}

/// Redelivery and `shutdown_now` vs a get waiting for the return (registered before the
/// race: on an empty queue under `Redeliver`, with a delivery in flight that could come
/// back). The main thread drops the delivery and shuts down at once, in the order given
/// (`abandon_first`); the return racing the drain itself is
/// [`abandoned_delivery_vs_shutdown_now`]. The item ends exactly once: taken again by the
/// get (and resolved), handed back by the drain, or dead-lettered as discarded; the get
/// never hangs (it is told of the end once nothing can come back: a lost wake-up
/// deadlocks the model) and the ledger balances.
fn redelivery_and_shutdown_now_vs_waiting_get(abandon_first: bool) {
    use std::future::Future;
    use std::task::{Context, Waker};
    loom::model(move || {
        let (queue, held) = redelivered_once();
        let id = held.id();
        let mut get = queue.get_owned();
        let pending = std::pin::Pin::new(&mut get).poll(&mut Context::from_waker(Waker::noop()));
        assert!(pending.is_pending(), "nothing to take before the return");
        let getter = thread::spawn(move || drive(&mut get).ok().map(|job| job.succeed()));
        let drained = if abandon_first {
            drop(held);
            queue.shutdown_now()
        } else {
            let drained = queue.shutdown_now();
            drop(held);
            drained
        };
        let got = getter.join().unwrap();
        let dead = queue.take_dead_letters();
        let ends = usize::from(got.is_some()) + drained.len() + dead.len();
        assert_eq!(ends, 1, "the item ends exactly once");
        if let Some(letter) = dead.first() {
            assert_eq!((letter.id, letter.reason), (id, DeadReason::ShutDownNow));
        }
        if let Some(entry) = drained.first() {
            assert_eq!(*entry, (id, 1));
        }
        let ledger = queue.join_blocking();
        assert_eq!(ledger.succeeded, u64::from(got.is_some()));
        assert_eq!(ledger.discarded, 1 - ledger.succeeded);
        assert!(ledger.is_balanced());
    });
}

/// [`redelivery_and_shutdown_now_vs_waiting_get`]: the delivery is dropped (its item goes
/// back into the lane, waking the get), then the queue shuts down immediately.
#[test]
fn redelivery_then_shutdown_now_vs_waiting_get() {
    redelivery_and_shutdown_now_vs_waiting_get(true);
}

/// [`redelivery_and_shutdown_now_vs_waiting_get`]: the queue shuts down immediately (the
/// get must keep waiting: a delivery is still out), then the delivery is dropped, refused
/// by the closed lane and dead-lettered, which settles the queue and tells the get.
#[test]
fn shutdown_now_then_redelivery_vs_waiting_get() {
    redelivery_and_shutdown_now_vs_waiting_get(false);
}

/// A held retry let go (its future dropped) vs `shutdown_now`: the item is handed back
/// by the drain whichever comes first (still held, or already in the lane), never lost,
/// never a dead letter.
#[test]
fn held_retry_let_go_vs_shutdown_now() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        queue.try_put(5).unwrap();
        let held = queue
            .try_get_owned()
            .unwrap()
            .retry_at(std::future::pending::<()>())
            .unwrap();
        let timer = thread::spawn(move || drop(held));
        let drained = queue.shutdown_now();
        timer.join().unwrap();
        assert_eq!(drained.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [5]);
        assert!(queue.take_dead_letters().is_empty());
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.discarded, ledger.buffered, ledger.in_flight),
            (1, 0, 0)
        );
    });
}

/// An abandoned delivery held for its redelivery (its claim released on a timer thread)
/// vs `shutdown_now`: the item is handed back by the drain (still held, or already in the
/// lane) or, abandoned after the drain, is a dead letter counted discarded; never lost,
/// never counted twice.
#[test]
fn abandoned_redelivery_held_and_released_vs_shutdown_now() {
    loom::model(|| {
        let claims = Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = Arc::clone(&claims);
        let queue = Queue::<u8>::unbounded()
            .with_abandon_policy(AbandonPolicy::redeliver(3).unwrap())
            .with_redelivery_delay(move |claim| keep.lock().unwrap().push(claim));
        queue.try_put(5).unwrap();
        let job = queue.try_get_owned().unwrap();
        let worker = {
            let claims = Arc::clone(&claims);
            thread::spawn(move || {
                drop(job);
                let claim = claims.lock().unwrap().pop();
                drop(claim);
            })
        };
        let drained = queue.shutdown_now();
        worker.join().unwrap();
        let dead = queue.take_dead_letters();
        let back: Vec<u8> = drained
            .iter()
            .map(|(_, n)| *n)
            .chain(dead.iter().map(|d| d.item))
            .collect();
        assert_eq!(back, [5]);
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.discarded, ledger.buffered, ledger.in_flight),
            (1, 0, 0),
            "{ledger:?}"
        );
    });
}

/// A held retry let go vs a waiting getter vs a ledger snapshot: the getter gets the
/// item's next attempt, and no snapshot counts the item twice (held and returned). The
/// item was retried once before the race, so the lane has carried an item (its first
/// push installs concurrent-queue's first block, which no model here is about).
#[test]
fn held_retry_let_go_vs_getter_vs_ledger() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        queue.try_put(5).unwrap();
        assert!(queue.try_get_owned().unwrap().retry().is_ok());
        let held = queue
            .try_get_owned()
            .unwrap()
            .retry_at(std::future::pending::<()>())
            .unwrap();
        let timer = thread::spawn(move || drop(held));
        let getter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let job = queue.get_blocking().unwrap();
                (job.attempt(), job.succeed())
            })
        };
        let ledger = queue.ledger();
        assert!(
            ledger.buffered + ledger.in_flight + ledger.succeeded == 1,
            "{ledger:?}"
        );
        timer.join().unwrap();
        assert_eq!(getter.join().unwrap(), (3, 5));
        assert_eq!(queue.join_blocking().succeeded, 1);
    });
}

/// Two endings on threads of their own vs a join, on an unbounded queue (the list, whose
/// joiners are counted in its endings' word): the ending that settles the
/// queue reads the joiner in its own read-modify-write and wakes it, or the joiner's
/// re-check after counting itself in sees the queue settled; the join always returns, with
/// both endings counted.
#[test]
fn endings_vs_join_on_the_list() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let enders: Vec<_> = (0..2)
            .map(|_| {
                let delivery = queue.try_get_owned().unwrap();
                thread::spawn(move || delivery.succeed())
            })
            .collect();
        let ledger = queue.join_blocking();
        assert_eq!((ledger.accepted, ledger.succeeded), (2, 2), "{ledger:?}");
        let mut items: Vec<u8> = enders.into_iter().map(|e| e.join().unwrap()).collect();
        items.sort_unstable();
        assert_eq!(items, [1, 2]);
    });
}

/// Queues whose endings watch for settling (returns may come after a graceful shutdown):
/// on the ring, on the list, and on the journaled growable buffer.
fn watched_queues() -> [fn() -> Queue<u8>; 3] {
    fn policy() -> AbandonPolicy {
        AbandonPolicy::redeliver(2).unwrap()
    }
    [
        || Queue::bounded(2).unwrap().with_abandon_policy(policy()),
        || Queue::unbounded().with_abandon_policy(policy()),
        || {
            Queue::unbounded()
                .with_journal(Arc::new(tally_queue::Record::new()))
                .with_abandon_policy(policy())
        },
    ]
}

/// The last ending vs a graceful shutdown vs a get waiting on the empty queue (registered
/// before the race), on a queue whose returns may come after the shutdown: the get can
/// only be told `ShutDown` once nothing can come back, so the ending that settles the
/// shut-down queue (or the shutdown that finds it settled) must wake it. A lost wake-up
/// leaves `drive` blocked, which loom reports as a deadlock.
fn last_ending_vs_shutdown_vs_waiting_get(queue: fn() -> Queue<u8>) {
    loom::model(move || {
        let queue = Arc::new(queue());
        queue.try_put(1).unwrap();
        let delivery = queue.try_get_owned().unwrap();
        let mut get = waiting(queue.get_owned());
        let getter = thread::spawn(move || drive(&mut get).map(|job| job.succeed()));
        let ender = thread::spawn(move || delivery.succeed());
        assert!(queue.shutdown());
        assert_eq!(ender.join().unwrap(), 1);
        assert!(matches!(getter.join().unwrap(), Err(GetError::ShutDown)));
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (1, 1), "{ledger:?}");
        assert!(ledger.is_balanced());
    });
}

#[test]
fn last_ending_vs_shutdown_vs_waiting_get_on_the_watched_ring() {
    last_ending_vs_shutdown_vs_waiting_get(watched_queues()[0]);
}

#[test]
fn last_ending_vs_shutdown_vs_waiting_get_on_the_watched_list() {
    last_ending_vs_shutdown_vs_waiting_get(watched_queues()[1]);
}

#[test]
fn last_ending_vs_shutdown_vs_waiting_get_on_the_watched_growable_buffer() {
    last_ending_vs_shutdown_vs_waiting_get(watched_queues()[2]);
}

/// The last ending vs `shutdown_until` with a deadline that never comes: the shutdown's
/// wait for the work in flight must be woken by the ending that settles the queue (or find
/// it settled), and reports the drain finished in time with the ending counted.
fn last_ending_vs_shutdown_until(queue: fn() -> Queue<u8>) {
    loom::model(move || {
        let queue = Arc::new(queue());
        queue.try_put(1).unwrap();
        let delivery = queue.try_get_owned().unwrap();
        let ender = thread::spawn(move || delivery.succeed());
        let mut until = Box::pin(queue.shutdown_until(std::future::pending::<()>()));
        let closed = drive(&mut until);
        assert!(closed.drained_in_time);
        assert_eq!(closed.ledger.succeeded, 1, "{:?}", closed.ledger);
        assert_eq!(ender.join().unwrap(), 1);
    });
}

#[test]
fn last_ending_vs_shutdown_until_on_the_ring() {
    last_ending_vs_shutdown_until(|| Queue::bounded(2).unwrap());
}

#[test]
fn last_ending_vs_shutdown_until_on_the_list() {
    last_ending_vs_shutdown_until(Queue::unbounded);
}

#[test]
fn last_ending_vs_shutdown_until_on_the_watched_ring() {
    last_ending_vs_shutdown_until(watched_queues()[0]);
}

#[test]
fn last_ending_vs_shutdown_until_on_the_watched_list() {
    last_ending_vs_shutdown_until(watched_queues()[1]);
}

/// Two endings on threads of their own vs a join, on a queue whose endings watch for
/// settling: every ending looks at settling by the flag in its own word, the one that
/// settles the queue also reads the joiner there, and the join always returns with both
/// endings counted.
fn endings_vs_join_when_watched(queue: fn() -> Queue<u8>) {
    loom::model(move || {
        let queue = Arc::new(queue());
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let enders: Vec<_> = (0..2)
            .map(|_| {
                let delivery = queue.try_get_owned().unwrap();
                thread::spawn(move || delivery.succeed())
            })
            .collect();
        let ledger = queue.join_blocking();
        assert_eq!((ledger.accepted, ledger.succeeded), (2, 2), "{ledger:?}");
        for ender in enders {
            ender.join().unwrap();
        }
    });
}

#[test]
fn endings_vs_join_on_the_watched_ring() {
    endings_vs_join_when_watched(watched_queues()[0]);
}

#[test]
fn endings_vs_join_on_the_watched_list() {
    endings_vs_join_when_watched(watched_queues()[1]);
}

#[test]
fn endings_vs_join_on_the_ring() {
    endings_vs_join_when_watched(|| Queue::bounded(2).unwrap());
}
