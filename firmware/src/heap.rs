//! The global allocator of this image (the `noalloc/` image has none).

use embedded_alloc::LlffHeap;

#[global_allocator]
static HEAP: LlffHeap = LlffHeap::empty();

/// Heap size; event-listener, concurrent-queue and the cores allocate from it.
pub const HEAP_SIZE: usize = 64 * 1024;

/// Gives the allocator its memory. Call once, first thing in `main`.
pub fn init_heap() {
    // SAFETY: called once, before anything allocates; `init!` hands the allocator a
    // `static mut` array that nothing else names, so the heap owns that memory for the rest
    // of the program.
    unsafe {
        embedded_alloc::init!(HEAP, HEAP_SIZE);
    }
}

/// Bytes currently allocated.
pub fn heap_used() -> usize {
    HEAP.used()
}
