//! Where the latches meet user code: deadline futures, wakers and observers. Each test here
//! reproduced a broken promise of DESIGN.md's "At the seams" before its fix; the hang tests
//! run their victims on threads with a time limit.

mod common;

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use common::{deadline_that, poll_once, poll_with, within, CountingWaker, PanickingWaker};
use futures_lite::future::block_on;
use tally_latch::{CountDownLatch, FailableLatch, Latch, TimedOut, TrackingLatch};

/// How long a victim may stay blocked before the test calls it a hang.
const HANG: u64 = 5;

// ---- 1. A finished timed wait holds no waker and no wake-up ----

/// Polls a timed wait whose deadline is already done: it times out, is kept alive, and the
/// latch then ends. The finished future's waker must not be woken: it gave up its waker slot.
fn finished_timed_wait_is_not_woken<L: Latch>(latch: &L, end: impl FnOnce(&L)) {
    let (wakes, waker) = CountingWaker::new();
    let mut wait = Box::pin(latch.wait_until(std::future::ready(())));
    assert!(wait
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_ready());
    // The finished future is still alive while the latch ends.
    end(latch);
    assert_eq!(wakes.wakes(), 0, "a finished wait was still registered");
    drop(wait);
}

#[test]
fn timed_out_count_down_wait_holds_no_waker() {
    finished_timed_wait_is_not_woken(&CountDownLatch::new(1), |latch| {
        latch.count_down();
    });
}

#[test]
fn timed_out_failable_wait_holds_no_waker() {
    finished_timed_wait_is_not_woken(&FailableLatch::new(1), |latch| {
        latch.fail(()).unwrap();
    });
}

#[test]
fn timed_out_tracking_wait_holds_no_waker() {
    finished_timed_wait_is_not_woken(&TrackingLatch::new(["a"]).unwrap(), |latch| {
        latch.count_down_for("a").unwrap();
    });
}

// ---- 2. The latch is checked again after the deadline fires ----

#[test]
fn deadline_that_opens_the_latch_is_no_timeout() {
    let latch = CountDownLatch::new(1);
    let result = block_on(latch.wait_until(deadline_that(|| {
        latch.count_down();
    })));
    assert_eq!(result, Ok(()), "an open latch was reported as timed out");
}

#[test]
fn deadline_that_fails_the_latch_reports_the_failure() {
    let latch = FailableLatch::new(1);
    let result = block_on(latch.wait_until(deadline_that(|| latch.fail("late").unwrap())));
    assert_eq!(result, Ok(Err("late")));
}

#[test]
fn deadline_that_reports_the_last_counter_is_no_timeout() {
    let latch = TrackingLatch::<String>::new_failable(["a", "b"]).unwrap();
    latch.count_down_for("a").unwrap();
    let result = block_on(latch.wait_until(deadline_that(|| {
        latch.count_down_for("b").unwrap();
    })));
    match result {
        Ok(Ok(())) => {}
        Ok(Err(failure)) => panic!("{failure}"),
        Err(pending) => panic!("an open latch reported `{pending}`"),
    }
}

#[test]
fn tracking_timeout_names_the_counter_still_pending() {
    let latch = TrackingLatch::<String>::new_failable(["a", "b", "c"]).unwrap();
    let result = block_on(latch.wait_until(deadline_that(|| {
        latch.count_down_for("a").unwrap();
        latch.count_down_for("c").unwrap();
    })));
    let Err(pending) = result else {
        panic!("expected a timeout, got {result:?}");
    };
    assert_eq!(pending.names(), ["b"]);
}

/// Racing reports on other threads, with a deadline that is always already done: every
/// timeout names at least one counter, and an `Ok` means the latch really opened.
#[test]
fn racing_tracking_timeouts_always_name_someone() {
    for _ in 0..common::scaled(200, 4) {
        let latch = Arc::new(TrackingLatch::<String>::new_failable(["a", "b"]).unwrap());
        let reporters: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let latch = latch.clone();
                thread::spawn(move || latch.count_down_for(name).unwrap())
            })
            .collect();
        loop {
            match block_on(latch.wait_until(std::future::ready(()))) {
                Ok(Ok(())) => {
                    assert!(latch.is_open());
                    break;
                }
                Ok(Err(failure)) => panic!("{failure}"),
                Err(pending) => {
                    assert!(!pending.names().is_empty(), "a timeout named nobody");
                }
            }
        }
        reporters
            .into_iter()
            .for_each(|r| assert!(r.join().unwrap()));
    }
}

// ---- 3. Terminal transitions survive a panicking waker or observer ----

/// Parks `n` waiters on threads, each registered (first poll done) before this returns.
/// Each receiver gets a message when its waiter is released.
fn parked_waiters<L>(latch: &Arc<L>, n: usize) -> Vec<Receiver<()>>
where
    L: Latch + Send + Sync + 'static,
{
    let (registered, is_registered) = channel();
    let released: Vec<_> = (0..n)
        .map(|_| {
            let (latch, registered) = (latch.clone(), registered.clone());
            let (done, released) = channel();
            thread::spawn(move || {
                let mut wait = latch.wait();
                assert!(poll_once(&mut wait).is_pending());
                registered.send(()).unwrap();
                let _ = block_on(wait);
                let _ = done.send(());
            });
            released
        })
        .collect();
    for _ in 0..n {
        is_registered.recv().unwrap();
    }
    released
}

