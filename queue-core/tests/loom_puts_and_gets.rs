//! loom models of puts and gets meeting on the heap queue: a waiter woken for what
//! arrives (a get for an item, a put for a slot), the turn a woken waiter holds against a
//! barging `try_get` or `try_put`, a notification passed on by a waiter that leaves,
//! batches, and a shutdown or the last worker's exit meeting puts and gets. What becomes
//! of a delivered item is `tests/loom_endings.rs`. Run with `RUSTFLAGS="--cfg loom"
//! LOOM_MAX_PREEMPTIONS=3 cargo test -p tally-queue --test loom_puts_and_gets --release`.
#![cfg(loom)]

mod loom_common;

use std::sync::Arc;

use loom::thread;
use loom_common::{drive, drive_with, waiting, Events, Woken};
use tally_queue::{DeadReason, GetError, JobEvent, PutError, Queue, TryPutError};

/// put vs graceful shutdown vs a waiting get (registered before the race): an accepted
/// item is always delivered; the getter sees `ShutDown` only if nothing was accepted.
#[test]
fn put_vs_shutdown_vs_get() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let mut get = waiting(queue.get_owned());
        let consumer = thread::spawn(move || drive(&mut get).map(|d| d.succeed()));
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(7u8))
        };
        queue.shutdown();
        let put = producer.join().unwrap();
        let got = consumer.join().unwrap();
        match put {
            Ok(_) => assert_eq!(got, Ok(7)),
            Err(err) => {
                assert!(matches!(err, TryPutError::ShutDown(7)));
                assert_eq!(got, Err(GetError::ShutDown));
            }
        }
        let ledger = queue.join_blocking();
        assert!(ledger.is_balanced());
        assert_eq!(ledger.accepted, u64::from(put.is_ok()));
    });
}

/// shutdown_now vs a woken getter: an accepted item is delivered or drained, exactly once,
/// never lost. The getter waits from before the race; the put that wakes it and the drain
/// run in that order on the main thread, against it.
#[test]
fn shutdown_now_vs_woken_getter() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let mut get = waiting(queue.get_owned());
        let consumer = thread::spawn(move || drive(&mut get).map(|d| d.succeed()).ok());
        let put = queue.try_put(9u8);
        let drained = queue.shutdown_now();
        let got = consumer.join().unwrap();
        assert!(put.is_ok());
        let delivered = usize::from(got == Some(9));
        assert_eq!(delivered + drained.len(), 1);
        let ledger = queue.join_blocking();
        assert_eq!(
            (ledger.succeeded, ledger.discarded),
            (delivered as u64, drained.len() as u64)
        );
        assert!(ledger.is_balanced());
    });
}

/// A put blocked on a full queue vs a get that frees the slot vs shutdown: the put either
/// lands or gets its item back, and never hangs. At capacity 1 (two slots) the put checks
/// the bound by reading `head`.
#[test]
fn blocked_put_vs_get_vs_shutdown() {
    blocked_put_vs_get_vs_shutdown_at(1);
}

/// As [`blocked_put_vs_get_vs_shutdown`], at a capacity equal to the ring's slot count,
/// where a put checks the bound by its slot's stamp and reads `head` only once the slot is
/// found taken.
#[test]
fn blocked_put_vs_get_vs_shutdown_at_the_slot_count() {
    blocked_put_vs_get_vs_shutdown_at(2);
}

fn blocked_put_vs_get_vs_shutdown_at(capacity: usize) {
    loom::model(move || {
        let queue = Arc::new(Queue::bounded(capacity).unwrap());
        for item in 0..capacity {
            queue.try_put(item as u8).unwrap();
        }
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.put_blocking(2))
        };
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_get().map(|d| d.succeed()).ok())
        };
        queue.shutdown();
        let put = producer.join().unwrap();
        let got = consumer.join().unwrap();
        assert!(matches!(put, Ok(_) | Err(PutError::ShutDown(2))));
        let drained = queue.shutdown_now();
        let ledger = queue.join_blocking();
        assert_eq!(ledger.accepted, capacity as u64 + u64::from(put.is_ok()));
        // The outcomes against what the threads saw (`succeeded` is derived from the
        // endings, so the ledger's own balance would not catch a miscount here).
        assert_eq!(ledger.succeeded, u64::from(got.is_some()));
        assert_eq!(ledger.discarded, drained.len() as u64);
        assert_eq!(
            drained.len() + usize::from(got.is_some()),
            ledger.accepted as usize
        );
    });
}

/// A put blocked on a queue full at its ring's slot count vs the get that frees a slot,
/// with nothing else to wake the put: however the get's claim and stamp interleave with
/// the put's registration and re-check, the put is woken or finds the slot, and lands.
#[test]
fn blocked_put_vs_get_at_the_slot_count() {
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(2).unwrap());
        queue.try_put(0u8).unwrap();
        queue.try_put(1u8).unwrap();
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.put_blocking(2))
        };
        assert_eq!(queue.try_get().unwrap().succeed(), 0);
        assert!(producer.join().unwrap().is_ok(), "the put was woken");
        assert_eq!(queue.try_get().unwrap().succeed(), 1);
        assert_eq!(queue.try_get().unwrap().succeed(), 2);
        assert!(queue.ledger().is_balanced());
    });
}

/// The last worker leaving vs a put blocked on a full queue: the put wakes with its item.
#[test]
fn worker_exit_vs_blocked_put() {
    loom::model(|| {
        let queue = Arc::new(Queue::bounded(1).unwrap());
        queue.try_put(1u8).unwrap();
        let worker = queue.worker_owned();
        let exiting = thread::spawn(move || drop(worker));
        let put = queue.put_blocking(2);
        exiting.join().unwrap();
        assert!(matches!(put, Err(PutError::NoWorkers(2))));
        assert_eq!(queue.ledger().buffered, 1);
    });
}

