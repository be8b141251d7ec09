//! Runs one named workload with `OPS` operations, for
//! `instructions-per-op N icount WORKLOAD` (callgrind at N and at 0).
//!
//! `icount` alone lists the workloads.

fn main() {
    let Some(name) = std::env::args().nth(1) else {
        for name in benches::workloads::all_names() {
            println!("{name}");
        }
        return;
    };
    benches::workloads::run(&name, benches::ops_from_env(100_000));
}