fn assert_released(released: Vec<Receiver<()>>) {
    for (i, released) in released.into_iter().enumerate() {
        assert!(
            released.recv_timeout(Duration::from_secs(HANG)).is_ok(),
            "waiter {i} still asleep after {HANG} s on an ended latch"
        );
    }
}

/// A first waiter whose waker panics, then ordinary waiters: `end` panics through to the
/// caller, and every ordinary waiter is released all the same.
fn panicking_waker_first<L>(latch: L, end: impl FnOnce(&L))
where
    L: Latch + Send + Sync + 'static,
{
    let latch = Arc::new(latch);
    let mut first = latch.wait();
    let panicking = Waker::from(Arc::new(PanickingWaker));
    assert!(poll_with(&mut first, &panicking).is_pending());
    let released = parked_waiters(&latch, 3);
    let outcome = catch_unwind(AssertUnwindSafe(|| end(&latch)));
    assert!(outcome.is_err(), "the waker's panic reaches the caller");
    assert_released(released);
    // The panicking waiter's own future still finishes, and dropping it is harmless.
    assert!(poll_once(&mut first).is_ready());
    drop(first);
    // A waiter arriving afterwards returns at once.
    assert!(poll_once(&mut latch.wait()).is_ready());
}

#[test]
fn panicking_waker_on_opening_leaves_no_waiter_asleep() {
    panicking_waker_first(CountDownLatch::new(1), |latch| {
        latch.count_down();
    });
}

#[test]
fn panicking_waker_on_failure_leaves_no_waiter_asleep() {
    panicking_waker_first(FailableLatch::new(1), |latch| {
        let _ = latch.fail(());
    });
}

#[test]
fn panicking_waker_on_tracking_opening_leaves_no_waiter_asleep() {
    panicking_waker_first(TrackingLatch::new(["a"]).unwrap(), |latch| {
        latch.count_down_for("a").unwrap();
    });
}

/// Two panicking wakers in one release: both panics are caught, the first reaches the
/// caller, and the ordinary waiters between and after them are released.
#[test]
fn two_panicking_wakers_leave_no_waiter_asleep() {
    let latch = Arc::new(CountDownLatch::new(1));
    let panicking = Waker::from(Arc::new(PanickingWaker));
    let mut first = latch.wait();
    assert!(poll_with(&mut first, &panicking).is_pending());
    let before = parked_waiters(&latch, 2);
    let mut second = latch.wait();
    assert!(poll_with(&mut second, &panicking).is_pending());
    let after = parked_waiters(&latch, 2);
    let outcome = catch_unwind(AssertUnwindSafe(|| latch.count_down()));
    assert!(outcome.is_err());
    assert_released(before);
    assert_released(after);
    drop((first, second));
}

#[test]
fn panicking_observer_on_opening_leaves_no_waiter_asleep() {
    let latch = Arc::new(
        TrackingLatch::new(["a", "b"])
            .unwrap()
            .on_count_down(|event| assert!(!event.opened(), "observer panicked")),
    );
    let released = parked_waiters(&latch, 3);
    latch.count_down_for("a").unwrap();
    let outcome = catch_unwind(AssertUnwindSafe(|| latch.count_down_for("b")));
    assert!(outcome.is_err(), "the observer's panic reaches the caller");
    assert!(latch.is_open());
    assert_released(released);
}

// ---- 4. Re-entrant wakers ----

/// A waker that calls back into the latch that is waking it: a count-down, a failure and a
/// fresh wait, each answered without blocking.
struct ReentrantWaker {
    latch: Arc<FailableLatch<()>>,
    seen: Mutex<Option<Seen>>,
}

/// What the nested calls returned: counted, failed, the fresh wait was ready.
type Seen = (bool, Result<(), ()>, bool);

impl Wake for ReentrantWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let counted = self.latch.count_down();
        let failed = self.latch.fail(());
        let ready = poll_once(&mut self.latch.wait()).is_ready();
        *self.seen.lock().unwrap() = Some((counted, failed, ready));
    }
}

#[test]
fn waker_that_re_enters_the_latch_does_not_deadlock() {
    let latch = Arc::new(FailableLatch::new(1));
    let waker = Arc::new(ReentrantWaker {
        latch: latch.clone(),
        seen: Mutex::new(None),
    });
    let mut wait = latch.wait();
    assert!(poll_with(&mut wait, &Waker::from(waker.clone())).is_pending());
    let counter = latch.clone();
    assert!(within(
        HANG,
        "count_down with a re-entrant waker",
        move || counter.count_down()
    ));
    // The nested count-down and failure were refused; the nested wait was ready at once.
    assert_eq!(*waker.seen.lock().unwrap(), Some((false, Err(()), true)));
    assert_eq!(poll_once(&mut wait), Poll::Ready(Ok(())));
}

