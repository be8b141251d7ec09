//! tally-redis through its public API.

use std::collections::BTreeSet;
use std::path::Path;

use tally_queue::Outcome;
use tally_redis::{Bytes, Options, Queue, TryGetError};

use crate::server::Server;
use crate::stats::script_commands;
use crate::system::{Setup, Step, System, Workload, PAYLOAD};

const NAME: &str = "bench";

/// How a variant puts in bulk and consumes. A variant is one arm each in [`bulk_put`],
/// [`prefill`] and [`consume`], and one line in `main`'s list of systems.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Flavor {
    /// `put` per job; a bulk put keeps `batch` puts in flight (there is no batch API). A
    /// consumer takes one job at a time (`try_get`) and acknowledges it (`succeed`).
    OneAtATime,
    /// `put_many` of `batch` jobs per call. A consumer takes up to `batch` jobs
    /// (`try_get_many`), then acknowledges them and takes the next ones in one call
    /// (`resolve_and_get`), going back to `try_get_many` when that call finds none.
    Batched,
}

pub(crate) struct Tally {
    name: &'static str,
    flavor: Flavor,
    nested: BTreeSet<String>,
    state: Option<State>,
}

struct State {
    workload: Workload,
    setup: Setup,
    producer: Queue<Bytes>,
    consumers: Vec<Queue<Bytes>>,
    consumed: usize,
}

impl Tally {
    pub(crate) fn new(name: &'static str, flavor: Flavor) -> Tally {
        Tally {
            name,
            flavor,
            nested: sent_plainly_too(script_commands(
                &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            )),
            state: None,
        }
    }
}

/// The commands tally-redis's scripts run, less those it mostly sends itself: most gets
/// are a plain `XREADGROUP`, so every `XREADGROUP` counts as sent (the few a script runs,
/// at a look for expired leases or after an empty read, are then counted twice: an
/// overcount, never an undercount).
fn sent_plainly_too(mut nested: BTreeSet<String>) -> BTreeSet<String> {
    nested.remove("xreadgroup");
    nested
}

/// A handle, with its connection made (a ledger read) so that a run does not pay for it.
async fn open(server: &Server) -> Result<Queue<Bytes>, String> {
    let queue = Queue::open(server.client(), NAME, Bytes, Options::new())
        .await
        .map_err(|e| format!("open: {e}"))?;
    queue.ledger().await.map_err(|e| format!("ledger: {e}"))?;
    Ok(queue)
}

async fn put_one(queue: &Queue<Bytes>, jobs: usize) -> Result<(), String> {
    for _ in 0..jobs {
        queue
            .put(PAYLOAD.to_vec())
            .await
            .map_err(|e| format!("put: {e}"))?;
    }
    Ok(())
}

async fn bulk_put(flavor: Flavor, queue: &Queue<Bytes>, setup: Setup) -> Result<(), String> {
    match flavor {
        Flavor::Batched => {
            let mut left = setup.jobs;
            while left > 0 {
                let n = left.min(setup.batch);
                let ids = queue
                    .put_many((0..n).map(|_| PAYLOAD.to_vec()))
                    .await
                    .map_err(|e| format!("put_many: {e}"))?;
                if ids.len() != n {
                    return Err(format!("put_many of {n} gave {} ids", ids.len()));
                }
                left -= n;
            }
            Ok(())
        }
        Flavor::OneAtATime => {
            let Setup { jobs, batch } = setup;
            let mut tasks = Vec::new();
            for task in 0..batch {
                let share = jobs / batch + usize::from(task < jobs % batch);
                let queue = queue.clone();
                tasks.push(tokio::spawn(async move { put_one(&queue, share).await }));
            }
            for task in tasks {
                task.await.map_err(|e| e.to_string())??;
            }
            Ok(())
        }
    }
}

/// Puts the jobs a consume starts from (untimed): one at a time for the one-at-a-time
/// flavor, so that a consume is measured even if its bulk path fails (that failure is the
/// bulk put's); through the batch API for the batched one.
async fn prefill(flavor: Flavor, queue: &Queue<Bytes>, setup: Setup) -> Result<(), String> {
    match flavor {
        Flavor::OneAtATime => put_one(queue, setup.jobs).await,
        Flavor::Batched => bulk_put(flavor, queue, setup).await,
    }
}

