//! The no-alloc tier: `FixedLatch`, `FixedFailableLatch`, `FixedTrackingLatch`, their waiter
//! slots, timed waits, panicking and re-entrant wakers.

mod common;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use common::{poll_once, scaled};
use futures_lite::future::block_on;
use tally_latch::fixed::{
    DuplicateCounter, FixedFailableLatch, FixedLatch, FixedStillPending, FixedTimedOut,
    FixedTimedWaitError, FixedTimeoutError, FixedTrackingLatch, FixedWaitError, NoWaiterSlot,
    UnknownCounter,
};

/// Runs `f` on its own thread and fails the test if it has not returned within `secs`
/// seconds, so a regression that hangs fails instead of stalling the suite.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("hung: still running after {secs} s"),
    }
}

/// A waker that counts its wake-ups.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl CountingWaker {
    fn new() -> (Arc<Self>, Waker) {
        let counter = Arc::new(Self::default());
        let waker = Waker::from(counter.clone());
        (counter, waker)
    }

    fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that panics when woken.
struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("waker panicked");
    }
}

fn poll_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(waker))
}

#[test]
fn a_static_latch_counted_down_from_threads_releases_its_waiters() {
    static LATCH: FixedLatch<3> = FixedLatch::new(8);
    within(10, || {
        let waiters: Vec<_> = (0..3)
            .map(|_| thread::spawn(|| block_on(LATCH.wait())))
            .collect();
        let counters: Vec<_> = (0..8)
            .map(|_| thread::spawn(|| assert!(LATCH.count_down())))
            .collect();
        counters.into_iter().for_each(|c| c.join().unwrap());
        for waiter in waiters {
            // Three slots for three waiters: none is refused.
            assert_eq!(waiter.join().unwrap(), Ok(()));
        }
        assert!(LATCH.is_open());
        assert_eq!(LATCH.count(), 0);
        assert!(!LATCH.count_down());
        assert_eq!(LATCH.waiting(), 0);
    });
}

#[test]
fn an_extra_waiter_gets_no_waiter_slot_at_once_and_the_others_still_wake() {
    let latch = FixedLatch::<2>::new(1);
    let (first_wakes, first_waker) = CountingWaker::new();
    let (second_wakes, second_waker) = CountingWaker::new();
    let mut first = latch.wait();
    let mut second = latch.wait();
    assert!(poll_with(&mut first, &first_waker).is_pending());
    assert!(poll_with(&mut second, &second_waker).is_pending());
    assert_eq!(latch.waiting(), 2);

    let mut third = latch.wait();
    assert_eq!(
        poll_once(&mut third),
        Poll::Ready(Err(NoWaiterSlot { slots: 2 }))
    );
    let mut timed = latch.wait_until(std::future::pending::<()>());
    assert_eq!(
        poll_once(&mut timed),
        Poll::Ready(Err(FixedTimeoutError::NoWaiterSlot(NoWaiterSlot {
            slots: 2
        })))
    );
    assert_eq!(latch.waiting(), 2, "a refused wait takes nothing");

    assert!(latch.count_down());
    assert_eq!((first_wakes.wakes(), second_wakes.wakes()), (1, 1));
    assert_eq!(poll_once(&mut first), Poll::Ready(Ok(())));
    assert_eq!(poll_once(&mut second), Poll::Ready(Ok(())));
    // On an open latch a refused wait succeeds when polled again, and so does any other.
    assert_eq!(poll_once(&mut third), Poll::Ready(Ok(())));
    assert_eq!(block_on(latch.wait()), Ok(()));
    assert_eq!(latch.waiting(), 0);
}

#[test]
fn a_slot_given_back_by_a_dropped_wait_serves_the_next_waiter() {
    let latch = FixedLatch::<1>::new(1);
    for _ in 0..3 {
        let mut wait = latch.wait();
        assert!(poll_once(&mut wait).is_pending());
        assert_eq!(latch.waiting(), 1);
        drop(wait);
        assert_eq!(latch.waiting(), 0);
    }
    let (wakes, waker) = CountingWaker::new();
    let mut wait = latch.wait();
    assert!(poll_with(&mut wait, &waker).is_pending());
    latch.count_down();
    assert_eq!(wakes.wakes(), 1);
    assert_eq!(poll_once(&mut wait), Poll::Ready(Ok(())));
}