/// A get that registers, is cancelled, and waits again, vs a put: the cancelled waiter is
/// counted out without hiding the second wait from the put's notification.
#[test]
fn cancelled_get_vs_put() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};

    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(3u8).unwrap())
        };
        let mut context = Context::from_waker(Waker::noop());
        let mut first = Box::pin(queue.get());
        let got = match first.as_mut().poll(&mut context) {
            Poll::Ready(delivery) => delivery.unwrap().succeed(),
            Poll::Pending => {
                drop(first);
                queue.get_blocking().unwrap().succeed()
            }
        };
        producer.join().unwrap();
        assert_eq!(got, 3);
        assert!(queue.join_blocking().is_balanced());
    });
}

/// A waker for loom models: counts its wake-ups in a loom atomic, for a model that asserts
/// how often a waker ran.
struct Flag(loom::sync::atomic::AtomicUsize);

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, loom::sync::atomic::Ordering::SeqCst);
    }
}

fn flag() -> (Arc<Flag>, std::task::Waker) {
    let flag = Arc::new(Flag(loom::sync::atomic::AtomicUsize::new(0)));
    (flag.clone(), std::task::Waker::from(flag))
}

/// An async get vs a put on another thread: the put's notification takes the get's waker
/// out of the getters' waiter list under the list's lock, and the putting thread wakes it
/// once its put is done, outside every lock. However the get's registration and re-check
/// interleave with the put, the get is served (a lost wake-up leaves `drive` blocked,
/// which loom reports as a deadlock).
#[test]
fn async_get_vs_put_on_another_thread() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(4).unwrap())
        };
        let mut get = queue.get();
        let got = drive(&mut get).unwrap().succeed();
        producer.join().unwrap();
        assert_eq!(got, 4);
    });
}

/// Two notifiers at once: two async gets wait, and two threads (a spawned one and the
/// main thread) each put one item. Each put's notification takes one get's waker out of
/// the getters' waiter list under the list's lock, and the putting thread wakes it before
/// its put returns: once both puts have returned, each get's waker has run exactly once,
/// whichever put reached which get, and both gets are served.
#[test]
fn two_puts_wake_two_async_gets_before_returning() {
    use std::future::Future;
    use std::task::{Context, Poll};
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let (flags, wakers): (Vec<_>, Vec<_>) = (0..2).map(|_| flag()).unzip();
        let mut gets = [queue.get(), queue.get()];
        for (get, waker) in gets.iter_mut().zip(&wakers) {
            let poll = std::pin::Pin::new(get).poll(&mut Context::from_waker(waker));
            assert!(poll.is_pending(), "nothing was put yet");
        }
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1).unwrap())
        };
        queue.try_put(2).unwrap();
        producer.join().unwrap();
        let mut items = Vec::new();
        for ((get, waker), flag) in gets.iter_mut().zip(&wakers).zip(&flags) {
            let woken = flag.0.load(loom::sync::atomic::Ordering::SeqCst);
            assert_eq!(
                woken, 1,
                "each get's waker ran once, before the puts returned"
            );
            match std::pin::Pin::new(get).poll(&mut Context::from_waker(waker)) {
                Poll::Ready(delivery) => items.push(delivery.unwrap().succeed()),
                Poll::Pending => panic!("a woken get with an item buffered is served"),
            }
        }
        items.sort_unstable();
        assert_eq!(items, [1, 2]);
        assert!(queue.ledger().is_balanced());
    });
}

/// A re-entrant waker: the getter's waker puts into the queue that is waking it, while
/// another thread puts too. No deadlock (loom reports one as a failure), and every item is
/// accounted for.
#[test]
fn reentrant_waker_puts_into_the_waking_queue() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let inner = Arc::downgrade(&queue);
        struct Reenter(Arc<Woken>, std::sync::Weak<Queue<u8>>);
        impl std::task::Wake for Reenter {
            fn wake(self: Arc<Self>) {
                self.wake_by_ref();
            }
            fn wake_by_ref(self: &Arc<Self>) {
                if let Some(queue) = self.1.upgrade() {
                    let _ = queue.try_put(9);
                }
                self.0.wake_by_ref();
            }
        }
        let woken = Arc::new(Woken::default());
        let waker = std::task::Waker::from(Arc::new(Reenter(Arc::clone(&woken), inner)));
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1).unwrap())
        };
        let mut get = queue.get();
        let first = drive_with(&mut get, &woken, &waker).unwrap().succeed();
        producer.join().unwrap();
        drop(get);
        let mut rest = Vec::new();
        while let Ok(delivery) = queue.try_get() {
            rest.push(delivery.succeed());
        }
        assert!(first == 1 || first == 9);
        let ledger = queue.ledger();
        assert_eq!(ledger.accepted as usize, 1 + rest.len());
        assert!(ledger.is_balanced());
    });
}

/// The guarded terminal notification: a shutdown racing an async getter and an async
/// putter (on an unfinished-limit queue, so both wait at once) wakes both, and each sees
/// the shutdown.
#[test]
fn shutdown_wakes_async_getter_and_putter() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::with_unfinished_limit(1).unwrap());
        queue.try_put(1).unwrap();
        let held = queue.try_get().unwrap();
        let closer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                queue.shutdown();
            })
        };
        let mut get = queue.get();
        let got = drive(&mut get);
        let mut put = queue.put(2);
        let put_result = drive(&mut put);
        closer.join().unwrap();
        assert!(got.is_err());
        assert!(matches!(put_result, Err(PutError::ShutDown(2))));
        held.succeed();
        assert!(queue.join_blocking().is_balanced());
    });
}

