//! Latches and a work queue under an embassy executor on an emulated Cortex-M4.

#![no_std]
#![no_main]

mod board;
mod time_driver;

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m_rt::exception;
use cortex_m_semihosting::hprintln;
use embassy_executor::Spawner;
use embassy_time::{Duration, Timer};

static TICKS_SEEN: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    time_driver::on_tick();
    TICKS_SEEN.fetch_add(1, Ordering::Relaxed);
}

#[embassy_executor::main]
async fn main(_spawner: Spawner) {
    board::init_heap();
    let core = cortex_m::Peripherals::take().expect("core peripherals taken once");
    time_driver::start(core.SYST);
    hprintln!("boot: heap {} bytes, tick {} Hz", board::HEAP_SIZE, time_driver::TICK_HZ);

    Timer::after(Duration::from_millis(20)).await;
    let ticks = TICKS_SEEN.load(Ordering::Relaxed);
    hprintln!("timer: {} ticks seen, heap used {} bytes", ticks, board::heap_used());
    board::exit(ticks >= 20)
}
