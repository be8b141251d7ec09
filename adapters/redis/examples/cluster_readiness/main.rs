//! Readiness across replicas: two (or more) service processes gate their own `/readyz` on
//! their local components (an in-process `tally_latch::TrackingLatch`) and on a
//! cluster-wide "migration done" latch in Redis (`tally_redis::TrackingLatch` `deploy`,
//! one counter `migration`), which a third process, the migration job, claims and reports.
//! A tokio service: hyper's HTTP server, and the redis client on tokio.
//!
//! Run it by hand against a Redis server with the append-only file on (the URL defaults
//! to `redis://127.0.0.1:6379`; a server without it is refused, see the crate's README):
//!
//! ```text
//! redis-server --port 6399 --appendonly yes &
//! cargo run -p tally-redis --example cluster_readiness -- serve redis://127.0.0.1:6399 &
//! cargo run -p tally-redis --example cluster_readiness -- serve redis://127.0.0.1:6399 &
//! cargo run -p tally-redis --example cluster_readiness -- migrate redis://127.0.0.1:6399 5
//! ```
//!
//! Each `serve` binds an ephemeral port of 127.0.0.1, prints `serving on http://ADDR`,
//! then probes its own `/readyz` every 250 ms and prints each change: `waiting for:
//! cache-warmer (local), migration (cluster)`, then `waiting for: migration (cluster)`
//! once its cache is warm (after 1 s), then `ready` once `migrate` has worked its 5 s and
//! reported. Kill `migrate` with `kill -9` during its 5 s instead: within its lease (2 s)
//! every replica's `/readyz` says ``cluster latch `deploy`: counter `migration` failed: its
//! lease expired before it reported (holder `…` died or stalled)``. Running `migrate` again
//! after a report does nothing; after a failure it is refused, naming the failure (start
//! afresh with `redis-cli -p 6399 del {latch:deploy}:spec {latch:deploy}:events
//! {latch:deploy}:clock {latch:deploy}:void`).
//!
//! The test `adapters/redis/tests/cluster_readiness.rs` drives both scenarios over real
//! HTTP, with two replicas and the migration in child processes.

mod migration;
mod service;

use std::process::ExitCode;
use std::time::Duration;

use service::{get, open_cluster, Config, Service, MIGRATION};
use tally_redis::LatchOptions;

/// The cluster latch's name.
const CLUSTER: &str = "deploy";

/// Every process opens the cluster latch with these: the lease and the policy are fixed
/// when the latch is created.
fn options() -> LatchOptions {
    LatchOptions::new()
        .lease(Duration::from_secs(2))
        .poll(Duration::from_millis(200))
}

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let role = args.next().unwrap_or_default();
    let url = args
        .next()
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    let client = redis::Client::open(url)?;
    match role.as_str() {
        "serve" => serve(client).await,
        "migrate" => {
            let seconds: u64 = match args.next() {
                Some(seconds) => seconds.parse()?,
                None => 5,
            };
            migrate(client, Duration::from_secs(seconds)).await
        }
        other => Err(format!("unknown role `{other}`: serve or migrate").into()),
    }
}

async fn serve(client: redis::Client) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let service = Service::start(Config {
        addr: "127.0.0.1:0".parse()?,
        redis: client,
        cluster: CLUSTER.into(),
        options: options(),
        warmup: Box::pin(tokio::time::sleep(Duration::from_secs(1))),
        startup_timeout: Duration::from_secs(10),
        verbose: true,
    })
    .await?;
    let addr = service.addr;
    println!("serving on http://{addr}");
    let mut last = None;
    while let Ok(answer) = get(addr, "/readyz").await {
        if last.as_ref() != Some(&answer) {
            println!("  /readyz {} {}", answer.0, answer.1);
            last = Some(answer);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // The server is gone: the replica stopped.
    if let Err(error) = service.finished().await {
        println!("{error}");
    }
    Ok(ExitCode::FAILURE)
}

async fn migrate(
    client: redis::Client,
    takes: Duration,
) -> Result<ExitCode, Box<dyn std::error::Error>> {
    let latch = open_cluster(client, CLUSTER, options()).await?;
    let work = async {
        tokio::time::sleep(takes).await;
        Ok(())
    };
    let claimed = |counter: &tally_redis::Counter| {
        println!("migrating as {} for {takes:?}", counter.holder());
    };
    match migration::run(&latch, MIGRATION, claimed, work).await {
        Ok(done) => {
            println!("{done:?}");
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            println!("{error}");
            Ok(ExitCode::FAILURE)
        }
    }
}
