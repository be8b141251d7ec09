//! Shared workloads for the benchmarks of `tally-latch` and `tally-queue` against their peers.
//!
//! The criterion suites (`benches/`), the instruction-count binary (`src/bin/icount.rs`),
//! the allocation counter (`src/bin/alloc_count.rs`) and the report generator
//! (`src/bin/report.rs`) all run the workloads defined here, so a figure in one table and
//! the matching figure in another come from the same code.
//!
//! - [`latch`]: the latch peers that need a wrapper (a tokio `Notify` latch) and the
//!   waiter-release workload.
//! - [`batch`]: the batch verbs against flume's `drain` and tokio's `recv_many`.
//! - [`queue`]: one [`queue::Flavor`] per queue or channel (ours doing put + get + resolve,
//!   the peers doing send + recv), and drivers for a single-thread executor, smol on two
//!   threads, and plain blocking threads.

pub mod batch;
pub mod counting;
pub mod fixed;
pub mod latch;
pub mod queue;
pub mod workloads;

/// Reads the operation count from the environment variable `OPS` (default `default`).
///
/// # Panics
///
/// If `OPS` is set and is not a number.
#[must_use]
pub fn ops_from_env(default: u64) -> u64 {
    match std::env::var("OPS") {
        Ok(value) => value.trim().parse().expect("OPS must be a number"),
        Err(_) => default,
    }
}
