//! An interrupt storm over three queues: thread mode and an interrupt handler put into,
//! take from and resolve on the same queues while the handler preempts thread mode
//! thousands of times, at whatever instruction thread mode has reached.
//!
//! The CMSDK timer 0 of the MPS2 board fires every [`PERIOD_CYCLES`] core cycles. Thread
//! mode loops over `try_put`, `try_get` and `succeed` on both queues until the handler has
//! run [`INTERRUPTS`] times. The handler puts, takes and resolves one item per queue per
//! interrupt. One heap queue is bounded at [`CAPACITY`] (the ring engine, wrapping every
//! few items, kept full), another unbounded (the growable engine), and a `FixedQueue` of
//! the same capacity lives in a `static` (its ring, kept full, and its waiter counts). An
//! operation that waited for the one it interrupted would never return: the watchdog in the
//! SysTick handler, which preempts this one, ends the run. Afterwards every item put must
//! have been taken once, and each queue's ledger must be settled with every item
//! succeeded.

use core::cell::Cell;
use core::sync::atomic::{AtomicU32, Ordering};

use alloc::boxed::Box;
use cortex_m::interrupt::InterruptNumber;
use cortex_m::peripheral::NVIC;
use cortex_m_semihosting::hprintln;
use critical_section::Mutex;
use tally_queue::fixed::FixedQueue;
use tally_queue::{Ledger, Queue, TryPutError};

/// The timer's interrupt line on the MPS2 AN386 board.
pub const IRQ: i16 = 8;
/// The timer's register block: CTRL, VALUE, RELOAD, INTSTATUS/INTCLEAR.
const TIMER0: usize = 0x4000_0000;
const CTRL: usize = TIMER0;
const RELOAD: usize = TIMER0 + 0x8;
const INTCLEAR: usize = TIMER0 + 0xc;
/// CTRL: enable the counter and its interrupt.
const CTRL_ENABLE_WITH_INTERRUPT: u32 = 0b1001;
/// Core cycles between two interrupts (25 MHz clock: 20 us).
const PERIOD_CYCLES: u32 = 500;
/// Interrupts the storm lasts.
const INTERRUPTS: u32 = 20_000;
/// The bound of the ring queue.
const CAPACITY: usize = 4;
/// Puts per get in thread mode, for each queue: the ring queues stay full, so a put finds
/// its slot still being emptied and a get finds one still being filled; the growable one
/// stays near empty, as the heap is small.
const PUTS_PER_GET: [u32; 3] = [2, 1, 2];
/// Below SysTick's priority (0), so the watchdog preempts a handler that hangs.
const PRIORITY: u8 = 0xf0;
/// Items the handler puts are numbered from here; thread mode's from 0.
const INTERRUPT_ITEMS: u32 = 1 << 31;

#[derive(Clone, Copy)]
struct Timer0;

// SAFETY: 8 is the timer's interrupt number on this board, and the only one this returns.
unsafe impl InterruptNumber for Timer0 {
    fn number(self) -> u16 {
        IRQ as u16
    }
}

/// The queue with no heap, bounded at [`CAPACITY`].
static FIXED: FixedQueue<u32, CAPACITY> = FixedQueue::new();

/// The calls the storm makes, on either tier.
trait StormQueue: Sync {
    fn try_put(&self, item: u32) -> Result<(), TryPutError<u32>>;
    /// Takes one item if there is one, resolves it as succeeded and returns it.
    fn take_and_succeed(&self) -> Option<u32>;
    fn shutdown(&self);
    fn ledger(&self) -> Ledger;
}

impl StormQueue for Queue<u32> {
    fn try_put(&self, item: u32) -> Result<(), TryPutError<u32>> {
        Queue::try_put(self, item).map(drop)
    }

    fn take_and_succeed(&self) -> Option<u32> {
        let delivery = self.try_get().ok()?;
        let item = *delivery;
        delivery.succeed();
        Some(item)
    }

    fn shutdown(&self) {
        Queue::shutdown(self);
    }

    fn ledger(&self) -> Ledger {
        Queue::ledger(self)
    }
}

impl StormQueue for FixedQueue<u32, CAPACITY> {
    fn try_put(&self, item: u32) -> Result<(), TryPutError<u32>> {
        FixedQueue::try_put(self, item).map(drop)
    }

    fn take_and_succeed(&self) -> Option<u32> {
        Some(self.try_get().ok()?.succeed())
    }

    fn shutdown(&self) {
        FixedQueue::shutdown(self);
    }

    fn ledger(&self) -> Ledger {
        FixedQueue::ledger(self)
    }
}

/// The queues under the storm, and what each side did to them.
struct Storm {
    queues: [&'static dyn StormQueue; 3],
    thread: [Side; 3],
    interrupt: [Side; 3],
}

/// One side's record for one queue: items put and taken, and the sums of their numbers
/// (wrapping: a checksum).
#[derive(Default)]
struct Side {
    put: AtomicU32,
    put_sum: AtomicU32,
    taken: AtomicU32,
    taken_sum: AtomicU32,
    full: AtomicU32,
}

impl Side {
    /// Offers `item`; counts it if accepted, and a refusal as full.
    fn put(&self, queue: &dyn StormQueue, item: u32) -> bool {
        // Relaxed (all): counted by one context at a time, read after the storm ended.
        match queue.try_put(item) {
            Ok(()) => {
                self.put.fetch_add(1, Ordering::Relaxed);
                self.put_sum.fetch_add(item, Ordering::Relaxed);
                true
            }
            Err(TryPutError::Full(_item)) => {
                self.full.fetch_add(1, Ordering::Relaxed);
                false
            }
            Err(error) => fail(format_args!("try_put refused: {}", error)),
        }
    }

