//! A tour of the primitives with no async runtime at all: `futures_lite::future::block_on`
//! drives the futures, plain threads play the tasks, and the deadline is a latch that a
//! sleeping thread opens (any future can be a deadline).
//!
//! Run it with `cargo run -p tour`. It builds the two cores and `futures-lite`, nothing
//! more.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures_lite::future::block_on;
use tally_latch::{CountDownLatch, FailableLatch, TrackingLatch};
use tally_queue::{Outcome, Queue};

fn main() {
    let start = Instant::now();
    let at = move || start.elapsed().as_millis();

    println!("1. CountDownLatch: three shards load at 10, 20 and 30 ms; four waiters wait.");
    let shards = Arc::new(CountDownLatch::new(3));
    let waiters: Vec<_> = (0..4)
        .map(|i| {
            let shards = shards.clone();
            thread::spawn(move || {
                block_on(shards.wait());
                println!("   waiter {i} released at {} ms", at());
            })
        })
        .collect();
    for ms in [10, 20, 30] {
        let shards = shards.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(ms));
            shards.count_down();
            println!("   shard loaded at {} ms, {} to go", at(), shards.count());
        });
    }
    waiters.into_iter().for_each(|w| w.join().unwrap());
    println!("   an extra count-down counts? {}", shards.count_down());

    println!("\n2. FailableLatch: one shard fails; every waiter gets its error at once.");
    let startup = Arc::new(FailableLatch::<String>::new(3));
    startup.count_down();
    let failer = {
        let startup = startup.clone();
        thread::spawn(move || startup.fail("shard 2: connection refused".into()))
    };
    match block_on(startup.wait()) {
        Ok(()) => println!("   opened"),
        Err(error) => println!("   waiter released with: {error}"),
    }
    failer.join().unwrap().unwrap();
    println!(
        "   a second failure is handed back: {:?}",
        startup.fail("shard 3".into())
    );

    println!("\n3. TrackingLatch: readiness gating with named counters and a deadline.");
    let ready = Arc::new(
        TrackingLatch::new(["consumer", "cache-warmer", "http"])
            .unwrap()
            .on_count_down(|event| {
                println!(
                    "   {} ready after {:?} ({} to go)",
                    event.counter(),
                    event.elapsed(),
                    event.remaining()
                )
            }),
    );
    ready.counter("consumer").unwrap().report();
    ready.count_down_for("http").unwrap();
    let stalled = ready.counter_owned("cache-warmer").unwrap();
    let deadline = after(Duration::from_millis(50));
    // A timed wait is `Ok(how the latch ended)` or `Err(the timeout)`.
    match block_on(ready.wait_until(deadline.wait())) {
        Ok(Ok(())) => println!("   ready"),
        Ok(Err(failure)) => println!("   startup: {failure}"),
        Err(pending) => println!("   startup: {pending}"),
    }
    println!(
        "   unknown name: {}",
        ready.count_down_for("htpp").unwrap_err()
    );
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // the crash below is part of the show
    thread::spawn(move || {
        let _stalled = stalled;
        panic!("cache warmer crashed");
    })
    .join()
    .unwrap_err();
    std::panic::set_hook(quiet);
    match block_on(ready.wait()) {
        Ok(()) => println!("   ready"),
        Err(failure) => println!("   a dead counter fails the latch by name: {failure}"),
    }

    println!("\n4. Queue: two workers, ten jobs, one rejected, one uncertain, graceful drain.");
    let queue = Arc::new(Queue::<u32>::bounded(4).unwrap());
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let queue = queue.clone();
            thread::spawn(move || {
                let _worker = queue.worker();
                block_on(async {
                    while let Ok(job) = queue.get().await {
                        match *job {
                            2 => job.reject(),
                            7 => job.resolve(Outcome::Uncertain),
                            _ => job.succeed(),
                        };
                    }
                })
            })
        })
        .collect();
    block_on(async {
        for n in 0..10 {
            queue.put(n).await.unwrap();
        }
    });
    queue.shutdown();
    let refused = queue.try_put(99).unwrap_err();
    println!(
        "   put after shutdown: {refused}; the item comes back: {}",
        refused.into_inner()
    );
    let ledger = block_on(queue.join());
    workers.into_iter().for_each(|w| w.join().unwrap());
    println!("   join returned the ledger: {ledger}");

    println!("\n5. Queue: immediate shutdown while a consumer holds one job.");
    let queue = Queue::<&str>::unbounded();
    for item in ["active", "discarded-a", "discarded-b"] {
        queue.try_put(item).unwrap();
    }
    let held = queue.try_get().unwrap();
    let drained = queue.shutdown_now();
    println!("   the drain handed back: {drained:?}");
    println!("   before the held job ends: {}", queue.ledger());
    held.succeed();
    println!("   join: {}", block_on(queue.join()));
}

/// A deadline without a runtime or a timer crate: a latch that a sleeping thread opens.
/// Its `wait()` future is the deadline, since any future can be one; with a runtime, its
/// sleep would be (that is what the adapters supply).
fn after(duration: Duration) -> Arc<CountDownLatch> {
    let deadline = Arc::new(CountDownLatch::new(1));
    let opener = Arc::clone(&deadline);
    thread::spawn(move || {
        thread::sleep(duration);
        opener.count_down();
    });
    deadline
}
