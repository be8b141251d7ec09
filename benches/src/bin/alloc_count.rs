//! Counts heap allocations per operation for each workload with a counting global
//! allocator: the allocations of a run with 2N operations minus those of a run with N,
//! divided by N, so set-up and warm-up cancel out and only the steady state remains.
//!
//! Prints one tab-separated line per workload: name, allocations per operation.
//! `OPS` sets N (default 20,000).

use benches::counting::{allocations_of, count_every_thread, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    count_every_thread();
    let n = benches::ops_from_env(20_000).max(1);
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(name) => vec![name],
        None => benches::workloads::all_names().map(str::to_owned).collect(),
    };
    for name in names {
        // A first run warms up thread-locals and lazily allocated state.
        let _ = allocations_of(&name, n);
        let once = allocations_of(&name, n);
        let twice = allocations_of(&name, 2 * n);
        #[allow(clippy::cast_precision_loss)]
        let per_op = twice.saturating_sub(once) as f64 / n as f64;
        println!("{name}\t{per_op:.4}\t{once}\t{twice}");
    }
}
