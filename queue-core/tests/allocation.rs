//! A steady-state bounded queue makes no heap allocation per message.

use core::alloc::{GlobalAlloc, Layout};
use std::alloc::System;

use futures_lite::future::block_on;
use tally_queue::Queue;

struct Counting;

std::thread_local! {
    /// Set on the thread under test only: the harness's own threads, and the other tests
    /// running beside this one, allocate at times of their choosing and must not count.
    static COUNTED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
    /// The allocations this thread made while `COUNTED` was set.
    static ALLOCATIONS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // `try_with`: a thread that is exiting has no thread-locals left, and is not counted.
        if COUNTED.try_with(core::cell::Cell::get).unwrap_or(false) {
            let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_put_get_resolve_does_not_allocate() {
    let queue = Queue::bounded(128).unwrap();
    let round = |n: u64| {
        block_on(async {
            for i in 0..64 {
                queue.put(n + i).await.unwrap();
            }
            for _ in 0..64 {
                queue.get().await.unwrap().succeed();
            }
        })
    };
    // Warm-up: block_on's parker and the events' lazily allocated state.
    round(0);
    COUNTED.with(|counted| counted.set(true));
    let before = ALLOCATIONS.with(core::cell::Cell::get);
    let rounds = if cfg!(miri) { 2 } else { 1_000 };
    for r in 0..rounds {
        round(r * 64);
    }
    let after = ALLOCATIONS.with(core::cell::Cell::get);
    COUNTED.with(|counted| counted.set(false));
    assert_eq!(after - before, 0, "allocations in steady state");
    assert_eq!(queue.ledger().succeeded, (rounds + 1) * 64);
}

/// Checking for cancellation allocates nothing: `is_cancelled`, making a `cancelled()`
/// future, and polling it once the request was made. Only a poll that must wait registers
/// (and allocates) a listener, which the last part shows the counter would catch.
#[test]
fn checking_for_cancellation_does_not_allocate() {
    use core::future::Future;
    use core::task::{Context, Waker};

    let queue = Queue::unbounded();
    queue.try_put(1).unwrap();
    let job = queue.try_get().unwrap();
    let mut context = Context::from_waker(Waker::noop());
    COUNTED.with(|counted| counted.set(true));
    let before = ALLOCATIONS.with(core::cell::Cell::get);
    for _ in 0..100 {
        assert!(!job.is_cancelled());
        drop(job.cancelled());
    }
    queue.cancel_in_flight();
    for _ in 0..100 {
        assert!(job.is_cancelled());
        let mut cancelled = core::pin::pin!(job.cancelled());
        assert!(cancelled.as_mut().poll(&mut context).is_ready());
    }
    let after = ALLOCATIONS.with(core::cell::Cell::get);
    COUNTED.with(|counted| counted.set(false));
    assert_eq!(
        after - before,
        0,
        "allocations while checking for cancellation"
    );
    job.uncertain();

    // A waiting poll does allocate its listener: the counter sees it.
    let other = Queue::<u8>::unbounded();
    other.try_put(1).unwrap();
    let waiting = other.try_get().unwrap();
    COUNTED.with(|counted| counted.set(true));
    let before = ALLOCATIONS.with(core::cell::Cell::get);
    {
        let mut cancelled = core::pin::pin!(waiting.cancelled());
        assert!(cancelled.as_mut().poll(&mut context).is_pending());
    }
    let after = ALLOCATIONS.with(core::cell::Cell::get);
    COUNTED.with(|counted| counted.set(false));
    assert!(after > before, "a waiting poll registers a listener");
    waiting.uncertain();
}
