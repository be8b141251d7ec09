//! tally-redis against the raw Streams loop (unbatched and batched) and BullMQ, in one run
//! on one `redis-server` that this harness starts: single and bulk puts, and consumers
//! that only acknowledge, with the server's time per job and the bytes per job left on it.
//!
//! Run it through `bash adapters/redis/benches/report.sh`, which installs BullMQ (when node
//! and npm are present) and writes the Redis section of `BENCHMARKS.md`. Directly:
//! `cargo bench -p tally-redis --bench peers`. Settings, by environment variable:
//!
//! - `REDIS_BENCH_JOBS` (20000), `REDIS_BENCH_ROUNDS` (5), `REDIS_BENCH_BATCH` (100),
//!   `REDIS_BENCH_CONSUMERS` (`1,4,16`);
//! - `REDIS_BENCH_FSYNC` (`everysec`): the server's `appendfsync`, the same for every
//!   system;
//! - `REDIS_BENCH_SYSTEMS`: only the systems whose names contain one of these
//!   `|`-separated words (names have commas: `tally-redis, batched`); all by default;
//! - `REDIS_BENCH_WORKLOADS`: only these comma-separated workloads (`put-one`,
//!   `put-bulk`, `consume-N` for each N of `REDIS_BENCH_CONSUMERS`); all by default;
//! - `REDIS_BENCH_BULLMQ`: a `node_modules` folder with bullmq and ioredis, or
//!   `REDIS_BENCH_BULLMQ_ABSENT`: why there is none;
//! - `REDIS_BENCH_CHASQUIMQ`: the `chasquimq-peer` binary (`benches/chasquimq/`), or
//!   `REDIS_BENCH_CHASQUIMQ_ABSENT`: why there is none; measured only on Redis >= 8.2
//!   (chasquimq needs `XACKDEL`);
//! - `REDIS_BENCH_HEADING` (`## Redis`): the section's heading;
//! - `REDIS_BENCH_NO_BASELINE=1`: no comparison with the baseline (a run on another
//!   server than the baseline's);
//! - `REDIS_BENCH_OUT`: where `runs.tsv` and `section.md` go (`target/redis-bench`);
//! - `REDIS_BENCH_COMMIT`: what was measured, for the report;
//! - `REDIS_BENCH_SAVE_BASELINE=1`: this run becomes the baseline (`baseline.tsv`) that
//!   later runs compare the one-at-a-time path with.

mod bullmq;
mod chasquimq;
mod child;
mod measurement;
mod meta;
mod raw;
mod report;
mod server;
mod stats;
mod summary;
mod system;
mod tally;
mod verdicts;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;

use crate::measurement::{load_average, runs_tsv, Failure, Measurement};
use crate::meta::Meta;
use crate::raw::Raw;
use crate::server::Server;
use crate::stats::{key_bytes, Snapshot};
use crate::summary::Summary;
use crate::system::{Setup, System, Workload};
use crate::tally::{Flavor, Tally};

/// How long one step of a run may take before the run fails (instead of hanging).
const STEP_LIMIT: Duration = Duration::from_secs(600);

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} does not parse")),
        Err(_) => default,
    }
}

