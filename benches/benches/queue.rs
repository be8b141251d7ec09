//! Wall-clock queue benchmarks: `tally-queue` doing put + get + resolve against
//! async-channel, flume, kanal, tokio mpsc (alone and with a `TaskTracker`) and crossbeam-channel
//! doing send + recv, in one run; and the batch verbs (`queue/batch32`) against flume's
//! `drain` and tokio's `recv_many`.

use std::time::Duration;

use benches::queue::{
    floor_async_channel, floor_flume, floor_kanal, floor_ours, run_blocking, run_local, run_smol,
    AsyncChannel, Blocking, Crossbeam, Flavor, Flume, Kanal, Ours, OursHandles, TokioMpsc,
    TokioTracked,
};
use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use tally_queue::Queue;

/// Messages per iteration.
const MESSAGES: u64 = 10_000;
/// The bounded capacity every flavor gets.
const CAPACITY: usize = 128;

/// The workload shapes: name, producers, consumers.
const SHAPES: [(&str, usize, usize); 2] = [("spsc", 1, 1), ("mpmc4x4", 4, 4)];
/// The capacities: name, capacity.
const CAPACITIES: [(&str, Option<usize>); 2] =
    [("bounded128", Some(CAPACITY)), ("unbounded", None)];

type Group<'a> = BenchmarkGroup<'a, WallTime>;

/// One peer's run of a batch workload.
type Run = Box<dyn FnMut()>;

fn local<F: Flavor>(group: &mut Group<'_>, shape: (usize, usize), capacity: Option<usize>) {
    group.bench_function(F::NAME, |b| {
        b.iter(|| run_local::<F>(MESSAGES, shape.0, shape.1, capacity));
    });
}

fn smol2<F: Flavor>(group: &mut Group<'_>, shape: (usize, usize), capacity: Option<usize>) {
    group.bench_function(F::NAME, |b| {
        b.iter(|| run_smol::<F>(MESSAGES, shape.0, shape.1, capacity));
    });
}

fn blocking<B: Blocking>(group: &mut Group<'_>, shape: (usize, usize), capacity: Option<usize>) {
    group.bench_function(B::NAME, |b| {
        b.iter(|| run_blocking::<B>(MESSAGES, shape.0, shape.1, capacity));
    });
}

fn single_thread(c: &mut Criterion) {
    for (shape_name, producers, consumers) in SHAPES {
        for (capacity_name, capacity) in CAPACITIES {
            let mut group = c.benchmark_group(format!("queue/local/{shape_name}-{capacity_name}"));
            group.throughput(Throughput::Elements(MESSAGES));
            let shape = (producers, consumers);
            local::<Ours>(&mut group, shape, capacity);
            local::<OursHandles>(&mut group, shape, capacity);
            local::<AsyncChannel>(&mut group, shape, capacity);
            local::<Flume>(&mut group, shape, capacity);
            local::<Kanal>(&mut group, shape, capacity);
            if consumers == 1 {
                local::<TokioMpsc>(&mut group, shape, capacity);
                local::<TokioTracked>(&mut group, shape, capacity);
            }
            group.finish();
        }
    }
}

fn two_threads(c: &mut Criterion) {
    for (shape_name, producers, consumers) in SHAPES {
        for (capacity_name, capacity) in CAPACITIES {
            let mut group = c.benchmark_group(format!("queue/smol2/{shape_name}-{capacity_name}"));
            group.throughput(Throughput::Elements(MESSAGES));
            let shape = (producers, consumers);
            smol2::<Ours>(&mut group, shape, capacity);
            smol2::<OursHandles>(&mut group, shape, capacity);
            smol2::<AsyncChannel>(&mut group, shape, capacity);
            smol2::<Flume>(&mut group, shape, capacity);
            smol2::<Kanal>(&mut group, shape, capacity);
            if consumers == 1 {
                smol2::<TokioMpsc>(&mut group, shape, capacity);
                smol2::<TokioTracked>(&mut group, shape, capacity);
            }
            group.finish();
        }
    }
}

fn threads(c: &mut Criterion) {
    for (shape_name, producers, consumers) in SHAPES {
        for (capacity_name, capacity) in CAPACITIES {
            let mut group =
                c.benchmark_group(format!("queue/blocking/{shape_name}-{capacity_name}"));
            group.throughput(Throughput::Elements(MESSAGES));
            let shape = (producers, consumers);
            blocking::<Ours>(&mut group, shape, capacity);
            blocking::<AsyncChannel>(&mut group, shape, capacity);
            blocking::<Flume>(&mut group, shape, capacity);
            blocking::<Kanal>(&mut group, shape, capacity);
            blocking::<Crossbeam>(&mut group, shape, capacity);
            group.finish();
        }
    }
}

/// The floor: put, get and resolve in turn without waiting, bounded(128) (the shape of
/// CPython's one-task `asyncio.Queue` baseline).
fn floor(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue/floor");
    group.throughput(Throughput::Elements(MESSAGES));
    let ours = Queue::bounded(CAPACITY).expect("non-zero");
    group.bench_function("ours", |b| b.iter(|| floor_ours(&ours, MESSAGES)));
    let async_channel = async_channel::bounded(CAPACITY);
    group.bench_function("async-channel", |b| {
        b.iter(|| floor_async_channel(&async_channel, MESSAGES));
    });
    let flume = flume::bounded(CAPACITY);
    group.bench_function("flume", |b| b.iter(|| floor_flume(&flume, MESSAGES)));
    let kanal = kanal::bounded(CAPACITY);
    group.bench_function("kanal", |b| b.iter(|| floor_kanal(&kanal, MESSAGES)));
    group.finish();
}

/// Batches of 32 through a bounded(128) queue with nobody waiting (`src/batch.rs`): ours
/// with the batch verbs and with the single verbs, flume `try_send` + `drain`, tokio
/// `try_send` + `recv_many`. `BATCH_ORDER=reversed` registers the peers in the opposite
/// order, so that a run can alternate them.
fn batch(c: &mut Criterion) {
    use benches::batch::{flume_drain, ours, ours_single, tokio_recv_many, BATCH};
    let batches = MESSAGES / BATCH as u64;
    let mut group = c.benchmark_group("queue/batch32");
    group.throughput(Throughput::Elements(batches * BATCH as u64));
    let mut peers: Vec<(&str, Run)> = Vec::new();
    let queue = Queue::bounded(CAPACITY).expect("non-zero");
    peers.push(("ours", Box::new(move || ours(&queue, batches))));
    let queue = Queue::bounded(CAPACITY).expect("non-zero");
    peers.push((
        "ours-single",
        Box::new(move || ours_single(&queue, batches)),
    ));
    let flume = flume::bounded(CAPACITY);
    peers.push((
        "flume-drain",
        Box::new(move || flume_drain(&flume, batches)),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::channel(CAPACITY);
    peers.push((
        "tokio-recv_many",
        Box::new(move || tokio_recv_many(&tx, &mut rx, batches)),
    ));
    if std::env::var_os("BATCH_ORDER").is_some_and(|order| order == "reversed") {
        peers.reverse();
    }
    for (name, mut run) in peers {
        group.bench_function(name, |b| b.iter(&mut run));
    }
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
    name = queue;
    config = config();
    targets = floor, batch, single_thread, two_threads, threads
}
criterion_main!(queue);
