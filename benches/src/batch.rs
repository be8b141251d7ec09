//! Batch workloads: 32 messages at a time through one producer's batch send and one
//! consumer's batch receive, with nobody waiting, run by name from
//! [`crate::workloads::run`] (so `icount` and `alloc_count` both see them).
//!
//! - `ours`: `try_put_many` of 32 items, `try_get_many` of up to 32 deliveries, then
//!   `succeed` on each (every delivery still ends on its own);
//! - `ours-single`: the same 32 messages through `try_put`, `try_get` and `succeed` one
//!   at a time, in the same binary and the same shape, for the ratio;
//! - `flume-drain`: 32 `try_send`s (flume has no batch send), then `Receiver::drain`;
//! - `tokio-recv_many`: 32 `try_send`s on a tokio mpsc channel (no batch send either),
//!   then `recv_many` of up to 32, polled once with a no-op waker (the messages are there,
//!   so it is ready at once).
//!
//! Every channel is bounded at 128. `n` counts messages; a run of `n` messages is
//! `n / 32` batches (`n` is rounded down to a multiple of 32).
//!
//! And one batch of `n` messages through a small ring, `queue/large-batch/ours`: a
//! single `put_many` of all `n` into bounded(64), polled by hand between `try_get_many`s
//! of up to 64 (each poll places what the consumer freed). Its cost per message stays
//! flat as `n` grows only if a poll moves what it places, not the rest of the batch.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use tally_queue::Queue;

/// The batch size.
pub const BATCH: usize = 32;

/// Every workload name of this module, in table order.
pub const NAMES: &[&str] = &[
    "queue/batch32/ours",
    "queue/batch32/ours-single",
    "queue/batch32/flume-drain",
    "queue/batch32/tokio-recv_many",
    "queue/large-batch/ours",
];

/// Runs workload `name` with `n` messages; `false` if `name` is not one of [`NAMES`].
pub fn run(name: &str, n: u64) -> bool {
    let batches = n / BATCH as u64;
    match name {
        "queue/batch32/ours" => ours(&Queue::bounded(128).expect("non-zero"), batches),
        "queue/batch32/ours-single" => {
            ours_single(&Queue::bounded(128).expect("non-zero"), batches);
        }
        "queue/batch32/flume-drain" => flume_drain(&flume::bounded(128), batches),
        "queue/large-batch/ours" => large_batch(&Queue::bounded(64).expect("non-zero"), n),
        "queue/batch32/tokio-recv_many" => {
            let (tx, mut rx) = tokio::sync::mpsc::channel(128);
            tokio_recv_many(&tx, &mut rx, batches);
        }
        _ => return false,
    }
    true
}

/// Ours with the batch verbs.
///
/// # Panics
///
/// Never, unless the queue breaks.
pub fn ours(queue: &Queue<u64>, batches: u64) {
    let mut items = Vec::with_capacity(BATCH);
    let mut ids = Vec::with_capacity(BATCH);
    let mut deliveries = Vec::with_capacity(BATCH);
    for batch in 0..batches {
        items.extend(batch * BATCH as u64..(batch + 1) * BATCH as u64);
        ids.clear();
        queue.try_put_many(&mut items, &mut ids).expect("room");
        let taken = queue.try_get_many(&mut deliveries, BATCH).expect("items");
        assert_eq!(taken, BATCH);
        for delivery in deliveries.drain(..) {
            black_box(delivery.succeed());
        }
    }
}

/// One `put_many` of `n` messages into `queue`, polled between `try_get_many`s.
///
/// # Panics
///
/// Never, unless the queue breaks.
pub fn large_batch(queue: &Queue<u64>, n: u64) {
    let mut items: Vec<u64> = (0..n).collect();
    let mut ids = Vec::with_capacity(items.len());
    let mut deliveries = Vec::with_capacity(64);
    let mut context = Context::from_waker(Waker::noop());
    let mut put = pin!(queue.put_many(&mut items, &mut ids));
    let mut taken = 0;
    loop {
        let done = put.as_mut().poll(&mut context);
        while let Ok(more) = queue.try_get_many(&mut deliveries, 64) {
            taken += more as u64;
            for delivery in deliveries.drain(..) {
                black_box(delivery.succeed());
            }
        }
        if let Poll::Ready(placed) = done {
            assert_eq!(placed, Ok(n as usize));
            break;
        }
    }
    assert_eq!(taken, n);
}

