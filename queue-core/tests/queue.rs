//! `Queue` construction, paired async and blocking smoke tests, and bad input.

mod common;

use std::sync::Arc;

use common::{assert_pending, expect_ready};
use futures_lite::future::block_on;
use tally_queue::{GetError, PutError, Queue, TryGetError, TryPutError, ZeroCapacity};

#[test]
fn zero_capacity_is_refused() {
    assert_eq!(Queue::<u8>::bounded(0).unwrap_err(), ZeroCapacity);
    assert_eq!(
        Queue::<u8>::with_unfinished_limit(0).unwrap_err(),
        ZeroCapacity
    );
}

#[test]
fn huge_capacity_is_accepted_without_preallocation() {
    for capacity in [usize::MAX, usize::MAX / 2, (1 << 16) + 1] {
        let queue = Queue::bounded(capacity).unwrap();
        assert_eq!(queue.capacity(), Some(capacity));
        for n in 0..100 {
            queue.try_put(n).unwrap();
        }
        assert_eq!(queue.len(), 100);
        assert_eq!(queue.try_get().unwrap().succeed(), 0);
    }
    let queue = Queue::with_unfinished_limit(usize::MAX).unwrap();
    queue.try_put(1).unwrap();
}

#[test]
// Crossing the preallocation threshold takes 65 539 puts, minutes under Miri; the growable
// buffer itself is covered there by `huge_capacity_is_accepted_without_preallocation`.
#[cfg_attr(miri, ignore)]
fn capacity_above_preallocation_still_bounds() {
    let capacity = (1 << 16) + 3;
    let queue = Queue::bounded(capacity).unwrap();
    for n in 0..capacity {
        queue.try_put(n).unwrap();
    }
    assert!(queue.try_put(0).unwrap_err().is_full());
    queue.try_get().unwrap().succeed();
    queue.try_put(0).unwrap();
}

#[test]
#[cfg(feature = "std")]
fn put_after_shutdown_returns_item() {
    let queue = Queue::unbounded();
    queue.shutdown();
    let item = String::from("payload");
    match queue.try_put(item) {
        Err(TryPutError::ShutDown(back)) => assert_eq!(back, "payload"),
        other => panic!("unexpected {other:?}"),
    }
    assert!(matches!(
        block_on(queue.put(String::from("a"))),
        Err(PutError::ShutDown(s)) if s == "a"
    ));
    assert!(matches!(
        queue.put_blocking(String::from("b")),
        Err(PutError::ShutDown(s)) if s == "b"
    ));
    assert_eq!(queue.ledger().accepted, 0);
}

#[test]
fn smoke_async() {
    let queue = Queue::bounded(2).unwrap();
    block_on(async {
        let a = queue.put(1).await.unwrap();
        let b = queue.put(2).await.unwrap();
        assert_eq!((a.get(), b.get()), (0, 1));
        let d = queue.get().await.unwrap();
        assert_eq!((d.id(), *d), (a, 1));
        d.succeed();
        queue.get().await.unwrap().reject();
        let ledger = queue.join().await;
        assert_eq!((ledger.succeeded, ledger.rejected), (1, 1));
        queue.shutdown();
        assert_eq!(queue.get().await.unwrap_err(), GetError::ShutDown);
    });
}

#[test]
#[cfg(feature = "std")]
fn smoke_blocking() {
    let queue = Queue::bounded(2).unwrap();
    let a = queue.put_blocking(1).unwrap();
    let b = queue.put_blocking(2).unwrap();
    assert_eq!((a.get(), b.get()), (0, 1));
    let d = queue.get_blocking().unwrap();
    assert_eq!((d.id(), *d), (a, 1));
    d.succeed();
    queue.get_blocking().unwrap().reject();
    let ledger = queue.join_blocking();
    assert_eq!((ledger.succeeded, ledger.rejected), (1, 1));
    queue.shutdown();
    assert_eq!(queue.get_blocking().unwrap_err(), GetError::ShutDown);
}

#[test]
fn smoke_owned() {
    let queue = Arc::new(Queue::unbounded());
    queue.try_put(5).unwrap();
    let delivery = block_on(queue.get_owned()).unwrap();
    let handle = std::thread::spawn(move || delivery.succeed());
    assert_eq!(handle.join().unwrap(), 5);
    let mut get = queue.get_owned();
    assert_pending(&mut get);
    queue.try_put(6).unwrap();
    assert_eq!(expect_ready(&mut get).unwrap().reject(), 6);
    assert_eq!(queue.try_get_owned().unwrap_err(), TryGetError::Empty);
    assert_eq!(
        format!("{get:?}", get = queue.get_owned()),
        "GetOwned { .. }"
    );
}

#[test]
fn futures_debug_without_t_debug() {
    struct Opaque;
    let queue = Queue::unbounded();
    assert_eq!(format!("{:?}", queue.put(Opaque)), "Put { .. }");
    assert_eq!(format!("{:?}", queue.get()), "Get { .. }");
    assert_eq!(format!("{:?}", queue.join()), "Join { .. }");
    queue.try_put(Opaque).unwrap();
    let delivery = queue.try_get().unwrap();
    assert_eq!(format!("{delivery:?}"), "Delivery { id: JobId(0), .. }");
    assert_eq!(format!("{:?}", TryPutError::Full(Opaque)), "Full(..)");
    delivery.succeed();
    assert_eq!(
        format!("{queue:?}"),
        "Queue { capacity: None, len: 0, unfinished: 0, shut_down: false, .. }"
    );
}

#[test]
fn unfinished_limit_bounds_work_in_flight() {
    let queue = Queue::with_unfinished_limit(2).unwrap();
    queue.try_put(1).unwrap();
    queue.try_put(2).unwrap();
    let a = queue.try_get().unwrap();
    let b = queue.try_get().unwrap();
    let mut putter = queue.put(3);
    assert_pending(&mut putter);
    b.reject(); // frees a slot
    expect_ready(&mut putter).unwrap();
    drop(a); // abandoned also frees one
    queue.try_put(4).unwrap();
    assert!(queue.try_put(5).unwrap_err().is_full());
    // A retry keeps its slot.
    let c = queue.try_get().unwrap();
    c.retry().unwrap();
    assert_eq!(queue.shutdown_now().len(), 2);
    assert!(queue.ledger().is_balanced());
}

#[test]
fn errors_display_lowercase_without_period() {
    let messages = [
        TryPutError::Full(()).to_string(),
        PutError::ShutDown(()).to_string(),
        PutError::NoWorkers(()).to_string(),
        TryGetError::Empty.to_string(),
        TryGetError::ShutDown.to_string(),
        GetError::ShutDown.to_string(),
        ZeroCapacity.to_string(),
    ];
    for message in messages {
        assert!(message.chars().next().unwrap().is_lowercase(), "{message}");
        assert!(!message.ends_with('.'), "{message}");
    }
    let _: &dyn std::error::Error = &TryPutError::Full(());
}
