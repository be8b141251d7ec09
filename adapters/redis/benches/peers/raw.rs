//! The raw Streams consumer-group loop, with the `redis` client tally-redis uses: what a
//! queue on Redis Streams costs with no ledger, no fence and no lease bookkeeping.
//!
//! Unbatched: one `XADD` per put; a consumer reads with `XREADGROUP … COUNT 1` and
//! acknowledges with `XACK` + `XDEL` (pipelined: one round trip). Batched by `n`: puts go
//! in pipelines of `n` `XADD`s; a consumer reads `COUNT n` and acknowledges them with one
//! multi-id `XACK` and one multi-id `XDEL` (pipelined).

use std::collections::BTreeSet;

use redis::aio::MultiplexedConnection;
use redis::Value;

use crate::server::Server;
use crate::system::{Setup, Step, System, Workload, PAYLOAD};

/// The names in the report, which compares every system with these two.
pub(crate) const BATCHED: &str = "raw Streams, batched";
pub(crate) const UNBATCHED: &str = "raw Streams, unbatched";

const KEY: &str = "raw:s";
const GROUP: &str = "g";

pub(crate) struct Raw {
    name: &'static str,
    batched: bool,
    nested: BTreeSet<String>,
    state: Option<State>,
}

struct State {
    workload: Workload,
    setup: Setup,
    con: MultiplexedConnection,
    consumers: Vec<MultiplexedConnection>,
    consumed: usize,
}

impl Raw {
    pub(crate) fn unbatched() -> Raw {
        Raw {
            name: UNBATCHED,
            batched: false,
            nested: BTreeSet::new(),
            state: None,
        }
    }

    pub(crate) fn batched() -> Raw {
        Raw {
            name: BATCHED,
            batched: true,
            nested: BTreeSet::new(),
            state: None,
        }
    }
}

fn xadd(pipe: &mut redis::Pipeline) {
    pipe.cmd("XADD")
        .arg(KEY)
        .arg("*")
        .arg("p")
        .arg(&PAYLOAD[..]);
}

async fn put_one(con: &mut MultiplexedConnection, jobs: usize) -> Result<(), String> {
    for _ in 0..jobs {
        let _: Value = redis::cmd("XADD")
            .arg(KEY)
            .arg("*")
            .arg("p")
            .arg(&PAYLOAD[..])
            .query_async(con)
            .await
            .map_err(|e| format!("XADD: {e}"))?;
    }
    Ok(())
}

/// Pipelines of `batch` `XADD`s, one after another.
async fn put_pipelined(
    con: &mut MultiplexedConnection,
    jobs: usize,
    batch: usize,
) -> Result<(), String> {
    let mut left = jobs;
    while left > 0 {
        let n = left.min(batch);
        let mut pipe = redis::pipe();
        for _ in 0..n {
            xadd(&mut pipe);
        }
        let _: Vec<Value> = pipe
            .query_async(con)
            .await
            .map_err(|e| format!("XADD pipeline: {e}"))?;
        left -= n;
    }
    Ok(())
}