/// Reservation, getters: a put hands its item to a blocked get while a barging `try_get`
/// races it. The item goes to exactly one of them, and at rest nothing stays reserved (a
/// later put is free for `try_get`).
#[test]
fn reserved_item_vs_barging_try_get() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let (getter, producer, barged) = getter_vs_put_vs_barging_try_get(&queue);
        producer.join().unwrap();
        if barged.is_some() {
            // The getter still waits: give it an item of its own.
            queue.try_put(2).unwrap();
        }
        let got = getter.join().unwrap();
        assert!(got.is_some());
        assert_eq!(
            usize::from(barged.is_some()) + 1,
            queue.ledger().accepted as usize
        );
        queue.try_put(3).unwrap();
        assert_eq!(queue.try_get().map(|d| d.succeed()).ok(), Some(3));
    });
}

/// The race of the getter models: a blocking get on its own thread, a `try_put(1)` on
/// another, and a barging `try_get` on the caller's. Returns the two threads and what the
/// barging try took.
fn getter_vs_put_vs_barging_try_get(
    queue: &Arc<Queue<u8>>,
) -> (
    thread::JoinHandle<Option<u8>>,
    thread::JoinHandle<tally_queue::JobId>,
    Option<u8>,
) {
    let getter = {
        let queue = Arc::clone(queue);
        thread::spawn(move || queue.get_blocking().map(|d| d.succeed()).ok())
    };
    let producer = {
        let queue = Arc::clone(queue);
        thread::spawn(move || queue.try_put(1).unwrap())
    };
    let barged = queue.try_get().map(|d| d.succeed()).ok();
    (getter, producer, barged)
}

/// Reservation, putters: a get frees the slot of a full queue for a blocked put while a
/// barging `try_put` races it. Exactly one of them lands, and at rest no slot stays
/// reserved (the queue fills to its capacity again).
#[test]
fn reserved_slot_vs_barging_try_put() {
    reserved_slot_vs_barging_try_put_at(1);
}

/// As [`reserved_slot_vs_barging_try_put`], where the bound is the slot count: a put
/// without a turn then reads room past the owed slot off the stamp of the slot ahead.
#[test]
fn reserved_slot_vs_barging_try_put_at_the_slot_count() {
    reserved_slot_vs_barging_try_put_at(2);
}

fn reserved_slot_vs_barging_try_put_at(capacity: u8) {
    loom::model(move || {
        let queue = Arc::new(Queue::<u8>::bounded(usize::from(capacity)).unwrap());
        for item in 0..capacity {
            queue.try_put(item).unwrap();
        }
        let done = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let putter = {
            let (queue, done) = (Arc::clone(&queue), Arc::clone(&done));
            thread::spawn(move || {
                let landed = queue.put_blocking(1).is_ok();
                done.store(true, loom::sync::atomic::Ordering::SeqCst);
                landed
            })
        };
        let consumer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_get().map(|d| d.succeed()).ok())
        };
        let barged = queue.try_put(200).is_ok();
        let freed = consumer.join().unwrap();
        // Free slots until the putter is done.
        let mut drained = Vec::new();
        if freed.is_none() || barged {
            while !done.load(loom::sync::atomic::Ordering::SeqCst) {
                if let Ok(delivery) = queue.try_get() {
                    drained.push(delivery.succeed());
                }
                thread::yield_now();
            }
        }
        assert!(putter.join().unwrap());
        while let Ok(delivery) = queue.try_get() {
            drained.push(delivery.succeed());
        }
        let ledger = queue.ledger();
        assert_eq!(ledger.accepted, u64::from(capacity) + 1 + u64::from(barged));
        assert!(ledger.is_balanced());
        for item in 0..capacity {
            queue.try_put(item).unwrap();
        }
        assert!(queue.try_put(250).unwrap_err().is_full());
    });
}

/// Passing a turn on as a dropped get does: a get asleep is notified for an item (its turn
/// granted) and dropped before it runs again, while a second get starts waiting. The turn
/// reaches the second get, or reaches nobody and is revoked, and then the second get's
/// check finds the item free: either way the second get is served (a lost hand-off
/// deadlocks the model).
fn notified_get_dropped_vs_registering_get(queue: Queue<u8>) {
    use std::future::Future;
    use std::task::{Context, Waker};
    let queue = Arc::new(queue);
    let mut first = Box::pin(queue.get());
    let pending = first
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending();
    assert!(pending);
    let second = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || queue.get_blocking().map(|d| d.succeed()).ok())
    };
    // The put notifies the first get, which waits longest, and grants it its turn.
    queue.try_put(5).unwrap();
    drop(first);
    assert_eq!(second.join().unwrap(), Some(5));
}

/// [`notified_get_dropped_vs_registering_get`] on the ring (a bound of one, read from
/// `head`).
#[test]
fn notified_get_dropped_vs_registering_get_on_the_ring() {
    loom::model(|| notified_get_dropped_vs_registering_get(Queue::bounded(1).unwrap()));
}

/// [`notified_get_dropped_vs_registering_get`] on the unbounded list, whose getters are
/// counted in its tail word as on the ring.
#[test]
fn notified_get_dropped_vs_registering_get_on_the_list() {
    loom::model(|| notified_get_dropped_vs_registering_get(Queue::unbounded()));
}

/// The last two producers leaving at once vs a worker waiting for the end: exactly one
/// exit shuts the queue down, the item put before (in the setup: a put by a live producer
/// cannot race the shutdown its exit makes) is delivered, and the worker then stops.
#[test]
fn last_producers_leave_vs_waiting_worker() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let first = queue.producer_owned();
        let second = first.clone();
        first.queue().try_put(1).unwrap();
        let worker = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut got = Vec::new();
                while let Ok(job) = queue.get_blocking() {
                    got.push(job.succeed());
                }
                got
            })
        };
        let leaving = thread::spawn(move || drop(first));
        drop(second);
        leaving.join().unwrap();
        assert_eq!(worker.join().unwrap(), [1]);
        assert!(queue.is_shut_down());
        assert!(queue.join_blocking().is_balanced());
    });
}

