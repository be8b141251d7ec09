//! The queue half of the suite every runtime adapter passes. The including test file
//! provides `block_on` (its runtime) and imports its crate's `QueueExt`. Every timed wait
//! is created inside the `async` block that `block_on` runs, as tokio's timer requires.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tally_queue::{GetTimeoutError, JobEvent, JobId, Journal, PutTimeoutError, Queue, Record};

use super::{block_on, QueueExt};

/// The timeout the tests expect to fire.
const SHORT: Duration = Duration::from_millis(50);
/// A timeout that must not fire: the queue answers long before.
const LONG: Duration = Duration::from_secs(30);
/// "On time": a generous bound for a timeout or an answer, far above scheduling noise.
const MARGIN: Duration = Duration::from_secs(5);

fn assert_on_time(start: Instant) {
    let elapsed = start.elapsed();
    assert!(elapsed >= SHORT, "fired early, after {elapsed:?}");
    assert!(elapsed < MARGIN, "fired late, after {elapsed:?}");
}

#[test]
fn get_timeout_fires_on_time_and_leaves_the_ledger_unchanged() {
    let queue = Queue::<u32>::bounded(2).unwrap();
    queue.try_put(1).unwrap();
    let held = queue.try_get().unwrap();
    let before = queue.ledger();
    let start = Instant::now();
    assert_eq!(
        block_on(async { queue.get_timeout(SHORT).await }).unwrap_err(),
        GetTimeoutError::TimedOut
    );
    assert_on_time(start);
    assert_eq!(queue.ledger(), before);
    held.succeed();
}

#[test]
fn get_timeout_takes_an_item_that_arrives_in_time() {
    let queue = Queue::<u32>::bounded(1).unwrap();
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(20));
            queue.try_put(7).unwrap();
        });
        let job = block_on(async { queue.get_timeout(LONG).await }).unwrap();
        assert_eq!(*job, 7);
        job.succeed();
    });
    assert!(start.elapsed() < MARGIN);
    assert_eq!(queue.ledger().succeeded, 1);
}

#[test]
fn get_owned_timeout_fires_on_time_and_leaves_the_ledger_unchanged() {
    let queue = Arc::new(Queue::<u32>::bounded(2).unwrap());
    queue.try_put(1).unwrap();
    let held = queue.try_get_owned().unwrap();
    let before = queue.ledger();
    let start = Instant::now();
    assert_eq!(
        block_on(async { queue.get_owned_timeout(SHORT).await }).unwrap_err(),
        GetTimeoutError::TimedOut
    );
    assert_on_time(start);
    assert_eq!(queue.ledger(), before);
    held.succeed();
}

#[test]
fn get_owned_timeout_takes_an_item_that_arrives_in_time_for_another_thread_to_end() {
    let queue = Arc::new(Queue::<u32>::bounded(1).unwrap());
    let start = Instant::now();
    let producer = thread::spawn({
        let queue = Arc::clone(&queue);
        move || {
            thread::sleep(Duration::from_millis(20));
            queue.try_put(7).unwrap();
        }
    });
    let job = block_on(async { queue.get_owned_timeout(LONG).await }).unwrap();
    producer.join().unwrap();
    assert!(start.elapsed() < MARGIN);
    // The delivery is 'static: a thread that outlives this borrow of the queue ends it.
    assert_eq!(thread::spawn(move || job.succeed()).join().unwrap(), 7);
    assert_eq!(queue.ledger().succeeded, 1);
}

#[test]
fn get_owned_timeout_reports_a_drained_shutdown_at_once() {
    let queue = Arc::new(Queue::<u32>::unbounded());
    queue.shutdown();
    let start = Instant::now();
    assert_eq!(
        block_on(async { queue.get_owned_timeout(LONG).await }).unwrap_err(),
        GetTimeoutError::ShutDown
    );
    assert!(start.elapsed() < MARGIN);
}

#[test]
fn get_timeout_reports_a_drained_shutdown_at_once() {
    let queue = Queue::<u32>::unbounded();
    queue.shutdown();
    let start = Instant::now();
    assert_eq!(
        block_on(async { queue.get_timeout(LONG).await }).unwrap_err(),
        GetTimeoutError::ShutDown
    );
    assert!(start.elapsed() < MARGIN);
}

