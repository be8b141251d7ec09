//! Where the queue meets user code: deadline futures, wakers and item `Drop`s (DESIGN.md,
//! "At the seams"). Each test attacks one promise; a hang runs on its own thread with a time
//! limit ([`common::within`]), so a regression fails instead of hanging.

mod common;

use std::future::{ready, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
#[cfg(feature = "std")]
use std::thread;
#[cfg(feature = "std")]
use std::time::Duration;

use common::{
    counting_waker, expect_panic, panicking_waker, poll_once, poll_with, waker_fn, within,
};
use futures_lite::future::{block_on, poll_fn};
use tally_queue::{GetTimeoutError, PutTimeoutError, Queue};

// --------------------------------------------------------------- finished waits hold nothing

/// A `get_until` that timed out and is kept alive (pinned in the caller's scope) must not
/// keep a listener that swallows the next hand-off: the waiting get after it is woken.
#[test]
fn timed_out_get_until_kept_alive_does_not_swallow_a_wakeup() {
    let queue = Queue::unbounded();
    let (deadline, fire) = manual_deadline();
    let mut finished = pin!(queue.get_until(deadline));
    assert!(poll_once(&mut finished).is_pending());
    fire();
    assert!(matches!(
        poll_once(&mut finished),
        Poll::Ready(Err(GetTimeoutError::TimedOut))
    ));

    let (waker, woken) = counting_waker();
    let mut waiting = pin!(queue.get());
    assert!(poll_with(&mut waiting, &waker).is_pending());
    queue.try_put(1).unwrap();
    assert_eq!(
        woken.load(Ordering::SeqCst),
        1,
        "the waiting get was not woken"
    );
    let Poll::Ready(Ok(delivery)) = poll_with(&mut waiting, &waker) else {
        panic!("the woken get must take the item");
    };
    assert_eq!(delivery.succeed(), 1);
    // `finished` is still alive here, at the end of its scope.
}

/// The same for `get_owned_until`.
#[test]
fn timed_out_get_owned_until_kept_alive_does_not_swallow_a_wakeup() {
    let queue = Arc::new(Queue::<u8>::unbounded());
    let mut finished = pin!(queue.get_owned_until(ready(())));
    assert_eq!(
        poll_once(&mut finished).map(|r| r.map(|d| d.succeed())),
        Poll::Ready(Err(GetTimeoutError::TimedOut))
    );
    let (waker, woken) = counting_waker();
    let mut waiting = pin!(queue.get());
    assert!(poll_with(&mut waiting, &waker).is_pending());
    queue.try_put(1).unwrap();
    assert_eq!(
        woken.load(Ordering::SeqCst),
        1,
        "the waiting get was not woken"
    );
    // `finished` is still alive here, at the end of its scope.
}

/// A `put_until` that timed out and is kept alive must not swallow the slot freed for the
/// waiting put after it.
#[test]
fn timed_out_put_until_kept_alive_does_not_swallow_a_wakeup() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let mut finished = pin!(queue.put_until(1, ready(())));
    assert!(matches!(
        poll_once(&mut finished),
        Poll::Ready(Err(PutTimeoutError::TimedOut(1)))
    ));

    let (waker, woken) = counting_waker();
    let mut waiting = pin!(queue.put(2));
    assert!(poll_with(&mut waiting, &waker).is_pending());
    queue.try_get().unwrap().succeed();
    assert_eq!(
        woken.load(Ordering::SeqCst),
        1,
        "the waiting put was not woken"
    );
    assert!(matches!(
        poll_with(&mut waiting, &waker),
        Poll::Ready(Ok(_))
    ));
    // `finished` is still alive here, at the end of its scope.
}

/// The form: a finished `get_until` held in a struct field while another thread
/// blocks in `get_blocking`; the put must reach that thread.
#[test]
#[cfg(feature = "std")]
fn blocked_get_is_not_starved_by_a_finished_get_until_in_a_struct() {
    struct Holder<F> {
        _finished: F,
    }
    let queue = Arc::new(Queue::<u8>::unbounded());
    let mut finished = Box::pin(queue.get_owned_until(ready(())));
    assert!(poll_once(&mut finished).is_ready());
    let _holder = Holder {
        _finished: finished,
    };
    let getter = {
        let queue = queue.clone();
        thread::spawn(move || queue.get_blocking().map(|d| d.succeed()))
    };
    // Give the getter time to register; if it has not, it simply finds the item.
    thread::sleep(Duration::from_millis(50));
    queue.try_put(7).unwrap();
    let got = within(5, move || getter.join().unwrap());
    assert_eq!(got, Ok(7));
}

