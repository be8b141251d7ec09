//! Counts heap allocations per operation for each workload with a counting global
//! allocator: the allocations of a run with 2N operations minus those of a run with N,
//! divided by N, so set-up and warm-up cancel out and only the steady state remains.
//!
//! Prints one tab-separated line per workload: name, allocations per operation. Then one
//! line per queue for `queue/wait/NAME`: allocations per wait, where each wait is a get
//! (a receive) polled on an empty queue, woken by a put, and polled again to take the item.
//! `OPS` sets N (default 20,000).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use benches::counting::{allocations, allocations_of, count_every_thread, Counting};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    count_every_thread();
    let n = benches::ops_from_env(20_000).max(1);
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(name) => vec![name],
        None => benches::workloads::all_names().map(str::to_owned).collect(),
    };
    for name in &names {
        report(name, n, |n| allocations_of(name, n));
    }
    if std::env::args().nth(1).is_none() {
        report("queue/wait/ours", n, waits_ours);
        report("queue/wait/flume", n, waits_flume);
        report("queue/wait/async-channel", n, waits_async_channel);
        report("queue/wait/kanal", n, waits_kanal);
    }
}

/// Prints `count`'s allocations per operation: a run of 2N minus a run of N, over N, after
/// a first run that warms up thread-locals and lazily allocated state.
fn report(name: &str, n: u64, count: impl Fn(u64) -> u64) {
    let _ = count(n);
    let once = count(n);
    let twice = count(2 * n);
    #[allow(clippy::cast_precision_loss)]
    let per_op = twice.saturating_sub(once) as f64 / n as f64;
    println!("{name}\t{per_op:.4}\t{once}\t{twice}");
}

/// A task's waker that does nothing when woken, but is a waker of its own (as an
/// executor's is), unlike `Waker::noop()`.
struct Task;

impl Wake for Task {
    fn wake(self: Arc<Self>) {}
}

/// Allocations of `n` waits: each builds a receive with `receive`, polls it once (it must
/// wait: the queue is empty), puts an item with `put`, and polls it again (it must be done).
fn waits<F: Future>(n: u64, receive: impl Fn() -> F, put: impl Fn(u64)) -> u64 {
    let waker = Waker::from(Arc::new(Task));
    let mut context = Context::from_waker(&waker);
    let before = allocations();
    for item in 0..n {
        let mut get = pin!(receive());
        assert!(
            get.as_mut().poll(&mut context).is_pending(),
            "the queue is empty"
        );
        put(item);
        assert!(
            get.as_mut().poll(&mut context).is_ready(),
            "woken by the put"
        );
    }
    allocations() - before
}

fn waits_ours(n: u64) -> u64 {
    let queue = tally_queue::Queue::<u64>::bounded(128).expect("a valid capacity");
    waits(
        n,
        || async { queue.get().await.map(tally_queue::Delivery::succeed) },
        |item| {
            queue.try_put(item).expect("room");
        },
    )
}

fn waits_flume(n: u64) -> u64 {
    let (tx, rx) = flume::bounded::<u64>(128);
    waits(
        n,
        || rx.recv_async(),
        |item| tx.try_send(item).expect("room"),
    )
}

fn waits_async_channel(n: u64) -> u64 {
    let (tx, rx) = async_channel::bounded::<u64>(128);
    waits(n, || rx.recv(), |item| tx.try_send(item).expect("room"))
}

fn waits_kanal(n: u64) -> u64 {
    let (tx, rx) = kanal::bounded::<u64>(128);
    let rx = rx.to_async();
    waits(
        n,
        || rx.recv(),
        |item| assert!(tx.try_send(item).expect("open"), "room"),
    )
}
