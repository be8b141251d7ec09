//! Two processes, one queue. Start a server, then a consumer, then a producer:
//!
//! ```text
//! redis-server --port 6399 --appendonly yes --appendfsync always &
//! cargo run -p tally-redis --example two_processes -- consume redis://127.0.0.1:6399 &
//! cargo run -p tally-redis --example two_processes -- produce redis://127.0.0.1:6399
//! ```
//!
//! The producer puts ten jobs, shuts the queue down gracefully and waits for the ledger;
//! the consumer resolves jobs until the queue is shut down and empty. Kill the consumer
//! with `kill -9` mid-run and start another: the job it held comes back as attempt 2.
//!
//! It runs on smol: in a project of your own, turn on tally-redis's `smol` feature
//! (`tokio` is the default runtime).

use std::time::Duration;

use tally_redis::{AbandonPolicy, Json, Options, Queue};

fn options() -> Options {
    Options::new()
        .lease(Duration::from_secs(2))
        .abandon_policy(AbandonPolicy::redeliver(3).unwrap())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let role = args.next().unwrap_or_default();
    let url = args
        .next()
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    smol::block_on(async {
        let client = redis::Client::open(url)?;
        let queue = Queue::open(client, "demo", Json::<String>::new(), options()).await?;
        match role.as_str() {
            "produce" => {
                for n in 0..10 {
                    let id = queue.put(format!("job {n}")).await?;
                    println!("put {id}");
                }
                queue.shutdown().await?;
                let ledger = queue.join().await?;
                println!("{ledger}");
            }
            "consume" => {
                // The background work: heartbeats, dropped deliveries, expired leases.
                let background = queue.clone();
                smol::spawn(async move { background.maintain(async_io::Timer::after).await })
                    .detach();
                let _worker = queue.worker().await?;
                while let Ok(job) = queue.get().await {
                    println!("{} attempt {}: {}", job.id(), job.attempt(), *job);
                    async_io::Timer::after(Duration::from_millis(300)).await;
                    job.succeed().await?;
                }
                println!("shut down and empty");
            }
            _ => eprintln!("usage: two_processes produce|consume [redis-url]"),
        }
        Ok(())
    })
}
