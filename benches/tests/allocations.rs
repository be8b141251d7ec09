//! With a counting global allocator: the latch's count-down, open-wait and opening with no
//! waiters, and the queue's put + get + resolve when nobody has to wait, allocate nothing.
#![allow(clippy::std_instead_of_core, clippy::std_instead_of_alloc)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
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

/// Allocations made by `name` at `n` operations. The test harness runs tests on threads
/// of its own, so the count is only meaningful with one test in this file.
fn allocations(name: &str, n: u64) -> u64 {
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    benches::workloads::run(name, n);
    ALLOCATIONS.load(Ordering::Relaxed) - before
}

#[test]
fn steady_state_paths_do_not_allocate() {
    for name in [
        "latch/count_down/ours",
        "latch/wait_open/ours",
        "latch/open_no_waiters/ours",
        "queue/floor/ours",
    ] {
        // The difference between two sizes is the per-operation cost; set-up cancels out.
        let small = allocations(name, 1_000);
        let large = allocations(name, 11_000);
        assert_eq!(large - small, 0, "{name} allocates per operation");
    }
}
