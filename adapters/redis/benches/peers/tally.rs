//! tally-redis through its public API.

use std::collections::BTreeSet;
use std::path::Path;

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
            nested: script_commands(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")),
            state: None,
        }
    }
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

/// Puts the jobs a consume starts from (untimed). One at a time for this flavor, so that
/// a consume is measured even if the bulk path fails (that failure is the bulk put's).
async fn prefill(flavor: Flavor, queue: &Queue<Bytes>, setup: Setup) -> Result<(), String> {
    match flavor {
        Flavor::OneAtATime => put_one(queue, setup.jobs).await,
    }
}

/// Takes and acknowledges jobs until none is left; returns how many.
async fn consume(flavor: Flavor, queue: Queue<Bytes>) -> Result<usize, String> {
    match flavor {
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
                        .map(|queue| tokio::spawn(consume(flavor, queue)))
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