/// Issue 13, point 1, for this tier: a timed wait that has returned, but is kept alive,
/// holds no slot. With one slot, a leak would refuse the next waiter.
#[test]
fn a_finished_timed_wait_kept_alive_holds_no_slot() {
    let latch = FixedLatch::<1>::new(1);
    let mut timed = pin!(latch.wait_until(async {}));
    let mut first_poll = true;
    let result = block_on(std::future::poll_fn(|cx| {
        if first_poll {
            first_poll = false;
            // Park once on the latch, so the wait holds the slot before the deadline fires.
            cx.waker().wake_by_ref();
        }
        timed.as_mut().poll(cx)
    }));
    assert_eq!(
        result,
        Err(FixedTimeoutError::TimedOut(FixedTimedOut { remaining: 1 }))
    );
    assert_eq!(latch.waiting(), 0);

    // `timed` is still alive here: the next waiter parks and is woken.
    let (wakes, waker) = CountingWaker::new();
    let mut next = latch.wait();
    assert!(poll_with(&mut next, &waker).is_pending());
    latch.count_down();
    assert_eq!(wakes.wakes(), 1);
    assert_eq!(poll_once(&mut next), Poll::Ready(Ok(())));
    // Still alive, and still holding nothing.
    assert!(timed
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_ready());
}