/// The other form: `put_blocking` on a queue with a free slot.
#[test]
#[cfg(feature = "std")]
fn blocked_put_is_not_starved_by_a_finished_put_until() {
    let queue = Arc::new(Queue::bounded(1).unwrap());
    queue.try_put(0).unwrap();
    let mut finished = Box::pin(queue.put_until(1, ready(())));
    assert!(poll_once(&mut finished).is_ready());
    let putter = {
        let queue = queue.clone();
        thread::spawn(move || queue.put_blocking(2).map(|id| id.get()))
    };
    thread::sleep(Duration::from_millis(50));
    queue.try_get().unwrap().succeed();
    let put = within(5, move || putter.join().unwrap());
    assert_eq!(put, Ok(1));
    drop(finished);
}

// --------------------------------------------------------------------- deadline re-check

/// A deadline future that runs `work` when polled and then fires: the last piece of work
/// and the deadline land in the same poll.
fn deadline_doing(work: impl FnOnce() + Unpin) -> impl Future<Output = ()> + Unpin {
    let mut work = Some(work);
    poll_fn(move |_| {
        if let Some(work) = work.take() {
            work();
        }
        Poll::Ready(())
    })
}

/// A deadline that completes once the returned closure has been called (polled by hand,
/// so it needs no waker).
fn manual_deadline() -> (impl Future<Output = ()>, impl FnOnce()) {
    let fired = Arc::new(AtomicUsize::new(0));
    let flag = fired.clone();
    let deadline = poll_fn(move |_| {
        if fired.load(Ordering::SeqCst) != 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    (deadline, move || flag.store(1, Ordering::SeqCst))
}

#[test]
fn join_until_rechecks_when_the_deadline_fires() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let mut held = Some(queue.try_get().unwrap());
    let joined = block_on(queue.join_until(deadline_doing(move || {
        held.take().unwrap().succeed();
    })));
    let ledger = joined.expect("nothing was unfinished after the deadline's poll");
    assert_eq!(ledger.succeeded, 1);
}

#[test]
fn get_until_rechecks_when_the_deadline_fires() {
    let queue = Queue::unbounded();
    let got = block_on(queue.get_until(deadline_doing(|| {
        queue.try_put(5).unwrap();
    })));
    assert_eq!(got.map(|d| d.succeed()), Ok(5));
}

#[test]
fn get_owned_until_rechecks_when_the_deadline_fires() {
    let queue = Arc::new(Queue::unbounded());
    let producer = queue.clone();
    let got = block_on(queue.get_owned_until(deadline_doing(move || {
        producer.try_put(5).unwrap();
    })));
    assert_eq!(got.map(|d| d.succeed()), Ok(5));
}

#[test]
fn put_until_rechecks_when_the_deadline_fires() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(0).unwrap();
    let put = block_on(queue.put_until(
        1,
        deadline_doing(|| {
            queue.try_get().unwrap().succeed();
        }),
    ));
    assert_eq!(put.map(|id| id.get()), Ok(1));
}

#[test]
fn shutdown_until_rechecks_when_the_deadline_fires() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let mut held = Some(queue.try_get().unwrap());
    let closed = block_on(queue.shutdown_until(deadline_doing(move || {
        held.take().unwrap().succeed();
    })));
    assert!(closed.drained_in_time, "{:?}", closed.ledger);
    assert!(closed.returned.is_empty());
    assert_eq!(closed.ledger.succeeded, 1);
}

/// A deadline that fires while work is still unfinished still times out, and names it.
#[test]
fn a_deadline_with_work_left_still_times_out() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let err = block_on(queue.join_until(deadline_doing(|| {}))).unwrap_err();
    assert_eq!(err.ledger().unfinished(), 1);
    let closed = block_on(queue.shutdown_until(deadline_doing(|| {})));
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned.len(), 1);
}