/// A skipped notification, getters (ring): a put's notification counted as pending
/// reaches nobody (the getter has counted itself in, not yet inserted its listener), a
/// barging `try_get` takes that item before the getter checks again, and a second put,
/// seeing the getter covered, skips its own notification. The first put must still wake
/// the getter for the second item. The put, the barging take and the second put run in
/// that order on one thread (the order the race needs), against the getter on the main
/// thread.
#[test]
fn skipped_notification_vs_barging_try_get() {
    loom::model(|| skipped_getter_notification(Queue::bounded(2).unwrap()));
}

/// As [`skipped_notification_vs_barging_try_get`], on the growable buffer: the getters
/// are counted in their class's own word, where a put claims its notification after
/// pushing its item (`Counted::claim`), and the withdrawal of a notification that reached
/// nobody must carry the skipped put's item to the getter's re-check.
#[test]
fn skipped_notification_in_own_word_vs_barging_try_get() {
    loom::model(|| skipped_getter_notification(Queue::unbounded()));
}

fn skipped_getter_notification(queue: Queue<u8>) {
    let queue = Arc::new(queue);
    let producer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            queue.try_put(1).unwrap();
            let barged = queue.try_get().map(|d| d.succeed()).ok();
            queue.try_put(2).unwrap();
            barged
        })
    };
    let got = queue.get_blocking().map(|d| d.succeed());
    assert!(got.is_ok(), "the getter was woken");
    let barged = producer.join().unwrap();
    let rest = succeed_the_rest(&queue);
    assert_eq!(usize::from(barged.is_some()) + 1 + rest, 2);
    assert!(queue.ledger().is_balanced());
}

/// A skipped notification, putters (ring): as above with the roles swapped. A get's
/// notification counted as pending reaches nobody (the putter has counted itself in, not
/// yet inserted its listener), a barging `try_put` fills the freed slot before the putter
/// checks again, and a second get, seeing the putter covered, skips its own notification.
/// The first get must still wake the putter for the second slot. The get, the barging
/// put and the second get run in that order on one thread, against the putter on the
/// main thread.
#[test]
fn skipped_notification_vs_barging_try_put() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(1).unwrap());
        queue.try_put(0).unwrap();
        let barger = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let first = queue.try_get().map(|d| d.succeed()).ok();
                let (barged, second) = barge_put_then_get(&queue);
                (first, barged, second)
            })
        };
        assert!(queue.put_blocking(9).is_ok(), "the putter was woken");
        let (first, barged, second) = barger.join().unwrap();
        let taken =
            usize::from(first.is_some()) + usize::from(second.is_some()) + succeed_the_rest(&queue);
        assert_eq!(taken, 2 + usize::from(barged));
        assert!(queue.ledger().is_balanced());
    });
}

/// A skipped notification, putters of an unfinished-limit queue, counted in their class's
/// own word (an ending, not a get, frees their slot): an ending's notification counted as
/// pending reaches nobody (the putter has counted itself in, not yet inserted its
/// listener), a barging `try_put` takes the freed slot before the putter checks again, and
/// the ending of what the barger takes, seeing the putter covered, skips its own
/// notification. The putter must still be woken. The ending, the barging put and the
/// second ending run in that order on one thread, against the putter on the main thread.
#[test]
fn skipped_notification_in_own_word_vs_barging_try_put() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::with_unfinished_limit(1).unwrap());
        queue.try_put(0).unwrap();
        let first = queue.try_get_owned().unwrap();
        let barger = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                first.succeed();
                barge_put_then_get(&queue)
            })
        };
        assert!(queue.put_blocking(9).is_ok(), "the putter was woken");
        let (barged, second) = barger.join().unwrap();
        let taken = usize::from(second.is_some()) + succeed_the_rest(&queue);
        assert_eq!(taken, 1 + usize::from(barged));
        assert!(queue.ledger().is_balanced());
    });
}

/// The barging half of the putter models: a `try_put` (whether it landed), then a
/// `try_get` resolved as succeeded (what it took).
fn barge_put_then_get(queue: &Queue<u8>) -> (bool, Option<u8>) {
    let barged = queue.try_put(5).is_ok();
    (barged, queue.try_get().map(|d| d.succeed()).ok())
}

/// Takes every buffered item and resolves it as succeeded; returns how many there were.
fn succeed_the_rest(queue: &Queue<u8>) -> usize {
    let mut taken = 0;
    while let Ok(delivery) = queue.try_get() {
        delivery.succeed();
        taken += 1;
    }
    taken
}

