//! The one-task workload (`try_put` then `try_get` + `succeed`, as the benches'
//! `queue/one-task/ours`) with and without a journal, for callgrind:
//! `locked-per-op target/release/examples/journal_icount WORKLOAD` with `OPS` operations.
//! Workloads: `none`, `noop` (a journal that does nothing), `record` (the ready `Record`).

use std::hint::black_box;
use std::sync::Arc;

use tally_queue::{JobEvent, Journal, Queue, Record};

struct Noop;

impl Journal for Noop {
    fn record(&self, event: JobEvent) {
        black_box(event);
    }
}

fn one_task(queue: &Queue<u64>, n: u64) {
    for value in 0..n {
        queue.try_put(value).expect("room");
        black_box(queue.try_get().expect("an item").succeed());
    }
}

fn main() {
    let workload = std::env::args().nth(1).unwrap_or_else(|| "none".into());
    let ops = std::env::var("OPS")
        .ok()
        .and_then(|ops| ops.parse().ok())
        .unwrap_or(100_000);
    let queue = Queue::bounded(128).expect("a capacity");
    let queue = match workload.as_str() {
        "none" => queue,
        "noop" => queue.with_journal(Noop),
        "record" => {
            let record = Arc::new(Record::new());
            let queue = queue.with_journal(Arc::clone(&record));
            one_task(&queue, ops);
            // Forget the ended ids as a service would, outside the measured loop's shape.
            black_box(record.take_finished().len());
            return;
        }
        other => panic!("unknown workload {other}"),
    };
    one_task(&queue, ops);
}
