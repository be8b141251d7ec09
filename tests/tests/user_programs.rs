//! Programs written the way users of async-channel, tokio and smol write them, against the
//! public API only: a smol pool of 1,000 jobs that iterates deliveries as a `Stream`, fed by
//! producers holding producer guards, one of which panics; and a tokio service whose
//! spawned tasks take owned deliveries and whose producers are dropped rather than closed.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use futures_lite::StreamExt;
use tally_queue::{JobId, Outcome, Queue};

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

/// What a runtime-generic library writes to treat every latch alike: how a latch's wait
/// ended, as a `Result`, so that `?` carries a failure. A `CountDownLatch` cannot fail.
trait Ended {
    type Failure;
    fn into_result(self) -> Result<(), Self::Failure>;
}

impl Ended for () {
    type Failure = std::convert::Infallible;
    fn into_result(self) -> Result<(), Self::Failure> {
        Ok(())
    }
}

impl<E> Ended for Result<(), E> {
    type Failure = E;
    fn into_result(self) -> Self {
        self
    }
}

/// How a gate ended, when the latch did not fail.
#[derive(Debug, PartialEq)]
enum Gate<T> {
    /// The latch opened in time.
    Open,
    /// The deadline came first; the latch's timeout says what is missing.
    TimedOut(T),
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A library function generic over the latch and the runtime: the deadline is any future
/// (a runtime's sleep, a timer, another latch's wait), the timeout is told from success by
/// the outer `Result`, and a failure goes into a boxed error with `?`.
async fn gate<L, D>(latch: &L, deadline: D) -> Result<Gate<L::Timeout>, BoxError>
where
    L: tally_latch::Latch,
    L::Output: Ended,
    BoxError: From<<L::Output as Ended>::Failure>,
    D: std::future::Future,
{
    match latch.wait_until(deadline).await {
        Ok(ended) => {
            ended.into_result()?;
            Ok(Gate::Open)
        }
        Err(timeout) => Ok(Gate::TimedOut(timeout)),
    }
}

/// An error type of the user's, to see that the very error reaches the boxed one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DiskFull {
    disk: &'static str,
}

impl std::fmt::Display for DiskFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "disk {} is full", self.disk)
    }
}

impl std::error::Error for DiskFull {}