/// `in_flight` tasks putting one job at a time each, on one multiplexed connection.
async fn put_in_flight(
    con: &MultiplexedConnection,
    jobs: usize,
    in_flight: usize,
) -> Result<(), String> {
    let mut tasks = Vec::new();
    for task in 0..in_flight {
        let share = jobs / in_flight + usize::from(task < jobs % in_flight);
        let mut con = con.clone();
        tasks.push(tokio::spawn(async move { put_one(&mut con, share).await }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// Takes and acknowledges `count` entries at a time until none is left; returns how many.
async fn consume(
    mut con: MultiplexedConnection,
    consumer: String,
    count: usize,
) -> Result<usize, String> {
    let mut done = 0;
    loop {
        let reply: Value = redis::cmd("XREADGROUP")
            .arg("GROUP")
            .arg(GROUP)
            .arg(&consumer)
            .arg("COUNT")
            .arg(count)
            .arg("STREAMS")
            .arg(KEY)
            .arg(">")
            .query_async(&mut con)
            .await
            .map_err(|e| format!("XREADGROUP: {e}"))?;
        let ids = entry_ids(reply)?;
        if ids.is_empty() {
            return Ok(done);
        }
        let mut pipe = redis::pipe();
        pipe.cmd("XACK").arg(KEY).arg(GROUP).arg(&ids);
        pipe.cmd("XDEL").arg(KEY).arg(&ids);
        let (acked, deleted): (usize, usize) = pipe
            .query_async(&mut con)
            .await
            .map_err(|e| format!("XACK + XDEL: {e}"))?;
        if acked != ids.len() || deleted != ids.len() {
            return Err(format!(
                "{} entries read, {acked} acknowledged, {deleted} deleted",
                ids.len()
            ));
        }
        done += ids.len();
    }
}

/// The entry ids of an `XREADGROUP` reply for one stream (none for a nil reply).
fn entry_ids(reply: Value) -> Result<Vec<Vec<u8>>, String> {
    let bad = || "an XREADGROUP reply of an unexpected shape".to_string();
    let entries = match reply {
        Value::Nil => return Ok(Vec::new()),
        // RESP2: [[stream, entries]].
        Value::Array(streams) => match streams.into_iter().next() {
            Some(Value::Array(mut stream)) if stream.len() == 2 => stream.pop(),
            _ => return Err(bad()),
        },
        // RESP3: {stream: entries}.
        Value::Map(streams) => streams.into_iter().next().map(|(_, entries)| entries),
        _ => return Err(bad()),
    };
    let Some(Value::Array(entries)) = entries else {
        return Err(bad());
    };
    entries
        .into_iter()
        .map(|entry| match entry {
            Value::Array(mut fields) if !fields.is_empty() => match fields.swap_remove(0) {
                Value::BulkString(id) => Ok(id),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        })
        .collect()
}

impl System for Raw {
    fn name(&self) -> &str {
        self.name
    }

    fn method(&self, batch: usize) -> String {
        if self.batched {
            format!(
                "`XADD`; bulk: pipelines of {batch} `XADD`s; a consumer reads `XREADGROUP … \
                 COUNT {batch}` and acknowledges the batch with one multi-id `XACK` and one \
                 multi-id `XDEL`, pipelined (one round trip)"
            )
        } else {
            format!(
                "`XADD`; bulk: {batch} `XADD`s in flight on one multiplexed connection; a \
                 consumer reads `XREADGROUP … COUNT 1` and acknowledges with `XACK` + `XDEL`, \
                 pipelined (one round trip)"
            )
        }
    }

    fn nested(&self) -> &BTreeSet<String> {
        &self.nested
    }

    fn prepare<'a>(&'a mut self, server: &'a Server, workload: Workload, setup: Setup) -> Step<'a> {
        Box::pin(async move {
            let mut con = server.connect().await?;
            let mut consumers = Vec::new();
            if let Workload::Consume(n) = workload {
                let () = redis::cmd("XGROUP")
                    .arg("CREATE")
                    .arg(KEY)
                    .arg(GROUP)
                    .arg("0")
                    .arg("MKSTREAM")
                    .query_async(&mut con)
                    .await
                    .map_err(|e| format!("XGROUP CREATE: {e}"))?;
                put_pipelined(&mut con, setup.jobs, setup.batch).await?;
                for _ in 0..n {
                    let mut consumer = server.connect().await?;
                    let _: String = redis::cmd("PING")
                        .query_async(&mut consumer)
                        .await
                        .map_err(|e| format!("PING: {e}"))?;
                    consumers.push(consumer);
                }
            }
            self.state = Some(State {
                workload,
                setup,
                con,
                consumers,
                consumed: 0,
            });
            Ok(())
        })
    }

    fn run(&mut self) -> Step<'_> {
        Box::pin(async move {
            let batched = self.batched;
            let state = self.state.as_mut().ok_or("run before prepare")?;
            let Setup { jobs, batch } = state.setup;
            match state.workload {
                Workload::PutOne => put_one(&mut state.con, jobs).await,
                Workload::PutBulk if batched => put_pipelined(&mut state.con, jobs, batch).await,
                Workload::PutBulk => put_in_flight(&state.con, jobs, batch).await,
                Workload::Consume(_) => {
                    let count = if batched { batch } else { 1 };
                    let tasks: Vec<_> = state
                        .consumers
                        .drain(..)
                        .enumerate()
                        .map(|(i, con)| tokio::spawn(consume(con, format!("c{i}"), count)))
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
            let mut state = self.state.take().ok_or("finish before prepare")?;
            let length: usize = redis::cmd("XLEN")
                .arg(KEY)
                .query_async(&mut state.con)
                .await
                .map_err(|e| format!("XLEN: {e}"))?;
            match state.workload {
                Workload::PutOne | Workload::PutBulk if length != state.setup.jobs => Err(format!(
                    "{} jobs put, the stream holds {length}",
                    state.setup.jobs
                )),
                Workload::Consume(_) if state.consumed != state.setup.jobs || length != 0 => {
                    Err(format!(
                        "{} jobs, {} consumed, {length} left in the stream",
                        state.setup.jobs, state.consumed
                    ))
                }
                _ => Ok(()),
            }
        })
    }
}
