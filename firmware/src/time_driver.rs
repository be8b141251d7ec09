//! An `embassy-time` driver on the Cortex-M SysTick timer.
//!
//! SysTick fires at [`TICK_HZ`]; each interrupt advances a 64-bit tick count and wakes every
//! timer that has expired. Wakers wait in embassy's generic timer queue, guarded by the
//! single-core critical section (interrupts masked), so thread mode and the SysTick handler
//! never see it half-updated.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::SYST;
use critical_section::Mutex;
use embassy_time_driver::Driver;
use embassy_time_queue_utils::Queue;

/// Tick rate; matches embassy-time's `tick-hz-1_000` feature.
pub const TICK_HZ: u32 = 1_000;

/// Core clock of QEMU's MPS2 boards.
const CORE_CLOCK_HZ: u32 = 25_000_000;

struct SysTickDriver {
    /// Ticks since [`start`].
    now: Mutex<Cell<u64>>,
    /// Tick at which the earliest queued timer expires (`u64::MAX`: none).
    next: Mutex<Cell<u64>>,
    queue: Mutex<RefCell<Queue>>,
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    now: Mutex::new(Cell::new(0)),
    next: Mutex::new(Cell::new(u64::MAX)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.now.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            let mut queue = self.queue.borrow(cs).borrow_mut();
            if queue.schedule_wake(at, waker) {
                // The earliest deadline moved: recompute it (this also wakes a timer whose
                // deadline has already passed, so it never waits for a tick that came early).
                let now = self.now.borrow(cs).get();
                self.next.borrow(cs).set(queue.next_expiration(now));
            }
        });
    }
}

/// Starts SysTick at [`TICK_HZ`] from the core clock and enables its interrupt.
pub fn start(mut syst: SYST) {
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(CORE_CLOCK_HZ / TICK_HZ - 1);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

/// Advances time by one tick and wakes expired timers; call from the SysTick handler.
/// Returns the new tick count.
pub fn on_tick() -> u64 {
    critical_section::with(|cs| {
        let now = DRIVER.now.borrow(cs).get() + 1;
        DRIVER.now.borrow(cs).set(now);
        if now >= DRIVER.next.borrow(cs).get() {
            let next = DRIVER.queue.borrow(cs).borrow_mut().next_expiration(now);
            DRIVER.next.borrow(cs).set(next);
        }
        now
    })
}
