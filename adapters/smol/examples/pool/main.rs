//! A worker pool on smol with a graceful drain: 3 producers, 4 workers, one job rejected
//! and one uncertain, and the ledger at the end.
//!
//! Run it with `cargo run -p adapter-smol --example pool [-- abort]`. With `abort`, the
//! workers are slow and the drain's deadline passes: the queue shuts down immediately and
//! hands the unprocessed jobs back.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)] // a std program

mod pool;

use std::time::Duration;

use pool::Plan;

fn main() {
    let abort = std::env::args().nth(1).as_deref() == Some("abort");
    let plan = Plan {
        producers: 3,
        jobs_per_producer: 5,
        workers: 4,
        capacity: 4,
        work: Duration::from_millis(if abort { 40 } else { 5 }),
        drain_timeout: Duration::from_millis(if abort { 30 } else { 5_000 }),
        verbose: true,
    };
    let report = pool::run(&plan);
    println!("{}", report.summary());
}
