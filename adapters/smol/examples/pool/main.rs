//! A worker pool on smol with a graceful drain: 3 producers, 4 workers, one job rejected
//! and one uncertain, and the ledger at the end.
//!
//! Run it with `cargo run -p tally-smol --example pool [-- abort | dead-producer]`. With
//! `abort`, the workers are slow and the drain's deadline passes: the queue shuts down
//! immediately, hands the unprocessed jobs back and asks the workers to stop; the jobs they
//! stop mid-work end uncertain, and the record lists them for reconciliation. With `dead-producer`, one more producer
//! puts a job and panics; its producer guard still lets the pool drain and stop.

mod pool;

use std::time::Duration;

use pool::Plan;

fn main() {
    let mode = std::env::args().nth(1);
    let abort = mode.as_deref() == Some("abort");
    let plan = Plan {
        producers: 3,
        jobs_per_producer: 5,
        workers: 4,
        capacity: 4,
        work: Duration::from_millis(if abort { 40 } else { 5 }),
        drain_timeout: Duration::from_millis(if abort { 30 } else { 5_000 }),
        grace: Duration::from_millis(100),
        verbose: true,
        dead_producer: mode.as_deref() == Some("dead-producer"),
    };
    let report = pool::run(&plan);
    println!("{}", report.summary());
}
