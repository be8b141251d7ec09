//! Every flavor moves every message exactly once on every driver, bounded and unbounded
//! (the drivers assert the count), so a benchmark never times a broken workload.

use benches::queue::{
    run_blocking, run_local, run_smol, AsyncChannel, Blocking, Crossbeam, Flavor, Flume, Kanal,
    Ours, TokioMpsc, TokioTracked,
};

const N: u64 = 1_000;

fn async_drivers<F: Flavor>(consumers: usize) {
    for capacity in [Some(4), None] {
        run_local::<F>(N, 3, consumers, capacity);
        run_smol::<F>(N, 3, consumers, capacity);
    }
}

fn blocking_driver<B: Blocking>() {
    for capacity in [Some(4), None] {
        run_blocking::<B>(N, 2, 2, capacity);
    }
}

#[test]
fn async_flavors_deliver_every_message_once() {
    async_drivers::<Ours>(3);
    async_drivers::<AsyncChannel>(3);
    async_drivers::<Flume>(3);
    async_drivers::<Kanal>(3);
    async_drivers::<TokioMpsc>(1);
    async_drivers::<TokioTracked>(1);
}

#[test]
fn blocking_flavors_deliver_every_message_once() {
    blocking_driver::<Ours>();
    blocking_driver::<AsyncChannel>();
    blocking_driver::<Flume>();
    blocking_driver::<Kanal>();
    blocking_driver::<Crossbeam>();
}

#[test]
fn floor_workloads_run() {
    for name in benches::workloads::NAMES
        .iter()
        .filter(|name| name.starts_with("queue/floor/"))
    {
        benches::workloads::run(name, N);
    }
}
