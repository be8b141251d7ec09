//! The seed's two probe programs, `queue_shutdown_probe.py` and `queue_drain.py`, ported.
//!
//! Under CPython 3.13.0 (`PYENV_VERSION=3.13.0 python3`) they print:
//!
//! ```text
//! $ python3 queue_shutdown_probe.py
//! Assertions completed; no work handler was called.
//! $ python3 queue_drain.py
//! {0: ('ok', 0), 1: ('ok', 1), 2: ('rejected', None), 3: ('ok', 9)}
//! ```
//!
//! Every assertion of the originals holds here too; the ports add what CPython cannot say.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;

use common::{assert_pending, expect_ready};
use futures_lite::future::{self, block_on};
use tally_queue::{GetError, Queue, TryGetError, TryPutError};

#[test]
fn seed_queue_shutdown_probe() {
    let queue = Queue::unbounded();
    let mut ids = Vec::new();
    for item in ["active", "discarded-a", "discarded-b"] {
        ids.push(queue.try_put(item).unwrap());
    }
    let active = queue.try_get().unwrap();
    assert_eq!(*active, "active");

    // CPython drops the two drained items; here they come back with their ids.
    let drained = queue.shutdown_now();
    assert_eq!(
        drained,
        vec![(ids[1], "discarded-a"), (ids[2], "discarded-b")]
    );
    assert!(queue.is_empty());

    // A join started after the shutdown waits for the held item.
    let mut joiner = queue.join();
    assert_pending(&mut joiner);
    // CPython: `queue.task_done()`, an anonymous acknowledgement. Here the held delivery
    // ends, with an outcome.
    active.succeed();
    let ledger = expect_ready(&mut joiner);
    assert_eq!(ledger.accepted, 3);
    assert_eq!((ledger.succeeded, ledger.discarded), (1, 2));

    assert!(matches!(
        queue.try_put("late"),
        Err(TryPutError::ShutDown("late"))
    ));
    assert_eq!(queue.try_get().unwrap_err(), TryGetError::ShutDown);

    let abandoned = Queue::unbounded();
    let id = abandoned.try_put("never handled").unwrap();
    assert_eq!(abandoned.shutdown_now(), vec![(id, "never handled")]);
    let ledger = block_on(abandoned.join());
    // "no work handler was called": the ledger says so.
    assert_eq!(ledger.succeeded + ledger.rejected + ledger.uncertain, 0);
    assert_eq!(ledger.discarded, 1);
    assert!(ledger.is_balanced());
}

#[test]
fn seed_queue_drain() {
    let queue = Queue::bounded(2).unwrap();
    let outcomes: Mutex<BTreeMap<u64, (&str, Option<u64>)>> = Mutex::new(BTreeMap::new());

    let worker = || async {
        loop {
            let delivery = match queue.get().await {
                Ok(delivery) => delivery,
                Err(GetError::ShutDown) => return,
            };
            let item = *delivery;
            // One yield per item so the two workers interleave, as asyncio's do.
            future::yield_now().await;
            if item == 2 {
                outcomes.lock().unwrap().insert(item, ("rejected", None));
                delivery.reject();
            } else {
                outcomes
                    .lock()
                    .unwrap()
                    .insert(item, ("ok", Some(item * item)));
                delivery.succeed();
            }
        }
    };
    let producer = async {
        for item in 0..4u64 {
            queue.put(item).await.unwrap();
        }
        queue.shutdown();
    };
    block_on(future::zip(producer, future::zip(worker(), worker())));
    let ledger = block_on(queue.join());

    let outcomes = outcomes.into_inner().unwrap();
    assert_eq!(
        format!("{outcomes:?}"),
        r#"{0: ("ok", Some(0)), 1: ("ok", Some(1)), 2: ("rejected", None), 3: ("ok", Some(9))}"#
    );
    // The queue's own ledger agrees with the application's record, which CPython's
    // `join` cannot tell.
    assert_eq!(ledger.accepted, 4);
    assert_eq!((ledger.succeeded, ledger.rejected), (3, 1));
    assert!(ledger.is_balanced());
}
