//! With a counting global allocator: a wait allocates once. A file of its own, so that no
//! other test counts allocations in the same process at the same time.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use benches::counting::{allocations, count_this_thread, Counting};
use tally_queue::Queue;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A task's waker that does nothing when woken, but is a waker of its own (as an
/// executor's is), unlike `Waker::noop()`.
struct Task;

impl Wake for Task {
    fn wake(self: Arc<Self>) {}
}

/// A get that waits on an empty queue until a put wakes it allocates once: event-listener's
/// listener. Its relay is the one the thread's previous wait left behind.
#[test]
fn a_wait_allocates_once() {
    count_this_thread();
    let queue = Queue::<u64>::bounded(4).expect("a valid capacity");
    let waker = Waker::from(Arc::new(Task));
    let mut context = Context::from_waker(&waker);
    let mut waits = |n: u64| {
        let before = allocations();
        for item in 0..n {
            let mut get = pin!(queue.get());
            assert!(
                get.as_mut().poll(&mut context).is_pending(),
                "the queue is empty"
            );
            queue.try_put(item).expect("room");
            let Poll::Ready(Ok(delivery)) = get.as_mut().poll(&mut context) else {
                panic!("a woken get takes the item put for it");
            };
            assert_eq!(delivery.succeed(), item);
        }
        allocations() - before
    };
    // A first round sets up what the thread keeps (its list of woken relays, its spare
    // relay); the difference between two later counts is then the per-wait cost.
    waits(10);
    let small = waits(100);
    let large = waits(1_100);
    assert_eq!(large - small, 1_000, "allocations per 1,000 waits");
}