/// A put vs `shutdown_now` vs a `try_get` on the growable buffer, which keeps its closed
/// flag in the word ids are drawn from: a put that drew an id is accepted, and one that
/// lands after the drain finds the buffer drained. The item is handed back by the drain,
/// delivered, or dead-lettered (`ShutDownNow`, 0 attempts) exactly once, never lost, or
/// the put is refused with its item; the ledger settles and balances. With a journal, it
/// hears of each fate in order.
fn put_vs_shutdown_now_vs_try_get(queue: Queue<u8>, events: Option<Arc<Events>>) {
    let queue = Arc::new(queue);
    let producer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || queue.try_put(1))
    };
    let drainer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || queue.shutdown_now())
    };
    let got = queue.try_get().ok().map(|delivery| delivery.succeed());
    let put = producer.join().unwrap();
    let drained = drainer.join().unwrap();
    let dead = queue.take_dead_letters();
    let ledger = queue.join_blocking();
    assert!(ledger.is_balanced(), "{ledger:?}");
    assert_eq!(queue.unfinished(), 0);
    let fates = usize::from(got.is_some()) + drained.len() + dead.len();
    let id = match put {
        Ok(id) => id,
        Err(refused) => {
            assert!(matches!(refused, TryPutError::ShutDown(1)));
            assert_eq!(fates, 0);
            assert_eq!(ledger.accepted, 0);
            return;
        }
    };
    assert_eq!(fates, 1, "{got:?} {drained:?} {}", dead.len());
    if let Some(letter) = dead.first() {
        assert_eq!(
            (letter.id, letter.attempts, letter.reason, letter.item),
            (id, 0, DeadReason::ShutDownNow, 1)
        );
    }
    if let Some(entry) = drained.first() {
        assert_eq!(*entry, (id, 1));
    }
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.discarded),
        (
            1,
            u64::from(got.is_some()),
            (drained.len() + dead.len()) as u64
        )
    );
    if let Some(events) = events {
        let recorded = events.0.lock().unwrap().clone();
        let fate: &[JobEvent] = if got.is_some() {
            &[
                JobEvent::Delivered { id, attempt: 1 },
                JobEvent::Ended {
                    id,
                    outcome: tally_queue::Outcome::Succeeded,
                },
            ]
        } else if dead.is_empty() {
            &[JobEvent::Discarded(id)]
        } else {
            &[
                JobEvent::Discarded(id),
                JobEvent::DeadLettered { id, attempts: 0 },
            ]
        };
        assert_eq!(recorded[0], JobEvent::Accepted(id));
        assert_eq!(&recorded[1..], fate);
    }
}

/// [`put_vs_shutdown_now_vs_try_get`] on an unbounded queue (the list).
#[test]
fn list_put_vs_shutdown_now_vs_try_get() {
    loom::model(|| put_vs_shutdown_now_vs_try_get(Queue::unbounded(), None));
}

/// [`put_vs_shutdown_now_vs_try_get`] on a journaled queue (bounded, so the
/// growable buffer counts its slots too), whose put runs the journal between drawing its
/// id and pushing its item.
#[test]
fn journaled_put_vs_shutdown_now_vs_try_get() {
    loom::model(|| {
        let events = Arc::new(Events::default());
        let queue = Queue::bounded(2).unwrap().with_journal(Arc::clone(&events));
        put_vs_shutdown_now_vs_try_get(queue, Some(events));
    });
}

/// Turns redeemed after the take: a get asleep before two puts is woken for the first, and
/// a barging thread's two `try_get`s race it. The barger takes at most one item (the one
/// put before the get's turn was granted, or the one the woken get left for it), the get
/// is served, and nobody sleeps with an item left.
fn woken_get_vs_barging_try_get_vs_two_puts(queue: Queue<u8>) {
    use std::future::Future;
    use std::task::{Context, Waker};

    let queue = Arc::new(queue);
    let mut get = queue.get_owned();
    let first = std::pin::Pin::new(&mut get).poll(&mut Context::from_waker(Waker::noop()));
    assert!(first.is_pending(), "the get waits before the puts");
    let getter = thread::spawn(move || drive(&mut get).ok().map(|delivery| delivery.succeed()));
    let producer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            queue.try_put(1).unwrap();
            queue.try_put(2).unwrap();
        })
    };
    let barged: Vec<u8> = (0..2)
        .filter_map(|_| queue.try_get().ok().map(|delivery| delivery.succeed()))
        .collect();
    producer.join().unwrap();
    let got = getter.join().unwrap();
    assert!(barged.len() <= 1, "the barger took {barged:?}");
    assert!(got.is_some(), "the woken get was served");
    let rest = succeed_the_rest(&queue);
    assert_eq!(barged.len() + 1 + rest, 2);
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.succeeded), (2, 2));
}

/// [`woken_get_vs_barging_try_get_vs_two_puts`] on the ring, whose take reads the turns
/// owed once it sees the item.
#[test]
fn woken_get_vs_barging_try_get_vs_two_puts_on_the_ring() {
    loom::model(|| woken_get_vs_barging_try_get_vs_two_puts(Queue::bounded(2).unwrap()));
}

/// [`woken_get_vs_barging_try_get_vs_two_puts`] on the unbounded list.
#[test]
fn woken_get_vs_barging_try_get_vs_two_puts_on_the_list() {
    loom::model(|| woken_get_vs_barging_try_get_vs_two_puts(Queue::unbounded()));
}

/// [`woken_get_vs_barging_try_get_vs_two_puts`] on the growable buffer (a journaled
/// unbounded queue), whose take reads the turns owed after counting the items it could pop.
#[test]
fn woken_get_vs_barging_try_get_vs_two_puts_on_the_journaled_growable_buffer() {
    loom::model(|| {
        woken_get_vs_barging_try_get_vs_two_puts(
            Queue::unbounded().with_journal(Arc::new(Events::default())),
        )
    });
}

/// A get woken for an item and dropped before it ran passes its turn on while a second get
/// registers: the second get always gets the item. (The turn is revoked before the hand-off
/// looks for a listener: revoked after, the second get's re-check could still see the item
/// kept, and it would sleep with nobody left to wake it.)
#[test]
fn woken_get_dropped_while_another_registers() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let mut leaver = Box::pin(queue.get());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(std::future::Future::poll(leaver.as_mut(), &mut cx).is_pending());
        let waiter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.get_blocking().unwrap().succeed())
        };
        queue.try_put(1).unwrap();
        drop(leaver);
        assert_eq!(waiter.join().unwrap(), 1);
    });
}

// ------------------------------------------------------------------------- batches