// ------------------------------------------------- no item between owners during user code

/// An item that counts how often it was dropped.
struct Tracked(Arc<AtomicUsize>);

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// `try_get` frees a slot and wakes a waiting put whose waker panics. The item must not be
/// lost: it is in a delivery when user code runs, and that delivery's unwinding records it
/// abandoned, so `join` returns.
#[test]
fn panicking_putter_waker_during_try_get_loses_no_item() {
    let drops = Arc::new(AtomicUsize::new(0));
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(Tracked(drops.clone())).unwrap();
    let mut put = Box::pin(queue.put(Tracked(drops.clone())));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    expect_panic(|| queue.try_get().map(|d| d.succeed()));
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
    assert!(ledger.is_balanced(), "{ledger}");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "the item was dropped once");
    assert!(block_on(queue.join_until(ready(()))).is_ok());
    drop(put);
}

/// As above for a waiting `get`: the item it pops is in its delivery before the putter's
/// waker runs.
#[test]
fn panicking_putter_waker_during_get_loses_no_item() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let mut put = Box::pin(queue.put(2));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    expect_panic(|| block_on(queue.get()).map(|d| d.succeed()));
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
    assert!(block_on(queue.join_until(ready(()))).is_ok());
    drop(put);
}

/// On an unfinished-limit queue, resolving gives the slot back before any waker runs: a
/// joiner's panicking waker does not leak the slot.
#[test]
fn panicking_joiner_waker_during_resolve_leaks_no_slot() {
    let queue = Queue::with_unfinished_limit(1).unwrap();
    queue.try_put(1).unwrap();
    let held = queue.try_get().unwrap();
    let mut join = Box::pin(queue.join());
    assert!(poll_with(&mut join, &panicking_waker()).is_pending());
    expect_panic(|| held.succeed());
    assert_eq!(queue.ledger().succeeded, 1);
    assert!(queue.try_put(2).is_ok(), "the slot was leaked");
    drop(join);
}

/// Shutdown wakes every class of waiter even if a putter's waker panics: the getter
/// waiting on the empty queue still wakes and sees the shutdown.
#[test]
fn panicking_putter_waker_during_shutdown_still_wakes_getters() {
    let queue = Queue::with_unfinished_limit(1).unwrap();
    queue.try_put(1).unwrap();
    let held = queue.try_get().unwrap();
    let mut put = Box::pin(queue.put(2));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    let (waker, woken) = counting_waker();
    let mut get = Box::pin(queue.get());
    assert!(poll_with(&mut get, &waker).is_pending());
    expect_panic(|| queue.shutdown());
    assert_eq!(
        woken.load(Ordering::SeqCst),
        1,
        "the getter was left asleep"
    );
    assert!(matches!(poll_with(&mut get, &waker), Poll::Ready(Err(_))));
    held.succeed();
    drop(put);
}

/// The same with a blocked thread: `get_blocking` returns after a shutdown whose putter
/// waker panicked.
#[test]
#[cfg(feature = "std")]
fn blocked_getter_wakes_on_shutdown_despite_a_panicking_waker() {
    let queue = Arc::new(Queue::<u8>::with_unfinished_limit(1).unwrap());
    queue.try_put(1).unwrap();
    let held = queue.try_get_owned().unwrap();
    let mut put = Box::pin(queue.put(2));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    let getter = {
        let queue = queue.clone();
        thread::spawn(move || queue.get_blocking().is_err())
    };
    thread::sleep(Duration::from_millis(50));
    expect_panic(|| queue.shutdown());
    assert!(within(5, move || getter.join().unwrap()));
    held.succeed();
    drop(put);
}

/// Every waiter of a class is woken by a terminal transition even when several wakers
/// panic, and the first panic reaches the caller.
// Without `std` a second waker panicking during the unwinding of the first aborts (see the
// crate docs on wakers).
#[test]
#[cfg(feature = "std")]
fn shutdown_wakes_every_getter_when_several_wakers_panic() {
    let queue = Queue::<u8>::unbounded();
    let mut panicking: Vec<_> = (0..2).map(|_| Box::pin(queue.get())).collect();
    for get in &mut panicking {
        assert!(poll_with(get, &panicking_waker()).is_pending());
    }
    let (waker, woken) = counting_waker();
    let mut calm: Vec<_> = (0..3).map(|_| Box::pin(queue.get())).collect();
    for get in &mut calm {
        assert!(poll_with(get, &waker).is_pending());
    }
    expect_panic(|| queue.shutdown());
    assert_eq!(woken.load(Ordering::SeqCst), 3);
}