#[test]
fn put_timeout_hands_the_item_back_and_leaves_the_ledger_unchanged() {
    let queue = Queue::bounded(1).unwrap();
    queue.try_put(String::from("first")).unwrap();
    let before = queue.ledger();
    let start = Instant::now();
    match block_on(async { queue.put_timeout(String::from("second"), SHORT).await }) {
        Err(PutTimeoutError::TimedOut(item)) => assert_eq!(item, "second"),
        other => panic!("expected a timed-out put, got {other:?}"),
    }
    assert_on_time(start);
    assert_eq!(queue.ledger(), before);
    assert_eq!(queue.len(), 1);
}

#[test]
fn put_timeout_gets_room_that_frees_in_time() {
    let queue = Queue::bounded(1).unwrap();
    let first = queue.try_put(1).unwrap();
    let start = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(Duration::from_millis(20));
            let job = queue.try_get().unwrap();
            assert_eq!(job.id(), first);
            job.succeed();
        });
        let second: JobId = block_on(async { queue.put_timeout(2, LONG).await }).unwrap();
        assert_ne!(second, first);
    });
    assert!(start.elapsed() < MARGIN);
    assert_eq!(queue.ledger().accepted, 2);
}

#[test]
fn join_timeout_fires_on_time_with_the_ledger_and_changes_nothing() {
    let queue = Queue::<u32>::unbounded();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let held = queue.try_get().unwrap();
    let before = queue.ledger();
    let start = Instant::now();
    let timed_out = block_on(async { queue.join_timeout(SHORT).await }).unwrap_err();
    assert_on_time(start);
    assert_eq!(timed_out.ledger(), before);
    assert_eq!(
        (timed_out.ledger().buffered, timed_out.ledger().in_flight),
        (1, 1)
    );
    assert_eq!(queue.ledger(), before);

    held.succeed();
    queue.try_get().unwrap().uncertain();
    let ledger = block_on(async { queue.join_timeout(LONG).await }).unwrap();
    assert_eq!((ledger.succeeded, ledger.uncertain), (1, 1));
    assert!(ledger.is_balanced());
}

#[test]
fn shutdown_timeout_drains_when_the_workers_finish_in_time() {
    let queue = Queue::bounded(8).unwrap();
    for n in 0..5 {
        queue.try_put(n).unwrap();
    }
    let start = Instant::now();
    let closed = thread::scope(|s| {
        let queue = &queue;
        let worker = queue.worker();
        s.spawn(move || {
            let _worker = worker;
            while let Ok(job) = queue.get_blocking() {
                thread::sleep(Duration::from_millis(2));
                if *job == 3 {
                    job.reject();
                } else {
                    job.succeed();
                }
            }
        });
        block_on(async { queue.shutdown_timeout(LONG).await })
    });
    assert!(start.elapsed() < MARGIN);
    assert!(closed.drained_in_time);
    assert!(closed.returned.is_empty());
    assert_eq!(
        (
            closed.ledger.accepted,
            closed.ledger.succeeded,
            closed.ledger.rejected
        ),
        (5, 4, 1)
    );
    assert!(queue.is_shut_down());
}

#[test]
fn shutdown_timeout_aborts_a_slow_drain_and_hands_the_items_back() {
    let queue = Queue::unbounded();
    let ids: Vec<JobId> = ["a", "b", "c"]
        .into_iter()
        .map(|item| queue.try_put(item).unwrap())
        .collect();
    let stuck = queue.try_get().unwrap();
    let start = Instant::now();
    let closed = block_on(async { queue.shutdown_timeout(SHORT).await });
    assert_on_time(start);
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(ids[1], "b"), (ids[2], "c")]);
    assert_eq!(
        (
            closed.ledger.in_flight,
            closed.ledger.discarded,
            closed.ledger.buffered
        ),
        (1, 2, 0)
    );
    assert!(closed.ledger.is_balanced());
    assert!(
        stuck.is_cancelled(),
        "past the deadline, cancellation is requested"
    );
    // No journal keeps ids here, so the report cannot name the one in flight.
    assert_eq!(closed.in_flight_ids, None);
    // The delivery still in flight must still end, and then the queue is settled.
    stuck.succeed();
    let ledger = block_on(async { queue.join_timeout(LONG).await }).unwrap();
    assert_eq!((ledger.succeeded, ledger.discarded), (1, 2));
}