/// A batch put and a `get_many` asleep for it, on the ring and on the growable buffer: the
/// batch's one pass of wake-ups reaches the sleeper (a lost wake-up shows as a deadlock),
/// and every item comes out once, in order.
fn put_many_wakes_a_waiting_get_many(queue: Queue<u8>) {
    let queue = Arc::new(queue);
    let consumer = {
        let queue = Arc::clone(&queue);
        thread::spawn(move || {
            let mut seen = Vec::new();
            let mut batch = Vec::new();
            while seen.len() < 2 {
                queue.get_many_blocking(&mut batch, 2).unwrap();
                seen.extend(batch.drain(..).map(|delivery| delivery.succeed()));
            }
            seen
        })
    };
    let mut ids = Vec::new();
    assert_eq!(queue.try_put_many(&mut vec![1, 2], &mut ids), Ok(2));
    assert_eq!(consumer.join().unwrap(), [1, 2]);
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.succeeded), (2, 2));
}

/// [`put_many_wakes_a_waiting_get_many`] on the ring.
#[test]
fn put_many_wakes_a_waiting_get_many_on_the_ring() {
    loom::model(|| put_many_wakes_a_waiting_get_many(Queue::bounded(2).unwrap()));
}

/// [`put_many_wakes_a_waiting_get_many`] on the unbounded list.
#[test]
fn put_many_wakes_a_waiting_get_many_on_the_list() {
    loom::model(|| put_many_wakes_a_waiting_get_many(Queue::unbounded()));
}

/// [`put_many_wakes_a_waiting_get_many`] on the growable buffer (a journaled unbounded
/// queue).
#[test]
fn put_many_wakes_a_waiting_get_many_on_the_journaled_growable_buffer() {
    loom::model(|| {
        put_many_wakes_a_waiting_get_many(
            Queue::unbounded().with_journal(Arc::new(Events::default())),
        )
    });
}

/// The turn rule against a batch: a get asleep before a put is woken for it, then a batch
/// of two follows, and a barging `try_get_many` races them. The barger never takes what
/// the woken get holds a turn for: the get is served, and every item comes out once.
#[test]
fn woken_get_vs_barging_try_get_many_vs_put_and_put_many() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(4).unwrap());
        let mut get = waiting(queue.get_owned());
        let getter = thread::spawn(move || drive(&mut get).ok().map(|delivery| delivery.succeed()));
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                queue.try_put(1).unwrap();
                queue
                    .try_put_many(&mut vec![2, 3], &mut Vec::new())
                    .unwrap();
            })
        };
        let mut barged = Vec::new();
        let _ = queue.try_get_many(&mut barged, 3);
        let barged: Vec<u8> = barged.into_iter().map(|d| d.succeed()).collect();
        producer.join().unwrap();
        let got = getter.join().unwrap();
        assert!(got.is_some(), "the woken get was served");
        let rest = succeed_the_rest(&queue);
        assert_eq!(barged.len() + 1 + rest, 3);
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (3, 3));
    });
}

/// A batch put racing a graceful shutdown, then a drain by `try_get_many`: every item the
/// batch had accepted is delivered, the refused one comes back with the rest left in the
/// vector, and the drain ends with `ShutDown` only after the last accepted item.
#[test]
fn put_many_vs_shutdown_vs_get_many() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut items = vec![1, 2];
                let mut ids = Vec::new();
                let refused = queue.try_put_many(&mut items, &mut ids).err();
                (ids.len(), refused.map(TryPutError::into_inner), items)
            })
        };
        queue.shutdown();
        let mut seen = Vec::new();
        let mut batch = Vec::new();
        loop {
            match queue.try_get_many(&mut batch, 2) {
                Ok(_) => seen.extend(batch.drain(..).map(|delivery| delivery.succeed())),
                Err(tally_queue::TryGetError::ShutDown) => break,
                Err(tally_queue::TryGetError::Empty) => thread::yield_now(),
            }
        }
        let (accepted, refused, left) = producer.join().unwrap();
        assert_eq!(seen.len(), accepted);
        let mut all = seen.clone();
        all.extend(refused);
        all.extend(left);
        assert_eq!(
            all,
            [1, 2],
            "every item delivered, refused or left, in order"
        );
        let ledger = queue.join_blocking();
        assert_eq!(ledger.succeeded as usize, accepted);
    });
}

/// A `get_many` that waits, is woken by a batch put, and takes its turn's item and then
/// the rest in one claim, racing the producer's own barging `try_get_many` right after
/// the put: the barger never takes what the woken batch holds a turn for, unless it came
/// before the turn was granted (then one more put serves the batch), and every item is
/// delivered once.
#[test]
fn woken_get_many_vs_barging_try_get_many_vs_put_many() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(4).unwrap());
        let getter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut batch = Vec::new();
                queue.get_many_blocking(&mut batch, 2).unwrap();
                batch.into_iter().map(|d| d.succeed()).collect::<Vec<u8>>()
            })
        };
        assert_eq!(queue.try_put_many(&mut vec![1, 2], &mut Vec::new()), Ok(2));
        let mut batch = Vec::new();
        let _ = queue.try_get_many(&mut batch, 2);
        let barged: Vec<u8> = batch.into_iter().map(|d| d.succeed()).collect();
        if barged.len() == 2 {
            // Both taken before the getter's turn was granted: one more serves it.
            queue.try_put(3).unwrap();
        }
        let got = getter.join().unwrap();
        assert!(!got.is_empty(), "the woken batch was served");
        let rest = succeed_the_rest(&queue);
        let mut all = [got, barged].concat();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len() + rest, queue.ledger().accepted as usize);
        assert_eq!(queue.ledger().succeeded, queue.ledger().accepted);
    });
}

