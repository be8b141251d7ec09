//! Workloads for the no-alloc tiers against their heap counterparts and embassy-sync's and
//! heapless's primitives, run by name from [`crate::workloads::run`] (so `icount` and
//! `alloc_count` both see them).
//!
//! The latch (`tally_latch::fixed`) against the alloc latch and embassy-sync's `Signal`:
//! `Signal` has no count and its `wait` consumes the signal, so its rows are the nearest
//! operations, named for what they do: `signal` alone stands for a count-down, `signal`
//! then `wait` for a wait on an open latch.
//!
//! The queue (`tally_queue::fixed::FixedQueue`) against embassy-sync's `Channel`, heapless's
//! `spsc::Queue` and `mpmc::Queue` and the heap `Queue`, all of capacity 16 (heapless's
//! `spsc` holds 15): `floor` is one message through each with nobody waiting (ours:
//! `try_put` + `try_get` + `succeed`; the `Channel`: `try_send` + `try_receive`; heapless:
//! `enqueue` + `dequeue`, on the split halves for `spsc`), `handoff` one message to a
//! receiver that waits for it (it parks, the send wakes it, its next poll takes the
//! message; heapless has no waiting side).
//!
//! `-cs` rows lock a `CriticalSectionRawMutex` (on the host: critical-section's `std`
//! implementation, a process-wide mutex; on a single-core microcontroller: masking
//! interrupts), `-noop` rows a `NoopRawMutex` (no locking; usable only within one thread
//! or one interrupt priority). Ours runs on native atomics here; on a microcontroller with
//! the `critical-section` feature, its ring's put and get each also take one critical
//! section.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use embassy_sync::blocking_mutex::raw::{CriticalSectionRawMutex, NoopRawMutex, RawMutex};
use embassy_sync::channel::Channel;
use embassy_sync::signal::Signal;
use tally_latch::fixed::{FixedLatch, MAX_COUNT};
use tally_latch::CountDownLatch;
use tally_queue::fixed::FixedQueue;
use tally_queue::Queue;

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
    "noalloc/queue_floor/fixed",
    "noalloc/queue_floor/alloc-queue",
    "noalloc/queue_floor/channel-cs",
    "noalloc/queue_floor/channel-noop",
    "noalloc/queue_floor/heapless-spsc",
    "noalloc/queue_floor/heapless-mpmc",
    "noalloc/queue_handoff/fixed",
    "noalloc/queue_handoff/alloc-queue",
    "noalloc/queue_handoff/channel-cs",
    "noalloc/queue_handoff/channel-noop",
];

/// The capacity of every queue here.
const CAPACITY: usize = 16;

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

fn channel_floor<M: RawMutex>(n: u64) {
    let channel = Channel::<M, u64, CAPACITY>::new();
    for value in 0..n {
        let channel = black_box(&channel);
        channel.try_send(value).expect("room");
        black_box(channel.try_receive().expect("a message"));
    }
}

fn channel_handoff<M: RawMutex>(n: u64) {
    let channel = Channel::<M, u64, CAPACITY>::new();
    for value in 0..n {
        let channel = black_box(&channel);
        let mut receive = pin!(channel.receive());
        assert!(poll_now(receive.as_mut()).is_pending());
        channel.try_send(value).expect("room");
        assert!(matches!(poll_now(receive.as_mut()), Poll::Ready(v) if v == value));
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
        "noalloc/queue_floor/fixed" => {
            let queue = FixedQueue::<u64, CAPACITY>::new();
            for value in 0..n {
                let queue = black_box(&queue);
                queue.try_put(value).expect("room");
                black_box(queue.try_get().expect("an item").succeed());
            }
        }
        "noalloc/queue_floor/alloc-queue" => {
            let queue = Queue::bounded(CAPACITY).expect("non-zero");
            for value in 0..n {
                let queue = black_box(&queue);
                queue.try_put(value).expect("room");
                black_box(queue.try_get().expect("an item").succeed());
            }
        }
        "noalloc/queue_floor/channel-cs" => channel_floor::<CriticalSectionRawMutex>(n),
        "noalloc/queue_floor/channel-noop" => channel_floor::<NoopRawMutex>(n),
        "noalloc/queue_floor/heapless-spsc" => {
            let mut queue = heapless::spsc::Queue::<u64, CAPACITY>::new();
            let (mut producer, mut consumer) = queue.split();
            for value in 0..n {
                black_box(&mut producer).enqueue(value).expect("room");
                black_box(black_box(&mut consumer).dequeue().expect("an item"));
            }
        }
        "noalloc/queue_floor/heapless-mpmc" => {
            // Deprecated by heapless as not lock-free under preemption; here a single-thread
            // peer for the cost of a message.
            #[expect(deprecated)]
            let queue = heapless::mpmc::Queue::<u64, CAPACITY>::new();
            for value in 0..n {
                let queue = black_box(&queue);
                queue.enqueue(value).expect("room");
                black_box(queue.dequeue().expect("an item"));
            }
        }
        "noalloc/queue_handoff/fixed" => {
            let queue = FixedQueue::<u64, CAPACITY>::new();
            for value in 0..n {
                let queue = black_box(&queue);
                let mut get = pin!(queue.get());
                assert!(poll_now(get.as_mut()).is_pending());
                queue.try_put(value).expect("room");
                let Poll::Ready(Ok(job)) = poll_now(get.as_mut()) else {
                    panic!("the put woke the get for its item");
                };
                black_box(job.succeed());
            }
        }
        "noalloc/queue_handoff/alloc-queue" => {
            let queue = Queue::bounded(CAPACITY).expect("non-zero");
            for value in 0..n {
                let queue = black_box(&queue);
                let mut get = pin!(queue.get());
                assert!(poll_now(get.as_mut()).is_pending());
                queue.try_put(value).expect("room");
                let Poll::Ready(Ok(job)) = poll_now(get.as_mut()) else {
                    panic!("the put woke the get for its item");
                };
                black_box(job.succeed());
            }
        }
        "noalloc/queue_handoff/channel-cs" => channel_handoff::<CriticalSectionRawMutex>(n),
        "noalloc/queue_handoff/channel-noop" => channel_handoff::<NoopRawMutex>(n),
        _ => return false,
    }
    true
}
