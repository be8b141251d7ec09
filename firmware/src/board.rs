//! Board support: semihosting exit, and panic and fault handlers that end the QEMU run.
//! Shared by both images (`noalloc/` includes this file); the heap is in `heap.rs`.

use cortex_m_rt::{exception, ExceptionFrame};
use cortex_m_semihosting::{debug, hprintln};

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

/// Device interrupts go to the image's `device_interrupt`, which returns whether it
/// handled `irqn`; any other is unexpected and ends the run.
#[exception]
unsafe fn DefaultHandler(irqn: i16) {
    if !crate::device_interrupt(irqn) {
        hprintln!("UNEXPECTED EXCEPTION: {}", irqn);
        exit(false)
    }
}
