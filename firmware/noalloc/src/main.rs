//! The fixed latches of tally-latch and the fixed queue of tally-queue under an embassy
//! executor, on an emulated Cortex-M4, with no heap: no `#[global_allocator]`, no `alloc`
//! crate, tally-latch and tally-queue built without their `alloc` features. Everything
//! lives in `static`s.
//!
//! The SysTick interrupt is the "hardware". On every tick its handler counts down
//! [`BOOT`]; at [`TIMER_REPORT_TICK`] it reports the `timer` counter of [`READY`]; from
//! [`LINK_FROM_TICK`] it counts down [`LINK`] once per tick for [`LINK_GOOD_FRAMES`] ticks
//! and then pends PendSV, whose handler fails [`LINK`] with a CRC error: a failure raised in
//! an interrupt. From [`JOBS_FROM_TICK`] it puts one job per tick into [`JOBS`], then shuts
//! the queue down.
//!
//! In thread mode, embassy tasks wait on the latches. The main task checks each result,
//! prints it over semihosting and ends the QEMU run with success or failure:
//! 1. two tasks park on [`BOOT`] (two waiter slots) and a third wait is refused with
//!    `NoWaiterSlot` at once; the interrupt's count-downs then release both;
//! 2. a timed wait on [`READY`], whose `sensor` counter never reports, names it, and the
//!    finished wait (kept alive) holds no slot: the next wait on the one slot succeeds;
//! 3. a wait on [`LINK`] ends with the error the PendSV handler stored;
//! 4. two worker tasks take the jobs and end each with an outcome chosen from the job (or
//!    drop it: abandoned); once the interrupt has shut the queue down, `join` returns the
//!    ledger, which must be the expected one.

#![no_std]
#![no_main]

#[path = "../../src/board.rs"]
mod board;
#[path = "../../src/time_driver.rs"]
mod time_driver;

use core::fmt;
use core::pin::pin;

use cortex_m::peripheral::SCB;
use cortex_m_rt::exception;
use cortex_m_semihosting::hprintln;
use embassy_executor::Spawner;
use embassy_time::Timer;
use tally_latch::fixed::{
    FixedFailableLatch, FixedLatch, FixedTimedWaitError, FixedTrackingLatch, FixedWaitError,
};
use tally_queue::fixed::{FixedDelivery, FixedGetError, FixedQueue};
use tally_queue::Ledger;

/// The device interrupts this image enables: none.
fn device_interrupt(_irqn: i16) -> bool {
    false
}

/// Ticks until [`BOOT`] opens.
const BOOT_TICKS: usize = 10;
/// Tick at which the interrupt reports the `timer` counter of [`READY`].
const TIMER_REPORT_TICK: u64 = 15;
/// How long the `radio` task takes to come up, in ticks (ms).
const RADIO_START_MS: u64 = 5;
/// How long the main task waits for [`READY`], in ticks (ms).
const STALL_TIMEOUT_MS: u64 = 50;
/// Frames the link must receive for [`LINK`] to open; it fails first.
const LINK_FRAMES: usize = 5;
/// Tick at which the interrupt starts counting [`LINK`] down.
const LINK_FROM_TICK: u64 = 100;
/// Good frames (one per tick) before the bad one.
const LINK_GOOD_FRAMES: u64 = 2;
/// Tick at which the interrupt starts putting jobs into [`JOBS`], one per tick.
const JOBS_FROM_TICK: u64 = 200;
/// Jobs the interrupt puts (numbered from 0); it shuts [`JOBS`] down after the last.
const JOB_COUNT: u32 = 24;
/// A run still going at this tick has hung; the interrupt ends it as a failure.
const WATCHDOG_TICK: u64 = 10_000;

/// Opens after [`BOOT_TICKS`] SysTick interrupts; two waiter slots.
static BOOT: FixedLatch<2> = FixedLatch::new(BOOT_TICKS);
/// Counted down by each of the two tasks that [`BOOT`] released.
static RELEASED: FixedLatch = FixedLatch::new(2);
/// `timer` reports from SysTick, `radio` from a task; `sensor` never does.
static READY: FixedTrackingLatch<3, Fault> = FixedTrackingLatch::new(["timer", "radio", "sensor"]);
/// Counted down per good frame by SysTick; failed by PendSV on a bad one.
static LINK: FixedFailableLatch<LinkError> = FixedFailableLatch::new(LINK_FRAMES);

