//! Child-process roles: the test binary re-run with `TALLY_REDIS_ROLE` set. Each role
//! reports on stdout through `report` and exits when its test function returns.

use std::time::Duration;

use tally_queue::Outcome;
use tally_redis::{AbandonPolicy, Bytes, GetError, Options, Queue};

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

/// Takes one job, says so, and holds it until killed.
async fn hold(queue: Queue<Bytes>) {
    let job = queue.get().await.unwrap();
    report(format!("HELD {} {}", job.id().get(), job.attempt()));
    sleep(Duration::from_secs(60)).await;
    drop(job);
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

/// Resolves jobs by `outcome_for` until the queue is shut down and empty.
async fn consumer(queue: Queue<Bytes>) {
    loop {
        match queue.get().await {
            Ok(job) => {
                let (id, attempt) = (job.id().get(), job.attempt());
                let outcome = outcome_for(id);
                job.resolve(outcome).await.unwrap();
                report(format!("END {id} {outcome} {attempt}"));
            }
            Err(GetError::ShutDown) => break,
            Err(other) => panic!("consumer: {other}"),
        }
    }
    report("DONE");
}

/// Puts `TALLY_REDIS_COUNT` jobs.
async fn producer(queue: Queue<Bytes>) {
    let tag = std::process::id().to_le_bytes();
    for n in 0..count() {
        let mut item = tag.to_vec();
        item.extend(n.to_le_bytes());
        let id = queue.put(item).await.unwrap();
        report(format!("PUT {}", id.get()));
    }
    report("DONE");
}

/// Shuts the queue down now and reports what it took out.
async fn drainer(queue: Queue<Bytes>) {
    for (id, item) in queue.shutdown_now().await.unwrap() {
        assert!(item.ok().is_some());
        report(format!("DRAINED {}", id.get()));
    }
    report("DONE");
}