/// A waiter's node reused: the main thread's first get waits, is notified by a put and
/// served, and its poll that sees the notification frees its node in the getters' waiter
/// list (under a new generation); the main thread's second get, if it must wait, waits in
/// that same node while another thread puts. The put's notification takes the second
/// get's waker out under the list's lock, and the putting thread wakes it once its put is
/// done: the second get is served whatever the interleaving (a lost wake-up leaves `drive`
/// blocked, which loom reports as a deadlock), and the first get's waker, which the node
/// held before, is never woken again.
#[test]
fn reused_waiter_node_vs_put_on_another_thread() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(1).unwrap());
        let (first_flag, first_waker) = flag();
        let mut first = queue.get();
        {
            use std::future::Future;
            use std::task::Context;
            let poll = std::pin::Pin::new(&mut first).poll(&mut Context::from_waker(&first_waker));
            assert!(poll.is_pending(), "nothing was put yet");
        }
        queue.try_put(1).unwrap();
        assert_eq!(drive(&mut first).unwrap().succeed(), 1);
        drop(first);
        let woken_before = first_flag.0.load(loom::sync::atomic::Ordering::SeqCst);

        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(2).unwrap())
        };
        let mut second = queue.get();
        assert_eq!(drive(&mut second).unwrap().succeed(), 2);
        producer.join().unwrap();
        assert_eq!(
            first_flag.0.load(loom::sync::atomic::Ordering::SeqCst),
            woken_before,
            "a node reused by a later wait woke the task of the wait before it"
        );
        assert!(queue.ledger().is_balanced());
    });
}

/// [`notified_get_dropped_vs_registering_get`] with an async second get, on the unbounded
/// list: the turn the dropped get passes on reaches the second get, whose waker that
/// notification takes out of the getters' waiter list under the list's lock and the main
/// thread wakes once the drop is done, or reaches nobody and is revoked, and then the
/// second get's check finds the item free. Either way the second get is served (a lost
/// hand-off leaves `drive` blocked, which loom reports as a deadlock), and the ledger
/// balances.
#[test]
fn notified_get_dropped_vs_registering_async_get_on_the_list() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        let first = waiting(queue.get());
        let waiter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut second = queue.get();
                drive(&mut second).unwrap().succeed()
            })
        };
        queue.try_put(1).unwrap();
        drop(first);
        assert_eq!(waiter.join().unwrap(), 1);
        assert!(queue.ledger().is_balanced());
    });
}

/// A blocking get vs puts that cross a block boundary of the unbounded list (two slots a
/// block under loom): the put of the block's last slot links the next block while the
/// getter waits, is woken, and takes both items in order; the getter's get of the last
/// slot moves the head and frees the first block.
#[test]
fn blocking_get_vs_puts_across_a_block_of_the_list() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::unbounded());
        // The next put takes the first block's last slot.
        queue.try_put(0).unwrap();
        queue.try_get().unwrap().succeed();
        let getter = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let first = queue.get_blocking().unwrap().succeed();
                let second = queue.get_blocking().unwrap().succeed();
                (first, second)
            })
        };
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        assert_eq!(getter.join().unwrap(), (1, 2));
        let ledger = queue.ledger();
        assert_eq!((ledger.accepted, ledger.succeeded), (3, 3), "{ledger:?}");
    });
}

/// [`notified_get_dropped_vs_registering_get`] on the growable buffer (a journaled
/// unbounded queue), whose getters are counted in their class's own word.
#[test]
fn notified_get_dropped_vs_registering_get_on_the_journaled_growable_buffer() {
    loom::model(|| {
        notified_get_dropped_vs_registering_get(
            Queue::unbounded().with_journal(Arc::new(Events::default())),
        )
    });
}

/// [`skipped_notification_in_own_word_vs_barging_try_get`] on the growable buffer (a
/// journaled unbounded queue): the getters are counted in their class's own word.
#[test]
fn skipped_notification_in_own_word_vs_barging_try_get_on_the_journaled_growable_buffer() {
    loom::model(|| {
        skipped_getter_notification(Queue::unbounded().with_journal(Arc::new(Events::default())))
    });
}

/// A batch of two vs `shutdown_now` vs a `try_get` on the growable buffer (a journaled
/// unbounded queue): the batch counts each item's wake-up for the getters before the
/// journal hears of it, and after telling the getters looks once for a drain its items
/// landed after. Each item is delivered, handed back by the drain, dead-lettered, or
/// refused back to the caller, exactly once; the ledger balances and settles.
#[test]
fn journaled_put_many_vs_shutdown_now_vs_try_get() {
    loom::model(|| {
        let queue = Arc::new(Queue::unbounded().with_journal(Arc::new(Events::default())));
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut items = vec![1u8, 2];
                let mut ids = Vec::new();
                match queue.try_put_many(&mut items, &mut ids) {
                    Ok(_) => {}
                    Err(TryPutError::ShutDown(item)) => items.push(item),
                    Err(other) => panic!("{other:?}"),
                }
                (ids.len() as u64, items)
            })
        };
        let drainer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.shutdown_now())
        };
        let got = queue.try_get().ok().map(|delivery| delivery.succeed());
        let (accepted, refused) = producer.join().unwrap();
        let drained = drainer.join().unwrap();
        let dead = queue.take_dead_letters();
        let mut fates: Vec<u8> = got
            .into_iter()
            .chain(drained.iter().map(|&(_, item)| item))
            .chain(dead.iter().map(|letter| letter.item))
            .chain(refused)
            .collect();
        fates.sort_unstable();
        assert_eq!(fates, [1, 2], "each item ends once");
        let ledger = queue.ledger();
        assert!(ledger.is_balanced(), "{ledger:?}");
        assert_eq!(
            (ledger.accepted, ledger.succeeded, ledger.discarded),
            (
                accepted,
                u64::from(got.is_some()),
                (drained.len() + dead.len()) as u64
            ),
            "{ledger:?}"
        );
        assert_eq!(queue.unfinished(), 0);
    });
}