/// Fed by SysTick, worked by two tasks: 16 items, two waiter slots per kind of waiter.
static JOBS: FixedQueue<u32, 16, 2> = FixedQueue::new();

/// Nothing fails [`READY`] in this run.
type Fault = &'static str;

/// Why the link came up broken.
#[derive(Debug, PartialEq, Eq)]
enum LinkError {
    Crc { frame: u64 },
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Crc { frame } => write!(f, "crc error in frame {frame}"),
        }
    }
}

#[exception]
fn SysTick() {
    let tick = time_driver::on_tick();
    if tick >= WATCHDOG_TICK {
        hprintln!(
            "firmware-noalloc: FAIL: watchdog: still running at tick {}",
            tick
        );
        board::exit(false);
    }
    BOOT.count_down();
    if tick == TIMER_REPORT_TICK {
        report("timer");
    }
    if (LINK_FROM_TICK..LINK_FROM_TICK + LINK_GOOD_FRAMES).contains(&tick) {
        LINK.count_down();
    } else if tick == LINK_FROM_TICK + LINK_GOOD_FRAMES {
        // The bad frame: fail the latch from another interrupt.
        SCB::set_pendsv();
    }
    if (JOBS_FROM_TICK..JOBS_FROM_TICK + u64::from(JOB_COUNT)).contains(&tick) {
        let job = (tick - JOBS_FROM_TICK) as u32;
        if let Err(refused) = JOBS.try_put(job) {
            hprintln!("firmware-noalloc: FAIL: job {} refused: {}", job, refused);
            board::exit(false);
        }
    } else if tick == JOBS_FROM_TICK + u64::from(JOB_COUNT) {
        JOBS.shutdown();
    }
}

#[exception]
fn PendSV() {
    let frame = LINK_GOOD_FRAMES + 1;
    if let Err(refused) = LINK.fail(LinkError::Crc { frame }) {
        hprintln!("firmware-noalloc: FAIL: link latch refused {}", refused);
        board::exit(false);
    }
}

/// Reports `name` to [`READY`]; an unknown name is a bug: fail the run.
fn report(name: &str) {
    if let Err(error) = READY.count_down_for(name) {
        hprintln!("firmware-noalloc: FAIL: {}", error);
        board::exit(false);
    }
}

/// Fails the run with `message` unless `ok`.
fn check(ok: bool, message: fmt::Arguments<'_>) {
    if !ok {
        hprintln!("firmware-noalloc: FAIL: {}", message);
        board::exit(false);
    }
}

/// Parks on [`BOOT`], then counts [`RELEASED`] down.
#[embassy_executor::task(pool_size = 2)]
async fn boot_waiter() {
    let result = BOOT.wait().await;
    check(result.is_ok(), format_args!("boot waiter: {:?}", result));
    RELEASED.count_down();
}

/// Comes up after [`RADIO_START_MS`] and reports `radio`.
#[embassy_executor::task]
async fn radio() {
    Timer::after_millis(RADIO_START_MS).await;
    report("radio");
}

/// Takes jobs from [`JOBS`] until it is shut down and drained, ending each with an outcome.
#[embassy_executor::task(pool_size = 2)]
async fn worker() {
    loop {
        match JOBS.get().await {
            Ok(job) => work(job),
            Err(FixedGetError::ShutDown) => return,
            Err(error) => check(false, format_args!("worker: {}", error)),
        }
    }
}

/// Ends `job` by its number: every sixth rejected, every eighth uncertain, job 12 dropped
/// (abandoned), the others succeeded.
fn work(job: FixedDelivery<'_, u32>) {
    // The item each outcome hands back is not needed.
    let _item = match *job {
        n if n % 6 == 5 => job.reject(),
        n if n % 8 == 7 => job.uncertain(),
        12 => return drop(job),
        _ => job.succeed(),
    };
}

/// Prints a ledger as `accepted=.. buffered=.. ..`.
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

/// Prints names as `[a, b]`.
struct Names<I>(I);

impl<I: Clone + Iterator<Item = &'static str>> fmt::Display for Names<I> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, name) in self.0.clone().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(name)?;
        }
        f.write_str("]")
    }
}

