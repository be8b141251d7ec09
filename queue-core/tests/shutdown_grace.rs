//! The shutdown policy past its deadline: discard the buffer and request cancellation,
//! wait out a grace period for the work in flight, then report what is still in flight,
//! by id. The deadlines are futures the tests control, so no assertion depends on
//! wall-clock time.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;

use common::{assert_pending, expect_ready, within};
use futures_lite::future::block_on;
use tally_queue::{JobEvent, JobId, Journal, Queue, Record};

/// A deadline that completes once fired, and counts its polls.
#[derive(Clone, Default)]
struct Manual {
    fired: Arc<AtomicBool>,
    polls: Arc<AtomicUsize>,
}

impl Manual {
    fn fire(&self) {
        // SeqCst: test flags.
        self.fired.store(true, Ordering::SeqCst);
    }

    fn polls(&self) -> usize {
        self.polls.load(Ordering::SeqCst)
    }
}

impl Future for Manual {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        // SeqCst: test flags.
        self.polls.fetch_add(1, Ordering::SeqCst);
        if self.fired.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

fn recorded() -> (Queue<&'static str>, Arc<Record>) {
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    (queue, record)
}

#[test]
fn past_the_deadline_the_work_in_flight_is_asked_to_stop() {
    let (queue, _record) = recorded();
    let running = queue.try_put("running").unwrap();
    let waiting = queue.try_put("waiting").unwrap();
    let job = queue.try_get().unwrap();
    let deadline = Manual::default();
    let mut closing = Box::pin(queue.shutdown_until(deadline.clone()));
    assert_pending(&mut closing);
    assert!(
        !job.is_cancelled(),
        "the drain asks nothing of the work in flight"
    );
    deadline.fire();
    let closed = expect_ready(&mut closing);
    assert!(job.is_cancelled());
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(waiting, "waiting")]);
    // No grace period: the report is made at the deadline, naming the running job.
    assert_eq!(closed.in_flight_ids, Some(vec![running]));
    assert_eq!(closed.ledger.in_flight, 1);
    job.uncertain();
}

#[test]
fn the_grace_period_is_not_started_before_the_deadline() {
    let (queue, _record) = recorded();
    queue.try_put("running").unwrap();
    let job = queue.try_get().unwrap();
    let (deadline, grace) = (Manual::default(), Manual::default());
    let mut closing = Box::pin(
        queue
            .shutdown_until(deadline.clone())
            .with_grace(grace.clone()),
    );
    for _ in 0..3 {
        assert_pending(&mut closing);
    }
    assert_eq!(grace.polls(), 0);
    deadline.fire();
    assert_pending(&mut closing);
    assert_eq!(grace.polls(), 1);
    assert!(job.is_cancelled());
    job.uncertain();
    let closed = expect_ready(&mut closing);
    assert_eq!(closed.ledger.uncertain, 1);
}

/// The seed's abort while handlers run: they observe cancellation within the grace
/// period and end uncertain; the one that ignores it is named; the journal agrees with
/// the ledger.
#[test]
fn handlers_that_stop_in_the_grace_period_end_and_the_stubborn_one_is_named() {
    let (queue, record) = recorded();
    let ids: Vec<JobId> = ["a", "b", "stubborn", "buffered"]
        .into_iter()
        .map(|item| queue.try_put(item).unwrap())
        .collect();
    let deadline = Manual::default();
    let stubborn_id = ids[2];
    let closed = within(10, move || {
        thread::scope(|s| {
            let mut stubborn = None;
            for _ in 0..3 {
                let job = queue.try_get().unwrap();
                if *job == "stubborn" {
                    stubborn = Some(job);
                    continue;
                }
                s.spawn(move || {
                    block_on(job.cancelled());
                    job.uncertain();
                });
            }
            deadline.fire();
            let closed = block_on(queue.shutdown_until(deadline).with_grace(async {
                // The grace period ends once both cooperative handlers have ended.
                while queue.ledger().uncertain < 2 {
                    futures_lite::future::yield_now().await;
                }
            }));
            assert_eq!(record.in_flight(), [stubborn_id]);
            let stubborn = stubborn.expect("the stubborn job was taken");
            assert!(stubborn.is_cancelled());
            stubborn.succeed();
            (closed, record.uncertain(), queue.ledger())
        })
    });
    let (closed, uncertain, ledger) = closed;
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(ids[3], "buffered")]);
    assert_eq!(closed.in_flight_ids, Some(vec![ids[2]]));
    assert_eq!(
        (
            closed.ledger.uncertain,
            closed.ledger.in_flight,
            closed.ledger.discarded
        ),
        (2, 1, 1)
    );
    assert_eq!(uncertain, [ids[0], ids[1]]);
    assert!(ledger.is_balanced());
    assert_eq!((ledger.succeeded, ledger.unfinished()), (1, 0));
}

