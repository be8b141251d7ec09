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
#[cfg(feature = "std")]
use std::thread;

#[cfg(feature = "std")]
use common::within;
use common::{assert_pending, expect_ready};
use futures_lite::future::block_on;
use tally_queue::{JobEvent, Journal, Queue};
#[cfg(feature = "std")]
use tally_queue::{JobId, Record};

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

    #[cfg(feature = "std")]
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

#[cfg(feature = "std")]
fn recorded() -> (Queue<&'static str>, Arc<Record>) {
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    (queue, record)
}

#[test]
#[cfg(feature = "std")]
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
#[cfg(feature = "std")]
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
#[cfg(feature = "std")]
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
#[cfg(feature = "std")]
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
#[cfg(feature = "std")]
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
#[cfg(feature = "std")]
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

/// A `Record` that holds the thread recording the first event `hold` picks until told to
/// go on, or for half a second: the queue is then between the two steps of a move, as it
/// is for an instant on every such move.
#[cfg(feature = "std")]
struct HeldAt {
    record: Record,
    hold: fn(&JobEvent) -> bool,
    held: AtomicBool,
    reached: std::sync::mpsc::SyncSender<JobEvent>,
    go: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

#[cfg(feature = "std")]
impl HeldAt {
    fn new(
        hold: fn(&JobEvent) -> bool,
    ) -> (
        Arc<Self>,
        std::sync::mpsc::Receiver<JobEvent>,
        std::sync::mpsc::Sender<()>,
    ) {
        let (reached, reached_rx) = std::sync::mpsc::sync_channel(1);
        let (go, go_rx) = std::sync::mpsc::channel();
        let journal = HeldAt {
            record: Record::new(),
            hold,
            held: AtomicBool::new(false),
            reached,
            go: std::sync::Mutex::new(go_rx),
        };
        (Arc::new(journal), reached_rx, go)
    }
}

#[cfg(feature = "std")]
impl Journal for HeldAt {
    fn record(&self, event: JobEvent) {
        self.record.record(event);
        // SeqCst: a test flag.
        if (self.hold)(&event) && !self.held.swap(true, Ordering::SeqCst) {
            let _ = self.reached.send(event);
            // Bounded: a report that waits for this move to finish must not hang the test.
            let _ = self
                .go
                .lock()
                .unwrap()
                .recv_timeout(std::time::Duration::from_millis(500));
        }
    }

    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        self.record.in_flight_ids()
    }
}

/// Whether a report agrees with itself: its ledger balances and counts `accepted` jobs,
/// and its ids in flight (if it has them) are exactly as many as its ledger counts in
/// flight, each one of `held` (the ids delivered, possibly still in flight).
#[cfg(feature = "std")]
fn disagreement<T>(
    closed: &tally_queue::Closed<T>,
    accepted: u64,
    held: &[JobId],
) -> Option<String> {
    let ledger = closed.ledger;
    if !ledger.is_balanced() || ledger.accepted != accepted {
        return Some(format!("the ledger does not balance: {ledger}"));
    }
    match &closed.in_flight_ids {
        Some(ids)
            if ids.len() as u64 != ledger.in_flight || !ids.iter().all(|id| held.contains(id)) =>
        {
            Some(format!(
                "in_flight_ids: {ids:?}, but the ledger says {ledger}"
            ))
        }
        _ => None,
    }
}