#[test]
fn a_timed_wait_parked_then_timed_out_gives_its_slot_back() {
    let latch = FixedFailableLatch::<(), 1>::new(2);
    let fire = Arc::new(AtomicBool::new(false));
    let deadline = {
        let fire = fire.clone();
        std::future::poll_fn(move |_| {
            if fire.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    };
    let mut timed = Box::pin(latch.wait_until(deadline));
    assert!(poll_once(&mut timed).is_pending());
    assert_eq!(latch.waiting(), 1);
    fire.store(true, Ordering::SeqCst);
    assert_eq!(
        poll_once(&mut timed),
        Poll::Ready(Err(FixedTimedWaitError::TimedOut(FixedTimedOut {
            remaining: 2
        })))
    );
    assert_eq!(latch.waiting(), 0);
}

/// Issue 13, point 2, for this tier: a deadline that finishes the work as it fires is not a
/// timeout, for each latch.
#[test]
fn a_deadline_that_ends_the_latch_as_it_fires_reports_the_end() {
    let plain = FixedLatch::<1>::new(1);
    assert_eq!(
        block_on(plain.wait_until(async {
            plain.count_down();
        })),
        Ok(())
    );

    let failable = FixedFailableLatch::<&str, 1>::new(1);
    assert_eq!(
        block_on(failable.wait_until(async {
            failable.fail("late").unwrap();
        })),
        Err(FixedTimedWaitError::Failed(&"late"))
    );

    let tracking = FixedTrackingLatch::<2, (), 1>::new(["a", "b"]);
    tracking.count_down_for("a").unwrap();
    assert_eq!(
        block_on(tracking.wait_until(async {
            tracking.count_down_for("b").unwrap();
        })),
        Ok(())
    );
}

/// A tracking timeout names at least one counter and only counters that had not reported,
/// while another thread reports them one by one.
#[test]
fn tracking_timeouts_racing_reports_always_name_a_pending_counter() {
    const NAMES: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
    for _ in 0..scaled(200, 3) {
        let latch = Arc::new(FixedTrackingLatch::<6, (), 1>::new(NAMES));
        let reporter = thread::spawn({
            let latch = latch.clone();
            move || {
                for name in NAMES {
                    latch.count_down_for(name).unwrap();
                }
            }
        });
        let mut reported_before: Vec<&str> = Vec::new();
        loop {
            let snapshot_before: Vec<&str> = NAMES
                .iter()
                .copied()
                .filter(|name| !latch.pending().any(|p| p == *name))
                .collect();
            reported_before.clone_from(&snapshot_before);
            match block_on(latch.wait_until(async {})) {
                Ok(()) => break,
                Err(FixedTimedWaitError::TimedOut(pending)) => {
                    let names: Vec<&str> = pending.names().collect();
                    assert!(!names.is_empty(), "a timeout named nobody");
                    assert_eq!(names.len(), pending.len());
                    for name in &names {
                        assert!(
                            !reported_before.contains(name),
                            "{name} had reported before the wait"
                        );
                    }
                    assert!(!pending.to_string().ends_with(": "));
                }
                Err(other) => panic!("{other:?}"),
            }
        }
        reporter.join().unwrap();
        assert!(latch.is_open());
    }
}

/// Issue 13, point 3, for this tier: a panicking waker on the opening count-down does not
/// leave the later waiters asleep; the panic reaches the caller, the latch is open.
#[test]
fn a_panicking_waker_does_not_strand_the_other_waiters() {
    let latch = FixedLatch::<3>::new(1);
    let panicking = Waker::from(Arc::new(PanickingWaker));
    let (second_wakes, second) = CountingWaker::new();
    let (third_wakes, third) = CountingWaker::new();
    let mut waits = [latch.wait(), latch.wait(), latch.wait()];
    assert!(poll_with(&mut waits[0], &panicking).is_pending());
    assert!(poll_with(&mut waits[1], &second).is_pending());
    assert!(poll_with(&mut waits[2], &third).is_pending());

    let counted = catch_unwind(AssertUnwindSafe(|| latch.count_down()));
    assert!(counted.is_err(), "the waker's panic reaches the caller");
    assert!(latch.is_open());
    assert_eq!((second_wakes.wakes(), third_wakes.wakes()), (1, 1));
    for wait in &mut waits {
        assert_eq!(poll_once(wait), Poll::Ready(Ok(())));
    }
    assert_eq!(latch.waiting(), 0);
}

#[test]
fn a_panicking_waker_on_failure_does_not_strand_the_other_waiters() {
    let latch = FixedFailableLatch::<&str, 2>::new(1);
    let panicking = Waker::from(Arc::new(PanickingWaker));
    let (wakes, counting) = CountingWaker::new();
    let mut first = latch.wait();
    let mut second = latch.wait();
    assert!(poll_with(&mut first, &panicking).is_pending());
    assert!(poll_with(&mut second, &counting).is_pending());
    assert!(catch_unwind(AssertUnwindSafe(|| latch.fail("boom"))).is_err());
    assert_eq!(latch.error(), Some(&"boom"));
    assert_eq!(wakes.wakes(), 1);
    assert_eq!(
        poll_once(&mut second),
        Poll::Ready(Err(FixedWaitError::Failed(&"boom")))
    );
}

/// A task whose waker polls it inline, as some executors do.
struct InlineTask<F: Future> {
    future: Mutex<Option<Pin<Box<F>>>>,
    polls: AtomicUsize,
    output: Mutex<Option<F::Output>>,
}

impl<F: Future + Send + 'static> InlineTask<F>
where
    F::Output: Send,
{
    fn spawn(future: F) -> Arc<Self> {
        let task = Arc::new(Self {
            future: Mutex::new(Some(Box::pin(future))),
            polls: AtomicUsize::new(0),
            output: Mutex::new(None),
        });
        task.clone().run();
        task
    }

    fn run(self: Arc<Self>) {
        let waker = Waker::from(self.clone());
        let mut slot = self.future.lock().unwrap();
        if let Some(future) = slot.as_mut() {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if let Poll::Ready(output) = future.as_mut().poll(&mut Context::from_waker(&waker)) {
                *slot = None;
                *self.output.lock().unwrap() = Some(output);
            }
        }
    }
}

impl<F: Future + Send + 'static> Wake for InlineTask<F>
where
    F::Output: Send,
{
    fn wake(self: Arc<Self>) {
        self.run();
    }
}

/// Issue 13, point 4, for this tier: a waker that polls its task inline, and whose task
/// then counts down, fails and waits on the latch that woke it, does not deadlock.
#[test]
fn a_waker_that_reenters_the_latch_does_not_deadlock() {
    within(10, || {
        let latch = Arc::new(FixedFailableLatch::<&str, 2>::new(1));
        let task = InlineTask::spawn({
            let latch = latch.clone();
            async move {
                let first = latch.wait().await;
                // Re-enter from inside the wake-up: every call finds the latch ended.
                let counted = latch.count_down();
                let failed = latch.fail("late");
                let again = latch.wait().await.map_err(|error| error.to_string());
                let first = first.map_err(|error| error.to_string());
                (first, counted, failed, again, latch.waiting())
            }
        });
        assert_eq!(task.polls.load(Ordering::SeqCst), 1);
        assert!(latch.count_down());
        assert_eq!(
            task.polls.load(Ordering::SeqCst),
            2,
            "polled inline from wake"
        );
        let output = task.output.lock().unwrap().take().expect("finished");
        assert_eq!(output, (Ok(()), false, Err("late"), Ok(()), 0));
    });
}

/// A wait polled with one waker, then another, is woken through the latest one.
#[test]
fn a_wait_that_moves_to_a_new_waker_is_woken_through_it() {
    let latch = FixedLatch::<1>::new(1);
    let (old_wakes, old) = CountingWaker::new();
    let (new_wakes, new) = CountingWaker::new();
    let mut wait = latch.wait();
    assert!(poll_with(&mut wait, &old).is_pending());
    assert!(poll_with(&mut wait, &new).is_pending());
    latch.count_down();
    assert_eq!((old_wakes.wakes(), new_wakes.wakes()), (0, 1));
}

/// Dropping a wait at each of its await points (never polled, parked, finished) leaves no
/// slot held, and the latch's other waiters unaffected.
#[test]
fn dropping_waits_at_every_point_leaves_no_slot_held() {
    let latch = FixedTrackingLatch::<2, (), 2>::new(["a", "b"]);
    let (wakes, waker) = CountingWaker::new();
    let mut keeper = latch.wait();
    assert!(poll_with(&mut keeper, &waker).is_pending());
    drop(latch.wait());
    assert_eq!(latch.waiting(), 1);
    let mut parked = latch.wait_until(std::future::pending::<()>());
    assert!(poll_once(&mut parked).is_pending());
    assert_eq!(latch.waiting(), 2);
    drop(parked);
    assert_eq!(latch.waiting(), 1);
    latch.count_down_for("a").unwrap();
    latch.count_down_for("b").unwrap();
    assert_eq!(wakes.wakes(), 1);
    let mut finished = latch.wait();
    assert_eq!(poll_once(&mut finished), Poll::Ready(Ok(())));
    drop(finished);
    assert_eq!(poll_once(&mut keeper), Poll::Ready(Ok(())));
    assert_eq!(latch.waiting(), 0);
}

/// The stored error is dropped exactly once, with the latch; refused errors come back.
#[test]
fn the_stored_error_is_dropped_once_with_the_latch() {
    struct Tracked(Arc<AtomicUsize>);
    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let latch = FixedFailableLatch::<Tracked, 1>::new(1);
    assert!(latch.fail(Tracked(drops.clone())).is_ok());
    let refused = latch.fail(Tracked(drops.clone())).unwrap_err();
    drop(refused);
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "only the refused one so far"
    );
    assert!(matches!(
        block_on(latch.wait()),
        Err(FixedWaitError::Failed(_))
    ));
    drop(latch);
    assert_eq!(drops.load(Ordering::SeqCst), 2);

    let never_failed = FixedFailableLatch::<Tracked, 1>::new(0);
    assert!(never_failed.fail(Tracked(drops.clone())).is_err()); // open: handed back, dropped
    drop(never_failed);
    assert_eq!(drops.load(Ordering::SeqCst), 3);
}

#[test]
fn tracking_names_are_checked() {
    assert_eq!(
        FixedTrackingLatch::<3, ()>::try_new(["a", "b", "a"]).unwrap_err(),
        DuplicateCounter { name: "a" }
    );
    assert!(catch_unwind(|| FixedTrackingLatch::<2, ()>::new(["x", "x"])).is_err());
    let latch = FixedTrackingLatch::<2, ()>::new(["a", "b"]);
    assert_eq!(latch.count_down_for("c"), Err(UnknownCounter { name: "c" }));
    assert_eq!(latch.count_down_for("b"), Ok(true));
    assert_eq!(latch.count_down_for("b"), Ok(false));
    assert!(latch.pending().eq(["a"]));
    latch.fail(()).unwrap();
    assert_eq!(latch.count_down_for("a"), Ok(false), "refused once failed");
    assert!(latch.pending().eq(["a"]), "frozen once failed");
    assert!(FixedTrackingLatch::<0, ()>::new([]).is_open());
}

#[test]
fn the_count_limit_is_enforced() {
    use tally_latch::fixed::{FixedCountTooLarge, MAX_COUNT};
    assert!(FixedLatch::<1>::try_new(MAX_COUNT).is_ok());
    assert_eq!(
        FixedLatch::<1>::try_new(MAX_COUNT + 1).unwrap_err(),
        FixedCountTooLarge {
            count: MAX_COUNT + 1
        }
    );
    assert!(catch_unwind(|| FixedFailableLatch::<(), 1>::new(MAX_COUNT + 1)).is_err());
}

#[test]
fn error_messages_are_lowercase_without_a_trailing_period() {
    let pending = {
        let latch = FixedTrackingLatch::<2, (), 1>::new(["radio", "sensor"]);
        latch.count_down_for("radio").unwrap();
        match block_on(latch.wait_until(async {})) {
            Err(FixedTimedWaitError::TimedOut(pending)) => pending,
            other => panic!("{other:?}"),
        }
    };
    let _: FixedStillPending<2> = pending;
    let messages = [
        NoWaiterSlot { slots: 1 }.to_string(),
        FixedTimedOut { remaining: 1 }.to_string(),
        FixedTimeoutError::TimedOut(FixedTimedOut { remaining: 2 }).to_string(),
        pending.to_string(),
        FixedWaitError::Failed(&"crc").to_string(),
        FixedTimedWaitError::<&str, FixedTimedOut>::TimedOut(FixedTimedOut { remaining: 3 })
            .to_string(),
        UnknownCounter { name: "x" }.to_string(),
        DuplicateCounter { name: "x" }.to_string(),
    ];
    assert_eq!(pending.to_string(), "timed out waiting for: sensor");
    assert_eq!(messages[1], "timed out with 1 count-down to go");
    for message in messages {
        let first = message.chars().next().unwrap();
        assert!(!first.is_uppercase(), "{message}");
        assert!(!message.ends_with('.'), "{message}");
    }
}

/// Many threads wait on a latch with few slots while others count down: every wait ends
/// with `Ok` or `NoWaiterSlot`, none hangs, and the slots are all free at the end.
#[test]
fn waiters_beyond_the_slots_never_hang() {
    for _ in 0..scaled(50, 2) {
        within(20, || {
            let latch = Arc::new(FixedLatch::<2>::new(4));
            let waiters: Vec<_> = (0..6)
                .map(|_| {
                    let latch = latch.clone();
                    thread::spawn(move || block_on(latch.wait()))
                })
                .collect();
            let counters: Vec<_> = (0..4)
                .map(|_| {
                    let latch = latch.clone();
                    thread::spawn(move || latch.count_down())
                })
                .collect();
            counters
                .into_iter()
                .for_each(|c| assert!(c.join().unwrap()));
            for waiter in waiters {
                match waiter.join().unwrap() {
                    Ok(()) | Err(NoWaiterSlot { slots: 2 }) => {}
                    Err(other) => panic!("{other:?}"),
                }
            }
            assert_eq!(latch.waiting(), 0);
        });
    }
}
