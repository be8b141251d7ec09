//! Wall-clock latch benchmarks: `tally-latch` against a tokio `Notify` latch, the `latches`
//! crate, `wg`, tokio-util's `TaskTracker`, async-lock's `Barrier` and a raw atomic, in one
//! run.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use benches::latch::{release, BarrierGate, Gate, NotifyLatch, TrackerGate};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use tally_latch::CountDownLatch;
use tokio_util::task::TaskTracker;

/// A count no benchmark run can exhaust.
const HUGE: usize = usize::MAX >> 8;

/// Polls `future` once with a no-op waker and expects it to be ready.
#[inline]
fn ready_now<F: Future>(future: F) {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    assert!(matches!(future.as_mut().poll(&mut context), Poll::Ready(_)));
}

fn count_down(c: &mut Criterion) {
    let mut group = c.benchmark_group("latch/count_down");
    let raw = AtomicUsize::new(HUGE);
    group.bench_function("raw-fetch-sub", |b| {
        b.iter(|| black_box(raw.fetch_sub(1, Ordering::Release)));
    });
    let ours = CountDownLatch::new(HUGE);
    group.bench_function("ours", |b| b.iter(|| black_box(ours.count_down())));
    let notify = NotifyLatch::new(HUGE);
    group.bench_function("tokio-notify", |b| b.iter(|| notify.count_down()));
    let latches = latches::task::Latch::new(HUGE);
    group.bench_function("latches", |b| b.iter(|| latches.count_down()));
    let wg = wg::future::WaitGroup::from(HUGE);
    group.bench_function("wg", |b| b.iter(|| black_box(wg.done())));
    // A tracker counts tasks, not events: one count is a token taken and dropped.
    let tracker = TaskTracker::new();
    group.bench_function("task-tracker", |b| {
        b.iter(|| drop(black_box(tracker.token())))
    });
    group.finish();
}

fn open_no_waiters(c: &mut Criterion) {
    let mut group = c.benchmark_group("latch/open_no_waiters");
    group.bench_function("raw-fetch-sub", |b| {
        b.iter_batched(
            || AtomicUsize::new(1),
            |raw| {
                black_box(raw.fetch_sub(1, Ordering::Release));
                raw
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("ours", |b| {
        b.iter_batched(
            || CountDownLatch::new(1),
            |latch| {
                black_box(latch.count_down());
                latch
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("tokio-notify", |b| {
        b.iter_batched(
            || NotifyLatch::new(1),
            |latch| {
                latch.count_down();
                latch
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("latches", |b| {
        b.iter_batched(
            || latches::task::Latch::new(1),
            |latch| {
                latch.count_down();
                latch
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("wg", |b| {
        b.iter_batched(
            || wg::future::WaitGroup::from(1),
            |group| {
                black_box(group.done());
                group
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("task-tracker", |b| {
        b.iter_batched(
            || {
                let tracker = TaskTracker::new();
                let token = tracker.token();
                tracker.close();
                (tracker, token)
            },
            |(tracker, token)| {
                drop(token);
                tracker
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn wait_open(c: &mut Criterion) {
    let mut group = c.benchmark_group("latch/wait_open");
    let raw = AtomicUsize::new(0);
    group.bench_function("raw-load", |b| {
        b.iter(|| assert_eq!(black_box(&raw).load(Ordering::Acquire), 0));
    });
    let ours = CountDownLatch::new(0);
    group.bench_function("ours", |b| b.iter(|| ready_now(black_box(&ours).wait())));
    let notify = NotifyLatch::new(0);
    group.bench_function("tokio-notify", |b| {
        b.iter(|| ready_now(black_box(&notify).wait()));
    });
    let latches = latches::task::Latch::new(0);
    group.bench_function("latches", |b| {
        b.iter(|| ready_now(black_box(&latches).wait()));
    });
    let wg = wg::future::WaitGroup::new();
    group.bench_function("wg", |b| b.iter(|| ready_now(black_box(&wg).wait())));
    let tracker = TaskTracker::new();
    tracker.close();
    group.bench_function("task-tracker", |b| {
        b.iter(|| ready_now(black_box(&tracker).wait()));
    });
    group.finish();
}

/// The waiter counts of the release benchmark; 1 to 10,000 is also the waiter scaling
/// curve.
pub const WAITERS: [usize; 5] = [1, 10, 100, 1_000, 10_000];

fn release_waiters(c: &mut Criterion) {
    let mut group = c.benchmark_group("latch/release");
    fn bench<G: Gate>(
        group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
        name: &str,
    ) {
        for waiters in WAITERS {
            group.throughput(criterion::Throughput::Elements(waiters as u64));
            group.bench_with_input(BenchmarkId::new(name, waiters), &waiters, |b, &waiters| {
                b.iter_custom(|iters| (0..iters).map(|_| release::<G>(waiters)).sum());
            });
        }
    }
    bench::<CountDownLatch>(&mut group, "ours");
    bench::<NotifyLatch>(&mut group, "tokio-notify");
    bench::<latches::task::Latch>(&mut group, "latches");
    bench::<wg::future::WaitGroup>(&mut group, "wg");
    bench::<TrackerGate>(&mut group, "task-tracker");
    bench::<BarrierGate>(&mut group, "async-lock-barrier");
    group.finish();
}

/// Times `iters` count-downs split over two threads.
fn contended(iters: u64, count_down: impl Fn() + Sync) -> Duration {
    let half = iters.div_ceil(2);
    let start = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| (0..half).for_each(|_| count_down()));
        (0..half).for_each(|_| count_down());
    });
    start.elapsed()
}

fn contended_count_down(c: &mut Criterion) {
    let mut group = c.benchmark_group("latch/contended_count_down");
    let raw = AtomicUsize::new(HUGE);
    group.bench_function("raw-fetch-sub", |b| {
        b.iter_custom(|iters| {
            contended(iters, || {
                black_box(raw.fetch_sub(1, Ordering::Release));
            })
        });
    });
    let ours = CountDownLatch::new(HUGE);
    group.bench_function("ours", |b| {
        b.iter_custom(|iters| {
            contended(iters, || {
                black_box(ours.count_down());
            })
        });
    });
    let notify = NotifyLatch::new(HUGE);
    group.bench_function("tokio-notify", |b| {
        b.iter_custom(|iters| contended(iters, || notify.count_down()));
    });
    let latches = latches::task::Latch::new(HUGE);
    group.bench_function("latches", |b| {
        b.iter_custom(|iters| contended(iters, || latches.count_down()));
    });
    let wg = wg::future::WaitGroup::from(HUGE);
    group.bench_function("wg", |b| {
        b.iter_custom(|iters| {
            contended(iters, || {
                black_box(wg.done());
            })
        });
    });
    group.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .without_plots()
}

criterion_group! {
    name = latch;
    config = config();
    targets = count_down, open_no_waiters, wait_open, release_waiters, contended_count_down
}
criterion_main!(latch);