/// Issue 31, finding 4: a handler ends its job uncertain while the report is made (its
/// ending is recorded in the journal, not yet counted in the ledger). The report must agree
/// with itself: not `in_flight_ids: Some([])` beside `in_flight: 1`.
#[test]
#[cfg(feature = "std")]
fn a_report_made_while_a_job_ends_names_as_many_ids_as_it_counts_in_flight() {
    let (journal, recorded, go) = HeldAt::new(|event| matches!(event, JobEvent::Ended { .. }));
    let queue = Arc::new(Queue::unbounded().with_journal(Arc::clone(&journal)));
    for item in ["running", "buffered", "buffered too"] {
        queue.try_put(item).unwrap();
    }
    let job = queue.try_get_owned().unwrap();
    let running = job.id();
    let closed = within(10, move || {
        let handler = thread::spawn(move || {
            block_on(job.cancelled());
            job.uncertain();
        });
        // The grace period ends once the ending is recorded (and held there); the
        // ending is let go while the report is being made.
        let closed = block_on(queue.shutdown_until(async {}).with_grace(async {
            let _ = recorded.recv_timeout(std::time::Duration::from_secs(5));
            thread::spawn(move || {
                thread::sleep(std::time::Duration::from_millis(50));
                go.send(()).unwrap();
            });
        }));
        handler.join().unwrap();
        closed
    });
    assert_eq!(closed.returned.len(), 2);
    assert!(closed.in_flight_ids.is_some(), "a Record keeps the ids");
    if let Some(why) = disagreement(&closed, 3, &[running]) {
        panic!("the report contradicts itself: {why}");
    }
}

/// Issue 31, finding 4: a handler ends its job uncertain while reports are made, with no
/// journal to hold it: no report's ledger may count the job twice (the issue saw "accepted
/// 3: 0 buffered, 1 in flight, ... 1 uncertain, ... 2 discarded"), and with a `Record` no
/// report may name fewer or more ids than it counts in flight. A race: each round, the
/// test makes report after report (`shutdown_until` past its deadline, again and again)
/// while the handler ends the job, until the queue is settled.
#[test]
#[cfg(feature = "std")]
fn a_report_made_while_a_job_ends_counts_no_job_twice() {
    let rounds = common::scaled(50_000, 20);
    let mut unbalanced = Vec::new();
    let mut reports = 0u64;
    let (jobs, handler_jobs) = std::sync::mpsc::channel::<tally_queue::OwnedDelivery<u32>>();
    let handler = thread::spawn(move || {
        // Spins (never parks), so as to end each job while the reports run; yields now and
        // then, so that a busy machine does not stall the rounds.
        let mut idle = 0u32;
        loop {
            match handler_jobs.try_recv() {
                Ok(job) => drop(job.uncertain()),
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    idle = idle.wrapping_add(1);
                    if idle % 1_024 == 0 {
                        thread::yield_now();
                    }
                    std::hint::spin_loop();
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
            }
        }
    });
    // A time budget too: on a busy machine a round waits for the handler to be scheduled.
    let budget = std::time::Instant::now();
    let mut round = 0;
    while round < rounds && budget.elapsed() < std::time::Duration::from_millis(1_500) {
        round += 1;
        // Unbounded, bounded, and with a `Record`, whose ids the report must agree with.
        let queue = Arc::new(match round % 3 {
            0 => Queue::unbounded(),
            1 => Queue::bounded(4).unwrap(),
            _ => Queue::unbounded().with_journal(Arc::new(Record::new())),
        });
        for n in 0..3 {
            queue.try_put(n).unwrap();
        }
        let job = queue.try_get_owned().unwrap();
        let held = [job.id()];
        jobs.send(job).unwrap();
        let reporting = std::time::Instant::now();
        loop {
            let settled = queue.is_settled();
            let closed = block_on(queue.shutdown_until(async {}));
            reports += 1;
            if let Some(why) = disagreement(&closed, 3, &held) {
                unbalanced.push(why);
            }
            if settled {
                break;
            }
            let late = reporting.elapsed() > std::time::Duration::from_secs(5);
            assert!(
                !late,
                "round {round}: the job never ended: {}",
                queue.ledger()
            );
        }
    }
    drop(jobs);
    handler.join().unwrap();
    let (ledgers, ids): (Vec<_>, Vec<_>) = unbalanced
        .iter()
        .partition(|why| why.starts_with("the ledger"));
    assert!(
        unbalanced.is_empty(),
        "{} of {reports} reports ({round} rounds) contradict themselves: {} ledgers that do \
         not balance (e.g. {:?}), {} in_flight_ids that disagree with the ledger (e.g. {:?})",
        unbalanced.len(),
        ledgers.len(),
        ledgers.first(),
        ids.len(),
        ids.first()
    );
}

