//! A worker pool on smol: producers put jobs into a bounded `Queue`, N workers take them
//! and resolve each one as succeeded, rejected or uncertain, and a graceful drain with a
//! deadline closes the queue ("drain or abort").
//!
//! Everything runs on smol's global executor (`smol::spawn`); the tasks are `'static`, so
//! they share the queue through an `Arc` and use the owned forms (`get_owned`,
//! `worker_owned`). Timeouts come from `adapter-smol`.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use adapter_smol::{LatchExt, QueueExt};
use latch_core::CountDownLatch;
use queue_core::{JobId, Ledger, Outcome, OwnedWorker, Queue};

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
        let producers: Vec<_> = (0..plan.producers)
            .map(|producer| smol::spawn(produce(producer, queue.clone(), plan.clone())))
            .collect();
        let mut accepted = Vec::new();
        for producer in producers {
            accepted.extend(producer.await);
        }
        let closed = queue.shutdown_timeout(plan.drain_timeout).await;
        for worker in workers {
            worker.await;
        }
        Report {
            accepted,
            outcomes: std::mem::take(&mut *outcomes.lock().unwrap()),
            returned: closed.returned.into_iter().map(|(id, _)| id).collect(),
            drained_in_time: closed.drained_in_time,
            ledger: queue.ledger(),
        }
    })
}

async fn produce(producer: usize, queue: Arc<Queue<Job>>, plan: Plan) -> Vec<JobId> {
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
