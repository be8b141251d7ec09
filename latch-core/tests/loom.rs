//! loom models of the latch state machine: count-down vs wait vs fail, handle drop vs wait,
//! the deadline's re-check, a wait polled inline inside the notification, and the waiter
//! list's slots (a parked wait dropped, or re-polled with a new waker, as the latch opens).
//! A panicking waker is not modelled (loom does not survive a panic inside a model);
//! `tests/seams.rs` covers it with real threads. Run with `RUSTFLAGS="--cfg loom"
//! LOOM_MAX_PREEMPTIONS=3 cargo test -p tally-latch --test loom --release`.
#![cfg(loom)]
#![allow(unsafe_code)] // loom cells model the data a counter publishes

use loom::future::block_on;
use loom::sync::Arc;
use loom::thread;

use tally_latch::{CountDownLatch, FailableLatch, Failure, TrackingLatch};

/// Two counters race a waiter: the waiter always wakes (no lost wake-up) and sees zero.
#[test]
fn count_downs_race_a_waiter() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(2));
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                thread::spawn(move || assert!(latch.count_down()))
            })
            .collect();
        block_on(latch.wait());
        assert_eq!(latch.count(), 0);
        counters.into_iter().for_each(|c| c.join().unwrap());
    });
}

/// Two waiters, one counter: both wake.
#[test]
fn one_count_down_releases_two_waiters() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let other = {
            let latch = latch.clone();
            thread::spawn(move || block_on(latch.wait()))
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        block_on(latch.wait());
        other.join().unwrap();
        assert!(counter.join().unwrap());
    });
}

/// The writes a counter made before counting down are visible to the waiter it released.
#[test]
fn count_down_happens_before_wait_returns() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let data = Arc::new(loom::cell::UnsafeCell::new(0));
        let writer = {
            let (latch, data) = (latch.clone(), data.clone());
            thread::spawn(move || {
                data.with_mut(|value| {
                    // SAFETY: only this thread writes, before the count-down that the
                    // reader's wait synchronizes with; loom checks that claim.
                    unsafe { *value = 42 }
                });
                latch.count_down();
            })
        };
        block_on(latch.wait());
        // SAFETY: the wait returned, so the write happened-before this read.
        let value = data.with(|value| unsafe { *value });
        assert_eq!(value, 42);
        writer.join().unwrap();
    });
}

/// A failure races the last count-down and a waiter: the latch ends exactly one way, the
/// waiter sees that way, and a refused failure hands its error back. A count-down after
/// the claim dips the count to zero and puts it back, which must not read as open.
#[test]
fn fail_races_count_down_and_wait() {
    loom::model(|| {
        let latch = Arc::new(FailableLatch::new(1));
        let failer = {
            let latch = latch.clone();
            thread::spawn(move || latch.fail(7))
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        let seen = block_on(latch.wait());
        let failed = failer.join().unwrap();
        let counted = counter.join().unwrap();
        match seen {
            Ok(()) => {
                assert!(counted);
                assert_eq!(failed, Err(7));
                assert_eq!(latch.count(), 0);
            }
            Err(error) => {
                assert_eq!(error, 7);
                assert_eq!(failed, Ok(()));
                assert!(!counted);
                assert_eq!(latch.count(), 1, "the failure froze the count");
            }
        }
    });
}

/// One count-down too many: the extra one takes the count below zero and puts it back,
/// and meanwhile nobody sees the latch closed again or the count above zero.
#[test]
fn extra_count_down_never_reopens() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let counters: Vec<_> = (0..2)
            .map(|_| {
                let latch = latch.clone();
                thread::spawn(move || latch.count_down())
            })
            .collect();
        block_on(latch.wait());
        assert!(latch.is_open());
        assert_eq!(latch.count(), 0);
        let counted: Vec<bool> = counters.into_iter().map(|c| c.join().unwrap()).collect();
        assert_eq!(counted.iter().filter(|&&c| c).count(), 1);
        assert_eq!(latch.count(), 0);
    });
}

/// A counter handle dropped without reporting races a waiter and another counter: the
/// waiter never hangs, and a failure names the dropped counter.
#[test]
fn handle_drop_races_wait() {
    loom::model(|| {
        // A std `Arc`: the handles hold one, and its count needs no modelling.
        let latch = std::sync::Arc::new(TrackingLatch::new(["a", "b"]).unwrap());
        let a = latch.counter_owned("a").unwrap();
        let b = latch.counter_owned("b").unwrap();
        let dropper = thread::spawn(move || drop(a));
        let reporter = thread::spawn(move || b.report());
        let outcome = block_on(latch.wait());
        assert_eq!(
            outcome,
            Err(Failure::Abandoned {
                counter: "a".into(),
                panicking: false
            })
        );
        dropper.join().unwrap();
        reporter.join().unwrap();
    });
}