/// One thread shuts the queue down at once and is held while the journal hears of the
/// items it drained (taken out of the buffer, not yet counted discarded); another makes a
/// report meanwhile. The report must name as many ids as it counts in flight: the
/// running job alone.
#[test]
#[cfg(feature = "std")]
fn a_report_made_while_another_thread_drains_names_as_many_ids_as_it_counts_in_flight() {
    let (journal, reached, go) = HeldAt::new(|event| matches!(event, JobEvent::Discarded(_)));
    let queue = Arc::new(Queue::unbounded().with_journal(Arc::clone(&journal)));
    for item in ["running", "buffered", "buffered too"] {
        queue.try_put(item).unwrap();
    }
    let job = queue.try_get_owned().unwrap();
    let running = job.id();
    let closed = within(10, move || {
        let drainer = thread::spawn({
            let queue = Arc::clone(&queue);
            move || queue.shutdown_now()
        });
        reached.recv().unwrap();
        let closed = block_on(queue.shutdown_until(async {}));
        go.send(()).unwrap();
        assert_eq!(drainer.join().unwrap().len(), 2);
        closed
    });
    assert!(closed.returned.is_empty(), "the other thread drained them");
    assert_eq!(
        (closed.in_flight_ids.as_deref(), closed.ledger.in_flight),
        (Some(&[running][..]), 1),
        "the report contradicts itself or names the drained jobs: {}",
        closed.ledger
    );
    job.uncertain();
}

/// A put lands in the growable buffer after an immediate shutdown drained it: the put
/// takes its item back out and keeps it as a dead letter. A report made while that put is
/// held between the two (its item taken, not yet counted discarded) must name as many ids
/// as it counts in flight.
#[test]
#[cfg(feature = "std")]
fn a_report_made_while_a_late_put_is_buried_names_as_many_ids_as_it_counts_in_flight() {
    // The journal holds the late put twice: at its acceptance (until the drain is done),
    // then at its burial (while the report is made).
    let (journal, reached, go) = HeldAt::new(|event| matches!(event, JobEvent::Accepted(_)));
    let (burial, buried, bury) = HeldAt::new(|event| matches!(event, JobEvent::Discarded(_)));
    struct Both(Arc<HeldAt>, Arc<HeldAt>);
    impl Journal for Both {
        fn record(&self, event: JobEvent) {
            self.0.record(event);
            self.1.record(event);
        }
        fn in_flight_ids(&self) -> Option<Vec<JobId>> {
            self.0.in_flight_ids()
        }
    }
    let queue = Arc::new(Queue::unbounded().with_journal(Both(journal, burial)));
    let closed = within(10, move || {
        let putter = thread::spawn({
            let queue = Arc::clone(&queue);
            move || queue.try_put("late")
        });
        let accepted = reached.recv().unwrap();
        assert!(
            queue.shutdown_now().is_empty(),
            "the put has not landed yet"
        );
        go.send(()).unwrap();
        let discarded = buried.recv().unwrap();
        assert_eq!(discarded.id(), accepted.id());
        let closed = block_on(queue.shutdown_until(async {}));
        bury.send(()).unwrap();
        assert!(putter.join().unwrap().is_ok(), "the put landed");
        assert_eq!(queue.take_dead_letters().len(), 1);
        closed
    });
    assert_eq!(
        (closed.in_flight_ids.as_deref(), closed.ledger.in_flight),
        (Some(&[][..]), 0),
        "the report contradicts itself: {}",
        closed.ledger
    );
}
