//! Latches and a work queue under an embassy executor on an emulated Cortex-M4.
//!
//! The SysTick interrupt is the "hardware" here. On every tick its handler:
//! - counts down [`BOOT`], a `CountDownLatch` in a `static`;
//! - reports the `timer` counter of two `TrackingLatch`es once, at fixed ticks;
//! - feeds a bounded `Queue` with `try_put` (an item refused as full is kept and offered
//!   again on the next tick), then shuts the queue down gracefully, checks that a put after
//!   shutdown hands the item back, and opens [`PRODUCED`].
//!
//! In thread mode, embassy tasks wait on the latches, drain the queue resolving every
//! delivery with an outcome chosen from the item, and `join` the queue. The timed waits use
//! `tally-embassy` over the SysTick time driver in `time_driver.rs`. The main task checks
//! the final ledger against the expected one and against the ledger identity, prints it over
//! semihosting. Last comes an interrupt storm (`storm.rs`): a fast timer interrupt and
//! thread mode put into and take from the same queues. The run ends with success or
//! failure.

#![no_std]
#![no_main]

extern crate alloc;

mod board;
mod heap;
mod storm;
mod time_driver;

use alloc::boxed::Box;
use core::cell::Cell;
use core::fmt;
use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m_rt::exception;
use cortex_m_semihosting::hprintln;
use critical_section::Mutex;
use embassy_executor::Spawner;
use embassy_time::Duration;
use tally_embassy::{LatchExt, QueueExt};
use tally_latch::{CountDownLatch, TrackingLatch};
use tally_queue::{Ledger, Queue, TryPutError};

/// Ticks until [`BOOT`] opens.
const BOOT_TICKS: usize = 10;
/// Tick at which the interrupt reports the `timer` counter of both tracking latches.
const TIMER_REPORT_TICK: u64 = 15;
/// Tick at which the interrupt starts feeding the queue.
const FEED_FROM_TICK: u64 = 20;
/// Items the interrupt puts into the queue: `0..ITEMS`.
const ITEMS: u32 = 20;
/// Queue capacity; smaller than one burst, so the interrupt sees `Full` and retries.
const CAPACITY: usize = 4;
/// Items offered per tick at most.
const BURST: u32 = 6;
/// How long the main task waits for the stalled tracking latch, in ticks (ms).
const STALL_TIMEOUT_MS: u64 = 50;
/// How long `join` may take once the producer is done, in ticks (ms).
const JOIN_TIMEOUT_MS: u64 = 1_000;
/// A run still going at this tick has hung; the interrupt ends it as a failure.
const WATCHDOG_TICK: u64 = 10_000;

/// Opens after [`BOOT_TICKS`] SysTick interrupts.
static BOOT: CountDownLatch = CountDownLatch::new(BOOT_TICKS);

/// Opens once the interrupt has put every item and shut the queue down.
static PRODUCED: CountDownLatch = CountDownLatch::new(1);

/// Everything the interrupt and the tasks share that cannot be built in a `static`.
struct Shared {
    /// Counters `timer` (reported by the interrupt) and `consumer` (by the consumer task).
    ready: TrackingLatch,
    /// Counters `timer` and `sensor`; no one reports `sensor`, so a timed wait names it.
    stalled: TrackingLatch,
    queue: Queue<u32>,
}

/// Set once by `main` before SysTick starts; read by the interrupt handler.
static SHARED: Mutex<Cell<Option<&'static Shared>>> = Mutex::new(Cell::new(None));

/// Producer state, touched only by the SysTick handler.
static NEXT_ITEM: AtomicU32 = AtomicU32::new(0);
/// Puts refused with `Full` (the item was retried on a later tick).
static FULL_REFUSALS: AtomicU32 = AtomicU32::new(0);
/// The item a put after shutdown handed back (`u32::MAX`: none yet).
static REFUSED_AFTER_SHUTDOWN: AtomicU32 = AtomicU32::new(u32::MAX);
/// Bit `i` set once item `i` was delivered; a second delivery of `i` is recorded in
/// [`DUPLICATES`].
static DELIVERED: AtomicU32 = AtomicU32::new(0);
static DUPLICATES: AtomicU32 = AtomicU32::new(0);

/// The device interrupts this image enables: the storm's timer.
fn device_interrupt(irqn: i16) -> bool {
    if irqn == storm::IRQ {
        storm::on_interrupt();
        return true;
    }
    false
}

