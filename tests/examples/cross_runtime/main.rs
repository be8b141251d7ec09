//! One queue and one latch shared by tokio producers, smol consumers, a plain thread on the
//! blocking API and an async-std waiter, all at once; every accepted id ends exactly once.
//!
//! Run it with `cargo run -p integration-tests --example cross_runtime`.

mod scenario;

use std::collections::BTreeMap;

fn main() {
    let report = scenario::run(500);
    let mut by_consumer = BTreeMap::<&str, usize>::new();
    for (_, _, consumer) in &report.ended {
        *by_consumer.entry(consumer).or_default() += 1;
    }
    println!(
        "accepted {} items from {:?}",
        report.accepted.len(),
        scenario::PRODUCERS
    );
    println!("ended by consumer: {by_consumer:?}");
    println!("drained in time: {}", report.closed.drained_in_time);
    println!("ledger: {}", report.closed.ledger);
}