type Task = Mutex<Option<Pin<Box<dyn Future<Output = ()> + Send>>>>;

/// An executor that polls its task inline, inside `wake`, as some real executors do.
struct InlineExecutor {
    task: Task,
    finished: AtomicBool,
    polls: AtomicUsize,
}

impl InlineExecutor {
    fn spawn(future: impl Future<Output = ()> + Send + 'static) -> Arc<Self> {
        let executor = Arc::new(Self {
            task: Mutex::new(Some(Box::pin(future))),
            finished: AtomicBool::new(false),
            polls: AtomicUsize::new(0),
        });
        executor.run();
        executor
    }

    fn run(self: &Arc<Self>) {
        let waker = Waker::from(self.clone());
        let mut task = self.task.lock().unwrap();
        if let Some(future) = task.as_mut() {
            self.polls.fetch_add(1, Ordering::SeqCst);
            if future
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready()
            {
                *task = None;
                self.finished.store(true, Ordering::SeqCst);
            }
        }
    }
}

impl Wake for InlineExecutor {
    fn wake(self: Arc<Self>) {
        self.run();
    }
}

/// The woken wait is polled, finishes and is dropped, all inside the opening's `wake` call.
fn inline_executor_is_released<L>(latch: L, end: impl FnOnce(&L) + Send + 'static)
where
    L: Latch + Send + Sync + 'static,
{
    let latch = Arc::new(latch);
    let executors: Vec<_> = (0..3)
        .map(|_| {
            let latch = latch.clone();
            InlineExecutor::spawn(async move {
                let _ = latch.wait().await;
            })
        })
        .collect();
    assert!(executors.iter().all(|e| !e.finished.load(Ordering::SeqCst)));
    let ender = latch.clone();
    within(HANG, "ending a latch whose waker polls inline", move || {
        end(&ender)
    });
    for executor in &executors {
        assert!(executor.finished.load(Ordering::SeqCst));
        assert_eq!(executor.polls.load(Ordering::SeqCst), 2);
    }
}

#[test]
fn inline_polling_executor_on_opening_does_not_deadlock() {
    inline_executor_is_released(CountDownLatch::new(1), |latch| {
        latch.count_down();
    });
}

#[test]
fn inline_polling_executor_on_failure_does_not_deadlock() {
    inline_executor_is_released(FailableLatch::new(1), |latch| {
        latch.fail(()).unwrap();
    });
}

/// The woken task goes on to wait on a second latch, which a second task's waker opens:
/// a notification nested inside another latch's notification.
#[test]
fn inline_polling_across_two_latches_does_not_deadlock() {
    let first = Arc::new(CountDownLatch::new(1));
    let second = Arc::new(CountDownLatch::new(1));
    let waiting_on_second = {
        let second = second.clone();
        InlineExecutor::spawn(async move { second.wait().await })
    };
    let opener = {
        let (first, second) = (first.clone(), second.clone());
        InlineExecutor::spawn(async move {
            first.wait().await;
            second.count_down();
            second.wait().await;
        })
    };
    let counter = first.clone();
    within(
        HANG,
        "nested openings from inline-polled tasks",
        move || {
            counter.count_down();
        },
    );
    assert!(opener.finished.load(Ordering::SeqCst));
    assert!(waiting_on_second.finished.load(Ordering::SeqCst));
}

#[test]
fn timed_out_is_reported_by_a_plain_deadline() {
    // The re-check must not turn a real timeout into a success.
    let latch = CountDownLatch::new(1);
    assert_eq!(
        block_on(latch.wait_until(std::future::ready(()))),
        Err(TimedOut)
    );
}

/// A waker that looks at the tracking latch from inside the opening's notification, before
/// the last `count_down_for` has returned: the latch is open, and nobody is pending.
struct PendingProbe {
    latch: Arc<TrackingLatch>,
    seen: Mutex<Option<(bool, Vec<String>)>>,
}

impl Wake for PendingProbe {
    fn wake(self: Arc<Self>) {
        let pending = self.latch.pending().into_iter().map(String::from).collect();
        *self.seen.lock().unwrap() = Some((self.latch.is_open(), pending));
    }
}

#[test]
fn woken_waiter_finds_nobody_pending() {
    let latch = Arc::new(TrackingLatch::new(["a", "b"]).unwrap());
    let probe = Arc::new(PendingProbe {
        latch: latch.clone(),
        seen: Mutex::new(None),
    });
    let mut wait = latch.wait();
    assert!(poll_with(&mut wait, &Waker::from(probe.clone())).is_pending());
    latch.count_down_for("a").unwrap();
    latch.count_down_for("b").unwrap();
    assert_eq!(*probe.seen.lock().unwrap(), Some((true, Vec::new())));
    assert!(poll_once(&mut wait).is_ready());
}