/// The grace period: a handler that stops when asked ends within it, one that ignores
/// the request is named in the report once the grace period is over.
#[test]
fn shutdown_timeout_with_grace_waits_for_cancelled_work_then_names_the_rest() {
    let record = Arc::new(Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    let cooperative = queue.try_put("stops when asked").unwrap();
    let stubborn = queue.try_put("ignores the request").unwrap();
    let buffered = queue.try_put("never taken").unwrap();
    let (first, second) = (queue.try_get().unwrap(), queue.try_get().unwrap());
    let start = Instant::now();
    let closed = thread::scope(|s| {
        s.spawn(move || {
            block_on(first.cancelled());
            first.uncertain();
        });
        block_on(async { queue.shutdown_timeout_with_grace(SHORT, SHORT).await })
    });
    let elapsed = start.elapsed();
    assert!(
        elapsed >= SHORT * 2,
        "the grace period was cut short: {elapsed:?}"
    );
    assert!(elapsed < MARGIN, "fired late, after {elapsed:?}");
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(buffered, "never taken")]);
    assert_eq!(closed.in_flight_ids, Some(vec![stubborn]));
    assert_eq!(record.uncertain(), [cooperative]);
    assert_eq!((closed.ledger.uncertain, closed.ledger.in_flight), (1, 1));
    second.reject();
    assert!(block_on(async { queue.join_timeout(LONG).await }).is_ok());
}

/// A grace period cut short by the work ending: the report comes as soon as the last
/// cancelled handler stops, long before the grace period would end.
#[test]
fn shutdown_timeout_with_grace_reports_as_soon_as_the_work_stops() {
    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let start = Instant::now();
    let closed = thread::scope(|s| {
        s.spawn(move || {
            block_on(job.cancelled());
            job.uncertain();
        });
        block_on(async { queue.shutdown_timeout_with_grace(SHORT, LONG).await })
    });
    assert_on_time(start);
    assert_eq!(closed.in_flight_ids, Some(vec![]));
    assert_eq!(closed.ledger.uncertain, 1);
}

/// A `Record` that holds the thread recording an ending until told to go on (bounded by
/// `MARGIN`): the ending is then in the journal and not yet in the ledger, as it is for an
/// instant on every ending.
struct HeldEndings {
    record: Record,
    recorded: std::sync::mpsc::SyncSender<JobId>,
    go: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl Journal for HeldEndings {
    fn record(&self, event: JobEvent) {
        self.record.record(event);
        if let JobEvent::Ended { id, .. } = event {
            let _ = self.recorded.send(id);
            let _ = self.go.lock().unwrap().recv_timeout(MARGIN);
        }
    }

    fn in_flight_ids(&self) -> Option<Vec<JobId>> {
        self.record.in_flight_ids()
    }
}

/// A report made while a handler ends its job (the ending recorded by the journal, not yet
/// counted by the ledger) agrees with itself: its ledger balances and it names as many ids
/// in flight as its ledger counts, not `in_flight_ids: Some([])` beside `in_flight: 1`.
#[test]
fn shutdown_timeout_with_grace_reports_a_job_ending_meanwhile_consistently() {
    let (recorded_tx, recorded) = std::sync::mpsc::sync_channel(1);
    let (go, go_rx) = std::sync::mpsc::channel();
    let journal = Arc::new(HeldEndings {
        record: Record::new(),
        recorded: recorded_tx,
        go: std::sync::Mutex::new(go_rx),
    });
    let queue = Queue::unbounded().with_journal(Arc::clone(&journal));
    for item in ["running", "buffered", "buffered too"] {
        queue.try_put(item).unwrap();
    }
    let job = queue.try_get().unwrap();
    let running = job.id();
    let closed = thread::scope(|s| {
        s.spawn(move || job.uncertain());
        assert_eq!(recorded.recv_timeout(MARGIN), Ok(running));
        let closed = block_on(async {
            queue
                .shutdown_timeout_with_grace(Duration::ZERO, Duration::ZERO)
                .await
        });
        go.send(()).unwrap();
        closed
    });
    let ledger = closed.ledger;
    assert_eq!(closed.returned.len(), 2);
    assert!(ledger.is_balanced(), "the report's ledger: {ledger}");
    let ids = closed.in_flight_ids.expect("a Record keeps the ids");
    assert_eq!(
        ids.len() as u64,
        ledger.in_flight,
        "the report names {ids:?} in flight beside {ledger}"
    );
    assert!(ids.iter().all(|id| *id == running), "{ids:?}");
}
