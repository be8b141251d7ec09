//! Board support: heap, semihosting exit, and fault handlers that end the QEMU run.

use cortex_m_rt::{exception, ExceptionFrame};
use cortex_m_semihosting::{debug, hprintln};
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

/// Ends the QEMU run with the host exit code 0 (`true`) or 1 (`false`).
pub fn exit(success: bool) -> ! {
    debug::exit(if success {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Only reached without a semihosting host (e.g. real hardware with no debugger).
    loop {
        cortex_m::asm::bkpt();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    cortex_m::interrupt::disable();
    hprintln!("PANIC: {}", info);
    exit(false)
}

#[exception]
unsafe fn HardFault(frame: &ExceptionFrame) -> ! {
    hprintln!("HARD FAULT: {:?}", frame);
    exit(false)
}

#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    hprintln!("UNEXPECTED EXCEPTION: {}", irqn);
    exit(false)
}