    /// Takes one item if there is one and resolves it as succeeded.
    fn take(&self, queue: &dyn StormQueue) -> bool {
        let Some(item) = queue.take_and_succeed() else {
            return false;
        };
        // Relaxed (both): as in `put`.
        self.taken.fetch_add(1, Ordering::Relaxed);
        self.taken_sum.fetch_add(item, Ordering::Relaxed);
        true
    }
}

static STORM: Mutex<Cell<Option<&'static Storm>>> = Mutex::new(Cell::new(None));
/// Interrupts handled so far.
static HANDLED: AtomicU32 = AtomicU32::new(0);

/// Runs the storm and checks its outcome; fails the run on any difference.
pub fn run(nvic: &mut NVIC) {
    let heap: &'static [Queue<u32>; 2] = Box::leak(Box::new([
        Queue::bounded(CAPACITY).expect("non-zero capacity"),
        Queue::unbounded(),
    ]));
    let storm: &'static Storm = Box::leak(Box::new(Storm {
        queues: [&heap[0], &heap[1], &FIXED],
        thread: Default::default(),
        interrupt: Default::default(),
    }));
    critical_section::with(|cs| STORM.borrow(cs).set(Some(storm)));

    // SAFETY: the timer's registers, written from thread mode before its interrupt is
    // unmasked; the handler only writes INTCLEAR.
    unsafe {
        core::ptr::write_volatile(RELOAD as *mut u32, PERIOD_CYCLES);
        core::ptr::write_volatile(CTRL as *mut u32, CTRL_ENABLE_WITH_INTERRUPT);
        nvic.set_priority(Timer0, PRIORITY);
        NVIC::unmask(Timer0);
    }

    let mut next = 0;
    // Relaxed: a count; the handler's work is read below only after it is masked.
    while HANDLED.load(Ordering::Relaxed) < INTERRUPTS {
        for ((&queue, side), puts) in storm.queues.iter().zip(&storm.thread).zip(PUTS_PER_GET) {
            for _ in 0..puts {
                if side.put(queue, next) {
                    next += 1;
                }
            }
            side.take(queue);
        }
    }

    NVIC::mask(Timer0);
    // SAFETY: as above; the interrupt is masked.
    unsafe { core::ptr::write_volatile(CTRL as *mut u32, 0) };

    for (index, &queue) in storm.queues.iter().enumerate() {
        let thread = &storm.thread[index];
        let interrupt = &storm.interrupt[index];
        while thread.take(queue) {}
        queue.shutdown();
        check(index, thread, interrupt, queue);
    }
    hprintln!(
        "storm: {} interrupts; ring queue {} items, {} puts refused as full; growable queue {} items; fixed queue {} items, {} puts refused as full",
        HANDLED.load(Ordering::Relaxed),
        count(&storm.thread[0].put) + count(&storm.interrupt[0].put),
        count(&storm.thread[0].full) + count(&storm.interrupt[0].full),
        count(&storm.thread[1].put) + count(&storm.interrupt[1].put),
        count(&storm.thread[2].put) + count(&storm.interrupt[2].put),
        count(&storm.thread[2].full) + count(&storm.interrupt[2].full),
    );
    hprintln!("storm: every item taken once, all three ledgers settled");
}

/// The timer's interrupt: clears it, then takes one item from each queue and puts one.
pub fn on_interrupt() {
    // SAFETY: writing 1 to INTCLEAR clears the timer's interrupt; nothing else is touched.
    unsafe { core::ptr::write_volatile(INTCLEAR as *mut u32, 1) };
    let Some(storm) = critical_section::with(|cs| STORM.borrow(cs).get()) else {
        return;
    };
    // Relaxed: only this handler writes it, and it does not preempt itself.
    let handled = HANDLED.fetch_add(1, Ordering::Relaxed);
    for (&queue, side) in storm.queues.iter().zip(&storm.interrupt) {
        side.take(queue);
        side.put(queue, INTERRUPT_ITEMS + handled);
    }
}

/// Checks queue `index` once drained and shut down: every item put was taken once (count
/// and sum of numbers), and the ledger has them all succeeded.
fn check(index: usize, thread: &Side, interrupt: &Side, queue: &dyn StormQueue) {
    let put = count(&thread.put) + count(&interrupt.put);
    let taken = count(&thread.taken) + count(&interrupt.taken);
    let put_sum = count(&thread.put_sum).wrapping_add(count(&interrupt.put_sum));
    let taken_sum = count(&thread.taken_sum).wrapping_add(count(&interrupt.taken_sum));
    if put != taken || put_sum != taken_sum {
        fail(format_args!(
            "queue {}: {} items put (sum {}), {} taken (sum {})",
            index, put, put_sum, taken, taken_sum
        ));
    }
    if count(&interrupt.put) == 0 || count(&thread.put) == 0 {
        fail(format_args!("queue {}: one side put nothing", index));
    }
    let ledger = queue.ledger();
    let put = u64::from(put);
    if ledger.accepted != put
        || ledger.succeeded != put
        || ledger.buffered != 0
        || ledger.in_flight != 0
        || !ledger.is_balanced()
    {
        fail(format_args!(
            "queue {}: ledger accepted={} buffered={} in_flight={} succeeded={} after {} puts",
            index, ledger.accepted, ledger.buffered, ledger.in_flight, ledger.succeeded, put
        ));
    }
}

fn count(counter: &AtomicU32) -> u32 {
    // Relaxed: read after the storm, in the context that did or masked the writes.
    counter.load(Ordering::Relaxed)
}

fn fail(message: core::fmt::Arguments<'_>) -> ! {
    hprintln!("firmware: FAIL: storm: {}", message);
    crate::board::exit(false)
}