fn main() {
    if !server::installed() {
        eprintln!("\n*** SKIPPED: redis-server is not installed; nothing was measured ***\n");
        return;
    }
    let setup = Setup {
        jobs: env_or("REDIS_BENCH_JOBS", 20_000),
        batch: env_or("REDIS_BENCH_BATCH", 100),
    };
    assert!(
        setup.jobs > 0 && setup.batch > 0,
        "jobs and batch must be positive"
    );
    let rounds: usize = env_or("REDIS_BENCH_ROUNDS", 5);
    let consumers: Vec<usize> = env_or("REDIS_BENCH_CONSUMERS", "1,4,16".to_string())
        .split(',')
        .map(|n| n.trim().parse().expect("REDIS_BENCH_CONSUMERS: numbers"))
        .collect();
    let fsync = env_or("REDIS_BENCH_FSYNC", "everysec".to_string());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::var_os("REDIS_BENCH_OUT").map_or_else(
        || {
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(|| root.join("target"), PathBuf::from)
                .join("redis-bench")
        },
        PathBuf::from,
    );
    std::fs::create_dir_all(&out).expect("the output folder");

    let server = Server::start(&fsync).unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut con = rt
        .block_on(server.connect())
        .unwrap_or_else(|e| panic!("{e}"));

    // The systems, in the report's order. A new variant is one line here.
    let mut systems: Vec<Box<dyn System>> = vec![
        Box::new(Raw::batched()),
        Box::new(Raw::unbatched()),
        Box::new(Tally::new("tally-redis", Flavor::OneAtATime)),
        Box::new(Tally::new("tally-redis, batched", Flavor::Batched)),
    ];
    let mut meta = Meta::collect(&server, setup, rounds, &consumers);
    match std::env::var_os("REDIS_BENCH_BULLMQ") {
        Some(modules) => match bullmq::start(Path::new(&modules), &server) {
            Ok(bullmq) => {
                meta.bullmq = Ok(bullmq.versions.clone());
                systems.push(Box::new(bullmq));
            }
            Err(e) => meta.bullmq = Err(format!("BullMQ did not start: {e}")),
        },
        None => {
            meta.bullmq = Err(
                std::env::var("REDIS_BENCH_BULLMQ_ABSENT").unwrap_or_else(|_| {
                    "REDIS_BENCH_BULLMQ was not set (report.sh installs BullMQ and sets it)"
                        .to_string()
                }),
            )
        }
    }
    meta.chasquimq = match (
        std::env::var_os("REDIS_BENCH_CHASQUIMQ"),
        server::at_least(&server.version, 8, 2),
    ) {
        (_, false) => Err(format!(
            "the server is not Redis >= 8.2 (chasquimq needs `XACKDEL`): {}",
            server.version
        )),
        (Some(binary), true) => chasquimq::start(Path::new(&binary), &server).map(|peers| {
            let versions = peers[0].versions.clone();
            systems.extend(peers.into_iter().map(|p| Box::new(p) as Box<dyn System>));
            versions
        }),
        (None, true) => Err(
            std::env::var("REDIS_BENCH_CHASQUIMQ_ABSENT").unwrap_or_else(|_| {
                "REDIS_BENCH_CHASQUIMQ was not set (report.sh builds chasquimq's peer and sets it)"
                    .to_string()
            }),
        ),
    };
    if let Ok(only) = std::env::var("REDIS_BENCH_SYSTEMS") {
        let words: Vec<String> = only.split('|').map(|w| w.trim().to_lowercase()).collect();
        systems.retain(|s| words.iter().any(|w| s.name().to_lowercase().contains(w)));
    }
    let names: Vec<String> = systems.iter().map(|s| s.name().to_string()).collect();
    meta.methods = systems
        .iter()
        .map(|s| (s.name().to_string(), s.method(setup.batch)))
        .collect();
    if let Err(why) = &meta.bullmq {
        eprintln!("BullMQ is not measured: {why}");
    }
    if let Err(why) = &meta.chasquimq {
        eprintln!("chasquimq is not measured: {why}");
    }

    let mut workloads = vec![Workload::PutOne, Workload::PutBulk];
    workloads.extend(consumers.iter().map(|&n| Workload::Consume(n)));
    if let Ok(only) = std::env::var("REDIS_BENCH_WORKLOADS") {
        let names: Vec<&str> = only.split(',').map(str::trim).collect();
        workloads.retain(|w| names.contains(&w.to_string().as_str()));
    }
    let mut measurements = Vec::new();
    let mut failures = Vec::new();
    meta.load_before = load_average();
    for round in 0..rounds {
        meta.load_rounds.push(load_average());
        for (w, &workload) in workloads.iter().enumerate() {
            // Rotate the order every round and every workload, so no system always runs
            // first (on a cold server) or right after the same neighbour.
            let n = systems.len();
            for k in 0..n {
                let system = &mut systems[(k + round + w) % n];
                match rt.block_on(measure(&server, &mut con, system.as_mut(), workload, setup)) {
                    Ok(measured) => {
                        let m = Measurement { round, ..measured };
                        println!("round {}/{rounds} {}", round + 1, m.line());
                        measurements.push(m);
                    }
                    Err(error) => {
                        let failure = Failure {
                            round,
                            system: system.name().to_string(),
                            workload,
                            error,
                        };
                        println!("round {}/{rounds} {failure}", round + 1);
                        failures.push(failure);
                    }
                }
            }
        }
    }
    meta.load_after = load_average();
    drop(systems);

    let runs = out.join("runs.tsv");
    std::fs::write(&runs, runs_tsv(&measurements)).expect("write runs.tsv");
    let baseline_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/baseline.tsv");
    let summary = Summary::new(&measurements, &failures, &names);
    let no_baseline = std::env::var("REDIS_BENCH_NO_BASELINE").as_deref() == Ok("1");
    let is_baseline = std::env::var("REDIS_BENCH_SAVE_BASELINE").as_deref() == Ok("1")
        && failures.is_empty()
        && !no_baseline;
    if !failures.is_empty() {
        println!("{} runs failed: no baseline written", failures.len());
    }
    if is_baseline {
        std::fs::write(&baseline_path, summary.baseline_tsv(&meta)).expect("write baseline.tsv");
        println!("baseline written to {}", baseline_path.display());
    }
    let baseline = if no_baseline {
        None
    } else {
        std::fs::read_to_string(&baseline_path).ok()
    };
    let section = report::render(&meta, &summary, &failures, baseline.as_deref(), is_baseline);
    std::fs::write(out.join("section.md"), section).expect("write section.md");
    if !failures.is_empty() {
        eprintln!(
            "{} runs failed (see the section's failed runs)",
            failures.len()
        );
    }
    println!(
        "{} and {} written",
        runs.display(),
        out.join("section.md").display()
    );
    if !failures.is_empty() {
        std::process::exit(1);
    }
}

