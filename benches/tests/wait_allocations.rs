//! With a counting global allocator: a wait allocates nothing. A file of its own, so that
//! no other test counts allocations in the same process at the same time.

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

/// A get that waits on an empty queue until a put wakes it allocates nothing once the
/// getters' list has a node free: the wait takes that node, and its waker waits for the
/// notifier in a list the thread keeps.
#[test]
fn a_wait_allocates_nothing() {
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
    // A first round sets up what stays: the list's node, the thread's list of wakers.
    waits(10);
    let small = waits(100);
    let large = waits(1_100);
    assert_eq!(
        (small, large),
        (0, 0),
        "allocations per 100 and per 1,100 waits"
    );
}