#[test]
fn a_runtime_generic_library_function_gates_on_every_latch_type() {
    use futures_lite::future::{block_on, pending};
    use tally_latch::{CountDownLatch, FailableLatch, Failure, TimedOut, TrackingLatch};

    within(60, || {
        // CountDownLatch: a ready deadline times out at once and changes nothing; once open,
        // a deadline that never comes is never needed.
        let latch = CountDownLatch::new(1);
        assert_eq!(
            block_on(gate(&latch, async {})).unwrap(),
            Gate::TimedOut(TimedOut)
        );
        assert_eq!(latch.count(), 1);
        latch.count_down();
        assert_eq!(block_on(gate(&latch, pending::<()>())).unwrap(), Gate::Open);

        // FailableLatch, with a real timer for the deadline: a timeout, then the failure,
        // which reaches the boxed error as the user's own value.
        let latch = FailableLatch::<DiskFull>::new(2);
        latch.count_down();
        let short = Duration::from_millis(20);
        let start = std::time::Instant::now();
        assert_eq!(
            block_on(gate(&latch, async_io::Timer::after(short))).unwrap(),
            Gate::TimedOut(TimedOut)
        );
        assert!(start.elapsed() >= short, "{:?}", start.elapsed());
        assert_eq!(latch.count(), 1);
        latch.fail(DiskFull { disk: "sda" }).unwrap();
        let error = block_on(gate(&latch, pending::<()>())).unwrap_err();
        assert_eq!(
            error.downcast_ref::<DiskFull>(),
            Some(&DiskFull { disk: "sda" })
        );
        assert_eq!(error.to_string(), "disk sda is full");
        // A failure wins over a deadline that has already passed.
        let error = block_on(gate(&latch, async {})).unwrap_err();
        assert_eq!(error.to_string(), "disk sda is full");
        // A `String` error goes through `?` too (`Box<dyn Error>: From<String>`).
        let latch = FailableLatch::<String>::new(1);
        latch.fail("shard 2: connection refused".into()).unwrap();
        let error = block_on(gate(&latch, async {})).unwrap_err();
        assert_eq!(error.to_string(), "shard 2: connection refused");

        // TrackingLatch: the timeout names who is late; a counter's failure arrives as the
        // latch's `Failure`, naming it and carrying the user's error.
        let latch = TrackingLatch::new_failable(["db", "cache"]).unwrap();
        latch.count_down_for("cache").unwrap();
        match block_on(gate(&latch, async {})).unwrap() {
            Gate::TimedOut(pending) => assert_eq!(pending.names(), ["db"]),
            Gate::Open => panic!("opened with `db` pending"),
        }
        latch
            .counter("db")
            .unwrap()
            .fail(DiskFull { disk: "sdb" })
            .unwrap();
        let error = block_on(gate(&latch, pending::<()>())).unwrap_err();
        let failure = error
            .downcast_ref::<Failure<DiskFull>>()
            .expect("the latch's failure");
        assert_eq!(failure.counter(), Some("db"));
        assert_eq!(failure.error(), Some(&DiskFull { disk: "sdb" }));
        assert_eq!(error.to_string(), "counter `db` failed: disk sdb is full");

        // The infallible TrackingLatch: it opens, or fails only by an abandoned counter.
        let ready = TrackingLatch::new(["http"]).unwrap();
        ready.count_down_for("http").unwrap();
        assert_eq!(block_on(gate(&ready, pending::<()>())).unwrap(), Gate::Open);
        let ready = TrackingLatch::new(["worker"]).unwrap();
        drop(ready.counter("worker").unwrap());
        let error = block_on(gate(&ready, async {})).unwrap_err();
        assert!(
            matches!(
                error.downcast_ref::<Failure<std::convert::Infallible>>(),
                Some(Failure::Abandoned { counter, panicking: false }) if counter == "worker"
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "counter `worker` was dropped without reporting"
        );
    });
}

#[test]
fn a_runtime_generic_library_function_runs_in_spawned_static_threads_and_tasks() {
    use futures_lite::future::block_on;
    use tally_latch::{CountDownLatch, Failure, TrackingLatch};

    within(60, || {
        // Readiness with a shutdown signal for the deadline: each waiter is `'static`, owns
        // its `Arc`s, and holds an owned wait of the shutdown latch as its deadline.
        // A tokio runtime for the `'static` tasks (`tokio::spawn` requires `'static`).
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let ready = Arc::new(TrackingLatch::new(["db", "http"]).unwrap());
        let shutdown = Arc::new(CountDownLatch::new(1));
        let thread = std::thread::spawn({
            let (ready, stop) = (Arc::clone(&ready), shutdown.wait_owned());
            move || block_on(gate(&*ready, stop))
        });
        let task = runtime.spawn({
            let (ready, stop) = (Arc::clone(&ready), shutdown.wait_owned());
            async move { gate(&*ready, stop).await }
        });
        ready.count_down_for("http").unwrap();
        shutdown.count_down(); // before `db` reports: both time out naming it
        for (who, result) in [
            ("thread", thread.join().unwrap()),
            ("task", runtime.block_on(task).unwrap()),
        ] {
            match result {
                Ok(Gate::TimedOut(pending)) => assert_eq!(pending.names(), ["db"], "{who}"),
                other => panic!("{who}: expected a timeout naming db, got {other:?}"),
            }
        }
        assert_eq!(ready.pending(), ["db"]);

        // The same from a thread that holds an owned wait of the readiness latch itself, on
        // a latch whose worker (an owned counter on another `'static` thread) opens it; the
        // deadline never comes.
        let ready = Arc::new(TrackingLatch::new(["worker"]).unwrap());
        let never = Arc::new(CountDownLatch::new(1));
        let waiter = std::thread::spawn({
            let (opened, ready, stop) =
                (ready.wait_owned(), Arc::clone(&ready), never.wait_owned());
            move || {
                block_on(opened)?; // the owned wait's failure goes through `?` too
                block_on(gate(&*ready, stop))
            }
        });
        let worker = ready.counter_owned("worker").unwrap();
        std::thread::spawn(move || worker.report()).join().unwrap();
        assert_eq!(waiter.join().unwrap().unwrap(), Gate::Open);

        // And a worker that panics: the waiter's `?` gets the failure naming it.
        let ready = Arc::new(TrackingLatch::new(["worker"]).unwrap());
        let never = Arc::new(CountDownLatch::new(1));
        let task = runtime.spawn({
            let (ready, stop) = (Arc::clone(&ready), never.wait_owned());
            async move { gate(&*ready, stop).await }
        });
        let worker = ready.counter_owned("worker").unwrap();
        let crashed = std::thread::spawn(move || {
            let _worker = worker;
            panic!("worker crashed before reporting");
        })
        .join();
        assert!(crashed.is_err());
        let error = runtime.block_on(task).unwrap().unwrap_err();
        assert!(
            matches!(
                error.downcast_ref::<Failure<std::convert::Infallible>>(),
                Some(Failure::Abandoned { counter, panicking: true }) if counter == "worker"
            ),
            "{error:?}"
        );
        assert_eq!(never.count(), 1);
    });
}
