//! Scaling: the cost per message from 1 to 64 producers and as many consumers, on smol
//! with two threads, bounded(128). (The waiter scaling curve, 1 to 10,000 waiters, is the
//! `latch/release` group of the latch suite.)

use std::time::Duration;

use benches::queue::{run_smol, AsyncChannel, Flavor, Flume, Kanal, Ours};
use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};

/// Messages per iteration: a multiple of every task count below.
const MESSAGES: u64 = 12_800;
/// Producers, and as many consumers.
const TASKS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

fn curve<F: Flavor>(group: &mut BenchmarkGroup<'_, WallTime>) {
    for tasks in TASKS {
        group.bench_with_input(BenchmarkId::new(F::NAME, tasks), &tasks, |b, &tasks| {
            b.iter(|| run_smol::<F>(MESSAGES, tasks, tasks, Some(128)));
        });
    }
}

fn producers_consumers(c: &mut Criterion) {
    let mut group = c.benchmark_group("scaling/smol2-bounded128");
    group.throughput(Throughput::Elements(MESSAGES));
    curve::<Ours>(&mut group);
    curve::<AsyncChannel>(&mut group);
    curve::<Flume>(&mut group);
    curve::<Kanal>(&mut group);
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
    name = scaling;
    config = config();
    targets = producers_consumers
}
criterion_main!(scaling);
