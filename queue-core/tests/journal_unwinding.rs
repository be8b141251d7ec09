//! A journal that panics on a build without `std`, where no `catch_unwind` stops its panic:
//! the panic unwinds through the queue operation, and still nobody is left asleep and the
//! ledger stays exact. Run with
//! `cargo test -p tally-queue --no-default-features --features alloc --test journal_unwinding`
//! (with `std` the journal's panics are caught, see `tests/journal.rs`).
#![cfg(all(feature = "alloc", not(feature = "std")))]

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll, Wake, Waker};

use tally_queue::{DeadReason, JobEvent, Journal, Queue, TryGetError};

/// Panics at the first event `at` picks, and records nothing.
struct PanicAt {
    at: fn(&JobEvent) -> bool,
    fired: AtomicBool,
}

impl PanicAt {
    fn new(at: fn(&JobEvent) -> bool) -> Self {
        PanicAt {
            at,
            fired: AtomicBool::new(false),
        }
    }
}

impl Journal for PanicAt {
    fn record(&self, event: JobEvent) {
        if (self.at)(&event) && !self.fired.swap(true, Ordering::SeqCst) {
            panic!("a journal panics at {event:?}");
        }
    }
}

/// Counts its wakes.
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count(AtomicUsize::new(0)));
    (count.clone(), Waker::from(count))
}

/// The journal panics in a get's `Delivered`: the put waiting for the slot that take freed
/// is still woken, and the delivery the panic unwound ends as abandoned.
#[test]
fn a_journal_panicking_in_a_get_still_wakes_the_waiting_put() {
    let queue = Queue::bounded(1)
        .unwrap()
        .with_journal(PanicAt::new(|e| matches!(e, JobEvent::Delivered { .. })));
    queue.try_put(1).unwrap();
    let (woken, waker) = counting();
    let mut put = pin!(queue.put(2));
    assert!(put
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        queue.try_get().map(|job| job.succeed())
    }));
    assert!(unwound.is_err(), "the journal panicked");
    assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the put was woken");
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
    match put.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(put) => assert!(put.is_ok()),
        Poll::Pending => panic!("the slot is free"),
    }
    assert_eq!(queue.try_get().unwrap().succeed(), 2);
}

/// The journal panics in the `Delivered` of a woken get, which takes with its turn: the
/// turn is given up once, so the next item is not held back for a get that is gone, and
/// the next woken get's item is still kept for it (a turn given up twice would read as
/// none owed).
#[test]
fn a_journal_panicking_in_a_woken_get_gives_its_turn_up() {
    let queue =
        Queue::unbounded().with_journal(PanicAt::new(|e| matches!(e, JobEvent::Delivered { .. })));
    let (woken, waker) = counting();
    {
        let mut get = pin!(queue.get());
        assert!(get
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        queue.try_put(1).unwrap();
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the get was woken");
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            get.as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
        }));
        assert!(unwound.is_err(), "the journal panicked");
    }
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
    queue.try_put(2).unwrap();
    let next = queue.try_get().map(|job| job.succeed());
    assert_eq!(next, Ok(2), "no item is held back for a turn nobody holds");
    let mut get = pin!(queue.get());
    assert!(get
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    queue.try_put(3).unwrap();
    assert_eq!(
        woken.0.load(Ordering::SeqCst),
        2,
        "the second get was woken"
    );
    assert!(
        queue.try_get().is_err(),
        "the woken get's item is kept for it"
    );
    match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 3),
        Poll::Pending => panic!("the item is there"),
    };
}

/// The journal panics in a delivery's `Ended`: the delivery unwinds before the ledger
/// counted its outcome and ends as abandoned, so the queue settles and a join returns.
#[test]
fn a_journal_panicking_in_an_ending_leaves_the_queue_settled() {
    let queue =
        Queue::unbounded().with_journal(PanicAt::new(|e| matches!(e, JobEvent::Ended { .. })));
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let (woken, waker) = counting();
    let mut join = pin!(queue.join());
    assert!(join
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let unwound = catch_unwind(AssertUnwindSafe(|| job.succeed()));
    assert!(unwound.is_err(), "the journal panicked");
    let ledger = queue.ledger();
    assert_eq!((ledger.in_flight, ledger.abandoned), (0, 1), "{ledger}");
    assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the join was woken");
    assert!(join
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready());
}

/// The journal panics in a put's `Accepted`: the item's id is drawn, so the item is
/// buffered all the same, the waiting get is woken for it, and the ledger balances.
#[test]
fn a_journal_panicking_in_a_put_still_buffers_the_item_and_wakes_the_get() {
    let queue =
        Queue::unbounded().with_journal(PanicAt::new(|e| matches!(e, JobEvent::Accepted(_))));
    let (woken, waker) = counting();
    let mut get = pin!(queue.get());
    assert!(get
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_put(1)));
    assert!(unwound.is_err(), "the journal panicked");
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.buffered), (1, 1), "{ledger}");
    assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the get was woken");
    match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 1),
        Poll::Pending => panic!("the item is there"),
    }
    assert!(queue.ledger().is_balanced(), "{}", queue.ledger());
}