/// A deadline that is always already done races the two last reports: a timeout names at
/// least one counter (a counter mid-report is still pending), and `Ok` means it opened.
#[test]
fn deadline_re_check_races_the_last_reports() {
    loom::model(|| {
        let latch = std::sync::Arc::new(TrackingLatch::new(["a", "b"]).unwrap());
        let reporters: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|name| {
                let latch = latch.clone();
                thread::spawn(move || latch.count_down_for(name).unwrap())
            })
            .collect();
        match block_on(latch.wait_until(core::future::ready(()))) {
            Ok(Ok(())) => assert!(latch.is_open()),
            Ok(Err(failure)) => unreachable!("nobody fails this latch: {failure:?}"),
            Err(pending) => assert!(!pending.names().is_empty()),
        }
        reporters
            .into_iter()
            .for_each(|r| assert!(r.join().unwrap()));
    });
}

/// A failure races the last report and an expired deadline. When every counter has
/// reported but the failure is still being stored, there is no timeout to report: the wait
/// goes on until the failure lands (and loom proves it is woken then).
#[test]
fn deadline_re_check_races_a_failure() {
    loom::model(|| {
        let latch = std::sync::Arc::new(TrackingLatch::new_failable(["a"]).unwrap());
        let reporter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down_for("a").unwrap())
        };
        let failer = {
            let latch = latch.clone();
            thread::spawn(move || latch.fail(7))
        };
        let outcome = block_on(latch.wait_until(core::future::ready(())));
        let counted = reporter.join().unwrap();
        let failed = failer.join().unwrap();
        match outcome {
            Ok(Ok(())) => assert!(counted && failed.is_err()),
            Ok(Err(failure)) => {
                assert_eq!(failure.error(), Some(&7));
                assert!(!counted && failed.is_ok());
            }
            Err(pending) => assert_eq!(pending.names(), ["a"]),
        }
    });
}

/// An executor that polls its task inline from `wake`: the woken wait finishes and gives up
/// its waker slot inside the opening's notification, while another waiter registers and
/// leaves on its own thread. No deadlock, and both are released.
#[test]
fn inline_poll_inside_the_notification() {
    use std::sync::Mutex;
    use std::task::{Context, Wake, Waker};

    type Task = Mutex<Option<core::pin::Pin<Box<dyn core::future::Future<Output = ()> + Send>>>>;

    struct Inline {
        task: Task,
        finished: loom::sync::atomic::AtomicBool,
    }

    impl Inline {
        fn run(self: &std::sync::Arc<Self>) {
            let waker = Waker::from(self.clone());
            let mut task = self.task.lock().unwrap();
            if let Some(future) = task.as_mut() {
                if future
                    .as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_ready()
                {
                    *task = None;
                    self.finished
                        .store(true, loom::sync::atomic::Ordering::SeqCst);
                }
            }
        }
    }

    impl Wake for Inline {
        fn wake(self: std::sync::Arc<Self>) {
            self.run();
        }
    }

    loom::model(|| {
        let latch = std::sync::Arc::new(CountDownLatch::new(1));
        let inline = std::sync::Arc::new(Inline {
            task: Mutex::new(Some(Box::pin({
                let latch = latch.clone();
                async move { latch.wait().await }
            }))),
            finished: loom::sync::atomic::AtomicBool::new(false),
        });
        inline.run();
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        block_on(latch.wait());
        assert!(counter.join().unwrap());
        assert!(inline.finished.load(loom::sync::atomic::Ordering::SeqCst));
    });
}

/// A waker that records whether it was woken.
struct Flag(loom::sync::atomic::AtomicBool);

impl std::task::Wake for Flag {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.store(true, loom::sync::atomic::Ordering::SeqCst);
    }
}

/// Polls `future` once with `flag`'s waker.
fn poll_with<F: core::future::Future>(
    future: core::pin::Pin<&mut F>,
    flag: &std::sync::Arc<Flag>,
) -> core::task::Poll<F::Output> {
    let waker = std::task::Waker::from(flag.clone());
    future.poll(&mut std::task::Context::from_waker(&waker))
}

fn flag() -> std::sync::Arc<Flag> {
    std::sync::Arc::new(Flag(loom::sync::atomic::AtomicBool::new(false)))
}

/// A parked wait is dropped (giving its waker slot back) while the opening takes every
/// waker, and a second wait parks in the slot it freed: the second is always released.
#[test]
fn dropped_parked_wait_races_the_opening() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let leaver = {
            let latch = latch.clone();
            thread::spawn(move || {
                let mut wait = Box::pin(latch.wait());
                let _ = poll_with(wait.as_mut(), &flag());
                drop(wait);
                block_on(latch.wait());
            })
        };
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        block_on(latch.wait());
        leaver.join().unwrap();
        assert!(counter.join().unwrap());
    });
}

/// A parked wait is polled again with a new waker while the opening races it: either that
/// poll is ready, or the new waker (not only the old one) is woken.
#[test]
fn re_poll_with_a_new_waker_races_the_opening() {
    loom::model(|| {
        let latch = Arc::new(CountDownLatch::new(1));
        let mut wait = Box::pin(latch.wait());
        assert!(poll_with(wait.as_mut(), &flag()).is_pending());
        let counter = {
            let latch = latch.clone();
            thread::spawn(move || latch.count_down())
        };
        let second = flag();
        let ready = poll_with(wait.as_mut(), &second).is_ready();
        assert!(counter.join().unwrap());
        assert!(ready || second.0.load(loom::sync::atomic::Ordering::SeqCst));
    });
}
