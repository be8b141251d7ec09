//! Named workloads of `n` operations, for the instruction counter and the allocation
//! counter: the same name runs the same code in both.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use std::sync::Arc;
use tally_latch::CountDownLatch;

use tally_queue::{JobEvent, Journal, Queue, Record};

use crate::latch::{release, Gate, NotifyLatch};
use crate::queue::{
    floor_async_channel, floor_flume, floor_kanal, floor_ours, run_local, AsyncChannel, Flavor,
    Flume, Kanal, Ours, OursHandles, TokioMpsc, TokioTracked,
};

/// A journal that only counts the events it sees.
struct CountEvents(AtomicUsize);

impl Journal for CountEvents {
    fn record(&self, _: JobEvent) {
        // Relaxed: a count read once the run is over.
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A count no run can exhaust.
const HUGE: usize = usize::MAX >> 8;

/// Every workload name, in table order.
pub const NAMES: &[&str] = &[
    "latch/count_down/raw-fetch-sub",
    "latch/count_down/ours",
    "latch/count_down/tokio-notify",
    "latch/count_down/latches",
    "latch/wait_open/raw-load",
    "latch/wait_open/ours",
    "latch/wait_open/tokio-notify",
    "latch/wait_open/latches",
    "latch/open_no_waiters/ours",
    "latch/open_no_waiters/tokio-notify",
    "latch/open_no_waiters/latches",
    "latch/release1000/ours",
    "latch/release1000/tokio-notify",
    "queue/local/spsc-bounded128/ours",
    "queue/local/spsc-bounded128/ours-handles",
    "queue/local/spsc-bounded128/async-channel",
    "queue/local/spsc-bounded128/flume",
    "queue/local/spsc-bounded128/kanal",
    "queue/local/spsc-bounded128/tokio-mpsc",
    "queue/local/spsc-bounded128/tokio-mpsc+tracker",
    "queue/local/mpmc4x4-bounded128/ours",
    "queue/local/mpmc4x4-bounded128/ours-handles",
    "queue/local/mpmc4x4-bounded128/async-channel",
    "queue/local/mpmc4x4-bounded128/flume",
    "queue/local/mpmc4x4-bounded128/kanal",
    "queue/local/mpmc64x64-bounded128/ours",
    "queue/local/mpmc64x64-bounded128/async-channel",
    "queue/local/mpmc64x64-bounded128/flume",
    "queue/local/mpmc64x64-bounded128/kanal",
    "queue/floor/ours",
    "queue/floor/ours+journal",
    "queue/floor/ours+record",
    "queue/floor/async-channel",
    "queue/floor/flume",
    "queue/floor/kanal",
    "queue/floor-unbounded/ours",
    "queue/floor-unbounded/async-channel",
    "queue/floor-unbounded/flume",
    "queue/floor-unbounded/kanal",
];

/// Every workload [`run`] knows: [`NAMES`], then the no-alloc tier's
/// ([`crate::fixed::NAMES`]), then the batches' ([`crate::batch::NAMES`]).
pub fn all_names() -> impl Iterator<Item = &'static str> {
    NAMES
        .iter()
        .chain(crate::fixed::NAMES)
        .chain(crate::batch::NAMES)
        .copied()
}

/// Polls `future` once with a no-op waker and expects it to be ready.
fn ready_now<F: Future>(future: F) {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    assert!(matches!(future.as_mut().poll(&mut context), Poll::Ready(_)));
}

fn spsc<F: Flavor>(n: u64) {
    run_local::<F>(n, 1, 1, Some(128));
}

fn mpmc<F: Flavor>(n: u64) {
    run_local::<F>(n, 4, 4, Some(128));
}

/// As [`mpmc`], with many more tasks than the buffer holds items: the shape where waits and
/// wake-ups dominate.
fn mpmc64<F: Flavor>(n: u64) {
    run_local::<F>(n, 64, 64, Some(128));
}

/// The waiters one release frees in the `latch/release1000` workloads.
const RELEASED: u64 = 1_000;

/// `n` waiters in all, released `RELEASED` at a time by [`release`](crate::latch::release):
/// each one's spawn, registration, wake-up, re-poll and completion (`n` a multiple of
/// `RELEASED`).
fn release_rounds<G: Gate>(n: u64) {
    assert_eq!(n % RELEASED, 0, "OPS must be a multiple of {RELEASED}");
    for _ in 0..n / RELEASED {
        black_box(release::<G>(RELEASED as usize));
    }
}

/// Runs workload `name` with `n` operations (messages, for the queues). Setup that does
/// not depend on `n` runs the same way at `n = 0`, so a difference of two runs is the cost
/// of the operations alone.
///
/// # Panics
///
/// If `name` is not in [`NAMES`].
pub fn run(name: &str, n: u64) {
    match name {
        "latch/count_down/raw-fetch-sub" => {
            let raw = AtomicUsize::new(HUGE);
            for _ in 0..n {
                black_box(black_box(&raw).fetch_sub(1, Ordering::Release));
            }
        }
        "latch/count_down/ours" => {
            let latch = CountDownLatch::new(HUGE);
            for _ in 0..n {
                black_box(black_box(&latch).count_down());
            }
        }
        "latch/count_down/tokio-notify" => {
            let latch = NotifyLatch::new(HUGE);
            for _ in 0..n {
                black_box(&latch).count_down();
            }
        }
        "latch/count_down/latches" => {
            let latch = latches::task::Latch::new(HUGE);
            for _ in 0..n {
                black_box(&latch).count_down();
            }
        }
        "latch/wait_open/raw-load" => {
            let raw = AtomicUsize::new(0);
            for _ in 0..n {
                assert_eq!(black_box(&raw).load(Ordering::Acquire), 0);
            }
        }
        "latch/wait_open/ours" => {
            let latch = CountDownLatch::new(0);
            for _ in 0..n {
                ready_now(black_box(&latch).wait());
            }
        }
        "latch/wait_open/tokio-notify" => {
            let latch = NotifyLatch::new(0);
            for _ in 0..n {
                ready_now(black_box(&latch).wait());
            }
        }
        "latch/wait_open/latches" => {
            let latch = latches::task::Latch::new(0);
            for _ in 0..n {
                ready_now(black_box(&latch).wait());
            }
        }
        "latch/open_no_waiters/ours" => {
            for _ in 0..n {
                let latch = black_box(CountDownLatch::new(1));
                black_box(latch.count_down());
                black_box(latch);
            }
        }
        "latch/open_no_waiters/tokio-notify" => {
            for _ in 0..n {
                let latch = black_box(NotifyLatch::new(1));
                latch.count_down();
                black_box(latch);
            }
        }
        "latch/open_no_waiters/latches" => {
            for _ in 0..n {
                let latch = black_box(latches::task::Latch::new(1));
                latch.count_down();
                black_box(latch);
            }
        }
        "latch/release1000/ours" => release_rounds::<CountDownLatch>(n),
        "latch/release1000/tokio-notify" => release_rounds::<NotifyLatch>(n),
        "queue/local/spsc-bounded128/ours" => spsc::<Ours>(n),
        "queue/local/spsc-bounded128/ours-handles" => spsc::<OursHandles>(n),
        "queue/local/spsc-bounded128/async-channel" => spsc::<AsyncChannel>(n),
        "queue/local/spsc-bounded128/flume" => spsc::<Flume>(n),
        "queue/local/spsc-bounded128/kanal" => spsc::<Kanal>(n),
        "queue/local/spsc-bounded128/tokio-mpsc" => spsc::<TokioMpsc>(n),
        "queue/local/spsc-bounded128/tokio-mpsc+tracker" => spsc::<TokioTracked>(n),
        "queue/local/mpmc4x4-bounded128/ours" => mpmc::<Ours>(n),
        "queue/local/mpmc4x4-bounded128/ours-handles" => mpmc::<OursHandles>(n),
        "queue/local/mpmc4x4-bounded128/async-channel" => mpmc::<AsyncChannel>(n),
        "queue/local/mpmc4x4-bounded128/flume" => mpmc::<Flume>(n),
        "queue/local/mpmc4x4-bounded128/kanal" => mpmc::<Kanal>(n),
        "queue/local/mpmc64x64-bounded128/ours" => mpmc64::<Ours>(n),
        "queue/local/mpmc64x64-bounded128/async-channel" => mpmc64::<AsyncChannel>(n),
        "queue/local/mpmc64x64-bounded128/flume" => mpmc64::<Flume>(n),
        "queue/local/mpmc64x64-bounded128/kanal" => mpmc64::<Kanal>(n),
        "queue/floor/ours" => {
            let queue = Queue::bounded(128).expect("non-zero");
            floor_ours(&queue, n);
        }
        // The journal's cost: one that only counts events (the dispatch alone), and the
        // shipped `Record`, emptied of finished ids every 128 jobs as a service would.
        "queue/floor/ours+journal" => {
            let journal = Arc::new(CountEvents(AtomicUsize::new(0)));
            let queue = Queue::bounded(128)
                .expect("non-zero")
                .with_journal(Arc::clone(&journal));
            floor_ours(&queue, n);
            // Relaxed: read on the thread that counted.
            black_box(journal.0.load(Ordering::Relaxed));
        }
        "queue/floor/ours+record" => {
            let record = Arc::new(Record::new());
            let queue = Queue::bounded(128)
                .expect("non-zero")
                .with_journal(Arc::clone(&record));
            for chunk in (0..n).step_by(128) {
                floor_ours(&queue, (n - chunk).min(128));
                black_box(record.take_finished());
            }
        }
        "queue/floor/async-channel" => floor_async_channel(&async_channel::bounded(128), n),
        "queue/floor/flume" => floor_flume(&flume::bounded(128), n),
        "queue/floor/kanal" => floor_kanal(&kanal::bounded(128), n),
        "queue/floor-unbounded/ours" => floor_ours(&Queue::unbounded(), n),
        "queue/floor-unbounded/async-channel" => {
            floor_async_channel(&async_channel::unbounded(), n)
        }
        "queue/floor-unbounded/flume" => floor_flume(&flume::unbounded(), n),
        "queue/floor-unbounded/kanal" => floor_kanal(&kanal::unbounded(), n),
        // The no-alloc tier's workloads (`crate::fixed`), listed by `crate::fixed::NAMES`.
        other if crate::fixed::run(other, n) => {}
        // The batch workloads (`crate::batch`), listed by `crate::batch::NAMES`.
        other if crate::batch::run(other, n) => {}
        other => panic!("unknown workload {other:?}; known: {NAMES:?}"),
    }
}
