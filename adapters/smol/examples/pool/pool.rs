//! A worker pool on smol: producers put jobs into a bounded `Queue`, N workers take them
//! and resolve each one as succeeded, rejected or uncertain, and a graceful drain with a
//! deadline closes the queue ("drain or abort").
//!
//! Everything runs on smol's global executor (`smol::spawn`); the tasks are `'static`, so
//! they share the queue through an `Arc` and use the owned forms (`get_owned`,
//! `worker_owned`, `producer_owned`). Timeouts come from `tally-smol`.
//!
//! Each producer holds a producer guard, so the queue shuts down gracefully by itself when
//! the last producer is gone, even one that panicked: the workers drain and stop instead of
//! waiting for jobs that will never come.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tally_latch::CountDownLatch;
use tally_queue::{JobId, Ledger, Outcome, OwnedProducer, OwnedWorker, Queue};
use tally_smol::{LatchExt, QueueExt};

/// What a job asks of its worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Ordinary work: it succeeds.
    Normal,
    /// A job that cannot be processed: the worker rejects it.
    Malformed,
    /// The worker sends it downstream and the acknowledgement never comes: the effect is
    /// unknown, so the job ends uncertain.
    UnacknowledgedWrite,
}

/// One unit of work.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) producer: usize,
    pub(crate) seq: usize,
    pub(crate) kind: Kind,
}

/// The shape of a run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) producers: usize,
    /// At least 3: producer 0's third job is malformed, the last producer's second job
    /// is never acknowledged downstream.
    pub(crate) jobs_per_producer: usize,
    pub(crate) workers: usize,
    pub(crate) capacity: usize,
    /// How long one job takes.
    pub(crate) work: Duration,
    /// How long the graceful drain may take before the rest is handed back.
    pub(crate) drain_timeout: Duration,
    /// Print each job's outcome as the workers decide it.
    pub(crate) verbose: bool,
    /// Add one more producer, on a plain thread, that puts one job and then panics.
    pub(crate) dead_producer: bool,
}

/// What happened, as seen by the producers, the workers and the queue.
#[derive(Debug)]
pub(crate) struct Report {
    /// Every id a put returned.
    pub(crate) accepted: Vec<JobId>,
    /// Every outcome a worker decided, in the order they were decided.
    pub(crate) outcomes: Vec<(JobId, Kind, Outcome)>,
    /// The ids an aborted drain handed back, never processed.
    pub(crate) returned: Vec<JobId>,
    pub(crate) drained_in_time: bool,
    /// Producers that panicked.
    pub(crate) producers_panicked: usize,
    /// Whether the queue was already shut down, by its last producer guard, when every
    /// producer had finished and before anyone called a shutdown.
    pub(crate) shut_down_by_producers: bool,
    /// The queue's ledger once every worker has exited.
    pub(crate) ledger: Ledger,
}

impl Report {
    /// The lines the demo prints.
    pub(crate) fn summary(&self) -> String {
        let mut out = String::new();
        let special: Vec<String> = self
            .outcomes
            .iter()
            .filter(|(_, kind, _)| *kind != Kind::Normal)
            .map(|(id, kind, outcome)| format!("{id} {kind:?}: {outcome}"))
            .collect();
        let returned: Vec<String> = self.returned.iter().map(JobId::to_string).collect();
        writeln!(out, "accepted: {} jobs", self.accepted.len()).unwrap();
        writeln!(out, "special jobs: {}", special.join(", ")).unwrap();
        writeln!(out, "producers panicked: {}", self.producers_panicked).unwrap();
        writeln!(
            out,
            "shut down by the last producer: {}",
            self.shut_down_by_producers
        )
        .unwrap();
        writeln!(out, "drained in time: {}", self.drained_in_time).unwrap();
        writeln!(out, "handed back: [{}]", returned.join(", ")).unwrap();
        write!(out, "ledger: {}", self.ledger).unwrap();
        out
    }
}

fn kind(plan: &Plan, producer: usize, seq: usize) -> Kind {
    match (producer, seq) {
        (0, 2) => Kind::Malformed,
        (p, 1) if p == plan.producers - 1 => Kind::UnacknowledgedWrite,
        _ => Kind::Normal,
    }
}