// ------------------------------------------------------------------- re-entrant wakers

/// A getter whose waker puts another item into the queue that is waking it.
#[test]
fn waker_that_puts_into_the_waking_queue_does_not_deadlock() {
    let result = within(5, || {
        let queue = Arc::new(Queue::unbounded());
        let mut get = Box::pin(queue.get_owned());
        let inner = Arc::downgrade(&queue);
        let waker = waker_fn(move || {
            if let Some(queue) = inner.upgrade() {
                let _ = queue.try_put(99);
            }
        });
        assert!(poll_with(&mut get, &waker).is_pending());
        queue.try_put(1).unwrap();
        let Poll::Ready(Ok(first)) = poll_with(&mut get, &waker) else {
            panic!("the woken get must take an item");
        };
        (first.succeed(), queue.len())
    });
    assert_eq!(result, (1, 1));
}

/// A putter whose waker shuts the queue down.
#[test]
fn waker_that_shuts_the_waking_queue_down_does_not_deadlock() {
    let shut_down = within(5, || {
        let queue = Arc::new(Queue::bounded(1).unwrap());
        queue.try_put(0).unwrap();
        let mut put = Box::pin(queue.put(1));
        let inner = Arc::downgrade(&queue);
        let waker = waker_fn(move || {
            if let Some(queue) = inner.upgrade() {
                queue.shutdown();
            }
        });
        assert!(poll_with(&mut put, &waker).is_pending());
        queue.try_get().unwrap().succeed();
        queue.is_shut_down()
    });
    assert!(shut_down);
}

/// A minimal executor that polls its one task inline from `wake()`, as some real
/// executors do.
struct InlineTask {
    future: Mutex<Option<Pin<Box<dyn Future<Output = ()> + Send>>>>,
    polls: AtomicUsize,
}

impl std::task::Wake for InlineTask {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let waker = Waker::from(self.clone());
        // A task woken while it is being polled is polled again by the poller's loop.
        if let Ok(mut slot) = self.future.try_lock() {
            if let Some(future) = slot.as_mut() {
                self.polls.fetch_add(1, Ordering::SeqCst);
                if future
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
                {
                    *slot = None;
                }
            }
        }
    }
}

fn spawn_inline(future: impl Future<Output = ()> + Send + 'static) -> Arc<InlineTask> {
    let task = Arc::new(InlineTask {
        future: Mutex::new(Some(Box::pin(future))),
        polls: AtomicUsize::new(0),
    });
    std::task::Wake::wake_by_ref(&task);
    task
}

/// A consumer task on an executor that polls inline from `wake()`: the put that wakes it
/// runs the task's whole next step (pop, resolve, wait again) inside the notification.
#[test]
fn inline_polling_executor_does_not_deadlock() {
    let got = within(5, || {
        let queue = Arc::new(Queue::<u8>::bounded(1).unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = {
            let (queue, seen) = (queue.clone(), seen.clone());
            spawn_inline(async move {
                while let Ok(delivery) = queue.get().await {
                    seen.lock().unwrap().push(delivery.succeed());
                }
            })
        };
        for n in 0..3 {
            queue.try_put(n).unwrap();
        }
        queue.shutdown();
        assert!(task.future.lock().unwrap().is_none(), "the task finished");
        let seen = seen.lock().unwrap().clone();
        seen
    });
    assert_eq!(got, [0, 1, 2]);
}

/// An inline-polling producer: the get that frees a slot runs the producer's next put
/// inside the notification.
#[test]
fn inline_polling_producer_does_not_deadlock() {
    let ledger = within(5, || {
        let queue = Arc::new(Queue::bounded(1).unwrap());
        let _task = {
            let queue = queue.clone();
            spawn_inline(async move {
                for n in 0..4 {
                    if queue.put(n).await.is_err() {
                        break;
                    }
                }
            })
        };
        for _ in 0..4 {
            queue.try_get().unwrap().succeed();
        }
        queue.ledger()
    });
    assert_eq!((ledger.accepted, ledger.succeeded), (4, 4));
}

// ------------------------------------------------------------------------- item drops

/// An item whose `Drop` panics, once.
struct Bomb {
    drops: Arc<AtomicUsize>,
    explode: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.explode {
            panic!("an item whose drop panics");
        }
    }
}