/// A step of a run, failing after [`STEP_LIMIT`] instead of hanging.
async fn within<T>(
    step: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(STEP_LIMIT, step)
        .await
        .map_err(|_| format!("a step took more than {STEP_LIMIT:?}"))?
}

/// One run: empty the server, set up, time the run between two readings of the server's
/// counters, check, and read what is left. A run that fails is torn down (its connections
/// closed, node's workers stopped) so that the next one starts clean.
async fn measure(
    server: &Server,
    con: &mut MultiplexedConnection,
    system: &mut dyn System,
    workload: Workload,
    setup: Setup,
) -> Result<Measurement, String> {
    server.reset(con).await?;
    let measured = measure_once(server, con, system, workload, setup).await;
    if measured.is_err() {
        let _ = within(system.finish()).await;
    }
    measured
}

async fn measure_once(
    server: &Server,
    con: &mut MultiplexedConnection,
    system: &mut dyn System,
    workload: Workload,
    setup: Setup,
) -> Result<Measurement, String> {
    within(system.prepare(server, workload, setup)).await?;
    let load = load_average();
    let before = Snapshot::take(con).await?;
    let start = Instant::now();
    within(system.run()).await?;
    let seconds = start.elapsed().as_secs_f64();
    let after = Snapshot::take(con).await?;
    within(system.finish()).await?;
    let (keys, bytes) = key_bytes(con).await?;
    Ok(Measurement {
        round: 0,
        system: system.name().to_string(),
        workload,
        jobs: setup.jobs,
        seconds,
        spent: before.until(&after, system.nested()),
        keys,
        bytes,
        load,
    })
}