/// Ours with the single verbs, in the same shape.
///
/// # Panics
///
/// Never, unless the queue breaks.
pub fn ours_single(queue: &Queue<u64>, batches: u64) {
    let mut deliveries = Vec::with_capacity(BATCH);
    for batch in 0..batches {
        for value in batch * BATCH as u64..(batch + 1) * BATCH as u64 {
            black_box(queue.try_put(value).expect("room"));
        }
        for _ in 0..BATCH {
            deliveries.push(queue.try_get().expect("an item"));
        }
        for delivery in deliveries.drain(..) {
            black_box(delivery.succeed());
        }
    }
}

/// flume: `try_send` each, then one `drain`.
///
/// # Panics
///
/// Never, unless the channel breaks.
pub fn flume_drain((tx, rx): &(flume::Sender<u64>, flume::Receiver<u64>), batches: u64) {
    for batch in 0..batches {
        for value in batch * BATCH as u64..(batch + 1) * BATCH as u64 {
            tx.try_send(value).expect("room");
        }
        let mut taken = 0;
        for value in rx.drain() {
            black_box(value);
            taken += 1;
        }
        assert_eq!(taken, BATCH);
    }
}

/// tokio mpsc: `try_send` each, then one `recv_many`.
///
/// # Panics
///
/// Never, unless the channel breaks.
pub fn tokio_recv_many(
    tx: &tokio::sync::mpsc::Sender<u64>,
    rx: &mut tokio::sync::mpsc::Receiver<u64>,
    batches: u64,
) {
    let mut buffer = Vec::with_capacity(BATCH);
    let mut context = Context::from_waker(Waker::noop());
    for batch in 0..batches {
        for value in batch * BATCH as u64..(batch + 1) * BATCH as u64 {
            tx.try_send(value).expect("room");
        }
        let taken = match pin!(rx.recv_many(&mut buffer, BATCH)).poll(&mut context) {
            Poll::Ready(taken) => taken,
            Poll::Pending => panic!("the messages are there"),
        };
        assert_eq!(taken, BATCH);
        for value in buffer.drain(..) {
            black_box(value);
        }
    }
}

/// The "Batches" section of `BENCHMARKS.md`, from the run's `batches.tsv` (written by
/// `benches/report.sh`: `workload \t locked/op \t instructions/op` per line, counted by
/// `shared/tools/locked-per-op`), or a line saying the run did not count them.
#[must_use]
pub fn section(results: &std::path::Path) -> String {
    use std::fmt::Write as _;

    let rows: Vec<(String, f64, f64)> = std::fs::read_to_string(results.join("batches.tsv"))
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?.to_owned();
            let locked = fields.next()?.trim().parse().ok()?;
            let instructions = fields.next()?.trim().parse().ok()?;
            Some((name, locked, instructions))
        })
        .collect();
    let mut out = String::from("## Batches\n\n");
    if rows.is_empty() {
        out.push_str("Not counted in this run (locked-per-op, objdump or addr2line missing).\n\n");
        return out;
    }
    let ours = rows.iter().find(|row| row.0 == "queue/batch32/ours");
    out.push_str(
        "| workload | locked/message | instructions/message | ours (batch) ÷ this, instructions |\n\
         |---|---:|---:|---:|\n",
    );
    for (name, locked, instructions) in &rows {
        let ratio = ours.map_or("–".to_owned(), |o| format!("{:.2}", o.2 / instructions));
        let _ = writeln!(
            out,
            "| {name} | {locked:.2} | {instructions:.1} | {ratio} |"
        );
    }
    out.push_str(
        "\n32 messages at a time, one producer and one consumer on one thread, nobody \
         waiting, every channel bounded at 128 (see `benches/src/batch.rs`). Ours: \
         `try_put_many` of 32, `try_get_many` of 32, then `succeed` on each delivery (an \
         ending per delivery, one locked instruction each: every delivery still ends on \
         its own); `ours-single` is the same shape with `try_put`, `try_get` and \
         `succeed`. flume and tokio have no batch send: 32 `try_send`s, then one `drain` \
         (flume) or one `recv_many` (tokio mpsc). Counted by `shared/tools/locked-per-op` \
         in the same run, per message.\n\n",
    );
    out
}
