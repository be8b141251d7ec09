//! Readiness gating over real HTTP: a service whose `/readyz` answers 503 until its three
//! components (consumer, cache warmer, http) have reported through a `TrackingLatch`, then
//! 200. `/healthz` is live from the start.
//!
//! Run it with `cargo run -p tally-tokio --example readiness [-- stall | panic]`. It
//! serves on an ephemeral port of 127.0.0.1 and probes itself every 200 ms. By default the
//! cache warmer takes 900 ms and the service becomes ready; with `stall` the cache warmer
//! never reports and startup fails after 1 s naming it; with `panic` it panics before
//! reporting and the latch fails with its name.
//!
//! Once ready, it enqueues three jobs (`POST /jobs/NAME`, one of them one the consumer
//! rejects) and prints `/metrics`: the readiness latch and the queue through the `metrics`
//! facade, rendered by `metrics-exporter-prometheus`.
//!
//! With `--features tracing` the latch's and the queue's own `tracing` events are printed
//! too (through `tracing-subscriber`): each component's count-down, the opening with its
//! `time_to_open_us`, or the failure with its reason and counter; and each job's ending.

mod metrics;
mod service;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use service::{get, post, Config, Service, Warmup};
use tally_latch::CountDownLatch;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

#[tokio::main]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    // The latch's events from `DEBUG` (each count-down), the queue's from `DEBUG` (each
    // ending; its per-job `TRACE` events would be one line per put and get).
    let targets = Targets::new()
        .with_target("tally_latch", LevelFilter::DEBUG)
        .with_target("tally_queue", LevelFilter::DEBUG);
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().without_time())
        .with(targets)
        .init();
    let (warmup, startup_timeout) = match std::env::args().nth(1).as_deref() {
        None => (Warmup::After(Duration::from_millis(900)), 10),
        // A gate nobody opens.
        Some("stall") => (Warmup::When(Arc::new(CountDownLatch::new(1))), 1),
        Some("panic") => (Warmup::Panic, 10),
        Some(other) => return Err(format!("unknown scenario `{other}`").into()),
    };
    let service = Service::start(Config {
        addr: "127.0.0.1:0".parse()?,
        consumer_delay: Duration::from_millis(300),
        warmup,
        startup_timeout: Duration::from_secs(startup_timeout),
        verbose: true,
        label: "readiness",
    })
    .await?;
    println!("serving on http://{}", service.addr);
    let start = Instant::now();
    loop {
        let probes = async {
            let (health, _) = get(service.addr, "/healthz").await?;
            let (ready, body) = get(service.addr, "/readyz").await?;
            std::io::Result::Ok((health, ready, body))
        };
        let Ok((health, ready, body)) = probes.await else {
            break; // The server is gone: the service stopped.
        };
        println!(
            "  {:>5} ms  /healthz {health}  /readyz {ready} {body}",
            start.elapsed().as_millis()
        );
        if ready == 200 {
            let time_to_open = service.ready.time_to_open().unwrap_or_default();
            println!("ready after {} ms", time_to_open.as_millis());
            for name in ["resize-1", "resize-2", "bad-upload"] {
                let (status, id) = post(service.addr, &format!("/jobs/{name}")).await?;
                println!("  POST /jobs/{name}  {status} {id}");
            }
            while service.jobs.ledger().ended() < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let (_, metrics) = get(service.addr, "/metrics").await?;
            println!("GET /metrics\n{metrics}");
            service.stop().await;
            return Ok(ExitCode::SUCCESS);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    match service.finished().await {
        Err(error) => println!("{error}"),
        Ok(()) => unreachable!("the service only stops on an error"),
    }
    Ok(ExitCode::FAILURE)
}
