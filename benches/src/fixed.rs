//! Workloads for the no-alloc tier (`tally_latch::fixed`) against the alloc latch and
//! embassy-sync's `Signal`, run by name from [`crate::workloads::run`] (so `icount` and
//! `alloc_count` both see them).
//!
//! `Signal` has no count and its `wait` consumes the signal, so its rows are the nearest
//! operations, named for what they do: `signal` alone stands for a count-down, `signal`
//! then `wait` for a wait on an open latch. `signal-cs` locks a `CriticalSectionRawMutex`
//! (on the host: critical-section's `std` implementation, a process-wide mutex; on a
//! single-core microcontroller: masking interrupts), `signal-noop` a `NoopRawMutex` (no
//! locking; usable only within one thread or one interrupt priority).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use embassy_sync::blocking_mutex::raw::{CriticalSectionRawMutex, NoopRawMutex, RawMutex};
use embassy_sync::signal::Signal;
use tally_latch::fixed::{FixedLatch, MAX_COUNT};
use tally_latch::CountDownLatch;

/// Every workload name of this module, in table order.
pub const NAMES: &[&str] = &[
    "noalloc/count_down/fixed",
    "noalloc/count_down/signal-cs",
    "noalloc/count_down/signal-noop",
    "noalloc/wait_open/fixed",
    "noalloc/wait_open/signal-cs",
    "noalloc/wait_open/signal-noop",
    "noalloc/release_one/fixed",
    "noalloc/release_one/alloc-latch",
    "noalloc/release_one/signal-cs",
    "noalloc/release_one/signal-noop",
];

fn poll_now<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

fn ready_now<F: Future>(future: F) {
    let mut future = pin!(future);
    assert!(poll_now(future.as_mut()).is_ready());
}

/// One waiter parks on `wait`, `open` wakes it, and its next poll is ready.
fn release_one<F: Future>(wait: F, open: impl FnOnce()) {
    let mut wait = pin!(wait);
    assert!(poll_now(wait.as_mut()).is_pending());
    open();
    assert!(poll_now(wait.as_mut()).is_ready());
}

fn signal_count_down<M: RawMutex>(n: u64) {
    let signal = Signal::<M, ()>::new();
    for _ in 0..n {
        black_box(&signal).signal(());
    }
}

fn signal_wait_open<M: RawMutex>(n: u64) {
    let signal = Signal::<M, ()>::new();
    for _ in 0..n {
        let signal = black_box(&signal);
        signal.signal(());
        ready_now(signal.wait());
    }
}

fn signal_release_one<M: RawMutex>(n: u64) {
    for _ in 0..n {
        let signal = black_box(Signal::<M, ()>::new());
        release_one(signal.wait(), || signal.signal(()));
        black_box(&signal);
    }
}

/// Runs workload `name` of [`NAMES`] with `n` operations; `false` if `name` is not one.
pub fn run(name: &str, n: u64) -> bool {
    match name {
        "noalloc/count_down/fixed" => {
            let latch = FixedLatch::<1>::new(MAX_COUNT);
            for _ in 0..n {
                black_box(black_box(&latch).count_down());
            }
        }
        "noalloc/count_down/signal-cs" => signal_count_down::<CriticalSectionRawMutex>(n),
        "noalloc/count_down/signal-noop" => signal_count_down::<NoopRawMutex>(n),
        "noalloc/wait_open/fixed" => {
            let latch = FixedLatch::<1>::new(0);
            for _ in 0..n {
                ready_now(black_box(&latch).wait());
            }
        }
        "noalloc/wait_open/signal-cs" => signal_wait_open::<CriticalSectionRawMutex>(n),
        "noalloc/wait_open/signal-noop" => signal_wait_open::<NoopRawMutex>(n),
        "noalloc/release_one/fixed" => {
            for _ in 0..n {
                let latch = black_box(FixedLatch::<1>::new(1));
                release_one(latch.wait(), || {
                    latch.count_down();
                });
                black_box(&latch);
            }
        }
        "noalloc/release_one/alloc-latch" => {
            for _ in 0..n {
                let latch = black_box(CountDownLatch::new(1));
                release_one(latch.wait(), || {
                    latch.count_down();
                });
                black_box(&latch);
            }
        }
        "noalloc/release_one/signal-cs" => signal_release_one::<CriticalSectionRawMutex>(n),
        "noalloc/release_one/signal-noop" => signal_release_one::<NoopRawMutex>(n),
        _ => return false,
    }
    true
}
