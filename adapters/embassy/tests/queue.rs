//! `QueueExt` on the host: embassy-time's std driver supplies the clock.

use std::sync::Arc;
use std::thread;

use embassy_time::{Duration, Instant};
use futures_lite::future::block_on;
use tally_embassy::QueueExt;
use tally_queue::GetTimeoutError;
use tally_queue::Queue;

const SHORT: Duration = Duration::from_millis(20);
const LONG: Duration = Duration::from_secs(10);

#[test]
fn get_times_out_on_an_empty_queue_and_loses_nothing() {
    let queue = Queue::<u32>::bounded(2).unwrap();
    let start = Instant::now();
    assert_eq!(
        block_on(queue.get_timeout(SHORT)).unwrap_err(),
        GetTimeoutError::TimedOut
    );
    assert!(start.elapsed() >= SHORT);
    queue.try_put(7).unwrap();
    let delivery = block_on(queue.get_timeout(SHORT)).unwrap();
    assert_eq!(*delivery, 7);
    delivery.succeed();
    assert_eq!(queue.ledger().succeeded, 1);
}

#[test]
fn get_sees_an_item_put_from_another_thread() {
    let queue = Queue::<u32>::bounded(1).unwrap();
    thread::scope(|s| {
        s.spawn(|| {
            thread::sleep(core::time::Duration::from_millis(10));
            queue.try_put(1).unwrap();
        });
        block_on(queue.get_timeout(LONG)).unwrap().succeed();
    });
}

#[test]
fn get_reports_shutdown() {
    let queue = Queue::<u32>::unbounded();
    queue.shutdown();
    assert_eq!(
        block_on(queue.get_timeout(LONG)).unwrap_err(),
        GetTimeoutError::ShutDown
    );
    assert_eq!(
        GetTimeoutError::ShutDown.to_string(),
        "queue is shut down and empty"
    );
}

#[test]
fn an_item_already_there_wins_over_a_zero_timeout() {
    let queue = Queue::<u32>::unbounded();
    queue.try_put(3).unwrap();
    block_on(queue.get_timeout(Duration::from_ticks(0)))
        .unwrap()
        .reject();
}

#[test]
fn get_owned_times_out_on_an_empty_queue_and_loses_nothing() {
    let queue = Arc::new(Queue::<u32>::bounded(2).unwrap());
    let before = queue.ledger();
    let start = Instant::now();
    assert_eq!(
        block_on(queue.get_owned_timeout(SHORT)).unwrap_err(),
        GetTimeoutError::TimedOut
    );
    assert!(start.elapsed() >= SHORT);
    assert_eq!(queue.ledger(), before);
}

#[test]
fn get_owned_takes_an_item_put_in_time_and_the_delivery_outlives_the_call() {
    let queue = Arc::new(Queue::<u32>::bounded(1).unwrap());
    let producer = thread::spawn({
        let queue = Arc::clone(&queue);
        move || {
            thread::sleep(core::time::Duration::from_millis(10));
            queue.try_put(5).unwrap();
        }
    });
    let delivery = block_on(queue.get_owned_timeout(LONG)).unwrap();
    producer.join().unwrap();
    // 'static: another thread ends it.
    let item = thread::spawn(move || delivery.succeed()).join().unwrap();
    assert_eq!(item, 5);
    assert_eq!(queue.ledger().succeeded, 1);
}

#[test]
fn join_times_out_with_the_unfinished_ledger_then_completes() {
    let queue = Queue::<u32>::bounded(4).unwrap();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let held = queue.try_get().unwrap();
    let timed_out = block_on(queue.join_timeout(SHORT)).unwrap_err();
    assert_eq!(
        (timed_out.ledger().buffered, timed_out.ledger().in_flight),
        (1, 1)
    );
    assert_eq!(timed_out.to_string(), "timed out with 2 jobs unfinished");
    held.succeed();
    queue.try_get().unwrap().uncertain();
    let ledger = block_on(queue.join_timeout(LONG)).unwrap();
    assert_eq!(
        (ledger.accepted, ledger.succeeded, ledger.uncertain),
        (2, 1, 1)
    );
    assert!(ledger.is_balanced());
}

#[test]
fn timed_out_put_hands_the_item_back_and_accepts_nothing() {
    let queue = Queue::<u32>::bounded(1).unwrap();
    queue.try_put(1).unwrap();
    let before = queue.ledger();
    let refused = block_on(queue.put_timeout(2, SHORT)).unwrap_err();
    assert!(refused.is_timed_out());
    assert_eq!(refused.into_inner(), 2);
    assert_eq!(queue.ledger(), before);
}

#[test]
fn shutdown_timeout_aborts_a_stalled_drain_and_returns_the_items() {
    let queue = Queue::<u32>::unbounded();
    let held_id = queue.try_put(1).unwrap();
    let buffered_id = queue.try_put(2).unwrap();
    let held = queue.try_get().unwrap();
    assert_eq!(held.id(), held_id);
    let closed = block_on(queue.shutdown_timeout(SHORT));
    assert!(!closed.drained_in_time);
    assert_eq!(closed.returned, [(buffered_id, 2)]);
    assert_eq!((closed.ledger.in_flight, closed.ledger.discarded), (1, 1));
    held.succeed();
    assert!(block_on(queue.join_timeout(LONG)).is_ok());
}

#[test]
fn shutdown_timeout_with_grace_waits_for_cancelled_work_then_names_the_rest() {
    let record = Arc::new(tally_queue::Record::new());
    let queue = Queue::unbounded().with_journal(Arc::clone(&record));
    let cooperative = queue.try_put(1).unwrap();
    let stubborn = queue.try_put(2).unwrap();
    let (first, second) = (queue.try_get().unwrap(), queue.try_get().unwrap());
    let start = Instant::now();
    let closed = thread::scope(|s| {
        s.spawn(move || {
            block_on(first.cancelled());
            first.uncertain();
        });
        block_on(queue.shutdown_timeout_with_grace(SHORT, SHORT))
    });
    assert!(
        start.elapsed() >= SHORT + SHORT,
        "the grace period was cut short"
    );
    assert!(second.is_cancelled());
    assert_eq!(closed.in_flight_ids, Some(vec![stubborn]));
    assert_eq!(record.uncertain(), [cooperative]);
    second.succeed();
    assert!(block_on(queue.join_timeout(LONG)).is_ok());
}