/// Dropping a queue drops every buffered item even if one item's `Drop` panics.
#[test]
fn dropping_the_queue_drops_every_item_despite_a_panicking_drop() {
    let drops = Arc::new(AtomicUsize::new(0));
    let queue = Queue::unbounded();
    for explode in [true, false, false] {
        queue
            .try_put(Bomb {
                drops: drops.clone(),
                explode,
            })
            .unwrap();
    }
    expect_panic(move || drop(queue));
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

/// A `get_until` whose deadline fires as a put notifies it makes its last try with the
/// turn that notification granted. The take frees a slot and wakes a waiting put whose
/// waker panics, so the panic unwinds out of that last try before the turn is redeemed.
/// The turn must not go with it: once the panic is over, a get (or a try) is served the
/// next item instead of leaving it to a woken get that no longer exists.
#[test]
fn a_waker_panicking_in_a_get_untils_last_try_strands_no_turn() {
    let queue = Queue::bounded(1).unwrap();
    let waiting_put = std::cell::RefCell::new(None);
    let mut polls = 0;
    // Pending at first; at its second poll it puts (notifying the waiting get), registers a
    // put with a panicking waker behind the full buffer, and fires.
    let deadline = poll_fn(|_| {
        polls += 1;
        if polls == 1 {
            return Poll::Pending;
        }
        queue.try_put(1).unwrap();
        let mut put = Box::pin(queue.put(2));
        assert!(poll_with(&mut put, &panicking_waker()).is_pending());
        *waiting_put.borrow_mut() = Some(put);
        Poll::Ready(())
    });
    let mut until = Box::pin(queue.get_until(deadline));
    assert!(poll_once(&mut until).is_pending());
    expect_panic(|| poll_once(&mut until));
    drop(until);
    let mut put = waiting_put.borrow_mut().take().expect("the deadline fired");
    assert!(
        matches!(poll_once(&mut put), Poll::Ready(Ok(_))),
        "the last try's take freed the slot"
    );
    assert_eq!(queue.len(), 1);

    let mut get = pin!(queue.get());
    assert!(
        poll_once(&mut get).is_ready(),
        "a get sleeps beside a buffered item: the panicking last try kept its turn owed"
    );
}

/// A woken batch get redeems its turn with its first item, then frees slots, and the
/// wake-up of a waiting put (sent as the batch ends) panics. The turn was used once: the
/// batch's drop must not pass it on again, or the turns owed read one low, and the next
/// woken get's item is left open to a try.
#[test]
fn a_waker_panicking_after_a_woken_batch_get_redeemed_its_turn_passes_nothing_on() {
    let queue = Queue::bounded(2).unwrap();
    let mut batch = Vec::new();
    let mut get_many = Box::pin(queue.get_many(&mut batch, 2));
    assert!(poll_once(&mut get_many).is_pending());
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let mut put = Box::pin(queue.put(3));
    assert!(poll_with(&mut put, &panicking_waker()).is_pending());
    // The batch takes both items with the turn the first put granted; freeing their slots
    // wakes the put, whose waker panics.
    expect_panic(|| poll_once(&mut get_many));
    drop(get_many);
    assert!(matches!(poll_once(&mut put), Poll::Ready(Ok(_))));
    queue.try_get().unwrap().succeed();

    let mut get = Box::pin(queue.get());
    assert!(poll_once(&mut get).is_pending());
    queue.try_put(4).unwrap();
    let barged = queue.try_get().map(|job| job.succeed());
    assert!(
        barged.is_err(),
        "a try took item {barged:?}, put for a woken get, after a batch's panicking wake-up"
    );
    match poll_once(&mut get) {
        Poll::Ready(Ok(job)) => assert_eq!(job.succeed(), 4),
        other => panic!("the woken get takes its item: {:?}", other.is_ready()),
    };
}