#[test]
fn a_grace_period_that_outlasts_the_work_reports_nothing_in_flight() {
    // No journal: with nothing left in flight, the report still knows the answer.
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let (deadline, grace) = (Manual::default(), Manual::default());
    let mut closing = Box::pin(queue.shutdown_until(deadline.clone()).with_grace(grace));
    deadline.fire();
    assert_pending(&mut closing);
    job.reject();
    let closed = expect_ready(&mut closing);
    assert!(!closed.drained_in_time);
    assert_eq!(closed.in_flight_ids, Some(vec![]));
    assert_eq!((closed.ledger.rejected, closed.ledger.in_flight), (1, 0));
}

#[test]
fn without_a_journal_that_keeps_ids_the_report_says_it_cannot_name_them() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let closed = block_on(queue.shutdown_until(async {}));
    assert_eq!(closed.in_flight_ids, None);
    assert_eq!(closed.ledger.in_flight, 1);
    assert_eq!(queue.in_flight_ids(), None);
    job.uncertain();

    // A journal that keeps no ids answers the same.
    struct Counts(AtomicUsize);
    impl Journal for Counts {
        fn record(&self, _: JobEvent) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let queue = Queue::unbounded().with_journal(Counts(AtomicUsize::new(0)));
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    assert_eq!(block_on(queue.shutdown_until(async {})).in_flight_ids, None);
    job.uncertain();
}

#[test]
fn a_journal_that_panics_when_asked_for_ids_answers_none_and_is_counted() {
    struct Fragile;
    impl Journal for Fragile {
        fn record(&self, _: JobEvent) {}
        fn in_flight_ids(&self) -> Option<Vec<JobId>> {
            panic!("no ids today")
        }
    }
    let queue = Queue::unbounded().with_journal(Fragile);
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let closed = block_on(queue.shutdown_until(async {}));
    assert_eq!(closed.in_flight_ids, None);
    assert_eq!(queue.journal_panics(), 1);
    job.uncertain();
}

/// The deadline is polled before cancellation is requested, and a deadline whose poll
/// ends the last job makes the drain in time, with nothing cancelled.
#[test]
fn cancellation_follows_the_deadline_and_a_drain_it_finishes_is_in_time() {
    let (queue, _record) = recorded();
    queue.try_put("last").unwrap();
    let job = queue.try_get().unwrap();
    let seen_at_the_deadline = AtomicBool::new(true);
    let closed = block_on(queue.shutdown_until(async {
        seen_at_the_deadline.store(job.is_cancelled(), Ordering::SeqCst);
    }));
    assert!(!seen_at_the_deadline.load(Ordering::SeqCst));
    assert!(!closed.drained_in_time && job.is_cancelled());
    job.succeed();

    let (queue, _record) = recorded();
    queue.try_put("last").unwrap();
    let job = std::sync::Mutex::new(Some(queue.try_get().unwrap()));
    let closed = block_on(queue.shutdown_until(async {
        job.lock().unwrap().take().unwrap().succeed();
    }));
    assert!(closed.drained_in_time);
    assert!(!queue.is_cancel_requested());
    assert_eq!(closed.in_flight_ids, Some(vec![]));
}

/// Dropped at every poll, before and after the deadline, the policy loses no item: each
/// one is delivered, returned or dropped with the future, and the ledger balances.
#[test]
fn dropped_at_every_poll_the_policy_loses_nothing() {
    for stop_after in 0..5 {
        let (queue, _record) = recorded();
        queue.try_put("running").unwrap();
        queue.try_put("buffered").unwrap();
        let job = queue.try_get().unwrap();
        let (deadline, grace) = (Manual::default(), Manual::default());
        let mut closing = Box::pin(queue.shutdown_until(deadline.clone()).with_grace(grace));
        for poll in 0..stop_after {
            if poll == 2 {
                deadline.fire();
            }
            assert_pending(&mut closing);
        }
        drop(closing);
        job.uncertain();
        let ledger = queue.ledger();
        assert!(ledger.is_balanced(), "{ledger:?}");
        if stop_after > 2 {
            // Past the deadline: shut down immediately, the buffered item discarded.
            assert_eq!((ledger.discarded, ledger.buffered), (1, 0), "{stop_after}");
            assert!(queue.is_cancel_requested());
        } else if stop_after > 0 {
            assert!(queue.is_shut_down() && !queue.is_cancel_requested());
            assert_eq!(ledger.buffered, 1);
        } else {
            assert!(!queue.is_shut_down());
        }
    }
}
