//! Many producers and consumers on plain threads, mixing async and blocking forms: every
//! accepted id ends exactly once, and the ledger matches the test's own tally.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use common::scaled;
use futures_lite::future::block_on;
use tally_queue::{JobId, Outcome, Queue};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Succeeded,
    Rejected,
    Uncertain,
    Abandoned,
    Discarded,
}

fn run(
    queue: &Queue<(usize, usize)>,
    producers: usize,
    consumers: usize,
    per_producer: usize,
    immediate: bool,
) {
    let ends: Mutex<HashMap<JobId, End>> = Mutex::new(HashMap::new());
    let accepted: Mutex<Vec<(JobId, (usize, usize))>> = Mutex::new(Vec::new());
    let requeued = AtomicU64::new(0);
    let record = |id: JobId, end: End| {
        let previous = ends.lock().unwrap().insert(id, end);
        assert!(previous.is_none(), "{id} ended twice");
    };
    let drained = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for c in 0..consumers {
            let record = &record;
            let requeued = &requeued;
            handles.push(s.spawn(move || {
                let _worker = queue.worker();
                let mut retried = 0;
                loop {
                    let delivery = if c % 2 == 0 {
                        queue.get_blocking()
                    } else {
                        block_on(queue.get())
                    };
                    let Ok(delivery) = delivery else { return };
                    let id = delivery.id();
                    match id.get() % 5 {
                        0 => {
                            delivery.resolve(Outcome::Succeeded);
                            record(id, End::Succeeded);
                        }
                        1 => {
                            delivery.reject();
                            record(id, End::Rejected);
                        }
                        2 => {
                            delivery.uncertain();
                            record(id, End::Uncertain);
                        }
                        3 if retried < 3 => {
                            retried += 1;
                            match delivery.retry() {
                                // Relaxed: read after the threads are joined.
                                Ok(_) => drop(requeued.fetch_add(1, Ordering::Relaxed)),
                                Err(delivery) => {
                                    delivery.succeed();
                                    record(id, End::Succeeded);
                                }
                            }
                        }
                        _ => {
                            drop(delivery);
                            record(id, End::Abandoned);
                        }
                    }
                }
            }));
        }
        let mut producer_handles = Vec::new();
        for p in 0..producers {
            let accepted = &accepted;
            producer_handles.push(s.spawn(move || {
                for n in 0..per_producer {
                    let item = (p, n);
                    let result = if n % 2 == 0 {
                        queue.put_blocking(item)
                    } else {
                        block_on(queue.put(item))
                    };
                    match result {
                        Ok(id) => accepted.lock().unwrap().push((id, item)),
                        Err(err) => {
                            assert!(immediate && err.is_shut_down());
                            return;
                        }
                    }
                }
            }));
        }

        if immediate {
            std::thread::yield_now();
            queue.shutdown_now()
        } else {
            for handle in producer_handles {
                handle.join().unwrap();
            }
            queue.shutdown();
            Vec::new()
        }
    });
    for (id, _) in &drained {
        record(*id, End::Discarded);
    }
    let ledger = queue.join_blocking();
    let ends = ends.into_inner().unwrap();
    let accepted = accepted.into_inner().unwrap();

    // Every accepted id ended exactly once, and nothing ended that was not accepted.
    assert_eq!(ends.len(), accepted.len());
    for (id, _) in &accepted {
        assert!(ends.contains_key(id), "{id} never ended");
    }
    let count = |end: End| ends.values().filter(|&&e| e == end).count() as u64;
    assert_eq!(ledger.accepted, accepted.len() as u64);
    assert_eq!(ledger.succeeded, count(End::Succeeded));
    assert_eq!(ledger.rejected, count(End::Rejected));
    assert_eq!(ledger.uncertain, count(End::Uncertain));
    assert_eq!(ledger.abandoned, count(End::Abandoned));
    assert_eq!(ledger.discarded, count(End::Discarded));
    assert_eq!((ledger.buffered, ledger.in_flight), (0, 0));
    assert!(ledger.is_balanced(), "{ledger}");
    // Ids are unique. When no put raced a shutdown, they are the numbers from 0 up, except
    // that on a ring-backed queue (bounded up to 65,536) each retry uses one up.
    if !immediate {
        let mut ids: Vec<u64> = accepted.iter().map(|(id, _)| id.get()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), accepted.len(), "ids are unique");
        let skipped = if queue.capacity().is_some_and(|n| n <= 1 << 16) {
            requeued.into_inner()
        } else {
            0
        };
        let top = ids.last().map_or(0, |&id| id + 1);
        assert!(
            top <= accepted.len() as u64 + skipped,
            "ids run to {top} for {} accepted and {skipped} retries",
            accepted.len()
        );
    }
}

#[test]
fn stress_graceful_bounded() {
    let queue = Queue::bounded(4).unwrap();
    run(&queue, 4, 4, scaled(2_000, 20), false);
}

#[test]
fn stress_graceful_unbounded() {
    let queue = Queue::unbounded();
    run(&queue, 3, 2, scaled(2_000, 20), false);
}

#[test]
fn stress_graceful_unfinished_limit() {
    let queue = Queue::with_unfinished_limit(3).unwrap();
    run(&queue, 2, 3, scaled(2_000, 20), false);
}

#[test]
fn stress_immediate() {
    for _ in 0..scaled(20, 2) {
        let queue = Queue::bounded(8).unwrap();
        run(&queue, 3, 2, scaled(500, 10), true);
    }
}
