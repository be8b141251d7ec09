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
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tally_queue::{JobEvent, Journal, Queue};

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
