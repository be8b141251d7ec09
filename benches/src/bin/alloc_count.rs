//! Counts heap allocations per operation for each workload with a counting global
//! allocator: the allocations of a run with 2N operations minus those of a run with N,
//! divided by N, so set-up and warm-up cancel out and only the steady state remains.
//!
//! Prints one tab-separated line per workload: name, allocations per operation.
//! `OPS` sets N (default 20,000).
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counter has no
// effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(name: &str, n: u64) -> u64 {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    benches::workloads::run(name, n);
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

fn main() {
    let n = benches::ops_from_env(20_000).max(1);
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(name) => vec![name],
        None => benches::workloads::NAMES
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
    };
    for name in names {
        // A first run warms up thread-locals and lazily allocated state.
        allocations(&name, n);
        let once = allocations(&name, n);
        let twice = allocations(&name, 2 * n);
        #[allow(clippy::cast_precision_loss)]
        let per_op = twice.saturating_sub(once) as f64 / n as f64;
        println!("{name}\t{per_op:.4}\t{once}\t{twice}");
    }
}
