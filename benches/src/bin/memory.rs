//! Heap bytes per queued `u64`: a queue's bytes with N items queued (everything it
//! allocated, the empty queue's own allocations included) over N, for tally-queue and its
//! peers, bounded (N = the capacity, full) and unbounded. Bytes as requested from the
//! allocator (its own overhead is not counted).
//!
//! Prints one tab-separated line per queue: name, N, bytes per item.

use benches::counting::{live_bytes, Counting};
use tally_queue::Queue;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Builds a queue with `make`, fills it with `n` items with `put`, and prints its bytes
/// per item.
fn measure<Q>(name: &str, n: u64, make: impl FnOnce() -> Q, put: impl Fn(&Q, u64)) {
    let before = live_bytes();
    let queue = make();
    for item in 0..n {
        put(&queue, item);
    }
    let held = live_bytes() - before;
    #[allow(clippy::cast_precision_loss)]
    let per_item = held as f64 / n as f64;
    println!("{name}\t{n}\t{per_item:.2}");
    drop(queue);
}

fn main() {
    let unbounded = benches::ops_from_env(100_000);
    let bounded = 1024;
    for (n, capacity) in [(bounded, Some(bounded as usize)), (unbounded, None)] {
        let shape = match capacity {
            Some(c) => format!("bounded({c}) full"),
            None => "unbounded".to_owned(),
        };
        measure(
            &format!("{shape}/ours"),
            n,
            || match capacity {
                Some(c) => Queue::bounded(c).unwrap(),
                None => Queue::unbounded(),
            },
            |q, i| {
                q.try_put(i).unwrap();
            },
        );
        measure(
            &format!("{shape}/flume"),
            n,
            || match capacity {
                Some(c) => flume::bounded(c),
                None => flume::unbounded(),
            },
            |(tx, _), i| tx.try_send(i).unwrap(),
        );
        measure(
            &format!("{shape}/kanal"),
            n,
            || match capacity {
                Some(c) => kanal::bounded(c),
                None => kanal::unbounded(),
            },
            |(tx, _), i| assert!(tx.try_send(i).unwrap()),
        );
        measure(
            &format!("{shape}/crossbeam-channel"),
            n,
            || match capacity {
                Some(c) => crossbeam_channel::bounded(c),
                None => crossbeam_channel::unbounded(),
            },
            |(tx, _), i| tx.try_send(i).unwrap(),
        );
        measure(
            &format!("{shape}/async-channel"),
            n,
            || match capacity {
                Some(c) => async_channel::bounded(c),
                None => async_channel::unbounded(),
            },
            |(tx, _), i| tx.try_send(i).unwrap(),
        );
    }
}
