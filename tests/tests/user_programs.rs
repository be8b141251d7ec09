//! Programs written the way users of async-channel, tokio and smol write them, against the
//! public API only: a smol pool of 1,000 jobs that iterates deliveries as a `Stream`, fed by
//! producers holding producer guards, one of which panics; and a tokio service whose
//! spawned tasks take owned deliveries and whose producers are dropped rather than closed.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures_lite::StreamExt;
use queue_core::{JobId, Outcome, Queue};

/// Runs `program` on a thread and fails if it does not finish within `seconds`.
fn within<R: Send + 'static>(seconds: u64, program: impl FnOnce() -> R + Send + 'static) -> R {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(program());
    });
    result
        .recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|error| panic!("the program did not finish within {seconds} s: {error}"))
}

#[test]
fn a_smol_pool_of_a_thousand_jobs_ends_when_its_producers_are_gone() {
    let (ids, decided, ledger) = within(60, || {
        let queue = Arc::new(Queue::<u32>::bounded(32).unwrap());
        smol::block_on(async {
            let workers: Vec<_> = (0..8)
                .map(|_| {
                    let registration = queue.worker_owned();
                    let mut jobs = queue.deliveries_owned();
                    smol::spawn(async move {
                        let _registration = registration;
                        let mut decided = Vec::new();
                        while let Some(job) = jobs.next().await {
                            let outcome = if *job % 97 == 0 {
                                Outcome::Rejected
                            } else {
                                Outcome::Succeeded
                            };
                            decided.push((job.id(), outcome));
                            job.resolve(outcome);
                        }
                        decided
                    })
                })
                .collect();
            // Every producer registers before any starts: a guard registered after the last
            // one left would find the queue already shut down.
            let guards: Vec<_> = (0..4u32).map(|_| queue.producer_owned()).collect();
            let doomed = queue.producer_owned();
            let producers: Vec<_> = (0..4u32)
                .zip(guards)
                .map(|(p, producer)| {
                    smol::spawn(async move {
                        let mut ids = Vec::new();
                        for n in 0..250 {
                            ids.push(producer.queue().put(p * 1000 + n).await.unwrap());
                        }
                        ids
                    })
                })
                .collect();
            // One more producer dies on a plain thread before it puts anything: its guard
            // goes with the panic, and the pool still ends.
            let died = std::thread::spawn(move || {
                let _guard = doomed;
                panic!("a producer that dies at start");
            })
            .join();
            assert!(died.is_err());
            let mut ids = Vec::new();
            for producer in producers {
                ids.extend(producer.await);
            }
            let mut decided = Vec::new();
            for worker in workers {
                decided.extend(worker.await);
            }
            (ids, decided, queue.ledger())
        })
    });
    let accepted: BTreeSet<JobId> = ids.iter().copied().collect();
    assert_eq!(accepted.len(), 1000);
    let ended: BTreeSet<JobId> = decided.iter().map(|(id, _)| *id).collect();
    assert_eq!(
        ended, accepted,
        "every accepted job was delivered exactly once"
    );
    assert_eq!(decided.len(), 1000);
    let rejected = decided
        .iter()
        .filter(|(_, outcome)| *outcome == Outcome::Rejected)
        .count() as u64;
    assert_eq!(ledger.accepted, 1000);
    assert_eq!(
        (ledger.rejected, ledger.succeeded),
        (rejected, 1000 - rejected)
    );
    assert!(ledger.is_balanced());
}

#[test]
fn a_tokio_service_with_spawned_handlers_drains_when_its_producers_drop() {
    let ledger = within(60, || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let queue = Arc::new(Queue::<String>::unbounded());
            let dispatcher = {
                let queue = Arc::clone(&queue);
                let registration = queue.worker_owned();
                tokio::spawn(async move {
                    let _registration = registration;
                    let mut handlers = Vec::new();
                    while let Ok(job) = queue.get_owned().await {
                        // Each job is handled by a task of its own, which owns its delivery.
                        handlers.push(tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                            job.succeed();
                        }));
                    }
                    for handler in handlers {
                        handler.await.unwrap();
                    }
                })
            };
            let producer = queue.producer_owned();
            let senders: Vec<_> = (0..3)
                .map(|s| {
                    let producer = producer.clone();
                    tokio::spawn(async move {
                        for n in 0..20 {
                            producer.queue().put(format!("{s}-{n}")).await.unwrap();
                        }
                    })
                })
                .collect();
            drop(producer);
            for sender in senders {
                sender.await.unwrap();
            }
            // Nobody calls shutdown: the last producer guard did.
            dispatcher.await.unwrap();
            assert!(queue.is_shut_down());
            queue.join().await
        })
    });
    assert_eq!((ledger.accepted, ledger.succeeded), (60, 60));
    assert!(ledger.is_balanced());
}