/// The last worker leaving vs a `try_put` vs a new worker, on a ring whose bound is its
/// slot count (where a put with nothing owed reads only the putters' word before its
/// claim): a put that starts after the exit returned, with no worker since, is refused;
/// one racing the exit lands or is refused, and whatever landed is buffered.
#[test]
fn last_worker_leaves_vs_put_vs_new_worker() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let worker = queue.worker_owned();
        let exiting = thread::spawn(move || drop(worker));
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1))
        };
        exiting.join().unwrap();
        assert!(matches!(queue.try_put(2), Err(TryPutError::NoWorkers(2))));
        let raced = producer.join().unwrap();
        assert!(matches!(raced, Ok(_) | Err(TryPutError::NoWorkers(1))));
        let adopted = queue.worker_owned();
        assert!(queue.try_put(3).is_ok(), "a new worker adopts the queue");
        let ledger = queue.ledger();
        assert_eq!(ledger.accepted, 1 + u64::from(raced.is_ok()));
        assert_eq!(ledger.buffered, ledger.accepted);
        drop(adopted);
    });
}

/// A shutdown vs a `try_put` on a ring whose bound is its slot count (as above): a put
/// after the shutdown returned is refused, one racing it lands or is refused, and the
/// drain hands back exactly what landed.
#[test]
fn shutdown_vs_put_read_by_the_putters_word() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || queue.try_put(1))
        };
        queue.shutdown();
        assert!(matches!(queue.try_put(2), Err(TryPutError::ShutDown(2))));
        let raced = producer.join().unwrap();
        assert!(matches!(raced, Ok(_) | Err(TryPutError::ShutDown(1))));
        let got = queue.try_get().map(|delivery| delivery.succeed()).ok();
        assert_eq!(got, raced.ok().map(|_| 1));
        assert!(queue.ledger().is_balanced());
    });
}

/// A thread that sees the queue shut down (`is_shut_down`) and then calls `try_put` is
/// refused with `ShutDown`: the put starts after the shutdown is observable.
#[test]
fn a_put_after_is_shut_down_reads_true_is_refused() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let closer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                queue.shutdown();
            })
        };
        if queue.is_shut_down() {
            let put = queue.try_put(1);
            assert!(
                matches!(put, Err(TryPutError::ShutDown(1))),
                "accepted after is_shut_down() returned true: {put:?}"
            );
        }
        closer.join().unwrap();
    });
}

/// A thread that sees the last worker gone through `workers()` (the queue had a worker, so zero
/// means it left) and then calls `try_put` is refused with `NoWorkers`.
#[test]
fn a_put_after_workers_reads_zero_is_refused() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let worker = queue.worker_owned();
        let observer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                if queue.workers() == 0 {
                    let put = queue.try_put(2);
                    assert!(
                        matches!(put, Err(TryPutError::NoWorkers(2))),
                        "accepted after workers() read 0: {put:?}"
                    );
                }
            })
        };
        drop(worker);
        observer.join().unwrap();
    });
}

/// A thread whose batch put was refused with `NoWorkers` (no worker registered since)
/// and then calls `try_put` is refused the same way: "every later put is refused".
#[test]
fn a_put_after_a_no_workers_refusal_is_refused() {
    loom::model(|| {
        let queue = Arc::new(Queue::<u8>::bounded(2).unwrap());
        let worker = queue.worker_owned();
        let producer = {
            let queue = Arc::clone(&queue);
            thread::spawn(move || {
                let mut items = vec![1u8];
                let mut ids = Vec::new();
                if let Err(TryPutError::NoWorkers(1)) = queue.try_put_many(&mut items, &mut ids) {
                    let put = queue.try_put(2);
                    assert!(
                        matches!(put, Err(TryPutError::NoWorkers(2))),
                        "accepted after NoWorkers was reported: {put:?}"
                    );
                }
            })
        };
        drop(worker);
        producer.join().unwrap();
    });
}

/// Two getters, each of which tries once (`try_get`), yields, and then waits (blocking, or
/// async under `loom::future::block_on`), against two `try_put`s: each getter takes one
/// item, and neither sleeps through its wake-up.
///
/// The yield is a switch that costs the model no preemption, so that the schedules where
/// the first getter is woken, takes its item and redeems its turn while the second one
/// registers are reached within the bound; there the second getter's re-check must not read
/// the first one's used turn as still owed. A user's `try_get` followed by a wait is that
/// sequence.
///
/// Explored with at most two preemptions whatever `LOOM_MAX_PREEMPTIONS` says: that finds
/// the lost wake-up above within seconds, while three takes about four minutes for the ring
/// alone.
fn tried_then_waiting_gets_vs_puts(queue: fn() -> Queue<u8>, blocking: bool) {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(2);
    model.check(move || {
        let queue = Arc::new(queue());
        let getters: Vec<_> = (0..2)
            .map(|_| {
                let queue = Arc::clone(&queue);
                thread::spawn(move || {
                    if let Ok(delivery) = queue.try_get() {
                        return delivery.succeed();
                    }
                    thread::yield_now();
                    if blocking {
                        queue.get_blocking().unwrap().succeed()
                    } else {
                        loom::future::block_on(queue.get()).unwrap().succeed()
                    }
                })
            })
            .collect();
        queue.try_put(1).unwrap();
        queue.try_put(2).unwrap();
        let mut got: Vec<_> = getters.into_iter().map(|g| g.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, [1, 2]);
    });
}

#[test]
fn tried_then_blocking_gets_vs_puts_on_the_ring() {
    tried_then_waiting_gets_vs_puts(|| Queue::bounded(2).unwrap(), true);
}

#[test]
fn tried_then_blocking_gets_vs_puts_on_the_list() {
    tried_then_waiting_gets_vs_puts(Queue::unbounded, true);
}

#[test]
fn tried_then_async_gets_vs_puts_on_the_ring() {
    tried_then_waiting_gets_vs_puts(|| Queue::bounded(2).unwrap(), false);
}

#[test]
fn tried_then_async_gets_vs_puts_on_the_list() {
    tried_then_waiting_gets_vs_puts(Queue::unbounded, false);
}