#[exception]
fn SysTick() {
    let tick = time_driver::on_tick();
    if tick >= WATCHDOG_TICK {
        hprintln!("firmware: FAIL: watchdog: still running at tick {}", tick);
        board::exit(false);
    }

    BOOT.count_down();

    let Some(shared) = critical_section::with(|cs| SHARED.borrow(cs).get()) else {
        return;
    };
    if tick == TIMER_REPORT_TICK {
        report(&shared.ready, "timer");
        report(&shared.stalled, "timer");
    }
    if tick >= FEED_FROM_TICK {
        feed(&shared.queue);
    }
}

/// Reports `name` from the interrupt. An error here (unknown name) is a bug: fail the run.
fn report(latch: &TrackingLatch, name: &str) {
    if let Err(error) = latch.count_down_for(name) {
        hprintln!("firmware: FAIL: count_down_for({}): {}", name, error);
        board::exit(false);
    }
}

/// One tick of the producer: offer up to [`BURST`] items, keep a refused one for the next
/// tick, and once all are in, shut the queue down and check that it now refuses puts.
fn feed(queue: &Queue<u32>) {
    // Only this handler touches the producer state, and it does not preempt itself.
    let mut next = NEXT_ITEM.load(Ordering::Relaxed);
    if next > ITEMS {
        return;
    }
    for _ in 0..BURST {
        if next == ITEMS {
            break;
        }
        match queue.try_put(next) {
            Ok(_id) => next += 1,
            Err(TryPutError::Full(_item)) => {
                // The item came back; `next` still names it, so it is offered again later.
                FULL_REFUSALS.fetch_add(1, Ordering::Relaxed);
                break;
            }
            Err(error) => {
                hprintln!("firmware: FAIL: try_put({}) refused: {:?}", next, error);
                board::exit(false);
            }
        }
    }
    if next == ITEMS {
        queue.shutdown();
        match queue.try_put(ITEMS) {
            Err(TryPutError::ShutDown(item)) => {
                REFUSED_AFTER_SHUTDOWN.store(item, Ordering::Relaxed);
            }
            other => {
                hprintln!(
                    "firmware: FAIL: put after shutdown: {:?}",
                    other.map(|_| ())
                );
                board::exit(false);
            }
        }
        next = ITEMS + 1;
        PRODUCED.count_down();
    }
    NEXT_ITEM.store(next, Ordering::Relaxed);
}

/// Drains the queue, resolving each delivery by its item:
/// `i % 5 == 4` rejected, `i % 8 == 7` uncertain, `i == 10` dropped (abandoned), others
/// succeeded. For `0..20`: 13 succeeded, 4 rejected, 2 uncertain, 1 abandoned.
#[embassy_executor::task]
async fn consumer(shared: &'static Shared) {
    report(&shared.ready, "consumer");
    while let Ok(delivery) = shared.queue.get().await {
        let item = *delivery;
        let bit = 1 << item;
        if DELIVERED.fetch_or(bit, Ordering::Relaxed) & bit != 0 {
            DUPLICATES.fetch_add(1, Ordering::Relaxed);
        }
        if item % 5 == 4 {
            delivery.reject();
        } else if item % 8 == 7 {
            delivery.uncertain();
        } else if item == 10 {
            drop(delivery);
        } else {
            delivery.succeed();
        }
    }
}

/// Prints a list of names as `[a, b]`.
struct Names<'a, S>(&'a [S]);

impl<S: AsRef<str>> fmt::Display for Names<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name.as_ref())?;
        }
        f.write_str("]")
    }
}