/// Takes and acknowledges jobs until none is left; returns how many.
async fn consume(flavor: Flavor, queue: Queue<Bytes>, batch: usize) -> Result<usize, String> {
    match flavor {
        Flavor::Batched => {
            let mut done = 0;
            loop {
                let mut jobs = match queue.try_get_many(batch).await {
                    Ok(jobs) => jobs,
                    Err(TryGetError::Empty) => return Ok(done),
                    Err(e) => return Err(format!("try_get_many: {e}")),
                };
                while !jobs.is_empty() {
                    let resolves = jobs
                        .into_iter()
                        .map(|job| (job, Outcome::Succeeded))
                        .collect();
                    let (answers, next) = queue
                        .resolve_and_get(resolves, batch)
                        .await
                        .map_err(|e| format!("resolve_and_get: {e}"))?;
                    if let Some(Err(e)) = answers.iter().find(|answer| answer.is_err()) {
                        return Err(format!("resolve_and_get: a resolve was not counted: {e}"));
                    }
                    done += answers.len();
                    jobs = next;
                }
            }
        }
        Flavor::OneAtATime => {
            let mut done = 0;
            loop {
                match queue.try_get().await {
                    Ok(job) => {
                        job.succeed().await.map_err(|e| format!("succeed: {e}"))?;
                        done += 1;
                    }
                    Err(TryGetError::Empty) => return Ok(done),
                    Err(e) => return Err(format!("try_get: {e}")),
                }
            }
        }
    }
}

impl System for Tally {
    fn name(&self) -> &str {
        self.name
    }

    fn method(&self, batch: usize) -> String {
        let how = match self.flavor {
            Flavor::OneAtATime => format!(
                "bulk: {batch} `put`s in flight on one handle (no batch API); a consumer is a \
                 handle looping `try_get` + `succeed` until `Empty`; a consume's jobs are put \
                 one at a time"
            ),
            Flavor::Batched => format!(
                "bulk: `put_many` of {batch}; a consumer is a handle that takes up to {batch} \
                 jobs with `try_get_many`, then acknowledges them and takes the next ones in one \
                 call (`resolve_and_get`), back to `try_get_many` when that finds none, until \
                 `Empty`"
            ),
        };
        format!("`put`; {how}; no maintenance future runs (nothing is dropped, no lease expires)")
    }

    fn nested(&self) -> &BTreeSet<String> {
        &self.nested
    }

    fn prepare<'a>(&'a mut self, server: &'a Server, workload: Workload, setup: Setup) -> Step<'a> {
        Box::pin(async move {
            let producer = open(server).await?;
            let mut consumers = Vec::new();
            if let Workload::Consume(n) = workload {
                prefill(self.flavor, &producer, setup).await?;
                for _ in 0..n {
                    consumers.push(open(server).await?);
                }
            }
            self.state = Some(State {
                workload,
                setup,
                producer,
                consumers,
                consumed: 0,
            });
            Ok(())
        })
    }

    fn run(&mut self) -> Step<'_> {
        Box::pin(async move {
            let flavor = self.flavor;
            let state = self.state.as_mut().ok_or("run before prepare")?;
            match state.workload {
                Workload::PutOne => put_one(&state.producer, state.setup.jobs).await,
                Workload::PutBulk => bulk_put(flavor, &state.producer, state.setup).await,
                Workload::Consume(_) => {
                    let tasks: Vec<_> = state
                        .consumers
                        .drain(..)
                        .map(|queue| tokio::spawn(consume(flavor, queue, state.setup.batch)))
                        .collect();
                    for task in tasks {
                        state.consumed += task.await.map_err(|e| e.to_string())??;
                    }
                    Ok(())
                }
            }
        })
    }

    fn finish(&mut self) -> Step<'_> {
        Box::pin(async move {
            let state = self.state.take().ok_or("finish before prepare")?;
            let ledger = state
                .producer
                .ledger()
                .await
                .map_err(|e| format!("ledger: {e}"))?;
            let jobs = state.setup.jobs as u64;
            let right = match state.workload {
                Workload::PutOne | Workload::PutBulk => {
                    ledger.accepted == jobs && ledger.buffered == jobs
                }
                Workload::Consume(_) => {
                    state.consumed as u64 == jobs
                        && ledger.accepted == jobs
                        && ledger.succeeded == jobs
                        && ledger.is_balanced()
                }
            };
            if right {
                Ok(())
            } else {
                Err(format!(
                    "{jobs} jobs, {} consumed here; ledger: {ledger}",
                    state.consumed
                ))
            }
        })
    }
}