#[embassy_executor::main]
async fn main(spawner: Spawner) {
    let core = cortex_m::Peripherals::take().expect("core peripherals taken once");
    time_driver::start(core.SYST);
    hprintln!(
        "boot: no heap; latches in statics: FixedLatch<2> {} bytes, FixedTrackingLatch<3> {} bytes, FixedFailableLatch {} bytes",
        core::mem::size_of::<FixedLatch<2>>(),
        core::mem::size_of::<FixedTrackingLatch<3, Fault>>(),
        core::mem::size_of::<FixedFailableLatch<LinkError>>()
    );
    for _ in 0..2 {
        spawner.spawn(boot_waiter().expect("two boot waiters"));
    }
    spawner.spawn(radio().expect("radio task spawned once"));
    for _ in 0..2 {
        spawner.spawn(worker().expect("two workers"));
    }

    // 1. Both boot waiters park (they run as soon as main yields), taking both slots; a
    //    third wait is refused at once, not left hanging.
    while BOOT.waiting() < 2 && !BOOT.is_open() {
        Timer::after_ticks(0).await;
    }
    check(
        BOOT.waiting() == 2 && !BOOT.is_open(),
        format_args!("boot: {} waiting, open {}", BOOT.waiting(), BOOT.is_open()),
    );
    match BOOT.wait().await {
        Err(refused) => hprintln!("latch: third waiter refused: {}", refused),
        Ok(()) => check(false, format_args!("third boot waiter was not refused")),
    }
    let released = RELEASED.wait().await;
    check(
        released.is_ok() && BOOT.is_open() && BOOT.count() == 0 && BOOT.waiting() == 0,
        format_args!("boot latch: {:?}", BOOT),
    );
    hprintln!(
        "latch: boot latch open after {} ticks, 2 waiters released",
        BOOT_TICKS
    );

    // 2. A timed wait on a tracking latch whose `sensor` counter never reports. The wait is
    //    kept alive after it finishes; it must hold no slot.
    let mut timed = pin!(READY.wait_until(Timer::after_millis(STALL_TIMEOUT_MS)));
    match timed.as_mut().await {
        Err(FixedTimedWaitError::TimedOut(pending)) => {
            check(
                pending.names().eq(["sensor"]),
                format_args!("pending {}", Names(pending.names())),
            );
            hprintln!("tracking: {}", pending);
        }
        other => check(false, format_args!("stalled latch: {:?}", other)),
    }
    check(
        READY.waiting() == 0,
        format_args!("a finished timed wait holds {} slots", READY.waiting()),
    );
    report("sensor");
    let opened = READY.wait().await;
    check(opened.is_ok(), format_args!("ready latch: {:?}", opened));
    hprintln!(
        "tracking: ready latch open after the stalled counter reported, pending {}",
        Names(READY.pending())
    );

    // 3. A failure raised in an interrupt (PendSV) releases the waiter with its error.
    match LINK.wait().await {
        Err(FixedWaitError::Failed(error)) => {
            check(
                *error == LinkError::Crc { frame: 3 } && LINK.count() == LINK_FRAMES - 2,
                format_args!("link latch: {:?}", LINK),
            );
            hprintln!("failable: link latch failed from an interrupt: {}", error);
        }
        other => check(false, format_args!("link latch: {:?}", other)),
    }

    // 4. The jobs SysTick puts, worked by the two workers; the ledger once it shut the
    //    queue down and every job has ended.
    let size = core::mem::size_of::<FixedQueue<u32, 16, 2>>();
    check(
        size == 416,
        format_args!("FixedQueue<u32, 16, 2> is {} bytes", size),
    );
    hprintln!("queue: FixedQueue<u32, 16, 2> in a static, {} bytes", size);
    while !JOBS.is_shut_down() {
        Timer::after_millis(1).await;
    }
    let ledger = match JOBS.join().await {
        Ok(ledger) => ledger,
        Err(error) => {
            check(false, format_args!("join: {}", error));
            return;
        }
    };
    hprintln!("queue: ledger {}", LedgerLine(&ledger));
    let expected = {
        let mut expected = Ledger::default();
        expected.accepted = u64::from(JOB_COUNT);
        expected.succeeded = 17;
        expected.rejected = 4;
        expected.uncertain = 2;
        expected.abandoned = 1;
        expected
    };
    check(
        ledger == expected && ledger.is_balanced(),
        format_args!("queue ledger, expected {}", LedgerLine(&expected)),
    );
    hprintln!("firmware-noalloc: ok");
    board::exit(true)
}