/// Runs the pool to completion on smol and reports what happened.
pub(crate) fn run(plan: &Plan) -> Report {
    assert!(plan.jobs_per_producer >= 3 && plan.producers >= 1 && plan.workers >= 1);
    let queue = Arc::new(Queue::bounded(plan.capacity).expect("a capacity of at least 1"));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    smol::block_on(async {
        // Register every worker before any put, so no producer sees "no workers".
        let workers: Vec<_> = (0..plan.workers)
            .map(|n| {
                let registration = queue.worker_owned();
                smol::spawn(worker(
                    n,
                    queue.clone(),
                    registration,
                    outcomes.clone(),
                    plan.clone(),
                ))
            })
            .collect();
        // Every producer guard is taken before any producer runs, so the queue cannot shut
        // down while some producer has yet to start.
        let guards: Vec<_> = (0..plan.producers)
            .map(|_| queue.producer_owned())
            .collect();
        let dead_guard = plan.dead_producer.then(|| queue.producer_owned());
        let producers: Vec<_> = guards
            .into_iter()
            .enumerate()
            .map(|(producer, guard)| smol::spawn(produce(producer, guard, plan.clone())))
            .collect();
        let dead = dead_guard.map(|guard| {
            std::thread::spawn(move || {
                let job = Job {
                    producer: usize::MAX,
                    seq: 0,
                    kind: Kind::Normal,
                };
                let id = guard.queue().put_blocking(job).expect("room");
                panic!("producer died after putting {id}");
            })
        });
        let mut accepted = Vec::new();
        for producer in producers {
            accepted.extend(producer.await);
        }
        let mut producers_panicked = 0;
        if let Some(dead) = dead {
            let panicked = dead.join().expect_err("the dead producer panics");
            let message = panicked
                .downcast_ref::<String>()
                .expect("a formatted panic");
            let id = message.rsplit('#').next().expect("the id in the message");
            accepted.push(JobId::from_raw(id.parse().expect("a job number")));
            producers_panicked += 1;
        }
        // No one has called a shutdown yet: the last producer guard did.
        let shut_down_by_producers = queue.is_shut_down();
        let closed = queue.shutdown_timeout(plan.drain_timeout).await;
        for worker in workers {
            worker.await;
        }
        Report {
            accepted,
            outcomes: std::mem::take(&mut *outcomes.lock().unwrap()),
            returned: closed.returned.into_iter().map(|(id, _)| id).collect(),
            drained_in_time: closed.drained_in_time,
            producers_panicked,
            shut_down_by_producers,
            ledger: queue.ledger(),
        }
    })
}

async fn produce(producer: usize, guard: OwnedProducer<Job>, plan: Plan) -> Vec<JobId> {
    let queue = guard.queue();
    let mut ids = Vec::new();
    for seq in 0..plan.jobs_per_producer {
        let kind = kind(&plan, producer, seq);
        let job = Job {
            producer,
            seq,
            kind,
        };
        // The workers keep up, so room always comes well within this.
        let id = queue
            .put_timeout(job, Duration::from_secs(5))
            .await
            .expect("room in time");
        ids.push(id);
    }
    ids
}

async fn worker(
    n: usize,
    queue: Arc<Queue<Job>>,
    _registration: OwnedWorker<Job>,
    outcomes: Arc<Mutex<Vec<(JobId, Kind, Outcome)>>>,
    plan: Plan,
) {
    while let Ok(job) = queue.get_owned().await {
        async_io::Timer::after(plan.work).await;
        let outcome = match job.kind {
            Kind::Normal => Outcome::Succeeded,
            Kind::Malformed => Outcome::Rejected,
            Kind::UnacknowledgedWrite => {
                // The write went out; its acknowledgement never arrives.
                let ack = CountDownLatch::new(1);
                match ack.wait_timeout(Duration::from_millis(5)).await {
                    Ok(()) => Outcome::Succeeded,
                    Err(_timed_out) => Outcome::Uncertain,
                }
            }
        };
        if plan.verbose {
            let Job { producer, seq, .. } = *job;
            println!(
                "  worker {n}: {} (producer {producer}, job {seq}) {outcome}",
                job.id()
            );
        }
        outcomes.lock().unwrap().push((job.id(), job.kind, outcome));
        job.resolve(outcome);
    }
}
