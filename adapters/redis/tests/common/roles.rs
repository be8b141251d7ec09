//! Child-process roles: the test binary re-run with `TALLY_REDIS_ROLE` set. Each role
//! reports on stdout through `report` and exits when its test function returns.

use std::time::Duration;

use tally_queue::Outcome;
use tally_redis::{AbandonPolicy, Bytes, GetError, Options, Queue, ResolveError};

use super::{report, sleep, Rt};

/// The options a child opens with: `TALLY_REDIS_MAXATT` (0 or unset: Abandon,
/// `uncertain`: Uncertain),
/// `TALLY_REDIS_LEASE_MS` (default the tests' 300 ms) and `TALLY_REDIS_CAP` (unset:
/// unbounded).
fn child_options() -> Options {
    let policy = std::env::var("TALLY_REDIS_MAXATT").ok();
    let attempts: u32 = policy.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
    let lease: u64 = std::env::var("TALLY_REDIS_LEASE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut options = super::options().lease(Duration::from_millis(lease));
    if let Some(capacity) = std::env::var("TALLY_REDIS_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        options = options.bounded(capacity);
    }
    if policy.as_deref() == Some("uncertain") {
        options.abandon_policy(AbandonPolicy::Uncertain)
    } else if attempts == 0 {
        options
    } else {
        options.abandon_policy(AbandonPolicy::redeliver(attempts).expect("attempts is not 0"))
    }
}

/// How many jobs a child puts, takes or holds at once: `TALLY_REDIS_BATCH` (unset: 1,
/// one at a time with the single-job verbs).
fn batch() -> usize {
    std::env::var("TALLY_REDIS_BATCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

fn count() -> u64 {
    std::env::var("TALLY_REDIS_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The outcome the consumers choose for a job id, so the parent can predict the counts.
pub fn outcome_for(id: u64) -> Outcome {
    match id % 10 {
        0 => Outcome::Rejected,
        1 => Outcome::Uncertain,
        _ => Outcome::Succeeded,
    }
}

pub fn run_if_child() {
    let Ok(role) = std::env::var(super::ROLE) else {
        return;
    };
    let rt = Rt::from_env();
    rt.block_on(async {
        let client = redis::Client::open(std::env::var(super::SOCK).unwrap()).unwrap();
        let name = std::env::var(super::NAME).unwrap();
        let queue = Queue::open(client, &name, Bytes, child_options())
            .await
            .unwrap();
        match role.as_str() {
            "hold" => hold(queue).await,
            "worker" => worker(queue).await,
            "consumer" => consumer(queue).await,
            "producer" => producer(queue).await,
            "drainer" => drainer(queue).await,
            other => panic!("unknown role {other}"),
        }
    });
}

/// Takes jobs (one, or a batch), says so, and holds them until killed.
async fn hold(queue: Queue<Bytes>) {
    let jobs = if batch() > 1 {
        queue.get_many(batch()).await.unwrap()
    } else {
        vec![queue.get().await.unwrap()]
    };
    for job in &jobs {
        report(format!("HELD {} {}", job.id().get(), job.attempt()));
    }
    sleep(Duration::from_secs(60)).await;
    drop(jobs);
}

/// Registers a worker and keeps its heartbeat until killed.
async fn worker(queue: Queue<Bytes>) {
    let _worker = queue.worker().await.unwrap();
    report("READY");
    let maintain = queue.maintain(async_io::Timer::after);
    futures_lite::future::or(
        async {
            maintain.await;
        },
        sleep(Duration::from_secs(60)),
    )
    .await;
}

/// Resolves jobs by `outcome_for` until the queue is shut down and empty; each `END`
/// line once its resolve counted. Batched: takes up to a batch, and resolves it while
/// taking the next in one call.
async fn consumer(queue: Queue<Bytes>) {
    if batch() <= 1 {
        loop {
            match queue.get().await {
                Ok(job) => {
                    let (id, attempt) = (job.id().get(), job.attempt());
                    let outcome = outcome_for(id);
                    // Stale: its lease ran out on a loaded host and another consumer took
                    // it over; that one reports it.
                    match job.resolve(outcome).await {
                        Ok(_) => report(format!("END {id} {outcome} {attempt}")),
                        Err(ResolveError::Stale(_)) => {}
                        Err(other) => panic!("consumer: {other}"),
                    }
                }
                Err(GetError::ShutDown) => break,
                Err(other) => panic!("consumer: {other}"),
            }
        }
        report("DONE");
        return;
    }
    let mut jobs = match queue.get_many(batch()).await {
        Ok(jobs) => jobs,
        Err(GetError::ShutDown) => Vec::new(),
        Err(other) => panic!("consumer: {other}"),
    };
    while !jobs.is_empty() {
        let mut lines = Vec::with_capacity(jobs.len());
        let resolves = jobs
            .into_iter()
            .map(|job| {
                let (id, attempt) = (job.id().get(), job.attempt());
                let outcome = outcome_for(id);
                lines.push(format!("END {id} {outcome} {attempt}"));
                (job, outcome)
            })
            .collect();
        let (answers, next) = queue.resolve_and_get(resolves, batch()).await.unwrap();
        for (answer, line) in answers.into_iter().zip(lines) {
            // Stale: its lease ran out on a loaded host and another consumer took it over;
            // that one reports it.
            match answer {
                Ok(_) => report(line),
                Err(ResolveError::Stale(_)) => {}
                Err(other) => panic!("consumer: {other}"),
            }
        }
        jobs = if next.is_empty() {
            match queue.get_many(batch()).await {
                Ok(jobs) => jobs,
                Err(GetError::ShutDown) => Vec::new(),
                Err(other) => panic!("consumer: {other}"),
            }
        } else {
            next
        };
    }
    report("DONE");
}

/// Puts `TALLY_REDIS_COUNT` jobs, one at a time or in batches.
async fn producer(queue: Queue<Bytes>) {
    let tag = std::process::id().to_le_bytes();
    let item = |n: u64| {
        let mut item = tag.to_vec();
        item.extend(n.to_le_bytes());
        item
    };
    if batch() <= 1 {
        for n in 0..count() {
            let id = queue.put(item(n)).await.unwrap();
            report(format!("PUT {}", id.get()));
        }
        report("DONE");
        return;
    }
    let mut n = 0;
    while n < count() {
        let end = (n + batch() as u64).min(count());
        for id in queue.put_many((n..end).map(item)).await.unwrap() {
            report(format!("PUT {}", id.get()));
        }
        n = end;
    }
    report("DONE");
}

/// Says `READY`, waits for a line on stdin, then shuts the queue down now and reports
/// what it took out.
async fn drainer(queue: Queue<Bytes>) {
    queue.ledger().await.unwrap();
    report("READY");
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
    for (id, item) in queue.shutdown_now().await.unwrap() {
        assert!(item.ok().is_some());
        report(format!("DRAINED {}", id.get()));
    }
    report("DONE");
}
