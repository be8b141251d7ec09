//! A worker pool on smol: producers put jobs into a bounded `Queue`, N workers take them
//! and resolve each one as succeeded, rejected or uncertain, and a graceful drain with a
//! deadline closes the queue ("drain or abort"). Past the deadline the buffer is handed
//! back and the workers are asked to stop: a job stopped mid-work ends uncertain, within
//! the grace period.
//!
//! The queue's journal is a [`Record`]: at the end it answers, by id, which jobs ended how,
//! which ones need reconciling (uncertain or abandoned) and which were still in flight.
//! The producers keep only what a put returned, the job's id.
//!
//! Everything runs on smol's global executor (`smol::spawn`); the tasks are `'static`, so
//! they share the queue through an `Arc` and use the owned forms (`get_owned`,
//! `worker_owned`, `producer_owned`). Timeouts come from `tally-smol`.
//!
//! Each producer holds a producer guard, so the queue shuts down gracefully by itself when
//! the last producer is gone, even one that panicked: the workers drain and stop instead of
//! waiting for jobs that will never come.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use tally_latch::CountDownLatch;
use tally_queue::{JobId, JobState, Ledger, Outcome, OwnedProducer, OwnedWorker, Queue, Record};
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
    /// How long the graceful drain may take before the rest is handed back and the work
    /// in flight is asked to stop.
    pub(crate) drain_timeout: Duration,
    /// How long the work asked to stop may take to end.
    pub(crate) grace: Duration,
    /// Print each job's outcome as the workers decide it.
    pub(crate) verbose: bool,
    /// Add one more producer, on a plain thread, that puts one job and then panics.
    pub(crate) dead_producer: bool,
}

/// What happened, as seen by the producers and by the queue's record.
#[derive(Debug)]
pub(crate) struct Report {
    /// Every id a put returned, with what the producer asked of it.
    pub(crate) accepted: Vec<(JobId, Kind)>,
    /// Each accepted id's final state, from the record.
    pub(crate) fates: Vec<(JobId, JobState)>,
    /// The ids an aborted drain handed back, never processed.
    pub(crate) returned: Vec<JobId>,
    pub(crate) drained_in_time: bool,
    /// The ids still in flight when the shutdown reported (after the grace period).
    pub(crate) still_in_flight: Vec<JobId>,
    /// The ids the record says need reconciling: ended uncertain, or abandoned.
    pub(crate) to_reconcile: Vec<JobId>,
    /// Producers that panicked.
    pub(crate) producers_panicked: usize,
    /// Whether the queue was already shut down, by its last producer guard, when every
    /// producer had finished and before anyone called a shutdown.
    pub(crate) shut_down_by_producers: bool,
    /// The queue's ledger once every worker has exited.
    pub(crate) ledger: Ledger,
}

impl Report {
    /// The ids whose final state is `state`, in id order.
    pub(crate) fn ids_in(&self, state: JobState) -> Vec<JobId> {
        let mut ids: Vec<JobId> = self
            .fates
            .iter()
            .filter(|(_, fate)| *fate == state)
            .map(|(id, _)| *id)
            .collect();
        ids.sort();
        ids
    }

    /// The lines the demo prints.
    pub(crate) fn summary(&self) -> String {
        let list = |ids: &[JobId]| {
            let ids: Vec<String> = ids.iter().map(JobId::to_string).collect();
            format!("[{}]", ids.join(", "))
        };
        let special: Vec<String> = self
            .accepted
            .iter()
            .filter(|(_, kind)| *kind != Kind::Normal)
            .map(|(id, kind)| {
                let fate = self.fates.iter().find(|(fated, _)| fated == id);
                format!("{id} {kind:?}: {:?}", fate.map(|(_, state)| state))
            })
            .collect();
        let mut out = String::new();
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
        let rejected = self.ids_in(JobState::Ended(Outcome::Rejected));
        writeln!(out, "rejected: {}", list(&rejected)).unwrap();
        writeln!(out, "handed back: {}", list(&self.returned)).unwrap();
        writeln!(out, "still in flight: {}", list(&self.still_in_flight)).unwrap();
        writeln!(out, "to reconcile: {}", list(&self.to_reconcile)).unwrap();
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
    let record = Arc::new(Record::new());
    let queue = Arc::new(
        Queue::bounded(plan.capacity)
            .expect("a capacity of at least 1")
            .with_journal(Arc::clone(&record)),
    );
    smol::block_on(async {
        // Register every worker before any put, so no producer sees "no workers".
        let workers: Vec<_> = (0..plan.workers)
            .map(|n| {
                let registration = queue.worker_owned();
                smol::spawn(worker(n, queue.clone(), registration, plan.clone()))
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
            let id = JobId::from_raw(id.parse().expect("a job number"));
            accepted.push((id, Kind::Normal));
            producers_panicked += 1;
        }
        // No one has called a shutdown yet: the last producer guard did.
        let shut_down_by_producers = queue.is_shut_down();
        let closed = queue
            .shutdown_timeout_with_grace(plan.drain_timeout, plan.grace)
            .await;
        for worker in workers {
            worker.await;
        }
        // Reconciliation, by id, from the record: no side table.
        let fates = accepted
            .iter()
            .map(|(id, _)| {
                (
                    *id,
                    record.state(*id).expect("every accepted id is recorded"),
                )
            })
            .collect();
        let mut to_reconcile = record.uncertain();
        to_reconcile.extend(record.abandoned());
        to_reconcile.sort();
        Report {
            accepted,
            fates,
            returned: closed.returned.into_iter().map(|(id, _)| id).collect(),
            drained_in_time: closed.drained_in_time,
            still_in_flight: closed
                .in_flight_ids
                .expect("the record keeps the ids in flight"),
            to_reconcile,
            producers_panicked,
            shut_down_by_producers,
            ledger: queue.ledger(),
        }
    })
}

async fn produce(producer: usize, guard: OwnedProducer<Job>, plan: Plan) -> Vec<(JobId, Kind)> {
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
        ids.push((id, kind));
    }
    ids
}

async fn worker(n: usize, queue: Arc<Queue<Job>>, _registration: OwnedWorker<Job>, plan: Plan) {
    while let Ok(job) = queue.get_owned().await {
        let work = async {
            async_io::Timer::after(plan.work).await;
            true
        };
        let stop = async {
            job.cancelled().await;
            false
        };
        let outcome = if !smol::future::or(stop, work).await {
            // Asked to stop mid-work: whether its effect happened is unknown.
            Outcome::Uncertain
        } else {
            match job.kind {
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
            }
        };
        if plan.verbose {
            let Job { producer, seq, .. } = *job;
            println!(
                "  worker {n}: {} (producer {producer}, job {seq}) {outcome}",
                job.id()
            );
        }
        job.resolve(outcome);
    }
}
