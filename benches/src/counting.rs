//! [`Counting`]: a global allocator that counts allocations, for the allocation table and
//! the allocation test, and the bytes held, for the memory bench; written once.
//!
//! Declare it in the binary or test that counts:
//!
//! ```
//! #[global_allocator]
//! static GLOBAL: benches::counting::Counting = benches::counting::Counting;
//!
//! benches::counting::count_this_thread();
//! let before = benches::counting::allocations();
//! let boxed = std::hint::black_box(Box::new(1));
//! assert_eq!(benches::counting::allocations() - before, 1);
//! # drop(boxed);
//! ```
//!
//! Allocations are counted on the threads that asked for it ([`count_this_thread`]), or on
//! every thread once [`count_every_thread`] was called. A test counts its own thread only:
//! the test harness's threads allocate at times of their choosing, more so on a loaded
//! machine, and must not be mistaken for the workload's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};

/// The counting allocator; forwards every call to [`System`].
#[derive(Debug)]
pub struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// Bytes allocated and not freed, on every thread (the memory bench).
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
static EVERY_THREAD: AtomicBool = AtomicBool::new(false);

thread_local! {
    static THIS_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    // Relaxed: a flag set before the workload starts, on the thread that reads the count.
    if EVERY_THREAD.load(Ordering::Relaxed) || THIS_THREAD.with(Cell::get) {
        // Relaxed: a statistic; the reader joins or is the counting thread.
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

fn grow(bytes: i64) {
    // Relaxed: a statistic, read by the thread that allocated.
    LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed);
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting has no
// effect on memory, and `count` itself does not allocate (a const thread-local and two
// atomics).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        grow(layout.size() as i64);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        grow(new_size as i64 - layout.size() as i64);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        grow(-(layout.size() as i64));
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Counts the allocations of the calling thread from now on.
pub fn count_this_thread() {
    THIS_THREAD.with(|counted| counted.set(true));
}

/// Counts the allocations of every thread from now on (a program without a test harness,
/// whose workloads may run on threads of their own).
pub fn count_every_thread() {
    // Relaxed: set before any workload runs.
    EVERY_THREAD.store(true, Ordering::Relaxed);
}

/// The allocations counted so far.
#[must_use]
pub fn allocations() -> u64 {
    // Relaxed: see `count`.
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// The bytes allocated and not yet freed, by every thread (as requested: the allocator's
/// own overhead is not counted).
#[must_use]
pub fn live_bytes() -> i64 {
    // Relaxed: see `grow`.
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// The allocations counted while the workload `name` runs `n` operations.
#[must_use]
pub fn allocations_of(name: &str, n: u64) -> u64 {
    let before = allocations();
    crate::workloads::run(name, n);
    allocations() - before
}