/// Shuts the queue down immediately from inside the first `Accepted` it hears of, then
/// panics: the put that drew the id lands after the drain, and unwinds.
struct ShutDownNowThenPanic {
    queue: OnceLock<Weak<Queue<u32>>>,
    drained: AtomicUsize,
    fired: AtomicBool,
}

impl Journal for ShutDownNowThenPanic {
    fn record(&self, event: JobEvent) {
        if !matches!(event, JobEvent::Accepted(_)) || self.fired.swap(true, Ordering::SeqCst) {
            return;
        }
        let queue = self.queue.get().and_then(Weak::upgrade).expect("installed");
        let drained = queue.shutdown_now().len();
        self.drained.store(drained, Ordering::SeqCst);
        panic!("a journal panics at {event:?}");
    }
}

/// The journal panics in a put's `Accepted` after an immediate shutdown drained the queue
/// (on the growable buffer, unbounded and bounded above the ring's slots): the item landed
/// after the drain, so it is taken back out and kept as a dead letter, counted discarded,
/// as `shutdown_now` promises for a put that raced it; nothing stays buffered in a drained
/// queue, and the queue settles.
#[test]
fn a_journal_panicking_in_a_put_that_lands_after_the_drain_leaves_a_dead_letter() {
    for queue in [
        Queue::unbounded(),
        Queue::bounded((1 << 16) + 1).unwrap(),
        Queue::bounded(4).unwrap(),
    ] {
        let journal = Arc::new(ShutDownNowThenPanic {
            queue: OnceLock::new(),
            drained: AtomicUsize::new(usize::MAX),
            fired: AtomicBool::new(false),
        });
        let queue = Arc::new(queue.with_journal(Arc::clone(&journal)));
        assert!(journal.queue.set(Arc::downgrade(&queue)).is_ok());
        let unwound = catch_unwind(AssertUnwindSafe(|| queue.try_put(7)));
        assert!(unwound.is_err(), "the journal panicked");
        assert_eq!(
            journal.drained.load(Ordering::SeqCst),
            0,
            "nothing to drain yet"
        );
        let ledger = queue.ledger();
        assert_eq!(
            (ledger.accepted, ledger.buffered, ledger.discarded),
            (1, 0, 1),
            "{ledger}"
        );
        assert!(ledger.is_balanced(), "{ledger}");
        let dead = queue.take_dead_letters();
        assert_eq!(dead.len(), 1);
        assert_eq!(
            (dead[0].attempts, dead[0].reason, dead[0].item),
            (0, DeadReason::ShutDownNow, 7)
        );
        assert_eq!(queue.try_get().err(), Some(TryGetError::ShutDown));
        let mut join = pin!(queue.join());
        assert!(join
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_ready());
    }
}

/// As above, for a batch: the journal shuts the queue down immediately and panics in the
/// first item's `Accepted`. That item landed after the drain and becomes a dead letter;
/// the items after it were never placed and stay the caller's.
#[test]
fn a_journal_panicking_in_a_batch_that_lands_after_the_drain_leaves_a_dead_letter() {
    let journal = Arc::new(ShutDownNowThenPanic {
        queue: OnceLock::new(),
        drained: AtomicUsize::new(usize::MAX),
        fired: AtomicBool::new(false),
    });
    let queue = Arc::new(Queue::unbounded().with_journal(Arc::clone(&journal)));
    assert!(journal.queue.set(Arc::downgrade(&queue)).is_ok());
    let mut items = vec![7, 8, 9];
    let mut ids = Vec::new();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        queue.try_put_many(&mut items, &mut ids)
    }));
    assert!(unwound.is_err(), "the journal panicked");
    assert_eq!(items, [8, 9], "the items not placed stay the caller's");
    let ledger = queue.ledger();
    assert_eq!(
        (ledger.accepted, ledger.buffered, ledger.discarded),
        (1, 0, 1),
        "{ledger}"
    );
    let dead = queue.take_dead_letters();
    assert_eq!(dead.len(), 1);
    assert_eq!((dead[0].reason, dead[0].item), (DeadReason::ShutDownNow, 7));
}

/// The journal panics in the first `Accepted` of a batch: the item is buffered all the
/// same, and the get waiting for it is woken.
#[test]
fn a_journal_panicking_in_a_batch_still_wakes_the_get() {
    let queue =
        Queue::unbounded().with_journal(PanicAt::new(|e| matches!(e, JobEvent::Accepted(_))));
    let (woken, waker) = counting();
    let mut get = pin!(queue.get());
    assert!(get
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_pending());
    let mut items = vec![1, 2];
    let mut ids = Vec::new();
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        queue.try_put_many(&mut items, &mut ids)
    }));
    assert!(unwound.is_err(), "the journal panicked");
    assert_eq!(items, [2]);
    let ledger = queue.ledger();
    assert_eq!((ledger.accepted, ledger.buffered), (1, 1), "{ledger}");
    assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the get was woken");
    match get.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(job) => assert_eq!(job.unwrap().succeed(), 1),
        Poll::Pending => panic!("the item is there"),
    };
}
