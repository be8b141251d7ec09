//! The adapter under embassy's own executor (std platform), with tasks talking through a
//! latch and a queue.

use core::sync::atomic::{AtomicBool, Ordering};

use embassy_executor::{Executor, Spawner};
use embassy_time::{Duration, Timer};
use tally_embassy::{LatchExt, QueueExt};
use tally_latch::TrackingLatch;
use tally_queue::GetTimeoutError;
use tally_queue::Queue;

static DONE: AtomicBool = AtomicBool::new(false);

struct Shared {
    ready: TrackingLatch,
    queue: Queue<u32>,
}

#[embassy_executor::task]
async fn producer(shared: &'static Shared) {
    Timer::after(Duration::from_millis(5)).await;
    shared.ready.count_down_for("producer").unwrap();
    for i in 0..5 {
        shared.queue.put(i).await.unwrap();
        Timer::after(Duration::from_millis(1)).await;
    }
    shared.queue.shutdown();
}

#[embassy_executor::task]
async fn checker(shared: &'static Shared) {
    // `sensor` never reports: the timed wait names it.
    match shared.ready.wait_timeout(Duration::from_millis(50)).await {
        Err(pending) => assert_eq!(pending.names(), ["sensor"]),
        Ok(ended) => panic!("expected a timeout naming sensor, got {ended:?}"),
    }
    let mut seen = 0;
    loop {
        match shared.queue.get_timeout(Duration::from_secs(10)).await {
            Ok(delivery) => {
                assert_eq!(*delivery, seen);
                seen += 1;
                delivery.succeed();
            }
            Err(GetTimeoutError::ShutDown) => break,
            Err(GetTimeoutError::TimedOut) => panic!("get timed out"),
        }
    }
    let ledger = shared
        .queue
        .join_timeout(Duration::from_secs(10))
        .await
        .unwrap();
    assert_eq!((ledger.accepted, ledger.succeeded), (5, 5));
    DONE.store(true, Ordering::Release);
}

#[test]
fn tasks_on_the_embassy_std_executor() {
    let shared: &'static Shared = Box::leak(Box::new(Shared {
        ready: TrackingLatch::new(["producer", "sensor"]).unwrap(),
        queue: Queue::bounded(2).unwrap(),
    }));
    let executor: &'static mut Executor = Box::leak(Box::new(Executor::new()));
    executor.run_until(
        |spawner: Spawner| {
            spawner.spawn(producer(shared).unwrap());
            spawner.spawn(checker(shared).unwrap());
        },
        || DONE.load(Ordering::Acquire),
    );
    assert!(DONE.load(Ordering::Acquire));
}