/// Fails the run with `message` unless `ok`.
fn check(ok: bool, message: fmt::Arguments<'_>) {
    if !ok {
        hprintln!("firmware: FAIL: {}", message);
        board::exit(false);
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    heap::init_heap();

    let shared: &'static Shared = Box::leak(Box::new(Shared {
        ready: TrackingLatch::new(["timer", "consumer"]).expect("distinct names"),
        stalled: TrackingLatch::new(["timer", "sensor"]).expect("distinct names"),
        queue: Queue::bounded(CAPACITY).expect("non-zero capacity"),
    }));
    critical_section::with(|cs| SHARED.borrow(cs).set(Some(shared)));

    let mut core = cortex_m::Peripherals::take().expect("core peripherals taken once");
    time_driver::start(core.SYST);
    hprintln!(
        "boot: heap {} bytes, tick {} Hz, queue capacity {}",
        heap::HEAP_SIZE,
        time_driver::TICK_HZ,
        CAPACITY
    );
    spawner.spawn(consumer(shared).expect("consumer task spawned once"));

    // 1. A plain latch counted down by the interrupt.
    BOOT.wait().await;
    check(
        BOOT.is_open() && BOOT.count() == 0,
        format_args!("boot latch open with count {}", BOOT.count()),
    );
    hprintln!("latch: boot latch open after {} ticks", BOOT_TICKS);

    // 2. A tracking latch: one counter reported by the interrupt, one by a task.
    if let Err(failure) = shared.ready.wait().await {
        check(false, format_args!("ready latch failed: {:?}", failure));
    }
    hprintln!(
        "tracking: ready latch open, pending {}",
        Names(&shared.ready.pending())
    );

    // 3. A timed wait (tally-embassy) on a tracking latch whose `sensor` counter never
    //    reports: the timeout names it.
    match shared
        .stalled
        .wait_timeout(Duration::from_millis(STALL_TIMEOUT_MS))
        .await
    {
        Err(pending) => {
            hprintln!("tracking: timed out waiting for {}", Names(pending.names()));
        }
        Ok(ended) => check(false, format_args!("stalled latch ended: {:?}", ended)),
    }

    // 4. The queue: wait for the producer to finish and shut down, then join (with a
    //    timeout, so a lost acknowledgement fails with the ledger instead of hanging).
    PRODUCED.wait().await;
    hprintln!(
        "queue: shutdown refused a put and returned item {}",
        REFUSED_AFTER_SHUTDOWN.load(Ordering::Relaxed)
    );
    hprintln!(
        "queue: {} puts refused as full and retried",
        FULL_REFUSALS.load(Ordering::Relaxed)
    );
    let ledger = match shared
        .queue
        .join_timeout(Duration::from_millis(JOIN_TIMEOUT_MS))
        .await
    {
        Ok(ledger) => ledger,
        Err(timed_out) => {
            hprintln!("ledger: {}", LedgerLine(&timed_out.ledger()));
            check(false, format_args!("{}", timed_out));
            return;
        }
    };
    hprintln!("ledger: {}", LedgerLine(&ledger));

    let expected = {
        let mut ledger = Ledger::default();
        ledger.accepted = 20;
        ledger.buffered = 0;
        ledger.in_flight = 0;
        ledger.succeeded = 13;
        ledger.rejected = 4;
        ledger.uncertain = 2;
        ledger.abandoned = 1;
        ledger.discarded = 0;
        ledger
    };
    check(
        ledger == expected,
        format_args!("ledger differs from the expected {}", LedgerLine(&expected)),
    );
    let sum = ledger.buffered
        + ledger.in_flight
        + ledger.succeeded
        + ledger.rejected
        + ledger.uncertain
        + ledger.abandoned
        + ledger.discarded;
    check(
        ledger.accepted == sum && ledger.is_balanced(),
        format_args!(
            "identity broken: accepted {} != sum {}",
            ledger.accepted, sum
        ),
    );
    hprintln!("ledger: identity holds");
    let delivered = DELIVERED.load(Ordering::Relaxed);
    let duplicates = DUPLICATES.load(Ordering::Relaxed);
    check(
        delivered == (1 << ITEMS) - 1 && duplicates == 0,
        format_args!(
            "deliveries: mask {:#x}, {} duplicates",
            delivered, duplicates
        ),
    );
    hprintln!("queue: every item delivered exactly once");
    hprintln!("heap: {} bytes in use", heap::heap_used());

    // 5. Both queue engines and the fixed queue under an interrupt storm.
    storm::run(&mut core.NVIC);
    hprintln!("firmware: ok");
    board::exit(true)
}

/// Prints a ledger as `accepted=.. buffered=.. ...`, the line the run script checks.
struct LedgerLine<'a>(&'a Ledger);

impl fmt::Display for LedgerLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = self.0;
        write!(
            f,
            "accepted={} buffered={} in_flight={} succeeded={} rejected={} uncertain={} abandoned={} discarded={}",
            l.accepted, l.buffered, l.in_flight, l.succeeded, l.rejected, l.uncertain, l.abandoned, l.discarded
        )
    }
}
