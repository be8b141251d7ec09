//! One queue and one latch shared, at the same time, by four kinds of user:
//!
//! - two producer tasks on a tokio runtime (`tally_tokio::QueueExt::put_timeout`);
//! - two consumer tasks on smol's executor (`tally_smol::QueueExt::get_timeout`);
//! - a plain thread that produces with `put_blocking` and then consumes with
//!   `get_blocking`;
//! - a waiter on async-std that waits for every producer to report on the latch
//!   (`tally_async_std::LatchExt::wait_timeout`), then drains the queue
//!   (`tally_async_std::QueueExt::shutdown_timeout`).
//!
//! The primitives name no runtime, so each side uses its own timer and they interoperate.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use tally_latch::TrackingLatch;
use tally_queue::{Closed, GetTimeoutError, JobId, Queue};

/// The producers, as named on the latch.
pub(crate) const PRODUCERS: [&str; 3] = ["tokio-0", "tokio-1", "thread"];

/// Far above anything the scenario needs; reaching it is a failure.
const DEADLINE: Duration = Duration::from_secs(20);

/// How long a smol consumer waits for an item before checking in again.
const IDLE: Duration = Duration::from_millis(20);

/// An item: who produced it, and its number from that producer.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Item {
    pub(crate) producer: &'static str,
    pub(crate) seq: u32,
}

/// What each side saw.
#[derive(Debug)]
pub(crate) struct Report {
    /// Every put that was accepted: its id and item.
    pub(crate) accepted: Vec<(JobId, Item)>,
    /// Every delivery that ended, with the consumer that ended it.
    pub(crate) ended: Vec<(JobId, Item, &'static str)>,
    /// What the async-std waiter got from the drain.
    pub(crate) closed: Closed<Item>,
}

/// Runs every side at once; returns when all have finished.
pub(crate) fn run(items_per_producer: u32) -> Report {
    let queue = Arc::new(Queue::<Item>::bounded(8).expect("a capacity of at least 1"));
    let latch = Arc::new(TrackingLatch::new(PRODUCERS).expect("distinct names"));
    let ended = Arc::new(Mutex::new(Vec::new()));

    // smol consumers first, registered as workers before anything is put.
    let consumers: Vec<_> = ["smol-0", "smol-1"]
        .into_iter()
        .map(|name| {
            let (queue, ended) = (queue.clone(), ended.clone());
            let registration = queue.worker_owned();
            smol::spawn(async move {
                let _registration = registration;
                loop {
                    match tally_smol::QueueExt::get_timeout(&*queue, IDLE).await {
                        Ok(delivery) => {
                            let entry = (delivery.id(), delivery.succeed(), name);
                            ended.lock().unwrap().push(entry);
                        }
                        // Idle for a while: a real consumer would check in here.
                        Err(GetTimeoutError::TimedOut) => continue,
                        Err(GetTimeoutError::ShutDown) => return,
                    }
                }
            })
        })
        .collect();

    // The async-std waiter: once every producer has reported, drain the queue.
    let waiter = {
        let (queue, latch) = (queue.clone(), latch.clone());
        async_std::task::spawn(async move {
            match tally_async_std::LatchExt::wait_timeout(&*latch, DEADLINE).await {
                Ok(Ok(())) => {}
                Ok(Err(failure)) => panic!("a producer failed: {failure}"),
                Err(pending) => panic!("producers stalled: {pending}"),
            }
            tally_async_std::QueueExt::shutdown_timeout(&*queue, DEADLINE).await
        })
    };

    // The plain thread: produces with the blocking API, reports, then consumes.
    let plain = {
        let (queue, ended) = (queue.clone(), ended.clone());
        let done = latch.counter_owned("thread").expect("claimed once");
        thread::spawn(move || {
            let accepted: Vec<_> = (0..items_per_producer)
                .map(|seq| {
                    let item = Item {
                        producer: "thread",
                        seq,
                    };
                    let id = queue.put_blocking(item.clone()).expect("accepted");
                    (id, item)
                })
                .collect();
            done.report();
            while let Ok(delivery) = queue.get_blocking() {
                let entry = (delivery.id(), delivery.succeed(), "thread");
                ended.lock().unwrap().push(entry);
            }
            accepted
        })
    };

    // tokio producers.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let mut accepted = runtime.block_on(async {
        let producers: Vec<_> = ["tokio-0", "tokio-1"]
            .into_iter()
            .map(|name| {
                let queue = queue.clone();
                let done = latch.counter_owned(name).expect("claimed once");
                tokio::spawn(async move {
                    let mut accepted = Vec::new();
                    for seq in 0..items_per_producer {
                        let item = Item {
                            producer: name,
                            seq,
                        };
                        let put =
                            tally_tokio::QueueExt::put_timeout(&*queue, item.clone(), DEADLINE);
                        accepted.push((put.await.expect("accepted"), item));
                    }
                    done.report();
                    accepted
                })
            })
            .collect();
        let mut accepted = Vec::new();
        for producer in producers {
            accepted.extend(producer.await.expect("the producer finished"));
        }
        accepted
    });

    accepted.extend(plain.join().expect("the thread finished"));
    let closed = async_std::task::block_on(waiter);
    smol::block_on(async {
        for consumer in consumers {
            consumer.await;
        }
    });
    let ended = std::mem::take(&mut *ended.lock().unwrap());
    Report {
        accepted,
        ended,
        closed,
    }
}
